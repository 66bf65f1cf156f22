//! `physics_forecast`: kernels described by their work (and, where the user knows them, their
//! dependent steps and the bytes they really move) timed on GPUs of the catalogue by the physics
//! model (docs/methods.md, section 6, "Physics first"): launch floor, memory, compute, block
//! starts and dependent steps over the GPU's calibrated rates, with the launch floor plus bytes
//! over bandwidth and the datasheet's roofline beside. Nothing is fitted; the forecast is a
//! `predictions` table without measured times, the form `forecast_score` scores.

use serde::Deserialize;
use yosoku_models::transfer::physics::{GpuRates, floor_plus_bytes_secs, physics_time};
use yosoku_models::transfer::work_forecast::{WorkLaunch, datasheet_roofline_secs};
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::rows::{PredictionRow, predictions_batch};
use yosoku_tables::{PREDICTIONS, REPORT};

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};
use super::shared::{check_launches, on_device};

pub(crate) const PHYSICS_FORECAST: StepKind = StepKind::new::<PhysicsForecastParams>(
    "physics_forecast",
    Stage::Validate,
    "kernels described by their work timed on GPUs of the catalogue by the physics model (floor, memory, compute, block starts, dependent steps), the floor plus bytes over bandwidth and the roofline beside",
);

/// The methods of a physics forecast, in report order.
pub const PHYSICS_METHODS: [&str; 3] = ["physics", "floor_plus_bytes", "roofline"];

/// What the `validation` column of a forecast row says.
pub const VALIDATION_PHYSICS_FORECAST: &str =
    "from the kernel's work and the GPU's rates, nothing fitted";

/// `physics_forecast`'s keys.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhysicsForecastParams {
    /// The GPUs forecast: catalogue names or aliases (a calibration's device file, named in the
    /// pipeline's `device_files`, gives a GPU its measured rates).
    pub on: Vec<String>,
    /// The launches forecast.
    pub launches: Vec<WorkLaunch>,
}

#[derive(Debug)]
pub struct PhysicsForecastStep {
    params: PhysicsForecastParams,
}

impl StepParams for PhysicsForecastParams {
    type Step = PhysicsForecastStep;
    fn into_step(self) -> Result<PhysicsForecastStep, ParamError> {
        if self.on.is_empty() {
            return Err(ParamError::new("on", "`on`: name at least one GPU"));
        }
        check_launches(&self.launches)?;
        Ok(PhysicsForecastStep { params: self })
    }
}

/// A forecast's rows of one launch on one device: a row a method with a positive, finite time,
/// no measured time, no interval.
pub(super) fn forecast_rows<'m>(
    l: &WorkLaunch,
    device: &str,
    secs: impl IntoIterator<Item = (&'m &'m str, Option<f64>)>,
    validation: &str,
) -> Vec<PredictionRow> {
    secs.into_iter()
        .filter_map(|(method, s)| {
            let s = s.filter(|s| *s > 0.0 && s.is_finite())?;
            Some(PredictionRow {
                model: (*method).to_owned(),
                device: device.to_owned(),
                program: l.program.clone(),
                variant: l.variant.clone(),
                phase: "kernel".to_owned(),
                repetitions: 1,
                predicted_secs: s,
                measured_secs: None,
                error_pct: None,
                flags: None,
                run_id: None,
                model_group: None,
                validation: Some(validation.to_owned()),
                held_out: None,
                interval_secs: None,
            })
        })
        .collect()
}

/// The datasheet's roofline: max(FLOPs / FP32 peak, bytes / bandwidth).
fn roofline_secs(l: &WorkLaunch, d: &yosoku_devices::Device) -> Option<f64> {
    datasheet_roofline_secs(
        l.flops,
        l.dram_bytes,
        d.spec("fp32_peak_gflops")?,
        d.spec("dram_bandwidth_gb_per_sec")?,
    )
}

impl Step for PhysicsForecastStep {
    fn inputs(&self) -> Vec<&TableRef> {
        Vec::new()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let p = &self.params;
        let mut rows = Vec::new();
        let mut cells = Vec::new();
        for name in &p.on {
            let device = on_device(cx.devices, name)?;
            let rates = GpuRates::from_device(device)?;
            let rates_title = format!("the rates the physics model used on {}", device.name);
            for (what, value, unit) in [
                ("launch floor", rates.floor_secs * 1e6, "us"),
                ("DRAM round trip", rates.dram_latency_secs * 1e6, "us"),
                (
                    "DRAM bandwidth",
                    rates.bandwidth_bytes_per_sec / 1e9,
                    "GB/s",
                ),
                ("FP32", rates.fp32_flops_per_sec / 1e9, "GFLOP/s"),
                ("barrier step", rates.barrier_step_secs * 1e6, "us"),
                (
                    "block starts",
                    rates.block_rate_per_sec.map_or(f64::NAN, |r| r / 1e6),
                    "per us",
                ),
                // The calibration's curves the memory bound reads, by their points (none: 0).
                (
                    "copy curve (sizes)",
                    rates.copy_secs_by_bytes.as_ref().map_or(0, Vec::len) as f64,
                    "points",
                ),
                (
                    "grid sweep (block counts)",
                    rates.copy_bandwidth_by_blocks.as_ref().map_or(0, Vec::len) as f64,
                    "points",
                ),
            ] {
                cells.push(ReportCell::number(
                    &rates_title,
                    what,
                    format!("{:?}", rates.source).to_lowercase(),
                    value,
                    unit,
                ));
            }
            let parts_title = format!(
                "{}: what each launch's time is made of (physics model, microseconds)",
                device.name
            );
            for l in &p.launches {
                let work = l.kernel_work();
                let t = physics_time(&work, &rates);
                let secs = [
                    Some(t.secs),
                    Some(floor_plus_bytes_secs(&work, &rates)),
                    roofline_secs(l, device),
                ];
                rows.extend(forecast_rows(
                    l,
                    &device.name,
                    PHYSICS_METHODS.iter().zip(secs),
                    VALIDATION_PHYSICS_FORECAST,
                ));
                let row = format!("{} {}", l.program, l.variant);
                for (column, value) in [
                    ("time", t.secs),
                    ("floor", t.floor_secs),
                    ("memory", t.memory_secs),
                    ("compute", t.compute_secs),
                    ("block starts", t.block_starts_secs),
                    ("dependent steps", t.steps_secs),
                ] {
                    cells.push(ReportCell::number(
                        &parts_title,
                        &row,
                        column,
                        value * 1e6,
                        "us",
                    ));
                }
                cells.push(ReportCell::text(&parts_title, &row, "bound by", t.bound()));
            }
        }
        Ok(StepOutput::new()
            .table(&PREDICTIONS, predictions_batch(&rows)?)
            .table(&REPORT, report_batch(&cells)?))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{parse_error, run_error};

    #[test]
    fn a_gpu_the_catalogue_lacks_is_refused_with_the_closest_names() {
        let launch = "{ program = \"k\", variant = \"1\", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }";
        let e = run_error(
            &format!(
                "[[validate]]\nstep = \"physics_forecast\"\nid = \"f\"\non = [\"H1000\"]\nlaunches = [{launch}]"
            ),
            Vec::new(),
        );
        assert!(
            e.contains("`on`: `H1000` is not in the device catalogue (closest:"),
            "{e}"
        );
    }

    #[test]
    fn bad_launches_and_targets_are_refused_at_their_key() {
        let step = "step = \"physics_forecast\"\nid = \"f\"";
        let launch = "{ program = \"k\", variant = \"1\", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }";
        for (extra, expected) in [
            (
                format!("on = []\nlaunches = [{launch}]"),
                "`on`: name at least one GPU",
            ),
            (
                "on = [\"H200\"]\nlaunches = []".to_owned(),
                "`launches`: describe at least one launch",
            ),
            (
                "on = [\"H200\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 1, dram_bytes = 8, dependent_steps = 0 }]".to_owned(),
                "launch 1 (k 1): `dependent_steps` is 0; expected a number >= 1",
            ),
            (
                "on = [\"H200\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 1, dram_bytes = 8, moved_bytes = -1 }]".to_owned(),
                "`moved_bytes` is -1",
            ),
            (
                "on = [\"H200\"]\nlaunches = [{ program = \"k\", variant = \"1\", blocks = 2, threads_per_block = 32, flops = 1, dram_bytes = 8, stride = 2 }]".to_owned(),
                "unknown field `stride`",
            ),
        ] {
            let e = parse_error("validate", &format!("{step}\n{extra}"));
            assert!(
                e.starts_with("p.toml:") && e.contains(expected),
                "{extra}: {e}"
            );
        }
    }
}
