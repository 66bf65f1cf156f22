//! What the CSX600 steps share: their defaults, the output of a fitted model and their figures.

use arrow_array::RecordBatch;
use yosoku_models::csx600::{CSX600_PE_COUNT, CSX600_VECTOR_WIDTH, Fitted};
use yosoku_tables::rows::RowsError;
use yosoku_tables::{COST_BREAKDOWN, Figure, PREDICTIONS, col};

use super::super::figures::{name_of, output, prediction_figures};
use super::super::step::StepOutput;

pub(super) fn default_pe_count() -> u32 {
    CSX600_PE_COUNT
}

pub(super) fn default_vector_width() -> u32 {
    CSX600_VECTOR_WIDTH
}

pub(super) fn default_path() -> String {
    "mono_to_poly".to_owned()
}

pub(super) fn fitted(fitted: Fitted) -> Result<StepOutput, RowsError> {
    let figures = prediction_figures(&fitted.predictions)?;
    Ok(StepOutput::new()
        .table(&COST_BREAKDOWN, fitted.cost_breakdown)
        .table(&PREDICTIONS, fitted.predictions)
        .figures(figures))
}

/// Total operations per (program, variant).
pub(super) fn operation_totals(counts: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let counts = output(counts);
    let program = counts.utf8(col::PROGRAM)?;
    let variant = counts.utf8(col::VARIANT)?;
    let count = counts.float64(col::COUNT)?;
    let mut figures: Vec<Figure> = Vec::new();
    for i in 0..counts.rows() {
        let name = format!(
            "{}: operations",
            name_of(program.value(i), variant.value(i))
        );
        match figures.iter_mut().find(|f| f.name == name) {
            Some(f) => f.value += count.value(i),
            None => figures.push(Figure::new(name, count.value(i), "ops")),
        }
    }
    Ok(figures)
}

pub(super) fn balance_figures(balance: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let balance = output(balance);
    let program = balance.utf8(col::PROGRAM)?;
    let variant = balance.utf8(col::VARIANT)?;
    let component = balance.utf8(col::COMPONENT)?;
    let window = balance.float64(col::WINDOW_SECS)?;
    let ops = balance.float64(col::OPS_PER_WINDOW)?;
    let mut figures = Vec::new();
    for i in 0..balance.rows() {
        let who = name_of(program.value(i), variant.value(i));
        if i == 0
            || program.value(i) != program.value(i - 1)
            || variant.value(i) != variant.value(i - 1)
        {
            figures.push(
                Figure::new(format!("{who}: transfer window"), window.value(i), "s").headline(),
            );
        }
        figures.push(
            Figure::new(
                format!("{who}: {} per window", component.value(i)),
                ops.value(i),
                "ops",
            )
            .headline(),
        );
    }
    Ok(figures)
}
