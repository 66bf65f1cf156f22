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
use yosoku_regression::{OlsOptions, ols};

use super::data::{Cell, Measurements, Work};
use super::gpu::{DEVICE_FEATURES, GpuSpec, device_features};
use crate::ModelError;

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

    /// Each column's coefficient per unit of the column, and per standard deviation of it.
    pub fn coefficients(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.coefficients
            .iter()
            .zip(&self.scale)
            .map(|(b, s)| (b / s, *b))
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

/// Fits the fixed-effects regression on the cells `train` accepts, one effect per launch (and
/// per architecture, with `by_architecture`): the features and log times are centred within
/// each group of two cells or more, so the fit sees only how one launch's time differs
/// between GPUs.
fn fit_within(
    m: &Measurements,
    train: &dyn Fn(&Cell) -> bool,
    by_architecture: bool,
) -> Result<Ridge, ModelError> {
    let p = DEVICE_FEATURES.len();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for l in launches_on_two_gpus(m, train) {
        let mut groups: Vec<(&str, Vec<&Cell>)> = Vec::new();
        for c in m.by_launch[l]
            .iter()
            .map(|&c| &m.cells[c])
            .filter(|c| train(c))
        {
            let key = if by_architecture {
                m.gpus[c.gpu].architecture.as_str()
            } else {
                ""
            };
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push(c),
                None => groups.push((key, vec![c])),
            }
        }
        for (_, cells) in groups.iter().filter(|(_, g)| g.len() >= 2) {
            let rows: Vec<[f64; 11]> = cells
                .iter()
                .map(|c| device_features(&c.work, &m.gpus[c.gpu]))
                .collect();
            let n = cells.len() as f64;
            let mean_y = cells.iter().map(|c| c.secs.ln()).sum::<f64>() / n;
            let mean_x: Vec<f64> = (0..p)
                .map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n)
                .collect();
            for (c, r) in cells.iter().zip(&rows) {
                y.push(c.secs.ln() - mean_y);
                x.extend((0..p).map(|j| r[j] - mean_x[j]));
            }
        }
    }
    Ridge::fit(&x, p, &y, false)
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
/// did).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TransferModel {
    pub within_architecture: Option<Ridge>,
    pub across_architectures: Ridge,
}

impl TransferModel {
    /// Fits on the cells `train` accepts; a launch counts where it has two such cells or more.
    pub fn fit(m: &Measurements, train: &dyn Fn(&Cell) -> bool) -> Result<Self, ModelError> {
        Ok(Self {
            within_architecture: fit_within(m, train, true).ok(),
            across_architectures: fit_within(m, train, false)?,
        })
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

    /// The same from sources anywhere, and whether the model within architectures answered:
    /// the launch's effect estimated from each source, their median, plus the target's
    /// features of the sources' median profile. Sources of the target's architecture, where
    /// there are any, are used alone, with the model fitted within architectures.
    pub fn predict_from(&self, target: &GpuSpec, sources: &[Source<'_>]) -> Option<(f64, bool)> {
        let same: Vec<Source<'_>> = sources
            .iter()
            .copied()
            .filter(|s| s.gpu.architecture == target.architecture)
            .collect();
        let (ridge, within, sources) = match &self.within_architecture {
            Some(r) if !same.is_empty() => (r, true, same.as_slice()),
            _ => (&self.across_architectures, false, sources),
        };
        if sources.is_empty() {
            return None;
        }
        let mut effects: Vec<f64> = sources
            .iter()
            .map(|s| s.secs.ln() - ridge.predict(&device_features(s.work, s.gpu)))
            .collect();
        let effect = crate::median(&mut effects);
        let work = match sources {
            [one] => *one.work,
            _ => Work::median_of(&sources.iter().map(|s| s.work).collect::<Vec<_>>()),
        };
        let secs = (effect + ridge.predict(&device_features(&work, target))).exp();
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
