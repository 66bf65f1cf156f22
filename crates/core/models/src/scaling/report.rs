//! The scaling models' report (the models, the held-out predictions) and headline figures.

use yosoku_regression::pmnf::calibrate::Calibration;
use yosoku_tables::Figure;
use yosoku_tables::report::ReportCell;
use yosoku_tables::rows::PredictionRow;

use super::spec::Search;
use super::tables::ModelRow;

fn median(mut v: Vec<f64>) -> f64 {
    crate::median(&mut v)
}

/// The report (the models, the held-out predictions) and the headline figures.
pub(super) fn summary(
    names: &[String],
    rows: &[ModelRow],
    predictions: &[PredictionRow],
    skipped: &[String],
    calibration: &Calibration,
    (level, search): (f64, Search),
) -> (Vec<ReportCell>, Vec<Figure>) {
    let title = format!(
        "Scaling models over {} ({}): {} call paths",
        names.join(", "),
        match search {
            Search::Extrap => "Extra-P's PMNF search",
            Search::Robust => "the robust PMNF search",
        },
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
        if let Some(note) = &r.note {
            cells.push(ReportCell::text(&title, &row, "note", note));
        }
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
    cells.push(ReportCell::text(
        &title,
        "every call path",
        "intervals",
        calibration.describe(),
    ));
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
