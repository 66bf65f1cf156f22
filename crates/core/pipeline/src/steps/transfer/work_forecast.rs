//! `work_forecast`: kernels described by their work alone (grid, block, FLOPs, DRAM bytes),
//! never measured on any GPU, forecast on GPUs of the catalogue by the latency-aware model a
//! `work_model_fit` step fits on the training GPUs' launches of other kernels, with the
//! datasheet's roofline beside, and the physics model (nothing fitted: the GPU's calibration
//! where its device entry has one, else its catalogue row) and the launch floor plus bytes over
//! bandwidth (docs/methods.md, section 6). The forecast is a `predictions` table without
//! measured times, the form `forecast_score` scores once the kernels are measured.

use serde::Deserialize;
use toml::Spanned;
use yosoku_devices::{Catalogue, Device};
use yosoku_models::Model;
use yosoku_models::transfer::GpuSpec;
use yosoku_models::transfer::physics::{GpuRates, floor_plus_bytes_secs, physics_time};
use yosoku_models::transfer::work_forecast::{WorkLaunch, WorkModel, WorkQuestion};
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::rows::{PredictionRow, predictions_batch};
use yosoku_tables::{Figure, PREDICTIONS, REPORT};

use super::super::step::{
    ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput,
    StepParams, TableRef, names,
};
use super::physics_forecast::{VALIDATION_PHYSICS_FORECAST, forecast_rows};
use super::shared::{check_launches, on_device};
use super::work_model_fit::{fit_work_model, peaks_catalogue, stated_cells, work_model};

/// What the step names a model for, when it names another family's.
const WORK_MODEL_NEEDED: &str = "`work_forecast` forecasts by a `work_model_fit` step's model";

pub(crate) const WORK_FORECAST: StepKind = StepKind::new::<WorkForecastParams>(
    "work_forecast",
    Stage::Validate,
    "kernels described by their work alone forecast on GPUs of the catalogue by a work_model_fit step's latency-aware model, the roofline, the physics model and floor plus bytes beside",
);

/// The physics methods a work forecast gives beside the learned model, in report order.
pub const WORK_PHYSICS_METHODS: [&str; 2] = ["physics", "floor_plus_bytes"];

/// What the `validation` column of a forecast row says.
pub const VALIDATION_WORK_FORECAST: &str =
    "forecast from the kernel's work alone, before any measurement";

/// `work_forecast`'s keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkForecastParams {
    /// The `work_model_fit` step whose model forecasts.
    pub model: Spanned<String>,
    /// The GPUs forecast: catalogue names or aliases.
    pub on: Vec<String>,
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
        if self.on.is_empty() {
            return Err(ParamError::new("on", "`on`: name at least one GPU"));
        }
        check_launches(&self.launches)?;
        Ok(WorkForecastStep { params: self })
    }
}

/// The GPU `on` names as `name`, from `devices`, and its catalogue row as the models read it.
fn target<'c>(devices: &'c Catalogue, name: &str) -> Result<(&'c Device, GpuSpec), StepError> {
    let device = on_device(devices, name)?;
    let spec = GpuSpec::from_device(device)
        .map_err(|e| StepError::Invalid(format!("`on`: `{name}`: {e}")))?;
    Ok((device, spec))
}

/// The GPUs `on` names, from the catalogue (with the peaks the model reads).
fn targets(devices: &Catalogue, on: &[String]) -> Result<Vec<GpuSpec>, StepError> {
    on.iter()
        .map(|name| target(devices, name).map(|(_, spec)| spec))
        .collect()
}

/// The physics model's rows of every launch on every GPU of `on` (its calibration's rates where
/// its device entry has them, else its catalogue row's, with the default launch floor where the
/// catalogue has none), and a report cell a GPU saying which rates answered.
fn physics_beside(
    cx: &StepContext<'_>,
    on: &[String],
    launches: &[WorkLaunch],
    cells: &mut Vec<ReportCell>,
) -> Result<Vec<PredictionRow>, StepError> {
    let mut rows = Vec::new();
    for name in on {
        let (device, spec) = target(cx.devices, name)?;
        let rates = GpuRates::from_device_or_spec(device, &spec);
        cells.push(ReportCell::number(
            "the physics model's rates: launch floor",
            &device.name,
            format!("{:?}", rates.source).to_lowercase(),
            rates.floor_secs * 1e6,
            "us",
        ));
        for l in launches {
            let work = l.kernel_work();
            let secs = [
                Some(physics_time(&work, &rates).secs),
                Some(floor_plus_bytes_secs(&work, &rates)),
            ];
            rows.extend(forecast_rows(
                l,
                &device.name,
                WORK_PHYSICS_METHODS.iter().zip(secs),
                VALIDATION_PHYSICS_FORECAST,
            ));
        }
    }
    Ok(rows)
}

impl Step for WorkForecastStep {
    fn inputs(&self) -> Vec<&TableRef> {
        // The training launches are checked through the model reference.
        vec![]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn model_input(&self) -> Option<&Spanned<String>> {
        Some(&self.params.model)
    }

    fn check_model(&self, model: &ModelDefinition) -> Result<(), ParamError> {
        work_model(model, WORK_MODEL_NEEDED)
            .map(|_| ())
            .map_err(|e| ParamError::new("model", e))
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let p = &self.params;
        let (definition, batch) = cx.model_observations(&p.model)?;
        let (options, train) =
            work_model(definition, WORK_MODEL_NEEDED).map_err(StepError::Invalid)?;
        // Fitted again as its fit step fitted it: a forecast holds nothing of the training
        // launches out (its GPUs and kernels are not among them).
        let model: WorkModel = fit_work_model(cx, batch, train, options)?;
        let targets = targets(&peaks_catalogue(cx, options.peaks), &p.on)?;
        let launches = &p.launches;
        let forecasts = model.predict(WorkQuestion {
            targets: &targets,
            launches,
        })?;
        let mut rows: Vec<PredictionRow> = forecasts
            .iter()
            .map(|f| PredictionRow {
                model: f.method.clone(),
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
            train.join(", "),
            100.0 * options.level
        );
        let mut cells = Vec::new();
        for f in &forecasts {
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
        cells.extend(stated_cells(&model));
        rows.extend(physics_beside(cx, &p.on, launches, &mut cells)?);
        let mut figures = Vec::new();
        for s in &model.stated {
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
            .figures(figures)
            .scores(&PREDICTIONS))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{observations_of, parse_error, pipeline, run_error};

    /// Every refusal of the fit step's and the forecast's keys names the key and what was
    /// expected; a forecast asks a `work_model_fit` step's model only.
    #[test]
    fn bad_launches_and_lists_are_refused_at_their_key() {
        let fit = "step = \"work_model_fit\"\nid = \"m\"\nobservations = \"src.observations\"";
        for (extra, expected) in [
            (
                "train = [\"A\", \"B\"]\nlevel = 0.3",
                "level 0.3: expected a number in [0.5, 1)",
            ),
            (
                "train = \"A\"",
                "invalid type: string \"A\", expected a sequence",
            ),
        ] {
            let e = parse_error("fit", &format!("{fit}\n{extra}"));
            assert!(
                e.starts_with("p.toml:") && e.contains(expected),
                "{extra}: {e}"
            );
        }
        let launch = "{ program = \"k\", variant = \"1\", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }";
        let forecast = |extra: &str| {
            let text = pipeline(&format!(
                "[[fit]]\n{fit}\ntrain = [\"A\", \"B\"]\n\n[[validate]]\nstep = \"work_forecast\"\nid = \"f\"\nmodel = \"m\"\n{extra}"
            ));
            crate::PipelineSpec::parse("p.toml", &text)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        for (extra, expected) in [
            (
                format!("on = []\nlaunches = [{launch}]"),
                "`on`: name at least one GPU",
            ),
            (
                "on = [\"H100\"]\nlaunches = []".to_owned(),
                "`launches`: describe at least one launch",
            ),
            (
                "on = [\"H100\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 0, threads_per_block = 32, flops = 10, dram_bytes = 64 }]".to_owned(),
                "launch 1 (k 1): `blocks` is 0; expected a number >= 1",
            ),
            (
                "on = [\"H100\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 0, dram_bytes = 0 }]".to_owned(),
                "no FLOPs and no DRAM bytes",
            ),
            (
                "on = [\"H100\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 1 }]".to_owned(),
                "missing field `dram_bytes`",
            ),
            (
                format!("on = [\"H100\"]\nlaunches = [{launch}]\ntrain = [\"A\"]"),
                "unknown field `train`",
            ),
        ] {
            let e = forecast(&extra);
            assert!(
                e.starts_with("p.toml:") && e.contains(expected),
                "{extra}: {e}"
            );
        }
        let text = pipeline(&format!(
            "[[fit]]\nstep = \"scaling_fit\"\nid = \"m\"\nruns = \"src.runs\"\n\n[[validate]]\nstep = \"work_forecast\"\nid = \"f\"\nmodel = \"m\"\non = [\"H100\"]\nlaunches = [{launch}]"
        ));
        let e = crate::PipelineSpec::parse("p.toml", &text)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("key `model`: names a `scaling_fit` step; `work_forecast` forecasts by a `work_model_fit` step's model"),
            "{e}"
        );
    }

    /// At run time: a target the catalogue lacks names the closest entries; a training GPU with
    /// no launch in the table names the GPUs it has.
    #[test]
    fn an_unknown_target_or_training_gpu_stops_the_step() {
        // Six kernels (operator groups) of growing work on two GPUs: enough launches for the
        // utilisation model, and at least two groups and GPUs for its interval.
        let programs = ["a", "b", "c", "d", "e", "f"];
        let rows: Vec<(&str, &str)> = programs
            .iter()
            .flat_map(|p| [("Tesla T4", *p), ("Tesla P4", *p)])
            .collect();
        let scale: Vec<f64> = (0..rows.len()).map(|i| (1 + i / 2) as f64).collect();
        let times: Vec<f64> = scale
            .iter()
            .enumerate()
            .map(|(i, s)| s * if i % 2 == 0 { 1e-4 } else { 2e-4 })
            .collect();
        let column = |per: f64| scale.iter().map(|s| s * per).collect::<Vec<f64>>();
        let (flops, bytes, grid, block) = (
            column(1e6),
            column(1e5),
            column(64.0),
            vec![256.0; rows.len()],
        );
        let counters: &[(&str, &[f64])] = &[
            ("flop_count_sp", &flops),
            ("gld_bytes", &bytes),
            ("grid_size", &grid),
            ("block_size", &block),
        ];
        let launch = "{ program = \"k\", variant = \"1\", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }";
        let step = |train: &str, on: &str| {
            format!(
                "[[fit]]\nstep = \"work_model_fit\"\nid = \"m\"\nobservations = \"src.observations\"\ntrain = [{train}]\n\n[[validate]]\nstep = \"work_forecast\"\nid = \"f\"\nmodel = \"m\"\non = [{on}]\nlaunches = [{launch}]"
            )
        };
        let obs = || observations_of(&rows, &times, counters);
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
