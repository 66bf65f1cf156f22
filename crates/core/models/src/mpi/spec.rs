//! What an MPI prediction is asked and answers: the run to predict and how ([`MpiSpec`]: its
//! warm-up, drift and run-to-run spread), the prediction's tables, and the constants they use.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;

use crate::mpi::loops::RunSize;

/// How the warm-up iterations, excluded from the means, are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Warmup {
    /// A change-point test on the per-iteration times ([`crate::mpi::loops::changepoint_warmup`]):
    /// the same cut on repeats of one run.
    ChangePoint,
    /// The leading iterations whose time differs from the steady time (the median of the
    /// second half of the iterations) by more than `tolerance` (a fraction). At most half the
    /// iterations are excluded; a rank that never settles is flagged `unsettled`.
    Auto { tolerance: f64 },
    /// Exactly this many leading iterations.
    Iterations(usize),
}

/// What to do with a per-iteration cost that drifts over the reduced run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    /// Flag it (`trend=...` in the flags) and predict with the steady mean.
    Flag,
    /// Extrapolate the straight line through the steady iterations' times to the full run's.
    /// (Two lengths, `shorter`, extrapolate their own line where it is better supported:
    /// `SteadyIterations::two_lengths`.)
    Linear,
}

/// A drift is reported when the slope's t statistic exceeds this.
pub(super) const TREND_T: f64 = 3.0;

/// The reduced run shows a steady state for the full run when the drift of the per-iteration
/// cost its steady iterations cannot exclude (95 %) stays within this fraction by the full run's
/// extra iterations; otherwise the prediction says so first, and its interval carries that
/// drift (docs/methods.md, section 3).
pub const STEADY_TOLERANCE: f64 = 0.05;

/// The drift of the per-iteration cost a prediction allows, per doubling from the reduced run's
/// iterations to the full run's, where its steady iterations cannot narrow it: a prior, not a
/// fit (as [`DEFAULT_RUN_TO_RUN_PCT`] is). Iterations that vary little over many show less.
pub const DRIFT_PRIOR_PER_DOUBLING: f64 = 0.10;

/// What every MPI prediction needs.
#[derive(Debug, Clone, PartialEq)]
pub struct MpiSpec {
    /// The step id, in the `model` columns.
    pub model: String,
    /// The run to predict: its iterations, or its steps in the program's own units.
    pub size: RunSize,
    pub warmup: Warmup,
    /// The warm-up of each rank chosen once for several repeats of the reduced run
    /// ([`pooled_warmups`](super::pooled_warmups)); when it names a rank, it replaces `warmup`
    /// there.
    pub pooled_warmup: BTreeMap<i32, usize>,
    pub trend: Trend,
    /// The paper's figure for this setting, printed beside ours in the report.
    pub published: Option<String>,
    /// The run-to-run variation the interval carries beside the reduced run's own noise.
    pub run_to_run: RunToRun,
    /// Two lengths: each rank's per-iteration times of a shorter reduced run
    /// ([`shorter_run_times`](super::shorter_run_times)), pooled iteration by iteration with the
    /// reduced run's (the longer), whose line in the iteration index is then extrapolated,
    /// whatever `trend` says.
    pub shorter: BTreeMap<i32, Vec<f64>>,
}

/// The 95 % half-width, in percent of the prediction, that a prediction's interval carries for
/// run-to-run variation when there are no repeats to measure it on: a prior, not a fit. A
/// dedicated node's repeats of an MPI run typically differ by a few percent; a shared machine's
/// by more (set `run_to_run_pct`).
pub const DEFAULT_RUN_TO_RUN_PCT: f64 = 5.0;

/// The run-to-run variation a prediction's interval carries beside the reduced run's own
/// iteration-to-iteration noise (which is all the published method's interval has): two runs
/// of one input on one machine differ by more than their iterations do (docs/methods.md,
/// section 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunToRun {
    /// Measured on repeats of the reduced run: the sample standard deviation of the repeats'
    /// predictions of the same run over their mean; `floor_pct` (the user's) bounds it below.
    Repeats {
        relative_sd: f64,
        repeats: usize,
        floor_pct: Option<f64>,
    },
    /// A 95 % half-width in percent of the prediction: the user's (`run_to_run_pct`) or
    /// [`DEFAULT_RUN_TO_RUN_PCT`].
    Floor { pct: f64, user: bool },
    /// The reduced run's own noise only (the published method).
    Off,
}

impl RunToRun {
    /// The 95 % half-width it adds, relative to the prediction, for a prediction that is the
    /// mean of `combined` repeats' (1: one reduced run's).
    pub fn relative_half(&self, combined: usize) -> f64 {
        let k = (combined.max(1) as f64).sqrt();
        match *self {
            Self::Repeats {
                relative_sd,
                repeats,
                floor_pct,
            } => {
                let t = yosoku_regression::ols::t_quantile(
                    repeats.saturating_sub(1).max(1) as f64,
                    0.975,
                )
                .unwrap_or(f64::INFINITY);
                (t * relative_sd / k).max(floor_pct.unwrap_or(0.0) / 100.0 / k)
            }
            Self::Floor { pct, .. } => pct / 100.0 / k,
            Self::Off => 0.0,
        }
    }

    /// Whether it already holds the reduced run's own iteration-to-iteration noise: the
    /// repeats' predictions differ by that noise too (each averages other iterations), so their
    /// spread is the prediction's whole variation, and adding the within-run half again would
    /// count it twice.
    pub fn holds_within_run(&self) -> bool {
        matches!(self, Self::Repeats { .. })
    }

    /// What the report says of it.
    pub fn describe(&self, combined: usize) -> String {
        let pct = 100.0 * self.relative_half(combined);
        let of = if combined > 1 {
            format!(", of the mean of {combined} repeats' predictions")
        } else {
            String::new()
        };
        match *self {
            Self::Repeats {
                relative_sd,
                repeats,
                floor_pct,
            } => format!(
                "+-{pct:.1} % run-to-run{of}: t(0.975, {}) x the {repeats} repeats' spread ({:.1} % sd of their predictions){}, which holds the reduced runs' own noise (not added again)",
                repeats - 1,
                100.0 * relative_sd,
                floor_pct.map_or(String::new(), |f| format!(
                    ", at least run_to_run_pct = {f} %"
                ))
            ),
            Self::Floor { pct: given, user } => format!(
                "+-{pct:.1} % run-to-run{of}: {} (no repeats of the reduced run to measure it on), beside the reduced run's own noise",
                if user {
                    format!("run_to_run_pct = {given} %, the user's")
                } else {
                    format!("the default {given} % (no repeats given; run_to_run_pct sets it)")
                }
            ),
            Self::Off => {
                "the reduced run's own noise only (run-to-run variation left out)".to_owned()
            }
        }
    }
}

/// What an MPI prediction step produces.
#[derive(Debug, Clone)]
pub struct MpiPrediction {
    /// Per rank: `compute`, `communication`, `total`; and the run (the slowest rank).
    pub predictions: RecordBatch,
    /// One row per block and rank.
    pub block_predictions: RecordBatch,
    /// The per-rank table the CLI prints.
    pub report: RecordBatch,
}
