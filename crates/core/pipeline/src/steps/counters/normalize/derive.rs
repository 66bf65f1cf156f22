//! `derive`: new features: scale x numerator / denominator.

use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::{Figure, METRIC_KINDS, OBSERVATIONS};

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

use super::shared::observations_output;

pub(crate) const DERIVE: StepKind = StepKind::new::<Derive>(
    "derive",
    Stage::Normalize,
    "new features scale x numerator / denominator",
);

fn default_ratio_scale() -> f64 {
    1.0
}

fn default_ratio_kind() -> String {
    "ratio".to_owned()
}

/// One derived ratio of [`Derive`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioSpec {
    pub name: String,
    pub numerator: String,
    pub denominator: String,
    #[serde(default = "default_ratio_scale")]
    pub scale: f64,
    #[serde(default = "default_ratio_kind")]
    pub kind: String,
}

/// `derive`: new feature columns `scale x numerator / denominator` (per-1000-instruction rates).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Derive {
    pub input: TableRef,
    pub ratios: Vec<RatioSpec>,
}

impl StepParams for Derive {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        for r in &self.ratios {
            if !r.scale.is_finite() {
                return Err(ParamError::new(
                    "ratios",
                    format!("ratio `{}`: `scale` must be a finite number", r.name),
                ));
            }
            if !METRIC_KINDS.contains(&r.kind.as_str()) {
                return Err(ParamError::new(
                    "ratios",
                    format!(
                        "ratio `{}`: kind `{}` is not one of: {}",
                        r.name,
                        r.kind,
                        METRIC_KINDS.join(", ")
                    ),
                ));
            }
        }
        Ok(self)
    }
}

impl Step for Derive {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let ratios: Vec<normalize::Ratio> = self
            .ratios
            .iter()
            .map(|r| normalize::Ratio {
                name: r.name.clone(),
                numerator: r.numerator.clone(),
                denominator: r.denominator.clone(),
                scale: r.scale,
                kind: r.kind.clone(),
            })
            .collect();
        let (batch, undefined) = normalize::derive_ratios(cx.input(&self.input)?, &ratios)?;
        let figures = undefined
            .into_iter()
            .map(|(name, rows)| {
                Figure::new(format!("{name}: rows without a value"), rows as f64, "")
            })
            .collect();
        Ok(observations_output(batch, figures))
    }
}
