//! `scaling_model`: the scaling model a `scaling_fit` step defines, validated out of sample:
//! each call path's largest configuration held out of the fit and predicted, the measured time
//! beside (docs/methods.md, section 7); its predictions are the model's held-out scores.

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::ModelError;
use yosoku_models::scaling::{ScalingSpec, scaling_models};
use yosoku_tables::{PREDICTIONS, REPORT, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use super::shared::{SCALING_TABLES, meaning_cells};
use crate::steps::step::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, names,
};

pub(crate) const SCALING_MODEL: StepKind = StepKind::new::<ScalingModelParams>(
    "scaling_model",
    Stage::Validate,
    "a scaling_fit step's models refitted with each call path's largest configuration held out, and that configuration predicted",
);

/// `scaling_model`: the `scaling_fit` step it validates.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingModelParams {
    /// The `scaling_fit` step whose models are validated.
    pub model: Spanned<String>,
}

#[derive(Debug)]
pub struct ScalingHoldOut {
    model: Spanned<String>,
}

impl StepParams for ScalingModelParams {
    type Step = ScalingHoldOut;
    fn into_step(self) -> Result<ScalingHoldOut, ParamError> {
        Ok(ScalingHoldOut { model: self.model })
    }
}

/// The spec and meanings of the scaling model `model` defines, or what it is instead.
fn scaling_model(
    model: &ModelDefinition,
) -> Result<(&ScalingSpec, &std::collections::BTreeMap<String, String>), String> {
    match &model.model {
        DefinedModel::Scaling { spec, meanings } => Ok((spec, meanings)),
        DefinedModel::Counters(_)
        | DefinedModel::Transfer { .. }
        | DefinedModel::StepsAndRanks { .. }
        | DefinedModel::Work { .. } => Err(format!(
            "names {}; `scaling_model` validates a `scaling_fit` step",
            model.family()
        )),
    }
}

impl Step for ScalingHoldOut {
    fn inputs(&self) -> Vec<&TableRef> {
        // The model's table is checked through the model reference.
        vec![]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&SCALING_TABLES)
    }

    fn model_input(&self) -> Option<&Spanned<String>> {
        Some(&self.model)
    }

    fn check_model(&self, model: &ModelDefinition) -> Result<(), ParamError> {
        scaling_model(model)
            .map(|_| ())
            .map_err(|e| ParamError::new("model", e))
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (model, runs) = cx.model_observations(&self.model)?;
        let (spec, meanings) = scaling_model(model).map_err(StepError::Invalid)?;
        let spec = ScalingSpec {
            hold_out_largest: true,
            ..spec.clone()
        };
        let s = scaling_models(runs, &spec)?;
        let predictions =
            yosoku_tables::rows::predictions_batch(&s.predictions).map_err(ModelError::from)?;
        let mut cells = s.report;
        cells.extend(meaning_cells(meanings));
        let report = yosoku_tables::report::report_batch(&cells).map_err(ModelError::from)?;
        Ok(StepOutput::new()
            .table(&SCALING_MODELS, s.models)
            .table(&SCALING_POINTS, s.points)
            .table(&SCALING_CURVES, s.curves)
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report)
            .figures(s.figures)
            .scores(&PREDICTIONS))
    }
}
