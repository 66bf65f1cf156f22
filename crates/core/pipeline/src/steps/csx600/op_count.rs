//! `csx600_op_count`: compute time from op counts and throughputs.

use serde::Deserialize;
use yosoku_models::csx600::{self};
use yosoku_tables::{COST_BREAKDOWN, PREDICTIONS};

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::fitted;

pub(crate) const OP_COUNT: StepKind = StepKind::new::<OpCount>(
    "csx600_op_count",
    Stage::Fit,
    "compute time = operations / throughput (Nishikawa et al., Table 4)",
);

/// `csx600_op_count`: compute time = operations / throughput (Table 4).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCount {
    /// A `csx600_op_throughputs` table.
    pub throughputs: TableRef,
    /// A `csx600_op_counts` table in chip-wide operations.
    pub counts: TableRef,
    /// Which device's throughputs to use, when the table has several.
    pub device: Option<String>,
}

impl StepParams for OpCount {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for OpCount {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.throughputs, &self.counts]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&COST_BREAKDOWN, &PREDICTIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let rates = cx.input_on(&self.throughputs, self.device.as_deref())?;
        let result = csx600::op_count_model(cx.id, &rates, cx.input(&self.counts)?)?;
        Ok(fitted(result)?)
    }
}
