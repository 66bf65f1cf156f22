//! The simplified-execution prediction as a model object (docs/methods.md, section 3): what a
//! reduced run says of any run length, fitted once, saved with named fields and read back to
//! predict a run of another length without the reduced run's logs.
//!
//! Per rank: the iterations the reduced run made, the warm-up it excluded, each iteration's time
//! without the periodic blocks (the steady line and the stationarity test are computed from
//! them for each length asked), and per block what it measured: its time in the warm-up and
//! outside the loop, its steady executions and their time, and for a periodic block its period,
//! phase and occurrences. A prediction of `N` iterations (or of the program's steps) is then the
//! paper's `measured + (N - k) x per-iteration mean` per block, as [`super::simplified`] gives
//! it: that function fits this model and asks it (the fitting and the asking are in `predict`).

use serde::{Deserialize, Serialize};

use super::spec::{MpiSpec, Trend, Warmup};

/// The kind a bundle records the simplified-execution model as.
pub const MPI_SIMPLIFIED_KIND: &str = "mpi_simplified";

/// A block of a rank, as the reduced run measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedBlock {
    pub block: String,
    pub compute: bool,
    /// Whether it ran inside the main loop, and else whether before it (setup) or after it
    /// (teardown).
    pub in_loop: bool,
    pub before_loop: bool,
    /// Its time in the warm-up iterations and outside the loop (s): measured once, kept once.
    pub warmup_secs: f64,
    /// Its executions in the steady iterations and their summed time (s; none outside the loop).
    pub steady_executions: i64,
    pub steady_secs: Option<f64>,
    /// Its executions in the warm-up and outside the loop.
    pub other_executions: f64,
    /// Where it runs every `period`-th iteration.
    pub periodic: Option<FittedPeriodic>,
}

/// A block that runs every `period`-th iteration, first in iteration `phase`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedPeriodic {
    pub period: u64,
    pub phase: u64,
    /// The iterations of the reduced run it ran in, and its executions and time (s) there.
    pub seen: u64,
    pub in_loop_executions: f64,
    pub in_loop_secs: f64,
}

/// A rank of the reduced run, as a prediction of any length needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedRank {
    pub rank: i32,
    pub device: String,
    /// The reduced run's iterations, and the leading ones excluded as warm-up.
    pub iterations: usize,
    pub warmup: usize,
    /// Whether the warm-up rule found the times settled.
    pub settled: bool,
    /// Each iteration's time without the periodic blocks (s).
    pub loop_secs: Vec<f64>,
    /// Two lengths: the shorter reduced run's, iteration by iteration.
    pub shorter_loop_secs: Option<Vec<f64>>,
    /// Everything the reduced run measured on this rank (s).
    pub reduced_secs: f64,
    pub blocks: Vec<FittedBlock>,
}

/// The options the model was fitted with, as the pipeline step's keys give them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimplifiedOptions {
    /// How the warm-up was chosen: `change_point`, `tolerance <f>`, `iterations <n>`, or
    /// `pooled over repeats`.
    pub warmup: String,
    /// `flag` or `linear`: what a drift of one length does.
    pub trend: String,
    /// Whether a shorter run gave two lengths.
    pub two_lengths: bool,
}

impl SimplifiedOptions {
    fn of(spec: &MpiSpec) -> Self {
        SimplifiedOptions {
            warmup: if spec.pooled_warmup.is_empty() {
                match spec.warmup {
                    Warmup::ChangePoint => "change_point".to_owned(),
                    Warmup::Auto { tolerance } => format!("tolerance {tolerance}"),
                    Warmup::Iterations(n) => format!("iterations {n}"),
                }
            } else {
                "pooled over repeats".to_owned()
            },
            trend: trend_name(spec.trend).to_owned(),
            two_lengths: !spec.shorter.is_empty(),
        }
    }
}

fn trend_name(trend: Trend) -> &'static str {
    match trend {
        Trend::Flag => "flag",
        Trend::Linear => "linear",
    }
}

/// The simplified-execution model of one reduced run: its ranks as fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiSimplified {
    /// The reduced run's id.
    pub reduced_run: String,
    pub options: SimplifiedOptions,
    pub ranks: Vec<FittedRank>,
}

/// The kind a bundle records the model of several repeats combined as.
pub const MPI_SIMPLIFIED_REPEATS_KIND: &str = "mpi_simplified_repeats";

/// The simplified-execution model of several repeats of one reduced run, combined: each
/// repeat's model; a prediction is theirs averaged block by block, rank by rank, with the
/// interval of the mean (`combine_repeats`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiSimplifiedRepeats {
    pub repeats: Vec<MpiSimplified>,
}

/// What a combined model is fitted on: the repeats' `mpi_blocks` (one run each) and the step's
/// settings.
#[derive(Debug)]
pub struct RepeatsTraining<'a> {
    pub repeats: &'a [&'a arrow_array::RecordBatch],
    pub spec: &'a MpiSpec,
}

/// What a model is fitted on: the reduced run's `mpi_blocks` (one run) and the step's settings.
#[derive(Debug)]
pub struct SimplifiedTraining<'a> {
    pub reduced: &'a arrow_array::RecordBatch,
    pub spec: &'a MpiSpec,
}

/// A rank's predicted time of the run asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredictedRank {
    pub rank: i32,
    pub compute_secs: f64,
    pub communication_secs: f64,
    /// Iterations of the run predicted.
    pub full_iterations: u64,
}

impl PredictedRank {
    pub fn total_secs(&self) -> f64 {
        self.compute_secs + self.communication_secs
    }
}

/// The options record of the model `spec` fits.
pub fn simplified_options(spec: &MpiSpec) -> SimplifiedOptions {
    SimplifiedOptions::of(spec)
}
