//! `waves`: work-groups of a fixed amount of arithmetic each (kernels/waves.cl), the wave sweep
//! of the calibration. Its size is the number of work-groups.

use super::kernel::{Arg, Mismatch, Plan, Preset, SuiteKernel, Work, compare};

pub struct Waves;

/// Fused multiply-adds per work-item.
pub const ITERATIONS: usize = 2048;

impl SuiteKernel for Waves {
    fn program(&self) -> &'static str {
        "waves"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("waves.cl", include_str!("../../kernels/waves.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        &["fma"]
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            Preset::Standard => &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
            Preset::Quick => &[1, 2],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "work-groups"
    }

    fn check_size(&self, size: u64, _group: usize) -> Result<(), String> {
        if size == 0 {
            return Err("the work-groups must be at least 1".to_owned());
        }
        Ok(())
    }

    fn kernel_name(&self, _variant: &str) -> String {
        "waves".to_owned()
    }

    fn build_options(&self, _variant: &str, _group: usize) -> String {
        format!("-DITERATIONS={ITERATIONS}")
    }

    fn plan(&self, _variant: &str, size: u64, group: usize) -> Plan {
        let n = size as usize * group;
        Plan {
            inputs: Vec::new(),
            outputs: vec![n],
            args: vec![Arg::Output(0)],
            global: vec![n],
            local: vec![group],
            vector_width: 1,
            work: Work {
                global_store_bytes: 4.0 * n as f64,
                flops: 2.0 * (ITERATIONS * n) as f64,
                ..Work::default()
            },
        }
    }

    fn check(&self, plan: &Plan, _size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        compare(0, &outputs[0], &reference(plan.global[0]), 1e-5, 1.0)
    }
}

/// What `n` work-items store, in closed form: x_k = x* + (x_0 - x*) a^k for x -> a x + b, with
/// the kernel's `float` constants a and b and x* = b / (1 - a).
pub fn reference(n: usize) -> Vec<f64> {
    let (a, b) = (f64::from(0.999f32), f64::from(0.001f32));
    let fixed = b / (1.0 - a);
    let decay = a.powi(ITERATIONS as i32);
    (0..n)
        .map(|i| {
            let x0 = f64::from((i % 1024) as f32 * 0.000_976_562_5);
            fixed + (x0 - fixed) * decay
        })
        .collect()
}
