//! A forecast from a kernel's work alone (docs/methods.md, section 6): launches described by
//! their grid, block, FLOPs and DRAM bytes (derived from the kernel's code and input size, as
//! NeuSight derives its operators' from their dimensions), none of them measured on any GPU,
//! their times on GPUs of the catalogue by the latency-aware model fitted on other kernels'
//! launches, with the roofline of the datasheet beside.
//!
//! The interval is split-conformal and answers the question asked: a kernel the model has never
//! seen on a GPU it was not fitted on. Each training GPU and each operator group are left out
//! together in turn; the model fitted on the rest predicts the left-out group's launches on the
//! left-out GPU with its pooled (all-group) ridge, as the forecast kernels are predicted; the
//! level's quantile of those absolute log errors is the half-width. The same residuals give the
//! accuracy the forecast states of itself before any measurement.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use yosoku_regression::pmnf::saved;
use yosoku_tables::rows::error_pct;

use super::data::{Cell, Measurements, Work};
use super::gpu::GpuSpec;
use super::schemes::conformal_half_width;
use super::utilisation::UtilisationModel;
use crate::{Model, ModelError, median};

/// The kind a `work_model_fit` step records its model as ([`WorkModel`]).
pub const WORK_MODEL_KIND: &str = "work_model";

/// The methods of a forecast from work, in report order.
pub const WORK_METHODS: [&str; 2] = ["utilisation", "roofline"];

/// The group name no training group has: the pooled ridge answers it.
const UNSEEN_GROUP: &str = "";

/// One launch to forecast: a kernel at an input size, and its work; as a pipeline file's
/// `launches` give it (`work_forecast`), unknown keys refused.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkLaunch {
    /// The kernel's name (as a profiler names it: the measurement is matched on it).
    pub program: String,
    /// The input size.
    pub variant: String,
    pub blocks: f64,
    pub threads_per_block: f64,
    pub flops: f64,
    pub dram_bytes: f64,
    /// Bytes actually moved where they differ from the distinct `dram_bytes` (uncoalesced
    /// access: each scattered element a 32-byte sector); the physics model reads it.
    #[serde(default)]
    pub moved_bytes: Option<f64>,
    /// Barrier-separated phases run one after another inside the launch (a loop with
    /// `__syncthreads()`, as in nw or pathfinder); the physics model reads it.
    #[serde(default)]
    pub dependent_steps: Option<f64>,
    /// DRAM reads each thread waits for one after another (reads separated by barriers, or
    /// after a store they may alias); the physics model reads it.
    #[serde(default)]
    pub dram_round_trips: Option<f64>,
}

impl WorkLaunch {
    /// The launch as the physics model reads it, its optional fields included.
    pub fn kernel_work(&self) -> super::physics::KernelWork {
        // Work alone, with what the user gave of its code; nothing counted by a profiler.
        super::physics::KernelWork {
            moved_bytes: self.moved_bytes,
            dependent_steps: self.dependent_steps.unwrap_or(1.0),
            dram_round_trips: self.dram_round_trips,
            ..super::physics::KernelWork::of_work_alone(
                self.blocks,
                self.threads_per_block,
                self.flops,
                self.dram_bytes,
            )
        }
    }

    /// The launch as the models read it: no instruction count, no counters beyond its work.
    pub fn work(&self) -> Work {
        Work {
            warp_instructions: f64::NAN,
            flops: self.flops,
            dram_bytes: self.dram_bytes,
            blocks: self.blocks,
            threads_per_block: self.threads_per_block,
            registers_per_thread: 0.0,
            shared_bytes_per_block: 0.0,
            l2_transactions: 0.0,
            shared_transactions: 0.0,
            global_loads: 0.0,
            global_stores: 0.0,
            active_cycles: 0.0,
            occupancy_share: 0.0,
            seed: [f64::NAN; 6],
        }
    }
}

/// One forecast: a launch on a target by one method, with its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkForecast {
    pub launch: usize,
    pub target: String,
    pub method: String,
    pub secs: f64,
    pub interval_secs: Option<(f64, f64)>,
}

/// What a method's held-out errors on the training GPUs say of it: each GPU and operator group
/// left out together, as the forecast's kernels and GPUs are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatedAccuracy {
    pub method: String,
    pub launches: usize,
    /// NaN where no launch was left out.
    #[serde(with = "saved::number")]
    pub median_abs_error_pct: f64,
    /// The half-width of the intervals in log time (None with too few residuals).
    pub half_width: Option<f64>,
}

/// The forecasts of every launch on every target, and each method's stated accuracy.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkForecasts {
    pub forecasts: Vec<WorkForecast>,
    pub stated: Vec<StatedAccuracy>,
    /// The operator groups and training GPUs the residuals left out in turn.
    pub groups: Vec<String>,
}

/// The roofline of the datasheet: max(FLOPs / FP32 peak, bytes / bandwidth).
fn roofline_secs(work: &Work, gpu: &GpuSpec) -> Option<f64> {
    datasheet_roofline_secs(
        work.flops,
        work.dram_bytes,
        gpu.fp32_peak_gflops,
        gpu.dram_bandwidth_gb_per_sec,
    )
}

/// max(`flops` / the FP32 peak, `dram_bytes` / the DRAM bandwidth): the roofline of a launch on
/// a datasheet's peaks, `None` where it is not a positive finite time.
pub fn datasheet_roofline_secs(
    flops: f64,
    dram_bytes: f64,
    fp32_peak_gflops: f64,
    dram_bandwidth_gb_per_sec: f64,
) -> Option<f64> {
    let secs = (flops.max(0.0) / (fp32_peak_gflops * 1e9))
        .max(dram_bytes.max(0.0) / (dram_bandwidth_gb_per_sec * 1e9));
    (secs > 0.0 && secs.is_finite()).then_some(secs)
}

/// Each method's errors on the training GPUs, each (GPU, group) pair left out of the fit in turn
/// and predicted with the pooled ridge: (absolute log error, signed error in %) per launch.
fn held_out_residuals(
    m: &Measurements,
    train: &[usize],
    groups: &[String],
    group_of: &(dyn Fn(&str) -> String + Sync),
) -> [Vec<(f64, f64)>; WORK_METHODS.len()] {
    let group_of_cell = |c: &Cell| group_of(&m.kernels[c.kernel]);
    let folds: Vec<(usize, &String)> = train
        .iter()
        .flat_map(|&g| groups.iter().map(move |group| (g, group)))
        .collect();
    let per_fold = super::schemes::map_folds(&folds, |&(held_gpu, held_group)| {
        let mut out: [Vec<(f64, f64)>; WORK_METHODS.len()] = Default::default();
        let fitted = UtilisationModel::fit(
            m,
            &|c: &Cell| {
                c.gpu != held_gpu && train.contains(&c.gpu) && group_of_cell(c) != *held_group
            },
            group_of,
        );
        let Ok(model) = fitted else {
            return out;
        };
        let gpu = &m.gpus[held_gpu];
        for c in m
            .cells
            .iter()
            .filter(|c| c.gpu == held_gpu && group_of_cell(c) == *held_group)
        {
            let predicted = [
                model.secs(&c.work, gpu, UNSEEN_GROUP),
                roofline_secs(&c.work, gpu),
            ];
            for (k, p) in predicted.iter().enumerate() {
                if let Some(p) = p.filter(|p| *p > 0.0) {
                    out[k].push(((p / c.secs).ln().abs(), error_pct(p, c.secs)));
                }
            }
        }
        out
    });
    let mut pooled: [Vec<(f64, f64)>; WORK_METHODS.len()] = Default::default();
    for fold in per_fold {
        for (k, r) in fold.into_iter().enumerate() {
            pooled[k].extend(r);
        }
    }
    pooled
}

/// Whether a GPU and an operator group can be left out together with others kept.
fn stated_possible(gpus: usize, groups: usize) -> bool {
    gpus >= 2 && groups >= 2
}

/// The operator groups a work model is fitted over, its intervals' coverage and the GPUs'
/// peaks it reads: a `work_model_fit` step's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkModelOptions {
    /// Operator (program) -> its group; one not named is in `other_group`, or its own.
    pub groups: BTreeMap<String, String>,
    pub other_group: Option<String>,
    pub level: f64,
    pub peaks: Peaks,
}

/// Which peaks a GPU's work is set against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Peaks {
    /// The datasheet's (the catalogue's FP32 peak and bandwidth).
    #[default]
    Datasheet,
    /// A calibration's measured rates (the catalogue's `[measured]`), every GPU's.
    Measured,
}

impl WorkModelOptions {
    /// The group of operator `program`.
    pub fn group_of(&self, program: &str) -> String {
        self.groups
            .get(program)
            .or(self.other_group.as_ref())
            .cloned()
            .unwrap_or_else(|| program.to_owned())
    }
}

/// What a work model is fitted on: the launches of `measurements` on the GPUs `train`.
#[derive(Debug, Clone, Copy)]
pub struct WorkTraining<'a> {
    pub measurements: &'a Measurements,
    pub train: &'a [usize],
}

/// The launches to forecast, and the GPUs they are forecast on.
#[derive(Debug, Clone, Copy)]
pub struct WorkQuestion<'a> {
    pub targets: &'a [GpuSpec],
    pub launches: &'a [WorkLaunch],
}

/// The latency-aware model of a launch's time from its work alone, fitted on the training GPUs'
/// launches of other kernels, with what it states of itself (the (GPU, group)-out residuals of
/// it and of the roofline) and the intervals' half-widths that come from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkModel {
    pub options: WorkModelOptions,
    /// The GPUs it was fitted on, by catalogue name.
    pub train: Vec<String>,
    /// The operator groups the residuals left out in turn.
    pub groups: Vec<String>,
    pub utilisation: UtilisationModel,
    /// Per method of [`WORK_METHODS`], in that order.
    pub stated: Vec<StatedAccuracy>,
}

impl Model for WorkModel {
    const KIND: &'static str = WORK_MODEL_KIND;
    type Options = WorkModelOptions;
    type Training<'a> = WorkTraining<'a>;
    type Question<'a> = WorkQuestion<'a>;
    type Answer = Vec<WorkForecast>;

    fn fit(training: WorkTraining<'_>, options: &WorkModelOptions) -> Result<Self, ModelError> {
        let WorkTraining {
            measurements: m,
            train,
        } = training;
        let group_of = |program: &str| options.group_of(program);
        let mut groups: Vec<String> = m
            .cells
            .iter()
            .filter(|c| train.contains(&c.gpu))
            .map(|c| group_of(&m.kernels[c.kernel]))
            .collect();
        groups.sort();
        groups.dedup();
        let utilisation = UtilisationModel::fit(m, &|c| train.contains(&c.gpu), &group_of)?;
        // The residuals leave a GPU and a group out together: with one of either there are none,
        // and the model states nothing of itself (a forecast then refuses it).
        let residuals = if stated_possible(train.len(), groups.len()) {
            held_out_residuals(m, train, &groups, &group_of)
        } else {
            Default::default()
        };
        let stated = WORK_METHODS
            .iter()
            .zip(residuals)
            .map(|(method, r)| {
                let mut pct: Vec<f64> = r.iter().map(|(_, e)| e.abs()).collect();
                let logs: Vec<f64> = r.iter().map(|(l, _)| *l).collect();
                StatedAccuracy {
                    method: (*method).to_owned(),
                    launches: r.len(),
                    median_abs_error_pct: if pct.is_empty() {
                        f64::NAN
                    } else {
                        median(&mut pct)
                    },
                    half_width: conformal_half_width(logs, options.level),
                }
            })
            .collect();
        Ok(Self {
            options: options.clone(),
            train: train.iter().map(|&g| m.gpus[g].name.clone()).collect(),
            groups,
            utilisation,
            stated,
        })
    }

    /// Every launch on every target by each method, with its interval; refused for a target it
    /// was fitted on (a forecast is for a GPU the model has not seen).
    fn predict(&self, question: WorkQuestion<'_>) -> Result<Vec<WorkForecast>, ModelError> {
        let WorkQuestion { targets, launches } = question;
        if launches.is_empty() {
            return Err(ModelError::invalid("no launch to forecast"));
        }
        if !stated_possible(self.train.len(), self.groups.len()) {
            return Err(ModelError::invalid(format!(
                "a forecast's interval leaves a training GPU and an operator group out together: it needs at least two of each (the model was fitted on {} GPU(s) and {} group(s))",
                self.train.len(),
                self.groups.len()
            )));
        }
        if let Some(t) = targets.iter().find(|t| self.train.contains(&t.name)) {
            return Err(ModelError::invalid(format!(
                "target `{}` is a training GPU: a forecast is for a GPU the model was not fitted on",
                t.name
            )));
        }
        let mut forecasts = Vec::new();
        for target in targets {
            for (i, l) in launches.iter().enumerate() {
                let work = l.work();
                let secs = [
                    self.utilisation.secs(&work, target, UNSEEN_GROUP),
                    roofline_secs(&work, target),
                ];
                for (k, s) in secs.into_iter().enumerate() {
                    let Some(s) = s else { continue };
                    forecasts.push(WorkForecast {
                        launch: i,
                        target: target.name.clone(),
                        method: WORK_METHODS[k].to_owned(),
                        secs: s,
                        interval_secs: self.stated[k]
                            .half_width
                            .map(|h| (s * (-h).exp(), s * h.exp())),
                    });
                }
            }
        }
        Ok(forecasts)
    }
}
