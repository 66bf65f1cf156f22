//! `forecast_score`: a saved forecast scored against the runs measured after it.

use serde::Deserialize;
use yosoku_models::transfer::forecast::ModelScore;
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::{Figure, PREDICTIONS, REPORT};

use super::super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const FORECAST_SCORE: StepKind = StepKind::new::<ForecastScoreStep>(
    "forecast_score",
    Stage::Validate,
    "a forecast made before the measurement against it, per kernel and size",
);

/// `forecast_score`: a forecast (the `predictions` of `yosoku predict --save`, no measured
/// times) against the runs measured after it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForecastScoreStep {
    pub forecast: TableRef,
    /// A `runs` table: the kernels measured on the forecast's device.
    pub measured: TableRef,
    /// The device measured, where the forecast is of several (its other devices' rows are
    /// left out of the score).
    #[serde(default)]
    pub device: Option<String>,
}

impl StepParams for ForecastScoreStep {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for ForecastScoreStep {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.forecast, &self.measured]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let scored = yosoku_models::transfer::forecast::score_forecast(
            cx.input(&self.forecast)?,
            cx.input(&self.measured)?,
            cx.devices,
            self.device.as_deref(),
        )?;
        let mut figures = Vec::new();
        for s in &scored.scores {
            figures.extend(score_figures(s));
        }
        Ok(StepOutput::new()
            .table(&PREDICTIONS, scored.predictions)
            .table(&REPORT, report_batch(&score_report(&scored.scores))?)
            .figures(figures))
    }
}

/// The scores as the CLI prints them: per model a table of its kernels (every kernel first).
fn score_report(scores: &[ModelScore]) -> Vec<ReportCell> {
    let mut cells = Vec::new();
    for s in scores {
        let title = format!("{}: the forecast against the measurement", s.model);
        let band_row;
        let row = match (&s.kernel, s.band) {
            (Some(k), _) => k.as_str(),
            (None, Some(band)) => {
                band_row = format!("every kernel, measured {band}");
                band_row.as_str()
            }
            (None, None) => "every kernel",
        };
        let share = (s.with_interval > 0)
            .then(|| 100.0 * s.inside_interval as f64 / s.with_interval as f64);
        for (column, value, unit) in [
            ("sizes measured", Some(s.measured_pairs as f64), ""),
            ("median |error| %", s.median_abs_error_pct, "%"),
            ("median error %", s.median_error_pct, "%"),
            ("intervals holding %", share, "%"),
        ] {
            cells.push(ReportCell::number(
                &title,
                row,
                column,
                value.unwrap_or(f64::NAN),
                unit,
            ));
        }
    }
    cells
}

/// A forecast score's figures: over every kernel, the median |error| and the interval coverage
/// as headlines; per kernel, the median |error|, the median signed error and the coverage.
fn score_figures(s: &ModelScore) -> Vec<Figure> {
    let mut figures = Vec::new();
    let m = match (&s.kernel, s.band) {
        (Some(k), _) => format!("{} / {k}", s.model),
        (None, Some(band)) => format!("{}, measured {band}", s.model),
        (None, None) => s.model.clone(),
    };
    let every = s.kernel.is_none() && s.band.is_none();
    let headline = |f: Figure| if every { f.headline() } else { f };
    if let Some(e) = s.median_abs_error_pct {
        figures.push(headline(Figure::new(
            format!("{m}: median |error|"),
            e,
            "%",
        )));
    }
    if let Some(e) = s.median_error_pct {
        figures.push(Figure::new(format!("{m}: median error (signed)"), e, "%"));
    }
    if let Some(e) = s.mean_abs_error_pct.filter(|_| every) {
        figures.push(Figure::new(format!("{m}: mean |error|"), e, "%"));
    }
    if s.with_interval > 0 {
        figures.push(headline(Figure::new(
            format!("{m}: intervals holding the measured median"),
            100.0 * s.inside_interval as f64 / s.with_interval as f64,
            "%",
        )));
    }
    if every {
        for (what, n) in [
            ("measured medians inside the interval", s.inside_interval),
            ("measured kernel sizes with an interval", s.with_interval),
            ("kernel sizes forecast", s.pairs),
        ] {
            figures.push(Figure::new(format!("{m}: {what}"), n as f64, ""));
        }
    }
    figures.push(Figure::new(
        format!("{m}: kernel sizes measured"),
        s.measured_pairs as f64,
        "",
    ));
    figures
}
