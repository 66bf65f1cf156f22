//! The main loop of a reduced MPI run, as the simplified-execution prediction needs it
//! (docs/methods.md, section 3): how many iterations the full run makes (from the program's own
//! units), where the warm-up ends (a change-point test), whether the per-iteration cost drifts,
//! which blocks run only every k iterations, and how uncertain the extrapolation is.
//!
//! Pure functions over per-iteration numbers: no tables, no I/O.

use crate::median;

/// The size of the run to predict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunSize {
    /// Main-loop iterations, as yosoku counts them.
    Iterations(u64),
    /// The program's own steps (time steps, SCF cycles, ...) of the reduced and the full run;
    /// iterations per step are derived from the reduced run.
    Steps { reduced: u64, full: u64 },
    /// Both: the iterations are checked against what the steps imply.
    Checked {
        iterations: u64,
        reduced: u64,
        full: u64,
    },
}

/// Why the full run's iterations cannot be derived from the run size given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunSizeError {
    #[error(
        "reduced_steps = {reduced}, full_steps = {full}: expected 1 <= reduced_steps <= full_steps"
    )]
    Steps { reduced: u64, full: u64 },
    /// More than one iteration per step, but not a whole number of them.
    #[error(
        "the reduced run made {iterations} iterations in {reduced} steps: not a whole number per step ({ratio:.3}); check reduced_steps, or give full_iterations"
    )]
    NotWholePerStep {
        iterations: usize,
        reduced: u64,
        ratio: f64,
    },
    /// An iteration spans several steps, but not a whole number of them.
    #[error(
        "the reduced run made {iterations} iterations in {reduced} steps: not a whole number of steps per iteration; check reduced_steps, or give full_iterations"
    )]
    NotWholeStepsPerIteration { iterations: usize, reduced: u64 },
    /// The iterations given and those the steps imply differ.
    #[error(
        "full_iterations = {given}, but the reduced run's {iterations} iterations in {reduced} steps ({note}) make {derived} for full_steps = {full}: one of them is wrong"
    )]
    Disagree {
        given: u64,
        iterations: usize,
        reduced: u64,
        note: String,
        derived: u64,
        full: u64,
    },
    #[error(
        "the full run would make {full} iterations, fewer than the {reduced} the reduced run made; predict a run at least as long as the one measured"
    )]
    Shorter { full: u64, reduced: usize },
}

/// The full run's iterations for a reduced run of `k` iterations, and how they were derived.
pub fn full_iterations(size: RunSize, k: usize) -> Result<(u64, Option<String>), RunSizeError> {
    let (n, note) = match size {
        RunSize::Iterations(n) => (n, None),
        RunSize::Steps { reduced, full } => {
            let (n, note) = from_steps(k, reduced, full)?;
            (n, Some(note))
        }
        RunSize::Checked {
            iterations,
            reduced,
            full,
        } => {
            let (n, note) = from_steps(k, reduced, full)?;
            if n != iterations {
                return Err(RunSizeError::Disagree {
                    given: iterations,
                    iterations: k,
                    reduced,
                    note,
                    derived: n,
                    full,
                });
            }
            (n, Some(note))
        }
    };
    if n < k as u64 {
        return Err(RunSizeError::Shorter {
            full: n,
            reduced: k,
        });
    }
    Ok((n, note))
}

/// The full run's iterations for `full` steps, from a reduced run of `k` iterations in
/// `reduced` steps, and how they were derived.
fn from_steps(k: usize, reduced: u64, full: u64) -> Result<(u64, String), RunSizeError> {
    if reduced == 0 || full < reduced {
        return Err(RunSizeError::Steps { reduced, full });
    }
    let ratio = k as f64 / reduced as f64;
    if ratio >= 0.75 {
        // Whole iterations per step, and a few outside the steps (a setup or final step
        // that makes the loop's calls too).
        let per_step = ratio.round().max(1.0) as u64;
        let outside = k as i64 - (per_step * reduced) as i64;
        let slack = 2i64
            .max((0.02 * k as f64).ceil() as i64)
            .max(per_step as i64);
        if outside.abs() > slack {
            return Err(RunSizeError::NotWholePerStep {
                iterations: k,
                reduced,
                ratio,
            });
        }
        let full_iterations = (per_step * full) as i64 + outside;
        Ok((
            full_iterations.max(0) as u64,
            format!(
                "{per_step} iteration(s) per step{}",
                if outside == 0 {
                    String::new()
                } else {
                    format!(", {outside:+} outside the steps")
                }
            ),
        ))
    } else {
        // One iteration spans several steps (a repeating unit of a few steps).
        let steps_per = (reduced as f64 / k as f64).round().max(1.0) as u64;
        if (reduced as i64 - (steps_per * k as u64) as i64).unsigned_abs() > steps_per {
            return Err(RunSizeError::NotWholeStepsPerIteration {
                iterations: k,
                reduced,
            });
        }
        Ok((
            full.div_ceil(steps_per),
            format!("{steps_per} steps per iteration"),
        ))
    }
}

/// How often a block of the loop runs, from the iterations it ran in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    /// In every iteration (or as a sub-iteration, several times in each).
    Every,
    /// Every `period` iterations, first in iteration `phase` (< period): a rebuild, an output
    /// step, a checkpoint.
    Periodic { period: u64, phase: u64 },
    /// Neither: its executions are spread over the loop's iterations on average.
    Irregular,
}

/// `present`: the iterations (sorted, distinct) a block ran in, of `k`.
pub fn occurrence(present: &[u64], k: u64) -> Occurrence {
    if present.len() as u64 >= k {
        return Occurrence::Every;
    }
    if present.len() < 2 {
        return Occurrence::Irregular;
    }
    let period = present[1] - present[0];
    let regular = period >= 2 && present.windows(2).all(|w| w[1] - w[0] == period);
    // Periodic over the whole loop: the first within one period of the start, the last within
    // one period of the end.
    if regular && present[0] < period && present[present.len() - 1] + period >= k {
        Occurrence::Periodic {
            period,
            phase: present[0],
        }
    } else {
        Occurrence::Irregular
    }
}

/// Iterations `0..n` that are `phase` modulo `period`.
pub fn periodic_count(n: u64, period: u64, phase: u64) -> u64 {
    if phase >= n {
        0
    } else {
        (n - 1 - phase) / period + 1
    }
}

/// Least squares line `a + b * i` through `(first + j, times[j])`, its residual variance and
/// the spread of the abscissae.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub intercept: f64,
    pub slope: f64,
    /// Residual variance (n - 2 degrees of freedom; n - 1 around the mean when n < 3).
    pub variance: f64,
    pub mean_x: f64,
    pub sxx: f64,
    pub n: usize,
}

impl Line {
    pub fn fit(first: usize, times: &[f64]) -> Line {
        let n = times.len();
        let nf = n as f64;
        let mean_x = first as f64 + (nf - 1.0) / 2.0;
        let mean_y = times.iter().sum::<f64>() / nf.max(1.0);
        let (mut sxx, mut sxy) = (0.0, 0.0);
        for (j, t) in times.iter().enumerate() {
            let dx = (first + j) as f64 - mean_x;
            sxx += dx * dx;
            sxy += dx * (t - mean_y);
        }
        let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let intercept = mean_y - slope * mean_x;
        let rss: f64 = times
            .iter()
            .enumerate()
            .map(|(j, t)| {
                let r = t - (intercept + slope * (first + j) as f64);
                r * r
            })
            .sum();
        let variance = if n >= 3 {
            rss / (nf - 2.0)
        } else if n == 2 {
            times.iter().map(|t| (t - mean_y).powi(2)).sum::<f64>()
        } else {
            0.0
        };
        Line {
            intercept,
            slope,
            variance,
            mean_x,
            sxx,
            n,
        }
    }

    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }

    /// The slope's t statistic (0 when it cannot be estimated).
    pub fn slope_t(&self) -> f64 {
        if self.sxx > 0.0 && self.variance > 0.0 && self.n >= 3 {
            self.slope / (self.variance / self.sxx).sqrt()
        } else {
            0.0
        }
    }
}

/// The median of the slopes between all pairs of points `(first + j, times[j])` (Theil-Sen):
/// a spike moves it little, unlike a least-squares slope. Long series are thinned to about
/// 1,000 points first (a million pairs).
fn theil_sen_slope(first: usize, times: &[f64]) -> f64 {
    let stride = times.len().div_ceil(1000).max(1);
    let points: Vec<(f64, f64)> = times
        .iter()
        .enumerate()
        .step_by(stride)
        .map(|(j, t)| ((first + j) as f64, *t))
        .collect();
    let mut slopes = Vec::with_capacity(points.len() * points.len() / 2);
    for (a, p) in points.iter().enumerate() {
        for q in &points[a + 1..] {
            slopes.push((q.1 - p.1) / (q.0 - p.0));
        }
    }
    median(&mut slopes)
}

/// Sum of absolute deviations from the median.
fn l1_cost(values: &[f64]) -> f64 {
    let m = median(&mut values.to_vec());
    values.iter().map(|v| (v - m).abs()).sum()
}

/// A warm-up must make its iterations at least this much slower (or faster) than the steady
/// ones: a smaller difference moves a prediction by less than it over `w / n` of the loop,
/// well inside run-to-run noise, and cutting at it would follow the noise from repeat to repeat.
pub const MIN_WARMUP_EFFECT: f64 = 0.05;

/// The warm-up: where a change-point test puts the end of the leading iterations that run at
/// another level than the rest. Robust to the spikes real runs have: the times are detrended by
/// the slope of their second half (so a slow drift is not taken for a warm-up), then for each
/// cut `w` (at most a third of the iterations) the cost is the sum of absolute deviations from
/// the medians of both sides. A cut is kept when it lowers the cost of no cut by more than
/// `3 b ln k` (`b` the robust noise scale, a BIC-like penalty) and its side differs from the
/// rest by at least [`MIN_WARMUP_EFFECT`]; among the cuts within `b ln k` of the best, the
/// smallest, so that repeats of one run agree. Returns the warm-up and whether the times
/// settled (`false` when the best cut is the largest allowed).
pub fn changepoint_warmup(times: &[f64]) -> (usize, bool) {
    let k = times.len();
    if k < 6 {
        return (0, true);
    }
    let limit = k / 3;
    let slope = theil_sen_slope(k / 2, &times[k / 2..]);
    let detrended: Vec<f64> = times
        .iter()
        .enumerate()
        .map(|(i, t)| t - slope * i as f64)
        .collect();
    let level = median(&mut detrended[k / 2..].to_vec());
    let mut deviations: Vec<f64> = detrended[k / 2..]
        .iter()
        .map(|t| (t - level).abs())
        .collect();
    let scale = 1.4826 * median(&mut deviations);
    let ln_k = (k as f64).ln();
    let penalty = 3.0 * scale * ln_k;
    let costs: Vec<f64> = (0..=limit)
        .map(|w| l1_cost(&detrended[..w]) + l1_cost(&detrended[w..]))
        .collect();
    let effect = |w: usize| {
        let head = median(&mut detrended[..w].to_vec());
        let tail = median(&mut detrended[w..].to_vec());
        if tail > 0.0 {
            ((head - tail) / tail).abs()
        } else {
            0.0
        }
    };
    let Some((best_w, best)) = (1..=limit)
        .filter(|&w| effect(w) >= MIN_WARMUP_EFFECT)
        .map(|w| (w, costs[w]))
        .min_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return (0, true);
    };
    if costs[0] - best <= penalty {
        return (0, true);
    }
    let band = scale * ln_k;
    let w = (1..=best_w)
        .find(|&w| costs[w] <= best + band && effect(w) >= MIN_WARMUP_EFFECT)
        .unwrap_or(best_w);
    (w, w < limit)
}

/// Two-sided 97.5 % quantile of Student's t with `df` degrees of freedom (Cornish-Fisher
/// expansion around the normal's 1.96; within 1 % for df >= 3).
pub fn t975(df: usize) -> f64 {
    let z: f64 = 1.959_964;
    if df == 0 {
        return f64::INFINITY;
    }
    let v = df as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_give_iterations_per_step_and_those_outside() {
        // 2 per step and 2 more (a setup and a final force computation).
        assert_eq!(
            full_iterations(
                RunSize::Steps {
                    reduced: 100,
                    full: 1000
                },
                202
            )
            .unwrap(),
            (
                2002,
                Some("2 iteration(s) per step, +2 outside the steps".into())
            )
        );
        assert_eq!(
            full_iterations(
                RunSize::Steps {
                    reduced: 100,
                    full: 1000
                },
                100
            )
            .unwrap()
            .0,
            1000
        );
        // A unit of 5 steps.
        assert_eq!(
            full_iterations(
                RunSize::Steps {
                    reduced: 100,
                    full: 1000
                },
                20
            )
            .unwrap()
            .0,
            200
        );
        let e = full_iterations(
            RunSize::Steps {
                reduced: 100,
                full: 1000,
            },
            150,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                RunSizeError::NotWholePerStep {
                    iterations: 150,
                    reduced: 100,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("not a whole number per step"), "{e}");
        // The user's guess is checked, never taken silently.
        let e = full_iterations(
            RunSize::Checked {
                iterations: 1000,
                reduced: 100,
                full: 1000,
            },
            202,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                RunSizeError::Disagree {
                    given: 1000,
                    derived: 2002,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("make 2002 for full_steps = 1000"),
            "{e}"
        );
        let e = full_iterations(RunSize::Iterations(10), 20).unwrap_err();
        assert_eq!(
            e,
            RunSizeError::Shorter {
                full: 10,
                reduced: 20
            }
        );
        assert!(e.to_string().contains("fewer than the 20"), "{e}");
    }

    #[test]
    fn blocks_every_k_iterations_are_periodic_with_their_phase() {
        assert_eq!(occurrence(&[0, 1, 2, 3], 4), Occurrence::Every);
        assert_eq!(
            occurrence(&[3, 13, 23, 33], 40),
            Occurrence::Periodic {
                period: 10,
                phase: 3
            }
        );
        // Missing its last occurrence: not periodic over the whole loop.
        assert_eq!(occurrence(&[3, 13], 40), Occurrence::Irregular);
        assert_eq!(occurrence(&[0, 5, 7], 10), Occurrence::Irregular);
        assert_eq!(occurrence(&[0], 10), Occurrence::Irregular);
        assert_eq!(periodic_count(1000, 10, 3), 100);
        assert_eq!(periodic_count(1000, 100, 0), 10);
        assert_eq!(periodic_count(1001, 100, 0), 11);
        assert_eq!(periodic_count(3, 10, 5), 0);
    }

    /// A deterministic noise sequence in [-1, 1].
    fn noise(i: usize, seed: u64) -> f64 {
        let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 29;
        (x % 2001) as f64 / 1000.0 - 1.0
    }

    #[test]
    fn the_warmup_is_where_times_settle_and_repeats_agree() {
        // Five slow iterations, then 1.0 +- 2 %: the same cut on ten differently noisy repeats.
        for seed in 0..10 {
            let times: Vec<f64> = (0..100)
                .map(|i| if i < 5 { 1.5 - 0.05 * i as f64 } else { 1.0 } + 0.02 * noise(i, seed))
                .collect();
            let (w, settled) = changepoint_warmup(&times);
            assert!((4..=6).contains(&w) && settled, "seed {seed}: {w}");
        }
        // No warm-up: none excluded.
        let flat: Vec<f64> = (0..100).map(|i| 1.0 + 0.02 * noise(i, 7)).collect();
        assert_eq!(changepoint_warmup(&flat), (0, true));
        // A steady drift is not a warm-up.
        let drift: Vec<f64> = (0..100)
            .map(|i| 1.0 + 0.004 * i as f64 + 0.02 * noise(i, 3))
            .collect();
        assert_eq!(changepoint_warmup(&drift).0, 0);
        // Too few iterations to tell.
        assert_eq!(changepoint_warmup(&[3.0, 1.0, 1.0]), (0, true));
    }

    #[test]
    fn a_line_finds_the_drift_and_its_significance() {
        let drift: Vec<f64> = (0..100)
            .map(|i| 1.0 + 0.004 * i as f64 + 0.02 * noise(i, 3))
            .collect();
        let line = Line::fit(0, &drift);
        assert!((line.slope - 0.004).abs() < 5e-4, "{line:?}");
        assert!(line.slope_t() > 10.0);
        let flat: Vec<f64> = (0..100).map(|i| 1.0 + 0.02 * noise(i, 7)).collect();
        assert!(Line::fit(0, &flat).slope_t().abs() < 3.0);
        assert!((t975(10) - 2.228).abs() < 0.02);
        assert!((t975(1000) - 1.962).abs() < 0.002);
    }
}
