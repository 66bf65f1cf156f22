//! One question: a profile of kernels measured on one GPU, their times on another GPU named
//! from the catalogue, with an interval, and why (`yosoku predict`).
//!
//! The family's model, [`GpuTransfer`], is fitted once on a training table (a `gpu_transfer_fit`
//! step) and saved; a question is answered from it ([`Model::predict`]). The interval is
//! split-conformal: each training GPU in turn is held out of the fit and predicted from one
//! other training GPU at a time -- one source, as the question has -- of the target's
//! architecture relation to the source (same, or different), and the level's quantile of those
//! absolute log errors is the half-width. The fit keeps those errors for both relations, so that
//! any level and any pair of GPUs is answered without fitting again.

use serde::{Deserialize, Serialize};
use yosoku_devices::Catalogue;

use super::data::{Cell, Dropped, Measurements, Work};
use super::gpu::{GpuSpec, device_features, wave_scaling};
use super::learned::{Source, TransferModel};
use super::schemes::conformal_half_width;
use super::utilisation::UtilisationModel;
use crate::model::Model;
use crate::{ModelError, median};

/// Which resource bounds a launch on one GPU, by the roofline of its datasheet.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub gpu: String,
    /// Thread instructions over cores x clock (FLOPs over the FP32 peak in a profile without
    /// instruction counts).
    pub compute_secs: f64,
    /// DRAM bytes over the bandwidth.
    pub memory_secs: f64,
    /// `compute` or `memory`.
    pub bound_by: &'static str,
}

impl Bound {
    fn of(work: &Work, gpu: &GpuSpec) -> Self {
        let f = device_features(work, gpu);
        let (mut compute_secs, memory_secs) = (f[0].exp(), f[1].exp());
        if work.warp_instructions.is_nan() {
            compute_secs = work.flops / (gpu.fp32_peak_gflops * 1e9);
        }
        Self {
            gpu: gpu.name.clone(),
            compute_secs,
            memory_secs,
            bound_by: if memory_secs >= compute_secs {
                "memory"
            } else {
                "compute"
            },
        }
    }
}

/// The answer for one launch of the profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The launch's row in the profile's `observations` table.
    pub row: usize,
    pub kernel: String,
    pub variant: String,
    pub measured_secs: f64,
    pub predicted_secs: f64,
    pub interval_secs: (f64, f64),
    /// `within architecture`, `across architectures`, or [`WAVE_SCALING`].
    pub model: &'static str,
    pub on_profile_gpu: Bound,
    pub on_target: Bound,
    /// The training kernels nearest to this launch (by instructions, DRAM bytes, memory share,
    /// block size and blocks), nearest first: each kernel's nearest launch.
    pub nearest: Vec<Nearest>,
    /// What makes the answer less certain: said, with the wider interval.
    pub warnings: Vec<String>,
    /// Habitat's wave scaling of the same launch, beside the answer (the no-fit baseline), with
    /// the interval of its errors between the training GPUs.
    pub wave_scaling_secs: f64,
    pub wave_scaling_interval_secs: (f64, f64),
    /// The latency-aware model's scaling of the same launch (NaN where it gives none), with the
    /// interval of its errors between the training GPUs.
    pub utilisation_secs: f64,
    pub utilisation_interval_secs: (f64, f64),
}

/// A training kernel near a launch of the profile: its launch nearest to it, and the distance
/// (standardised: 1 is a typical spread of the training launches in one feature).
#[derive(Debug, Clone, PartialEq)]
pub struct Nearest {
    pub kernel: String,
    pub variant: String,
    pub gpu: String,
    pub distance: f64,
}

/// Everything `yosoku predict` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub profile_gpu: String,
    pub target: String,
    pub level: f64,
    pub training_gpus: Vec<String>,
    pub training_kernels: usize,
    pub answers: Vec<Answer>,
    /// Said once for the whole question (an architecture no training GPU has, ...).
    pub notes: Vec<String>,
    /// The profile's launches no model answers, per kernel and reason: what their rows lack,
    /// or why no model gives them a time.
    pub unanswered: Vec<Dropped>,
}

/// The interval level used where the launch lies outside what the model has seen.
pub const WIDE_LEVEL: f64 = 0.99;

/// The model of a launch without an instruction count: Habitat's wave scaling, from its FLOPs
/// and bytes, no training.
pub const WAVE_SCALING: &str = "wave scaling (no instruction count)";

/// The absolute log errors of a method between the training GPUs, within an architecture and
/// across architectures: what the intervals of the answers are calibrated on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ByRelation {
    /// A source of the target's architecture.
    pub same_architecture: Vec<f64>,
    /// A source of another architecture.
    pub across_architectures: Vec<f64>,
}

impl ByRelation {
    /// The errors of the relation asked.
    pub fn of(&self, same_architecture: bool) -> &[f64] {
        if same_architecture {
            &self.same_architecture
        } else {
            &self.across_architectures
        }
    }

    fn push(&mut self, same_architecture: bool, residuals: Vec<f64>) {
        if same_architecture {
            self.same_architecture.extend(residuals);
        } else {
            self.across_architectures.extend(residuals);
        }
    }

    /// Lists read back (key `key`): each as [`ByRelation::sorted`] leaves it, of absolute
    /// errors.
    fn check_saved(&self, key: &str) -> Result<(), String> {
        for (name, list) in [
            ("same_architecture", &self.same_architecture),
            ("across_architectures", &self.across_architectures),
        ] {
            if let Some(i) = list.iter().position(|r| !r.is_finite() || *r < 0.0) {
                return Err(format!(
                    "key `{key}.{name}`: value {} is {}, expected an absolute error (finite, not negative)",
                    i + 1,
                    list[i]
                ));
            }
            if let Some(i) = list.windows(2).position(|w| w[1] < w[0]) {
                return Err(format!(
                    "key `{key}.{name}`: value {} is below the one before it; the fit saves these errors sorted",
                    i + 2
                ));
            }
        }
        Ok(())
    }

    /// Each list finite and sorted: what a quantile reads, and the same saved however the folds
    /// ran.
    fn sorted(mut self) -> Self {
        for v in [&mut self.same_architecture, &mut self.across_architectures] {
            v.retain(|r| r.is_finite());
            v.sort_by(f64::total_cmp);
        }
        self
    }

    /// The half-widths at `level` and at [`WIDE_LEVEL`] of the relation asked.
    fn widths(&self, same_architecture: bool, level: f64) -> Option<(f64, f64)> {
        let r = self.of(same_architecture);
        conformal_half_width(r.to_vec(), level).zip(conformal_half_width(r.to_vec(), WIDE_LEVEL))
    }
}

/// The absolute log errors of wave scaling between the training GPUs: each GPU's launches (a
/// few hundred) scaled from each other GPU, by architecture relation.
fn wave_scaling_residuals(training: &Measurements) -> ByRelation {
    let mut out = ByRelation::default();
    for held in 0..training.gpus.len() {
        for same in [true, false] {
            out.push(
                same,
                single_source_residuals(training, held, same, &|source, gpu, target| {
                    Some(wave_scaling(source.secs, &source.work, gpu, target))
                }),
            );
        }
    }
    out.sorted()
}

/// The absolute log errors of a model between the training GPUs: each GPU held out of `fit` in
/// turn (one fit per GPU), its launches predicted by `predict` from each other GPU, by
/// architecture relation.
fn held_out_residuals<M>(
    training: &Measurements,
    fit: impl Fn(usize) -> Option<M> + Sync + Send,
    predict: impl Fn(&M, &Cell, &GpuSpec, &GpuSpec) -> Option<f64> + Sync + Send,
) -> ByRelation {
    let gpus: Vec<usize> = (0..training.gpus.len()).collect();
    let folds = super::schemes::map_folds(&gpus, |&held| {
        let Some(model) = fit(held) else {
            return Vec::new();
        };
        [true, false]
            .into_iter()
            .map(|same| {
                let r = single_source_residuals(training, held, same, &|source, gpu, target| {
                    predict(&model, source, gpu, target)
                });
                (same, r)
            })
            .collect()
    });
    let mut out = ByRelation::default();
    for (same, r) in folds.into_iter().flatten() {
        out.push(same, r);
    }
    out.sorted()
}

/// [`held_out_residuals`] of the latency-aware model, scaling the source's time.
fn utilisation_residuals(training: &Measurements) -> ByRelation {
    held_out_residuals(
        training,
        |held| UtilisationModel::fit(training, &|c: &Cell| c.gpu != held, &|_| String::new()).ok(),
        |model, source, gpu, target| model.scaled(source.secs, &source.work, gpu, target, ""),
    )
}

/// [`held_out_residuals`] of the transfer model, from one source at a time.
fn calibration_residuals(training: &Measurements, choose_base: bool) -> ByRelation {
    held_out_residuals(
        training,
        |held| TransferModel::fit_with(training, &|c: &Cell| c.gpu != held, choose_base).ok(),
        |model, source, gpu, target| {
            let one = [Source {
                secs: source.secs,
                work: &source.work,
                gpu,
            }];
            model.predict_from(target, &one).map(|(p, _)| p)
        },
    )
}

/// A method's prediction of a launch on a target GPU from one source cell on another GPU.
type FromOneSource<'a> = dyn Fn(&Cell, &GpuSpec, &GpuSpec) -> Option<f64> + 'a;

/// The absolute log errors of the launches of GPU `held` (a few hundred of them: enough for the
/// quantile, and `yosoku predict` stays fast), each predicted by `predict` from one other
/// training GPU at a time, of the architecture relation asked.
fn single_source_residuals(
    training: &Measurements,
    held: usize,
    same_architecture: bool,
    predict: &FromOneSource<'_>,
) -> Vec<f64> {
    let target = &training.gpus[held];
    let cells: Vec<&Cell> = training.cells.iter().filter(|c| c.gpu == held).collect();
    let step = (cells.len() / 300).max(1);
    let mut residuals = Vec::new();
    for cell in cells.into_iter().step_by(step) {
        for &s in &training.by_launch[cell.launch] {
            let source = &training.cells[s];
            let gpu = &training.gpus[source.gpu];
            if source.gpu == held || (gpu.architecture == target.architecture) != same_architecture
            {
                continue;
            }
            if let Some(p) = predict(source, gpu, target).filter(|p| *p > 0.0 && p.is_finite()) {
                residuals.push((p / cell.secs).ln().abs());
            }
        }
    }
    residuals
}

/// The kernel features the nearest-kernel search compares, standardised by `scale`.
fn signature(work: &Work) -> [f64; SIGNATURE] {
    let share = work.dram_bytes / (work.dram_bytes + 32.0 * work.warp_instructions).max(1.0);
    [
        (1.0 + work.warp_instructions).ln(),
        (1.0 + work.dram_bytes).ln(),
        share,
        work.threads_per_block.max(1.0).ln(),
        work.blocks.max(1.0).ln(),
    ]
}

/// Features of [`signature`].
const SIGNATURE: usize = 5;

/// The training launches' signatures, standardised by their robust scales (median absolute
/// deviations), with what `outside` compares against, computed once per question.
struct Neighbourhood {
    /// Per training kernel: its launches' standardised signatures and cells, sorted by the
    /// first feature, so that a search stops where that feature alone is farther than the
    /// nearest found (10,000 launches against 30,000 training cells, compared all with all,
    /// took seconds).
    by_kernel: Vec<Vec<([f64; SIGNATURE], usize)>>,
    scale: [f64; SIGNATURE],
    /// The range of the training launches' roofline-plus-latency times on their own GPUs.
    roofline_range: (f64, f64),
    block_sizes: Vec<f64>,
}

impl Neighbourhood {
    fn of(training: &Measurements) -> Self {
        let signatures: Vec<[f64; SIGNATURE]> =
            training.cells.iter().map(|c| signature(&c.work)).collect();
        let mut scale = [0.0f64; SIGNATURE];
        for (j, s) in scale.iter_mut().enumerate() {
            let mut v: Vec<f64> = signatures.iter().map(|x| x[j]).collect();
            let m = median(&mut v);
            let mut d: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
            *s = median(&mut d).max(1e-3);
        }
        let mut by_kernel: Vec<Vec<([f64; SIGNATURE], usize)>> =
            vec![Vec::new(); training.kernels.len()];
        for (i, (c, sig)) in training.cells.iter().zip(&signatures).enumerate() {
            by_kernel[c.kernel].push((std::array::from_fn(|j| sig[j] / scale[j]), i));
        }
        for cells in &mut by_kernel {
            cells.sort_by(|a, b| a.0[0].total_cmp(&b.0[0]).then(a.1.cmp(&b.1)));
        }
        let roofline_range = training
            .cells
            .iter()
            .map(|c| device_features(&c.work, &training.gpus[c.gpu])[3])
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        let mut block_sizes: Vec<f64> = training
            .cells
            .iter()
            .map(|c| c.work.threads_per_block)
            .collect();
        block_sizes.sort_by(f64::total_cmp);
        block_sizes.dedup();
        Self {
            by_kernel,
            scale,
            roofline_range,
            block_sizes,
        }
    }

    /// The nearest of one kernel's launches (sorted by the first feature) to `me`: its cell and
    /// distance; the first in cell order among equally near ones.
    fn nearest_of(
        cells: &[([f64; SIGNATURE], usize)],
        me: &[f64; SIGNATURE],
    ) -> Option<(usize, f64)> {
        let distance = |s: &[f64; SIGNATURE]| {
            s.iter()
                .zip(me)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt()
        };
        let start = cells.partition_point(|(s, _)| s[0] < me[0]);
        let mut best: Option<(usize, f64)> = None;
        let better = |best: &Option<(usize, f64)>, cell: usize, d: f64| {
            best.is_none_or(|(c, b)| d < b || (d == b && cell < c))
        };
        // Outward from the query's place, each side until its first feature alone is farther.
        for (s, cell) in cells[start..].iter() {
            if best.is_some_and(|(_, b)| s[0] - me[0] > b) {
                break;
            }
            let d = distance(s);
            if better(&best, *cell, d) {
                best = Some((*cell, d));
            }
        }
        for (s, cell) in cells[..start].iter().rev() {
            if best.is_some_and(|(_, b)| me[0] - s[0] > b) {
                break;
            }
            let d = distance(s);
            if better(&best, *cell, d) {
                best = Some((*cell, d));
            }
        }
        best
    }

    /// The `n` training kernels nearest to `work`, nearest first: each kernel's nearest launch.
    fn nearest(&self, training: &Measurements, work: &Work, n: usize) -> Vec<Nearest> {
        let raw = signature(work);
        let me: [f64; SIGNATURE] = std::array::from_fn(|j| raw[j] / self.scale[j]);
        let mut best: Vec<(usize, f64)> = self
            .by_kernel
            .iter()
            .filter_map(|cells| Self::nearest_of(cells, &me))
            .collect();
        best.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        best.truncate(n);
        best.into_iter()
            .map(|(i, distance)| {
                let c = &training.cells[i];
                Nearest {
                    kernel: training.kernels[c.kernel].clone(),
                    variant: training.launches[c.launch].1.clone(),
                    gpu: training.gpus[c.gpu].name.clone(),
                    distance,
                }
            })
            .collect()
    }

    /// Why a launch lies outside what the model has seen, if it does.
    fn outside(&self, work: &Work, gpu: &GpuSpec) -> Vec<String> {
        let mut why = Vec::new();
        if !self.block_sizes.contains(&work.threads_per_block) {
            why.push(format!(
                "a block of {} threads: no training launch used that block size",
                work.threads_per_block
            ));
        }
        let (lo, hi) = self.roofline_range;
        let r = device_features(work, gpu)[3];
        if r < lo || r > hi {
            why.push(format!(
                "its roofline time on the profile's GPU, {:.3e} s, is outside the training launches' {:.3e} to {:.3e} s",
                r.exp(),
                lo.exp(),
                hi.exp()
            ));
        }
        why
    }
}

/// What to do when the target is one of the training GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrainedTarget {
    /// Refuse ([`ModelError::TrainedOnTarget`]): the answer would not be of an unseen GPU.
    Refuse,
    /// Leave its rows out of the fit and the calibration.
    LeaveOut,
}

/// `training` without its rows of `target`, when it has any and `trained_target` allows.
fn training_without(
    training: &Measurements,
    target: &GpuSpec,
    trained_target: TrainedTarget,
) -> Result<Measurements, ModelError> {
    let mut training = training.clone();
    let Some(t) = training.gpus.iter().position(|g| g.name == target.name) else {
        return Ok(training);
    };
    if trained_target == TrainedTarget::Refuse {
        return Err(ModelError::TrainedOnTarget {
            gpu: target.name.clone(),
        });
    }
    training.cells.retain(|c| c.gpu != t);
    training.by_launch = vec![Vec::new(); training.launches.len()];
    for (i, c) in training.cells.iter().enumerate() {
        training.by_launch[c.launch].push(i);
    }
    Ok(training)
}

/// What is said once for the question: a GPU of an architecture no training GPU has, launches
/// wave scaling answers for want of an instruction count.
fn question_notes(
    training: &Measurements,
    profile: &Measurements,
    target: &GpuSpec,
) -> Vec<String> {
    let mut notes = Vec::new();
    let trained: Vec<&str> = training
        .gpus
        .iter()
        .map(|g| g.architecture.as_str())
        .collect();
    let uncounted = profile
        .cells
        .iter()
        .filter(|c| c.work.warp_instructions.is_nan())
        .count();
    let source = &profile.gpus[0];
    let counted = uncounted < profile.cells.len();
    let architectures = super::report::Architectures::of(source, target, &training.gpus);
    if counted && architectures == super::report::Architectures::SameUntrained {
        // Both of one architecture: the model within architectures answers (`predict_from`),
        // learnt on pairs of other architectures, and its interval is of held-out GPUs whose
        // architecture mates stayed in training.
        let mut known = trained.clone();
        known.sort_unstable();
        known.dedup();
        notes.push(format!(
            "{} and {} are {} GPUs, and no training GPU is: the model within architectures answers, learnt on pairs of {} GPUs; the validation figures are leave_one_architecture_out's (each training architecture left out of the fit, its GPUs predicted from each other), its interval that of held-out GPUs whose architecture was in training",
            source.name,
            target.name,
            target.architecture,
            known.join(" or ")
        ));
    } else if counted {
        for gpu in [source, target] {
            if !trained.contains(&gpu.architecture.as_str()) {
                notes.push(format!(
                    "{} is a {} GPU; no training GPU is: the model across architectures answers, and its interval is the held-out GPUs' across architectures",
                    gpu.name, gpu.architecture
                ));
            }
        }
    }
    notes.dedup();
    if uncounted > 0 {
        notes.push(format!(
            "{uncounted} launch(es) of the profile have no instruction count (an OpenCL run's computed counters, say): wave scaling answers them from their FLOPs and the bytes they move, with the interval of its errors between the training GPUs"
        ));
    }
    notes
}

/// What answers each launch: the fitted model, the half-widths of its intervals (at the level
/// asked and at [`WIDE_LEVEL`]) and of wave scaling's, and the training launches' neighbourhood.
struct Answering<'a> {
    training: &'a Measurements,
    source: &'a GpuSpec,
    target: &'a GpuSpec,
    model: TransferModel,
    widths: (f64, f64),
    wave_widths: Option<(f64, f64)>,
    utilisation: Option<(UtilisationModel, (f64, f64))>,
    neighbourhood: Neighbourhood,
}

impl Answering<'_> {
    /// The answer for one launch of the profile, or why no model answers it.
    fn answer(&self, profile: &Measurements, cell: &Cell) -> Result<Answer, &'static str> {
        let (source, target) = (self.source, self.target);
        let one = [Source {
            secs: cell.secs,
            work: &cell.work,
            gpu: source,
        }];
        let counted = !cell.work.warp_instructions.is_nan();
        let (secs, model_name, (width, wide)) = if counted {
            let (secs, within) = self
                .model
                .predict_from(target, &one)
                .filter(|(p, _)| p.is_finite() && *p > 0.0)
                .ok_or("the transfer model gives it no finite time (a feature out of range)")?;
            let name = if within {
                "within architecture"
            } else {
                "across architectures"
            };
            (secs, name, self.widths)
        } else {
            let widths = self.wave_widths.ok_or(
                "no instruction count, and too few training launches to calibrate wave scaling's interval",
            )?;
            let secs = wave_scaling(cell.secs, &cell.work, source, target);
            (secs, WAVE_SCALING, widths)
        };
        let warnings = self.neighbourhood.outside(&cell.work, source);
        let pick = |(w, wide): (f64, f64)| if warnings.is_empty() { w } else { wide };
        let h = pick((width, wide));
        let wave = wave_scaling(cell.secs, &cell.work, source, target);
        let wave_h = self.wave_widths.map_or(f64::NAN, pick);
        let (utilisation, utilisation_h) = self
            .utilisation
            .as_ref()
            .and_then(|(model, widths)| {
                let secs = model.scaled(cell.secs, &cell.work, source, target, "")?;
                Some((secs, pick(*widths)))
            })
            .unwrap_or((f64::NAN, f64::NAN));
        Ok(Answer {
            row: cell.row,
            kernel: profile.kernels[cell.kernel].clone(),
            variant: profile.launches[cell.launch].1.clone(),
            measured_secs: cell.secs,
            predicted_secs: secs,
            interval_secs: (secs * (-h).exp(), secs * h.exp()),
            model: model_name,
            on_profile_gpu: Bound::of(&cell.work, source),
            on_target: Bound::of(&cell.work, target),
            // Without instructions there is no signature to compare.
            nearest: if counted {
                self.neighbourhood.nearest(self.training, &cell.work, 3)
            } else {
                Vec::new()
            },
            warnings,
            wave_scaling_secs: wave,
            wave_scaling_interval_secs: (wave * (-wave_h).exp(), wave * wave_h.exp()),
            utilisation_secs: utilisation,
            utilisation_interval_secs: (
                utilisation * (-utilisation_h).exp(),
                utilisation * utilisation_h.exp(),
            ),
        })
    }
}

/// The options of a transfer model: the user's, saved with it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferOptions {
    /// Leave out (and say so) the training rows of devices the catalogue lacks, instead of
    /// refusing the table.
    pub skip_unknown_devices: bool,
    /// Fit each ridge of the transfer model over the base a nested cross-validation on the
    /// training GPUs chooses (`TransferModel::fit_choosing_base`), instead of the log time.
    #[serde(default)]
    pub choose_base: bool,
}

/// What a transfer model is fitted on: an `observations` table of launches on several GPUs, and
/// the catalogue that says what each GPU is.
#[derive(Debug, Clone, Copy)]
pub struct TransferTraining<'a> {
    pub observations: &'a arrow_array::RecordBatch,
    pub devices: &'a Catalogue,
}

/// A question to a transfer model: a profile of launches on one GPU, and the target GPU.
#[derive(Debug, Clone, Copy)]
pub struct TransferQuestion<'a> {
    /// The model's training launches, read as they were for the fit (with its options): the
    /// nearest training kernels and what lies outside them are found among them.
    pub training: &'a Measurements,
    pub profile: &'a Measurements,
    pub target: &'a GpuSpec,
    /// Coverage of the intervals, in [0.5, 1).
    pub level: f64,
    pub trained_target: TrainedTarget,
}

/// The transfer family's model (`gpu_transfer`): the fixed-effects transfer model and the
/// latency-aware model fitted on every training launch, and the held-out errors of those two
/// and of wave scaling between the training GPUs, which calibrate the intervals of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuTransfer {
    /// The catalogue names of the GPUs it was fitted on.
    pub training_gpus: Vec<String>,
    /// Whether its transfer model's bases were chosen ([`TransferOptions::choose_base`]): a
    /// refit without the target's rows chooses again.
    #[serde(default)]
    pub choose_base: bool,
    pub transfer: TransferModel,
    /// None where the training launches do not fit it.
    pub utilisation: Option<UtilisationModel>,
    pub transfer_errors: ByRelation,
    pub wave_scaling_errors: ByRelation,
    pub utilisation_errors: ByRelation,
}

impl GpuTransfer {
    /// Fits on every launch of `training` (read with the model's options), the transfer
    /// model's bases chosen with `choose_base`.
    pub fn fit_measurements(
        training: &Measurements,
        choose_base: bool,
    ) -> Result<Self, ModelError> {
        Ok(Self {
            training_gpus: (0..training.gpus.len())
                .filter(|&g| training.cells.iter().any(|c| c.gpu == g))
                .map(|g| training.gpus[g].name.clone())
                .collect(),
            choose_base,
            transfer: TransferModel::fit_with(training, &|_| true, choose_base)?,
            utilisation: UtilisationModel::fit(training, &|_| true, &|_| String::new()).ok(),
            transfer_errors: calibration_residuals(training, choose_base),
            wave_scaling_errors: wave_scaling_residuals(training),
            utilisation_errors: utilisation_residuals(training),
        })
    }

    /// The training launches of `observations`, read as a fit with `options` reads them.
    pub fn training_measurements(
        training: TransferTraining<'_>,
        options: &TransferOptions,
    ) -> Result<Measurements, ModelError> {
        Measurements::from_observations(
            training.observations,
            training.devices,
            options.skip_unknown_devices,
        )
    }
}

impl Model for GpuTransfer {
    const KIND: &'static str = super::MODEL_KIND;
    type Options = TransferOptions;
    type Training<'a> = TransferTraining<'a>;
    type Question<'a> = TransferQuestion<'a>;
    type Answer = Prediction;

    fn check_saved(&self) -> Result<(), String> {
        self.transfer.check_saved()?;
        if let Some(u) = &self.utilisation {
            u.check_saved()?;
        }
        self.transfer_errors.check_saved("transfer_errors")?;
        self.wave_scaling_errors
            .check_saved("wave_scaling_errors")?;
        self.utilisation_errors.check_saved("utilisation_errors")
    }

    fn fit(training: TransferTraining<'_>, options: &TransferOptions) -> Result<Self, ModelError> {
        Self::fit_measurements(
            &Self::training_measurements(training, options)?,
            options.choose_base,
        )
    }

    /// Predicts every launch of the profile (measured on one GPU) on the target. A target among
    /// the training GPUs is refused, or (asked to leave it out) answered by a model fitted
    /// again without its rows: the saved one has seen its times.
    fn predict(&self, q: TransferQuestion<'_>) -> Result<Prediction, ModelError> {
        let profile = q.profile;
        let profile_gpus: Vec<&str> = profile.gpus.iter().map(|g| g.name.as_str()).collect();
        let [profile_gpu] = profile_gpus.as_slice() else {
            return Err(ModelError::invalid(format!(
                "the profile holds launches of {} GPUs ({}): give a profile of one",
                profile_gpus.len(),
                profile_gpus.join(", ")
            )));
        };
        let trained_on_target = self.training_gpus.contains(&q.target.name);
        let training = training_without(q.training, q.target, q.trained_target)?;
        let refitted;
        let model = if trained_on_target {
            refitted = Self::fit_measurements(&training, self.choose_base)?;
            &refitted
        } else {
            self
        };
        model.answer(&training, profile, profile_gpu, q.target, q.level)
    }
}

impl GpuTransfer {
    /// Every launch of `profile` answered on `target`, with `training` (the launches the model
    /// was fitted on) for the nearest kernels and what lies outside them.
    fn answer(
        &self,
        training: &Measurements,
        profile: &Measurements,
        profile_gpu: &str,
        target: &GpuSpec,
        level: f64,
    ) -> Result<Prediction, ModelError> {
        let source = &profile.gpus[0];
        let same = source.architecture == target.architecture;
        let widths = self.transfer_errors.widths(same, level).ok_or_else(|| {
            ModelError::invalid(
                "too few held-out training rows to calibrate an interval".to_owned(),
            )
        })?;
        let utilisation = self
            .utilisation
            .clone()
            .zip(self.utilisation_errors.widths(same, level));
        let answering = Answering {
            training,
            source,
            target,
            model: self.transfer.clone(),
            widths,
            wave_widths: self.wave_scaling_errors.widths(same, level),
            utilisation,
            neighbourhood: Neighbourhood::of(training),
        };
        let mut answers = Vec::with_capacity(profile.cells.len());
        let mut unanswered = profile.dropped.clone();
        for cell in &profile.cells {
            match answering.answer(profile, cell) {
                Ok(a) => answers.push(a),
                Err(why) => {
                    let kernel = &profile.kernels[cell.kernel];
                    match unanswered
                        .iter_mut()
                        .find(|d| d.kernel == *kernel && d.why == why)
                    {
                        Some(d) => d.launches += 1,
                        None => unanswered.push(Dropped {
                            kernel: kernel.clone(),
                            launches: 1,
                            why,
                        }),
                    }
                }
            }
        }
        Ok(Prediction {
            profile_gpu: profile_gpu.to_owned(),
            target: target.name.clone(),
            level,
            training_gpus: (0..training.gpus.len())
                .filter(|&g| training.cells.iter().any(|c| c.gpu == g))
                .map(|g| training.gpus[g].name.clone())
                .collect(),
            training_kernels: training.kernels.len(),
            answers,
            notes: question_notes(training, profile, target),
            unanswered,
        })
    }
}

/// Predicts every launch of `profile` (measured on one GPU) on `target` with a model fitted on
/// `training` here: the model and its answer in one call, for tests and studies (a command
/// answers from a saved [`GpuTransfer`]).
pub fn predict(
    training: &Measurements,
    profile: &Measurements,
    target: &GpuSpec,
    level: f64,
    trained_target: TrainedTarget,
) -> Result<Prediction, ModelError> {
    let fitted =
        GpuTransfer::fit_measurements(&training_without(training, target, trained_target)?, false)?;
    fitted.predict(TransferQuestion {
        training,
        profile,
        target,
        level,
        trained_target,
    })
}

#[cfg(test)]
mod nearest_tests {
    use super::*;

    #[test]
    fn the_pruned_search_finds_what_comparing_all_finds() {
        // Points of a deterministic generator, some repeated, in five features.
        let mut x = 12345u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % 1000) as f64 / 100.0
        };
        let mut cells: Vec<([f64; SIGNATURE], usize)> = (0..400)
            .map(|i| (std::array::from_fn(|_| next()), i))
            .collect();
        let repeated = cells[7].0;
        cells.push((repeated, 400));
        cells.sort_by(|a, b| a.0[0].total_cmp(&b.0[0]).then(a.1.cmp(&b.1)));
        for q in 0..200 {
            let me: [f64; SIGNATURE] = if q == 0 {
                repeated
            } else {
                std::array::from_fn(|_| next())
            };
            let brute = cells
                .iter()
                .map(|(s, c)| {
                    let d = s
                        .iter()
                        .zip(&me)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum::<f64>()
                        .sqrt();
                    (*c, d)
                })
                .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            assert_eq!(Neighbourhood::nearest_of(&cells, &me), brute, "query {q}");
        }
    }
}
