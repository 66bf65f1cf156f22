//! `rocm_profiler`: imports what AMD's profilers write — rocprof (v1 `results.csv`, v2),
//! omniperf / rocprof-compute workloads (`pmc_perf.csv`, `timestamps.csv`, `sysinfo.csv`, and
//! rocprof-compute 3's per-pass `results_pmc_perf_<n>.csv`) and rocprofv3 output
//! (`*_counter_collection.csv`, `*_kernel_trace.csv`, `*_results.json`), and rocprof-compute's
//! analysis database (`rocprof_compute_<hash>.db`, its dispatches) — as the canonical `runs`,
//! `counters`, `metric_names` and `devices` tables (README.md).
//!
//! Counter names are mapped onto the same canonical, vendor-neutral names as NVIDIA's
//! (`crates/plugin/profiler_import/metrics.toml`, tool `rocprof`): `SQ_WAVES` is `warps_launched`,
//! `SQ_INSTS_VMEM_RD` is `gld_request`, `Grid_Size` is `threads`, so that one pipeline takes both.
//!
//! Omniperf workloads also give the `devices` rows of their `sysinfo.csv`.

pub mod compute_db;
pub mod dispatches;
pub mod rocprofv3_json;
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
use yosoku_profiler_import::input::{read_bytes, text_of};
use yosoku_profiler_import::sqlite::is_sqlite;
use yosoku_profiler_import::units::Prefixes;

use crate::dispatches::{Dispatch, FileKind, ProfileFile, program_of};

#[derive(Debug, Default)]
pub struct RocmProfiler;

impl Plugin for RocmProfiler {
    fn name(&self) -> &'static str {
        "rocm_profiler"
    }

    fn description(&self) -> &'static str {
        "AMD ROCm profiler output: rocprof, omniperf / rocprof-compute workloads and databases, rocprofv3 CSV and JSON (counters, kernel times, devices)"
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
    /// The GPUs rocprofv3's JSON describes.
    devices: Vec<DeviceRow>,
    /// Pass files merged into `counters` after its first (rocprof-compute 3's
    /// `results_pmc_perf_<n>.csv`), and the counters two passes both measured: (dispatch,
    /// name) -> (sum, passes).
    passes: Vec<PathBuf>,
    repeated: HashMap<(usize, String), (f64, u32)>,
    /// Dispatch files with their header lines only (the application launched no kernel).
    empty: Vec<PathBuf>,
}

/// File names read from a directory given in `paths` (each also gzip-compressed, `.gz`, as
/// rocprof-compute 3 can write them).
const DIRECTORY_FILES: &[&str] = &["pmc_perf.csv", "timestamps.csv", "sysinfo.csv"];
const DIRECTORY_SUFFIXES: &[&str] = &["_counter_collection.csv", "_kernel_trace.csv"];
/// rocprof-compute's analysis database: `rocprof_compute_<hash>.db`.
const DATABASE_PREFIX: &str = "rocprof_compute_";
const DATABASE_SUFFIX: &str = ".db";
/// rocprofv3's JSON output: read instead of the CSV files of the same output name beside it.
const JSON_SUFFIX: &str = "_results.json";

/// The name without a final `.gz`.
fn without_gz(name: &str) -> &str {
    name.strip_suffix(".gz").unwrap_or(name)
}

/// Whether `path` is one pass of a rocprof-compute workload: `pmc_perf_<n>.csv` (3.0, beside the
/// merged `pmc_perf.csv`) or `results_pmc_perf_<n>.csv` (3.x, with no merged file).
fn is_pass_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let name = without_gz(name);
    let stem = name.strip_suffix(".csv").unwrap_or("");
    let n = stem
        .strip_prefix("results_pmc_perf_")
        .or_else(|| stem.strip_prefix("pmc_perf_"));
    n.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The files of a directory named in `paths`, by the names omniperf, rocprof-compute and
/// rocprofv3 write.
fn directory_files(path: &Path) -> Result<Vec<PathBuf>, PluginError> {
    let names: Vec<String> = std::fs::read_dir(path)
        .map_err(|e| PluginError::io(path, &e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let has_merged = names.iter().any(|n| without_gz(n) == "pmc_perf.csv");
    let json_outputs: Vec<&str> = names
        .iter()
        .filter_map(|n| without_gz(n).strip_suffix(JSON_SUFFIX))
        .collect();
    let mut found: Vec<PathBuf> = names
        .iter()
        .filter(|n| {
            let n = without_gz(n);
            let csv_of_json = DIRECTORY_SUFFIXES.iter().any(|s| {
                n.strip_suffix(s)
                    .is_some_and(|output| json_outputs.contains(&output))
            });
            DIRECTORY_FILES.contains(&n)
                || n.ends_with(JSON_SUFFIX)
                || (n.starts_with(DATABASE_PREFIX) && n.ends_with(DATABASE_SUFFIX))
                || (DIRECTORY_SUFFIXES.iter().any(|s| n.ends_with(s)) && !csv_of_json)
                || (!has_merged && is_pass_file(Path::new(n)))
        })
        .map(|n| path.join(n))
        .collect();
    if found.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no rocprof files in this directory (expected {}, rocprof-compute's results_pmc_perf_<n>.csv or {DATABASE_PREFIX}<hash>{DATABASE_SUFFIX}, or rocprofv3's *{}, *{JSON_SUFFIX})",
            path.display(),
            DIRECTORY_FILES.join(", "),
            DIRECTORY_SUFFIXES.join(", *")
        )));
    }
    found.sort();
    Ok(found)
}

/// The files `paths` name: files as given, directories by the names the tools write.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PluginError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(directory_files(path)?);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Merges one more pass of a rocprof-compute workload into the passes read so far: the same
/// dispatches, further counters, and one more timing of each dispatch.
fn merge_pass(workload: &mut Workload, pass: ProfileFile) -> Result<(), PluginError> {
    let Some(first) = workload.counters.as_mut() else {
        workload.counters = Some(pass);
        return Ok(());
    };
    if pass.dispatches.len() != first.dispatches.len() {
        return Err(PluginError::new(format!(
            "{}: {} dispatches, but the pass {} has {}: not passes of one run (import them from separate directories)",
            pass.path.display(),
            pass.dispatches.len(),
            first.path.display(),
            first.dispatches.len()
        )));
    }
    for d in pass.dispatches {
        let Some(i) = first
            .dispatches
            .iter()
            .position(|e| e.id == d.id && e.gpu == d.gpu)
        else {
            return Err(PluginError::at_line(
                &pass.path,
                d.line,
                format!(
                    "dispatch {} is not in the pass {}: not passes of one run",
                    d.id,
                    first.path.display()
                ),
            ));
        };
        let e = &mut first.dispatches[i];
        if e.kernel != d.kernel {
            return Err(PluginError::at_line(
                &pass.path,
                d.line,
                format!(
                    "dispatch {} is `{}` here but `{}` in the pass {}: not passes of one run",
                    d.id,
                    d.kernel,
                    e.kernel,
                    first.path.display()
                ),
            ));
        }
        if let (Some(t), Some(more)) = (e.timing.as_mut(), d.timing) {
            t.add(more);
        }
        for (name, text, column) in d.values {
            let Some((_, seen, _)) = e.values.iter().find(|(n, _, _)| *n == name) else {
                e.values.push((name, text, column));
                continue;
            };
            if *seen == text {
                continue;
            }
            let number = |t: &str| t.trim().parse::<f64>().ok().filter(|v| v.is_finite());
            let (Some(a), Some(b)) = (number(seen), number(&text)) else {
                return Err(PluginError::at(
                    &pass.path,
                    d.line,
                    column,
                    format!(
                        "`{name}` of dispatch {}: expected a number, found `{text}`",
                        d.id
                    ),
                ));
            };
            if dispatches::is_launch_column(&name) {
                return Err(PluginError::at(
                    &pass.path,
                    d.line,
                    column,
                    format!(
                        "dispatch {} has `{name}` {text} here but {seen} in the pass {}: not passes of one run",
                        d.id,
                        first.path.display()
                    ),
                ));
            }
            // A counter two passes both measured: the mean of the passes.
            let entry = workload.repeated.entry((i, name)).or_insert((a, 1));
            entry.0 += b;
            entry.1 += 1;
        }
    }
    workload.passes.push(pass.path);
    Ok(())
}

fn is_sysinfo(path: &Path, text: &str) -> bool {
    path.file_name().is_some_and(|n| n == "sysinfo.csv")
        || text.lines().next().is_some_and(|h| {
            h.contains("gpu_model") || (h.contains("gpu_soc") && h.contains("numCU"))
        })
}

/// Tables by name, as a collector pushes them.
pub type NamedTables = Vec<(String, RecordBatch)>;

/// Reads the files and directories of `paths` into the canonical tables.
pub fn read_paths(
    paths: &[PathBuf],
    labels: &Labels,
) -> Result<Vec<(String, RecordBatch)>, PluginError> {
    read_paths_noted(paths, labels).map(|(tables, _)| tables)
}

/// [`read_paths`], and what it noted for the user (workloads left out for holding no
/// dispatch).
pub fn read_paths_noted(
    paths: &[PathBuf],
    labels: &Labels,
) -> Result<(NamedTables, Vec<String>), PluginError> {
    let mut workloads: BTreeMap<PathBuf, Workload> = BTreeMap::new();
    let mut database_notes = Vec::new();
    for file in expand(paths)? {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let workload = workloads.entry(dir.clone()).or_insert_with(|| Workload {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| ".".to_owned()),
            ..Workload::default()
        });
        let bytes = read_bytes(&file)?;
        if is_sqlite(&bytes) {
            let db = compute_db::read(&file, &bytes)?;
            if db.sysinfo.is_some() {
                workload.sysinfo = db.sysinfo;
            }
            database_notes.push(db.note);
            add_file(workload, &dir, &file, db.file)?;
            continue;
        }
        let text = text_of(&file, bytes)?;
        if is_sysinfo(&file, &text) {
            workload.sysinfo = Some(sysinfo::read(&file, &text)?);
            continue;
        }
        let parsed = if rocprofv3_json::is_rocprofv3_json(&text) {
            let run = rocprofv3_json::read(&file, &text)?;
            workload.devices.extend(run.devices);
            run.files
        } else {
            vec![dispatches::read(&file, &text, labels.channels)?]
        };
        for parsed in parsed {
            add_file(workload, &dir, &file, parsed)?;
        }
    }
    finish_passes(&mut workloads);
    let mut tables = Tables::new("rocprof", Prefixes::Binary);
    for note in database_notes {
        tables.add_note(note);
    }
    let mut devices: Vec<DeviceRow> = Vec::new();
    for workload in workloads.values() {
        add_workload(&mut tables, workload, labels)?;
        let rows = workload
            .sysinfo
            .iter()
            .map(sysinfo::SysInfo::device_row)
            .chain(workload.devices.iter().cloned());
        for mut row in rows {
            if let Some(d) = &labels.device {
                row.device = d.clone();
            }
            if !devices.iter().any(|r| r.device == row.device) {
                devices.push(row);
            }
        }
    }
    let without_dispatches: Vec<String> = workloads
        .values()
        .filter(|w| w.counters.is_none() && w.trace.is_none() && !w.empty.is_empty())
        .map(|w| {
            let files: Vec<String> = w.empty.iter().map(|p| p.display().to_string()).collect();
            files.join(", ")
        })
        .collect();
    if workloads
        .values()
        .all(|w| w.counters.is_none() && w.trace.is_none())
    {
        if !without_dispatches.is_empty() {
            return Err(PluginError::new(format!(
                "no dispatch in {}: header lines only, so the profiled application launched no kernel on the GPU (rocprof-compute and rocprof write a workload's files with their headers alone then); profile a run that reaches the GPU",
                without_dispatches.join("; ")
            )));
        }
        return Err(PluginError::new(
            "no dispatch file among `paths` (only sysinfo.csv): expected pmc_perf.csv, timestamps.csv, a rocprof results file or rocprofv3 CSV or JSON files",
        ));
    }
    for files in &without_dispatches {
        tables.add_note(format!(
            "{files}: header lines only, no dispatch (the application launched no kernel in this workload): left out"
        ));
    }
    let notes = tables.notes().to_vec();
    let mut out = tables.finish()?;
    if !devices.is_empty() {
        out.push(("devices".to_owned(), devices_batch(&devices)?));
    }
    Ok((out, notes))
}

/// The counters two passes both measured, set to their mean.
fn finish_passes(workloads: &mut BTreeMap<PathBuf, Workload>) {
    for w in workloads.values_mut() {
        let Some(counters) = w.counters.as_mut() else {
            continue;
        };
        for ((i, name), (sum, n)) in w.repeated.drain() {
            if let Some(v) = counters.dispatches[i]
                .values
                .iter_mut()
                .find(|(v, _, _)| *v == name)
            {
                v.1 = format!("{:?}", sum / f64::from(n));
            }
        }
    }
}

/// Puts a file read into its directory's workload: its counter file or its trace, or one more
/// pass of its counters.
fn add_file(
    workload: &mut Workload,
    dir: &Path,
    file: &Path,
    parsed: ProfileFile,
) -> Result<(), PluginError> {
    if parsed.dispatches.is_empty() {
        workload.empty.push(parsed.path);
        return Ok(());
    }
    if parsed.kind == FileKind::Counters
        && is_pass_file(&parsed.path)
        && workload
            .counters
            .as_ref()
            .is_some_and(|first| is_pass_file(&first.path))
    {
        return merge_pass(workload, parsed);
    }
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
    Ok(())
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
    // Where the times come from: the trace when there is one; else the counter file, or every
    // pass of it.
    let time_file = w.trace.as_ref().map_or(&file.path, |t| &t.path);
    let file_name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut time_file_name = file_name(time_file);
    if w.trace.is_none() {
        for pass in &w.passes {
            time_file_name.push('+');
            time_file_name.push_str(&file_name(pass));
        }
    }
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
            device: device
                .clone()
                .or_else(|| d.device.clone())
                .unwrap_or_else(|| match &d.gpu {
                    Some(g) => format!("AMD GPU {g}"),
                    None => "AMD GPU".to_owned(),
                }),
            program,
            variant: labels.variant.clone().unwrap_or_default(),
            kernel: Some(d.kernel.clone()),
        });
        if let Some(timing) = timed.timing {
            if !timing.ends_after_start() {
                let (start, end) = timing.describe();
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
            if timing.passes > 1 {
                // Timed once per pass of counters: the run's time is their mean.
                parameters.push_str(&format!(";passes={}", timing.passes));
            }
            for (name, value) in d.text.iter().chain(&timed.text) {
                if !parameters.contains(&format!(";{name}=")) {
                    parameters.push_str(&format!(";{name}={}", value.replace([';', '='], ",")));
                }
            }
            tables.add_run(run, Some(&parameters), "kernel", timing.duration_secs());
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
                    i64::try_from(timing.start_ns()).unwrap_or(i64::MAX),
                    i64::try_from(timing.duration_ns()).unwrap_or(i64::MAX),
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
            "AMD profiler files: omniperf / rocprof-compute workload directories (pmc_perf.csv, timestamps.csv, sysinfo.csv, results_pmc_perf_<n>.csv passes), rocprof results files, rocprofv3 counter_collection/kernel_trace CSV and results JSON; one run's files per directory",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "Files, or directories holding pmc_perf.csv / timestamps.csv / sysinfo.csv / results_pmc_perf_<n>.csv / *_counter_collection.csv / *_kernel_trace.csv / *_results.json (each may be .gz)",
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
        let (tables, notes) = read_paths_noted(&config.path_list("paths")?, &labels)?;
        for note in &notes {
            out.progress(0, 0, note);
        }
        for (name, batch) in tables {
            out.push_batch(&name, batch)?;
        }
        Ok(())
    }
}
