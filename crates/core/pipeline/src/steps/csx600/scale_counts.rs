//! `scale_counts`: operation counts scaled to the chip.

use serde::Deserialize;
use yosoku_models::csx600::{self};
use yosoku_tables::CSX600_OP_COUNTS;

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::{default_pe_count, default_vector_width, operation_totals};

pub(crate) const SCALE_COUNTS: StepKind = StepKind::new::<ScaleCounts>(
    "csx600_scale_counts",
    Stage::Normalize,
    "issued instruction counts to chip-wide operations",
);

/// `csx600_scale_counts`: issued instruction counts to chip-wide operations (x PEs for poly,
/// x vector width for vector instructions).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleCounts {
    /// A `csx600_op_counts` table.
    pub counts: TableRef,
    #[serde(default = "default_pe_count")]
    pub pe_count: u32,
    #[serde(default = "default_vector_width")]
    pub vector_width: u32,
}

impl StepParams for ScaleCounts {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        for (key, value) in [
            ("pe_count", self.pe_count),
            ("vector_width", self.vector_width),
        ] {
            if value == 0 {
                return Err(ParamError::new(key, format!("`{key}` must be at least 1")));
            }
        }
        Ok(self)
    }
}

impl Step for ScaleCounts {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.counts]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&CSX600_OP_COUNTS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let scaled =
            csx600::scale_counts(cx.input(&self.counts)?, self.pe_count, self.vector_width)?;
        let figures = operation_totals(&scaled)?;
        Ok(StepOutput::new()
            .table(&CSX600_OP_COUNTS, scaled)
            .figures(figures))
    }
}
