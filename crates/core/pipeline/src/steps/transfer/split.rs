//! `gpu_split`: a published study's split of GPUs, each test GPU's launches by the latency-aware
//! model and the methods that need no fit.

use serde::Deserialize;
use yosoku_models::transfer::Measurements;
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::{Figure, REPORT};

use super::super::counters::PublishedSpec;
use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::{default_level, group_function, mean_error_anchors};

pub(crate) const GPU_SPLIT: StepKind = StepKind::new::<SplitParams>(
    "gpu_split",
    Stage::Validate,
    "a published study's split of GPUs: each test GPU's launches by the latency-aware model and the methods that need no fit, errors by group and duration",
);

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
