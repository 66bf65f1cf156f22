//! The models yosoku fits and evaluates.
//!
//! Every function takes and returns Arrow record batches of the canonical tables
//! (`yosoku-tables`) and does no I/O, so the crate compiles to wasm32 and its tests need no
//! files. Inputs are checked against their table definitions first; errors say which input, which
//! row (program, variant, operation) and what was expected.
//!
//! The families, one module each (a pipeline step family in `yosoku-pipeline` matches each one,
//! `steps/<family>`, and a table family in `yosoku-tables`, `defs/<family>`):
//!
//! - [`compare`]: predictions against measurements, results against published figures.
//! - [`counters`]: counter models over `observations` tables: normalize operations, one fit per
//!   group, cross-validation with flags (Shimada et al., Oka et al.), the throughput of kernels
//!   and the overhead of in-kernel tracing.
//! - [`csx600`]: the op-count, bandwidth-curve and double-buffering models of Nishikawa et al.
//! - [`mpi`]: simplified-execution prediction of MPI runs per rank, the separate-runs baseline
//!   and the best-configuration search (Chida et al.), loop detection and call paths.
//! - [`scaling`]: scaling models in Extra-P's normal form, and runs as Extra-P's experiments.
//! - [`transfer`]: a kernel's time on a GPU never timed, or of a kernel never timed: wave
//!   scaling, learned device-normalised models, schemes that hold GPUs and kernels out, and
//!   forecasts scored against later measurements.
//!
//! Beside them, [`curve`]: a measured bandwidth curve and the time of a transfer of any size
//! (the CSX600's transfers, a GPU calibration's copy).
//!
//! Each family is a set of functions a pipeline step calls; the step registry (`yosoku-pipeline`)
//! decides which parameters reach them and checks them before anything runs. A model a command
//! uses later is one object of its family implementing [`model::Model`]: fitted in the fit
//! stage, saved in the bundle with named fields, answering from what was saved.

pub mod compare;
pub mod counters;
pub mod csx600;
pub mod curve;
#[cfg(test)]
mod fixtures;
pub mod model;
pub mod mpi;
pub mod scaling;
pub mod transfer;

pub use model::Model;

/// The model families, as modules of this crate: the step families of `yosoku-pipeline` match
/// them one to one (a test there compares the two).
pub const FAMILIES: &[&str] = &[
    "compare", "counters", "csx600", "mpi", "scaling", "transfer",
];

use arrow_array::{BooleanArray, RecordBatch};
use yosoku_tables::access;
use yosoku_tables::access::Text;
pub(crate) use yosoku_tables::rows::Input;
use yosoku_tables::rows::RowsError;

/// Why a model could not run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// An input is not the table it should be, or an output could not be built.
    #[error(transparent)]
    Table(#[from] RowsError),
    /// The inputs are valid tables but do not fit together (a missing throughput, a missing curve,
    /// counts on the wrong basis, ...).
    #[error("{0}")]
    Invalid(String),
    /// A transfer model was asked for a GPU whose times it was fitted on: the answer would not
    /// be of an unseen GPU (the caller may ask again with its rows left out).
    #[error(
        "`{gpu}` is one of the model's training GPUs: its times were fitted, so a prediction for it would not be of an unseen GPU"
    )]
    TrainedOnTarget { gpu: String },
}

impl ModelError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ModelError::Invalid(message.into())
    }

    /// An output table the model built is not valid: a bug in the model, reported as an error.
    pub(crate) fn built(source: yosoku_tables::TableMismatch) -> Self {
        ModelError::Table(RowsError::Build { source })
    }
}

/// The rows of `batch` whose string column `column` equals `value`.
pub fn filter_eq(
    batch: &RecordBatch,
    column: &str,
    value: &str,
) -> Result<RecordBatch, ModelError> {
    let values = access::utf8(batch, column).map_err(|source| RowsError::Access {
        role: "filter",
        source,
    })?;
    let mask: BooleanArray = values.iter().map(|v| Some(v == Some(value))).collect();
    arrow_select::filter::filter_record_batch(batch, &mask)
        .map_err(|e| ModelError::invalid(format!("filtering on `{column}`: {e}")))
}

/// The distinct values of a string column, in order of first appearance.
pub fn distinct(values: Text<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values.iter().flatten() {
        if !out.iter().any(|o| o == v) {
            out.push(v.to_owned());
        }
    }
    out
}

/// Joins flags into the `;`-separated form of the `flags` columns; `None` when there are none.
pub fn join_flags(flags: &[String]) -> Option<String> {
    let mut unique: Vec<&str> = Vec::new();
    for f in flags {
        for part in f.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            if !unique.contains(&part) {
                unique.push(part);
            }
        }
    }
    (!unique.is_empty()).then(|| unique.join(";"))
}

/// The median of `values` (sorted in place); 0 for none.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}
