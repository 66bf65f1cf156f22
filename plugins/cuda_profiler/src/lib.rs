//! `cuda_profiler`: imports what NVIDIA's profilers write, as canonical `runs`, `counters` and
//! `metric_names` tables (README.md):
//!
//! | collector | reads |
//! |---|---|
//! | `ncu` | `ncu --csv` details page (long form) and raw page (wide, units row) |
//! | `nvprof` | `nvprof --csv` metric and event summaries, `--print-gpu-trace` |
//! | `nsys` | Nsight Systems' SQLite export (`nsys export --type sqlite`: launches, copies, CUDA calls, NVTX ranges; [`nsys_sqlite`]) or its `nsys stats --format csv` reports ([`nsys`]) |
//! | `legacy` | CUDA_PROFILE / COMPUTE_PROFILE logs, versions 1.x and 2.0 |
//! | `gpuperfpredict` | the gpuperfpredict dataset's R-exported CSV files, gzip or not |
//! | `neusight` | NeuSight's measured kernel files (operator dimensions, grid, block, latency), gzip or not, with the work derived from the dimensions ([`neusight`]) |
//! | `ncu_run` (runner) | runs a CUDA program under `ncu` (and `nsys`), then reads what they wrote ([`ncu_run`]) |
//!
//! Metric names are mapped to canonical ones by `metrics.toml` (crates/plugin/profiler_import); units
//! are normalised.
//!
//! Large ncu details pages and gpuperfpredict files are read in pieces on all cores; the ncu
//! reader splits records with `simd-csv` and reuses the name and unit conversion of the row at the
//! same place in the launch before when its raw fields are the same. Beside the importers, not built
//! by cargo, `include/yosoku_trace.cuh` is the device-side in-kernel trace logger whose files the
//! `traces` plugin reads (docs/cuda-trace.md).

pub mod gpuperfpredict;
pub mod legacy;
pub mod ncu;
pub mod ncu_run;
pub mod neusight;
pub mod nsys;
pub mod nsys_sqlite;
pub mod nvprof;

// What the importers share with the other profiler plugins.
pub use yosoku_profiler_import::{builder, devices, input, metrics, quoted, units};

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};

#[derive(Debug, Default)]
pub struct CudaProfiler;

impl Plugin for CudaProfiler {
    fn name(&self) -> &'static str {
        "cuda_profiler"
    }

    fn description(&self) -> &'static str {
        "NVIDIA profiler output: Nsight Compute, Nsight Systems' statistics, nvprof, legacy CUDA profiler logs, the gpuperfpredict and NeuSight datasets"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(Ncu),
            Box::new(Nvprof),
            Box::new(Legacy),
            Box::new(GpuPerfPredict),
            Box::new(NeuSight),
            Box::new(Nsys),
            Box::new(NcuRunCollector),
        ]
    }
}

export_plugin!(CudaProfiler);

/// Tables an importer made, by name.
pub type Tables = Vec<(String, RecordBatch)>;

const TABLES: &[&str] = &["runs", "counters", "metric_names"];
/// A raw page also describes its device (`device__attribute_*`).
const NCU_TABLES: &[&str] = &["runs", "counters", "metric_names", "devices"];

fn label_keys(info: CollectorInfo) -> CollectorInfo {
    info.key(metrics::config_key())
        .key(ConfigKey::optional(
            "device",
            ConfigType::String,
            None,
            "Device name for every row (default: what the file says)",
        ))
        .key(ConfigKey::optional(
            "program",
            ConfigType::String,
            None,
            "Program for every row (default: the kernel's name)",
        ))
}

fn push(out: &mut Output<'_>, tables: Tables) -> Result<(), PluginError> {
    for (name, batch) in tables {
        out.push_batch(&name, batch)?;
    }
    Ok(())
}

/// Reads an `ncu --csv` file (details or raw page).
pub fn read_ncu(path: &Path, labels: &ncu::Labels) -> Result<Tables, PluginError> {
    read_ncu_noted(path, labels).map(|(tables, _)| tables)
}

/// [`read_ncu`], with what the reader noted about the file (lines of program output skipped).
pub fn read_ncu_noted(
    path: &Path,
    labels: &ncu::Labels,
) -> Result<(Tables, Vec<String>), PluginError> {
    // Captures run to hundreds of MB: hashed on another thread while they are parsed.
    input::with_text(path, |text| noted(ncu::read(path, text, labels)?))
}

/// Reads an `nvprof --csv` file (summary or GPU trace).
pub fn read_nvprof(path: &Path, labels: &nvprof::Labels) -> Result<Tables, PluginError> {
    read_nvprof_noted(path, labels).map(|(tables, _)| tables)
}

/// [`read_nvprof`], with what the reader noted about the file (lines of program output
/// skipped).
pub fn read_nvprof_noted(
    path: &Path,
    labels: &nvprof::Labels,
) -> Result<(Tables, Vec<String>), PluginError> {
    let text = input::read_text(path)?;
    noted(nvprof::read(path, &text, labels)?)
}

/// The tables of a reader, and its notes.
fn noted(tables: builder::Tables) -> Result<(Tables, Vec<String>), PluginError> {
    let notes = tables.notes().to_vec();
    Ok((tables.finish()?, notes))
}

/// Tells the host what the reader noted (said to the user while the run goes on), then pushes
/// the tables.
fn push_noted(
    out: &mut Output<'_>,
    (tables, notes): (Tables, Vec<String>),
) -> Result<(), PluginError> {
    for note in &notes {
        out.progress(0, 0, note);
    }
    push(out, tables)
}

/// Reads a legacy CUDA profiler log.
pub fn read_legacy(path: &Path, labels: &legacy::Labels) -> Result<Tables, PluginError> {
    let text = input::read_text(path)?;
    legacy::read(path, &text, labels)?.finish()
}

/// Reads gpuperfpredict dataset files into `runs`, `observations` and `metric_names`.
pub fn read_gpuperfpredict(paths: &[impl AsRef<Path>]) -> Result<Tables, PluginError> {
    read_gpuperfpredict_with(paths, &mut |_, _, _| {})
}

/// [`read_gpuperfpredict`], reporting (files done, files, next file) before each file.
pub fn read_gpuperfpredict_with(
    paths: &[impl AsRef<Path>],
    progress: &mut dyn FnMut(usize, usize, &Path),
) -> Result<Tables, PluginError> {
    let mut dataset = gpuperfpredict::Dataset::new();
    for (i, path) in paths.iter().enumerate() {
        let path = path.as_ref();
        progress(i, paths.len(), path);
        let text = input::read_text(path)?;
        dataset.read(path, &text)?;
    }
    dataset.finish()
}

struct Ncu;

impl Collector for Ncu {
    fn info(&self) -> CollectorInfo {
        label_keys(CollectorInfo::importer(
            "ncu",
            "`ncu --csv` output, details page (long form) or raw page (wide): counters per launch, kernel durations as runs",
        ))
        .key(ConfigKey::optional(
            "path",
            ConfigType::Path,
            None,
            "The CSV file (gzip allowed); or give `paths`",
        ))
        .key(ConfigKey::optional(
            "paths",
            ConfigType::PathList,
            None,
            "Several reports of one sweep, one per configuration, read as one (e.g. `runs/512/ncu.csv`, `runs/1024/ncu.csv`)",
        ))
        .key(ConfigKey::optional(
            "variants",
            ConfigType::StringList,
            None,
            "With `path`: the variant of each launch, in launch order (e.g. the input sizes of a sweep)",
        ))
        .key(ConfigKey::optional(
            "variant_from_path",
            ConfigType::String,
            None,
            "With `paths`: every launch's variant, from its file's path: `{parent}` (the name of its directory) and `{stem}` (its name before the first dot) are replaced",
        ))
        .tables(NCU_TABLES)
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        NcuInput::of(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let labels = ncu::Labels {
            device: config.opt_string("device")?,
            program: config.opt_string("program")?,
            variants: config
                .get("variants")
                .map(|_| config.string_list("variants"))
                .transpose()?,
        };
        match NcuInput::of(config)? {
            NcuInput::One(path) => push_noted(out, read_ncu_noted(&path, &labels)?),
            NcuInput::Sweep(paths, from_path) => {
                push_noted(out, read_ncu_files(&paths, &labels, from_path.as_deref())?)
            }
        }
    }
}

/// What an `ncu` source reads: one report (`path`, with `variants` per launch), or the reports
/// of a sweep (`paths`, with `variant_from_path` per file).
enum NcuInput {
    One(PathBuf),
    Sweep(Vec<PathBuf>, Option<String>),
}

impl NcuInput {
    fn of(config: &Config) -> Result<Self, PluginError> {
        let from_path = config.opt_string("variant_from_path")?;
        match (config.get("path"), config.get("paths")) {
            (Some(_), None) if from_path.is_some() => Err(PluginError::new(
                "variant_from_path: give it with `paths`; with `path`, `variants` names each launch's variant",
            )),
            (Some(_), None) => Ok(Self::One(config.path("path")?)),
            (None, Some(_)) if config.get("variants").is_some() => Err(PluginError::new(
                "variants: give it with `path`; with `paths`, `variant_from_path` names each file's variant",
            )),
            (None, Some(_)) => Ok(Self::Sweep(config.path_list("paths")?, from_path)),
            _ => Err(PluginError::new(
                "path, paths: expected one of them: the report, or the reports of a sweep",
            )),
        }
    }
}

/// Reads several `ncu --csv` reports (a sweep, one report per configuration) as one: every run
/// id is prefixed with its file's path below the directory all the files are in (ids restart in
/// each report; `512/ncu.csv.gz:0`), and every launch of a file has the variant
/// `variant_from_path` makes of its path ([`path_variant`]; none: empty).
pub fn read_ncu_files(
    paths: &[PathBuf],
    labels: &ncu::Labels,
    variant_from_path: Option<&str>,
) -> Result<(Tables, Vec<String>), PluginError> {
    let common = common_directory(paths);
    let mut all: Option<builder::Tables> = None;
    for path in paths {
        let shown = path
            .strip_prefix(&common)
            .unwrap_or(path)
            .display()
            .to_string();
        let mut part = input::with_text(path, |text| ncu::read(path, text, labels))?;
        let variant = variant_from_path
            .map(|t| path_variant(t, path))
            .transpose()?
            .unwrap_or_default();
        part.relabel(|key| {
            key.run_id = format!("{shown}:{}", key.run_id);
            key.variant.clone_from(&variant);
        });
        match &mut all {
            None => all = Some(part),
            Some(tables) => tables.append_file(part)?,
        }
    }
    noted(all.ok_or_else(|| PluginError::new("paths: expected one file or more, found none"))?)
}

/// The deepest directory every one of `paths` is in (empty when they share none).
fn common_directory(paths: &[PathBuf]) -> PathBuf {
    let mut common: Option<PathBuf> = None;
    for path in paths {
        let dir = path.parent().unwrap_or(Path::new(""));
        common = Some(match common {
            None => dir.to_path_buf(),
            Some(c) => c
                .components()
                .zip(dir.components())
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    common.unwrap_or_default()
}

/// `template` with `{parent}` (the name of `path`'s directory) and `{stem}` (its file name
/// before the first dot) replaced: `{parent}` of `runs/512/ncu.csv.gz` is `512`, `{stem}` `ncu`.
pub fn path_variant(template: &str, path: &Path) -> Result<String, PluginError> {
    let name = |p: Option<&Path>, what: &str| {
        p.and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .map(str::to_owned)
            .ok_or_else(|| {
                PluginError::new(format!(
                    "variant_from_path: {} has no {what} to name a variant by",
                    path.display()
                ))
            })
    };
    let mut variant = template.to_owned();
    if variant.contains("{parent}") {
        variant = variant.replace("{parent}", &name(path.parent(), "directory")?);
    }
    if variant.contains("{stem}") {
        let file = name(Some(path), "file name")?;
        let stem = file.split('.').next().unwrap_or(&file).to_owned();
        variant = variant.replace("{stem}", &stem);
    }
    Ok(variant)
}

struct Nvprof;

impl Collector for Nvprof {
    fn info(&self) -> CollectorInfo {
        label_keys(CollectorInfo::importer(
            "nvprof",
            "`nvprof --csv` output: metric/event summaries (counters) or `--print-gpu-trace` (runs, and the timeline as spans)",
        ))
        .key(ConfigKey::required("path", ConfigType::Path, "The CSV file (gzip allowed)"))
        .key(ConfigKey::optional("variant", ConfigType::String, None, "Variant for every row"))
        .key(ConfigKey::optional(
            "prefix_names",
            ConfigType::StringList,
            None,
            "Names of columns a script prefixed to a trace's lines (they label each run's variant)",
        ))
        .tables(&["runs", "counters", "metric_names", "spans"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let labels = nvprof::Labels {
            device: config.opt_string("device")?,
            program: config.opt_string("program")?,
            variant: config.opt_string("variant")?,
            prefix_names: config
                .get("prefix_names")
                .map(|_| config.string_list("prefix_names"))
                .transpose()?,
        };
        push_noted(out, read_nvprof_noted(&config.path("path")?, &labels)?)
    }
}

/// Reads Nsight Systems' statistics exports of one profiled run, or its SQLite export.
pub fn read_nsys(paths: &[PathBuf], labels: &nsys::Labels) -> Result<Tables, PluginError> {
    read_nsys_noted(paths, labels).map(|(tables, _)| tables)
}

/// [`read_nsys`], with what the reader noted (what an SQLite export held).
pub fn read_nsys_noted(
    paths: &[PathBuf],
    labels: &nsys::Labels,
) -> Result<(Tables, Vec<String>), PluginError> {
    let contents = paths
        .iter()
        .map(|p| input::read_bytes(p))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(i) = contents.iter().position(|b| nsys_sqlite::is_sqlite(b)) {
        if paths.len() > 1 {
            return Err(PluginError::new(format!(
                "{}: an SQLite export holds a whole profiled run: give it alone in `paths`, not beside {} other file(s)",
                paths[i].display(),
                paths.len() - 1
            )));
        }
        return noted(nsys_sqlite::read(&paths[i], &contents[i], labels)?);
    }
    let texts = paths
        .iter()
        .zip(contents)
        .map(|(p, bytes)| input::text_of(p, bytes))
        .collect::<Result<Vec<_>, _>>()?;
    let files: Vec<(&Path, &str)> = paths
        .iter()
        .map(PathBuf::as_path)
        .zip(texts.iter().map(String::as_str))
        .collect();
    noted(nsys::read(&files, labels)?)
}

struct Nsys;

impl Collector for Nsys {
    fn info(&self) -> CollectorInfo {
        label_keys(CollectorInfo::importer(
            "nsys",
            "Nsight Systems: its SQLite export (`nsys export --type sqlite`: every kernel launch as a run on its GPU with its launch configuration; kernels, copies and sets on their streams, CUDA API calls and NVTX ranges on their threads, as spans), or its statistics (`nsys stats --format csv`: cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, cuda_gpu_trace): kernels, copies and CUDA calls as runs (count and total time; each instance's average, median, minimum, maximum and spread as counters), the GPU trace as spans",
        ))
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "The SQLite export of a run (alone), or the CSV files of one run's reports (`nsys stats --output <prefix>` writes <prefix>_<report>.csv), or what nsys printed (several reports in one file)",
        ))
        .key(ConfigKey::optional("variant", ConfigType::String, None, "Variant for every run"))
        .tables(&["runs", "counters", "metric_names", "spans"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let labels = nsys::Labels {
            device: config.opt_string("device")?,
            program: config.opt_string("program")?,
            variant: config.opt_string("variant")?,
        };
        push_noted(out, read_nsys_noted(&config.path_list("paths")?, &labels)?)
    }
}

struct Legacy;

impl Collector for Legacy {
    fn info(&self) -> CollectorInfo {
        label_keys(CollectorInfo::importer(
            "legacy",
            "Legacy CUDA profiler logs (CUDA_PROFILE / COMPUTE_PROFILE), versions 1.x and 2.0",
        ))
        .key(ConfigKey::required(
            "path",
            ConfigType::Path,
            "The log file",
        ))
        .key(ConfigKey::optional(
            "variant",
            ConfigType::String,
            None,
            "Variant for every row",
        ))
        .tables(TABLES)
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let labels = legacy::Labels {
            device: config.opt_string("device")?,
            program: config.opt_string("program")?,
            variant: config.opt_string("variant")?,
        };
        push(out, read_legacy(&config.path("path")?, &labels)?)
    }
}

struct GpuPerfPredict;

impl Collector for GpuPerfPredict {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "gpuperfpredict",
                        "The gpuperfpredict dataset (.csv or .csv.gz, one file per kernel and GPU): one row per launch, as `observations` (a column per counter) and `runs`",
        )
        .key(ConfigKey::required("paths", ConfigType::PathList, "The dataset files"))
        .key(metrics::config_key())
        .tables(&["runs", "observations", "metric_names"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let paths = config.path_list("paths")?;
        let tables = read_gpuperfpredict_with(&paths, &mut |done, total, path| {
            out.progress(done as u64, total as u64, &path.display().to_string());
        })?;
        push(out, tables)
    }
}

/// Reads NeuSight kernel files into `runs`, `counters` and `metric_names`.
pub fn read_neusight_with(
    paths: &[impl AsRef<Path>],
    progress: &mut dyn FnMut(usize, usize, &Path),
) -> Result<Tables, PluginError> {
    let mut tables = neusight::tables();
    for (i, path) in paths.iter().enumerate() {
        let path = path.as_ref();
        progress(i, paths.len(), path);
        let text = input::read_text(path)?;
        neusight::read(path, &text, &mut tables)?;
    }
    tables.finish()
}

struct NeuSight;

impl Collector for NeuSight {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "neusight",
            "NeuSight's measured kernel files (.csv or .csv.gz): one run per operator shape and GPU, its grid and block and the FLOPs and bytes its dimensions imply as counters",
        )
        .key(ConfigKey::required("paths", ConfigType::PathList, "The files"))
        .key(metrics::config_key())
        .tables(TABLES)
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let paths = config.path_list("paths")?;
        let tables = read_neusight_with(&paths, &mut |done, total, path| {
            out.progress(done as u64, total as u64, &path.display().to_string());
        })?;
        push(out, tables)
    }
}

struct NcuRunCollector;

impl Collector for NcuRunCollector {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::runner(
            "ncu_run",
            "Runs a CUDA program under Nsight Compute (`ncu --csv --page raw`) with the metric set the counter and device-prediction models read, and nsys's kernel timeline when nsys is there",
        )
        .key(metrics::config_key())
        .key(ConfigKey::optional(
            "device",
            ConfigType::String,
            None,
            "Device name for every row (default: what ncu says)",
        ))
        .key(ConfigKey::required("program", ConfigType::Path, "The CUDA program to run (`runs.program` is each kernel's name)"))
        .key(ConfigKey::optional(
            "args",
            ConfigType::StringList,
            Some(Vec::<String>::new().into()),
            "Its arguments",
        ))
        .key(ConfigKey::optional(
            "ncu_metrics",
            ConfigType::StringList,
            Some(
                ncu_run::default_metrics().into(),
            ),
            "ncu metric names to collect (default: what the counter and device-prediction models read); `metrics` is, as for the other collectors, your own mapping files",
        ))
        .key(ConfigKey::optional(
            "kernel_name",
            ConfigType::String,
            None,
            "Profile only these kernels (ncu's --kernel-name: a name, or `regex:<expression>`)",
        ))
        .key(ConfigKey::optional(
            "launch_skip",
            ConfigType::Integer,
            None,
            "Launches (of the matching kernels) to skip first (--launch-skip)",
        ))
        .key(ConfigKey::optional(
            "launch_count",
            ConfigType::Integer,
            None,
            "Launches to profile at most (--launch-count)",
        ))
        .key(ConfigKey::optional(
            "clock_control",
            ConfigType::String,
            None,
            "ncu's --clock-control: `base` (clocks locked at base; ncu's default when not given) or `none` (as the driver runs them)",
        ))
        .key(ConfigKey::optional(
            "timeout_secs",
            ConfigType::Float,
            Some(3600.0.into()),
            "Kill the run (ncu, the program and its children) after this long",
        ))
        .key(ConfigKey::optional(
            "log_dir",
            ConfigType::String,
            None,
            "Keep ncu's report (ncu.csv), the program's output and the command lines in this new or empty directory",
        ))
        .key(ConfigKey::optional(
            "ncu",
            ConfigType::String,
            None,
            "The ncu to run (default: ncu on PATH, then /usr/local/cuda*/bin)",
        ))
        .key(ConfigKey::optional(
            "nsys",
            ConfigType::String,
            None,
            "The nsys to run (default: nsys on PATH, then /usr/local/cuda*/bin)",
        ))
        .key(ConfigKey::optional(
            "nsys_trace",
            ConfigType::String,
            Some("auto".into()),
            "The kernels' timeline from a second run under `nsys profile --trace=cuda`: auto (when nsys is found), yes, no",
        ))
        .key(ConfigKey::optional(
            "variants",
            ConfigType::StringList,
            None,
            "The variant of each profiled launch, in launch order (e.g. the input sizes of a sweep)",
        ))
        .tables(&["runs", "counters", "metric_names", "devices", "spans"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        ncu_run::NcuRun::from(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let _metrics = metrics::scope(config)?;
        let run = ncu_run::NcuRun::from(config)?;
        let labels = ncu::Labels {
            device: config.opt_string("device")?,
            program: None,
            variants: config
                .get("variants")
                .map(|_| config.string_list("variants"))
                .transpose()?,
        };
        // Where the files go: the kept log_dir, or a directory removed afterwards.
        let (dir, temporary) = match &run.log_dir {
            Some(d) => (d.clone(), false),
            None => (
                std::env::temp_dir().join(format!(
                    "yosoku-ncu-run-{}-{}",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos())
                )),
                true,
            ),
        };
        std::fs::create_dir_all(&dir).map_err(|e| PluginError::io(&dir, &e))?;
        let result = (|| {
            out.progress(
                0,
                1,
                &format!("running {} under ncu", run.program.display()),
            );
            let ran = run.run(&dir)?;
            let (mut tables, notes) = read_ncu_noted(&ran.report, &labels)?;
            if let Some(trace) = &ran.trace {
                let text = input::read_text(trace)?;
                let timeline = run.program.file_name().map_or_else(
                    || "program".to_owned(),
                    |n| n.to_string_lossy().into_owned(),
                );
                tables.push((
                    "spans".to_owned(),
                    nsys::read_gpu_trace(trace, &text, &timeline)?,
                ));
            }
            let mut notes = notes;
            notes.extend(ran.commands.iter().map(|c| format!("command: {c}")));
            Ok::<_, PluginError>((tables, notes))
        })();
        if temporary {
            let _ = std::fs::remove_dir_all(&dir);
        }
        push_noted(out, result?)
    }
}
