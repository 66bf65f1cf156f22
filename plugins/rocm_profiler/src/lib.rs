//! `rocm_profiler`: imports what AMD's profilers write — rocprof (v1 `results.csv`, v2),
//! omniperf / rocprof-compute workloads (`pmc_perf.csv`, `timestamps.csv`, `sysinfo.csv`) and
//! rocprofv3 CSV output (`*_counter_collection.csv`, `*_kernel_trace.csv`) — as the canonical
//! `runs`, `counters`, `metric_names` and `devices` tables (README.md).
//!
//! Counter names are mapped onto the same canonical, vendor-neutral names as NVIDIA's
//! (`crates/plugin/profiler_import/metrics.toml`, tool `rocprof`): `SQ_WAVES` is `warps_launched`,
//! `SQ_INSTS_VMEM_RD` is `gld_request`, `Grid_Size` is `threads`, so that one pipeline takes both.
//!
//! Omniperf workloads also give the `devices` rows of their `sysinfo.csv`.

pub mod dispatches;
pub mod sysinfo;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};
use yosoku_profiler_import::builder::{RunKey, Tables};
use yosoku_profiler_import::devices::{DeviceRow, devices_batch};
use yosoku_profiler_import::input::read_text;
use yosoku_profiler_import::units::Prefixes;

use crate::dispatches::{Dispatch, FileKind, ProfileFile, program_of};

#[derive(Debug, Default)]
pub struct RocmProfiler;

impl Plugin for RocmProfiler {
    fn name(&self) -> &'static str {
        "rocm_profiler"
    }

    fn description(&self) -> &'static str {
        "AMD ROCm profiler output: rocprof, omniperf workloads, rocprofv3 CSV (counters, kernel times, devices)"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(Rocprof)]
    }
}

export_plugin!(RocmProfiler);

/// What a user may set for every row.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    pub device: Option<String>,
    pub program: Option<String>,
    pub variant: Option<String>,
    /// Import per-channel counters (`TCC_HIT[3]`) too.
    pub channels: bool,
}

/// The files of one directory: one profiled run of a program.
#[derive(Debug, Default)]
struct Workload {
    name: String,
    counters: Option<ProfileFile>,
    trace: Option<ProfileFile>,
    sysinfo: Option<sysinfo::SysInfo>,
}

/// File names read from a directory given in `paths`.
const DIRECTORY_FILES: &[&str] = &["pmc_perf.csv", "timestamps.csv", "sysinfo.csv"];
const DIRECTORY_SUFFIXES: &[&str] = &["_counter_collection.csv", "_kernel_trace.csv"];

/// The files `paths` name: files as given, directories by the names omniperf and rocprofv3 write.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PluginError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| PluginError::io(path, &e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    DIRECTORY_FILES.contains(&n)
                        || DIRECTORY_SUFFIXES.iter().any(|s| n.ends_with(s))
                })
            })
            .collect();
        if found.is_empty() {
            return Err(PluginError::new(format!(
                "{}: no rocprof files in this directory (expected {} or rocprofv3's *{})",
                path.display(),
                DIRECTORY_FILES.join(", "),
                DIRECTORY_SUFFIXES.join(", *")
            )));
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

fn is_sysinfo(path: &Path, text: &str) -> bool {
    path.file_name().is_some_and(|n| n == "sysinfo.csv")
        || text.lines().next().is_some_and(|h| {
            h.contains("gpu_model") || (h.contains("gpu_soc") && h.contains("numCU"))
        })
}

/// Reads the files and directories of `paths` into the canonical tables.
pub fn read_paths(
    paths: &[PathBuf],
    labels: &Labels,
) -> Result<Vec<(String, RecordBatch)>, PluginError> {
    let mut workloads: BTreeMap<PathBuf, Workload> = BTreeMap::new();
    for file in expand(paths)? {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let workload = workloads.entry(dir.clone()).or_insert_with(|| Workload {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| ".".to_owned()),
            ..Workload::default()
        });
        let text = read_text(&file)?;
        if is_sysinfo(&file, &text) {
            workload.sysinfo = Some(sysinfo::read(&file, &text)?);
            continue;
        }
        let parsed = dispatches::read(&file, &text, labels.channels)?;
        let slot = match parsed.kind {
            FileKind::Counters => &mut workload.counters,
            FileKind::Trace => &mut workload.trace,
        };
        if let Some(other) = slot {
            return Err(PluginError::new(format!(
                "{}: a second {} file in {} (the first: {}); one run's files per directory: name one of them in `paths`, or put each run in its own directory",
                file.display(),
                match parsed.kind {
                    FileKind::Counters => "counter",
                    FileKind::Trace => "kernel-trace",
                },
                dir.display(),
                other.path.display()
            )));
        }
        *slot = Some(parsed);
    }
    let mut tables = Tables::new("rocprof", Prefixes::Binary);
    let mut devices: Vec<DeviceRow> = Vec::new();
    for workload in workloads.values() {
        add_workload(&mut tables, workload, labels)?;
        if let Some(info) = &workload.sysinfo {
            let mut row = info.device_row();
            if let Some(d) = &labels.device {
                row.device = d.clone();
            }
            if !devices.iter().any(|r| r.device == row.device) {
                devices.push(row);
            }
        }
    }
    if workloads
        .values()
        .all(|w| w.counters.is_none() && w.trace.is_none())
    {
        return Err(PluginError::new(
            "no dispatch file among `paths` (only sysinfo.csv): expected pmc_perf.csv, timestamps.csv, a rocprof results file or rocprofv3 CSV files",
        ));
    }
    let mut out = tables.finish()?;
    if !devices.is_empty() {
        out.push(("devices".to_owned(), devices_batch(&devices)?));
    }
    Ok(out)
}

/// The dispatches of a trace matched to those of a counter file of the same run: the k-th
/// dispatch of a program in one is the k-th in the other (omniperf numbers `timestamps.csv`
/// from 1 and `pmc_perf.csv` from 0, so identifiers cannot be compared).
fn match_trace<'t>(
    counters: &ProfileFile,
    trace: &'t ProfileFile,
) -> Result<Vec<&'t Dispatch>, PluginError> {
    let mut by_program: HashMap<String, Vec<&Dispatch>> = HashMap::new();
    for d in &trace.dispatches {
        by_program.entry(program_of(&d.kernel)).or_default().push(d);
    }
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut matched = Vec::with_capacity(counters.dispatches.len());
    for d in &counters.dispatches {
        let program = program_of(&d.kernel);
        let k = taken.entry(program.clone()).or_insert(0);
        let in_trace = by_program.get(&program).map_or(0, Vec::len);
        let Some(t) = by_program.get(&program).and_then(|v| v.get(*k)) else {
            let in_counters = counters
                .dispatches
                .iter()
                .filter(|c| program_of(&c.kernel) == program)
                .count();
            return Err(PluginError::new(format!(
                "{}: {in_counters} dispatches of `{program}` but {} has {in_trace}: not files of one run (import them from separate directories)",
                counters.path.display(),
                trace.path.display()
            )));
        };
        *k += 1;
        matched.push(*t);
    }
    Ok(matched)
}

fn add_workload(tables: &mut Tables, w: &Workload, labels: &Labels) -> Result<(), PluginError> {
    // The counter file's dispatches are the runs; a trace in the same directory gives their
    // times (taken without counters running). A trace alone is runs with launch columns.
    let (file, times): (&ProfileFile, Vec<&Dispatch>) = match (&w.counters, &w.trace) {
        (Some(c), Some(t)) => (c, match_trace(c, t)?),
        (Some(c), None) => (c, c.dispatches.iter().collect()),
        (None, Some(t)) => (t, t.dispatches.iter().collect()),
        (None, None) => return Ok(()),
    };
    // Where the times come from: the trace when there is one.
    let time_file = w.trace.as_ref().map_or(&file.path, |t| &t.path);
    let time_file_name = time_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let device = labels
        .device
        .clone()
        .or_else(|| w.sysinfo.as_ref().map(|s| s.gpu_model.clone()));
    for (d, timed) in file.dispatches.iter().zip(times) {
        let program = labels
            .program
            .clone()
            .unwrap_or_else(|| program_of(&d.kernel));
        let run = tables.key(RunKey {
            run_id: format!("{}:{}", w.name, d.id),
            device: device.clone().unwrap_or_else(|| match &d.gpu {
                Some(g) => format!("AMD GPU {g}"),
                None => "AMD GPU".to_owned(),
            }),
            program,
            variant: labels.variant.clone().unwrap_or_default(),
            kernel: Some(d.kernel.clone()),
        });
        if let (Some(start), Some(end)) = (timed.start_ns, timed.end_ns) {
            if end <= start {
                return Err(PluginError::at_line(
                    time_file,
                    timed.line,
                    format!(
                        "dispatch {} ends at {end} ns, not after its start at {start} ns",
                        timed.id
                    ),
                ));
            }
            let mut parameters = format!("dispatch={};time_from={time_file_name}", d.id);
            for (name, value) in d.text.iter().chain(&timed.text) {
                if !parameters.contains(&format!(";{name}=")) {
                    parameters.push_str(&format!(";{name}={}", value.replace([';', '='], ",")));
                }
            }
            tables.add_run(run, Some(&parameters), "kernel", (end - start) as f64 / 1e9);
            // The dispatch on the workload's timeline, one lane per GPU.
            let lane = tables.run_key(run).device.clone();
            let lane = match &timed.gpu {
                Some(g) if !lane.ends_with(g.as_str()) => format!("{lane} (GPU {g})"),
                _ => lane,
            };
            tables.add_span(&yosoku_traces::spans::Span {
                source_row: Some(timed.line as i64),
                ..yosoku_traces::spans::Span::interval(
                    &w.name,
                    yosoku_traces::spans::Timeline::Measured,
                    &lane,
                    "gpu",
                    &d.kernel,
                    "kernel",
                    i64::try_from(start).unwrap_or(i64::MAX),
                    i64::try_from(end - start).unwrap_or(i64::MAX),
                )
            });
        }
        for (name, text, column) in &d.values {
            let i = tables.name(name);
            if !tables.add_text(run, i, text, "") {
                return Err(PluginError::at(
                    &file.path,
                    d.line,
                    *column,
                    format!("`{name}`: expected a number, found `{text}`"),
                ));
            }
        }
    }
    Ok(())
}

struct Rocprof;

impl Collector for Rocprof {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "rocprof",
            "AMD profiler CSV files: omniperf workload directories (pmc_perf.csv, timestamps.csv, sysinfo.csv), rocprof results files, rocprofv3 counter_collection/kernel_trace files; one run's files per directory",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "Files, or directories holding pmc_perf.csv / timestamps.csv / sysinfo.csv / *_counter_collection.csv / *_kernel_trace.csv",
        ))
        .key(ConfigKey::optional(
            "device",
            ConfigType::String,
            None,
            "Device name for every row (default: sysinfo.csv's gpu_model, else `AMD GPU <id>`)",
        ))
        .key(ConfigKey::optional(
            "program",
            ConfigType::String,
            None,
            "Program for every row (default: the kernel's name without arguments)",
        ))
        .key(ConfigKey::optional(
            "variant",
            ConfigType::String,
            None,
            "Variant for every row",
        ))
        .key(ConfigKey::optional(
            "channels",
            ConfigType::Boolean,
            Some(false.into()),
            "Also import per-channel counters (`TCC_HIT[3]`); the channel sums (`TCC_HIT_sum`) are always imported",
        ))
        .key(yosoku_profiler_import::metrics::config_key())
        .tables(&["runs", "counters", "metric_names", "devices", "spans"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = yosoku_profiler_import::metrics::scope(config)?;
        let labels = Labels {
            device: config.opt_string("device")?,
            program: config.opt_string("program")?,
            variant: config.opt_string("variant")?,
            channels: config.boolean("channels")?,
        };
        for (name, batch) in read_paths(&config.path_list("paths")?, &labels)? {
            out.push_batch(&name, batch)?;
        }
        Ok(())
    }
}
