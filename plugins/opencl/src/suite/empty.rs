//! `empty`: one work-group that stores one float (kernels/empty.cl), the launch latency of
//! the calibration. Its size is the work-items launched.

use super::kernel::{Arg, Mismatch, Plan, Preset, SuiteKernel, Work, compare, multiple_of};

pub struct Empty;

impl SuiteKernel for Empty {
    fn program(&self) -> &'static str {
        "empty"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("empty.cl", include_str!("../../kernels/empty.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        &["empty"]
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            Preset::Standard | Preset::Quick => &[64],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "work-items"
    }

    fn check_size(&self, size: u64, group: usize) -> Result<(), String> {
        if size > group as u64 {
            return multiple_of(size, group as u64, "work-items");
        }
        multiple_of(size, 1, "work-items")
    }

    fn kernel_name(&self, _variant: &str) -> String {
        "empty".to_owned()
    }

    fn build_options(&self, _variant: &str, _group: usize) -> String {
        String::new()
    }

    fn plan(&self, _variant: &str, size: u64, group: usize) -> Plan {
        let n = size as usize;
        Plan {
            inputs: Vec::new(),
            outputs: vec![1],
            args: vec![Arg::Output(0)],
            global: vec![n],
            local: vec![group.min(n)],
            vector_width: 1,
            work: Work {
                global_store_bytes: 4.0,
                ..Work::default()
            },
        }
    }

    fn check(&self, _plan: &Plan, _size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        compare(0, &outputs[0], &[1.0], 0.0, 1.0)
    }
}
