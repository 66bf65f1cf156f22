//! Out-of-sample validation of the transfer models and their baselines, scheme by scheme, with
//! split-conformal 95 % intervals calibrated inside each training set.
//!
//! - `leave_one_gpu_out`: each GPU in turn has never been timed (only its catalogue row is
//!   known); its launches are predicted from the other GPUs' measurements of the same launch.
//! - `leave_one_gpu_out_other_architectures`: the same with every GPU of the target's
//!   architecture left out of training and of the sources.
//! - `leave_one_architecture_out`: every GPU of the target's architecture left out of training,
//!   the target's launches predicted from its architecture mates alone: a profile of an
//!   architecture training lacks asked on another GPU of it (an H100's on an H200 by a model of
//!   Kepler and Maxwell GPUs). Its intervals are calibrated as `leave_one_gpu_out`'s, inside the
//!   training set (with two architectures, holding one out there leaves one to fit on).
//! - `leave_one_kernel_out`: each kernel in turn has never been timed anywhere; its launches
//!   are predicted from their counters on the GPU they ran on, by models of the other kernels.
//! - `leave_one_kernel_and_gpu_out`: both at once; the kernel's counters come from the other GPUs.
//!
//! Intervals: inside each training set the same scheme is run once more (each training GPU, or
//! kernel, held out in turn); the absolute log errors of those inner predictions give the
//! half-width, their ceil((n + 1) level)-th smallest (split-conformal). Only for the scheme with
//! both held out are the inner folds kernels alone, shared by all GPUs of one held-out kernel
//! (a GPU-by-kernel inner loop would refit some fifteen hundred times).

use std::collections::HashMap;

use faer::Mat;
use yosoku_regression::{OlsOptions, ols};

use super::data::{Cell, Measurements};
use super::gpu::{peak_scaling, wave_scaling};
use super::learned::{CostModel, TransferModel};
use super::physics::{
    GpuRates, KernelWork, floor_plus_bytes_secs, physics_scaled_secs, physics_time,
};
use super::utilisation::UtilisationModel;
use crate::ModelError;
use crate::median;

/// A way of holding data out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    LeaveOneGpuOut,
    LeaveOneGpuOutOtherArchitectures,
    LeaveOneArchitectureOut,
    LeaveOneKernelOut,
    LeaveOneKernelAndGpuOut,
}

impl Scheme {
    pub const ALL: [Scheme; 5] = [
        Scheme::LeaveOneGpuOut,
        Scheme::LeaveOneGpuOutOtherArchitectures,
        Scheme::LeaveOneArchitectureOut,
        Scheme::LeaveOneKernelOut,
        Scheme::LeaveOneKernelAndGpuOut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scheme::LeaveOneGpuOut => "leave_one_gpu_out",
            Scheme::LeaveOneGpuOutOtherArchitectures => "leave_one_gpu_out_other_architectures",
            Scheme::LeaveOneArchitectureOut => "leave_one_architecture_out",
            Scheme::LeaveOneKernelOut => "leave_one_kernel_out",
            Scheme::LeaveOneKernelAndGpuOut => "leave_one_kernel_and_gpu_out",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The methods compared under the scheme: the learned models first, then the baselines;
    /// the tree ensemble only when asked (`forest`: on the 30,000 launches of the bundled data
    /// its fits take minutes where the rest take seconds).
    pub fn methods(self, forest: bool) -> Vec<Method> {
        self.all_methods()
            .iter()
            .copied()
            .filter(|m| forest || *m != Method::TransferForest)
            .collect()
    }

    fn all_methods(self) -> &'static [Method] {
        match self {
            Scheme::LeaveOneGpuOut | Scheme::LeaveOneArchitectureOut => &[
                Method::Transfer,
                Method::TransferChosenBase,
                Method::Combined,
                Method::ChosenByTrainingGpus,
                Method::TransferForest,
                Method::Utilisation,
                Method::WaveScaling,
                Method::PeakSameArchitecture,
                Method::PeakAllGpus,
                Method::PhysicsScaled,
                Method::Physics,
                Method::FloorPlusBytes,
            ],
            Scheme::LeaveOneGpuOutOtherArchitectures => &[
                Method::Transfer,
                Method::TransferChosenBase,
                Method::Combined,
                Method::ChosenByTrainingGpus,
                Method::TransferForest,
                Method::Utilisation,
                Method::WaveScaling,
                Method::PeakAllGpus,
                Method::PhysicsScaled,
                Method::Physics,
                Method::FloorPlusBytes,
            ],
            // The counter models answer a kernel never timed; the transfer model and the
            // scalings one measured on other GPUs but not in the training data (`yosoku
            // predict` of a kernel of one's own).
            Scheme::LeaveOneKernelOut => &[
                Method::CounterCosts,
                Method::InstructionCount,
                Method::SeedCounters,
                Method::Transfer,
                Method::Utilisation,
                Method::WaveScaling,
                Method::PeakAllGpus,
                Method::PhysicsScaled,
                Method::Physics,
                Method::FloorPlusBytes,
            ],
            Scheme::LeaveOneKernelAndGpuOut => &[
                Method::CounterCosts,
                Method::UtilisationFromCounters,
                Method::InstructionCount,
                Method::Physics,
                Method::FloorPlusBytes,
            ],
        }
    }

    fn holds_gpus(self) -> bool {
        !matches!(self, Scheme::LeaveOneKernelOut)
    }
}

/// A predictor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// The fixed-effects model in log time (learned::TransferModel).
    Transfer,
    /// The same, each of its ridges over the base a nested cross-validation on the training
    /// GPUs chose: the physics model's ratio with a learned correction, the ratio alone, or the
    /// times themselves (learned::TransferModel::fit_choosing_base).
    TransferChosenBase,
    /// A random forest of the log time ratio between two GPUs (learned::ForestTransfer).
    TransferForest,
    /// Non-negative costs per counted event (learned::CostModel); on a GPU never timed, its
    /// times on the measured GPUs carried over by the transfer model.
    CounterCosts,
    /// The latency-aware model of waves and utilisation (utilisation::UtilisationModel)
    /// scaling each measured GPU's time, their median.
    Utilisation,
    /// The same model from the launch's counters alone, no time of it measured anywhere.
    UtilisationFromCounters,
    /// Habitat's wave scaling from each measured GPU, their median.
    WaveScaling,
    /// Cores x clock scaling from each measured GPU of the target's architecture, their median.
    PeakSameArchitecture,
    /// Cores x clock scaling from every measured GPU, their median.
    PeakAllGpus,
    /// Instructions x the median time per instruction of the other kernels on the GPU.
    InstructionCount,
    /// The seed's linear regression on six counters, one per GPU (Shimada et al.).
    SeedCounters,
    /// The physics model over the target's catalogue rates (physics::physics_time), nothing
    /// fitted: from the launch's profile on the target where the scheme has one (a kernel held
    /// out), else from its profiles on the measured GPUs, their median.
    Physics,
    /// Its baseline: the launch floor plus the bytes over the bandwidth, from the same profiles.
    FloorPlusBytes,
    /// Each measured GPU's time scaled by the physics model's ratio of the launch's time on the
    /// target to its time on that GPU (both from that GPU's profile, over catalogue rates),
    /// their median: nothing fitted. Cores x clock scales a time by one ratio for every kernel;
    /// this one by the ratio of whatever bounds the launch (memory, compute, issue, latency).
    PhysicsScaled,
    /// The geometric mean of what [`COMBINED`] predicts of the launch (those that answer):
    /// three ways of carrying the launch's measured times to the target, the learned ridge,
    /// the physics model's ratio and cores x clock within the architecture, each wrong in its
    /// own way. Equal weights: nothing more is fitted.
    Combined,
    /// Whichever of [`CHOICES`] predicts the fold's training GPUs best when each is left out
    /// in turn (the fold's inner folds; the pooled median |log error| over the launches all of
    /// them predict), then that method on the fold: learning (the ridge, the combination that
    /// holds it) only where the training GPUs show it helps, the physics or cores x clock
    /// where they do not. Nothing of the held-out GPU enters the choice.
    ChosenByTrainingGpus,
}

/// The methods [`Method::ChosenByTrainingGpus`] chooses among, the simplest answer to a tie
/// first (nothing fitted before the ridge, a single method before the combination).
pub const CHOICES: [Method; 4] = [
    Method::PhysicsScaled,
    Method::PeakSameArchitecture,
    Method::Transfer,
    Method::Combined,
];

/// [`Method::Combined`]'s time from its parts' times: their geometric mean, over those that
/// are positive and finite; `None` where none is.
pub fn combined_secs(parts: impl IntoIterator<Item = f64>) -> Option<f64> {
    let logs: Vec<f64> = parts
        .into_iter()
        .filter(|s| *s > 0.0 && s.is_finite())
        .map(f64::ln)
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// The methods [`Method::Combined`] combines.
pub const COMBINED: [Method; 3] = [
    Method::Transfer,
    Method::PhysicsScaled,
    Method::PeakSameArchitecture,
];

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Transfer => "transfer_ridge",
            Method::TransferChosenBase => "transfer_ridge_chosen_base",
            Method::TransferForest => "transfer_forest",
            Method::CounterCosts => "counter_costs",
            Method::Utilisation => "utilisation_scaled",
            Method::UtilisationFromCounters => "utilisation",
            Method::WaveScaling => "wave_scaling",
            Method::PeakSameArchitecture => "cores_clock_same_architecture",
            Method::PeakAllGpus => "cores_clock_all_gpus",
            Method::InstructionCount => "instruction_count",
            Method::SeedCounters => "seed_counter_regression",
            Method::Physics => "physics",
            Method::FloorPlusBytes => "floor_plus_bytes",
            Method::PhysicsScaled => "physics_scaled",
            Method::Combined => "combined",
            Method::ChosenByTrainingGpus => "chosen_by_training_gpus",
        }
    }

    /// Whether the method is learned (ours) rather than a baseline.
    pub fn is_learned(self) -> bool {
        matches!(
            self,
            Method::Transfer
                | Method::TransferChosenBase
                | Method::TransferForest
                | Method::Combined
                | Method::ChosenByTrainingGpus
                | Method::CounterCosts
                | Method::Utilisation
                | Method::UtilisationFromCounters
        )
    }
}

/// What is held out in one fold, and which cells it predicts.
#[derive(Debug, Clone)]
pub struct Fold {
    pub label: String,
    pub held_gpu: Vec<bool>,
    pub held_kernel: Vec<bool>,
    pub targets: Vec<usize>,
    /// The kernel held out (for the shared inner folds of the both-out scheme).
    kernel: Option<usize>,
    /// The GPUs whose measurements of a target's launch it is predicted from, where not every
    /// GPU the fold keeps (`leave_one_architecture_out`: the target's architecture mates, held
    /// out of training).
    sources: Option<Vec<bool>>,
}

impl Fold {
    fn trains(&self, c: &Cell) -> bool {
        !self.held_gpu[c.gpu] && !self.held_kernel[c.kernel]
    }

    /// Whether a measurement on `gpu` may be a source of a target's prediction.
    fn sources_from(&self, gpu: usize) -> bool {
        match &self.sources {
            Some(sources) => sources[gpu],
            None => !self.held_gpu[gpu],
        }
    }
}

fn fold(
    m: &Measurements,
    label: String,
    gpus: &[usize],
    kernels: &[usize],
    target: &dyn Fn(&Cell) -> bool,
) -> Fold {
    let mut held_gpu = vec![false; m.gpus.len()];
    let mut held_kernel = vec![false; m.kernels.len()];
    gpus.iter().for_each(|&g| held_gpu[g] = true);
    kernels.iter().for_each(|&k| held_kernel[k] = true);
    Fold {
        label,
        held_gpu,
        held_kernel,
        targets: (0..m.cells.len())
            .filter(|&c| target(&m.cells[c]))
            .collect(),
        kernel: kernels.first().copied(),
        sources: None,
    }
}

/// The outer folds of a scheme, in order (GPU by GPU, kernel by kernel).
pub fn outer_folds(m: &Measurements, scheme: Scheme) -> Vec<Fold> {
    let gpus = 0..m.gpus.len();
    let same_architecture = |b: usize| -> Vec<usize> {
        gpus.clone()
            .filter(|&g| m.gpus[g].architecture == m.gpus[b].architecture)
            .collect()
    };
    match scheme {
        Scheme::LeaveOneGpuOut => gpus
            .clone()
            .map(|b| fold(m, m.gpu_labels[b].clone(), &[b], &[], &|c| c.gpu == b))
            .collect(),
        Scheme::LeaveOneGpuOutOtherArchitectures => gpus
            .clone()
            .map(|b| {
                let held = same_architecture(b);
                fold(m, m.gpu_labels[b].clone(), &held, &[], &|c| c.gpu == b)
            })
            .collect(),
        Scheme::LeaveOneArchitectureOut => gpus
            .clone()
            .map(|b| {
                let held = same_architecture(b);
                let mut f = fold(m, m.gpu_labels[b].clone(), &held, &[], &|c| c.gpu == b);
                f.sources = Some(
                    (0..m.gpus.len())
                        .map(|g| g != b && held.contains(&g))
                        .collect(),
                );
                f
            })
            .collect(),
        Scheme::LeaveOneKernelOut => (0..m.kernels.len())
            .map(|k| fold(m, m.kernels[k].clone(), &[], &[k], &|c| c.kernel == k))
            .collect(),
        Scheme::LeaveOneKernelAndGpuOut => (0..m.kernels.len())
            .flat_map(|k| {
                gpus.clone().map(move |b| {
                    let label = format!("{} on {}", m.kernels[k], m.gpu_labels[b]);
                    fold(m, label, &[b], &[k], &|c| c.kernel == k && c.gpu == b)
                })
            })
            .collect(),
    }
}

/// The inner folds that calibrate an outer fold's intervals.
fn inner_folds(m: &Measurements, scheme: Scheme, outer: &Fold) -> Vec<Fold> {
    let held_gpus: Vec<usize> = (0..m.gpus.len()).filter(|&g| outer.held_gpu[g]).collect();
    let held_kernels: Vec<usize> = (0..m.kernels.len())
        .filter(|&k| outer.held_kernel[k])
        .collect();
    let with = |v: &[usize], x: usize| -> Vec<usize> { v.iter().copied().chain([x]).collect() };
    match scheme {
        Scheme::LeaveOneGpuOut
        | Scheme::LeaveOneGpuOutOtherArchitectures
        | Scheme::LeaveOneArchitectureOut => (0..m.gpus.len())
            .filter(|&g| !outer.held_gpu[g])
            .map(|g| {
                let label = m.gpu_labels[g].clone();
                fold(m, label, &with(&held_gpus, g), &[], &|c| c.gpu == g)
            })
            .collect(),
        Scheme::LeaveOneKernelOut => (0..m.kernels.len())
            .filter(|&k| !outer.held_kernel[k])
            .map(|k| {
                let label = m.kernels[k].clone();
                fold(m, label, &[], &with(&held_kernels, k), &|c| c.kernel == k)
            })
            .collect(),
        Scheme::LeaveOneKernelAndGpuOut => (0..m.kernels.len())
            .filter(|&k| !outer.held_kernel[k])
            .map(|k| {
                let label = m.kernels[k].clone();
                fold(m, label, &[], &with(&held_kernels, k), &|c| c.kernel == k)
            })
            .collect(),
    }
}

/// One method's predictions for one fold's targets (`None`: no prediction, and why).
struct FoldPredictions {
    secs: Vec<Option<f64>>,
    why_not: Option<String>,
}

/// Seconds per warp instruction of each GPU: the median over the cells `train` accepts.
fn seconds_per_instruction(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Vec<f64> {
    let mut per_gpu: Vec<Vec<f64>> = vec![Vec::new(); m.gpus.len()];
    for c in m.cells.iter().filter(|c| train(c)) {
        if c.work.warp_instructions > 0.0 {
            per_gpu[c.gpu].push(c.secs / c.work.warp_instructions);
        }
    }
    // A GPU with no training cell has no rate (NaN: its predictions are not made).
    per_gpu
        .iter_mut()
        .map(|v| if v.is_empty() { f64::NAN } else { median(v) })
        .collect()
}

/// The seed's regression per GPU: time on the six counters, linear, with an intercept.
fn seed_fits(
    m: &Measurements,
    train: &dyn Fn(&Cell) -> bool,
) -> Vec<Option<yosoku_regression::OlsFit>> {
    (0..m.gpus.len())
        .map(|g| {
            let rows: Vec<&Cell> = m
                .cells
                .iter()
                .filter(|c| c.gpu == g && train(c) && c.work.seed.iter().all(|v| !v.is_nan()))
                .collect();
            if rows.len() < 10 {
                return None;
            }
            let x = Mat::from_fn(rows.len(), 6, |i, j| rows[i].work.seed[j]);
            let y: Vec<f64> = rows.iter().map(|c| c.secs).collect();
            let options = OlsOptions {
                leverage: false,
                ..OlsOptions::default()
            };
            ols(x.as_ref(), &y, &options).ok()
        })
        .collect()
}

/// The latency-aware model's predictions of a fold's targets: scaled from each source's time
/// (their median), or from the target's own counters.
fn utilisation_predictions<'a>(
    m: &'a Measurements,
    method: Method,
    model: &UtilisationModel,
    fold: &Fold,
    sources: &dyn Fn(&Cell) -> Vec<&'a Cell>,
) -> Vec<Option<f64>> {
    fold.targets
        .iter()
        .map(|&t| {
            let t = &m.cells[t];
            let target = &m.gpus[t.gpu];
            if method == Method::UtilisationFromCounters {
                return model.secs(&t.work, target, "");
            }
            let mut v: Vec<f64> = sources(t)
                .into_iter()
                .filter_map(|s| model.scaled(s.secs, &s.work, &m.gpus[s.gpu], target, ""))
                .collect();
            (!v.is_empty()).then(|| median(&mut v))
        })
        .collect()
}

/// The physics model's time (or its floor-plus-bytes baseline, by `method`) of `work` on a GPU
/// of `rates` (its catalogue's).
fn physics_secs(method: Method, work: &super::work::Work, rates: &GpuRates) -> Option<f64> {
    let work = KernelWork::from_work(work);
    let s = match method {
        Method::Physics => physics_time(&work, rates).secs,
        _ => floor_plus_bytes_secs(&work, rates),
    };
    (s.is_finite() && s > 0.0).then_some(s)
}

/// The seed's counter regression (one per GPU, fitted on the cells `train` accepts) on
/// `targets`, where their counters are all known.
fn seed_predictions<'a>(
    m: &Measurements,
    train: &dyn Fn(&Cell) -> bool,
    targets: impl Iterator<Item = &'a Cell>,
) -> Vec<Option<f64>> {
    let fits = seed_fits(m, train);
    targets
        .map(|t| {
            let fit = fits[t.gpu].as_ref()?;
            t.work
                .seed
                .iter()
                .all(|v| !v.is_nan())
                .then(|| fit.predict(&t.work.seed))
        })
        .collect()
}

/// The same launch as `t` measured on GPUs `fold` does not hold out.
fn sources_of<'a>(m: &'a Measurements, fold: &Fold, t: &Cell) -> Vec<&'a Cell> {
    m.by_launch[t.launch]
        .iter()
        .map(|&c| &m.cells[c])
        .filter(|c| fold.sources_from(c.gpu) && c.gpu != t.gpu)
        .collect()
}

/// The sources whose profiles the physics methods read: those of the target's architecture
/// where any was measured (warp instructions and SM cycles count an architecture's instruction
/// set and SMs, which differ between Kepler and Maxwell for the same launch), else all.
pub(super) fn profiled_sources<'a>(m: &'a Measurements, fold: &Fold, t: &Cell) -> Vec<&'a Cell> {
    let all = sources_of(m, fold, t);
    let same = |s: &&Cell| m.gpus[s.gpu].architecture == m.gpus[t.gpu].architecture;
    if all.iter().any(same) {
        all.into_iter().filter(same).collect()
    } else {
        all
    }
}

fn predict_fold(m: &Measurements, scheme: Scheme, method: Method, fold: &Fold) -> FoldPredictions {
    let train = |c: &Cell| fold.trains(c);
    let sources = |t: &Cell| sources_of(m, fold, t);
    let targets = fold.targets.iter().map(|&t| &m.cells[t]);
    // The median of `f` over the sources `of` picks for each target (`sources_of`, or
    // `profiled_sources` for the methods that read the sources' profiles).
    type Picker = for<'a> fn(&'a Measurements, &Fold, &Cell) -> Vec<&'a Cell>;
    let median_over = |of: Picker, f: &dyn Fn(&Cell, &Cell) -> Option<f64>| {
        targets
            .clone()
            .map(|t| {
                let mut v: Vec<f64> = of(m, fold, t).into_iter().filter_map(|s| f(s, t)).collect();
                (!v.is_empty()).then(|| median(&mut v))
            })
            .collect::<Vec<Option<f64>>>()
    };
    let from_sources = |f: &dyn Fn(&Cell, &Cell) -> Option<f64>| median_over(sources_of, f);
    let failed = |e: ModelError| FoldPredictions {
        secs: vec![None; fold.targets.len()],
        why_not: Some(e.to_string()),
    };
    // Each GPU's catalogue rates, once a fold, for the physics methods.
    let rates: Vec<GpuRates> = m.gpus.iter().map(GpuRates::from_spec).collect();
    let secs = match method {
        Method::Transfer | Method::TransferChosenBase => {
            let choose_base = method == Method::TransferChosenBase;
            match TransferModel::fit_with(m, &train, choose_base) {
                Ok(model) => targets
                    .clone()
                    .map(|t| model.predict(m, &m.gpus[t.gpu], &sources(t)))
                    .collect(),
                Err(e) => return failed(e),
            }
        }
        Method::TransferForest => match forest_predictions(m, fold, &train, &sources) {
            Ok(secs) => secs,
            Err(e) => return failed(e),
        },
        Method::CounterCosts => {
            match counter_cost_predictions(m, scheme, &train, targets.clone(), &sources) {
                Ok(secs) => secs,
                Err(e) => return failed(e),
            }
        }
        Method::Utilisation | Method::UtilisationFromCounters => {
            // One group: the kernels of these tables are applications, not operator families.
            match UtilisationModel::fit(m, &train, &|_| String::new()) {
                Ok(model) => utilisation_predictions(m, method, &model, fold, &sources),
                Err(e) => return failed(e),
            }
        }
        Method::WaveScaling => from_sources(&|s, t| {
            Some(wave_scaling(
                s.secs,
                &s.work,
                &m.gpus[s.gpu],
                &m.gpus[t.gpu],
            ))
        }),
        Method::PeakSameArchitecture => from_sources(&|s, t| {
            (m.gpus[s.gpu].architecture == m.gpus[t.gpu].architecture)
                .then(|| peak_scaling(s.secs, &m.gpus[s.gpu], &m.gpus[t.gpu]))
        }),
        Method::PeakAllGpus => {
            from_sources(&|s, t| Some(peak_scaling(s.secs, &m.gpus[s.gpu], &m.gpus[t.gpu])))
        }
        Method::InstructionCount => {
            let rate = seconds_per_instruction(m, &train);
            if scheme.holds_gpus() {
                from_sources(&|s, t| {
                    let secs = s.work.warp_instructions * rate[s.gpu];
                    secs.is_finite()
                        .then(|| peak_scaling(secs, &m.gpus[s.gpu], &m.gpus[t.gpu]))
                })
            } else {
                targets
                    .clone()
                    .map(|t| {
                        let secs = t.work.warp_instructions * rate[t.gpu];
                        secs.is_finite().then_some(secs)
                    })
                    .collect()
            }
        }
        Method::Physics | Method::FloorPlusBytes => {
            let secs = |work: &super::work::Work, target: &Cell| {
                physics_secs(method, work, &rates[target.gpu])
            };
            if scheme.holds_gpus() {
                median_over(profiled_sources, &|s, t| secs(&s.work, t))
            } else {
                // The target's own profile: its SM cycles are the time being predicted, so the
                // work is priced without them.
                targets
                    .clone()
                    .map(|t| {
                        let work = super::work::Work {
                            active_cycles: 0.0,
                            ..t.work
                        };
                        secs(&work, t)
                    })
                    .collect()
            }
        }
        Method::PhysicsScaled => median_over(profiled_sources, &|s, t| {
            let work = KernelWork::from_work(&s.work);
            let secs = physics_scaled_secs(s.secs, &work, &rates[s.gpu], &rates[t.gpu]);
            secs.is_finite().then_some(secs)
        }),
        Method::SeedCounters => seed_predictions(m, &train, targets),
        Method::Combined => combined_predictions(m, scheme, fold),
        Method::ChosenByTrainingGpus => {
            let chosen = chosen_by_inner_folds(m, scheme, fold);
            return predict_fold(m, scheme, chosen, fold);
        }
    };
    FoldPredictions {
        secs,
        why_not: None,
    }
}

/// The methods of `methods` the scheme runs (cores x clock within the architecture not where
/// the scheme holds the architecture out, though its inner folds, one GPU each, could run it).
fn of_scheme(scheme: Scheme, methods: &[Method]) -> Vec<Method> {
    methods
        .iter()
        .copied()
        .filter(|m| scheme.all_methods().contains(m))
        .collect()
}

/// The predictions of a fold's targets by the parts of [`Method::Combined`] the scheme runs.
struct CombinedParts {
    methods: Vec<Method>,
    predictions: Vec<FoldPredictions>,
}

impl CombinedParts {
    fn predict(m: &Measurements, scheme: Scheme, fold: &Fold) -> Self {
        let methods = of_scheme(scheme, &COMBINED);
        let predictions = methods
            .iter()
            .map(|&c| predict_fold(m, scheme, c, fold))
            .collect();
        Self {
            methods,
            predictions,
        }
    }

    /// `method`'s time of the fold's `i`-th target: a part's, or [`Method::Combined`]'s from
    /// them; `None` where it gives no positive, finite time.
    fn secs(&self, method: Method, i: usize) -> Option<f64> {
        let secs = match method {
            Method::Combined => combined_secs(self.predictions.iter().filter_map(|p| p.secs[i])),
            _ => {
                let part = self.methods.iter().position(|&c| c == method)?;
                self.predictions[part].secs[i]
            }
        };
        secs.filter(|s| *s > 0.0 && s.is_finite())
    }
}

/// [`Method::Combined`]'s predictions of a fold's targets.
fn combined_predictions(m: &Measurements, scheme: Scheme, fold: &Fold) -> Vec<Option<f64>> {
    let parts = CombinedParts::predict(m, scheme, fold);
    (0..fold.targets.len())
        .map(|i| parts.secs(Method::Combined, i))
        .collect()
}

/// The method of [`CHOICES`] with the smallest pooled median |log error| over `fold`'s inner
/// folds (each training GPU left out in turn), counted on the launches every choice that
/// answers there predicts (cores x clock within the architecture answers none where the
/// scheme holds the architecture out); the first of them where none can be checked.
fn chosen_by_inner_folds(m: &Measurements, scheme: Scheme, fold: &Fold) -> Method {
    // Per inner launch, each choice's |log error| where it answers.
    let mut rows: Vec<[Option<f64>; CHOICES.len()]> = Vec::new();
    for inner in inner_folds(m, scheme, fold) {
        let parts = CombinedParts::predict(m, scheme, &inner);
        for (i, &t) in inner.targets.iter().enumerate() {
            let measured = m.cells[t].secs;
            rows.push(CHOICES.map(|c| parts.secs(c, i).map(|s| (s / measured).ln().abs())));
        }
    }
    let answering: Vec<usize> = (0..CHOICES.len())
        .filter(|&c| rows.iter().any(|r| r[c].is_some()))
        .collect();
    let mut errors: Vec<Vec<f64>> = vec![Vec::new(); CHOICES.len()];
    for r in rows
        .iter()
        .filter(|r| answering.iter().all(|&c| r[c].is_some()))
    {
        for &c in &answering {
            errors[c].extend(r[c]);
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for (c, e) in errors.iter_mut().enumerate() {
        if e.is_empty() {
            continue;
        }
        let error = median(e);
        // Of equal errors, the earlier (simpler) choice.
        if best.is_none_or(|(_, b)| error < b) {
            best = Some((c, error));
        }
    }
    best.map_or(CHOICES[0], |(c, _)| CHOICES[c])
}

/// The counter-cost model's predictions of a fold's `targets`: from the targets' own counters
/// where the scheme keeps their GPU, else from their sources' profiles priced on their own
/// GPUs, carried to the target by the transfer model.
fn counter_cost_predictions<'a>(
    m: &'a Measurements,
    scheme: Scheme,
    train: &dyn Fn(&Cell) -> bool,
    targets: impl Iterator<Item = &'a Cell>,
    sources: &dyn Fn(&Cell) -> Vec<&'a Cell>,
) -> Result<Vec<Option<f64>>, ModelError> {
    let costs = CostModel::fit(m, train);
    if !scheme.holds_gpus() {
        return Ok(targets.map(|t| costs.predict(&t.work, t.gpu)).collect());
    }
    let model = TransferModel::fit(m, train)?;
    Ok(targets
        .map(|t| {
            // The sources' profiles priced on their own GPUs stand in for times.
            let priced: Vec<Cell> = sources(t)
                .into_iter()
                .filter_map(|s| {
                    let secs = costs.predict(&s.work, s.gpu)?;
                    Some(Cell { secs, ..s.clone() })
                })
                .collect();
            let priced: Vec<&Cell> = priced.iter().collect();
            model.predict(m, &m.gpus[t.gpu], &priced)
        })
        .collect())
}

/// The forest's predictions of a fold's targets.
#[cfg(not(target_arch = "wasm32"))]
fn forest_predictions<'a>(
    m: &'a Measurements,
    fold: &Fold,
    train: &dyn Fn(&Cell) -> bool,
    sources: &dyn Fn(&Cell) -> Vec<&'a Cell>,
) -> Result<Vec<Option<f64>>, ModelError> {
    let forest = super::learned::ForestTransfer::fit(m, train)?;
    Ok(fold
        .targets
        .iter()
        .map(|&t| {
            let t = &m.cells[t];
            let s: Vec<super::learned::Source<'_>> = sources(t)
                .into_iter()
                .map(|c| super::learned::Source {
                    secs: c.secs,
                    work: &c.work,
                    gpu: &m.gpus[c.gpu],
                })
                .collect();
            forest.predict_from(&m.gpus[t.gpu], &s)
        })
        .collect())
}

/// The forest is not built for wasm32 (the viewer fits no models).
#[cfg(target_arch = "wasm32")]
fn forest_predictions<'a>(
    _: &'a Measurements,
    _: &Fold,
    _: &dyn Fn(&Cell) -> bool,
    _: &dyn Fn(&Cell) -> Vec<&'a Cell>,
) -> Result<Vec<Option<f64>>, ModelError> {
    Err(ModelError::invalid(
        "the tree ensemble is not built for wasm32".to_owned(),
    ))
}

/// One predicted (or unpredictable) held-out cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub scheme: Scheme,
    pub method: Method,
    pub cell: usize,
    pub fold: String,
    /// `None`: the method could not predict the cell (see `flag`).
    pub secs: Option<f64>,
    pub interval: Option<(f64, f64)>,
    /// `negative` (a linear model's negative time: no time), `no_source` (no GPU the scheme
    /// allows measured the launch), `no_same_architecture`, `no_counters`, `fit_failed`.
    pub flag: Option<&'static str>,
}

/// One method under one scheme, over all its held-out cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    pub scheme: Scheme,
    pub method: Method,
    pub rows: usize,
    pub predicted: usize,
    pub mean_abs_error_pct: f64,
    pub median_abs_error_pct: f64,
    /// Share of the predicted rows within 25 % of the measurement.
    pub within_25_pct: f64,
    /// Share of the predicted rows inside their interval (NaN without intervals).
    pub coverage_pct: f64,
    /// The median signed error (positive: predicted slower than measured), and the median
    /// |error| once each GPU's median ratio of predicted to measured time is divided out of its
    /// rows: what one number measured on each GPU could at best leave (NaN where none).
    pub median_signed_error_pct: f64,
    pub one_factor_error_pct: f64,
    /// Why rows were not predicted, with counts.
    pub not_predicted: Vec<(String, usize)>,
}

/// Everything [`validate`] found.
#[derive(Debug, Clone)]
pub struct Validation {
    pub predictions: Vec<Prediction>,
    pub scores: Vec<Score>,
}

/// The conformal half-width in log space: the ceil((n + 1) level)-th smallest absolute log
/// error, `None` with too few to reach it.
pub fn conformal_half_width(mut residuals: Vec<f64>, level: f64) -> Option<f64> {
    residuals.retain(|r| r.is_finite());
    let n = residuals.len();
    let k = ((n as f64 + 1.0) * level).ceil() as usize;
    if n == 0 || k > n {
        return None;
    }
    residuals.sort_by(f64::total_cmp);
    Some(residuals[k - 1])
}

fn log_residuals(m: &Measurements, fold: &Fold, p: &FoldPredictions) -> Vec<f64> {
    fold.targets
        .iter()
        .zip(&p.secs)
        .filter_map(|(&t, s)| {
            let s = (*s)?;
            (s > 0.0).then(|| (s / m.cells[t].secs).ln().abs())
        })
        .collect()
}

/// Runs every method of every scheme in `schemes` (the tree ensemble too with `forest`); `level`
/// is the intervals' coverage (0.95).
pub fn validate(
    m: &Measurements,
    schemes: &[Scheme],
    level: f64,
    forest: bool,
) -> Result<Validation, ModelError> {
    if !(0.5..1.0).contains(&level) {
        return Err(ModelError::invalid(format!(
            "interval level {level}: expected a number in [0.5, 1)"
        )));
    }
    if m.gpus.len() < 2 {
        return Err(ModelError::invalid(format!(
            "holding GPUs out needs launches on at least two GPUs of the catalogue; the table has {}",
            m.gpus.len()
        )));
    }
    let mut predictions = Vec::new();
    let mut scores = Vec::new();
    for &scheme in schemes {
        for method in scheme.methods(forest) {
            let start = predictions.len();
            let folds: Vec<Fold> = outer_folds(m, scheme)
                .into_iter()
                .filter(|f| !f.targets.is_empty())
                .collect();
            let calibrate = |outer: &Fold| {
                let mut residuals = Vec::new();
                for inner in inner_folds(m, scheme, outer) {
                    let q = predict_fold(m, scheme, method, &inner);
                    residuals.extend(log_residuals(m, &inner, &q));
                }
                conformal_half_width(residuals, level)
            };
            // The both-out scheme's inner folds depend on the kernel alone: computed once each.
            let shared: HashMap<usize, Option<f64>> = if scheme == Scheme::LeaveOneKernelAndGpuOut {
                let mut firsts: Vec<&Fold> = Vec::new();
                for f in &folds {
                    if !firsts.iter().any(|g| g.kernel == f.kernel) {
                        firsts.push(f);
                    }
                }
                let widths = map_folds(&firsts, |f| calibrate(f));
                firsts
                    .iter()
                    .zip(widths)
                    .filter_map(|(f, w)| Some((f.kernel?, w)))
                    .collect()
            } else {
                HashMap::new()
            };
            let results = map_folds(&folds, |outer| {
                let p = predict_fold(m, scheme, method, outer);
                let width = match outer.kernel.and_then(|k| shared.get(&k)) {
                    Some(w) => *w,
                    None => calibrate(outer),
                };
                (p, width)
            });
            for (outer, (p, width)) in folds.iter().zip(results) {
                push_fold(scheme, method, outer, &p, width, &mut predictions);
            }
            scores.push(score(m, scheme, method, &predictions[start..]));
        }
    }
    Ok(Validation {
        predictions,
        scores,
    })
}

/// `f` over `items`, on all cores with the `parallel` feature; the results in order.
pub(crate) fn map_folds<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().map(f).collect()
    }
}

fn push_fold(
    scheme: Scheme,
    method: Method,
    fold: &Fold,
    p: &FoldPredictions,
    half_width: Option<f64>,
    out: &mut Vec<Prediction>,
) {
    for (&t, secs) in fold.targets.iter().zip(&p.secs) {
        let flag = match secs {
            Some(s) if *s <= 0.0 || !s.is_finite() => Some("negative"),
            Some(_) => None,
            None if p.why_not.is_some() => Some("fit_failed"),
            None if method == Method::PeakSameArchitecture => Some("no_same_architecture"),
            None if method == Method::SeedCounters => Some("no_counters"),
            None => Some("no_source"),
        };
        let secs = secs.filter(|s| *s > 0.0 && s.is_finite());
        out.push(Prediction {
            scheme,
            method,
            cell: t,
            fold: fold.label.clone(),
            secs,
            interval: secs
                .zip(half_width)
                .map(|(s, h)| (s * (-h).exp(), s * h.exp())),
            flag,
        });
    }
}

fn score(m: &Measurements, scheme: Scheme, method: Method, rows: &[Prediction]) -> Score {
    let (mut measured, mut predicted) = (Vec::new(), Vec::new());
    let (mut inside, mut with_interval) = (0usize, 0usize);
    let mut not_predicted: Vec<(String, usize)> = Vec::new();
    // (GPU, log of predicted over measured) of each row predicted.
    let mut log_ratios = Vec::new();
    for p in rows {
        let secs = m.cells[p.cell].secs;
        match p.secs {
            Some(s) => {
                measured.push(secs);
                predicted.push(s);
                if s > 0.0 && secs > 0.0 {
                    log_ratios.push((m.cells[p.cell].gpu, (s / secs).ln()));
                }
                if let Some((lo, hi)) = p.interval {
                    with_interval += 1;
                    inside += usize::from(lo <= secs && secs <= hi);
                }
            }
            None => {
                let why = p.flag.unwrap_or("no_source").to_owned();
                match not_predicted.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, n)) => *n += 1,
                    None => not_predicted.push((why, 1)),
                }
            }
        }
    }
    let share = |part: usize, of: usize| {
        if of == 0 {
            f64::NAN
        } else {
            100.0 * part as f64 / of as f64
        }
    };
    let n = predicted.len();
    let within = measured
        .iter()
        .zip(&predicted)
        .filter(|(a, p)| (*p - *a).abs() <= 0.25 * *a)
        .count();
    // The counter models' error measures (mean and median of 100 |p - a| / a).
    let errors = yosoku_regression::validate::metrics(&measured, &predicted);
    let bias = super::bias::signed_and_one_factor(&log_ratios);
    Score {
        scheme,
        method,
        rows: rows.len(),
        predicted: n,
        mean_abs_error_pct: if n == 0 {
            f64::NAN
        } else {
            errors.mean_abs_pct
        },
        median_abs_error_pct: errors.median_abs_pct,
        within_25_pct: share(within, n),
        coverage_pct: share(inside, with_interval),
        median_signed_error_pct: bias.0,
        one_factor_error_pct: bias.1,
        not_predicted,
    }
}
