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
/// `mpi_blocks` table of one run), for the two-length prediction: pooled with the longer run's,
/// iteration by iteration, they give the cost per iteration as a line in the iteration index
/// (docs/methods.md, section 3).
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
}

/// The mean cost of iterations `k..full` under the parabola through `times` (iterations
/// `first..`, least squares) and its curvature's t statistic, where that is significant
/// (|t| > 2); `None` where it is not, or too few iterations to tell.
fn bend_beyond(first: usize, times: &[f64], k: usize, full: u64) -> Option<(f64, f64)> {
    let n = times.len();
    if n < 8 || full as usize <= k {
        return None;
    }
    // The index centred and scaled to -1..1: x and x^2 stay apart in a well-conditioned design.
    let centre = first as f64 + (n as f64 - 1.0) / 2.0;
    let half = ((n as f64 - 1.0) / 2.0).max(1.0);
    let u = |x: f64| (x - centre) / half;
    let design = faer::Mat::from_fn(n, 2, |j, c| u((first + j) as f64).powi(c as i32 + 1));
    let fit = yosoku_regression::ols(
        design.as_ref(),
        times,
        &yosoku_regression::OlsOptions::default(),
    )
    .ok()?;
    let (linear, curvature) = (*fit.coefficients.first()?, *fit.coefficients.get(1)?);
    let t = *fit.t_values.get(1)?;
    // A NaN t (no residual freedom) is no evidence of a bend either.
    if t.abs().partial_cmp(&2.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    // The parabola's mean over the extra iterations (at most 4,096 of them, evenly spread).
    let step = ((full as usize - k) / 4096).max(1);
    let at: Vec<f64> = (k..full as usize)
        .step_by(step)
        .map(|x| {
            let v = u(x as f64);
            fit.intercept + linear * v + curvature * v * v
        })
        .collect();
    Some((at.iter().sum::<f64>() / at.len() as f64, t))
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
        let trend_pct_per_1000 = (drifting || (trend == Trend::TwoLengths && steady_mean > 0.0))
            .then(|| 100.0 * line.slope * 1000.0 / steady_mean);
        let extrapolate = (drifting && trend == Trend::Linear) || trend == Trend::TwoLengths;
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
        }
    }
}
