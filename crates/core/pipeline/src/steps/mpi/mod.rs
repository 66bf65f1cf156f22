//! MPI predictions from reduced runs (docs/methods.md, section 3): the simplified-execution
//! prediction per rank, the separate-runs baseline, and the best-configuration search.

mod call_paths;
mod spans;
mod steps_and_ranks;

pub(crate) use call_paths::MPI_CALL_PATHS;
pub(crate) use spans::SPANS_STEP;
pub(crate) use steps_and_ranks::STEPS_AND_RANKS;

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::mpi::loops::RunSize;
use yosoku_models::mpi::{
    self, DEFAULT_RUN_TO_RUN_PCT, MpiPrediction, MpiSpec, RunToRun, Trend, Warmup,
};
use yosoku_tables::rows::{RowsError, read_predictions};
use yosoku_tables::{Figure, MPI_BLOCK_PREDICTIONS, PREDICTIONS, REPORT};

use crate::steps::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const SIMPLIFIED: StepKind = StepKind::new::<SimplifiedParams>(
    "mpi_simplified",
    Stage::Fit,
    "per-rank prediction of a full MPI run from a reduced run (Chida et al.)",
);
pub(crate) const SEPARATE_RUNS: StepKind = StepKind::new::<SeparateRunsParams>(
    "mpi_separate_runs",
    Stage::Fit,
    "the earlier method: compute and communication from separate runs",
);
pub(crate) const BEST_CONFIGURATION: StepKind = StepKind::new::<BestConfigurationParams>(
    "mpi_best_configuration",
    Stage::Fit,
    "candidate configurations predicted from one reduced run each, and ranked",
);

/// How the run to predict is sized, the warm-up chosen and a drift treated: the keys every MPI
/// prediction step has (flattened into each step's parameters by hand: serde's `flatten` does
/// not work with `deny_unknown_fields`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    size: RunSize,
    warmup: Warmup,
    trend: Trend,
    published: Option<String>,
}

/// The raw keys of [`Settings`].
struct SettingKeys {
    full_iterations: Option<u64>,
    reduced_steps: Option<u64>,
    full_steps: Option<u64>,
    warmup_iterations: Option<usize>,
    warmup_tolerance: Option<f64>,
    trend: Option<TrendParam>,
    published: Option<String>,
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
    fn new(keys: SettingKeys) -> Result<Self, ParamError> {
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

    fn spec(&self, model: &str) -> MpiSpec {
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
fn mpi_figures(predictions: &RecordBatch) -> Result<Vec<Figure>, RowsError> {
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

const PREDICTION_TABLES: [&yosoku_tables::TableDef; 3] =
    [&PREDICTIONS, &MPI_BLOCK_PREDICTIONS, &REPORT];

fn prediction_output(p: MpiPrediction) -> Result<StepOutput, RowsError> {
    let figures = mpi_figures(&p.predictions)?;
    Ok(StepOutput::new()
        .table(&PREDICTIONS, p.predictions)
        .table(&MPI_BLOCK_PREDICTIONS, p.block_predictions)
        .table(&REPORT, p.report)
        .figures(figures))
}

/// `mpi_simplified`: per-rank prediction of a full MPI run from a reduced run's blocks, compute
/// and communication from the same run (Chida et al.).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimplifiedParams {
    /// `mpi_blocks` of the reduced run.
    pub reduced: Option<TableRef>,
    /// `mpi_blocks` of the full run, to compare with.
    pub measured: Option<TableRef>,
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
    /// `mpi_blocks` of repeats of the reduced run (this one among them, or not; the older
    /// spelling `warmup_from` is read too): the warm-up of each rank is chosen once on their
    /// pooled per-iteration times, the same for every repeat, and the spread of their
    /// predictions is the interval's run-to-run variation.
    #[serde(default, alias = "warmup_from")]
    pub repeats: Vec<TableRef>,
    /// The interval's run-to-run variation as a 95 % half-width in percent of the prediction:
    /// without `repeats`, instead of the default (DEFAULT_RUN_TO_RUN_PCT); with them, a floor.
    pub run_to_run_pct: Option<f64>,
    /// Predict from all `repeats` together (every block's time averaged over them) instead of
    /// from `reduced` alone.
    #[serde(default)]
    pub combine_repeats: bool,
    /// Two lengths: `mpi_blocks` of a shorter reduced run of the same configuration. Its
    /// per-iteration times are averaged into `reduced`'s (the longer) iteration by iteration and
    /// the cost per iteration is extrapolated as the line through them, with its uncertainty.
    pub shorter: Option<TableRef>,
}

impl SettingKeys {
    fn of(
        full_iterations: Option<u64>,
        (reduced_steps, full_steps): (Option<u64>, Option<u64>),
        warmup_iterations: Option<usize>,
        warmup_tolerance: Option<f64>,
        trend: Option<TrendParam>,
        published: Option<String>,
    ) -> Self {
        Self {
            full_iterations,
            reduced_steps,
            full_steps,
            warmup_iterations,
            warmup_tolerance,
            trend,
            published,
        }
    }
}

/// An `mpi_simplified` step.
#[derive(Debug)]
pub struct Simplified {
    /// None when the repeats are combined.
    reduced: Option<TableRef>,
    measured: Option<TableRef>,
    repeats: Vec<TableRef>,
    run_to_run_pct: Option<f64>,
    shorter: Option<TableRef>,
    settings: Settings,
}

impl StepParams for SimplifiedParams {
    type Step = Simplified;
    fn into_step(self) -> Result<Simplified, ParamError> {
        if !self.repeats.is_empty()
            && (self.warmup_iterations.is_some() || self.warmup_tolerance.is_some())
        {
            return Err(ParamError::new(
                "repeats",
                "give `repeats` (the warm-up chosen on repeats) or `warmup_iterations` / `warmup_tolerance`, not both",
            ));
        }
        if self.repeats.len() == 1 {
            return Err(ParamError::new(
                "repeats",
                "`repeats` names one run: repeats are two or more runs of the reduced input",
            ));
        }
        if let Some(p) = self.run_to_run_pct
            && !(p.is_finite() && p >= 0.0)
        {
            return Err(ParamError::new(
                "run_to_run_pct",
                format!("run_to_run_pct = {p}: expected a percentage >= 0"),
            ));
        }
        if self.shorter.is_some() && self.combine_repeats {
            return Err(ParamError::new(
                "shorter",
                "`shorter` pairs with the one `reduced` run (two lengths), not with `combine_repeats`",
            ));
        }
        let reduced = match (self.combine_repeats, self.reduced) {
            (true, _) if self.repeats.is_empty() => {
                return Err(ParamError::new(
                    "combine_repeats",
                    "`combine_repeats` combines the runs of `repeats`: name two or more",
                ));
            }
            (true, Some(_)) => {
                return Err(ParamError::new(
                    "reduced",
                    "with `combine_repeats`, the prediction is from every run of `repeats`: leave `reduced` out",
                ));
            }
            (true, None) => None,
            (false, Some(r)) => Some(r),
            (false, None) => {
                return Err(ParamError::new(
                    "reduced",
                    "missing `reduced`: the `mpi_blocks` of the reduced run to predict from (or `combine_repeats = true` with `repeats`)",
                ));
            }
        };
        Ok(Simplified {
            repeats: self.repeats,
            run_to_run_pct: self.run_to_run_pct,
            shorter: self.shorter,
            settings: Settings::new(SettingKeys::of(
                self.full_iterations,
                (self.reduced_steps, self.full_steps),
                self.warmup_iterations,
                self.warmup_tolerance,
                self.trend,
                self.published,
            ))?,
            reduced,
            measured: self.measured,
        })
    }
}

impl Step for Simplified {
    fn inputs(&self) -> Vec<&TableRef> {
        [
            self.reduced.as_ref(),
            self.measured.as_ref(),
            self.shorter.as_ref(),
        ]
        .into_iter()
        .flatten()
        .chain(&self.repeats)
        .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&PREDICTION_TABLES)
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let mut spec = self.settings.spec(cx.id);
        if let Some(shorter) = &self.shorter {
            spec.shorter = mpi::shorter_run_times(cx.input(shorter)?)?;
        }
        let repeats = self
            .repeats
            .iter()
            .map(|t| cx.input(t))
            .collect::<Result<Vec<_>, _>>()?;
        if !repeats.is_empty() {
            spec.pooled_warmup = mpi::pooled_warmups(&repeats)?;
            let totals = mpi::repeat_totals(&spec, &repeats)?;
            spec.run_to_run = mpi::run_to_run_of(&totals, self.run_to_run_pct);
        } else if let Some(pct) = self.run_to_run_pct {
            spec.run_to_run = RunToRun::Floor { pct, user: true };
        }
        let measured = cx.optional_input(self.measured.as_ref())?;
        let p = match &self.reduced {
            Some(reduced) => mpi::simplified(&spec, cx.input(reduced)?, measured)?,
            None => mpi::combined(&spec, &repeats, measured)?,
        };
        Ok(prediction_output(p)?)
    }
}

/// `mpi_separate_runs`: the earlier method as a baseline: compute blocks from one reduced run,
/// communication blocks from a communication-only run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeparateRunsParams {
    /// `mpi_blocks` of the run the compute blocks are taken from.
    pub compute: TableRef,
    /// `mpi_blocks` of the communication-only run.
    pub communication: TableRef,
    pub measured: Option<TableRef>,
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

/// An `mpi_separate_runs` step.
#[derive(Debug)]
pub struct SeparateRuns {
    compute: TableRef,
    communication: TableRef,
    measured: Option<TableRef>,
    settings: Settings,
}

impl StepParams for SeparateRunsParams {
    type Step = SeparateRuns;
    fn into_step(self) -> Result<SeparateRuns, ParamError> {
        Ok(SeparateRuns {
            settings: Settings::new(SettingKeys::of(
                self.full_iterations,
                (self.reduced_steps, self.full_steps),
                self.warmup_iterations,
                self.warmup_tolerance,
                self.trend,
                self.published,
            ))?,
            compute: self.compute,
            communication: self.communication,
            measured: self.measured,
        })
    }
}

impl Step for SeparateRuns {
    fn inputs(&self) -> Vec<&TableRef> {
        [
            Some(&self.compute),
            Some(&self.communication),
            self.measured.as_ref(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&PREDICTION_TABLES)
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let p = mpi::separate_runs(
            &self.settings.spec(cx.id),
            cx.input(&self.compute)?,
            cx.input(&self.communication)?,
            cx.optional_input(self.measured.as_ref())?,
        )?;
        Ok(prediction_output(p)?)
    }
}

/// `mpi_best_configuration`: one reduced run per candidate configuration (rank count, binding),
/// each predicted for the full run and ranked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BestConfigurationParams {
    /// `mpi_blocks` of the reduced runs, one run per candidate.
    pub reduced: TableRef,
    /// `mpi_ranks` of the same runs (their rank counts and bindings).
    pub reduced_ranks: TableRef,
    /// `mpi_ranks` of measured full runs of the candidates, to rank beside the predictions.
    pub measured_ranks: Option<TableRef>,
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

/// An `mpi_best_configuration` step.
#[derive(Debug)]
pub struct BestConfiguration {
    reduced: TableRef,
    reduced_ranks: TableRef,
    measured_ranks: Option<TableRef>,
    settings: Settings,
}

impl StepParams for BestConfigurationParams {
    type Step = BestConfiguration;
    fn into_step(self) -> Result<BestConfiguration, ParamError> {
        Ok(BestConfiguration {
            settings: Settings::new(SettingKeys::of(
                self.full_iterations,
                (self.reduced_steps, self.full_steps),
                self.warmup_iterations,
                self.warmup_tolerance,
                self.trend,
                self.published,
            ))?,
            reduced: self.reduced,
            reduced_ranks: self.reduced_ranks,
            measured_ranks: self.measured_ranks,
        })
    }
}

impl Step for BestConfiguration {
    fn inputs(&self) -> Vec<&TableRef> {
        [
            Some(&self.reduced),
            Some(&self.reduced_ranks),
            self.measured_ranks.as_ref(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &REPORT])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (predictions, report) = mpi::best_configuration(
            &self.settings.spec(cx.id),
            cx.input(&self.reduced)?,
            cx.input(&self.reduced_ranks)?,
            cx.optional_input(self.measured_ranks.as_ref())?,
        )?;
        let figures = mpi_figures(&predictions)?;
        Ok(StepOutput::new()
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report)
            .figures(figures))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::RecordBatch;
    use yosoku_tables::MPI_BLOCKS;

    use crate::steps::testing::{f, i32s, i64s, opt_f, parse_error, run_steps, s};

    /// One rank, one compute block per iteration of `secs` seconds, over `iterations`
    /// iterations.
    fn blocks(run: &str, iterations: i64, secs: f64) -> RecordBatch {
        let n = iterations as usize;
        let its: Vec<Option<i64>> = (0..iterations).map(Some).collect();
        let starts: Vec<Option<f64>> = (0..n).map(|i| Some(i as f64 * secs)).collect();
        MPI_BLOCKS
            .batch(vec![
                s(&vec![run; n]),
                s(&vec!["host"; n]),
                i32s(&vec![0; n]),
                s(&vec!["loop"; n]),
                s(&vec!["compute"; n]),
                s(&vec!["main.c:10"; n]),
                i64s(&its),
                opt_f(&starts),
                f(&vec![secs; n]),
            ])
            .unwrap()
    }

    #[test]
    fn a_reduced_run_predicts_the_full_one() {
        let set = run_steps(
            "[[fit]]\nstep = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.reduced\"\nmeasured = \"src.full\"\nfull_iterations = 100\nwarmup_iterations = 0",
            vec![("reduced", blocks("r", 10, 0.5)), ("full", blocks("f", 100, 0.5))],
        )
        .unwrap();
        let predictions =
            yosoku_tables::rows::read_predictions("p", set.get("p.predictions").unwrap()).unwrap();
        let run = predictions
            .iter()
            .find(|p| &*p.variant == "run" && &*p.phase == "total")
            .unwrap();
        assert!((run.predicted_secs - 50.0).abs() < 1e-9, "{run:?}");
        assert!(run.error_pct.unwrap().abs() < 1e-9, "{run:?}");
    }

    #[test]
    fn settings_are_checked_when_the_file_is_parsed() {
        // Two lengths pair with one reduced run, not with repeats combined.
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nrepeats = [\"a.blocks\", \"b.blocks\"]\ncombine_repeats = true\nshorter = \"s.blocks\"\nfull_iterations = 400",
        );
        assert!(
            e.contains("key `shorter`: `shorter` pairs with the one `reduced` run"),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = 400\nwarmup_tolerance = -0.1",
        );
        assert!(
            e.starts_with("p.toml:9:20: key `warmup_tolerance`: warmup_tolerance = -0.1: expected a fraction >= 0"),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"mpi_best_configuration\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_ranks = \"src.ranks\"\nfull_iterations = 0",
        );
        assert!(
            e.starts_with(
                "p.toml:9:19: key `full_iterations`: `full_iterations` must be at least 1"
            ),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_steps = 100",
        );
        assert!(
            e.contains("key `reduced_steps`: `reduced_steps` needs `full_steps`"),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_steps = 100\nfull_steps = 10",
        );
        assert!(
            e.contains("full_steps = 10 is fewer than reduced_steps = 100"),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"",
        );
        assert!(
            e.contains("the size of the run to predict is missing"),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = 4\nwarmup_iterations = 1\nwarmup_tolerance = 0.1",
        );
        assert!(e.contains("not both"), "{e}");
        let e = parse_error(
            "fit",
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = 4\ntrend = \"cubic\"",
        );
        assert!(e.contains("trend"), "{e}");
    }

    #[test]
    fn the_run_to_predict_is_sized_in_steps() {
        // 10 iterations in 5 steps: 2 per step, 100 for 50.
        let set = run_steps(
            "[[fit]]\nstep = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.reduced\"\nreduced_steps = 5\nfull_steps = 50\nwarmup_iterations = 0",
            vec![("reduced", blocks("r", 10, 0.5)), ("full", blocks("f", 100, 0.5))],
        )
        .unwrap();
        let predictions =
            yosoku_tables::rows::read_predictions("p", set.get("p.predictions").unwrap()).unwrap();
        let run = predictions.iter().find(|p| &*p.variant == "run").unwrap();
        assert_eq!(run.repetitions, 100);
        assert!((run.predicted_secs - 50.0).abs() < 1e-9, "{run:?}");
    }

    #[test]
    fn a_pooled_warmup_needs_two_repeats_and_no_fixed_warmup() {
        let body =
            "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.a\"\nfull_iterations = 4\n";
        let e = parse_error(
            "fit",
            &format!("{body}warmup_from = [\"src.a\", \"src.b\"]\nwarmup_iterations = 1"),
        );
        assert!(e.contains("give `repeats`"), "{e}");
        let e = parse_error("fit", &format!("{body}repeats = [\"src.a\"]"));
        assert!(e.contains("`repeats` names one run"), "{e}");
        let e = parse_error("fit", &format!("{body}run_to_run_pct = -1"));
        assert!(e.contains("expected a percentage >= 0"), "{e}");
        let e = parse_error("fit", &format!("{body}combine_repeats = true"));
        assert!(e.contains("combines the runs of `repeats`"), "{e}");
        let e = parse_error(
            "fit",
            &format!("{body}combine_repeats = true\nrepeats = [\"src.a\", \"src.b\"]"),
        );
        assert!(e.contains("leave `reduced` out"), "{e}");
    }
}
