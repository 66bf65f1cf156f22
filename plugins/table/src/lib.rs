//! `table`: a user's own measurements (a time per run, and any features beside it, written by
//! any tool) from CSV, Parquet or Arrow IPC files, as the canonical `runs`, `observations` and
//! `counters` tables: what the fit and validate steps model. See README.md and
//! docs/your-own-data.md.
//!
//! The time column is found by name, with its unit (or mapped in the configuration); device,
//! program, variant, run id and repetition columns are mapped or defaulted; the other numeric
//! columns are the features. Every bad cell is named by file, line (or row) and column.

mod bundle;
mod extrap;
mod frame;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};
use yosoku_tables::{COUNTERS, KIND_METADATA_KEY, METRIC_KINDS, OBSERVATIONS, RUNS, col};

pub use bundle::{BUNDLE_TABLE_KINDS, read_bundle_table};
pub use extrap::{ExtrapCollector, ExtrapOptions, import_extrap};
pub use frame::{Column, Format, Frame};

#[derive(Debug, Default)]
pub struct TablePlugin;

impl Plugin for TablePlugin {
    fn name(&self) -> &'static str {
        "table"
    }

    fn description(&self) -> &'static str {
        "Your own measurements from CSV, Parquet or Arrow IPC files: a time per run and its features"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(FileCollector),
            Box::new(extrap::ExtrapCollector),
            Box::new(bundle::BundleCollector),
        ]
    }
}

export_plugin!(TablePlugin);

/// Column names taken for the measured time when `time` is not given, in this order
/// (compared without case). The unit follows the name's suffix unless `time_unit` says.
pub const TIME_COLUMNS: &[&str] = &[
    "measured_secs",
    "time_secs",
    "duration_secs",
    "elapsed_secs",
    "runtime_secs",
    "seconds",
    "secs",
    "time_s",
    "duration_s",
    "time_ms",
    "duration_ms",
    "elapsed_ms",
    "runtime_ms",
    "time_us",
    "duration_us",
    "time_ns",
    "duration_ns",
    "time",
    "duration",
    "elapsed",
    "runtime",
];

/// A time unit: seconds = value x the first / the second. Sub-second units divide by an exact
/// power of ten, so `2.6` ms is the double nearest 0.0026 s (times 1e-3 is one ulp off).
const TIME_UNITS: &[(&str, f64, f64)] = &[
    ("s", 1.0, 1.0),
    ("ms", 1.0, 1e3),
    ("us", 1.0, 1e6),
    ("ns", 1.0, 1e9),
    ("min", 60.0, 1.0),
];

/// How a file's columns become the canonical tables (the collector's config).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mapping {
    pub format: Option<Format>,
    /// The time column; `None`: found by name ([`TIME_COLUMNS`]).
    pub time: Option<String>,
    /// `s`, `ms`, `us`, `ns`, `min`; `None`: from the time column's name, else seconds.
    pub time_unit: Option<String>,
    pub device: Option<String>,
    pub program: Option<String>,
    pub variant: Option<String>,
    pub run_id: Option<String>,
    pub repetitions: Option<String>,
    /// Values where the file has no such column.
    pub default_device: String,
    /// `None`: the file's name without its extensions.
    pub default_program: Option<String>,
    /// The features; `None`: every other numeric column.
    pub features: Option<Vec<String>>,
    pub phase: String,
    /// The metric kind of every feature (docs/tables.md); `None`: `count`.
    pub feature_kind: Option<String>,
}

impl Mapping {
    fn from_config(config: &Config) -> Result<Self, PluginError> {
        let format = config
            .opt_string("format")?
            .map(|f| {
                Format::parse(&f).ok_or_else(|| {
                    PluginError::new(format!(
                        "`format` = {f:?}: expected \"csv\", \"tsv\", \"parquet\" or \"ipc\""
                    ))
                })
            })
            .transpose()?;
        let time_unit = config.opt_string("time_unit")?;
        if let Some(u) = &time_unit
            && unit_factor(u).is_none()
        {
            return Err(PluginError::new(format!(
                "`time_unit` = {u:?}: expected one of {}",
                TIME_UNITS
                    .iter()
                    .map(|(u, _, _)| *u)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let phase = config.string("phase")?;
        if !["total", "compute", "transfer", "communication", "kernel"].contains(&phase.as_str()) {
            return Err(PluginError::new(format!(
                "`phase` = {phase:?}: expected total, compute, transfer, communication or kernel"
            )));
        }
        let feature_kind = config.string("feature_kind")?;
        if !METRIC_KINDS.contains(&feature_kind.as_str()) {
            return Err(PluginError::new(format!(
                "`feature_kind` = {feature_kind:?}: expected one of {}",
                METRIC_KINDS.join(", ")
            )));
        }
        Ok(Self {
            feature_kind: Some(feature_kind),
            format,
            time: config.opt_string("time")?,
            time_unit,
            device: config.opt_string("device")?,
            program: config.opt_string("program")?,
            variant: config.opt_string("variant")?,
            run_id: config.opt_string("run_id")?,
            repetitions: config.opt_string("repetitions")?,
            default_device: config.string("default_device")?,
            default_program: config.opt_string("default_program")?,
            features: match config.get("features") {
                Some(_) => Some(config.string_list("features")?),
                None => None,
            },
            phase,
        })
    }
}

/// Column `time` in seconds (its values times `mul / div`), each > 0: from the text in one
/// rounding where the unit is a power of ten (ms, us, ns).
fn seconds_of(frame: &Frame, time: usize, mul: f64, div: f64) -> Result<Vec<f64>, PluginError> {
    let times = frame.numbers(time)?;
    let scaled = match power_of_ten(mul, div) {
        Some(k) => frame.numbers_scaled(time, k)?,
        None => times.iter().map(|t| t.map(|t| t * mul / div)).collect(),
    };
    let mut secs = Vec::with_capacity(frame.rows);
    for (r, (t, s)) in times.iter().zip(scaled).enumerate() {
        let t = t.ok_or_else(|| frame.error_at(r, time, "is empty; every run needs a time"))?;
        if t.is_nan() || t <= 0.0 {
            return Err(frame.error_at(r, time, &format!("is {t}: a measured time must be > 0")));
        }
        secs.push(s.unwrap_or(t * mul / div));
    }
    Ok(secs)
}

/// The power of ten `mul / div` is, when it is one (us: -6), else `None` (min).
fn power_of_ten(mul: f64, div: f64) -> Option<i32> {
    let k = (mul / div).log10().round() as i32;
    (mul == 1.0 && div == 10f64.powi(-k)).then_some(k)
}

fn unit_factor(unit: &str) -> Option<(f64, f64)> {
    TIME_UNITS
        .iter()
        .find(|(u, _, _)| u.eq_ignore_ascii_case(unit))
        .map(|(_, mul, div)| (*mul, *div))
}

/// The unit a time column's name implies (`elapsed_ms` -> ms), else seconds.
fn unit_of_name(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    for (suffix, unit) in [
        ("_secs", "s"),
        ("_sec", "s"),
        ("_s", "s"),
        ("_ms", "ms"),
        ("_us", "us"),
        ("_ns", "ns"),
        ("_min", "min"),
    ] {
        if lower.ends_with(suffix) {
            return unit;
        }
    }
    "s"
}

/// The canonical tables of some files: `runs`, `observations` and (long form of the features)
/// `counters`, plus one note per file saying which column became what.
#[derive(Debug)]
pub struct Imported {
    pub tables: Vec<(String, RecordBatch)>,
    pub notes: Vec<String>,
}

struct Rows {
    run_id: Vec<String>,
    device: Vec<String>,
    program: Vec<String>,
    variant: Vec<String>,
    repetitions: Vec<i64>,
    measured_secs: Vec<f64>,
    /// Feature name -> values (None where the file has no value), over all rows so far.
    features: BTreeMap<String, Vec<Option<f64>>>,
}

/// Reads `paths` with `mapping`. Every error names the file, and the column and line (CSV) or
/// row (Parquet, IPC) where a value is wrong.
pub fn import(paths: &[PathBuf], mapping: &Mapping) -> Result<Imported, PluginError> {
    if paths.is_empty() {
        return Err(PluginError::new("`paths` names no file"));
    }
    let mut rows = Rows {
        run_id: Vec::new(),
        device: Vec::new(),
        program: Vec::new(),
        variant: Vec::new(),
        repetitions: Vec::new(),
        measured_secs: Vec::new(),
        features: BTreeMap::new(),
    };
    let mut notes = Vec::new();
    let mut stems: BTreeMap<String, &Path> = BTreeMap::new();
    for path in paths {
        let frame = Frame::read(path, mapping.format)?;
        let stem = frame::stem(path);
        if let Some(other) = stems.insert(stem.clone(), path)
            && mapping.run_id.is_none()
        {
            return Err(PluginError::new(format!(
                "{} and {} have one name, `{stem}`, and run ids are made from it: rename one, or name a `run_id` column",
                other.display(),
                path.display()
            )));
        }
        notes.push(add_frame(&frame, &stem, mapping, &mut rows)?);
    }
    let mut seen = std::collections::HashSet::new();
    for (i, id) in rows.run_id.iter().enumerate() {
        if !seen.insert(id.as_str()) {
            return Err(PluginError::new(format!(
                "run id `{id}` appears twice (row {} of all files): run ids must be unique",
                i + 1
            )));
        }
    }
    Ok(Imported {
        tables: tables(
            rows,
            &mapping.phase,
            mapping.feature_kind.as_deref().unwrap_or("count"),
        )?,
        notes,
    })
}

fn add_frame(
    frame: &Frame,
    stem: &str,
    mapping: &Mapping,
    rows: &mut Rows,
) -> Result<String, PluginError> {
    let time = match &mapping.time {
        Some(name) => frame.index(name, "`time`")?,
        None => TIME_COLUMNS
            .iter()
            .find_map(|t| frame.names.iter().position(|n| n.eq_ignore_ascii_case(t)))
            .ok_or_else(|| {
                PluginError::new(format!(
                    "{}: no time column: none of its columns ({}) is named like one ({}); name it with `time = \"<column>\"`",
                    frame.path.display(),
                    frame.names.join(", "),
                    TIME_COLUMNS.join(", ")
                ))
            })?,
    };
    let unit = mapping
        .time_unit
        .clone()
        .unwrap_or_else(|| unit_of_name(&frame.names[time]).to_owned());
    let (mul, div) = unit_factor(&unit).unwrap_or((1.0, 1.0));
    // A key column: the one named in the config (which must exist), else the one with the
    // canonical name when the file has it.
    let key = |configured: &Option<String>, canonical: &str, what: &str| match configured {
        Some(name) => frame.index(name, what).map(Some),
        None => Ok(frame
            .names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(canonical))),
    };
    let device = key(&mapping.device, col::DEVICE, "`device`")?;
    let program = key(&mapping.program, col::PROGRAM, "`program`")?;
    let variant = key(&mapping.variant, col::VARIANT, "`variant`")?;
    let run_id = key(&mapping.run_id, col::RUN_ID, "`run_id`")?;
    let repetitions = key(&mapping.repetitions, col::REPETITIONS, "`repetitions`")?;
    let keys: Vec<usize> = [Some(time), device, program, variant, run_id, repetitions]
        .into_iter()
        .flatten()
        .collect();

    let secs = seconds_of(frame, time, mul, div)?;
    let texts = |c: Option<usize>, default: &str| -> Result<Vec<String>, PluginError> {
        match c {
            Some(c) => frame.texts(c),
            None => Ok(vec![default.to_owned(); frame.rows]),
        }
    };
    let default_program = mapping.default_program.clone().unwrap_or(stem.to_owned());
    let reps: Vec<i64> = match repetitions {
        None => vec![1; frame.rows],
        Some(c) => frame
            .numbers(c)?
            .iter()
            .enumerate()
            .map(|(r, v)| match v {
                Some(v) if *v >= 1.0 && v.fract() == 0.0 => Ok(*v as i64),
                _ => Err(frame.error_at(r, c, "must be a whole number >= 1")),
            })
            .collect::<Result<_, _>>()?,
    };
    let ids: Vec<String> = match run_id {
        Some(c) => frame.texts(c)?,
        None => (0..frame.rows)
            .map(|r| format!("{stem}:{}", frame.row_name(r)))
            .collect(),
    };

    // Features: the configured ones (each must be numeric), else every other numeric column.
    let features: Vec<usize> = match &mapping.features {
        Some(names) => names
            .iter()
            .map(|n| frame.index(n, "`features`"))
            .collect::<Result<_, _>>()?,
        None => (0..frame.names.len())
            .filter(|c| !keys.contains(c) && frame.is_numeric(*c))
            .collect(),
    };
    let before = rows.run_id.len();
    for &c in &features {
        let values = frame.numbers(c)?;
        let column = rows
            .features
            .entry(frame.names[c].clone())
            .or_insert_with(|| vec![None; before]);
        column.extend(values);
    }
    rows.run_id.extend(ids);
    rows.device.extend(texts(device, &mapping.default_device)?);
    rows.program.extend(texts(program, &default_program)?);
    rows.variant.extend(texts(variant, "")?);
    rows.repetitions.extend(reps);
    rows.measured_secs.extend(secs);
    let total = rows.run_id.len();
    // Features another file had and this one lacks: no value for its rows.
    for column in rows.features.values_mut() {
        column.resize(total, None);
    }
    let named = |c: Option<usize>| c.map_or("-".to_owned(), |c| format!("`{}`", frame.names[c]));
    Ok(format!(
        "{}: {} rows; time `{}` in {unit}; device {}, program {}, variant {}; {} feature(s): {}",
        frame.path.display(),
        frame.rows,
        frame.names[time],
        named(device),
        named(program),
        named(variant),
        features.len(),
        features
            .iter()
            .map(|&c| frame.names[c].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn tables(rows: Rows, phase: &str, kind: &str) -> Result<Vec<(String, RecordBatch)>, PluginError> {
    let n = rows.run_id.len();
    let strings = |v: &[String]| -> ArrayRef { Arc::new(StringArray::from_iter_values(v)) };
    let runs = RUNS.batch(vec![
        strings(&rows.run_id),
        strings(&rows.device),
        strings(&rows.program),
        strings(&rows.variant),
        Arc::new(StringArray::from(vec![None::<&str>; n])),
        Arc::new(StringArray::from(vec![phase; n])),
        Arc::new(Int64Array::from(rows.repetitions.clone())),
        Arc::new(Float64Array::from(rows.measured_secs.clone())),
    ])?;
    let mut fields: Vec<Field> = OBSERVATIONS.fields();
    let mut columns: Vec<ArrayRef> = vec![
        strings(&rows.run_id),
        strings(&rows.device),
        strings(&rows.program),
        strings(&rows.variant),
        // The model's target: the time of one repetition.
        Arc::new(Float64Array::from_iter_values(
            rows.measured_secs
                .iter()
                .zip(&rows.repetitions)
                .map(|(t, r)| t / *r as f64),
        )),
    ];
    for (name, values) in &rows.features {
        if fields.iter().any(|f| f.name() == name) {
            return Err(PluginError::new(format!(
                "feature column `{name}` has the name of a key column of `observations`: rename it or leave it out of `features`"
            )));
        }
        fields.push(
            Field::new(name, DataType::Float64, true)
                .with_metadata([(KIND_METADATA_KEY.to_owned(), kind.to_owned())]),
        );
        columns.push(Arc::new(Float64Array::from(values.clone())));
    }
    let observations = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| PluginError::new(format!("building `observations`: {e}")))?;
    OBSERVATIONS.check(&observations)?;

    // Long form: one counter row per feature value present.
    let (mut which, mut metric, mut value) = (Vec::new(), Vec::new(), Vec::new());
    for (name, values) in &rows.features {
        for (r, v) in values.iter().enumerate() {
            if let Some(v) = v
                && v.is_finite()
            {
                which.push(r);
                metric.push(name.as_str());
                value.push(*v);
            }
        }
    }
    let pick = |v: &[String]| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(
            which.iter().map(|&r| v[r].as_str()),
        ))
    };
    let m = which.len();
    let counters = COUNTERS.batch(vec![
        pick(&rows.run_id),
        pick(&rows.device),
        pick(&rows.program),
        pick(&rows.variant),
        Arc::new(StringArray::from(vec![None::<&str>; m])),
        Arc::new(StringArray::from(metric.clone())),
        Arc::new(StringArray::from(metric)),
        Arc::new(Float64Array::from(value)),
        Arc::new(StringArray::from(vec![""; m])),
        Arc::new(StringArray::from(vec![kind; m])),
        Arc::new(StringArray::from(vec!["measured"; m])),
    ])?;
    Ok(vec![
        ("runs".to_owned(), runs),
        ("observations".to_owned(), observations),
        ("counters".to_owned(), counters),
    ])
}

struct FileCollector;

impl Collector for FileCollector {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "file",
            "Measurements in CSV (.csv, .tsv, .csv.gz), Parquet (.parquet) or Arrow IPC (.arrow, .feather) files: one row per run, a time column and any features",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "The files (globs allowed); their columns are mapped alike",
        ))
        .key(ConfigKey::optional(
            "format",
            ConfigType::String,
            None,
            "csv, tsv, parquet or ipc (default: from the file's extension)",
        ))
        .key(ConfigKey::optional(
            "time",
            ConfigType::String,
            None,
            "The measured time's column (default: the first named measured_secs, time_secs, ..., time_ms, ..., time, duration, elapsed, runtime)",
        ))
        .key(ConfigKey::optional(
            "time_unit",
            ConfigType::String,
            None,
            "s, ms, us, ns or min (default: from the column's name, `_ms` -> ms, else s)",
        ))
        .key(ConfigKey::optional(
            "device",
            ConfigType::String,
            None,
            "The device column (default: a column named `device`, else `default_device`)",
        ))
        .key(ConfigKey::optional(
            "program",
            ConfigType::String,
            None,
            "The program column (default: a column named `program`, else `default_program`)",
        ))
        .key(ConfigKey::optional(
            "variant",
            ConfigType::String,
            None,
            "The variant column (default: a column named `variant`, else empty)",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "The run id column, unique (default: a column named `run_id`, else `<file>:<line>`)",
        ))
        .key(ConfigKey::optional(
            "repetitions",
            ConfigType::String,
            None,
            "A column of how many executions each time covers (default: 1)",
        ))
        .key(ConfigKey::optional(
            "default_device",
            ConfigType::String,
            Some("unknown".into()),
            "The device of files without a device column",
        ))
        .key(ConfigKey::optional(
            "default_program",
            ConfigType::String,
            None,
            "The program of files without a program column (default: the file's name)",
        ))
        .key(ConfigKey::optional(
            "features",
            ConfigType::StringList,
            None,
            "The feature columns (default: every other numeric column)",
        ))
        .key(ConfigKey::optional(
            "feature_kind",
            ConfigType::String,
            Some("count".into()),
            "The metric kind of the features (count, config, time, rate, ratio, clock, level): fits without `features` use count and config ones, so a column that is itself a time should be `time` or left out",
        ))
        .key(ConfigKey::optional(
            "phase",
            ConfigType::String,
            Some("total".into()),
            "What the times cover: total, compute, transfer, communication or kernel",
        ))
        .tables(&["runs", "observations", "counters"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        Mapping::from_config(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let mapping = Mapping::from_config(config)?;
        let imported = import(&config.path_list("paths")?, &mapping)?;
        for note in &imported.notes {
            out.progress(0, 0, note);
        }
        for (name, batch) in imported.tables {
            out.push_batch(&name, batch)?;
        }
        Ok(())
    }
}
