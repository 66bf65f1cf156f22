//! `aggregate`: means over the rows that agree on `by`.

use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::{Figure, OBSERVATIONS};

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

use super::shared::observations_output;

pub(crate) const AGGREGATE: StepKind = StepKind::new::<Aggregate>(
    "aggregate",
    Stage::Normalize,
    "means over the rows that agree on `by`",
);

/// `aggregate`: means over rows that agree on `by`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aggregate {
    pub input: TableRef,
    pub by: Vec<String>,
}

impl StepParams for Aggregate {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.by.is_empty() {
            return Err(ParamError::new(
                "by",
                "`by` is empty: name the columns whose equal values are averaged together",
            ));
        }
        Ok(self)
    }
}

impl Step for Aggregate {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let input = cx.input(&self.input)?;
        let batch = normalize::aggregate(input, &self.by)?;
        let figures = vec![Figure::new("rows before", input.num_rows() as f64, "")];
        Ok(observations_output(batch, figures))
    }
}
