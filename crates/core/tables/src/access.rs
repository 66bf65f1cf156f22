//! Typed access to the columns of a batch, without panics.

use std::fmt;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch};
use arrow_schema::DataType;

pub use crate::text::Text;

/// A column that is missing or not of the type asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessError {
    pub column: String,
    pub expected: DataType,
    /// The type found, `None` when the column is missing.
    pub found: Option<DataType>,
}

impl fmt::Display for AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.found {
            None => write!(f, "missing column `{}` ({})", self.column, self.expected),
            Some(t) => write!(
                f,
                "column `{}` has type {t}, expected {}",
                self.column, self.expected
            ),
        }
    }
}

impl std::error::Error for AccessError {}

fn column<'a>(
    batch: &'a RecordBatch,
    name: &str,
    expected: DataType,
) -> Result<&'a dyn Array, AccessError> {
    let array = batch.column_by_name(name).ok_or_else(|| AccessError {
        column: name.to_owned(),
        expected: expected.clone(),
        found: None,
    })?;
    if array.data_type() != &expected {
        return Err(AccessError {
            column: name.to_owned(),
            expected,
            found: Some(array.data_type().clone()),
        });
    }
    Ok(array.as_ref())
}

/// A text column, in either of its encodings (plain or dictionary: [`Text`]).
pub fn utf8<'a>(batch: &'a RecordBatch, name: &str) -> Result<Text<'a>, AccessError> {
    let array = batch.column_by_name(name).ok_or_else(|| AccessError {
        column: name.to_owned(),
        expected: DataType::Utf8,
        found: None,
    })?;
    Text::new(array.as_ref()).ok_or_else(|| AccessError {
        column: name.to_owned(),
        expected: DataType::Utf8,
        found: Some(array.data_type().clone()),
    })
}

pub fn float64<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Float64Array, AccessError> {
    Ok(column(batch, name, DataType::Float64)?.as_primitive::<Float64Type>())
}

pub fn int64<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int64Array, AccessError> {
    Ok(column(batch, name, DataType::Int64)?.as_primitive::<Int64Type>())
}

pub fn int32<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a Int32Array, AccessError> {
    Ok(column(batch, name, DataType::Int32)?.as_primitive::<Int32Type>())
}

pub fn boolean<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a BooleanArray, AccessError> {
    Ok(column(batch, name, DataType::Boolean)?.as_boolean())
}

/// The value at `row` of a nullable float column, `None` when null.
pub fn opt_f64(array: &Float64Array, row: usize) -> Option<f64> {
    (!array.is_null(row)).then(|| array.value(row))
}
