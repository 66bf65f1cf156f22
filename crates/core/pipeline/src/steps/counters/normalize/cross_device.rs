//! `cross_device`: the features of one device beside the time of another.

use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::{Figure, OBSERVATIONS};

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

use super::shared::observations_output;

pub(crate) const CROSS_DEVICE: StepKind = StepKind::new::<CrossDevice>(
    "cross_device",
    Stage::Normalize,
    "the features of one device beside the time of another",
);

fn default_join_on() -> Vec<String> {
    vec!["program".to_owned(), "variant".to_owned()]
}

/// `cross_device`: features of one device beside the time of another. Adds a `feature_device`
/// column.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossDevice {
    pub features: TableRef,
    pub target: TableRef,
    #[serde(default)]
    pub feature_devices: Vec<String>,
    #[serde(default)]
    pub target_devices: Vec<String>,
    #[serde(default = "default_join_on")]
    pub on: Vec<String>,
    #[serde(default)]
    pub include_same: bool,
    pub reference_time_feature: Option<String>,
    /// Only these feature columns of the feature device (default: all).
    pub metrics: Option<Vec<String>>,
}

impl StepParams for CrossDevice {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.on.is_empty() {
            return Err(ParamError::new(
                "on",
                "`on` is empty: name the columns that match a run on one device with the same work on another",
            ));
        }
        if self.metrics.as_ref().is_some_and(Vec::is_empty) {
            return Err(ParamError::new(
                "metrics",
                "`metrics` is empty: leave it out to keep every feature column",
            ));
        }
        Ok(self)
    }
}

impl Step for CrossDevice {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.features, &self.target]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let options = normalize::CrossDevice {
            feature_devices: self.feature_devices.clone(),
            target_devices: self.target_devices.clone(),
            on: self.on.clone(),
            include_same: self.include_same,
            reference_time_feature: self.reference_time_feature.clone(),
            metrics: self.metrics.clone(),
        };
        let joined =
            normalize::cross_device(cx.input(&self.features)?, cx.input(&self.target)?, &options)?;
        let unpaired: usize = joined.pairs.iter().map(|p| p.3).sum();
        let figures = vec![
            Figure::new("device pairs", joined.pairs.len() as f64, "").headline(),
            Figure::new("target rows without a partner", unpaired as f64, "").headline(),
        ];
        Ok(observations_output(joined.observations, figures))
    }
}
