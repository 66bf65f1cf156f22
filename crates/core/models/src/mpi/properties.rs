//! Property tests of the MPI block model (issue 18, item 2), on random reduced runs drawn by
//! proptest (256 cases a property; a failure is shrunk and printed): 1-4 ranks of 2-12
//! iterations, each a compute and a communication block, plus a setup and a teardown block.
//!
//! - the predicted run never gets shorter when the full run has more iterations;
//! - nor when any one block of the reduced run took longer;
//! - nor when a rank is added (the run is its slowest rank);
//! - scaling every loop block's time by k scales the predicted loop time by k.

use proptest::prelude::*;
use yosoku_tables::col;

use crate::fixtures::{floats, mpi_blocks};
use crate::mpi::loops::RunSize;
use crate::mpi::{MpiSpec, RunToRun, Trend, Warmup, simplified};

/// Per rank, per iteration: (compute, communication) seconds.
type Ranks = Vec<(i32, Vec<(f64, f64)>)>;

fn ranks() -> impl Strategy<Value = Ranks> {
    (1usize..5, 2usize..13).prop_flat_map(|(ranks, iterations)| {
        proptest::collection::vec(
            proptest::collection::vec((1e-3f64..10.0, 1e-3f64..10.0), iterations),
            ranks,
        )
        .prop_map(|per_rank| {
            per_rank
                .into_iter()
                .enumerate()
                .map(|(r, its)| (r as i32, its))
                .collect()
        })
    })
}

/// The predicted run (its slowest rank) of the full run of `iterations`, the first `warmup`
/// iterations of each rank taken as measured.
fn run_secs(ranks: &Ranks, iterations: u64, warmup: usize) -> f64 {
    predictions(ranks, iterations, warmup)[3 * ranks.len()]
}

/// Every prediction: per rank compute, communication, total; then the run.
fn predictions(ranks: &Ranks, iterations: u64, warmup: usize) -> Vec<f64> {
    let spec = MpiSpec {
        model: "m".into(),
        size: RunSize::Iterations(iterations),
        warmup: Warmup::Iterations(warmup),
        pooled_warmup: Default::default(),
        trend: Trend::Flag,
        published: None,
        run_to_run: RunToRun::Off,
        shorter: Default::default(),
    };
    let out =
        simplified(&spec, &mpi_blocks("reduced", ranks), None).unwrap_or_else(|e| panic!("{e}"));
    floats(&out.predictions, col::PREDICTED_SECS)
}

/// `b` is at least `a`, up to rounding.
fn at_least(b: f64, a: f64) -> bool {
    b >= a - 1e-9 * a.abs().max(1.0)
}

proptest! {
    #[test]
    fn more_iterations_never_predict_a_shorter_run(
        ranks in ranks(),
        n in 12u64..1000,
        more in 0u64..1000,
        warmup in 0usize..2,
    ) {
        let (a, b) = (run_secs(&ranks, n, warmup), run_secs(&ranks, n + more, warmup));
        prop_assert!(at_least(b, a), "{n} iterations: {a} s; {}: {b} s", n + more);
    }

    #[test]
    fn a_slower_block_never_predicts_a_shorter_run(
        ranks in ranks(),
        n in 12u64..1000,
        pick in any::<prop::sample::Index>(),
        communication in any::<bool>(),
        slower in 0.0f64..5.0,
        warmup in 0usize..2,
    ) {
        let before = predictions(&ranks, n, warmup);
        let mut changed = ranks.clone();
        let rank = pick.index(changed.len());
        let iteration = pick.index(changed[rank].1.len());
        let block = &mut changed[rank].1[iteration];
        if communication { block.1 += slower } else { block.0 += slower }
        let after = predictions(&changed, n, warmup);
        for (i, (a, b)) in before.iter().zip(&after).enumerate() {
            prop_assert!(at_least(*b, *a), "prediction {i}: {a} s before, {b} s after");
        }
    }

    #[test]
    fn another_rank_never_predicts_a_shorter_run(
        ranks in ranks(),
        n in 12u64..1000,
        extra in proptest::collection::vec((1e-3f64..10.0, 1e-3f64..10.0), 12),
    ) {
        let mut more = ranks.clone();
        let iterations = ranks[0].1.len();
        more.push((ranks.len() as i32, extra[..iterations].to_vec()));
        let (a, b) = (run_secs(&ranks, n, 0), run_secs(&more, n, 0));
        prop_assert!(at_least(b, a), "{} ranks: {a} s; {}: {b} s", ranks.len(), more.len());
    }

    #[test]
    fn scaling_every_time_scales_every_prediction(
        ranks in ranks(),
        n in 12u64..1000,
        k in 0.01f64..100.0,
    ) {
        // The builder's setup (1 s) and teardown (0.5 s) blocks are not scaled.
        let scaled: Ranks = ranks
            .iter()
            .map(|(r, its)| (*r, its.iter().map(|(c, m)| (c * k, m * k)).collect()))
            .collect();
        let base = predictions(&ranks, n, 0);
        let times_k = predictions(&scaled, n, 0);
        // Per rank, communication has no fixed blocks: it scales exactly by k.
        for r in 0..ranks.len() {
            let (a, b) = (base[3 * r + 1], times_k[3 * r + 1]);
            prop_assert!((b - k * a).abs() <= 1e-9 * (k * a).max(1.0), "rank {r}: {a} s x {k} = {b} s?");
            // Compute: setup and teardown (1.5 s) stay, the loop scales.
            let (a, b) = (base[3 * r] - 1.5, times_k[3 * r] - 1.5);
            prop_assert!((b - k * a).abs() <= 1e-9 * (k * a).max(1.0), "rank {r}: {a} s x {k} = {b} s?");
        }
    }
}
