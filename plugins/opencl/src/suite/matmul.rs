//! `matmul`: C = A B for n x n matrices, without (`global`) and with (`local`) tiles in local
//! memory (kernels/matmul.cl).

use super::kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, TILE, Work, compare, multiple_of, pseudo_random,
};

pub struct Matmul;

/// A B in double precision.
pub fn reference(a: &[f32], b: &[f32], n: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = f64::from(a[i * n + k]);
            let row = &b[k * n..(k + 1) * n];
            for (cij, bkj) in c[i * n..(i + 1) * n].iter_mut().zip(row) {
                *cij += aik * f64::from(*bkj);
            }
        }
    }
    c
}

impl SuiteKernel for Matmul {
    fn program(&self) -> &'static str {
        "matmul"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("matmul.cl", include_str!("../../kernels/matmul.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        &["global", "local"]
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            Preset::Standard => &[64, 128, 192, 256, 320, 384],
            Preset::Quick => &[32, 64],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "matrix edge"
    }

    fn check_size(&self, size: u64, _group: usize) -> Result<(), String> {
        multiple_of(size, TILE as u64, "n (matrix edge)")
    }

    fn kernel_name(&self, variant: &str) -> String {
        format!("matmul_{variant}")
    }

    fn build_options(&self, _variant: &str, _group: usize) -> String {
        format!("-DTILE={TILE}")
    }

    fn plan(&self, variant: &str, size: u64, _group: usize) -> Plan {
        let n = size as usize;
        let nf = n as f64;
        let t = TILE as f64;
        let work = if variant == "local" {
            // Per work-group, n/T steps each staging a T x T tile of A and of B; every work-item
            // then reads 2T values per step from local memory.
            Work {
                global_load_bytes: 4.0 * 2.0 * nf * nf * nf / t,
                global_store_bytes: 4.0 * nf * nf,
                local_store_bytes: 4.0 * 2.0 * nf * nf * nf / t,
                local_load_bytes: 4.0 * 2.0 * nf * nf * nf,
                flops: 2.0 * nf * nf * nf,
                local_memory_per_group_bytes: 4.0 * 2.0 * t * t,
            }
        } else {
            Work {
                global_load_bytes: 4.0 * 2.0 * nf * nf * nf,
                global_store_bytes: 4.0 * nf * nf,
                flops: 2.0 * nf * nf * nf,
                ..Work::default()
            }
        };
        Plan {
            inputs: vec![pseudo_random(n * n, size), pseudo_random(n * n, size + 1)],
            outputs: vec![n * n],
            args: vec![
                Arg::Input(0),
                Arg::Input(1),
                Arg::Output(0),
                Arg::Int(n as i32),
            ],
            global: vec![n, n],
            local: vec![TILE, TILE],
            vector_width: 1,
            work,
        }
    }

    fn check(&self, plan: &Plan, size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        let n = size as usize;
        let expected = reference(&plan.inputs[0], &plan.inputs[1], n);
        // Float sums of n products of values in [-1, 1): rounding grows like sqrt(n) eps.
        compare(0, &outputs[0], &expected, 1e-4, (n as f64).sqrt())
    }
}
