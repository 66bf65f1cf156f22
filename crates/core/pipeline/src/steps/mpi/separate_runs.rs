//! `mpi_separate_runs`: the earlier method as a baseline, compute and communication from two runs.

use serde::Deserialize;
use yosoku_models::mpi::{self};

use super::shared::{PREDICTION_TABLES, SettingKeys, Settings, TrendParam, prediction_output};
use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const SEPARATE_RUNS: StepKind = StepKind::new::<SeparateRunsParams>(
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
    /// Main-loop iterations of the run to predict (or give the steps).
    pub full_iterations: Option<u64>,
    /// Steps (time steps, SCF cycles, ...: the program's own units) of the reduced run.
    pub reduced_steps: Option<u64>,
    /// Steps of the run to predict.
    pub full_steps: Option<u64>,
    /// Warm-up iterations to exclude; without it, found by a change-point test.
    pub warmup_iterations: Option<usize>,
    /// The older threshold method instead: leading iterations further than this fraction from
    /// the steady time are warm-up.
    pub warmup_tolerance: Option<f64>,
    /// `flag` (default) or `linear`: a drifting per-iteration cost is flagged, or extrapolated.
    pub trend: Option<TrendParam>,
    /// The paper's figure for this setting, printed beside ours.
    pub published: Option<String>,
}

/// An `mpi_separate_runs` step.
#[derive(Debug)]
pub struct SeparateRuns {
    compute: TableRef,
    communication: TableRef,
    measured: Option<TableRef>,
    settings: Settings,
}

impl StepParams for SeparateRunsParams {
    type Step = SeparateRuns;
    fn into_step(self) -> Result<SeparateRuns, ParamError> {
        Ok(SeparateRuns {
            settings: Settings::new(SettingKeys::of(
                self.full_iterations,
                (self.reduced_steps, self.full_steps),
                self.warmup_iterations,
                self.warmup_tolerance,
                self.trend,
                self.published,
            ))?,
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
