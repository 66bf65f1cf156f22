//! The kernel suite: each program a `.cl` file in `kernels/` and a module here that sets it up —
//! its inputs, NDRange, the work counters of a launch, and a check of its output against a CPU
//! reference. Every program but `copy` comes in two variants, without local memory (`global`) and
//! with it (`local`), Shimada et al.'s unoptimised and optimised versions (docs/methods.md,
//! section 1); `copy` comes in one variant per vector width.
//!
//! Adding a kernel: write `kernels/<name>.cl`, a module implementing [`SuiteKernel`], and a line
//! in [`SUITE`] (README.md, "Adding a kernel").

mod copy;
mod empty;
mod kernel;
mod matmul;
mod nbody;
mod reduce;
mod sobel;
mod transpose;
mod waves;

pub use kernel::{
    Arg, Mismatch, Plan, Preset, SuiteKernel, TILE, Work, compare, multiple_of, pseudo_random,
};

/// The suite, in the order runs take it.
pub static SUITE: &[&dyn SuiteKernel] = &[
    &copy::Copy,
    &matmul::Matmul,
    &transpose::Transpose,
    &sobel::Sobel,
    &reduce::Reduce,
    &nbody::Nbody,
];

/// The calibration's own kernels (`yosoku calibrate`): an almost empty launch and a sweep over
/// work-groups. Run when named in `kernels`, never as part of `all`.
pub static CALIBRATION: &[&dyn SuiteKernel] = &[&empty::Empty, &waves::Waves];

/// The program called `name`, of the suite or of the calibration.
pub fn find(name: &str) -> Option<&'static dyn SuiteKernel> {
    SUITE
        .iter()
        .chain(CALIBRATION)
        .copied()
        .find(|k| k.program() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel's CPU reference agrees with a plan whose outputs are the reference itself,
    /// and rejects an output with one element changed: the check can fail.
    #[test]
    fn every_check_accepts_the_reference_and_refuses_a_changed_element() {
        for k in SUITE.iter().chain(CALIBRATION) {
            for variant in k.variants() {
                let size = k.sizes(Preset::Quick)[0];
                let plan = k.plan(variant, size, 64);
                let outputs = reference_outputs(*k, &plan, size);
                k.check(&plan, size, &outputs)
                    .unwrap_or_else(|m| panic!("{} {variant}: {m}", k.program()));
                let mut wrong = outputs.clone();
                let last = wrong[0].len() - 1;
                wrong[0][last] += 1.0;
                assert!(
                    k.check(&plan, size, &wrong).is_err(),
                    "{} {variant}: a wrong element passed",
                    k.program()
                );
            }
        }
    }

    /// Outputs equal to what each kernel computes, computed on the CPU by a second route.
    fn reference_outputs(k: &dyn SuiteKernel, plan: &Plan, size: u64) -> Vec<Vec<f32>> {
        match k.program() {
            "copy" => vec![plan.inputs[0].clone()],
            "matmul" => vec![
                matmul::reference(&plan.inputs[0], &plan.inputs[1], size as usize)
                    .iter()
                    .map(|v| *v as f32)
                    .collect(),
            ],
            "transpose" => vec![transpose::reference(&plan.inputs[0], size as usize)],
            "sobel" => vec![
                sobel::reference(&plan.inputs[0], size as usize)
                    .iter()
                    .map(|v| *v as f32)
                    .collect(),
            ],
            "reduce" => {
                let group = plan.local[0];
                vec![
                    plan.inputs[0]
                        .chunks(group)
                        .map(|c| c.iter().map(|v| f64::from(*v)).sum::<f64>() as f32)
                        .collect(),
                    plan.inputs[0].clone(),
                ]
            }
            "nbody" => vec![
                nbody::reference(&plan.inputs[0])
                    .iter()
                    .map(|v| *v as f32)
                    .collect(),
            ],
            "empty" => vec![vec![1.0]],
            // The loop itself, in f32 as the device runs it (the check uses the closed form).
            "waves" => vec![
                (0..plan.global[0])
                    .map(|i| {
                        let mut x = (i % 1024) as f32 * 0.000_976_562_5;
                        for _ in 0..waves::ITERATIONS {
                            x = x.mul_add(0.999, 0.001);
                        }
                        x
                    })
                    .collect(),
            ],
            other => panic!("no reference for {other}"),
        }
    }

    #[test]
    fn quick_and_standard_sizes_fit_their_work_groups() {
        for k in SUITE {
            assert!(k.sizes(Preset::Standard).len() >= 6, "{}", k.program());
            for preset in [Preset::Quick, Preset::Standard] {
                for size in k.sizes(preset) {
                    k.check_size(*size, 256)
                        .unwrap_or_else(|e| panic!("{} {size}: {e}", k.program()));
                }
            }
        }
    }
}
