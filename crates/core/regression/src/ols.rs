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
//! - Cholesky of the cross-product matrix, used only when its eigenvalues show the design is well
//!   conditioned (condition number of the scaled design at most [`CHOLESKY_MAX_CONDITION`]),
//!   where it is as accurate as QR. It streams the rows in cache-sized chunks and never builds an
//!   n x p matrix (fresh memory of that size costs more in page faults than the arithmetic).

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{BlockStructure, matmul as triangular_matmul};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place, solve_upper_triangular_in_place,
};
use faer::prelude::{Reborrow, ReborrowMut};
use faer::{Accum, Mat, MatRef, Side};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::RegressionError;

/// Largest condition number of the scaled design for which the Cholesky path is used (its error
/// grows with the square of it: 1e3^2 x 1e-16 = 1e-10).
pub const CHOLESKY_MAX_CONDITION: f64 = 1e3;

/// Rows per chunk when streaming the design (1024 was fastest at 10,000 x 200 on the benchmark
/// machine: large enough for efficient matrix products, small enough for the caches).
const CHUNK_ROWS: usize = 1024;

/// Partial sums of the cross products: a fixed number, so that the order of the additions, and
/// so the result, is the same whatever the number of threads (and with or without the
/// `parallel` feature).
const REDUCTION_GROUPS: usize = 16;

/// Work (rows x columns^2) from which the `parallel` feature spreads a fit over threads. Below
/// it, waking the threads costs more than the fit: a pipeline fits thousands of models of a few
/// thousand rows and 5-20 columns, and on two cores the idle workers' spinning took 15 % of
/// such a run (BENCHMARKS.md, "Pipelines"). The results are the same either way.
const PARALLEL_MIN_WORK: usize = 1 << 22;

/// Whether a fit of `n` rows and `p` columns runs on threads.
fn on_threads(n: usize, p: usize) -> bool {
    cfg!(feature = "parallel") && n.saturating_mul(p).saturating_mul(p) >= PARALLEL_MIN_WORK
}

/// `work` on each `CHUNK_ROWS` chunk of `out` with its index (and a scratch value made by
/// `init` per thread), on threads when `threads`.
fn for_each_chunk<T: Send, S>(
    out: &mut [T],
    threads: bool,
    init: impl Fn() -> S + Sync + Send,
    work: impl Fn(&mut S, (usize, &mut [T])) + Sync + Send,
) {
    #[cfg(feature = "parallel")]
    if threads {
        use rayon::prelude::*;
        out.par_chunks_mut(CHUNK_ROWS)
            .enumerate()
            .for_each_init(&init, |s, item| work(s, item));
        return;
    }
    let _ = threads;
    let mut scratch = init();
    out.chunks_mut(CHUNK_ROWS)
        .enumerate()
        .for_each(|item| work(&mut scratch, item));
}

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
            rank_tolerance: 1e-7,
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
    /// Two-sided p-value of the intercept's t statistic (NaN without an intercept).
    pub intercept_p_value: f64,
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
    /// Rows of the hat matrix's factor: H_ij = 1/n + w_i . w_j.
    hat_basis: HatBasis,
    /// F with (Xc'Xc + D)^-1 = F F' on the kept columns (unscaled): x'(X'X)^-1 x = |F'x|^2 is
    /// computed as a sum of squares, never negative whatever the conditioning.
    inverse_factor: Mat<f64>,
}

/// How to get w_i, the row of the hat matrix's factor W (H = 1/n + W W'), without rounding that
/// grows with the square of the condition number.
#[derive(Debug, Clone)]
enum HatBasis {
    /// Cholesky path (well conditioned): w_i = L^-1 z_i, z_i the centred, unit-norm kept columns.
    Factor {
        linv: Mat<f64>,
        inverse_norms: Vec<f64>,
    },
    /// QR path: the rows of Q (the first n rows of the augmented Q with ridge).
    Rows(Mat<f64>),
}

fn par() -> faer::Par {
    faer::get_global_parallelism()
}

/// Column `j` of a column-major matrix as a slice (copied when the matrix is strided).
pub(crate) fn column(x: MatRef<'_, f64>, j: usize) -> std::borrow::Cow<'_, [f64]> {
    let col = x.col(j);
    match col.try_as_col_major() {
        Some(c) => std::borrow::Cow::Borrowed(c.as_slice()),
        None => std::borrow::Cow::Owned((0..x.nrows()).map(|i| col[i]).collect()),
    }
}

/// The centred, unit-norm columns of a design, computed when needed rather than stored.
pub(crate) struct Scaled<'a> {
    columns: Vec<std::borrow::Cow<'a, [f64]>>,
    means: Vec<f64>,
    inverse_norms: Vec<f64>,
    n: usize,
}

impl<'a> Scaled<'a> {
    pub(crate) fn new(
        columns: Vec<std::borrow::Cow<'a, [f64]>>,
        means: Vec<f64>,
        norms: &[f64],
        n: usize,
    ) -> Self {
        Self {
            columns,
            means,
            inverse_norms: norms.iter().map(|v| 1.0 / v).collect(),
            n,
        }
    }

    fn p(&self) -> usize {
        self.columns.len()
    }

    /// Rows `start..start + buf.nrows()` into `buf`.
    fn fill(&self, start: usize, mut buf: faer::MatMut<'_, f64>) {
        let rows = buf.nrows();
        for k in 0..self.p() {
            let (m, inv) = (self.means[k], self.inverse_norms[k]);
            let source = &self.columns[k][start..start + rows];
            let target = buf
                .as_mut()
                .col_mut(k)
                .try_as_col_major_mut()
                .expect("column major")
                .as_slice_mut();
            for (t, v) in target.iter_mut().zip(source) {
                *t = (v - m) * inv;
            }
        }
    }

    /// The whole n x p matrix.
    fn materialise(&self) -> Mat<f64> {
        let mut m = Mat::<f64>::zeros(self.n, self.p());
        self.fill(0, m.as_mut());
        m
    }

    /// The row ranges of the chunks.
    fn chunks(&self) -> Vec<(usize, usize)> {
        (0..self.n)
            .step_by(CHUNK_ROWS)
            .map(|s| (s, CHUNK_ROWS.min(self.n - s)))
            .collect()
    }

    /// The lower triangle of Xs'Xs and Xs'y, accumulated a chunk of rows at a time (chunks
    /// spread over threads with the `parallel` feature, each thread with its own sums).
    pub(crate) fn cross_products(&self, y: &[f64]) -> (Mat<f64>, Vec<f64>) {
        self.cross_products_on(y, on_threads(self.n, self.p()))
    }

    /// [`Scaled::cross_products`], on threads or not: the same numbers either way.
    fn cross_products_on(&self, y: &[f64], threads: bool) -> (Mat<f64>, Vec<f64>) {
        let p = self.p();
        let buffer = || Mat::<f64>::zeros(CHUNK_ROWS.min(self.n), p);
        let accumulate = |(mut gram, mut xty, mut buf): (Mat<f64>, Mat<f64>, Mat<f64>),
                          (start, rows): (usize, usize)| {
            let mut chunk = buf.as_mut().subrows_mut(0, rows);
            self.fill(start, chunk.as_mut());
            let chunk = chunk.as_ref();
            triangular_matmul(
                gram.as_mut(),
                BlockStructure::TriangularLower,
                Accum::Add,
                chunk.transpose(),
                BlockStructure::Rectangular,
                chunk,
                BlockStructure::Rectangular,
                1.0,
                faer::Par::Seq,
            );
            let ys = faer::ColRef::from_slice(&y[start..start + rows]);
            matmul(
                xty.as_mut(),
                Accum::Add,
                chunk.transpose(),
                ys.as_mat(),
                1.0,
                faer::Par::Seq,
            );
            (gram, xty, buf)
        };
        let start = || (Mat::<f64>::zeros(p, p), Mat::<f64>::zeros(p, 1), buffer());
        // Fixed groups of chunks are summed (on threads when the work is large) and the groups'
        // sums are added in order, so the result does not depend on the number of threads or
        // on scheduling: a pipeline gives the same numbers, bit for bit, on every run.
        let chunks = self.chunks();
        let per_group = chunks.len().div_ceil(REDUCTION_GROUPS).max(1);
        let group_sum = |group: &[(usize, usize)]| {
            let (g, v, _) = group.iter().copied().fold(start(), accumulate);
            (g, v)
        };
        let sums: Vec<(Mat<f64>, Mat<f64>)> = if threads {
            #[cfg(feature = "parallel")]
            {
                use rayon::prelude::*;
                chunks.par_chunks(per_group).map(group_sum).collect()
            }
            #[cfg(not(feature = "parallel"))]
            chunks.chunks(per_group).map(group_sum).collect()
        } else {
            chunks.chunks(per_group).map(group_sum).collect()
        };
        let (gram, xty) = sums
            .into_iter()
            .reduce(|(a, x), (b, y)| (a + b, x + y))
            .unwrap_or_else(|| (Mat::<f64>::zeros(p, p), Mat::<f64>::zeros(p, 1)));
        (gram, (0..p).map(|j| xty[(j, 0)]).collect())
    }

    /// h_i = || L^-1 x_i ||^2: the row norms of Xs L^-T (a triangular matrix product), a chunk of
    /// rows at a time.
    fn leverage(&self, linv: MatRef<'_, f64>) -> Vec<f64> {
        let p = self.p();
        let mut h = vec![0.0; self.n];
        let buffers = || {
            (
                Mat::<f64>::zeros(CHUNK_ROWS.min(self.n), p),
                Mat::<f64>::zeros(CHUNK_ROWS.min(self.n), p),
            )
        };
        let work = |(buf, w): &mut (Mat<f64>, Mat<f64>), (index, hs): (usize, &mut [f64])| {
            let (start, rows) = (index * CHUNK_ROWS, hs.len());
            let mut chunk = buf.as_mut().subrows_mut(0, rows);
            self.fill(start, chunk.as_mut());
            let mut wc = w.as_mut().subrows_mut(0, rows);
            triangular_matmul(
                wc.as_mut(),
                BlockStructure::Rectangular,
                Accum::Replace,
                chunk.as_ref(),
                BlockStructure::Rectangular,
                linv.transpose(),
                BlockStructure::TriangularUpper,
                1.0,
                faer::Par::Seq,
            );
            for k in 0..p {
                let col = wc
                    .as_ref()
                    .col(k)
                    .try_as_col_major()
                    .expect("column major")
                    .as_slice();
                for (hi, v) in hs.iter_mut().zip(col) {
                    *hi += v * v;
                }
            }
        };
        for_each_chunk(&mut h, on_threads(self.n, p), buffers, work);
        h
    }
}

/// The sum of `x`, its largest magnitude and whether every value is finite, with independent
/// accumulators so that it vectorises (one chain of additions was a twentieth of a
/// cross-validation that refits a model per held-out group).
pub(crate) fn sum_and_largest(x: &[f64]) -> (f64, f64, bool) {
    let (mut sum, mut largest, mut finite) = ([0.0f64; 8], [0.0f64; 8], [true; 8]);
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            sum[k] += c[k];
            largest[k] = largest[k].max(c[k].abs());
            finite[k] &= c[k].is_finite();
        }
    }
    for (k, &v) in rest.iter().enumerate() {
        sum[k] += v;
        largest[k] = largest[k].max(v.abs());
        finite[k] &= v.is_finite();
    }
    (
        sum.iter().sum(),
        largest.iter().fold(0.0, |a, &b| a.max(b)),
        finite.iter().all(|&f| f),
    )
}

/// Sum of squares of `x - m`, with independent accumulators so that it vectorises.
pub(crate) fn centred_sum_of_squares(x: &[f64], m: f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            let d = c[k] - m;
            acc[k] += d * d;
        }
    }
    acc.iter().sum::<f64>() + rest.iter().map(|v| (v - m) * (v - m)).sum::<f64>()
}

/// Least squares of `y` on the columns of `x` (n x p).
pub fn ols(x: MatRef<'_, f64>, y: &[f64], options: &OlsOptions) -> Result<OlsFit, RegressionError> {
    let (n, p) = (x.nrows(), x.ncols());
    check_ols_inputs(x, y, options)?;
    let column_stats = column_stats(x, options)?;
    let means: Vec<f64> = column_stats.iter().map(|s| s.0).collect();
    let norms: Vec<f64> = column_stats.iter().map(|s| s.1).collect();
    let y_mean = if options.intercept {
        y.iter().sum::<f64>() / n as f64
    } else {
        0.0
    };
    let yc: Vec<f64> = y.iter().map(|v| v - y_mean).collect();
    // A column is constant when its spread is rounding next to its own magnitude (columns of
    // different units are never compared with one another).
    let root_n = (n as f64).sqrt();
    let candidates: Vec<usize> = (0..p)
        .filter(|&j| {
            let magnitude = column_stats[j].2 * root_n;
            norms[j] > options.rank_tolerance * magnitude.max(f64::MIN_POSITIVE)
        })
        .collect();
    let mut dropped: Vec<usize> = (0..p).filter(|j| !candidates.contains(j)).collect();
    let scaled = Scaled::new(
        candidates.iter().map(|&j| column(x, j)).collect(),
        candidates.iter().map(|&j| means[j]).collect(),
        &candidates.iter().map(|&j| norms[j]).collect::<Vec<_>>(),
        n,
    );
    // The ridge penalty on beta_j is lambda on gamma_j / norm_j: lambda / norm_j^2 here.
    let penalty: Vec<f64> = candidates
        .iter()
        .map(|&j| options.ridge / (norms[j] * norms[j]))
        .collect();
    let solved = if candidates.is_empty() {
        Solved::empty(n)
    } else {
        solve(&scaled, &yc, &penalty, options)?
    };
    for &k in &solved.dropped {
        dropped.push(candidates[k]);
    }
    dropped.sort_unstable();
    let kept: Vec<usize> = solved.kept.iter().map(|&k| candidates[k]).collect();
    let original = OriginalScale::of(solved, &kept, &means, &norms);
    let intercept_value = if options.intercept {
        y_mean
            - original
                .coefficients
                .iter()
                .zip(&original.means)
                .map(|(b, m)| b * m)
                .sum::<f64>()
    } else {
        0.0
    };
    let fitted = fitted_values(x, &kept, &original.coefficients, intercept_value);
    let residuals: Vec<f64> = y.iter().zip(&fitted).map(|(a, b)| a - b).collect();
    let rss: f64 = residuals.iter().map(|e| e * e).sum();
    let tss: f64 = if options.intercept {
        yc.iter().map(|v| v * v).sum()
    } else {
        y.iter().map(|v| v * v).sum()
    };
    let inference = Inference::of(&original, rss, tss, n, intercept_value, options);
    let leverage = if options.leverage {
        let base = if options.intercept {
            1.0 / n as f64
        } else {
            0.0
        };
        original.leverage.iter().map(|h| h + base).collect()
    } else {
        Vec::new()
    };
    Ok(OlsFit {
        n,
        kept,
        dropped,
        intercept: intercept_value,
        intercept_std_error: inference.intercept_std_error,
        intercept_p_value: inference.intercept_p_value,
        coefficients: original.coefficients,
        std_errors: inference.std_errors,
        t_values: inference.t_values,
        p_values: inference.p_values,
        fitted,
        residuals,
        leverage,
        rss,
        tss,
        r2: inference.r2,
        adj_r2: inference.adj_r2,
        rmse: (rss / n as f64).sqrt(),
        sigma: inference.sigma,
        df_residual: inference.df_residual,
        condition_number: original.condition,
        method: original.method,
        options: *options,
        means: original.means,
        hat_basis: original.hat_basis,
        inverse_factor: original.inverse_factor,
    })
}

/// As many targets as rows, more rows than the intercept takes, finite targets, a ridge >= 0.
fn check_ols_inputs(
    x: MatRef<'_, f64>,
    y: &[f64],
    options: &OlsOptions,
) -> Result<(), RegressionError> {
    let n = x.nrows();
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
    Ok(())
}

/// Each column's mean (0 without an intercept), centred norm and largest magnitude, a column
/// per task; a column with a value that is not finite is an error.
fn column_stats(
    x: MatRef<'_, f64>,
    options: &OlsOptions,
) -> Result<Vec<(f64, f64, f64)>, RegressionError> {
    let (n, p) = (x.nrows(), x.ncols());
    let stats = |j: usize| -> Result<(f64, f64, f64), RegressionError> {
        let values = column(x, j);
        let (sum, largest, finite) = sum_and_largest(&values);
        if !finite {
            let row = values.iter().position(|v| !v.is_finite()).unwrap_or(0);
            return Err(RegressionError::NotFinite {
                row,
                column: Some(j),
            });
        }
        let m = if options.intercept {
            sum / n as f64
        } else {
            0.0
        };
        Ok((m, centred_sum_of_squares(&values, m).sqrt(), largest))
    };
    #[cfg(feature = "parallel")]
    if on_threads(n, p) {
        use rayon::prelude::*;
        return (0..p).into_par_iter().map(stats).collect();
    }
    (0..p).map(stats).collect()
}

/// The solution back on the columns' own scale (kept columns, in order).
struct OriginalScale {
    coefficients: Vec<f64>,
    /// The kept columns' means.
    means: Vec<f64>,
    /// The coefficients' covariance up to the factor sigma^2, on the columns' own scale.
    cov_unscaled: Mat<f64>,
    inverse_factor: Mat<f64>,
    hat_basis: HatBasis,
    leverage: Vec<f64>,
    condition: f64,
    method: Method,
}

impl OriginalScale {
    fn of(solved: Solved, kept: &[usize], means: &[f64], norms: &[f64]) -> Self {
        let r = kept.len();
        Self {
            coefficients: (0..r).map(|k| solved.gamma[k] / norms[kept[k]]).collect(),
            means: kept.iter().map(|&j| means[j]).collect(),
            cov_unscaled: Mat::from_fn(r, r, |a, b| {
                solved.cov[(a, b)] / (norms[kept[a]] * norms[kept[b]])
            }),
            inverse_factor: Mat::from_fn(r, r, |a, b| solved.factor[(a, b)] / norms[kept[a]]),
            hat_basis: match solved.hat {
                SolvedHat::Factor(linv) => HatBasis::Factor {
                    linv,
                    inverse_norms: kept.iter().map(|&j| 1.0 / norms[j]).collect(),
                },
                SolvedHat::Rows(q) => HatBasis::Rows(q),
            },
            leverage: solved.leverage,
            condition: solved.condition,
            method: solved.method,
        }
    }
}

/// The intercept plus the kept columns times their coefficients, a chunk of rows per task.
fn fitted_values(
    x: MatRef<'_, f64>,
    kept: &[usize],
    coefficients: &[f64],
    intercept_value: f64,
) -> Vec<f64> {
    let n = x.nrows();
    let mut fitted = vec![intercept_value; n];
    let add_columns = |(index, part): (usize, &mut [f64])| {
        let start = index * CHUNK_ROWS;
        for (k, &j) in kept.iter().enumerate() {
            let b = coefficients[k];
            let values = column(x.subrows(start, part.len()), j);
            for (f, v) in part.iter_mut().zip(values.iter()) {
                *f += b * v;
            }
        }
    };
    for_each_chunk(
        &mut fitted,
        on_threads(n, kept.len()),
        || (),
        |(), item| add_columns(item),
    );
    fitted
}

/// R^2, the residual standard error, and the standard errors, t values and p values of the
/// coefficients and the intercept.
struct Inference {
    df_residual: usize,
    r2: f64,
    adj_r2: f64,
    sigma: f64,
    std_errors: Vec<f64>,
    t_values: Vec<f64>,
    p_values: Vec<f64>,
    intercept_std_error: f64,
    intercept_p_value: f64,
}

impl Inference {
    fn of(
        original: &OriginalScale,
        rss: f64,
        tss: f64,
        n: usize,
        intercept_value: f64,
        options: &OlsOptions,
    ) -> Self {
        let r = original.coefficients.len();
        let intercept = usize::from(options.intercept);
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
        let cov_unscaled = &original.cov_unscaled;
        let std_errors: Vec<f64> = (0..r)
            .map(|k| sigma * cov_unscaled[(k, k)].max(0.0).sqrt())
            .collect();
        let t_values: Vec<f64> = original
            .coefficients
            .iter()
            .zip(&std_errors)
            .map(|(b, s)| b / s)
            .collect();
        let p_values = two_sided_p(&t_values, df_residual);
        let kept_means = &original.means;
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
        let intercept_p_value = if options.intercept {
            two_sided_p(&[intercept_value / intercept_std_error], df_residual)[0]
        } else {
            f64::NAN
        };
        Self {
            df_residual,
            r2,
            adj_r2,
            sigma,
            std_errors,
            t_values,
            p_values,
            intercept_std_error,
            intercept_p_value,
        }
    }
}

fn two_sided_p(t: &[f64], df: usize) -> Vec<f64> {
    match StudentsT::new(0.0, 1.0, df as f64) {
        Ok(dist) if df > 0 => t
            .iter()
            .map(|v| {
                if v.is_finite() {
                    // The survival function, not 1 - cdf: p-values below 1e-16 stay themselves
                    // instead of rounding to 0.
                    2.0 * dist.sf(v.abs())
                } else {
                    f64::NAN
                }
            })
            .collect(),
        _ => vec![f64::NAN; t.len()],
    }
}

/// What the hat matrix is computed from.
enum SolvedHat {
    /// L^-1 of the Cholesky factor of the scaled cross products.
    Factor(Mat<f64>),
    /// The first `rank` columns of Q, rows 0..n.
    Rows(Mat<f64>),
}

/// The solution in the scaled, centred coordinates.
struct Solved {
    kept: Vec<usize>,
    dropped: Vec<usize>,
    gamma: Vec<f64>,
    cov: Mat<f64>,
    hat: SolvedHat,
    /// F with A^-1 = F F' (scaled, kept order).
    factor: Mat<f64>,
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
            hat: SolvedHat::Rows(Mat::zeros(n, 0)),
            factor: Mat::zeros(0, 0),
            leverage: vec![0.0; n],
            condition: 1.0,
            method: Method::Qr,
        }
    }
}

fn solve(
    scaled: &Scaled<'_>,
    yc: &[f64],
    penalty: &[f64],
    options: &OlsOptions,
) -> Result<Solved, RegressionError> {
    let (n, p) = (scaled.n, scaled.p());
    // The cross products of the unit-norm columns; their eigenvalues give the condition number.
    let (gram, xty) = scaled.cross_products(yc);
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
        cholesky(scaled, gram, &xty, condition, penalty, options)
    } else {
        let mut solved = qr(scaled.materialise().as_ref(), yc, penalty, options)?;
        if options.ridge > 0.0 {
            // Report the design's own conditioning, not the penalised problem's: it is what the
            // penalty is there for.
            solved.condition = condition;
        }
        Ok(solved)
    }
}

fn cholesky(
    scaled: &Scaled<'_>,
    gram: Mat<f64>,
    xty: &[f64],
    condition: f64,
    penalty: &[f64],
    options: &OlsOptions,
) -> Result<Solved, RegressionError> {
    let p = scaled.p();
    let mut a = gram.clone();
    for j in 0..p {
        a[(j, j)] += penalty[j];
    }
    let llt = a
        .as_ref()
        .llt(Side::Lower)
        .map_err(|e| RegressionError::Numerical(format!("Cholesky factorisation: {e:?}")))?;
    let l = llt.L();
    // gamma = A^-1 Xs'y
    let mut rhs = Mat::from_fn(p, 1, |j, _| xty[j]);
    solve_lower_triangular_in_place(l, rhs.as_mut(), par());
    solve_upper_triangular_in_place(l.transpose(), rhs.as_mut(), par());
    let gamma: Vec<f64> = (0..p).map(|j| rhs[(j, 0)]).collect();
    // L^-1, then A^-1 = L^-T L^-1; the covariance is A^-1 G A^-1 (= A^-1 for OLS).
    let mut linv = Mat::<f64>::identity(p, p);
    solve_lower_triangular_in_place(l, linv.as_mut(), par());
    let mut inv = Mat::<f64>::zeros(p, p);
    matmul(
        inv.as_mut(),
        Accum::Replace,
        linv.transpose(),
        linv.as_ref(),
        1.0,
        par(),
    );
    let cov = if options.ridge > 0.0 {
        let full = Mat::from_fn(
            p,
            p,
            |i, j| if i >= j { gram[(i, j)] } else { gram[(j, i)] },
        );
        let mut tmp = Mat::<f64>::zeros(p, p);
        matmul(
            tmp.as_mut(),
            Accum::Replace,
            inv.as_ref(),
            full.as_ref(),
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
        inv.clone()
    };
    let leverage = if options.leverage {
        scaled.leverage(linv.as_ref())
    } else {
        Vec::new()
    };
    Ok(Solved {
        kept: (0..p).collect(),
        dropped: vec![],
        gamma,
        cov,
        factor: linv.transpose().to_owned(),
        hat: SolvedHat::Factor(linv),
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
    // Ridge: the rows of sqrt(D) below Xs (least squares needs Xs alone).
    let augmented;
    let design = if options.ridge > 0.0 {
        let mut m = Mat::<f64>::zeros(n + p, p);
        m.as_mut().subrows_mut(0, n).copy_from(xs);
        for (j, d) in penalty.iter().enumerate() {
            m[(n + j, j)] = d.sqrt();
        }
        augmented = m;
        augmented.as_ref()
    } else {
        xs
    };
    let PivotedQr {
        r: r_full,
        pivots: fwd,
        q,
    } = col_piv_qr(design);
    let size = r_full.nrows().min(p);
    let largest = if size > 0 { r_full[(0, 0)].abs() } else { 0.0 };
    let rank = (0..size)
        .take_while(|&k| r_full[(k, k)].abs() > options.rank_tolerance * largest)
        .count();
    let kept_pivoted: Vec<usize> = fwd[..rank].to_vec();
    let mut dropped: Vec<usize> = fwd[rank..].to_vec();
    dropped.sort_unstable();
    // Q' y (the augmented y has zeros below row n).
    let qty: Vec<f64> = (0..rank)
        .map(|k| {
            let qk = q.col(k).subrows(0, n);
            match qk.try_as_col_major() {
                Some(qk) => qk.as_slice().iter().zip(yc).map(|(q, y)| q * y).sum(),
                None => (0..n).map(|i| qk[i] * yc[i]).sum(),
            }
        })
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
        factor: Mat::from_fn(rank, rank, |a, b| rinv[(order[a], b)]),
        hat: SolvedHat::Rows(if q.nrows() == n && q.ncols() == rank {
            q
        } else {
            Mat::from_fn(n, rank, |i, k| q[(i, k)])
        }),
        leverage,
        condition,
        method: Method::Qr,
    })
}

/// Designs of at most this many columns are first reduced to a triangle by [`householder`]; wider
/// ones by faer's blocked QR (a throwaway harness on 5,000-row designs: 8.8 against 12.3 ms at
/// 48 columns, 11.5 against 13.7 ms at 64, 36 against 23 ms at 100).
const HOUSEHOLDER_MAX_COLUMNS: usize = 64;

/// A column-pivoted QR: `design[:, pivots] = q r`, `q` with orthonormal columns (thin), `r` upper
/// triangular with diagonal entries of non-increasing magnitude.
struct PivotedQr {
    r: Mat<f64>,
    /// `pivots[k]`: the design's column in position k.
    pivots: Vec<usize>,
    q: Mat<f64>,
}

/// Column-pivoted QR. A tall design (at least twice as many rows as columns) is first reduced to
/// its triangle R0 by an unpivoted QR, and the pivoting done on R0 (columns x columns):
/// orthogonal transformations keep the norms the pivot choice compares, so in exact arithmetic
/// this is the pivoted QR of the design (Q = Q0 Q1). It matters because faer's pivoted QR
/// computes each remaining column's norm again at every step with its overflow-safe norm, which
/// made it 10x slower than this on the 2,600 x 8 designs of a cross-validation's refits.
fn col_piv_qr(design: MatRef<'_, f64>) -> PivotedQr {
    let (m, p) = (design.nrows(), design.ncols());
    if p == 0 || m < 2 * p {
        let qr = design.col_piv_qr();
        return PivotedQr {
            r: qr.thin_R().to_owned(),
            pivots: qr.P().arrays().0.to_vec(),
            q: qr.compute_thin_Q(),
        };
    }
    let (r0, q0) = if p <= HOUSEHOLDER_MAX_COLUMNS {
        householder(design)
    } else {
        let qr = design.qr();
        (qr.thin_R().to_owned(), qr.compute_thin_Q())
    };
    let small = r0.col_piv_qr();
    PivotedQr {
        r: small.thin_R().to_owned(),
        pivots: small.P().arrays().0.to_vec(),
        q: q0 * small.compute_thin_Q(),
    }
}

/// Unpivoted Householder QR of a tall matrix (rows >= columns): R (columns x columns) and the thin
/// Q. Each reflector's norm is a plain sum of squares (the design's columns have unit norm, so it
/// neither overflows nor underflows); faer's overflow-safe norm is used only where it would.
fn householder(a: MatRef<'_, f64>) -> (Mat<f64>, Mat<f64>) {
    let (m, p) = (a.nrows(), a.ncols());
    let mut a = a.to_owned();
    let mut taus = vec![0.0; p];
    let mut w = Mat::<f64>::zeros(1, p);
    for k in 0..p {
        let tail = a.as_ref().col(k).subrows(k + 1, m - k - 1);
        let squared = tail.squared_norm_l2();
        let tail_norm = if squared.is_finite() && (squared == 0.0 || squared > 1e-280) {
            squared.sqrt()
        } else {
            tail.norm_l2()
        };
        if tail_norm == 0.0 {
            continue;
        }
        let alpha = a[(k, k)];
        let norm = alpha.hypot(tail_norm);
        let beta = if alpha >= 0.0 { -norm } else { norm };
        let tau = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        for i in k + 1..m {
            a[(i, k)] *= scale;
        }
        // H = I - tau v v' with v = (1, a[k+1.., k]), applied to the columns to the right.
        a[(k, k)] = 1.0;
        let (v, rest) = a.as_mut().subrows_mut(k, m - k).split_at_col_mut(k + 1);
        let v = v.rb().col(k).as_mat();
        let mut wk = w.as_mut().subcols_mut(0, p - k - 1);
        matmul(
            wk.rb_mut(),
            Accum::Replace,
            v.transpose(),
            rest.rb(),
            1.0,
            faer::Par::Seq,
        );
        matmul(rest, Accum::Add, v, wk.rb(), -tau, faer::Par::Seq);
        a[(k, k)] = beta;
        taus[k] = tau;
    }
    let r = Mat::from_fn(p, p, |i, j| if i <= j { a[(i, j)] } else { 0.0 });
    // Q = H_0 ... H_(p-1) [I; 0], the reflectors applied from the last.
    let mut q = Mat::<f64>::zeros(m, p);
    for j in 0..p {
        q[(j, j)] = 1.0;
    }
    for k in (0..p).rev() {
        if taus[k] == 0.0 {
            continue;
        }
        let saved = std::mem::replace(&mut a[(k, k)], 1.0);
        let v = a.as_ref().col(k).subrows(k, m - k).as_mat();
        let mut block = q.as_mut().submatrix_mut(k, k, m - k, p - k);
        let mut wk = w.as_mut().subcols_mut(0, p - k);
        matmul(
            wk.rb_mut(),
            Accum::Replace,
            v.transpose(),
            block.rb(),
            1.0,
            faer::Par::Seq,
        );
        matmul(
            block.rb_mut(),
            Accum::Add,
            v,
            wk.rb(),
            -taus[k],
            faer::Par::Seq,
        );
        a[(k, k)] = saved;
    }
    (r, q)
}

impl OlsFit {
    /// Z with H_GG = Z Z' at rows `rows` of `x` (the design the model was fitted on): the row of
    /// the intercept, 1/sqrt(n), then w_i. |G| x (1 + kept columns).
    pub fn hat_rows(&self, x: MatRef<'_, f64>, rows: &[usize]) -> Mat<f64> {
        let offset = usize::from(self.options.intercept);
        let root_n = (self.n as f64).sqrt();
        let w = match &self.hat_basis {
            HatBasis::Rows(q) => Mat::from_fn(rows.len(), q.ncols(), |i, k| q[(rows[i], k)]),
            HatBasis::Factor {
                linv,
                inverse_norms,
            } => {
                let r = self.kept.len();
                let zc = Mat::from_fn(rows.len(), r, |i, k| {
                    (x[(rows[i], self.kept[k])] - self.means[k]) * inverse_norms[k]
                });
                let mut w = Mat::<f64>::zeros(rows.len(), r);
                matmul(
                    w.as_mut(),
                    Accum::Replace,
                    zc.as_ref(),
                    linv.as_ref().transpose(),
                    1.0,
                    faer::Par::Seq,
                );
                w
            }
        };
        Mat::from_fn(rows.len(), w.ncols() + offset, |i, k| {
            if k < offset {
                1.0 / root_n
            } else {
                w[(i, k - offset)]
            }
        })
    }

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
        // |F'd|^2, F F' = (X'X)^-1.
        for b in 0..d.len() {
            let v: f64 = (0..d.len())
                .map(|a| self.inverse_factor[(a, b)] * d[a])
                .sum();
            q += v * v;
        }
        let t = t_quantile(self.df_residual as f64, 0.5 + level / 2.0)?;
        let half = t * self.sigma * (1.0 + q).sqrt();
        let y = self.predict(row);
        Some((y - half, y + half))
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom. Validation asks for it once per
/// held-out row with the same few (df, p): the inverse regularised beta function behind it cost
/// a tenth of a cross-validation run before the last answers were kept here.
pub fn t_quantile(df: f64, p: f64) -> Option<f64> {
    use std::cell::RefCell;
    thread_local! {
        static CACHE: RefCell<Vec<((u64, u64), f64)>> = const { RefCell::new(Vec::new()) };
    }
    let key = (df.to_bits(), p.to_bits());
    if let Some(t) = CACHE.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|e| e.1)) {
        return Some(t);
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(p);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 64 {
            c.remove(0);
        }
        c.push((key, t));
    });
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_products_on_threads_equal_those_on_one() {
        // Large enough to be spread over threads (with the `parallel` feature), 37 chunks, so
        // that groups hold several chunks and a short last one.
        let (n, p) = (37 * CHUNK_ROWS - 100, 24);
        let columns: Vec<Vec<f64>> = (0..p)
            .map(|j| {
                (0..n)
                    .map(|i| ((i * 31 + j * 17) % 97) as f64 + 0.25 * j as f64)
                    .collect()
            })
            .collect();
        let y: Vec<f64> = (0..n).map(|i| (i % 13) as f64).collect();
        let scaled = Scaled::new(
            columns
                .iter()
                .map(|c| std::borrow::Cow::Borrowed(c.as_slice()))
                .collect(),
            vec![1.5; p],
            &vec![100.0; p],
            n,
        );
        assert_eq!(on_threads(n, p), cfg!(feature = "parallel"));
        let (g1, v1) = scaled.cross_products_on(&y, true);
        let (g0, v0) = scaled.cross_products_on(&y, false);
        assert_eq!(
            v1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            v0.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        for i in 0..p {
            for j in 0..=i {
                assert_eq!(g1[(i, j)].to_bits(), g0[(i, j)].to_bits(), "({i}, {j})");
            }
        }
    }

    #[test]
    fn the_cached_t_quantile_is_the_distribution_s() {
        for df in [1.0, 7.0, 250.0] {
            let direct = StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975);
            assert_eq!(t_quantile(df, 0.975), Some(direct));
            assert_eq!(t_quantile(df, 0.975), Some(direct));
        }
    }

    /// p-values beside statsmodels 0.15.0 (scipy 1.17.1), including the intercept's and values far
    /// below 1e-16, which 1 - cdf rounded to 0.
    #[test]
    fn p_values_match_statsmodels_down_to_tiny_values() {
        let n = 30;
        let x = Mat::from_fn(n, 2, |i, j| {
            if j == 0 {
                10.0 + i as f64 * 3.0
            } else {
                ((i * 7) % 11) as f64 + 1.0
            }
        });
        let y: Vec<f64> = (0..n)
            .map(|i| {
                0.01 + 0.002 * x[(i, 0)]
                    + 0.001 * x[(i, 1)]
                    + 0.0001 * (((i * 13) % 7) as f64 - 3.0)
            })
            .collect();
        let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
        let close = |got: f64, want: f64| {
            assert!(
                (got - want).abs() <= 1e-6 * want,
                "{got} vs statsmodels {want}"
            );
        };
        close(fit.intercept_p_value, 1.0999375438012933e-34);
        close(fit.p_values[0], 2.6534040018217977e-66);
        close(fit.p_values[1], 1.6543475813990474e-33);
        // statsmodels' sqrt(scale) divides by the residual degrees of freedom; rmse by n.
        close(fit.sigma, 0.00021803664007357534);
        close(fit.rmse, 0.0002068477188008523);
    }

    #[test]
    fn columns_of_very_different_units_are_all_kept_and_a_constant_one_is_dropped() {
        // Instruction counts around 1e10 beside a time in seconds around 1e-4 (the cross-device
        // reference time): the small column is no less informative for being small.
        let n = 50;
        let x = Mat::from_fn(n, 3, |i, j| match j {
            0 => 1e10 + 3e8 * ((i * 7) % 11) as f64,
            1 => 1e-4 * (1.0 + ((i * 5) % 13) as f64 / 13.0),
            _ => 42.0,
        });
        let y: Vec<f64> = (0..n)
            .map(|i| 2e-12 * x[(i, 0)] + 300.0 * x[(i, 1)] + ((i % 3) as f64) * 1e-4)
            .collect();
        let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
        assert_eq!(fit.kept, [0, 1]);
        assert_eq!(fit.dropped, [2]);
        assert!(
            (fit.coefficients[1] - 300.0).abs() < 1.0,
            "{}",
            fit.coefficients[1]
        );
    }

    /// The two-stage pivoted QR against faer's direct one, on tall designs reduced by
    /// [`householder`] and by faer's blocked QR, with a zero column, a column equal to the sum of
    /// two others and columns of very different size: the same factorisation (design[:, P] =
    /// Q R, Q orthonormal), the same pivot sizes and so the same numerical rank.
    #[test]
    fn two_stage_pivoted_qr_is_faer_s_pivoted_qr() {
        for (m, p) in [
            (2600, 8),
            (300, 40),
            (400, HOUSEHOLDER_MAX_COLUMNS + 6),
            (9, 6),
        ] {
            let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ (m * p) as u64;
            let mut noise = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 1_000_003) as f64 / 1_000_003.0 - 0.5
            };
            let mut x = Mat::from_fn(m, p, |_, j| noise() * if j == 2 { 1e-6 } else { 1.0 });
            for i in 0..m {
                x[(i, 3)] = 0.0;
                x[(i, 5)] = x[(i, 0)] + x[(i, 1)];
            }
            let ours = col_piv_qr(x.as_ref());
            let faer = x.col_piv_qr();
            let rf = faer.thin_R();
            let k = p.min(m);
            assert_eq!((ours.r.nrows(), ours.r.ncols()), (k, p), "{m} x {p}");
            assert_eq!((ours.q.nrows(), ours.q.ncols()), (m, k), "{m} x {p}");
            for j in 0..k {
                let (a, b) = (ours.r[(j, j)].abs(), rf[(j, j)].abs());
                assert!(
                    (a - b).abs() <= 1e-12 * rf[(0, 0)].abs(),
                    "{m} x {p}: |R[{j},{j}]| {a} vs faer {b}"
                );
                if j > 0 {
                    assert!(
                        a <= ours.r[(j - 1, j - 1)].abs() * (1.0 + 1e-12),
                        "{m} x {p}: pivots out of order"
                    );
                }
            }
            // design[:, P] = Q R and Q'Q = I.
            let qr = &ours.q * &ours.r;
            for (c, &j) in ours.pivots.iter().enumerate() {
                for i in 0..m {
                    assert!(
                        (qr[(i, c)] - x[(i, j)]).abs() <= 1e-12,
                        "{m} x {p}: ({i}, {j})"
                    );
                }
            }
            let qtq = ours.q.transpose() * &ours.q;
            for a in 0..k {
                for b in 0..k {
                    let want = if a == b { 1.0 } else { 0.0 };
                    assert!(
                        (qtq[(a, b)] - want).abs() <= 1e-12,
                        "{m} x {p}: Q'Q ({a}, {b})"
                    );
                }
            }
        }
    }
}
