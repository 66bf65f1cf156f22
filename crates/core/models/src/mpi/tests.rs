//! The MPI prediction's tests on small runs built by hand.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use yosoku_tables::rows::PredictionRow;
use yosoku_tables::{MPI_RANKS, col};

use crate::fixtures::{mpi_blocks as blocks, mpi_blocks_with as blocks_with};
use crate::mpi::loops::{RunSize, changepoint_warmup};

use super::configurations::{best_configuration, separate_runs};
use super::input::{BlockRows, measured_totals};
use super::polling::POLLING_FLAG;
use super::predict::{per_iteration, simplified};
use super::repeats::{combined, repeat_totals, run_to_run_of};
use super::warmup::{
    LoopOccurrences, iteration_times, loop_times, pooled_warmups, warmup_iterations,
};
use super::{MpiPrediction, MpiSpec, RunToRun, Trend, Warmup};

fn spec(n: u64, warmup: Warmup) -> MpiSpec {
    MpiSpec {
        model: "m".into(),
        size: RunSize::Iterations(n),
        warmup,
        pooled_warmup: BTreeMap::new(),
        trend: Trend::Flag,
        published: None,
        run_to_run: RunToRun::Off,
        shorter: BTreeMap::new(),
    }
}

fn column(batch: &RecordBatch, name: &str) -> Vec<f64> {
    let values = yosoku_tables::access::float64(batch, name).unwrap();
    values.iter().map(|v| v.unwrap_or(f64::NAN)).collect()
}

/// A rank's (compute, communication) seconds per iteration: two slow warm-up iterations, then
/// steady 2 s compute + 1 s communication.
fn warming_up() -> Vec<(f64, f64)> {
    vec![
        (5.0, 4.0),
        (3.0, 1.5),
        (2.0, 1.0),
        (2.0, 1.0),
        (2.0, 1.0),
        (2.0, 1.0),
    ]
}

#[test]
fn loop_blocks_scale_with_iterations_and_warmup_is_taken_as_measured() {
    // Two slow warm-up iterations, then steady 2 s compute + 1 s communication.
    let reduced = blocks("reduced", &[(0, warming_up())]);
    let out = simplified(&spec(100, Warmup::Auto { tolerance: 0.1 }), &reduced, None).unwrap();
    // compute: setup 1 + teardown 0.5 + warm-up 5 + 3 + 98 x 2; communication: 4 + 1.5 + 98.
    let predicted = column(&out.predictions, col::PREDICTED_SECS);
    assert_eq!(predicted[..3], [205.5, 103.5, 309.0]);
    // The run row is the slowest (only) rank.
    assert_eq!(predicted[3], 309.0);
    let b = &out.block_predictions;
    assert_eq!(column(b, col::FULL_EXECUTIONS), [1.0, 100.0, 1.0, 100.0]);
    assert_eq!(column(b, col::MEAN_SECS)[1], 2.0);
    // A block between iterations runs once fewer than the loop, in both runs.
    assert_eq!(per_iteration(11.0, 12.0), 1.0);
    assert_eq!(per_iteration(23.0, 12.0), 2.0);
    assert_eq!(per_iteration(6.0, 12.0), 0.5);
    // A fixed warm-up of 0 takes the slow iterations into the mean.
    let out = simplified(&spec(100, Warmup::Iterations(0)), &reduced, None).unwrap();
    let predicted = column(&out.predictions, col::PREDICTED_SECS);
    assert!((predicted[0] - (1.5 + 100.0 * 16.0 / 6.0)).abs() < 1e-9);
}

#[test]
fn the_run_takes_its_slowest_rank_and_is_compared_with_the_full_run() {
    let reduced = blocks("r", &[(0, vec![(1.0, 1.0); 4]), (1, vec![(1.5, 0.5); 4])]);
    let full = blocks(
        "f",
        &[(0, vec![(1.0, 1.0); 10]), (1, vec![(1.5, 0.75); 10])],
    );
    let out = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&full)).unwrap();
    let predicted = column(&out.predictions, col::PREDICTED_SECS);
    let measured = column(&out.predictions, col::MEASURED_SECS);
    // rank 0: 1.5 + 10 + 10 = 21.5; rank 1: 1.5 + 15 + 5 = 21.5 (measured 24).
    assert_eq!((predicted[2], predicted[5]), (21.5, 21.5));
    assert_eq!((measured[2], measured[5]), (21.5, 24.0));
    // The run row: the slowest rank of each; then the naive scaling of the reduced run's
    // time (rank 0: 1.5 + 8 = 9.5 s for 4 iterations, 23.75 s for 10).
    assert_eq!(predicted.len(), 8);
    assert_eq!((predicted[6], measured[6]), (21.5, 24.0));
    let errors = column(&out.predictions, col::ERROR_PCT);
    assert!((errors[6] - 100.0 * (21.5 - 24.0) / 24.0).abs() < 1e-9);
    assert_eq!((predicted[7], measured[7]), (23.75, 24.0));
}

/// The one-pass reader of a measured run sums each run's ranks apart, whatever the order of
/// the rows, and refuses an empty table and a rank without main-loop iterations by name.
#[test]
fn measured_totals_are_per_run_and_rank_and_bad_tables_are_named() {
    let a = blocks("a", &[(0, vec![(1.0, 0.25); 3]), (1, vec![(2.0, 0.5); 3])]);
    let b = blocks("b", &[(0, vec![(4.0, 0.125); 2])]);
    let both = arrow_select::concat::concat_batches(&a.schema(), &[b, a]).unwrap();
    // Rows of the two runs interleaved: one of `b`, one of `a`, ...
    let n = both.num_rows() as u32;
    let order: Vec<u32> = (0..n / 2)
        .flat_map(|i| [i, n / 2 + i])
        .chain((n % 2 == 1).then_some(n - 1))
        .collect();
    let mixed =
        arrow_select::take::take_record_batch(&both, &arrow_array::UInt32Array::from(order))
            .unwrap();
    let runs = measured_totals("measured", &mixed).unwrap();
    assert_eq!(runs.keys().collect::<Vec<_>>(), ["a", "b"]);
    // Setup 1 s and teardown 0.5 s are compute outside the loop.
    assert_eq!(runs["a"].0[&0], (1.5 + 3.0, 0.75));
    assert_eq!(runs["a"].0[&1], (1.5 + 6.0, 1.5));
    assert_eq!(runs["a"].1, BTreeMap::from([(0, 3), (1, 3)]));
    assert_eq!(runs["b"].0[&0], (1.5 + 8.0, 0.25));
    assert_eq!(runs["b"].1, BTreeMap::from([(0, 2)]));

    let e = measured_totals("measured", &mixed.slice(0, 0)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "input `measured`: no MPI blocks (an empty `mpi_blocks` table)"
    );
    let no_loop = blocks("c", &[(2, vec![])]);
    let e = measured_totals("measured", &no_loop)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rank 2 of run `c` has no main-loop iterations"),
        "{e}"
    );
}

#[test]
fn repeated_full_runs_are_averaged_and_their_spread_reported() {
    let reduced = blocks("r", &[(0, vec![(1.0, 0.0); 4])]);
    let repeats: Vec<RecordBatch> = [1.0, 1.2, 0.9]
        .iter()
        .enumerate()
        .map(|(i, c)| blocks(&format!("f{i}"), &[(0, vec![(*c, 0.0); 10])]))
        .collect();
    let full = arrow_select::concat::concat_batches(&repeats[0].schema(), &repeats).unwrap();
    let out = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&full)).unwrap();
    let run = yosoku_tables::rows::read_predictions("p", &out.predictions)
        .unwrap()
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    // Measured: 1.5 + 10, 1.5 + 12, 1.5 + 9: mean 11.8333 + 1.5.
    assert!(
        (run.measured_secs.unwrap() - (1.5 + 31.0 / 3.0)).abs() < 1e-9,
        "{run:?}"
    );
    let report = yosoku_tables::access::utf8(&out.report, col::COLUMN_LABEL).unwrap();
    assert!(report.iter().any(|c| c == Some("spread %")));
    assert!(report.iter().any(|c| c == Some("prediction within spread")));
    // Repeats of another configuration are refused.
    let other = blocks("g", &[(0, vec![(1.0, 0.0); 12])]);
    let mixed =
        arrow_select::concat::concat_batches(&repeats[0].schema(), &[repeats[0].clone(), other])
            .unwrap();
    let e = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&mixed)).unwrap_err();
    assert!(
        e.to_string().contains("differ in ranks or iterations"),
        "{e}"
    );
}

#[test]
fn separate_runs_miss_the_wait_a_fast_rank_spends_in_communication() {
    // Rank 0 is fast and waits 1 s per iteration for rank 1; alone, communication is 0.1 s.
    let reduced = blocks("r", &[(0, vec![(1.0, 1.1); 4]), (1, vec![(2.0, 0.1); 4])]);
    let comm_only = blocks("c", &[(0, vec![(0.0, 0.1); 4]), (1, vec![(0.0, 0.1); 4])]);
    let s = spec(8, Warmup::Iterations(0));
    let same = simplified(&s, &reduced, None).unwrap();
    let separate = separate_runs(&s, &reduced, &comm_only, None).unwrap();
    let total = |b: &RecordBatch| column(b, col::PREDICTED_SECS)[2];
    assert!((total(&same.predictions) - (1.5 + 8.0 * 2.1)).abs() < 1e-9);
    assert!((total(&separate.predictions) - (1.5 + 8.0 * 1.1)).abs() < 1e-9);
}

#[test]
fn bad_inputs_say_what_is_wrong() {
    let reduced = blocks("r", &[(0, vec![(1.0, 1.0); 4])]);
    let e = simplified(&spec(2, Warmup::Iterations(0)), &reduced, None).unwrap_err();
    assert!(
        e.to_string()
            .contains("fewer than the 4 the reduced run made"),
        "{e}"
    );
    let e = simplified(&spec(10, Warmup::Iterations(4)), &reduced, None).unwrap_err();
    assert!(e.to_string().contains("warmup_iterations = 4"), "{e}");
    let full = blocks("f", &[(0, vec![(1.0, 1.0); 9])]);
    let e = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&full)).unwrap_err();
    assert!(
        e.to_string()
            .contains("ran 9 iterations, but full_iterations = 10"),
        "{e}"
    );
    let two = arrow_select::concat::concat_batches(&reduced.schema(), [&reduced, &full]).unwrap();
    let e = simplified(&spec(10, Warmup::Iterations(0)), &two, None).unwrap_err();
    assert!(e.to_string().contains("holds 2 runs (f, r)"), "{e}");
    let other = blocks("f", &[(1, vec![(1.0, 1.0); 10])]);
    let e = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&other)).unwrap_err();
    assert!(
        e.to_string()
            .contains("rank 0 of the reduced run `r` has no counterpart"),
        "{e}"
    );
}

/// `mpi_ranks` rows: (run, ranks, binding, wall seconds), one row per run.
fn ranks(rows: &[(&str, i32, &str, f64)]) -> RecordBatch {
    let same =
        |v: &str| -> ArrayRef { Arc::new(StringArray::from_iter_values(rows.iter().map(|_| v))) };
    MPI_RANKS
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
            same("node"),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|_| 0))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
            same("prog"),
            Arc::new(rows.iter().map(|r| Some(r.2)).collect::<StringArray>()),
            Arc::new(rows.iter().map(|_| None::<&str>).collect::<StringArray>()),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.3))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 1))),
            same("complete"),
            Arc::new(rows.iter().map(|_| Some(4)).collect::<Int64Array>()),
            Arc::new(rows.iter().map(|_| Some(1)).collect::<Int32Array>()),
            same("repeating_unit"),
            same("MPI_Allreduce@a+0x1"),
        ])
        .unwrap()
}

#[test]
fn candidates_are_ranked_by_prediction_beside_the_measured_runs() {
    let a = blocks("a", &[(0, vec![(2.0, 1.0); 4])]);
    let b = blocks("b", &[(0, vec![(1.0, 0.5); 4]), (1, vec![(1.0, 0.5); 4])]);
    let reduced = arrow_select::concat::concat_batches(&a.schema(), [&a, &b]).unwrap();
    let reduced_ranks = ranks(&[("a", 1, "core", 0.0), ("b", 2, "core", 0.0)]);
    let measured = ranks(&[("fa", 1, "core", 33.0), ("fb", 2, "core", 20.0)]);
    let s = spec(10, Warmup::Iterations(0));
    let (predictions, _) =
        best_configuration(&s, &reduced, &reduced_ranks, Some(&measured)).unwrap();
    // b: 1.5 + 10 x 1.5 = 16.5 s; a: 1.5 + 10 x 3 = 31.5 s.
    assert_eq!(column(&predictions, col::PREDICTED_SECS), [16.5, 31.5]);
    assert_eq!(column(&predictions, col::MEASURED_SECS), [20.0, 33.0]);
    let variant = yosoku_tables::access::utf8(&predictions, col::VARIANT).unwrap();
    assert_eq!(variant.value(0), "2 ranks, bind core");
    // A reduced run without its mpi_ranks row, and two measured runs of one configuration.
    let e = best_configuration(&s, &reduced, &ranks(&[("a", 1, "core", 0.0)]), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no row for the reduced run `b`"), "{e}");
    let twice = ranks(&[("f1", 2, "core", 20.0), ("f2", 2, "core", 21.0)]);
    let e = best_configuration(&s, &reduced, &reduced_ranks, Some(&twice))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("runs `f1`, `f2` all have 2 ranks bound `core`"),
        "{e}"
    );
}

#[test]
fn auto_warmup_excludes_until_times_settle_and_flags_runs_that_never_do() {
    assert_eq!(
        warmup_iterations(
            &[9.0, 5.0, 1.0, 1.0, 1.05, 1.0],
            Warmup::Auto { tolerance: 0.1 }
        ),
        Ok((2, true))
    );
    assert_eq!(
        warmup_iterations(&[1.0, 1.0, 1.0, 1.0], Warmup::Auto { tolerance: 0.1 }),
        Ok((0, true))
    );
    assert!(
        warmup_iterations(&[1.0, 1.0], Warmup::Auto { tolerance: -0.1 })
            .unwrap_err()
            .contains("warmup_tolerance = -0.1: expected a fraction >= 0")
    );
    // Growing times never settle: half are excluded and the rank is flagged.
    assert_eq!(
        warmup_iterations(&[1.0, 2.0, 4.0, 8.0], Warmup::Auto { tolerance: 0.1 }),
        Ok((2, false))
    );
}

/// Repeats of one reduced run whose own change-points differ choose one warm-up on their
/// pooled per-iteration times; a repeat with other ranks is refused.
#[test]
fn repeats_share_one_warmup_chosen_on_their_pooled_times() {
    let run = |slow: usize| -> Vec<(f64, f64)> {
        (0..30)
            .map(|i| if i < slow { (3.0, 0.1) } else { (1.0, 0.1) })
            .collect()
    };
    let a = blocks("a", &[(0, run(3))]);
    let b = blocks("b", &[(0, run(1))]);
    let c = blocks("c", &[(0, run(3))]);
    let own = |batch: &RecordBatch| {
        let rows = BlockRows::new("r", batch).unwrap();
        let (id, ranks) = rows.single_run().unwrap();
        let run = rows.rank_run(&ranks[&0]);
        let k = iteration_times("r", id, 0, &run).unwrap().len();
        let occurrences = LoopOccurrences::of(&run, k);
        changepoint_warmup(&loop_times(&run, k, &occurrences)).0
    };
    assert_eq!((own(&a), own(&b), own(&c)), (3, 1, 3));
    let pooled = pooled_warmups(&[&a, &b, &c]).unwrap();
    assert_eq!(pooled, BTreeMap::from([(0, 3)]));
    let mut s = spec(100, Warmup::ChangePoint);
    s.pooled_warmup = pooled;
    let out = simplified(&s, &b, None).unwrap();
    let rows = predictions(&out);
    assert!(
        rows.iter().any(|p| p
            .flags
            .as_deref()
            .is_some_and(|f| f.contains("warmup_excluded=3"))),
        "{rows:?}"
    );
    let two = blocks("d", &[(0, run(3)), (1, run(3))]);
    let e = pooled_warmups(&[&a, &two]).unwrap_err().to_string();
    assert!(e.contains("runs `a` and `d` have different ranks"), "{e}");
}

fn predictions(out: &MpiPrediction) -> Vec<PredictionRow> {
    yosoku_tables::rows::read_predictions("p", &out.predictions).unwrap()
}

#[test]
fn a_periodic_block_is_counted_by_its_period_and_phase_not_averaged() {
    // 20 iterations of 1 s + 0.1 s, a 5 s rebuild every 10th iteration from iteration 3.
    let reduced = blocks_with("r", &[(0, vec![(1.0, 0.1); 20])], Some((10, 3, 5.0)));
    let out = simplified(&spec(95, Warmup::Iterations(0)), &reduced, None).unwrap();
    let roles = yosoku_tables::access::utf8(&out.block_predictions, "block_role").unwrap();
    let blocks = yosoku_tables::access::utf8(&out.block_predictions, "block").unwrap();
    let role = |name: &str| {
        (0..blocks.len())
            .find(|&i| blocks.value(i) == name)
            .map(|i| roles.value(i))
    };
    assert_eq!(role("setup"), Some("setup"));
    assert_eq!(role("stencil"), Some("loop"));
    assert_eq!(role("rebuild"), Some("periodic"));
    assert_eq!(role("teardown"), Some("teardown"));
    // Iterations 3, 13, ..., 93 of 95: 10 rebuilds, not 95 / 10 = 9.5.
    let full = column(&out.block_predictions, "full_executions");
    let i = (0..blocks.len())
        .find(|&i| blocks.value(i) == "rebuild")
        .unwrap();
    assert_eq!(full[i], 10.0);
    let run = predictions(&out)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    // 1.0 setup + 95 x 1.1 + 10 x 5 + 0.5 teardown.
    assert!(
        (run.predicted_secs - (1.0 + 104.5 + 50.0 + 0.5)).abs() < 1e-9,
        "{run:?}"
    );
    assert!(run.flags.unwrap().contains("periodic_blocks=1"));
    // Identical steady iterations: a zero-width interval.
    let (lo, hi) = run.interval_secs.unwrap();
    assert!((hi - lo).abs() < 1e-9);
}

#[test]
fn a_periodic_block_also_run_before_and_after_the_loop_extrapolates_only_its_loop_runs() {
    // As a program that builds a structure before its loop, rebuilds it every 20th step
    // and once more after: in 80 steps 4 rebuilds in the loop (iterations 0, 20, 40, 60)
    // and 2 outside; in 1,000 steps 50 in the loop and the same 2 outside, not
    // 6 + 46 x 6 / 4 = 75 (the 46 further loop rebuilds priced as all 6 seen).
    let rebuilt = |steps: usize| {
        crate::fixtures::mpi_blocks_rebuilt(
            "r",
            &[(0, vec![(1.0, 0.1); steps])],
            Some((20, 0, 3.0)),
            true,
        )
    };
    let out = simplified(&spec(1000, Warmup::Iterations(0)), &rebuilt(80), None).unwrap();
    let blocks = yosoku_tables::access::utf8(&out.block_predictions, "block").unwrap();
    let full = column(&out.block_predictions, "full_executions");
    let i = (0..blocks.len())
        .find(|&i| blocks.value(i) == "rebuild")
        .unwrap();
    // The true count, from the longer run itself.
    let truth = rebuilt(1000);
    let names = yosoku_tables::access::utf8(&truth, "block").unwrap();
    let executed = (0..names.len())
        .filter(|&r| names.value(r) == "rebuild")
        .count();
    assert_eq!((full[i], executed), (52.0, 52));
    let run = predictions(&out)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    // 1.0 setup + 1,000 x 1.1 + 52 x 3 + 0.5 teardown.
    assert!(
        (run.predicted_secs - (1.0 + 1100.0 + 156.0 + 0.5)).abs() < 1e-6,
        "{run:?}"
    );
}

/// Ranks that ran different numbers of the repeating unit (a loop polling until a message
/// arrives), or a unit of microseconds repeated hundreds of thousands of times: flagged,
/// with the hint to give steps or markers; a step loop is not.
#[test]
fn a_repeating_unit_at_a_polling_loop_is_flagged() {
    let s = spec(1000, Warmup::Iterations(0));
    let flag_of = |batch: &RecordBatch| {
        let out = simplified(&s, batch, None).unwrap();
        let run = yosoku_tables::rows::read_predictions("p", &out.predictions)
            .unwrap()
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        (
            run.flags.unwrap_or_default().contains(POLLING_FLAG),
            report_text(&out.report, "repeating unit"),
        )
    };
    let steps = blocks(
        "s",
        &[(0, vec![(0.1, 0.01); 50]), (1, vec![(0.1, 0.01); 50])],
    );
    assert_eq!(flag_of(&steps), (false, String::new()));
    let polling = blocks(
        "p",
        &[(0, vec![(1e-6, 1e-6); 50]), (1, vec![(1e-6, 1e-6); 80])],
    );
    let (flagged, note) = flag_of(&polling);
    assert!(flagged, "{note}");
    assert!(
        note.contains("50 on rank 0, 80 on rank 1") && note.contains("give `steps`"),
        "{note}"
    );
}

/// An iteration number an execution cannot hold (negative: the table's own check; past 32
/// bits) is refused with its row, not wrapped.
#[test]
fn an_iteration_out_of_range_is_refused() {
    let good = blocks("r", &[(0, vec![(0.1, 0.01); 10])]);
    let i = good.schema().index_of(col::ITERATION).unwrap();
    for (bad, said) in [
        (
            -1i64,
            "row 3: found -1, expected a finite number >= 0".to_owned(),
        ),
        (
            i64::from(u32::MAX),
            format!("row 3 has iteration {}, outside 0 to 4294967294", u32::MAX),
        ),
    ] {
        let mut iterations: Vec<Option<i64>> = yosoku_tables::access::int64(&good, col::ITERATION)
            .unwrap()
            .iter()
            .collect();
        iterations[3] = Some(bad);
        let mut columns = good.columns().to_vec();
        columns[i] = std::sync::Arc::new(arrow_array::Int64Array::from(iterations));
        let batch = RecordBatch::try_new(good.schema(), columns).unwrap();
        let e = simplified(&spec(20, Warmup::Iterations(0)), &batch, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&said), "{bad}: {e}");
    }
}

/// The text cell `column` of a report.
fn report_text(report: &RecordBatch, column: &str) -> String {
    let columns = yosoku_tables::access::utf8(report, col::COLUMN_LABEL).unwrap();
    let texts = yosoku_tables::access::utf8(report, col::TEXT).unwrap();
    (0..report.num_rows())
        .find(|&i| columns.value(i) == column)
        .map(|i| texts.value(i).to_owned())
        .unwrap_or_default()
}

/// Three repeats of one input on a machine whose speed differs from run to run: each
/// repeat's interval carries t(0.975, 2) x their spread; their combination is their mean,
/// with an interval over sqrt(3); a repeat of another program is refused.
#[test]
fn repeats_give_the_run_to_run_variation_and_combine_into_their_mean() {
    let repeat = |name: &str, scale: f64| {
        let ranks: Vec<(i32, Vec<(f64, f64)>)> = (0..2)
            .map(|r| (r, vec![(0.1 * scale, 0.02 * scale); 40]))
            .collect();
        blocks(name, &ranks)
    };
    let runs = [repeat("a", 1.0), repeat("b", 1.1), repeat("c", 0.9)];
    let refs: Vec<&RecordBatch> = runs.iter().collect();
    let mut s = spec(400, Warmup::Iterations(0));
    let totals = repeat_totals(&s, &refs).unwrap();
    // setup 1 s + 400 x 0.12 s x scale + teardown 0.5 s.
    let expect = |scale: f64| 1.5 + 400.0 * 0.12 * scale;
    for (t, scale) in totals.iter().zip([1.0, 1.1, 0.9]) {
        assert!((t - expect(scale)).abs() < 1e-9, "{t}");
    }
    s.run_to_run = run_to_run_of(&totals, None);
    let mean = expect(1.0);
    let sd = (2.0 * (400.0 * 0.12 * 0.1f64).powi(2) / 2.0).sqrt();
    let t2 = yosoku_regression::ols::t_quantile(2.0, 0.975).unwrap();
    let one = simplified(&s, &runs[0], None).unwrap();
    let run = yosoku_tables::rows::read_predictions("p", &one.predictions)
        .unwrap()
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    let (lo, hi) = run.interval_secs.unwrap();
    // No iteration noise: the half-width is the run-to-run part alone.
    assert!(((hi - lo) / 2.0 - t2 * sd / mean * run.predicted_secs).abs() < 1e-6);
    let text = report_text(&one.report, "interval");
    assert!(text.contains("the 3 repeats' spread"), "{text}");

    // Noisy iterations: the repeats' spread already holds that noise, so it is the whole
    // half-width; with the prior instead, the within-run half is added in quadrature.
    let noisy = |name: &str, scale: f64| {
        let times: Vec<(f64, f64)> = (0..40)
            .map(|i| (if i % 2 == 0 { 0.08 } else { 0.12 } * scale, 0.02 * scale))
            .collect();
        blocks(name, &[(0, times.clone()), (1, times)])
    };
    let noisy_runs = [noisy("a", 1.0), noisy("b", 1.1), noisy("c", 0.9)];
    let noisy_refs: Vec<&RecordBatch> = noisy_runs.iter().collect();
    let half_of = |s: &MpiSpec| {
        let p = simplified(s, &noisy_runs[0], None).unwrap();
        let run = yosoku_tables::rows::read_predictions("p", &p.predictions)
            .unwrap()
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        let (lo, hi) = run.interval_secs.unwrap();
        ((hi - lo) / 2.0, run.predicted_secs)
    };
    let mut with_repeats = s.clone();
    with_repeats.run_to_run = run_to_run_of(&repeat_totals(&s, &noisy_refs).unwrap(), None);
    let (half, predicted) = half_of(&with_repeats);
    let expected = with_repeats.run_to_run.relative_half(1) * predicted;
    // Beside them, only the drift 40 noisy iterations cannot exclude over 400 (the
    // stationarity test, capped at 10 % per doubling): repeats of one length cannot show it.
    let drift = 360.0 * 0.12 * 0.10 * 10f64.log2();
    assert!(
        (half - expected.hypot(drift)).abs() < 1e-6 * half,
        "{half} {expected} {drift}"
    );
    let mut prior = s.clone();
    prior.run_to_run = RunToRun::Floor {
        pct: 5.0,
        user: false,
    };
    let (half, predicted) = half_of(&prior);
    assert!(half > 0.05 * predicted + 1e-6, "{half} {predicted}");

    let together = combined(&s, &refs, None).unwrap();
    let run = yosoku_tables::rows::read_predictions("p", &together.predictions)
        .unwrap()
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    assert!(
        (run.predicted_secs - mean).abs() < 1e-9,
        "{}",
        run.predicted_secs
    );
    let (lo, hi) = run.interval_secs.unwrap();
    assert!(((hi - lo) / 2.0 - t2 * sd / 3f64.sqrt()).abs() < 1e-6);
    assert!(report_text(&together.report, "interval").contains("mean of 3 repeats"));
    // The combined model, saved and read back, answers as the step did and at another length.
    {
        use crate::model::Model;
        let (again, model) = super::combined_model(&s, &refs, None).unwrap();
        assert_eq!(again.predictions, together.predictions);
        let back = super::MpiSimplifiedRepeats::from_json(&model.to_json().unwrap()).unwrap();
        assert_eq!(back, model);
        assert_eq!(back.repeats.len(), 3);
        let ranks = back.predict(s.size).unwrap();
        let predicted = column(&together.predictions, col::PREDICTED_SECS);
        for (i, r) in ranks.iter().enumerate() {
            assert_eq!(r.total_secs(), predicted[3 * i + 2]);
        }
        let RunSize::Iterations(n) = s.size else {
            panic!("the test's spec is sized in iterations")
        };
        let longer = back.predict(RunSize::Iterations(2 * n)).unwrap();
        assert!(longer[0].total_secs() > ranks[0].total_secs());
    }

    // Another program's run among the repeats: its blocks differ (a periodic `rebuild`).
    let other = blocks_with(
        "d",
        &[(0, vec![(0.1, 0.02); 40]), (1, vec![(0.1, 0.02); 40])],
        Some((10, 0, 0.3)),
    );
    let e = combined(&s, &[&runs[0], &other], None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("blocks are not the same"), "{e}");
    // Given as repeats for the run-to-run spread, it is refused as well.
    let e = repeat_totals(&s, &[&runs[0], &other])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("blocks are not the same (block `rebuild`)"),
        "{e}"
    );
    let e = combined(&s, &[&runs[0]], None).unwrap_err().to_string();
    assert!(e.contains("two or more"), "{e}");
}

#[test]
fn noisy_iterations_give_an_interval_and_a_drift_is_flagged_or_extrapolated() {
    // 40 iterations alternating 0.9 / 1.1 s: the prediction of 400 has an interval around
    // it; the same with a rising cost is flagged, and extrapolated on request.
    let noisy: Vec<(f64, f64)> = (0..40)
        .map(|i| (if i % 2 == 0 { 0.9 } else { 1.1 }, 0.0))
        .collect();
    let out = simplified(
        &spec(400, Warmup::Iterations(0)),
        &blocks("r", &[(0, noisy)]),
        None,
    )
    .unwrap();
    let run = predictions(&out)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    let (lo, hi) = run.interval_secs.unwrap();
    assert!(
        lo < run.predicted_secs && run.predicted_secs < hi,
        "{run:?}"
    );
    // 360 more iterations with sd 0.1 s: at least sqrt(360) x 0.1 x 1.96 = 3.7 s each side.
    assert!(hi - run.predicted_secs > 3.7, "{run:?}");
    // No trend; but 40 iterations this noisy cannot show that the cost stays within 5 % over
    // 400: the stationarity test says so, first, and the interval carries the drift they allow
    // (slope 95 % interval +-0.0028 s per iteration, 200 iterations on: +-55 %), at most the
    // prior's 10 % per doubling (log2(10) doublings: +-33 %).
    let flags = run.flags.as_deref().unwrap();
    assert!(
        flags.contains("unsteady=+-33%") && !flags.contains("trend"),
        "{run:?}"
    );
    let words = report_text(&out.report, "steady state");
    assert!(
        words.starts_with("WARNING: not shown. The 40 measured"),
        "{words}"
    );
    assert!(hi - run.predicted_secs > 0.3 * 360.0, "{run:?}");
    let rising: Vec<(f64, f64)> = (0..40)
        .map(|i| {
            (
                1.0 + 0.01 * i as f64 + if i % 2 == 0 { 0.01 } else { -0.01 },
                0.0,
            )
        })
        .collect();
    let reduced = blocks("r", &[(0, rising)]);
    let flat = simplified(&spec(400, Warmup::Iterations(0)), &reduced, None).unwrap();
    let flat = predictions(&flat)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    assert!(
        flat.flags.as_deref().unwrap().contains("trend=+"),
        "{flat:?}"
    );
    let mut linear = spec(400, Warmup::Iterations(0));
    linear.trend = Trend::Linear;
    let linear = simplified(&linear, &reduced, None).unwrap();
    let linear = predictions(&linear)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    assert!(linear.flags.as_deref().unwrap().contains("extrapolated"));
    // Iteration i costs 1 + 0.01 i: 400 iterations cost 400 + 0.01 x 79,800 = 1,198 s
    // (plus 1.5 s of setup and teardown; the alternation tilts the fitted slope by
    // -3.75e-5 s, 2.7 s over the extrapolation); the steady mean alone says 400 x 1.195.
    assert!((linear.predicted_secs - 1199.5).abs() < 3.0, "{linear:?}");
    let (lo, hi) = linear.interval_secs.unwrap();
    assert!(lo < 1199.5 && 1199.5 < hi, "{linear:?}");
    assert!((flat.predicted_secs - 1199.5).abs() > 100.0, "{flat:?}");
}

/// The stationarity test: the same noise over more iterations shows a steady state for a short
/// extrapolation and not for a long one; the interval grows with the extrapolation factor where
/// steady state is not shown, and faster than the iterations' own noise alone would make it.
#[test]
fn the_interval_grows_with_the_extrapolation_where_steady_state_is_not_shown() {
    let noisy = |n: usize| -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| (if i % 2 == 0 { 0.98 } else { 1.02 }, 0.0))
            .collect()
    };
    let run = |measured: usize, full: u64| {
        let out = simplified(
            &spec(full, Warmup::Iterations(0)),
            &blocks("r", &[(0, noisy(measured))]),
            None,
        )
        .unwrap();
        let row = predictions(&out)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        let (lo, hi) = row.interval_secs.unwrap();
        let words = report_text(&out.report, "steady state");
        ((hi - lo) / 2.0 / row.predicted_secs, words)
    };
    // 200 iterations of +-2 % for 400: the drift they allow by then stays within 5 %.
    let (short, words) = run(200, 400);
    assert!(
        words.starts_with("shown: over the 400 iterations"),
        "{words}"
    );
    // The same 200 for 4,000 and 40,000: not shown, and the relative interval grows with the
    // factor (the iterations' own noise alone would shrink it as 1 / sqrt(extra)).
    let (long, words) = run(200, 4_000);
    assert!(words.starts_with("WARNING: not shown."), "{words}");
    let (longer, _) = run(200, 40_000);
    assert!(short < long && long < longer, "{short} {long} {longer}");
    assert!(longer > 5.0 * long, "{long} {longer}");
}

/// Two lengths: a run of 40 iterations and one of 80 whose cost per iteration rises give the
/// line through both, extrapolated to 400 with its uncertainty, where the longer run alone under
/// the flat mean falls short; a "shorter" run that is not shorter is refused.
#[test]
fn two_lengths_extrapolate_the_cost_per_iteration_through_both_runs() {
    let rising = |n: usize, wobble: f64| -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| {
                (
                    1.0 + 0.01 * i as f64 + if i % 2 == 0 { wobble } else { -wobble },
                    0.0,
                )
            })
            .collect()
    };
    let shorter = blocks("s", &[(0, rising(40, 0.02))]);
    let longer = blocks("l", &[(0, rising(80, 0.03))]);
    let run_of = |s: &MpiSpec| {
        let out = simplified(s, &longer, None).unwrap();
        let row = predictions(&out)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        (row, report_text(&out.report, "steady state"))
    };
    let mut two = spec(400, Warmup::Iterations(0));
    two.shorter = super::shorter_run_times(&shorter).unwrap();
    let (row, words) = run_of(&two);
    // 400 iterations of 1 + 0.01 i: 1,198 s, and 1.5 s of setup and teardown.
    assert!((row.predicted_secs - 1199.5).abs() < 5.0, "{row:?}");
    let (lo, hi) = row.interval_secs.unwrap();
    assert!(lo < 1199.5 && 1199.5 < hi, "{row:?}");
    assert!(
        row.flags.as_deref().unwrap().contains("extrapolated"),
        "{row:?}"
    );
    assert!(words.contains("two lengths"), "{words}");
    let (flat, _) = run_of(&spec(400, Warmup::Iterations(0)));
    assert!(flat.predicted_secs < 1100.0, "{flat:?}");
    // A cost that quickens (1 + 1e-4 i^2): the line would fall short; the parabola through the
    // steps, its curvature significant (|t| > 3), predicts the run and its interval holds it:
    // 400 iterations cost 400 + 1e-4 x 399 x 400 x 799 / 6 = 2,525.3 s, and 1.5 s of setup
    // and teardown.
    let quickening = |n: usize, wobble: f64| -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| {
                let i = i as f64;
                (
                    1.0 + 1e-4 * i * i + if i % 2.0 == 0.0 { wobble } else { -wobble },
                    0.0,
                )
            })
            .collect()
    };
    let mut bent = spec(400, Warmup::Iterations(0));
    bent.shorter = super::shorter_run_times(&blocks("s", &[(0, quickening(40, 0.002))])).unwrap();
    let out = simplified(&bent, &blocks("l", &[(0, quickening(80, 0.003))]), None).unwrap();
    let row = predictions(&out)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    let (lo, hi) = row.interval_secs.unwrap();
    assert!(
        (row.predicted_secs - 2526.8).abs() < 0.01 * 2526.8,
        "{row:?}"
    );
    assert!(lo < 2526.8 && 2526.8 < hi, "{row:?}");
    // The longer given as the shorter: refused, naming both lengths.
    let mut swapped = spec(400, Warmup::Iterations(0));
    swapped.shorter = super::shorter_run_times(&longer).unwrap();
    let e = simplified(&swapped, &shorter, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("shorter run has 80 iterations, the reduced run 40"),
        "{e}"
    );
}

/// Two lengths of a cost that does not drift (noise alone, and a spike in the shorter run):
/// the line through them is not better supported than the longer run alone, so that run
/// predicts, with its stationarity test, and the report and flags say why; the interval stays
/// of the order of the prediction, never a multiple of it.
#[test]
fn two_lengths_without_a_drift_fall_back_to_the_longer_run() {
    let noisy = |n: usize, seed: u64, spike: Option<usize>| -> Vec<(f64, f64)> {
        crate::fixtures::uniform(seed, n)
            .into_iter()
            .enumerate()
            .map(|(i, u)| {
                let t = 1.0 + 0.05 * (u - 0.5) + if spike == Some(i) { 5.0 } else { 0.0 };
                (t, 0.0)
            })
            .collect()
    };
    let mut two = spec(1_000, Warmup::Iterations(0));
    two.shorter = super::shorter_run_times(&blocks("s", &[(0, noisy(50, 7, Some(30)))])).unwrap();
    let out = simplified(&two, &blocks("l", &[(0, noisy(100, 11, None))]), None).unwrap();
    let row = predictions(&out)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    // 1,000 iterations of about 1 s, and 1.5 s of setup and teardown.
    assert!((row.predicted_secs - 1001.5).abs() < 20.0, "{row:?}");
    let (lo, hi) = row.interval_secs.unwrap();
    assert!(lo < 1001.5 && 1001.5 < hi, "{row:?}");
    assert!(hi - lo < row.predicted_secs, "{row:?}");
    assert!(
        row.flags
            .as_deref()
            .unwrap()
            .contains("two_lengths=not_supported"),
        "{row:?}"
    );
    let words = report_text(&out.report, "steady state");
    assert!(
        words.starts_with("two lengths: the line through both runs' steps is not better supported"),
        "{words}"
    );
}

#[test]
fn the_run_is_sized_in_the_programs_steps() {
    // 20 iterations for 10 steps: 2 per step, 200 for 100.
    let reduced = blocks("r", &[(0, vec![(1.0, 0.0); 20])]);
    let mut s = spec(0, Warmup::Iterations(0));
    s.size = RunSize::Steps {
        reduced: 10,
        full: 100,
    };
    let out = simplified(&s, &reduced, None).unwrap();
    let run = predictions(&out)
        .into_iter()
        .find(|p| p.variant == "run")
        .unwrap();
    assert_eq!(run.repetitions, 200);
    assert!((run.predicted_secs - 201.5).abs() < 1e-9, "{run:?}");
    // A measured full run of another length is refused with what was derived.
    let full = blocks("f", &[(0, vec![(1.0, 0.0); 100])]);
    let e = simplified(&s, &reduced, Some(&full))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ran 100 iterations, but full_iterations = 200 (2 iteration(s) per step)"),
        "{e}"
    );
}

/// The simplified-execution model saved and read back answers from its fitted numbers alone:
/// the run the step predicted, to the bit, and a run of another length (100 steady iterations of
/// 2 s compute and 1 s communication more) without the reduced run's logs.
#[test]
fn the_saved_simplified_model_predicts_any_length_as_the_step_did() {
    use crate::model::Model;
    let reduced = blocks(
        "reduced",
        &[
            (0, warming_up()),
            (
                1,
                vec![
                    (4.0, 4.0),
                    (2.5, 1.5),
                    (2.5, 0.5),
                    (2.5, 0.5),
                    (2.5, 0.5),
                    (2.5, 0.5),
                ],
            ),
        ],
    );
    let s = spec(100, Warmup::Auto { tolerance: 0.1 });
    let (out, model) = super::simplified_model(&s, &reduced, None).unwrap();
    let saved = model.to_json().unwrap();
    let back = super::MpiSimplified::from_json(&saved).unwrap();
    assert_eq!(back, model);
    let ranks = back.predict(RunSize::Iterations(100)).unwrap();
    let predicted = column(&out.predictions, col::PREDICTED_SECS);
    // predictions: rank 0 compute, communication, total; rank 1 the same; the run.
    assert_eq!(ranks.len(), 2);
    for (i, r) in ranks.iter().enumerate() {
        assert_eq!(r.compute_secs, predicted[3 * i]);
        assert_eq!(r.communication_secs, predicted[3 * i + 1]);
        assert_eq!(r.total_secs(), predicted[3 * i + 2]);
    }
    let longer = back.predict(RunSize::Iterations(200)).unwrap();
    assert_eq!(longer[0].total_secs(), ranks[0].total_secs() + 100.0 * 3.0);
    assert_eq!(longer[1].total_secs(), ranks[1].total_secs() + 100.0 * 3.0);
    assert_eq!(longer[0].full_iterations, 200);
    // The saved form names its fields, and the options the step used.
    let json: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(json["options"]["warmup"], "tolerance 0.1", "{json}");
    assert_eq!(json["ranks"][0]["loop_secs"].as_array().unwrap().len(), 6);
    assert!(json["ranks"][0]["blocks"][0]["block"].is_string(), "{json}");
}
