//! The tables of the scaling models: `scaling_models` (one row per call path), and for plots
//! `scaling_points` (each measured configuration) and `scaling_curves` (each model along its
//! first parameter).

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_regression::pmnf::calibrate::CalibratedIntervals;
use yosoku_regression::pmnf::{PmnfModel, Point};
use yosoku_tables::{SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use crate::ModelError;

pub(super) fn configuration(names: &[String], x: &[f64]) -> String {
    names
        .iter()
        .zip(x)
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// One row of `scaling_models`.
pub(super) struct ModelRow {
    pub key: [String; 4],
    pub formula: String,
    pub model: PmnfModel,
    pub held_out: Option<String>,
    /// What the report says beside the model (the parameters that moved with the first at
    /// every run, where the robust search modelled over the first alone).
    pub note: Option<String>,
}

pub(super) fn models_batch(names: &[String], rows: &[ModelRow]) -> Result<RecordBatch, ModelError> {
    let text = |f: &dyn Fn(&ModelRow) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let float = |f: &dyn Fn(&PmnfModel) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| f(&r.model)),
        ))
    };
    let joined = names.join(",");
    SCALING_MODELS
        .batch(vec![
            text(&|r| r.key[0].clone()),
            text(&|r| r.key[1].clone()),
            text(&|r| r.key[2].clone()),
            text(&|r| r.key[3].clone()),
            text(&|_| joined.clone()),
            text(&|r| r.formula.clone()),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r.model.terms.len() as i64),
            )),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r.model.points as i64),
            )),
            float(&|m| m.rss),
            float(&|m| m.smape),
            float(&|m| m.adjusted_r2),
            Arc::new(BooleanArray::from_iter(
                rows.iter().map(|r| Some(r.model.cross_validated)),
            )),
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r.held_out.as_deref()),
            )),
        ])
        .map_err(|e| ModelError::invalid(format!("scaling_models: {e}")))
}

/// Values of a curve, from the smallest measured value of the first parameter to 1.5 times the
/// largest.
const CURVE_SAMPLES: usize = 48;

/// A measured configuration of a call path, for `scaling_points`.
pub(super) struct PointRow {
    key: [String; 4],
    configuration: String,
    axis: f64,
    series: String,
    repetitions: usize,
    mean: f64,
    min: f64,
    max: f64,
    fitted: bool,
}

/// A model's value along its first parameter, for `scaling_curves`.
pub(super) struct CurveRow {
    key: [String; 4],
    series: String,
    axis: f64,
    predicted: f64,
    interval: Option<(f64, f64)>,
    extrapolated: bool,
}

/// What a plot of one call path needs: its points (`fitted`, then the one `held` out) and its
/// model along the first parameter, one curve per combination of the other parameters' values.
pub(super) struct PlotInput<'a> {
    pub names: &'a [String],
    pub key: &'a [String; 4],
    pub fitted: &'a [Point],
    pub held: Option<&'a Point>,
    pub model: &'a PmnfModel,
    /// The model's intervals under its program's calibration.
    pub intervals: &'a CalibratedIntervals,
}

pub(super) fn plot_rows(
    input: &PlotInput<'_>,
    points: &mut Vec<PointRow>,
    curves: &mut Vec<CurveRow>,
) {
    let PlotInput {
        names,
        key,
        fitted,
        held,
        model,
        intervals,
    } = *input;
    let all = || {
        fitted
            .iter()
            .map(|p| (p, true))
            .chain(held.map(|p| (p, false)))
    };
    for (p, is_fitted) in all() {
        let n = p.values.len().max(1) as f64;
        points.push(PointRow {
            key: key.clone(),
            configuration: configuration(names, &p.coordinate),
            axis: p.coordinate[0],
            series: configuration(&names[1..], &p.coordinate[1..]),
            repetitions: p.values.len(),
            mean: p.values.iter().sum::<f64>() / n,
            min: p.values.iter().copied().fold(f64::INFINITY, f64::min),
            max: p.values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            fitted: is_fitted,
        });
    }
    let mut series: Vec<&[f64]> = Vec::new();
    for (p, _) in all() {
        if !series.contains(&&p.coordinate[1..]) {
            series.push(&p.coordinate[1..]);
        }
    }
    for rest in series {
        let axis_of = |fitted_only: bool| {
            all()
                .filter(move |(p, f)| p.coordinate[1..] == *rest && (*f || !fitted_only))
                .map(|(p, _)| p.coordinate[0])
        };
        let lo = axis_of(false).fold(f64::INFINITY, f64::min);
        let hi = 1.5 * axis_of(false).fold(f64::NEG_INFINITY, f64::max);
        let fitted_max = axis_of(true).fold(f64::NEG_INFINITY, f64::max);
        for k in 0..CURVE_SAMPLES {
            let x = lo + (hi - lo) * k as f64 / (CURVE_SAMPLES - 1) as f64;
            let mut coordinate = vec![x];
            coordinate.extend_from_slice(rest);
            curves.push(CurveRow {
                key: key.clone(),
                series: configuration(&names[1..], rest),
                axis: x,
                predicted: model.evaluate(&coordinate),
                interval: intervals.interval(model, &coordinate),
                extrapolated: x > fitted_max,
            });
        }
    }
}

fn key_columns<T>(rows: &[T], key: impl Fn(&T) -> &[String; 4]) -> Vec<ArrayRef> {
    (0..4)
        .map(|i| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| key(r)[i].as_str()),
            ))
        })
        .collect()
}

pub(super) fn points_batch(rows: &[PointRow]) -> Result<RecordBatch, ModelError> {
    let float = |f: fn(&PointRow) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f)))
    };
    let mut columns = key_columns(rows, |r| &r.key);
    columns.extend([
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.configuration.as_str()),
        )) as ArrayRef,
        float(|r| r.axis),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.series.as_str()),
        )),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| r.repetitions as i64),
        )),
        float(|r| r.mean),
        float(|r| r.min),
        float(|r| r.max),
        Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(r.fitted)))),
    ]);
    SCALING_POINTS
        .batch(columns)
        .map_err(|e| ModelError::invalid(format!("scaling_points: {e}")))
}

pub(super) fn curves_batch(rows: &[CurveRow]) -> Result<RecordBatch, ModelError> {
    let mut columns = key_columns(rows, |r| &r.key);
    columns.extend([
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r.series.as_str()),
        )) as ArrayRef,
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.axis))),
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| r.predicted),
        )),
        Arc::new(Float64Array::from_iter(
            rows.iter().map(|r| r.interval.map(|i| i.0)),
        )),
        Arc::new(Float64Array::from_iter(
            rows.iter().map(|r| r.interval.map(|i| i.1)),
        )),
        Arc::new(BooleanArray::from_iter(
            rows.iter().map(|r| Some(r.extrapolated)),
        )),
    ]);
    SCALING_CURVES
        .batch(columns)
        .map_err(|e| ModelError::invalid(format!("scaling_curves: {e}")))
}
