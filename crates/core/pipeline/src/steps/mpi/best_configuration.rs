//! `mpi_best_configuration`: one reduced run per candidate configuration, each predicted and
//! ranked.

use serde::Deserialize;
use yosoku_models::mpi::{self};
use yosoku_tables::{PREDICTIONS, REPORT};

use super::shared::{SettingKeys, Settings, mpi_figures};
use crate::steps::step::{
    GroupedParams, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, TableRef,
    names,
};

pub(crate) const BEST_CONFIGURATION: StepKind = StepKind::grouped::<BestConfigurationParams>(
    "mpi_best_configuration",
    Stage::Fit,
    "candidate configurations predicted from one reduced run each, and ranked",
);

/// `mpi_best_configuration`: one reduced run per candidate configuration (rank count, binding),
/// each predicted for the full run and ranked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BestConfigurationParams {
    /// `mpi_blocks` of the reduced runs, one run per candidate.
    pub reduced: TableRef,
    /// `mpi_ranks` of the same runs (their rank counts and bindings).
    pub reduced_ranks: TableRef,
    /// `mpi_ranks` of measured full runs of the candidates, to rank beside the predictions.
    pub measured_ranks: Option<TableRef>,
}

/// An `mpi_best_configuration` step.
#[derive(Debug)]
pub struct BestConfiguration {
    reduced: TableRef,
    reduced_ranks: TableRef,
    measured_ranks: Option<TableRef>,
    settings: Settings,
}

impl GroupedParams for BestConfigurationParams {
    type Group = SettingKeys;
    type Step = BestConfiguration;
    fn into_step(self, keys: SettingKeys) -> Result<BestConfiguration, ParamError> {
        Ok(BestConfiguration {
            settings: Settings::new(keys)?,
            reduced: self.reduced,
            reduced_ranks: self.reduced_ranks,
            measured_ranks: self.measured_ranks,
        })
    }
}

impl Step for BestConfiguration {
    fn inputs(&self) -> Vec<&TableRef> {
        [
            Some(&self.reduced),
            Some(&self.reduced_ranks),
            self.measured_ranks.as_ref(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (predictions, report) = mpi::best_configuration(
            &self.settings.spec(cx.id),
            cx.input(&self.reduced)?,
            cx.input(&self.reduced_ranks)?,
            cx.optional_input(self.measured_ranks.as_ref())?,
        )?;
        let figures = mpi_figures(&predictions)?;
        Ok(StepOutput::new()
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report)
            .figures(figures))
    }
}
