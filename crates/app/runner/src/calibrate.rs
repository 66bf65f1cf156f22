//! `yosoku calibrate`: a short microbenchmark sweep on a device the user can reach, written as a
//! device file with what it measured (docs/methods.md, section 6, "Calibration").
//!
//! Through the `opencl` plugin (its `devices` collector, then its `run` collector on the one
//! device selected): the suite's float4 copy at one large size (the bandwidth), its
//! local-memory matrix multiply (the FP32 rate of a real kernel), the calibration's almost empty
//! kernel (the launch latency: its device time, the floor under every measured launch) and its
//! sweep over work-groups of fixed arithmetic (how many run at once: a wave). The device file is
//! the catalogue's entry for the device (its datasheet values and their sources) with
//! `[measured]` replaced by what the sweep measured, or, for a device the catalogue lacks, what
//! the driver says of it; it is written to a temporary file, read back as a catalogue file, then
//! renamed into place.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use arrow_array::RecordBatch;
use serde_json::{Map, Value};
use yosoku_devices::{Device, Sourced};
use yosoku_tables::access::{float64, int64, opt_f64, utf8};
use yosoku_tables::col;

use crate::sources::{SourceRequest, import};

/// What `yosoku calibrate` is asked: which OpenCL device, and where the file goes.
#[derive(Debug, Clone)]
pub struct CalibrationRequest {
    /// The `opencl` plugin's selection: platform, device and device type.
    pub platform: String,
    pub device: String,
    pub device_type: String,
    /// The catalogue device the measurement is of (default: the OpenCL device's name).
    pub name: Option<String>,
    /// The user's device files, over the built-in catalogue.
    pub devices: Vec<PathBuf>,
    pub plugin_path: Vec<PathBuf>,
    /// The device file to write.
    pub out: PathBuf,
}

/// What the sweep measured.
#[derive(Debug, Clone)]
pub struct Measured {
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

/// What the sweep measured, and the device file written.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The device as written (the catalogue's entry with `[measured]`, or a new one).
    pub device: Device,
    /// Whether the catalogue had the device.
    pub catalogued: bool,
    /// The OpenCL device's name and compute units.
    pub opencl_device: String,
    pub compute_units: u64,
    pub measured: Measured,
    pub file: PathBuf,
}

/// The source key of every measured value.
const SOURCE: &str = "calibration";

/// Work-items per work-group of the sweep and the copy.
const GROUP: u64 = 256;

/// The configuration of the `opencl` plugin's device selection.
fn selection(r: &CalibrationRequest) -> Map<String, Value> {
    let mut config = Map::new();
    config.insert("platform".into(), Value::String(r.platform.clone()));
    config.insert("device".into(), Value::String(r.device.clone()));
    config.insert("device_type".into(), Value::String(r.device_type.clone()));
    config
}

fn table<'a>(tables: &'a [(String, RecordBatch)], name: &str) -> Result<&'a RecordBatch> {
    tables
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| b)
        .ok_or_else(|| anyhow!("the opencl plugin returned no `{name}` table"))
}

/// The one OpenCL device selected: its name, type, compute units, clock and vendor.
struct Selected {
    name: String,
    gpu: bool,
    compute_units: u64,
    clock_mhz: Option<f64>,
    vendor: String,
    description: String,
}

fn selected_device(r: &CalibrationRequest) -> Result<Selected> {
    let request = SourceRequest {
        what: "the devices to calibrate".to_owned(),
        name: "devices",
        plugin: "opencl",
        collector: "devices",
        plugin_path: &r.plugin_path,
    };
    let imported = import(&request, |_| Ok(selection(r)))?;
    let devices = table(&imported.tables, yosoku_tables::DEVICES.name)?;
    let names = utf8(devices, col::DEVICE)?;
    if devices.num_rows() != 1 {
        let all: Vec<&str> = (0..devices.num_rows()).map(|i| names.value(i)).collect();
        bail!(
            "the selection (platform `{}`, device `{}`, device type `{}`) matches {} OpenCL devices{}; choose one with --platform, --device or --device-type",
            r.platform,
            r.device,
            r.device_type,
            all.len(),
            if all.is_empty() {
                String::new()
            } else {
                format!(": {}", all.join("; "))
            }
        );
    }
    let text = |column: &str| -> Result<String> {
        Ok(utf8(devices, column)?
            .iter()
            .next()
            .flatten()
            .unwrap_or("")
            .to_owned())
    };
    let units = int64(devices, col::COMPUTE_UNITS)?;
    let compute_units = (!arrow_array::Array::is_null(units, 0))
        .then(|| units.value(0))
        .filter(|u| *u > 0)
        .ok_or_else(|| anyhow!("the driver gives `{}` no compute units", names.value(0)))?;
    Ok(Selected {
        name: names.value(0).to_owned(),
        gpu: text(col::DEVICE_TYPE)?.eq_ignore_ascii_case("gpu"),
        compute_units: compute_units as u64,
        clock_mhz: opt_f64(float64(devices, col::CLOCK_MHZ)?, 0).filter(|c| *c > 0.0),
        vendor: text(col::VENDOR)?,
        description: text(col::PLATFORM)?,
    })
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

/// Each configuration's (program, n, median device seconds, median host seconds).
fn timings(tables: &[(String, RecordBatch)]) -> Result<Vec<(String, u64, f64, f64)>> {
    let t = table(tables, yosoku_tables::KERNEL_TIMINGS.name)?;
    let program = utf8(t, col::PROGRAM)?;
    let parameters = utf8(t, col::PARAMETERS)?;
    let median = float64(t, col::MEDIAN_SECS)?;
    let host = float64(t, col::HOST_MEDIAN_SECS)?;
    (0..t.num_rows())
        .map(|i| {
            let params = parameters.value(i);
            let n = params
                .split(';')
                .find_map(|p| p.strip_prefix("n="))
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| anyhow!("a timing without its size: `{params}`"))?;
            Ok((
                program.value(i).to_owned(),
                n,
                median.value(i),
                opt_f64(host, i).unwrap_or(f64::NAN),
            ))
        })
        .collect()
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

/// Runs the sweep on the selected device and writes the device file.
pub fn calibrate(r: &CalibrationRequest) -> Result<Calibration> {
    let catalogue = crate::devices::load_catalogue(&r.devices)?;
    let d = selected_device(r)?;
    let (copy_n, matmul_n, groups) = sizes(&d);
    let request = SourceRequest {
        what: format!("the calibration of {}", d.name),
        name: "calibration",
        plugin: "opencl",
        collector: "run",
        plugin_path: &r.plugin_path,
    };
    let list = |items: &[String]| Value::Array(items.iter().cloned().map(Value::String).collect());
    let imported = import(&request, |_| {
        let mut config = selection(r);
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
    let timings = timings(&imported.tables)?;
    let of = |program: &'static str| timings.iter().filter(move |t| t.0 == program);
    let best = |program: &'static str, work: &dyn Fn(u64) -> f64| {
        of(program)
            .map(|t| work(t.1) / t.2)
            .fold(f64::NAN, f64::max)
    };
    let bandwidth = best("copy", &|n| 8.0 * n as f64) / 1e9;
    let gflops = best("matmul", &|n| 2.0 * (n as f64).powi(3)) / 1e9;
    let empty = of("empty")
        .next()
        .ok_or_else(|| anyhow!("the empty kernel was not timed"))?;
    let sweep: Vec<(u64, f64)> = of("waves").map(|t| (t.1, t.2)).collect();
    for (what, v) in [("the copy", bandwidth), ("the matrix multiply", gflops)] {
        if !(v.is_finite() && v > 0.0) {
            bail!("{what} gave no rate on {}", d.name);
        }
    }
    let m = Measured {
        bandwidth_gb_per_sec: bandwidth,
        fp32_gflops: gflops,
        launch_latency_us: empty.2 * 1e6,
        host_latency_us: empty.3 * 1e6,
        wave_work_groups: wave_work_groups(&sweep),
        sweep,
        copy_floats: copy_n,
        matmul_n,
    };
    let name = r.name.clone().unwrap_or_else(|| d.name.clone());
    let (device, catalogued) = device_of(&catalogue, &name, &d, &m)?;
    write_device(&device, &r.out)?;
    Ok(Calibration {
        device,
        catalogued,
        opencl_device: d.name,
        compute_units: d.compute_units,
        measured: m,
        file: r.out.clone(),
    })
}

/// The catalogue's entry for `name` with `[measured]` replaced, or a new device from what the
/// driver says; and whether the catalogue had it.
fn device_of(
    catalogue: &yosoku_devices::Catalogue,
    name: &str,
    d: &Selected,
    c: &Measured,
) -> Result<(Device, bool)> {
    let sourced = |value: f64| Sourced {
        value,
        source: SOURCE.to_owned(),
    };
    let (mut device, catalogued) = match catalogue.find(name) {
        Some(known) => (known.clone(), true),
        // A device the catalogue lacks is written as new under its own name only.
        None if name == d.name => (new_device(d), false),
        None => bail!(
            "no device `{name}` in the catalogue; the closest: {} (`yosoku devices` lists all; without --name the OpenCL device's own name is used)",
            catalogue.closest(name, 3).join(", ")
        ),
    };
    device.measured.clear();
    device.measured.insert(
        "dram_bandwidth_gb_per_sec".into(),
        sourced(c.bandwidth_gb_per_sec),
    );
    device
        .measured
        .insert("fp32_gflops".into(), sourced(c.fp32_gflops));
    if c.launch_latency_us > 0.0 {
        device
            .measured
            .insert("launch_latency_us".into(), sourced(c.launch_latency_us));
    }
    if let Some(w) = c.wave_work_groups {
        device
            .measured
            .insert("wave_work_groups".into(), sourced(w as f64));
    }
    device.sources.insert(
        SOURCE.to_owned(),
        format!(
            "`yosoku calibrate` on the OpenCL device `{}` ({}): the float4 copy of {} floats (read + written bytes per second), the local-memory matrix multiply at n = {} (2 n^3 FLOPs per second), the almost empty kernel's median device time (enqueue to completion on the host: {:.1} us) and the sweep of {} work-items per work-group over {} to {} work-groups; each configuration's median of 5 to 20 launches",
            d.name,
            d.description,
            c.copy_floats,
            c.matmul_n,
            c.host_latency_us,
            GROUP,
            c.sweep.first().map_or(0, |s| s.0),
            c.sweep.last().map_or(0, |s| s.0),
        ),
    );
    // Sources no value names any more (the replaced measurements') are dropped.
    let named: Vec<String> = device
        .spec
        .values()
        .chain(device.measured.values())
        .map(|v| v.source.clone())
        .collect();
    device.sources.retain(|k, _| named.contains(k));
    Ok((device, catalogued))
}

/// A device the catalogue lacks, from what its driver says.
fn new_device(d: &Selected) -> Device {
    let mut spec = std::collections::BTreeMap::new();
    let driver = |value: f64| Sourced {
        value,
        source: "opencl".to_owned(),
    };
    spec.insert("sm_count".to_owned(), driver(d.compute_units as f64));
    if let Some(clock) = d.clock_mhz {
        spec.insert("boost_clock_mhz".to_owned(), driver(clock));
    }
    Device {
        name: d.name.clone(),
        aliases: Vec::new(),
        vendor: d.vendor.clone(),
        kind: if d.gpu { "gpu" } else { "cpu" }.to_owned(),
        architecture: "unknown (not in the catalogue)".to_owned(),
        compute_capability: None,
        year: None,
        spec,
        measured: Default::default(),
        sources: [(
            "opencl".to_owned(),
            "the OpenCL driver's device query: compute units and maximum clock".to_owned(),
        )]
        .into_iter()
        .collect(),
        file: String::new(),
    }
}

/// Writes the device file: to a temporary file beside it, read back as a catalogue file, then
/// renamed over `out`.
fn write_device(device: &Device, out: &Path) -> Result<()> {
    let text = device.to_toml(&format!(
        "{} as `yosoku calibrate` measured it: [measured] is the calibration's, [spec] the catalogue's.",
        device.name
    ));
    yosoku_devices::parse(&text, &out.display().to_string())
        .map_err(|e| anyhow!("the device file does not read back: {e}"))?;
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty());
    let tmp = match dir {
        Some(d) => d.join(format!(".{}.tmp", file_name(out))),
        None => PathBuf::from(format!(".{}.tmp", file_name(out))),
    };
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, out).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}", out.display())
    })?;
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || "device.toml".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    )
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
