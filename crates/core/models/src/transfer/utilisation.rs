//! The latency-aware model of waves and utilisation (docs/methods.md, section 6): a launch takes
//!
//! `secs = latency + waves_roofline / utilisation`
//!
//! - `latency`: the GPU's empty-kernel launch time (the catalogue's, measured first), or
//!   [`LAUNCH_LATENCY_SECS`] where the catalogue has none;
//! - `waves_roofline`: the roofline time of the launch's work (max of FLOPs over the FP32 peak,
//!   thread instructions over cores x clock, DRAM bytes over the bandwidth), stretched by the
//!   idle SMs of its last wave of blocks (blocks over SMs, rounded up, over blocks over SMs);
//! - `utilisation` in (0, 1): a logistic function of features that say how a launch sits on a
//!   GPU rather than which GPU it is (its intensity over the GPU's ridge point, blocks per SM,
//!   the last wave's fill, the work's size in roofline seconds, its bytes over the L2, threads
//!   per block). One ridge regression of the logit per group of kernels (an operator family),
//!   and one over every group for a group it has not seen, shared by every GPU.
//!
//! Fitted on the launches of the training GPUs (each launch's observed utilisation, its time
//! less the latency over its roofline time). A prediction is never below the latency plus the
//! roofline. [`UtilisationModel::secs`] predicts from the work alone;
//! [`UtilisationModel::scaled`] scales a time measured on another GPU by the ratio of the two
//! GPUs' predicted times above their latencies, so that what the features miss of a kernel
//! cancels ([`scaling_latencies`]: a latency the catalogue lacks is taken as the other GPU's).

use super::data::{Cell, Measurements, Work};
use super::gpu::{DRAM_TRANSACTION_BYTES, GpuSpec, LAUNCH_LATENCY_SECS};
use super::learned::Ridge;
use crate::ModelError;

/// The names of the utilisation features, in order.
pub const UTILISATION_FEATURES: [&str; 9] = [
    "ln_intensity_over_ridge",
    "ln_blocks_per_sm",
    "last_wave_fill",
    "ln_waves_roofline_secs",
    "ln_bytes_over_l2",
    "ln_threads_per_block",
    "ln_intensity_over_ridge_squared",
    "ln_blocks_per_sm_squared",
    "ln_waves_roofline_secs_squared",
];

/// The ridge penalty on the standardised features: chosen from 0.1, 1 and 10 by leaving each
/// of NeuSight's five training GPUs out in turn, in an exploration before this model was built
/// (docs/methods.md, section 6), never on a test GPU.
pub const UTILISATION_LAMBDA: f64 = 10.0;

/// Observed utilisations are kept inside (0, 1) by this margin before the logit.
const LOGIT_MARGIN: f64 = 1e-4;

/// Predicted utilisations below this are raised to it: a launch is never predicted more than
/// 100 times slower than its roofline.
const MIN_UTILISATION: f64 = 0.01;

/// The launch time of `gpu`: the catalogue's, or the default where it has none.
pub fn latency_secs(gpu: &GpuSpec) -> f64 {
    gpu.launch_latency_secs.unwrap_or(LAUNCH_LATENCY_SECS)
}

/// The roofline time of `work` on `gpu` stretched by its last wave's idle SMs, and the
/// utilisation features; `None` for a launch without blocks.
pub fn waves_roofline(
    work: &Work,
    gpu: &GpuSpec,
) -> Option<(f64, [f64; UTILISATION_FEATURES.len()])> {
    if work.blocks.is_nan() || work.blocks < 1.0 {
        return None;
    }
    let peak = gpu.fp32_peak_gflops * 1e9;
    let instructions = if work.warp_instructions.is_finite() {
        work.warp_instructions * 32.0 / gpu.instruction_rate()
    } else {
        0.0
    };
    let compute = (work.flops.max(0.0) / peak)
        .max(instructions)
        .max(32.0 / peak);
    let memory = work.dram_bytes.max(DRAM_TRANSACTION_BYTES) / gpu.bandwidth_bytes_per_sec();
    let per_sm = work.blocks / gpu.sm_count;
    let fill = per_sm / per_sm.ceil();
    let secs = compute.max(memory) / fill;
    let l2 = gpu.l2_bytes.unwrap_or(1024.0 * 1024.0);
    let intensity = (compute / memory).ln();
    let (blocks, size) = (per_sm.ln(), secs.ln());
    Some((
        secs,
        [
            intensity,
            blocks,
            fill,
            size,
            (1.0 + work.dram_bytes.max(0.0) / l2).ln(),
            work.threads_per_block.max(1.0).ln(),
            intensity * intensity,
            blocks * blocks,
            size * size,
        ],
    ))
}

/// The logistic utilisation model, one ridge per group and one over all.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UtilisationModel {
    groups: Vec<(String, Ridge)>,
    all: Ridge,
}

impl UtilisationModel {
    /// A utilisation model read back (key `utilisation`): every ridge weighs the utilisation
    /// features.
    pub fn check_saved(&self) -> Result<(), String> {
        let p = UTILISATION_FEATURES.len();
        for (i, (_, ridge)) in self.groups.iter().enumerate() {
            ridge.check_saved(&format!("utilisation.groups[{i}]"), p)?;
        }
        self.all.check_saved("utilisation.all", p)
    }

    /// Fits on the cells `train` accepts, grouped by `group_of` of their kernel's name.
    pub fn fit(
        m: &Measurements,
        train: &dyn Fn(&Cell) -> bool,
        group_of: &dyn Fn(&str) -> String,
    ) -> Result<Self, ModelError> {
        let p = UTILISATION_FEATURES.len();
        // Per group: (features row-major, logit of the observed utilisation).
        let mut by_group: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
        let (mut x_all, mut y_all) = (Vec::new(), Vec::new());
        for c in m.cells.iter().filter(|c| train(c)) {
            let gpu = &m.gpus[c.gpu];
            let Some((roof, features)) = waves_roofline(&c.work, gpu) else {
                continue;
            };
            let above = c.secs - latency_secs(gpu);
            let u = if above > 0.0 { roof / above } else { 1.0 };
            let u = u.clamp(LOGIT_MARGIN, 1.0 - LOGIT_MARGIN);
            let logit = (u / (1.0 - u)).ln();
            let group = group_of(&m.kernels[c.kernel]);
            let at = match by_group.iter().position(|(g, ..)| *g == group) {
                Some(i) => i,
                None => {
                    by_group.push((group, Vec::new(), Vec::new()));
                    by_group.len() - 1
                }
            };
            by_group[at].1.extend(features);
            by_group[at].2.push(logit);
            x_all.extend(features);
            y_all.push(logit);
        }
        let all = Ridge::fit_penalised(&x_all, p, &y_all, true, UTILISATION_LAMBDA)
            .map_err(|e| ModelError::invalid(format!("the utilisation model: {e}")))?;
        let groups = by_group
            .into_iter()
            .filter_map(|(g, x, y)| {
                Ridge::fit_penalised(&x, p, &y, true, UTILISATION_LAMBDA)
                    .ok()
                    .map(|r| (g, r))
            })
            .collect();
        Ok(Self { groups, all })
    }

    /// The predicted time above the latency of `work` on `gpu` (a kernel of `group`).
    fn above_latency(&self, work: &Work, gpu: &GpuSpec, group: &str) -> Option<f64> {
        let (roof, features) = waves_roofline(work, gpu)?;
        let ridge = self
            .groups
            .iter()
            .find(|(g, _)| g == group)
            .map_or(&self.all, |(_, r)| r);
        let u = 1.0 / (1.0 + (-ridge.predict(&features)).exp());
        let secs = roof / u.max(MIN_UTILISATION);
        secs.is_finite().then_some(secs)
    }

    /// The time of `work` on `gpu` from the model alone.
    pub fn secs(&self, work: &Work, gpu: &GpuSpec, group: &str) -> Option<f64> {
        Some(latency_secs(gpu) + self.above_latency(work, gpu, group)?)
    }

    /// The time on `target` of a launch measured on `source` taking `secs`: the time above the
    /// source's latency scaled by the ratio of the model's times above the two latencies.
    /// `None` where the measurement is not above the source's latency.
    pub fn scaled(
        &self,
        secs: f64,
        work: &Work,
        source: &GpuSpec,
        target: &GpuSpec,
        group: &str,
    ) -> Option<f64> {
        let (source_latency, target_latency) = scaling_latencies(source, target);
        let above = secs - source_latency;
        if above <= 0.0 {
            return None;
        }
        let ratio =
            self.above_latency(work, target, group)? / self.above_latency(work, source, group)?;
        Some(target_latency + above * ratio)
    }
}

/// The launch latencies a scaling from `source` to `target` takes off and adds back: each GPU's
/// own where the catalogue has both; where it has one, that one for both (a launch's fixed cost
/// differs less between GPUs than the default differs from any measured one: 2.4 us on an H200,
/// 2.6 us on an A100 80GB), so that a missing figure does not read as a difference between the
/// GPUs; the default for both where it has neither.
pub fn scaling_latencies(source: &GpuSpec, target: &GpuSpec) -> (f64, f64) {
    match (source.launch_latency_secs, target.launch_latency_secs) {
        (Some(s), Some(t)) => (s, t),
        (Some(known), None) | (None, Some(known)) => (known, known),
        (None, None) => (LAUNCH_LATENCY_SECS, LAUNCH_LATENCY_SECS),
    }
}
