//! Validation of a linear model: in-sample, exact leave-one-out, k-fold, and grouped hold-outs
//! (leave one program, device or input size out); error metrics; prediction intervals.

use std::sync::Arc;

use faer::MatRef;
use holdout::{held_out_by, ranges_without_each, refit_without};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::{OlsOptions, RegressionError, ols};

mod holdout;
mod metrics;
mod ridge;
mod scheme;
#[cfg(test)]
mod tests;

pub use holdout::{fold_labels, is_outside, training_ranges};
pub use metrics::{Metrics, metrics, tiny_rows, tiny_rows_of_columns};
pub use ridge::validate_standardized_ridge;
pub use scheme::{Held, Scheme};
use scheme::{outside, ranges, stable_pivot};

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
