//! `stepwise`: forward or backward selection by adjusted R^2 with spline terms and interactions,
//! one model per group.

use serde::Deserialize;
use yosoku_models::counters::FeatureChoice;
use yosoku_models::counters::fit::{Method, ModelSpec};
use yosoku_regression::stepwise::{Direction, StepwiseOptions};

use super::fit::{Fit, MatrixSpec};
use crate::steps::step::{ParamError, Stage, StepKind, StepParams, TableRef};

pub(crate) const STEPWISE: StepKind = StepKind::new::<StepwiseParams>(
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
/// interactions, one model per group. Produces what `ols` does and `selection_path`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepwiseParams {
    pub observations: TableRef,
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub log_target: bool,
    #[serde(default)]
    pub log_features: bool,
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
    pub matrix: Option<MatrixSpec>,
}

impl StepParams for StepwiseParams {
    type Step = Fit;
    fn into_step(self) -> Result<Fit, ParamError> {
        if self.max_terms == Some(0) {
            return Err(ParamError::new(
                "max_terms",
                "`max_terms` must be at least 1 (leave it out for no cap)",
            ));
        }
        let spec = ModelSpec {
            choice: FeatureChoice {
                features: self.features,
                kinds: self.kinds,
                exclude: self.exclude,
            },
            group_by: self.group_by,
            log_target: self.log_target,
            log_features: self.log_features,
            method: Method::Stepwise(StepwiseOptions {
                direction: match self.direction {
                    DirectionParam::Forward => Direction::Forward,
                    DirectionParam::Backward => Direction::Backward,
                },
                spline_knots: (self.spline_knots >= 3).then_some(self.spline_knots),
                interactions: self.interactions,
                max_interactions: self.max_interactions,
                max_terms: self.max_terms,
                full_path: false,
            }),
        };
        Fit::new(self.observations, spec, self.matrix.as_ref())
    }
}
