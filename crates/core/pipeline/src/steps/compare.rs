//! The compare family: predictions validated against measurements (`compare_measured`) and
//! results against published figures (`compare_reference`).

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::compare::{compare_measured, compare_reference};
use yosoku_tables::rows::{RowsError, read_predictions};
use yosoku_tables::{
    COST_BREAKDOWN, DOUBLE_BUFFER_BALANCE, Figure, PREDICTIONS, REFERENCE_COMPARISON, TableDef, col,
};

use super::figures::{name_of, output};
use super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names, table_part,
};

pub(crate) const COMPARE_MEASURED: StepKind = StepKind::new::<CompareMeasured>(
    "compare_measured",
    Stage::Validate,
    "predictions against measured runs",
);
pub(crate) const COMPARE_REFERENCE: StepKind = StepKind::new::<CompareReferenceParams>(
    "compare_reference",
    Stage::Validate,
    "computed figures against published ones",
);

/// `compare_measured`: predictions against measured runs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareMeasured {
    pub predictions: TableRef,
    /// A `runs` table.
    pub measured: TableRef,
}

impl StepParams for CompareMeasured {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for CompareMeasured {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.predictions, &self.measured]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let compared = compare_measured(cx.input(&self.predictions)?, cx.input(&self.measured)?)?;
        let figures = measured_figures(&compared)?;
        Ok(StepOutput::new()
            .table(&PREDICTIONS, compared)
            .figures(figures))
    }
}

fn measured_figures(compared: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let rows = read_predictions("predictions", compared)?;
    let mut figures = Vec::new();
    let mut errors = Vec::new();
    for p in &rows {
        let who = format!("{} {}", name_of(&p.program, &p.variant), p.phase);
        // Flags (an illustrative input, a negative time) travel with the figures they qualify.
        let flags = p
            .flags
            .as_ref()
            .map(|f| format!(" [{f}]"))
            .unwrap_or_default();
        figures.push(
            Figure::new(format!("{who}: predicted{flags}"), p.predicted_secs, "s").headline(),
        );
        if let (Some(m), Some(e)) = (p.measured_secs, p.error_pct) {
            figures.push(Figure::new(format!("{who}: measured"), m, "s").headline());
            figures.push(Figure::new(format!("{who}: error{flags}"), e, "%").headline());
            errors.push(e.abs());
        }
    }
    if !errors.is_empty() {
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        figures.push(Figure::new("mean |error|", mean, "%").headline());
    }
    Ok(figures)
}

/// `compare_reference`: computed figures against published ones.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareReferenceParams {
    /// A canonical table the pipeline computed.
    pub computed: TableRef,
    /// A `reference_values` table.
    pub reference: TableRef,
    /// The column that labels the rows of `computed` (default: `component` for
    /// `cost_breakdown` and `double_buffer_balance`, `phase` for `predictions`).
    pub label_column: Option<String>,
}

/// A `compare_reference` step, the computed table's kind and label column known.
#[derive(Debug)]
pub struct CompareReference {
    computed: TableRef,
    reference: TableRef,
    def: &'static TableDef,
    label_column: String,
}

impl StepParams for CompareReferenceParams {
    type Step = CompareReference;
    fn into_step(self) -> Result<CompareReference, ParamError> {
        let table = table_part(&self.computed);
        let Some(def) = yosoku_tables::table(table) else {
            return Err(ParamError::new(
                "computed",
                format!("`computed` must be a canonical table, `{table}` is not one"),
            ));
        };
        let label_column = match self.label_column {
            Some(c) => {
                if def.column(&c).is_none() {
                    return Err(ParamError::new(
                        "label_column",
                        format!(
                            "`{}` has no column `{c}`; its columns: {}",
                            def.name,
                            def.columns
                                .iter()
                                .map(|c| c.name)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                c
            }
            None if [COST_BREAKDOWN.name, DOUBLE_BUFFER_BALANCE.name].contains(&def.name) => {
                col::COMPONENT.to_owned()
            }
            None if def.name == PREDICTIONS.name => col::PHASE.to_owned(),
            None => {
                return Err(ParamError::new(
                    "computed",
                    format!(
                        "name the column that labels the rows of `{}` with `label_column`",
                        def.name
                    ),
                ));
            }
        };
        Ok(CompareReference {
            computed: self.computed,
            reference: self.reference,
            def,
            label_column,
        })
    }
}

impl Step for CompareReference {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.computed, &self.reference]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&REFERENCE_COMPARISON])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let compared = compare_reference(
            cx.id,
            self.def,
            cx.input(&self.computed)?,
            &self.label_column,
            cx.input(&self.reference)?,
        )?;
        let figures = reference_figures(self.def, &compared)?;
        Ok(StepOutput::new()
            .table(&REFERENCE_COMPARISON, compared)
            .figures(figures))
    }
}

/// Per compared figure of a `predictions` table a headline figure with its reference; for other
/// tables the largest difference per column (headline) and each row (not headline).
fn reference_figures(table: &TableDef, compared: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let compared = output(compared);
    let program = compared.utf8(col::PROGRAM)?;
    let variant = compared.utf8(col::VARIANT)?;
    let column = compared.utf8(col::COLUMN_NAME)?;
    let label = compared.utf8(col::LABEL)?;
    let computed = compared.float64(col::COMPUTED)?;
    let reference = compared.float64(col::REFERENCE)?;
    let unit = compared.utf8(col::UNIT)?;
    let mut figures = Vec::new();
    let mut largest: Vec<(String, String, f64)> = Vec::new();
    let mut unmatched = 0usize;
    for i in 0..compared.rows() {
        if yosoku_tables::access::opt_f64(computed, i).is_none() {
            unmatched += 1;
            continue;
        }
        let name = format!(
            "{} {}: {}",
            name_of(program.value(i), variant.value(i)),
            label.value(i),
            column.value(i)
        );
        let figure =
            Figure::new(name, computed.value(i), unit.value(i)).with_reference(reference.value(i));
        let difference = (computed.value(i) - reference.value(i)).abs();
        if table.name == PREDICTIONS.name {
            figures.push(figure.headline());
        } else {
            figures.push(figure);
            match largest.iter_mut().find(|(c, _, _)| c == column.value(i)) {
                Some(entry) => entry.2 = entry.2.max(difference),
                None => largest.push((
                    column.value(i).to_owned(),
                    unit.value(i).to_owned(),
                    difference,
                )),
            }
        }
    }
    for (c, u, d) in largest {
        figures.push(Figure::new(format!("largest |difference| in {c}"), d, &u).headline());
    }
    figures
        .push(Figure::new("references without a computed figure", unmatched as f64, "").headline());
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::super::testing::parse_error;

    #[test]
    fn the_label_column_is_known_when_the_file_is_parsed() {
        let e = parse_error(
            "validate",
            "step = \"compare_reference\"\nid = \"r\"\ncomputed = \"fit.model_summary\"\nreference = \"src.reference_values\"",
        );
        assert_eq!(
            e,
            "p.toml:7:12: key `computed`: name the column that labels the rows of `model_summary` with `label_column`"
        );
        let e = parse_error(
            "validate",
            "step = \"compare_reference\"\nid = \"r\"\ncomputed = \"fit.runs\"\nreference = \"src.reference_values\"\nlabel_column = \"phaze\"",
        );
        assert!(
            e.starts_with(
                "p.toml:9:16: key `label_column`: `runs` has no column `phaze`; its columns: "
            ),
            "{e}"
        );
        let e = parse_error(
            "validate",
            "step = \"compare_reference\"\nid = \"r\"\ncomputed = \"fit.totals\"\nreference = \"src.reference_values\"",
        );
        assert_eq!(
            e,
            "p.toml:7:12: key `computed`: `computed` must be a canonical table, `totals` is not one"
        );
    }
}
