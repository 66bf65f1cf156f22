//! `copy`: an array of `n` floats copied at vector width 1, 2, 4, 8 or 16 (kernels/copy.cl).

use super::kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, Work, compare, multiple_of, pseudo_random,
};

pub struct Copy;

const WIDTHS: &[&str] = &["float", "float2", "float4", "float8", "float16"];

fn width(variant: &str) -> usize {
    match variant {
        "float2" => 2,
        "float4" => 4,
        "float8" => 8,
        "float16" => 16,
        _ => 1,
    }
}

impl SuiteKernel for Copy {
    fn program(&self) -> &'static str {
        "copy"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("copy.cl", include_str!("../../kernels/copy.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        WIDTHS
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            // 1 MiB to 32 MiB per array.
            Preset::Standard => &[1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23],
            Preset::Quick => &[1 << 16, 1 << 18],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "floats copied"
    }

    fn check_size(&self, size: u64, group: usize) -> Result<(), String> {
        // Every width's work-items fill whole work-groups.
        multiple_of(size, 16 * group as u64, "n (floats)")
    }

    fn kernel_name(&self, _variant: &str) -> String {
        "copy".to_owned()
    }

    fn build_options(&self, variant: &str, _group: usize) -> String {
        format!("-DVEC={variant}")
    }

    fn plan(&self, variant: &str, size: u64, group: usize) -> Plan {
        let n = size as usize;
        let w = width(variant);
        let bytes = 4.0 * n as f64;
        Plan {
            inputs: vec![pseudo_random(n, size)],
            outputs: vec![n],
            args: vec![Arg::Input(0), Arg::Output(0)],
            global: vec![n / w],
            local: vec![group.min(n / w)],
            vector_width: w,
            work: Work {
                global_load_bytes: bytes,
                global_store_bytes: bytes,
                ..Work::default()
            },
        }
    }

    fn check(&self, plan: &Plan, _size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        let expected: Vec<f64> = plan.inputs[0].iter().map(|v| f64::from(*v)).collect();
        compare(0, &outputs[0], &expected, 0.0, 1.0)
    }
}
