//! `sobel`: the Sobel edge magnitude of an n x n image, without (`global`) and with (`local`) the
//! tile and its halo in local memory (kernels/sobel.cl).

use super::kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, TILE, Work, compare, multiple_of, pseudo_random,
};

pub struct Sobel;

/// Floating-point operations per pixel: gx and gy 7 each (2 multiplications, 5 additions), the
/// magnitude 4 (2 multiplications, 1 addition, 1 square root).
const FLOPS_PER_PIXEL: f64 = 18.0;

pub fn reference(img: &[f32], n: usize) -> Vec<f64> {
    let at = |x: isize, y: isize| -> f64 {
        let c = |v: isize| v.clamp(0, n as isize - 1) as usize;
        f64::from(img[c(y) * n + c(x)])
    };
    let mut out = vec![0.0; n * n];
    for y in 0..n as isize {
        for x in 0..n as isize {
            let gx = (at(x + 1, y - 1) + 2.0 * at(x + 1, y) + at(x + 1, y + 1))
                - (at(x - 1, y - 1) + 2.0 * at(x - 1, y) + at(x - 1, y + 1));
            let gy = (at(x - 1, y + 1) + 2.0 * at(x, y + 1) + at(x + 1, y + 1))
                - (at(x - 1, y - 1) + 2.0 * at(x, y - 1) + at(x + 1, y - 1));
            out[y as usize * n + x as usize] = (gx * gx + gy * gy).sqrt();
        }
    }
    out
}

impl SuiteKernel for Sobel {
    fn program(&self) -> &'static str {
        "sobel"
    }

    fn source(&self) -> (&'static str, &'static str) {
        ("sobel.cl", include_str!("../../kernels/sobel.cl"))
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
        "image edge"
    }

    fn check_size(&self, size: u64, _group: usize) -> Result<(), String> {
        multiple_of(size, TILE as u64, "n (image edge)")
    }

    fn kernel_name(&self, variant: &str) -> String {
        format!("sobel_{variant}")
    }

    fn build_options(&self, _variant: &str, _group: usize) -> String {
        format!("-DTILE={TILE}")
    }

    fn plan(&self, variant: &str, size: u64, _group: usize) -> Plan {
        let n = size as usize;
        let pixels = (n * n) as f64;
        let t = TILE as f64;
        let work = if variant == "local" {
            // Each work-group stages its tile and a one-pixel halo: (T + 2)^2 pixels per T^2.
            let staged = 4.0 * pixels * (t + 2.0) * (t + 2.0) / (t * t);
            Work {
                global_load_bytes: staged,
                global_store_bytes: 4.0 * pixels,
                local_store_bytes: staged,
                local_load_bytes: 4.0 * 8.0 * pixels,
                flops: FLOPS_PER_PIXEL * pixels,
                local_memory_per_group_bytes: 4.0 * (t + 2.0) * (t + 2.0),
            }
        } else {
            Work {
                global_load_bytes: 4.0 * 8.0 * pixels,
                global_store_bytes: 4.0 * pixels,
                flops: FLOPS_PER_PIXEL * pixels,
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
        let expected = reference(&plan.inputs[0], size as usize);
        compare(0, &outputs[0], &expected, 1e-5, 1.0)
    }
}
