//! Regression speed (BENCHMARKS.md): OLS with exact leave-one-out, and the forward stepwise
//! path, at n = 10,000 observations and p = 200 features; and the shape of a cross-validation's
//! refits, 2,600 x 8 with a constant and a dependent column (the pivoted-QR path).
//!
//! `cargo bench -p yosoku-regression --bench regression` (single-threaded), and with
//! `--features parallel` for faer's multi-threaded kernels on every core.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::disallowed_methods)] // a test reads its fixtures; the crate itself does no I/O

use criterion::{Criterion, criterion_group, criterion_main};
use faer::Mat;
use yosoku_regression::stepwise::{StepwiseOptions, select};
use yosoku_regression::{OlsOptions, ols};

const N: usize = 10_000;
const P: usize = 200;

/// Deterministic pseudo-random numbers in [-1, 1) (splitmix64).
fn noise(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// n x p features and a target linear in the first half of them plus noise. The numbers are
/// drawn row by row, then the ill-conditioned column, then the noise of y, in this order:
/// tools/bench/peers.py draws the same sequence, so the peers run on exactly these data.
fn data(ill_conditioned: bool) -> (Mat<f64>, Vec<f64>) {
    let mut r = noise(42);
    let mut x = Mat::<f64>::zeros(N, P);
    for i in 0..N {
        for j in 0..P {
            x[(i, j)] = r();
        }
    }
    if ill_conditioned {
        // Column 1 nearly a copy of column 0: condition number ~1e5, the QR path.
        for i in 0..N {
            x[(i, 1)] = x[(i, 0)] + 1e-5 * r();
        }
    }
    let y: Vec<f64> = (0..N)
        .map(|i| {
            (0..P / 2)
                .map(|j| x[(i, j)] * (1.0 + j as f64 / 10.0))
                .sum::<f64>()
                + 0.1 * r()
        })
        .collect();
    (x, y)
}

fn ols_with_loo(c: &mut Criterion) {
    #[cfg(feature = "parallel")]
    faer::set_global_parallelism(faer::Par::rayon(0));
    for (name, ill) in [
        ("ols_loo_10000x200_well_conditioned", false),
        ("ols_loo_10000x200_ill_conditioned", true),
    ] {
        let (x, y) = data(ill);
        c.bench_function(name, |b| {
            b.iter(|| {
                let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
                fit.loo_predictions(&y)
            })
        });
    }
}

/// A held-out kernel's refit in counters-cross-gpu: about 2,600 launches, 8 counters, one of them
/// zero on every remaining row and one the sum of two others (rank 6: pivoted QR).
fn ols_rank_deficient_refit(c: &mut Criterion) {
    let (n, p) = (2_600, 8);
    let mut r = noise(7);
    let mut x = Mat::<f64>::from_fn(n, p, |_, _| r());
    for i in 0..n {
        x[(i, 3)] = 0.0;
        x[(i, 5)] = x[(i, 1)] + x[(i, 2)];
    }
    let y: Vec<f64> = (0..n)
        .map(|i| x[(i, 0)] + 2.0 * x[(i, 1)] + 0.1 * r())
        .collect();
    c.bench_function("ols_2600x8_rank_deficient", |b| {
        b.iter(|| {
            let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
            assert_eq!(fit.dropped.len(), 2);
            fit
        })
    });
}

fn stepwise_path(c: &mut Criterion) {
    #[cfg(feature = "parallel")]
    faer::set_global_parallelism(faer::Par::rayon(0));
    let (x, y) = data(false);
    let features: Vec<(String, Vec<f64>)> = (0..P)
        .map(|j| (format!("c{j}"), (0..N).map(|i| x[(i, j)]).collect()))
        .collect();
    let options = StepwiseOptions {
        spline_knots: None,
        interactions: false,
        full_path: true,
        ..StepwiseOptions::default()
    };
    c.bench_function("stepwise_forward_full_path_10000x200", |b| {
        b.iter(|| {
            let s = select(&features, &y, &options).unwrap();
            assert_eq!(s.terms.len(), P);
            s
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = ols_with_loo, ols_rank_deficient_refit, stepwise_path
}
criterion_main!(benches);
