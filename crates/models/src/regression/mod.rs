//! Linear models of run time from counters: least squares with collinearity detection, exact
//! leave-one-out, hold-out validation, and forward/backward stepwise selection by adjusted R^2
//! with spline terms and interactions. Matrices are `faer` matrices; no I/O.

pub mod ols;
pub mod spline;
pub mod stepwise;
pub mod validate;

pub use ols::{Method, OlsFit, OlsOptions, ols};

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
