//! One MPI prediction over steps and configurations (docs/methods.md, section 3, "More steps and
//! more ranks at once"): short runs at several configurations (rank counts, input sizes), each
//! split by simplified execution into what each call path costs per step and what it costs once
//! (setup, teardown, the warm-up's excess); both halves modelled over the configurations in
//! Extra-P's PMNF; the run at a configuration and a length beyond every one measured predicted
//! as `once + steps x per step`, its interval carrying both models' uncertainty and the drift of
//! the cost per step the short runs cannot exclude.
//!
//! The split is exact for the paper's method: its prediction is affine in the length of the run
//! predicted, so the slope between the measured run and its prediction at the full length is the
//! cost of one more step, and the intercept what does not repeat.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use yosoku_regression::pmnf::PmnfModel;
use yosoku_regression::pmnf::calibrate::CalibratedIntervals;
use yosoku_tables::report::ReportCell;
use yosoku_tables::rows::{BEYOND_MEASURED, PredictionRow};

use super::call_paths::{CallPathSpec, OverRanks, RunInfo, WHOLE_RUN, call_path_runs, read_runs};
use super::input::BlockRows;
use super::loops::RunSize;
use super::predict::predict_rank;
use super::spec::{MpiSpec, STEADY_TOLERANCE};
use crate::Input;
use crate::ModelError;
use crate::scaling::{Scaling, ScalingSpec, numeric_parameters, scaling_models};

/// The kind the bundle records an `mpi_steps_and_ranks_fit` step's model as: the per-step and
/// once PMNF models of a run's parts ([`part_models`]), saved in a scaling model's form
/// (`scaling::PmnfScaling`) but never of kind `scaling`, which is `scaling_fit`'s.
pub const STEPS_AND_RANKS_KIND: &str = "mpi_steps_and_ranks";

/// What `mpi_steps_and_ranks` is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct StepsAndRanksSpec {
    /// The simplified execution of each short run: the model id, the lengths (`size`: the short
    /// runs' and the run to predict), the warm-up.
    pub mpi: MpiSpec,
    /// The PMNF search over the configurations (`hold_out_largest` is not used: the run
    /// predicted is beyond every one measured).
    pub scaling: ScalingSpec,
    /// The configuration to predict: a value for every parameter modelled (empty in the fit
    /// step's definition; the validation step gives it).
    pub target: Vec<(String, f64)>,
    /// Keep a call path only if its share of the predicted time over all short runs is at least
    /// this (0..1).
    pub min_share: f64,
}

/// What it produces: the per-step and once models (as a `scaling_model` step's tables) and the
/// prediction of the target run per call path.
#[derive(Debug)]
pub struct StepsAndRanks {
    pub scaling: Scaling,
    pub predictions: Vec<PredictionRow>,
    pub report: Vec<ReportCell>,
}

/// The `variant` (the call path's name in the scaling models) of a call path's cost per step
/// (or iteration) and of what it costs once; the `phase` stays its kind.
pub fn per_step_variant(path: &str, unit: &str) -> String {
    format!("{path}, per {unit}")
}

pub fn once_variant(path: &str) -> String {
    format!("{path}, once")
}

/// The `variant` of the short runs' whole time as measured: the baseline's model.
fn as_measured_variant() -> String {
    format!("{WHOLE_RUN}, short run as measured")
}

/// One call path of one short run at the target's length: its time, its cost per step and
/// what it costs once.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Split {
    /// What the short run took.
    measured_secs: f64,
    predicted_secs: f64,
    per_step_secs: f64,
    once_secs: f64,
}

/// One short run, split.
struct RunSplit<'a> {
    id: &'a str,
    info: &'a RunInfo,
    /// Call path -> (kind, split): each path's slowest rank at the target's length.
    paths: BTreeMap<String, (&'static str, Split)>,
    whole: Split,
    /// The slowest rank's drift half-width over its predicted time.
    drift_relative: f64,
    /// The slowest rank did not show a steady state for the length predicted.
    unsteady: bool,
}

/// The lengths in the user's units: the short runs' and the run predicted's, and the unit.
fn lengths(size: RunSize, iterations: usize, full: u64) -> (f64, f64, &'static str) {
    match size {
        RunSize::Iterations(_) => (iterations as f64, full as f64, "iteration"),
        RunSize::Steps { reduced, full } | RunSize::Checked { reduced, full, .. } => {
            (reduced as f64, full as f64, "step")
        }
    }
}

/// Every short run split per call path at the slowest rank.
fn split_runs<'a>(
    rows: &'a BlockRows<'a>,
    infos: &'a [(String, RunInfo)],
    spec: &MpiSpec,
) -> Result<(Vec<RunSplit<'a>>, Lengths), ModelError> {
    let mut out = Vec::new();
    let (mut unit, mut full_units, mut reduced_units) = ("step", 0.0, 0.0);
    let mut full_iterations = 0;
    for (id, ranks) in &rows.ranks {
        let info = infos
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, i)| i)
            .ok_or_else(|| {
                ModelError::invalid(format!(
                    "blocks: run `{id}` is not in the ranks table (mpi_ranks of the same source)"
                ))
            })?;
        let mut paths: BTreeMap<String, (&'static str, Split)> = BTreeMap::new();
        let mut whole: Option<(Split, f64, bool)> = None;
        for (rank, stretches) in ranks {
            let run = rows.rank_run(stretches);
            let p = predict_rank(rows.role, id, *rank, &run, spec)?;
            let (reduced, full, u) = lengths(spec.size, p.iterations, p.full_iterations);
            if full <= reduced {
                return Err(ModelError::invalid(format!(
                    "run `{id}`: the run to predict ({full} {u}s) is not longer than the short run ({reduced}): give the target's length"
                )));
            }
            (unit, full_units, reduced_units) = (u, full, reduced);
            full_iterations = full_iterations.max(p.full_iterations);
            let mut measured: BTreeMap<&str, f64> = BTreeMap::new();
            for e in run.executions() {
                *measured.entry(run.name(e.block())).or_default() += e.duration_secs;
            }
            let split = |predicted: f64, measured: f64| {
                let per_step = (predicted - measured) / (full - reduced);
                Split {
                    measured_secs: measured,
                    predicted_secs: predicted,
                    per_step_secs: per_step,
                    once_secs: measured - reduced * per_step,
                }
            };
            let mut total = (0.0, 0.0);
            for b in &p.blocks {
                let m = measured.get(b.block.as_str()).copied().unwrap_or(0.0);
                let s = split(b.predicted_secs, m);
                total = (total.0 + b.predicted_secs, total.1 + m);
                let kind = if b.compute {
                    "compute"
                } else {
                    "communication"
                };
                let slot = paths.entry(b.block.clone()).or_insert((kind, s));
                if s.predicted_secs > slot.1.predicted_secs {
                    *slot = (kind, s);
                }
            }
            // The whole run from the rank's wall time: what its blocks leave out runs once.
            let wall = usize::try_from(*rank)
                .ok()
                .and_then(|r| info.wall_secs.get(r))
                .copied()
                .unwrap_or(total.1);
            let mut w = split(total.0, total.1);
            w.once_secs += wall - total.1;
            w.predicted_secs += wall - total.1;
            w.measured_secs = wall;
            let unsteady = !p.trend_extrapolated && p.drift_bound > STEADY_TOLERANCE;
            let drift = p.drift_half_secs / total.0.max(f64::MIN_POSITIVE);
            if whole.is_none_or(|(s, _, _)| w.predicted_secs > s.predicted_secs) {
                whole = Some((w, drift, unsteady));
            }
        }
        let Some((whole, drift_relative, unsteady)) = whole else {
            continue;
        };
        out.push(RunSplit {
            id,
            info,
            paths,
            whole,
            drift_relative,
            unsteady,
        });
    }
    if out.is_empty() {
        return Err(ModelError::invalid(
            "blocks: no run to model (the table is empty)",
        ));
    }
    Ok((
        out,
        Lengths {
            unit,
            reduced: reduced_units,
            full: full_units,
            full_iterations,
        },
    ))
}

/// The lengths of the short runs (the last one's) and of the run predicted, in `unit`s.
#[derive(Debug, Clone, Copy)]
struct Lengths {
    unit: &'static str,
    reduced: f64,
    full: f64,
    /// The main-loop iterations of the run predicted (the last short run's largest over its
    /// ranks), which a measured run of the target makes too.
    full_iterations: u64,
}

/// The call paths whose share of the predicted time over all runs is at least `min_share`,
/// largest first, with their kind.
fn kept_paths(runs: &[RunSplit<'_>], min_share: f64) -> Vec<(String, &'static str)> {
    let whole: f64 = runs.iter().map(|r| r.whole.predicted_secs).sum();
    let mut shares: BTreeMap<&str, (&'static str, f64)> = BTreeMap::new();
    for r in runs {
        for (path, (kind, s)) in &r.paths {
            shares.entry(path).or_insert((kind, 0.0)).1 += s.predicted_secs;
        }
    }
    let mut kept: Vec<(String, &'static str, f64)> = shares
        .into_iter()
        .map(|(p, (k, t))| (p.to_owned(), k, t / whole.max(f64::MIN_POSITIVE)))
        .filter(|(_, _, share)| *share >= min_share)
        .collect();
    kept.sort_by(|a, b| b.2.total_cmp(&a.2));
    kept.into_iter().map(|(p, k, _)| (p, k)).collect()
}

/// A series of the runs table: `(run, device, program, call path, parameters, phase, seconds)`.
type SeriesRow = [String; 6];

/// The `runs` table the PMNF search reads: per run and kept call path, its cost per step and
/// once, where every run's value is positive (a series with a zero or negative value, as the
/// cost per step of a call path that never repeats, is not a time the search can model: it is
/// carried as its mean, [`Unmodelled`]).
fn series_rows(
    runs: &[RunSplit<'_>],
    kept: &[(String, &'static str)],
    unit: &str,
) -> (Vec<SeriesRow>, Vec<f64>, BTreeMap<String, Vec<f64>>) {
    let mut all: BTreeMap<(String, &'static str), Vec<(usize, f64)>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        let whole = (WHOLE_RUN.to_owned(), ("total", r.whole));
        let paths = kept
            .iter()
            .filter_map(|(p, _)| r.paths.get(p).map(|(kind, s)| (p.clone(), (*kind, *s))));
        for (path, (kind, s)) in std::iter::once(whole).chain(paths) {
            all.entry((per_step_variant(&path, unit), kind))
                .or_default()
                .push((i, s.per_step_secs));
            all.entry((once_variant(&path), kind))
                .or_default()
                .push((i, s.once_secs));
        }
        all.entry((as_measured_variant(), "total"))
            .or_default()
            .push((i, r.whole.measured_secs));
    }
    let (mut rows, mut secs, mut unmodelled) = (Vec::new(), Vec::new(), BTreeMap::new());
    for ((variant, phase), values) in all {
        if values.iter().all(|(_, v)| *v > 0.0) {
            for (i, v) in values {
                let r = &runs[i];
                rows.push([
                    r.id.to_owned(),
                    r.info.device.clone(),
                    r.info.program.clone(),
                    variant.clone(),
                    r.info.parameters.clone(),
                    phase.to_owned(),
                ]);
                secs.push(v);
            }
        } else {
            unmodelled.insert(variant, values.into_iter().map(|(_, v)| v).collect());
        }
    }
    (rows, secs, unmodelled)
}

fn runs_batch(rows: &[SeriesRow], secs: &[f64]) -> Result<RecordBatch, ModelError> {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
    let text = |i: usize| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r[i].as_str()),
        ))
    };
    yosoku_tables::RUNS
        .batch(vec![
            text(0),
            text(1),
            text(2),
            text(3),
            text(4),
            text(5),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 1))),
            Arc::new(Float64Array::from_iter_values(secs.iter().copied())),
        ])
        .map_err(|e| ModelError::invalid(format!("runs: {e}")))
}

/// A value and its half-width at the interval's level.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Estimate {
    secs: f64,
    half_secs: Option<f64>,
}

/// A series not modelled: its values' mean, the half-width for a new run from their spread.
fn unmodelled_estimate(values: &[f64], level: f64) -> Estimate {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.iter().all(|v| *v == 0.0) {
        return Estimate {
            secs: 0.0,
            half_secs: Some(0.0),
        };
    }
    let half_secs = (values.len() > 1)
        .then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            yosoku_regression::t_quantile(n - 1.0, 0.5 + level / 2.0)
                .map(|t| t * (var * (1.0 + 1.0 / n)).sqrt())
        })
        .flatten();
    Estimate {
        secs: mean,
        half_secs,
    }
}

/// A part's model at `x`, its half-width that of its interval under the short runs'
/// calibration (the scaling models' checks: each part's largest configuration predicted from
/// the rest).
fn model_estimate(model: &PmnfModel, intervals: &CalibratedIntervals, x: &[f64]) -> Estimate {
    Estimate {
        secs: model.evaluate(x),
        half_secs: intervals.interval(model, x).map(|(lo, hi)| (hi - lo) / 2.0),
    }
}

/// Every parameter named takes at least the values a PMNF model needs over the short runs:
/// said once for the parameter, not once for every call path that could not be modelled.
fn enough_values(runs: &[RunSplit<'_>], parameters: &[String]) -> Result<(), ModelError> {
    for p in parameters {
        let mut values: Vec<f64> = runs
            .iter()
            .filter_map(|r| {
                numeric_parameters(&r.info.parameters)
                    .into_iter()
                    .find(|(k, _)| k == p)
                    .map(|(_, v)| v)
            })
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let needed = yosoku_regression::pmnf::MINIMUM_POINTS;
        if values.len() < needed {
            let listed: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            return Err(ModelError::invalid(format!(
                "the short runs hold {} value(s) of `{p}` ({}); its models need at least {needed}: measure short runs at more values of `{p}`, or leave it out of `parameters`",
                values.len(),
                listed.join(", ")
            )));
        }
    }
    Ok(())
}

/// The target's coordinate in the order of `parameters`; a value the target gives for a
/// parameter not modelled must be every short run's (a rank count held fixed, say).
fn target_coordinate(
    target: &[(String, f64)],
    parameters: &[String],
    runs: &[RunSplit<'_>],
) -> Result<Vec<f64>, ModelError> {
    for (k, v) in target.iter().filter(|(k, _)| !parameters.contains(k)) {
        let off = runs.iter().find(|r| {
            numeric_parameters(&r.info.parameters)
                .iter()
                .find(|(g, _)| g == k)
                .is_none_or(|(_, w)| w != v)
        });
        if let Some(r) = off {
            return Err(ModelError::invalid(format!(
                "target: `{k}` is not a parameter modelled ({}), and the short run `{}` ({}) is not at {k}={v}: model `{k}` too, or predict at the value every short run has",
                parameters.join(", "),
                r.id,
                r.info.parameters
            )));
        }
    }
    parameters
        .iter()
        .map(|p| {
            target
                .iter()
                .find(|(k, _)| k == p)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    ModelError::invalid(format!(
                        "target: no value for `{p}`; the models are over {}",
                        parameters.join(", ")
                    ))
                })
        })
        .collect()
}

/// The measured runs of the target: each call path's (phase `total` for the whole run) mean
/// over them, after checking that every one is at the target's configuration.
fn measured_means(
    blocks: &RecordBatch,
    ranks: &RecordBatch,
    target: &[(String, f64)],
    full_iterations: u64,
) -> Result<BTreeMap<String, (f64, usize)>, ModelError> {
    let spec = CallPathSpec {
        over_ranks: OverRanks::Max,
        min_share: 0.0,
    };
    let runs = call_path_runs(blocks, ranks, &spec).map_err(|e| {
        ModelError::invalid(format!(
            "the measured runs (measured_blocks, measured_ranks): {e}"
        ))
    })?;
    check_measured_length(ranks, full_iterations)?;
    for (id, info) in read_runs(ranks)? {
        let given = numeric_parameters(&info.parameters);
        let differs = target.iter().find(|(k, v)| {
            given
                .iter()
                .find(|(g, _)| g == k)
                .is_none_or(|(_, w)| w != v)
        });
        if let Some((k, v)) = differs {
            return Err(ModelError::invalid(format!(
                "measured: run `{id}` is at {}, not at the target's {k}={v}: the measured runs are the run predicted",
                info.parameters
            )));
        }
    }
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for (key, _, secs) in crate::scaling::input::call_path_runs(&runs)? {
        let [_, _, variant, _] = key;
        let e = sums.entry(variant).or_default();
        e.0 += secs;
        e.1 += 1;
    }
    Ok(sums
        .into_iter()
        .map(|(k, (s, n))| (k, (s / n as f64, n)))
        .collect())
}

/// What every prediction of one target shares: where it is, what was measured there, how
/// much drift the short runs leave open, and the report's title.
struct Target<'a> {
    x: Vec<f64>,
    lengths: Lengths,
    configuration: String,
    title: String,
    level: f64,
    drift: f64,
    unsteady: bool,
    measured: Option<BTreeMap<String, (f64, usize)>>,
    device: &'a str,
    program: &'a str,
    model: &'a str,
}

impl Target<'_> {
    /// The baseline's row: the short runs' whole time at the target (`short`), times the
    /// lengths' ratio; its figures into `report` where it was measured.
    fn naive_row(&self, short: Estimate, report: &mut Vec<ReportCell>) -> PredictionRow {
        let ratio = self.lengths.full / self.lengths.reduced;
        let naive = (short.secs * ratio, short.half_secs.map(|h| h * ratio));
        let group = format!("the short runs' time (PMNF) x {ratio}");
        let mut row = self.row((WHOLE_RUN, "total"), naive, group, &mut Vec::new());
        row.variant = NAIVE.to_owned();
        if let (Some(m), Some(e)) = (row.measured_secs, row.error_pct) {
            let title = &self.title;
            let predicted = row.predicted_secs;
            report.push(ReportCell::number(
                title,
                NAIVE,
                "predicted",
                predicted,
                "s",
            ));
            report.push(ReportCell::number(title, NAIVE, "measured", m, "s"));
            report.push(ReportCell::number(title, NAIVE, "error", e, "%"));
        }
        row
    }

    /// A prediction row of `path` (of kind `kind`), its report cells into `report`.
    fn row(
        &self,
        (path, kind): (&str, &str),
        (predicted, half): (f64, Option<f64>),
        model_group: String,
        report: &mut Vec<ReportCell>,
    ) -> PredictionRow {
        let measured = self.measured.as_ref().and_then(|m| m.get(path));
        let error_pct = measured.map(|(m, _)| yosoku_tables::rows::error_pct(predicted, *m));
        let title = &self.title;
        report.push(ReportCell::number(title, path, "predicted", predicted, "s"));
        if let Some(h) = half {
            let pct = 100.0 * h / predicted.abs().max(f64::MIN_POSITIVE);
            report.push(ReportCell::number(title, path, "95 % half-width", pct, "%"));
        }
        if let (Some((m, _)), Some(e)) = (measured, error_pct) {
            report.push(ReportCell::number(title, path, "measured", *m, "s"));
            report.push(ReportCell::number(title, path, "error", e, "%"));
        }
        PredictionRow {
            model: self.model.to_owned(),
            device: self.device.to_owned(),
            program: self.program.to_owned(),
            variant: path.to_owned(),
            phase: kind.to_owned(),
            repetitions: measured.map_or(1, |(_, n)| *n as i64),
            predicted_secs: predicted,
            measured_secs: measured.map(|(m, _)| *m),
            error_pct,
            flags: self.unsteady.then(|| "unsteady".to_owned()),
            run_id: None,
            model_group: Some(model_group),
            validation: Some(BEYOND_MEASURED.to_owned()),
            held_out: Some(self.configuration.clone()),
            interval_secs: half.map(|h| (predicted - h, predicted + h)),
        }
    }
}

/// Each measured run made the iterations of the run predicted (within 2 %: a repeating unit
/// found in a long log can differ by an iteration or two); a run of another length is not the
/// run predicted.
fn check_measured_length(ranks: &RecordBatch, full_iterations: u64) -> Result<(), ModelError> {
    let input = Input::new("measured_ranks", &yosoku_tables::MPI_RANKS, ranks)?;
    let (run_id, iterations) = (
        input.utf8(yosoku_tables::col::RUN_ID)?,
        input.int64(yosoku_tables::col::ITERATIONS)?,
    );
    let expected = full_iterations as f64;
    for r in (0..input.rows()).filter(|&r| arrow_array::Array::is_valid(iterations, r)) {
        let made = iterations.value(r) as f64;
        if (made - expected).abs() > (0.02 * expected).max(1.0) {
            return Err(ModelError::invalid(format!(
                "measured: run `{}` made {made} main-loop iterations, the run predicted {expected}: the measured runs are of the target's length",
                run_id.value(r)
            )));
        }
    }
    Ok(())
}

/// The short runs split per call path, and the PMNF models of their parts.
struct Parts<'a> {
    runs: Vec<RunSplit<'a>>,
    lengths: Lengths,
    kept: Vec<(String, &'static str)>,
    /// The parts no PMNF model can take (a zero or negative value in some run): their values.
    unmodelled: BTreeMap<String, Vec<f64>>,
    scaling: Scaling,
}

/// Every short run split at the target's length per call path into its cost per step and once,
/// and both modelled over the runs' configurations (`spec.target` is not read).
fn fit_parts<'a>(
    spec: &StepsAndRanksSpec,
    rows: &'a BlockRows<'a>,
    infos: &'a [(String, RunInfo)],
) -> Result<Parts<'a>, ModelError> {
    let (runs, lengths) = split_runs(rows, infos, &spec.mpi)?;
    enough_values(&runs, &spec.scaling.parameters)?;
    let kept = kept_paths(&runs, spec.min_share);
    let (series, secs, unmodelled) = series_rows(&runs, &kept, lengths.unit);
    let scaling = scaling_models(
        &runs_batch(&series, &secs)?,
        &ScalingSpec {
            hold_out_largest: false,
            ..spec.scaling.clone()
        },
    )?;
    Ok(Parts {
        runs,
        lengths,
        kept,
        unmodelled,
        scaling,
    })
}

/// The PMNF models of the parts of the short runs of `blocks` / `ranks` (each call path's cost
/// per step and once, and the whole run's as measured), fitted as [`steps_and_ranks`] fits them
/// before it predicts: what an `mpi_steps_and_ranks_fit` step saves (`spec.target` is not read).
pub fn part_models(
    spec: &StepsAndRanksSpec,
    blocks: &RecordBatch,
    ranks: &RecordBatch,
) -> Result<Scaling, ModelError> {
    let rows = BlockRows::new("blocks", blocks)?;
    let infos = read_runs(ranks)?;
    Ok(fit_parts(spec, &rows, &infos)?.scaling)
}

/// Predicts the run at `spec.target` and `spec.mpi.size`'s full length from the short runs of
/// `blocks` / `ranks` (an `mpi_blocks` and `mpi_ranks` table of several runs), compared with the
/// mean of the measured runs of the target in `measured` (`mpi_blocks`, `mpi_ranks`) when given.
/// Beside the whole run, the baseline: the PMNF model of the short runs' time as measured,
/// scaled by the lengths' ratio.
pub fn steps_and_ranks(
    spec: &StepsAndRanksSpec,
    blocks: &RecordBatch,
    ranks: &RecordBatch,
    measured: Option<(&RecordBatch, &RecordBatch)>,
) -> Result<StepsAndRanks, ModelError> {
    let rows = BlockRows::new("blocks", blocks)?;
    let infos = read_runs(ranks)?;
    let Parts {
        runs,
        lengths,
        kept,
        unmodelled,
        scaling,
    } = fit_parts(spec, &rows, &infos)?;
    let unit = lengths.unit;
    let mut drifts: Vec<f64> = runs.iter().map(|r| r.drift_relative).collect();
    let unsteady: Vec<&str> = runs.iter().filter(|r| r.unsteady).map(|r| r.id).collect();
    let configuration = spec
        .target
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .chain(std::iter::once(format!("{unit}s={}", lengths.full)))
        .collect::<Vec<_>>()
        .join(";");
    let target = Target {
        x: target_coordinate(&spec.target, &scaling.parameters, &runs)?,
        lengths,
        title: format!(
            "One run predicted at {configuration}, from short runs over {}",
            scaling.parameters.join(", ")
        ),
        configuration,
        level: spec.scaling.level,
        drift: crate::median(&mut drifts),
        unsteady: !unsteady.is_empty(),
        measured: measured
            .map(|(b, r)| measured_means(b, r, &spec.target, lengths.full_iterations))
            .transpose()?,
        device: &runs[0].info.device,
        program: &runs[0].info.program,
        model: &spec.mpi.model,
    };
    let estimate = |variant: &str| -> Option<Estimate> {
        scaling
            .fits
            .iter()
            .find(|(k, _, _)| k[2] == variant)
            .map(|(_, m, intervals)| model_estimate(m, intervals, &target.x))
            .or_else(|| {
                unmodelled
                    .get(variant)
                    .map(|v| unmodelled_estimate(v, target.level))
            })
    };
    let (mut predictions, mut report) = (Vec::new(), Vec::new());
    let paths = std::iter::once((WHOLE_RUN.to_owned(), "total")).chain(kept);
    for (path, kind) in paths {
        let (Some(step), Some(once)) = (
            estimate(&per_step_variant(&path, unit)),
            estimate(&once_variant(&path)),
        ) else {
            report.push(ReportCell::text(
                &target.title,
                &path,
                "prediction",
                "not predicted: its cost per step or once could not be modelled (see the scaling models' `not modelled`)",
            ));
            continue;
        };
        let full = target.lengths.full;
        let predicted = once.secs + full * step.secs;
        let half = step.half_secs.zip(once.half_secs).map(|(s, o)| {
            ((full * s).powi(2) + o.powi(2) + (target.drift * predicted).powi(2)).sqrt()
        });
        report.push(ReportCell::number(
            &target.title,
            &path,
            format!("per {unit}"),
            step.secs,
            "s",
        ));
        report.push(ReportCell::number(
            &target.title,
            &path,
            "once",
            once.secs,
            "s",
        ));
        let group = format!("once + {full} x per {unit}");
        predictions.push(target.row((&path, kind), (predicted, half), group, &mut report));
    }
    if let Some(short) = estimate(&as_measured_variant()) {
        predictions.push(target.naive_row(short, &mut report));
    }
    report.insert(
        0,
        ReportCell::text(
            &target.title,
            "how",
            "prediction",
            how_it_was_predicted(runs.len(), unit, target.drift, &unsteady, target.level),
        ),
    );
    Ok(StepsAndRanks {
        scaling,
        predictions,
        report,
    })
}

/// The baseline's row: the short runs' whole time modelled and scaled by the lengths' ratio.
pub const NAIVE: &str = "whole run, naive (the short runs' time x the lengths' ratio)";

fn how_it_was_predicted(
    runs: usize,
    unit: &str,
    drift: f64,
    unsteady: &[&str],
    level: f64,
) -> String {
    let warning = if unsteady.is_empty() {
        String::new()
    } else {
        let named = match unsteady.len() {
            n @ 4.. => format!("{}, and {} more", unsteady[..3].join(", "), n - 3),
            _ => unsteady.join(", "),
        };
        format!(
            "Warning: {} of {runs} short runs ({named}) show no steady state for a run this long; the cost per {unit} may drift beyond the interval. ",
            unsteady.len()
        )
    };
    format!(
        "{warning}Each of {runs} short runs split by simplified execution into its cost per {unit} and what runs once; both modelled over the configurations (PMNF); predicted = once + {unit}s x per {unit}. The {:.0} % interval: both models' intervals and the drift the short runs cannot exclude (median {:.1} % of the prediction).",
        100.0 * level,
        100.0 * drift
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use yosoku_regression::pmnf::Aggregate;

    use super::*;
    use crate::fixtures::{RankRow, mpi_blocks, mpi_ranks_iterations};
    use crate::mpi::{RunToRun, Trend, Warmup};

    /// Per iteration, rank-independent compute `0.01 n^2` and communication
    /// `0.001 + 0.002 log2 ranks`; `setup` 1 s and `teardown` 0.5 s once.
    fn law(n: f64, ranks: i32) -> (f64, f64) {
        (0.01 * n * n, 0.001 + 0.002 * f64::from(ranks).log2())
    }

    /// Runs of `iterations` at every (n, ranks), all in one pair of tables.
    fn runs(configurations: &[(f64, i32)], iterations: usize) -> (RecordBatch, RecordBatch) {
        let (mut blocks, mut ranks) = (Vec::new(), Vec::new());
        let ids: Vec<String> = configurations
            .iter()
            .map(|(n, r)| format!("n{n}-{r}ranks"))
            .collect();
        let params: Vec<String> = configurations
            .iter()
            .map(|(n, _)| format!("n={n}"))
            .collect();
        let mut rank_rows: Vec<RankRow<'_>> = Vec::new();
        for (i, &(n, r)) in configurations.iter().enumerate() {
            let per = law(n, r);
            let all: Vec<(i32, Vec<(f64, f64)>)> =
                (0..r).map(|k| (k, vec![per; iterations])).collect();
            blocks.push(mpi_blocks(&ids[i], &all));
            let wall = 1.5 + iterations as f64 * (per.0 + per.1);
            for k in 0..r {
                rank_rows.push((&ids[i], k, r, Some(&params[i]), wall));
            }
        }
        ranks.push(mpi_ranks_iterations(&rank_rows, iterations as i64));
        let cat =
            |b: &[RecordBatch]| arrow_select::concat::concat_batches(&b[0].schema(), b).unwrap();
        (cat(&blocks), cat(&ranks))
    }

    fn spec(target: &[(&str, f64)], full: u64) -> StepsAndRanksSpec {
        StepsAndRanksSpec {
            mpi: MpiSpec {
                model: "s".into(),
                size: RunSize::Iterations(full),
                warmup: Warmup::Iterations(0),
                pooled_warmup: BTreeMap::new(),
                trend: Trend::Flag,
                published: None,
                run_to_run: RunToRun::Off,
                shorter: BTreeMap::new(),
            },
            scaling: ScalingSpec {
                parameters: vec!["n".into(), "ranks".into()],
                aggregate: Aggregate::Mean,
                hold_out_largest: false,
                level: 0.95,
                allow_negative_exponents: false,
                search: Default::default(),
            },
            target: target.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
            min_share: 0.0,
        }
    }

    /// Four input sizes: on three powers of two, n log2(n)^2 is n^2 plus a constant and a scale
    /// (2, 16, 72 against 4, 16, 64), and Extra-P's order, which lists it first, keeps it.
    fn grid() -> Vec<(f64, i32)> {
        [2.0, 4.0, 8.0, 16.0]
            .iter()
            .flat_map(|&n| [1, 2, 4].map(|r| (n, r)))
            .collect()
    }

    #[test]
    fn a_run_at_more_ranks_a_larger_input_and_more_steps_is_predicted_from_short_runs() {
        let (blocks, ranks) = runs(&grid(), 10);
        let (m_blocks, m_ranks) = runs(&[(32.0, 8)], 100);
        let out = steps_and_ranks(
            &spec(&[("n", 32.0), ("ranks", 8.0)], 100),
            &blocks,
            &ranks,
            Some((&m_blocks, &m_ranks)),
        )
        .unwrap();
        let (c, m) = law(32.0, 8);
        let whole = &out.predictions[0];
        assert_eq!(whole.variant, WHOLE_RUN);
        assert_eq!(
            whole.held_out.as_deref(),
            Some("n=32;ranks=8;iterations=100")
        );
        let expected = 1.5 + 100.0 * (c + m);
        assert!(
            (whole.predicted_secs - expected).abs() < 1e-6 * expected,
            "{whole:?}"
        );
        assert!(whole.error_pct.unwrap().abs() < 1e-4, "{whole:?}");
        let path = |name: &str| out.predictions.iter().find(|p| p.variant == name).unwrap();
        assert!((path("stencil").predicted_secs - 100.0 * c).abs() < 1e-6);
        assert!((path("MPI_Allreduce@a+0x1").predicted_secs - 100.0 * m).abs() < 1e-6);
        // setup never repeats: its cost per step is 0, what it costs once its 1 s.
        assert!((path("setup").predicted_secs - 1.0).abs() < 1e-9);
        // The baseline scales the short runs' whole time, setup and all, by 100 / 10.
        let naive = path(NAIVE);
        assert_eq!(
            naive.model_group.as_deref(),
            Some("the short runs' time (PMNF) x 10")
        );
        assert!(naive.error_pct.unwrap() > 1.0, "{naive:?}");
        // The per-step models are the laws: n^2 for the compute, log2(ranks) for the
        // communication; both shown as scaling models.
        let formula = |variant: &str, phase: &str| {
            let (_, m, _) = out
                .scaling
                .fits
                .iter()
                .find(|(k, _, _)| k[2] == variant && k[3] == phase)
                .unwrap_or_else(|| panic!("{variant} / {phase}"));
            m.to_extrap(&["n", "ranks"])
        };
        assert!(formula("stencil, per iteration", "compute").contains("n^(2)"));
        assert!(
            formula("MPI_Allreduce@a+0x1, per iteration", "communication").contains("log2(ranks)")
        );
        assert!(out.scaling.models.num_rows() >= 4);
    }

    /// The error of predicting `target` at `full` iterations from the short runs `short`, the
    /// measured runs `measured` beside.
    fn error(
        target: &[(&str, f64)],
        full: u64,
        short: &(RecordBatch, RecordBatch),
        measured: Option<(&RecordBatch, &RecordBatch)>,
    ) -> String {
        steps_and_ranks(&spec(target, full), &short.0, &short.1, measured)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_target_off_the_models_and_a_measured_run_elsewhere_are_named() {
        let short = runs(&grid(), 10);
        let target = [("n", 16.0), ("ranks", 8.0)];
        assert!(error(&[("n", 16.0)], 100, &short, None).contains("no value for `ranks`"));
        let e = error(
            &[("n", 16.0), ("ranks", 8.0), ("p", 1.0)],
            100,
            &short,
            None,
        );
        assert!(e.contains("`p` is not a parameter modelled (n, ranks), and the short run `n16-1ranks` (n=16;ranks=1) is not at p=1"), "{e}");
        let (m_blocks, m_ranks) = runs(&[(8.0, 8)], 100);
        let e = error(&target, 100, &short, Some((&m_blocks, &m_ranks)));
        assert!(
            e.contains("run `n8-8ranks` is at n=8;ranks=8, not at the target's n=16"),
            "{e}"
        );
        // Measured runs of another length are not the run predicted.
        let (m_blocks, m_ranks) = runs(&[(16.0, 8)], 50);
        let e = error(&target, 100, &short, Some((&m_blocks, &m_ranks)));
        assert!(
            e.contains("run `n16-8ranks` made 50 main-loop iterations, the run predicted 100"),
            "{e}"
        );
        // Measured blocks with the short runs' ranks: the measured tables are named.
        let e = error(&target, 100, &short, Some((&m_blocks, &short.1)));
        assert!(
            e.contains("the measured runs (measured_blocks, measured_ranks): blocks: run `n16-8ranks` is not in the ranks table"),
            "{e}"
        );
        // The run predicted must be longer than the short runs.
        let e = error(&target, 10, &short, None);
        assert!(e.contains("not longer than the short run"), "{e}");
        // Two sizes: said once for the parameter, not per call path.
        let two = runs(&[(2.0, 1), (4.0, 1), (2.0, 2), (4.0, 2)], 10);
        let e = error(&[("n", 16.0), ("ranks", 2.0)], 100, &two, None);
        assert!(
            e.contains("the short runs hold 2 value(s) of `n` (2, 4); its models need at least 3"),
            "{e}"
        );
    }
}
