//! Validation: predictions against measured runs, computed figures against published ones.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, Float64Array, RecordBatch, StringArray};
use arrow_schema::DataType;
use yosoku_tables::{REFERENCE_COMPARISON, REFERENCE_VALUES, RUNS, TableDef, col};

use crate::{Input, ModelError, join_flags};
use yosoku_tables::rows::{PredictionRow, predictions_batch, read_predictions};

/// Flag of a prediction with no measurement to compare with.
pub const FLAG_UNMEASURED: &str = "unmeasured";
/// Flag of a negative predicted time (a failure of the model the paper's own data shows).
pub const FLAG_NEGATIVE: &str = "negative";

/// Joins each prediction with the measured runs of the same device, program, variant and phase.
///
/// A prediction covers `repetitions` executions of the profiled unit; for each matching run it is
/// scaled to the run's repetitions and the signed error 100 x (predicted - measured) / measured
/// is computed. A prediction with no matching run is kept, flagged `unmeasured`.
pub fn compare_measured(
    predictions: &RecordBatch,
    runs: &RecordBatch,
) -> Result<RecordBatch, ModelError> {
    let predicted = read_predictions("predictions", predictions)?;
    let runs_in = Input::new("measured", &RUNS, runs)?;
    let device = runs_in.utf8(col::DEVICE)?;
    let program = runs_in.utf8(col::PROGRAM)?;
    let variant = runs_in.utf8(col::VARIANT)?;
    let phase = runs_in.utf8(col::PHASE)?;
    let repetitions = runs_in.int64(col::REPETITIONS)?;
    let measured = runs_in.float64(col::MEASURED_SECS)?;

    let mut out = Vec::new();
    for p in predicted {
        if p.repetitions < 1 {
            return Err(ModelError::invalid(format!(
                "prediction for {} {} has {} repetitions",
                p.program, p.variant, p.repetitions
            )));
        }
        let per_repetition = p.predicted_secs / p.repetitions as f64;
        let mut base_flags: Vec<String> = p.flags.iter().map(|f| f.to_string()).collect();
        if p.predicted_secs < 0.0 {
            base_flags.push(FLAG_NEGATIVE.to_owned());
        }
        let matches: Vec<usize> = (0..runs_in.rows())
            .filter(|&i| {
                *device.value(i) == *p.device
                    && *program.value(i) == *p.program
                    && *variant.value(i) == *p.variant
                    && *phase.value(i) == *p.phase
            })
            .collect();
        if matches.is_empty() {
            let mut flags = base_flags.clone();
            flags.push(FLAG_UNMEASURED.to_owned());
            out.push(PredictionRow {
                flags: join_flags(&flags),
                ..p
            });
            continue;
        }
        for i in matches {
            let reps = repetitions.value(i);
            let predicted_secs = per_repetition * reps as f64;
            let measured_secs = measured.value(i);
            out.push(PredictionRow {
                repetitions: reps,
                predicted_secs,
                measured_secs: Some(measured_secs),
                error_pct: Some(yosoku_tables::rows::error_pct(
                    predicted_secs,
                    measured_secs,
                )),
                flags: join_flags(&base_flags),
                ..p.clone()
            });
        }
    }
    Ok(predictions_batch(&out)?)
}

/// The value at `row` of a numeric column as f64 (`None` when null).
fn numeric(array: &dyn Array, row: usize) -> Option<f64> {
    if array.is_null(row) {
        return None;
    }
    match array.data_type() {
        DataType::Float64 => Some(array.as_primitive::<Float64Type>().value(row)),
        DataType::Int64 => Some(array.as_primitive::<Int64Type>().value(row) as f64),
        _ => None,
    }
}

/// Compares the rows of `computed`, a `table` produced by the pipeline, with the published
/// figures in `references` that name that table. Each reference picks the computed row of its
/// program, variant and label (the value of `label_column`) and the column it names. A reference
/// no computed row matches is kept with no computed value; two matching rows are an error.
pub fn compare_reference(
    model: &str,
    table: &TableDef,
    computed: &RecordBatch,
    label_column: &str,
    references: &RecordBatch,
) -> Result<RecordBatch, ModelError> {
    let computed_in = Input::new("computed", table, computed)?;
    let c_program = computed_in.utf8(col::PROGRAM)?;
    let c_variant = computed_in.utf8(col::VARIANT)?;
    let c_label = computed_in.utf8(label_column)?;

    let refs = Input::new("reference", &REFERENCE_VALUES, references)?;
    let r_program = refs.utf8(col::PROGRAM)?;
    let r_variant = refs.utf8(col::VARIANT)?;
    let r_table = refs.utf8(col::TABLE_NAME)?;
    let r_column = refs.utf8(col::COLUMN_NAME)?;
    let r_label = refs.utf8(col::LABEL)?;
    let r_value = refs.float64(col::VALUE)?;
    let r_unit = refs.utf8(col::UNIT)?;
    let r_source = refs.utf8(col::SOURCE)?;

    let mut rows: Vec<(usize, Option<f64>)> = Vec::new();
    for r in (0..refs.rows()).filter(|&r| r_table.value(r) == table.name) {
        let column_name = r_column.value(r);
        let Some(values) = computed.column_by_name(column_name) else {
            return Err(ModelError::invalid(format!(
                "a reference figure compares with column `{column_name}`, which the computed `{}` table lacks",
                table.name
            )));
        };
        let matches: Vec<usize> = (0..computed_in.rows())
            .filter(|&i| {
                c_program.value(i) == r_program.value(r)
                    && c_variant.value(i) == r_variant.value(r)
                    && c_label.value(i) == r_label.value(r)
            })
            .collect();
        let value = match matches.as_slice() {
            [] => None,
            [one] => numeric(values.as_ref(), *one),
            many => {
                return Err(ModelError::invalid(format!(
                    "{} rows of the computed `{}` table match the reference for {} {} `{}`; \
                     compare a table with one row per label",
                    many.len(),
                    table.name,
                    r_program.value(r),
                    r_variant.value(r),
                    r_label.value(r)
                )));
            }
        };
        rows.push((r, value));
    }
    if rows.is_empty() {
        return Err(ModelError::invalid(format!(
            "input `reference` has no figures for the `{}` table",
            table.name
        )));
    }
    let text = |f: &dyn Fn(usize) -> String| -> Arc<StringArray> {
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(r, _)| f(*r)),
        ))
    };
    let computed_values: Float64Array = rows.iter().map(|(_, v)| *v).collect();
    let reference_values: Float64Array =
        rows.iter().map(|(r, _)| Some(r_value.value(*r))).collect();
    let differences: Float64Array = rows
        .iter()
        .map(|(r, v)| v.map(|v| v - r_value.value(*r)))
        .collect();
    REFERENCE_COMPARISON
        .batch(vec![
            text(&|_| model.to_owned()),
            text(&|r| r_program.value(r).to_owned()),
            text(&|r| r_variant.value(r).to_owned()),
            text(&|r| r_column.value(r).to_owned()),
            text(&|r| r_label.value(r).to_owned()),
            Arc::new(computed_values),
            Arc::new(reference_values),
            Arc::new(differences),
            text(&|r| r_unit.value(r).to_owned()),
            text(&|r| r_source.value(r).to_owned()),
        ])
        .map_err(ModelError::built)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::*;
    use yosoku_tables::rows::PredictionRow;
    use yosoku_tables::{COST_BREAKDOWN, PREDICTIONS};

    fn prediction(variant: &str, repetitions: i64, secs: f64) -> PredictionRow {
        PredictionRow {
            model: "m".into(),
            device: "csx".into(),
            program: "p".into(),
            variant: variant.into(),
            phase: "transfer".into(),
            repetitions,
            predicted_secs: secs,
            measured_secs: None,
            error_pct: None,
            flags: None,
            ..Default::default()
        }
    }

    #[test]
    fn predictions_scale_to_the_measured_repetitions() {
        let predicted = predictions_batch(&[
            prediction("S", 1, 0.012),
            prediction("M", 1, -0.5),
            prediction("L", 1, 1.0),
        ])
        .unwrap();
        let measured = runs(&[
            ("csx", "S", "transfer", 100, 2.4),
            ("csx", "M", "transfer", 10, 18.0),
            ("other", "L", "transfer", 1, 1.0),
            ("csx", "S", "total", 100, 7.4),
        ]);
        let out = compare_measured(&predicted, &measured).unwrap();
        let predicted_secs = floats(&out, col::PREDICTED_SECS);
        assert!((predicted_secs[0] - 1.2).abs() < 1e-12);
        assert_eq!(predicted_secs[1], -5.0);
        let errors = yosoku_tables::access::float64(&out, col::ERROR_PCT).unwrap();
        assert!((errors.value(0) - (-50.0)).abs() < 1e-9);
        assert!(errors.is_null(2));
        assert_eq!(strings(&out, col::FLAGS), ["-", "negative", "unmeasured"]);
    }

    #[test]
    fn references_match_rows_by_label_and_name_their_column() {
        let predicted = predictions_batch(&[prediction("S", 1, 0.5)]).unwrap();
        let refs = references(&[
            ("S", "predictions", "predicted_secs", "transfer", 0.4, "s"),
            ("M", "predictions", "predicted_secs", "transfer", 9.0, "s"),
            ("S", "cost_breakdown", "work", "swazzle 8 B", 1.0, "bytes"),
        ]);
        let out = compare_reference("cmp", &PREDICTIONS, &predicted, col::PHASE, &refs).unwrap();
        assert_eq!(out.num_rows(), 2, "only the references to `predictions`");
        let diff = yosoku_tables::access::float64(&out, col::DIFFERENCE).unwrap();
        assert!((diff.value(0) - 0.1).abs() < 1e-12);
        assert!(diff.is_null(1), "no computed row for M");

        let err = compare_reference(
            "cmp",
            &COST_BREAKDOWN,
            &cost_free(),
            col::COMPONENT,
            &references(&[]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "input `reference` has no figures for the `cost_breakdown` table"
        );

        let twice = predictions_batch(&[prediction("S", 1, 0.5), prediction("S", 1, 0.6)]).unwrap();
        let err = compare_reference("cmp", &PREDICTIONS, &twice, col::PHASE, &refs)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "2 rows of the computed `predictions` table match the reference for p S `transfer`"
            ),
            "{err}"
        );
    }

    fn cost_free() -> RecordBatch {
        yosoku_tables::rows::cost_breakdown_batch(&[]).unwrap()
    }
}
