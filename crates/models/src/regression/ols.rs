//! Ordinary least squares (with an optional ridge penalty), exact leave-one-out predictions from
//! the hat matrix, and prediction intervals.
//!
//! Columns are centred (the intercept) and scaled to unit norm before any factorisation, so the
//! reported condition number is that of the column-scaled design, the collinearity diagnostic of
//! Belsley et al. Two factorisations:
//!
//! - column-pivoted QR, which finds the numerical rank: a column whose pivot falls below
//!   `rank_tolerance` times the largest is collinear with the columns before it and is dropped
//!   (and reported) rather than given a garbage coefficient;
//! - Cholesky of the cross-product matrix, twice as cheap, used only when its eigenvalues show the
//!   design is well conditioned (condition number of the scaled design at most
//!   [`CHOLESKY_MAX_CONDITION`]), where it is as accurate as QR.

use faer::linalg::matmul::matmul;
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::{Accum, Mat, MatRef, Side};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::RegressionError;

/// Largest condition number of the scaled design for which the Cholesky path is used (its error
/// grows with the square of it: 1e3^2 x 1e-16 = 1e-10).
pub const CHOLESKY_MAX_CONDITION: f64 = 1e3;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OlsOptions {
    pub intercept: bool,
    /// Ridge penalty lambda on the coefficients of the columns as given (lambda x sum beta_j^2,
    /// the intercept unpenalised); 0 for OLS. Z-score the features first (the `zscore` step) to
    /// penalise them comparably. A fixed penalty keeps leave-one-out exact.
    pub ridge: f64,
    /// Relative pivot size below which a column counts as collinear.
    pub rank_tolerance: f64,
    /// Compute leverages (hat-matrix diagonal), needed for leave-one-out.
    pub leverage: bool,
}

impl Default for OlsOptions {
    fn default() -> Self {
        Self {
            intercept: true,
            ridge: 0.0,
            rank_tolerance: 1e-10,
            leverage: true,
        }
    }
}

/// How the fit was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Qr,
    Cholesky,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Qr => "qr",
            Method::Cholesky => "cholesky",
        }
    }
}

/// A fitted linear model.
#[derive(Debug, Clone)]
pub struct OlsFit {
    pub n: usize,
    /// Indices (into the design's columns) of the columns kept, in column order.
    pub kept: Vec<usize>,
    /// Indices of the columns dropped as constant or collinear.
    pub dropped: Vec<usize>,
    pub intercept: f64,
    pub intercept_std_error: f64,
    /// Coefficients of the kept columns.
    pub coefficients: Vec<f64>,
    pub std_errors: Vec<f64>,
    pub t_values: Vec<f64>,
    pub p_values: Vec<f64>,
    pub fitted: Vec<f64>,
    pub residuals: Vec<f64>,
    /// Hat-matrix diagonal (empty when not asked for).
    pub leverage: Vec<f64>,
    pub rss: f64,
    pub tss: f64,
    pub r2: f64,
    pub adj_r2: f64,
    /// sqrt(RSS / n).
    pub rmse: f64,
    /// sqrt(RSS / df_residual).
    pub sigma: f64,
    pub df_residual: usize,
    pub condition_number: f64,
    pub method: Method,
    pub options: OlsOptions,
    /// Means of the kept columns (zero without an intercept).
    means: Vec<f64>,
    /// (Xc'Xc + lambda I)^-1 (Xc'Xc) (Xc'Xc + lambda I)^-1 of the kept columns (the unscaled
    /// covariance of the coefficients).
    cov_unscaled: Mat<f64>,
}

fn par() -> faer::Par {
    faer::get_global_parallelism()
}

/// Least squares of `y` on the columns of `x` (n x p).
pub fn ols(x: MatRef<'_, f64>, y: &[f64], options: &OlsOptions) -> Result<OlsFit, RegressionError> {
    let (n, p) = (x.nrows(), x.ncols());
    if y.len() != n {
        return Err(RegressionError::Shape(format!(
            "{n} rows of features but {} targets",
            y.len()
        )));
    }
    let intercept = usize::from(options.intercept);
    if n <= intercept {
        return Err(RegressionError::TooFewRows {
            rows: n,
            needed: intercept + 1,
        });
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(RegressionError::NotFinite {
            row: i,
            column: None,
        });
    }
    if !(options.ridge.is_finite() && options.ridge >= 0.0) {
        return Err(RegressionError::Shape(format!(
            "ridge must be >= 0, found {}",
            options.ridge
        )));
    }
    // Centre and scale to unit norm; constant columns are dropped outright.
    let mut means = vec![0.0; p];
    let mut norms = vec![0.0; p];
    for j in 0..p {
        let col = x.col(j);
        let mut sum = 0.0;
        for i in 0..n {
            let v = col[i];
            if !v.is_finite() {
                return Err(RegressionError::NotFinite {
                    row: i,
                    column: Some(j),
                });
            }
            sum += v;
        }
        if options.intercept {
            means[j] = sum / n as f64;
        }
        norms[j] = (0..n)
            .map(|i| (col[i] - means[j]).powi(2))
            .sum::<f64>()
            .sqrt();
    }
    let y_mean = if options.intercept {
        y.iter().sum::<f64>() / n as f64
    } else {
        0.0
    };
    let yc: Vec<f64> = y.iter().map(|v| v - y_mean).collect();
    let largest_norm = norms.iter().copied().fold(0.0, f64::max);
    let candidates: Vec<usize> = (0..p)
        .filter(|&j| norms[j] > options.rank_tolerance * largest_norm.max(f64::MIN_POSITIVE))
        .collect();
    let mut dropped: Vec<usize> = (0..p).filter(|j| !candidates.contains(j)).collect();
    let xs = Mat::from_fn(n, candidates.len(), |i, k| {
        let j = candidates[k];
        (x[(i, j)] - means[j]) / norms[j]
    });

    let solved = if candidates.is_empty() {
        Solved::empty(n)
    } else {
        // The penalty on beta_j is lambda on gamma_j / norm_j: lambda / norm_j^2 in these coordinates.
        let penalty: Vec<f64> = candidates
            .iter()
            .map(|&j| options.ridge / (norms[j] * norms[j]))
            .collect();
        solve(xs.as_ref(), &yc, &penalty, options)?
    };
    for &k in &solved.dropped {
        dropped.push(candidates[k]);
    }
    dropped.sort_unstable();
    let kept_scaled: Vec<usize> = solved.kept.clone();
    let kept: Vec<usize> = kept_scaled.iter().map(|&k| candidates[k]).collect();

    // Back to the original scale.
    let r = kept.len();
    let coefficients: Vec<f64> = (0..r).map(|k| solved.gamma[k] / norms[kept[k]]).collect();
    let kept_means: Vec<f64> = kept.iter().map(|&j| means[j]).collect();
    let cov_unscaled = Mat::from_fn(r, r, |a, b| {
        solved.cov[(a, b)] / (norms[kept[a]] * norms[kept[b]])
    });
    let intercept_value = if options.intercept {
        y_mean
            - coefficients
                .iter()
                .zip(&kept_means)
                .map(|(b, m)| b * m)
                .sum::<f64>()
    } else {
        0.0
    };
    let mut fitted = vec![intercept_value; n];
    for (k, &j) in kept.iter().enumerate() {
        let col = x.col(j);
        for (i, f) in fitted.iter_mut().enumerate() {
            *f += coefficients[k] * col[i];
        }
    }
    let residuals: Vec<f64> = y.iter().zip(&fitted).map(|(a, b)| a - b).collect();
    let rss: f64 = residuals.iter().map(|e| e * e).sum();
    let tss: f64 = if options.intercept {
        yc.iter().map(|v| v * v).sum()
    } else {
        y.iter().map(|v| v * v).sum()
    };
    let df_residual = n.saturating_sub(r + intercept);
    let r2 = if tss > 0.0 { 1.0 - rss / tss } else { f64::NAN };
    let adj_r2 = if df_residual > 0 && tss > 0.0 {
        1.0 - (rss / df_residual as f64) / (tss / (n - intercept) as f64)
    } else {
        f64::NAN
    };
    let sigma = if df_residual > 0 {
        (rss / df_residual as f64).sqrt()
    } else {
        f64::NAN
    };
    let std_errors: Vec<f64> = (0..r)
        .map(|k| sigma * cov_unscaled[(k, k)].max(0.0).sqrt())
        .collect();
    let t_values: Vec<f64> = coefficients
        .iter()
        .zip(&std_errors)
        .map(|(b, s)| b / s)
        .collect();
    let p_values = two_sided_p(&t_values, df_residual);
    let intercept_std_error = if options.intercept {
        let mut q = 1.0 / n as f64;
        for a in 0..r {
            for b in 0..r {
                q += kept_means[a] * cov_unscaled[(a, b)] * kept_means[b];
            }
        }
        sigma * q.max(0.0).sqrt()
    } else {
        0.0
    };
    let leverage = if options.leverage {
        solved
            .leverage
            .iter()
            .map(|h| {
                h + if options.intercept {
                    1.0 / n as f64
                } else {
                    0.0
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(OlsFit {
        n,
        kept,
        dropped,
        intercept: intercept_value,
        intercept_std_error,
        coefficients,
        std_errors,
        t_values,
        p_values,
        fitted,
        residuals,
        leverage,
        rss,
        tss,
        r2,
        adj_r2,
        rmse: (rss / n as f64).sqrt(),
        sigma,
        df_residual,
        condition_number: solved.condition,
        method: solved.method,
        options: *options,
        means: kept_means,
        cov_unscaled,
    })
}

fn two_sided_p(t: &[f64], df: usize) -> Vec<f64> {
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(dist) if df > 0 => t
            .iter()
            .map(|v| {
                if v.is_finite() {
                    2.0 * (1.0 - dist.cdf(v.abs()))
                } else {
                    f64::NAN
                }
            })
            .collect(),
        _ => vec![f64::NAN; t.len()],
    }
}

/// The solution in the scaled, centred coordinates.
struct Solved {
    kept: Vec<usize>,
    dropped: Vec<usize>,
    gamma: Vec<f64>,
    cov: Mat<f64>,
    leverage: Vec<f64>,
    condition: f64,
    method: Method,
}

impl Solved {
    fn empty(n: usize) -> Self {
        Self {
            kept: vec![],
            dropped: vec![],
            gamma: vec![],
            cov: Mat::zeros(0, 0),
            leverage: vec![0.0; n],
            condition: 1.0,
            method: Method::Qr,
        }
    }
}

fn solve(
    xs: MatRef<'_, f64>,
    yc: &[f64],
    penalty: &[f64],
    options: &OlsOptions,
) -> Result<Solved, RegressionError> {
    let (n, p) = (xs.nrows(), xs.ncols());
    // The cross-product matrix of the unit-norm columns; its eigenvalues give the condition number.
    let mut gram = Mat::<f64>::zeros(p, p);
    matmul(
        gram.as_mut(),
        Accum::Replace,
        xs.transpose(),
        xs,
        1.0,
        par(),
    );
    let eig = gram
        .as_ref()
        .self_adjoint_eigenvalues(Side::Lower)
        .map_err(|e| {
            RegressionError::Numerical(format!("eigenvalues of the cross products: {e:?}"))
        })?;
    let (lo, hi) = eig.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    let condition = if lo > 0.0 {
        (hi / lo).sqrt()
    } else {
        f64::INFINITY
    };
    if condition <= CHOLESKY_MAX_CONDITION && p < n {
        cholesky(xs, yc, gram, condition, penalty, options)
    } else {
        qr(xs, yc, penalty, options)
    }
}

fn cholesky(
    xs: MatRef<'_, f64>,
    yc: &[f64],
    gram: Mat<f64>,
    condition: f64,
    penalty: &[f64],
    options: &OlsOptions,
) -> Result<Solved, RegressionError> {
    let (n, p) = (xs.nrows(), xs.ncols());
    let mut a = gram.clone();
    for j in 0..p {
        a[(j, j)] += penalty[j];
    }
    let llt = a
        .as_ref()
        .llt(Side::Lower)
        .map_err(|e| RegressionError::Numerical(format!("Cholesky factorisation: {e:?}")))?;
    let l = llt.L();
    // gamma = A^-1 Xs' y
    let y_col = faer::ColRef::from_slice(yc);
    let mut rhs = Mat::<f64>::zeros(p, 1);
    matmul(
        rhs.as_mut(),
        Accum::Replace,
        xs.transpose(),
        y_col.as_mat(),
        1.0,
        par(),
    );
    solve_lower_triangular_in_place(l, rhs.as_mut(), par());
    solve_upper_triangular_in_place(l.transpose(), rhs.as_mut(), par());
    let gamma: Vec<f64> = (0..p).map(|j| rhs[(j, 0)]).collect();
    // A^-1, then the covariance A^-1 G A^-1 (= A^-1 for OLS).
    let mut inv = Mat::<f64>::identity(p, p);
    solve_lower_triangular_in_place(l, inv.as_mut(), par());
    solve_upper_triangular_in_place(l.transpose(), inv.as_mut(), par());
    let cov = if options.ridge > 0.0 {
        let mut tmp = Mat::<f64>::zeros(p, p);
        matmul(
            tmp.as_mut(),
            Accum::Replace,
            inv.as_ref(),
            gram.as_ref(),
            1.0,
            par(),
        );
        let mut cov = Mat::<f64>::zeros(p, p);
        matmul(
            cov.as_mut(),
            Accum::Replace,
            tmp.as_ref(),
            inv.as_ref(),
            1.0,
            par(),
        );
        cov
    } else {
        inv
    };
    // Leverage h_i = || L^-1 x_i ||^2.
    let leverage = if options.leverage {
        let mut w = xs.transpose().to_owned();
        solve_lower_triangular_in_place(l, w.as_mut(), par());
        (0..n)
            .map(|i| (0..p).map(|k| w[(k, i)] * w[(k, i)]).sum())
            .collect()
    } else {
        Vec::new()
    };
    Ok(Solved {
        kept: (0..p).collect(),
        dropped: vec![],
        gamma,
        cov,
        leverage,
        condition,
        method: Method::Cholesky,
    })
}

fn qr(
    xs: MatRef<'_, f64>,
    yc: &[f64],
    penalty: &[f64],
    options: &OlsOptions,
) -> Result<Solved, RegressionError> {
    let (n, p) = (xs.nrows(), xs.ncols());
    // Ridge: least squares of [Xs; sqrt(D)] against [y; 0].
    let rows = if options.ridge > 0.0 { n + p } else { n };
    let augmented = Mat::from_fn(rows, p, |i, j| {
        if i < n {
            xs[(i, j)]
        } else if i - n == j {
            penalty[j].sqrt()
        } else {
            0.0
        }
    });
    let qr = augmented.as_ref().col_piv_qr();
    let r_full = qr.thin_R();
    let size = r_full.nrows().min(p);
    let largest = if size > 0 { r_full[(0, 0)].abs() } else { 0.0 };
    let rank = (0..size)
        .take_while(|&k| r_full[(k, k)].abs() > options.rank_tolerance * largest)
        .count();
    let (fwd, _) = qr.P().arrays();
    let kept_pivoted: Vec<usize> = fwd[..rank].to_vec();
    let mut dropped: Vec<usize> = fwd[rank..].to_vec();
    dropped.sort_unstable();
    let q = qr.compute_thin_Q();
    // Q' y (the augmented y has zeros below row n).
    let qty: Vec<f64> = (0..rank)
        .map(|k| (0..n).map(|i| q[(i, k)] * yc[i]).sum())
        .collect();
    let r = r_full.get(..rank, ..rank).to_owned();
    let mut g = Mat::from_fn(rank, 1, |k, _| qty[k]);
    solve_upper_triangular_in_place(r.as_ref(), g.as_mut(), par());
    // R^-1, for the covariance (R'R)^-1 = R^-1 R^-T, and the condition number.
    let mut rinv = Mat::<f64>::identity(rank, rank);
    solve_upper_triangular_in_place(r.as_ref(), rinv.as_mut(), par());
    let mut inv = Mat::<f64>::zeros(rank, rank);
    matmul(
        inv.as_mut(),
        Accum::Replace,
        rinv.as_ref(),
        rinv.as_ref().transpose(),
        1.0,
        par(),
    );
    let singular = r
        .as_ref()
        .singular_values()
        .map_err(|e| RegressionError::Numerical(format!("singular values of R: {e:?}")))?;
    let (lo, hi) = singular
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    // Of the kept columns: the dropped ones are reported by name instead.
    let condition = if lo > 0.0 { hi / lo } else { f64::INFINITY };
    // Order kept columns by original index.
    let mut order: Vec<usize> = (0..rank).collect();
    order.sort_by_key(|&k| kept_pivoted[k]);
    let kept: Vec<usize> = order.iter().map(|&k| kept_pivoted[k]).collect();
    let gamma: Vec<f64> = order.iter().map(|&k| g[(k, 0)]).collect();
    let cov_pivoted = if options.ridge > 0.0 {
        // (A^-1)(Xs'Xs)(A^-1) with A = R'R, Xs'Xs = A - D (D in pivoted order).
        let d: Vec<f64> = kept_pivoted.iter().map(|&j| penalty[j]).collect();
        let mut scaled = inv.clone();
        for b in 0..rank {
            for a in 0..rank {
                scaled[(a, b)] *= d[b];
            }
        }
        let mut tmp = Mat::<f64>::zeros(rank, rank);
        matmul(
            tmp.as_mut(),
            Accum::Replace,
            scaled.as_ref(),
            inv.as_ref(),
            1.0,
            par(),
        );
        Mat::from_fn(rank, rank, |a, b| inv[(a, b)] - tmp[(a, b)])
    } else {
        inv
    };
    let cov = Mat::from_fn(rank, rank, |a, b| cov_pivoted[(order[a], order[b])]);
    let leverage = if options.leverage {
        (0..n)
            .map(|i| (0..rank).map(|k| q[(i, k)] * q[(i, k)]).sum())
            .collect()
    } else {
        Vec::new()
    };
    Ok(Solved {
        kept,
        dropped,
        gamma,
        cov,
        leverage,
        condition,
        method: Method::Qr,
    })
}

impl OlsFit {
    /// The prediction for one row of features (all the design's columns, in order).
    pub fn predict(&self, row: &[f64]) -> f64 {
        self.intercept
            + self
                .kept
                .iter()
                .zip(&self.coefficients)
                .map(|(&j, b)| b * row[j])
                .sum::<f64>()
    }

    /// Exact leave-one-out predictions: y_i - e_i / (1 - h_ii). `None` where the leverage is 1
    /// (the row alone determines a coefficient; its leave-one-out prediction does not exist).
    pub fn loo_predictions(&self, y: &[f64]) -> Vec<Option<f64>> {
        y.iter()
            .zip(&self.residuals)
            .zip(&self.leverage)
            .map(|((yi, e), h)| {
                let denom = 1.0 - h;
                (denom > 1e-12).then(|| yi - e / denom)
            })
            .collect()
    }

    /// A prediction interval at `level` (e.g. 0.95) for a new row: the prediction +- t x sigma x
    /// sqrt(1 + leverage of the row).
    pub fn prediction_interval(&self, row: &[f64], level: f64) -> Option<(f64, f64)> {
        if self.df_residual == 0 || !self.sigma.is_finite() || self.options.ridge > 0.0 {
            return None;
        }
        let d: Vec<f64> = self
            .kept
            .iter()
            .zip(&self.means)
            .map(|(&j, m)| row[j] - m)
            .collect();
        let mut q = if self.options.intercept {
            1.0 / self.n as f64
        } else {
            0.0
        };
        for a in 0..d.len() {
            for b in 0..d.len() {
                q += d[a] * self.cov_unscaled[(a, b)] * d[b];
            }
        }
        let t = StudentsT::new(0.0, 1.0, self.df_residual as f64)
            .ok()?
            .inverse_cdf(0.5 + level / 2.0);
        let half = t * self.sigma * (1.0 + q).sqrt();
        let y = self.predict(row);
        Some((y - half, y + half))
    }
}
