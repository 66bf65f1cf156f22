//! Running steps in unit tests, without plugins: a pipeline file around the steps under test,
//! its source `src` filled with tables built in memory.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};

use crate::{PipelineSpec, Stage, TableSet, run_step};

pub(crate) fn s(values: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

pub(crate) fn opt_s(values: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(values.to_vec()))
}

pub(crate) fn f(values: &[f64]) -> ArrayRef {
    Arc::new(Float64Array::from(values.to_vec()))
}

pub(crate) fn opt_f(values: &[Option<f64>]) -> ArrayRef {
    Arc::new(Float64Array::from(values.to_vec()))
}

pub(crate) fn i64s(values: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(values.to_vec()))
}

pub(crate) fn i32s(values: &[i32]) -> ArrayRef {
    Arc::new(Int32Array::from(values.to_vec()))
}

pub(crate) fn b(values: &[bool]) -> ArrayRef {
    Arc::new(BooleanArray::from(values.to_vec()))
}

/// A pipeline file with two sources, `src` and `src2`, and `steps` (TOML of `[[stage]]`
/// tables).
pub(crate) fn pipeline(steps: &str) -> String {
    format!(
        "[pipeline]\nname = \"t\"\n\n[sources.src]\nplugin = \"none\"\ncollector = \"none\"\n\n\
         [sources.src2]\nplugin = \"none\"\ncollector = \"none\"\n\n{steps}\n"
    )
}

/// The error of parsing one `[[stage]]` step whose table body is `body`. The body starts on
/// line 5 of the file.
pub(crate) fn parse_error(stage: &str, body: &str) -> String {
    let text = format!(
        "[pipeline]\nname = \"t\"\nsources.src = {{ plugin = \"none\", collector = \"none\" }}\n[[{stage}]]\n{body}\n"
    );
    match PipelineSpec::parse("p.toml", &text) {
        Ok(_) => panic!("parsed without an error:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Asserts that a pipeline of one `stage` step (`body`) is refused with a message holding `said`.
#[track_caller]
pub(crate) fn assert_refused(stage: &str, body: &str, said: &str) {
    let e = parse_error(stage, body);
    assert!(e.contains(said), "expected `{said}` in: {e}");
}

/// Parses `pipeline(steps)`, puts `tables` in the sources (`runs` in `src`, `src2.runs` in
/// `src2`) and runs every step in stage order, as the runner does (which checks each step's
/// outputs against what it declares).
pub(crate) fn run_steps(steps: &str, tables: Vec<(&str, RecordBatch)>) -> Result<TableSet, String> {
    run_steps_with_figures(steps, tables).map(|(set, _)| set)
}

/// The figures each step reported, by step id.
pub(crate) type StepFigures = Vec<(String, Vec<yosoku_tables::Figure>)>;

/// [`run_steps`], with the figures each step reported.
pub(crate) fn run_steps_with_figures(
    steps: &str,
    tables: Vec<(&str, RecordBatch)>,
) -> Result<(TableSet, StepFigures), String> {
    let spec = PipelineSpec::parse("p.toml", &pipeline(steps)).map_err(|e| e.to_string())?;
    let mut set = TableSet::new();
    for (name, batch) in tables {
        let (source, table) = name.split_once('.').unwrap_or(("src", name));
        set.insert(source, table, batch)
            .map_err(|e| e.to_string())?;
    }
    let devices = yosoku_devices::Catalogue::built_in().map_err(|e| e.to_string())?;
    let mut figures = Vec::new();
    for stage in Stage::ALL {
        for step in spec.steps.iter().filter(|s| s.value.stage() == stage) {
            let output = run_step(&spec, step, &set, &devices).map_err(|e| e.to_string())?;
            figures.push((step.value.id().to_owned(), output.figures.clone()));
            step.value
                .add_output(output, &mut set)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok((set, figures))
}

/// The error of [`run_steps`], which must fail.
pub(crate) fn run_error(steps: &str, tables: Vec<(&str, RecordBatch)>) -> String {
    match run_steps(steps, tables) {
        Ok(_) => panic!("ran without an error:\n{steps}"),
        Err(e) => e,
    }
}

/// An `observations` table: one row per device in `devices` (program `p`, variant the row
/// number), its time, and `count` features.
pub(crate) fn observations(
    devices: &[&str],
    secs: &[f64],
    features: &[(&str, &[f64])],
) -> RecordBatch {
    let rows: Vec<(&str, &str)> = devices.iter().map(|d| (*d, "p")).collect();
    observations_of(&rows, secs, features)
}

/// An `observations` table: one row per (device, program) of `rows` (variant the row number),
/// its time, and `count` features.
pub(crate) fn observations_of(
    rows: &[(&str, &str)],
    secs: &[f64],
    features: &[(&str, &[f64])],
) -> RecordBatch {
    use arrow_schema::{Field, Schema};
    use yosoku_models::counters::{FeatureColumn, feature_field};
    let n = rows.len();
    let variants: Vec<String> = (0..n).map(|i| format!("v{i}")).collect();
    let run_ids: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    let mut fields: Vec<Field> = yosoku_tables::OBSERVATIONS.fields();
    let devices: Vec<&str> = rows.iter().map(|r| r.0).collect();
    let programs: Vec<&str> = rows.iter().map(|r| r.1).collect();
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(&run_ids)),
        s(&devices),
        s(&programs),
        Arc::new(StringArray::from_iter_values(&variants)),
        f(secs),
    ];
    for (name, values) in features {
        fields.push(feature_field(&FeatureColumn {
            name: (*name).to_owned(),
            kind: Some("count".to_owned()),
            unit: None,
        }));
        columns.push(f(values));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}
