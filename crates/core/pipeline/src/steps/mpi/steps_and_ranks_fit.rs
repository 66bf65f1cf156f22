//! `mpi_steps_and_ranks_fit`: short MPI runs over several configurations split per call path
//! into a cost per step and a cost once (simplified execution at the length of the run to
//! predict), both modelled over the configurations in Extra-P's PMNF (docs/methods.md,
//! section 3): the model an `mpi_steps_and_ranks` step asks at its target.

use std::collections::BTreeMap;

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::mpi::{STEPS_AND_RANKS_KIND, StepsAndRanksSpec, part_models};
use yosoku_models::scaling::PmnfScaling;
use yosoku_tables::SCALING_MODELS;

use super::shared::{SettingKeys, Settings};
use crate::steps::scaling::PmnfKeys;
use crate::steps::step::{
    DefinedModel, GroupedParams, ModelDefinition, ParamError, Stage, Step, StepContext, StepError,
    StepKind, StepOutput, TableRef, TrainingTable, names,
};

pub(crate) const STEPS_AND_RANKS_FIT: StepKind = StepKind::grouped::<StepsAndRanksFitParams>(
    "mpi_steps_and_ranks_fit",
    Stage::Fit,
    "short MPI runs over several configurations split per call path into a cost per step and once (simplified execution), both modelled over the configurations (PMNF)",
);

fn default_min_share_pct() -> f64 {
    1.0
}

/// `mpi_steps_and_ranks_fit` over the short runs of one source.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepsAndRanksFitParams {
    /// `mpi_blocks` of the short runs (several configurations, repeats welcome).
    pub blocks: TableRef,
    /// Their `mpi_ranks` (the parameters, the rank count, each rank's wall time).
    pub ranks: TableRef,
    /// Leave out call paths under this share of the predicted time, in percent.
    #[serde(default = "default_min_share_pct")]
    pub min_share_pct: f64,
}

#[derive(Debug)]
pub struct StepsAndRanksFit {
    blocks: TableRef,
    ranks: TableRef,
    spec: StepsAndRanksSpec,
    meanings: BTreeMap<String, String>,
}

impl GroupedParams for StepsAndRanksFitParams {
    type Group = (SettingKeys, PmnfKeys);
    type Step = StepsAndRanksFit;
    fn into_step(
        self,
        (keys, pmnf): (SettingKeys, PmnfKeys),
    ) -> Result<StepsAndRanksFit, ParamError> {
        if !(0.0..100.0).contains(&self.min_share_pct) {
            return Err(ParamError::new(
                "min_share_pct",
                format!(
                    "min_share_pct = {}: expected a percentage in [0, 100)",
                    self.min_share_pct
                ),
            ));
        }
        if keys.published.is_some() {
            return Err(ParamError::new(
                "published",
                "`mpi_steps_and_ranks_fit` takes no `published` figure (its scoreboard rows name the paper's)",
            ));
        }
        let settings = Settings::new(keys)?;
        let (scaling, meanings) = pmnf.into_spec()?;
        Ok(StepsAndRanksFit {
            blocks: self.blocks,
            ranks: self.ranks,
            spec: StepsAndRanksSpec {
                mpi: settings.spec(""),
                scaling,
                target: Vec::new(),
                min_share: self.min_share_pct / 100.0,
            },
            meanings,
        })
    }
}

impl StepsAndRanksFit {
    fn definition(&self) -> ModelDefinition {
        ModelDefinition {
            observations: self.blocks.get_ref().clone(),
            model: DefinedModel::StepsAndRanks {
                spec: self.spec.clone(),
                ranks: self.ranks.get_ref().clone(),
                meanings: self.meanings.clone(),
            },
        }
    }
}

impl Step for StepsAndRanksFit {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.blocks, &self.ranks]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&SCALING_MODELS])
    }

    fn model_definition(&self) -> Option<ModelDefinition> {
        Some(self.definition())
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let parts = part_models(&self.spec, cx.input(&self.blocks)?, cx.input(&self.ranks)?)?;
        // The parts' PMNF models are a scaling model's call paths (`<call path>, per step`,
        // `<call path>, once`): saved in that family's form.
        let saved = PmnfScaling::from_scaling(&parts, &self.spec.scaling);
        Ok(StepOutput::new()
            .table(&SCALING_MODELS, parts.models)
            .model(self.definition())
            .saved_model(
                STEPS_AND_RANKS_KIND,
                TrainingTable::Input(self.blocks.get_ref().clone()),
                &[&SCALING_MODELS],
            )
            .saved_parameters(
                PmnfScaling::options_record(&self.spec.scaling)?,
                saved.to_json()?,
            ))
    }
}
