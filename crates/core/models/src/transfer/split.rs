//! A fixed split of GPUs, as a published study draws it (NeuSight's: train on P4, P100, T4, V100
//! and A100-40GB, predict H100, L4 and A100-80GB): every launch of a test GPU predicted by the
//! latency-aware model fitted on the training GPUs and by each method that needs no fit, with
//! split-conformal intervals calibrated on the training GPUs alone, its error split by operator
//! group and by the launch's measured duration (docs/methods.md, section 6).
//!
//! The methods, each on the same rows where it answers:
//! - `roofline`: the work over the test GPU's datasheet peaks, max(FLOPs / FP32 peak, bytes /
//!   bandwidth); it needs no other GPU;
//! - `time_unchanged`, `cores_clock`, `wave_scaling`: the same launch (operator and dimensions)
//!   measured on the training GPUs, its time kept, scaled by the FP32 peaks, or by Habitat's wave
//!   scaling; the median over the training GPUs that measured it;
//! - `utilisation`: the latency-aware model of [`super::utilisation`], fitted on every launch of
//!   the training GPUs, from the launch's work and grid alone (no time of it measured anywhere);
//! - `utilisation_scaled`: the same model scaling the launch's times on the training GPUs (the
//!   median over them);
//! - `physics`: the physics model of [`super::physics`] over the test GPU's catalogue rates
//!   (nothing fitted, no time of the launch read); `floor_plus_bytes`: its baseline, the launch
//!   latency plus the bytes over the bandwidth; `physics_corrected`: the physics model with the
//!   learned correction of [`super::correction`], fitted on the training GPUs' launches and kept
//!   per group only where it helps there;
//! - `physics_scaled`: the launch's time on each training GPU that measured it times the physics
//!   model's ratio of the launch on the test GPU to the launch on that GPU (both over catalogue
//!   rates), the median over them; nothing fitted;
//! - `combined`: the geometric mean of `utilisation_scaled`, `physics_scaled` and `cores_clock`
//!   where each answers (the learned scaling, the physics' and the peaks', as `gpu_transfer`'s
//!   `combined` averages its ridge, the physics' and the peaks'); nothing more fitted.

use yosoku_devices::Catalogue;

use super::correction::PhysicsCorrection;
use super::data::{Cell, Measurements};
use super::gpu::{peak_scaling, wave_scaling};
use super::physics::{
    GpuRates, KernelWork, floor_plus_bytes_secs, physics_scaled_secs, physics_time,
};
use super::schemes::{combined_secs, conformal_half_width};
use super::utilisation::UtilisationModel;
use crate::ModelError;
use crate::median;

/// The methods, in report order.
pub const METHODS: [&str; 11] = [
    "roofline",
    "time_unchanged",
    "cores_clock",
    "wave_scaling",
    "utilisation",
    "utilisation_scaled",
    "physics",
    "floor_plus_bytes",
    "physics_corrected",
    "physics_scaled",
    "combined",
];

/// The measured-duration bands errors are split by: (name, from, to) in seconds.
pub const DURATION_BANDS: [(&str, f64, f64); 3] = [
    ("under 10 us", 0.0, 1e-5),
    ("10 to 100 us", 1e-5, 1e-4),
    ("over 100 us", 1e-4, f64::INFINITY),
];

/// One method's errors on one group of launches.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitScore {
    /// An operator group, `every launch`, or, where several GPUs are predicted, `every launch on
    /// <GPU>` (one test GPU's launches: which of them the errors come from).
    pub group: String,
    /// A band of [`DURATION_BANDS`], or `any duration`.
    pub band: String,
    pub method: &'static str,
    /// Test launches in the group and band, and those the method answered.
    pub rows: usize,
    pub answered: usize,
    pub mean_abs_error_pct: f64,
    pub median_abs_error_pct: f64,
    /// Share of the answered launches inside the method's interval (NaN without intervals).
    pub coverage_pct: f64,
    /// Over any duration (every group, every launch, each GPU's): the median signed error
    /// (positive: predicted slower than measured), and the median |error| left once each GPU's
    /// median ratio of predicted to measured time is divided out of its launches, what one
    /// number measured on each test GPU (a calibration, a reference launch) could at best leave
    /// of the method's error; NaN for the other groups and bands.
    pub median_signed_error_pct: f64,
    pub one_factor_error_pct: f64,
}

/// How a split is scored beyond its GPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitOptions {
    /// The coverage of the intervals (0.95).
    pub level: f64,
    /// The one training GPU whose times the methods that start from a measured time read (a
    /// user with one GPU's profile); every training GPU where `None`.
    pub profile_from: Option<usize>,
}

/// Every test launch's prediction by each method (None where it has none), and the half-width
/// of its interval in log time.
struct Predicted<'a> {
    cell: &'a Cell,
    group: String,
    secs: [Option<f64>; METHODS.len()],
    half_width: [Option<f64>; METHODS.len()],
}

/// The GPUs of `m` that `names` name: a catalogue name or alias (`T4`), or the data's own name;
/// an error names the one that has no launch in `m`.
pub fn gpus_named(
    m: &Measurements,
    catalogue: &Catalogue,
    names: &[String],
    role: &str,
) -> Result<Vec<usize>, ModelError> {
    names
        .iter()
        .map(|n| {
            let listed = catalogue.find(n).map(|d| d.name.as_str());
            (0..m.gpus.len())
                .find(|&g| {
                    Some(m.gpus[g].name.as_str()) == listed
                        || m.gpu_labels[g].eq_ignore_ascii_case(n)
                })
                .ok_or_else(|| {
                    ModelError::invalid(format!(
                        "{role} GPU `{n}` has no launch in the input (it has: {})",
                        m.gpu_labels.join(", ")
                    ))
                })
        })
        .collect()
}

/// The scores of every method on the launches of the `test` GPUs, from the `train` GPUs, by the
/// group `group_of` gives each kernel (operator), and by duration band.
pub fn score_split(
    m: &Measurements,
    train: &[usize],
    test: &[usize],
    group_of: &dyn Fn(&str) -> String,
    options: SplitOptions,
) -> Result<Vec<SplitScore>, ModelError> {
    if let Some(g) = test.iter().find(|g| train.contains(g)) {
        return Err(ModelError::invalid(format!(
            "GPU `{}` is both a training and a test GPU",
            m.gpu_labels[*g]
        )));
    }
    if let Some(g) = options.profile_from.filter(|g| !train.contains(g)) {
        return Err(ModelError::invalid(format!(
            "the profile's GPU `{}` is not a training GPU",
            m.gpu_labels[g]
        )));
    }
    summarise(m, predict(m, train, test, group_of, &|_| true, options)?)
}

/// Each of `gpus` in turn the test GPU and the others the training ones, the errors of all the
/// folds together; with `shared_only`, only the launches measured on every one of `gpus` (the
/// shapes a study measured on all its GPUs).
pub fn score_leave_one_out(
    m: &Measurements,
    gpus: &[usize],
    shared_only: bool,
    group_of: &dyn Fn(&str) -> String,
    level: f64,
) -> Result<Vec<SplitScore>, ModelError> {
    let options = SplitOptions {
        level,
        profile_from: None,
    };
    let shared = |c: &Cell| {
        !shared_only
            || gpus
                .iter()
                .all(|g| m.by_launch[c.launch].iter().any(|&s| m.cells[s].gpu == *g))
    };
    let mut predicted = Vec::new();
    for &held in gpus {
        let train: Vec<usize> = gpus.iter().copied().filter(|g| *g != held).collect();
        predicted.extend(predict(m, &train, &[held], group_of, &shared, options)?);
    }
    summarise(m, predicted)
}

/// Every launch of the `test` GPUs that `keep` accepts, predicted by each method with its
/// interval: each method's split-conformal half-width per group, from the training GPUs alone
/// (each left out in turn, predicted from the others).
fn predict<'a>(
    m: &'a Measurements,
    train: &[usize],
    test: &[usize],
    group_of: &dyn Fn(&str) -> String,
    keep: &dyn Fn(&Cell) -> bool,
    options: SplitOptions,
) -> Result<Vec<Predicted<'a>>, ModelError> {
    let mut predicted = predict_points(m, train, test, group_of, keep, options.profile_from)?;
    let mut residuals: Vec<(String, [Vec<f64>; METHODS.len()])> = Vec::new();
    if train.len() >= 2 {
        for &held in train {
            let inner: Vec<usize> = train.iter().copied().filter(|g| *g != held).collect();
            for p in predict_points(m, &inner, &[held], group_of, &|_| true, None)? {
                let at = match residuals.iter().position(|(g, _)| *g == p.group) {
                    Some(i) => i,
                    None => {
                        residuals.push((p.group.clone(), Default::default()));
                        residuals.len() - 1
                    }
                };
                for (k, secs) in p.secs.iter().enumerate() {
                    if let Some(s) = secs.filter(|s| *s > 0.0) {
                        residuals[at].1[k].push((s / p.cell.secs).ln().abs());
                    }
                }
            }
        }
    }
    // Each group's half-widths, once (not once per launch: each is a sort of its residuals).
    let widths: Vec<(String, [Option<f64>; METHODS.len()])> = residuals
        .into_iter()
        .map(|(group, r)| {
            let w = r.map(|residuals| conformal_half_width(residuals, options.level));
            (group, w)
        })
        .collect();
    for p in &mut predicted {
        if let Some((_, w)) = widths.iter().find(|(g, _)| *g == p.group) {
            p.half_width = *w;
        }
    }
    Ok(predicted)
}

/// Every launch of the `test` GPUs that `keep` accepts, predicted by each method, the learned
/// ones fitted on the `train` GPUs' launches; the methods that start from a measured time read
/// `profile_from`'s alone where it is given.
fn predict_points<'a>(
    m: &'a Measurements,
    train: &[usize],
    test: &[usize],
    group_of: &dyn Fn(&str) -> String,
    keep: &dyn Fn(&Cell) -> bool,
    profile_from: Option<usize>,
) -> Result<Vec<Predicted<'a>>, ModelError> {
    let model = UtilisationModel::fit(m, &|c| train.contains(&c.gpu), group_of)?;
    let correction = PhysicsCorrection::fit(m, &|c| train.contains(&c.gpu), group_of)?;
    Ok(m.cells
        .iter()
        .filter(|c| test.contains(&c.gpu) && keep(c))
        .map(|t| {
            let target = &m.gpus[t.gpu];
            let sources: Vec<&Cell> = m.by_launch[t.launch]
                .iter()
                .map(|&s| &m.cells[s])
                .filter(|s| train.contains(&s.gpu) && profile_from.is_none_or(|g| s.gpu == g))
                .collect();
            let over_sources = |f: &dyn Fn(&Cell) -> f64| {
                let mut v: Vec<f64> = sources
                    .iter()
                    .map(|s| f(s))
                    .filter(|x| x.is_finite())
                    .collect();
                (!v.is_empty()).then(|| median(&mut v))
            };
            let roofline = (t.work.flops / (target.fp32_peak_gflops * 1e9))
                .max(t.work.dram_bytes / target.bandwidth_bytes_per_sec());
            let group = group_of(&m.kernels[t.kernel]);
            let rates = GpuRates::from_spec(target);
            let work = KernelWork::from_work(&t.work);
            let cores_clock = over_sources(&|s| peak_scaling(s.secs, &m.gpus[s.gpu], target));
            let utilisation_scaled = over_sources(&|s| {
                model
                    .scaled(s.secs, &s.work, &m.gpus[s.gpu], target, &group)
                    .unwrap_or(f64::NAN)
            });
            let scaled = over_sources(&|s| {
                physics_scaled_secs(
                    s.secs,
                    &KernelWork::from_work(&s.work),
                    &GpuRates::from_spec(&m.gpus[s.gpu]),
                    &rates,
                )
            });
            let combined = combined_secs(
                [utilisation_scaled, scaled, cores_clock]
                    .into_iter()
                    .flatten(),
            );
            Predicted {
                cell: t,
                secs: [
                    (roofline > 0.0).then_some(roofline),
                    over_sources(&|s| s.secs),
                    cores_clock,
                    over_sources(&|s| wave_scaling(s.secs, &s.work, &m.gpus[s.gpu], target)),
                    model.secs(&t.work, target, &group),
                    utilisation_scaled,
                    Some(physics_time(&work, &rates).secs),
                    Some(floor_plus_bytes_secs(&work, &rates)),
                    correction.secs(&t.work, target, &group),
                    scaled,
                    combined,
                ],
                group,
                half_width: [None; METHODS.len()],
            }
        })
        .collect())
}

/// Each method's errors by group (and over every launch) and by duration band; where the launches
/// are of several GPUs, over each GPU's launches too (any duration).
fn summarise(
    m: &Measurements,
    predicted: Vec<Predicted<'_>>,
) -> Result<Vec<SplitScore>, ModelError> {
    if predicted.is_empty() {
        return Err(ModelError::invalid(
            "the test GPUs have no launch to predict".to_owned(),
        ));
    }
    let mut groups: Vec<String> = predicted.iter().map(|p| p.group.clone()).collect();
    groups.sort();
    groups.dedup();
    groups.push("every launch".to_owned());
    let mut bands: Vec<(&str, f64, f64)> = DURATION_BANDS.to_vec();
    bands.push(("any duration", 0.0, f64::INFINITY));
    let mut out = Vec::new();
    for group in &groups {
        for &(band, from, to) in &bands {
            let rows: Vec<&Predicted<'_>> = predicted
                .iter()
                .filter(|p| group == "every launch" || p.group == *group)
                .filter(|p| p.cell.secs >= from && p.cell.secs < to)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let bias = band == "any duration";
            for (k, method) in METHODS.iter().enumerate() {
                out.push(score(&rows, k, method, group, band, bias));
            }
        }
    }
    let mut gpus: Vec<usize> = predicted.iter().map(|p| p.cell.gpu).collect();
    gpus.sort_unstable();
    gpus.dedup();
    if gpus.len() > 1 {
        for g in gpus {
            let rows: Vec<&Predicted<'_>> = predicted.iter().filter(|p| p.cell.gpu == g).collect();
            let group = format!("every launch on {}", m.gpu_labels[g]);
            for (k, method) in METHODS.iter().enumerate() {
                out.push(score(&rows, k, method, &group, "any duration", true));
            }
        }
    }
    Ok(out)
}

/// Method `k`'s errors on `rows`; with `bias`, its bias on each GPU too ([`gpu_bias`]).
fn score(
    rows: &[&Predicted<'_>],
    k: usize,
    method: &'static str,
    group: &str,
    band: &str,
    bias: bool,
) -> SplitScore {
    let mut errors: Vec<f64> = rows
        .iter()
        .filter_map(|p| p.secs[k].map(|s| 100.0 * (s - p.cell.secs).abs() / p.cell.secs))
        .collect();
    let inside: Vec<bool> = rows
        .iter()
        .filter_map(|p| match (p.secs[k], p.half_width[k]) {
            (Some(s), Some(h)) => Some((s / p.cell.secs).ln().abs() <= h),
            _ => None,
        })
        .collect();
    let coverage_pct = if inside.is_empty() {
        f64::NAN
    } else {
        100.0 * inside.iter().filter(|i| **i).count() as f64 / inside.len() as f64
    };
    let answered = errors.len();
    let (mean, median_pct) = if answered > 0 {
        (
            errors.iter().sum::<f64>() / answered as f64,
            median(&mut errors),
        )
    } else {
        (f64::NAN, f64::NAN)
    };
    let (median_signed_error_pct, one_factor_error_pct) = if bias {
        gpu_bias(rows, k)
    } else {
        (f64::NAN, f64::NAN)
    };
    SplitScore {
        group: group.to_owned(),
        band: band.to_owned(),
        method,
        rows: rows.len(),
        answered,
        mean_abs_error_pct: mean,
        median_abs_error_pct: median_pct,
        coverage_pct,
        median_signed_error_pct,
        one_factor_error_pct,
    }
}

/// Method `k`'s bias on `rows`: the median signed error (%), and the median |error| (%) once
/// each GPU's median log ratio of predicted to measured time is divided out of its launches'
/// predictions. NaN where the method answered none.
fn gpu_bias(rows: &[&Predicted<'_>], k: usize) -> (f64, f64) {
    // (GPU, log ratio) of every launch the method answered.
    let answered: Vec<(usize, f64)> = rows
        .iter()
        .filter_map(|p| {
            let s = p.secs[k].filter(|s| *s > 0.0)?;
            Some((p.cell.gpu, (s / p.cell.secs).ln()))
        })
        .collect();
    super::bias::signed_and_one_factor(&answered)
}

#[cfg(test)]
mod tests {
    use super::super::tests::work;
    use super::*;

    fn cell(gpu: usize, secs: f64) -> Cell {
        Cell {
            row: 0,
            launch: 0,
            kernel: 0,
            gpu,
            secs,
            work: work(1e9, 1e6, 100.0),
        }
    }

    /// A method that errs on each GPU by a factor of its own: its signed error is the factor,
    /// and what is left with each GPU's factor divided out is the launches' own scatter.
    #[test]
    fn one_factor_per_gpu_divided_out_leaves_the_scatter_of_its_launches() {
        // GPU 0 predicted 1.5x its time, GPU 1 0.5x, each launch 10 % either way about it.
        let cells: Vec<Cell> = (0..2)
            .flat_map(|g| (0..5).map(move |i| cell(g, 1e-3 * (1.0 + i as f64))))
            .collect();
        let scatter = [1.1, 0.9, 1.0, 1.1, 0.9];
        let predicted: Vec<Predicted<'_>> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let factor = if c.gpu == 0 { 1.5 } else { 0.5 };
                let mut secs = [None; METHODS.len()];
                secs[4] = Some(c.secs * factor * scatter[i % 5]);
                Predicted {
                    cell: c,
                    group: "FC".to_owned(),
                    secs,
                    half_width: [None; METHODS.len()],
                }
            })
            .collect();
        let one: Vec<&Predicted<'_>> = predicted.iter().filter(|p| p.cell.gpu == 0).collect();
        let (signed, left) = gpu_bias(&one, 4);
        assert!((signed - 50.0).abs() < 1e-9, "{signed}");
        assert!((left - 10.0).abs() < 1e-9, "{left}");
        // Both GPUs together: the factors differ, the scatter left is the same.
        let both: Vec<&Predicted<'_>> = predicted.iter().collect();
        let (_, left) = gpu_bias(&both, 4);
        assert!((left - 10.0).abs() < 1e-9, "{left}");
        // A method that answered nothing has no bias.
        assert!(gpu_bias(&both, 0).0.is_nan());
    }
}
