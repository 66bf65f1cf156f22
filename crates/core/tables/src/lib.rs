//! The canonical Arrow tables of yosoku.
//!
//! Every plugin produces these tables and every pipeline stage consumes them. A table is a
//! [`TableDef`]: a name, a sentence of purpose and typed columns. Column names are the constants in
//! [`col`]; units are part of the names (`measured_secs`, `size_bytes`) and of each column's
//! definition. [`TableDef::check`] tells precisely what is wrong with a record batch that claims to
//! be one of these tables.
//!
//! `docs/tables.md` is rendered from these definitions by [`render_markdown`]; a test keeps the two
//! in step (`cargo xtask bless` rewrites the file).
//!
//! Beside the definitions, what the crates that read and write these tables share:
//!
//! - the checker remembers the large columns that passed by identity, so a step that checks its
//!   input again pays nothing;
//! - [`rows`]: `predictions` as rows or built column by column (`PredictionsBuilder`),
//!   `cost_breakdown`, inputs accessed by role; [`report`]: the cells of `report` tables and
//!   their layout; [`Figure`] and [`ScoreRow`]: the headline figures and scoreboard rows of a
//!   manifest;
//! - [`display`]: any column's values as text (the CLI's tables, CSV export, golden files);
//! - [`text`]: text columns in either encoding, plain or dictionary (`Text` to read,
//!   `DictTextBuilder` to build);
//! - [`metrics`]: the canonical metric names and kinds profiler imports map to (the tools'
//!   own names for them stay with the importers);
//! - [`is_valid_name`]: what may name a table or a namespace of tables.
//!
//! This is the leaf every other crate agrees on: it uses no crate of the workspace.

pub mod access;
mod check;
pub mod col;
pub mod csx600;
mod defs;
pub mod display;
mod figure;
mod markdown;
pub mod metrics;
pub mod report;
pub mod rows;
pub mod text;

pub use check::{Problem, TableMismatch};
pub use defs::*;
pub use figure::{Figure, ScoreRow, Verdict};
pub use markdown::render_markdown;

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// Whether `name` may name a table or a namespace of tables: a plugin, a collector, a canonical
/// table, and in a pipeline file a source or a step: lowercase ASCII letters, digits and `_`. No
/// dots: a table reference is `<namespace>.<table>`. (`yosoku-plugin-abi`, which has no Arrow and
/// so no dependency on this crate, states the same rule for plugin descriptors; the host's tests
/// check that the two agree.)
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The Arrow type of a canonical column. Only the few types the tables use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Utf8,
    Int32,
    Int64,
    Float64,
    Boolean,
}

impl ColumnType {
    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::Utf8 => DataType::Utf8,
            ColumnType::Int32 => DataType::Int32,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Boolean => DataType::Boolean,
        }
    }
}

/// A constraint on the values of a column, checked by [`TableDef::check`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueCheck {
    /// No constraint beyond the type.
    Any,
    /// Finite and `> 0`.
    Positive,
    /// Finite and `>= 0`.
    NonNegative,
    /// Finite (no NaN or infinity).
    Finite,
    /// Not NaN; infinity allowed (a back-transformed prediction that overflowed, flagged).
    NotNan,
    /// One of the listed strings.
    OneOf(&'static [&'static str]),
}

/// One column of a canonical table.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDef {
    pub name: &'static str,
    pub ty: ColumnType,
    pub nullable: bool,
    /// The unit of the values (`"s"`, `"bytes"`, `"ops/s"`), `None` for labels and counts of things.
    pub unit: Option<&'static str>,
    pub check: ValueCheck,
    pub doc: &'static str,
}

/// A canonical table: a name, what one row is, and its columns in order.
#[derive(Debug)]
pub struct TableDef {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: &'static [ColumnDef],
}

/// Field metadata key holding a column's unit in every schema built by [`TableDef::schema`].
pub const UNIT_METADATA_KEY: &str = "yosoku.unit";

/// Field metadata key holding the kind (one of [`METRIC_KINDS`]) of a feature column of
/// `observations`.
pub const KIND_METADATA_KEY: &str = "yosoku.kind";

impl TableDef {
    /// The Arrow schema of the table; units are stored in each field's metadata.
    pub fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .map(|c| {
                let field = Field::new(c.name, c.ty.data_type(), c.nullable);
                match c.unit {
                    Some(unit) => {
                        field.with_metadata([(UNIT_METADATA_KEY.to_owned(), unit.to_owned())])
                    }
                    None => field,
                }
            })
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// The schema's fields, to extend (the wide `observations` table adds one per feature).
    pub fn fields(&self) -> Vec<Field> {
        self.schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect()
    }

    pub fn column(&self, name: &str) -> Option<&ColumnDef> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The fields of the table for these columns (in the order of [`TableDef::columns`]), each
    /// with its column's type: a text column comes plain or dictionary-encoded ([`text`]), and
    /// a column of a wrong type is named by [`TableDef::check`] rather than refused unnamed by
    /// Arrow.
    pub fn fields_for(&self, columns: &[ArrayRef]) -> Vec<Field> {
        self.fields()
            .into_iter()
            .zip(columns)
            .map(|(field, column)| field.with_data_type(column.data_type().clone()))
            .collect()
    }

    /// Builds a batch of this table from its columns, in the order of [`TableDef::columns`], and
    /// checks it.
    pub fn batch(&self, columns: Vec<ArrayRef>) -> Result<RecordBatch, TableMismatch> {
        let schema = if columns.len() == self.columns.len() {
            Arc::new(Schema::new(self.fields_for(&columns)))
        } else {
            self.schema()
        };
        let batch = RecordBatch::try_new(schema, columns)
            .map_err(|e| TableMismatch::single(self.name, Problem::Arrow(e.to_string())))?;
        self.check(&batch)?;
        Ok(batch)
    }
}

/// Every canonical table, in the order `docs/tables.md` lists them.
pub const TABLES: &[&TableDef] = &[
    &RUNS,
    &COUNTERS,
    &METRIC_NAMES,
    &OBSERVATIONS,
    &DEVICES,
    &KERNEL_TIMINGS,
    &KERNEL_LAUNCHES,
    &TRACE_RECORDS,
    &TRACE_ALIGNMENT,
    &SPANS,
    &MPI_BLOCKS,
    &MPI_RANKS,
    &CSX600_OP_THROUGHPUTS,
    &CSX600_OP_COUNTS,
    &CSX600_TRANSFER_COUNTS,
    &BANDWIDTH_CURVES,
    &COST_BREAKDOWN,
    &PREDICTIONS,
    &TRANSFER_SCORES,
    &TRANSFER_COEFFICIENTS,
    &SCALING_MODELS,
    &SCALING_POINTS,
    &SCALING_CURVES,
    &MPI_BLOCK_PREDICTIONS,
    &THROUGHPUTS,
    &OVERHEADS,
    &MODEL_COEFFICIENTS,
    &MODEL_SUMMARY,
    &SELECTION_PATH,
    &VALIDATION_SUMMARY,
    &REPORT,
    &REFERENCE_VALUES,
    &REFERENCE_COMPARISON,
    &DOUBLE_BUFFER_BALANCE,
];

/// The canonical table called `name`, if there is one.
pub fn table(name: &str) -> Option<&'static TableDef> {
    TABLES.iter().copied().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for t in TABLES {
            assert!(seen.insert(t.name), "duplicate table {}", t.name);
            let mut cols = std::collections::BTreeSet::new();
            for c in t.columns {
                assert!(
                    cols.insert(c.name),
                    "duplicate column {}.{}",
                    t.name,
                    c.name
                );
                assert!(
                    c.name
                        .chars()
                        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
                    "{}.{} is not snake_case",
                    t.name,
                    c.name
                );
            }
        }
    }

    #[test]
    fn time_columns_carry_their_unit_in_the_name() {
        for t in TABLES {
            for c in t.columns {
                if c.unit == Some("s") {
                    assert!(
                        c.name.ends_with("_secs"),
                        "{}.{} is in seconds",
                        t.name,
                        c.name
                    );
                }
                if c.unit == Some("bytes") {
                    assert!(
                        c.name.ends_with("_bytes"),
                        "{}.{} is in bytes",
                        t.name,
                        c.name
                    );
                }
            }
        }
    }

    #[test]
    #[allow(clippy::disallowed_methods)] // the test keeps a file in the repository in step
    fn docs_tables_md_is_in_step_with_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../docs/tables.md");
        let rendered = render_markdown();
        if std::env::var_os("YOSOKU_BLESS").is_some() {
            std::fs::write(path, &rendered).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == rendered,
            "docs/tables.md is out of date with crates/core/tables: run `cargo xtask bless`"
        );
    }
}
