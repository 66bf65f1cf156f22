//! Validation of a linear model: in-sample, exact leave-one-out, k-fold, and grouped hold-outs
//! (leave one program, device or input size out); error metrics; prediction intervals.

use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::linalg::solvers::Solve;
use faer::{Accum, Mat, MatRef};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::{OlsOptions, RegressionError, ols};

/// How predictions are made out of sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Scheme {
    /// In-sample: the fitted values.
    Fit,
    /// Exact leave-one-out from the hat matrix of one fit.
    LeaveOneOut,
    /// k folds of a seeded random permutation.
    KFold { folds: usize, seed: u64 },
    /// Each distinct label held out in turn (leave one program/device/size out).
    Grouped { labels: Vec<String> },
}

/// One out-of-sample prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub row: usize,
    pub predicted: f64,
    /// The fold or group the row was held out in (`all` in sample, `loo`), one text shared by
    /// the fold's rows.
    pub fold: Arc<str>,
    /// 95 % prediction interval, when the model has residual degrees of freedom.
    pub interval: Option<(f64, f64)>,
    /// A feature of the row lies outside the range the model was fitted on.
    pub extrapolated: bool,
}

/// Per-column range of the rows `train`, over the columns of `x`.
fn ranges(x: MatRef<'_, f64>, train: &[usize]) -> Vec<(f64, f64)> {
    (0..x.ncols())
        .map(|j| {
            train
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &i| {
                    let v = x[(i, j)];
                    (lo.min(v), hi.max(v))
                })
        })
        .collect()
}

fn outside(x: MatRef<'_, f64>, row: usize, ranges: &[(f64, f64)], columns: &[usize]) -> bool {
    columns.iter().any(|&j| {
        let v = x[(row, j)];
        let (lo, hi) = ranges[j];
        let slack = 1e-9 * (hi - lo).abs().max(lo.abs()).max(hi.abs());
        v < lo - slack || v > hi + slack
    })
}

fn rows_of(x: MatRef<'_, f64>, rows: &[usize]) -> Mat<f64> {
    let mut out = Mat::<f64>::zeros(rows.len(), x.ncols());
    for j in 0..x.ncols() {
        let from = crate::ols::column(x, j);
        let to = out
            .col_mut(j)
            .try_as_col_major_mut()
            .expect("an owned matrix's columns are contiguous")
            .as_slice_mut();
        for (t, &i) in to.iter_mut().zip(rows) {
            *t = from[i];
        }
    }
    out
}

/// A seeded permutation of 0..n (xorshift64*; the same seed gives the same folds everywhere).
fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

/// Predicts every row of `x` out of sample according to `scheme`.
pub fn validate(
    x: MatRef<'_, f64>,
    y: &[f64],
    options: &OlsOptions,
    scheme: &Scheme,
) -> Result<Vec<Held>, RegressionError> {
    validate_fitted(x, y, options, scheme, None)
}

/// [`validate`], given the fit of all rows when the caller has it: `ols(x, y, options)` with
/// leverages (another fit is made when `fit` was made with other options). Every scheme starts
/// from the fit of all rows; a cross-validation of several schemes fits once.
pub fn validate_fitted(
    x: MatRef<'_, f64>,
    y: &[f64],
    options: &OlsOptions,
    scheme: &Scheme,
    fit: Option<&crate::OlsFit>,
) -> Result<Vec<Held>, RegressionError> {
    let n = x.nrows();
    let with_leverage = OlsOptions {
        leverage: true,
        ..*options
    };
    let own;
    let fit = match fit {
        Some(f) if f.options == with_leverage && f.fitted.len() == n => f,
        _ => {
            own = ols(x, y, &with_leverage)?;
            &own
        }
    };
    match scheme {
        Scheme::Fit | Scheme::LeaveOneOut => {
            let loo = *scheme == Scheme::LeaveOneOut;
            let all: Vec<usize> = (0..n).collect();
            let range = ranges(x, &all);
            let kept = fit.kept.clone();
            // Leave-one-out intervals from the deleted residual variance s_(i)^2.
            let df = fit.df_residual;
            let t = (df > 1)
                .then(|| StudentsT::new(0.0, 1.0, (df - 1) as f64).ok())
                .flatten()
                .map(|d| d.inverse_cdf(0.975));
            let predictions = fit.loo_predictions(y);
            let without = ranges_without_each(x);
            let mut out = Vec::with_capacity(n);
            let (loo_label, all_label): (Arc<str>, Arc<str>) = (Arc::from("loo"), Arc::from("all"));
            // Buffers reused from row to row.
            let mut row: Vec<f64> = Vec::with_capacity(x.ncols());
            let mut others_range: Vec<(f64, f64)> = Vec::with_capacity(x.ncols());
            for i in 0..n {
                if loo {
                    let h = fit.leverage[i];
                    let p = match predictions[i] {
                        Some(p) if 1.0 - h >= stable_pivot() => p,
                        // The row nearly determines the fit alone: the identity would amplify
                        // rounding, so refit without it.
                        _ => {
                            let range: Vec<(f64, f64)> =
                                without.iter().map(|w| w.without(i)).collect();
                            let mut held =
                                refit_without(x, y, options, (&[i], &range), &loo_label)?;
                            out.push(held.remove(0));
                            continue;
                        }
                    };
                    let e = fit.residuals[i];
                    let interval = t.filter(|_| options.ridge == 0.0).map(|t| {
                        let s2 = (fit.rss - e * e / (1.0 - h)) / (df - 1) as f64;
                        let half = t * (s2.max(0.0) / (1.0 - h)).sqrt();
                        (p - half, p + half)
                    });
                    // Out of the range of the other rows?
                    others_range.clear();
                    others_range.extend(without.iter().map(|w| w.without(i)));
                    out.push(Held {
                        row: i,
                        predicted: p,
                        fold: Arc::clone(&loo_label),
                        interval,
                        extrapolated: outside(x, i, &others_range, &kept),
                    });
                } else {
                    row.clear();
                    row.extend((0..x.ncols()).map(|j| x[(i, j)]));
                    out.push(Held {
                        row: i,
                        predicted: fit.fitted[i],
                        fold: Arc::clone(&all_label),
                        interval: fit.prediction_interval(&row, 0.95),
                        extrapolated: outside(x, i, &range, &kept),
                    });
                }
            }
            Ok(out)
        }
        Scheme::KFold { folds, seed } => {
            if *folds < 2 || *folds > n {
                return Err(RegressionError::Shape(format!(
                    "{folds} folds for {n} rows: need 2 <= folds <= rows"
                )));
            }
            held_out_by(x, y, options, &fold_labels(n, *folds, *seed), fit)
        }
        Scheme::Grouped { labels } => {
            if labels.len() != n {
                return Err(RegressionError::Shape(format!(
                    "{} group labels for {n} rows",
                    labels.len()
                )));
            }
            held_out_by(x, y, options, labels, fit)
        }
    }
}

/// The smallest eigenvalue of I - H_GG (1 - h_ii for one row) for which the deletion identities
/// are used rather than a refit: a group (or row) with leverage above 0.999 nearly determines
/// part of the fit alone, and dividing by what is left of 1 would amplify rounding a thousandfold.
fn stable_pivot() -> f64 {
    1e-3
}

/// A 95 % prediction interval (low, high).
type Interval = (f64, f64);

/// Predictions (and 95 % intervals) for rows `test` from the fit without them, computed from the
/// fit on all rows: y_G - (I - H_GG)^-1 e_G. `None` when I - H_GG is (nearly) singular.
///
/// With H_GG = Z Z' (Z: |G| x k, k = 1 + kept columns, from the QR factor or the Cholesky
/// factor, never from an inverted cross-product matrix) everything reduces to k x k matrices:
/// (I - Z Z')^-1 = I + Z (I - Z'Z)^-1 Z', the smallest eigenvalue of I - H_GG is 1 - the largest
/// of Z'Z, and [H_GG (I - H_GG)^-1]_ii = z_i' (I - Z'Z)^-1 z_i. A group of a thousand rows costs
/// what a group of ten does.
fn deleted_block(
    fit: &crate::OlsFit,
    x: MatRef<'_, f64>,
    y: &[f64],
    test: &[usize],
) -> Option<Vec<(f64, Option<Interval>)>> {
    let g = test.len();
    let z = fit.hat_rows(x, test);
    let k = z.ncols();
    let mut ztz = Mat::<f64>::zeros(k, k);
    matmul(
        ztz.as_mut(),
        Accum::Replace,
        z.as_ref().transpose(),
        z.as_ref(),
        1.0,
        faer::Par::Seq,
    );
    let largest = ztz
        .as_ref()
        .self_adjoint_eigenvalues(faer::Side::Lower)
        .ok()?
        .into_iter()
        .fold(0.0f64, f64::max);
    if 1.0 - largest < stable_pivot() {
        return None;
    }
    let a = Mat::from_fn(k, k, |i, j| f64::from(u8::from(i == j)) - ztz[(i, j)]);
    let llt = a.as_ref().llt(faer::Side::Lower).ok()?;
    let e = Mat::from_fn(g, 1, |i, _| fit.residuals[test[i]]);
    // d = (I + Z (I - Z'Z)^-1 Z') e
    let mut zte = Mat::<f64>::zeros(k, 1);
    matmul(
        zte.as_mut(),
        Accum::Replace,
        z.as_ref().transpose(),
        e.as_ref(),
        1.0,
        faer::Par::Seq,
    );
    let solved = llt.solve(zte.as_ref());
    let mut d = e.clone();
    matmul(
        d.as_mut(),
        Accum::Add,
        z.as_ref(),
        solved.as_ref(),
        1.0,
        faer::Par::Seq,
    );
    let predicted: Vec<f64> = (0..g).map(|i| y[test[i]] - d[(i, 0)]).collect();
    // Intervals: s^2 without the block, and the variance factor 1 + z_i' (I - Z'Z)^-1 z_i.
    let df = fit.df_residual as f64 - g as f64;
    let interval_parts = (fit.options.ridge == 0.0 && df >= 1.0)
        .then(|| {
            let removed: f64 = (0..g).map(|i| e[(i, 0)] * d[(i, 0)]).sum();
            let s2 = ((fit.rss - removed) / df).max(0.0);
            let t: f64 = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
            Some((s2, t))
        })
        .flatten();
    let zq = interval_parts.map(|_| llt.solve(z.as_ref().transpose()));
    Some(
        predicted
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let interval = interval_parts.zip(zq.as_ref()).map(|((s2, t), zq)| {
                    let factor: f64 = 1.0 + (0..k).map(|j| zq[(j, i)] * z[(i, j)]).sum::<f64>();
                    let half: f64 = t * (s2 * factor).max(0.0).sqrt();
                    (p - half, p + half)
                });
                (p, interval)
            })
            .collect(),
    )
}

/// The fold of each of `n` rows (`fold 1` ...) for k-fold validation with `seed`.
pub fn fold_labels(n: usize, folds: usize, seed: u64) -> Vec<String> {
    let order = permutation(n, seed);
    let mut fold_of = vec![0usize; n];
    for (position, &row) in order.iter().enumerate() {
        fold_of[row] = position % folds.max(1);
    }
    fold_of.iter().map(|f| format!("fold {}", f + 1)).collect()
}

/// The range of one column without any one row, in O(n): the two smallest and two largest
/// values and where the extremes are.
struct RangeWithout {
    min: (f64, usize),
    second_min: f64,
    max: (f64, usize),
    second_max: f64,
}

impl RangeWithout {
    fn without(&self, row: usize) -> (f64, f64) {
        let lo = if row == self.min.1 {
            self.second_min
        } else {
            self.min.0
        };
        let hi = if row == self.max.1 {
            self.second_max
        } else {
            self.max.0
        };
        (lo, hi)
    }
}

fn ranges_without_each(x: MatRef<'_, f64>) -> Vec<RangeWithout> {
    (0..x.ncols())
        .map(|j| {
            let mut r = RangeWithout {
                min: (f64::INFINITY, usize::MAX),
                second_min: f64::INFINITY,
                max: (f64::NEG_INFINITY, usize::MAX),
                second_max: f64::NEG_INFINITY,
            };
            for i in 0..x.nrows() {
                let v = x[(i, j)];
                if v < r.min.0 {
                    r.second_min = r.min.0;
                    r.min = (v, i);
                } else if v < r.second_min {
                    r.second_min = v;
                }
                if v > r.max.0 {
                    r.second_max = r.max.0;
                    r.max = (v, i);
                } else if v > r.second_max {
                    r.second_max = v;
                }
            }
            r
        })
        .collect()
}

/// Per-column range over the rows `train` (for the extrapolation flag).
pub fn training_ranges(x: MatRef<'_, f64>, train: &[usize]) -> Vec<(f64, f64)> {
    ranges(x, train)
}

/// Whether `row` of `x` lies outside `ranges` in any of `columns`.
pub fn is_outside(
    x: MatRef<'_, f64>,
    row: usize,
    ranges: &[(f64, f64)],
    columns: &[usize],
) -> bool {
    outside(x, row, ranges, columns)
}

/// Fits without each distinct label's rows and predicts them, from `full`, the fit of all rows.
fn held_out_by(
    x: MatRef<'_, f64>,
    y: &[f64],
    options: &OlsOptions,
    labels: &[String],
    full: &crate::OlsFit,
) -> Result<Vec<Held>, RegressionError> {
    let n = x.nrows();
    let blocks = blocks_of(labels);
    if blocks.len() < 2 {
        return Err(RegressionError::Shape(format!(
            "only one group ({}): nothing to hold out",
            blocks.first().map_or("none", |b| b.0.as_str())
        )));
    }
    let training_ranges = training_ranges_of_blocks(x, &blocks);
    // Each group's predictions come from the fit of all rows by the block-deletion identity
    // y_G - (I - H_GG)^-1 e_G, exact for least squares and ridge with a fixed penalty. A group
    // whose rows alone determine part of the model (I - H_GG singular) is refitted without it.
    let mut out = Vec::with_capacity(n);
    for ((label, test), range) in blocks.iter().zip(&training_ranges) {
        let fold: Arc<str> = Arc::from(label.as_str());
        if let Some(held) = deleted_block(full, x, y, test) {
            for (k, (predicted, interval)) in held.into_iter().enumerate() {
                let i = test[k];
                out.push(Held {
                    row: i,
                    predicted,
                    fold: Arc::clone(&fold),
                    interval,
                    extrapolated: outside(x, i, range, &full.kept),
                });
            }
            continue;
        }
        out.extend(refit_without(x, y, options, (test, range), &fold)?);
    }
    out.sort_by_key(|h| h.row);
    Ok(out)
}

/// Fits without the rows `test` (ascending; `range`: each column's range over the other rows)
/// and predicts them, as fold `fold` (the definition of a hold-out).
fn refit_without(
    x: MatRef<'_, f64>,
    y: &[f64],
    options: &OlsOptions,
    (test, range): (&[usize], &[(f64, f64)]),
    fold: &Arc<str>,
) -> Result<Vec<Held>, RegressionError> {
    let n = x.nrows();
    let mut held_out = vec![false; n];
    for &i in test {
        held_out[i] = true;
    }
    let train: Vec<usize> = (0..n).filter(|&i| !held_out[i]).collect();
    let xt = rows_of(x, &train);
    let yt: Vec<f64> = train.iter().map(|&i| y[i]).collect();
    let fit = ols(
        xt.as_ref(),
        &yt,
        &OlsOptions {
            leverage: false,
            ..*options
        },
    )
    .map_err(|e| {
        RegressionError::Shape(format!(
            "fitting without fold `{fold}` ({} rows held out, {} left): {e}",
            test.len(),
            train.len()
        ))
    })?;
    Ok(test
        .iter()
        .map(|&i| {
            let row: Vec<f64> = (0..x.ncols()).map(|j| x[(i, j)]).collect();
            Held {
                row: i,
                predicted: fit.predict(&row),
                fold: Arc::clone(fold),
                interval: fit.prediction_interval(&row, 0.95),
                extrapolated: outside(x, i, range, &fit.kept),
            }
        })
        .collect())
}

/// A column whose variance over a training set is at most this fraction of its variance over
/// all rows counts as constant there: the centred cross-products of a training set are the whole
/// data's minus the held-out rows', and when the held-out rows carry (nearly) all of a column's
/// variance, what is left is rounding, not data.
const TRAINING_VARIANCE_FLOOR: f64 = 1e-9;

/// Out-of-sample predictions of a ridge regression (penalty `lambda` on the coefficients,
/// intercept unpenalised) on columns standardised to mean 0 and variance 1 (population) by each
/// **training set's own rows**, as a z-score step fitted inside every fold would: nothing of a
/// held-out row reaches its prediction, not even through the scaling. In sample (`Scheme::Fit`)
/// the training set is every row, which is ridge on the z-scored columns.
///
/// Every training set is solved exactly, from its centred cross-products (the whole data's minus
/// the held-out rows', formed about the overall means for accuracy): O(|G| p^2 + p^3) per
/// held-out block G, so leave-one-out costs n small solves rather than n refits. A column with no
/// variance in a training set (a counter only the held-out rows use) is left out of that fit.
/// No prediction intervals: ridge has none here, as in [`validate`].
pub fn validate_standardized_ridge(
    x: MatRef<'_, f64>,
    y: &[f64],
    lambda: f64,
    scheme: &Scheme,
) -> Result<Vec<Held>, RegressionError> {
    let n = x.nrows();
    check_ridge_inputs(x, y, lambda)?;
    let blocks = held_out_blocks(scheme, n)?;
    let sums = CentredSums::of(x, y);
    let loo_ranges = matches!(scheme, Scheme::LeaveOneOut).then(|| ranges_without_each(x));
    let block_ranges = matches!(scheme, Scheme::KFold { .. } | Scheme::Grouped { .. })
        .then(|| training_ranges_of_blocks(x, &blocks));
    let mut refinement = matches!(scheme, Scheme::LeaveOneOut)
        .then(|| LooRefinement::new(sums.sxx.as_ref(), sums.sxy.as_ref(), lambda, n))
        .flatten();
    let loo_fold: Arc<str> = Arc::from("loo");
    let mut out = Vec::with_capacity(n);
    for (b, (label, test)) in blocks.iter().enumerate() {
        if let (Some(refine), [i]) = (refinement.as_mut(), test.as_slice())
            && let Some(fitted) = refine.predict(sums.xc.as_ref().row(*i), sums.yc[(*i, 0)])
        {
            let range: Vec<(f64, f64)> = loo_ranges
                .as_ref()
                .map(|r| r.iter().map(|w| w.without(*i)).collect())
                .unwrap_or_default();
            out.push(Held {
                row: *i,
                predicted: sums.mean_y + fitted,
                fold: Arc::clone(&loo_fold),
                interval: None,
                extrapolated: outside(x, *i, &range, &refine.kept),
            });
            continue;
        }
        let fit = TrainingFit::solve(&sums, test, lambda, label)?;
        let fold: Arc<str> = Arc::from(label.as_str());
        let held = |i: usize, range: &[(f64, f64)]| Held {
            row: i,
            predicted: fit.predict(&sums, i),
            fold: Arc::clone(&fold),
            interval: None,
            extrapolated: outside(x, i, range, &fit.kept),
        };
        match scheme {
            Scheme::Fit => {
                let range = ranges(x, &(0..n).collect::<Vec<_>>());
                out.extend((0..n).map(|i| held(i, &range)));
            }
            Scheme::LeaveOneOut => {
                let i = test[0];
                let range: Vec<(f64, f64)> = loo_ranges
                    .as_ref()
                    .map(|r| r.iter().map(|w| w.without(i)).collect())
                    .unwrap_or_default();
                out.push(held(i, &range));
            }
            Scheme::KFold { .. } | Scheme::Grouped { .. } => {
                let range = block_ranges.as_ref().map_or(&[][..], |r| &r[b][..]);
                out.extend(test.iter().map(|&i| held(i, range)));
            }
        }
    }
    out.sort_by_key(|h| h.row);
    Ok(out)
}

/// As many targets as rows, a penalty above 0, every value finite.
fn check_ridge_inputs(x: MatRef<'_, f64>, y: &[f64], lambda: f64) -> Result<(), RegressionError> {
    let (n, p) = (x.nrows(), x.ncols());
    if y.len() != n {
        return Err(RegressionError::Shape(format!(
            "{} targets for {n} rows",
            y.len()
        )));
    }
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(RegressionError::Shape(format!(
            "standardised ridge needs a penalty > 0, found {lambda}"
        )));
    }
    if let Some((i, j)) = (0..n)
        .flat_map(|i| (0..p).map(move |j| (i, j)))
        .find(|&(i, j)| !x[(i, j)].is_finite())
    {
        return Err(RegressionError::NotFinite {
            row: i,
            column: Some(j),
        });
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(RegressionError::NotFinite {
            row: i,
            column: None,
        });
    }
    Ok(())
}

/// The blocks `scheme` holds out, with their labels (one empty block for `Scheme::Fit`).
fn held_out_blocks(
    scheme: &Scheme,
    n: usize,
) -> Result<Vec<(String, Vec<usize>)>, RegressionError> {
    Ok(match scheme {
        Scheme::Fit => vec![("all".to_owned(), Vec::new())],
        Scheme::LeaveOneOut => (0..n).map(|i| ("loo".to_owned(), vec![i])).collect(),
        Scheme::KFold { folds, seed } => {
            if *folds < 2 || *folds > n {
                return Err(RegressionError::Shape(format!(
                    "{folds} folds for {n} rows: need 2 <= folds <= rows"
                )));
            }
            blocks_of(&fold_labels(n, *folds, *seed))
        }
        Scheme::Grouped { labels } => {
            if labels.len() != n {
                return Err(RegressionError::Shape(format!(
                    "{} group labels for {n} rows",
                    labels.len()
                )));
            }
            let blocks = blocks_of(labels);
            if blocks.len() < 2 {
                return Err(RegressionError::Shape(format!(
                    "only one group ({}): nothing to hold out",
                    blocks.first().map_or("none", |b| b.0.as_str())
                )));
            }
            blocks
        }
    })
}

/// The data about its overall means, and the cross-products of all rows: every training set's
/// sums are then small differences of well-scaled numbers.
struct CentredSums {
    mean_y: f64,
    /// The rows, centred.
    xc: Mat<f64>,
    yc: Mat<f64>,
    /// `xc' xc` and `xc' yc`.
    sxx: Mat<f64>,
    sxy: Mat<f64>,
}

impl CentredSums {
    fn of(x: MatRef<'_, f64>, y: &[f64]) -> Self {
        let (n, p) = (x.nrows(), x.ncols());
        let mean_x: Vec<f64> = (0..p)
            .map(|j| (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64)
            .collect();
        let mean_y = y.iter().sum::<f64>() / n as f64;
        let xc = Mat::from_fn(n, p, |i, j| x[(i, j)] - mean_x[j]);
        let yc = Mat::from_fn(n, 1, |i, _| y[i] - mean_y);
        let mut sxx = Mat::<f64>::zeros(p, p);
        matmul(
            sxx.as_mut(),
            Accum::Replace,
            xc.as_ref().transpose(),
            xc.as_ref(),
            1.0,
            faer::Par::Seq,
        );
        let mut sxy = Mat::<f64>::zeros(p, 1);
        matmul(
            sxy.as_mut(),
            Accum::Replace,
            xc.as_ref().transpose(),
            yc.as_ref(),
            1.0,
            faer::Par::Seq,
        );
        Self {
            mean_y,
            xc,
            yc,
            sxx,
            sxy,
        }
    }
}

/// The standardised ridge fitted on the training set without one held-out block: the columns
/// with variance there, their standard deviations, the training means (about the overall
/// means) and the coefficients on the z-scored columns.
struct TrainingFit {
    kept: Vec<usize>,
    sd: Vec<f64>,
    /// Training means of the columns and of y, about the overall means.
    mt: Vec<f64>,
    myt: f64,
    beta: Vec<f64>,
}

impl TrainingFit {
    /// Solves the training set without the rows `test`, exactly, from the centred
    /// cross-products: `C = S - G - n_T m m'` (S: all rows', G: the held-out rows', m: the
    /// training means).
    fn solve(
        sums: &CentredSums,
        test: &[usize],
        lambda: f64,
        label: &str,
    ) -> Result<Self, RegressionError> {
        let (n, p) = (sums.xc.nrows(), sums.xc.ncols());
        let g = test.len();
        let n_train = n - g;
        if n_train < 2 {
            return Err(RegressionError::TooFewRows {
                rows: n_train,
                needed: 2,
            });
        }
        let held = HeldSums::of(sums, test);
        let nt = n_train as f64;
        // Training means, about the overall means.
        let mt: Vec<f64> = (0..p)
            .map(|j| -(0..g).map(|r| held.xg[(r, j)]).sum::<f64>() / nt)
            .collect();
        let myt = -(0..g).map(|r| held.yg[(r, 0)]).sum::<f64>() / nt;
        // Centred training cross-products: C = S - G - n_T m m'.
        let sxx = &sums.sxx;
        let c = |a: usize, b: usize| sxx[(a, b)] - held.xx(a, b) - nt * mt[a] * mt[b];
        let kept: Vec<usize> = (0..p)
            .filter(|&j| {
                let cjj = c(j, j);
                sxx[(j, j)] > 0.0 && cjj > TRAINING_VARIANCE_FLOOR * sxx[(j, j)]
            })
            .collect();
        let sd: Vec<f64> = kept.iter().map(|&j| (c(j, j) / nt).sqrt()).collect();
        let beta = if kept.is_empty() {
            Vec::new()
        } else {
            let training = Training {
                nt,
                mt: &mt,
                myt,
                kept: &kept,
                sd: &sd,
            };
            training.ridge_coefficients(sums, &held, lambda, label)?
        };
        Ok(Self {
            kept,
            sd,
            mt,
            myt,
            beta,
        })
    }

    /// The fit's prediction of row `i` of the data.
    fn predict(&self, sums: &CentredSums, i: usize) -> f64 {
        sums.mean_y
            + self.myt
            + self
                .kept
                .iter()
                .zip(&self.beta)
                .zip(&self.sd)
                .map(|((&j, b), s)| b * (sums.xc[(i, j)] - self.mt[j]) / s)
                .sum::<f64>()
    }
}

/// The held-out rows' centred values and cross-products. One row (leave-one-out, one system per
/// row of the data) needs no p x p matrix: its cross-product x_r x_s is formed where it is used,
/// the same product a one-row matrix product computes.
struct HeldSums {
    xg: Mat<f64>,
    yg: Mat<f64>,
    /// `xg' xg`, for more than one row.
    gxx: Option<Mat<f64>>,
    gxy: Mat<f64>,
    /// The one row's values, when one row is held out.
    single: Vec<f64>,
}

impl HeldSums {
    fn of(sums: &CentredSums, test: &[usize]) -> Self {
        let (g, p) = (test.len(), sums.xc.ncols());
        let xg = Mat::from_fn(g, p, |r, j| sums.xc[(test[r], j)]);
        let yg = Mat::from_fn(g, 1, |r, _| sums.yc[(test[r], 0)]);
        let (gxx, gxy) = if g == 1 {
            (None, Mat::from_fn(p, 1, |j, _| xg[(0, j)] * yg[(0, 0)]))
        } else {
            let mut gxx = Mat::<f64>::zeros(p, p);
            let mut gxy = Mat::<f64>::zeros(p, 1);
            if g > 0 {
                matmul(
                    gxx.as_mut(),
                    Accum::Replace,
                    xg.as_ref().transpose(),
                    xg.as_ref(),
                    1.0,
                    faer::Par::Seq,
                );
                matmul(
                    gxy.as_mut(),
                    Accum::Replace,
                    xg.as_ref().transpose(),
                    yg.as_ref(),
                    1.0,
                    faer::Par::Seq,
                );
            }
            (Some(gxx), gxy)
        };
        let single: Vec<f64> = if g == 1 {
            (0..p).map(|j| xg[(0, j)]).collect()
        } else {
            Vec::new()
        };
        Self {
            xg,
            yg,
            gxx,
            gxy,
            single,
        }
    }

    /// The held-out rows' cross-product of columns a and b.
    fn xx(&self, a: usize, b: usize) -> f64 {
        match &self.gxx {
            Some(m) => m[(a, b)],
            None => self.single[a] * self.single[b],
        }
    }
}

/// What a training set's ridge system is built from.
struct Training<'a> {
    nt: f64,
    mt: &'a [f64],
    myt: f64,
    kept: &'a [usize],
    sd: &'a [f64],
}

impl Training<'_> {
    /// The coefficients of the ridge on the kept columns' z-scores: the system
    /// `(C_kk / (sd sd') + lambda I) beta = c_ky / sd`, by Cholesky.
    fn ridge_coefficients(
        &self,
        sums: &CentredSums,
        held: &HeldSums,
        lambda: f64,
        label: &str,
    ) -> Result<Vec<f64>, RegressionError> {
        let (kept, sd, mt, nt) = (self.kept, self.sd, self.mt, self.nt);
        let k = kept.len();
        // The same sums as the training set's cross-products, a column at a time over contiguous
        // columns (an element-wise closure through the matrix's indexing was a fifth of a
        // standardised-ridge cross-validation: one system per held-out row). The kept columns'
        // values gathered once, so that the k^2 divisions below run over contiguous slices
        // (vectorised; the same operations in the same order per entry).
        let mk: Vec<f64> = kept.iter().map(|&j| mt[j]).collect();
        let xk: Vec<f64> = if held.gxx.is_none() {
            kept.iter().map(|&j| held.single[j]).collect()
        } else {
            Vec::new()
        };
        let mut numerator = vec![0.0; k];
        let mut held_col = vec![0.0; k];
        let mut a = Mat::<f64>::zeros(k, k);
        for (s, &ks) in kept.iter().enumerate() {
            let sxx_col = contiguous(sums.sxx.as_ref(), ks);
            for (v, &kr) in numerator.iter_mut().zip(kept) {
                *v = sxx_col[kr];
            }
            match &held.gxx {
                Some(m) => {
                    let gxx_col = contiguous(m.as_ref(), ks);
                    for (v, &kr) in held_col.iter_mut().zip(kept) {
                        *v = gxx_col[kr];
                    }
                }
                None => {
                    let x_s = xk[s];
                    for (v, x_r) in held_col.iter_mut().zip(&xk) {
                        *v = x_r * x_s;
                    }
                }
            }
            let (m_s, sd_s) = (mk[s], sd[s]);
            let col = a
                .col_mut(s)
                .try_as_col_major_mut()
                .expect("an owned matrix's columns are contiguous")
                .as_slice_mut();
            for ((((v, c), h), m_r), sd_r) in col
                .iter_mut()
                .zip(&numerator)
                .zip(&held_col)
                .zip(&mk)
                .zip(sd)
            {
                let c_rs = c - h - nt * m_r * m_s;
                *v = c_rs / (sd_r * sd_s) + 0.0;
            }
            // x / d + lambda on the diagonal, exactly as (x / d + 0.0) + lambda.
            col[s] += lambda;
        }
        let b = Mat::from_fn(k, 1, |r, _| {
            (sums.sxy[(kept[r], 0)] - held.gxy[(kept[r], 0)] - nt * mt[kept[r]] * self.myt) / sd[r]
        });
        let llt = a.as_ref().llt(faer::Side::Lower).map_err(|_| {
            RegressionError::Numerical(format!(
                "the standardised ridge system of the training set without `{label}` is not positive definite"
            ))
        })?;
        let solved = llt.solve(b.as_ref());
        Ok((0..k).map(|r| solved[(r, 0)]).collect())
    }
}

/// Leave-one-out of the standardised ridge without a factorisation per row. Without row i, the
/// training set's centred cross-products are `S - (1 + 1/n_T) x x'` (S: all rows', x: the row,
/// both about the overall means) and its variances their diagonal over `n_T = n - 1`; in the
/// coordinates `phi = D0 theta`, with D0 the standard deviations of all rows, the system whose
/// solution is the held-out row's model is
///
/// `(P - (1 + 1/n_T) (u u' + (lambda / n_T) diag(u^2))) phi = D0^-1 r`,  `P = D0^-1 S D0^-1 + lambda I`,
///
/// `u = D0^-1 x`: the same matrix for every row but for a small correction. P is factorised and
/// inverted once; the rank-one part of the correction is taken exactly (Sherman-Morrison) and
/// the diagonal rest by iterative refinement (each step one product with the row's matrix and
/// one with P^-1; the rest is of the order of u^2 / n_T, so three to five steps reach
/// [`REFINEMENT_TOLERANCE`]). A row that drops a column from its training set, whose rank-one
/// downdate is near singular ([`STABLE_DOWNDATE`]) or whose refinement does not converge in
/// [`MAX_REFINEMENT_STEPS`] is solved directly instead.
struct LooRefinement {
    /// The columns with variance over all rows (the kept ones when no row drops one).
    kept: Vec<usize>,
    /// `D0^-1 S D0^-1` over `kept`.
    s0: Mat<f64>,
    /// `S_jj` and `D0_jj` over `kept`.
    sxx_diag: Vec<f64>,
    d0: Vec<f64>,
    /// The target's cross-products over `kept`.
    sxy: Vec<f64>,
    /// P^-1: the preconditioner is applied as one product (a triangular solve of one column
    /// costs several times as much); refinement corrects its rounding like the rest.
    p_inverse: Mat<f64>,
    lambda: f64,
    n_train: f64,
    // Columns reused from row to row: the row (scaled), P^-1 u, the right-hand side, the
    // solution, and a step's residual and correction.
    u: Mat<f64>,
    w: Mat<f64>,
    rhs: Vec<f64>,
    phi: Mat<f64>,
    residual: Mat<f64>,
    step: Mat<f64>,
}

/// Refinement stops when a step changes no entry of the solution by more than this share of its
/// largest entry, or the next step (at the rate of the last two) would not: far below what a
/// prediction shows (the direct solve of these systems, condition numbers up to about 1e5,
/// rounds at about 1e-11)...
const REFINEMENT_TOLERANCE: f64 = 1e-10;
/// ... or when the steps stop shrinking below this share: the residual's own rounding.
const ROUNDING_FLOOR: f64 = 1e-8;
const MAX_REFINEMENT_STEPS: usize = 8;
/// `1 - c u' P^-1 u`, the row's share of the model left to the others, below which the row is
/// solved directly (the rank-one downdate would amplify rounding).
const STABLE_DOWNDATE: f64 = 1e-3;

/// An owned column as a slice.
fn entries(m: &Mat<f64>) -> &[f64] {
    contiguous(m.as_ref(), 0)
}

fn entries_mut(m: &mut Mat<f64>) -> &mut [f64] {
    m.col_mut(0)
        .try_as_col_major_mut()
        .expect("an owned column is contiguous")
        .as_slice_mut()
}

/// `out = a b`.
fn product(out: &mut Mat<f64>, a: &Mat<f64>, b: &Mat<f64>) {
    matmul(
        out.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        1.0,
        faer::Par::Seq,
    );
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

impl LooRefinement {
    fn new(sxx: MatRef<'_, f64>, sxy: MatRef<'_, f64>, lambda: f64, n: usize) -> Option<Self> {
        let n_train = n.checked_sub(1).filter(|&t| t >= 2)? as f64;
        let kept: Vec<usize> = (0..sxx.ncols()).filter(|&j| sxx[(j, j)] > 0.0).collect();
        let k = kept.len();
        if k == 0 {
            return None;
        }
        let sxx_diag: Vec<f64> = kept.iter().map(|&j| sxx[(j, j)]).collect();
        let d0: Vec<f64> = sxx_diag.iter().map(|s| (s / n_train).sqrt()).collect();
        let s0 = Mat::from_fn(k, k, |a, b| sxx[(kept[a], kept[b])] / (d0[a] * d0[b]));
        let p = Mat::from_fn(k, k, |a, b| s0[(a, b)] + if a == b { lambda } else { 0.0 });
        let llt = p.as_ref().llt(faer::Side::Lower).ok()?;
        let p_inverse = llt.solve(Mat::<f64>::identity(k, k).as_ref());
        Some(Self {
            sxy: kept.iter().map(|&j| sxy[(j, 0)]).collect(),
            kept,
            s0,
            sxx_diag,
            d0,
            p_inverse,
            lambda,
            n_train,
            u: Mat::zeros(k, 1),
            w: Mat::zeros(k, 1),
            rhs: vec![0.0; k],
            phi: Mat::zeros(k, 1),
            residual: Mat::zeros(k, 1),
            step: Mat::zeros(k, 1),
        })
    }

    /// The held-out prediction of the row with centred values `x` and centred target `y`, less
    /// the overall mean of the target; `None` when the row must be solved directly.
    fn predict(&mut self, x: faer::RowRef<'_, f64>, y: f64) -> Option<f64> {
        let (nt, lambda) = (self.n_train, self.lambda);
        let c = 1.0 + 1.0 / nt;
        {
            let u = entries_mut(&mut self.u);
            for (a, &j) in self.kept.iter().enumerate() {
                let xj = x[j];
                // The column keeps its variance without the row (as the direct solve decides).
                let left = self.sxx_diag[a] - c * xj * xj;
                if !(left.is_finite() && left > TRAINING_VARIANCE_FLOOR * self.sxx_diag[a]) {
                    return None;
                }
                u[a] = xj / self.d0[a];
                // Right-hand side: D0^-1 (s_xy - (1 + 1/n_T) x y).
                self.rhs[a] = (self.sxy[a] - c * xj * y) / self.d0[a];
            }
        }
        // The rank-one part of the correction exactly (Sherman-Morrison): with w = P^-1 u,
        // (P - c u u')^-1 v = P^-1 v + c w (u' P^-1 v) / (1 - c u' w). The rest, the diagonal
        // (lambda / n_T) c u^2, is what refinement corrects for.
        product(&mut self.w, &self.p_inverse, &self.u);
        let gamma = 1.0 - c * dot(entries(&self.u), entries(&self.w));
        if !(gamma.is_finite() && gamma >= STABLE_DOWNDATE) {
            // The row nearly determines part of the model alone.
            return None;
        }
        self.phi.fill(0.0);
        let mut previous = f64::INFINITY;
        for step in 0..=MAX_REFINEMENT_STEPS {
            // The residual of the row's system at phi (phi = 0 first: the first step solves
            // the right-hand side), through (P - c u u')^-1.
            if step == 0 {
                entries_mut(&mut self.residual).copy_from_slice(&self.rhs);
            } else {
                product(&mut self.residual, &self.s0, &self.phi);
                let (u, phi) = (entries(&self.u), entries(&self.phi));
                let u_phi = dot(u, phi);
                for (a, r) in entries_mut(&mut self.residual).iter_mut().enumerate() {
                    let m_phi = *r + lambda * phi[a]
                        - c * (u[a] * u_phi + (lambda / nt) * u[a] * u[a] * phi[a]);
                    *r = self.rhs[a] - m_phi;
                }
            }
            product(&mut self.step, &self.p_inverse, &self.residual);
            let along_w = c * dot(entries(&self.u), entries(&self.step)) / gamma;
            let (mut change, mut size) = (0.0f64, 0.0f64);
            let w = entries(&self.w);
            let delta = entries(&self.step);
            let phi = entries_mut(&mut self.phi);
            for ((p, d), w) in phi.iter_mut().zip(delta).zip(w) {
                let d = d + along_w * w;
                *p += d;
                change = change.max(d.abs());
                size = size.max(p.abs());
            }
            if !(change.is_finite() && size.is_finite()) {
                return None;
            }
            // Converged, or will be after one more step at the last steps' rate; or the steps
            // stopped shrinking at the rounding of the residual (the cancellation in it bounds
            // what any solve of the system attains).
            let next = change * (change / previous);
            let stalled = step > 1 && change >= 0.5 * previous && change <= ROUNDING_FLOOR * size;
            previous = change;
            if step > 0 && (next.max(change * 1e-3) <= REFINEMENT_TOLERANCE * size || stalled) {
                // mean_y + myt + sum_j theta_j (x_j - m_j), m = -x / n_T, theta = D0^-1 phi.
                let fitted = dot(entries(&self.u), entries(&self.phi));
                return Some(-y / nt + c * fitted);
            }
        }
        None
    }
}

/// Column `j` of an owned matrix as a slice.
fn contiguous(m: MatRef<'_, f64>, j: usize) -> &[f64] {
    m.col(j)
        .try_as_col_major()
        .expect("an owned matrix's columns are contiguous")
        .as_slice()
}

/// The rows of each distinct label, labels in order of first appearance.
fn blocks_of(labels: &[String]) -> Vec<(String, Vec<usize>)> {
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut blocks: Vec<(String, Vec<usize>)> = Vec::new();
    // Labels come in runs: a row labelled as the row before joins its block without a lookup.
    let mut previous: Option<(&str, usize)> = None;
    for (i, l) in labels.iter().enumerate() {
        let b = match previous {
            Some((p, b)) if p == l.as_str() => b,
            _ => *index.entry(l.as_str()).or_insert_with(|| {
                blocks.push((l.clone(), Vec::new()));
                blocks.len() - 1
            }),
        };
        blocks[b].1.push(i);
        previous = Some((l.as_str(), b));
    }
    blocks
}

/// For blocks that partition the rows: each block's training ranges, the (min, max) of every
/// column over the rows of all the other blocks. Min and max combine, so a block's training
/// range is that of the blocks before it combined with that of the blocks after it: O(n p) in
/// all, where one scan of the training rows per block was O(n p) per block (a third of a
/// 251-group cross-validation's time).
fn training_ranges_of_blocks(
    x: MatRef<'_, f64>,
    blocks: &[(String, Vec<usize>)],
) -> Vec<Vec<(f64, f64)>> {
    let p = x.ncols();
    let empty = (f64::INFINITY, f64::NEG_INFINITY);
    let combine = |a: (f64, f64), b: (f64, f64)| (a.0.min(b.0), a.1.max(b.1));
    let own: Vec<Vec<(f64, f64)>> = blocks.iter().map(|(_, rows)| ranges(x, rows)).collect();
    let mut after = vec![vec![empty; p]; blocks.len() + 1];
    for b in (0..blocks.len()).rev() {
        after[b] = (0..p)
            .map(|j| combine(own[b][j], after[b + 1][j]))
            .collect();
    }
    let mut before = vec![empty; p];
    let mut out = Vec::with_capacity(blocks.len());
    for b in 0..blocks.len() {
        out.push(
            (0..p)
                .map(|j| combine(before[j], after[b + 1][j]))
                .collect(),
        );
        for j in 0..p {
            before[j] = combine(before[j], own[b][j]);
        }
    }
    out
}

/// Error metrics of predictions against actual values.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub n: usize,
    pub mean_abs_pct: f64,
    pub median_abs_pct: f64,
    pub max_abs_pct: f64,
    /// 1 - SSE / SST of the predictions.
    pub r2: f64,
    pub rmse: f64,
    /// Mean of predicted / actual.
    pub mean_ratio: f64,
}

pub fn metrics(actual: &[f64], predicted: &[f64]) -> Metrics {
    let n = actual.len();
    let mut pct: Vec<f64> = actual
        .iter()
        .zip(predicted)
        .map(|(a, p)| 100.0 * (p - a).abs() / a.abs())
        .collect();
    // Summed in row order; the median and the maximum by selection, not a sort (a
    // cross-validation takes these metrics thousands of times).
    let mean_abs_pct = pct.iter().sum::<f64>() / n as f64;
    let max_abs_pct = pct
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(f64::NAN);
    let median = if n == 0 {
        f64::NAN
    } else {
        let (lower, middle, _) = pct.select_nth_unstable_by(n / 2, f64::total_cmp);
        let middle = *middle;
        if n % 2 == 1 {
            middle
        } else {
            let below = lower
                .iter()
                .copied()
                .max_by(f64::total_cmp)
                .unwrap_or(middle);
            (below + middle) / 2.0
        }
    };
    let mean_actual = actual.iter().sum::<f64>() / n as f64;
    let sse: f64 = actual
        .iter()
        .zip(predicted)
        .map(|(a, p)| (a - p).powi(2))
        .sum();
    let sst: f64 = actual.iter().map(|a| (a - mean_actual).powi(2)).sum();
    Metrics {
        n,
        mean_abs_pct,
        median_abs_pct: median,
        max_abs_pct,
        r2: if sst > 0.0 { 1.0 - sse / sst } else { f64::NAN },
        rmse: (sse / n as f64).sqrt(),
        mean_ratio: actual
            .iter()
            .zip(predicted)
            .map(|(a, p)| p / a)
            .sum::<f64>()
            / n as f64,
    }
}

/// Rows whose counters are far smaller than the rest (the paper's Sobel and Dwt failures, whose
/// counters were 1/25000 of the mean): the median, over the columns that are raw counts (no
/// negative value, a positive mean), of the row's value over the column's mean is below
/// `threshold` (e.g. 1e-3). A column with negative values (standardised, centred) says nothing
/// of size and is not used; a table with no raw column flags no row.
pub fn tiny_rows(x: MatRef<'_, f64>, threshold: f64) -> Vec<bool> {
    let columns: Vec<std::borrow::Cow<'_, [f64]>> =
        (0..x.ncols()).map(|j| crate::ols::column(x, j)).collect();
    let columns: Vec<&[f64]> = columns.iter().map(|c| &**c).collect();
    tiny_rows_of_columns(&columns, x.nrows(), threshold)
}

/// [`tiny_rows`] of `n` rows given as columns.
pub fn tiny_rows_of_columns(columns: &[&[f64]], n: usize, threshold: f64) -> Vec<bool> {
    let usable: Vec<(&[f64], f64)> = columns
        .iter()
        .filter_map(|&column| {
            if n == 0 || column.iter().any(|&v| v < 0.0) {
                return None;
            }
            let mean = column.iter().sum::<f64>() / n as f64;
            (mean > 0.0).then_some((column, mean))
        })
        .collect();
    if usable.is_empty() {
        return vec![false; n];
    }
    // The median ratio by selection, in one buffer reused from row to row.
    let mut ratios: Vec<f64> = Vec::with_capacity(usable.len());
    (0..n)
        .map(|i| {
            ratios.clear();
            ratios.extend(usable.iter().map(|&(column, m)| column[i] / m));
            let middle = ratios.len() / 2;
            *ratios.select_nth_unstable_by(middle, f64::total_cmp).1 < threshold
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_training_ranges_equal_a_scan_of_the_other_blocks() {
        let n = 23;
        let x = Mat::from_fn(n, 3, |i, j| {
            ((i * 7 + j * 13) % 17) as f64 - (j as f64) * 0.5
        });
        let labels: Vec<String> = (0..n).map(|i| format!("g{}", (i * 5) % 6)).collect();
        let blocks = blocks_of(&labels);
        let fast = training_ranges_of_blocks(x.as_ref(), &blocks);
        for (b, (label, _)) in blocks.iter().enumerate() {
            let train: Vec<usize> = (0..n).filter(|&i| &labels[i] != label).collect();
            assert_eq!(fast[b], ranges(x.as_ref(), &train), "block {label}");
        }
    }

    /// Ridge on columns z-scored by the training rows `train`, refitted from scratch with the
    /// general least-squares code: the definition `validate_standardized_ridge` must reproduce.
    fn standardized_refit(
        x: MatRef<'_, f64>,
        y: &[f64],
        lambda: f64,
        train: &[usize],
        row: usize,
    ) -> f64 {
        let p = x.ncols();
        let nt = train.len() as f64;
        let stats: Vec<(f64, f64)> = (0..p)
            .map(|j| {
                let m = train.iter().map(|&i| x[(i, j)]).sum::<f64>() / nt;
                let v = train.iter().map(|&i| (x[(i, j)] - m).powi(2)).sum::<f64>() / nt;
                (m, v.sqrt())
            })
            .collect();
        let kept: Vec<usize> = (0..p).filter(|&j| stats[j].1 > 0.0).collect();
        let z = Mat::from_fn(train.len(), kept.len(), |r, k| {
            let j = kept[k];
            (x[(train[r], j)] - stats[j].0) / stats[j].1
        });
        let yt: Vec<f64> = train.iter().map(|&i| y[i]).collect();
        let fit = ols(
            z.as_ref(),
            &yt,
            &OlsOptions {
                ridge: lambda,
                leverage: false,
                ..OlsOptions::default()
            },
        )
        .unwrap();
        let zrow: Vec<f64> = kept
            .iter()
            .map(|&j| (x[(row, j)] - stats[j].0) / stats[j].1)
            .collect();
        fit.predict(&zrow)
    }

    #[test]
    fn standardized_ridge_equals_refits_on_each_training_sets_own_z_scores() {
        let (mut x, y) = data(40);
        // A column only the rows of group `c` use: constant (zero) in that group's training set.
        for i in 0..40 {
            x[(i, 2)] = if i % 4 == 2 { x[(i, 2)] + 1.0 } else { 0.0 };
        }
        let labels: Vec<String> = (0..40)
            .map(|i| ["a", "b", "c", "d"][i % 4].to_owned())
            .collect();
        let lambda = 0.5;
        for scheme in [
            Scheme::Fit,
            Scheme::LeaveOneOut,
            Scheme::KFold { folds: 5, seed: 3 },
            Scheme::Grouped {
                labels: labels.clone(),
            },
        ] {
            let held = validate_standardized_ridge(x.as_ref(), &y, lambda, &scheme).unwrap();
            assert_eq!(held.len(), 40);
            let fold_rows = |h: &Held| -> Vec<usize> {
                match &scheme {
                    Scheme::Fit => (0..40).collect(),
                    Scheme::LeaveOneOut => (0..40).filter(|&i| i != h.row).collect(),
                    Scheme::KFold { folds, seed } => {
                        let f = fold_labels(40, *folds, *seed);
                        (0..40).filter(|&i| f[i] != f[h.row]).collect()
                    }
                    Scheme::Grouped { labels } => {
                        (0..40).filter(|&i| labels[i] != labels[h.row]).collect()
                    }
                }
            };
            for h in &held {
                let want = standardized_refit(x.as_ref(), &y, lambda, &fold_rows(h), h.row);
                assert!(
                    (h.predicted - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{scheme:?} row {}: {} vs {want}",
                    h.row,
                    h.predicted
                );
            }
        }
    }

    /// Leave-one-out by refinement from one factorisation gives the direct solves' predictions
    /// (every row its own group); a row that alone gives a column its variance is left to the
    /// direct solve, and so is one that nearly determines the model alone.
    #[test]
    fn refined_leave_one_out_equals_the_direct_solves() {
        let n = 60;
        let (mut x, mut y) = data(n);
        // Column 2 nonzero in row 7 only; row 11 far out in column 0 (high leverage).
        for i in 0..n {
            x[(i, 2)] = if i == 7 { 3.0 } else { 0.0 };
        }
        x[(11, 0)] *= 1e4;
        y[11] += 50.0;
        let lambda = 1.0;
        let refined =
            validate_standardized_ridge(x.as_ref(), &y, lambda, &Scheme::LeaveOneOut).unwrap();
        let labels: Vec<String> = (0..n).map(|i| format!("row {i}")).collect();
        let direct =
            validate_standardized_ridge(x.as_ref(), &y, lambda, &Scheme::Grouped { labels })
                .unwrap();
        for (r, d) in refined.iter().zip(&direct) {
            assert_eq!(r.row, d.row);
            assert!(
                (r.predicted - d.predicted).abs() <= 1e-10 * d.predicted.abs().max(1.0),
                "row {}: {} vs {}",
                r.row,
                r.predicted,
                d.predicted
            );
            assert_eq!(r.extrapolated, d.extrapolated, "row {}", r.row);
            assert_eq!(&*r.fold, "loo");
        }
        // Which rows refinement solves.
        let mean_x: Vec<f64> = (0..3)
            .map(|j| (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64)
            .collect();
        let mean_y = y.iter().sum::<f64>() / n as f64;
        let xc = Mat::from_fn(n, 3, |i, j| x[(i, j)] - mean_x[j]);
        let sxx = xc.as_ref().transpose() * xc.as_ref();
        let yc = Mat::from_fn(n, 1, |i, _| y[i] - mean_y);
        let sxy = xc.as_ref().transpose() * yc.as_ref();
        let mut refine = LooRefinement::new(sxx.as_ref(), sxy.as_ref(), lambda, n).unwrap();
        let mut solved = |i: usize| refine.predict(xc.as_ref().row(i), yc[(i, 0)]).is_some();
        assert!(!solved(7), "row 7 alone gives column 2 its variance");
        assert!(!solved(11), "row 11 nearly determines the model alone");
        assert!((0..n).filter(|&i| i != 7 && i != 11).all(&mut solved));
    }

    /// Nothing of the held-out rows reaches their predictions: changing the other held-out rows
    /// of a group (their features and targets) leaves a held-out row's prediction as it was.
    #[test]
    fn a_held_out_rows_prediction_ignores_the_other_held_out_rows() {
        let (x, y) = data(40);
        let labels: Vec<String> = (0..40)
            .map(|i| ["a", "b", "c", "d"][i % 4].to_owned())
            .collect();
        let scheme = Scheme::Grouped { labels };
        let before = validate_standardized_ridge(x.as_ref(), &y, 1.0, &scheme).unwrap();
        let (mut x2, mut y2) = (x.clone(), y.clone());
        // Group `a` is rows 0, 4, 8, ...: change every one of them but row 0.
        for i in (4..40).step_by(4) {
            for j in 0..3 {
                x2[(i, j)] = x2[(i, j)] * 7.0 + 100.0;
            }
            y2[i] *= -3.0;
        }
        let after = validate_standardized_ridge(x2.as_ref(), &y2, 1.0, &scheme).unwrap();
        assert!((before[0].predicted - after[0].predicted).abs() < 1e-9);
        // The rows of the other groups did see the change (it is in their training sets).
        assert!((before[1].predicted - after[1].predicted).abs() > 1e-3);
    }

    fn data(n: usize) -> (Mat<f64>, Vec<f64>) {
        let x = Mat::from_fn(n, 3, |i, j| {
            ((i * (j + 3) + 7 * j) % 11) as f64 + (i as f64) * 0.1 * (j as f64 + 1.0)
        });
        let y: Vec<f64> = (0..n)
            .map(|i| {
                2.0 + 1.5 * x[(i, 0)] - 0.7 * x[(i, 1)]
                    + 0.3 * x[(i, 2)]
                    + ((i * 37 % 13) as f64 - 6.0) * 0.05
            })
            .collect();
        (x, y)
    }

    /// Refits without each label's rows, the definition the fast paths must reproduce.
    fn brute(x: MatRef<'_, f64>, y: &[f64], options: &OlsOptions, labels: &[String]) -> Vec<Held> {
        let n = x.nrows();
        let mut out: Vec<Held> = Vec::new();
        for i in 0..n {
            let train: Vec<usize> = (0..n).filter(|&k| labels[k] != labels[i]).collect();
            let xt = rows_of(x, &train);
            let yt: Vec<f64> = train.iter().map(|&k| y[k]).collect();
            let fit = ols(xt.as_ref(), &yt, options).unwrap();
            let row: Vec<f64> = (0..x.ncols()).map(|j| x[(i, j)]).collect();
            out.push(Held {
                row: i,
                predicted: fit.predict(&row),
                fold: labels[i].as_str().into(),
                interval: fit.prediction_interval(&row, 0.95),
                extrapolated: outside(x, i, &ranges(x, &train), &fit.kept),
            });
        }
        out
    }

    fn same(fast: &[Held], slow: &[Held]) {
        assert_eq!(fast.len(), slow.len());
        for (a, b) in fast.iter().zip(slow) {
            assert_eq!(a.row, b.row);
            assert!(
                (a.predicted - b.predicted).abs() < 1e-9 * b.predicted.abs().max(1.0),
                "row {}: {} vs {}",
                a.row,
                a.predicted,
                b.predicted
            );
            match (a.interval, b.interval) {
                // Interval widths to 1e-4 of themselves: the refit's come from (X'X)^-1, whose
                // rounding grows with the square of the condition number.
                (Some(ia), Some(ib)) => {
                    let tolerance = 1e-4 * (ib.1 - ib.0).abs() + 1e-12;
                    assert!(
                        (ia.0 - ib.0).abs() < tolerance && (ia.1 - ib.1).abs() < tolerance,
                        "{ia:?} vs {ib:?}"
                    );
                }
                (None, None) => {}
                other => panic!("intervals differ: {other:?}"),
            }
            assert_eq!(a.extrapolated, b.extrapolated, "row {}", a.row);
        }
    }

    #[test]
    fn block_deletion_equals_refitting_without_each_group() {
        let (x, y) = data(40);
        let labels = fold_labels(40, 5, 3);
        let fast = validate(
            x.as_ref(),
            &y,
            &OlsOptions::default(),
            &Scheme::KFold { folds: 5, seed: 3 },
        )
        .unwrap();
        same(
            &fast,
            &brute(x.as_ref(), &y, &OlsOptions::default(), &labels),
        );
        // Ridge: the same identity holds for a fixed penalty (no intervals).
        let ridge = OlsOptions {
            ridge: 0.5,
            ..OlsOptions::default()
        };
        let fast = validate(
            x.as_ref(),
            &y,
            &ridge,
            &Scheme::Grouped {
                labels: labels.clone(),
            },
        )
        .unwrap();
        same(&fast, &brute(x.as_ref(), &y, &ridge, &labels));
    }

    /// A fit of all rows handed in is used as it is, and one made with other options is not.
    #[test]
    fn a_given_fit_of_all_rows_gives_what_a_fit_of_its_own_does() {
        let (x, y) = data(40);
        let ridge = OlsOptions {
            ridge: 0.5,
            ..OlsOptions::default()
        };
        let labels = fold_labels(40, 5, 3);
        for options in [OlsOptions::default(), ridge] {
            let fit = ols(x.as_ref(), &y, &options).unwrap();
            let other = ols(
                x.as_ref(),
                &y,
                &OlsOptions {
                    ridge: 9.0,
                    ..options
                },
            )
            .unwrap();
            for scheme in [
                Scheme::Fit,
                Scheme::LeaveOneOut,
                Scheme::Grouped {
                    labels: labels.clone(),
                },
            ] {
                let own = validate(x.as_ref(), &y, &options, &scheme).unwrap();
                for given in [&fit, &other] {
                    let held =
                        validate_fitted(x.as_ref(), &y, &options, &scheme, Some(given)).unwrap();
                    assert_eq!(held, own, "{scheme:?}");
                }
            }
        }
    }

    #[test]
    fn block_deletion_stays_exact_on_an_ill_conditioned_design() {
        // Condition number ~1e7 (the QR path): column 2 is column 0 plus a small independent
        // part, as counters that count nearly the same thing are.
        let n = 300;
        let x = Mat::from_fn(n, 4, |i, j| {
            let a = (i as f64 * 0.37).sin() * 1e6 + 2e6;
            match j {
                0 => a,
                1 => ((i * 7) % 13) as f64 * 1e3,
                2 => a + ((i * 11) % 17) as f64 * 0.05,
                _ => (i as f64).sqrt(),
            }
        });
        let y: Vec<f64> = (0..n)
            .map(|i| {
                1e-6 * x[(i, 0)] + 2e-4 * x[(i, 1)] + 0.3 * x[(i, 3)] + ((i % 5) as f64) * 0.01
            })
            .collect();
        let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
        assert!(fit.condition_number > 1e6, "{}", fit.condition_number);
        let labels: Vec<String> = (0..n).map(|i| format!("size {}", i / 12)).collect();
        let fast = validate(
            x.as_ref(),
            &y,
            &OlsOptions::default(),
            &Scheme::Grouped {
                labels: labels.clone(),
            },
        )
        .unwrap();
        same(
            &fast,
            &brute(x.as_ref(), &y, &OlsOptions::default(), &labels),
        );
        let loo = validate(x.as_ref(), &y, &OlsOptions::default(), &Scheme::LeaveOneOut).unwrap();
        let each: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        same(&loo, &brute(x.as_ref(), &y, &OlsOptions::default(), &each));
    }

    #[test]
    fn a_group_that_alone_determines_a_coefficient_is_refitted() {
        // Column 3 is non-zero only in group `b`: without `b` it is constant and dropped.
        let (x3, y) = data(24);
        let x = Mat::from_fn(24, 4, |i, j| {
            if j < 3 {
                x3[(i, j)]
            } else if i >= 18 {
                (i * i % 7) as f64 + 1.0
            } else {
                0.0
            }
        });
        let labels: Vec<String> = (0..24)
            .map(|i| if i >= 18 { "b" } else { ["a", "c", "d"][i % 3] }.to_owned())
            .collect();
        let fast = validate(
            x.as_ref(),
            &y,
            &OlsOptions::default(),
            &Scheme::Grouped {
                labels: labels.clone(),
            },
        )
        .unwrap();
        same(
            &fast,
            &brute(x.as_ref(), &y, &OlsOptions::default(), &labels),
        );
    }

    #[test]
    fn exact_leave_one_out_equals_refitting_without_each_row() {
        let (x, y) = data(30);
        let loo = validate(x.as_ref(), &y, &OlsOptions::default(), &Scheme::LeaveOneOut).unwrap();
        let labels: Vec<String> = (0..30).map(|i| i.to_string()).collect();
        let brute = brute(x.as_ref(), &y, &OlsOptions::default(), &labels);
        for (a, b) in loo.iter().zip(&brute) {
            assert_eq!(a.row, b.row);
            assert!(
                (a.predicted - b.predicted).abs() < 1e-9 * b.predicted.abs().max(1.0),
                "{} vs {}",
                a.predicted,
                b.predicted
            );
            let (ia, ib) = (a.interval.unwrap(), b.interval.unwrap());
            assert!(
                (ia.0 - ib.0).abs() < 1e-8 && (ia.1 - ib.1).abs() < 1e-8,
                "{ia:?} vs {ib:?}"
            );
            assert_eq!(a.extrapolated, b.extrapolated);
        }
    }

    #[test]
    fn exact_leave_one_out_holds_for_ridge_too() {
        let (x, y) = data(25);
        let options = OlsOptions {
            ridge: 0.5,
            ..OlsOptions::default()
        };
        let loo = validate(x.as_ref(), &y, &options, &Scheme::LeaveOneOut).unwrap();
        let labels: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let brute = validate(x.as_ref(), &y, &options, &Scheme::Grouped { labels }).unwrap();
        for (a, b) in loo.iter().zip(&brute) {
            assert!(
                (a.predicted - b.predicted).abs() < 1e-9 * b.predicted.abs().max(1.0),
                "{} vs {}",
                a.predicted,
                b.predicted
            );
        }
    }

    #[test]
    fn folds_cover_every_row_once() {
        let (x, y) = data(23);
        let held = validate(
            x.as_ref(),
            &y,
            &OlsOptions::default(),
            &Scheme::KFold { folds: 5, seed: 7 },
        )
        .unwrap();
        assert_eq!(
            held.iter().map(|h| h.row).collect::<Vec<_>>(),
            (0..23).collect::<Vec<_>>()
        );
        let again = validate(
            x.as_ref(),
            &y,
            &OlsOptions::default(),
            &Scheme::KFold { folds: 5, seed: 7 },
        )
        .unwrap();
        assert_eq!(held, again, "the same seed gives the same folds");
    }

    #[test]
    fn metrics_and_tiny_rows() {
        let m = metrics(&[1.0, 2.0, 4.0], &[1.1, 1.8, 4.0]);
        assert!((m.mean_abs_pct - 20.0 / 3.0).abs() < 1e-12);
        assert!((m.median_abs_pct - 10.0).abs() < 1e-12);
        assert!((m.max_abs_pct - 10.0).abs() < 1e-12);
        // An even count: the mean of the two middle errors (10 % and 30 %), whatever the order.
        let m = metrics(&[10.0, 1.0, 2.0, 4.0], &[13.0, 1.1, 2.0, 4.8]);
        assert!(
            (m.median_abs_pct - 15.0).abs() < 1e-12,
            "{}",
            m.median_abs_pct
        );
        assert!((m.max_abs_pct - 30.0).abs() < 1e-12);
        let x = Mat::from_fn(
            5,
            2,
            |i, j| if i == 4 { 1e-5 } else { 100.0 + (i + j) as f64 },
        );
        assert_eq!(
            tiny_rows(x.as_ref(), 1e-3),
            [false, false, false, false, true]
        );
        // Centred (standardised) values say nothing of size: half of them near zero flag no
        // row. Before, rows of z-scores near 0 were flagged as tiny kernels.
        let z = Mat::from_fn(200, 2, |i, j| ((i as f64) - 99.5) / 57.7 + 0.001 * j as f64);
        assert!(tiny_rows(z.as_ref(), 1e-3).iter().all(|t| !t));
        // Relative to the mean, not the median: a column of many small values and a few large
        // ones makes its small values tiny.
        let skewed = Mat::from_fn(10, 1, |i, _| if i < 9 { 1.0 } else { 1e6 });
        assert_eq!(
            tiny_rows(skewed.as_ref(), 1e-3)
                .iter()
                .filter(|t| **t)
                .count(),
            9
        );
    }
}
