//! Out-of-sample predictions of ordinary least squares: a block of rows deleted from one fit
//! (exact leave-one-out and grouped hold-outs without refitting), refits where that is
//! unstable, k-fold labels, and the training ranges a held-out row may fall outside.

use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::linalg::solvers::Solve;
use faer::{Accum, Mat, MatRef};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::{OlsOptions, RegressionError, ols};

use super::scheme::{Held, Interval, outside, permutation, ranges, rows_of, stable_pivot};

/// Predictions (and 95 % intervals) for rows `test` from the fit without them, computed from the
/// fit on all rows: y_G - (I - H_GG)^-1 e_G. `None` when I - H_GG is (nearly) singular.
///
/// With H_GG = Z Z' (Z: |G| x k, k = 1 + kept columns, from the QR factor or the Cholesky
/// factor, never from an inverted cross-product matrix) everything reduces to k x k matrices:
/// (I - Z Z')^-1 = I + Z (I - Z'Z)^-1 Z', the smallest eigenvalue of I - H_GG is 1 - the largest
/// of Z'Z, and [H_GG (I - H_GG)^-1]_ii = z_i' (I - Z'Z)^-1 z_i. A group of a thousand rows costs
/// what a group of ten does.
pub(super) fn deleted_block(
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
pub(super) struct RangeWithout {
    pub(super) min: (f64, usize),
    pub(super) second_min: f64,
    pub(super) max: (f64, usize),
    pub(super) second_max: f64,
}

impl RangeWithout {
    pub(super) fn without(&self, row: usize) -> (f64, f64) {
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

pub(super) fn ranges_without_each(x: MatRef<'_, f64>) -> Vec<RangeWithout> {
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
pub(super) fn held_out_by(
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
pub(super) fn refit_without(
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

/// The rows of each distinct label, labels in order of first appearance.
pub(super) fn blocks_of(labels: &[String]) -> Vec<(String, Vec<usize>)> {
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
pub(super) fn training_ranges_of_blocks(
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
