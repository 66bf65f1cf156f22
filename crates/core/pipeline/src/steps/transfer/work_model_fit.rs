//! `work_model_fit`: the latency-aware model of a launch's time from its work alone, fitted on
//! the training GPUs' launches of an `observations` table, with the accuracy it states of itself
//! (each training GPU and operator group left out together), saved as the family's model
//! (`WorkModel`) for the `work_forecast` steps that name it (docs/methods.md, section 6).

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::transfer::Measurements;
use yosoku_models::transfer::split::gpus_named;
use yosoku_models::transfer::work_forecast::{WorkModel, WorkModelOptions, WorkTraining};
use yosoku_tables::REPORT;
use yosoku_tables::report::{ReportCell, report_batch};

use super::super::step::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, TrainingTable, names,
};
use super::shared::default_level;

pub(crate) const WORK_MODEL_FIT: StepKind = StepKind::new::<WorkModelFitParams>(
    "work_model_fit",
    Stage::Fit,
    "the latency-aware model of a launch's time from its work alone, fitted on the training GPUs' launches, with the accuracy it states of itself",
);

/// `work_model_fit`'s keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkModelFitParams {
    /// The training launches (an `observations` table with each launch's work and time).
    pub observations: TableRef,
    /// The GPUs of `observations` the model is fitted on.
    pub train: Vec<String>,
    /// Operator (program) -> its group; one not named is in `other_group`, or its own.
    #[serde(default)]
    pub groups: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub other_group: Option<String>,
    #[serde(default = "default_level")]
    pub level: f64,
}

#[derive(Debug)]
pub struct WorkModelFit {
    observations: TableRef,
    train: Vec<String>,
    options: WorkModelOptions,
}

impl StepParams for WorkModelFitParams {
    type Step = WorkModelFit;
    fn into_step(self) -> Result<WorkModelFit, ParamError> {
        if self.train.is_empty() {
            return Err(ParamError::new("train", "`train`: name at least one GPU"));
        }
        if !(0.5..1.0).contains(&self.level) {
            return Err(ParamError::new(
                "level",
                format!("level {}: expected a number in [0.5, 1)", self.level),
            ));
        }
        Ok(WorkModelFit {
            observations: self.observations,
            train: self.train,
            options: WorkModelOptions {
                groups: self.groups,
                other_group: self.other_group,
                level: self.level,
            },
        })
    }
}

impl WorkModelFit {
    fn definition(&self) -> ModelDefinition {
        ModelDefinition {
            observations: self.observations.get_ref().clone(),
            model: DefinedModel::Work {
                options: self.options.clone(),
                train: self.train.clone(),
            },
        }
    }
}

/// The work model of `options` fitted on the launches of `batch` on the GPUs `train` names.
pub(super) fn fit_work_model(
    cx: &StepContext<'_>,
    batch: &arrow_array::RecordBatch,
    train: &[String],
    options: &WorkModelOptions,
) -> Result<WorkModel, StepError> {
    let m = Measurements::from_profile(batch, cx.devices)?;
    let train = gpus_named(&m, cx.devices, train, "training")?;
    Ok(WorkModel::fit(
        WorkTraining {
            measurements: &m,
            train: &train,
        },
        options,
    )?)
}

/// The report's grid of what each method states of itself, from the (GPU, group)-out residuals.
pub(super) fn stated_cells(model: &WorkModel) -> Vec<ReportCell> {
    let title = format!(
        "what the methods state of themselves: each of {} and each operator group ({}) left out together, predicted from the rest",
        model.train.join(", "),
        model.groups.join(", ")
    );
    let mut cells = Vec::new();
    for s in &model.stated {
        cells.push(ReportCell::number(
            &title,
            &s.method,
            "median |error| %",
            s.median_abs_error_pct,
            "%",
        ));
        cells.push(ReportCell::number(
            &title,
            &s.method,
            "launches",
            s.launches as f64,
            "",
        ));
    }
    cells
}

impl Step for WorkModelFit {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&REPORT])
    }

    fn model_definition(&self) -> Option<ModelDefinition> {
        Some(self.definition())
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = cx.input(&self.observations)?;
        let model = fit_work_model(cx, batch, &self.train, &self.options)?;
        Ok(StepOutput::new()
            .table(&REPORT, report_batch(&stated_cells(&model))?)
            .model(self.definition())
            .saved_model(
                WorkModel::KIND,
                TrainingTable::Input(self.observations.get_ref().clone()),
                &[&REPORT],
            )
            .saved_parameters(WorkModel::options_record(&self.options)?, model.to_json()?))
    }
}
