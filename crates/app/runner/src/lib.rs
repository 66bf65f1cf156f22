//! Runs a pipeline file end to end: reads and checks the file, collects every source through the
//! plugin host (resolving and hashing input files), runs the normalize, fit and validate steps,
//! and writes the result bundle atomically. This is the I/O edge around `yosoku-pipeline`.
//!
//! Every source is checked and validated before any is collected. Inputs are recorded with the
//! hashes the plugins computed while reading them (or hashed once here). Errors keep their types
//! ([`RunError`]). [`trace_import`] turns a kernel trace of any size into a bundle with its
//! level-of-detail pyramid, in three streamed passes.

pub mod bundles;
pub mod calibrate;
pub mod devices;
pub mod export;
pub mod metrics;
pub mod plugins;
pub mod predict;
pub mod scaling;
pub mod sources;
pub mod trace_import;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use yosoku_bundle::{
    HashedTable, InputFile, Manifest, ManifestBuilder, ModelRecord, PluginRecord, StageRecord,
    StepRecord,
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

use crate::sources::{PathProblem, PendingInput};

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
    /// Something the user should know that does not stop the run (a device file's value that
    /// looks wrong for its architecture).
    fn warning(&mut self, _message: &str) {}
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

    /// Resolves the path values of a source's checked configuration against the pipeline
    /// file's directory ([`sources::resolve_paths`]); an error is at the key's line.
    fn resolve_paths(
        &self,
        source: &SourceSpec,
        config: &mut CheckedConfig,
    ) -> Result<Vec<PendingInput>, SpecError> {
        sources::resolve_paths(&self.base, config).map_err(|p| self.path_error(source, p))
    }

    /// A problem with a path-typed key of `source`, at the key's line.
    fn path_error(&self, source: &SourceSpec, problem: PathProblem) -> SpecError {
        let location = source
            .config_locations
            .get(&problem.key)
            .copied()
            .unwrap_or(source.location);
        let sep = if problem.message.starts_with("takes one file") {
            " "
        } else {
            ": "
        };
        self.error(
            location,
            format!(
                "source `{}`, config key `{}`{sep}{}",
                source.name, problem.key, problem.message
            ),
        )
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
        let inputs = sources::hashed_inputs(&source.name, pending, &collection.inputs_read)
            .map_err(|p| self.path_error(source, p))?;
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
            plugin: sources::plugin_record(&plugin),
        })
    }

    /// Runs the normalize, fit and validate steps in order, adding their tables to `tables`.
    fn run_stages(
        &self,
        tables: &mut TableSet,
        observer: &mut dyn Observer,
        manifest: &mut ManifestBuilder,
    ) -> Result<(), RunError> {
        let devices = if self.spec.steps.iter().any(|s| s.value.step.uses_devices()) {
            // The pipeline's own device files first, the command line's over them.
            let files: Vec<PathBuf> = (self.spec.device_files.iter())
                .map(|f| self.base.join(f))
                .chain(self.options.device_files.iter().cloned())
                .collect();
            let catalogue = devices::load_catalogue(&files)?;
            for w in catalogue.warnings() {
                observer.warning(w);
            }
            catalogue
        } else {
            yosoku_devices::Catalogue::default()
        };
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
                let added = step
                    .value
                    .add_output(output, tables)
                    .map_err(|e| self.error(step.location, e.to_string()))?;
                if let Some(saved) = added.saved_model {
                    manifest.model(
                        ModelRecord {
                            name: id.to_owned(),
                            kind: saved.kind.to_owned(),
                            training: Some(HashedTable {
                                table: saved.training.name().to_owned(),
                                sha256: String::new(),
                            }),
                            tables: saved.tables,
                            options: saved.options,
                            fitted: None,
                            scores: Vec::new(),
                        },
                        saved.fitted_json.map(String::into_bytes),
                    );
                }
                if let Some((model, table)) = &added.scores {
                    // A validation step names a model of its own run (checked when parsed); one
                    // that saves none (a counter fit) keeps its scores in its tables alone.
                    manifest.model_scores(model, table);
                }
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
                    tables: added.tables,
                    figures,
                    notes: Vec::new(),
                });
            }
            if !records.is_empty() {
                manifest.stage(StageRecord {
                    stage: stage.name().into(),
                    wall_secs: secs_since(stage_started),
                    steps: records,
                });
            }
        }
        Ok(())
    }
}

/// A source checked and ready to collect.
struct Prepared<'s> {
    source: &'s SourceSpec,
    plugin: Arc<LoadedPlugin>,
    config: CheckedConfig,
    inputs: Vec<PendingInput>,
}

/// What collecting one source adds to the manifest.
struct Collected {
    step: StepRecord,
    inputs: Vec<InputFile>,
    plugin: PluginRecord,
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
    let mut manifest = ManifestBuilder::new(&spec.name, &spec.description);
    manifest.spec_text(&origin, text.as_bytes());
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
        for input in collected.inputs {
            manifest.input(input);
        }
        manifest.plugin(collected.plugin);
        collect_steps.push(collected.step);
    }
    manifest.stage(StageRecord {
        stage: "collect".into(),
        wall_secs: secs_since(collect_started),
        steps: collect_steps,
    });
    run.run_stages(&mut tables, observer, &mut manifest)?;
    let figures: Vec<(&str, &yosoku_tables::Figure)> = manifest.figures().collect();
    let scoreboard = yosoku_pipeline::scoreboard::score(&spec, &figures)?;
    manifest.scoreboard(scoreboard);
    manifest.total_wall_secs(secs_since(started));
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
    let manifest = yosoku_bundle::fs::write(&bundle_dir, manifest, &tables.into_tables())?;
    Ok(RunOutcome {
        bundle_dir,
        manifest,
        reports,
    })
}
