//! `extrap`: Extra-P's own input files (its text format, JSON Lines, JSON) as a `runs` table, so
//! that one experiment can be modelled by Extra-P and by yosoku's `scaling_model` step alike:
//! one run per repetition, program = the call path, parameters = `name=value` pairs, the chosen
//! metric's values as times.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, PluginError,
};
use yosoku_regression::pmnf::extrap::{self, Experiment, Format, cube};
use yosoku_tables::RUNS;

use super::unit_factor;

/// The collector.
#[derive(Debug, Default)]
pub struct ExtrapCollector;

/// Reads one file in the format it holds (Extra-P's text, JSON, JSON Lines or Talpas formats,
/// gzip-compressed or not, an experiment Extra-P saved or an Extra-P 3 experiment: each point's
/// mean, as Extra-P models it).
fn read(path: &Path) -> Result<Experiment, PluginError> {
    // Through the SDK: hashed into the bundle's inputs, inflated when gzip-compressed.
    let bytes = yosoku_plugin_sdk::inflate_if_gzip(path, yosoku_plugin_sdk::read_input(path)?)?;
    let located = |e: extrap::InputError| match e.line {
        0 => PluginError::new(format!("{}: {}", path.display(), e.message)),
        line => PluginError::new(format!("{}:{line}: {}", path.display(), e.message)),
    };
    let format = Format::detect(&bytes).map_err(located)?;
    extrap::parse_bytes(format, &bytes, false).map_err(located)
}

/// A Cube set: a directory of run folders named by their parameters, each holding `*.cubex`
/// profiles (Extra-P's `--cube`; folders and files whose names start with `.` left out), each
/// profile read through the SDK for the values `reading` asks, its locations combined as it says.
fn read_cube_set(dir: &Path, reading: cube::Reading) -> Result<Experiment, PluginError> {
    let listed = |d: &Path| -> Result<Vec<std::path::PathBuf>, PluginError> {
        let mut out = Vec::new();
        for entry in
            std::fs::read_dir(d).map_err(|e| PluginError::new(format!("{}: {e}", d.display())))?
        {
            let path = entry
                .map_err(|e| PluginError::new(format!("{}: {e}", d.display())))?
                .path();
            if !path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    };
    let mut runs = Vec::new();
    for folder in listed(dir)?.into_iter().filter(|p| p.is_dir()) {
        for file in listed(&folder)? {
            if !(file.is_file() && file.extension().is_some_and(|e| e == "cubex")) {
                continue;
            }
            let bytes = yosoku_plugin_sdk::read_input(&file)?;
            let name = |p: &Path| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            // Its locations combined as it is read: one profile's values at a time.
            runs.push(
                cube::Run::read(name(&folder), name(&file), &bytes, reading.values)
                    .map_err(|e| PluginError::new(format!("{}: {e}", file.display())))?
                    .combined(reading.scaling, false),
            );
        }
    }
    if runs.is_empty() {
        return Err(PluginError::new(format!(
            "{}: a directory without Cube profiles (`<run folder>/*.cubex`, one folder per run \
             named by its parameters: `mm.p64n1000.r1`)",
            dir.display()
        )));
    }
    cube::cube_set(&runs, reading.scaling, false)
        .map_err(|e| PluginError::new(format!("{}: {}", dir.display(), e.message)))
}

/// The metric whose values are the times: `wanted`, else `time` where there is one, else the
/// only metric.
fn metric(e: &Experiment, wanted: Option<&str>, path: &Path) -> Result<String, PluginError> {
    let mut metrics: Vec<&str> = e.series.iter().map(|s| s.metric.as_str()).collect();
    metrics.sort_unstable();
    metrics.dedup();
    let chosen = match wanted {
        Some(m) if metrics.contains(&m) => m,
        Some(m) => {
            return Err(PluginError::new(format!(
                "{}: no metric `{m}`; the file has: {}",
                path.display(),
                metrics.join(", ")
            )));
        }
        None if metrics.contains(&"time") => "time",
        None => match metrics.as_slice() {
            [one] => one,
            _ => {
                return Err(PluginError::new(format!(
                    "{}: several metrics ({}): name the one that is a time with `metric`",
                    path.display(),
                    metrics.join(", ")
                )));
            }
        },
    };
    Ok(chosen.to_owned())
}

/// The columns of the `runs` table being built.
#[derive(Default)]
struct Runs {
    run_id: Vec<String>,
    program: Vec<String>,
    parameters: Vec<String>,
    secs: Vec<f64>,
}

impl Collector for ExtrapCollector {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "extrap",
            "Extra-P's input files, in any format Extra-P reads from a file (text, JSON, JSON Lines, Talpas, a saved .extra-p experiment, an Extra-P 3 experiment), or a directory of Score-P's Cube profiles (one folder per run named by its parameters); one run per repetition of a point, the call path as the program, the parameters as key=value",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "The files or Cube sets' directories (globs allowed)",
        ))
        .key(ConfigKey::optional(
            "scaling",
            ConfigType::String,
            Some("weak".into()),
            "A Cube set's processes and threads combined: weak (their mean, Extra-P's default), weak_threaded (the mean of those that measured a call path) or strong (their sum)",
        ))
        .key(ConfigKey::optional(
            "inclusive",
            ConfigType::Boolean,
            Some(false.into()),
            "A Cube set's inclusive values (each call path with all its callees: a root's time is its run's) instead of exclusive ones (Extra-P's default)",
        ))
        .key(ConfigKey::optional(
            "metric",
            ConfigType::String,
            None,
            "The metric whose values are times (default: `time`, else the file's only metric)",
        ))
        .key(ConfigKey::optional(
            "time_unit",
            ConfigType::String,
            Some("s".into()),
            "The unit of the metric's values: s, ms, us, ns or min",
        ))
        .key(ConfigKey::optional(
            "device",
            ConfigType::String,
            Some("unknown".into()),
            "The device the experiment ran on",
        ))
        .key(ConfigKey::optional(
            "phase",
            ConfigType::String,
            Some("total".into()),
            "What the times cover: total, compute, transfer, communication or kernel",
        ))
        .tables(&["runs"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        let unit = config.string("time_unit")?;
        if unit_factor(&unit).is_none() {
            return Err(PluginError::new(format!(
                "`time_unit` = {unit:?}: expected s, ms, us, ns or min"
            )));
        }
        config
            .string("scaling")?
            .parse::<cube::Scaling>()
            .map_err(|e| PluginError::new(format!("`scaling` = {e}")))?;
        let phase = config.string("phase")?;
        if !yosoku_tables::PHASES.contains(&phase.as_str()) {
            return Err(PluginError::new(format!(
                "`phase` = {phase:?}: expected total, compute, transfer, communication or kernel"
            )));
        }
        Ok(())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        self.validate(config)?;
        let options = ExtrapOptions {
            metric: config.opt_string("metric")?,
            time_unit: config.string("time_unit")?,
            device: config.string("device")?,
            phase: config.string("phase")?,
            cube: cube::Reading {
                values: if config.boolean("inclusive")? {
                    cube::Values::Inclusive
                } else {
                    cube::Values::Exclusive
                },
                scaling: config
                    .string("scaling")?
                    .parse()
                    .map_err(|e| PluginError::new(format!("`scaling` = {e}")))?,
            },
        };
        let batch = import_extrap(&config.path_list("paths")?, &options)?;
        out.push_batch("runs", batch)
    }
}

/// How Extra-P's files become runs (the collector's config).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtrapOptions {
    /// The metric whose values are times; `None`: `time`, else the only metric.
    pub metric: Option<String>,
    pub time_unit: String,
    pub device: String,
    pub phase: String,
    /// Which values of a Cube set's call paths, and how its locations combine.
    pub cube: cube::Reading,
}

/// The `runs` of Extra-P's files and Cube sets: one per repetition of a point of the chosen
/// metric (of a Cube set, the call paths with a positive value at every run).
pub fn import_extrap(
    paths: &[std::path::PathBuf],
    options: &ExtrapOptions,
) -> Result<RecordBatch, PluginError> {
    let (mul, div) = unit_factor(&options.time_unit).ok_or_else(|| {
        PluginError::new(format!(
            "`time_unit` = {:?}: expected s, ms, us, ns or min",
            options.time_unit
        ))
    })?;
    if paths.is_empty() {
        return Err(PluginError::new("`paths` names no file"));
    }
    let mut runs = Runs::default();
    for path in paths {
        let e = if path.is_dir() {
            read_cube_set(path, options.cube)?
        } else if options.cube.values == cube::Values::Inclusive {
            return Err(PluginError::new(format!(
                "{}: `inclusive` reads a set of Cube profiles (a directory); an Extra-P file \
                 holds its values as they were measured",
                path.display()
            )));
        } else {
            read(path)?
        };
        let metric = metric(&e, options.metric.as_deref(), path)?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A Cube set's call path that spent no time of its own in some run (a caller whose
        // time is all its callees') is no time to model: left out. A file's call path measured
        // 0 at every point and repetition (RELeARN's file has one: a phase that never ran) is
        // no time either: left out; one 0 among positive times is an error.
        let from_cube_set = path.is_dir();
        let all = |s: &extrap::Series, test: fn(f64) -> bool| {
            s.points.iter().flat_map(|p| &p.values).all(|&v| test(v))
        };
        let positive = |s: &extrap::Series| all(s, |v| v > 0.0);
        let never_ran = |s: &extrap::Series| all(s, |v| v == 0.0);
        let mut kept = 0;
        for s in e
            .series
            .iter()
            .filter(|s| s.metric == metric && !never_ran(s) && (!from_cube_set || positive(s)))
        {
            kept += 1;
            for p in &s.points {
                let parameters: Vec<String> = e
                    .parameters
                    .iter()
                    .zip(&p.coordinate)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                let parameters = parameters.join(";");
                for (k, v) in p.values.iter().enumerate() {
                    // In one rounding where the unit is a power of ten.
                    let secs = super::power_of_ten(mul, div)
                        .and_then(|k| crate::frame::shift_decimal(&format!("{v:e}"), k))
                        .unwrap_or(v * mul / div);
                    if !(secs > 0.0 && secs.is_finite()) {
                        return Err(PluginError::new(format!(
                            "{}: call path `{}`, metric `{metric}`, point {parameters}: value {v} is not a positive time",
                            path.display(),
                            s.callpath
                        )));
                    }
                    runs.run_id
                        .push(format!("{stem}:{}:{parameters}:{k}", s.callpath));
                    runs.program.push(s.callpath.clone());
                    runs.parameters.push(parameters.clone());
                    runs.secs.push(secs);
                }
            }
        }
        if kept == 0 {
            let named = if metric.is_empty() {
                "the file's unnamed metric".to_owned()
            } else {
                format!("metric `{metric}`")
            };
            return Err(PluginError::new(format!(
                "{}: no call path of {named} has a positive value at every {}",
                path.display(),
                if from_cube_set { "run" } else { "point" }
            )));
        }
    }
    let n = runs.run_id.len();
    let text = |v: Vec<String>| -> ArrayRef { Arc::new(StringArray::from(v)) };
    RUNS.batch(vec![
        text(runs.run_id),
        text(vec![options.device.clone(); n]),
        text(runs.program),
        text(vec![String::new(); n]),
        text(runs.parameters),
        text(vec![options.phase.clone(); n]),
        Arc::new(Int64Array::from(vec![1i64; n])),
        Arc::new(Float64Array::from(runs.secs)),
    ])
    .map_err(|e| PluginError::new(format!("runs: {e}")))
}
