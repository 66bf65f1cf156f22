//! `work_forecast`: kernels described by their work alone (grid, block, FLOPs, DRAM bytes),
//! never measured on any GPU, forecast on GPUs of the catalogue by the latency-aware model fitted
//! on the training GPUs' launches of other kernels, with the datasheet's roofline beside
//! (docs/methods.md, section 6). The forecast is a `predictions` table without measured times,
//! the form `forecast_score` scores once the kernels are measured.

use serde::Deserialize;
use yosoku_models::transfer::split::gpus_named;
use yosoku_models::transfer::work_forecast::{WorkLaunch, forecast_work};
use yosoku_models::transfer::{GpuSpec, Measurements};
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::rows::{PredictionRow, predictions_batch};
use yosoku_tables::{Figure, PREDICTIONS, REPORT};

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::{check_launches, default_level, group_function};

pub(crate) const WORK_FORECAST: StepKind = StepKind::new::<WorkForecastParams>(
    "work_forecast",
    Stage::Validate,
    "kernels described by their work alone forecast on GPUs of the catalogue by the latency-aware model, the roofline beside",
);

/// What the `validation` column of a forecast row says.
pub const VALIDATION_WORK_FORECAST: &str =
    "forecast from the kernel's work alone, before any measurement";

/// `work_forecast`'s keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkForecastParams {
    /// The training launches (an `observations` table with each launch's work and time).
    pub observations: TableRef,
    /// The GPUs of `observations` the model is fitted on.
    pub train: Vec<String>,
    /// The GPUs forecast: catalogue names or aliases.
    pub on: Vec<String>,
    /// Operator (program) -> its group; one not named is in `other_group`, or its own.
    #[serde(default)]
    pub groups: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    pub other_group: Option<String>,
    #[serde(default = "default_level")]
    pub level: f64,
    /// The launches forecast.
    pub launches: Vec<WorkLaunch>,
}

#[derive(Debug)]
pub struct WorkForecastStep {
    params: WorkForecastParams,
}

impl StepParams for WorkForecastParams {
    type Step = WorkForecastStep;
    fn into_step(self) -> Result<WorkForecastStep, ParamError> {
        for (key, list) in [("train", &self.train), ("on", &self.on)] {
            if list.is_empty() {
                return Err(ParamError::new(
                    key,
                    format!("`{key}`: name at least one GPU"),
                ));
            }
        }
        if !(0.5..1.0).contains(&self.level) {
            return Err(ParamError::new(
                "level",
                format!("level {}: expected a number in [0.5, 1)", self.level),
            ));
        }
        check_launches(&self.launches)?;
        Ok(WorkForecastStep { params: self })
    }
}

impl Step for WorkForecastStep {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.params.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let p = &self.params;
        let m = Measurements::from_profile(cx.input(&p.observations)?, cx.devices)?;
        let train = gpus_named(&m, cx.devices, &p.train, "training")?;
        let targets =
            p.on.iter()
                .map(|name| {
                    let device = cx.devices.find(name).ok_or_else(|| {
                        StepError::Invalid(format!(
                            "`on`: `{name}` is not in the device catalogue (closest: {})",
                            cx.devices.closest(name, 3).join(", ")
                        ))
                    })?;
                    GpuSpec::from_device(device)
                        .map_err(|e| StepError::Invalid(format!("`on`: `{name}`: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
        let launches = &p.launches;
        let group_of = group_function(&p.groups, p.other_group.as_ref());
        let result = forecast_work(&m, &train, &targets, launches, &group_of, p.level)?;
        let rows: Vec<PredictionRow> = result
            .forecasts
            .iter()
            .map(|f| PredictionRow {
                model: f.method.to_owned(),
                device: f.target.clone(),
                program: launches[f.launch].program.clone(),
                variant: launches[f.launch].variant.clone(),
                phase: "kernel".to_owned(),
                repetitions: 1,
                predicted_secs: f.secs,
                measured_secs: None,
                error_pct: None,
                flags: None,
                run_id: None,
                model_group: None,
                validation: Some(VALIDATION_WORK_FORECAST.to_owned()),
                held_out: None,
                interval_secs: f.interval_secs,
            })
            .collect();
        let title = format!(
            "forecast from the work alone on {}, model fitted on {}: time of one launch, {} % interval",
            p.on.join(", "),
            p.train.join(", "),
            100.0 * p.level
        );
        let mut cells = Vec::new();
        for f in &result.forecasts {
            let l = &launches[f.launch];
            cells.push(ReportCell::text(
                &title,
                format!("{} {}", l.program, l.variant),
                format!("{}, {}", f.target, f.method),
                match f.interval_secs {
                    Some((lo, hi)) => format!("{:.3e} s [{lo:.3e}, {hi:.3e}]", f.secs),
                    None => format!("{:.3e} s", f.secs),
                },
            ));
        }
        let stated_title = format!(
            "what the methods state of themselves: each of {} and each operator group ({}) left out together, predicted from the rest",
            p.train.join(", "),
            result.groups.join(", ")
        );
        let mut figures = Vec::new();
        for s in &result.stated {
            cells.push(ReportCell::number(
                &stated_title,
                s.method,
                "median |error| %",
                s.median_abs_error_pct,
                "%",
            ));
            cells.push(ReportCell::number(
                &stated_title,
                s.method,
                "launches",
                s.launches as f64,
                "",
            ));
            figures.push(Figure::new(
                format!("{}: stated median |error|", s.method),
                s.median_abs_error_pct,
                "%",
            ));
            if let Some(h) = s.half_width {
                figures.push(Figure::new(
                    format!("{}: interval factor", s.method),
                    h.exp(),
                    "x",
                ));
            }
        }
        Ok(StepOutput::new()
            .table(&PREDICTIONS, predictions_batch(&rows)?)
            .table(&REPORT, report_batch(&cells)?)
            .figures(figures))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{observations, parse_error, run_error};

    /// Every refusal of the step's keys names the key and what was expected.
    #[test]
    fn bad_launches_and_lists_are_refused_at_their_key() {
        let step = "step = \"work_forecast\"\nid = \"f\"\nobservations = \"src.observations\"";
        let launch = "{ program = \"k\", variant = \"1\", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }";
        let good = format!("train = [\"A\", \"B\"]\non = [\"H100\"]\nlaunches = [{launch}]");
        for (extra, expected) in [
            (
                format!("train = []\non = [\"H100\"]\nlaunches = [{launch}]"),
                "`train`: name at least one GPU",
            ),
            (
                format!("train = [\"A\"]\non = []\nlaunches = [{launch}]"),
                "`on`: name at least one GPU",
            ),
            (
                "train = [\"A\"]\non = [\"H100\"]\nlaunches = []".to_owned(),
                "`launches`: describe at least one launch",
            ),
            (
                format!("{good}\nlevel = 0.3"),
                "level 0.3: expected a number in [0.5, 1)",
            ),
            (
                "train = [\"A\"]\non = [\"H100\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 0, threads_per_block = 32, flops = 10, dram_bytes = 64 }]".to_owned(),
                "launch 1 (k 1): `blocks` is 0; expected a number >= 1",
            ),
            (
                "train = [\"A\"]\non = [\"H100\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 0, dram_bytes = 0 }]".to_owned(),
                "no FLOPs and no DRAM bytes",
            ),
            (
                "train = [\"A\"]\non = [\"H100\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 1 }]".to_owned(),
                "missing field `dram_bytes`",
            ),
        ] {
            let e = parse_error("validate", &format!("{step}\n{extra}"));
            assert!(
                e.starts_with("p.toml:") && e.contains(expected),
                "{extra}: {e}"
            );
        }
    }

    /// At run time: a target the catalogue lacks names the closest entries; a training GPU with
    /// no launch in the table names the GPUs it has.
    #[test]
    fn an_unknown_target_or_training_gpu_stops_the_step() {
        let counters: &[(&str, &[f64])] = &[
            ("flop_count_sp", &[1e6, 1e6]),
            ("gld_bytes", &[1e5, 1e5]),
            ("grid_size", &[64.0, 64.0]),
            ("block_size", &[256.0, 256.0]),
        ];
        let launch = "{ program = \"k\", variant = \"1\", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }";
        let step = |train: &str, on: &str| {
            format!(
                "[[validate]]\nstep = \"work_forecast\"\nid = \"f\"\nobservations = \"src.observations\"\ntrain = [{train}]\non = [{on}]\nlaunches = [{launch}]"
            )
        };
        let obs = || observations(&["Tesla T4", "Tesla P4"], &[1e-4, 2e-4], counters);
        for (train, on, expected) in [
            (
                "\"T4\", \"P4\"",
                "\"H1000\"",
                "`on`: `H1000` is not in the device catalogue (closest:",
            ),
            (
                "\"T4\", \"L4\"",
                "\"H100\"",
                "training GPU `L4` has no launch in the input",
            ),
        ] {
            let e = run_error(&step(train, on), vec![("observations", obs())]);
            assert!(e.contains(expected), "{e}");
        }
    }
}
