//! `csx600_transfer`: transfer time from bandwidth curves.

use serde::Deserialize;
use yosoku_models::csx600::{self};
use yosoku_tables::{COST_BREAKDOWN, PREDICTIONS};

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::fitted;

pub(crate) const TRANSFER: StepKind = StepKind::new::<Transfer>(
    "csx600_transfer",
    Stage::Fit,
    "transfer time from bandwidth curves (eq. 1-2, Table 5)",
);

/// `csx600_transfer`: transfer time from bandwidth curves (eq. 1-2, Table 5).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// A `bandwidth_curves` table.
    pub curves: TableRef,
    /// A `csx600_transfer_counts` table.
    pub transfers: TableRef,
    pub device: Option<String>,
}

impl StepParams for Transfer {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for Transfer {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.curves, &self.transfers]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&COST_BREAKDOWN, &PREDICTIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let curves = cx.input_on(&self.curves, self.device.as_deref())?;
        let result = csx600::transfer_model(cx.id, &curves, cx.input(&self.transfers)?)?;
        Ok(fitted(result)?)
    }
}
