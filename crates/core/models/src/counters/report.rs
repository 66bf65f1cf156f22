//! Laying out what a step prints: matrices of a statistic and published figures beside the
//! computed ones, as cells of the `report` table (whose codec is `yosoku_tables::report`).

use yosoku_tables::report::ReportCell;

use crate::ModelError;

/// Lay a statistic out as a matrix: rows labelled by one grouping column, columns by another.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub rows: String,
    pub columns: String,
}

impl Matrix {
    /// The positions of the two columns among `group_by`.
    pub fn positions(&self, group_by: &[String]) -> Result<(usize, usize), ModelError> {
        let find = |c: &str| {
            group_by.iter().position(|g| g == c).ok_or_else(|| {
                ModelError::invalid(format!(
                    "matrix: `{c}` is not one of the model's `group_by` columns ({})",
                    if group_by.is_empty() {
                        "none".to_owned()
                    } else {
                        group_by.join(", ")
                    }
                ))
            })
        };
        Ok((find(&self.rows)?, find(&self.columns)?))
    }
}

/// Column of the published figures that name no column of the table.
pub const PUBLISHED_COLUMN: &str = "published";

/// A published figure to print beside the computed ones, in the step's first table: in one of
/// its columns, or (`column: None`) in a column of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    pub row: String,
    pub column: Option<String>,
    pub value: Option<f64>,
    pub text: Option<String>,
}

/// Adds `published` cells to the first table of `cells`; a column the table lacks is an error.
pub fn add_published(
    cells: &mut Vec<ReportCell>,
    published: &[Published],
) -> Result<(), ModelError> {
    let Some(first) = cells.first() else {
        return Ok(());
    };
    let title = first.title.clone();
    let mut columns: Vec<&str> = Vec::new();
    for c in cells.iter().filter(|c| c.title == title) {
        if !columns.contains(&c.column.as_str()) {
            columns.push(&c.column);
        }
    }
    let mut extra = Vec::new();
    for p in published {
        let column = p.column.as_deref().unwrap_or(PUBLISHED_COLUMN);
        if p.column.is_some() && !columns.contains(&column) {
            return Err(ModelError::invalid(format!(
                "published figure `{}`: table `{title}` has no column `{column}`; its columns: {} (leave `column` out to print it in a column of its own)",
                p.row,
                columns.join(", ")
            )));
        }
        let unit = cells
            .iter()
            .find(|c| c.title == title && (c.column == column || p.column.is_none()))
            .map(|c| c.unit.clone())
            .unwrap_or_default();
        extra.push(ReportCell {
            title: title.clone(),
            row: p.row.clone(),
            column: column.to_owned(),
            value: p.value,
            text: p.text.clone(),
            unit,
        });
    }
    cells.extend(extra);
    Ok(())
}

#[cfg(test)]
mod tests {
    use yosoku_tables::report::{read_report, report_batch, tables};

    use super::*;

    #[test]
    fn published_figures_join_the_first_table_in_its_unit() {
        let mut cells = vec![
            ReportCell::number("t", "k40", "loo", 1.5, "%"),
            ReportCell::number("t", "p100", "loo", 2.5, "%"),
            ReportCell::text("u", "a", "selected", "inst, gst"),
        ];
        add_published(
            &mut cells,
            &[Published {
                row: "paper".into(),
                column: Some("loo".into()),
                value: Some(4.6),
                text: None,
            }],
        )
        .unwrap();
        let back = read_report(&report_batch(&cells).unwrap()).unwrap();
        assert_eq!(back, cells);
        let laid = tables(&back);
        assert_eq!(laid.len(), 2);
        assert_eq!(laid[0].rows, ["k40", "p100", "paper"]);
        assert_eq!(laid[0].cells[2][0].unwrap().value, Some(4.6));
        assert_eq!(laid[0].cells[2][0].unwrap().unit, "%");
        let e = add_published(
            &mut cells,
            &[Published {
                row: "paper".into(),
                column: Some("lopo".into()),
                value: None,
                text: Some("x".into()),
            }],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no column `lopo`") && e.contains("loo"), "{e}");
    }
}
