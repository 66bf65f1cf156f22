//! [`scaling_models`]: every call path of a `runs` table fitted in PMNF, its largest
//! configuration held out and predicted where the spec asks, with the tables, report and figures
//! that describe the models.

use arrow_array::RecordBatch;
use yosoku_regression::pmnf::calibrate::{
    Basis, CalibratedIntervals, Calibration, extrap_calibration, robust_calibration,
};
use yosoku_regression::pmnf::robust::{fit_robust, moved_with_first_said, ranked_off_line_said};
use yosoku_regression::pmnf::{
    PmnfModel, PmnfOptions, Point, few_values, fit, without_line, without_line_said,
};
use yosoku_tables::Figure;
use yosoku_tables::report::ReportCell;
use yosoku_tables::rows::PredictionRow;

use crate::ModelError;

use super::input::series;
use super::report::summary;
use super::spec::{ScalingSpec, Search};
use super::tables::{
    ModelRow, PlotInput, configuration, curves_batch, models_batch, plot_rows, points_batch,
};

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
    /// The parameters modelled over, in the order of every model's coordinates.
    pub parameters: Vec<String>,
    /// Every call path's fitted model: `device, program, variant, phase`, the model and its
    /// intervals under the calibration over the step's table.
    pub fits: Vec<([String; 4], PmnfModel, CalibratedIntervals)>,
}

/// The intervals' calibration over every call path the step fits, as over the call paths of
/// one Extra-P file: each one's largest fitted point held out, predicted from the rest by the
/// same search (`yosoku_regression::pmnf::calibrate`). A table is one experiment (one program's
/// call paths, one suite's kernels), whose series err alike; tables that are not go to steps of
/// their own.
fn calibration(
    fitted: &[([String; 4], Vec<Point>, Option<Point>)],
    options: &PmnfOptions,
    spec: &ScalingSpec,
) -> Calibration {
    let points: Vec<&[Point]> = fitted.iter().map(|(_, p, _)| p.as_slice()).collect();
    let extrap = || extrap_calibration(&points, options, spec.level);
    match spec.search {
        Search::Extrap => extrap(),
        Search::Robust => robust_calibration(&points, options, spec.level, extrap),
    }
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
    let fitted: Vec<([String; 4], Vec<Point>, Option<Point>)> = all
        .into_iter()
        .map(|s| {
            let mut points = s.points;
            let held = if spec.hold_out_largest {
                points.pop()
            } else {
                None
            };
            (s.key, points, held)
        })
        .collect();
    // Nothing held out is seen by the calibration: its checks are the fitted points'.
    let calibration = calibration(&fitted, &options, spec);
    let mut intervals_of = Vec::new();
    for (key, points, held) in fitted {
        let label = key[..3].join(" / ");
        let fitted = match spec.search {
            // A step validates what it fits, so it fits a call path from three values of every
            // parameter up, as the robust search does: Extra-P's search (and `yosoku scaling`)
            // would choose a law from two values, which nothing checks.
            Search::Extrap => match few_values(&points).first() {
                Some(few) => Err(few.refusal()),
                None => fit(&points, &options),
            }
            .map(|m| (m, without_line_said(&without_line(&points), &names))),
            Search::Robust => fit_robust(&points, &options).map(|r| {
                let note = moved_with_first_said(&r.moved_with_first, &names)
                    .map(|moved| format!("{moved}: modelled over {} alone", names[0]))
                    .or_else(|| ranked_off_line_said(&r.ranked_off_line, &names));
                (r.model, note)
            }),
        };
        let (model, note) = match fitted {
            Ok(m) => m,
            Err(e) => {
                skipped.push(format!("{label}: {}", e.said(&names)));
                continue;
            }
        };
        // The Extra-P-compatible search's model, only where it lends the intervals.
        let lender = (calibration.basis == Basis::Borrowed)
            .then(|| fit(&points, &options).ok())
            .flatten();
        let intervals = CalibratedIntervals::new(calibration.clone(), &points, lender);
        let parameter_names: Vec<&str> = names.iter().map(String::as_str).collect();
        let formula = model.to_extrap(&parameter_names);
        let plot = PlotInput {
            names: &names,
            key: &key,
            fitted: &points,
            held: held.as_ref(),
            model: &model,
            intervals: &intervals,
        };
        plot_rows(&plot, &mut point_rows, &mut curve_rows);
        if let Some(h) = &held {
            let predicted = model.evaluate(&h.coordinate);
            let measured = mean(&h.values);
            predictions.push(PredictionRow {
                model: "pmnf".to_owned(),
                device: key[0].clone(),
                program: key[1].clone(),
                variant: key[2].clone(),
                phase: key[3].clone(),
                repetitions: 1,
                predicted_secs: predicted,
                measured_secs: Some(measured),
                error_pct: Some((predicted - measured) / measured * 100.0),
                flags: (predicted <= 0.0).then(|| "negative".to_owned()),
                run_id: None,
                model_group: Some(formula.clone()),
                validation: Some("largest_held_out".to_owned()),
                held_out: Some(configuration(&names, &h.coordinate)),
                interval_secs: intervals.interval(&model, &h.coordinate),
            });
        }
        intervals_of.push(intervals);
        rows.push(ModelRow {
            key,
            formula,
            model,
            held_out: held.map(|h| configuration(&names, &h.coordinate)),
            note,
        });
    }
    if rows.is_empty() {
        return Err(ModelError::invalid(format!(
            "no call path could be modelled: {}",
            skipped.join("; ")
        )));
    }
    let models = models_batch(&names, &rows)?;
    let (report, figures) = summary(
        &names,
        &rows,
        &predictions,
        &skipped,
        &calibration,
        (spec.level, spec.search),
    );
    let fits = rows
        .into_iter()
        .zip(intervals_of)
        .map(|(r, intervals)| (r.key, r.model, intervals))
        .collect();
    Ok(Scaling {
        parameters: names,
        fits,
        models,
        points: points_batch(&point_rows)?,
        curves: curves_batch(&curve_rows)?,
        predictions,
        report,
        figures,
    })
}
