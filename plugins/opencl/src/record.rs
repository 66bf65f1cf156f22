//! A run's measurements as saved (`opencl-run.json`, written by the runner when it has a
//! `log_dir`, read back by the `logs` importer) and as the canonical tables. Both collectors make
//! their tables from this record, so a re-import gives the tables the run gave.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use serde::{Deserialize, Serialize};
use yosoku_plugin_sdk::PluginError;
use yosoku_profiler_import::builder::{RunKey, Tables};
use yosoku_profiler_import::devices::devices_batch;
pub use yosoku_profiler_import::timings::statistics;
use yosoku_profiler_import::units::Prefixes;
use yosoku_tables::{KERNEL_LAUNCHES, KERNEL_TIMINGS};

use crate::device::DeviceInfo;

/// The file name of a run's record in its `log_dir`.
pub const RECORD_FILE: &str = "opencl-run.json";
pub const FORMAT: &str = "yosoku-opencl-run";
pub const VERSION: u32 = 1;

/// One launch's times; saved as `[device_ns, host_ns, submit_to_start_ns]` (thousands per run).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "LaunchTuple", into = "LaunchTuple")]
pub struct Launch {
    /// `CL_PROFILING_COMMAND_END - CL_PROFILING_COMMAND_START`.
    pub device_ns: u64,
    /// Host wall time from enqueueing to the event's completion being seen.
    pub host_ns: u64,
    /// `CL_PROFILING_COMMAND_START - CL_PROFILING_COMMAND_SUBMIT`, when the driver reports it.
    pub submit_to_start_ns: Option<i64>,
}

type LaunchTuple = (u64, u64, Option<i64>);

impl From<LaunchTuple> for Launch {
    fn from((device_ns, host_ns, submit_to_start_ns): LaunchTuple) -> Self {
        Self {
            device_ns,
            host_ns,
            submit_to_start_ns,
        }
    }
}

impl From<Launch> for LaunchTuple {
    fn from(l: Launch) -> Self {
        (l.device_ns, l.host_ns, l.submit_to_start_ns)
    }
}

/// One configuration: a program's variant at one size on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub device: String,
    pub program: String,
    pub variant: String,
    pub size: u64,
    pub size_meaning: String,
    pub global: Vec<usize>,
    pub local: Vec<usize>,
    pub warmup: Vec<Launch>,
    pub launches: Vec<Launch>,
    /// Computed work counters of one launch: raw name (tool `computed`) -> (value, unit).
    pub counters: BTreeMap<String, (f64, String)>,
    pub stable: bool,
    pub target_cv: f64,
    /// The sizes of a kernel file's configuration (`n=1024;m=64`); the suite's is `n=<size>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<String>,
    /// How the output was checked (`kernel_timings.check`); the suite's is [`CPU_REFERENCE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

/// `kernel_timings.check` of the suite's kernels.
pub const CPU_REFERENCE: &str = "cpu reference";

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub format: String,
    pub version: u32,
    pub run_id: String,
    /// The collector's configuration, for the record.
    pub settings: BTreeMap<String, String>,
    /// The environment variables that steer OpenCL drivers (`POCL_*`, `OCL_ICD_*`, ...), as
    /// they were during the run.
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    pub devices: Vec<DeviceInfo>,
    pub measurements: Vec<Measurement>,
}

impl RunRecord {
    /// Reads a saved record, checking its format and version.
    pub fn read(path: &Path) -> Result<Self, PluginError> {
        Self::parse(path, &yosoku_plugin_sdk::read_input_to_string(path)?)
    }

    /// A record from the text of `path` (named in errors): its JSON, format and version, and
    /// that every measurement has a device of the record and launches of more than 0 ns. Each
    /// error names the key it is about (`measurements[3].launches`).
    pub fn parse(path: &Path, text: &str) -> Result<Self, PluginError> {
        let record: RunRecord = serde_json::from_str(text).map_err(|e| {
            PluginError::at(
                path,
                e.line(),
                e.column(),
                format!("not a yosoku OpenCL run record ({RECORD_FILE}): {e}"),
            )
        })?;
        if record.format != FORMAT {
            return Err(PluginError::new(format!(
                "{}: key `format`: `{}`, expected `{FORMAT}`",
                path.display(),
                record.format
            )));
        }
        if record.version > VERSION {
            return Err(PluginError::new(format!(
                "{}: key `version`: record version {} is newer than this plugin reads ({VERSION}); update yosoku",
                path.display(),
                record.version
            )));
        }
        let mut ids = BTreeMap::new();
        for (i, m) in record.measurements.iter().enumerate() {
            let device = record.devices.iter().position(|d| d.label == m.device);
            let problem = match device {
                None => Some((
                    "device",
                    format!("`{}` is not among the record's devices", m.device),
                )),
                Some(_) if m.launches.is_empty() => {
                    Some(("launches", "no measured launch".to_owned()))
                }
                Some(_) if m.launches.iter().any(|l| l.device_ns == 0) => {
                    Some(("launches", "a launch of 0 ns".to_owned()))
                }
                Some(_) if m.warmup.iter().any(|l| l.device_ns == 0) => {
                    Some(("warmup", "a launch of 0 ns".to_owned()))
                }
                Some(d) => ids.insert(m.run_id(&record.run_id, d), i).map(|first| {
                    (
                        "size",
                        format!("the same configuration as measurement {first}"),
                    )
                }),
            };
            if let Some((key, p)) = problem {
                return Err(PluginError::new(format!(
                    "{}: key `measurements[{i}].{key}` ({}/{} n={}): {p}",
                    path.display(),
                    m.program,
                    m.variant,
                    m.size
                )));
            }
        }
        Ok(record)
    }

    /// Writes the record to `dir`/[`RECORD_FILE`] through a temporary file.
    pub fn write(&self, dir: &Path) -> Result<(), PluginError> {
        let path = dir.join(RECORD_FILE);
        let tmp = dir.join(format!(".{RECORD_FILE}.tmp"));
        let text = serde_json::to_string(self)
            .map_err(|e| PluginError::new(format!("{}: {e}", path.display())))?;
        std::fs::write(&tmp, text).map_err(|e| PluginError::io(&tmp, &e))?;
        std::fs::rename(&tmp, &path).map_err(|e| PluginError::io(&path, &e))
    }
}

impl Measurement {
    pub fn run_id(&self, run: &str, device_index: usize) -> String {
        format!(
            "{run}:d{device_index}:{}:{}:{}",
            self.program,
            self.variant,
            self.size_text()
        )
    }

    fn size_text(&self) -> String {
        self.sizes
            .clone()
            .unwrap_or_else(|| format!("n={}", self.size))
    }

    pub fn parameters(&self) -> String {
        let dims = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
        format!(
            "{};global={};local={}",
            self.size_text(),
            dims(&self.global),
            dims(&self.local)
        )
    }

    pub fn check_text(&self) -> &str {
        self.check.as_deref().unwrap_or(CPU_REFERENCE)
    }

    fn device_secs(&self) -> Vec<f64> {
        self.launches
            .iter()
            .map(|l| l.device_ns as f64 / 1e9)
            .collect()
    }
}

fn text(values: impl Iterator<Item = String>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// The tables of records: `runs` (median device time of one launch, phase `kernel`),
/// `counters` (computed work counters, origin `computed`) and `metric_names`,
/// `kernel_timings`, `kernel_launches`, `devices`.
pub fn tables(records: &[RunRecord]) -> Result<Vec<(String, RecordBatch)>, PluginError> {
    let mut builder = Tables::new("computed", Prefixes::Decimal);
    let mut rows: Vec<(String, &Measurement)> = Vec::new();
    let mut devices = Vec::new();
    for r in records {
        for m in &r.measurements {
            let d = r
                .devices
                .iter()
                .position(|d| d.label == m.device)
                .unwrap_or(0);
            let id = m.run_id(&r.run_id, d);
            let run = builder.key(RunKey {
                run_id: id.clone(),
                device: m.device.clone(),
                program: m.program.clone(),
                variant: m.variant.clone(),
                kernel: None,
            });
            let (median, ..) = statistics(&m.device_secs());
            builder.add_run(run, Some(&m.parameters()), "kernel", median);
            for (name, (value, unit)) in &m.counters {
                builder.add_counter(run, name, *value, unit);
            }
            rows.push((id, m));
        }
        for d in &r.devices {
            if !devices.iter().any(|x: &DeviceInfo| x.label == d.label) {
                devices.push(d.clone());
            }
        }
    }
    let mut out = builder.finish()?;
    let stats: Vec<(f64, f64, f64, f64)> = rows
        .iter()
        .map(|(_, m)| statistics(&m.device_secs()))
        .collect();
    let host_median: Vec<f64> = rows
        .iter()
        .map(|(_, m)| {
            let host: Vec<f64> = m.launches.iter().map(|l| l.host_ns as f64 / 1e9).collect();
            statistics(&host).0
        })
        .collect();
    let timings = KERNEL_TIMINGS.batch(vec![
        text(rows.iter().map(|(id, _)| id.clone())),
        text(rows.iter().map(|(_, m)| m.device.clone())),
        text(rows.iter().map(|(_, m)| m.program.clone())),
        text(rows.iter().map(|(_, m)| m.variant.clone())),
        text(rows.iter().map(|(_, m)| m.parameters())),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, m)| m.launches.len() as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, m)| m.warmup.len() as i64),
        )),
        Arc::new(Float64Array::from_iter_values(stats.iter().map(|s| s.0))),
        Arc::new(Float64Array::from_iter_values(stats.iter().map(|s| s.1))),
        Arc::new(Float64Array::from_iter_values(stats.iter().map(|s| s.2))),
        Arc::new(Float64Array::from_iter_values(stats.iter().map(|s| s.3))),
        Arc::new(Float64Array::from_iter_values(host_median)),
        Arc::new(BooleanArray::from_iter(
            rows.iter().map(|(_, m)| Some(m.stable)),
        )),
        text(rows.iter().map(|(_, m)| m.check_text().to_owned())),
    ])?;
    out.push(("kernel_timings".to_owned(), timings));

    let mut l_id = Vec::new();
    let mut l_row = Vec::new();
    let mut l_index = Vec::new();
    let mut l_warm = Vec::new();
    let mut l_launch: Vec<&Launch> = Vec::new();
    for (id, m) in &rows {
        for (i, (launch, warm)) in m
            .warmup
            .iter()
            .map(|l| (l, true))
            .chain(m.launches.iter().map(|l| (l, false)))
            .enumerate()
        {
            l_id.push(id.clone());
            l_row.push(*m);
            l_index.push(i as i64);
            l_warm.push(Some(warm));
            l_launch.push(launch);
        }
    }
    let launches = KERNEL_LAUNCHES.batch(vec![
        text(l_id.into_iter()),
        text(l_row.iter().map(|m| m.device.clone())),
        text(l_row.iter().map(|m| m.program.clone())),
        text(l_row.iter().map(|m| m.variant.clone())),
        Arc::new(Int64Array::from(l_index)),
        Arc::new(BooleanArray::from(l_warm)),
        Arc::new(Float64Array::from_iter_values(
            l_launch.iter().map(|l| l.device_ns as f64 / 1e9),
        )),
        Arc::new(Float64Array::from_iter_values(
            l_launch.iter().map(|l| l.host_ns as f64 / 1e9),
        )),
        Arc::new(
            l_launch
                .iter()
                .map(|l| l.submit_to_start_ns.map(|n| n as f64 / 1e9))
                .collect::<Float64Array>(),
        ),
    ])?;
    out.push(("kernel_launches".to_owned(), launches));
    let rows: Vec<_> = devices.iter().map(DeviceInfo::row).collect();
    out.push(("devices".to_owned(), devices_batch(&rows)?));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> DeviceInfo {
        DeviceInfo {
            label: "dev".into(),
            name: "dev".into(),
            platform: "p".into(),
            platform_version: "OpenCL 3.0".into(),
            vendor: "v".into(),
            driver_version: "1".into(),
            device_version: "OpenCL 3.0".into(),
            device_type: "CPU".into(),
            compute_units: 2,
            clock_mhz: 1000,
            global_memory_bytes: 1 << 30,
            local_memory_bytes: 1 << 16,
            global_cache_bytes: 1 << 20,
            max_work_group_size: 1024,
            profiling_timer_resolution_ns: 1,
            preferred_vector_widths: vec![("float".into(), 8)],
        }
    }

    fn record() -> RunRecord {
        let launch = |ns| Launch {
            device_ns: ns,
            host_ns: ns + 1000,
            submit_to_start_ns: Some(500),
        };
        RunRecord {
            format: FORMAT.into(),
            version: VERSION,
            run_id: "r".into(),
            settings: BTreeMap::new(),
            environment: BTreeMap::new(),
            devices: vec![device()],
            measurements: vec![Measurement {
                device: "dev".into(),
                program: "copy".into(),
                variant: "float4".into(),
                size: 4096,
                size_meaning: "floats copied".into(),
                global: vec![1024],
                local: vec![256],
                warmup: vec![launch(9000)],
                launches: vec![launch(3000), launch(1000), launch(2000)],
                counters: BTreeMap::from([("global_load_bytes".into(), (16384.0, "B".into()))]),
                stable: false,
                target_cv: 0.05,
                sizes: None,
                check: None,
            }],
        }
    }

    #[test]
    fn a_record_round_trips_and_makes_its_tables() {
        let dir = tempfile::tempdir().unwrap();
        record().write(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(RECORD_FILE)).unwrap();
        assert!(
            text.contains("[3000,4000,500]"),
            "launches are compact: {text}"
        );
        let back = RunRecord::read(&dir.path().join(RECORD_FILE)).unwrap();
        assert_eq!(back, record());
        let tables = tables(&[back]).unwrap();
        let get = |name: &str| &tables.iter().find(|(n, _)| n == name).unwrap().1;
        let runs = get("runs");
        let secs = runs.column_by_name("measured_secs").unwrap();
        let secs = secs.as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(secs.value(0), 2e-6, "the median of 3, 1 and 2 us");
        assert_eq!(get("kernel_launches").num_rows(), 4);
        let counters = get("counters");
        let metric = counters.column_by_name("metric").unwrap();
        let metric = metric.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(metric.value(0), "gld_bytes");
    }

    #[test]
    fn records_of_another_format_or_a_newer_version_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD_FILE);
        let mut newer = record();
        newer.version = VERSION + 1;
        newer.write(dir.path()).unwrap();
        let e = RunRecord::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("record version 2 is newer than this plugin reads (1)"),
            "{e}"
        );
        let mut other = record();
        other.format = "something-else".into();
        other.write(dir.path()).unwrap();
        let e = RunRecord::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("key `format`: `something-else`, expected `yosoku-opencl-run`"),
            "{e}"
        );
        std::fs::write(&path, "{\"format\": 3}").unwrap();
        let e = RunRecord::read(&path).unwrap_err().to_string();
        assert!(
            e.contains(":1:") && e.contains("not a yosoku OpenCL run record"),
            "{e}"
        );
        let mut orphan = record();
        orphan.measurements[0].device = "gone".into();
        orphan.write(dir.path()).unwrap();
        let e = RunRecord::read(&path).unwrap_err().to_string();
        assert!(
            e.contains(
                "key `measurements[0].device` (copy/float4 n=4096): `gone` is not among the record's devices"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_measurement_the_tables_cannot_hold_is_refused_at_its_key() {
        let refused = |change: fn(&mut RunRecord)| {
            let mut r = record();
            change(&mut r);
            let text = serde_json::to_string(&r).unwrap();
            RunRecord::parse(Path::new("run.json"), &text)
                .unwrap_err()
                .to_string()
        };
        let e = refused(|r| r.measurements[0].warmup[0].device_ns = 0);
        assert_eq!(
            e,
            "run.json: key `measurements[0].warmup` (copy/float4 n=4096): a launch of 0 ns"
        );
        let e = refused(|r| r.measurements[0].launches.clear());
        assert!(
            e.ends_with("key `measurements[0].launches` (copy/float4 n=4096): no measured launch"),
            "{e}"
        );
        // Two rows of one run id would mix their launches in `kernel_launches`.
        let e = refused(|r| r.measurements.push(r.measurements[0].clone()));
        assert!(
            e.ends_with(
                "key `measurements[1].size` (copy/float4 n=4096): the same configuration as measurement 0"
            ),
            "{e}"
        );
    }
}
