//! Empirical scaling models in the performance model normal form (PMNF) of Extra-P (Calotoiu et
//! al., SC '13; multi-parameter models after Ritter et al., IPDPS '20), as Extra-P 4.2 builds
//! them (docs/methods.md, section 7):
//!
//! f(x) = c0 + sum_k c_k * prod_l x_l^(i_kl) * log2(x_l)^(j_kl)
//!
//! - One parameter: each hypothesis c0 + c1 * x^(i) * log2(x)^(j), (i, j) from Extra-P's 42
//!   default exponent pairs (19 without logarithms, where a parameter value is below 1), is
//!   scored by leave-one-out cross-validation: the symmetric mean absolute percentage error
//!   (SMAPE) of each point predicted by the fit to the others. The constant model (the mean) is
//!   the first candidate; a hypothesis replaces the best only with a strictly smaller SMAPE and a
//!   term that contributes at least 0.05 % of some measured value.
//! - Several parameters: a single-parameter model per parameter, on the points along the longest
//!   lines of measurements in that parameter's direction (each value's mean over the lines);
//!   then the additive and multiplicative combinations of their terms (and, for two or three
//!   parameters, the mixed sums of products), each fitted to every point; the smallest in-sample
//!   SMAPE wins.
//! - Repetitions are reduced to their mean or median first, as the user asks.
//!
//! Every model carries its RSS, SMAPE and adjusted R² (cross-validated or in-sample, as
//! selected) and a prediction interval from its final least-squares fit. No I/O.

use faer::Mat;
use serde::{Deserialize, Serialize};

pub mod calibrate;
pub mod extrap;
pub mod robust;
pub mod saved;
pub mod suggest;
pub mod synthetic;

/// A compound term of one parameter: x^(numerator / denominator) * log2(x)^log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Exponents {
    pub numerator: i32,
    pub denominator: i32,
    pub log: i32,
}

impl Exponents {
    pub const fn new(numerator: i32, denominator: i32, log: i32) -> Self {
        Self {
            numerator,
            denominator,
            log,
        }
    }

    /// The polynomial exponent.
    pub fn poly(self) -> f64 {
        f64::from(self.numerator) / f64::from(self.denominator)
    }

    pub fn evaluate(self, x: f64) -> f64 {
        let mut v = 1.0;
        if self.numerator != 0 {
            v *= x.powf(self.poly());
        }
        if self.log != 0 {
            v *= x.log2().powi(self.log);
        }
        v
    }

    /// As Extra-P writes it: `x^(3/2) * log2(x)^(1)`.
    pub fn to_extrap(self, parameter: &str) -> String {
        let mut parts = Vec::new();
        if self.numerator != 0 {
            let e = if self.denominator == 1 {
                self.numerator.to_string()
            } else {
                format!("{}/{}", self.numerator, self.denominator)
            };
            parts.push(format!("{parameter}^({e})"));
        }
        if self.log != 0 {
            parts.push(format!("log2({parameter})^({})", self.log));
        }
        parts.join(" * ")
    }
}

/// Extra-P's default hypotheses of one parameter, in its order (the order breaks ties).
pub const DEFAULT_EXPONENTS: [Exponents; 42] = {
    const fn e(n: i32, d: i32, l: i32) -> Exponents {
        Exponents::new(n, d, l)
    }
    [
        e(0, 1, 1),
        e(0, 1, 2),
        e(1, 4, 0),
        e(1, 3, 0),
        e(1, 4, 1),
        e(1, 3, 1),
        e(1, 4, 2),
        e(1, 3, 2),
        e(1, 2, 0),
        e(1, 2, 1),
        e(1, 2, 2),
        e(2, 3, 0),
        e(3, 4, 0),
        e(2, 3, 1),
        e(3, 4, 1),
        e(4, 5, 0),
        e(2, 3, 2),
        e(3, 4, 2),
        e(1, 1, 0),
        e(1, 1, 1),
        e(1, 1, 2),
        e(5, 4, 0),
        e(5, 4, 1),
        e(4, 3, 0),
        e(4, 3, 1),
        e(3, 2, 0),
        e(3, 2, 1),
        e(3, 2, 2),
        e(5, 3, 0),
        e(7, 4, 0),
        e(2, 1, 0),
        e(2, 1, 1),
        e(2, 1, 2),
        e(9, 4, 0),
        e(7, 3, 0),
        e(5, 2, 0),
        e(5, 2, 1),
        e(5, 2, 2),
        e(8, 3, 0),
        e(11, 4, 0),
        e(3, 1, 0),
        e(3, 1, 1),
    ]
};

/// Extra-P's hypotheses with negative exponents and logarithms (`allow_negative_exponents`, with
/// log terms), in its order, after [`DEFAULT_EXPONENTS`].
pub const NEGATIVE_LOG_EXPONENTS: [Exponents; 23] = {
    const fn e(n: i32, d: i32, l: i32) -> Exponents {
        Exponents::new(n, d, l)
    }
    [
        e(0, 1, -1),
        e(0, 1, -2),
        e(-1, 4, -1),
        e(-1, 3, -1),
        e(-1, 4, -2),
        e(-1, 3, -2),
        e(-1, 2, -1),
        e(-1, 2, -2),
        e(-2, 3, -1),
        e(-3, 4, -1),
        e(-2, 3, -2),
        e(-3, 4, -2),
        e(-1, 1, -1),
        e(-1, 1, -2),
        e(-5, 4, -1),
        e(-4, 3, -1),
        e(-3, 2, -1),
        e(-3, 2, -2),
        e(-2, 1, -1),
        e(-2, 1, -2),
        e(-5, 2, -1),
        e(-5, 2, -2),
        e(-3, 1, -1),
    ]
};

/// Extra-P's polynomial hypotheses with negative exponents (`allow_negative_exponents`), in its
/// order, last: a time that falls as the parameter grows (strong scaling over ranks).
pub const NEGATIVE_EXPONENTS: [Exponents; 19] = {
    const fn e(n: i32, d: i32, l: i32) -> Exponents {
        Exponents::new(n, d, l)
    }
    [
        e(-1, 4, 0),
        e(-1, 3, 0),
        e(-1, 2, 0),
        e(-2, 3, 0),
        e(-3, 4, 0),
        e(-4, 5, 0),
        e(-1, 1, 0),
        e(-5, 4, 0),
        e(-4, 3, 0),
        e(-3, 2, 0),
        e(-5, 3, 0),
        e(-7, 4, 0),
        e(-2, 1, 0),
        e(-9, 4, 0),
        e(-7, 3, 0),
        e(-5, 2, 0),
        e(-8, 3, 0),
        e(-11, 4, 0),
        e(-3, 1, 0),
    ]
};

/// A hypothesis's term must reach this share of some measured value (Extra-P's 0.0005).
pub const MINIMUM_TERM_CONTRIBUTION: f64 = 0.0005;

/// A leave-one-out fit's constant below this share of the smallest value is taken as 0.
pub const CLEAN_CONSTANT_EPSILON: f64 = 0.0005;

/// Every combination of one value from each of `axes`, the first axis varying slowest.
pub fn cartesian(axes: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .iter()
            .flat_map(|x| {
                axis.iter().map(move |&v| {
                    let mut x = x.clone();
                    x.push(v);
                    x
                })
            })
            .collect();
    }
    out
}

/// A model's terms as a set of factor lists, whatever their coefficients and order: two models
/// with equal shapes chose the same terms.
pub fn term_shape(terms: &[Term]) -> Vec<Vec<(usize, Exponents)>> {
    let key = |f: &[(usize, Exponents)]| -> Vec<(usize, i64, i32)> {
        f.iter()
            .map(|(p, e)| {
                let scaled = i64::from(e.numerator) * 1000 / i64::from(e.denominator);
                (*p, scaled, e.log)
            })
            .collect()
    };
    let mut out: Vec<Vec<(usize, Exponents)>> = terms
        .iter()
        .map(|t| {
            let mut f = t.factors.clone();
            f.sort_by_key(|factor| key(std::slice::from_ref(factor)));
            f
        })
        .collect();
    out.sort_by_key(|f| key(f));
    out
}

/// Fewest values of a parameter from which the robust search chooses its law in it, and the
/// checks of intervals judge one (Extra-P warns below 5). Extra-P's search, and yosoku's
/// compatible one ([`fit`]), fit from fewer: at one value of a parameter no term in it, at two a
/// law chosen by leave-one-out from two points ([`EXTRAP_FEWEST_VALUES`]).
pub const MINIMUM_POINTS: usize = 3;

/// Fewest values of a parameter from which Extra-P's search (and [`fit`]) chooses a term in it:
/// two, each fold then fitting a term's two coefficients to one point (the least-norm solution,
/// as numpy's `lstsq` gives it), so that the term whose ratio between the two values is the
/// measured one wins. Nothing checks that law beyond the two values.
pub const EXTRAP_FEWEST_VALUES: usize = 2;

/// How repetitions of one measurement point are reduced to its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    #[default]
    Mean,
    Median,
}

/// One measurement point: its parameter values and its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub coordinate: Vec<f64>,
    pub values: Vec<f64>,
}

/// Options of [`fit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PmnfOptions {
    pub aggregate: Aggregate,
    /// Allow logarithmic terms (they are left out anyway where a parameter value is below 1).
    pub allow_log_terms: bool,
    /// Also try negative exponents (Extra-P's `allow_negative_exponents`): then logarithmic
    /// terms are left out where a parameter value is 1 or below.
    pub allow_negative_exponents: bool,
}

impl Default for PmnfOptions {
    fn default() -> Self {
        Self {
            aggregate: Aggregate::Mean,
            allow_log_terms: true,
            allow_negative_exponents: false,
        }
    }
}

/// A term of a model: its coefficient times one compound term per parameter it involves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Term {
    pub coefficient: f64,
    /// (parameter index, its compound term), in parameter order.
    pub factors: Vec<(usize, Exponents)>,
}

impl Term {
    fn basis(&self, x: &[f64]) -> f64 {
        self.factors
            .iter()
            .map(|(p, e)| e.evaluate(x[*p]))
            .product()
    }

    pub fn evaluate(&self, x: &[f64]) -> f64 {
        self.coefficient * self.basis(x)
    }
}

/// A fitted PMNF model; its saved form (serde) has every field by name, the interval's basis
/// included, so that a model read back answers exactly as the fitted one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PmnfModel {
    pub constant: f64,
    pub terms: Vec<Term>,
    /// Residual sum of squares: leave-one-out for a model of one parameter chosen by
    /// cross-validation, in-sample otherwise.
    #[serde(with = "saved::number")]
    pub rss: f64,
    /// Symmetric mean absolute percentage error, in percent, measured as `rss` is.
    #[serde(with = "saved::number")]
    pub smape: f64,
    #[serde(with = "saved::number")]
    pub adjusted_r2: f64,
    /// Whether `rss` and `smape` are leave-one-out.
    pub cross_validated: bool,
    /// Measurement points (after reducing repetitions) the model was fitted to.
    pub points: usize,
    interval: IntervalBasis,
}

/// What a prediction interval needs of the final least-squares fit: sigma^2 (X'X)^-1 and the
/// residual degrees of freedom (sigma^2 from the leave-one-out errors where those are larger).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct IntervalBasis {
    #[serde(with = "saved::numbers")]
    covariance: Vec<f64>,
    #[serde(with = "saved::number")]
    sigma2: f64,
    df: usize,
    /// A robust fit's noise model: `sigma2` is the relative variance of one repetition,
    /// `covariance` the weighted fit's unscaled one, and a new measurement is the mean of this
    /// many repetitions (`robust`).
    relative_repetitions: Option<f64>,
    /// Models beside a robust fit's (weight, constant, terms): the term sets its criterion
    /// supports (Akaike weights) and those its bootstrap chose (weight 1). The larger of their
    /// weighted spreads at `x` is the uncertainty of the choice itself, added to the interval.
    ensembles: Vec<Vec<(f64, f64, Vec<Term>)>>,
}

impl PmnfModel {
    pub fn evaluate(&self, x: &[f64]) -> f64 {
        self.constant + self.terms.iter().map(|t| t.evaluate(x)).sum::<f64>()
    }

    /// The prediction interval at `x` of coverage `level`: the fit's t-interval for a new
    /// measurement (its value's mean or median, as fitted), `None` without residual degrees of
    /// freedom.
    pub fn interval(&self, x: &[f64], level: f64) -> Option<(f64, f64)> {
        let b = &self.interval;
        if b.df == 0 || !b.sigma2.is_finite() {
            return None;
        }
        let row = design_row(&self.terms, x);
        let k = row.len();
        let mut quad = 0.0;
        for i in 0..k {
            for j in 0..k {
                quad += row[i] * b.covariance[i * k + j] * row[j];
            }
        }
        if !(0.0..1.0).contains(&level) {
            return None;
        }
        let t = crate::t_quantile(b.df as f64, 0.5 + level / 2.0)?;
        let y = self.evaluate(x);
        let half = match b.relative_repetitions {
            Some(r) => {
                let spread = b
                    .ensembles
                    .iter()
                    .map(|models| weighted_spread(models, x))
                    .fold(0.0, f64::max);
                t * (b.sigma2 * y * y / r + (b.sigma2 * quad).max(spread)).sqrt()
            }
            None => t * (b.sigma2 * (1.0 + quad)).sqrt(),
        };
        Some((y - half, y + half))
    }

    /// The model as Extra-P writes it, coefficients to 7 significant digits:
    /// `1.500000e0 + 2.500000e-1 * x^(3/2) * log2(y)^(1)`.
    pub fn to_extrap(&self, parameters: &[&str]) -> String {
        let mut out = format!("{:.6e}", self.constant);
        for t in &self.terms {
            out.push_str(&format!(" + {:.6e}", t.coefficient));
            for (p, e) in &t.factors {
                let name = parameters.get(*p).copied().unwrap_or("?");
                out.push_str(&format!(" * {}", e.to_extrap(name)));
            }
        }
        out
    }
}

/// Why no model could be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PmnfError {
    #[error("no measurement points")]
    Empty,
    #[error("point {index}: {what}")]
    BadPoint { index: usize, what: String },
    #[error(
        "parameter {parameter}: {found} distinct values; this search models a parameter from {MINIMUM_POINTS} values up (Extra-P recommends 5)"
    )]
    TooFewPoints { parameter: usize, found: usize },
}

impl PmnfError {
    /// The error with its parameter named (`parameter n: 2 distinct values; ...`) where
    /// `names` has it.
    pub fn said<S: AsRef<str>>(&self, names: &[S]) -> String {
        match self {
            PmnfError::TooFewPoints { parameter, found } => match names.get(*parameter) {
                Some(name) => format!(
                    "parameter {}: {found} distinct value{}; this search models a parameter from {MINIMUM_POINTS} values up (Extra-P recommends 5)",
                    name.as_ref(),
                    if *found == 1 { "" } else { "s" }
                ),
                None => self.to_string(),
            },
            _ => self.to_string(),
        }
    }
}

/// The weighted variance of `models`' (weight, constant, terms) predictions at `x`.
fn weighted_spread(models: &[(f64, f64, Vec<Term>)], x: &[f64]) -> f64 {
    let at: Vec<(f64, f64)> = models
        .iter()
        .map(|(w, c, terms)| (*w, c + terms.iter().map(|t| t.evaluate(x)).sum::<f64>()))
        .filter(|(_, v)| v.is_finite())
        .collect();
    let total: f64 = at.iter().map(|(w, _)| w).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let m = at.iter().map(|(w, v)| w * v).sum::<f64>() / total;
    at.iter().map(|(w, v)| w * (v - m) * (v - m)).sum::<f64>() / total
}

/// The design row of `terms` at `x`: 1, then each term's basis.
fn design_row(terms: &[Term], x: &[f64]) -> Vec<f64> {
    std::iter::once(1.0)
        .chain(terms.iter().map(|t| t.basis(x)))
        .collect()
}

/// Least squares by the SVD of the design with its columns scaled to unit norm (so that x^3 at
/// x = 10^5 beside a constant column keeps its digits), singular values below eps x max(n, k)
/// x the largest treated as zero, as numpy's `lstsq` does; `None` with fewer rows than columns
/// or a non-finite design.
fn lstsq(rows: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    let (n, k) = (rows.len(), rows.first()?.len());
    if n < k || rows.iter().flatten().chain(y).any(|v| !v.is_finite()) {
        return None;
    }
    let norms: Vec<f64> = (0..k)
        .map(|j| {
            let s = rows.iter().map(|r| r[j] * r[j]).sum::<f64>().sqrt();
            if s > 0.0 { s } else { 1.0 }
        })
        .collect();
    let a = Mat::from_fn(n, k, |i, j| rows[i][j] / norms[j]);
    let svd = a.thin_svd().ok()?;
    let s = svd.S().column_vector();
    let largest = (0..k).map(|i| s[i]).fold(0.0f64, f64::max);
    let cutoff = f64::EPSILON * n.max(k) as f64 * largest;
    let (u, v) = (svd.U(), svd.V());
    let mut x = vec![0.0; k];
    for i in 0..k {
        if s[i] <= cutoff {
            continue;
        }
        let uy: f64 = (0..n).map(|r| u[(r, i)] * y[r]).sum::<f64>() / s[i];
        for (j, xj) in x.iter_mut().enumerate() {
            *xj += v[(j, i)] * uy;
        }
    }
    Some(x.iter().zip(&norms).map(|(x, s)| x / s).collect())
}

/// (X'X)^-1 by the same SVD, for the interval.
fn inverse_gram(rows: &[Vec<f64>]) -> Option<Vec<f64>> {
    let (n, k) = (rows.len(), rows.first()?.len());
    if n < k {
        return None;
    }
    let a = Mat::from_fn(n, k, |i, j| rows[i][j]);
    let svd = a.thin_svd().ok()?;
    let s = svd.S().column_vector();
    let largest = (0..k).map(|i| s[i]).fold(0.0f64, f64::max);
    let cutoff = f64::EPSILON * n.max(k) as f64 * largest;
    let v = svd.V();
    let mut out = vec![0.0; k * k];
    for i in (0..k).filter(|&i| s[i] > cutoff) {
        let w = 1.0 / (s[i] * s[i]);
        for a in 0..k {
            for b in 0..k {
                out[a * k + b] += v[(a, i)] * w * v[(b, i)];
            }
        }
    }
    Some(out)
}

/// SMAPE in percent of `predicted` against `actual` (a pair summing to 0 adds no error).
fn smape_term(predicted: f64, actual: f64) -> f64 {
    let sum = actual.abs() + predicted.abs();
    if sum == 0.0 {
        0.0
    } else {
        2.0 * (predicted - actual).abs() / sum
    }
}

/// A relative error below which a model fits to rounding: rounding makes 1e-16 to 1e-10 of a
/// value, measured values differ by 1e-4 and more. Exact data (counts, bytes, synthetic laws)
/// fits several models this closely, and which fits closer says only how each was computed.
pub(super) const ROUNDING_RELATIVE: f64 = 1e-8;

/// SMAPEs (percent) closer than this tie: below it two models both fit to rounding.
const SMAPE_TIE_PCT: f64 = ROUNDING_RELATIVE * 100.0;

/// Whether `new` is smaller than `old` beyond rounding: hypotheses the design cannot tell
/// apart (the same fitted values, or both fitting exactly) tie, and the earlier one stays, as in
/// exact arithmetic. Without the absolute part, which of two exact fits of exact data (counts,
/// a synthetic law) is chosen would hang on the last bits of two solvers.
fn smaller(new: f64, old: f64) -> bool {
    new < old - (1e-9 * old.abs()).max(SMAPE_TIE_PCT)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Each parameter's largest value over `points`.
fn largest_values(points: &[Point]) -> Vec<f64> {
    let dims = points.first().map_or(0, |p| p.coordinate.len());
    (0..dims)
        .map(|d| {
            points
                .iter()
                .map(|p| p.coordinate[d])
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect()
}

/// The median of `values` (reordered), as [`median`] but by selection, not a whole sort (for
/// many medians of long lists: a Cube point's pool of every location of every run, a
/// cross-validation's errors); not a number where `values` is empty.
pub(crate) fn median_by_selection(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let (below, upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        upper
    } else {
        let lower = below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or(upper);
        (lower + upper) / 2.0
    }
}

/// The median of `v`; not a number where `v` is empty, as [`mean`].
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The points reduced to (coordinate, value), checked.
fn reduce(points: &[Point], aggregate: Aggregate) -> Result<Vec<(Vec<f64>, f64)>, PmnfError> {
    let dims = points.first().ok_or(PmnfError::Empty)?.coordinate.len();
    points
        .iter()
        .enumerate()
        .map(|(index, p)| {
            let bad = |what: String| PmnfError::BadPoint { index, what };
            if p.coordinate.len() != dims || dims == 0 {
                return Err(bad(format!(
                    "{} parameter values where the first point has {dims}",
                    p.coordinate.len()
                )));
            }
            if p.coordinate.iter().any(|v| !v.is_finite()) {
                return Err(bad("a parameter value is not a finite number".to_owned()));
            }
            if p.values.is_empty() || p.values.iter().any(|v| !v.is_finite()) {
                return Err(bad(
                    "no measured value, or one that is not a finite number".to_owned()
                ));
            }
            let value = match aggregate {
                Aggregate::Mean => mean(&p.values),
                Aggregate::Median => median(&p.values),
            };
            Ok((p.coordinate.clone(), value))
        })
        .collect()
}

/// Every hypothesis `options` allow, in Extra-P's order: its default exponents, then with
/// negative exponents its negative logarithms (where log terms are on) and negative powers.
fn every_hypothesis(options: &PmnfOptions) -> impl Iterator<Item = Exponents> {
    let negative = options.allow_negative_exponents;
    let negative_log: &[Exponents] = if negative && options.allow_log_terms {
        &NEGATIVE_LOG_EXPONENTS
    } else {
        &[]
    };
    let negative_poly: &[Exponents] = if negative { &NEGATIVE_EXPONENTS } else { &[] };
    DEFAULT_EXPONENTS
        .into_iter()
        .chain(negative_log.iter().copied())
        .chain(negative_poly.iter().copied())
}

/// The hypotheses of one parameter the values `xs` allow (Extra-P's rule).
fn hypotheses(xs: &[f64], options: &PmnfOptions) -> impl Iterator<Item = Exponents> {
    let negative = options.allow_negative_exponents;
    let logs = options.allow_log_terms
        && xs
            .iter()
            .all(|&x| if negative { x > 1.0 } else { x >= 1.0 });
    every_hypothesis(options).filter(move |e| logs || e.log == 0)
}

/// The hypotheses of one parameter that the robust search tries: Extra-P's, each kept where it
/// is defined at every value of `xs` (a logarithm from 1 up, a negative power of a logarithm
/// above 1, a negative power above 0). Extra-P's own rule ([`hypotheses`]) drops every log term
/// once negative exponents are on and some value is 1: a parameter measured from 1 (threads,
/// nodes, a problem-size factor) could then never grow as `log2(x)`.
pub(super) fn defined_hypotheses(
    xs: &[f64],
    options: &PmnfOptions,
) -> impl Iterator<Item = Exponents> {
    let logs = options.allow_log_terms && xs.iter().all(|&x| x >= 1.0);
    let xs = xs.to_vec();
    every_hypothesis(options)
        .filter(move |e| (logs || e.log == 0) && xs.iter().all(|&x| e.evaluate(x).is_finite()))
}

/// The best model of one parameter (Extra-P's basic single-parameter modeler): `None` for the
/// constant model, else (exponents, constant, coefficient), with its leave-one-out RSS and
/// SMAPE and adjusted R^2.
struct SingleFit {
    term: Option<(Exponents, f64, f64)>,
    constant: f64,
    rss: f64,
    smape: f64,
    adjusted_r2: f64,
}

fn fit_two(xs: &[f64], ys: &[f64], e: Exponents) -> Option<(f64, f64)> {
    let rows: Vec<Vec<f64>> = xs.iter().map(|&x| vec![1.0, e.evaluate(x)]).collect();
    let c = lstsq(&rows, ys)?;
    Some((c[0], c[1]))
}

/// The line `c0 + c1 * basis` fitted by least squares to every point but `left_out`: from the
/// other points' centred sums (two passes: their means, then the sums about them), which is the
/// SVD's line to rounding wherever the basis varies over those points. Where it hardly varies
/// (the design is nearly rank one, and the SVD's cutoff would drop its smaller direction), or a
/// value is not finite, `None`: the caller fits by the SVD, as Extra-P does. (`ols`'s exact
/// leave-one-out from the hat matrix gives each fold's prediction, not its coefficients, and
/// Extra-P zeroes a fold's negligible constant before it predicts.)
fn line_without(basis: &[f64], ys: &[f64], left_out: usize) -> Option<(f64, f64)> {
    let n = (basis.len() - 1) as f64;
    let others = || {
        basis
            .iter()
            .zip(ys)
            .enumerate()
            .filter(move |(j, _)| *j != left_out)
            .map(|(_, p)| p)
    };
    let (mut b_mean, mut y_mean) = (0.0, 0.0);
    for (b, y) in others() {
        b_mean += b;
        y_mean += y;
    }
    b_mean /= n;
    y_mean /= n;
    let (mut sbb, mut sby, mut squares) = (0.0, 0.0, 0.0);
    for (b, y) in others() {
        sbb += (b - b_mean) * (b - b_mean);
        sby += (b - b_mean) * (y - y_mean);
        squares += b * b;
    }
    // The SVD (columns scaled to unit length) drops a direction below about 1e-15 of the
    // largest; its smaller one here is about sqrt(sbb / (2 squares)).
    let varies = sbb > 1e-20 * squares;
    if !varies || !sby.is_finite() || !y_mean.is_finite() {
        return None;
    }
    let c1 = sby / sbb;
    Some((y_mean - c1 * b_mean, c1))
}

/// The line `c0 + c1 * basis` through the one point (`basis`, `y`) with the least
/// `c0^2 + c1^2`: numpy's `lstsq` of that single row, unscaled, which is how Extra-P fits a fold
/// of two points (`None` where it is not a number).
fn least_norm_through(basis: f64, y: f64) -> Option<(f64, f64)> {
    let norm = 1.0 + basis * basis;
    let (c0, c1) = (y / norm, y * basis / norm);
    (c0.is_finite() && c1.is_finite()).then_some((c0, c1))
}

fn single(xs: &[f64], ys: &[f64], options: &PmnfOptions) -> SingleFit {
    single_of(xs, ys, hypotheses(xs, options), EXTRAP_FEWEST_VALUES)
}

/// [`single`] over the hypotheses given, choosing a term from `fewest` points up (a constant
/// below).
fn single_of(
    xs: &[f64],
    ys: &[f64],
    hypotheses: impl Iterator<Item = Exponents>,
    fewest: usize,
) -> SingleFit {
    let n = ys.len();
    let m = mean(ys);
    let tss: f64 = ys.iter().map(|y| (y - m) * (y - m)).sum();
    let constant_smape = ys.iter().map(|&y| smape_term(m, y)).sum::<f64>() / n as f64 * 100.0;
    let mut best = SingleFit {
        term: None,
        constant: m,
        rss: tss,
        smape: constant_smape,
        adjusted_r2: 1.0,
    };
    if tss == 0.0 || n < fewest {
        return best;
    }
    for e in hypotheses {
        let (mut rss, mut smape) = (0.0, 0.0);
        let mut fitted = true;
        let basis: Vec<f64> = xs.iter().map(|&x| e.evaluate(x)).collect();
        for i in 0..n {
            let fold = if n == 2 {
                least_norm_through(basis[1 - i], ys[1 - i])
            } else {
                line_without(&basis, ys, i).or_else(|| {
                    let tx: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| xs[j]).collect();
                    let ty: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| ys[j]).collect();
                    fit_two(&tx, &ty, e)
                })
            };
            let Some((mut c0, c1)) = fold else {
                fitted = false;
                break;
            };
            let smallest = (0..n)
                .filter(|&j| j != i)
                .map(|j| ys[j])
                .fold(f64::INFINITY, f64::min);
            let negligible = if smallest == 0.0 {
                c0.abs() < CLEAN_CONSTANT_EPSILON
            } else {
                (c0 / smallest).abs() < CLEAN_CONSTANT_EPSILON
            };
            if negligible {
                c0 = 0.0;
            }
            let predicted = c0 + c1 * basis[i];
            let d = predicted - ys[i];
            rss += d * d;
            smape += smape_term(predicted, ys[i]) / n as f64 * 100.0;
        }
        // Only a hypothesis that would replace the best is fitted to every point (an SVD).
        if !fitted || !rss.is_finite() || smape.is_nan() || !smaller(smape, best.smape) {
            continue;
        }
        let Some((c0, c1)) = fit_two(xs, ys, e) else {
            continue;
        };
        let contribution = xs
            .iter()
            .zip(ys)
            .map(|(&x, &y)| (c1 * e.evaluate(x) / y).abs())
            .fold(f64::NEG_INFINITY, f64::max);
        if c1 == 0.0 || contribution < MINIMUM_TERM_CONTRIBUTION {
            continue;
        }
        let df = n as f64 - 2.0;
        best = SingleFit {
            term: Some((e, c0, c1)),
            constant: c0,
            rss,
            smape,
            adjusted_r2: 1.0 - (rss / tss) * (n as f64 - 1.0) / df,
        };
    }
    best
}

/// In-sample RSS and SMAPE of `terms` with `constant` at `points`.
fn cost(points: &[(Vec<f64>, f64)], constant: f64, terms: &[Term]) -> (f64, f64) {
    let (mut rss, mut smape) = (0.0, 0.0);
    for (x, y) in points {
        let p = constant + terms.iter().map(|t| t.evaluate(x)).sum::<f64>();
        rss += (p - y) * (p - y);
        smape += smape_term(p, *y);
    }
    (rss, smape / points.len() as f64 * 100.0)
}

/// The model with `terms` (bases only) fitted to every point by least squares.
fn fit_terms(points: &[(Vec<f64>, f64)], mut terms: Vec<Term>) -> Option<(f64, Vec<Term>)> {
    let rows: Vec<Vec<f64>> = points
        .iter()
        .map(|(x, _)| design_row(&terms_with_unit(&terms), x))
        .collect();
    let y: Vec<f64> = points.iter().map(|(_, y)| *y).collect();
    let c = lstsq(&rows, &y)?;
    for (t, c) in terms.iter_mut().zip(&c[1..]) {
        t.coefficient = *c;
    }
    Some((c[0], terms))
}

fn terms_with_unit(terms: &[Term]) -> Vec<Term> {
    terms
        .iter()
        .map(|t| Term {
            coefficient: 1.0,
            factors: t.factors.clone(),
        })
        .collect()
}

/// The finished model: its costs and its interval basis from the final fit at `points`.
fn finish(
    points: &[(Vec<f64>, f64)],
    constant: f64,
    terms: Vec<Term>,
    selection: Option<(f64, f64)>,
    tss: f64,
) -> PmnfModel {
    let (rss_in, smape_in) = cost(points, constant, &terms);
    let (rss, smape, cross_validated) = match selection {
        Some((rss, smape)) => (rss, smape, true),
        None => (rss_in, smape_in, false),
    };
    let n = points.len();
    let k = 1 + terms.len();
    let parameters: usize = terms.iter().map(|t| t.factors.len()).sum();
    let adjusted_r2 = if terms.is_empty() {
        1.0
    } else {
        1.0 - (rss / tss) * (n as f64 - 1.0) / (n as f64 - parameters as f64 - 1.0)
    };
    let rows: Vec<Vec<f64>> = points
        .iter()
        .map(|(x, _)| design_row(&terms_with_unit(&terms), x))
        .collect();
    let df = n.saturating_sub(k);
    let interval = IntervalBasis {
        covariance: inverse_gram(&rows).unwrap_or_else(|| vec![f64::NAN; k * k]),
        // The residual variance of the fit, or, for a model chosen by leave-one-out, the mean
        // squared error of its leave-one-out predictions where that is larger: the search over
        // 42 hypotheses fits the points better than it predicts a new one.
        sigma2: match (df, selection) {
            (0, _) => f64::NAN,
            (_, Some((rss_loo, _))) => (rss_in / df as f64).max(rss_loo / n as f64),
            _ => rss_in / df as f64,
        },
        df,
        relative_repetitions: None,
        ensembles: Vec::new(),
    };
    PmnfModel {
        constant,
        terms,
        rss,
        smape,
        adjusted_r2,
        cross_validated,
        points: n,
        interval,
    }
}

/// Fits the PMNF model of `points` (each with one value per parameter and its repetitions).
pub fn fit(points: &[Point], options: &PmnfOptions) -> Result<PmnfModel, PmnfError> {
    let reduced = reduce(points, options.aggregate)?;
    let dims = reduced[0].0.len();
    let ys: Vec<f64> = reduced.iter().map(|(_, y)| *y).collect();
    let m = mean(&ys);
    let tss: f64 = ys.iter().map(|y| (y - m) * (y - m)).sum();
    if dims == 1 {
        let xs: Vec<f64> = reduced.iter().map(|(x, _)| x[0]).collect();
        let s = single(&xs, &ys, options);
        return Ok(match s.term {
            None => finish(&reduced, m, Vec::new(), None, tss),
            Some((e, c0, c1)) => {
                let term = Term {
                    coefficient: c1,
                    factors: vec![(0, e)],
                };
                let mut model = finish(&reduced, c0, vec![term], Some((s.rss, s.smape)), tss);
                model.adjusted_r2 = s.adjusted_r2;
                model
            }
        });
    }
    Ok(multi(&reduced, dims, options, tss))
}

/// Every parameter must take at least [`MINIMUM_POINTS`] distinct values over `coordinates`.
fn enough_values<'a>(
    coordinates: impl Iterator<Item = &'a [f64]> + Clone,
    dims: usize,
) -> Result<(), PmnfError> {
    match few_values_of(coordinates, dims).first() {
        Some(few) => Err(few.refusal()),
        None => Ok(()),
    }
}

/// The parameters along which no line of `points` (the other parameters fixed) has two values
/// or more, though the points have several of theirs: Extra-P's search ranks their terms on
/// those lines, so it can put none of them into a model (a space-filling design: each value
/// measured about once). Empty with one parameter, whose line is all the points; a parameter
/// measured at one value is [`few_values`]' to say.
pub fn without_line(points: &[Point]) -> Vec<usize> {
    let dims = points.first().map_or(0, |p| p.coordinate.len());
    if dims < 2 {
        return Vec::new();
    }
    let reduced: Vec<(Vec<f64>, f64)> =
        points.iter().map(|p| (p.coordinate.clone(), 0.0)).collect();
    let few = few_values(points);
    lines(&reduced, dims)
        .iter()
        .enumerate()
        .filter(|(p, line)| {
            line.len() < EXTRAP_FEWEST_VALUES && !few.iter().any(|f| f.parameter == *p)
        })
        .map(|(p, _)| p)
        .collect()
}

/// A parameter measured at fewer than [`MINIMUM_POINTS`] values in one series: Extra-P's search
/// has no term in it (one value) or a law that nothing beyond its two values checks (two), and
/// the robust search models neither.
#[derive(Debug, Clone, PartialEq)]
pub struct FewValues {
    pub parameter: usize,
    /// Its values, in increasing order.
    pub values: Vec<f64>,
}

impl FewValues {
    /// The refusal of a search that models a parameter from [`MINIMUM_POINTS`] values up (the
    /// robust one, the checks, a pipeline's step).
    pub fn refusal(&self) -> PmnfError {
        PmnfError::TooFewPoints {
            parameter: self.parameter,
            found: self.values.len(),
        }
    }

    /// Whether `value` is one of those measured (where the model's law in it was fitted).
    pub fn measured_at(&self, value: f64) -> bool {
        self.values.contains(&value)
    }

    /// What this means for the Extra-P-compatible search's model, with the parameter's name:
    /// `n: measured at 2 values (10, 20): the law in it is the one that predicts each from the
    /// other best, as Extra-P chooses it; no third value checks it`.
    pub fn said<S: AsRef<str>>(&self, names: &[S]) -> String {
        let name = names.get(self.parameter).map_or_else(
            || format!("parameter {}", self.parameter),
            |n| n.as_ref().to_owned(),
        );
        let values: Vec<String> = self.values.iter().map(f64::to_string).collect();
        match self.values.len() {
            1 => format!(
                "{name}: measured at one value ({}) on this call path: the model has no term in \
                 it",
                values[0]
            ),
            n => format!(
                "{name}: measured at {n} values ({}) on this call path: its law in {name} is the \
                 one that predicts each from the other best, as Extra-P chooses it; no third \
                 value checks it (Extra-P recommends 5)",
                values.join(", ")
            ),
        }
    }
}

/// The parameters `points` measure at fewer than [`MINIMUM_POINTS`] values ([`FewValues`]).
pub fn few_values(points: &[Point]) -> Vec<FewValues> {
    let dims = points.first().map_or(0, |p| p.coordinate.len());
    few_values_of(points.iter().map(|p| p.coordinate.as_slice()), dims)
}

/// [`few_values`] of the first `dims` parameters of `coordinates`.
fn few_values_of<'a>(
    coordinates: impl Iterator<Item = &'a [f64]> + Clone,
    dims: usize,
) -> Vec<FewValues> {
    (0..dims)
        .filter_map(|parameter| {
            let mut values: Vec<f64> = coordinates.clone().map(|x| x[parameter]).collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            (values.len() < MINIMUM_POINTS).then_some(FewValues { parameter, values })
        })
        .collect()
}

/// "p, n: no three runs on a line of any ..." for the parameters `parameters` (indices into
/// `names`, as [`without_line`] gives them), with what the robust search does instead; `None`
/// where there are none. The CLI and the pipelines' reports say it in these words.
pub fn without_line_said<S: AsRef<str>>(parameters: &[usize], names: &[S]) -> Option<String> {
    said_of(parameters, names, |named, it, its| {
        format!(
            "{named}: no two runs on a line of {it} (the other parameters fixed), so Extra-P's \
             search can put none of {its} terms into the model; the robust search models them \
             from all the runs"
        )
    })
}

/// `say` of the named `parameters` (indices into `names`): their names joined, then "it" and
/// "its" for one, "any" and "their" for more; `None` where there are none.
pub(crate) fn said_of<S: AsRef<str>>(
    parameters: &[usize],
    names: &[S],
    say: impl FnOnce(String, &str, &str) -> String,
) -> Option<String> {
    let named: Vec<&str> = parameters
        .iter()
        .filter_map(|&p| names.get(p).map(AsRef::as_ref))
        .collect();
    match named.len() {
        0 => None,
        1 => Some(say(named.join(", "), "it", "its")),
        _ => Some(say(named.join(", "), "any", "their")),
    }
}

/// For each parameter, the points along the longest lines of measurements in its direction,
/// each value's mean over those lines (Extra-P's `auto` point selection).
fn lines(points: &[(Vec<f64>, f64)], dims: usize) -> Vec<Vec<(f64, f64)>> {
    let partial = |x: &[f64], p: usize| -> Vec<u64> {
        (0..x.len())
            .filter(|&d| d != p)
            .map(|d| x[d].to_bits())
            .collect()
    };
    (0..dims)
        .map(|p| {
            // Lines: the points that share every other coordinate, in order of appearance.
            let mut groups: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
            for (i, (x, _)) in points.iter().enumerate() {
                let key = partial(x, p);
                match groups.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, g)) => g.push(i),
                    None => groups.push((key, vec![i])),
                }
            }
            let longest = groups.iter().map(|(_, g)| g.len()).max().unwrap_or(0);
            let candidates: Vec<&Vec<usize>> = groups
                .iter()
                .filter(|(_, g)| g.len() == longest)
                .map(|(_, g)| g)
                .collect();
            // By value in this direction, in order of appearance.
            let mut by_value: Vec<(u64, Vec<usize>)> = Vec::new();
            for &i in candidates.iter().copied().flatten() {
                let v = points[i].0[p].to_bits();
                match by_value.iter_mut().find(|(k, _)| *k == v) {
                    Some((_, g)) => g.push(i),
                    None => by_value.push((v, vec![i])),
                }
            }
            // Only the lines the first value's points lie on.
            let common: Vec<Vec<u64>> = by_value
                .first()
                .map(|(_, g)| g.iter().map(|&i| partial(&points[i].0, p)).collect())
                .unwrap_or_default();
            by_value
                .iter()
                .filter_map(|(v, g)| {
                    let kept: Vec<f64> = g
                        .iter()
                        .filter(|&&i| common.contains(&partial(&points[i].0, p)))
                        .map(|&i| points[i].1)
                        .collect();
                    (!kept.is_empty()).then(|| (f64::from_bits(*v), mean(&kept)))
                })
                .collect()
        })
        .collect()
}

/// Extra-P's combinations of the single-parameter terms (`pairs`: parameter, its exponents),
/// in its order.
fn combinations(pairs: &[(usize, Exponents)]) -> Vec<Vec<Vec<(usize, Exponents)>>> {
    let add: Vec<Vec<(usize, Exponents)>> = pairs.iter().map(|&p| vec![p]).collect();
    let mult: Vec<(usize, Exponents)> = pairs.to_vec();
    let mut out = vec![vec![mult.clone()], add.clone()];
    let pair = |a: usize, b: usize| vec![pairs[a], pairs[b]];
    match pairs.len() {
        2 => {
            out.push(vec![add[0].clone(), mult.clone()]);
            out.push(vec![add[1].clone(), mult]);
        }
        3 => {
            let (xy, yz, xz) = (pair(0, 1), pair(1, 2), pair(0, 2));
            let a = |i: usize| add[i].clone();
            let m = || mult.clone();
            out.extend([
                vec![m(), a(0)],
                vec![m(), a(1)],
                vec![m(), a(2)],
                vec![m(), xy.clone()],
                vec![m(), yz.clone()],
                vec![m(), xz.clone()],
                vec![m(), xy.clone(), a(2)],
                vec![m(), yz.clone(), a(0)],
                vec![m(), xz.clone(), a(1)],
                vec![m(), a(0), a(1)],
                vec![m(), a(0), a(2)],
                vec![m(), a(1), a(2)],
                vec![xy.clone(), a(2)],
                vec![xy.clone(), a(2), a(1)],
                vec![xy, a(2), a(0)],
                vec![xz.clone(), a(1)],
                vec![xz.clone(), a(1), a(0)],
                vec![xz, a(1), a(2)],
                vec![yz.clone(), a(0)],
                vec![yz.clone(), a(0), a(1)],
                vec![yz, a(0), a(2)],
            ]);
        }
        _ => {}
    }
    out
}

fn multi(points: &[(Vec<f64>, f64)], dims: usize, options: &PmnfOptions, tss: f64) -> PmnfModel {
    let m = mean(&points.iter().map(|(_, y)| *y).collect::<Vec<_>>());
    let singles: Vec<SingleFit> = lines(points, dims)
        .iter()
        .map(|line| {
            let xs: Vec<f64> = line.iter().map(|(x, _)| *x).collect();
            let ys: Vec<f64> = line.iter().map(|(_, y)| *y).collect();
            single(&xs, &ys, options)
        })
        .collect();
    let pairs: Vec<(usize, Exponents)> = singles
        .iter()
        .enumerate()
        .filter_map(|(p, s)| s.term.map(|(e, _, _)| (p, e)))
        .collect();
    match pairs.as_slice() {
        [] => finish(points, m, Vec::new(), None, tss),
        [(p, e)] => {
            // The single-parameter fit's coefficients, or refitted to every point: the smaller
            // SMAPE.
            let s = &singles[*p];
            let (_, c0, c1) = s.term.unwrap_or((*e, s.constant, 0.0));
            let reused = vec![Term {
                coefficient: c1,
                factors: vec![(*p, *e)],
            }];
            let (_, reused_smape) = cost(points, c0, &reused);
            match fit_terms(points, reused.clone()) {
                Some((r0, refit)) if smaller(cost(points, r0, &refit).1, reused_smape) => {
                    finish(points, r0, refit, None, tss)
                }
                _ => finish(points, c0, reused, None, tss),
            }
        }
        _ => {
            let mut best: Option<(f64, f64, Vec<Term>)> = None;
            for (i, combination) in combinations(&pairs).into_iter().enumerate() {
                let terms: Vec<Term> = combination
                    .into_iter()
                    .map(|factors| Term {
                        coefficient: 1.0,
                        factors,
                    })
                    .collect();
                let Some((c0, terms)) = fit_terms(points, terms) else {
                    continue;
                };
                let (_, smape) = cost(points, c0, &terms);
                // The first combination is the starting best, whatever its terms contribute.
                if i == 0 {
                    best = Some((smape, c0, terms.clone()));
                }
                let contributes = terms.iter().all(|t| {
                    t.coefficient != 0.0
                        && points
                            .iter()
                            .map(|(x, y)| (t.evaluate(x) / y).abs())
                            .fold(f64::NEG_INFINITY, f64::max)
                            >= MINIMUM_TERM_CONTRIBUTION
                });
                if contributes && best.as_ref().is_some_and(|b| smaller(smape, b.0)) {
                    best = Some((smape, c0, terms));
                }
            }
            match best {
                Some((_, c0, terms)) => finish(points, c0, terms, None, tss),
                None => finish(points, m, Vec::new(), None, tss),
            }
        }
    }
}

#[cfg(test)]
mod tests;
