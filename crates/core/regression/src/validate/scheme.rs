//! What the validation schemes share: the schemes, a held-out prediction, and the helpers of
//! every scheme (ranges a fit saw, rows outside them, seeded permutations).

use std::sync::Arc;

use faer::{Mat, MatRef};

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
pub(super) fn ranges(x: MatRef<'_, f64>, train: &[usize]) -> Vec<(f64, f64)> {
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

pub(super) fn outside(
    x: MatRef<'_, f64>,
    row: usize,
    ranges: &[(f64, f64)],
    columns: &[usize],
) -> bool {
    columns.iter().any(|&j| {
        let v = x[(row, j)];
        let (lo, hi) = ranges[j];
        let slack = 1e-9 * (hi - lo).abs().max(lo.abs()).max(hi.abs());
        v < lo - slack || v > hi + slack
    })
}

pub(super) fn rows_of(x: MatRef<'_, f64>, rows: &[usize]) -> Mat<f64> {
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
pub(super) fn permutation(n: usize, seed: u64) -> Vec<usize> {
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

/// The smallest eigenvalue of I - H_GG (1 - h_ii for one row) for which the deletion identities
/// are used rather than a refit: a group (or row) with leverage above 0.999 nearly determines
/// part of the fit alone, and dividing by what is left of 1 would amplify rounding a thousandfold.
pub(super) fn stable_pivot() -> f64 {
    1e-3
}

/// A 95 % prediction interval (low, high).
pub(super) type Interval = (f64, f64);
