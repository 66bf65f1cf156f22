//! `gpu_transfer`: a kernel's time on a GPU never timed, and of a kernel never timed, the model
//! of a `gpu_transfer_fit` step validated out of sample scheme by scheme beside the analytical
//! baselines (docs/methods.md, section 6).

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::ModelError;
use yosoku_models::counters::Observations;
use yosoku_models::transfer::Measurements;
use yosoku_models::transfer::report::{predictions_batch, report, scores_batch};
use yosoku_models::transfer::schemes::{Scheme, validate};
use yosoku_tables::{PREDICTIONS, REPORT, TRANSFER_SCORES};

use super::super::counters::PublishedSpec;
use super::super::step::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, names,
};
use super::shared::{default_level, mean_error_anchors};

pub(crate) const GPU_TRANSFER: StepKind = StepKind::new::<TransferParams>(
    "gpu_transfer",
    Stage::Validate,
    "held-out GPUs and kernels predicted from the device catalogue: learned transfer models beside wave scaling and cores x clock",
);

fn default_predictions() -> String {
    "learned".to_owned()
}

/// `gpu_transfer`: every scheme named, refitting the model of a `gpu_transfer_fit` step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferParams {
    /// The `gpu_transfer_fit` step whose model is validated.
    pub model: Spanned<String>,
    /// Scheme names; all five when absent.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// Coverage of the intervals.
    #[serde(default = "default_level")]
    pub level: f64,
    /// Which methods' held-out rows go into `predictions`: `learned` or `all`.
    #[serde(default = "default_predictions")]
    pub predictions: String,
    /// Validate the tree ensemble too (minutes on the bundled data; BENCHMARKS.md).
    #[serde(default)]
    pub forest: bool,
    /// Published errors shown beside (each with a `value`, the mean |error| in %).
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

#[derive(Debug)]
pub struct Transfer {
    model: Spanned<String>,
    schemes: Vec<Scheme>,
    level: f64,
    all_methods: bool,
    forest: bool,
    anchors: Vec<(String, f64)>,
}

impl StepParams for TransferParams {
    type Step = Transfer;
    fn into_step(self) -> Result<Transfer, ParamError> {
        let schemes = if self.schemes.is_empty() {
            Scheme::ALL.to_vec()
        } else {
            self.schemes
                .iter()
                .map(|s| {
                    Scheme::parse(s).ok_or_else(|| {
                        let known: Vec<&str> = Scheme::ALL.iter().map(|s| s.name()).collect();
                        ParamError::new(
                            "schemes",
                            format!("unknown scheme `{s}`; expected one of {}", known.join(", ")),
                        )
                    })
                })
                .collect::<Result<_, _>>()?
        };
        if !(0.5..1.0).contains(&self.level) {
            return Err(ParamError::new(
                "level",
                format!("level {}: expected a number in [0.5, 1)", self.level),
            ));
        }
        let all_methods = match self.predictions.as_str() {
            "learned" => false,
            "all" => true,
            other => {
                return Err(ParamError::new(
                    "predictions",
                    format!("`predictions = \"{other}\"`: expected `learned` or `all`"),
                ));
            }
        };
        let anchors = mean_error_anchors(&self.published)?;
        Ok(Transfer {
            model: self.model,
            schemes,
            level: self.level,
            all_methods,
            forest: self.forest,
            anchors,
        })
    }
}

impl Step for Transfer {
    fn inputs(&self) -> Vec<&TableRef> {
        // The model's table is checked through the model reference.
        vec![]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &TRANSFER_SCORES, &REPORT])
    }

    fn model_input(&self) -> Option<&Spanned<String>> {
        Some(&self.model)
    }

    fn check_model(&self, model: &ModelDefinition) -> Result<(), ParamError> {
        transfer_model(model)
            .map(|_| ())
            .map_err(|e| ParamError::new("model", e))
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (model, batch) = cx.model_observations(&self.model)?;
        let skip_unknown_devices = transfer_model(model).map_err(StepError::Invalid)?;
        let m = Measurements::from_observations(batch, cx.devices, skip_unknown_devices)?;
        let v = validate(&m, &self.schemes, self.level, self.forest)?;
        let observations = Observations::new("observations", batch)?;
        let predictions = predictions_batch(&m, &observations, &v, self.all_methods)?;
        let scores = scores_batch(&v)?;
        let (cells, figures) = report(&m, &v, &self.anchors);
        let report = yosoku_tables::report::report_batch(&cells).map_err(ModelError::from)?;
        Ok(StepOutput::new()
            .table(&PREDICTIONS, predictions)
            .table(&TRANSFER_SCORES, scores)
            .table(&REPORT, report)
            .figures(figures)
            .scores(&TRANSFER_SCORES))
    }
}

/// Whether the transfer model `model` defines leaves unknown devices out, or what it is instead.
fn transfer_model(model: &ModelDefinition) -> Result<bool, String> {
    match model.model {
        DefinedModel::Transfer {
            skip_unknown_devices,
            ..
        } => Ok(skip_unknown_devices),
        DefinedModel::Counters(_)
        | DefinedModel::Scaling { .. }
        | DefinedModel::StepsAndRanks { .. }
        | DefinedModel::Work { .. } => Err(format!(
            "names {}; `gpu_transfer` validates a `gpu_transfer_fit` step",
            model.family()
        )),
    }
}
