//! Runs a pipeline file end to end: reads and checks the file, collects every source through the
//! plugin host (resolving and hashing input files), runs the normalize, fit and validate steps,
//! and writes the result bundle atomically. This is the I/O edge around `yosoku-pipeline`.
//!
//! Every source is checked and validated before any is collected. Inputs are recorded with the
//! hashes the plugins computed while reading them (or hashed once here). Errors keep their types
//! ([`RunError`]). [`trace_import`] turns a kernel trace of any size into a bundle with its
//! level-of-detail pyramid, in three streamed passes.

pub mod devices;
pub mod trace_import;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use yosoku_bundle::{
    InputFile, Manifest, PipelineRecord, PluginRecord, StageRecord, StepRecord, TableRecord,
};
use yosoku_pipeline::spec::IsolateSpec;
use yosoku_pipeline::{
    Location, PipelineSpec, SourceSpec, SpecError, Stage, StepFailure, TableSet, run_step,
};
use yosoku_plugin_host::isolated::Isolation;
use yosoku_plugin_host::{
    CheckedConfig, ConfigProblem, Discovery, HostError, LoadedPlugin, PluginHost, Progress,
};
use yosoku_tables::Figure;
use yosoku_tables::report::{ReportCell, read_report};

/// Where the bundles of `yosoku run` go by default: `results/<pipeline name>`.
pub const DEFAULT_RESULTS_DIR: &str = "results";

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Where to write the bundle; `results/<pipeline name>` when `None`.
    pub bundle_dir: Option<PathBuf>,
    /// Plugin directories or files searched before the default locations.
    pub plugin_path: Vec<PathBuf>,
    /// The executable that runs a collector in a process of its own (the `yosoku` binary, which
    /// has the `__collect` subcommand): sources with `isolate` are refused without one.
    pub collector_program: Option<PathBuf>,
    /// Every source's collector in a process of its own (`yosoku run --isolate`).
    pub isolate_all: bool,
    /// Device catalogue files or directories over the built-in ones, after those of
    /// `YOSOKU_DEVICES` (`yosoku run --devices`); read only where a step uses devices.
    pub device_files: Vec<PathBuf>,
}

/// What a run reports while it works (for progress bars). Every method has a default that does
/// nothing.
pub trait Observer {
    fn source_started(&mut self, _source: &str, _plugin: &str, _collector: &str) {}
    fn source_progress(&mut self, _source: &str, _progress: &Progress) {}
    fn step_started(&mut self, _stage: &str, _id: &str, _kind: &str) {}
    fn step_finished(&mut self, _stage: &str, _id: &str, _wall_secs: f64) {}
}

/// An observer that reports nothing.
#[derive(Debug, Default)]
pub struct Quiet;

impl Observer for Quiet {}

/// Why a run failed. Messages name the file, line, column and key where there is one.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot read pipeline file {path}: {source}")]
    ReadSpec {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A step failed, at its line in the file.
    #[error(transparent)]
    Step(#[from] StepFailure),
    /// Loading or calling a source's plugin failed, at the source's line.
    #[error("{origin}:{}:{}: source `{source_name}`: {error}", location.line, location.column)]
    Plugin {
        origin: String,
        location: Location,
        source_name: String,
        error: Box<HostError>,
    },
    /// A step's `report` table cannot be read back (a bug in the step).
    #[error("internal error: table `{table}`: {source}")]
    Report {
        table: String,
        source: yosoku_tables::rows::RowsError,
    },
    #[error("writing the bundle failed: {0}")]
    Bundle(#[from] yosoku_bundle::BundleError),
    /// The user's device catalogue files (a step uses devices).
    #[error("device catalogue: {0}")]
    Devices(#[from] devices::DevicesError),
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub bundle_dir: PathBuf,
    pub manifest: Manifest,
    /// The tables the steps laid out for printing (`<step>.report`), by table name, in the order
    /// of the run.
    pub reports: Vec<(String, Vec<ReportCell>)>,
}

fn is_pattern(path: &str) -> bool {
    path.contains('*') || path.contains('?')
}

/// Whether `name` matches `pattern` (`*`: any run of characters, `?`: one character).
fn matches_pattern(pattern: &[char], name: &[char]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some('*'), _) => {
            matches_pattern(&pattern[1..], name)
                || (!name.is_empty() && matches_pattern(pattern, &name[1..]))
        }
        (Some('?'), Some(_)) => matches_pattern(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => matches_pattern(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The files (as written: relative to `base` when the pattern is) that `written` matches, sorted
/// by path: `*` and `?` may stand in any component, a directory's (`runs/*/ncu.csv`: every run's
/// report) or the file's.
fn expand_pattern(base: &Path, written: &str) -> Result<Vec<String>, String> {
    let (dir, file) = match written.rsplit_once('/') {
        Some((d, f)) => (Some(d), f),
        None => (None, written),
    };
    // The directories the pattern's directory part names, as written.
    let mut dirs: Vec<Option<String>> = vec![None];
    for component in dir.into_iter().flat_map(|d| d.split('/')) {
        let mut next = Vec::new();
        for d in &dirs {
            let join = |name: &str| {
                Some(
                    d.as_ref()
                        .map_or_else(|| name.to_owned(), |d| format!("{d}/{name}")),
                )
            };
            if is_pattern(component) {
                next.extend(
                    matching(base, d.as_deref(), component, true)?
                        .iter()
                        .map(|n| join(n)),
                );
            } else {
                next.push(join(component));
            }
        }
        dirs = next;
    }
    let mut paths = Vec::new();
    for d in &dirs {
        let names = if dirs.len() > 1 && !base.join(d.as_deref().unwrap_or(".")).is_dir() {
            Vec::new()
        } else {
            matching(base, d.as_deref(), file, false)?
        };
        paths.extend(names.into_iter().map(|n| match d {
            Some(d) => format!("{d}/{n}"),
            None => n,
        }));
    }
    paths.sort();
    if paths.is_empty() {
        return Err(format!("no file matches `{written}` in {}", base.display()));
    }
    Ok(paths)
}

/// The names in `base`/`dir` of the directories (`directories`) or files that `pattern` (no
/// `/`) matches; a name without `*` or `?` stands for itself, if it is there. A pattern in the
/// last directory that matches nothing there is no error: others may match.
fn matching(
    base: &Path,
    dir: Option<&str>,
    pattern: &str,
    directories: bool,
) -> Result<Vec<String>, String> {
    let directory = base.join(dir.unwrap_or("."));
    if !is_pattern(pattern) {
        let there = directory.join(pattern);
        let kind = if directories {
            there.is_dir()
        } else {
            there.is_file()
        };
        return Ok(if kind {
            vec![pattern.to_owned()]
        } else {
            Vec::new()
        });
    }
    let entries = std::fs::read_dir(&directory)
        .map_err(|e| format!("cannot list {} for `{pattern}`: {e}", directory.display()))?;
    let pattern: Vec<char> = pattern.chars().collect();
    Ok(entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_type()
                .is_ok_and(|t| if directories { t.is_dir() } else { t.is_file() })
        })
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| matches_pattern(&pattern, &n.chars().collect::<Vec<_>>()))
        .collect())
}

/// The files a path input stands for: the file itself (shown as ""), or every file under a
/// directory in sorted order (shown relative to it).
fn files_of(path: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        return Ok(vec![(path.to_path_buf(), String::new())]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let shown = p
                    .strip_prefix(path)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                out.push((p, shown));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The size and SHA-256 of a file, read once in blocks.
pub fn hash_file(path: &Path) -> std::io::Result<(u64, String)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let size = std::io::copy(&mut file, &mut hasher)?;
    Ok((size, hex(&hasher.finalize())))
}

fn secs_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

struct Run<'a> {
    spec: &'a PipelineSpec,
    /// The directory of the pipeline file; relative paths are resolved against it.
    base: PathBuf,
    options: &'a RunOptions,
}

impl Run<'_> {
    fn error(&self, location: Location, message: impl Into<String>) -> SpecError {
        self.spec.error(location, message)
    }

    /// Resolves the `path` and `path_list` values of a source's checked configuration against
    /// the pipeline file's directory (a `*` or `?` in a file name stands for the files that
    /// match, in name order), checks that each can be read, and lists the files they stand for
    /// (every file under a directory), to be hashed when the source is collected.
    fn resolve_paths(
        &self,
        source: &SourceSpec,
        config: &mut CheckedConfig,
    ) -> Result<Vec<PendingInput>, SpecError> {
        let mut inputs = Vec::new();
        for (key, is_list, written_items) in config.paths() {
            let location = source
                .config_locations
                .get(&key)
                .copied()
                .unwrap_or(source.location);
            let at = |message: String| {
                self.error(
                    location,
                    format!("source `{}`, config key `{key}`: {message}", source.name),
                )
            };
            let mut expanded: Vec<String> = Vec::new();
            for written in written_items {
                if !is_pattern(&written) {
                    expanded.push(written);
                    continue;
                }
                let matched = expand_pattern(&self.base, &written).map_err(&at)?;
                if !is_list && matched.len() > 1 {
                    return Err(self.error(
                        location,
                        format!(
                            "source `{}`, config key `{key}` takes one file; `{written}` matches {}",
                            source.name,
                            matched.len()
                        ),
                    ));
                }
                expanded.extend(matched);
            }
            let mut resolved = Vec::with_capacity(expanded.len());
            for written in expanded {
                let path = self.base.join(&written);
                // A directory input (a run's logs) is every file in it.
                let files = files_of(&path)
                    .map_err(|e| at(format!("cannot read {}: {e}", path.display())))?;
                for (file, shown) in files {
                    inputs.push(PendingInput {
                        key: key.clone(),
                        shown: if shown.is_empty() {
                            written.clone()
                        } else {
                            format!("{}/{shown}", written.trim_end_matches('/'))
                        },
                        file,
                    });
                }
                resolved.push(path.display().to_string());
            }
            if !config.set_paths(&key, resolved) {
                return Err(at(
                    "internal error: the path value could not be replaced".into()
                ));
            }
        }
        Ok(inputs)
    }

    fn plugin_error(&self, source: &SourceSpec, location: Location, error: HostError) -> RunError {
        RunError::Plugin {
            origin: self.spec.origin.clone(),
            location,
            source_name: source.name.clone(),
            error: Box::new(error),
        }
    }

    fn config_error(&self, source: &SourceSpec, problems: &[ConfigProblem]) -> SpecError {
        let first = &problems[0];
        let location = source
            .config_locations
            .get(first.key())
            .copied()
            .unwrap_or(source.collector.location);
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        self.error(
            location,
            format!(
                "source `{}` ({} / {}): {}",
                source.name,
                source.plugin.value,
                source.collector.value,
                text.join("; ")
            ),
        )
    }
}

impl Run<'_> {
    /// Everything about a source that can be checked without collecting it: its plugin and
    /// collector, its configuration (checked once, by the host, then by the plugin's own
    /// `validate`), and its input files.
    fn prepare_source<'s>(
        &self,
        source: &'s SourceSpec,
        discovery: &Discovery,
        host: &PluginHost,
    ) -> Result<Prepared<'s>, RunError> {
        let Some(plugin) = discovery.plugins.get(&source.plugin.value) else {
            return Err(self.plugin_error(
                source,
                source.plugin.location,
                HostError::UnknownPlugin {
                    name: source.plugin.value.clone(),
                    known: discovery.plugins.keys().cloned().collect(),
                    searched: host.search_path().to_vec(),
                    problems: discovery.problems.iter().map(ToString::to_string).collect(),
                },
            ));
        };
        let info = plugin
            .collector(&source.collector.value)
            .map_err(|e| self.plugin_error(source, source.collector.location, e))?;
        if let Some(why) = info.unusable() {
            return Err(self
                .error(
                    source.collector.location,
                    format!("source `{}`: {why}", source.name),
                )
                .into());
        }
        let mut config = match plugin.check_config(&source.collector.value, &source.config) {
            Ok(config) => config,
            Err(HostError::Config { problems, .. }) => {
                return Err(self.config_error(source, &problems).into());
            }
            Err(e) => return Err(self.plugin_error(source, source.location, e)),
        };
        let inputs = self.resolve_paths(source, &mut config)?;
        plugin
            .validate(&config)
            .map_err(|e| self.plugin_error(source, source.location, e))?;
        Ok(Prepared {
            source,
            plugin: plugin.clone(),
            config,
            inputs,
        })
    }

    /// How to run a source's collector in a process of its own, if it is to be.
    fn isolation(&self, source: &SourceSpec) -> Result<Option<Isolation>, RunError> {
        let spec = match (&source.isolate, self.options.isolate_all) {
            (Some(spec), _) => spec.clone(),
            (None, true) => IsolateSpec::default(),
            (None, false) => return Ok(None),
        };
        let Some(program) = &self.options.collector_program else {
            return Err(self
                .error(
                    source.location,
                    format!(
                        "source `{}`: `isolate` needs the `yosoku` executable to run the collector in (use `yosoku run`)",
                        source.name
                    ),
                )
                .into());
        };
        Ok(Some(Isolation {
            program: program.clone(),
            timeout: spec.timeout_secs.map(std::time::Duration::from_secs_f64),
            memory_limit_bytes: spec.memory_limit_mb.map(|mb| mb << 20),
        }))
    }

    /// Collects one prepared source, adds its tables to `tables`, and records its input files
    /// with the hashes the plugin reported while reading them (or, for a file it did not
    /// report, one the runner computes reading it once).
    fn collect_source(
        &self,
        prepared: Prepared<'_>,
        observer: &mut dyn Observer,
        tables: &mut TableSet,
    ) -> Result<Collected, RunError> {
        let Prepared {
            source,
            plugin,
            config,
            inputs: pending,
        } = prepared;
        observer.source_started(&source.name, &source.plugin.value, &source.collector.value);
        let started = Instant::now();
        // A report of no progress (a total of 0) with a message is a note about the inputs,
        // kept in the bundle.
        let mut notes = Vec::new();
        let mut progress = |p: Progress| {
            if p.total == 0 && !p.message.is_empty() {
                notes.push(p.message.clone());
            }
            observer.source_progress(&source.name, &p);
        };
        let collection = match self.isolation(source)? {
            Some(isolation) => plugin.collect_isolated(&config, &isolation, &mut progress),
            None => plugin.collect(&config, &mut progress),
        }
        .map_err(|e| self.plugin_error(source, source.location, e))?;
        let rows: usize = collection.tables.iter().map(|(_, b)| b.num_rows()).sum();
        if rows == 0 && !source.allow_empty {
            let tables: Vec<&str> = collection.tables.iter().map(|(n, _)| n.as_str()).collect();
            return Err(self
                .error(
                    source.location,
                    format!(
                        "source `{}` ({} / {}) yielded no rows ({}); an input with a header and nothing under it is usually a failed export. Set `allow_empty = true` in the source if none is expected",
                        source.name,
                        source.plugin.value,
                        source.collector.value,
                        if tables.is_empty() {
                            "no tables".to_owned()
                        } else {
                            format!("tables: {}", tables.join(", "))
                        }
                    ),
                )
                .into());
        }
        let mut names = Vec::new();
        let mut figures = Vec::new();
        for (table, batch) in collection.tables {
            figures.push(Figure::new(
                format!("{table}: rows"),
                batch.num_rows() as f64,
                "",
            ));
            names.push(format!("{}.{table}", source.name));
            tables
                .insert(&source.name, &table, batch)
                .map_err(|e| self.error(source.location, e.to_string()))?;
        }
        let mut inputs = Vec::with_capacity(pending.len());
        for p in pending {
            let (size_bytes, sha256) =
                match collection.inputs_read.iter().find(|r| r.path == p.file) {
                    Some(read) => (read.size_bytes, read.sha256_hex.clone()),
                    None => hash_file(&p.file).map_err(|e| {
                        let location = source
                            .config_locations
                            .get(&p.key)
                            .copied()
                            .unwrap_or(source.location);
                        self.error(
                            location,
                            format!(
                                "source `{}`, config key `{}`: cannot read {}: {e}",
                                source.name,
                                p.key,
                                p.file.display()
                            ),
                        )
                    })?,
                };
            inputs.push(InputFile {
                source: source.name.clone(),
                key: p.key,
                path: p.shown,
                sha256,
                size_bytes,
            });
        }
        let wall_secs = secs_since(started);
        observer.step_finished("collect", &source.name, wall_secs);
        Ok(Collected {
            step: StepRecord {
                id: source.name.clone(),
                kind: format!("{}/{}", source.plugin.value, source.collector.value),
                wall_secs,
                inputs: Vec::new(),
                tables: names,
                figures,
                notes,
            },
            inputs,
            plugin: PluginRecord {
                name: plugin.info().name.clone(),
                version: plugin.info().version.clone(),
                abi_version: plugin.abi_version(),
                library: plugin
                    .path()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            },
        })
    }

    /// Runs the normalize, fit and validate steps in order, adding their tables to `tables`.
    fn run_stages(
        &self,
        tables: &mut TableSet,
        observer: &mut dyn Observer,
    ) -> Result<Vec<StageRecord>, RunError> {
        let devices = if self.spec.steps.iter().any(|s| s.value.step.uses_devices()) {
            devices::load_catalogue(&self.options.device_files)?
        } else {
            yosoku_devices::Catalogue::default()
        };
        let mut stages = Vec::new();
        for stage in Stage::ALL {
            let stage_started = Instant::now();
            let mut records = Vec::new();
            for step in self.spec.steps.iter().filter(|s| s.value.stage() == stage) {
                let id = step.value.id();
                observer.step_started(stage.name(), id, step.value.kind());
                let started = Instant::now();
                let output = run_step(self.spec, step, tables, &devices)?;
                let wall_secs = secs_since(started);
                observer.step_finished(stage.name(), id, wall_secs);
                let figures = output.figures.clone();
                let names = step
                    .value
                    .add_output(output, tables)
                    .map_err(|e| self.error(step.location, e.to_string()))?;
                records.push(StepRecord {
                    id: id.to_owned(),
                    kind: step.value.kind().to_owned(),
                    wall_secs,
                    inputs: step
                        .value
                        .step
                        .inputs()
                        .iter()
                        .map(|t| t.get_ref().clone())
                        .collect(),
                    tables: names,
                    figures,
                    notes: Vec::new(),
                });
            }
            if !records.is_empty() {
                stages.push(StageRecord {
                    stage: stage.name().into(),
                    wall_secs: secs_since(stage_started),
                    steps: records,
                });
            }
        }
        Ok(stages)
    }
}

/// A source checked and ready to collect.
struct Prepared<'s> {
    source: &'s SourceSpec,
    plugin: Arc<LoadedPlugin>,
    config: CheckedConfig,
    inputs: Vec<PendingInput>,
}

/// An input file of a source, listed before it is collected and hashed after.
struct PendingInput {
    /// The config key it is given by.
    key: String,
    /// The path as the manifest shows it (as written, or under the directory written).
    shown: String,
    /// The path the plugin is given.
    file: PathBuf,
}

/// What collecting one source adds to the manifest.
struct Collected {
    step: StepRecord,
    inputs: Vec<InputFile>,
    plugin: PluginRecord,
}

/// The manifest's record of every table.
fn table_records(tables: &TableSet) -> Vec<TableRecord> {
    tables
        .iter()
        .map(|(name, batch)| TableRecord {
            name: name.to_owned(),
            file: format!(
                "{}/{}",
                yosoku_bundle::TABLES_DIR,
                yosoku_bundle::table_file_name(name)
            ),
            kind: name
                .split_once('.')
                .and_then(|(_, t)| yosoku_tables::table(t))
                .map(|t| t.name.to_owned()),
            rows: batch.num_rows() as u64,
        })
        .collect()
}

/// Runs the pipeline in `pipeline_file` and writes its bundle.
pub fn run_pipeline(
    pipeline_file: &Path,
    options: &RunOptions,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let started = Instant::now();
    yosoku_regression::factorise_on_calling_thread();
    let origin = pipeline_file.display().to_string();
    let text = std::fs::read_to_string(pipeline_file).map_err(|source| RunError::ReadSpec {
        path: origin.clone(),
        source,
    })?;
    let spec = PipelineSpec::parse(&origin, &text)?;
    let base = pipeline_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let run = Run {
        spec: &spec,
        base,
        options,
    };

    let mut extra = options.plugin_path.clone();
    extra.extend(spec.plugin_path.iter().map(|p| run.base.join(p)));
    let host = PluginHost::new(PluginHost::default_search_path(&extra));
    let discovery = host.discover();

    let mut tables = TableSet::new();
    let mut inputs = Vec::new();
    let mut plugins: Vec<PluginRecord> = Vec::new();
    let mut collect_steps = Vec::new();
    let collect_started = Instant::now();
    // Every source is checked before any is collected: a runner may take hours.
    let prepared = spec
        .sources
        .iter()
        .map(|source| run.prepare_source(source, &discovery, &host))
        .collect::<Result<Vec<_>, _>>()?;
    for source in prepared {
        let collected = run.collect_source(source, observer, &mut tables)?;
        inputs.extend(collected.inputs);
        if !plugins.iter().any(|p| p.name == collected.plugin.name) {
            plugins.push(collected.plugin);
        }
        collect_steps.push(collected.step);
    }
    let mut stages = vec![StageRecord {
        stage: "collect".into(),
        wall_secs: secs_since(collect_started),
        steps: collect_steps,
    }];
    stages.extend(run.run_stages(&mut tables, observer)?);
    let figures: Vec<(&str, &yosoku_tables::Figure)> = stages
        .iter()
        .flat_map(|stage| &stage.steps)
        .flat_map(|step| step.figures.iter().map(|f| (step.id.as_str(), f)))
        .collect();
    let scoreboard = yosoku_pipeline::scoreboard::score(&spec, &figures)?;

    let manifest = Manifest {
        format: yosoku_bundle::manifest::FORMAT.into(),
        format_version: yosoku_bundle::manifest::FORMAT_VERSION,
        yosoku_version: env!("CARGO_PKG_VERSION").into(),
        pipeline: PipelineRecord {
            name: spec.name.clone(),
            description: spec.description.clone(),
            spec_path: origin,
            spec_sha256: sha256_hex(text.as_bytes()),
        },
        created_unix_secs: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        total_wall_secs: secs_since(started),
        inputs,
        plugins,
        stages,
        tables: table_records(&tables),
        traces: Vec::new(),
        scoreboard,
    };
    let bundle_dir = options
        .bundle_dir
        .clone()
        .unwrap_or_else(|| Path::new(DEFAULT_RESULTS_DIR).join(&spec.name));
    let mut reports = Vec::new();
    for (name, batch) in tables.iter() {
        if name
            .split_once('.')
            .is_some_and(|(_, t)| t == yosoku_tables::REPORT.name)
        {
            let cells = read_report(batch).map_err(|source| RunError::Report {
                table: name.to_owned(),
                source,
            })?;
            reports.push((name.to_owned(), cells));
        }
    }
    yosoku_bundle::fs::write_bundle(&bundle_dir, &manifest, &tables.into_tables())?;
    Ok(RunOutcome {
        bundle_dir,
        manifest,
        reports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_file_names_and_expand_in_name_order() {
        let m = |p: &str, n: &str| {
            matches_pattern(
                &p.chars().collect::<Vec<_>>(),
                &n.chars().collect::<Vec<_>>(),
            )
        };
        assert!(m("*.csv.gz", "kernel-GTX-680.csv.gz"));
        assert!(m("kernel-*-K?0.csv.gz", "kernel-Tesla-K40.csv.gz"));
        assert!(!m("*.csv", "a.csv.gz"));
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.log", "a.log", "c.txt"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/z.log"), "x").unwrap();
        assert_eq!(
            expand_pattern(dir.path(), "*.log").unwrap(),
            ["a.log", "b.log"]
        );
        assert_eq!(
            expand_pattern(dir.path(), "sub/*.log").unwrap(),
            ["sub/z.log"]
        );
        assert!(
            expand_pattern(dir.path(), "*.csv")
                .unwrap_err()
                .contains("no file matches `*.csv`")
        );
        // A pattern in a directory: every matching directory's files, sorted by path.
        std::fs::create_dir(dir.path().join("sab")).unwrap();
        std::fs::write(dir.path().join("sab/z.log"), "x").unwrap();
        std::fs::write(dir.path().join("sab/y.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("other")).unwrap();
        assert_eq!(
            expand_pattern(dir.path(), "s*/z.log").unwrap(),
            ["sab/z.log", "sub/z.log"]
        );
        assert_eq!(
            expand_pattern(dir.path(), "*/*.txt").unwrap(),
            ["sab/y.txt"]
        );
        assert!(
            expand_pattern(dir.path(), "o*/z.log")
                .unwrap_err()
                .contains("no file matches `o*/z.log`")
        );
    }
}
