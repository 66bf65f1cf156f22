//! `yosoku predict`: the arguments of the question and the printed answer; the runner
//! (`yosoku_runner::predict`) imports the profile, finds the model and answers.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::format::secs;
use anyhow::{Context, Result};
use yosoku_runner::predict::{
    Answer, ModelError, PhysicsBeside, Question, TrainedTarget, WAVE_SCALING, WIDE_LEVEL, answer,
    save_forecast,
};

/// What `yosoku predict` was asked: its command-line arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
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
    /// Coverage of the interval, in [0.5, 1).
    #[arg(long, default_value_t = 0.95, value_parser = level)]
    pub level: f64,
    /// Allow a target the model was trained on: the model is fitted again without its rows
    /// (the saved one has seen its times), the one case `predict` fits.
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
    /// Answer even where the device files look wrong (a value outside its architecture's
    /// range in the catalogue, a peak that contradicts SMs x lanes x clock): printed as
    /// warnings on stderr; without it, such files refuse the answer.
    #[arg(long)]
    pub accept_device_warnings: bool,
}

/// `--level`: a coverage in [0.5, 1).
fn level(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if (0.5..1.0).contains(&v) => Ok(v),
        _ => Err("expected a number in [0.5, 1)".to_owned()),
    }
}

impl Args {
    fn question(&self) -> Question {
        Question {
            profile: self.profile.clone(),
            source: self.source.clone(),
            on: self.on.clone(),
            plugin: self.plugin.clone(),
            collector: self.collector.clone(),
            variants: self.variants.clone(),
            model: self.model.clone(),
            devices: self.devices.clone(),
            level: self.level,
            trained_target: if self.refit_without_target {
                TrainedTarget::LeaveOut
            } else {
                TrainedTarget::Refuse
            },
            plugin_path: self.plugin_path.clone(),
            accept_device_warnings: self.accept_device_warnings,
        }
    }
}

/// Answers the question of `args` (and saves the forecast with `--save`), as printed text.
pub fn run(args: &Args) -> Result<String> {
    let q = args.question();
    let a = answer(&q).map_err(|e| {
        let trained = e
            .chain()
            .any(|c| matches!(c.downcast_ref(), Some(ModelError::TrainedOnTarget { .. })));
        if trained {
            anyhow::anyhow!(
                "{}; ask with --refit-without-target to leave its rows out of the model",
                crate::message(&e)
            )
        } else {
            e
        }
    })?;
    // Warnings on stderr, where a script that reads the answer from stdout does not take
    // them for part of it.
    for w in &a.device_warnings {
        eprintln!("warning: {w}");
    }
    if let Some(dir) = &args.save {
        save_forecast(dir, &q, &a).with_context(|| format!("--save {}", dir.display()))?;
    }
    Ok(render(&a))
}

fn render(answer: &Answer) -> String {
    let a = answer;
    let (p, labels, figures) = (&a.prediction, &a.labels, &a.validation);
    let training = &a.training_table;
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
    for d in &p.unanswered {
        let _ = writeln!(
            out,
            "not answered: {}",
            yosoku_runner::predict::unanswered_text(d)
        );
    }
    for (i, (a, variant)) in p.answers.iter().zip(labels).enumerate() {
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
        let beside = [
            (
                "wave scaling",
                a.wave_scaling_secs,
                a.wave_scaling_interval_secs,
            ),
            (
                "latency-aware model",
                a.utilisation_secs,
                a.utilisation_interval_secs,
            ),
        ];
        let beside: Vec<String> = beside
            .iter()
            .filter(|(_, v, _)| v.is_finite())
            .map(|(name, v, (low, high))| {
                if low.is_finite() {
                    format!("{name} {} ({} .. {})", secs(*v), secs(*low), secs(*high))
                } else {
                    format!("{name} {}", secs(*v))
                }
            })
            .collect();
        if !beside.is_empty() && a.model != WAVE_SCALING {
            let _ = writeln!(out, "  beside: {}", beside.join("; "));
        }
        if let Some(b) = answer.physics.get(i).filter(|b| b.physics_secs.is_finite()) {
            physics_lines(
                &mut out,
                b,
                answer.physics_rates,
                &p.target,
                a.model == WAVE_SCALING,
            );
        }
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
            .map(|n| {
                format!(
                    "{} ({} on {}; distance {:.2})",
                    n.kernel, n.variant, n.gpu, n.distance
                )
            })
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
                WIDE_LEVEL * 100.0
            );
        }
    }
    out
}

/// The physics model's lines under one answer: its time, what bounds it, floor plus bytes, the
/// physics-scaled time and the combination (`wave_scaling`: the answer is wave scaling's
/// fallback, which the combination does not hold).
fn physics_lines(
    out: &mut String,
    b: &PhysicsBeside,
    rates: &str,
    target: &str,
    wave_scaling: bool,
) {
    let _ = writeln!(
        out,
        "  physics ({rates} rates of {target}): {}, {}-bound; launch floor + bytes / bandwidth {}; the measured time scaled by the physics of both GPUs {}",
        secs(b.physics_secs),
        b.bound,
        secs(b.floor_plus_bytes_secs),
        secs(b.physics_scaled_secs)
    );
    if b.combined_secs.is_finite() {
        // Its parts as the runner takes them: the answer only where the transfer model gave
        // it, cores x clock only within the architecture.
        let answer = if wave_scaling { "" } else { "the answer, " };
        let _ = writeln!(
            out,
            "  combined (geometric mean of {answer}the physics-scaled time and cores x clock where the GPUs share an architecture): {}",
            secs(b.combined_secs)
        );
    }
}
