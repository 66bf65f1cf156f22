//! What the MPI prediction steps share: the keys that size the run to predict, choose the
//! warm-up and treat a drift ([`Settings`]), and how a prediction becomes tables and figures.

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::mpi::loops::RunSize;
use yosoku_models::mpi::{DEFAULT_RUN_TO_RUN_PCT, MpiPrediction, MpiSpec, RunToRun, Trend, Warmup};
use yosoku_tables::rows::{RowsError, read_predictions};
use yosoku_tables::{Figure, MPI_BLOCK_PREDICTIONS, PREDICTIONS, REPORT};

use crate::steps::step::{KeyGroup, ParamError, StepOutput};

/// How the run to predict is sized, the warm-up chosen and a drift treated: the keys every MPI
/// prediction step has, read once as [`SettingKeys`] beside each step's own keys
/// (`StepKind::grouped`: serde's `flatten` does not work with `deny_unknown_fields`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    size: RunSize,
    warmup: Warmup,
    trend: Trend,
    published: Option<String>,
}

/// The keys of [`Settings`], as a step's table gives them: read once for every MPI prediction
/// step (`StepKind::grouped`), each refused at its line and column when its value is not one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingKeys {
    /// Main-loop iterations of the run to predict (or give the steps).
    pub full_iterations: Option<u64>,
    /// Steps (time steps, SCF cycles, ...: the program's own units) of the reduced run.
    pub reduced_steps: Option<u64>,
    /// Steps of the run to predict.
    pub full_steps: Option<u64>,
    /// Warm-up iterations to exclude; without it, found by a change-point test.
    pub warmup_iterations: Option<usize>,
    /// The older threshold method instead: leading iterations further than this fraction from
    /// the steady time are warm-up.
    pub warmup_tolerance: Option<f64>,
    /// `flag` (default) or `linear`: a drifting per-iteration cost is flagged, or extrapolated.
    pub trend: Option<TrendParam>,
    /// The paper's figure for this setting, printed beside ours.
    pub published: Option<String>,
}

impl KeyGroup for SettingKeys {
    const KEYS: &'static [&'static str] = &[
        "full_iterations",
        "reduced_steps",
        "full_steps",
        "warmup_iterations",
        "warmup_tolerance",
        "trend",
        "published",
    ];
}

/// `trend`: what to do with a per-iteration cost that drifts over the reduced run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrendParam {
    /// Flag it and predict with the steady mean (the default).
    Flag,
    /// Extrapolate the line through the steady iterations.
    Linear,
}

impl Settings {
    pub(super) fn new(keys: SettingKeys) -> Result<Self, ParamError> {
        let (full_iterations, reduced_steps, full_steps) =
            (keys.full_iterations, keys.reduced_steps, keys.full_steps);
        if full_iterations == Some(0) {
            return Err(ParamError::new(
                "full_iterations",
                "`full_iterations` must be at least 1: the main-loop iterations of the run to predict",
            ));
        }
        let size = match (full_iterations, reduced_steps, full_steps) {
            (_, Some(0), _) => {
                return Err(ParamError::new(
                    "reduced_steps",
                    "`reduced_steps` must be at least 1: the steps (time steps, cycles) the reduced run made, in the program's own units",
                ));
            }
            (_, Some(r), Some(f)) if f < r => {
                return Err(ParamError::new(
                    "full_steps",
                    format!(
                        "full_steps = {f} is fewer than reduced_steps = {r}: predict a run at least as long as the one measured"
                    ),
                ));
            }
            (None, Some(reduced), Some(full)) => RunSize::Steps { reduced, full },
            (Some(iterations), Some(reduced), Some(full)) => RunSize::Checked {
                iterations,
                reduced,
                full,
            },
            (Some(n), None, None) => RunSize::Iterations(n),
            (_, Some(_), None) => {
                return Err(ParamError::new(
                    "reduced_steps",
                    "`reduced_steps` needs `full_steps`: the steps of the run to predict",
                ));
            }
            (_, None, Some(_)) => {
                return Err(ParamError::new(
                    "full_steps",
                    "`full_steps` needs `reduced_steps`: the steps the reduced run made",
                ));
            }
            (None, None, None) => {
                return Err(ParamError::new(
                    "full_iterations",
                    "the size of the run to predict is missing: give `reduced_steps` and `full_steps` (the program's own steps) or `full_iterations`",
                ));
            }
        };
        let warmup = match (keys.warmup_iterations, keys.warmup_tolerance) {
            (Some(_), Some(_)) => {
                return Err(ParamError::new(
                    "warmup_tolerance",
                    "give `warmup_iterations` (a fixed count) or `warmup_tolerance` (the threshold method), not both",
                ));
            }
            (Some(n), None) => Warmup::Iterations(n),
            (None, Some(t)) if !(t.is_finite() && t >= 0.0) => {
                return Err(ParamError::new(
                    "warmup_tolerance",
                    format!(
                        "warmup_tolerance = {t}: expected a fraction >= 0 (0.1 = within 10 % of the steady time)"
                    ),
                ));
            }
            (None, Some(tolerance)) => Warmup::Auto { tolerance },
            (None, None) => Warmup::ChangePoint,
        };
        Ok(Self {
            size,
            warmup,
            trend: match keys.trend.unwrap_or(TrendParam::Flag) {
                TrendParam::Flag => Trend::Flag,
                TrendParam::Linear => Trend::Linear,
            },
            published: keys.published,
        })
    }

    pub(super) fn spec(&self, model: &str) -> MpiSpec {
        MpiSpec {
            model: model.to_owned(),
            size: self.size,
            warmup: self.warmup,
            pooled_warmup: Default::default(),
            trend: self.trend,
            published: self.published.clone(),
            run_to_run: RunToRun::Floor {
                pct: DEFAULT_RUN_TO_RUN_PCT,
                user: false,
            },
            shorter: Default::default(),
        }
    }
}

/// Per `total` prediction (each rank, the run, each candidate) the predicted time and, when
/// measured, the error; the run's and the candidates' are headlines.
pub(super) fn mpi_figures(predictions: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
    let mut figures = Vec::new();
    for p in read_predictions("predictions", predictions)?
        .iter()
        .filter(|p| &*p.phase == "total")
    {
        let headline = !p.variant.starts_with("rank ") && !p.variant.contains("naive");
        let mark = |f: Figure| if headline { f.headline() } else { f };
        figures.push(mark(Figure::new(
            format!("{}: predicted", p.variant),
            p.predicted_secs,
            "s",
        )));
        if let (Some(m), Some(e)) = (p.measured_secs, p.error_pct) {
            figures.push(mark(Figure::new(
                format!("{}: measured", p.variant),
                m,
                "s",
            )));
            figures.push(mark(Figure::new(format!("{}: error", p.variant), e, "%")));
        }
    }
    Ok(figures)
}

pub(super) const PREDICTION_TABLES: [&yosoku_tables::TableDef; 3] =
    [&PREDICTIONS, &MPI_BLOCK_PREDICTIONS, &REPORT];

pub(super) fn prediction_output(p: MpiPrediction) -> Result<StepOutput, RowsError> {
    let figures = mpi_figures(&p.predictions)?;
    Ok(StepOutput::new()
        .table(&PREDICTIONS, p.predictions)
        .table(&MPI_BLOCK_PREDICTIONS, p.block_predictions)
        .table(&REPORT, p.report)
        .figures(figures))
}
