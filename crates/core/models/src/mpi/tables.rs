//! The output tables of a prediction: `mpi_ranks`, `mpi_block_predictions`, `predictions` and
//! the report, one row per rank and block, measured beside predicted.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use yosoku_tables::MPI_BLOCK_PREDICTIONS;
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::rows::{PredictionRow, predictions_batch};

use crate::ModelError;

use super::input::{MeasuredRun, check_same_configuration};
use super::polling::{POLLING_FLAG, polling_loop};
use super::rank::{BlockPrediction, RankPrediction, error_pct};
use super::spec::{MpiPrediction, MpiSpec};

/// Per-rank compute and communication predictions from (possibly different) runs, compared
/// with a measured full run, as tables.
#[allow(clippy::too_many_arguments)] // each a different part of the prediction
pub(super) fn rank_tables(
    spec: &MpiSpec,
    method: &str,
    reduced_run: &str,
    compute: &BTreeMap<i32, RankPrediction>,
    communication: &BTreeMap<i32, RankPrediction>,
    measured: Option<&MeasuredRun>,
    combined: usize,
) -> Result<MpiPrediction, ModelError> {
    check_same_configuration(reduced_run, compute, communication, measured)?;
    let program = measured.map_or(reduced_run, |m| m.id.as_str());
    let mut tables = RankTables {
        spec,
        combined,
        title: format!("{}: per-rank prediction, {method}", spec.model),
        program,
        rows: Vec::new(),
        cells: Vec::new(),
    };
    let mut slowest: Option<Slowest> = None;
    let mut measured_slowest: Option<f64> = None;
    for (rank, c) in compute {
        let Some(m) = communication.get(rank) else {
            return Err(ModelError::invalid(format!(
                "rank {rank} is in the compute run but not in the communication run: the runs are not of the same configuration"
            )));
        };
        let measured_rank = measured.and_then(|m| m.ranks.get(rank)).copied();
        let (total, flags, half) = tables.rank(*rank, c, m, measured_rank);
        if slowest.as_ref().is_none_or(|s| total > s.total) {
            slowest = Some(Slowest {
                total,
                device: c.device.clone(),
                flags,
                half,
                drift_bound: c.drift_bound,
                trend_extrapolated: c.trend_extrapolated,
                two_lengths_not_supported: c.two_lengths_not_supported,
                iterations: c.iterations,
                full_iterations: c.full_iterations,
            });
        }
        if let Some(t) = measured_rank.map(|m| m.0 + m.1) {
            measured_slowest = Some(measured_slowest.map_or(t, |s: f64| s.max(t)));
        }
    }
    let Some(mut slowest) = slowest else {
        return Err(ModelError::invalid(format!(
            "the reduced run `{reduced_run}` has no ranks"
        )));
    };
    let polling = polling_loop(compute);
    if polling.is_some() {
        let flags = [slowest.flags.take(), Some(POLLING_FLAG.to_owned())];
        slowest.flags = crate::join_flags(&flags.into_iter().flatten().collect::<Vec<_>>());
    }
    tables.run(&slowest, compute, measured, measured_slowest);
    if let Some(note) = polling {
        tables.cells.push(ReportCell::text(
            &tables.title,
            "run (slowest rank)",
            "repeating unit",
            note,
        ));
    }
    let block_rows = block_rows(reduced_run, compute, communication);
    Ok(MpiPrediction {
        predictions: predictions_batch(&tables.rows)?,
        block_predictions: block_batch(&spec.model, &block_rows)?,
        report: report_batch(&tables.cells)?,
    })
}

/// The slowest rank's prediction: the run's.
pub(super) struct Slowest {
    pub(super) total: f64,
    pub(super) device: String,
    pub(super) flags: Option<String>,
    /// The 95 % interval's half-width.
    pub(super) half: f64,
    /// The stationarity test of the rank's reduced run (its compute run's).
    pub(super) drift_bound: f64,
    /// Whether its drift was extrapolated (`trend = "linear"`).
    pub(super) trend_extrapolated: bool,
    /// Two lengths whose line was not better supported: its slope's t statistic.
    pub(super) two_lengths_not_supported: Option<f64>,
    pub(super) iterations: usize,
    pub(super) full_iterations: u64,
}

/// The prediction rows and report cells of an MPI prediction, as they are written.
pub(super) struct RankTables<'a> {
    pub(super) spec: &'a MpiSpec,
    /// Repeats whose predictions the one made is the mean of (1: one reduced run).
    pub(super) combined: usize,
    pub(super) title: String,
    /// The run the rows name: the measured one's id, else the reduced run's.
    pub(super) program: &'a str,
    pub(super) rows: Vec<PredictionRow>,
    pub(super) cells: Vec<ReportCell>,
}

/// What a rank's prediction notes (warm-up excluded, unsettled, trend, periodic blocks), for
/// its compute run `c` and, when another, its communication run `m`.
pub(super) fn rank_flags(c: &RankPrediction, m: &RankPrediction) -> Vec<String> {
    let mut flags = Vec::new();
    let same_run = std::ptr::eq(c, m);
    for p in if same_run { vec![c] } else { vec![c, m] } {
        if p.warmup > 0 {
            flags.push(format!("warmup_excluded={}", p.warmup));
        }
        if !p.settled {
            flags.push("unsettled".to_owned());
        }
        if let Some(t) = p.trend_pct_per_1000 {
            flags.push(format!(
                "trend={t:+.2}%/1000it{}",
                if p.trend_extrapolated {
                    " extrapolated"
                } else {
                    ""
                }
            ));
        }
        if p.two_lengths_not_supported.is_some() {
            flags.push("two_lengths=not_supported".to_owned());
        }
        if p.periodic_blocks > 0 {
            flags.push(format!("periodic_blocks={}", p.periodic_blocks));
        }
        if !p.trend_extrapolated && p.drift_bound > super::spec::STEADY_TOLERANCE {
            flags.push(format!(
                "unsteady=+-{:.0}%",
                100.0 * p.drift_bound.min(99.99)
            ));
        }
    }
    flags
}

impl RankTables<'_> {
    /// The 95 % half-width of a rank's total: its reduced run's own noise and the run-to-run
    /// variation (the repeats' spread alone where it holds that noise), and in quadrature the
    /// drift the stationarity test cannot exclude.
    fn half_width(&self, c: &RankPrediction, m: &RankPrediction, total: f64) -> f64 {
        let within = if std::ptr::eq(c, m) {
            c.interval_half_secs
        } else {
            c.interval_half_secs.hypot(m.interval_half_secs)
        };
        let run_to_run = self.spec.run_to_run.relative_half(self.combined) * total;
        let half = if self.spec.run_to_run.holds_within_run() {
            run_to_run
        } else {
            within.hypot(run_to_run)
        };
        // A drift beyond the reduced run's iterations is in neither its noise nor its repeats'
        // spread: it is added whatever the run-to-run variation.
        let drift = if std::ptr::eq(c, m) {
            c.drift_half_secs
        } else {
            c.drift_half_secs.hypot(m.drift_half_secs)
        };
        half.hypot(drift)
    }

    /// Rank `rank`'s rows (compute, communication, total) and cells, from its compute run `c`
    /// and communication run `m` (the same run or not), beside its measured (compute,
    /// communication) seconds. Returns its total, flags and interval half-width.
    pub(super) fn rank(
        &mut self,
        rank: i32,
        c: &RankPrediction,
        m: &RankPrediction,
        measured_rank: Option<(f64, f64)>,
    ) -> (f64, Option<String>, f64) {
        let (compute_secs, comm_secs) = (c.secs(true), m.secs(false));
        let total = compute_secs + comm_secs;
        let half = self.half_width(c, m, total);
        let flags: Option<String> = crate::join_flags(&rank_flags(c, m));
        let variant = format!("rank {rank}");
        // A phase the full run spent no time in (a rank without communication) has no
        // measurement to compare with: a relative error of 0 s is undefined.
        let positive = |secs: f64| (secs > 0.0).then_some(secs);
        for (phase, predicted, measured_secs) in [
            (
                "compute",
                compute_secs,
                measured_rank.and_then(|m| positive(m.0)),
            ),
            (
                "communication",
                comm_secs,
                measured_rank.and_then(|m| positive(m.1)),
            ),
            (
                "total",
                total,
                measured_rank.and_then(|m| positive(m.0 + m.1)),
            ),
        ] {
            self.rows.push(PredictionRow {
                model: self.spec.model.clone(),
                device: c.device.clone(),
                program: self.program.into(),
                variant: variant.clone(),
                phase: phase.into(),
                repetitions: c.full_iterations as i64,
                predicted_secs: predicted,
                measured_secs,
                error_pct: error_pct(predicted, measured_secs),
                flags: flags.clone(),
                run_id: Some(self.program.into()),
                interval_secs: (phase == "total")
                    .then(|| ((predicted - half).max(0.0), predicted + half)),
                ..PredictionRow::default()
            });
        }
        let measured_total = measured_rank.map(|m| m.0 + m.1);
        let title = &self.title;
        self.cells.extend([
            ReportCell::number(title, &variant, "compute s", compute_secs, "s"),
            ReportCell::number(title, &variant, "communication s", comm_secs, "s"),
            ReportCell::number(title, &variant, "predicted s", total, "s"),
            ReportCell::number(title, &variant, "+- s (95 %)", half, "s"),
            ReportCell::number(
                title,
                &variant,
                "compute:communication",
                if comm_secs > 0.0 {
                    compute_secs / comm_secs
                } else {
                    f64::NAN
                },
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "measured s",
                measured_total.unwrap_or(f64::NAN),
                "s",
            ),
            ReportCell::number(
                title,
                &variant,
                "error %",
                error_pct(total, measured_total).unwrap_or(f64::NAN),
                "%",
            ),
            ReportCell::number(
                title,
                &variant,
                "warm-up excluded",
                c.warmup.max(m.warmup) as f64,
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "iterations measured",
                c.iterations as f64,
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "iterations predicted",
                c.full_iterations as f64,
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "periodic blocks",
                c.periodic_blocks as f64,
                "",
            ),
        ]);
        if let Some(note) = &c.size_note {
            self.cells
                .push(ReportCell::text(title, &variant, "steps", note.clone()));
        }
        (total, flags, half)
    }

    /// The run's rows (its slowest rank's prediction, and the naive scaling of the reduced run a
    /// user would do without yosoku) and cells, beside the measured run: the mean of its
    /// repeats' times (each its slowest rank's), else the slowest measured rank.
    pub(super) fn run(
        &mut self,
        slowest: &Slowest,
        compute: &BTreeMap<i32, RankPrediction>,
        measured: Option<&MeasuredRun>,
        mut measured_slowest: Option<f64>,
    ) {
        let spread = measured.filter(|m| !m.run_secs.is_empty()).map(|m| {
            let n = m.run_secs.len();
            let mean = m.run_secs.iter().sum::<f64>() / n as f64;
            let lo = m.run_secs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = m.run_secs.iter().copied().fold(0.0, f64::max);
            (n, mean, lo, hi)
        });
        if let Some((_, mean, _, _)) = spread {
            measured_slowest = Some(mean);
        }
        let naive = compute
            .values()
            .map(|c| c.reduced_secs * c.full_iterations as f64 / c.iterations.max(1) as f64)
            .fold(0.0, f64::max);
        let (total, half) = (slowest.total, slowest.half);
        self.rows.push(PredictionRow {
            model: self.spec.model.clone(),
            device: slowest.device.clone(),
            program: self.program.into(),
            variant: "run".into(),
            phase: "total".into(),
            repetitions: slowest.full_iterations as i64,
            predicted_secs: total,
            measured_secs: measured_slowest,
            error_pct: error_pct(total, measured_slowest),
            flags: slowest.flags.clone(),
            run_id: Some(self.program.into()),
            interval_secs: Some(((total - half).max(0.0), total + half)),
            ..PredictionRow::default()
        });
        self.rows.push(PredictionRow {
            model: self.spec.model.clone(),
            device: compute
                .values()
                .next()
                .map(|c| c.device.clone())
                .unwrap_or_default(),
            program: self.program.into(),
            variant: "run (naive scaling)".into(),
            phase: "total".into(),
            repetitions: slowest.full_iterations as i64,
            predicted_secs: naive,
            measured_secs: measured_slowest,
            error_pct: error_pct(naive, measured_slowest),
            flags: Some("the reduced run's time x full / reduced iterations".into()),
            run_id: Some(self.program.into()),
            ..PredictionRow::default()
        });
        let (title, run_label) = (&self.title, "run (slowest rank)");
        // Words first: whether the prediction rests on a steady state the reduced run showed.
        self.cells.push(ReportCell::text(
            title,
            run_label,
            "steady state",
            steady_state_words(slowest),
        ));
        if let Some((n, mean, lo, hi)) = spread
            && n > 1
        {
            self.cells.extend([
                ReportCell::number(title, run_label, "measured repeats", n as f64, ""),
                ReportCell::number(title, run_label, "measured min s", lo, "s"),
                ReportCell::number(title, run_label, "measured max s", hi, "s"),
                ReportCell::number(title, run_label, "spread %", 100.0 * (hi - lo) / mean, "%"),
                ReportCell::text(
                    title,
                    run_label,
                    "prediction within spread",
                    if (lo..=hi).contains(&total) {
                        "yes"
                    } else {
                        "no"
                    },
                ),
            ]);
        }
        self.cells.extend([
            ReportCell::number(title, run_label, "naive scaling s", naive, "s"),
            ReportCell::number(
                title,
                run_label,
                "naive error %",
                error_pct(naive, measured_slowest).unwrap_or(f64::NAN),
                "%",
            ),
            ReportCell::number(title, run_label, "predicted s", total, "s"),
            ReportCell::number(title, run_label, "+- s (95 %)", half, "s"),
            ReportCell::text(
                title,
                run_label,
                "interval",
                self.spec.run_to_run.describe(self.combined),
            ),
            ReportCell::number(
                title,
                run_label,
                "measured s",
                measured_slowest.unwrap_or(f64::NAN),
                "s",
            ),
            ReportCell::number(
                title,
                run_label,
                "error %",
                error_pct(total, measured_slowest).unwrap_or(f64::NAN),
                "%",
            ),
        ]);
        if let Some(p) = &self.spec.published {
            self.cells
                .push(ReportCell::text(title, run_label, "paper", p.clone()));
        }
    }
}

/// The stationarity test of the slowest rank in words: a warning first where the reduced run
/// does not show a steady state that lasts the full run.
fn steady_state_words(slowest: &Slowest) -> String {
    let one_length = one_length_words(slowest);
    match slowest.two_lengths_not_supported {
        Some(t) => format!(
            "two lengths: the line through both runs' steps is not better supported than the longer run alone (its slope's t = {t:.2}; extrapolated only beyond |t| = {} and where its interval is narrower), so the longer run predicts. {one_length}",
            super::spec::TREND_T
        ),
        None => one_length,
    }
}

/// [`steady_state_words`] of one reduced run.
fn one_length_words(slowest: &Slowest) -> String {
    let (k, full) = (slowest.iterations, slowest.full_iterations);
    let bound = 100.0 * slowest.drift_bound;
    if slowest.trend_extrapolated {
        return format!(
            "a drift found in the {k} measured iterations is extrapolated to {full} (trend = \"linear\", or two lengths); its line's uncertainty is in the interval, and with two lengths the bend of that line the runs cannot exclude (at most the stationarity test's prior)"
        );
    }
    if !bound.is_finite() {
        return format!(
            "WARNING: not shown. The {k} measured iterations cannot tell how the cost per iteration moves over {full}; the prediction assumes it stays as measured"
        );
    }
    if slowest.drift_bound <= super::spec::STEADY_TOLERANCE {
        format!(
            "shown: over the {full} iterations the cost per iteration drifts by at most +-{bound:.1} % (95 %) from the {k} measured"
        )
    } else {
        format!(
            "WARNING: not shown. The {k} measured iterations allow the cost per iteration to drift by up to +-{bound:.0} % (95 %) by the full run's {full}; the prediction assumes it does not, and its interval carries that drift. Measure a longer reduced run, or two lengths, to show it"
        )
    }
}

/// Every rank's compute blocks from the compute run and communication blocks from the
/// communication run.
pub(super) fn block_rows<'a>(
    reduced_run: &'a str,
    compute: &'a BTreeMap<i32, RankPrediction>,
    communication: &'a BTreeMap<i32, RankPrediction>,
) -> Vec<(i32, &'a BlockPrediction, &'a str)> {
    let mut block_rows: Vec<(i32, &BlockPrediction, &str)> = Vec::new();
    for (rank, c) in compute {
        block_rows.extend(
            c.blocks
                .iter()
                .filter(|b| b.compute)
                .map(|b| (*rank, b, reduced_run)),
        );
        if let Some(m) = communication.get(rank) {
            block_rows.extend(
                m.blocks
                    .iter()
                    .filter(|b| !b.compute)
                    .map(|b| (*rank, b, reduced_run)),
            );
        }
    }
    block_rows
}

pub(super) fn block_batch(
    model: &str,
    rows: &[(i32, &BlockPrediction, &str)],
) -> Result<RecordBatch, ModelError> {
    let floats = |f: &dyn Fn(&BlockPrediction) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| f(r.1))))
    };
    MPI_BLOCK_PREDICTIONS
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| model))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.1.block.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| {
                if r.1.compute {
                    "compute"
                } else {
                    "communication"
                }
            }))),
            Arc::new(
                rows.iter()
                    .map(|r| Some(r.1.in_loop))
                    .collect::<BooleanArray>(),
            ),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.role))),
            Arc::new(
                rows.iter()
                    .map(|r| r.1.period_iterations)
                    .collect::<Int64Array>(),
            ),
            floats(&|b| b.warmup_secs),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r.1.steady_executions),
            )),
            Arc::new(rows.iter().map(|r| r.1.mean_secs).collect::<Float64Array>()),
            floats(&|b| b.full_executions),
            floats(&|b| b.predicted_secs),
        ])
        .map_err(ModelError::built)
}
