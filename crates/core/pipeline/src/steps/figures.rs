//! Summary figures that several step families derive from their output tables.

use arrow_array::RecordBatch;
use yosoku_tables::Figure;
use yosoku_tables::rows::{Input, RowsError, read_predictions};

/// `<program>` or `<program> <variant>`.
pub(crate) fn name_of(program: &str, variant: &str) -> String {
    if variant.is_empty() {
        program.to_owned()
    } else {
        format!("{program} {variant}")
    }
}

/// Column access to a table a step has just built.
pub(crate) fn output(batch: &RecordBatch) -> Input<'_> {
    Input {
        role: "output",
        batch,
    }
}

/// One figure per prediction: `<program> <variant> <phase>: predicted`.
pub(crate) fn prediction_figures(predictions: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    Ok(read_predictions("predictions", predictions)?
        .into_iter()
        .map(|p| {
            Figure::new(
                format!("{} {}: predicted", name_of(&p.program, &p.variant), p.phase),
                p.predicted_secs,
                "s",
            )
        })
        .collect())
}
