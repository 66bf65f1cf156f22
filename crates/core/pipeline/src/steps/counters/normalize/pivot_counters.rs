//! `pivot_counters`: long `counters` and `runs` to `observations`, one column per metric.

use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::OBSERVATIONS;

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

use super::shared::observations_output;

pub(crate) const PIVOT_COUNTERS: StepKind = StepKind::new::<PivotCounters>(
    "pivot_counters",
    Stage::Normalize,
    "long `counters` and `runs` to `observations`, one column per metric",
);

/// `pivot_counters`: long `counters` and `runs` to `observations` (one column per metric).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PivotCounters {
    pub runs: TableRef,
    pub counters: TableRef,
    /// Only these metrics (default: all).
    pub metrics: Option<Vec<String>>,
}

impl StepParams for PivotCounters {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.metrics.as_ref().is_some_and(Vec::is_empty) {
            return Err(ParamError::new(
                "metrics",
                "`metrics` is empty: leave it out to keep every metric",
            ));
        }
        Ok(self)
    }
}

impl Step for PivotCounters {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.runs, &self.counters]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = normalize::pivot_counters(
            cx.input(&self.runs)?,
            cx.input(&self.counters)?,
            self.metrics.as_deref(),
        )?;
        Ok(observations_output(batch, vec![]))
    }
}
