//! `scaling_fit`: each call path's time over the numeric parameters of a `runs` table, in
//! Extra-P's performance model normal form, fitted on every configuration and saved as the
//! family's model (`PmnfScaling`) for the validation steps that name it.

use std::collections::BTreeMap;

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::scaling::{PmnfScaling, ScalingSpec, scaling_models};
use yosoku_tables::SCALING_MODELS;

use super::shared::PmnfKeys;
use crate::steps::step::{
    DefinedModel, GroupedParams, ModelDefinition, ParamError, Stage, Step, StepContext, StepError,
    StepKind, StepOutput, TableRef, TrainingTable, names,
};

pub(crate) const SCALING_FIT: StepKind = StepKind::grouped::<ScalingFitParams>(
    "scaling_fit",
    Stage::Fit,
    "each call path's time over its runs' numeric parameters (Extra-P's PMNF search), fitted on every configuration",
);

/// `scaling_fit` over one `runs` table: the table, beside the PMNF search's keys
/// ([`PmnfKeys`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingFitParams {
    pub runs: TableRef,
}

#[derive(Debug)]
pub struct ScalingFit {
    runs: TableRef,
    spec: ScalingSpec,
    meanings: BTreeMap<String, String>,
}

impl GroupedParams for ScalingFitParams {
    type Group = PmnfKeys;
    type Step = ScalingFit;
    fn into_step(self, keys: PmnfKeys) -> Result<ScalingFit, ParamError> {
        let (spec, meanings) = keys.into_spec()?;
        Ok(ScalingFit {
            runs: self.runs,
            spec,
            meanings,
        })
    }
}

impl ScalingFit {
    fn definition(&self) -> ModelDefinition {
        ModelDefinition {
            observations: self.runs.get_ref().clone(),
            model: DefinedModel::Scaling {
                spec: self.spec.clone(),
                meanings: self.meanings.clone(),
            },
        }
    }
}

impl Step for ScalingFit {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.runs]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&SCALING_MODELS])
    }

    fn model_definition(&self) -> Option<ModelDefinition> {
        Some(self.definition())
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let runs = cx.input(&self.runs)?;
        let scaling = scaling_models(runs, &self.spec)?;
        let model = PmnfScaling::from_scaling(&scaling, &self.spec);
        Ok(StepOutput::new()
            .table(&SCALING_MODELS, scaling.models)
            .model(self.definition())
            .saved_model(
                PmnfScaling::KIND,
                TrainingTable::Input(self.runs.get_ref().clone()),
                &[&SCALING_MODELS],
            )
            .saved_parameters(PmnfScaling::options_record(&self.spec)?, model.to_json()?))
    }
}
