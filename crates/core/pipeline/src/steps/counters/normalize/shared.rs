//! What the counter family's normalize steps share: their one output.

use arrow_array::RecordBatch;
use yosoku_tables::{Figure, OBSERVATIONS};

use crate::steps::step::StepOutput;

/// Every one of these steps produces `<id>.observations`.
pub(super) fn observations_output(batch: RecordBatch, mut figures: Vec<Figure>) -> StepOutput {
    // The number columns beyond the canonical ones (a text column such as `feature_device`
    // labels rows; it is not a feature).
    let features = batch.schema().fields()[OBSERVATIONS.columns.len().min(batch.num_columns())..]
        .iter()
        .filter(|f| f.data_type() == &arrow_schema::DataType::Float64)
        .count();
    figures.insert(0, Figure::new("rows", batch.num_rows() as f64, ""));
    figures.insert(1, Figure::new("feature columns", features as f64, ""));
    StepOutput::new()
        .table(&OBSERVATIONS, batch)
        .figures(figures)
}
