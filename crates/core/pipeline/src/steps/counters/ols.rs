//! `ols`: least squares of time on the chosen features, one model per group.

use serde::Deserialize;
use yosoku_models::counters::FeatureChoice;
use yosoku_models::counters::fit::{Method, ModelSpec};

use super::fit::{Fit, MatrixSpec};
use crate::steps::step::{ParamError, Stage, StepKind, StepParams, TableRef, non_negative};

pub(crate) const OLS: StepKind = StepKind::new::<OlsParams>(
    "ols",
    Stage::Fit,
    "least squares of time on the chosen features, one model per group",
);

/// `ols`: least squares of time on the chosen features, one model per group. Produces
/// `model_coefficients`, `model_summary`, `predictions` (in sample) and `report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OlsParams {
    pub observations: TableRef,
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub ridge: f64,
    #[serde(default)]
    pub log_target: bool,
    #[serde(default)]
    pub log_features: bool,
    pub matrix: Option<MatrixSpec>,
}

impl StepParams for OlsParams {
    type Step = Fit;
    fn into_step(self) -> Result<Fit, ParamError> {
        non_negative("ridge", self.ridge)?;
        let spec = ModelSpec {
            choice: FeatureChoice {
                features: self.features,
                kinds: self.kinds,
                exclude: self.exclude,
            },
            group_by: self.group_by,
            log_target: self.log_target,
            log_features: self.log_features,
            method: Method::Ols { ridge: self.ridge },
        };
        Fit::new(self.observations, spec, self.matrix.as_ref())
    }
}
