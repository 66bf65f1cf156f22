//! The transfer family: `gpu_transfer_fit`, the transfer models fitted on every launch of an
//! `observations` table; `gpu_transfer`, a kernel's time on a GPU never timed, and of a kernel
//! never timed, that model validated out of sample scheme by scheme beside the analytical
//! baselines (docs/methods.md, section 6); `gpu_split`, a published study's split of GPUs;
//! `work_forecast` (its own file), kernels described by their work alone forecast before any
//! measurement; and `forecast_score`, a saved forecast scored against the runs measured after it.

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::Model;
use yosoku_models::ModelError;
use yosoku_models::counters::Observations;
use yosoku_models::transfer::Measurements;
use yosoku_models::transfer::data::counter;
use yosoku_models::transfer::forecast::ModelScore;
use yosoku_models::transfer::predict::{GpuTransfer, TransferOptions, TransferTraining};
use yosoku_models::transfer::report::{
    coefficients_batch, predictions_batch, report, scores_batch,
};
use yosoku_models::transfer::schemes::{Scheme, validate};
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::{
    Figure, OBSERVATIONS, PREDICTIONS, REPORT, TRANSFER_COEFFICIENTS, TRANSFER_SCORES,
};

mod work_forecast;

pub(crate) use work_forecast::WORK_FORECAST;

use super::counters::PublishedSpec;
use super::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, TrainingTable, names,
};

pub(crate) const GPU_TRANSFER_FIT: StepKind = StepKind::new::<TransferFitParams>(
    "gpu_transfer_fit",
    Stage::Fit,
    "the transfer models fitted on every launch: how a launch's time changes between GPUs with their catalogue rows",
);

pub(crate) const GPU_TRANSFER: StepKind = StepKind::new::<TransferParams>(
    "gpu_transfer",
    Stage::Validate,
    "held-out GPUs and kernels predicted from the device catalogue: learned transfer models beside wave scaling and cores x clock",
);

pub(crate) const GPU_SPLIT: StepKind = StepKind::new::<SplitParams>(
    "gpu_split",
    Stage::Validate,
    "a published study's split of GPUs: each test GPU's launches by the latency-aware model and the methods that need no fit, errors by group and duration",
);

pub(crate) const FORECAST_SCORE: StepKind = StepKind::new::<ForecastScoreStep>(
    "forecast_score",
    Stage::Validate,
    "a forecast made before the measurement against it, per kernel and size",
);
/// The `published` figures of a step scored by mean |error|: (row, value), each with its value.
fn mean_error_anchors(published: &[PublishedSpec]) -> Result<Vec<(String, f64)>, ParamError> {
    published
        .iter()
        .map(|p| {
            p.value.map(|v| (p.row.clone(), v)).ok_or_else(|| {
                ParamError::new(
                    "published",
                    format!(
                        "published figure `{}`: give its `value` (mean |error| in %)",
                        p.row
                    ),
                )
            })
        })
        .collect()
}

pub(super) fn default_level() -> f64 {
    0.95
}

/// Operator (program) -> its group: the one `groups` names, else `other_group`, else its own.
pub(super) fn group_function<'a>(
    groups: &'a std::collections::BTreeMap<String, String>,
    other_group: Option<&'a String>,
) -> impl Fn(&str) -> String + 'a {
    move |program: &str| {
        groups
            .get(program)
            .or(other_group)
            .cloned()
            .unwrap_or_else(|| program.to_owned())
    }
}

fn default_predictions() -> String {
    "learned".to_owned()
}

/// `gpu_transfer_fit`: the transfer models fitted on one `observations` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferFitParams {
    pub observations: TableRef,
    /// Leave out (and say so) the rows of devices the catalogue lacks, instead of failing.
    #[serde(default)]
    pub skip_unknown_devices: bool,
}

#[derive(Debug)]
pub struct TransferFit {
    observations: TableRef,
    skip_unknown_devices: bool,
}

impl StepParams for TransferFitParams {
    type Step = TransferFit;
    fn into_step(self) -> Result<TransferFit, ParamError> {
        Ok(TransferFit {
            observations: self.observations,
            skip_unknown_devices: self.skip_unknown_devices,
        })
    }
}

impl TransferFit {
    fn definition(&self) -> ModelDefinition {
        ModelDefinition {
            observations: self.observations.get_ref().clone(),
            model: DefinedModel::Transfer {
                skip_unknown_devices: self.skip_unknown_devices,
            },
        }
    }
}

impl Step for TransferFit {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS, &TRANSFER_COEFFICIENTS])
    }

    fn model_definition(&self) -> Option<ModelDefinition> {
        Some(self.definition())
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = cx.input(&self.observations)?;
        let options = TransferOptions {
            skip_unknown_devices: self.skip_unknown_devices,
        };
        let m = GpuTransfer::training_measurements(
            TransferTraining {
                observations: batch,
                devices: cx.devices,
            },
            &options,
        )?;
        let model = GpuTransfer::fit_measurements(&m)?;
        // The training launches, with only the columns the models read: what `yosoku predict`
        // fits on, a few MB where the input has hundreds of counters.
        let schema = batch.schema();
        let keep: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| {
                let name = schema.field(i).name().as_str();
                OBSERVATIONS.fields().iter().any(|f| f.name() == name)
                    || counter::ALL.contains(&name)
            })
            .collect();
        let training = batch
            .project(&keep)
            .map_err(|e| StepError::Invalid(format!("the training launches: {e}")))?;
        Ok(StepOutput::new()
            .table(&OBSERVATIONS, training)
            .table(&TRANSFER_COEFFICIENTS, coefficients_batch(&model.transfer)?)
            .model(self.definition())
            .saved_model(
                GpuTransfer::KIND,
                TrainingTable::Own(OBSERVATIONS.name.to_owned()),
                &[&TRANSFER_COEFFICIENTS],
            )
            .saved_parameters(GpuTransfer::options_record(&options)?, model.to_json()?))
    }
}

/// `gpu_transfer`: every scheme named, refitting the model of a `gpu_transfer_fit` step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferParams {
    /// The `gpu_transfer_fit` step whose model is validated.
    pub model: Spanned<String>,
    /// Scheme names; all four when absent.
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
        } => Ok(skip_unknown_devices),
        DefinedModel::Counters(_) => Err(format!(
            "names {}; `gpu_transfer` validates a `gpu_transfer_fit` step",
            model.family()
        )),
    }
}

/// `gpu_split`: the launches of the `test` GPUs predicted from the `train` GPUs (docs/methods.md,
/// section 6), errors by operator group and by measured duration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitParams {
    pub observations: TableRef,
    /// The training GPUs and the test GPUs of a fixed split ...
    #[serde(default)]
    pub train: Vec<String>,
    #[serde(default)]
    pub test: Vec<String>,
    /// ... or GPUs each left out in turn, the others training.
    #[serde(default)]
    pub leave_one_out: Vec<String>,
    /// With `leave_one_out`: only the launches measured on every one of its GPUs.
    #[serde(default)]
    pub shared_only: bool,
    /// Operator (program) -> its group; an operator not named is in `other_group`, or its own.
    #[serde(default)]
    pub groups: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub other_group: Option<String>,
    /// With `train` and `test`: the one training GPU whose measured times the methods that
    /// start from one read (a user with one GPU's profile).
    #[serde(default)]
    pub profile_from: Option<String>,
    /// Coverage of the intervals.
    #[serde(default = "default_level")]
    pub level: f64,
    /// The GPUs' peaks: `datasheet`, or `measured` (a calibration's rates, every GPU's).
    #[serde(default = "default_peaks")]
    pub peaks: String,
    /// Published figures shown beside (each with a `value`, the mean |error| in %).
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

fn default_peaks() -> String {
    "datasheet".to_owned()
}

#[derive(Debug)]
pub struct Split {
    params: SplitParams,
    anchors: Vec<(String, f64)>,
}

impl StepParams for SplitParams {
    type Step = Split;
    fn into_step(self) -> Result<Split, ParamError> {
        let fixed = !self.train.is_empty() || !self.test.is_empty();
        match (fixed, self.leave_one_out.len()) {
            (true, 0) => {
                for (key, list) in [("train", &self.train), ("test", &self.test)] {
                    if list.is_empty() {
                        return Err(ParamError::new(
                            key,
                            format!("`{key}`: name at least one GPU"),
                        ));
                    }
                }
            }
            (false, n) if n >= 2 => {}
            (false, _) => {
                return Err(ParamError::new(
                    "leave_one_out",
                    "give `train` and `test`, or at least two GPUs in `leave_one_out`",
                ));
            }
            (true, _) => {
                return Err(ParamError::new(
                    "leave_one_out",
                    "give `train` and `test`, or `leave_one_out`, not both",
                ));
            }
        }
        if self.shared_only && self.leave_one_out.is_empty() {
            return Err(ParamError::new(
                "shared_only",
                "`shared_only` goes with `leave_one_out`",
            ));
        }
        if self.profile_from.is_some() && !fixed {
            return Err(ParamError::new(
                "profile_from",
                "`profile_from` goes with `train` and `test`",
            ));
        }
        if !(0.5..1.0).contains(&self.level) {
            return Err(ParamError::new(
                "level",
                format!("level {}: expected a number in [0.5, 1)", self.level),
            ));
        }
        if !matches!(self.peaks.as_str(), "datasheet" | "measured") {
            return Err(ParamError::new(
                "peaks",
                format!(
                    "`peaks = \"{}\"`: expected `datasheet` or `measured`",
                    self.peaks
                ),
            ));
        }
        let anchors = mean_error_anchors(&self.published)?;
        Ok(Split {
            params: self,
            anchors,
        })
    }
}

impl Step for Split {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.params.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&REPORT])
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        use yosoku_models::transfer::split::{
            SplitOptions, gpus_named, score_leave_one_out, score_split,
        };
        let p = &self.params;
        let measured_peaks;
        let devices = if p.peaks == "measured" {
            measured_peaks = cx.devices.with_measured_peaks();
            &measured_peaks
        } else {
            cx.devices
        };
        let m = Measurements::from_profile(cx.input(&p.observations)?, devices)?;
        if p.peaks == "measured"
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
        let group_of = group_function(&p.groups, p.other_group.as_ref());
        let (scores, title) = if p.leave_one_out.is_empty() {
            let train = gpus_named(&m, cx.devices, &p.train, "training")?;
            let test = gpus_named(&m, cx.devices, &p.test, "test")?;
            let profile_from = match &p.profile_from {
                Some(name) => {
                    Some(gpus_named(&m, cx.devices, std::slice::from_ref(name), "profile")?[0])
                }
                None => None,
            };
            let title = format!(
                "{} predicted from {}{}: mean / median |error| % (launches answered; share in the intervals)",
                p.test.join(", "),
                p.train.join(", "),
                p.profile_from
                    .as_ref()
                    .map(|g| format!(", times measured on {g} alone"))
                    .unwrap_or_default()
            );
            let options = SplitOptions {
                level: p.level,
                profile_from,
            };
            (score_split(&m, &train, &test, &group_of, options)?, title)
        } else {
            let gpus = gpus_named(&m, cx.devices, &p.leave_one_out, "left-out")?;
            let title = format!(
                "each of {} predicted from the others{}: mean / median |error| % (launches answered; share in the intervals)",
                p.leave_one_out.join(", "),
                if p.shared_only {
                    ", on the launches all of them measured"
                } else {
                    ""
                }
            );
            (
                score_leave_one_out(&m, &gpus, p.shared_only, &group_of, p.level)?,
                title,
            )
        };
        let mut cells = Vec::new();
        let mut figures = Vec::new();
        for s in &scores {
            let column = format!("{} ({})", s.group, s.band);
            cells.push(ReportCell::text(
                &title,
                s.method,
                &column,
                format!(
                    "{:.1} / {:.1} ({} of {}; {})",
                    s.mean_abs_error_pct,
                    s.median_abs_error_pct,
                    s.answered,
                    s.rows,
                    if s.coverage_pct.is_finite() {
                        format!("{:.0} % in the intervals", s.coverage_pct)
                    } else {
                        "no intervals".to_owned()
                    }
                ),
            ));
            if s.answered > 0 {
                let name = format!("{}, {}, {}", s.group, s.band, s.method);
                figures.push(Figure::new(
                    format!("{name}: mean |error|"),
                    s.mean_abs_error_pct,
                    "%",
                ));
                figures.push(Figure::new(
                    format!("{name}: median |error|"),
                    s.median_abs_error_pct,
                    "%",
                ));
                if s.coverage_pct.is_finite() {
                    figures.push(Figure::new(
                        format!("{name}: interval coverage"),
                        s.coverage_pct,
                        "%",
                    ));
                }
            }
        }
        for (label, value) in &self.anchors {
            cells.push(ReportCell::number(
                &title,
                format!("published: {label}"),
                "mean |error| %",
                *value,
                "%",
            ));
        }
        Ok(StepOutput::new()
            .table(&REPORT, report_batch(&cells)?)
            .figures(figures))
    }
}

/// `forecast_score`: a forecast (the `predictions` of `yosoku predict --save`, no measured
/// times) against the runs measured after it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForecastScoreStep {
    pub forecast: TableRef,
    /// A `runs` table: the kernels measured on the forecast's device.
    pub measured: TableRef,
    /// The device measured, where the forecast is of several (its other devices' rows are
    /// left out of the score).
    #[serde(default)]
    pub device: Option<String>,
}

impl StepParams for ForecastScoreStep {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for ForecastScoreStep {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.forecast, &self.measured]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let scored = yosoku_models::transfer::forecast::score_forecast(
            cx.input(&self.forecast)?,
            cx.input(&self.measured)?,
            cx.devices,
            self.device.as_deref(),
        )?;
        let mut figures = Vec::new();
        for s in &scored.scores {
            figures.extend(score_figures(s));
        }
        Ok(StepOutput::new()
            .table(&PREDICTIONS, scored.predictions)
            .table(&REPORT, report_batch(&score_report(&scored.scores))?)
            .figures(figures))
    }
}

/// The scores as the CLI prints them: per model a table of its kernels (every kernel first).
fn score_report(scores: &[ModelScore]) -> Vec<ReportCell> {
    let mut cells = Vec::new();
    for s in scores {
        let title = format!("{}: the forecast against the measurement", s.model);
        let band_row;
        let row = match (&s.kernel, s.band) {
            (Some(k), _) => k.as_str(),
            (None, Some(band)) => {
                band_row = format!("every kernel, measured {band}");
                band_row.as_str()
            }
            (None, None) => "every kernel",
        };
        let share = (s.with_interval > 0)
            .then(|| 100.0 * s.inside_interval as f64 / s.with_interval as f64);
        for (column, value, unit) in [
            ("sizes measured", Some(s.measured_pairs as f64), ""),
            ("median |error| %", s.median_abs_error_pct, "%"),
            ("median error %", s.median_error_pct, "%"),
            ("intervals holding %", share, "%"),
        ] {
            cells.push(ReportCell::number(
                &title,
                row,
                column,
                value.unwrap_or(f64::NAN),
                unit,
            ));
        }
    }
    cells
}

/// A forecast score's figures: over every kernel, the median |error| and the interval coverage
/// as headlines; per kernel, the median |error|, the median signed error and the coverage.
fn score_figures(s: &ModelScore) -> Vec<Figure> {
    let mut figures = Vec::new();
    let m = match (&s.kernel, s.band) {
        (Some(k), _) => format!("{} / {k}", s.model),
        (None, Some(band)) => format!("{}, measured {band}", s.model),
        (None, None) => s.model.clone(),
    };
    let every = s.kernel.is_none() && s.band.is_none();
    let headline = |f: Figure| if every { f.headline() } else { f };
    if let Some(e) = s.median_abs_error_pct {
        figures.push(headline(Figure::new(
            format!("{m}: median |error|"),
            e,
            "%",
        )));
    }
    if let Some(e) = s.median_error_pct {
        figures.push(Figure::new(format!("{m}: median error (signed)"), e, "%"));
    }
    if let Some(e) = s.mean_abs_error_pct.filter(|_| every) {
        figures.push(Figure::new(format!("{m}: mean |error|"), e, "%"));
    }
    if s.with_interval > 0 {
        figures.push(headline(Figure::new(
            format!("{m}: intervals holding the measured median"),
            100.0 * s.inside_interval as f64 / s.with_interval as f64,
            "%",
        )));
    }
    if every {
        for (what, n) in [
            ("measured medians inside the interval", s.inside_interval),
            ("measured kernel sizes with an interval", s.with_interval),
            ("kernel sizes forecast", s.pairs),
        ] {
            figures.push(Figure::new(format!("{m}: {what}"), n as f64, ""));
        }
    }
    figures.push(Figure::new(
        format!("{m}: kernel sizes measured"),
        s.measured_pairs as f64,
        "",
    ));
    figures
}

#[cfg(test)]
mod tests {
    use super::super::testing::{observations, parse_error, run_error};

    #[test]
    fn a_split_is_fixed_or_leave_one_out_never_both_nor_neither() {
        let step = "step = \"gpu_split\"\nid = \"s\"\nobservations = \"src.observations\"";
        for (extra, expected) in [
            (
                "",
                "give `train` and `test`, or at least two GPUs in `leave_one_out`",
            ),
            ("train = [\"A\"]", "`test`: name at least one GPU"),
            (
                "train = [\"A\"]\ntest = [\"B\"]\nleave_one_out = [\"A\", \"B\"]",
                "give `train` and `test`, or `leave_one_out`, not both",
            ),
            (
                "leave_one_out = [\"A\"]",
                "at least two GPUs in `leave_one_out`",
            ),
            (
                "train = [\"A\"]\ntest = [\"B\"]\nshared_only = true",
                "`shared_only` goes with `leave_one_out`",
            ),
            (
                "leave_one_out = [\"A\", \"B\"]\nprofile_from = \"A\"",
                "`profile_from` goes with `train` and `test`",
            ),
            (
                "train = [\"A\"]\ntest = [\"B\"]\nlevel = 1.0",
                "level 1: expected a number in [0.5, 1)",
            ),
            (
                "train = [\"A\"]\ntest = [\"B\"]\npeaks = \"best\"",
                "`peaks = \"best\"`: expected `datasheet` or `measured`",
            ),
            (
                "train = [\"A\"]\ntest = [\"B\"]\npublished = [{ row = \"x\" }]",
                "published figure `x`: give its `value`",
            ),
        ] {
            let e = parse_error("validate", &format!("{step}\n{extra}"));
            assert!(
                e.starts_with("p.toml:") && e.contains(expected),
                "{extra}: {e}"
            );
        }
    }

    #[test]
    fn bad_parameters_are_refused_at_their_key() {
        let step = "step = \"gpu_transfer\"\nid = \"t\"\nmodel = \"m\"";
        let e = parse_error(
            "validate",
            &format!("{step}\nschemes = [\"leave_one_out\"]"),
        );
        assert!(e.contains("p.toml:8:"), "{e}");
        assert!(
            e.contains("unknown scheme `leave_one_out`; expected one of leave_one_gpu_out"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{step}\nlevel = 1.5"));
        assert!(
            e.contains("level 1.5: expected a number in [0.5, 1)"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{step}\npredictions = \"some\""));
        assert!(e.contains("expected `learned` or `all`"), "{e}");
        let e = parse_error(
            "validate",
            &format!("{step}\npublished = [{{ row = \"Habitat\", text = \"11.8\" }}]"),
        );
        assert!(
            e.contains("published figure `Habitat`: give its `value`"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{step}\nlevels = 0.9"));
        assert!(e.contains("unknown field `levels`"), "{e}");
    }

    #[test]
    fn a_model_of_another_family_is_refused_at_the_step() {
        let transfer_fit =
            "[[fit]]\nstep = \"gpu_transfer_fit\"\nid = \"m\"\nobservations = \"src.observations\"";
        let ols = "[[fit]]\nstep = \"ols\"\nid = \"m\"\nobservations = \"src.observations\"\nfeatures = [\"x\"]";
        let validate = "[[validate]]\nstep = \"gpu_transfer\"\nid = \"t\"\nmodel = \"m\"";
        let cv = "[[validate]]\nstep = \"cross_validate\"\nid = \"t\"\nmodel = \"m\"";
        for (fit, step, expected) in [
            (
                ols,
                validate,
                "names an `ols` or `stepwise` fit step; `gpu_transfer` validates a `gpu_transfer_fit` step",
            ),
            (
                transfer_fit,
                cv,
                "names a `gpu_transfer_fit` step; cross-validation refits an `ols` or `stepwise` fit step",
            ),
        ] {
            let text = super::super::testing::pipeline(&format!("{fit}\n\n{step}"));
            let e = crate::PipelineSpec::parse("p.toml", &text)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("p.toml:") && e.contains("key `model`"), "{e}");
            assert!(e.contains(expected), "{e}");
        }
    }

    #[test]
    fn a_device_the_catalogue_lacks_or_missing_counters_stop_the_step() {
        let steps = "[[fit]]\nstep = \"gpu_transfer_fit\"\nid = \"m\"\nobservations = \"src.observations\"\n\n[[validate]]\nstep = \"gpu_transfer\"\nid = \"t\"\nmodel = \"m\"";
        let counters: &[(&str, &[f64])] = &[
            ("inst_executed", &[1e6, 1e6]),
            ("dram_read_transactions", &[1e4, 1e4]),
            ("grid_x", &[64.0, 64.0]),
            ("block_x", &[256.0, 256.0]),
        ];
        let obs = observations(&["GTX-680", "GeForce GTX 9800"], &[1e-3, 2e-3], counters);
        let e = run_error(steps, vec![("observations", obs)]);
        assert!(e.contains("step `m` (gpu_transfer_fit)"), "{e}");
        assert!(
            e.contains("device `GeForce GTX 9800` is not in the device catalogue (closest:"),
            "{e}"
        );
        assert!(e.contains("skip_unknown_devices = true"), "{e}");
        let obs = observations(&["GTX-680", "GTX-980"], &[1e-3, 2e-3], &counters[1..]);
        let e = run_error(steps, vec![("observations", obs)]);
        assert!(
            e.contains("the transfer models need counters the table lacks: warp instructions"),
            "{e}"
        );
    }
}
