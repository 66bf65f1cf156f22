//! `yosoku predict`: a profile of kernels on one GPU, their times on another GPU of the device
//! catalogue, with an interval and why (docs/methods.md, section 6).
//!
//! The model is fitted, at each call, on the training table of a `gpu-transfer` bundle (its
//! largest `observations` table); the profile is imported through the plugin host as a
//! pipeline's source would be.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use arrow_array::RecordBatch;
use serde_json::{Map, Value};
use yosoku_bundle::manifest::{
    InputFile, Manifest, PipelineRecord, StageRecord, StepRecord, TableRecord,
};
use yosoku_models::observations::normalize::pivot_counters;
use yosoku_models::transfer::data::counter;
use yosoku_models::transfer::predict::{Prediction, WAVE_SCALING, predict};
use yosoku_models::transfer::{GpuSpec, Measurements};
use yosoku_plugin_host::PluginHost;
use yosoku_tables::access::{float64, utf8};
use yosoku_tables::col;
use yosoku_tables::rows::{PredictionRow, predictions_batch};

use crate::devices;

/// What `yosoku predict` was asked: its command-line arguments.
#[derive(Debug, clap::Args)]
pub struct Question {
    /// The profile file (or directory, for rocprof), or a result bundle whose source holds the
    /// launches (its `observations`, or its `runs` and `counters`). Repeatable for a collector
    /// that reads several files at once (gpuperfpredict): all of one GPU.
    #[arg(long, value_name = "FILE", required = true)]
    pub profile: Vec<PathBuf>,
    /// The source of a bundle `--profile` to read, where it has several.
    #[arg(long, value_name = "NAME")]
    pub source: Option<String>,
    /// The target device: a name or alias of the catalogue (`yosoku devices`).
    #[arg(long, value_name = "DEVICE")]
    pub on: String,
    /// The plugin of the collector.
    #[arg(long, default_value = "cuda_profiler")]
    pub plugin: String,
    /// The collector that imports the profile (of the cuda_profiler plugin: ncu, nvprof,
    /// legacy, gpuperfpredict; of rocm_profiler: rocprof).
    #[arg(long, default_value = "ncu")]
    pub collector: String,
    /// The variant of each launch, in launch order (repeatable; ncu and nvprof).
    #[arg(long = "variant")]
    pub variants: Vec<String>,
    /// The model bundle: a run of pipelines/gpu-transfer.toml.
    #[arg(long, value_name = "BUNDLE", default_value = "results/gpu-transfer")]
    pub model: PathBuf,
    /// A catalogue file or a directory of them, over the built-in ones (repeatable).
    #[arg(long = "devices", value_name = "PATH")]
    pub devices: Vec<PathBuf>,
    /// Coverage of the interval.
    #[arg(long, default_value_t = 0.95)]
    pub level: f64,
    /// Allow a target the model was trained on, leaving its rows out of the fit.
    #[arg(long)]
    pub refit_without_target: bool,
    /// Extra plugin directory or library, searched first (repeatable).
    #[arg(long = "plugin-path", value_name = "PATH")]
    pub plugin_path: Vec<PathBuf>,
    /// Also write the forecast as a result bundle in DIR (a `forecast.predictions` table: the
    /// model's answer and wave scaling's for every launch), to compare with a measurement taken
    /// later (pipelines/gpu-forecast.toml).
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
}

impl Question {
    /// The profile paths as the messages name them.
    fn profile_text(&self) -> String {
        self.profile
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The profile's launches as an `observations` table: a bundle's source, or imported by the
/// named collector.
fn import_profile(q: &Question) -> Result<RecordBatch> {
    if let [one] = q.profile.as_slice()
        && one.join(yosoku_bundle::MANIFEST_FILE).is_file()
    {
        let tables = bundle_source(one, q.source.as_deref())?;
        return launches(q, tables.iter().map(|(n, b)| (n.as_str(), b)));
    }
    if q.source.is_some() {
        bail!(
            "--source names a bundle's source; {} is not a bundle",
            q.profile_text()
        );
    }
    let host = PluginHost::new(PluginHost::default_search_path(&q.plugin_path));
    let plugin = host.find(&q.plugin)?;
    let mut paths = Vec::new();
    for p in &q.profile {
        let path = std::path::absolute(p)
            .with_context(|| format!("{}: cannot resolve the path", p.display()))?;
        if !path.exists() {
            bail!("{}: no such profile file or directory", p.display());
        }
        paths.push(Value::String(path.display().to_string()));
    }
    let mut config = Map::new();
    // The collector's input key: one file (`path`) where it takes one, else a list (`paths`).
    let info = plugin
        .info()
        .collectors
        .iter()
        .find(|c| c.name == q.collector);
    let takes = |key: &str| info.is_some_and(|c| c.config.iter().any(|k| k.key == key));
    match paths.as_slice() {
        [path] if takes("path") || !takes("paths") => {
            config.insert("path".into(), path.clone());
        }
        _ if takes("paths") => {
            config.insert("paths".into(), Value::Array(paths));
        }
        _ => bail!(
            "collector `{}` reads one file: give one --profile, not {}",
            q.collector,
            paths.len()
        ),
    }
    if !q.variants.is_empty() {
        let variants = q.variants.iter().cloned().map(Value::String).collect();
        config.insert("variants".into(), Value::Array(variants));
    }
    let checked = plugin.check_config(&q.collector, &config)?;
    let collection = plugin.collect(&checked, &mut |_| {})?;
    launches(q, collection.tables.iter().map(|(n, b)| (n.as_str(), b)))
}

/// The tables of one source of the bundle in `dir` (`observations`, `runs`, `counters`), by
/// their names without the source's: the one `source` names, or the only one that has launches.
fn bundle_source(dir: &Path, source: Option<&str>) -> Result<Vec<(String, RecordBatch)>> {
    let manifest = yosoku_bundle::fs::read_manifest(dir)
        .with_context(|| format!("{}: not a readable bundle", dir.display()))?;
    let has = |ns: &str, t: &str| {
        manifest
            .tables
            .iter()
            .any(|r| r.name == format!("{ns}.{t}"))
    };
    let sources: Vec<&str> = manifest
        .stages
        .iter()
        .filter(|s| s.stage == "collect")
        .flat_map(|s| &s.steps)
        .map(|s| s.id.as_str())
        .filter(|ns| has(ns, "observations") || (has(ns, "runs") && has(ns, "counters")))
        .collect();
    let chosen = match (source, sources.as_slice()) {
        (Some(s), _) if sources.contains(&s) => s,
        (Some(s), _) => bail!(
            "{}: no source `{s}` with launches; the bundle's: {}",
            dir.display(),
            sources.join(", ")
        ),
        (None, [one]) => one,
        (None, []) => bail!(
            "{}: no source of the bundle holds launches (an `observations` table, or `runs` and `counters`)",
            dir.display()
        ),
        (None, several) => bail!(
            "{}: the bundle has {} sources with launches ({}): name one with --source",
            dir.display(),
            several.len(),
            several.join(", ")
        ),
    };
    let mut out = Vec::new();
    for t in ["observations", "runs", "counters"] {
        let name = format!("{chosen}.{t}");
        if let Some(r) = manifest.tables.iter().find(|r| r.name == name) {
            let batch = yosoku_bundle::fs::read_table_file(&dir.join(&r.file))
                .with_context(|| format!("{}: table `{name}`", dir.display()))?;
            out.push((t.to_owned(), batch));
        }
    }
    Ok(out)
}

/// One row per launch from a source's tables: its `observations`, or its `runs` with its
/// `counters` pivoted beside.
fn launches<'a>(
    q: &Question,
    tables: impl Iterator<Item = (&'a str, &'a RecordBatch)> + Clone,
) -> Result<RecordBatch> {
    let table = |name: &str| tables.clone().find(|(n, _)| *n == name).map(|(_, b)| b);
    if let Some(observations) = table("observations") {
        return Ok(observations.clone());
    }
    match (table("runs"), table("counters")) {
        (Some(runs), Some(counters)) => {
            // Only the counters the model reads: a raw page maps several of its hundreds of
            // metrics to one canonical name the model does not use.
            let metric = utf8(counters, col::METRIC)?;
            let present: Vec<String> = counter::ALL
                .iter()
                .filter(|n| metric.iter().any(|m| m == Some(**n)))
                .map(|n| (*n).to_owned())
                .collect();
            Ok(
                pivot_counters(runs, counters, Some(&present)).with_context(|| {
                    format!("{}: its counters as one row per launch", q.profile_text())
                })?,
            )
        }
        _ => bail!(
            "{}: no `observations` and no `runs` and `counters` tables (collector `{}`)",
            q.profile_text(),
            q.collector
        ),
    }
}

/// What `yosoku predict` reads of a model bundle.
struct ModelTables {
    /// The training launches' table: its name and rows.
    name: String,
    training: RecordBatch,
    /// Every `gpu_transfer` step's `transfer_scores`, by name.
    scores: Vec<(String, RecordBatch)>,
}

/// The training launches of a model bundle: the `observations` table a `gpu_transfer` step wrote
/// (the one with most rows, where several did), with the steps' `transfer_scores`.
fn training_tables(dir: &Path) -> Result<ModelTables> {
    let manifest = yosoku_bundle::fs::read_manifest(dir).with_context(|| {
        format!(
            "{}: no model bundle there; build it with `yosoku run pipelines/gpu-transfer.toml`",
            dir.display()
        )
    })?;
    let steps: Vec<&str> = manifest
        .stages
        .iter()
        .flat_map(|s| &s.steps)
        .filter(|s| s.kind == "gpu_transfer")
        .map(|s| s.id.as_str())
        .collect();
    let of_step = |name: &str, table: &str| {
        name.split_once('.')
            .is_some_and(|(ns, t)| t == table && steps.contains(&ns))
    };
    let training = manifest
        .tables
        .iter()
        .filter(|t| of_step(&t.name, "observations"))
        .max_by_key(|t| t.rows)
        .ok_or_else(|| {
            anyhow!(
                "{}: the bundle has no `gpu_transfer` step's training launches; build it with `yosoku run pipelines/gpu-transfer.toml`",
                dir.display()
            )
        })?;
    let read = |file: &str| yosoku_bundle::fs::read_table_file(&dir.join(file));
    let scores = manifest
        .tables
        .iter()
        .filter(|t| of_step(&t.name, "transfer_scores"))
        .map(|t| Ok((t.name.clone(), read(&t.file)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(ModelTables {
        name: training.name.clone(),
        training: read(&training.file)?,
        scores,
    })
}

/// The held-out figures of the scheme the question is an instance of, from each
/// `transfer_scores` table of the bundle.
fn validation_figures(
    scores: &[(String, RecordBatch)],
    same_architecture: bool,
    methods: &[&str],
) -> Vec<String> {
    let scheme = if same_architecture {
        "leave_one_gpu_out"
    } else {
        "leave_one_gpu_out_other_architectures"
    };
    let mut out = Vec::new();
    for (name, batch) in scores {
        let (Ok(v), Ok(m), Ok(median), Ok(mean), Ok(coverage)) = (
            utf8(batch, col::VALIDATION),
            utf8(batch, col::MODEL),
            float64(batch, col::MEDIAN_ABS_ERROR_PCT),
            float64(batch, col::MEAN_ABS_ERROR_PCT),
            float64(batch, col::INTERVAL_COVERAGE_PCT),
        ) else {
            continue;
        };
        for method in methods {
            if let Some(row) =
                (0..batch.num_rows()).find(|&i| v.value(i) == scheme && m.value(i) == *method)
            {
                out.push(format!(
                    "{name}, {scheme}, {method}: median |error| {:.1} %, mean {:.1} %, 95 % intervals covered {:.1} % of held-out rows",
                    median.value(row),
                    mean.value(row),
                    coverage.value(row)
                ));
            }
        }
    }
    out
}

fn secs(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.3} s")
    } else if v >= 1e-3 {
        format!("{:.3} ms", v * 1e3)
    } else {
        format!("{:.1} us", v * 1e6)
    }
}

/// The answers' labels: the variant, and the run where the profile holds a kernel's variant
/// more than once (an OpenCL run's sizes).
fn labels(p: &Prediction, run_ids: &[String]) -> Vec<String> {
    p.answers
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let variant = if a.variant.is_empty() {
                format!("launch {}", i + 1)
            } else {
                a.variant.clone()
            };
            let repeated = p
                .answers
                .iter()
                .filter(|b| b.kernel == a.kernel && b.variant == a.variant)
                .count()
                > 1;
            match run_ids.get(a.row) {
                Some(run) if repeated && !a.variant.is_empty() => format!("{variant}, run {run}"),
                _ => variant,
            }
        })
        .collect()
}

fn render(p: &Prediction, labels: &[String], training: &str, figures: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} -> {}: {} launch(es); model trained on {} ({} kernels on {})",
        p.profile_gpu,
        p.target,
        p.answers.len(),
        training,
        p.training_kernels,
        p.training_gpus.join(", ")
    );
    for f in figures {
        let _ = writeln!(out, "validation: {f}");
    }
    for note in &p.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for (a, variant) in p.answers.iter().zip(labels) {
        let _ = writeln!(
            out,
            "\n{} [{}]\n  measured on {}: {}\n  predicted on {}: {}   {:.0} % interval {} .. {}   ({})",
            a.kernel,
            variant,
            p.profile_gpu,
            secs(a.measured_secs),
            p.target,
            secs(a.predicted_secs),
            p.level * 100.0,
            secs(a.interval_secs.0),
            secs(a.interval_secs.1),
            a.model
        );
        for b in [&a.on_profile_gpu, &a.on_target] {
            let _ = writeln!(
                out,
                "  why: on {} it is {}-bound by the datasheet roofline (compute {}, memory {})",
                b.gpu,
                b.bound_by,
                secs(b.compute_secs),
                secs(b.memory_secs)
            );
        }
        let nearest: Vec<String> = a
            .nearest
            .iter()
            .map(|(k, d)| format!("{k} ({d:.1})"))
            .collect();
        if nearest.is_empty() {
            let _ = writeln!(
                out,
                "  nearest training kernels: none compared (no instruction count)"
            );
        } else {
            let _ = writeln!(out, "  nearest training kernels: {}", nearest.join(", "));
        }
        for w in &a.warnings {
            let _ = writeln!(
                out,
                "  outside what the model has seen: {w}; the interval is the {:.0} % one",
                yosoku_models::transfer::predict::WIDE_LEVEL * 100.0
            );
        }
    }
    out
}

/// Answers `q`, or says what is wrong with it.
pub fn run(q: &Question) -> Result<String> {
    if !(0.5..1.0).contains(&q.level) {
        bail!("--level {}: expected a number in [0.5, 1)", q.level);
    }
    let catalogue = devices::catalogue(&q.devices)?;
    let device = catalogue.find(&q.on).ok_or_else(|| {
        anyhow!(
            "no device `{}` in the catalogue; the closest: {} (`yosoku devices` lists all; add one with a TOML file, {})",
            q.on,
            catalogue.closest(&q.on, 3).join(", "),
            devices::DEVICES_VAR
        )
    })?;
    let target = GpuSpec::from_device(device).map_err(|e| anyhow!(e))?;
    let model = training_tables(&q.model)?;
    let training = Measurements::from_observations(&model.training, &catalogue, true)
        .with_context(|| format!("{}: table `{}`", q.model.display(), model.name))?;
    let observations = import_profile(q)?;
    let profile = Measurements::from_profile(&observations, &catalogue)
        .with_context(|| format!("profile {}", q.profile_text()))?;
    let p = predict(
        &training,
        &profile,
        &target,
        q.level,
        q.refit_without_target,
    )?;
    if p.answers.is_empty() {
        bail!(
            "profile {}: no launch could be predicted ({})",
            q.profile_text(),
            profile.left_out.join("; ")
        );
    }
    let same = profile.gpus[0].architecture == target.architecture;
    let methods: Vec<&str> = ["transfer_ridge", "wave_scaling"]
        .into_iter()
        .filter(|m| {
            p.answers
                .iter()
                .any(|a| (a.model == WAVE_SCALING) == (*m == "wave_scaling"))
        })
        .collect();
    let figures = validation_figures(&model.scores, same, &methods);
    let run_ids: Vec<String> = utf8(&observations, col::RUN_ID)?
        .iter()
        .map(|r| r.unwrap_or_default().to_owned())
        .collect();
    if let Some(dir) = &q.save {
        save_forecast(dir, q, &p, &run_ids)?;
    }
    Ok(render(&p, &labels(&p, &run_ids), &model.name, &figures))
}

/// The model and the validation column of a forecast's rows.
const FORECAST_VALIDATION: &str = "forecast";

/// Writes the forecast bundle: one `forecast.predictions` row per launch and model (the answer,
/// and wave scaling beside), no measured time (the target has none yet), the profile and the
/// model bundle in the manifest's inputs.
fn save_forecast(dir: &Path, q: &Question, p: &Prediction, run_ids: &[String]) -> Result<()> {
    const TABLE: &str = "forecast.predictions";
    let mut rows = Vec::new();
    for a in &p.answers {
        let run_id = run_ids.get(a.row).cloned();
        let flags = (!a.warnings.is_empty()).then(|| a.warnings.join("; "));
        let row = |model: String, secs: f64, interval: (f64, f64)| PredictionRow {
            model,
            device: p.target.clone(),
            program: a.kernel.clone(),
            variant: a.variant.clone(),
            phase: "kernel".to_owned(),
            repetitions: 1,
            predicted_secs: secs,
            measured_secs: None,
            error_pct: None,
            flags: flags.clone(),
            run_id: run_id.clone(),
            model_group: Some(p.profile_gpu.clone()),
            validation: Some(FORECAST_VALIDATION.to_owned()),
            held_out: Some(p.target.clone()),
            interval_secs: interval.0.is_finite().then_some(interval),
        };
        // The methods' names of `transfer_scores`.
        let name = if a.model == WAVE_SCALING {
            "wave_scaling".to_owned()
        } else {
            format!("transfer_ridge ({})", a.model)
        };
        rows.push(row(name, a.predicted_secs, a.interval_secs));
        if a.model != WAVE_SCALING {
            rows.push(row(
                "wave_scaling".to_owned(),
                a.wave_scaling_secs,
                a.wave_scaling_interval_secs,
            ));
        }
    }
    let batch = predictions_batch(&rows)?;
    let mut inputs = Vec::new();
    for path in q
        .profile
        .iter()
        .chain(std::iter::once(&q.model.join(yosoku_bundle::MANIFEST_FILE)))
    {
        let (size, sha) = yosoku_runner::hash_file(path)
            .with_context(|| format!("{}: cannot read it to hash it", path.display()))?;
        inputs.push(InputFile {
            source: if path.starts_with(&q.model) {
                "model".to_owned()
            } else {
                "profile".to_owned()
            },
            key: "path".to_owned(),
            path: path.display().to_string(),
            sha256: sha,
            size_bytes: size,
        });
    }
    let kernels: std::collections::BTreeSet<&str> =
        p.answers.iter().map(|a| a.kernel.as_str()).collect();
    let manifest = Manifest {
        format: yosoku_bundle::manifest::FORMAT.to_owned(),
        format_version: yosoku_bundle::manifest::FORMAT_VERSION,
        yosoku_version: env!("CARGO_PKG_VERSION").to_owned(),
        pipeline: PipelineRecord {
            name: "forecast".to_owned(),
            description: format!(
                "Forecast of {} launch(es) of {} on {}, from their profile on {}, by the model of {} (training GPUs: {}), {} % intervals",
                p.answers.len(),
                kernels.into_iter().collect::<Vec<_>>().join(", "),
                p.target,
                p.profile_gpu,
                q.model.display(),
                p.training_gpus.join(", "),
                p.level * 100.0
            ),
            spec_path: String::new(),
            spec_sha256: String::new(),
        },
        created_unix_secs: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        total_wall_secs: 0.0,
        inputs,
        plugins: Vec::new(),
        stages: vec![StageRecord {
            stage: "validate".to_owned(),
            wall_secs: 0.0,
            steps: vec![StepRecord {
                id: "forecast".to_owned(),
                kind: "yosoku predict".to_owned(),
                wall_secs: 0.0,
                inputs: Vec::new(),
                tables: vec![TABLE.to_owned()],
                figures: Vec::new(),
                notes: p.notes.clone(),
            }],
        }],
        tables: vec![TableRecord {
            name: TABLE.to_owned(),
            file: format!(
                "{}/{}",
                yosoku_bundle::TABLES_DIR,
                yosoku_bundle::table_file_name(TABLE)
            ),
            kind: Some("predictions".to_owned()),
            rows: batch.num_rows() as u64,
        }],
        traces: Vec::new(),
        scoreboard: Vec::new(),
    };
    yosoku_bundle::fs::write_bundle(dir, &manifest, &[(TABLE.to_owned(), batch)])
        .with_context(|| format!("--save {}", dir.display()))
}
