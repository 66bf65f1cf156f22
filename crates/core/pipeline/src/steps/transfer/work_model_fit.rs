//! `work_model_fit`: the latency-aware model of a launch's time from its work alone, fitted on
//! the training GPUs' launches of an `observations` table, with the accuracy it states of itself
//! (each training GPU and operator group left out together), saved as the family's model
//! (`WorkModel`) for the `work_forecast` steps that name it (docs/methods.md, section 6).

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::transfer::Measurements;
use yosoku_models::transfer::split::gpus_named;
use yosoku_models::transfer::work_forecast::{Peaks, WorkModel, WorkModelOptions, WorkTraining};
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
    /// The GPUs of `observations` the model is fitted on; every one when absent.
    #[serde(default)]
    pub train: Vec<String>,
    /// Operator (program) -> its group; one not named is in `other_group`, or its own.
    #[serde(default)]
    pub groups: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub other_group: Option<String>,
    #[serde(default = "default_level")]
    pub level: f64,
    /// The GPUs' peaks: `datasheet`, or `measured` (a calibration's rates, every GPU's).
    #[serde(default = "default_peaks")]
    pub peaks: String,
}

fn default_peaks() -> String {
    "datasheet".to_owned()
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
        if !(0.5..1.0).contains(&self.level) {
            return Err(ParamError::new(
                "level",
                format!("level {}: expected a number in [0.5, 1)", self.level),
            ));
        }
        let peaks = match self.peaks.as_str() {
            "datasheet" => Peaks::Datasheet,
            "measured" => Peaks::Measured,
            other => {
                return Err(ParamError::new(
                    "peaks",
                    format!("`peaks = \"{other}\"`: expected `datasheet` or `measured`"),
                ));
            }
        };
        Ok(WorkModelFit {
            observations: self.observations,
            train: self.train,
            options: WorkModelOptions {
                groups: self.groups,
                other_group: self.other_group,
                level: self.level,
                peaks,
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

/// The options and training GPUs of the work model `model` defines, or, for a step `step` that
/// names another family's, what it names instead and what `step` needs (`validates a
/// \`work_model_fit\` step's model`).
pub(super) fn work_model<'a>(
    model: &'a ModelDefinition,
    step: &str,
) -> Result<(&'a WorkModelOptions, &'a [String]), String> {
    match &model.model {
        DefinedModel::Work { options, train } => Ok((options, train)),
        DefinedModel::Counters(_)
        | DefinedModel::Transfer { .. }
        | DefinedModel::Scaling { .. }
        | DefinedModel::StepsAndRanks { .. } => Err(format!("names {}; {step}", model.family())),
    }
}

/// The catalogue the model's `peaks` say: the run's, or every device's measured rates in place
/// of its datasheet's.
pub(super) fn peaks_catalogue<'a>(
    cx: &StepContext<'a>,
    peaks: Peaks,
) -> std::borrow::Cow<'a, yosoku_devices::Catalogue> {
    match peaks {
        Peaks::Datasheet => std::borrow::Cow::Borrowed(cx.devices),
        Peaks::Measured => std::borrow::Cow::Owned(cx.devices.with_measured_peaks()),
    }
}

/// The launches of `batch` as the work model reads them, each GPU's peaks as `peaks` say (with
/// `measured`, a GPU without a calibration is an error naming it).
pub(super) fn work_measurements(
    batch: &arrow_array::RecordBatch,
    devices: &yosoku_devices::Catalogue,
    peaks: Peaks,
) -> Result<Measurements, StepError> {
    let m = Measurements::from_profile(batch, devices)?;
    if peaks == Peaks::Measured
        && let Some(g) = m.gpus.iter().find(|g| {
            devices
                .find(&g.name)
                .is_none_or(|d| !d.has_measured_peaks())
        })
    {
        return Err(StepError::Invalid(format!(
            "`peaks = \"measured\"`: `{}` has no measured FP32 rate and bandwidth in the catalogue (`yosoku calibrate` on it writes them)",
            g.name
        )));
    }
    Ok(m)
}

/// The GPUs `train` names in `m`, every one when it names none.
pub(super) fn training_gpus(
    m: &Measurements,
    devices: &yosoku_devices::Catalogue,
    train: &[String],
) -> Result<Vec<usize>, StepError> {
    if train.is_empty() {
        return Ok((0..m.gpus.len()).collect());
    }
    Ok(gpus_named(m, devices, train, "training")?)
}

/// The work model of `options` fitted on the launches of `batch` on the GPUs `train` names.
pub(super) fn fit_work_model(
    cx: &StepContext<'_>,
    batch: &arrow_array::RecordBatch,
    train: &[String],
    options: &WorkModelOptions,
) -> Result<WorkModel, StepError> {
    let devices = peaks_catalogue(cx, options.peaks);
    let m = work_measurements(batch, &devices, options.peaks)?;
    let train = training_gpus(&m, &devices, train)?;
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
