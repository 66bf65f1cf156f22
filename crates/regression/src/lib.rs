//! Linear regression on `faer` matrices, the numerical core of yosoku's counter models: least
//! squares with collinearity (rank) detection and optional ridge, exact leave-one-out from the hat
//! matrix, hold-out validation, and forward/backward stepwise selection by adjusted R^2 with
//! natural-cubic-spline terms and interactions (docs/methods.md, sections 1 and 4).
//!
//! It knows nothing of Arrow, tables or pipelines and does no I/O: `yosoku-models` turns
//! `observations` tables into matrices and calls it. Checked against numpy/statsmodels in
//! `tests/oracle.rs`.

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
