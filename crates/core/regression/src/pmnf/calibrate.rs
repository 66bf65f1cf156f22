//! Intervals that hold on the file they come from (docs/methods.md, section 7): split-conformal
//! calibration of a search's prediction intervals on the file's own held-out points.
//!
//! A model's interval is built from its fit (the t-interval of the least-squares fit, and for
//! the robust search the noise of the repetitions and the spread of the term sets it could have
//! chosen). It holds at its stated rate where the law is one the search builds and the noise is
//! what the points show; on real files with few points and no repetitions it may not. The file
//! itself says how far off it is: every call path's largest point (every parameter at its
//! largest value) is held out, the same search fits the rest, and the check's *score* is 0 where
//! the search's own interval holds the held-out value, else how far the value lies from the
//! prediction as a factor, `|ln(measured / predicted)|` (infinite where either is not positive).
//! The file's calibrated interval is the search's own widened, where needed, to the prediction
//! times and divided by `exp(q)`, `q` the `level` quantile of the scores, rounded up as split
//! conformal prediction rounds (the `ceil((n + 1) level)`-th smallest of `n` scores): a value
//! one step beyond the points falls inside at the stated rate where the call paths of one file
//! err alike. Relative, because times err by factors: a score in units of each model's own
//! half-width is dominated by the call paths fitted almost exactly, which then miss by a few per
//! cent at a thousand half-widths and would widen every other interval a thousandfold.
//!
//! With fewer checks than that quantile needs (19 for 95 %), the factor is the largest score,
//! and [`Calibration::describe`] says that the checks cannot bound it; with none, the interval
//! is the search's own, said so too.
//!
//! A search that could check nothing on a file (the robust one, on files with one value a point
//! and five sizes: a check's fit keeps three values, from which it returns only a constant) may
//! borrow from one that could ([`Calibration::or_borrowed`]): its interval at a point is then
//! the lender's calibrated interval there, stretched to hold its own prediction. Whatever the
//! lender's interval holds, the borrowed one holds too, so it holds at least at the lender's
//! checked rate; it is as wide as the lender's plus the distance between the two predictions.

use serde::{Deserialize, Serialize};

use super::robust::fit_robust;
use super::suggest::MetricUnit;
use super::{
    Aggregate, MINIMUM_POINTS, PmnfModel, PmnfOptions, Point, enough_values, fit, largest_values,
    mean, median,
};

/// How a file's intervals were calibrated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Widened by the conformal quantile of the file's checks.
    Conformal,
    /// Too few checks for the level: widened to hold the worst of them.
    TooFewChecks,
    /// No call path kept enough points to check a prediction beyond them: the search's own.
    Uncalibrated,
    /// None could be checked for this search, but another search's intervals were: each is
    /// that search's calibrated interval at the same point, stretched to hold this prediction.
    Borrowed,
}

/// The calibration of one search's intervals over one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The intervals' stated coverage (0.95: about 95 %).
    pub level: f64,
    /// Every interval holds at least the prediction divided and multiplied by this (1: the
    /// search's own; infinite, written `"inf"`: the checks found no bound).
    #[serde(with = "super::saved::number")]
    pub factor: f64,
    /// Held-out points checked (one per call path that keeps enough points without it).
    pub checks: usize,
    /// Of those, how many the search's own interval held.
    pub held_unscaled: usize,
    pub basis: Basis,
    /// The values of every parameter a check's fit kept at least (the fewest from which the
    /// search can choose among its hypotheses).
    pub fewest_values: usize,
    /// With basis [`Basis::Borrowed`], the calibration of the search whose intervals are lent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lender: Option<Box<Calibration>>,
}

impl Calibration {
    /// The calibration of `scores` (see the module's notes) at `level`.
    pub fn from_scores(scores: &[f64], level: f64, fewest_values: usize) -> Self {
        let mut sorted: Vec<f64> = scores.iter().copied().filter(|s| !s.is_nan()).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let held_unscaled = sorted.iter().filter(|&&s| s == 0.0).count();
        let rank = conformal_rank(n, level);
        let (q, basis) = match sorted.last() {
            None => (0.0, Basis::Uncalibrated),
            Some(&largest) if rank > n => (largest, Basis::TooFewChecks),
            Some(_) => (sorted[rank.max(1) - 1], Basis::Conformal),
        };
        Calibration {
            level,
            factor: q.exp(),
            checks: n,
            held_unscaled,
            basis,
            fewest_values,
            lender: None,
        }
    }

    /// This calibration, or, where it could check nothing and `lender` (another search's over
    /// the same file) checked something, that one lent (basis [`Basis::Borrowed`]; see the
    /// module's notes). Its own fields stay its own: [`Calibration::interval`] still gives the
    /// search's own intervals, [`Calibration::interval_beside`] the borrowed ones.
    pub fn or_borrowed(self, lender: &Calibration) -> Calibration {
        let lendable = matches!(lender.basis, Basis::Conformal | Basis::TooFewChecks)
            && lender.factor.is_finite();
        if self.basis != Basis::Uncalibrated || !lendable {
            return self;
        }
        Calibration {
            basis: Basis::Borrowed,
            lender: Some(Box::new(lender.clone())),
            ..self
        }
    }

    /// `model`'s interval at `x`, as [`Calibration::interval`], except where this calibration is
    /// borrowed: then the lender's calibrated interval of `lender_model` (the lending search's
    /// model of the same call path) at `x`, stretched to hold `model`'s prediction; the
    /// search's own where the lender has no model or no interval there.
    pub fn interval_beside(
        &self,
        model: &PmnfModel,
        x: &[f64],
        lender_model: Option<&PmnfModel>,
    ) -> Option<(f64, f64)> {
        let lent = match (&self.lender, lender_model) {
            (Some(lender), Some(m)) => lender.interval(m, x),
            _ => None,
        };
        match lent {
            Some((lo, hi)) => {
                let y = model.evaluate(x);
                Some((lo.min(y), hi.max(y)))
            }
            None => self.interval(model, x),
        }
    }

    /// `model`'s interval at `x` under this calibration: the search's own, widened to the
    /// prediction divided and multiplied by the factor (where the prediction is positive);
    /// `None` where neither gives a bound.
    pub fn interval(&self, model: &PmnfModel, x: &[f64]) -> Option<(f64, f64)> {
        let own = model.interval(x, self.level);
        let y = model.evaluate(x);
        // The checks widen an interval to the prediction divided and multiplied by the factor;
        // a factor of 1 widens nothing, and where the fit gives no bound it makes none.
        let relative = (y > 0.0 && self.factor.is_finite() && self.factor > 1.0)
            .then(|| (y / self.factor, y * self.factor));
        match (own, relative) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (one, None) if self.factor.is_finite() => one,
            (None, other) => other,
            _ => None,
        }
    }

    /// What the calibration did, in a sentence.
    pub fn describe(&self) -> String {
        let pct = 100.0 * self.level;
        let points = |n: usize| {
            if n == 1 {
                "1 held-out point".to_owned()
            } else {
                format!("{n} held-out points")
            }
        };
        let widened = if !self.factor.is_finite() {
            "unbounded: too many checks predicted no positive value where one was measured"
                .to_owned()
        } else if self.factor > 1.0 {
            format!(
                "widened where narrower to the prediction divided and multiplied by {:.3}",
                self.factor
            )
        } else {
            "kept as the search gives them".to_owned()
        };
        match self.basis {
            Basis::Conformal => format!(
                "{pct:.0} % intervals calibrated on {} (each call path's largest, predicted from its other points), of which the search's own held {}: {widened}",
                points(self.checks),
                self.held_unscaled
            ),
            Basis::TooFewChecks => format!(
                "only {} to check the intervals on ({} are needed for {pct:.0} %), of which the search's own held {}: {widened}{}",
                points(self.checks),
                needed_checks(self.level),
                self.held_unscaled,
                if self.factor > 1.0 {
                    ", to hold the worst of them, which is all the checks can say"
                } else {
                    "; the checks cannot say more"
                }
            ),
            Basis::Uncalibrated => format!(
                "{pct:.0} % intervals not calibrated: no call path keeps {} values of every parameter without its largest point (the fewest this search chooses a model from), so none could be checked; they are the search's own",
                self.fewest_values
            ),
            Basis::Borrowed => format!(
                "{pct:.0} % intervals borrowed: no call path keeps {} values of every parameter without its largest point (the fewest this search chooses a model from), so none of this search's could be checked; each is the Extra-P-compatible search's interval at the same point, stretched to hold this prediction (that search's: {})",
                self.fewest_values,
                self.lender
                    .as_ref()
                    .map_or_else(String::new, |l| l.describe())
            ),
        }
    }
}

/// The rank (1-based) of the conformal quantile at `level` among `n` scores:
/// `ceil((n + 1) level)`, rounding errors of `level` aside; above `n` where `n` are too few.
fn conformal_rank(n: usize, level: f64) -> usize {
    ((n as f64 + 1.0) * level - 1e-9).ceil() as usize
}

/// The fewest checks whose conformal quantile at `level` is one of them (19 for 0.95).
pub fn needed_checks(level: f64) -> usize {
    if !(level > 0.0 && level < 1.0) {
        return usize::MAX;
    }
    (1..)
        .find(|&n| conformal_rank(n, level) <= n)
        .unwrap_or(usize::MAX)
}

/// A series split for a check: its points without the one held out, and that one. The held-out
/// point has every parameter at its largest value (else, where the grid lacks that corner, the
/// largest first parameter); `None` where the rest keeps fewer than `fewest_values` (at least
/// [`MINIMUM_POINTS`]) values of some parameter.
pub fn held_out_split(points: &[Point], fewest_values: usize) -> Option<(Vec<Point>, &Point)> {
    let dims = points.first()?.coordinate.len();
    let largest = largest_values(points);
    let last = points
        .iter()
        .position(|p| p.coordinate == largest)
        .or_else(|| {
            (0..points.len())
                .max_by(|&a, &b| points[a].coordinate[0].total_cmp(&points[b].coordinate[0]))
        })?;
    let rest: Vec<Point> = points
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != last)
        .map(|(_, p)| p.clone())
        .collect();
    enough_values(rest.iter().map(|p| p.coordinate.as_slice()), dims).ok()?;
    let kept = |d: usize| {
        let mut v: Vec<f64> = rest.iter().map(|p| p.coordinate[d]).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v.len()
    };
    if (0..dims).any(|d| kept(d) < fewest_values) {
        return None;
    }
    Some((rest, &points[last]))
}

/// A point's measured value as the fit reduces its repetitions.
pub fn measured(point: &Point, aggregate: Aggregate) -> f64 {
    match aggregate {
        Aggregate::Mean => mean(&point.values),
        Aggregate::Median => median(&point.values),
    }
}

/// A check's score (see the module's notes): 0 where `model`'s own interval at `x` and `level`
/// holds `measured`, else `|ln(measured / predicted)|`, infinite where either is not positive.
pub fn score(model: &PmnfModel, x: &[f64], measured: f64, level: f64) -> f64 {
    let y = model.evaluate(x);
    let held = model
        .interval(x, level)
        .is_some_and(|(lo, hi)| (lo..=hi).contains(&measured));
    if held || measured == y {
        0.0
    } else if measured > 0.0 && y > 0.0 {
        (measured / y).ln().abs()
    } else {
        f64::INFINITY
    }
}

/// The fewest values of every parameter from which the robust search chooses a model other
/// than a constant without repetitions (its criterion, AICc, needs more points than a term's
/// two coefficients and one).
pub const ROBUST_FEWEST_VALUES: usize = 4;

/// The fewest values of every parameter the robust search's checks keep over `series`: with
/// repetitions at every point, the noise is known from them and the criterion (`chi^2 + 2k`)
/// needs no small-sample correction, so three values choose a term as they do for Extra-P's
/// search ([`MINIMUM_POINTS`]); without, [`ROBUST_FEWEST_VALUES`].
pub fn robust_fewest_values(series: &[&[Point]]) -> usize {
    let repeated = series
        .iter()
        .flat_map(|points| points.iter())
        .all(|p| p.values.len() >= 2);
    if repeated && series.iter().any(|s| !s.is_empty()) {
        MINIMUM_POINTS
    } else {
        ROBUST_FEWEST_VALUES
    }
}

/// The calibration of one search (`fit`) over a file's `series` at `level`: each series' check
/// (see the module's notes; its fit keeping `fewest_values` of every parameter) scored, then
/// [`Calibration::from_scores`].
pub fn calibrate(
    series: &[&[Point]],
    aggregate: Aggregate,
    level: f64,
    fewest_values: usize,
    fit: impl Fn(&[Point]) -> Option<PmnfModel>,
) -> Calibration {
    let fewest_values = fewest_values.max(MINIMUM_POINTS);
    let scores: Vec<f64> = series
        .iter()
        .filter_map(|points| {
            let (rest, held) = held_out_split(points, fewest_values)?;
            let model = fit(&rest)?;
            Some(score(
                &model,
                &held.coordinate,
                measured(held, aggregate),
                level,
            ))
        })
        .collect();
    Calibration::from_scores(&scores, level, fewest_values)
}

/// Call paths' points (each with its metric's name) grouped by their metric's unit, in the
/// order first met: each unit is calibrated apart. The times of a file's phases err alike; its
/// visit counts, counted exactly, do not err as its times do, and among the times they would
/// narrow the times' intervals.
pub fn by_unit<'p>(
    series: impl IntoIterator<Item = (&'p str, &'p [Point])>,
) -> Vec<(MetricUnit, Vec<&'p [Point]>)> {
    let mut units: Vec<(MetricUnit, Vec<&'p [Point]>)> = Vec::new();
    for (metric, points) in series {
        let unit = MetricUnit::of(metric);
        match units.iter_mut().find(|(u, _)| *u == unit) {
            Some((_, group)) => group.push(points),
            None => units.push((unit, vec![points])),
        }
    }
    units
}

/// The Extra-P-compatible search's ([`fit`]) calibration over a file's `series` at `level`.
pub fn extrap_calibration(series: &[&[Point]], options: &PmnfOptions, level: f64) -> Calibration {
    calibrate(series, options.aggregate, level, 0, |rest| {
        fit(rest, options).ok()
    })
}

/// The robust search's ([`fit_robust`]) calibration over a file's `series` at `level`, its
/// checks keeping [`robust_fewest_values`]; where it could check nothing, the one `lender`
/// gives (the Extra-P-compatible search's, asked only then) lent ([`Calibration::or_borrowed`]).
pub fn robust_calibration(
    series: &[&[Point]],
    options: &PmnfOptions,
    level: f64,
    lender: impl FnOnce() -> Calibration,
) -> Calibration {
    let own = calibrate(
        series,
        options.aggregate,
        level,
        robust_fewest_values(series),
        |rest| fit_robust(rest, options).ok().map(|r| r.model),
    );
    if own.basis == Basis::Uncalibrated {
        own.or_borrowed(&lender())
    } else {
        own
    }
}

/// What a model's interval needs beside the model under its file's calibration, kept with it:
/// the calibration, the lending search's model where it is borrowed, and whether the quantity
/// is never negative. A bundle's saved scaling model holds one per call path, so that it answers
/// with the intervals its step reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedIntervals {
    pub calibration: Calibration,
    /// With a borrowed calibration, the lending search's model of the same call path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lender_model: Option<PmnfModel>,
    /// Every measured value was 0 or more (times, visits, bytes): an interval's low end is then
    /// 0 at the least, where a model's band may reach below.
    pub never_negative: bool,
}

impl CalibratedIntervals {
    /// The intervals of a call path measured at `points` under `calibration` (`lender_model`:
    /// the lending search's model of it, used where the calibration is borrowed).
    pub fn new(
        calibration: Calibration,
        points: &[Point],
        lender_model: Option<PmnfModel>,
    ) -> Self {
        let lender_model = lender_model.filter(|_| calibration.basis == Basis::Borrowed);
        CalibratedIntervals {
            calibration,
            lender_model,
            never_negative: points.iter().flat_map(|p| &p.values).all(|v| *v >= 0.0),
        }
    }

    /// `model`'s interval at `x` ([`Calibration::interval_beside`]), its low end at 0 the least
    /// where nothing measured was negative; `None` where neither the fit nor the checks bound it.
    pub fn interval(&self, model: &PmnfModel, x: &[f64]) -> Option<(f64, f64)> {
        let (lo, hi) = self
            .calibration
            .interval_beside(model, x, self.lender_model.as_ref())?;
        Some(if self.never_negative {
            (lo.max(0.0), hi.max(0.0))
        } else {
            (lo, hi)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pmnf::{PmnfOptions, fit};

    /// A calibration saved with a model reads back as it was, an unbounded one too (JSON has no
    /// infinity: its factor is written `"inf"`), and a borrowed one with its lender.
    #[test]
    fn a_calibration_reads_back_as_it_was_saved() {
        let unbounded = Calibration::from_scores(&[f64::INFINITY; 20], 0.95, 3);
        let text = serde_json::to_string(&unbounded).unwrap();
        assert!(text.contains("\"factor\":\"inf\""), "{text}");
        let read: Calibration = serde_json::from_str(&text).unwrap();
        assert_eq!(read, unbounded);
        let lender = Calibration::from_scores(&[0.0, 0.2, 0.4], 0.95, 3);
        let borrowed = Calibration::from_scores(&[], 0.95, 4).or_borrowed(&lender);
        assert_eq!(borrowed.basis, Basis::Borrowed);
        let text = serde_json::to_string(&borrowed).unwrap();
        assert_eq!(
            serde_json::from_str::<Calibration>(&text).unwrap(),
            borrowed
        );
    }

    #[test]
    fn the_quantile_is_the_conformal_rank_and_too_few_checks_hold_the_worst() {
        // 19 scores 0.1 ... 1.9: ceil(20 x 0.95) = 19, the largest.
        let scores: Vec<f64> = (1..=19).map(|i| 0.1 * f64::from(i)).collect();
        let c = Calibration::from_scores(&scores, 0.95, 3);
        assert_eq!(c.basis, Basis::Conformal);
        assert!((c.factor - 1.9f64.exp()).abs() < 1e-12);
        // 39 scores, one huge miss: the 38th smallest, so that miss alone does not set the
        // width; the search's own intervals held the 10 scored 0.
        let mut scores = vec![0.0; 10];
        scores.extend((1..=28).map(|i| 0.01 * f64::from(i)));
        scores.push(50.0);
        let c = Calibration::from_scores(&scores, 0.95, 3);
        assert!((c.factor - 0.28f64.exp()).abs() < 1e-12, "{c:?}");
        assert_eq!(c.held_unscaled, 10);
        let c = Calibration::from_scores(&[0.0, 0.1, 0.3], 0.95, 3);
        assert_eq!(c.basis, Basis::TooFewChecks);
        assert!((c.factor - 0.3f64.exp()).abs() < 1e-12);
        assert!(
            c.describe().contains("only 3 held-out points"),
            "{}",
            c.describe()
        );
        let c = Calibration::from_scores(&[], 0.95, 4);
        assert_eq!((c.basis, c.factor), (Basis::Uncalibrated, 1.0));
        assert!(
            c.describe().contains("no call path keeps 4 values"),
            "{}",
            c.describe()
        );
        let c = Calibration::from_scores(&[f64::INFINITY; 20], 0.95, 3);
        assert!(c.describe().contains("unbounded"), "{}", c.describe());
        assert_eq!(needed_checks(0.95), 19);
        assert_eq!(needed_checks(0.9), 9);
        assert_eq!(needed_checks(1.0), usize::MAX);
    }

    /// Call paths whose times rise faster at their largest points than their smaller ones
    /// show (a knee: communication taking over), as in real scaling studies: the search's own
    /// intervals miss the held-out points, the file's checks see it and widen them.
    #[test]
    fn a_file_whose_call_paths_bend_beyond_their_points_gets_wider_intervals() {
        let series: Vec<Vec<Point>> = (0..30)
            .map(|k| {
                let a = 1.0 + 0.1 * f64::from(k);
                [8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
                    .iter()
                    .enumerate()
                    .map(|(i, &p): (usize, &f64)| {
                        // A small wobble, so the fit has residuals, and a knee past p = 128.
                        let wobble = 1.0
                            + 0.01
                                * if (i + k as usize).is_multiple_of(2) {
                                    1.0
                                } else {
                                    -1.0
                                };
                        let knee = if p > 128.0 { 1.8 } else { 1.0 };
                        Point {
                            coordinate: vec![p],
                            values: vec![a * p * wobble * knee],
                        }
                    })
                    .collect()
            })
            .collect();
        let borrowed: Vec<&[Point]> = series.iter().map(Vec::as_slice).collect();
        let options = PmnfOptions::default();
        let c = calibrate(&borrowed, Aggregate::Mean, 0.95, MINIMUM_POINTS, |p| {
            fit(p, &options).ok()
        });
        assert_eq!(c.checks, 30);
        assert_eq!(c.basis, Basis::Conformal);
        assert!(c.factor > 1.5, "{c:?}");
        // The scaled interval of a check holds its held-out point.
        let (rest, held) = held_out_split(&series[0], MINIMUM_POINTS).unwrap();
        let model = fit(&rest, &options).unwrap();
        let (lo, hi) = c.interval(&model, &held.coordinate).unwrap();
        assert!((lo..=hi).contains(&held.values[0]), "{lo} {hi} {held:?}");
        assert!(
            c.describe().contains("30 held-out points"),
            "{}",
            c.describe()
        );
    }

    /// The robust search's model of `points`, with default options.
    fn robust_model(points: &[Point]) -> Option<PmnfModel> {
        super::super::robust::fit_robust(points, &PmnfOptions::default())
            .ok()
            .map(|r| r.model)
    }

    /// The robust search's calibration over `series` at 95 %, its checks keeping the values
    /// [`robust_fewest_values`] says.
    fn calibrate_robust(series: &[&[Point]]) -> Calibration {
        calibrate(
            series,
            Aggregate::Mean,
            0.95,
            robust_fewest_values(series),
            robust_model,
        )
    }

    /// With repetitions the robust search's criterion knows the noise and chooses a term from
    /// three values, so its checks hold out the fourth of a four-value call path; without, they
    /// need four values left.
    #[test]
    fn the_robust_checks_keep_three_values_where_every_point_is_repeated() {
        let series = |reps: usize| -> Vec<Point> {
            [1.0, 2.0, 4.0, 8.0]
                .iter()
                .map(|&x: &f64| Point {
                    coordinate: vec![x],
                    values: (0..reps).map(|r| x * x * (1.0 + 0.01 * r as f64)).collect(),
                })
                .collect()
        };
        let (once, twice) = (series(1), series(3));
        assert_eq!(robust_fewest_values(&[&once]), ROBUST_FEWEST_VALUES);
        assert_eq!(robust_fewest_values(&[&twice]), MINIMUM_POINTS);
        assert_eq!(robust_fewest_values(&[&twice, &once]), ROBUST_FEWEST_VALUES);
        let checked = calibrate_robust(&[&twice]);
        assert_eq!(checked.checks, 1);
        assert_eq!(checked.held_unscaled, 1, "{checked:?}");
        let unchecked = calibrate_robust(&[&once]);
        assert_eq!(unchecked.basis, Basis::Uncalibrated);
    }

    /// Four sizes and one value a point (a real scaling study of five, its largest to predict):
    /// the robust search's checks keep three values and cannot be made, the Extra-P-compatible
    /// search's can; the
    /// robust intervals are then the latter's calibrated ones, stretched to the robust
    /// prediction, holding whatever those hold.
    #[test]
    fn a_search_that_can_check_nothing_borrows_the_intervals_of_one_that_could() {
        let series: Vec<Vec<Point>> = (0..25)
            .map(|k| {
                let a = 1.0 + 0.05 * f64::from(k);
                [8.0, 16.0, 32.0, 64.0]
                    .iter()
                    .enumerate()
                    .map(|(i, &p): (usize, &f64)| {
                        let wobble = 1.0 + 0.03 * ((i * 7 + k as usize) % 5) as f64 / 4.0;
                        Point {
                            coordinate: vec![p],
                            values: vec![a * p.powf(1.5) * wobble],
                        }
                    })
                    .collect()
            })
            .collect();
        let borrowed: Vec<&[Point]> = series.iter().map(Vec::as_slice).collect();
        let options = PmnfOptions::default();
        let default = calibrate(&borrowed, Aggregate::Mean, 0.95, 0, |p| {
            fit(p, &options).ok()
        });
        assert_eq!(default.basis, Basis::Conformal, "{default:?}");
        let own = calibrate_robust(&borrowed);
        assert_eq!(own.basis, Basis::Uncalibrated);
        let lent = own.clone().or_borrowed(&default);
        assert_eq!(lent.basis, Basis::Borrowed);
        assert!(lent.describe().contains("borrowed"), "{}", lent.describe());
        assert!(
            lent.describe().contains("25 held-out points"),
            "{}",
            lent.describe()
        );
        // Beyond the points: the lender's interval, stretched to hold the robust prediction.
        let x = [128.0];
        let (r, d) = (
            robust_model(&series[3]).unwrap(),
            fit(&series[3], &options).unwrap(),
        );
        let (lo, hi) = lent.interval_beside(&r, &x, Some(&d)).unwrap();
        let (dlo, dhi) = default.interval(&d, &x).unwrap();
        let y = r.evaluate(&x);
        assert_eq!((lo, hi), (dlo.min(y), dhi.max(y)));
        // Without the lender's model, or calibrated on its own, the search's own interval.
        assert_eq!(lent.interval_beside(&r, &x, None), own.interval(&r, &x));
        // Nothing is lent to a calibrated search, nor by one that checked nothing.
        assert_eq!(
            default.clone().or_borrowed(&default).basis,
            Basis::Conformal
        );
        assert_eq!(own.clone().or_borrowed(&own).basis, Basis::Uncalibrated);
    }

    #[test]
    fn a_series_without_enough_points_beside_its_largest_is_not_checked() {
        let points: Vec<Point> = [1.0, 2.0, 4.0]
            .iter()
            .map(|&x| Point {
                coordinate: vec![x],
                values: vec![x],
            })
            .collect();
        assert!(held_out_split(&points, MINIMUM_POINTS).is_none());
        let four = [
            points.clone(),
            vec![Point {
                coordinate: vec![8.0],
                values: vec![8.0],
            }],
        ]
        .concat();
        // Three values left: enough for the Extra-P-compatible search, not for the robust one.
        assert!(held_out_split(&four, ROBUST_FEWEST_VALUES).is_none());
        let (rest, held) = held_out_split(&four, MINIMUM_POINTS)
            .map(|(r, h)| (r, h.clone()))
            .unwrap();
        assert_eq!((rest.len(), held.coordinate[0]), (3, 8.0));
    }
}
