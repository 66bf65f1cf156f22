//! The transfer family: `gpu_transfer_fit`, the transfer models fitted on every launch of an
//! `observations` table; `gpu_transfer`, a kernel's time on a GPU never timed, and of a kernel
//! never timed, that model validated out of sample scheme by scheme beside the analytical
//! baselines (docs/methods.md, section 6); `gpu_split`, a published study's split of GPUs;
//! `work_forecast` (its own file), kernels described by their work alone forecast before any
//! measurement; `physics_forecast` (its own file), such kernels timed by the physics model; and
//! `forecast_score`, a saved forecast scored against the runs measured after it.

mod fit;
mod forecast_score;
mod gpu_transfer;
mod physics_forecast;
mod shared;
mod split;
#[cfg(test)]
mod tests;
mod work_forecast;
mod work_model_fit;

pub(crate) use fit::GPU_TRANSFER_FIT;
pub(crate) use forecast_score::FORECAST_SCORE;
pub(crate) use gpu_transfer::GPU_TRANSFER;
pub(crate) use physics_forecast::PHYSICS_FORECAST;
pub(crate) use split::GPU_SPLIT;
pub(crate) use work_forecast::WORK_FORECAST;
pub(crate) use work_model_fit::WORK_MODEL_FIT;
