//! Simplified-execution prediction of MPI runs (Chida et al., docs/methods.md, section 3).
//!
//! A reduced run (few main-loop iterations) is measured block by block, compute and
//! communication in the same run, so a fast rank's waiting for a slow one is inside its
//! communication blocks. Per rank and block: everything the reduced run of `k` iterations
//! measured happens in the full run of `N` too; the `N - k` further iterations each run the
//! block as often as a steady iteration did, at its mean time per execution after the warm-up
//! iterations (which are excluded from the mean). Blocks outside the loop run once. That is
//! `mean x count` with the warm-up iterations counted as measured. The run takes as long as its
//! slowest rank.
//!
//! - [`simplified`]: the paper's method.
//! - [`separate_runs`]: the earlier method (MPIETE) as a baseline: compute blocks from one run,
//!   communication blocks from a communication-only run, so waiting is missed.
//! - [`best_configuration`]: one prediction per reduced run of several configurations (rank
//!   counts, bindings), ranked.
//!
//! The modules, in the order a prediction goes through them: `input` (the runs decoded),
//! `warmup` (the warm-up excluded), `predict` (per rank and block), `polling` (a flag),
//! `tables` (the output tables), `repeats` (several reduced runs) and `configurations` (the
//! baseline and the best configuration); beside them [`loops`] finds the repeating unit of a
//! run without iteration markers and [`call_paths`] turns blocks into call paths for the
//! scaling models.

pub mod call_paths;
mod configurations;
mod input;
pub mod loops;
mod model;
mod polling;
mod predict;
#[cfg(test)]
mod properties;
mod rank;
mod repeats;
mod spec;
mod steps_and_ranks;
mod tables;
#[cfg(test)]
mod tests;
mod warmup;

pub use configurations::{best_configuration, separate_runs};
pub use model::{
    MPI_SIMPLIFIED_KIND, MPI_SIMPLIFIED_REPEATS_KIND, MpiSimplified, MpiSimplifiedRepeats,
    PredictedRank, RepeatsTraining, SimplifiedOptions, SimplifiedTraining, simplified_options,
};
pub use polling::POLLING_FLAG;
pub use predict::{simplified, simplified_model};
pub use repeats::{combined, combined_model, paired_repeat_totals, repeat_totals, run_to_run_of};
pub use spec::{
    DEFAULT_RUN_TO_RUN_PCT, DRIFT_PRIOR_PER_DOUBLING, MpiPrediction, MpiSpec, RunToRun,
    STEADY_TOLERANCE, Trend, Warmup,
};
pub use steps_and_ranks::{
    NAIVE as STEPS_AND_RANKS_NAIVE, STEPS_AND_RANKS_KIND, StepsAndRanks, StepsAndRanksSpec,
    once_variant, part_models, per_step_variant, steps_and_ranks,
};
pub use warmup::{pooled_warmups, shorter_run_times};
