//! Ridge regression on standardised columns validated out of sample: the standardisation and
//! the fit redone inside every training set, by downdating centred sums, with the leave-one-out
//! answers refined to the exact ones.

use std::sync::Arc;

use faer::linalg::matmul::matmul;
use faer::linalg::solvers::Solve;
use faer::{Accum, Mat, MatRef};

use crate::RegressionError;

use super::holdout::{blocks_of, fold_labels, ranges_without_each, training_ranges_of_blocks};
use super::scheme::{Held, Scheme, outside, ranges};

/// A column whose variance over a training set is at most this fraction of its variance over
/// all rows counts as constant there: the centred cross-products of a training set are the whole
/// data's minus the held-out rows', and when the held-out rows carry (nearly) all of a column's
/// variance, what is left is rounding, not data.
pub(super) const TRAINING_VARIANCE_FLOOR: f64 = 1e-9;

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
/// No prediction intervals: ridge has none here, as in [`validate`](super::validate).
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
pub(super) fn check_ridge_inputs(
    x: MatRef<'_, f64>,
    y: &[f64],
    lambda: f64,
) -> Result<(), RegressionError> {
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
pub(super) fn held_out_blocks(
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
pub(super) struct CentredSums {
    pub(super) mean_y: f64,
    /// The rows, centred.
    pub(super) xc: Mat<f64>,
    pub(super) yc: Mat<f64>,
    /// `xc' xc` and `xc' yc`.
    pub(super) sxx: Mat<f64>,
    pub(super) sxy: Mat<f64>,
}

impl CentredSums {
    pub(super) fn of(x: MatRef<'_, f64>, y: &[f64]) -> Self {
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
pub(super) struct TrainingFit {
    pub(super) kept: Vec<usize>,
    pub(super) sd: Vec<f64>,
    /// Training means of the columns and of y, about the overall means.
    pub(super) mt: Vec<f64>,
    pub(super) myt: f64,
    pub(super) beta: Vec<f64>,
}

impl TrainingFit {
    /// Solves the training set without the rows `test`, exactly, from the centred
    /// cross-products: `C = S - G - n_T m m'` (S: all rows', G: the held-out rows', m: the
    /// training means).
    pub(super) fn solve(
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
    pub(super) fn predict(&self, sums: &CentredSums, i: usize) -> f64 {
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
pub(super) struct HeldSums {
    pub(super) xg: Mat<f64>,
    pub(super) yg: Mat<f64>,
    /// `xg' xg`, for more than one row.
    pub(super) gxx: Option<Mat<f64>>,
    pub(super) gxy: Mat<f64>,
    /// The one row's values, when one row is held out.
    pub(super) single: Vec<f64>,
}

impl HeldSums {
    pub(super) fn of(sums: &CentredSums, test: &[usize]) -> Self {
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
    pub(super) fn xx(&self, a: usize, b: usize) -> f64 {
        match &self.gxx {
            Some(m) => m[(a, b)],
            None => self.single[a] * self.single[b],
        }
    }
}

/// What a training set's ridge system is built from.
pub(super) struct Training<'a> {
    pub(super) nt: f64,
    pub(super) mt: &'a [f64],
    pub(super) myt: f64,
    pub(super) kept: &'a [usize],
    pub(super) sd: &'a [f64],
}

impl Training<'_> {
    /// The coefficients of the ridge on the kept columns' z-scores: the system
    /// `(C_kk / (sd sd') + lambda I) beta = c_ky / sd`, by Cholesky.
    pub(super) fn ridge_coefficients(
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
pub(super) struct LooRefinement {
    /// The columns with variance over all rows (the kept ones when no row drops one).
    pub(super) kept: Vec<usize>,
    /// `D0^-1 S D0^-1` over `kept`.
    pub(super) s0: Mat<f64>,
    /// `S_jj` and `D0_jj` over `kept`.
    pub(super) sxx_diag: Vec<f64>,
    pub(super) d0: Vec<f64>,
    /// The target's cross-products over `kept`.
    pub(super) sxy: Vec<f64>,
    /// P^-1: the preconditioner is applied as one product (a triangular solve of one column
    /// costs several times as much); refinement corrects its rounding like the rest.
    pub(super) p_inverse: Mat<f64>,
    pub(super) lambda: f64,
    pub(super) n_train: f64,
    // Columns reused from row to row: the row (scaled), P^-1 u, the right-hand side, the
    // solution, and a step's residual and correction.
    pub(super) u: Mat<f64>,
    pub(super) w: Mat<f64>,
    pub(super) rhs: Vec<f64>,
    pub(super) phi: Mat<f64>,
    pub(super) residual: Mat<f64>,
    pub(super) step: Mat<f64>,
}

/// Refinement stops when a step changes no entry of the solution by more than this share of its
/// largest entry, or the next step (at the rate of the last two) would not: far below what a
/// prediction shows (the direct solve of these systems, condition numbers up to about 1e5,
/// rounds at about 1e-11)...
pub(super) const REFINEMENT_TOLERANCE: f64 = 1e-10;
/// ... or when the steps stop shrinking below this share: the residual's own rounding.
pub(super) const ROUNDING_FLOOR: f64 = 1e-8;
pub(super) const MAX_REFINEMENT_STEPS: usize = 8;
/// `1 - c u' P^-1 u`, the row's share of the model left to the others, below which the row is
/// solved directly (the rank-one downdate would amplify rounding).
pub(super) const STABLE_DOWNDATE: f64 = 1e-3;

/// An owned column as a slice.
pub(super) fn entries(m: &Mat<f64>) -> &[f64] {
    contiguous(m.as_ref(), 0)
}

pub(super) fn entries_mut(m: &mut Mat<f64>) -> &mut [f64] {
    m.col_mut(0)
        .try_as_col_major_mut()
        .expect("an owned column is contiguous")
        .as_slice_mut()
}

/// `out = a b`.
pub(super) fn product(out: &mut Mat<f64>, a: &Mat<f64>, b: &Mat<f64>) {
    matmul(
        out.as_mut(),
        Accum::Replace,
        a.as_ref(),
        b.as_ref(),
        1.0,
        faer::Par::Seq,
    );
}

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

impl LooRefinement {
    pub(super) fn new(
        sxx: MatRef<'_, f64>,
        sxy: MatRef<'_, f64>,
        lambda: f64,
        n: usize,
    ) -> Option<Self> {
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
    pub(super) fn predict(&mut self, x: faer::RowRef<'_, f64>, y: f64) -> Option<f64> {
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
pub(super) fn contiguous(m: MatRef<'_, f64>, j: usize) -> &[f64] {
    m.col(j)
        .try_as_col_major()
        .expect("an owned matrix's columns are contiguous")
        .as_slice()
}
