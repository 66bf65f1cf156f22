//! The main loop of a reduced MPI run, as the simplified-execution prediction needs it
//! (docs/methods.md, section 3): how many iterations the full run makes (from the program's own
//! units), where the warm-up ends (a change-point test), whether the per-iteration cost drifts,
//! which blocks run only every k iterations, and how uncertain the extrapolation is.
//!
//! Pure functions over per-iteration numbers: no tables, no I/O.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
        // In words, without a signed count: the iterations the steps do not account for are
        // setup or final iterations (more) or a step that ran outside the loop (fewer), and the
        // full run is taken to have as many more or fewer.
        let beyond = match outside.cmp(&0) {
            std::cmp::Ordering::Equal => String::new(),
            std::cmp::Ordering::Greater => format!(
                "; the reduced run's loop has {outside} iteration(s) more than its {reduced} steps give (setup or a final step), and so has the full run's"
            ),
            std::cmp::Ordering::Less => format!(
                "; the reduced run's loop has {} iteration(s) fewer than its {reduced} steps give (a step outside the loop), and so has the full run's",
                -outside
            ),
        };
        Ok((
            full_iterations.max(0) as u64,
            format!("{per_step} iteration(s) per step{beyond}"),
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
    let mut counted = OccurrenceCount::default();
    for &i in present {
        counted.push(i);
    }
    counted.occurrence(k)
}

/// [`occurrence`] of the iterations a block ran in, given one at a time in ascending order
/// (repeats of the last ignored) without keeping them: a loop of millions of iterations held
/// a list per block of every iteration it ran in. [`occurrence`] is this over a list.
#[derive(Debug, Clone, Copy, Default)]
pub struct OccurrenceCount {
    count: u64,
    first: u64,
    period: u64,
    last: u64,
    regular: bool,
}

impl OccurrenceCount {
    pub fn push(&mut self, iteration: u64) {
        if self.count > 0 && iteration == self.last {
            return;
        }
        match self.count {
            0 => {
                self.first = iteration;
                self.regular = true;
            }
            1 if iteration > self.first => self.period = iteration - self.first,
            _ if iteration < self.last || iteration - self.last != self.period => {
                self.regular = false;
            }
            _ => {}
        }
        self.last = iteration;
        self.count += 1;
    }

    /// Distinct iterations pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// As [`occurrence`] of the iterations pushed, in a loop of `k`.
    pub fn occurrence(&self, k: u64) -> Occurrence {
        if self.count >= k {
            return Occurrence::Every;
        }
        if self.count < 2 {
            return Occurrence::Irregular;
        }
        let period = self.period;
        if self.regular && period >= 2 && self.first < period && self.last + period >= k {
            Occurrence::Periodic {
                period,
                phase: self.first,
            }
        } else {
            Occurrence::Irregular
        }
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
/// A multiset of values that grows one at a time, with its median and the sum of absolute
/// deviations from it at every size: two heaps (the lower half a max-heap, the upper a min-heap)
/// and their sums, O(log n) a value.
#[derive(Debug, Default)]
struct RunningMedian {
    lower: BinaryHeap<Ordered>,
    upper: BinaryHeap<Reverse<Ordered>>,
    sum_lower: f64,
    sum_upper: f64,
}

/// An `f64` ordered by `total_cmp`, for the heaps.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ordered(f64);

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl RunningMedian {
    fn push(&mut self, v: f64) {
        if self.lower.peek().is_none_or(|top| v <= top.0) {
            self.lower.push(Ordered(v));
            self.sum_lower += v;
        } else {
            self.upper.push(Reverse(Ordered(v)));
            self.sum_upper += v;
        }
        if self.lower.len() > self.upper.len() + 1 {
            if let Some(Ordered(top)) = self.lower.pop() {
                self.sum_lower -= top;
                self.sum_upper += top;
                self.upper.push(Reverse(Ordered(top)));
            }
        } else if self.upper.len() > self.lower.len()
            && let Some(Reverse(Ordered(top))) = self.upper.pop()
        {
            self.sum_upper -= top;
            self.sum_lower += top;
            self.lower.push(Ordered(top));
        }
    }

    /// As [`median`]: the middle value, the mean of the two middle ones, 0 for none.
    fn median(&self) -> f64 {
        match (self.lower.peek(), self.upper.peek()) {
            (None, _) => 0.0,
            (Some(lo), Some(Reverse(hi))) if self.lower.len() == self.upper.len() => {
                0.5 * (lo.0 + hi.0)
            }
            (Some(lo), _) => lo.0,
        }
    }

    /// The sum of absolute deviations from the median.
    fn cost(&self) -> f64 {
        let m = self.median();
        (self.sum_upper - self.upper.len() as f64 * m)
            + (self.lower.len() as f64 * m - self.sum_lower)
    }
}

/// For every cut `w` in `0..=limit`: the L1 costs (sums of absolute deviations from the medians)
/// and the medians of `values[..w]` and `values[w..]`, in O(n log n).
fn split_costs(values: &[f64], limit: usize) -> Vec<[f64; 4]> {
    let mut out = vec![[0.0; 4]; limit + 1];
    let mut head = RunningMedian::default();
    for (w, row) in out.iter_mut().enumerate() {
        row[0] = head.cost();
        row[1] = head.median();
        if w < values.len() {
            head.push(values[w]);
        }
    }
    let mut tail = RunningMedian::default();
    for &v in &values[limit..] {
        tail.push(v);
    }
    for w in (0..=limit).rev() {
        out[w][2] = tail.cost();
        out[w][3] = tail.median();
        if w > 0 {
            tail.push(values[w - 1]);
        }
    }
    out
}

/// A warm-up must make its iterations at least this much slower (or faster) than the steady
/// ones: a smaller difference moves a prediction by less than it over `w / n` of the loop,
/// well inside run-to-run noise, and cutting at it would follow the noise from repeat to repeat.
pub const MIN_WARMUP_EFFECT: f64 = 0.05;

/// The warm-up: where a change-point test puts the end of the leading iterations that run at
/// another level than the rest. Robust to the spikes real runs have: the times are detrended by
/// the slope of their second half (so a slow drift is not taken for a warm-up), then for each
/// cut `w` (at most a third of the iterations) the cost is the sum of absolute deviations from
/// the medians of both sides (running medians: O(k log k) for all cuts together). A cut is kept when it lowers the cost of no cut by more than
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
    // Every cut's costs and medians in one pass of running medians: O(k log k), where sorting
    // both sides anew at each cut was O(k^2 log k) (minutes at a million iterations).
    let splits = split_costs(&detrended, limit);
    let costs: Vec<f64> = splits.iter().map(|s| s[0] + s[2]).collect();
    let effect = |w: usize| {
        let (head, tail) = (splits[w][1], splits[w][3]);
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
    fn an_iteration_given_twice_counts_once() {
        let lists: [&[u64]; 9] = [
            &[],
            &[3],
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            &[1, 4, 7],
            &[1, 4, 7, 9],
            &[0, 5],
            &[2, 12],
            &[0, 2, 4, 6, 8],
            &[5, 6, 7],
        ];
        for list in lists {
            for k in [1, 3, 9, 10, 11] {
                let mut counted = OccurrenceCount::default();
                for &i in list {
                    counted.push(i);
                    counted.push(i);
                }
                assert_eq!(counted.count(), list.len() as u64);
                assert_eq!(
                    counted.occurrence(k),
                    occurrence(list, k),
                    "{list:?} in {k}"
                );
            }
        }
    }

    /// The L1 cost around the median by sorting: what [`split_costs`] must equal.
    fn l1_cost(values: &[f64]) -> f64 {
        let m = median(&mut values.to_vec());
        values.iter().map(|v| (v - m).abs()).sum()
    }

    #[test]
    fn running_medians_give_every_cut_the_costs_sorting_gives() {
        // Noise, ties and a warm-up step, from a fixed linear congruential sequence.
        let mut x: u64 = 42;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((x >> 33) % 1000) as f64 / 100.0
        };
        for k in [1usize, 2, 7, 30, 301] {
            let values: Vec<f64> = (0..k)
                .map(|i| {
                    if i < k / 5 {
                        50.0 + next()
                    } else {
                        next().round()
                    }
                })
                .collect();
            let limit = k / 3;
            let splits = split_costs(&values, limit);
            for (w, s) in splits.iter().enumerate() {
                let (head, tail) = (&values[..w], &values[w..]);
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()));
                assert!(close(s[0], l1_cost(head)), "k {k} w {w}");
                assert!(close(s[2], l1_cost(tail)), "k {k} w {w}");
                assert_eq!(s[1], median(&mut head.to_vec()), "k {k} w {w}");
                assert_eq!(s[3], median(&mut tail.to_vec()), "k {k} w {w}");
            }
        }
    }

    /// A million iterations (a polling loop found as the repeating unit): the warm-up search
    /// in seconds, not the quarter of an hour sorting per cut took. By hand:
    /// `cargo test --release -p yosoku-models --lib warmup_of_a_million -- --ignored --nocapture`
    #[test]
    #[ignore = "a timing, run by hand"]
    #[allow(clippy::disallowed_methods, clippy::disallowed_types)] // it reads the clock
    fn warmup_of_a_million_iterations() {
        let times: Vec<f64> = (0..1_000_000)
            .map(|i| {
                if i < 1000 {
                    2.0
                } else {
                    1.0 + (i % 7) as f64 * 1e-3
                }
            })
            .collect();
        let started = std::time::Instant::now();
        let (w, settled) = changepoint_warmup(&times);
        eprintln!(
            "warm-up {w} (settled {settled}) of 1,000,000 iterations in {:.3} s",
            started.elapsed().as_secs_f64()
        );
        assert!((1000..1010).contains(&w));
        // Beside it, at 20,000 iterations: every cut's costs by sorting both sides (the search
        // before) and by running medians.
        let small = &times[..20_000];
        let started = std::time::Instant::now();
        let sorted: f64 = (0..=small.len() / 3)
            .map(|w| l1_cost(&small[..w]) + l1_cost(&small[w..]))
            .sum();
        let sorting = started.elapsed().as_secs_f64();
        let started = std::time::Instant::now();
        let running: f64 = split_costs(small, small.len() / 3)
            .iter()
            .map(|s| s[0] + s[2])
            .sum();
        eprintln!(
            "20,000 iterations, every cut: sorting {sorting:.3} s, running medians {:.4} s",
            started.elapsed().as_secs_f64()
        );
        assert!((sorted - running).abs() <= 1e-6 * sorted);
    }

    /// A step that ran outside the loop: said in words, never as a negative count.
    #[test]
    fn a_step_outside_the_loop_is_said_in_words() {
        let (n, note) = full_iterations(
            RunSize::Steps {
                reduced: 100,
                full: 1000,
            },
            99,
        )
        .unwrap();
        assert_eq!(n, 999);
        let note = note.unwrap();
        assert_eq!(
            note,
            "1 iteration(s) per step; the reduced run's loop has 1 iteration(s) fewer than its 100 steps give (a step outside the loop), and so has the full run's"
        );
        assert!(!note.contains("-1"));
    }

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
                Some(
                    "2 iteration(s) per step; the reduced run's loop has 2 iteration(s) more than its 100 steps give (setup or a final step), and so has the full run's"
                        .into()
                )
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
