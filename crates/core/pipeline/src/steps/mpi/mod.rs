//! MPI predictions from reduced runs (docs/methods.md, section 3): the simplified-execution
//! prediction per rank, the separate-runs baseline, the best-configuration search, and one run
//! beyond every one measured from short runs over several configurations (`mpi_steps_and_ranks`
//! and the fit step it asks).

mod best_configuration;
mod call_paths;
mod separate_runs;
mod shared;
mod simplified;
mod spans;
mod steps_and_ranks;
mod steps_and_ranks_fit;
#[cfg(test)]
mod tests;

pub(crate) use best_configuration::BEST_CONFIGURATION;
pub(crate) use call_paths::MPI_CALL_PATHS;
pub(crate) use separate_runs::SEPARATE_RUNS;
pub(crate) use simplified::SIMPLIFIED;
pub(crate) use spans::SPANS_STEP;
pub(crate) use steps_and_ranks::STEPS_AND_RANKS;
pub(crate) use steps_and_ranks_fit::STEPS_AND_RANKS_FIT;
