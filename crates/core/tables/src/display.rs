//! Values of Arrow arrays as text, for printing tables and writing CSV: the types bundles hold
//! (strings, integers, floats, booleans, string dictionaries), without arrow-cast's formatting
//! machinery (which, with the arrow-ord kernels it pulls in, was a quarter of the CPU time of
//! building the CLI).

use arrow_array::cast::AsArray as _;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

/// Row `row` of `array` as text; a null is `null_text`. Floats are written as the shortest text
/// that reads back as the same number (`0.0026`, `3.0`, `1e-20`); a type this module does not
/// write is named in angle brackets (`<List(Int64)>`).
pub fn cell(array: &dyn Array, row: usize, null_text: &str) -> String {
    if array.is_null(row) {
        return null_text.to_owned();
    }
    macro_rules! int {
        ($t:ty) => {
            array.as_primitive::<$t>().value(row).to_string()
        };
    }
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row).to_owned(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(row).to_owned(),
        DataType::Utf8View => array.as_string_view().value(row).to_owned(),
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        DataType::Float64 => format!("{:?}", array.as_primitive::<Float64Type>().value(row)),
        DataType::Float32 => format!("{:?}", array.as_primitive::<Float32Type>().value(row)),
        DataType::Dictionary(_, _) => match crate::text::dictionary_row(array, row) {
            Some((values, index)) => cell(values.as_ref(), index, null_text),
            None => format!("<{}>", array.data_type()),
        },
        other => format!("<{other}>"),
    }
}

/// The first rows of `batch` as a boxed text table (`+---+` borders, a header row).
pub fn pretty(batch: &RecordBatch) -> String {
    let schema = batch.schema();
    let mut grid: Vec<Vec<String>> =
        vec![schema.fields().iter().map(|f| f.name().clone()).collect()];
    for r in 0..batch.num_rows() {
        grid.push(
            batch
                .columns()
                .iter()
                .map(|c| cell(c.as_ref(), r, ""))
                .collect(),
        );
    }
    let widths: Vec<usize> = (0..grid[0].len())
        .map(|k| grid.iter().map(|l| l[k].chars().count()).max().unwrap_or(0))
        .collect();
    let rule: String = widths.iter().fold(String::from("+"), |mut s, w| {
        s.push_str(&"-".repeat(w + 2));
        s.push('+');
        s
    });
    let line = |cells: &[String]| -> String {
        let mut s = String::from("|");
        for (c, w) in cells.iter().zip(&widths) {
            let pad = w - c.chars().count();
            s.push(' ');
            s.push_str(c);
            s.push_str(&" ".repeat(pad + 1));
            s.push('|');
        }
        s
    };
    let mut out = vec![rule.clone(), line(&grid[0]), rule.clone()];
    out.extend(grid[1..].iter().map(|l| line(l)));
    out.push(rule);
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, DictionaryArray, Float64Array, Int64Array, StringArray};

    use super::*;

    #[test]
    fn cells_read_back_as_the_same_values() {
        let f = Float64Array::from(vec![Some(0.0026), Some(3.0), Some(1e-20), None]);
        let texts: Vec<String> = (0..4).map(|r| cell(&f, r, "")).collect();
        assert_eq!(texts, ["0.0026", "3.0", "1e-20", ""]);
        let d: DictionaryArray<arrow_array::types::Int32Type> =
            vec!["a", "b", "a"].into_iter().collect();
        assert_eq!(cell(&d, 2, ""), "a");
        let d8: DictionaryArray<arrow_array::types::Int8Type> =
            vec!["p", "q", "q"].into_iter().collect();
        assert_eq!(cell(&d8, 1, ""), "q", "any dictionary, one row's key");
        let batch = RecordBatch::try_from_iter(vec![
            ("n", Arc::new(Int64Array::from(vec![1, 22])) as ArrayRef),
            (
                "name",
                Arc::new(StringArray::from(vec!["x", "yz"])) as ArrayRef,
            ),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            pretty(&batch),
            "+----+------+\n| n  | name |\n+----+------+\n| 1  | x    |\n| 22 | yz   |\n+----+------+"
        );
    }
}
