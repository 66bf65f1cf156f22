//! Validation of a linear model: in-sample, exact leave-one-out, k-fold, and grouped hold-outs
//! (leave one program, device or input size out); error metrics; prediction intervals.

use faer::{Mat, MatRef};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{OlsOptions, RegressionError, ols};

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
    /// The fold or group the row was held out in (`all` in sample, `loo`).
    pub fold: String,
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
    Mat::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)])
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
    let n = x.nrows();
    match scheme {
        Scheme::Fit | Scheme::LeaveOneOut => {
            let fit = ols(
                x,
                y,
                &OlsOptions {
                    leverage: true,
                    ..*options
                },
            )?;
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
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let row: Vec<f64> = (0..x.ncols()).map(|j| x[(i, j)]).collect();
                if loo {
                    let Some(p) = predictions[i] else { continue };
                    let h = fit.leverage[i];
                    let e = fit.residuals[i];
                    let interval = t.filter(|_| options.ridge == 0.0).map(|t| {
                        let s2 = (fit.rss - e * e / (1.0 - h)) / (df - 1) as f64;
                        let half = t * (s2.max(0.0) / (1.0 - h)).sqrt();
                        (p - half, p + half)
                    });
                    // Out of the range of the other rows?
                    let others_range: Vec<(f64, f64)> = (0..x.ncols())
                        .map(|j| {
                            (0..n)
                                .filter(|&k| k != i)
                                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), k| {
                                    (lo.min(x[(k, j)]), hi.max(x[(k, j)]))
                                })
                        })
                        .collect();
                    out.push(Held {
                        row: i,
                        predicted: p,
                        fold: "loo".into(),
                        interval,
                        extrapolated: outside(x, i, &others_range, &kept),
                    });
                } else {
                    out.push(Held {
                        row: i,
                        predicted: fit.fitted[i],
                        fold: "all".into(),
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
            let order = permutation(n, *seed);
            let mut fold_of = vec![0usize; n];
            for (position, &row) in order.iter().enumerate() {
                fold_of[row] = position % folds;
            }
            let labels: Vec<String> = fold_of.iter().map(|f| format!("fold {}", f + 1)).collect();
            held_out_by(x, y, options, &labels)
        }
        Scheme::Grouped { labels } => {
            if labels.len() != n {
                return Err(RegressionError::Shape(format!(
                    "{} group labels for {n} rows",
                    labels.len()
                )));
            }
            held_out_by(x, y, options, labels)
        }
    }
}

/// Fits without each distinct label's rows and predicts them.
fn held_out_by(
    x: MatRef<'_, f64>,
    y: &[f64],
    options: &OlsOptions,
    labels: &[String],
) -> Result<Vec<Held>, RegressionError> {
    let n = x.nrows();
    let mut distinct: Vec<&String> = Vec::new();
    for l in labels {
        if !distinct.contains(&l) {
            distinct.push(l);
        }
    }
    if distinct.len() < 2 {
        return Err(RegressionError::Shape(format!(
            "only one group ({}): nothing to hold out",
            distinct.first().map_or("none", |s| s.as_str())
        )));
    }
    let mut out = Vec::with_capacity(n);
    for label in distinct {
        let train: Vec<usize> = (0..n).filter(|&i| &labels[i] != label).collect();
        let test: Vec<usize> = (0..n).filter(|&i| &labels[i] == label).collect();
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
                "fitting without `{label}` ({} rows): {e}",
                train.len()
            ))
        })?;
        let range = ranges(x, &train);
        for &i in &test {
            let row: Vec<f64> = (0..x.ncols()).map(|j| x[(i, j)]).collect();
            out.push(Held {
                row: i,
                predicted: fit.predict(&row),
                fold: label.clone(),
                interval: fit.prediction_interval(&row, 0.95),
                extrapolated: outside(x, i, &range, &fit.kept),
            });
        }
    }
    out.sort_by_key(|h| h.row);
    Ok(out)
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
    pct.sort_by(f64::total_cmp);
    let median = if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        pct[n / 2]
    } else {
        (pct[n / 2 - 1] + pct[n / 2]) / 2.0
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
        mean_abs_pct: pct.iter().sum::<f64>() / n as f64,
        median_abs_pct: median,
        max_abs_pct: pct.last().copied().unwrap_or(f64::NAN),
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

/// Rows whose features are far smaller than the rest (the paper's Sobel and Dwt failures): the
/// median, over the columns with a positive median, of the row's value over the column median is
/// below `threshold` (e.g. 1e-3).
pub fn tiny_rows(x: MatRef<'_, f64>, threshold: f64) -> Vec<bool> {
    let (n, p) = (x.nrows(), x.ncols());
    let medians: Vec<f64> = (0..p)
        .map(|j| {
            let mut c: Vec<f64> = (0..n).map(|i| x[(i, j)]).collect();
            c.sort_by(f64::total_cmp);
            if n == 0 { 0.0 } else { c[n / 2] }
        })
        .collect();
    let usable: Vec<usize> = (0..p).filter(|&j| medians[j] > 0.0).collect();
    (0..n)
        .map(|i| {
            if usable.is_empty() {
                return false;
            }
            let mut ratios: Vec<f64> = usable.iter().map(|&j| x[(i, j)] / medians[j]).collect();
            ratios.sort_by(f64::total_cmp);
            ratios[ratios.len() / 2] < threshold
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn exact_leave_one_out_equals_refitting_without_each_row() {
        let (x, y) = data(30);
        let loo = validate(x.as_ref(), &y, &OlsOptions::default(), &Scheme::LeaveOneOut).unwrap();
        let labels: Vec<String> = (0..30).map(|i| i.to_string()).collect();
        let brute = validate(
            x.as_ref(),
            &y,
            &OlsOptions::default(),
            &Scheme::Grouped { labels },
        )
        .unwrap();
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
        let x = Mat::from_fn(
            5,
            2,
            |i, j| if i == 4 { 1e-5 } else { 100.0 + (i + j) as f64 },
        );
        assert_eq!(
            tiny_rows(x.as_ref(), 1e-3),
            [false, false, false, false, true]
        );
    }
}
