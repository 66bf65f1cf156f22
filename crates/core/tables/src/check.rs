//! Checking a record batch against a canonical table.

use std::fmt;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};

use crate::{ColumnDef, ColumnType, TableDef, ValueCheck};

/// How many offending rows one problem names before it summarises the rest.
const MAX_ROWS_NAMED: usize = 5;

/// One thing wrong with a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    MissingColumn {
        column: &'static str,
        expected: ColumnType,
    },
    WrongType {
        column: &'static str,
        expected: ColumnType,
        found: String,
    },
    UnexpectedNulls {
        column: &'static str,
        rows: Vec<usize>,
        total: usize,
    },
    BadValue {
        column: &'static str,
        row: usize,
        value: String,
        expected: String,
        /// How many rows of this column fail the same check, this one included.
        total: usize,
    },
    /// Arrow refused to build the batch at all.
    Arrow(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::MissingColumn { column, expected } => {
                write!(f, "missing column `{column}` (expected {expected:?})")
            }
            Problem::WrongType {
                column,
                expected,
                found,
            } => write!(
                f,
                "column `{column}` has type {found}, expected {expected:?}"
            ),
            Problem::UnexpectedNulls {
                column,
                rows,
                total,
            } => {
                write!(f, "column `{column}` has {total} null(s) at row(s) ")?;
                write_rows(f, rows, *total)?;
                write!(f, ", expected none")
            }
            Problem::BadValue {
                column,
                row,
                value,
                expected,
                total,
            } => {
                write!(
                    f,
                    "column `{column}`, row {row}: found {value}, expected {expected}"
                )?;
                if *total > 1 {
                    write!(f, " ({} more row(s) like it)", total - 1)?;
                }
                Ok(())
            }
            Problem::Arrow(message) => write!(f, "invalid Arrow data: {message}"),
        }
    }
}

fn write_rows(f: &mut fmt::Formatter<'_>, rows: &[usize], total: usize) -> fmt::Result {
    let listed: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    write!(f, "{}", listed.join(", "))?;
    if total > rows.len() {
        write!(f, ", ...")?;
    }
    Ok(())
}

/// Everything wrong with a batch that claims to be the table `table`. Rows are 0-based.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMismatch {
    pub table: &'static str,
    pub problems: Vec<Problem>,
}

impl TableMismatch {
    pub(crate) fn single(table: &'static str, problem: Problem) -> Self {
        Self {
            table,
            problems: vec![problem],
        }
    }
}

impl fmt::Display for TableMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a valid `{}` table: ", self.table)?;
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TableMismatch {}

impl TableDef {
    /// Checks that `batch` holds this table: every column present with its type, no nulls where
    /// none are allowed, every value within its column's constraint. Extra columns are allowed
    /// and left alone. Reports every problem, not just the first.
    pub fn check(&self, batch: &RecordBatch) -> Result<(), TableMismatch> {
        let schema = batch.schema();
        let mut problems = Vec::new();
        for def in self.columns {
            let Ok(index) = schema.index_of(def.name) else {
                problems.push(Problem::MissingColumn {
                    column: def.name,
                    expected: def.ty,
                });
                continue;
            };
            let array = batch.column(index);
            let type_ok = match def.ty {
                ColumnType::Utf8 => crate::text::is_text_type(array.data_type()),
                ty => array.data_type() == &ty.data_type(),
            };
            if !type_ok {
                problems.push(Problem::WrongType {
                    column: def.name,
                    expected: def.ty,
                    found: array.data_type().to_string(),
                });
                continue;
            }
            if passed_before(def, array) {
                continue;
            }
            let problems_before = problems.len();
            if !def.nullable && array.null_count() > 0 {
                let rows: Vec<usize> = (0..array.len())
                    .filter(|&i| array.is_null(i))
                    .take(MAX_ROWS_NAMED)
                    .collect();
                problems.push(Problem::UnexpectedNulls {
                    column: def.name,
                    rows,
                    total: array.null_count(),
                });
            }
            if let Some(p) = check_values(def, array.as_ref()) {
                problems.push(p);
            }
            if problems.len() == problems_before {
                remember_passed(def, array);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(TableMismatch {
                table: self.name,
                problems,
            })
        }
    }
}

/// Columns at least this long that passed a column's checks are remembered: a pipeline's steps
/// check their inputs again, and the MPI blocks of a full run (a million rows) were checked by
/// every step that read them.
const REMEMBERED_MIN_ROWS: usize = 4096;
const REMEMBERED_COLUMNS: usize = 64;

/// Columns that passed the checks of a column definition (its address: definitions are
/// statics), by identity. An array is immutable, and a `Weak` keeps its allocation's address
/// from being reused while it is remembered, so a pointer match is the same array.
static PASSED: std::sync::Mutex<Vec<(usize, std::sync::Weak<dyn Array>)>> =
    std::sync::Mutex::new(Vec::new());

fn passed_before(def: &ColumnDef, array: &ArrayRef) -> bool {
    if array.len() < REMEMBERED_MIN_ROWS {
        return false;
    }
    let key = std::ptr::from_ref(def) as usize;
    let weak = std::sync::Arc::downgrade(array);
    PASSED
        .lock()
        .is_ok_and(|passed| passed.iter().any(|(d, w)| *d == key && w.ptr_eq(&weak)))
}

fn remember_passed(def: &ColumnDef, array: &ArrayRef) {
    if array.len() < REMEMBERED_MIN_ROWS {
        return;
    }
    if let Ok(mut passed) = PASSED.lock() {
        passed.retain(|(_, w)| w.strong_count() > 0);
        if passed.len() >= REMEMBERED_COLUMNS {
            passed.remove(0);
        }
        passed.push((
            std::ptr::from_ref(def) as usize,
            std::sync::Arc::downgrade(array),
        ));
    }
}

/// The first value of `array` that breaks `def.check`, with how many do.
fn check_values(def: &ColumnDef, array: &dyn Array) -> Option<Problem> {
    let expected = match def.check {
        ValueCheck::Any => return None,
        ValueCheck::Positive => "a finite number > 0".to_owned(),
        ValueCheck::NonNegative => "a finite number >= 0".to_owned(),
        ValueCheck::Finite => "a finite number".to_owned(),
        ValueCheck::NotNan => "a number (not NaN)".to_owned(),
        ValueCheck::OneOf(allowed) => format!("one of {}", allowed.join(", ")),
    };
    let mut first: Option<(usize, String)> = None;
    let mut total = 0usize;
    let mut note = |row: usize, value: String| {
        total += 1;
        first.get_or_insert((row, value));
    };
    match (def.ty, def.check) {
        (ColumnType::Utf8, ValueCheck::OneOf(allowed)) => {
            let text = crate::text::Text::new(array).expect("checked: a text column");
            // A dictionary's distinct texts are checked once; its rows only when one of them is
            // not allowed (a million rows of a few texts each).
            if let crate::text::Text::Dictionary { values, .. } = text
                && (0..values.len()).all(|v| allowed.contains(&values.value(v)))
            {
                return None;
            }
            for (row, v) in text.iter().enumerate() {
                if let Some(v) = v
                    && !allowed.contains(&v)
                {
                    note(row, format!("{v:?}"));
                }
            }
        }
        (ColumnType::Float64, check) => {
            let values = array.as_primitive::<Float64Type>();
            if all_ok(values.values(), |v| number_ok(v, check)) {
                return None;
            }
            for (row, v) in values.iter().enumerate() {
                if let Some(v) = v
                    && !number_ok(v, check)
                {
                    note(row, v.to_string());
                }
            }
        }
        (ColumnType::Int64, check) => {
            let values = array.as_primitive::<Int64Type>();
            if all_ok(values.values(), |v| number_ok(v as f64, check)) {
                return None;
            }
            for (row, v) in values.iter().enumerate() {
                if let Some(v) = v
                    && !number_ok(v as f64, check)
                {
                    note(row, v.to_string());
                }
            }
        }
        (ColumnType::Int32, check) => {
            let values = array.as_primitive::<Int32Type>();
            if all_ok(values.values(), |v| number_ok(f64::from(v), check)) {
                return None;
            }
            for (row, v) in values.iter().enumerate() {
                if let Some(v) = v
                    && !number_ok(f64::from(v), check)
                {
                    note(row, v.to_string());
                }
            }
        }
        _ => return None,
    }
    first.map(|(row, value)| Problem::BadValue {
        column: def.name,
        row,
        value,
        expected,
        total,
    })
}

/// Whether every value passes `ok`, null slots included (what they hold is arbitrary, so a
/// failure sends the caller to its row-by-row check): the common case, a column that passes,
/// in a pass that vectorises instead of one that reads each row's validity.
fn all_ok<T: Copy>(values: &[T], ok: impl Fn(T) -> bool) -> bool {
    values
        .chunks(64)
        .all(|chunk| chunk.iter().fold(true, |all, &v| all & ok(v)))
}

fn number_ok(v: f64, check: ValueCheck) -> bool {
    match check {
        ValueCheck::Positive => v.is_finite() && v > 0.0,
        ValueCheck::NonNegative => v.is_finite() && v >= 0.0,
        ValueCheck::Finite => v.is_finite(),
        ValueCheck::NotNan => !v.is_nan(),
        ValueCheck::Any | ValueCheck::OneOf(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use crate::{BANDWIDTH_CURVES, CSX600_OP_THROUGHPUTS, col};

    use super::*;

    fn strings(values: &[Option<&str>]) -> ArrayRef {
        Arc::new(StringArray::from(values.to_vec()))
    }

    fn throughputs(rates: &[f64], units: &[&str]) -> Vec<ArrayRef> {
        let n = rates.len();
        vec![
            strings(&vec![Some("CSX600"); n]),
            strings(&units.iter().map(|u| Some(*u)).collect::<Vec<_>>()),
            Arc::new(BooleanArray::from(vec![false; n])),
            strings(&vec![Some("double"); n]),
            strings(&vec![Some("add"); n]),
            strings(&vec![None; n]),
            Arc::new(Float64Array::from(rates.to_vec())),
            Arc::new(Int64Array::from(vec![Some(256); n])),
        ]
    }

    #[test]
    fn a_valid_batch_passes() {
        let batch = CSX600_OP_THROUGHPUTS
            .batch(throughputs(&[1.393e9, 1.383e9], &["poly", "mono"]))
            .unwrap();
        assert_eq!(batch.num_rows(), 2);
    }

    /// A large column that passed is not checked again, but only that very array: a new one of
    /// the same shape with a bad value is still refused, and an array dropped and replaced at the
    /// same length is checked afresh.
    #[test]
    fn a_column_that_passed_is_remembered_by_identity_only() {
        let n = REMEMBERED_MIN_ROWS;
        let good = throughputs(&vec![1.0e9; n], &vec!["poly"; n]);
        let batch = CSX600_OP_THROUGHPUTS.batch(good).unwrap();
        let rate_def = CSX600_OP_THROUGHPUTS
            .columns
            .iter()
            .find(|c| c.name == col::THROUGHPUT_OPS_PER_SEC)
            .unwrap();
        let rates = batch.column_by_name(col::THROUGHPUT_OPS_PER_SEC).unwrap();
        assert!(passed_before(rate_def, rates));
        assert!(CSX600_OP_THROUGHPUTS.check(&batch).is_ok());
        let mut bad_rates = vec![1.0e9; n];
        bad_rates[n - 1] = -1.0;
        drop(batch);
        let err = CSX600_OP_THROUGHPUTS
            .batch(throughputs(&bad_rates, &vec!["poly"; n]))
            .unwrap_err();
        assert!(err.to_string().contains(&format!("row {}", n - 1)), "{err}");
    }

    /// A text column may be dictionary-encoded with Int32 keys: checked like a plain one (a
    /// value outside `OneOf` named with its row); other key types are a wrong type.
    #[test]
    fn dictionary_text_columns_are_checked_like_plain_ones() {
        let dictionary = |units: &[&str]| -> ArrayRef {
            let mut b = crate::text::DictTextBuilder::default();
            for u in units {
                b.append_value(u);
            }
            b.finish()
        };
        let mut columns = throughputs(&[1.0, 2.0], &["poly", "mono"]);
        columns[1] = dictionary(&["poly", "mono"]);
        assert!(CSX600_OP_THROUGHPUTS.batch(columns).is_ok());
        let mut columns = throughputs(&[1.0, 2.0], &["poly", "mono"]);
        columns[1] = dictionary(&["poly", "gpu"]);
        let text = CSX600_OP_THROUGHPUTS
            .batch(columns)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("column `exec_unit`, row 1: found \"gpu\", expected one of mono, poly"),
            "{text}"
        );
        // A text of the dictionary that no row uses is not a row's value.
        let mut columns = throughputs(&[1.0, 2.0], &["poly", "mono"]);
        columns[1] = Arc::new(
            arrow_array::DictionaryArray::<arrow_array::types::Int32Type>::try_new(
                arrow_array::Int32Array::from(vec![0, 2]),
                Arc::new(StringArray::from(vec!["poly", "gpu", "mono"])),
            )
            .unwrap(),
        );
        assert!(CSX600_OP_THROUGHPUTS.batch(columns).is_ok());
        // Keys of 8 bits are one of the encodings; of 64 bits not.
        let mut columns = throughputs(&[1.0, 2.0], &["poly", "mono"]);
        let int8: arrow_array::DictionaryArray<arrow_array::types::Int8Type> =
            vec!["poly", "mono"].into_iter().collect();
        columns[1] = Arc::new(int8);
        assert!(CSX600_OP_THROUGHPUTS.batch(columns).is_ok());
        let mut columns = throughputs(&[1.0, 2.0], &["poly", "mono"]);
        let int64: arrow_array::DictionaryArray<arrow_array::types::Int64Type> =
            vec!["poly", "mono"].into_iter().collect();
        columns[1] = Arc::new(int64);
        let text = CSX600_OP_THROUGHPUTS
            .batch(columns)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("exec_unit") && text.contains("Int64"),
            "{text}"
        );
    }

    #[test]
    fn bad_values_name_column_row_and_expectation() {
        let err = CSX600_OP_THROUGHPUTS
            .batch(throughputs(&[1.0, -2.0, 0.0], &["poly", "gpu", "mono"]))
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("column `exec_unit`, row 1: found \"gpu\", expected one of mono, poly"),
            "{text}"
        );
        assert!(
            text.contains(
                "column `throughput_ops_per_sec`, row 1: found -2, expected a finite number > 0 (1 more row(s) like it)"
            ),
            "{text}"
        );
    }

    /// A null slot's value (0 here, not a time > 0) is no row's value; the first bad row is
    /// still found after the fast scan of all values fails.
    #[test]
    fn null_slots_are_not_values_and_bad_rows_are_found_past_them() {
        let predictions = |measured: &[Option<f64>]| {
            let mut b = crate::rows::PredictionsBuilder::with_capacity(measured.len());
            for &m in measured {
                b.append(&crate::rows::Prediction {
                    model: "m",
                    device: "d",
                    program: "p",
                    variant: "v",
                    phase: "kernel",
                    repetitions: 1,
                    predicted_secs: 1.0,
                    measured_secs: m,
                    error_pct: None,
                    flags: None,
                    run_id: None,
                    model_group: None,
                    validation: None,
                    held_out: None,
                    interval_secs: None,
                });
            }
            b.finish()
        };
        assert!(predictions(&[Some(1.0), None, Some(2.0)]).is_ok());
        let text = predictions(&[Some(1.0), None, Some(0.0), Some(-1.0)])
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("column `measured_secs`, row 2: found 0, expected a finite number > 0 (1 more row(s) like it)"),
            "{text}"
        );
    }

    #[test]
    fn missing_columns_wrong_types_and_nulls_are_all_reported() {
        let schema = Arc::new(Schema::new(vec![
            Field::new(col::DEVICE, DataType::Utf8, true),
            Field::new(col::PATH, DataType::Utf8, false),
            Field::new(col::SIZE_BYTES, DataType::Float64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                strings(&[Some("CSX600"), None]),
                strings(&[Some("swazzle"), Some("swazzle")]),
                Arc::new(Float64Array::from(vec![8.0, 16.0])),
            ],
        )
        .unwrap();
        let err = BANDWIDTH_CURVES.check(&batch).unwrap_err();
        assert_eq!(err.table, "bandwidth_curves");
        let text = err.to_string();
        for expected in [
            "column `device` has 1 null(s) at row(s) 1, expected none",
            "column `size_bytes` has type Float64, expected Int64",
            "missing column `bandwidth_bytes_per_sec` (expected Float64)",
            "missing column `provenance` (expected Utf8)",
        ] {
            assert!(text.contains(expected), "{text}\nlacks: {expected}");
        }
    }
}
