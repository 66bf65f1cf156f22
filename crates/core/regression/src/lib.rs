//! Linear regression on `faer` matrices, the numerical core of yosoku's counter models: least
//! squares with collinearity (rank) detection and optional ridge, exact leave-one-out from the hat
//! matrix, hold-out validation, and forward/backward stepwise selection by adjusted R^2 with
//! natural-cubic-spline terms and interactions (docs/methods.md, sections 1 and 4).
//!
//! It knows nothing of Arrow, tables or pipelines and does no I/O: `yosoku-models` turns
//! `observations` tables into matrices and calls it. Checked against numpy/statsmodels in
//! `tests/oracle.rs`.
//!
//! - [`mod@ols`]: least squares with rank detection, ridge, weights, intervals.
//! - [`stepwise`]: forward/backward selection by adjusted R^2 over candidate terms.
//! - [`spline`]: natural cubic spline bases, the stepwise search's nonlinear terms.
//! - [`validate`]: predictions out of sample (its `holdout` module: least squares' exact
//!   leave-one-out, k-fold and grouped hold-outs; `ridge`: ridge on standardised columns
//!   refitted per training set) and the error metrics (`metrics`).
//! - [`pmnf`]: scaling models in Extra-P's performance model normal form, searched as Extra-P
//!   does, and Extra-P's file formats ([`pmnf::extrap`]: told by their bytes and read from them;
//!   an experiment Extra-P saved, a zip, with the `saved` feature, and sets of Score-P's Cube
//!   profiles, `pmnf::extrap::cube`, with the `cube` feature; wasm builds leave both off).
//!
//! How it computes:
//!
//! - leave-one-out and grouped hold-outs of least squares come from the hat matrix, exactly; the
//!   leave-one-out of a ridge on each training set's own z-scores factorises once per group and
//!   solves each row's system by refinement (the rank-one change exactly, the rest iterated; a row
//!   that drops a column or nearly fixes the model alone is solved directly);
//! - a cross-validation starts every scheme from one fit of all rows ([`validate::validate_fitted`]);
//! - with the `parallel` feature only fits of at least 4M row-column² operations use threads, and a
//!   pipeline run keeps faer's factorisations on the calling thread
//!   ([`factorise_on_calling_thread`]); sums are grouped the same way on one thread or many, so no
//!   result depends on the number of threads.

pub mod ols;
pub mod pmnf;
pub mod spline;
pub mod stepwise;
pub mod validate;

pub use ols::{Method, OlsFit, OlsOptions, ols, t_quantile};

/// Makes faer run its factorisations (QR, Cholesky, eigenvalues) on the calling thread, for the
/// whole process. With the `parallel` feature faer hands every one to rayon by default; the
/// matrices of yosoku's fits are small (tens of columns), waking the workers costs more than the
/// work, and the idle workers then spin: a pipeline of thousands of fits spent 15 % of its CPU
/// there (BENCHMARKS.md, "Pipelines as the demo runs them"). The cross-products of a large
/// design keep their own threads (`ols`), and the results are the same either way.
pub fn factorise_on_calling_thread() {
    faer::set_global_parallelism(faer::Par::Seq);
}

/// Why a regression could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegressionError {
    #[error("{0}")]
    Shape(String),
    #[error("{rows} observation(s), at least {needed} needed")]
    TooFewRows { rows: usize, needed: usize },
    #[error("a value that is not a finite number at row {row}{}", column.map(|c| format!(", column {c}")).unwrap_or_default())]
    NotFinite { row: usize, column: Option<usize> },
    #[error("numerical failure: {0}")]
    Numerical(String),
}
