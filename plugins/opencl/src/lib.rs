//! `opencl`: measures OpenCL kernels on any OpenCL device (README.md).
//!
//! Collector `run` builds the kernel suite (`kernels/*.cl`, [`suite`]) for every selected device,
//! times each configuration from profiling events ([`measure`]), checks every output against a
//! CPU reference, computes each launch's work counters from its arguments and NDRange, and
//! returns `runs`, `counters` (origin `computed`), `metric_names`, `kernel_timings`,
//! `kernel_launches` and `devices`. Users' kernels come as TOML kernel files ([`declared`],
//! `kernel_files`): the same tables, checked against a reference kernel of the file. With a
//! `log_dir` it keeps the run's record
//! (`opencl-run.json`), which collector `logs` re-imports into the same tables. Collector
//! `devices` lists what a machine has.
//!
//! The OpenCL library is loaded at run time: the plugin builds and loads where there is no
//! OpenCL, and a run there fails with one error saying what to install.
//!
//! Timing follows warm-up and stopping rules ([`measure`]); the ICD loader is opencl3's
//! `dynamic` one.

pub mod declared;
pub mod device;
pub mod measure;
pub mod record;
pub mod suite;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};
use yosoku_profiler_import::devices::devices_batch;

use crate::declared::{Configuration, KernelFile};
use crate::device::{Selector, choose, device_type};
use crate::measure::{Session, Settings};
use crate::record::{FORMAT, RECORD_FILE, RunRecord, VERSION};
use crate::suite::{Preset, SUITE, SuiteKernel};

#[derive(Debug, Default)]
pub struct OpenCl;

impl Plugin for OpenCl {
    fn name(&self) -> &'static str {
        "opencl"
    }

    fn description(&self) -> &'static str {
        "OpenCL kernels measured on any OpenCL device: a suite with and without local memory, vector widths, computed work counters"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(Run), Box::new(Logs), Box::new(Devices)]
    }
}

export_plugin!(OpenCl);

/// The tables `run` and `logs` produce.
const RUN_TABLES: &[&str] = &[
    "runs",
    "counters",
    "metric_names",
    "kernel_timings",
    "kernel_launches",
    "devices",
];

/// One configuration to measure.
#[derive(Debug, Clone)]
pub struct Job {
    pub kernel: &'static dyn SuiteKernel,
    pub variant: &'static str,
    pub size: u64,
}

impl std::fmt::Debug for dyn SuiteKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.program())
    }
}

/// A `run` configuration, checked.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub platform: Selector,
    pub device: Selector,
    pub device_type: u64,
    pub jobs: Vec<Job>,
    /// The configurations of the kernel files (`kernel_files`), after the suite's jobs.
    pub declared: Vec<Configuration>,
    pub settings: Settings,
    pub timeout: Duration,
    pub log_dir: Option<PathBuf>,
    pub run_id: String,
    pub kernel_dir: Option<PathBuf>,
    /// The configuration as given, for the record.
    pub given: BTreeMap<String, String>,
}

fn positive(config: &Config, key: &str) -> Result<usize, PluginError> {
    let v = config.integer(key)?;
    usize::try_from(v)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| PluginError::new(format!("{key}: expected a positive integer, found {v}")))
}

/// `program` or `program/variant` entries of `kernels` (`all` for the whole suite), with the
/// sizes of `preset` unless `sizes` has `program=n,n,...` for the program.
fn jobs(
    kernels: &[String],
    preset: Preset,
    sizes: &[String],
    group: usize,
) -> Result<Vec<Job>, PluginError> {
    let known = || {
        SUITE
            .iter()
            .map(|k| k.program())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut overrides: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for entry in sizes {
        let (program, list) = entry.split_once('=').ok_or_else(|| {
            PluginError::new(format!("sizes: `{entry}`: expected `program=n,n,...`"))
        })?;
        let program = program.trim();
        if suite::find(program).is_none() {
            return Err(PluginError::new(format!(
                "sizes: `{entry}`: no program `{program}` in the suite ({})",
                known()
            )));
        }
        let values = list
            .split(',')
            .map(|n| n.trim().parse::<u64>().ok().filter(|n| *n > 0))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| {
                PluginError::new(format!("sizes: `{entry}`: sizes must be positive integers"))
            })?;
        overrides.insert(suite::find(program).map_or("", |k| k.program()), values);
    }
    let mut selected: Vec<(&'static dyn SuiteKernel, Vec<&'static str>)> = Vec::new();
    for entry in kernels {
        let (program, variant) = match entry.split_once('/') {
            Some((p, v)) => (p.trim(), Some(v.trim())),
            None => (entry.trim(), None),
        };
        let picked: Vec<&'static dyn SuiteKernel> = if program == "all" {
            SUITE.to_vec()
        } else {
            vec![suite::find(program).ok_or_else(|| {
                PluginError::new(format!(
                    "kernels: no program `{program}` in the suite ({})",
                    known()
                ))
            })?]
        };
        for k in picked {
            let variants: Vec<&'static str> = match variant {
                None => k.variants().to_vec(),
                Some(v) => {
                    vec![
                        k.variants()
                            .iter()
                            .copied()
                            .find(|x| *x == v)
                            .ok_or_else(|| {
                                PluginError::new(format!(
                                    "kernels: `{entry}`: {} has variants {}",
                                    k.program(),
                                    k.variants().join(", ")
                                ))
                            })?,
                    ]
                }
            };
            match selected
                .iter_mut()
                .find(|(s, _)| s.program() == k.program())
            {
                Some((_, vs)) => {
                    for v in variants {
                        if !vs.contains(&v) {
                            vs.push(v);
                        }
                    }
                }
                None => selected.push((k, variants)),
            }
        }
    }
    let mut out = Vec::new();
    for (k, variants) in selected {
        let sizes = overrides
            .get(k.program())
            .cloned()
            .unwrap_or_else(|| k.sizes(preset).to_vec());
        for size in &sizes {
            k.check_size(*size, group)
                .map_err(|e| PluginError::new(format!("{} at size {size}: {e}", k.program())))?;
        }
        for variant in variants {
            for size in &sizes {
                out.push(Job {
                    kernel: k,
                    variant,
                    size: *size,
                });
            }
        }
    }
    Ok(out)
}

impl RunConfig {
    pub fn from(config: &Config) -> Result<Self, PluginError> {
        let preset_text = config.string("preset")?;
        let preset = Preset::parse(&preset_text).ok_or_else(|| {
            PluginError::new(format!(
                "preset: `{preset_text}`, expected `standard` or `quick`"
            ))
        })?;
        let group = positive(config, "work_group_size")?;
        let settings = Settings {
            warmup: usize::try_from(config.integer("warmup_launches")?)
                .map_err(|_| PluginError::new("warmup_launches: expected 0 or more"))?,
            min_launches: positive(config, "min_launches")?,
            max_launches: positive(config, "max_launches")?,
            target_cv: config.float("target_cv")?,
            max_secs_per_config: config.float("max_secs_per_config")?,
            group,
        };
        if settings.max_launches < settings.min_launches {
            return Err(PluginError::new(format!(
                "max_launches ({}) is below min_launches ({})",
                settings.max_launches, settings.min_launches
            )));
        }
        if !(settings.target_cv >= 0.0 && settings.target_cv.is_finite()) {
            return Err(PluginError::new(format!(
                "target_cv: expected a ratio >= 0 (0.05 is 5 %), found {}",
                settings.target_cv
            )));
        }
        if !(settings.max_secs_per_config.is_finite() && settings.max_secs_per_config > 0.0) {
            return Err(PluginError::new(
                "max_secs_per_config: expected seconds > 0",
            ));
        }
        let timeout = config.float("timeout_secs")?;
        if !(timeout > 0.0 && timeout.is_finite()) {
            return Err(PluginError::new(format!(
                "timeout_secs: expected seconds > 0, found {timeout}"
            )));
        }
        let type_text = config.string("device_type")?;
        let kind = device_type(&type_text).ok_or_else(|| {
            PluginError::new(format!(
                "device_type: `{type_text}`, expected all, gpu, cpu or accelerator"
            ))
        })?;
        let kernel_dir = config.opt_string("kernel_dir")?.map(PathBuf::from);
        if let Some(dir) = &kernel_dir
            && !dir.is_dir()
        {
            return Err(PluginError::new(format!(
                "kernel_dir: {} is not a directory",
                dir.display()
            )));
        }
        let log_dir = config.opt_string("log_dir")?.map(PathBuf::from);
        if let Some(dir) = &log_dir {
            check_log_dir(dir)?;
        }
        let mut given = BTreeMap::new();
        for key in [
            "platform",
            "device",
            "device_type",
            "preset",
            "work_group_size",
            "warmup_launches",
            "min_launches",
            "max_launches",
            "target_cv",
            "max_secs_per_config",
        ] {
            if let Some(v) = config.get(key) {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                given.insert(key.to_owned(), text);
            }
        }
        let kernel_files = config.path_list("kernel_files")?;
        // The whole suite unless kernels are named, or kernel files are given instead.
        let kernels = match config.get("kernels") {
            Some(_) => config.string_list("kernels")?,
            None if kernel_files.is_empty() => vec!["all".to_owned()],
            None => Vec::new(),
        };
        let mut declared = Vec::new();
        for path in &kernel_files {
            declared.extend(KernelFile::load(path)?.configurations);
        }
        if kernels.is_empty() && declared.is_empty() {
            return Err(PluginError::new(
                "kernels: empty and no kernel_files: nothing to measure (name programs of the suite, `all`, or kernel files)",
            ));
        }
        given.insert("kernels".to_owned(), kernels.join(" "));
        if !kernel_files.is_empty() {
            given.insert(
                "kernel_files".to_owned(),
                kernel_files
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        given.insert("sizes".to_owned(), config.string_list("sizes")?.join(" "));
        Ok(Self {
            platform: Selector::parse(&config.string("platform")?),
            device: Selector::parse(&config.string("device")?),
            device_type: kind,
            jobs: jobs(&kernels, preset, &config.string_list("sizes")?, group)?,
            declared,
            settings,
            timeout: Duration::from_secs_f64(timeout),
            log_dir,
            run_id: config
                .opt_string("run_id")?
                .unwrap_or_else(|| format!("opencl-{preset_text}")),
            kernel_dir,
            given,
        })
    }
}

/// A `log_dir` may not exist yet or be empty: a run never mixes its record with another's.
pub fn check_log_dir(dir: &Path) -> Result<(), PluginError> {
    if dir.exists() {
        let mut entries = std::fs::read_dir(dir).map_err(|e| PluginError::io(dir, &e))?;
        if entries.next().is_some() {
            return Err(PluginError::new(format!(
                "log_dir: {} is not empty; give a new or empty directory (a run never overwrites another's record)",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The source of a kernel: from `kernel_dir` when given (a modified suite), else compiled in.
fn source(
    kernel: &dyn SuiteKernel,
    kernel_dir: Option<&Path>,
) -> Result<(String, String), PluginError> {
    let (file, text) = kernel.source();
    match kernel_dir {
        None => Ok((file.to_owned(), text.to_owned())),
        Some(dir) => {
            let path = dir.join(file);
            let text = yosoku_plugin_sdk::read_input_to_string(&path)?;
            Ok((path.display().to_string(), text))
        }
    }
}

/// Runs every job on every selected device; the record of the run.
pub fn run(
    config: &RunConfig,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<RunRecord, PluginError> {
    let started = Instant::now();
    let deadline = started + config.timeout;
    let chosen = choose(&config.platform, &config.device, config.device_type)?;
    let per_device = config.jobs.len() + config.declared.len();
    let total = (chosen.len() * per_device) as u64;
    let mut measurements = Vec::new();
    for (d, c) in chosen.iter().enumerate() {
        if config.settings.group as u64 > c.info.max_work_group_size {
            return Err(PluginError::new(format!(
                "work_group_size {} is above {}'s maximum work-group size {}",
                config.settings.group, c.info.label, c.info.max_work_group_size
            )));
        }
        let mut session = Session::new(c)?;
        let timed_out = |e: PluginError, done: u64| {
            if e.message().starts_with("timeout") {
                PluginError::new(format!(
                    "{} ({} of {total} configurations done, timeout_secs = {})",
                    e.message(),
                    done,
                    config.timeout.as_secs_f64()
                ))
            } else {
                e
            }
        };
        for (j, job) in config.jobs.iter().enumerate() {
            let done = (d * per_device + j) as u64;
            progress(
                done,
                total,
                &format!(
                    "{}/{} n={} on {}",
                    job.kernel.program(),
                    job.variant,
                    job.size,
                    c.info.label
                ),
            );
            let (file, text) = source(job.kernel, config.kernel_dir.as_deref())?;
            let m = session
                .measure(
                    job.kernel,
                    (&file, &text),
                    job.variant,
                    job.size,
                    &config.settings,
                    deadline,
                )
                .map_err(|e| timed_out(e, done))?;
            measurements.push(m);
        }
        for (j, k) in config.declared.iter().enumerate() {
            let done = (d * per_device + config.jobs.len() + j) as u64;
            progress(
                done,
                total,
                &format!(
                    "{}/{} {} on {}",
                    k.program,
                    k.variant,
                    k.size_text(),
                    c.info.label
                ),
            );
            let m = session
                .measure_declared(k, &config.settings, deadline)
                .map_err(|e| timed_out(e, done))?;
            measurements.push(m);
        }
    }
    progress(total, total, "done");
    Ok(RunRecord {
        format: FORMAT.to_owned(),
        version: VERSION,
        run_id: config.run_id.clone(),
        settings: config.given.clone(),
        environment: driver_environment(),
        devices: chosen.into_iter().map(|c| c.info).collect(),
        measurements,
    })
}

/// Environment variables OpenCL drivers and loaders read: they change what a run measures
/// (POCL_AFFINITY pins POCL's worker threads, OCL_ICD_VENDORS picks the drivers).
const DRIVER_ENV_PREFIXES: &[&str] = &[
    "POCL_",
    "OCL_ICD_",
    "OPENCL_",
    "CUDA_VISIBLE_DEVICES",
    "ROC",
    "HIP_VISIBLE_DEVICES",
    "GPU_",
];

fn driver_environment() -> BTreeMap<String, String> {
    std::env::vars()
        .filter(|(k, _)| DRIVER_ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .collect()
}

fn push(
    out: &mut Output<'_>,
    tables: Vec<(String, arrow_array::RecordBatch)>,
) -> Result<(), PluginError> {
    for (name, batch) in tables {
        out.push_batch(&name, batch)?;
    }
    Ok(())
}

fn selection_keys(info: CollectorInfo) -> CollectorInfo {
    info.key(ConfigKey::optional(
        "platform",
        ConfigType::String,
        Some("all".into()),
        "Platform: `all`, an index (0, 1, ...) or a case-insensitive substring of its name",
    ))
    .key(ConfigKey::optional(
        "device",
        ConfigType::String,
        Some("all".into()),
        "Device within the platform: `all`, an index or a name substring",
    ))
    .key(ConfigKey::optional(
        "device_type",
        ConfigType::String,
        Some("all".into()),
        "Device type: all, gpu, cpu or accelerator",
    ))
}

/// Runner: the suite on the selected devices.
struct Run;

impl Collector for Run {
    fn info(&self) -> CollectorInfo {
        selection_keys(CollectorInfo::runner(
            "run",
            "Builds the kernel suite for each selected OpenCL device and times every configuration from profiling events; outputs checked against a CPU reference",
        ))
        .key(ConfigKey::optional(
            "kernels",
            ConfigType::StringList,
            None,
            "Programs of the suite (`copy`, `matmul`, `transpose`, `sobel`, `reduce`, `nbody`), `program/variant`, or `all` (the default, unless kernel_files are given); the calibration's `empty` and `waves` run only when named",
        ))
        .key(ConfigKey::optional(
            "kernel_files",
            ConfigType::PathList,
            Some(Vec::<String>::new().into()),
            "Your own kernels: TOML files naming a .cl source, a kernel, its sizes, arguments, NDRange, work formulas and check (README.md, \"Your own kernel\")",
        ))
        .key(ConfigKey::optional(
            "preset",
            ConfigType::String,
            Some("standard".into()),
            "Sizes: `standard` (six per program) or `quick` (two small ones)",
        ))
        .key(ConfigKey::optional(
            "sizes",
            ConfigType::StringList,
            Some(Vec::<String>::new().into()),
            "Sizes instead of the preset's, per program: `matmul=64,128,256`",
        ))
        .key(ConfigKey::optional(
            "work_group_size",
            ConfigType::Integer,
            Some(256.into()),
            "Work-items per work-group of the 1-D kernels (copy, reduce, nbody); the 2-D ones use 16 x 16",
        ))
        .key(ConfigKey::optional(
            "warmup_launches",
            ConfigType::Integer,
            Some(2.into()),
            "Launches before the measured ones, not counted",
        ))
        .key(ConfigKey::optional(
            "min_launches",
            ConfigType::Integer,
            Some(5.into()),
            "Measured launches at least",
        ))
        .key(ConfigKey::optional(
            "max_launches",
            ConfigType::Integer,
            Some(50.into()),
            "Measured launches at most",
        ))
        .key(ConfigKey::optional(
            "target_cv",
            ConfigType::Float,
            Some(0.05.into()),
            "Stop once the launch times' coefficient of variation is at most this; above it at the end, the configuration is flagged unstable",
        ))
        .key(ConfigKey::optional(
            "max_secs_per_config",
            ConfigType::Float,
            Some(2.0.into()),
            "Stop a configuration after this many seconds of measured launches (once min_launches are done)",
        ))
        .key(ConfigKey::optional(
            "timeout_secs",
            ConfigType::Float,
            Some(3600.0.into()),
            "Fail the run when it takes longer (checked between launches)",
        ))
        .key(ConfigKey::optional(
            "log_dir",
            ConfigType::String,
            None,
            "Keep the run's record (opencl-run.json) in this new or empty directory, for collector `logs`",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "Prefix of the run ids (default: opencl-<preset>)",
        ))
        .key(ConfigKey::optional(
            "kernel_dir",
            ConfigType::Path,
            None,
            "Read the suite's .cl files from this directory instead of the built-in ones",
        ))
        .tables(RUN_TABLES)
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        RunConfig::from(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let config = RunConfig::from(config)?;
        let record = run(&config, &mut |done, total, msg| {
            out.progress(done, total, msg)
        })?;
        if let Some(dir) = &config.log_dir {
            std::fs::create_dir_all(dir).map_err(|e| PluginError::io(dir, &e))?;
            record.write(dir)?;
        }
        push(out, record::tables(&[record])?)
    }
}

/// Importer: saved run records.
struct Logs;

/// The records `paths` name: files, or directories holding [`RECORD_FILE`].
fn record_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|p| {
            if p.is_dir() {
                p.join(RECORD_FILE)
            } else {
                p.clone()
            }
        })
        .collect()
}

impl Collector for Logs {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "logs",
            "Run records (opencl-run.json) the `run` collector kept in its log_dir: the same tables again",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "Record files, or the directories holding them",
        ))
        .tables(RUN_TABLES)
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let mut records = Vec::new();
        for path in record_files(&config.path_list("paths")?) {
            records.push(RunRecord::read(&path)?);
        }
        let mut seen = std::collections::BTreeSet::new();
        for r in &records {
            if !seen.insert(r.run_id.as_str()) {
                return Err(PluginError::new(format!(
                    "two records have run_id `{}`: their rows would be confused; give each run its own run_id",
                    r.run_id
                )));
            }
        }
        push(out, record::tables(&records)?)
    }
}

/// Runner: what devices this machine has.
struct Devices;

impl Collector for Devices {
    fn info(&self) -> CollectorInfo {
        selection_keys(CollectorInfo::runner(
            "devices",
            "The OpenCL devices of this machine as their drivers describe them (nothing is launched)",
        ))
        .tables(&["devices"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        let t = config.string("device_type")?;
        device_type(&t).map(|_| ()).ok_or_else(|| {
            PluginError::new(format!(
                "device_type: `{t}`, expected all, gpu, cpu or accelerator"
            ))
        })
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        self.validate(config)?;
        let chosen = choose(
            &Selector::parse(&config.string("platform")?),
            &Selector::parse(&config.string("device")?),
            device_type(&config.string("device_type")?)
                .unwrap_or(opencl3::device::CL_DEVICE_TYPE_ALL),
        )?;
        let rows: Vec<_> = chosen.iter().map(|c| c.info.row()).collect();
        out.push_batch("devices", devices_batch(&rows)?)
    }
}
