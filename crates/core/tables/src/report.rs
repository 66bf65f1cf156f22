//! Cells of the `report` table: the tables a step lays out for printing, and their layout as
//! titled grids. The models write them, the CLI and the viewer read them.

use std::sync::Arc;

use arrow_array::{Array, Float64Array, RecordBatch, StringArray};

use crate::access::opt_f64;
use crate::rows::{Input, RowsError, table_error};
use crate::{REPORT, col};

/// The title of a report's grid of what each parameter of a model is (row: the parameter, column
/// `meaning`, text): a `scaling_model` step writes it from its `meanings`, the viewer shows it.
pub const PARAMETER_MEANINGS_TITLE: &str = "Parameters";

/// One cell: a number or a text at (row, column) of a titled table.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportCell {
    pub title: String,
    pub row: String,
    pub column: String,
    pub value: Option<f64>,
    pub text: Option<String>,
    pub unit: String,
}

impl ReportCell {
    pub fn number(
        title: impl Into<String>,
        row: impl Into<String>,
        column: impl Into<String>,
        value: f64,
        unit: &str,
    ) -> Self {
        Self {
            title: title.into(),
            row: row.into(),
            column: column.into(),
            value: (!value.is_nan()).then_some(value),
            text: None,
            unit: unit.to_owned(),
        }
    }

    pub fn text(
        title: impl Into<String>,
        row: impl Into<String>,
        column: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            title: title.into(),
            row: row.into(),
            column: column.into(),
            value: None,
            text: Some(text.into()),
            unit: String::new(),
        }
    }
}

pub fn report_batch(cells: &[ReportCell]) -> Result<RecordBatch, RowsError> {
    let strings = |f: &dyn Fn(&ReportCell) -> &str| -> Arc<dyn Array> {
        Arc::new(StringArray::from_iter_values(cells.iter().map(f)))
    };
    REPORT
        .batch(vec![
            strings(&|c| &c.title),
            strings(&|c| &c.row),
            strings(&|c| &c.column),
            Arc::new(cells.iter().map(|c| c.value).collect::<Float64Array>()),
            Arc::new(
                cells
                    .iter()
                    .map(|c| c.text.as_deref())
                    .collect::<StringArray>(),
            ),
            strings(&|c| &c.unit),
        ])
        .map_err(table_error)
}

/// Reads a `report` table.
pub fn read_report(batch: &RecordBatch) -> Result<Vec<ReportCell>, RowsError> {
    let input = Input::new("report", &REPORT, batch)?;
    let title = input.utf8(col::TITLE)?;
    let row = input.utf8(col::ROW_LABEL)?;
    let column = input.utf8(col::COLUMN_LABEL)?;
    let value = input.float64(col::VALUE)?;
    let text = input.utf8(col::TEXT)?;
    let unit = input.utf8(col::UNIT)?;
    Ok((0..input.rows())
        .map(|i| ReportCell {
            title: title.value(i).to_owned(),
            row: row.value(i).to_owned(),
            column: column.value(i).to_owned(),
            value: opt_f64(value, i),
            text: text.get(i).map(str::to_owned),
            unit: unit.value(i).to_owned(),
        })
        .collect())
}

/// One titled table of cells, laid out: row labels and column labels in order of first
/// appearance, and the cell at each (row, column).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportTable<'a> {
    pub title: &'a str,
    pub rows: Vec<&'a str>,
    pub columns: Vec<&'a str>,
    /// rows x columns.
    pub cells: Vec<Vec<Option<&'a ReportCell>>>,
}

/// The cells grouped into tables, in order of first appearance.
pub fn tables(cells: &[ReportCell]) -> Vec<ReportTable<'_>> {
    let mut out: Vec<ReportTable<'_>> = Vec::new();
    for c in cells {
        let t = match out.iter().position(|t| t.title == c.title) {
            Some(t) => t,
            None => {
                out.push(ReportTable {
                    title: &c.title,
                    rows: Vec::new(),
                    columns: Vec::new(),
                    cells: Vec::new(),
                });
                out.len() - 1
            }
        };
        let table = &mut out[t];
        if !table.rows.contains(&c.row.as_str()) {
            table.rows.push(&c.row);
        }
        if !table.columns.contains(&c.column.as_str()) {
            table.columns.push(&c.column);
        }
    }
    for table in &mut out {
        // A matrix over one set of labels (GPU x GPU): columns in the order of the rows.
        let rows = table.rows.clone();
        table
            .columns
            .sort_by_key(|c| rows.iter().position(|r| r == c).unwrap_or(usize::MAX));
        table.cells = vec![vec![None; table.columns.len()]; table.rows.len()];
    }
    for c in cells {
        let table = out
            .iter_mut()
            .find(|t| t.title == c.title)
            .expect("made above");
        let r = table.rows.iter().position(|x| *x == c.row).expect("row");
        let k = table
            .columns
            .iter()
            .position(|x| *x == c.column)
            .expect("column");
        table.cells[r][k] = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_round_trip_and_lay_out_as_tables() {
        let cells = vec![
            ReportCell::number("t", "k40", "loo", 1.5, "%"),
            ReportCell::number("t", "p100", "loo", 2.5, "%"),
            ReportCell::number("t", "paper", "loo", 4.6, "%"),
            ReportCell::text("u", "a", "selected", "inst, gst"),
        ];
        let back = read_report(&report_batch(&cells).unwrap()).unwrap();
        assert_eq!(back, cells);
        let laid = tables(&back);
        assert_eq!(laid.len(), 2);
        assert_eq!(laid[0].rows, ["k40", "p100", "paper"]);
        assert_eq!(laid[0].cells[2][0].unwrap().value, Some(4.6));
        assert_eq!(
            laid[1].cells[0][0].unwrap().text.as_deref(),
            Some("inst, gst")
        );
    }
}
