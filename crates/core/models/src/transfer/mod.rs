//! A kernel's time on a GPU it was not measured on (docs/methods.md, section 6): the launches of
//! an `observations` table joined across GPUs, each GPU's specification from the device
//! catalogue, device-normalised features (work over the target's peak rates), the analytical
//! scalings (cores x clock, Habitat's wave scaling) and two learned models in log time.
//!
//! [`schemes`] validates them all out of sample (a GPU, a kernel, or both held out) with
//! split-conformal intervals; [`utilisation`] is the latency-aware model of waves and a learned
//! utilisation under the roofline; [`split`] scores the methods on a published study's fixed
//! split of GPUs; [`report`] lays the results out as tables; [`predict`] answers
//! one profile on one target GPU.

pub mod bias;
pub mod correction;
pub mod data;
pub mod forecast;
pub mod gpu;
pub mod learned;
pub mod physics;
pub mod predict;
pub mod report;
pub mod schemes;
pub mod split;
pub mod utilisation;
pub mod work;
pub mod work_forecast;

pub use data::{Cell, Measurements};
pub use gpu::{
    DEVICE_FEATURES, DRAM_TRANSACTION_BYTES, GpuSpec, LAUNCH_LATENCY_SECS, OccupancyLimits,
    device_features, habitat_gamma, peak_scaling, wave_scaling,
};
pub use work::Work;

/// The kind of model a `gpu_transfer` step records in its bundle: its training launches (the
/// `observations` it fits on) and its held-out scores, what `yosoku predict` fits and quotes.
pub const MODEL_KIND: &str = "gpu_transfer";

#[cfg(test)]
mod tests;
