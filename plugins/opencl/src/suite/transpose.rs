//! `transpose`: an n x n matrix transposed, without (`global`) and with (`local`) a tile in local
//! memory (kernels/transpose.cl).

use super::kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, TILE, Work, compare, multiple_of, pseudo_random,
};

pub struct Transpose;

pub fn reference(a: &[f32], n: usize) -> Vec<f32> {
    let mut t = vec![0.0f32; n * n];
    for y in 0..n {
        for x in 0..n {
            t[x * n + y] = a[y * n + x];
        }
    }
    t
}

impl SuiteKernel for Transpose {
    fn program(&self) -> &'static str {
        "transpose"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("transpose.cl", include_str!("../../kernels/transpose.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        &["global", "local"]
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            Preset::Standard => &[256, 512, 768, 1024, 1536, 2048],
            Preset::Quick => &[64, 128],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "matrix edge"
    }

    fn check_size(&self, size: u64, _group: usize) -> Result<(), String> {
        multiple_of(size, TILE as u64, "n (matrix edge)")
    }

    fn kernel_name(&self, variant: &str) -> String {
        format!("transpose_{variant}")
    }

    fn build_options(&self, _variant: &str, _group: usize) -> String {
        format!("-DTILE={TILE}")
    }

    fn plan(&self, variant: &str, size: u64, _group: usize) -> Plan {
        let n = size as usize;
        let bytes = 4.0 * (n * n) as f64;
        let t = TILE as f64;
        let work = if variant == "local" {
            Work {
                global_load_bytes: bytes,
                global_store_bytes: bytes,
                local_store_bytes: bytes,
                local_load_bytes: bytes,
                local_memory_per_group_bytes: 4.0 * t * (t + 1.0),
                ..Work::default()
            }
        } else {
            Work {
                global_load_bytes: bytes,
                global_store_bytes: bytes,
                ..Work::default()
            }
        };
        Plan {
            inputs: vec![pseudo_random(n * n, size)],
            outputs: vec![n * n],
            args: vec![Arg::Input(0), Arg::Output(0), Arg::Int(n as i32)],
            global: vec![n, n],
            local: vec![TILE, TILE],
            vector_width: 1,
            work,
        }
    }

    fn check(&self, plan: &Plan, size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        let expected: Vec<f64> = reference(&plan.inputs[0], size as usize)
            .iter()
            .map(|v| f64::from(*v))
            .collect();
        compare(0, &outputs[0], &expected, 0.0, 1.0)
    }
}
