//! `csx600_double_buffer`: the double-buffering balance.

use serde::Deserialize;
use yosoku_models::csx600::{self};
use yosoku_tables::DOUBLE_BUFFER_BALANCE;

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::{balance_figures, default_path};

pub(crate) const DOUBLE_BUFFER: StepKind = StepKind::new::<DoubleBuffer>(
    "csx600_double_buffer",
    Stage::Fit,
    "the double-buffering match point (eq. 3-4)",
);

/// `csx600_double_buffer`: the double-buffering match point (eq. 3-4).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleBuffer {
    pub throughputs: TableRef,
    /// The op mix: a `csx600_op_counts` table.
    pub counts: TableRef,
    pub curves: TableRef,
    /// S, the heap of one PE in bytes.
    pub heap_bytes: f64,
    #[serde(default = "default_path")]
    pub path: String,
    /// d_i, the sizes of the transfers that fill a buffer concurrently.
    pub transfer_sizes_bytes: Vec<f64>,
    pub device: Option<String>,
}

impl StepParams for DoubleBuffer {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if !(self.heap_bytes.is_finite() && self.heap_bytes > 0.0) {
            return Err(ParamError::new(
                "heap_bytes",
                format!("`heap_bytes` must be > 0, found {}", self.heap_bytes),
            ));
        }
        if self.transfer_sizes_bytes.is_empty() {
            return Err(ParamError::new(
                "transfer_sizes_bytes",
                "`transfer_sizes_bytes` is empty: give the size of each concurrent transfer",
            ));
        }
        if let Some(bad) = self
            .transfer_sizes_bytes
            .iter()
            .find(|d| !(d.is_finite() && **d > 0.0))
        {
            return Err(ParamError::new(
                "transfer_sizes_bytes",
                format!("`transfer_sizes_bytes`: every size must be > 0, found {bad}"),
            ));
        }
        Ok(self)
    }
}

impl Step for DoubleBuffer {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.throughputs, &self.counts, &self.curves]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&DOUBLE_BUFFER_BALANCE])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let params = csx600::DoubleBuffer {
            heap_bytes: self.heap_bytes,
            path: self.path.clone(),
            transfer_sizes_bytes: self.transfer_sizes_bytes.clone(),
        };
        let device = self.device.as_deref();
        let balance = csx600::double_buffer_balance(
            cx.id,
            &cx.input_on(&self.throughputs, device)?,
            cx.input(&self.counts)?,
            &cx.input_on(&self.curves, device)?,
            &params,
        )?;
        let figures = balance_figures(&balance)?;
        Ok(StepOutput::new()
            .table(&DOUBLE_BUFFER_BALANCE, balance)
            .figures(figures))
    }
}
