//! The models yosoku fits and evaluates.
//!
//! Every function takes and returns Arrow record batches of the canonical tables
//! (`yosoku-tables`) and does no I/O, so the crate compiles to wasm32 and its tests need no
//! files. Inputs are checked against their table definitions first; errors say which input, which
//! row (program, variant, operation) and what was expected.
//!
//! - [`csx600`]: the op-count, bandwidth-curve and double-buffering models of Nishikawa et al.
//! - [`compare`]: predictions against measurements, results against published figures.
//! - [`regression`]: least squares, exact leave-one-out, hold-outs and stepwise selection on
//!   matrices.
//! - [`observations`]: counter models over `observations` tables: normalize steps, one fit per
//!   group, cross-validation with flags (Shimada et al., Oka et al.).
//! - [`mpi`]: simplified-execution prediction of MPI runs per rank, the separate-runs baseline
//!   and the best-configuration search (Chida et al.).

pub mod compare;
pub mod csx600;
pub mod curve;
#[cfg(test)]
mod fixtures;
pub mod mpi;
pub mod observations;
pub mod regression;
pub mod rows;

use arrow_array::{BooleanArray, RecordBatch};
use yosoku_tables::access::{self, AccessError};
use yosoku_tables::{TableDef, TableMismatch};

/// Why a model could not run.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// An input is not the table it should be.
    #[error("input `{role}`: {source}")]
    Input {
        role: &'static str,
        source: TableMismatch,
    },
    /// A column could not be read (a bug if the input was checked; reported, never a panic).
    #[error("input `{role}`: {source}")]
    Access {
        role: &'static str,
        source: AccessError,
    },
    /// The inputs are valid tables but do not fit together (a missing throughput, a missing curve,
    /// counts on the wrong basis, ...).
    #[error("{0}")]
    Invalid(String),
}

impl ModelError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ModelError::Invalid(message.into())
    }
}

/// Checks that `batch`, the input playing `role`, is the table `def`.
pub fn check_input(
    role: &'static str,
    def: &TableDef,
    batch: &RecordBatch,
) -> Result<(), ModelError> {
    def.check(batch)
        .map_err(|source| ModelError::Input { role, source })
}

/// Column access tagged with the input's role, for errors.
pub(crate) struct Input<'a> {
    pub role: &'static str,
    pub batch: &'a RecordBatch,
}

impl<'a> Input<'a> {
    /// Checks `batch` against `def` and wraps it.
    pub fn new(
        role: &'static str,
        def: &TableDef,
        batch: &'a RecordBatch,
    ) -> Result<Self, ModelError> {
        check_input(role, def, batch)?;
        Ok(Self { role, batch })
    }

    fn wrap<T>(&self, r: Result<T, AccessError>) -> Result<T, ModelError> {
        r.map_err(|source| ModelError::Access {
            role: self.role,
            source,
        })
    }

    pub fn utf8(&self, name: &str) -> Result<&'a arrow_array::StringArray, ModelError> {
        self.wrap(access::utf8(self.batch, name))
    }

    pub fn float64(&self, name: &str) -> Result<&'a arrow_array::Float64Array, ModelError> {
        self.wrap(access::float64(self.batch, name))
    }

    pub fn int32(&self, name: &str) -> Result<&'a arrow_array::Int32Array, ModelError> {
        self.wrap(access::int32(self.batch, name))
    }

    pub fn int64(&self, name: &str) -> Result<&'a arrow_array::Int64Array, ModelError> {
        self.wrap(access::int64(self.batch, name))
    }

    pub fn boolean(&self, name: &str) -> Result<&'a arrow_array::BooleanArray, ModelError> {
        self.wrap(access::boolean(self.batch, name))
    }

    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }
}

/// The rows of `batch` whose string column `column` equals `value`.
pub fn filter_eq(
    batch: &RecordBatch,
    column: &str,
    value: &str,
) -> Result<RecordBatch, ModelError> {
    let values = access::utf8(batch, column).map_err(|source| ModelError::Access {
        role: "filter",
        source,
    })?;
    let mask: BooleanArray = values.iter().map(|v| Some(v == Some(value))).collect();
    arrow_select::filter::filter_record_batch(batch, &mask)
        .map_err(|e| ModelError::invalid(format!("filtering on `{column}`: {e}")))
}

/// The distinct values of a string column, in order of first appearance.
pub fn distinct(values: &arrow_array::StringArray) -> Vec<String> {
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
