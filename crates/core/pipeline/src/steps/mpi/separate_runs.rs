//! `mpi_separate_runs`: the earlier method as a baseline, compute and communication from two runs.

use serde::Deserialize;
use yosoku_models::mpi::{self};

use super::shared::{PREDICTION_TABLES, SettingKeys, Settings, prediction_output};
use crate::steps::step::{
    GroupedParams, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, TableRef,
    names,
};

pub(crate) const SEPARATE_RUNS: StepKind = StepKind::grouped::<SeparateRunsParams>(
    "mpi_separate_runs",
    Stage::Fit,
    "the earlier method: compute and communication from separate runs",
);

/// `mpi_separate_runs`: the earlier method as a baseline: compute blocks from one reduced run,
/// communication blocks from a communication-only run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeparateRunsParams {
    /// `mpi_blocks` of the run the compute blocks are taken from.
    pub compute: TableRef,
    /// `mpi_blocks` of the communication-only run.
    pub communication: TableRef,
    pub measured: Option<TableRef>,
}

/// An `mpi_separate_runs` step.
#[derive(Debug)]
pub struct SeparateRuns {
    compute: TableRef,
    communication: TableRef,
    measured: Option<TableRef>,
    settings: Settings,
}

impl GroupedParams for SeparateRunsParams {
    type Group = SettingKeys;
    type Step = SeparateRuns;
    fn into_step(self, keys: SettingKeys) -> Result<SeparateRuns, ParamError> {
        Ok(SeparateRuns {
            settings: Settings::new(keys)?,
            compute: self.compute,
            communication: self.communication,
            measured: self.measured,
        })
    }
}

impl Step for SeparateRuns {
    fn inputs(&self) -> Vec<&TableRef> {
        [
            Some(&self.compute),
            Some(&self.communication),
            self.measured.as_ref(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&PREDICTION_TABLES)
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let p = mpi::separate_runs(
            &self.settings.spec(cx.id),
            cx.input(&self.compute)?,
            cx.input(&self.communication)?,
            cx.optional_input(self.measured.as_ref())?,
        )?;
        Ok(prediction_output(p)?)
    }
}
