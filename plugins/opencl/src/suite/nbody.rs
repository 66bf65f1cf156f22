//! `nbody`: the accelerations of n bodies from all pairs, without (`global`) and with (`local`)
//! tiles of bodies in local memory (kernels/nbody.cl).

use super::kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, Work, compare, multiple_of, pseudo_random,
};

pub struct Nbody;

/// Softening: keeps the self-interaction and close pairs finite.
const EPS2: f64 = 0.01;

/// Floating-point operations per interaction: the difference (3), r^2 + eps^2 (6), rsqrt (1),
/// m / r^3 (3), the accumulation (6).
const FLOPS_PER_INTERACTION: f64 = 19.0;

/// Positions (x, y, z) in [-1, 1)^3 and masses in [0.5, 1.5).
fn bodies(n: usize, seed: u64) -> Vec<f32> {
    let mut v = pseudo_random(4 * n, seed);
    for body in v.chunks_mut(4) {
        body[3] = 1.0 + body[3] / 2.0;
    }
    v
}

/// Accelerations (x, y, z, 0) in double precision.
pub fn reference(pos: &[f32]) -> Vec<f64> {
    let n = pos.len() / 4;
    let mut acc = vec![0.0f64; 4 * n];
    for i in 0..n {
        let pi = &pos[4 * i..4 * i + 4];
        let mut a = [0.0f64; 3];
        for pj in pos.chunks(4) {
            let d = [0, 1, 2].map(|k| f64::from(pj[k]) - f64::from(pi[k]));
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2;
            let s = f64::from(pj[3]) / (r2 * r2.sqrt());
            for k in 0..3 {
                a[k] += s * d[k];
            }
        }
        acc[4 * i..4 * i + 3].copy_from_slice(&a);
    }
    acc
}

impl SuiteKernel for Nbody {
    fn program(&self) -> &'static str {
        "nbody"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("nbody.cl", include_str!("../../kernels/nbody.cl"))
    }

    fn variants(&self) -> &'static [&'static str] {
        &["global", "local"]
    }

    fn sizes(&self, preset: Preset) -> &'static [u64] {
        match preset {
            Preset::Standard => &[256, 512, 768, 1024, 1536, 2048],
            Preset::Quick => &[256, 512],
        }
    }

    fn size_meaning(&self) -> &'static str {
        "bodies"
    }

    fn check_size(&self, size: u64, group: usize) -> Result<(), String> {
        multiple_of(size, group as u64, "n (bodies)")
    }

    fn kernel_name(&self, variant: &str) -> String {
        format!("nbody_{variant}")
    }

    fn build_options(&self, _variant: &str, group: usize) -> String {
        format!("-DTILE={group} -DEPS2={EPS2:?}f")
    }

    fn plan(&self, variant: &str, size: u64, group: usize) -> Plan {
        let n = size as usize;
        let nf = n as f64;
        let body = 16.0;
        let work = if variant == "local" {
            // Every work-group stages all n bodies once, T at a time.
            let staged = body * nf * nf / group as f64;
            Work {
                global_load_bytes: staged + body * nf,
                global_store_bytes: body * nf,
                local_store_bytes: staged,
                local_load_bytes: body * nf * nf,
                flops: FLOPS_PER_INTERACTION * nf * nf,
                local_memory_per_group_bytes: body * group as f64,
            }
        } else {
            Work {
                global_load_bytes: body * nf * nf + body * nf,
                global_store_bytes: body * nf,
                flops: FLOPS_PER_INTERACTION * nf * nf,
                ..Work::default()
            }
        };
        Plan {
            inputs: vec![bodies(n, size)],
            outputs: vec![4 * n],
            args: vec![Arg::Input(0), Arg::Output(0), Arg::Int(n as i32)],
            global: vec![n],
            local: vec![group],
            vector_width: 1,
            work,
        }
    }

    fn check(&self, plan: &Plan, _size: u64, outputs: &[Vec<f32>]) -> Result<(), Mismatch> {
        let expected = reference(&plan.inputs[0]);
        let scale = expected.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        // Float sums of n terms, rsqrt within a few ulp: relative to the largest acceleration.
        compare(0, &outputs[0], &expected, 1e-3, scale)
    }
}
