//! The calibration through the `opencl` plugin (its `devices` collector, then its `run`
//! collector on the one device selected): the suite's float4 copy at one large size (the
//! bandwidth), its local-memory matrix multiply (the FP32 rate of a real kernel), the
//! calibration's almost empty kernel (the launch latency: its device time, the floor under every
//! measured launch) and its sweep over work-groups of fixed arithmetic (how many run at once: a
//! wave).

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value};

use super::device_file::Selected;
use super::plugin_tables::{selected, table, timing_rows};
use crate::sources::{SourceRequest, import};

const PLUGIN: &str = "opencl";

/// Work-items per work-group of the sweep and the copy.
pub const GROUP: u64 = 256;

/// Which OpenCL device: the `opencl` plugin's selection.
#[derive(Debug, Clone)]
pub struct OpenClSelection {
    pub platform: String,
    pub device: String,
    pub device_type: String,
}

/// What the OpenCL sweep measured.
#[derive(Debug, Clone)]
pub struct OpenClMeasured {
    pub bandwidth_gb_per_sec: f64,
    pub fp32_gflops: f64,
    /// The almost empty kernel's device time, and its host time (enqueue to completion).
    pub launch_latency_us: f64,
    pub host_latency_us: f64,
    /// The sweep: (work-groups, median seconds).
    pub sweep: Vec<(u64, f64)>,
    /// The most work-groups that ran in the time of the fewest (within 25 %): one wave.
    pub wave_work_groups: Option<u64>,
    /// The sizes measured: copy floats and matrix edge.
    pub copy_floats: u64,
    pub matmul_n: u64,
}

impl OpenClMeasured {
    /// The device file's `[measured]` values.
    pub fn entries(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("dram_bandwidth_gb_per_sec", self.bandwidth_gb_per_sec),
            ("fp32_gflops", self.fp32_gflops),
            ("launch_latency_us", self.launch_latency_us),
            (
                "wave_work_groups",
                self.wave_work_groups.map_or(f64::NAN, |w| w as f64),
            ),
        ]
    }

    /// The `calibration` source's text.
    pub fn source_text(&self, d: &Selected) -> String {
        format!(
            "`yosoku calibrate` on the OpenCL device `{}` ({}): the float4 copy of {} floats (read + written bytes per second), the local-memory matrix multiply at n = {} (2 n^3 FLOPs per second), the almost empty kernel's median device time (enqueue to completion on the host: {:.1} us) and the sweep of {} work-items per work-group over {} to {} work-groups; each configuration's median of 5 to 20 launches",
            d.name,
            d.description,
            self.copy_floats,
            self.matmul_n,
            self.host_latency_us,
            GROUP,
            self.sweep.first().map_or(0, |s| s.0),
            self.sweep.last().map_or(0, |s| s.0),
        )
    }
}

/// The configuration of the `opencl` plugin's device selection.
fn selection(s: &OpenClSelection) -> Map<String, Value> {
    let mut config = Map::new();
    config.insert("platform".into(), Value::String(s.platform.clone()));
    config.insert("device".into(), Value::String(s.device.clone()));
    config.insert("device_type".into(), Value::String(s.device_type.clone()));
    config
}

const DRIVER_SOURCE: (&str, &str) = (
    "opencl",
    "the OpenCL driver's device query: compute units and maximum clock",
);

fn selected_device(s: &OpenClSelection, plugin_path: &[PathBuf]) -> Result<Selected> {
    let request = SourceRequest {
        what: "the devices to calibrate".to_owned(),
        name: "devices",
        plugin: PLUGIN,
        collector: "devices",
        plugin_path,
    };
    let imported = import(&request, |_| Ok(selection(s)))?;
    let devices = table(&imported.tables, yosoku_tables::DEVICES.name, PLUGIN)?;
    let mut all = selected(devices, DRIVER_SOURCE)?;
    if all.len() != 1 {
        let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
        bail!(
            "the selection (platform `{}`, device `{}`, device type `{}`) matches {} OpenCL devices{}; choose one with --platform, --device or --device-type",
            s.platform,
            s.device,
            s.device_type,
            names.len(),
            if names.is_empty() {
                String::new()
            } else {
                format!(": {}", names.join("; "))
            }
        );
    }
    Ok(all.remove(0))
}

/// The sizes of the sweep: (copy floats, matrix edge, work-groups of the wave sweep). A GPU's
/// copy moves 256 MiB (beyond any L2) and its sweep runs to eight work-groups per compute unit;
/// a CPU's copy moves 32 MiB and its sweep runs one work-group at a time to four per unit.
fn sizes(d: &Selected) -> (u64, u64, Vec<u64>) {
    let cu = d.compute_units;
    if d.gpu {
        let step = (cu / 2).max(1);
        let groups = (1..=16).map(|k| k * step).collect();
        (1 << 25, 1024, groups)
    } else {
        let groups = (1..=(4 * cu).max(8)).collect();
        (1 << 22, 256, groups)
    }
}

/// The most work-groups of the sweep (in order) whose time is within 25 % of the fewest's.
pub fn wave_work_groups(sweep: &[(u64, f64)]) -> Option<u64> {
    let (_, first) = *sweep.first()?;
    let mut wave = None;
    for &(groups, secs) in sweep {
        if secs > 1.25 * first {
            break;
        }
        wave = Some(groups);
    }
    // A sweep that never steps up says nothing of the wave.
    wave.filter(|w| Some(*w) != sweep.last().map(|s| s.0))
}

/// Runs the sweep on the selected device.
pub fn sweep(s: &OpenClSelection, plugin_path: &[PathBuf]) -> Result<(Selected, OpenClMeasured)> {
    let d = selected_device(s, plugin_path)?;
    let (copy_n, matmul_n, groups) = sizes(&d);
    let request = SourceRequest {
        what: format!("the calibration of {}", d.name),
        name: "calibration",
        plugin: PLUGIN,
        collector: "run",
        plugin_path,
    };
    let list = |items: &[String]| Value::Array(items.iter().cloned().map(Value::String).collect());
    let imported = import(&request, |_| {
        let mut config = selection(s);
        let kernels = ["copy/float4", "matmul/local", "empty", "waves"].map(str::to_owned);
        config.insert("kernels".into(), list(&kernels));
        let sweep: Vec<String> = groups.iter().map(u64::to_string).collect();
        let sizes = [
            format!("copy={copy_n}"),
            format!("matmul={matmul_n}"),
            format!("empty={GROUP}"),
            format!("waves={}", sweep.join(",")),
        ];
        config.insert("sizes".into(), list(&sizes));
        config.insert("work_group_size".into(), Value::from(GROUP));
        config.insert("max_launches".into(), Value::from(20));
        config.insert("max_secs_per_config".into(), Value::from(0.5));
        Ok(config)
    })?;
    let rows = timing_rows(&imported.tables, PLUGIN)?;
    let size = |r: &super::plugin_tables::TimingRow| {
        r.parameter("n")
            .ok_or_else(|| anyhow!("a timing without its size: `{}`", r.parameters))
    };
    let of = |program: &'static str| rows.iter().filter(move |r| r.program == program);
    let best = |program: &'static str, work: &dyn Fn(u64) -> f64| -> Result<f64> {
        of(program).try_fold(f64::NAN, |best, r| {
            Ok(best.max(work(size(r)?) / r.median_secs))
        })
    };
    let bandwidth = best("copy", &|n| 8.0 * n as f64)? / 1e9;
    let gflops = best("matmul", &|n| 2.0 * (n as f64).powi(3))? / 1e9;
    let empty = of("empty")
        .next()
        .ok_or_else(|| anyhow!("the empty kernel was not timed"))?;
    let sweep = of("waves")
        .map(|r| Ok((size(r)?, r.median_secs)))
        .collect::<Result<Vec<_>>>()?;
    for (what, v) in [("the copy", bandwidth), ("the matrix multiply", gflops)] {
        if !(v.is_finite() && v > 0.0) {
            bail!("{what} gave no rate on {}", d.name);
        }
    }
    let m = OpenClMeasured {
        bandwidth_gb_per_sec: bandwidth,
        fp32_gflops: gflops,
        launch_latency_us: empty.median_secs * 1e6,
        host_latency_us: empty.host_median_secs * 1e6,
        wave_work_groups: wave_work_groups(&sweep),
        sweep,
        copy_floats: copy_n,
        matmul_n,
    };
    Ok((d, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wave_is_the_last_count_before_the_time_steps_up() {
        let sweep = [(1, 1.0), (2, 1.05), (3, 2.0), (4, 2.1), (5, 3.0)];
        assert_eq!(wave_work_groups(&sweep), Some(2));
        // A sweep that never steps up, or an empty one, says nothing.
        assert_eq!(wave_work_groups(&[(1, 1.0), (2, 1.1)]), None);
        assert_eq!(wave_work_groups(&[]), None);
    }
}
