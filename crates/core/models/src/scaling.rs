//! Scaling models of measured runs (docs/methods.md, section 7): each call path's time over the
//! numeric parameters of its runs, fitted in Extra-P's performance model normal form
//! (`yosoku_regression::pmnf`), optionally with its largest configuration held out of the fit
//! and predicted, the measured time beside.
//!
//! A call path is a (device, program, variant) and a phase, as `yosoku export --format extrap`
//! names it; a run's time is its `measured_secs` over its repetitions; runs of one call path at
//! one configuration are repetitions of one point.

/// The kind of model a `scaling_model` step records in its bundle: each call path's PMNF model.
pub const MODEL_KIND: &str = "scaling";

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_regression::pmnf::{Aggregate, PmnfModel, PmnfOptions, Point, fit};
use yosoku_tables::report::ReportCell;
use yosoku_tables::rows::{Input, PredictionRow};
use yosoku_tables::{Figure, RUNS, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS, col};

use crate::ModelError;

/// What `scaling_model` is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingSpec {
    /// The parameters to model over; empty: every parameter that is a number in every run and
    /// varies within some call path.
    pub parameters: Vec<String>,
    pub aggregate: Aggregate,
    /// Hold each call path's largest configuration (the last in parameter order) out of the fit
    /// and predict it.
    pub hold_out_largest: bool,
    /// Coverage of the prediction intervals.
    pub level: f64,
    /// Also try negative exponents (Extra-P's `allow_negative_exponents`).
    pub allow_negative_exponents: bool,
}

/// The step's results.
#[derive(Debug)]
pub struct Scaling {
    pub models: RecordBatch,
    /// Every call path's measured configurations, placed for a plot (`scaling_points`).
    pub points: RecordBatch,
    /// Every call path's model along its first parameter (`scaling_curves`).
    pub curves: RecordBatch,
    pub predictions: Vec<PredictionRow>,
    pub report: Vec<ReportCell>,
    pub figures: Vec<Figure>,
}

/// One call path's runs: (device, program, variant, phase) and its points.
struct Series {
    key: [String; 4],
    points: Vec<Point>,
}

/// The `key=value` pairs of a `parameters` cell whose value is a finite number, in order (what
/// the scaling models and `yosoku export --format extrap` read of a run).
pub fn numeric_parameters(cell: &str) -> Vec<(String, f64)> {
    cell.split(';')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let v = v.trim().parse::<f64>().ok().filter(|v| v.is_finite())?;
            Some((k.trim().to_owned(), v))
        })
        .collect()
}

/// `names` less each one that only restates an earlier one over `runs` (each run's numeric
/// parameters): one value of either for each value of the other, as a launch's global size that
/// equals its problem size (`n=1024;global=1024`). Two such parameters cannot be told apart by a
/// model (nor by Extra-P, which `yosoku export --format extrap` writes for). Every run must have
/// every name.
pub fn drop_restated(names: Vec<String>, runs: &[&[(String, f64)]]) -> Vec<String> {
    let value = |p: &[(String, f64)], k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let one_to_one = |a: &str, b: &str| {
        runs.iter().all(|r| {
            runs.iter()
                .all(|q| (value(r, a) == value(q, a)) == (value(r, b) == value(q, b)))
        })
    };
    let mut kept: Vec<String> = Vec::new();
    for k in names {
        if !kept.iter().any(|j| one_to_one(j, &k)) {
            kept.push(k);
        }
    }
    kept
}

/// A run: its call path, its numeric parameters and the time of one repetition.
type RunValues = ([String; 4], Vec<(String, f64)>, f64);

/// The runs of `batch` as series over `names` (chosen as [`ScalingSpec::parameters`] says).
fn series(
    batch: &RecordBatch,
    wanted: &[String],
) -> Result<(Vec<String>, Vec<Series>), ModelError> {
    let input = Input::new("runs", &RUNS, batch)?;
    let (device, program, variant) = (
        input.utf8(col::DEVICE)?,
        input.utf8(col::PROGRAM)?,
        input.utf8(col::VARIANT)?,
    );
    let (phase, params) = (input.utf8(col::PHASE)?, input.utf8(col::PARAMETERS)?);
    let secs = input.float64(col::MEASURED_SECS)?;
    let reps = input.int64(col::REPETITIONS)?;
    let rows: Vec<RunValues> = (0..input.rows())
        .map(|r| {
            let key =
                [&device, &program, &variant, &phase].map(|c| c.get(r).unwrap_or("").to_owned());
            let p = params.get(r).map(numeric_parameters).unwrap_or_default();
            (key, p, secs.value(r) / reps.value(r).max(1) as f64)
        })
        .collect();
    let value = |p: &[(String, f64)], k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let names: Vec<String> = if wanted.is_empty() {
        let mut names: Vec<String> = rows
            .first()
            .map(|(_, p, _)| p.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default();
        names.retain(|k| rows.iter().all(|(_, p, _)| value(p, k).is_some()));
        names.retain(|k| {
            rows.iter().any(|(key, p, _)| {
                rows.iter()
                    .any(|(key2, p2, _)| key == key2 && value(p, k) != value(p2, k))
            })
        });
        let params: Vec<&[(String, f64)]> = rows.iter().map(|(_, p, _)| p.as_slice()).collect();
        drop_restated(names, &params)
    } else {
        for k in wanted {
            if let Some((key, _, _)) = rows.iter().find(|(_, p, _)| value(p, k).is_none()) {
                return Err(ModelError::invalid(format!(
                    "parameter `{k}`: the run of {} has no number for it in `parameters`",
                    key.join(" / ")
                )));
            }
        }
        wanted.to_vec()
    };
    if names.is_empty() {
        return Err(ModelError::invalid(
            "no parameter is a number in every run and varies within a call path: the runs' `parameters` hold `key=value` pairs (`n=1024;p=4`), and a scaling model needs one that changes",
        ));
    }
    let mut out: Vec<Series> = Vec::new();
    for (key, p, secs) in rows {
        let coordinate: Vec<f64> = names.iter().filter_map(|k| value(&p, k)).collect();
        let i = match out.iter().position(|s| s.key == key) {
            Some(i) => i,
            None => {
                out.push(Series {
                    key,
                    points: Vec::new(),
                });
                out.len() - 1
            }
        };
        let points = &mut out[i].points;
        match points.iter_mut().find(|q| q.coordinate == coordinate) {
            Some(q) => q.values.push(secs),
            None => points.push(Point {
                coordinate,
                values: vec![secs],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| {
            a.coordinate
                .partial_cmp(&b.coordinate)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    Ok((names, out))
}

fn configuration(names: &[String], x: &[f64]) -> String {
    names
        .iter()
        .zip(x)
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// One row of `scaling_models`.
struct ModelRow {
    key: [String; 4],
    formula: String,
    model: PmnfModel,
    held_out: Option<String>,
}

fn models_batch(names: &[String], rows: &[ModelRow]) -> Result<RecordBatch, ModelError> {
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
struct PointRow {
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
struct CurveRow {
    key: [String; 4],
    series: String,
    axis: f64,
    predicted: f64,
    interval: Option<(f64, f64)>,
    extrapolated: bool,
}

/// What a plot of one call path needs: its points (`fitted`, then the one `held` out) and its
/// model along the first parameter, one curve per combination of the other parameters' values.
struct PlotInput<'a> {
    names: &'a [String],
    key: &'a [String; 4],
    fitted: &'a [Point],
    held: Option<&'a Point>,
    model: &'a PmnfModel,
    level: f64,
}

fn plot_rows(input: &PlotInput<'_>, points: &mut Vec<PointRow>, curves: &mut Vec<CurveRow>) {
    let PlotInput {
        names,
        key,
        fitted,
        held,
        model,
        level,
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
                interval: model.interval(&coordinate, level),
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

fn points_batch(rows: &[PointRow]) -> Result<RecordBatch, ModelError> {
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

fn curves_batch(rows: &[CurveRow]) -> Result<RecordBatch, ModelError> {
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

/// Fits every call path of `runs` (a `runs` table) as `spec` says.
pub fn scaling_models(runs: &RecordBatch, spec: &ScalingSpec) -> Result<Scaling, ModelError> {
    let (names, all) = series(runs, &spec.parameters)?;
    let options = PmnfOptions {
        aggregate: spec.aggregate,
        allow_negative_exponents: spec.allow_negative_exponents,
        ..PmnfOptions::default()
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mut rows, mut predictions, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    let (mut point_rows, mut curve_rows) = (Vec::new(), Vec::new());
    for s in all {
        let label = s.key[..3].join(" / ");
        let mut points = s.points;
        let held = if spec.hold_out_largest {
            points.pop()
        } else {
            None
        };
        let model = match fit(&points, &options) {
            Ok(m) => m,
            Err(e) => {
                skipped.push(format!("{label}: {e}"));
                continue;
            }
        };
        let parameter_names: Vec<&str> = names.iter().map(String::as_str).collect();
        let formula = model.to_extrap(&parameter_names);
        let plot = PlotInput {
            names: &names,
            key: &s.key,
            fitted: &points,
            held: held.as_ref(),
            model: &model,
            level: spec.level,
        };
        plot_rows(&plot, &mut point_rows, &mut curve_rows);
        if let Some(h) = &held {
            let predicted = model.evaluate(&h.coordinate);
            let measured = mean(&h.values);
            predictions.push(PredictionRow {
                model: "pmnf".to_owned(),
                device: s.key[0].clone(),
                program: s.key[1].clone(),
                variant: s.key[2].clone(),
                phase: s.key[3].clone(),
                repetitions: 1,
                predicted_secs: predicted,
                measured_secs: Some(measured),
                error_pct: Some((predicted - measured) / measured * 100.0),
                flags: (predicted <= 0.0).then(|| "negative".to_owned()),
                run_id: None,
                model_group: Some(formula.clone()),
                validation: Some("largest_held_out".to_owned()),
                held_out: Some(configuration(&names, &h.coordinate)),
                interval_secs: model.interval(&h.coordinate, spec.level),
            });
        }
        rows.push(ModelRow {
            key: s.key,
            formula,
            model,
            held_out: held.map(|h| configuration(&names, &h.coordinate)),
        });
    }
    if rows.is_empty() {
        return Err(ModelError::invalid(format!(
            "no call path could be modelled: {}",
            skipped.join("; ")
        )));
    }
    let models = models_batch(&names, &rows)?;
    let (report, figures) = summary(&names, &rows, &predictions, &skipped, spec.level);
    Ok(Scaling {
        models,
        points: points_batch(&point_rows)?,
        curves: curves_batch(&curve_rows)?,
        predictions,
        report,
        figures,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    crate::median(&mut v)
}

/// The report (the models, the held-out predictions) and the headline figures.
fn summary(
    names: &[String],
    rows: &[ModelRow],
    predictions: &[PredictionRow],
    skipped: &[String],
    level: f64,
) -> (Vec<ReportCell>, Vec<Figure>) {
    let title = format!(
        "Scaling models over {} (Extra-P's PMNF search): {} call paths",
        names.join(", "),
        rows.len()
    );
    let mut cells = Vec::new();
    for r in rows {
        let row = r.key[..3].join(" / ");
        cells.push(ReportCell::text(&title, &row, "model", &r.formula));
        cells.push(ReportCell::number(
            &title,
            &row,
            "SMAPE",
            r.model.smape,
            "%",
        ));
    }
    for p in predictions {
        let row = format!("{} / {} / {}", p.device, p.program, p.variant);
        if let Some(e) = p.error_pct {
            cells.push(ReportCell::number(&title, &row, "held-out error", e, "%"));
        }
    }
    for s in skipped {
        cells.push(ReportCell::text(&title, "not modelled", "why", s));
    }
    let mut figures = vec![Figure::new("call paths modelled", rows.len() as f64, "")];
    let errors: Vec<f64> = predictions
        .iter()
        .filter_map(|p| p.error_pct.map(f64::abs))
        .collect();
    if !errors.is_empty() {
        let inside = predictions
            .iter()
            .filter(|p| match (p.interval_secs, p.measured_secs) {
                (Some((lo, hi)), Some(m)) => lo <= m && m <= hi,
                _ => false,
            })
            .count();
        let n = errors.len() as f64;
        figures.push(
            Figure::new(
                "largest configuration held out: median |error|",
                median(errors.clone()),
                "%",
            )
            .headline(),
        );
        figures.push(Figure::new(
            "largest configuration held out: mean |error|",
            errors.iter().sum::<f64>() / n,
            "%",
        ));
        figures.push(Figure::new(
            format!(
                "largest configuration held out: within the {:.0} % interval",
                level * 100.0
            ),
            inside as f64 / n * 100.0,
            "%",
        ));
    }
    (cells, figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_that_restates_an_earlier_one_is_dropped() {
        let p = |n: f64, global: f64, ranks: f64| {
            vec![
                ("n".to_owned(), n),
                ("global".to_owned(), global),
                ("ranks".to_owned(), ranks),
            ]
        };
        // global = 2 n: one value of either for each of the other; ranks varies on its own.
        let runs = [
            p(1.0, 2.0, 1.0),
            p(2.0, 4.0, 1.0),
            p(2.0, 4.0, 2.0),
            p(3.0, 6.0, 2.0),
        ];
        let runs: Vec<&[(String, f64)]> = runs.iter().map(Vec::as_slice).collect();
        let names = vec!["n".to_owned(), "global".to_owned(), "ranks".to_owned()];
        assert_eq!(drop_restated(names, &runs), ["n", "ranks"]);
        // A parameter that takes one value where another takes two is kept.
        let runs = [p(1.0, 5.0, 1.0), p(2.0, 5.0, 1.0), p(3.0, 6.0, 1.0)];
        let runs: Vec<&[(String, f64)]> = runs.iter().map(Vec::as_slice).collect();
        let names = vec!["n".to_owned(), "global".to_owned()];
        assert_eq!(drop_restated(names, &runs), ["n", "global"]);
    }
}
