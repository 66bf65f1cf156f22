//! The warm-up of a reduced run: per-iteration times, the change-point test that chooses how
//! many iterations to exclude, pooled over repeats, and the steady iterations of a loop.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;

use crate::{ModelError, median};

use super::input::{BlockRows, RankRun, no_iterations};
use super::loops::{Line, Occurrence, OccurrenceCount, changepoint_warmup, t975};
use super::spec::{DRIFT_PRIOR_PER_DOUBLING, TREND_T, Trend, Warmup};

/// Iterations of a rank: their count and the time of each.
pub(super) fn iteration_times(
    role: &str,
    run_id: &str,
    rank: i32,
    run: &RankRun,
) -> Result<Vec<f64>, ModelError> {
    let mut times: Vec<f64> = Vec::new();
    for e in run.executions() {
        if let Some(i) = e.iteration() {
            let i = i as usize;
            if times.len() <= i {
                times.resize(i + 1, 0.0);
            }
            times[i] += e.duration_secs;
        }
    }
    if times.is_empty() {
        return Err(no_iterations(role, run_id, rank));
    }
    Ok(times)
}

/// The warm-up iterations of a rank, and whether its times settled.
pub(super) fn warmup_iterations(times: &[f64], warmup: Warmup) -> Result<(usize, bool), String> {
    let k = times.len();
    match warmup {
        Warmup::Iterations(w) if w >= k => Err(format!(
            "warmup_iterations = {w} leaves none of the reduced run's {k} iterations to take the mean over"
        )),
        Warmup::Iterations(w) => Ok((w, true)),
        Warmup::ChangePoint => Ok(changepoint_warmup(times)),
        Warmup::Auto { tolerance } if !(tolerance.is_finite() && tolerance >= 0.0) => Err(format!(
            "warmup_tolerance = {tolerance}: expected a fraction >= 0 (0.1 = within 10 % of the steady time)"
        )),
        Warmup::Auto { tolerance } => {
            let mut tail = times[k / 2..].to_vec();
            let steady = median(&mut tail);
            let limit = k / 2;
            match times
                .iter()
                .take(limit + 1)
                .position(|t| (t - steady).abs() <= tolerance * steady)
            {
                Some(w) => Ok((w.min(limit), true)),
                None => Ok((limit, false)),
            }
        }
    }
}

/// The time of each loop iteration of a rank, without its periodic blocks (their spikes are
/// neither a warm-up nor noise of the steady iterations).
pub(super) fn loop_times(run: &RankRun, k: usize, occurrences: &LoopOccurrences) -> Vec<f64> {
    let mut times = vec![0.0; k];
    for e in run.executions() {
        if let Some(i) = e.iteration()
            && !occurrences.is_periodic(e.block())
        {
            times[i as usize] += e.duration_secs;
        }
    }
    times
}

/// One warm-up per rank for several repeats of one reduced run (each an `mpi_blocks` table of
/// one run, the same ranks): the change-point test on the median, iteration by iteration, of
/// their per-iteration times (as many iterations as the shortest has), so that every repeat
/// excludes the same iterations instead of each its own (docs/methods.md, section 3).
pub fn pooled_warmups(repeats: &[&RecordBatch]) -> Result<BTreeMap<i32, usize>, ModelError> {
    let mut series: BTreeMap<i32, Vec<Vec<f64>>> = BTreeMap::new();
    let mut first_ranks: Option<(String, Vec<i32>)> = None;
    for batch in repeats {
        let rows = BlockRows::new("warmup_from", batch)?;
        let (id, ranks) = rows.single_run()?;
        let these: Vec<i32> = ranks.keys().copied().collect();
        match &first_ranks {
            Some((first, r)) if *r != these => {
                return Err(ModelError::invalid(format!(
                    "input `warmup_from`: runs `{first}` and `{id}` have different ranks ({} and {}); repeats of one reduced run have the same",
                    r.len(),
                    these.len()
                )));
            }
            Some(_) => {}
            None => first_ranks = Some((id.to_owned(), these)),
        }
        for (rank, stretches) in ranks {
            let run = rows.rank_run(stretches);
            let k = iteration_times("warmup_from", id, *rank, &run)?.len();
            let occurrences = LoopOccurrences::of(&run, k);
            series
                .entry(*rank)
                .or_default()
                .push(loop_times(&run, k, &occurrences));
        }
    }
    Ok(series
        .into_iter()
        .map(|(rank, runs)| {
            let n = runs.iter().map(Vec::len).min().unwrap_or(0);
            let pooled: Vec<f64> = (0..n)
                .map(|i| {
                    let mut at: Vec<f64> = runs.iter().map(|t| t[i]).collect();
                    median(&mut at)
                })
                .collect();
            (rank, changepoint_warmup(&pooled).0)
        })
        .collect())
}

/// Each rank's per-iteration times (periodic blocks aside) of a shorter reduced run (an
/// `mpi_blocks` table of one run), for the two-length prediction: with the longer run's, every
/// steady iteration of both a point of the cost per iteration's line in the iteration index
/// (`SteadyIterations::two_lengths`; docs/methods.md, section 3).
pub fn shorter_run_times(shorter: &RecordBatch) -> Result<BTreeMap<i32, Vec<f64>>, ModelError> {
    let rows = BlockRows::new("shorter", shorter)?;
    let (id, ranks) = rows.single_run()?;
    ranks
        .iter()
        .map(|(rank, stretches)| {
            let run = rows.rank_run(stretches);
            let k = iteration_times("shorter", id, *rank, &run)?.len();
            let occurrences = LoopOccurrences::of(&run, k);
            Ok((*rank, loop_times(&run, k, &occurrences)))
        })
        .collect()
}

/// Which iterations each loop block ran in, and so which blocks are periodic (every k-th
/// iteration); both by [`Execution::block`].
pub(super) struct LoopOccurrences {
    /// How many iterations each block ran in (0 for blocks outside the loop).
    pub(super) present: Vec<u64>,
    pub(super) by_block: Vec<Option<Occurrence>>,
}

impl LoopOccurrences {
    pub(super) fn of(run: &RankRun, k: usize) -> Self {
        let mut counted = vec![OccurrenceCount::default(); run.names().len()];
        for e in run.executions() {
            if let Some(i) = e.iteration() {
                counted[e.block()].push(i as u64);
            }
        }
        Self {
            present: counted.iter().map(OccurrenceCount::count).collect(),
            by_block: counted
                .iter()
                .map(|c| (c.count() > 0).then(|| c.occurrence(k as u64)))
                .collect(),
        }
    }

    pub(super) fn is_periodic(&self, block: usize) -> bool {
        matches!(self.by_block[block], Some(Occurrence::Periodic { .. }))
    }
}

/// What the steady iterations say of the full run's extra ones: the line through their times
/// (a drift, extrapolated under `Trend::Linear`), the cost of an extra iteration relative to a
/// steady one, the 95 % interval of the extra iterations' total, and whether they show a steady
/// state that lasts (the stationarity test, docs/methods.md section 3).
pub(super) struct SteadyIterations {
    /// Iterations the full run makes beyond the reduced one.
    pub(super) extra: f64,
    /// Extra iterations cost `factor` times a steady one (1 without extrapolation).
    pub(super) factor: f64,
    pub(super) extrapolate: bool,
    pub(super) trend_pct_per_1000: Option<f64>,
    pub(super) interval_half_secs: f64,
    /// The stationarity test: how far, relative to a steady iteration, the cost of the full
    /// run's extra iterations may have drifted on average without the steady iterations
    /// showing it (their slope's 95 % interval carried to the extra iterations' mean index),
    /// at most [`DRIFT_PRIOR_PER_DOUBLING`] per doubling of the iterations.
    pub(super) drift_bound: f64,
    /// The 95 % half-width that drift adds to the extra iterations' total (0 when the line is
    /// extrapolated: its own interval holds it). It grows with the extrapolation: full over
    /// reduced iterations.
    pub(super) drift_half_secs: f64,
    /// With two lengths whose line was not better supported than the longer run alone: that
    /// line's slope t statistic (the prediction is then the longer run's, with its drift
    /// interval).
    pub(super) two_lengths_not_supported: Option<f64>,
}

/// Huber's tuning constant: residuals beyond this many standard deviations are down-weighted
/// (95 % efficiency under normal noise).
const HUBER_K: f64 = 1.345;

/// Reweighting rounds of the two-length line's robust fit.
const HUBER_ROUNDS: usize = 8;

/// The variance of one iteration's time about a slowly moving level: from the differences of
/// consecutive iterations (a drift cancels in them), by their median absolute deviation (a
/// spike moves it little): `(1.4826 MAD)^2 / 2`. Falls back to the variance about the mean
/// where the differences do not vary (beyond rounding: a millionth of the mean time).
fn iteration_noise(times: &[f64]) -> f64 {
    let n = times.len() as f64;
    let m = times.iter().sum::<f64>() / n.max(1.0);
    let diffs: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let centre = median(&mut diffs.clone());
    let mut deviations: Vec<f64> = diffs.iter().map(|d| (d - centre).abs()).collect();
    let mad = median(&mut deviations);
    if mad > 1e-6 * m.abs() && mad.is_finite() {
        return (1.4826 * mad).powi(2) / 2.0;
    }
    let v = times.iter().map(|t| (t - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    if v > 0.0 { v } else { f64::MIN_POSITIVE }
}

/// A straight line through the steady iterations of two runs of one configuration, every
/// iteration of both a point, weighted by its run's noise ([`iteration_noise`]) and robustly
/// (Huber's weights on the residuals), and what it says at the extra iterations' mean index.
struct TwoLengthLine {
    slope: f64,
    slope_t: f64,
    /// The line at the extra iterations' mean index, and that value's variance.
    at_extra: f64,
    at_extra_variance: f64,
    /// How far the residuals spread beyond the runs' noise (at least 1), squared.
    scale2: f64,
    points: usize,
    /// The weighted parabola through the same points: its mean over the extra iterations and
    /// its curvature's t (`None` with too few points or no residual freedom). Where |t| >
    /// [`TREND_T`] the iterations bend and the parabola predicts; below, it is the bend the runs
    /// cannot exclude.
    bend: Option<(f64, f64)>,
}

impl TwoLengthLine {
    /// `runs`: each run's first steady iteration's index and its steady times; the full run's
    /// extra iterations are `k..full`.
    fn fit(runs: &[(usize, &[f64])], k: usize, full: u64) -> Option<Self> {
        let extra_mean_x = (k as f64 + full as f64 - 1.0) / 2.0;
        let mut points: Vec<(f64, f64, f64)> = Vec::new();
        for (first, times) in runs {
            let noise = iteration_noise(times);
            points.extend(
                times
                    .iter()
                    .enumerate()
                    .map(|(j, t)| ((first + j) as f64, *t, noise)),
            );
        }
        let n = points.len();
        if n < 3 {
            return None;
        }
        let mut robust = vec![1.0; n];
        let mut fit = (0.0, 0.0, 0.0, 0.0, 0.0);
        for _ in 0..HUBER_ROUNDS {
            let w: Vec<f64> = points
                .iter()
                .zip(&robust)
                .map(|((_, _, v), h)| h / v)
                .collect();
            let total: f64 = w.iter().sum();
            let mean_x = points.iter().zip(&w).map(|((x, ..), w)| w * x).sum::<f64>() / total;
            let mean_y = points
                .iter()
                .zip(&w)
                .map(|((_, y, _), w)| w * y)
                .sum::<f64>()
                / total;
            let sxx: f64 = points
                .iter()
                .zip(&w)
                .map(|((x, ..), w)| w * (x - mean_x).powi(2))
                .sum();
            if sxx <= 0.0 {
                return None;
            }
            let slope = points
                .iter()
                .zip(&w)
                .map(|((x, y, _), w)| w * (x - mean_x) * (y - mean_y))
                .sum::<f64>()
                / sxx;
            fit = (slope, mean_x, mean_y, sxx, total);
            robust = points
                .iter()
                .map(|(x, y, v)| {
                    let r = (y - (mean_y + slope * (x - mean_x))).abs() / v.sqrt();
                    if r > HUBER_K { HUBER_K / r } else { 1.0 }
                })
                .collect();
        }
        let (slope, mean_x, mean_y, sxx, total) = fit;
        let weighted_rss: f64 = points
            .iter()
            .zip(&robust)
            .map(|((x, y, v), h)| h / v * (y - (mean_y + slope * (x - mean_x))).powi(2))
            .sum();
        let scale2 = (weighted_rss / (n - 2) as f64).max(1.0);
        let slope_se = (scale2 / sxx).sqrt();
        let weights: Vec<f64> = points
            .iter()
            .zip(&robust)
            .map(|((_, _, v), h)| h / v)
            .collect();
        Some(TwoLengthLine {
            slope,
            slope_t: slope / slope_se,
            at_extra: mean_y + slope * (extra_mean_x - mean_x),
            at_extra_variance: scale2 * (1.0 / total + (extra_mean_x - mean_x).powi(2) / sxx),
            scale2,
            points: n,
            bend: weighted_bend(&points, &weights, k, full, 0.0),
        })
    }
}

/// The weighted parabola through `points` (index, time, _) with `weights`: where its curvature
/// is significant (|t| > `threshold`), its mean over the extra iterations `k..full` (at most
/// 4,096 of them, evenly spread) and that t.
fn weighted_bend(
    points: &[(f64, f64, f64)],
    weights: &[f64],
    k: usize,
    full: u64,
    threshold: f64,
) -> Option<(f64, f64)> {
    let n = points.len();
    if n < 8 || full as usize <= k {
        return None;
    }
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, ..)| {
            (a.min(*x), b.max(*x))
        });
    // The index centred and scaled to -1..1: u and u^2 stay apart in a well-conditioned design.
    let (centre, half) = ((lo + hi) / 2.0, ((hi - lo) / 2.0).max(1.0));
    let u = |x: f64| (x - centre) / half;
    let design = faer::Mat::from_fn(n, 3, |i, c| {
        weights[i].sqrt() * u(points[i].0).powi(c as i32)
    });
    let y: Vec<f64> = points
        .iter()
        .zip(weights)
        .map(|((_, t, _), w)| w.sqrt() * t)
        .collect();
    let options = yosoku_regression::OlsOptions {
        intercept: false,
        leverage: false,
        ..yosoku_regression::OlsOptions::default()
    };
    let fit = yosoku_regression::ols(design.as_ref(), &y, &options).ok()?;
    let c = &fit.coefficients;
    let t = *fit.t_values.get(2)?;
    // A NaN t (no residual freedom) is no evidence of a bend either.
    if t.abs().partial_cmp(&threshold) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let step = ((full as usize - k) / 4096).max(1);
    let at: Vec<f64> = (k..full as usize)
        .step_by(step)
        .map(|x| {
            let v = u(x as f64);
            c[0] + c[1] * v + c[2] * v * v
        })
        .collect();
    Some((at.iter().sum::<f64>() / at.len() as f64, t))
}

/// The mean cost of iterations `k..full` under the parabola through `times` (iterations
/// `first..`, least squares) and its curvature's t statistic, where that is significant
/// (|t| > 2); `None` where it is not, or too few iterations to tell.
fn bend_beyond(first: usize, times: &[f64], k: usize, full: u64) -> Option<(f64, f64)> {
    let points: Vec<(f64, f64, f64)> = times
        .iter()
        .enumerate()
        .map(|(j, t)| ((first + j) as f64, *t, 1.0))
        .collect();
    weighted_bend(&points, &vec![1.0; points.len()], k, full, 2.0)
}

impl SteadyIterations {
    /// From the per-iteration `times` of a reduced run whose warm-up is the first `w`, for a
    /// full run of `full` iterations.
    pub(super) fn of(times: &[f64], w: usize, full: u64, trend: Trend) -> Self {
        let k = times.len();
        // The steady iterations: their line (drift), spread (interval).
        let line = Line::fit(w, &times[w..]);
        let steady_mean = line.at(line.mean_x);
        let extra = (full - k as u64) as f64;
        let extra_mean_x = (k as f64 + full as f64 - 1.0) / 2.0;
        let drifting = line.slope_t().abs() > TREND_T && steady_mean > 0.0;
        let trend_pct_per_1000 = drifting.then(|| 100.0 * line.slope * 1000.0 / steady_mean);
        let extrapolate = drifting && trend == Trend::Linear;
        let factor = if extrapolate && steady_mean > 0.0 {
            (line.at(extra_mean_x) / steady_mean).max(0.0)
        } else {
            1.0
        };
        // 95 % interval of the extra iterations' total: the mean's (or the line's) uncertainty,
        // carried over `extra` iterations, and the iterations' own spread.
        let n = line.n.max(1) as f64;
        let mean_variance = if extrapolate && line.sxx > 0.0 {
            line.variance * (1.0 / n + (extra_mean_x - line.mean_x).powi(2) / line.sxx)
        } else {
            line.variance / n
        };
        let spread = if extrapolate {
            line.variance
        } else {
            // Around the mean (the line's variance would hide a drift that is not extrapolated).
            let m = times[w..].iter().sum::<f64>() / n;
            times[w..].iter().map(|t| (t - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)
        };
        let interval_half_secs = t975(line.n.saturating_sub(1).max(1))
            * (extra * extra * mean_variance.max(spread / n) + extra * spread).sqrt();
        // The stationarity test: the slope the steady iterations cannot exclude (95 %), carried
        // from their mean index to the extra iterations' mean index, relative to a steady
        // iteration; and what it adds to the extra iterations' total.
        let reach = if extra == 0.0 {
            0.0
        } else if line.sxx > 0.0 {
            let slope_se = (line.variance / line.sxx).sqrt();
            t975(line.n.saturating_sub(2).max(1)) * slope_se * (extra_mean_x - line.mean_x)
        } else {
            f64::INFINITY
        };
        // What the data cannot exclude, but no more than the prior allows for the factor.
        let prior = DRIFT_PRIOR_PER_DOUBLING * (full as f64 / k.max(1) as f64).log2().max(0.0);
        let drift_bound = if steady_mean > 0.0 {
            ((line.slope.abs() * (extra_mean_x - line.mean_x) + reach) / steady_mean).min(prior)
        } else {
            prior
        };
        // An extrapolated line assumes the drift keeps its rate: where the steady iterations
        // bend (a parabola's curvature with |t| > 2), the parabola's mean over the extra
        // iterations differs from the line's; the interval adds that difference's 95 % bound
        // (it scales with the curvature: its standard error is the difference over |t|).
        let bend_secs = if extrapolate {
            bend_beyond(w, &times[w..], k, full)
                .map(|(b, t)| (b - line.at(extra_mean_x)) * (1.0 + t975(k) / t.abs()))
        } else {
            None
        };
        let drift_half_secs = match bend_secs {
            Some(bend) => extra * bend.abs(),
            None if extrapolate || steady_mean <= 0.0 => 0.0,
            None => extra * drift_bound * steady_mean,
        };
        let drift_bound = match bend_secs {
            Some(bend) if steady_mean > 0.0 => bend.abs() / steady_mean,
            _ => drift_bound,
        };
        Self {
            extra,
            factor,
            extrapolate,
            trend_pct_per_1000,
            interval_half_secs,
            drift_bound,
            drift_half_secs,
            two_lengths_not_supported: None,
        }
    }

    /// From two runs of one configuration: the longer's per-iteration `times` (warm-up the
    /// first `w`) and a `shorter` run's, for a full run of `full` iterations (docs/methods.md,
    /// section 3, "Two lengths"). The cost per iteration is a line through every steady
    /// iteration of both runs, each weighted by its run's noise and robustly
    /// ([`TwoLengthLine`]); it is extrapolated where its slope is significant (|t| >
    /// [`TREND_T`]) and its interval is narrower than the longer run's alone with the drift
    /// that run cannot exclude. Otherwise the prediction is the longer run's (its stationarity
    /// test and drift interval), and says why.
    pub(super) fn two_lengths(times: &[f64], shorter: &[f64], w: usize, full: u64) -> Self {
        let one = Self::of(times, w, full, Trend::Flag);
        let k = times.len();
        let steady = &times[w.min(k)..];
        let steady_mean = steady.iter().sum::<f64>() / steady.len().max(1) as f64;
        let short_steady = &shorter[w.min(shorter.len())..];
        let Some(line) = TwoLengthLine::fit(&[(w, steady), (w, short_steady)], k, full) else {
            return Self {
                two_lengths_not_supported: Some(0.0),
                ..one
            };
        };
        let long_noise = iteration_noise(steady) * line.scale2;
        let half = t975(line.points.saturating_sub(2).max(1))
            * (one.extra * one.extra * line.at_extra_variance + one.extra * long_noise).sqrt();
        // The line is better supported where its slope is significant and it pins the extra
        // iterations' cost down more narrowly than the longer run alone with the drift that
        // run cannot exclude.
        let supported = line.slope_t.abs() > TREND_T
            && steady_mean > 0.0
            && half < one.interval_half_secs + one.drift_half_secs;
        // Where the iterations bend (the curvature of the weighted parabola through them
        // significant), the cost of the extra iterations is the parabola's, and its interval
        // adds the curvature's 95 % bound on the difference from the line. Where they do not,
        // the line predicts, and its interval carries the bend the runs cannot exclude (the
        // parabola's difference from the line, plus its 95 % bound), as one length's carries the
        // drift its run cannot exclude, and bounded by the same prior: a bend beyond both runs
        // (a cost that quickens after them) is in no line's uncertainty.
        let prior = DRIFT_PRIOR_PER_DOUBLING * (full as f64 / k.max(1) as f64).log2().max(0.0);
        let (at_extra, bend_half) = match line.bend {
            Some((b, t)) if t.abs() > TREND_T => (b, (b - line.at_extra).abs() * t975(k) / t.abs()),
            Some((b, t)) => (
                line.at_extra,
                ((b - line.at_extra).abs() * (1.0 + t975(k) / t.abs())).min(prior * steady_mean),
            ),
            None => (line.at_extra, prior * steady_mean),
        };
        if !supported {
            return Self {
                trend_pct_per_1000: (steady_mean > 0.0)
                    .then(|| 100.0 * line.slope * 1000.0 / steady_mean),
                two_lengths_not_supported: Some(line.slope_t),
                ..one
            };
        }
        let factor = (at_extra / steady_mean).max(0.0);
        Self {
            extra: one.extra,
            factor,
            extrapolate: true,
            trend_pct_per_1000: Some(100.0 * line.slope * 1000.0 / steady_mean),
            interval_half_secs: half,
            drift_bound: (factor - 1.0).abs(),
            drift_half_secs: one.extra * bend_half,
            two_lengths_not_supported: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cost per iteration that rises on a line through both runs and bends a little, too
    /// little for the runs to show it (1 + 0.01 i + 1e-6 i^2, noise of +-0.005 s; the
    /// curvature's |t| below the 3 the parabola needs to predict): the line predicts, short of
    /// the bent total, and its interval carries the bend the runs cannot exclude, which holds
    /// that total where the line's own uncertainty alone would not; at most the stationarity
    /// test's prior (23 % of a steady iteration for 80 measured of 400).
    #[test]
    fn a_line_through_two_lengths_carries_the_bend_the_runs_cannot_exclude() {
        let cost = |i: usize| 1.0 + 0.01 * i as f64 + 1e-6 * (i * i) as f64;
        // Uniform noise of +-0.005 s.
        let run = |n: usize, seed: u64| -> Vec<f64> {
            crate::fixtures::uniform(seed, n)
                .into_iter()
                .enumerate()
                .map(|(i, u)| cost(i) + 0.01 * (u - 0.5))
                .collect()
        };
        let (longer, shorter) = (run(80, 11), run(40, 7));
        let full = 400u64;
        let s = SteadyIterations::two_lengths(&longer, &shorter, 0, full);
        assert!(s.extrapolate && s.two_lengths_not_supported.is_none());
        let steady_mean = longer.iter().sum::<f64>() / 80.0;
        let predicted = s.extra * s.factor * steady_mean;
        let bent: f64 = (80..400).map(cost).sum();
        let line: f64 = (80..400).map(|i| 1.0 + 0.01 * i as f64).sum();
        assert!((predicted - line).abs() < 0.01 * line, "{predicted} {line}");
        // The line's prediction, short of the bent total by more than its own uncertainty.
        assert!(
            predicted + s.interval_half_secs < bent,
            "{predicted} {bent}"
        );
        // The bend carried holds it, and is at most the prior.
        let half = s.interval_half_secs.hypot(s.drift_half_secs);
        assert!(predicted + half >= bent, "{predicted} {half} {bent}");
        let prior = DRIFT_PRIOR_PER_DOUBLING * (400.0f64 / 80.0).log2();
        assert!(
            s.drift_half_secs <= s.extra * prior * steady_mean * (1.0 + 1e-12),
            "{} {}",
            s.drift_half_secs,
            s.extra * prior * steady_mean
        );
    }
}
