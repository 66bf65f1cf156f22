//! `yosoku predict`: a profile of kernels on one GPU, their times on another GPU of the device
//! catalogue, with an interval and why (docs/methods.md, section 6).
//!
//! The model is the bundle's saved transfer model (its manifest's `models`, kind
//! [`GpuTransfer::KIND`]): its fitted parameters read back, never fitted again to answer, and
//! refused where its training table changed since the fit. The
//! profile is imported through the plugin host as a pipeline's source is, checked and hashed
//! ([`crate::sources::import`]), or read from a bundle's source. [`save_forecast`] writes the
//! answer as a bundle, to be scored against a measurement taken later.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use arrow_array::RecordBatch;
use serde_json::{Map, Value};
use yosoku_bundle::{InputFile, Manifest, ManifestBuilder, ModelRecord, StepRecord};
use yosoku_models::Model;
pub use yosoku_models::ModelError;
use yosoku_models::transfer::data::Dropped;
use yosoku_models::transfer::gpu::peak_scaling;
use yosoku_models::transfer::physics::{
    GpuRates, KernelWork, RateSource, floor_plus_bytes_secs, physics_scaled_secs, physics_time,
};
pub use yosoku_models::transfer::predict::WIDE_LEVEL;
use yosoku_models::transfer::predict::{
    GpuTransfer, TransferOptions, TransferQuestion, TransferTraining,
};
pub use yosoku_models::transfer::predict::{Prediction, TrainedTarget, WAVE_SCALING};
use yosoku_models::transfer::report::{Architectures, question_schemes, quoted_scores};
use yosoku_models::transfer::schemes::{Method, combined_secs};
use yosoku_models::transfer::{GpuSpec, Measurements};
use yosoku_tables::access::utf8;
use yosoku_tables::col;
use yosoku_tables::rows::{PredictionRow, predictions_batch};

use crate::sources::{SourceRequest, import};

/// What `yosoku predict` is asked.
#[derive(Debug, Clone)]
pub struct Question {
    /// The profile files (or a directory, for rocprof), or one result bundle whose source holds
    /// the launches.
    pub profile: Vec<PathBuf>,
    /// The source of a bundle profile to read, where it has several.
    pub source: Option<String>,
    /// The target device: a name or alias of the catalogue.
    pub on: String,
    pub plugin: String,
    pub collector: String,
    /// The variant of each launch, in launch order (ncu and nvprof).
    pub variants: Vec<String>,
    /// The bundle holding the transfer model.
    pub model: PathBuf,
    /// Catalogue files or directories over the built-in ones.
    pub devices: Vec<PathBuf>,
    /// Coverage of the interval.
    pub level: f64,
    /// What to do when the target is one of the model's training GPUs.
    pub trained_target: TrainedTarget,
    /// Extra plugin directories or libraries, searched first.
    pub plugin_path: Vec<PathBuf>,
    /// Answer even where the user's device files look wrong ([`Answer::device_warnings`]);
    /// without it, such files refuse the answer.
    pub accept_device_warnings: bool,
}

impl Question {
    /// The profile paths as the messages name them.
    pub fn profile_text(&self) -> String {
        self.profile
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The answer to a [`Question`]: the model's prediction for every launch, and what it rests on.
#[derive(Debug, Clone)]
pub struct Answer {
    pub prediction: Prediction,
    /// Each answer's label: its variant, with its run where the profile holds a variant more
    /// than once (an OpenCL run's sizes).
    pub labels: Vec<String>,
    /// The model's name in its bundle and the table of its training launches.
    pub model_name: String,
    pub training_table: String,
    /// The held-out figures of the scheme the question is an instance of.
    pub validation: Vec<String>,
    /// The run of each row of the profile's launches.
    pub run_ids: Vec<String>,
    /// The files the answer rests on, hashed: the profile's and the model bundle's manifest.
    pub inputs: Vec<InputFile>,
    /// What looks wrong in the user's device files, each naming its file and field (answered
    /// with them only when the question accepts them).
    pub device_warnings: Vec<String>,
    /// The physics model's time of each answered launch on the target (in the order of the
    /// prediction's answers), from what the profile measured of it and the target's rates.
    pub physics: Vec<PhysicsBeside>,
    /// Where the target's rates come from: `calibration` or `catalogue`.
    pub physics_rates: &'static str,
}

/// The physics model beside an answer (docs/methods.md, section 6, "Physics first"): the launch's
/// measured work (its grid, block, FLOPs, DRAM bytes, instructions, L2 transactions, registers
/// and shared memory as the profile counted them) over the target's rates, and the launch floor
/// plus its bytes over the bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicsBeside {
    pub physics_secs: f64,
    /// What bounds it: `launch floor`, `memory`, `compute`, `instruction issue`, `L2`,
    /// `block starts`, `dependent steps`.
    pub bound: &'static str,
    pub floor_plus_bytes_secs: f64,
    /// The profile's measured time scaled by the physics model's ratio of the launch's time on
    /// the target to its time on the profile's GPU, both over catalogue rates (`physics_scaled`).
    pub physics_scaled_secs: f64,
    /// The geometric mean of the answer (where the transfer model gave it), the physics-scaled
    /// time and cores x clock scaling (where the two GPUs share an architecture): `combined`
    /// (`yosoku_models::transfer::schemes::Method::Combined`), NaN where none answers.
    pub combined_secs: f64,
}

/// The physics model's time of every answered launch, from the profile's measured work, and its
/// measured time scaled by the physics model's ratio between the target (`target`'s catalogue
/// rates, so that both ends of the ratio are datasheet figures) and the profile's GPU.
fn physics_beside(
    p: &Prediction,
    measured: &Measurements,
    rates: &GpuRates,
    target: &GpuSpec,
) -> Vec<PhysicsBeside> {
    let on_target = GpuRates::from_spec(target);
    p.answers
        .iter()
        .map(|a| {
            let Some(cell) = measured.cells.iter().find(|c| c.row == a.row) else {
                return PhysicsBeside {
                    physics_secs: f64::NAN,
                    bound: "",
                    floor_plus_bytes_secs: f64::NAN,
                    physics_scaled_secs: f64::NAN,
                    combined_secs: f64::NAN,
                };
            };
            let w = KernelWork::from_work(&cell.work);
            let t = physics_time(&w, rates);
            let profile_gpu = &measured.gpus[cell.gpu];
            let on_profile_gpu = GpuRates::from_spec(profile_gpu);
            let scaled = physics_scaled_secs(cell.secs, &w, &on_profile_gpu, &on_target);
            // The parts of `combined`, as its validation takes them.
            let ridge = (a.model != WAVE_SCALING).then_some(a.predicted_secs);
            let cores_clock = (profile_gpu.architecture == target.architecture)
                .then(|| peak_scaling(cell.secs, profile_gpu, target));
            PhysicsBeside {
                physics_secs: t.secs,
                bound: t.bound(),
                floor_plus_bytes_secs: floor_plus_bytes_secs(&w, rates),
                physics_scaled_secs: scaled,
                combined_secs: combined_secs(ridge.into_iter().chain([scaled]).chain(cores_clock))
                    .unwrap_or(f64::NAN),
            }
        })
        .collect()
}

/// The profile's launches as model rows, and the files they were read from.
struct Profile {
    launches: RecordBatch,
    inputs: Vec<InputFile>,
}

/// The profile's launches: a bundle's source, or imported by the named collector.
fn import_profile(q: &Question) -> Result<Profile> {
    if let [one] = q.profile.as_slice()
        && yosoku_bundle::fs::is_bundle(one)
    {
        let tables = bundle_source(one, q.source.as_deref())?;
        let launches =
            yosoku_models::transfer::data::launches(tables.iter().map(|(n, b)| (n.as_str(), b)))
                .with_context(|| format!("bundle {}", one.display()))?;
        let manifest = one.join(yosoku_bundle::MANIFEST_FILE);
        let input =
            yosoku_bundle::fs::hashed_input("profile", "bundle", path_text(&manifest), &manifest)?;
        return Ok(Profile {
            launches,
            inputs: vec![input],
        });
    }
    if q.source.is_some() {
        bail!(
            "a source names one of a bundle's sources; {} is not a bundle",
            q.profile_text()
        );
    }
    for p in &q.profile {
        if !p.exists() {
            bail!("{}: no such profile file or directory", p.display());
        }
    }
    let request = SourceRequest {
        what: format!("profile {}", q.profile_text()),
        name: "profile",
        plugin: &q.plugin,
        collector: &q.collector,
        plugin_path: &q.plugin_path,
    };
    let imported = import(&request, |info| {
        let takes = |key: &str| info.config.iter().any(|k| k.key == key);
        let paths: Vec<Value> = q
            .profile
            .iter()
            .map(|p| Value::String(path_text(p)))
            .collect();
        let mut config = Map::new();
        // The collector's input key: one file (`path`) where it takes one, else a list.
        match paths.as_slice() {
            [path] if takes("path") || !takes("paths") => {
                config.insert("path".into(), path.clone());
            }
            _ if takes("paths") => {
                config.insert("paths".into(), Value::Array(paths));
            }
            _ => {
                return Err(format!(
                    "collector `{}` reads one file: give one profile, not {}",
                    q.collector,
                    paths.len()
                ));
            }
        }
        if !q.variants.is_empty() {
            let variants = q.variants.iter().cloned().map(Value::String).collect();
            config.insert("variants".into(), Value::Array(variants));
        }
        Ok(config)
    })?;
    let launches = yosoku_models::transfer::data::launches(
        imported.tables.iter().map(|(n, b)| (n.as_str(), b)),
    )
    .with_context(|| format!("profile {} (collector `{}`)", q.profile_text(), q.collector))?;
    Ok(Profile {
        launches,
        inputs: imported.inputs,
    })
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// The tables of one source of the bundle in `dir` (`observations`, `runs`, `counters`), by
/// their names without the source's: the one `source` names, or the only one that has launches.
fn bundle_source(dir: &Path, source: Option<&str>) -> Result<Vec<(String, RecordBatch)>> {
    let manifest = yosoku_bundle::fs::read_manifest(dir)
        .with_context(|| format!("{}: not a readable bundle", dir.display()))?;
    let has = |ns: &str, t: &str| manifest.table(&format!("{ns}.{t}")).is_some();
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
            "{}: the bundle has {} sources with launches ({}): name one as the source to read",
            dir.display(),
            several.len(),
            several.join(", ")
        ),
    };
    let mut out = Vec::new();
    for t in ["observations", "runs", "counters"] {
        let name = format!("{chosen}.{t}");
        if let Some(r) = manifest.table(&name) {
            let batch = yosoku_bundle::fs::read_table_file(&dir.join(&r.file))
                .with_context(|| format!("{}: table `{name}`", dir.display()))?;
            out.push((t.to_owned(), batch));
        }
    }
    Ok(out)
}

/// What `yosoku predict` reads of a model bundle.
struct SavedTransfer {
    /// The model's name and its training table's.
    name: String,
    table: String,
    training: RecordBatch,
    fitted: GpuTransfer,
    /// The held-out scores of the validation steps that named the model, by table name.
    scores: Vec<(String, RecordBatch)>,
}

/// The bundle's transfer model (the one fitted on most launches, where it has several), as it
/// was saved: its training launches, checked against their hash, its fitted parameters, and the
/// held-out scores of the `gpu_transfer` steps that named it.
fn saved_model(dir: &Path) -> Result<SavedTransfer> {
    let build_it = "build it with `yosoku run pipelines/gpu-transfer.toml`";
    let manifest = yosoku_bundle::fs::read_manifest(dir)
        .with_context(|| format!("{}: no model bundle there; {build_it}", dir.display()))?;
    let rows = |m: &ModelRecord| {
        m.training
            .as_ref()
            .and_then(|t| manifest.table(&t.table))
            .map_or(0, |t| t.rows)
    };
    let record = manifest
        .models_of(GpuTransfer::KIND)
        .max_by_key(|m| rows(m))
        .ok_or_else(|| {
            anyhow!(
                "{}: the bundle has no `{}` model; {build_it}",
                dir.display(),
                GpuTransfer::KIND
            )
        })?;
    let files = yosoku_bundle::fs::read_model(dir, &manifest, record)?;
    let fitted_json = files.fitted_json.ok_or_else(|| {
        anyhow!(
            "{}: model `{}` has no saved parameters: it was saved by a yosoku older than December 2026; {build_it}",
            dir.display(),
            record.name
        )
    })?;
    let context = || format!("{}: model `{}`", dir.display(), record.name);
    let fitted = GpuTransfer::from_json(&fitted_json).with_context(context)?;
    let scores = record
        .scores
        .iter()
        .map(|name| {
            let table = manifest.table(name).ok_or_else(|| {
                anyhow!("{}: the model's scores `{name}` are missing", dir.display())
            })?;
            Ok((
                name.clone(),
                yosoku_bundle::fs::read_table_file(&dir.join(&table.file))?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(SavedTransfer {
        name: record.name.clone(),
        table: files.training_table,
        training: files.training,
        fitted,
        scores,
    })
}

/// The answers' labels: the variant, and the run where the profile holds a kernel's variant
/// more than once (an OpenCL run's sizes).
fn labels(p: &Prediction, run_ids: &[String]) -> Vec<String> {
    // How often each (kernel, variant) occurs, counted once: comparing every answer with every
    // other made 10,000 launches take seconds.
    let mut occurrences: std::collections::HashMap<(&str, &str), usize> = Default::default();
    for a in &p.answers {
        *occurrences
            .entry((a.kernel.as_str(), a.variant.as_str()))
            .or_insert(0) += 1;
    }
    p.answers
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let variant = if a.variant.is_empty() {
                format!("launch {}", i + 1)
            } else {
                a.variant.clone()
            };
            let repeated = occurrences[&(a.kernel.as_str(), a.variant.as_str())] > 1;
            match run_ids.get(a.row) {
                Some(run) if repeated && !a.variant.is_empty() => format!("{variant}, run {run}"),
                _ => variant,
            }
        })
        .collect()
}

/// One line of the launches no model answers: the kernel, how many, and why.
pub fn unanswered_text(d: &Dropped) -> String {
    format!(
        "{}: {} launch(es) not answered: {}",
        d.kernel, d.launches, d.why
    )
}

/// Answers `q`, or says what is wrong with it.
pub fn answer(q: &Question) -> Result<Answer> {
    if !(0.5..1.0).contains(&q.level) {
        bail!("level {}: expected a number in [0.5, 1)", q.level);
    }
    let catalogue = crate::devices::load_catalogue(&q.devices)?;
    if !q.accept_device_warnings && !catalogue.warnings().is_empty() {
        bail!(
            "the device files look wrong, so no answer is given from them:\n  {}\nfix them, or ask with --accept-device-warnings to answer with them as they are",
            catalogue.warnings().join("\n  ")
        );
    }
    let device = catalogue.find(&q.on).ok_or_else(|| {
        anyhow!(
            "no device `{}` in the catalogue; the closest: {} (`yosoku devices` lists all; add one with a TOML file, {})",
            q.on,
            catalogue.closest(&q.on, 3).join(", "),
            crate::devices::DEVICES_VAR
        )
    })?;
    let target = GpuSpec::from_device(device).map_err(|e| anyhow!(e))?;
    // The physics model's rates: the calibration's where the device entry has one.
    let rates = GpuRates::from_device_or_spec(device, &target);
    let model = saved_model(&q.model)?;
    // The training launches, for the nearest kernels and what lies outside them. A training
    // GPU the user's catalogue now lacks (its device file not given here) is left out of that
    // search, never a refusal: the fitted parameters, which answer, do not need it.
    let reading = TransferOptions {
        skip_unknown_devices: true,
        ..TransferOptions::default()
    };
    let training = GpuTransfer::training_measurements(
        TransferTraining {
            observations: &model.training,
            devices: &catalogue,
        },
        &reading,
    )
    .with_context(|| format!("{}: table `{}`", q.model.display(), model.table))?;
    let profile = import_profile(q)?;
    let measured = Measurements::from_profile(&profile.launches, &catalogue)
        .with_context(|| format!("profile {}", q.profile_text()))?;
    let mut p = model.fitted.predict(TransferQuestion {
        training: &training,
        profile: &measured,
        target: &target,
        level: q.level,
        trained_target: q.trained_target,
    })?;
    if rates.source == RateSource::Catalogue && target.launch_latency_secs.is_none() {
        p.notes.push(format!(
            "{} has no launch floor in the catalogue (`launch_latency_us`) nor a calibration: the physics model takes the default {} us, which over-prices launches of a few microseconds (`yosoku calibrate --backend cuda` on it measures the floor)",
            target.name,
            rates.floor_secs * 1e6
        ));
    }
    if p.answers.is_empty() {
        let why: Vec<String> = p.unanswered.iter().map(unanswered_text).collect();
        bail!(
            "profile {}: no launch could be predicted ({})",
            q.profile_text(),
            why.join("; ")
        );
    }
    let architectures = Architectures::of(&measured.gpus[0], &target, &training.gpus);
    let unseen_kernel = measured
        .kernels
        .iter()
        .any(|k| !training.kernels.contains(k));
    let mut methods: Vec<Method> = [Method::Transfer, Method::WaveScaling]
        .into_iter()
        .filter(|m| {
            p.answers
                .iter()
                .any(|a| (a.model == WAVE_SCALING) == (*m == Method::WaveScaling))
        })
        .collect();
    // The combination printed beside each answer, with its own held-out figures.
    methods.push(Method::Combined);
    let run_ids: Vec<String> = utf8(&profile.launches, col::RUN_ID)?
        .iter()
        .map(|r| r.unwrap_or_default().to_owned())
        .collect();
    let manifest_path = q.model.join(yosoku_bundle::MANIFEST_FILE);
    let mut inputs = profile.inputs;
    inputs.push(yosoku_bundle::fs::hashed_input(
        "model",
        "bundle",
        path_text(&manifest_path),
        &manifest_path,
    )?);
    let physics = physics_beside(&p, &measured, &rates, &target);
    Ok(Answer {
        physics,
        physics_rates: match rates.source {
            RateSource::Calibration => "calibration",
            RateSource::Catalogue => "catalogue",
        },
        labels: labels(&p, &run_ids),
        validation: quoted_scores(
            &model.scores,
            &question_schemes(architectures, unseen_kernel),
            &methods,
        ),
        prediction: p,
        model_name: model.name,
        training_table: model.table,
        run_ids,
        inputs,
        device_warnings: catalogue.warnings().to_vec(),
    })
}

/// The model and the validation column of a forecast's rows.
const FORECAST_VALIDATION: &str = "forecast";

/// The table a forecast bundle holds.
pub const FORECAST_TABLE: &str = "forecast.predictions";

/// The `forecast.predictions` rows: one per launch and model (the answer, and wave scaling, the
/// latency-aware model, the physics model and floor plus bytes beside), no measured time (the
/// target has none yet).
fn forecast_batch(a: &Answer) -> Result<RecordBatch> {
    let p = &a.prediction;
    let mut rows = Vec::new();
    for (i, answer) in p.answers.iter().enumerate() {
        let run_id = a.run_ids.get(answer.row).cloned();
        let flags = (!answer.warnings.is_empty()).then(|| answer.warnings.join("; "));
        let row = |model: String, secs: f64, interval: (f64, f64)| PredictionRow {
            model,
            device: p.target.clone(),
            program: answer.kernel.clone(),
            variant: answer.variant.clone(),
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
        let wave = Method::WaveScaling.name().to_owned();
        if answer.model == WAVE_SCALING {
            rows.push(row(wave, answer.predicted_secs, answer.interval_secs));
        } else {
            let name = format!("{} ({})", Method::Transfer.name(), answer.model);
            rows.push(row(name, answer.predicted_secs, answer.interval_secs));
            rows.push(row(
                wave,
                answer.wave_scaling_secs,
                answer.wave_scaling_interval_secs,
            ));
        }
        if answer.utilisation_secs.is_finite() {
            rows.push(row(
                Method::Utilisation.name().to_owned(),
                answer.utilisation_secs,
                answer.utilisation_interval_secs,
            ));
        }
        if let Some(b) = a.physics.get(i).filter(|b| b.physics_secs.is_finite()) {
            let none = (f64::NAN, f64::NAN);
            rows.push(row(Method::Physics.name().to_owned(), b.physics_secs, none));
            rows.push(row(
                Method::FloorPlusBytes.name().to_owned(),
                b.floor_plus_bytes_secs,
                none,
            ));
            if b.physics_scaled_secs.is_finite() {
                rows.push(row(
                    Method::PhysicsScaled.name().to_owned(),
                    b.physics_scaled_secs,
                    none,
                ));
            }
            if b.combined_secs.is_finite() {
                rows.push(row(
                    Method::Combined.name().to_owned(),
                    b.combined_secs,
                    none,
                ));
            }
        }
    }
    Ok(predictions_batch(&rows)?)
}

/// Writes the answer as a bundle in `dir`: one `forecast.predictions` row per launch and model,
/// the profile's files and the model bundle's manifest hashed among its inputs, so that a
/// forecast can be committed before its GPU is measured and scored afterwards.
pub fn save_forecast(dir: &Path, q: &Question, a: &Answer) -> Result<Manifest> {
    let p = &a.prediction;
    let batch = forecast_batch(a)?;
    let kernels: BTreeSet<&str> = p.answers.iter().map(|x| x.kernel.as_str()).collect();
    let mut manifest = ManifestBuilder::new(
        "forecast",
        format!(
            "Forecast of {} launch(es) of {} on {}, from their profile on {}, by the model `{}` of {} (training GPUs: {}), {} % intervals",
            p.answers.len(),
            kernels.into_iter().collect::<Vec<_>>().join(", "),
            p.target,
            p.profile_gpu,
            a.model_name,
            q.model.display(),
            p.training_gpus.join(", "),
            p.level * 100.0
        ),
    );
    for input in &a.inputs {
        manifest.input(input.clone());
    }
    manifest.single_step(
        "validate",
        StepRecord {
            id: "forecast".to_owned(),
            kind: "yosoku predict".to_owned(),
            wall_secs: 0.0,
            inputs: Vec::new(),
            tables: vec![FORECAST_TABLE.to_owned()],
            figures: Vec::new(),
            notes: p.notes.clone(),
        },
    );
    Ok(yosoku_bundle::fs::write(
        dir,
        manifest,
        &[(FORECAST_TABLE.to_owned(), batch)],
    )?)
}
