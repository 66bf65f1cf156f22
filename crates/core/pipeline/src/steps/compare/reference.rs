//! `compare_reference`: computed figures against published ones.

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::compare::compare_reference;
use yosoku_tables::rows::RowsError;
use yosoku_tables::{
    COST_BREAKDOWN, DOUBLE_BUFFER_BALANCE, Figure, PREDICTIONS, REFERENCE_COMPARISON, TableDef, col,
};

use super::super::figures::{name_of, output};
use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names, table_part,
};

pub(crate) const COMPARE_REFERENCE: StepKind = StepKind::new::<CompareReferenceParams>(
    "compare_reference",
    Stage::Validate,
    "computed figures against published ones",
);

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
