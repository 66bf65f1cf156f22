//! Validation of a linear model: in-sample, exact leave-one-out, k-fold, and grouped hold-outs
//! (leave one program, device or input size out); error metrics; prediction intervals.

use std::sync::Arc;

use faer::{Mat, MatRef};
use holdout::{held_out_by, ranges_without_each, refit_without};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::{OlsOptions, RegressionError, ols};

mod holdout;
mod metrics;
mod ridge;
#[cfg(test)]
mod tests;

pub use holdout::{fold_labels, is_outside, training_ranges};
pub use metrics::{Metrics, metrics, tiny_rows, tiny_rows_of_columns};
pub use ridge::validate_standardized_ridge;

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
