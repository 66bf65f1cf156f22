//! `gpu_split`: a published study's split of GPUs, each test GPU's launches by the latency-aware
//! model a `work_model_fit` step defines, refitted on the split's training GPUs, and the methods
//! that need no fit.

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::transfer::Measurements;
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::{Figure, REPORT};

use super::super::counters::PublishedSpec;
use super::super::step::{
    ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput,
    StepParams, TableRef, names,
};
use super::shared::mean_error_anchors;
use super::work_model_fit::{peaks_catalogue, training_gpus, work_measurements, work_model};

/// What the step names a model for, when it names another family's.
const WORK_MODEL_NEEDED: &str = "`gpu_split` validates a `work_model_fit` step's model";

pub(crate) const GPU_SPLIT: StepKind = StepKind::new::<SplitParams>(
    "gpu_split",
    Stage::Validate,
    "a published study's split of GPUs: each test GPU's launches by a work_model_fit step's latency-aware model refitted on the split's training GPUs, and the methods that need no fit, errors by group and duration",
);

/// `gpu_split`: the launches of the `test` GPUs predicted from the `train` GPUs (docs/methods.md,
/// section 6), errors by operator group and by measured duration.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitParams {
    /// The `work_model_fit` step whose model (its launches, operator groups, level and peaks)
    /// the split validates: every GPU the split names is one of its training GPUs.
    pub model: Spanned<String>,
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
    /// With `train` and `test`: the one training GPU whose measured times the methods that
    /// start from one read (a user with one GPU's profile).
    #[serde(default)]
    pub profile_from: Option<String>,
    /// Published figures shown beside (each with a `value`, the mean |error| in %).
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
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
        let anchors = mean_error_anchors(&self.published)?;
        Ok(Split {
            params: self,
            anchors,
        })
    }
}

/// Every GPU a split names among the model's training GPUs: a split holds out of the model's
/// training launches, never brings others in.
fn check_in_model(
    m: &Measurements,
    named: &[usize],
    model_gpus: &[usize],
    model: &str,
) -> Result<(), StepError> {
    match named.iter().find(|g| !model_gpus.contains(g)) {
        Some(&g) => Err(StepError::Invalid(format!(
            "GPU `{}` is not one of the training GPUs of model `{model}` ({}): a split holds GPUs out of its model's launches",
            m.gpus[g].name,
            model_gpus
                .iter()
                .map(|&g| m.gpus[g].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        None => Ok(()),
    }
}

impl Step for Split {
    fn inputs(&self) -> Vec<&TableRef> {
        // The launches are checked through the model reference.
        vec![]
    }

    fn model_input(&self) -> Option<&Spanned<String>> {
        Some(&self.params.model)
    }

    fn check_model(&self, model: &ModelDefinition) -> Result<(), ParamError> {
        work_model(model, WORK_MODEL_NEEDED)
            .map(|_| ())
            .map_err(|e| ParamError::new("model", e))
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
        let (definition, batch) = cx.model_observations(&p.model)?;
        let (options, model_train) =
            work_model(definition, WORK_MODEL_NEEDED).map_err(StepError::Invalid)?;
        let devices = peaks_catalogue(cx, options.peaks);
        let m = work_measurements(batch, &devices, options.peaks)?;
        let model_gpus = training_gpus(&m, &devices, model_train)?;
        let in_model = |named: &[usize]| check_in_model(&m, named, &model_gpus, p.model.get_ref());
        let group_of = |program: &str| options.group_of(program);
        let (scores, title) = if p.leave_one_out.is_empty() {
            let train = gpus_named(&m, cx.devices, &p.train, "training")?;
            let test = gpus_named(&m, cx.devices, &p.test, "test")?;
            in_model(&train)?;
            in_model(&test)?;
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
            let split = SplitOptions {
                level: options.level,
                profile_from,
            };
            (score_split(&m, &train, &test, &group_of, split)?, title)
        } else {
            let gpus = gpus_named(&m, cx.devices, &p.leave_one_out, "left-out")?;
            in_model(&gpus)?;
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
                score_leave_one_out(&m, &gpus, p.shared_only, &group_of, options.level)?,
                title,
            )
        };
        let mut cells = Vec::new();
        let mut figures = Vec::new();
        for s in &scores {
            let column = format!("{} ({})", s.group, s.band);
            cells.push(ReportCell::text(&title, s.method, &column, cell_text(s)));
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
                if s.median_signed_error_pct.is_finite() {
                    figures.push(Figure::new(
                        format!("{name}: median signed error"),
                        s.median_signed_error_pct,
                        "%",
                    ));
                    figures.push(Figure::new(
                        format!("{name}: median |error| with one factor removed"),
                        s.one_factor_error_pct,
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
            .figures(figures)
            .scores(&REPORT))
    }
}

/// One method's cell of the report: mean / median |error|, launches answered, the intervals'
/// share, and where the group has them the bias figures.
fn cell_text(s: &yosoku_models::transfer::split::SplitScore) -> String {
    format!(
        "{:.1} / {:.1} ({} of {}; {}{})",
        s.mean_abs_error_pct,
        s.median_abs_error_pct,
        s.answered,
        s.rows,
        if s.coverage_pct.is_finite() {
            format!("{:.0} % in the intervals", s.coverage_pct)
        } else {
            "no intervals".to_owned()
        },
        if s.median_signed_error_pct.is_finite() {
            format!(
                "; median signed {:+.1} %, {:.1} % with one factor removed",
                s.median_signed_error_pct, s.one_factor_error_pct
            )
        } else {
            String::new()
        }
    )
}
