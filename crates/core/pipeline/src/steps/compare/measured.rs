//! `compare_measured`: predictions against measured runs.

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::compare::compare_measured;
use yosoku_tables::rows::{RowsError, read_predictions};
use yosoku_tables::{Figure, PREDICTIONS};

use super::super::figures::name_of;
use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const COMPARE_MEASURED: StepKind = StepKind::new::<CompareMeasured>(
    "compare_measured",
    Stage::Validate,
    "predictions against measured runs",
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
