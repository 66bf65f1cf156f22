//! `ols`: least squares of time on the chosen features, one model per group.

use serde::Deserialize;
use yosoku_models::counters::fit::Method;

use super::fit::{Fit, FitKeys};
use crate::steps::step::{GroupedParams, ParamError, Stage, StepKind, non_negative};

pub(crate) const OLS: StepKind = StepKind::grouped::<OlsParams>(
    "ols",
    Stage::Fit,
    "least squares of time on the chosen features, one model per group",
);

/// `ols`: least squares of time on the chosen features, one model per group. Produces
/// `model_coefficients`, `model_summary`, `predictions` (in sample) and `report`. Its own key is
/// `ridge`; the others are every counter fit's ([`FitKeys`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OlsParams {
    #[serde(default)]
    pub ridge: f64,
}

impl GroupedParams for OlsParams {
    type Group = FitKeys;
    type Step = Fit;
    fn into_step(self, keys: FitKeys) -> Result<Fit, ParamError> {
        non_negative("ridge", self.ridge)?;
        keys.into_fit(Method::Ols { ridge: self.ridge })
    }
}
