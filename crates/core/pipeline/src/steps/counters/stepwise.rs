//! `stepwise`: forward or backward selection by adjusted R^2 with spline terms and interactions,
//! one model per group.

use serde::Deserialize;
use yosoku_models::counters::fit::Method;
use yosoku_regression::stepwise::{Direction, StepwiseOptions};

use super::fit::{Fit, FitKeys};
use crate::steps::step::{GroupedParams, ParamError, Stage, StepKind};

pub(crate) const STEPWISE: StepKind = StepKind::grouped::<StepwiseParams>(
    "stepwise",
    Stage::Fit,
    "forward or backward selection by adjusted R^2 with spline terms and interactions",
);

/// The direction of a stepwise selection, as written.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirectionParam {
    #[default]
    Forward,
    Backward,
}

fn default_knots() -> usize {
    4
}

fn default_true() -> bool {
    true
}

fn default_max_interactions() -> usize {
    45
}

/// `stepwise`: forward (or backward) selection by adjusted R^2 with spline terms and
/// interactions, one model per group. Produces what `ols` does and `selection_path`. Its own keys
/// are the selection's; the others are every counter fit's ([`FitKeys`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepwiseParams {
    #[serde(default)]
    pub direction: DirectionParam,
    /// Knots of each counter's natural cubic spline; below 3 for linear terms.
    #[serde(default = "default_knots")]
    pub spline_knots: usize,
    #[serde(default = "default_true")]
    pub interactions: bool,
    #[serde(default = "default_max_interactions")]
    pub max_interactions: usize,
    pub max_terms: Option<usize>,
}

impl GroupedParams for StepwiseParams {
    type Group = FitKeys;
    type Step = Fit;
    fn into_step(self, keys: FitKeys) -> Result<Fit, ParamError> {
        if self.max_terms == Some(0) {
            return Err(ParamError::new(
                "max_terms",
                "`max_terms` must be at least 1 (leave it out for no cap)",
            ));
        }
        keys.into_fit(Method::Stepwise(StepwiseOptions {
            direction: match self.direction {
                DirectionParam::Forward => Direction::Forward,
                DirectionParam::Backward => Direction::Backward,
            },
            spline_knots: (self.spline_knots >= 3).then_some(self.spline_knots),
            interactions: self.interactions,
            max_interactions: self.max_interactions,
            max_terms: self.max_terms,
            full_path: false,
        }))
    }
}
