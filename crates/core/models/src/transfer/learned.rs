//! The learned models: a ridge regression in log time on device-normalised features, and a
//! non-negative cost per counted event.
//!
//! - [`TransferModel`]: the kernel's time on other GPUs is known. ln T(k, d) = a(k) + b . f(k, d)
//!   with a fixed effect a(k) per launch, fitted on the launches' within-launch deviations; a
//!   new GPU's time is a(k), estimated from the GPUs measured, plus b . f(k, new GPU). What is
//!   learned is how a launch's time moves with the device-normalised features: its efficiency.
//! - [`CostModel`]: no time of the kernel anywhere, only its counters. T(k, d) = sum over events
//!   of count(k) x cost(d, event), the costs non-negative, per GPU.

use faer::Mat;
use faer::linalg::solvers::Solve as _;
use yosoku_regression::{OlsOptions, ols};

use super::data::{Cell, Measurements, Work};
use super::gpu::{DEVICE_FEATURES, GpuSpec, device_features};
use super::physics::catalogue_physics_secs;
use crate::{ModelError, median};

/// The ridge penalty on standardised features: small beside the thousands of rows, it only
/// settles collinear columns (one-hot GPUs beside the intercept, a constant column).
pub const RIDGE_LAMBDA: f64 = 1.0;

/// Launches of one kernel a fit uses at most (every n-th, in order): the kernels with a
/// thousand sizes would otherwise outweigh those with fifty, and fits stay fast.
pub const LAUNCHES_PER_KERNEL: usize = 96;

/// A ridge regression on standardised columns.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ridge {
    mean: Vec<f64>,
    scale: Vec<f64>,
    coefficients: Vec<f64>,
    intercept: f64,
}

impl Ridge {
    /// Fits `y` on the rows of `x` (row-major, `p` columns). Without `intercept` the columns
    /// are not centred (the caller has centred them).
    pub fn fit(x: &[f64], p: usize, y: &[f64], intercept: bool) -> Result<Self, ModelError> {
        Self::fit_penalised(x, p, y, intercept, RIDGE_LAMBDA)
    }

    /// The same with the penalty `lambda` on the standardised coefficients.
    pub fn fit_penalised(
        x: &[f64],
        p: usize,
        y: &[f64],
        intercept: bool,
        lambda: f64,
    ) -> Result<Self, ModelError> {
        let n = y.len();
        if n <= p + 1 {
            return Err(ModelError::invalid(format!(
                "{n} training rows for {p} features: too few to fit"
            )));
        }
        let mut mean = vec![0.0; p];
        let mut scale = vec![1.0; p];
        for j in 0..p {
            let col = (0..n).map(|i| x[i * p + j]);
            let m = if intercept {
                col.clone().sum::<f64>() / n as f64
            } else {
                0.0
            };
            let var = col.map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
            mean[j] = m;
            if var > 1e-24 {
                scale[j] = var.sqrt();
            }
        }
        let design = Mat::from_fn(n, p, |i, j| (x[i * p + j] - mean[j]) / scale[j]);
        let fit = ols(
            design.as_ref(),
            y,
            &OlsOptions {
                intercept,
                ridge: lambda,
                leverage: false,
                ..OlsOptions::default()
            },
        )
        .map_err(|e| ModelError::invalid(format!("ridge fit: {e}")))?;
        let mut coefficients = vec![0.0; p];
        for (&j, &b) in fit.kept.iter().zip(&fit.coefficients) {
            coefficients[j] = b;
        }
        Ok(Self {
            mean,
            scale,
            coefficients,
            intercept: if intercept { fit.intercept } else { 0.0 },
        })
    }

    /// The ridge [`Ridge::fit_penalised`] fits without an intercept (columns already centred),
    /// from the sums of its design instead of the design: `gram` = X'X (row-major) and `xty` =
    /// X'y over `n` rows. The same estimator, solved by the normal equations of the standardised
    /// columns, (Z'Z + lambda I) b = Z'y; for the many small fits of a nested cross-validation.
    /// `None` with too few rows or where the system cannot be factorised.
    pub fn from_sums(gram: &[f64], xty: &[f64], n: usize, lambda: f64) -> Option<Self> {
        let p = xty.len();
        if n <= p + 1 || gram.len() != p * p {
            return None;
        }
        let scale: Vec<f64> = (0..p)
            .map(|j| {
                let var = gram[j * p + j] / n as f64;
                if var > 1e-24 { var.sqrt() } else { 1.0 }
            })
            .collect();
        let a = Mat::from_fn(p, p, |i, j| {
            gram[i * p + j] / (scale[i] * scale[j]) + if i == j { lambda } else { 0.0 }
        });
        let rhs = Mat::from_fn(p, 1, |j, _| xty[j] / scale[j]);
        let llt = a.as_ref().llt(faer::Side::Lower).ok()?;
        let b = llt.solve(rhs.as_ref());
        let coefficients: Vec<f64> = (0..p).map(|j| b[(j, 0)]).collect();
        coefficients.iter().all(|c| c.is_finite()).then(|| Self {
            mean: vec![0.0; p],
            scale,
            coefficients,
            intercept: 0.0,
        })
    }

    /// A ridge over `p` columns that predicts 0 for every row: no correction.
    pub fn none(p: usize) -> Self {
        Self {
            mean: vec![0.0; p],
            scale: vec![1.0; p],
            coefficients: vec![0.0; p],
            intercept: 0.0,
        }
    }

    /// Each column's coefficient per unit of the column, and per standard deviation of it.
    pub fn coefficients(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.coefficients
            .iter()
            .zip(&self.scale)
            .map(|(b, s)| (b / s, *b))
    }

    /// A ridge read back (key `key`) weighs `columns` columns: each list that long, every
    /// number finite, each scale positive.
    pub fn check_saved(&self, key: &str, columns: usize) -> Result<(), String> {
        for (name, values) in [
            ("mean", &self.mean),
            ("scale", &self.scale),
            ("coefficients", &self.coefficients),
        ] {
            if values.len() != columns {
                return Err(format!(
                    "key `{key}.{name}`: {} values, expected {columns} (one a column the ridge weighs)",
                    values.len()
                ));
            }
            if let Some(i) = values.iter().position(|v| !v.is_finite()) {
                return Err(format!("key `{key}.{name}`: value {} is not finite", i + 1));
            }
        }
        if let Some(i) = self.scale.iter().position(|s| *s <= 0.0) {
            return Err(format!(
                "key `{key}.scale`: value {} is {}, expected a positive standard deviation",
                i + 1,
                self.scale[i]
            ));
        }
        if !self.intercept.is_finite() {
            return Err(format!("key `{key}.intercept`: not finite"));
        }
        Ok(())
    }

    pub fn predict(&self, row: &[f64]) -> f64 {
        self.intercept
            + row
                .iter()
                .zip(&self.coefficients)
                .enumerate()
                .map(|(j, (v, b))| b * (v - self.mean[j]) / self.scale[j])
                .sum::<f64>()
    }
}

/// The launches a fit may use: of each kernel at most [`LAUNCHES_PER_KERNEL`], evenly spread.
fn thinned_launches(m: &Measurements, launch_ok: &dyn Fn(usize) -> bool) -> Vec<usize> {
    let mut per_kernel: Vec<Vec<usize>> = vec![Vec::new(); m.kernels.len()];
    for (l, &(k, _)) in m.launches.iter().enumerate() {
        if launch_ok(l) {
            per_kernel[k].push(l);
        }
    }
    let mut out = Vec::new();
    for launches in per_kernel {
        let step = launches.len().div_ceil(LAUNCHES_PER_KERNEL).max(1);
        out.extend(launches.into_iter().step_by(step));
    }
    out
}

/// What a transfer ridge's log times are taken against (docs/methods.md, section 6, "Physics
/// first"). [`TransferModel::fit`] keeps the log time; [`TransferModel::fit_choosing_base`]
/// chooses by a nested cross-validation over the training GPUs alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransferBase {
    /// The log time itself: the ridge learns how a launch's time moves with the device
    /// features between GPUs.
    #[default]
    Time,
    /// The log of the time over the physics model's time of the launch on its GPU (from its
    /// profile, over the GPU's catalogue rates): the ridge learns a correction to the physics
    /// model's ratio between two GPUs.
    Physics,
    /// The physics model's ratio alone (the ridge's coefficients all zero): no correction
    /// earned its place.
    PhysicsOnly,
}

impl TransferBase {
    pub const ALL: [TransferBase; 3] = [Self::Time, Self::Physics, Self::PhysicsOnly];

    /// The log time a ridge of this base subtracts from a launch's log time on `gpu`.
    fn offset(self, work: &Work, gpu: &GpuSpec) -> f64 {
        match self {
            Self::Time => 0.0,
            Self::Physics | Self::PhysicsOnly => catalogue_physics_secs(work, gpu).ln(),
        }
    }
}

/// One training cell as the fits read it: its cell, launch and GPU, its device features, its
/// log time and the physics model's log time of it.
struct TrainingRow {
    /// Its cell in [`Measurements::cells`].
    cell: usize,
    launch: usize,
    gpu: usize,
    features: [f64; 11],
    ln_secs: f64,
    ln_physics_secs: f64,
}

/// The rows of each launch: `rows` holds a launch's rows one after another.
fn launch_spans(rows: &[TrainingRow]) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        if i == rows.len() || rows[i].launch != rows[start].launch {
            spans.push(start..i);
            start = i;
        }
    }
    spans
}

/// The cells `train` accepts of the launches with two such cells or more (thinned), as rows.
fn training_rows(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Vec<TrainingRow> {
    let mut rows = Vec::new();
    for l in launches_on_two_gpus(m, train) {
        for (cell, c) in m.by_launch[l]
            .iter()
            .map(|&i| (i, &m.cells[i]))
            .filter(|(_, c)| train(c))
        {
            rows.push(TrainingRow {
                cell,
                launch: l,
                gpu: c.gpu,
                features: device_features(&c.work, &m.gpus[c.gpu]),
                ln_secs: c.secs.ln(),
                ln_physics_secs: TransferBase::Physics.offset(&c.work, &m.gpus[c.gpu]),
            });
        }
    }
    rows
}

/// One launch's `rows` in `groups` (cleared first): one group per architecture with
/// `by_architecture`, else one.
fn group_rows<'r>(
    m: &'r Measurements,
    rows: impl Iterator<Item = &'r TrainingRow>,
    by_architecture: bool,
    groups: &mut Vec<(&'r str, Vec<&'r TrainingRow>)>,
) {
    groups.clear();
    for r in rows {
        let key = if by_architecture {
            m.gpus[r.gpu].architecture.as_str()
        } else {
            ""
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(r),
            None => groups.push((key, vec![r])),
        }
    }
}

/// Fits the fixed-effects regression on `rows` (those of GPU `without` left out), one effect
/// per launch (and per architecture, with `by_architecture`): the features and log times (less
/// the physics model's, for a physics base) are centred within each group of two rows or more,
/// so the fit sees only how one launch's time differs between GPUs.
fn fit_within(
    m: &Measurements,
    rows: &[TrainingRow],
    by_architecture: bool,
    base: TransferBase,
    without: Option<usize>,
) -> Result<Ridge, ModelError> {
    let p = DEVICE_FEATURES.len();
    if base == TransferBase::PhysicsOnly {
        return Ok(Ridge::none(p));
    }
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut groups = Vec::new();
    for span in launch_spans(rows) {
        let kept = rows[span].iter().filter(|r| {
            Some(r.gpu) != without && (base == TransferBase::Time || r.ln_physics_secs.is_finite())
        });
        group_rows(m, kept, by_architecture, &mut groups);
        for (_, group) in groups.iter().filter(|(_, g)| g.len() >= 2) {
            let target = |r: &TrainingRow| match base {
                TransferBase::Time => r.ln_secs,
                _ => r.ln_secs - r.ln_physics_secs,
            };
            let n = group.len() as f64;
            let mean_y = group.iter().map(|r| target(r)).sum::<f64>() / n;
            let mean_x: Vec<f64> = (0..p)
                .map(|j| group.iter().map(|r| r.features[j]).sum::<f64>() / n)
                .collect();
            for r in group {
                y.push(target(r) - mean_y);
                x.extend((0..p).map(|j| r.features[j] - mean_x[j]));
            }
        }
    }
    Ridge::fit(&x, p, &y, false)
}

/// The ridges of [`TransferBase::Time`] and [`TransferBase::Physics`] fitted on `rows` without
/// GPU `held` (rows whose physics time is not finite left out of both, so both see the same
/// design), as [`fit_within`] fits them, from the design's sums: one pass builds X'X and both
/// X'y, and [`Ridge::from_sums`] solves each. `None` with too few rows.
fn inner_ridges(
    m: &Measurements,
    rows: &[TrainingRow],
    spans: &[std::ops::Range<usize>],
    by_architecture: bool,
    held: usize,
) -> Option<(Ridge, Ridge)> {
    const P: usize = DEVICE_FEATURES.len();
    let mut gram = vec![0.0; P * P];
    let (mut xty_time, mut xty_physics) = (vec![0.0; P], vec![0.0; P]);
    let mut n = 0;
    let mut groups = Vec::new();
    for span in spans {
        let kept = rows[span.clone()]
            .iter()
            .filter(|r| r.gpu != held && r.ln_physics_secs.is_finite());
        group_rows(m, kept, by_architecture, &mut groups);
        for (_, group) in groups.iter().filter(|(_, g)| g.len() >= 2) {
            let k = group.len() as f64;
            let mean_time = group.iter().map(|r| r.ln_secs).sum::<f64>() / k;
            let mean_physics = group
                .iter()
                .map(|r| r.ln_secs - r.ln_physics_secs)
                .sum::<f64>()
                / k;
            let mut mean_x = [0.0; P];
            for r in group {
                for (m, f) in mean_x.iter_mut().zip(&r.features) {
                    *m += f / k;
                }
            }
            for r in group {
                let x: [f64; P] = std::array::from_fn(|j| r.features[j] - mean_x[j]);
                let y_time = r.ln_secs - mean_time;
                let y_physics = r.ln_secs - r.ln_physics_secs - mean_physics;
                for i in 0..P {
                    xty_time[i] += x[i] * y_time;
                    xty_physics[i] += x[i] * y_physics;
                    for j in 0..P {
                        gram[i * P + j] += x[i] * x[j];
                    }
                }
                n += 1;
            }
        }
    }
    Some((
        Ridge::from_sums(&gram, &xty_time, n, RIDGE_LAMBDA)?,
        Ridge::from_sums(&gram, &xty_physics, n, RIDGE_LAMBDA)?,
    ))
}

/// The base a nested cross-validation chooses for one of the transfer model's ridges: each
/// training GPU in turn is left out, each base's ridge is fitted on the other GPUs' rows and
/// predicts the left-out GPU's rows from the same launches on the GPUs the ridge would answer
/// from (those of its architecture with `by_architecture`, else those of the others), and the
/// base with the smallest pooled median |log error| is kept. Ties, and nothing to check (a
/// single GPU, or no GPU of another architecture for the model across them), keep
/// [`TransferBase::Time`].
fn chosen_base(m: &Measurements, rows: &[TrainingRow], by_architecture: bool) -> TransferBase {
    let mut gpus: Vec<usize> = rows.iter().map(|r| r.gpu).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let mut errors: Vec<Vec<f64>> = vec![Vec::new(); TransferBase::ALL.len()];
    let spans = launch_spans(rows);
    for &held in &gpus {
        let Some((time, physics)) = inner_ridges(m, rows, &spans, by_architecture, held) else {
            // Too few rows without this GPU to fit: it cannot be checked.
            continue;
        };
        let ridges = [time, physics, Ridge::none(DEVICE_FEATURES.len())];
        // The sources the ridge answers from when it is used: the model within architectures
        // answers from GPUs of the target's architecture, the model across them only where no
        // such GPU measured the launch, so from GPUs of the others.
        let usable = |r: &TrainingRow| {
            (m.gpus[r.gpu].architecture == m.gpus[held].architecture) == by_architecture
        };
        for span in &spans {
            let launch_rows = &rows[span.clone()];
            let Some(target) = launch_rows.iter().find(|r| r.gpu == held) else {
                continue;
            };
            let sources: Vec<&TrainingRow> = launch_rows
                .iter()
                .filter(|r| r.gpu != held && usable(r) && r.ln_physics_secs.is_finite())
                .collect();
            if sources.is_empty() {
                continue;
            }
            // The left-out GPU's features and physics time of the sources' median profile, as
            // [`predict_ln_secs`] takes them (the left-out GPU's own profile is not used),
            // computed once for every base.
            let works: Vec<&Work> = sources.iter().map(|r| &m.cells[r.cell].work).collect();
            let work = match works.as_slice() {
                [one] => **one,
                _ => Work::median_of(&works),
            };
            let target_features = device_features(&work, &m.gpus[held]);
            let target_physics = TransferBase::Physics.offset(&work, &m.gpus[held]);
            if !target_physics.is_finite() {
                continue;
            }
            // Scored only where every base answers, so that each is judged on the same rows.
            for ((base, ridge), errs) in TransferBase::ALL.iter().zip(&ridges).zip(&mut errors) {
                let offset = |ln_physics: f64| {
                    if *base == TransferBase::Time {
                        0.0
                    } else {
                        ln_physics
                    }
                };
                let mut effects: Vec<f64> = sources
                    .iter()
                    .map(|r| r.ln_secs - offset(r.ln_physics_secs) - ridge.predict(&r.features))
                    .collect();
                let predicted =
                    median(&mut effects) + offset(target_physics) + ridge.predict(&target_features);
                errs.push((predicted - target.ln_secs).abs());
            }
        }
    }
    if gpus.len() < 2 || errors[0].is_empty() {
        return TransferBase::Time;
    }
    let medians: Vec<f64> = errors.iter_mut().map(|e| median(e)).collect();
    TransferBase::ALL
        .iter()
        .zip(&medians)
        .fold((TransferBase::Time, medians[0]), |best, (&b, &v)| {
            if v < best.1 { (b, v) } else { best }
        })
        .0
}

/// A launch's log time on `target` from `sources` through one ridge of `base`: the launch's
/// effect estimated from each source (its log time less its offset and the ridge's part), their
/// median, plus the target's offset and ridge part of the sources' median profile.
fn predict_ln_secs(
    ridge: &Ridge,
    base: TransferBase,
    target: &GpuSpec,
    sources: &[Source<'_>],
) -> Option<f64> {
    if sources.is_empty() {
        return None;
    }
    let mut effects: Vec<f64> = sources
        .iter()
        .map(|s| {
            s.secs.ln()
                - base.offset(s.work, s.gpu)
                - ridge.predict(&device_features(s.work, s.gpu))
        })
        .collect();
    let effect = median(&mut effects);
    let work = match sources {
        [one] => *one.work,
        _ => Work::median_of(&sources.iter().map(|s| s.work).collect::<Vec<_>>()),
    };
    Some(effect + base.offset(&work, target) + ridge.predict(&device_features(&work, target)))
}

/// The thinned launches with two cells or more that `train` accepts: those that say how one
/// launch's time differs between GPUs.
fn launches_on_two_gpus(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Vec<usize> {
    let launch_ok = |l: usize| {
        m.by_launch[l]
            .iter()
            .filter(|&&c| train(&m.cells[c]))
            .count()
            >= 2
    };
    thinned_launches(m, &launch_ok)
}

/// The fixed-effects transfer model (the module docs), twice: fitted within architectures (used
/// where a GPU of the target's architecture measured the launch) and across them (where none
/// did), each over its base: the log time, unless fitted by
/// [`TransferModel::fit_choosing_base`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TransferModel {
    pub within_architecture: Option<Ridge>,
    pub across_architectures: Ridge,
    #[serde(default)]
    pub within_base: TransferBase,
    #[serde(default)]
    pub across_base: TransferBase,
}

impl TransferModel {
    /// Fits on the cells `train` accepts; a launch counts where it has two such cells or more.
    /// Both ridges learn the log times themselves ([`TransferBase::Time`]).
    pub fn fit(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Result<Self, ModelError> {
        Self::fit_with(m, train, false)
    }

    /// [`TransferModel::fit_choosing_base`] with `choose_base`, else [`TransferModel::fit`].
    pub fn fit_with(
        m: &Measurements,
        train: &dyn Fn(&Cell) -> bool,
        choose_base: bool,
    ) -> Result<Self, ModelError> {
        let rows = training_rows(m, train);
        let base = |by_architecture| {
            if choose_base {
                chosen_base(m, &rows, by_architecture)
            } else {
                TransferBase::Time
            }
        };
        let (within_base, across_base) = (base(true), base(false));
        Ok(Self {
            within_architecture: fit_within(m, &rows, true, within_base, None).ok(),
            across_architectures: fit_within(m, &rows, false, across_base, None)?,
            within_base,
            across_base,
        })
    }

    /// The same, each ridge over the base a nested cross-validation on the same cells chooses
    /// (`chosen_base`): the learned correction of the physics model's ratio, the ratio alone,
    /// or the times themselves, whichever predicted the training GPUs best when each was left
    /// out in turn. Nothing of the launches it will predict enters the choice.
    pub fn fit_choosing_base(
        m: &Measurements,
        train: &dyn Fn(&Cell) -> bool,
    ) -> Result<Self, ModelError> {
        Self::fit_with(m, train, true)
    }

    /// A transfer model read back (key `transfer`): both ridges weigh the device features.
    pub fn check_saved(&self) -> Result<(), String> {
        if let Some(r) = &self.within_architecture {
            r.check_saved("transfer.within_architecture", DEVICE_FEATURES.len())?;
        }
        self.across_architectures
            .check_saved("transfer.across_architectures", DEVICE_FEATURES.len())
    }

    /// The time of a launch on `target` from its `sources` (the same launch measured on other
    /// GPUs of `m`, each with its own profile). `None` without a source.
    pub fn predict(&self, m: &Measurements, target: &GpuSpec, sources: &[&Cell]) -> Option<f64> {
        let sources: Vec<Source<'_>> = sources
            .iter()
            .map(|c| Source {
                secs: c.secs,
                work: &c.work,
                gpu: &m.gpus[c.gpu],
            })
            .collect();
        self.predict_from(target, &sources).map(|(secs, _)| secs)
    }

    /// The same from sources anywhere, and whether the model within architectures answered
    /// (`predict_ln_secs`). Sources of the target's architecture, where there are any, are
    /// used alone, with the model fitted within architectures.
    pub fn predict_from(&self, target: &GpuSpec, sources: &[Source<'_>]) -> Option<(f64, bool)> {
        let same: Vec<Source<'_>> = sources
            .iter()
            .copied()
            .filter(|s| s.gpu.architecture == target.architecture)
            .collect();
        let (ridge, base, within, sources) = match &self.within_architecture {
            Some(r) if !same.is_empty() => (r, self.within_base, true, same.as_slice()),
            _ => (&self.across_architectures, self.across_base, false, sources),
        };
        let secs = predict_ln_secs(ridge, base, target, sources)?.exp();
        Some((secs, within))
    }
}

/// A launch measured on some GPU: its time, its profile and the GPU.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    pub secs: f64,
    pub work: &'a Work,
    pub gpu: &'a GpuSpec,
}

/// The events whose counts [`CostModel`] prices, in order.
pub const COST_EVENTS: &[&str] = &[
    "launch",
    "warp_instructions",
    "dram_transactions",
    "l2_transactions",
    "shared_transactions",
    "global_load_transactions",
    "global_store_transactions",
    "blocks",
];

/// The event counts of a launch, in the order of [`COST_EVENTS`].
pub fn cost_events(work: &Work) -> [f64; 8] {
    [
        1.0,
        work.warp_instructions,
        work.dram_bytes / super::DRAM_TRANSACTION_BYTES,
        work.l2_transactions,
        work.shared_transactions,
        work.global_loads,
        work.global_stores,
        work.blocks,
    ]
}

/// Non-negative least squares by cyclic coordinate descent on the normal equations `g x = h`
/// (`g` p x p, row-major): each coordinate in turn set to its best non-negative value. For the
/// handful of columns here it converges in a few hundred sweeps.
pub fn nonnegative_least_squares(g: &[f64], h: &[f64]) -> Vec<f64> {
    let p = h.len();
    let mut x = vec![0.0; p];
    for _ in 0..2000 {
        let mut change = 0.0f64;
        for j in 0..p {
            if g[j * p + j] <= 0.0 {
                continue;
            }
            let gradient: f64 = (0..p).map(|k| g[j * p + k] * x[k]).sum::<f64>() - h[j];
            let next = (x[j] - gradient / g[j * p + j]).max(0.0);
            change = change.max((next - x[j]).abs() * g[j * p + j].sqrt());
            x[j] = next;
        }
        if change < 1e-12 {
            break;
        }
    }
    x
}

/// A launch's time on one GPU as the sum of its events' counts times a non-negative cost per
/// event of that GPU (docs/methods.md, section 6): the seed's linear counter regression with
/// the costs held non-negative (no negative time) and fitted to the relative error (a
/// microsecond kernel counts as much as a second-long one). Each kernel weighs the same in the
/// fit, whatever its number of launches (rows weighted by 1 / sqrt(launches)).
#[derive(Debug, Clone)]
pub struct CostModel {
    /// Per GPU of the measurements: its costs in seconds per event, where it had training rows.
    pub costs: Vec<Option<Vec<f64>>>,
}

impl CostModel {
    pub fn fit(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Self {
        let p = COST_EVENTS.len();
        let costs = (0..m.gpus.len())
            .map(|g| {
                let rows: Vec<&Cell> = m.cells.iter().filter(|c| c.gpu == g && train(c)).collect();
                let mut per_kernel = vec![0usize; m.kernels.len()];
                rows.iter().for_each(|c| per_kernel[c.kernel] += 1);
                if per_kernel.iter().filter(|&&n| n > 0).count() < 2 {
                    return None;
                }
                let events: Vec<[f64; 8]> = rows.iter().map(|c| cost_events(&c.work)).collect();
                // Columns scaled to unit size for the solver, scaled back after.
                let mut scale = vec![0.0f64; p];
                for (c, e) in rows.iter().zip(&events) {
                    for j in 0..p {
                        scale[j] = scale[j].max(e[j] / c.secs);
                    }
                }
                let (mut gram, mut rhs) = (vec![0.0; p * p], vec![0.0; p]);
                for (c, e) in rows.iter().zip(&events) {
                    let w = 1.0 / per_kernel[c.kernel] as f64;
                    let a: Vec<f64> = (0..p)
                        .map(|j| {
                            if scale[j] > 0.0 {
                                e[j] / c.secs / scale[j]
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    for j in 0..p {
                        rhs[j] += w * a[j];
                        for k in 0..p {
                            gram[j * p + k] += w * a[j] * a[k];
                        }
                    }
                }
                let x = nonnegative_least_squares(&gram, &rhs);
                Some(
                    x.iter()
                        .zip(&scale)
                        .map(|(v, s)| if *s > 0.0 { v / s } else { 0.0 })
                        .collect(),
                )
            })
            .collect();
        Self { costs }
    }

    /// The time of `work` on GPU `gpu`; `None` where the GPU had no fit or the priced events
    /// sum to no time.
    pub fn predict(&self, work: &Work, gpu: usize) -> Option<f64> {
        let costs = self.costs[gpu].as_ref()?;
        let secs: f64 = cost_events(work)
            .iter()
            .zip(costs)
            .map(|(n, c)| n * c)
            .sum();
        (secs > 0.0 && secs.is_finite()).then_some(secs)
    }
}

/// The tree ensemble of the transfer model: a random forest (the `randomforest` crate) of the
/// log time ratio between two GPUs of one launch, ln T(k, B) - ln T(k, A), on the pair's
/// device-normalised features (B's minus A's, and A's) and whether they share an architecture.
/// A new GPU's time is the median over the sources of ln T(k, A) plus the forest's ratio.
#[cfg(not(target_arch = "wasm32"))]
pub struct ForestTransfer {
    forest: randomforest::RandomForestRegressor,
}

#[cfg(not(target_arch = "wasm32"))]
impl std::fmt::Debug for ForestTransfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForestTransfer").finish_non_exhaustive()
    }
}

/// Trees of the forest, and the rows each is grown on: enough for the few hundred launches a
/// fold has, few enough that the 64 fits of a scheme stay within seconds.
#[cfg(not(target_arch = "wasm32"))]
pub const FOREST_TREES: usize = 24;
#[cfg(not(target_arch = "wasm32"))]
pub const FOREST_SAMPLES: usize = 3000;

#[cfg(not(target_arch = "wasm32"))]
fn pair_row(a: &Source<'_>, target: &GpuSpec, b_features: &[f64; 11]) -> Vec<f64> {
    let fa = device_features(a.work, a.gpu);
    let mut row: Vec<f64> = (0..fa.len()).map(|j| b_features[j] - fa[j]).collect();
    row.extend(fa);
    row.push(f64::from(u8::from(
        a.gpu.architecture == target.architecture,
    )));
    row
}

#[cfg(not(target_arch = "wasm32"))]
impl ForestTransfer {
    /// Fits on the ordered pairs of cells `train` accepts, of the thinned launches.
    pub fn fit(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Result<Self, ModelError> {
        use std::num::NonZeroUsize;
        let mut table = randomforest::table::TableBuilder::new();
        let mut rows = 0usize;
        for l in launches_on_two_gpus(m, train) {
            let cells: Vec<&Cell> = m.by_launch[l]
                .iter()
                .map(|&c| &m.cells[c])
                .filter(|c| train(c))
                .collect();
            for b in &cells {
                let fb = device_features(&b.work, &m.gpus[b.gpu]);
                for a in cells.iter().filter(|a| a.gpu != b.gpu) {
                    let source = Source {
                        secs: a.secs,
                        work: &a.work,
                        gpu: &m.gpus[a.gpu],
                    };
                    let row = pair_row(&source, &m.gpus[b.gpu], &fb);
                    table
                        .add_row(&row, b.secs.ln() - a.secs.ln())
                        .map_err(|e| ModelError::invalid(format!("forest rows: {e}")))?;
                    rows += 1;
                }
            }
        }
        let table = table
            .build()
            .map_err(|e| ModelError::invalid(format!("forest training table: {e}")))?;
        let (Some(trees), Some(samples)) = (
            NonZeroUsize::new(FOREST_TREES),
            NonZeroUsize::new(FOREST_SAMPLES.min(rows.max(1))),
        ) else {
            return Err(ModelError::invalid("an empty forest".to_owned()));
        };
        let forest = randomforest::RandomForestRegressorOptions::new()
            .seed(0)
            .trees(trees)
            .max_samples(samples)
            .fit(randomforest::criterion::Mse, table);
        Ok(Self { forest })
    }

    /// The time of a launch on `target` from its `sources` (those of the target's architecture
    /// alone where there are any). `None` without a source.
    pub fn predict_from(&self, target: &GpuSpec, sources: &[Source<'_>]) -> Option<f64> {
        let same: Vec<Source<'_>> = sources
            .iter()
            .copied()
            .filter(|s| s.gpu.architecture == target.architecture)
            .collect();
        let sources = if same.is_empty() { sources } else { &same };
        let mut estimates: Vec<f64> = sources
            .iter()
            .map(|a| {
                let fb = device_features(a.work, target);
                a.secs.ln() + self.forest.predict(&pair_row(a, target, &fb))
            })
            .collect();
        (!estimates.is_empty()).then(|| crate::median(&mut estimates).exp())
    }
}
