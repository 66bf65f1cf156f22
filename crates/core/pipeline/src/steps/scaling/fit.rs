//! `scaling_fit`: each call path's time over the numeric parameters of a `runs` table, in
//! Extra-P's performance model normal form, fitted on every configuration and saved as the
//! family's model (`PmnfScaling`) for the validation steps that name it.

use std::collections::BTreeMap;

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::scaling::{PmnfScaling, ScalingSpec, scaling_models};
use yosoku_tables::SCALING_MODELS;

use super::shared::{default_aggregate, default_level, default_search, scaling_spec, search};
use crate::steps::step::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, TrainingTable, names,
};

pub(crate) const SCALING_FIT: StepKind = StepKind::new::<ScalingFitParams>(
    "scaling_fit",
    Stage::Fit,
    "each call path's time over its runs' numeric parameters (Extra-P's PMNF search), fitted on every configuration",
);

/// `scaling_fit` over one `runs` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingFitParams {
    pub runs: TableRef,
    /// The parameters to model over; every numeric one that varies when absent.
    #[serde(default)]
    pub parameters: Vec<String>,
    /// How repetitions of a point are reduced: `mean` or `median`.
    #[serde(default = "default_aggregate")]
    pub aggregate: String,
    /// Coverage of the prediction intervals.
    #[serde(default = "default_level")]
    pub level: f64,
    /// Also try negative exponents (Extra-P's `allow_negative_exponents`): times that fall as a
    /// parameter grows, as a rank count under strong scaling.
    #[serde(default)]
    pub negative_exponents: bool,
    /// What each parameter is, in words (`n = "grid points per side"`): written into the
    /// reports of the validation steps, where `yosoku report` and the viewer's Scaling view show
    /// it beside the models.
    #[serde(default)]
    pub meanings: BTreeMap<String, String>,
    /// `extrap` (default: Extra-P's search, the same terms as Extra-P) or `robust` (the
    /// noise-resilient search: weighted by the repetitions' noise, negative exponents always,
    /// sums and products over parameters).
    #[serde(default = "default_search")]
    pub search: String,
}

#[derive(Debug)]
pub struct ScalingFit {
    runs: TableRef,
    spec: ScalingSpec,
    meanings: BTreeMap<String, String>,
}

impl StepParams for ScalingFitParams {
    type Step = ScalingFit;
    fn into_step(self) -> Result<ScalingFit, ParamError> {
        let spec = scaling_spec(
            self.parameters,
            &self.aggregate,
            self.level,
            self.negative_exponents,
            &self.meanings,
        )?;
        Ok(ScalingFit {
            runs: self.runs,
            spec: ScalingSpec {
                search: search(&self.search)?,
                ..spec
            },
            meanings: self.meanings,
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
