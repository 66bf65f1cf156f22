//! The next measurement to make (`yosoku scaling --suggest`, docs/methods.md section 7): of the
//! configurations one could measure next, the one that most reduces the uncertainty of the
//! prediction asked for, per unit of cost.
//!
//! The uncertainty is the robust model's at the target: the variance of its fit there, averaged
//! over the term sets its criterion supports (Akaike weights), plus their spread there (the doubt
//! about which terms are right). A candidate configuration measured with the usual repetitions
//! would
//! - shrink each term set's variance at the target (a rank-one update of its weighted fit:
//!   `q - (r' A^-1 c)^2 w / (1 + w c' A^-1 c)`), and
//! - tell the term sets apart as far as they disagree there beyond the noise of a new mean:
//!   their spread at the target shrinks by `D / (D + s^2)`, `D` their spread at the candidate,
//!   `s^2` the new mean's noise.
//!
//! The cost of a candidate is the time of a run there for its repetitions, times the value of a
//! parameter that counts processes (`cost_parameter`: core-seconds) where one is named. A run's
//! time is the file's ([`RunCost`]: its longest call path's, where the file has time metrics),
//! else the call path's own model's. The
//! candidates are the combinations of each parameter's measured values and its next value on
//! the grid its values keep (consecutive cubes or squares, a constant ratio or step, else a
//! doubling: [`next_on_grid`]) that were not measured yet; the target itself is one too
//! (measuring it answers the question, at its cost). A repeat of a measured configuration (its
//! usual repetitions again) narrows the noise, not the choice of terms, so repeats are offered
//! only where the noise dominates (the model's trend over the measured configurations within
//! twice the noise of one measured mean, [`noise_dominates`]: more repetitions are what would
//! show whether there is one), and beside the ranked runs, not among them: ranked with them,
//! cheap repeats came first where a run beyond the points was what the prediction needed, and
//! following the suggestions reached the benchmark's goal on fewer laws for more (BENCHMARKS.md,
//! "The next run to measure"). No run costs less than one measured at
//! smaller or equal values of every parameter took.

use super::robust::{RobustFit, Weighted, fit_robust};
use super::{PmnfError, PmnfOptions, Point, Term, design_row, inverse_gram, terms_with_unit};

/// One configuration that could be measured next.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub coordinate: Vec<f64>,
    /// Measured already: the run measures it again, with the usual repetitions.
    pub repeat: bool,
    /// Seconds (or core-seconds) of its repetitions, as the model predicts them, and never less
    /// than a run measured at smaller or equal values of every parameter took.
    pub cost: f64,
    /// The target's prediction variance once it is measured.
    pub variance_after: f64,
}

impl Candidate {
    /// Variance removed per unit of cost.
    pub fn gain_per_cost(&self, variance_now: f64) -> f64 {
        (variance_now - self.variance_after).max(0.0) / self.cost.max(f64::MIN_POSITIVE)
    }
}

/// What `suggest` found: the model, the target's prediction and its variance now, and every
/// candidate, the best first.
#[derive(Debug, Clone)]
pub struct Suggestions {
    pub fit: RobustFit,
    pub target: Vec<f64>,
    pub predicted: f64,
    pub variance_now: f64,
    pub ranked: Vec<Candidate>,
    /// The configurations assessed (those `ranked` leaves out: where the model predicts no
    /// positive time).
    pub offered: usize,
    /// Every value measured, at every run, is this one (0 for a call path that never took any
    /// time; an exact count, as visits often are): there is nothing to narrow, and `ranked` and
    /// `repeats` are empty for that reason.
    pub every_value: Option<f64>,
    /// Where the noise dominates the points ([`noise_dominates`]): the measured configurations
    /// measured again, the most narrowing per cost first; else none. Beside `ranked`, not in it:
    /// a repeat narrows the noise, not the choice of terms.
    pub repeats: Vec<Candidate>,
}

/// Whether the noise dominates what the points show: the model's values at the measured
/// configurations (`at_points`) differ by no more than twice the noise of one measured mean
/// there, `sigma2` the relative variance of one repetition and `repetitions` a mean's count.
/// A trend that small is not told from noise; more repetitions would tell it.
pub fn noise_dominates(at_points: &[f64], sigma2: f64, repetitions: f64) -> bool {
    let (low, high) = at_points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let mean = at_points.iter().sum::<f64>() / at_points.len().max(1) as f64;
    let noise = (sigma2 / repetitions.max(1.0)).sqrt() * mean.abs();
    high >= low && noise > 0.0 && high - low <= 2.0 * noise
}

/// Whether a metric of this name measures time (an unnamed metric, as Extra-P's text files
/// often leave it, is taken as time): only those cost a run.
pub fn is_time_metric(metric: &str) -> bool {
    let m = metric.to_ascii_lowercase();
    m.is_empty() || m.contains("time") || m.contains("duration") || m.ends_with("secs")
}

/// The unit a metric's values are in, as its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricUnit {
    /// A time ([`is_time_metric`]), in seconds.
    Seconds,
    /// A name with `byte` in it.
    Bytes,
    /// Floating-point operations: a name with `flop` in it, or PAPI's and Score-P's names of
    /// them (`PAPI_FP_OPS`, `PAPI_SP_OPS`, `PAPI_DP_OPS`).
    Flop,
    /// A number of visits, calls or another count.
    Count,
    /// Hardware events a counter measured: PAPI's preset and native counters (`PAPI_TOT_INS`,
    /// `PAPI_L2_TCM`), Linux perf's (`perf::cycles`), instructions and cycles. Counts, but
    /// calibrated apart from visits and calls: those are exact, a counter's events are not.
    Events,
    /// A name that says no unit.
    Unnamed,
}

impl MetricUnit {
    pub fn of(metric: &str) -> Self {
        let m = metric.to_ascii_lowercase();
        if is_time_metric(metric) {
            Self::Seconds
        } else if m.contains("byte") {
            Self::Bytes
        } else if m.contains("flop") || ["fp_ops", "sp_ops", "dp_ops"].iter().any(|o| m.contains(o))
        {
            Self::Flop
        } else if ["visit", "count", "call"].iter().any(|c| m.contains(c)) {
            Self::Count
        } else if ["papi_", "perf::", "perf_raw::"]
            .iter()
            .any(|p| m.starts_with(p))
            || ["instruction", "inst_executed", "cycles"]
                .iter()
                .any(|e| m.contains(e))
        {
            Self::Events
        } else {
            Self::Unnamed
        }
    }

    /// Its symbol (`s`, `B`, `FLOP`, `count`, `events`), none where the name says no unit.
    pub fn symbol(self) -> Option<&'static str> {
        match self {
            Self::Seconds => Some("s"),
            Self::Bytes => Some("B"),
            Self::Flop => Some("FLOP"),
            Self::Count => Some("count"),
            Self::Events => Some("events"),
            Self::Unnamed => None,
        }
    }
}

/// What one run of the program takes at a configuration, from every call path of a file that
/// measures time: at least its longest call path (whether the file's times are inclusive or
/// exclusive, a run lasts at least as long as any one of its call paths), as their models
/// predict it, and never less than a run measured at smaller or equal values of every parameter
/// took (its longest call path's measured mean there). A call path that costs little (a
/// communication call at one rank) is then costed as the run that measures it.
#[derive(Debug, Clone, Default)]
pub struct RunCost {
    time_models: Vec<super::PmnfModel>,
    /// Each measured configuration and its longest call path's mean time there.
    measured: Vec<(Vec<f64>, f64)>,
    /// A file without time: every run costs one (times its processes).
    per_run: bool,
}

impl RunCost {
    /// From the time series of one file: each call path's points and its model (`None` where it
    /// has none: its measurements still set the floor).
    pub fn new<'a>(
        series: impl IntoIterator<Item = (&'a [Point], Option<&'a super::PmnfModel>)>,
    ) -> Self {
        let mut cost = RunCost::default();
        for (points, model) in series {
            if let Some(m) = model {
                cost.time_models.push(m.clone());
            }
            for p in points {
                let mean = p.values.iter().sum::<f64>() / p.values.len().max(1) as f64;
                if !mean.is_finite() {
                    continue;
                }
                match cost.measured.iter_mut().find(|(c, _)| *c == p.coordinate) {
                    Some((_, longest)) => *longest = longest.max(mean),
                    None => cost.measured.push((p.coordinate.clone(), mean)),
                }
            }
        }
        cost
    }

    /// Runs costed by their number alone (one each, times its processes), for a file that
    /// measures no time.
    pub fn per_run() -> Self {
        RunCost {
            per_run: true,
            ..RunCost::default()
        }
    }

    /// Whether any time was measured: without, there is no run time to cost with.
    pub fn is_empty(&self) -> bool {
        self.measured.is_empty()
    }

    /// Whether runs are costed by their number, not their time.
    pub fn is_per_run(&self) -> bool {
        self.per_run
    }

    /// One run at `x` (see the type's notes), in seconds times `processes` of the configuration
    /// (1: seconds; the processes: core-seconds): its longest call path as predicted, and no
    /// less than a run measured at smaller or equal values of every parameter cost.
    pub fn cost(&self, x: &[f64], processes: impl Fn(&[f64]) -> f64) -> f64 {
        if self.per_run {
            return processes(x);
        }
        let predicted = self
            .time_models
            .iter()
            .map(|m| m.evaluate(x))
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max);
        self.measured
            .iter()
            .filter(|(c, _)| c.iter().zip(x).all(|(a, b)| a <= b))
            .map(|(c, t)| t * processes(c))
            .fold(predicted * processes(x), f64::max)
    }
}

/// One supported term set: its Akaike weight, unit terms, coefficients' prediction, and the
/// inverse of its weighted normal matrix.
struct Supported {
    weight: f64,
    unit: Vec<Term>,
    constant: f64,
    terms: Vec<Term>,
    inverse: Vec<f64>,
}

impl Supported {
    fn at(&self, x: &[f64]) -> f64 {
        self.constant + self.terms.iter().map(|t| t.evaluate(x)).sum::<f64>()
    }

    /// `a' A^-1 b` for design rows `a`, `b`.
    fn quad(&self, a: &[f64], b: &[f64]) -> f64 {
        let k = a.len();
        (0..k)
            .map(|i| {
                (0..k)
                    .map(|j| a[i] * self.inverse[i * k + j] * b[j])
                    .sum::<f64>()
            })
            .sum()
    }
}

/// The value one step past the largest of `values` (sorted, distinct, not empty) on the grid
/// they keep, and the grid's name: consecutive cubes or squares (27, 64, 125, 216: 343, the
/// rank counts of a 3-D decomposition), a constant ratio (2, 4, 8: 16), a constant step (10,
/// 20, 30: 40); a doubling where there are fewer than three values or none of these.
pub fn next_on_grid(values: &[f64]) -> (f64, &'static str) {
    let n = values.len();
    let last = values[n - 1];
    if n >= 3 {
        for (k, name) in [(3, "consecutive cubes"), (2, "consecutive squares")] {
            let roots: Vec<f64> = values
                .iter()
                .map(|v| v.powf(1.0 / f64::from(k)).round())
                .collect();
            let exact = values
                .iter()
                .zip(&roots)
                .all(|(v, r)| *r >= 1.0 && (r.powi(k) - v).abs() <= 1e-9 * v.abs().max(1.0));
            if exact && roots.windows(2).all(|w| w[1] - w[0] == 1.0) {
                return ((roots[n - 1] + 1.0).powi(k), name);
            }
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs());
        let ratios: Vec<f64> = values.windows(2).map(|w| w[1] / w[0]).collect();
        if values[0] > 0.0 && ratios.iter().all(|r| close(*r, ratios[0])) {
            return (last * ratios[0], "a constant ratio");
        }
        let steps: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
        if steps.iter().all(|d| close(*d, steps[0])) {
            return (last + steps[0], "a constant step");
        }
    }
    (2.0 * last, "a doubling")
}

/// The grid a parameter's next values lie on, as the user gives it (`--grid`), or inferred
/// from the measured values ([`next_on_grid`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Grid {
    #[default]
    Inferred,
    /// Consecutive k-th powers (2: squares, 3: cubes): the next one above the largest value.
    Powers(i32),
    /// A constant ratio: the largest value times it.
    Ratio(f64),
    /// A constant step: the largest value plus it.
    Step(f64),
    /// The values one can measure next (the node counts a machine offers, say): those above the
    /// largest measured.
    Values(Vec<f64>),
}

impl Grid {
    /// `cubes`, `squares`, `x2` (a ratio), `+10` (a step) or `512/1024/2048` (values).
    pub fn parse(text: &str) -> Result<Self, String> {
        let number = |t: &str| {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| format!("`{t}` is not a positive number"))
        };
        let text = text.trim();
        Ok(match text {
            "cubes" => Grid::Powers(3),
            "squares" => Grid::Powers(2),
            _ if text.starts_with('x') => {
                let r = number(&text[1..])?;
                if r <= 1.0 {
                    return Err(format!("`{text}`: a ratio above 1 (x2 doubles)"));
                }
                Grid::Ratio(r)
            }
            _ if text.starts_with('+') => Grid::Step(number(&text[1..])?),
            _ if text.contains('/') || number(text).is_ok() => Grid::Values(
                text.split('/')
                    .map(number)
                    .collect::<Result<Vec<f64>, String>>()?,
            ),
            _ => {
                return Err(format!(
                    "`{text}`: expected cubes, squares, x<ratio> (x2), +<step> (+10) or values (512/1024)"
                ));
            }
        })
    }

    /// The next values past `values` (sorted, distinct, not empty) on this grid.
    pub fn next(&self, values: &[f64]) -> Vec<f64> {
        let last = values[values.len() - 1];
        match self {
            Grid::Inferred => vec![next_on_grid(values).0],
            Grid::Powers(k) => {
                let root = (last.powf(1.0 / f64::from(*k)) + 1e-9).floor();
                vec![(root + 1.0).powi(*k)]
            }
            Grid::Ratio(r) => vec![last * r],
            Grid::Step(d) => vec![last + d],
            Grid::Values(v) => v.iter().copied().filter(|x| *x > last).collect(),
        }
    }
}

/// The runs that would let the robust search model a call path whose runs measure a parameter
/// at too few values ([`FewValues`](super::FewValues)): its next value on its grid, at each
/// measured configuration of the other parameters, the cheapest first.
#[derive(Debug, Clone, PartialEq)]
pub struct ToModel {
    pub parameter: usize,
    /// Its measured values, in increasing order.
    pub measured: Vec<f64>,
    /// The value the runs measure it at; `None` where `--grid`'s values have none past the
    /// measured ones (and `runs` is empty).
    pub next: Option<f64>,
    /// How `next` was found: the grid its values keep (`a doubling` from two) or `--grid`'s.
    pub grid: &'static str,
    /// Each run and its cost ([`RunCost::cost`]), the cheapest first; one of them gives the
    /// parameter a third value.
    pub runs: Vec<(Vec<f64>, f64)>,
}

/// [`ToModel`] for each parameter `points` measure at fewer than
/// [`MINIMUM_POINTS`](super::MINIMUM_POINTS) values, at its next value on its grid (`grids`, by
/// parameter; inferred where missing), costed by `run_cost` (times the value of parameter
/// `cost_parameter` where one is named).
pub fn runs_to_model(
    points: &[Point],
    grids: &[Grid],
    run_cost: &RunCost,
    cost_parameter: Option<usize>,
) -> Vec<ToModel> {
    let processes = |x: &[f64]| cost_parameter.map_or(1.0, |p| x[p]);
    super::few_values(points)
        .into_iter()
        .map(|few| {
            let grid = grids.get(few.parameter).cloned().unwrap_or_default();
            let next = grid.next(&few.values).first().copied();
            let mut runs: Vec<(Vec<f64>, f64)> = Vec::new();
            for p in points.iter().filter(|_| next.is_some()) {
                let mut x = p.coordinate.clone();
                x[few.parameter] = next.unwrap_or_default();
                if !runs.iter().any(|(c, _)| *c == x) {
                    let cost = run_cost.cost(&x, processes);
                    runs.push((x, cost));
                }
            }
            runs.sort_by(|a, b| a.1.total_cmp(&b.1));
            ToModel {
                parameter: few.parameter,
                next,
                grid: match grid {
                    Grid::Inferred => next_on_grid(&few.values).1,
                    _ => "the grid --grid gives",
                },
                measured: few.values,
                runs,
            }
        })
        .collect()
}

/// The candidates: every combination of each parameter's measured values and its next values
/// on its grid (`grids`, by parameter; a missing one inferred, [`next_on_grid`]) not measured
/// yet, and the target.
pub fn candidates(points: &[Point], target: &[f64], grids: &[Grid]) -> Vec<Vec<f64>> {
    let dims = target.len();
    let axes: Vec<Vec<f64>> = (0..dims)
        .map(|d| {
            let mut v: Vec<f64> = points.iter().map(|p| p.coordinate[d]).collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            if !v.is_empty() {
                let next = grids.get(d).cloned().unwrap_or_default().next(&v);
                v.extend(next);
            }
            v
        })
        .collect();
    let mut out = super::cartesian(&axes);
    out.retain(|c| !points.iter().any(|p| p.coordinate == *c));
    if !out.iter().any(|c| c == target) {
        out.push(target.to_vec());
    }
    out
}

/// The measured configurations to offer again (those not among `candidates`) where the noise
/// dominates the points under `model` ([`noise_dominates`]; `repetitions` a mean's count); else
/// none.
fn to_repeat(
    model: &super::PmnfModel,
    points: &[Point],
    candidates: &[Vec<f64>],
    repetitions: f64,
) -> Vec<Vec<f64>> {
    let at_points: Vec<f64> = points
        .iter()
        .map(|p| model.evaluate(&p.coordinate))
        .collect();
    let mut again: Vec<Vec<f64>> = Vec::new();
    if noise_dominates(&at_points, model.interval.sigma2, repetitions) {
        for p in points {
            if !candidates.contains(&p.coordinate) && !again.contains(&p.coordinate) {
                again.push(p.coordinate.clone());
            }
        }
    }
    again
}

/// Ranks `candidates` (see the module's notes) for the prediction at `target`; `cost_parameter`
/// names the parameter that counts processes, if any; `run_cost` the file's run time, where it
/// measures time (else a run costs what this call path's model predicts).
pub fn suggest(
    points: &[Point],
    options: &PmnfOptions,
    target: &[f64],
    candidates: &[Vec<f64>],
    cost_parameter: Option<usize>,
    run_cost: Option<&RunCost>,
) -> Result<Suggestions, PmnfError> {
    let fit = fit_robust(points, options)?;
    suggest_from(fit, points, target, candidates, cost_parameter, run_cost)
}

/// The `candidates` a run may teach the model `fit` of `points` something about: all of them,
/// except where the parameters moved together (`RobustFit::moved_with_first`). The model is then
/// over the first alone and cannot say what a run off their curve would teach, so the runs kept
/// stay on it: a configuration measured already, or one whose every value is new, as the
/// curve's next point is.
fn on_the_curve(fit: &RobustFit, points: &[Point], candidates: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let on_curve = |c: &[f64]| {
        let measured_at = |q: usize| points.iter().any(|p| p.coordinate[q] == c[q]);
        fit.moved_with_first.is_empty()
            || points.iter().any(|p| p.coordinate == c)
            || (0..c.len()).all(|q| !measured_at(q))
    };
    candidates.iter().filter(|c| on_curve(c)).cloned().collect()
}

/// [`suggest`] from the robust search's `fit` of `points`, made already.
pub fn suggest_from(
    fit: RobustFit,
    points: &[Point],
    target: &[f64],
    candidates: &[Vec<f64>],
    cost_parameter: Option<usize>,
    run_cost: Option<&RunCost>,
) -> Result<Suggestions, PmnfError> {
    let data = Weighted::new(points)?;
    let candidates = on_the_curve(&fit, points, candidates);
    let candidates = candidates.as_slice();
    let basis = &fit.model.interval;
    let sigma2 = basis.sigma2;
    let repetitions = basis.relative_repetitions.unwrap_or(1.0);
    let ensemble = basis.ensembles.first().cloned().unwrap_or_default();
    let total: f64 = ensemble.iter().map(|(w, ..)| w).sum();
    let supported: Vec<Supported> = ensemble
        .into_iter()
        .filter_map(|(weight, constant, terms)| {
            let unit = terms_with_unit(&terms);
            let inverse = inverse_gram(&data.weighted_rows(&terms))?;
            Some(Supported {
                weight: weight / total,
                unit,
                constant,
                terms,
                inverse,
            })
        })
        .collect();
    let weighted =
        |f: &dyn Fn(&Supported) -> f64| supported.iter().map(|s| s.weight * f(s)).sum::<f64>();
    let mean_at = |x: &[f64]| weighted(&|s| s.at(x));
    let members: Vec<(f64, f64, Vec<Term>)> = supported
        .iter()
        .map(|s| (s.weight, s.constant, s.terms.clone()))
        .collect();
    let spread_at = |x: &[f64]| super::weighted_spread(&members, x);
    let rows_at =
        |x: &[f64]| -> Vec<Vec<f64>> { supported.iter().map(|s| design_row(&s.unit, x)).collect() };
    let target_rows = rows_at(target);
    let fit_variance: Vec<f64> = supported
        .iter()
        .zip(&target_rows)
        .map(|(s, r)| sigma2 * s.quad(r, r))
        .collect();
    let spread_target = spread_at(target);
    let variance_now = supported
        .iter()
        .zip(&fit_variance)
        .map(|(s, v)| s.weight * v)
        .sum::<f64>()
        + spread_target;
    let measured = |c: &[f64]| points.iter().any(|p| p.coordinate == c);
    let again = to_repeat(&fit.model, points, candidates, repetitions);
    let processes_of = |c: &[f64]| {
        cost_parameter
            .and_then(|p| c.get(p))
            .copied()
            .unwrap_or(1.0)
    };
    // What a run measured at smaller or equal values of every parameter took: a bigger run costs
    // no less.
    let floor = |c: &[f64]| {
        points
            .iter()
            .filter(|p| p.coordinate.iter().zip(c).all(|(a, b)| a <= b))
            .map(|p| {
                let mean = p.values.iter().sum::<f64>() / p.values.len().max(1) as f64;
                mean * repetitions * processes_of(&p.coordinate)
            })
            .fold(0.0, f64::max)
    };
    let assess = |c: &Vec<f64>| {
        let predicted = mean_at(c);
        if !(predicted.is_finite() && predicted > 0.0) {
            return None;
        }
        // A new mean of `repetitions` runs: its weight and its noise.
        let w = repetitions / (predicted * predicted);
        let noise = sigma2 * predicted * predicted / repetitions;
        let rows = rows_at(c);
        let fit_after: f64 = supported
            .iter()
            .zip(&target_rows)
            .zip(&rows)
            .zip(&fit_variance)
            .map(|(((s, t), r), v)| {
                let (a, b) = (s.quad(t, r), s.quad(r, r));
                s.weight * (v - sigma2 * a * a * w / (1.0 + w * b)).max(0.0)
            })
            .sum();
        let d = spread_at(c);
        let spread_after = if d + noise > 0.0 {
            spread_target * noise / (d + noise)
        } else {
            spread_target
        };
        let cost = match run_cost {
            Some(run) => run.cost(c, processes_of) * repetitions,
            None => (predicted * repetitions * processes_of(c)).max(floor(c)),
        };
        Some(Candidate {
            coordinate: c.clone(),
            repeat: measured(c),
            cost,
            variance_after: fit_after + spread_after,
        })
    };
    // The most narrowing per cost first; none where every value is one (nothing to narrow).
    let every_value = the_one_value(points);
    let ranked_of = |offered: &[Vec<f64>]| -> Vec<Candidate> {
        let mut v: Vec<Candidate> = offered.iter().filter_map(assess).collect();
        v.sort_by(|a, b| {
            b.gain_per_cost(variance_now)
                .total_cmp(&a.gain_per_cost(variance_now))
        });
        v.into_iter().filter(|_| every_value.is_none()).collect()
    };
    Ok(Suggestions {
        predicted: fit.model.evaluate(target),
        target: target.to_vec(),
        variance_now,
        ranked: ranked_of(candidates),
        offered: candidates.len(),
        every_value,
        repeats: ranked_of(&again),
        fit,
    })
}

/// The value every repetition of every point measured, where they all measured one.
fn the_one_value(points: &[Point]) -> Option<f64> {
    let first = points.first().and_then(|p| p.values.first()).copied();
    first.filter(|v| points.iter().flat_map(|p| &p.values).all(|x| x == v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmnf::synthetic;

    /// A metric's unit follows its name; an unnamed metric is a time, as Extra-P's text files
    /// leave it.
    #[test]
    fn a_metric_s_unit_follows_its_name() {
        let unit = |m: &str| MetricUnit::of(m).symbol();
        assert_eq!(unit("time"), Some("s"));
        assert_eq!(unit(""), Some("s"));
        assert_eq!(unit("bytes_sent"), Some("B"));
        assert_eq!(unit("PAPI_FP_OPS flops"), Some("FLOP"));
        assert_eq!(unit("visits"), Some("count"));
        assert_eq!(unit("energy"), None);
        // Hardware counters, as Score-P names them (Extra-P's Cube sets measure these three).
        assert_eq!(unit("PAPI_FP_OPS"), Some("FLOP"));
        assert_eq!(unit("PAPI_DP_OPS"), Some("FLOP"));
        assert_eq!(unit("PAPI_L2_TCM"), Some("events"));
        assert_eq!(unit("PAPI_TOT_INS"), Some("events"));
        assert_eq!(unit("perf::cache-misses"), Some("events"));
        assert_eq!(unit("sm__inst_executed.sum"), Some("events"));
        assert_eq!(unit("dram__bytes_read.sum"), Some("B"));
    }

    /// 2 + 0.5 x^2 measured at 2, 4, 8 and 16, 3 repetitions at +-2 %.
    fn clear_law() -> Vec<Point> {
        [2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&x: &f64| {
                let y = 2.0 + 0.5 * x * x;
                Point {
                    coordinate: vec![x],
                    values: vec![y * 1.02, y * 0.98, y],
                }
            })
            .collect()
    }

    /// 2 + 0.5 x^2 measured at 2, 4, 8 and 16 (3 repetitions at +-2 %) for a prediction at 128:
    /// the next run is one doubling past the largest (the range toward the target), its cost the
    /// model's time, and it narrows the prediction; measured configurations are not offered
    /// again, the target is.
    #[test]
    fn the_next_run_extends_the_range_toward_the_target() {
        let points = clear_law();
        let target = [128.0];
        let offered = candidates(&points, &target, &[]);
        assert_eq!(offered, vec![vec![32.0], vec![128.0]]);
        let found = by_own_cost(&points, &target, &offered);
        let best = &found.ranked[0];
        assert_eq!(best.coordinate, vec![32.0]);
        assert!(best.variance_after < found.variance_now, "{found:?}");
        // Three runs of about 2 + 0.5 x 32^2 = 514 s.
        assert!(
            (best.cost - 3.0 * 514.0).abs() < 0.05 * 3.0 * 514.0,
            "{best:?}"
        );
        // Core-seconds: the first parameter counts the processes.
        let by_cores = by_cores(&points, &target, &offered);
        assert!((by_cores.ranked[0].cost / best.cost - 32.0).abs() < 1e-6);
    }

    /// Parameters measured together on one curve (q = p / 100): the model is over p alone, so
    /// only runs on that curve are proposed (the next point, here the target), never p with a q
    /// measured beside another p.
    #[test]
    fn runs_stay_on_the_curve_parameters_moved_along() {
        let points = synthetic::moving_together([1.02, 0.98, 1.01]);
        let target = [16000.0, 160.0];
        let offered = candidates(&points, &target, &[]);
        assert!(offered.contains(&vec![16000.0, 10.0]), "{offered:?}");
        let found = by_own_cost(&points, &target, &offered);
        let proposed: Vec<&Vec<f64>> = found.ranked.iter().map(|c| &c.coordinate).collect();
        assert_eq!(proposed, vec![&vec![16000.0, 160.0]], "{found:?}");
    }

    #[test]
    fn the_next_value_follows_the_grid_the_runs_lie_on() {
        assert_eq!(
            next_on_grid(&[27.0, 64.0, 125.0, 216.0]),
            (343.0, "consecutive cubes")
        );
        assert_eq!(
            next_on_grid(&[1.0, 4.0, 9.0]),
            (16.0, "consecutive squares")
        );
        assert_eq!(
            next_on_grid(&[2.0, 4.0, 8.0, 16.0]),
            (32.0, "a constant ratio")
        );
        assert_eq!(next_on_grid(&[10.0, 20.0, 30.0]), (40.0, "a constant step"));
        assert_eq!(next_on_grid(&[3.0, 5.0, 11.0]), (22.0, "a doubling"));
        assert_eq!(next_on_grid(&[8.0, 64.0]), (128.0, "a doubling"));
    }

    /// Four points on cubes (no repetitions) rising fast: the next run offered is the next cube,
    /// not a doubling, and none costs less than the largest run measured took.
    /// [`suggest`] with default options, each run costed by the call path's own model.
    fn by_own_cost(points: &[Point], target: &[f64], offered: &[Vec<f64>]) -> Suggestions {
        suggest(points, &PmnfOptions::default(), target, offered, None, None).unwrap()
    }

    /// [`suggest`] with default options, the first parameter counting the processes.
    fn by_cores(points: &[Point], target: &[f64], offered: &[Vec<f64>]) -> Suggestions {
        suggest(
            points,
            &PmnfOptions::default(),
            target,
            offered,
            Some(0),
            None,
        )
        .unwrap()
    }

    /// A file's runs are costed by their longest call path: a communication call that takes
    /// next to nothing is measured by a run as long as the compute beside it, and no run costs
    /// less than one measured at smaller or equal values; a file without time costs a run by
    /// its number.
    #[test]
    fn a_run_costs_its_longest_call_path_and_no_less_than_a_measured_one() {
        let series = |f: &dyn Fn(f64) -> f64| -> Vec<Point> {
            [1.0, 2.0, 4.0, 8.0, 16.0]
                .iter()
                .map(|&p: &f64| Point {
                    coordinate: vec![p],
                    values: vec![f(p)],
                })
                .collect()
        };
        // Compute 0.5 p s (a weak-scaling sweep); a collective 1e-4 log2(p) s.
        let compute = series(&|p| 0.5 * p);
        let collective = series(&|p| 1e-4 * p.log2());
        let options = PmnfOptions::default();
        let models: Vec<super::super::PmnfModel> = [&compute, &collective]
            .iter()
            .map(|s| fit_robust(s, &options).unwrap().model)
            .collect();
        let run = RunCost::new([
            (compute.as_slice(), Some(&models[0])),
            (collective.as_slice(), Some(&models[1])),
        ]);
        let seconds = |_: &[f64]| 1.0;
        // At p = 32 the compute's 16 s: what a run there takes, whichever call path asks.
        assert!((run.cost(&[32.0], seconds) - 16.0).abs() < 0.1, "{run:?}");
        let cores = |c: &[f64]| c[0];
        assert!((run.cost(&[32.0], cores) - 512.0).abs() < 3.0);
        // A run below the measured ones costs no less than a measured run at smaller values.
        let shrinking = RunCost::new([(compute.as_slice(), None)]);
        assert_eq!(shrinking.cost(&[32.0], seconds), 8.0);
        let target = [64.0];
        let offered = candidates(&collective, &target, &[Grid::Inferred]);
        let by_run = suggest(&collective, &options, &target, &offered, None, Some(&run)).unwrap();
        let by_own = suggest(&collective, &options, &target, &offered, None, None).unwrap();
        let at_32 = |s: &Suggestions| {
            s.ranked
                .iter()
                .find(|c| c.coordinate == [32.0])
                .map(|c| c.cost)
                .unwrap()
        };
        assert!(at_32(&by_own) < 0.01, "{}", at_32(&by_own));
        assert!(at_32(&by_run) > 15.0, "{}", at_32(&by_run));
        let per_run = RunCost::per_run();
        assert!(per_run.is_per_run());
        assert_eq!(per_run.cost(&[32.0], cores), 32.0);
        assert!(is_time_metric("time") && is_time_metric("") && !is_time_metric("visits"));
    }

    /// A flat cost per process measured with 30 % noise on 2, 4, 8 and 16 processes (two
    /// repetitions each), asked at 32: the points show no trend beyond their noise, so measured
    /// configurations are offered again beside the run at 32, and a repeat on few processes
    /// narrows the prediction more per core-second than that run would. Where the law is clear (2 + 0.5 x^2 at +-2 %),
    /// none is.
    #[test]
    fn repeats_are_offered_where_the_noise_dominates() {
        let noise = [[1.3, 0.75], [0.8, 1.25], [1.2, 0.85], [0.7, 1.2]];
        let points: Vec<Point> = [2.0, 4.0, 8.0, 16.0]
            .iter()
            .zip(noise)
            .map(|(&x, [a, b])| Point {
                coordinate: vec![x],
                values: vec![10.0 * a, 10.0 * b],
            })
            .collect();
        let target = [32.0];
        let offered = candidates(&points, &target, &[]);
        assert_eq!(offered, vec![vec![32.0]]);
        let found = by_cores(&points, &target, &offered);
        assert_eq!(found.offered, 1);
        assert_eq!(found.repeats.len(), 4, "{found:?}");
        assert!(found.repeats.iter().all(|c| c.repeat));
        let best = &found.repeats[0];
        assert!(best.coordinate[0] < 16.0, "{found:?}");
        let fresh = &found.ranked[0];
        assert_eq!(
            (fresh.coordinate.as_slice(), fresh.repeat),
            (&[32.0][..], false)
        );
        assert!(
            best.gain_per_cost(found.variance_now) > fresh.gain_per_cost(found.variance_now),
            "{found:?}"
        );
        // A clear law, far from its points: the choice of terms dominates, no repeat.
        let clear = clear_law();
        let far = by_own_cost(&clear, &[128.0], &candidates(&clear, &[128.0], &[]));
        assert!(far.repeats.is_empty() && far.ranked.iter().all(|c| !c.repeat));
    }

    /// An exact count, the same at every run (a call path visited once per run), has nothing
    /// to narrow: no run and no repeat is offered, and the value is given for the reason.
    #[test]
    fn a_value_measured_the_same_at_every_run_offers_nothing_and_says_which() {
        let points: Vec<Point> = [1.0, 10.0, 100.0, 1000.0]
            .iter()
            .map(|&x| Point {
                coordinate: vec![x],
                values: vec![2.0],
            })
            .collect();
        let target = [4000.0];
        let found = by_own_cost(&points, &target, &candidates(&points, &target, &[]));
        assert_eq!(found.every_value, Some(2.0));
        assert!(
            found.ranked.is_empty() && found.repeats.is_empty(),
            "{found:?}"
        );
        // One value apart: offered as before.
        let mut varied = points.clone();
        varied[3].values = vec![2.5];
        let found = by_own_cost(&varied, &target, &candidates(&varied, &target, &[]));
        assert_eq!(found.every_value, None);
        assert!(!found.ranked.is_empty());
    }

    #[test]
    fn costs_never_fall_below_a_measured_run() {
        let points = synthetic::rising_series();
        let target = [432.0];
        let offered = candidates(&points, &target, &[]);
        assert_eq!(offered, vec![vec![343.0], vec![432.0]]);
        let found = by_own_cost(&points, &target, &offered);
        for c in &found.ranked {
            assert!(c.cost >= 2.13, "{c:?}");
        }
        assert_eq!(found.offered, 2);
    }

    #[test]
    fn a_grid_the_user_gives_sets_the_next_values() {
        assert_eq!(
            Grid::parse("cubes").unwrap().next(&[27.0, 64.0]),
            vec![125.0]
        );
        assert_eq!(
            Grid::parse("squares").unwrap().next(&[16.0, 20.0]),
            vec![25.0]
        );
        assert_eq!(Grid::parse("x4").unwrap().next(&[1.0, 4.0]), vec![16.0]);
        assert_eq!(Grid::parse("+10").unwrap().next(&[10.0, 20.0]), vec![30.0]);
        assert_eq!(
            Grid::parse("64/128/256").unwrap().next(&[32.0, 64.0]),
            vec![128.0, 256.0]
        );
        for bad in ["x1", "x-2", "+zero", "hexagons", "8/-1"] {
            assert!(Grid::parse(bad).is_err(), "{bad}");
        }
        // Two values only: a doubling, unless the user says how the grid goes on.
        let points: Vec<Point> = [27.0, 64.0]
            .iter()
            .map(|&p| Point {
                coordinate: vec![p],
                values: vec![p],
            })
            .collect();
        assert!(candidates(&points, &[343.0], &[]).contains(&vec![128.0]));
        let cubes = candidates(&points, &[343.0], &[Grid::Powers(3)]);
        assert!(cubes.contains(&vec![125.0]), "{cubes:?}");
        assert!(!cubes.contains(&vec![128.0]), "{cubes:?}");
    }
}
