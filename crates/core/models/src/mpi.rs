//! Simplified-execution prediction of MPI runs (Chida et al., docs/methods.md, section 3).
//!
//! A reduced run (few main-loop iterations) is measured block by block, compute and
//! communication in the same run, so a fast rank's waiting for a slow one is inside its
//! communication blocks. Per rank and block: everything the reduced run of `k` iterations
//! measured happens in the full run of `N` too; the `N - k` further iterations each run the
//! block as often as a steady iteration did, at its mean time per execution after the warm-up
//! iterations (which are excluded from the mean). Blocks outside the loop run once. That is
//! `mean x count` with the warm-up iterations counted as measured. The run takes as long as its
//! slowest rank.
//!
//! - [`simplified`]: the paper's method.
//! - [`separate_runs`]: the earlier method (MPIETE) as a baseline: compute blocks from one run,
//!   communication blocks from a communication-only run, so waiting is missed.
//! - [`best_configuration`]: one prediction per reduced run of several configurations (rank
//!   counts, bindings), ranked.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{Array, StringArray};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch};
use yosoku_tables::{MPI_BLOCK_PREDICTIONS, MPI_BLOCKS, MPI_RANKS, col};

use crate::mpi_loop::{
    Line, Occurrence, OccurrenceCount, RunSize, changepoint_warmup, full_iterations,
    periodic_count, t975,
};
use crate::{Input, ModelError, median};
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::rows::{PredictionRow, predictions_batch};

/// How the warm-up iterations, excluded from the means, are chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Warmup {
    /// A change-point test on the per-iteration times ([`crate::mpi_loop::changepoint_warmup`]):
    /// the same cut on repeats of one run.
    ChangePoint,
    /// The leading iterations whose time differs from the steady time (the median of the
    /// second half of the iterations) by more than `tolerance` (a fraction). At most half the
    /// iterations are excluded; a rank that never settles is flagged `unsettled`.
    Auto { tolerance: f64 },
    /// Exactly this many leading iterations.
    Iterations(usize),
}

/// What to do with a per-iteration cost that drifts over the reduced run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trend {
    /// Flag it (`trend=...` in the flags) and predict with the steady mean.
    Flag,
    /// Extrapolate the straight line through the steady iterations' times to the full run's.
    Linear,
}

/// A drift is reported when the slope's t statistic exceeds this.
const TREND_T: f64 = 3.0;

/// What every MPI prediction needs.
#[derive(Debug, Clone, PartialEq)]
pub struct MpiSpec {
    /// The step id, in the `model` columns.
    pub model: String,
    /// The run to predict: its iterations, or its steps in the program's own units.
    pub size: RunSize,
    pub warmup: Warmup,
    /// The warm-up of each rank chosen once for several repeats of the reduced run
    /// ([`pooled_warmups`]); when it names a rank, it replaces `warmup` there.
    pub pooled_warmup: BTreeMap<i32, usize>,
    pub trend: Trend,
    /// The paper's figure for this setting, printed beside ours in the report.
    pub published: Option<String>,
    /// The run-to-run variation the interval carries beside the reduced run's own noise.
    pub run_to_run: RunToRun,
}

/// The 95 % half-width, in percent of the prediction, that a prediction's interval carries for
/// run-to-run variation when there are no repeats to measure it on: a prior, not a fit. A
/// dedicated node's repeats of an MPI run typically differ by a few percent; a shared machine's
/// by more (set `run_to_run_pct`).
pub const DEFAULT_RUN_TO_RUN_PCT: f64 = 5.0;

/// The run-to-run variation a prediction's interval carries beside the reduced run's own
/// iteration-to-iteration noise (which is all the published method's interval has): two runs
/// of one input on one machine differ by more than their iterations do (docs/methods.md,
/// section 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunToRun {
    /// Measured on repeats of the reduced run: the sample standard deviation of the repeats'
    /// predictions of the same run over their mean; `floor_pct` (the user's) bounds it below.
    Repeats {
        relative_sd: f64,
        repeats: usize,
        floor_pct: Option<f64>,
    },
    /// A 95 % half-width in percent of the prediction: the user's (`run_to_run_pct`) or
    /// [`DEFAULT_RUN_TO_RUN_PCT`].
    Floor { pct: f64, user: bool },
    /// The reduced run's own noise only (the published method).
    Off,
}

impl RunToRun {
    /// The 95 % half-width it adds, relative to the prediction, for a prediction that is the
    /// mean of `combined` repeats' (1: one reduced run's).
    pub fn relative_half(&self, combined: usize) -> f64 {
        let k = (combined.max(1) as f64).sqrt();
        match *self {
            Self::Repeats {
                relative_sd,
                repeats,
                floor_pct,
            } => {
                let t = yosoku_regression::ols::t_quantile(
                    repeats.saturating_sub(1).max(1) as f64,
                    0.975,
                )
                .unwrap_or(f64::INFINITY);
                (t * relative_sd / k).max(floor_pct.unwrap_or(0.0) / 100.0 / k)
            }
            Self::Floor { pct, .. } => pct / 100.0 / k,
            Self::Off => 0.0,
        }
    }

    /// Whether it already holds the reduced run's own iteration-to-iteration noise: the
    /// repeats' predictions differ by that noise too (each averages other iterations), so their
    /// spread is the prediction's whole variation, and adding the within-run half again would
    /// count it twice.
    pub fn holds_within_run(&self) -> bool {
        matches!(self, Self::Repeats { .. })
    }

    /// What the report says of it.
    pub fn describe(&self, combined: usize) -> String {
        let pct = 100.0 * self.relative_half(combined);
        let of = if combined > 1 {
            format!(", of the mean of {combined} repeats' predictions")
        } else {
            String::new()
        };
        match *self {
            Self::Repeats {
                relative_sd,
                repeats,
                floor_pct,
            } => format!(
                "+-{pct:.1} % run-to-run{of}: t(0.975, {}) x the {repeats} repeats' spread ({:.1} % sd of their predictions){}, which holds the reduced runs' own noise (not added again)",
                repeats - 1,
                100.0 * relative_sd,
                floor_pct.map_or(String::new(), |f| format!(
                    ", at least run_to_run_pct = {f} %"
                ))
            ),
            Self::Floor { pct: given, user } => format!(
                "+-{pct:.1} % run-to-run{of}: {} (no repeats of the reduced run to measure it on), beside the reduced run's own noise",
                if user {
                    format!("run_to_run_pct = {given} %, the user's")
                } else {
                    format!("the default {given} % (no repeats given; run_to_run_pct sets it)")
                }
            ),
            Self::Off => {
                "the reduced run's own noise only (run-to-run variation left out)".to_owned()
            }
        }
    }
}

/// One execution of a block: 16 bytes, so that a reduced run of tens of millions of
/// executions fits beside its table (the block's name is an index into [`RankRun::names`]).
#[derive(Debug, Clone, Copy)]
struct Execution {
    duration_secs: f64,
    /// The main-loop iteration, [`NO_ITERATION`] outside the loop.
    iteration: u32,
    /// The block's index in [`RankRun::names`], and [`COMPUTE_BIT`] for a compute block.
    block_and_kind: u32,
}

/// [`Execution::iteration`] of a block outside the main loop.
const NO_ITERATION: u32 = u32::MAX;

/// The bit of [`Execution::block_and_kind`] that marks a compute block.
const COMPUTE_BIT: u32 = 1 << 31;

const _: () = assert!(std::mem::size_of::<Execution>() == 16);

impl Execution {
    fn iteration(&self) -> Option<i64> {
        (self.iteration != NO_ITERATION).then_some(i64::from(self.iteration))
    }

    /// The block's index in its run's names.
    fn block(&self) -> usize {
        (self.block_and_kind & !COMPUTE_BIT) as usize
    }

    fn compute(&self) -> bool {
        self.block_and_kind & COMPUTE_BIT != 0
    }
}

/// One rank of one run: its rows of the table, read as executions on each pass
/// ([`RankRun::executions`]) and not kept (16 bytes an execution was 0.3 GB beside the table
/// for a rank of ten million calls).
#[derive(Clone, Copy)]
struct RankRun<'a> {
    rows: &'a BlockRows<'a>,
    stretches: &'a [std::ops::Range<usize>],
}

impl<'a> RankRun<'a> {
    fn device(&self) -> &'a str {
        self.rows
            .device
            .value(self.stretches.first().map_or(0, |r| r.start))
    }

    /// The distinct block names of the table ([`Execution::block`] indexes them).
    fn names(&self) -> &'a [Arc<str>] {
        &self.rows.names
    }

    fn name(&self, block: usize) -> &'a str {
        &self.rows.names[block]
    }

    /// The rank's executions in time order.
    fn executions(&self) -> impl Iterator<Item = Execution> + 'a {
        let rows = self.rows;
        self.stretches
            .iter()
            .flat_map(|r| r.clone())
            .map(move |i| rows.execution(i))
    }
}

/// The distinct block names of a table, numbered in order of first sight.
#[derive(Default)]
struct BlockNumbering {
    ids: HashMap<String, u32>,
    names: Vec<Arc<str>>,
}

impl BlockNumbering {
    fn number(&mut self, name: &str) -> u32 {
        let names = &mut self.names;
        *self.ids.entry(name.to_owned()).or_insert_with(|| {
            names.push(Arc::from(name));
            (names.len() - 1) as u32
        })
    }
}

/// The rows of an `mpi_blocks` table by run and rank, with the columns a rank's executions are
/// made of: a rank is read when it is wanted ([`BlockRows::rank_run`]), so that a prediction
/// holds one rank's executions at a time beside the table, not every rank's.
struct BlockRows<'a> {
    role: &'static str,
    device: yosoku_tables::text::Text<'a>,
    iteration: &'a arrow_array::Int64Array,
    duration: &'a arrow_array::Float64Array,
    /// Each row's block number ([`BlockNumbering`]), by its text.
    blocks: yosoku_tables::text::Lookup<'a, u32>,
    /// Whether a row is a compute block, by its text.
    compute: yosoku_tables::text::Lookup<'a, bool>,
    names: Vec<Arc<str>>,
    /// run id -> rank -> the stretches of rows of that rank, in table order.
    ranks: BTreeMap<String, RankRows>,
}

/// rank -> the stretches of rows of that rank in an `mpi_blocks` table, in table order.
type RankRows = BTreeMap<i32, Vec<std::ops::Range<usize>>>;

impl<'a> BlockRows<'a> {
    fn new(role: &'static str, batch: &'a RecordBatch) -> Result<Self, ModelError> {
        let input = Input::new(role, &MPI_BLOCKS, batch)?;
        let run_id = input.utf8(col::RUN_ID)?;
        let rank = input.int32(col::RANK)?;
        // Each distinct text numbered once (a dictionary column's once per value).
        let numbering: RefCell<BlockNumbering> = RefCell::default();
        let blocks = input
            .utf8(col::BLOCK)?
            .lookup(|b| numbering.borrow_mut().number(b));
        let names = numbering.into_inner().names;
        if names.len() as u64 >= u64::from(COMPUTE_BIT) {
            return Err(ModelError::invalid(format!(
                "input `{role}`: {} distinct blocks; at most {} are read",
                names.len(),
                COMPUTE_BIT - 1
            )));
        }
        // The rows taken a stretch of one run and rank at a time (a rank's blocks come
        // together).
        let mut ranks: BTreeMap<String, RankRows> = BTreeMap::new();
        let n = input.rows();
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && rank.value(end) == rank.value(start) && run_id.same(start, end) {
                end += 1;
            }
            ranks
                .entry(run_id.value(start).to_owned())
                .or_default()
                .entry(rank.value(start))
                .or_default()
                .push(start..end);
            start = end;
        }
        if ranks.is_empty() {
            return Err(ModelError::invalid(format!(
                "input `{role}`: no MPI blocks (an empty `mpi_blocks` table)"
            )));
        }
        let iteration = input.int64(col::ITERATION)?;
        if let Some((i, v)) = iteration
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((i, v?)))
            .find(|&(_, v)| u32::try_from(v).map_or(true, |v| v == NO_ITERATION))
        {
            return Err(ModelError::invalid(format!(
                "input `{role}`: row {i} has iteration {v}, outside 0 to {}",
                NO_ITERATION - 1
            )));
        }
        Ok(Self {
            role,
            device: input.utf8(col::DEVICE)?,
            iteration,
            duration: input.float64(col::DURATION_SECS)?,
            blocks,
            compute: input.utf8(col::KIND)?.lookup(|k| k == "compute"),
            names,
            ranks,
        })
    }

    /// Row `i` as an execution (its iteration checked in [`BlockRows::new`]).
    #[inline]
    fn execution(&self, i: usize) -> Execution {
        Execution {
            duration_secs: self.duration.value(i),
            iteration: if self.iteration.is_null(i) {
                NO_ITERATION
            } else {
                self.iteration.value(i) as u32
            },
            block_and_kind: *self.blocks.get(i)
                | if *self.compute.get(i) { COMPUTE_BIT } else { 0 },
        }
    }

    /// The rank whose rows are `stretches`.
    fn rank_run(&'a self, stretches: &'a [std::ops::Range<usize>]) -> RankRun<'a> {
        RankRun {
            rows: self,
            stretches,
        }
    }

    /// The one run of a table that must hold one, its ranks' stretches of rows.
    fn single_run(&self) -> Result<(&str, &RankRows), ModelError> {
        if self.ranks.len() != 1 {
            return Err(single_run_error(
                self.role,
                self.ranks.keys().map(String::as_str),
            ));
        }
        let (id, ranks) = self.ranks.iter().next().expect("one run");
        Ok((id.as_str(), ranks))
    }
}

/// Why a table that must hold one run does not: it holds the runs `ids`.
fn single_run_error<'s>(role: &str, ids: impl ExactSizeIterator<Item = &'s str>) -> ModelError {
    let n = ids.len();
    ModelError::invalid(format!(
        "input `{role}` holds {n} runs ({}); this step predicts one run from one reduced run: filter the table on `run_id`, or use `mpi_best_configuration` to compare runs",
        ids.collect::<Vec<_>>().join(", ")
    ))
}

fn no_iterations(role: &str, run_id: &str, rank: i32) -> ModelError {
    ModelError::invalid(format!(
        "input `{role}`: rank {rank} of run `{run_id}` has no main-loop iterations (no repeating MPI call sites and no yosoku_mpi_iteration markers); a simplified-execution prediction scales the loop"
    ))
}

/// Iterations of a rank: their count and the time of each.
fn iteration_times(
    role: &str,
    run_id: &str,
    rank: i32,
    run: &RankRun,
) -> Result<Vec<f64>, ModelError> {
    let mut times: Vec<f64> = Vec::new();
    for e in run.executions() {
        if let Some(i) = e.iteration() {
            let i = i as usize;
            if times.len() <= i {
                times.resize(i + 1, 0.0);
            }
            times[i] += e.duration_secs;
        }
    }
    if times.is_empty() {
        return Err(no_iterations(role, run_id, rank));
    }
    Ok(times)
}

/// The warm-up iterations of a rank, and whether its times settled.
fn warmup_iterations(times: &[f64], warmup: Warmup) -> Result<(usize, bool), String> {
    let k = times.len();
    match warmup {
        Warmup::Iterations(w) if w >= k => Err(format!(
            "warmup_iterations = {w} leaves none of the reduced run's {k} iterations to take the mean over"
        )),
        Warmup::Iterations(w) => Ok((w, true)),
        Warmup::ChangePoint => Ok(changepoint_warmup(times)),
        Warmup::Auto { tolerance } if !(tolerance.is_finite() && tolerance >= 0.0) => Err(format!(
            "warmup_tolerance = {tolerance}: expected a fraction >= 0 (0.1 = within 10 % of the steady time)"
        )),
        Warmup::Auto { tolerance } => {
            let mut tail = times[k / 2..].to_vec();
            let steady = median(&mut tail);
            let limit = k / 2;
            match times
                .iter()
                .take(limit + 1)
                .position(|t| (t - steady).abs() <= tolerance * steady)
            {
                Some(w) => Ok((w.min(limit), true)),
                None => Ok((limit, false)),
            }
        }
    }
}

/// One block of one rank, predicted.
#[derive(Debug, Clone, PartialEq)]
struct BlockPrediction {
    block: String,
    compute: bool,
    in_loop: bool,
    /// `setup`, `loop`, `periodic` or `teardown`.
    role: &'static str,
    period_iterations: Option<i64>,
    warmup_secs: f64,
    steady_executions: i64,
    mean_secs: Option<f64>,
    full_executions: f64,
    predicted_secs: f64,
}

/// A rank's prediction from one run's blocks.
#[derive(Debug, Clone, PartialEq)]
struct RankPrediction {
    device: String,
    iterations: usize,
    /// Of the run predicted, and how they were derived from its steps.
    full_iterations: u64,
    size_note: Option<String>,
    warmup: usize,
    settled: bool,
    /// Half-width of the 95 % prediction interval of the rank's total.
    interval_half_secs: f64,
    /// Drift of the per-iteration cost: percent per 1,000 iterations, when significant.
    trend_pct_per_1000: Option<f64>,
    trend_extrapolated: bool,
    periodic_blocks: usize,
    /// Everything the reduced run measured on this rank.
    reduced_secs: f64,
    blocks: Vec<BlockPrediction>,
}

impl RankPrediction {
    fn secs(&self, compute: bool) -> f64 {
        self.blocks
            .iter()
            .filter(|b| b.compute == compute)
            .map(|b| b.predicted_secs)
            .sum()
    }
}

fn predict_rank(
    role: &str,
    run_id: &str,
    rank: i32,
    run: &RankRun,
    spec: &MpiSpec,
) -> Result<RankPrediction, ModelError> {
    let all_times = iteration_times(role, run_id, rank, run)?;
    let k = all_times.len();
    let at = |e: String| ModelError::invalid(format!("rank {rank} of run `{run_id}`: {e}"));
    let (full, size_note) = full_iterations(spec.size, k).map_err(|e| at(e.to_string()))?;
    let occurrences = LoopOccurrences::of(run, k);
    // Per-iteration times without the periodic blocks (their spikes are not a warm-up, nor
    // noise of the steady iterations).
    // A periodic block's executions and time inside the loop: those before or after it (setup,
    // teardown) happen once however long the run, so only these are extrapolated.
    let times = loop_times(run, k, &occurrences);
    let mut periodic_in_loop: HashMap<usize, (f64, f64)> = HashMap::new();
    for e in run.executions() {
        if e.iteration().is_some() && occurrences.is_periodic(e.block()) {
            let (n, secs) = periodic_in_loop.entry(e.block()).or_default();
            *n += 1.0;
            *secs += e.duration_secs;
        }
    }
    let (w, settled) = match spec.pooled_warmup.get(&rank) {
        Some(&w) => (w.min(k - 1), true),
        None => warmup_iterations(&times, spec.warmup).map_err(at)?,
    };
    let steady = SteadyIterations::of(&times, w, full, spec.trend);
    let (order, mut acc) = block_sums(run, w, &occurrences);
    let steady_iterations = (k - w) as f64;
    let mut periodic_blocks = 0;
    let blocks = order
        .into_iter()
        .filter_map(|key| acc[key].take().map(|b| (key, b)))
        .map(|(key, mut b)| {
            if b.in_loop {
                b.role = "loop";
            }
            if let Some(Occurrence::Periodic { period, phase }) = occurrences.by_block[key] {
                // Measured as it ran (all its executions are in `warmup_secs` so far); the full
                // run's further occurrences at its period and phase, each as long as the
                // reduced run's on average.
                periodic_blocks += 1;
                let seen = occurrences.present[key] as f64;
                let more = periodic_count(full, period, phase) as f64 - seen;
                let (executions, secs) = (b.full_executions, b.warmup_secs);
                let (in_loop, in_loop_secs) = periodic_in_loop[&key];
                b.role = "periodic";
                b.period_iterations = Some(period as i64);
                b.mean_secs = Some(secs / executions);
                b.full_executions = executions + more * in_loop / seen;
                b.predicted_secs = secs + more * in_loop_secs / seen;
            } else if let Some(sum) = b.mean_secs {
                let executions = b.steady_executions as f64;
                let mean = sum / executions;
                b.mean_secs = Some(mean);
                let per_iteration = per_iteration(executions, steady_iterations);
                b.full_executions += executions + steady.extra * per_iteration;
                b.predicted_secs =
                    b.warmup_secs + sum + steady.extra * per_iteration * mean * steady.factor;
            } else {
                b.predicted_secs = b.warmup_secs;
            }
            b
        })
        .collect();
    Ok(RankPrediction {
        device: run.device().to_owned(),
        iterations: k,
        full_iterations: full,
        size_note,
        warmup: w,
        settled,
        interval_half_secs: steady.interval_half_secs,
        trend_pct_per_1000: steady.trend_pct_per_1000,
        trend_extrapolated: steady.extrapolate,
        periodic_blocks,
        reduced_secs: run.executions().map(|e| e.duration_secs).sum(),
        blocks,
    })
}

/// The time of each loop iteration of a rank, without its periodic blocks (their spikes are
/// neither a warm-up nor noise of the steady iterations).
fn loop_times(run: &RankRun, k: usize, occurrences: &LoopOccurrences) -> Vec<f64> {
    let mut times = vec![0.0; k];
    for e in run.executions() {
        if let Some(i) = e.iteration()
            && !occurrences.is_periodic(e.block())
        {
            times[i as usize] += e.duration_secs;
        }
    }
    times
}

/// One warm-up per rank for several repeats of one reduced run (each an `mpi_blocks` table of
/// one run, the same ranks): the change-point test on the median, iteration by iteration, of
/// their per-iteration times (as many iterations as the shortest has), so that every repeat
/// excludes the same iterations instead of each its own (docs/methods.md, section 3).
pub fn pooled_warmups(repeats: &[&RecordBatch]) -> Result<BTreeMap<i32, usize>, ModelError> {
    let mut series: BTreeMap<i32, Vec<Vec<f64>>> = BTreeMap::new();
    let mut first_ranks: Option<(String, Vec<i32>)> = None;
    for batch in repeats {
        let rows = BlockRows::new("warmup_from", batch)?;
        let (id, ranks) = rows.single_run()?;
        let these: Vec<i32> = ranks.keys().copied().collect();
        match &first_ranks {
            Some((first, r)) if *r != these => {
                return Err(ModelError::invalid(format!(
                    "input `warmup_from`: runs `{first}` and `{id}` have different ranks ({} and {}); repeats of one reduced run have the same",
                    r.len(),
                    these.len()
                )));
            }
            Some(_) => {}
            None => first_ranks = Some((id.to_owned(), these)),
        }
        for (rank, stretches) in ranks {
            let run = rows.rank_run(stretches);
            let k = iteration_times("warmup_from", id, *rank, &run)?.len();
            let occurrences = LoopOccurrences::of(&run, k);
            series
                .entry(*rank)
                .or_default()
                .push(loop_times(&run, k, &occurrences));
        }
    }
    Ok(series
        .into_iter()
        .map(|(rank, runs)| {
            let n = runs.iter().map(Vec::len).min().unwrap_or(0);
            let pooled: Vec<f64> = (0..n)
                .map(|i| {
                    let mut at: Vec<f64> = runs.iter().map(|t| t[i]).collect();
                    median(&mut at)
                })
                .collect();
            (rank, changepoint_warmup(&pooled).0)
        })
        .collect())
}

/// Which iterations each loop block ran in, and so which blocks are periodic (every k-th
/// iteration); both by [`Execution::block`].
struct LoopOccurrences {
    /// How many iterations each block ran in (0 for blocks outside the loop).
    present: Vec<u64>,
    by_block: Vec<Option<Occurrence>>,
}

impl LoopOccurrences {
    fn of(run: &RankRun, k: usize) -> Self {
        let mut counted = vec![OccurrenceCount::default(); run.names().len()];
        for e in run.executions() {
            if let Some(i) = e.iteration() {
                counted[e.block()].push(i as u64);
            }
        }
        Self {
            present: counted.iter().map(OccurrenceCount::count).collect(),
            by_block: counted
                .iter()
                .map(|c| (c.count() > 0).then(|| c.occurrence(k as u64)))
                .collect(),
        }
    }

    fn is_periodic(&self, block: usize) -> bool {
        matches!(self.by_block[block], Some(Occurrence::Periodic { .. }))
    }
}

/// What the steady iterations say of the full run's extra ones: the line through their times
/// (a drift, extrapolated under `Trend::Linear`), the cost of an extra iteration relative to a
/// steady one, and the 95 % interval of the extra iterations' total.
struct SteadyIterations {
    /// Iterations the full run makes beyond the reduced one.
    extra: f64,
    /// Extra iterations cost `factor` times a steady one (1 without extrapolation).
    factor: f64,
    extrapolate: bool,
    trend_pct_per_1000: Option<f64>,
    interval_half_secs: f64,
}

impl SteadyIterations {
    /// From the per-iteration `times` of a reduced run whose warm-up is the first `w`, for a
    /// full run of `full` iterations.
    fn of(times: &[f64], w: usize, full: u64, trend: Trend) -> Self {
        let k = times.len();
        // The steady iterations: their line (drift), spread (interval).
        let line = Line::fit(w, &times[w..]);
        let steady_mean = line.at(line.mean_x);
        let extra = (full - k as u64) as f64;
        let extra_mean_x = (k as f64 + full as f64 - 1.0) / 2.0;
        let drifting = line.slope_t().abs() > TREND_T && steady_mean > 0.0;
        let trend_pct_per_1000 = drifting.then(|| 100.0 * line.slope * 1000.0 / steady_mean);
        let extrapolate = drifting && trend == Trend::Linear;
        let factor = if extrapolate && steady_mean > 0.0 {
            (line.at(extra_mean_x) / steady_mean).max(0.0)
        } else {
            1.0
        };
        // 95 % interval of the extra iterations' total: the mean's (or the line's) uncertainty,
        // carried over `extra` iterations, and the iterations' own spread.
        let n = line.n.max(1) as f64;
        let mean_variance = if extrapolate && line.sxx > 0.0 {
            line.variance * (1.0 / n + (extra_mean_x - line.mean_x).powi(2) / line.sxx)
        } else {
            line.variance / n
        };
        let spread = if extrapolate {
            line.variance
        } else {
            // Around the mean (the line's variance would hide a drift that is not extrapolated).
            let m = times[w..].iter().sum::<f64>() / n;
            times[w..].iter().map(|t| (t - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)
        };
        let interval_half_secs = t975(line.n.saturating_sub(1).max(1))
            * (extra * extra * mean_variance.max(spread / n) + extra * spread).sqrt();
        Self {
            extra,
            factor,
            extrapolate,
            trend_pct_per_1000,
            interval_half_secs,
        }
    }
}

/// Each block's executions summed, blocks in order of first execution: steady executions (loop
/// iterations from `w` on, periodic blocks aside) into `mean_secs` (a sum for now), everything
/// else into `warmup_secs`. A block first run before the loop's first block is setup, after it
/// teardown (until it shows up in the loop).
fn block_sums(
    run: &RankRun,
    w: usize,
    occurrences: &LoopOccurrences,
) -> (Vec<usize>, Vec<Option<BlockPrediction>>) {
    let first_loop = run.executions().position(|e| e.iteration().is_some());
    let mut order: Vec<usize> = Vec::new();
    let mut acc: Vec<Option<BlockPrediction>> = vec![None; run.names().len()];
    for (index, e) in run.executions().enumerate() {
        let b = acc[e.block()].get_or_insert_with(|| {
            order.push(e.block());
            let before_loop = first_loop.is_none_or(|f| index < f);
            BlockPrediction {
                block: run.name(e.block()).to_owned(),
                compute: e.compute(),
                in_loop: false,
                role: if before_loop { "setup" } else { "teardown" },
                period_iterations: None,
                warmup_secs: 0.0,
                steady_executions: 0,
                mean_secs: None,
                full_executions: 0.0,
                predicted_secs: 0.0,
            }
        });
        match e.iteration() {
            Some(i) if i as usize >= w && !occurrences.is_periodic(e.block()) => {
                b.in_loop = true;
                b.steady_executions += 1;
                // The sum for now; divided by the caller.
                *b.mean_secs.get_or_insert(0.0) += e.duration_secs;
            }
            Some(_) => {
                b.in_loop = true;
                b.warmup_secs += e.duration_secs;
                b.full_executions += 1.0;
            }
            None => {
                b.warmup_secs += e.duration_secs;
                b.full_executions += 1.0;
            }
        }
    }
    (order, acc)
}

/// Executions of a block per iteration, from `executions` over `iterations`: a whole number when
/// the count is one execution off (a block between iterations runs once fewer than the loop).
fn per_iteration(executions: f64, iterations: f64) -> f64 {
    let raw = executions / iterations;
    let whole = raw.round();
    if whole > 0.0 && (executions - whole * iterations).abs() <= 1.0 {
        whole
    } else {
        raw
    }
}

/// Rank -> measured (compute, communication) seconds of a full run.
type MeasuredRanks = BTreeMap<i32, (f64, f64)>;

/// A measured full run: its id and its ranks' times.
#[derive(Debug, Clone)]
struct MeasuredRun {
    /// The run's id (repeats: their ids joined with `+`).
    id: String,
    /// Per rank, the mean over the repeats.
    ranks: MeasuredRanks,
    /// Main-loop iterations each rank ran.
    iterations: BTreeMap<i32, u64>,
    /// Each repeat's run time (its slowest rank's total).
    run_secs: Vec<f64>,
}

/// One run's measured ranks and the main-loop iterations each ran.
type RunTotals = (MeasuredRanks, BTreeMap<i32, u64>);

/// Per run, per rank of an `mpi_blocks` table: the compute and communication seconds (summed in
/// the table's order, as the executions ran) and the main-loop iterations run. All that a
/// measured run needs, read in one pass without keeping the executions: a full run's table has
/// a million of them, and three prediction steps may read it.
fn measured_totals(
    role: &'static str,
    batch: &RecordBatch,
) -> Result<BTreeMap<String, RunTotals>, ModelError> {
    #[derive(Default)]
    struct Totals {
        compute: f64,
        communication: f64,
        /// The highest iteration number seen.
        last_iteration: Option<i64>,
    }
    let input = Input::new(role, &MPI_BLOCKS, batch)?;
    let run_id = input.utf8(col::RUN_ID)?;
    let rank = input.int32(col::RANK)?;
    let kind = input.utf8(col::KIND)?;
    let iteration = input.int64(col::ITERATION)?;
    let duration = input.float64(col::DURATION_SECS)?;
    let mut index: HashMap<(&str, i32), usize> = HashMap::new();
    let mut totals: Vec<Totals> = Vec::new();
    // The slot of the row before, and that row: a run's blocks come rank after rank.
    let mut last: Option<(usize, usize)> = None;
    let compute = kind.per_row(|k| k == "compute");
    // The columns as slices: a full run has millions of rows.
    let (ranks, seconds, iterations) = (rank.values(), duration.values(), iteration.values());
    for (i, ((&is_compute, &r), &secs)) in compute.iter().zip(ranks).zip(seconds).enumerate() {
        let slot = match last {
            Some((row, slot)) if ranks[row] == r && run_id.same(row, i) => slot,
            _ => {
                let key = (run_id.value(i), r);
                *index.entry(key).or_insert_with(|| {
                    totals.push(Totals::default());
                    totals.len() - 1
                })
            }
        };
        last = Some((i, slot));
        let t = &mut totals[slot];
        if is_compute {
            t.compute += secs;
        } else {
            t.communication += secs;
        }
        if iteration.is_valid(i) {
            let v = iterations[i];
            t.last_iteration = Some(t.last_iteration.map_or(v, |l| l.max(v)));
        }
    }
    if totals.is_empty() {
        return Err(ModelError::invalid(format!(
            "input `{role}`: no MPI blocks (an empty `mpi_blocks` table)"
        )));
    }
    let mut keys: Vec<((&str, i32), usize)> = index.into_iter().collect();
    keys.sort_unstable();
    let mut runs: BTreeMap<String, RunTotals> = BTreeMap::new();
    for ((id, r), slot) in keys {
        let t = &totals[slot];
        let Some(last) = t.last_iteration else {
            return Err(no_iterations(role, id, r));
        };
        let run = runs.entry(id.to_owned()).or_default();
        run.0.insert(r, (t.compute, t.communication));
        run.1.insert(r, u64::try_from(last).unwrap_or(0) + 1);
    }
    Ok(runs)
}

/// What an MPI prediction step produces.
#[derive(Debug, Clone)]
pub struct MpiPrediction {
    /// Per rank: `compute`, `communication`, `total`; and the run (the slowest rank).
    pub predictions: RecordBatch,
    /// One row per block and rank.
    pub block_predictions: RecordBatch,
    /// The per-rank table the CLI prints.
    pub report: RecordBatch,
}

fn error_pct(predicted: f64, measured: Option<f64>) -> Option<f64> {
    measured.map(|m| yosoku_tables::rows::error_pct(predicted, m))
}

/// Per-rank compute and communication predictions from (possibly different) runs, compared
/// with a measured full run, as tables.
#[allow(clippy::too_many_arguments)] // each a different part of the prediction
fn rank_tables(
    spec: &MpiSpec,
    method: &str,
    reduced_run: &str,
    compute: &BTreeMap<i32, RankPrediction>,
    communication: &BTreeMap<i32, RankPrediction>,
    measured: Option<&MeasuredRun>,
    combined: usize,
) -> Result<MpiPrediction, ModelError> {
    check_same_configuration(reduced_run, compute, communication, measured)?;
    let program = measured.map_or(reduced_run, |m| m.id.as_str());
    let mut tables = RankTables {
        spec,
        combined,
        title: format!("{}: per-rank prediction, {method}", spec.model),
        program,
        rows: Vec::new(),
        cells: Vec::new(),
    };
    let mut slowest: Option<Slowest> = None;
    let mut measured_slowest: Option<f64> = None;
    for (rank, c) in compute {
        let Some(m) = communication.get(rank) else {
            return Err(ModelError::invalid(format!(
                "rank {rank} is in the compute run but not in the communication run: the runs are not of the same configuration"
            )));
        };
        let measured_rank = measured.and_then(|m| m.ranks.get(rank)).copied();
        let (total, flags, half) = tables.rank(*rank, c, m, measured_rank);
        if slowest.as_ref().is_none_or(|s| total > s.total) {
            slowest = Some(Slowest {
                total,
                device: c.device.clone(),
                flags,
                half,
                full_iterations: c.full_iterations,
            });
        }
        if let Some(t) = measured_rank.map(|m| m.0 + m.1) {
            measured_slowest = Some(measured_slowest.map_or(t, |s: f64| s.max(t)));
        }
    }
    let Some(mut slowest) = slowest else {
        return Err(ModelError::invalid(format!(
            "the reduced run `{reduced_run}` has no ranks"
        )));
    };
    let polling = polling_loop(compute);
    if polling.is_some() {
        let flags = [slowest.flags.take(), Some(POLLING_FLAG.to_owned())];
        slowest.flags = crate::join_flags(&flags.into_iter().flatten().collect::<Vec<_>>());
    }
    tables.run(&slowest, compute, measured, measured_slowest);
    if let Some(note) = polling {
        tables.cells.push(ReportCell::text(
            &tables.title,
            "run (slowest rank)",
            "repeating unit",
            note,
        ));
    }
    let block_rows = block_rows(reduced_run, compute, communication);
    Ok(MpiPrediction {
        predictions: predictions_batch(&tables.rows)?,
        block_predictions: block_batch(&spec.model, &block_rows)?,
        report: report_batch(&tables.cells)?,
    })
}

/// The run row's flag when the repeating unit looks like a polling loop.
pub const POLLING_FLAG: &str = "polling_loop?";

/// Iterations shorter than this, repeated more than [`POLLING_MIN_ITERATIONS`] times, are a
/// polling or wait loop's (`MPI_Test` until a message arrives), not a program step's.
const POLLING_MAX_ITERATION_SECS: f64 = 10e-6;
const POLLING_MIN_ITERATIONS: usize = 100_000;

/// Why the repeating unit the iterations were cut at looks like a polling loop rather than a
/// step of the program, if it does: the ranks ran different numbers of it (a step loop runs as
/// many on every rank; a loop that waits for a message runs as long as the wait), or it is a
/// few microseconds long and repeated hundreds of thousands of times. The hint: give `steps`
/// or mark the iterations.
fn polling_loop(ranks: &BTreeMap<i32, RankPrediction>) -> Option<String> {
    let counts: Vec<(i32, usize)> = ranks.iter().map(|(r, p)| (*r, p.iterations)).collect();
    let lo = counts.iter().map(|c| c.1).min()?;
    let hi = counts.iter().map(|c| c.1).max()?;
    let hint = "give `steps` (the program's own steps) to the collector and the step, or mark each step with yosoku_iteration() (plugins/mpi_timer/README.md)";
    if hi > lo + 2.max(lo / 100) {
        let shown: Vec<String> = counts
            .iter()
            .take(4)
            .map(|(r, k)| format!("{k} on rank {r}"))
            .collect();
        return Some(format!(
            "the ranks ran different numbers of the repeating unit ({}{}): a loop that runs as long as a rank waits (polling with MPI_Test or MPI_Iprobe) rather than a step of the program; {hint}",
            shown.join(", "),
            if counts.len() > 4 { ", ..." } else { "" }
        ));
    }
    let short = ranks.values().find(|p| {
        p.iterations > POLLING_MIN_ITERATIONS
            && p.reduced_secs / (p.iterations as f64) < POLLING_MAX_ITERATION_SECS
    })?;
    Some(format!(
        "the repeating unit ran {} times at {:.1} us each: a polling or wait loop rather than a step of the program; {hint}",
        short.iterations,
        1e6 * short.reduced_secs / short.iterations as f64
    ))
}

/// The compute and communication runs, and the measured full run, are of one configuration: the
/// same ranks, and the measured run made the iterations predicted.
fn check_same_configuration(
    reduced_run: &str,
    compute: &BTreeMap<i32, RankPrediction>,
    communication: &BTreeMap<i32, RankPrediction>,
    measured: Option<&MeasuredRun>,
) -> Result<(), ModelError> {
    if let Some(r) = communication.keys().find(|r| !compute.contains_key(r)) {
        return Err(ModelError::invalid(format!(
            "rank {r} is in the communication run but not in the compute run: the runs are not of the same configuration"
        )));
    }
    let Some(MeasuredRun {
        id,
        ranks: m,
        iterations,
        ..
    }) = measured
    else {
        return Ok(());
    };
    for (rank, p) in compute {
        if let Some(&ran) = iterations.get(rank)
            && ran != p.full_iterations
        {
            let derived = p
                .size_note
                .as_deref()
                .map_or(String::new(), |n| format!(" ({n})"));
            return Err(ModelError::invalid(format!(
                "input `measured`: rank {rank} of the measured run `{id}` ran {ran} iterations, but full_iterations = {}{derived}: the measured run is not the run predicted",
                p.full_iterations
            )));
        }
    }
    if let Some(r) = compute.keys().find(|r| !m.contains_key(r)) {
        return Err(ModelError::invalid(format!(
            "rank {r} of the reduced run `{reduced_run}` has no counterpart in the measured run `{id}` (ranks {:?}): predict and measure the same configuration",
            m.keys().collect::<Vec<_>>()
        )));
    }
    if let Some(r) = m.keys().find(|r| !compute.contains_key(r)) {
        return Err(ModelError::invalid(format!(
            "rank {r} of the measured run `{id}` is not in the reduced run `{reduced_run}`: predict and measure the same configuration"
        )));
    }
    Ok(())
}

/// The slowest rank's prediction: the run's.
struct Slowest {
    total: f64,
    device: String,
    flags: Option<String>,
    /// The 95 % interval's half-width.
    half: f64,
    full_iterations: u64,
}

/// The prediction rows and report cells of an MPI prediction, as they are written.
struct RankTables<'a> {
    spec: &'a MpiSpec,
    /// Repeats whose predictions the one made is the mean of (1: one reduced run).
    combined: usize,
    title: String,
    /// The run the rows name: the measured one's id, else the reduced run's.
    program: &'a str,
    rows: Vec<PredictionRow>,
    cells: Vec<ReportCell>,
}

/// What a rank's prediction notes (warm-up excluded, unsettled, trend, periodic blocks), for
/// its compute run `c` and, when another, its communication run `m`.
fn rank_flags(c: &RankPrediction, m: &RankPrediction) -> Vec<String> {
    let mut flags = Vec::new();
    let same_run = std::ptr::eq(c, m);
    for p in if same_run { vec![c] } else { vec![c, m] } {
        if p.warmup > 0 {
            flags.push(format!("warmup_excluded={}", p.warmup));
        }
        if !p.settled {
            flags.push("unsettled".to_owned());
        }
        if let Some(t) = p.trend_pct_per_1000 {
            flags.push(format!(
                "trend={t:+.2}%/1000it{}",
                if p.trend_extrapolated {
                    " extrapolated"
                } else {
                    ""
                }
            ));
        }
        if p.periodic_blocks > 0 {
            flags.push(format!("periodic_blocks={}", p.periodic_blocks));
        }
    }
    flags
}

impl RankTables<'_> {
    /// Rank `rank`'s rows (compute, communication, total) and cells, from its compute run `c`
    /// and communication run `m` (the same run or not), beside its measured (compute,
    /// communication) seconds. Returns its total, flags and interval half-width.
    fn rank(
        &mut self,
        rank: i32,
        c: &RankPrediction,
        m: &RankPrediction,
        measured_rank: Option<(f64, f64)>,
    ) -> (f64, Option<String>, f64) {
        let (compute_secs, comm_secs) = (c.secs(true), m.secs(false));
        let total = compute_secs + comm_secs;
        let within = if std::ptr::eq(c, m) {
            c.interval_half_secs
        } else {
            c.interval_half_secs.hypot(m.interval_half_secs)
        };
        let run_to_run = self.spec.run_to_run.relative_half(self.combined) * total;
        let half = if self.spec.run_to_run.holds_within_run() {
            run_to_run
        } else {
            within.hypot(run_to_run)
        };
        let flags: Option<String> = crate::join_flags(&rank_flags(c, m));
        let variant = format!("rank {rank}");
        // A phase the full run spent no time in (a rank without communication) has no
        // measurement to compare with: a relative error of 0 s is undefined.
        let positive = |secs: f64| (secs > 0.0).then_some(secs);
        for (phase, predicted, measured_secs) in [
            (
                "compute",
                compute_secs,
                measured_rank.and_then(|m| positive(m.0)),
            ),
            (
                "communication",
                comm_secs,
                measured_rank.and_then(|m| positive(m.1)),
            ),
            (
                "total",
                total,
                measured_rank.and_then(|m| positive(m.0 + m.1)),
            ),
        ] {
            self.rows.push(PredictionRow {
                model: self.spec.model.clone(),
                device: c.device.clone(),
                program: self.program.into(),
                variant: variant.clone(),
                phase: phase.into(),
                repetitions: c.full_iterations as i64,
                predicted_secs: predicted,
                measured_secs,
                error_pct: error_pct(predicted, measured_secs),
                flags: flags.clone(),
                run_id: Some(self.program.into()),
                interval_secs: (phase == "total")
                    .then(|| ((predicted - half).max(0.0), predicted + half)),
                ..PredictionRow::default()
            });
        }
        let measured_total = measured_rank.map(|m| m.0 + m.1);
        let title = &self.title;
        self.cells.extend([
            ReportCell::number(title, &variant, "compute s", compute_secs, "s"),
            ReportCell::number(title, &variant, "communication s", comm_secs, "s"),
            ReportCell::number(title, &variant, "predicted s", total, "s"),
            ReportCell::number(title, &variant, "+- s (95 %)", half, "s"),
            ReportCell::number(
                title,
                &variant,
                "compute:communication",
                if comm_secs > 0.0 {
                    compute_secs / comm_secs
                } else {
                    f64::NAN
                },
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "measured s",
                measured_total.unwrap_or(f64::NAN),
                "s",
            ),
            ReportCell::number(
                title,
                &variant,
                "error %",
                error_pct(total, measured_total).unwrap_or(f64::NAN),
                "%",
            ),
            ReportCell::number(
                title,
                &variant,
                "warm-up excluded",
                c.warmup.max(m.warmup) as f64,
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "iterations measured",
                c.iterations as f64,
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "iterations predicted",
                c.full_iterations as f64,
                "",
            ),
            ReportCell::number(
                title,
                &variant,
                "periodic blocks",
                c.periodic_blocks as f64,
                "",
            ),
        ]);
        if let Some(note) = &c.size_note {
            self.cells
                .push(ReportCell::text(title, &variant, "steps", note.clone()));
        }
        (total, flags, half)
    }

    /// The run's rows (its slowest rank's prediction, and the naive scaling of the reduced run a
    /// user would do without yosoku) and cells, beside the measured run: the mean of its
    /// repeats' times (each its slowest rank's), else the slowest measured rank.
    fn run(
        &mut self,
        slowest: &Slowest,
        compute: &BTreeMap<i32, RankPrediction>,
        measured: Option<&MeasuredRun>,
        mut measured_slowest: Option<f64>,
    ) {
        let spread = measured.filter(|m| !m.run_secs.is_empty()).map(|m| {
            let n = m.run_secs.len();
            let mean = m.run_secs.iter().sum::<f64>() / n as f64;
            let lo = m.run_secs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = m.run_secs.iter().copied().fold(0.0, f64::max);
            (n, mean, lo, hi)
        });
        if let Some((_, mean, _, _)) = spread {
            measured_slowest = Some(mean);
        }
        let naive = compute
            .values()
            .map(|c| c.reduced_secs * c.full_iterations as f64 / c.iterations.max(1) as f64)
            .fold(0.0, f64::max);
        let (total, half) = (slowest.total, slowest.half);
        self.rows.push(PredictionRow {
            model: self.spec.model.clone(),
            device: slowest.device.clone(),
            program: self.program.into(),
            variant: "run".into(),
            phase: "total".into(),
            repetitions: slowest.full_iterations as i64,
            predicted_secs: total,
            measured_secs: measured_slowest,
            error_pct: error_pct(total, measured_slowest),
            flags: slowest.flags.clone(),
            run_id: Some(self.program.into()),
            interval_secs: Some(((total - half).max(0.0), total + half)),
            ..PredictionRow::default()
        });
        self.rows.push(PredictionRow {
            model: self.spec.model.clone(),
            device: compute
                .values()
                .next()
                .map(|c| c.device.clone())
                .unwrap_or_default(),
            program: self.program.into(),
            variant: "run (naive scaling)".into(),
            phase: "total".into(),
            repetitions: slowest.full_iterations as i64,
            predicted_secs: naive,
            measured_secs: measured_slowest,
            error_pct: error_pct(naive, measured_slowest),
            flags: Some("the reduced run's time x full / reduced iterations".into()),
            run_id: Some(self.program.into()),
            ..PredictionRow::default()
        });
        let (title, run_label) = (&self.title, "run (slowest rank)");
        if let Some((n, mean, lo, hi)) = spread
            && n > 1
        {
            self.cells.extend([
                ReportCell::number(title, run_label, "measured repeats", n as f64, ""),
                ReportCell::number(title, run_label, "measured min s", lo, "s"),
                ReportCell::number(title, run_label, "measured max s", hi, "s"),
                ReportCell::number(title, run_label, "spread %", 100.0 * (hi - lo) / mean, "%"),
                ReportCell::text(
                    title,
                    run_label,
                    "prediction within spread",
                    if (lo..=hi).contains(&total) {
                        "yes"
                    } else {
                        "no"
                    },
                ),
            ]);
        }
        self.cells.extend([
            ReportCell::number(title, run_label, "naive scaling s", naive, "s"),
            ReportCell::number(
                title,
                run_label,
                "naive error %",
                error_pct(naive, measured_slowest).unwrap_or(f64::NAN),
                "%",
            ),
            ReportCell::number(title, run_label, "predicted s", total, "s"),
            ReportCell::number(title, run_label, "+- s (95 %)", half, "s"),
            ReportCell::text(
                title,
                run_label,
                "interval",
                self.spec.run_to_run.describe(self.combined),
            ),
            ReportCell::number(
                title,
                run_label,
                "measured s",
                measured_slowest.unwrap_or(f64::NAN),
                "s",
            ),
            ReportCell::number(
                title,
                run_label,
                "error %",
                error_pct(total, measured_slowest).unwrap_or(f64::NAN),
                "%",
            ),
        ]);
        if let Some(p) = &self.spec.published {
            self.cells
                .push(ReportCell::text(title, run_label, "paper", p.clone()));
        }
    }
}

/// Every rank's compute blocks from the compute run and communication blocks from the
/// communication run.
fn block_rows<'a>(
    reduced_run: &'a str,
    compute: &'a BTreeMap<i32, RankPrediction>,
    communication: &'a BTreeMap<i32, RankPrediction>,
) -> Vec<(i32, &'a BlockPrediction, &'a str)> {
    let mut block_rows: Vec<(i32, &BlockPrediction, &str)> = Vec::new();
    for (rank, c) in compute {
        block_rows.extend(
            c.blocks
                .iter()
                .filter(|b| b.compute)
                .map(|b| (*rank, b, reduced_run)),
        );
        if let Some(m) = communication.get(rank) {
            block_rows.extend(
                m.blocks
                    .iter()
                    .filter(|b| !b.compute)
                    .map(|b| (*rank, b, reduced_run)),
            );
        }
    }
    block_rows
}

fn block_batch(
    model: &str,
    rows: &[(i32, &BlockPrediction, &str)],
) -> Result<RecordBatch, ModelError> {
    let floats = |f: &dyn Fn(&BlockPrediction) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| f(r.1))))
    };
    MPI_BLOCK_PREDICTIONS
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| model))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.2))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.1.block.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| {
                if r.1.compute {
                    "compute"
                } else {
                    "communication"
                }
            }))),
            Arc::new(
                rows.iter()
                    .map(|r| Some(r.1.in_loop))
                    .collect::<BooleanArray>(),
            ),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1.role))),
            Arc::new(
                rows.iter()
                    .map(|r| r.1.period_iterations)
                    .collect::<Int64Array>(),
            ),
            floats(&|b| b.warmup_secs),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|r| r.1.steady_executions),
            )),
            Arc::new(rows.iter().map(|r| r.1.mean_secs).collect::<Float64Array>()),
            floats(&|b| b.full_executions),
            floats(&|b| b.predicted_secs),
        ])
        .map_err(ModelError::built)
}

/// Each rank of the run `run_id` of `rows` predicted, one rank's executions read at a time.
fn predict_run(
    rows: &BlockRows<'_>,
    run_id: &str,
    ranks: &RankRows,
    spec: &MpiSpec,
) -> Result<BTreeMap<i32, RankPrediction>, ModelError> {
    ranks
        .iter()
        .map(|(rank, stretches)| {
            let run = rows.rank_run(stretches);
            Ok((*rank, predict_rank(rows.role, run_id, *rank, &run, spec)?))
        })
        .collect()
}

/// The measured full run: one run, or several repeats of one configuration (the same ranks and
/// iterations), whose spread is the noise a prediction is judged against.
fn measured_run(measured: Option<&RecordBatch>) -> Result<Option<MeasuredRun>, ModelError> {
    let Some(batch) = measured else {
        return Ok(None);
    };
    let runs = measured_totals("measured", batch)?;
    let mut repeats: Vec<(String, MeasuredRanks, BTreeMap<i32, u64>)> = Vec::new();
    for (id, (ranks, iterations)) in runs {
        if let Some((first, first_ranks, first_iterations)) = repeats.first()
            && (first_iterations != &iterations || first_ranks.keys().ne(ranks.keys()))
        {
            return Err(ModelError::invalid(format!(
                "input `measured`: runs `{first}` and `{id}` differ in ranks or iterations; several measured runs are repeats of one configuration (filter the table on `run_id` to compare one)"
            )));
        }
        repeats.push((id, ranks, iterations));
    }
    let n = repeats.len() as f64;
    let mut mean: MeasuredRanks = BTreeMap::new();
    for (_, ranks, _) in &repeats {
        for (rank, (c, m)) in ranks {
            let slot = mean.entry(*rank).or_insert((0.0, 0.0));
            slot.0 += c / n;
            slot.1 += m / n;
        }
    }
    let run_secs = repeats
        .iter()
        .map(|(_, ranks, _)| ranks.values().map(|(c, m)| c + m).fold(0.0, f64::max))
        .collect();
    Ok(Some(MeasuredRun {
        id: repeats
            .iter()
            .map(|r| r.0.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        ranks: mean,
        iterations: repeats.swap_remove(0).2,
        run_secs,
    }))
}

/// The paper's method: compute and communication blocks of one reduced run (`reduced`, an
/// `mpi_blocks` table of one run), scaled to `spec.full_iterations`; compared with the full run
/// in `measured` (an `mpi_blocks` table of one run) when given.
pub fn simplified(
    spec: &MpiSpec,
    reduced: &RecordBatch,
    measured: Option<&RecordBatch>,
) -> Result<MpiPrediction, ModelError> {
    let rows = BlockRows::new("reduced", reduced)?;
    let (id, ranks) = rows.single_run()?;
    let predicted = predict_run(&rows, id, ranks, spec)?;
    let measured = measured_run(measured)?;
    rank_tables(
        spec,
        if spec.pooled_warmup.is_empty() {
            "compute and communication from the same reduced run"
        } else {
            "compute and communication from the same reduced run, the warm-up chosen once on the pooled per-iteration times of its repeats"
        },
        id,
        &predicted,
        &predicted,
        measured.as_ref(),
        1,
    )
}

/// The predicted run time (its slowest rank's total) of each repeat of the reduced run, each
/// predicted alone with `spec`: their spread is the run-to-run variation of a prediction.
/// Repeats of other programs or inputs (other ranks, iterations or blocks) are refused: their
/// spread would not be run-to-run variation.
pub fn repeat_totals(spec: &MpiSpec, repeats: &[&RecordBatch]) -> Result<Vec<f64>, ModelError> {
    Ok(predict_repeats(spec, repeats)?
        .iter()
        .map(|(_, predicted)| {
            predicted
                .values()
                .map(|p| p.secs(true) + p.secs(false))
                .fold(0.0, f64::max)
        })
        .collect())
}

/// A run's ranks' predictions, by rank.
type RankPredictions = BTreeMap<i32, RankPrediction>;

/// Each repeat of the reduced run predicted alone, (run id, ranks' predictions), after checking
/// that they are of one program and input: the same ranks, iterations predicted and blocks.
fn predict_repeats(
    spec: &MpiSpec,
    repeats: &[&RecordBatch],
) -> Result<Vec<(String, RankPredictions)>, ModelError> {
    let mut runs: Vec<(String, RankPredictions)> = Vec::new();
    for (i, batch) in repeats.iter().enumerate() {
        let role = "repeat";
        let rows = BlockRows::new(role, batch)
            .map_err(|e| ModelError::invalid(format!("repeat {}: {e}", i + 1)))?;
        let (id, ranks) = rows
            .single_run()
            .map_err(|e| ModelError::invalid(format!("repeat {}: {e}", i + 1)))?;
        let predicted = predict_run(&rows, id, ranks, spec)?;
        if let Some((first_id, first)) = runs.first() {
            same_program((first_id.as_str(), first), (id, &predicted))?;
        }
        runs.push((id.to_owned(), predicted));
    }
    Ok(runs)
}

/// Refuses two repeats that are not of one program and input.
fn same_program(
    (first_id, first): (&str, &RankPredictions),
    (id, other): (&str, &RankPredictions),
) -> Result<(), ModelError> {
    if first.len() != other.len() {
        return Err(ModelError::invalid(format!(
            "repeats `{first_id}` and `{id}` differ: {} and {} ranks (repeats have one rank count)",
            first.len(),
            other.len()
        )));
    }
    let keys = |r: &RankPrediction| -> Vec<(String, bool)> {
        let mut k: Vec<(String, bool)> = r
            .blocks
            .iter()
            .map(|b| (b.block.clone(), b.compute))
            .collect();
        k.sort();
        k
    };
    for (rank, p) in first {
        let Some(q) = other.get(rank) else {
            return Err(ModelError::invalid(format!(
                "repeats `{first_id}` and `{id}` differ: rank {rank} is in one only (repeats have one rank count)"
            )));
        };
        if q.full_iterations != p.full_iterations {
            return Err(ModelError::invalid(format!(
                "repeats `{first_id}` and `{id}` differ: rank {rank} is predicted {} iterations from one, {} from the other (repeats are of one input)",
                p.full_iterations, q.full_iterations
            )));
        }
        let (a, b) = (keys(p), keys(q));
        if a != b {
            let differs = a
                .iter()
                .find(|k| !b.contains(k))
                .or_else(|| b.iter().find(|k| !a.contains(k)))
                .map_or_else(String::new, |k| format!(" (block `{}`)", k.0));
            return Err(ModelError::invalid(format!(
                "repeats `{first_id}` and `{id}` differ: rank {rank}'s blocks are not the same{differs}; repeats are runs of one program and input"
            )));
        }
    }
    Ok(())
}

/// [`RunToRun::Repeats`] of the repeats' predicted totals (two or more), bounded below by the
/// user's `floor_pct`.
pub fn run_to_run_of(totals: &[f64], floor_pct: Option<f64>) -> RunToRun {
    let n = totals.len();
    let mean = totals.iter().sum::<f64>() / n as f64;
    let var = totals.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64;
    RunToRun::Repeats {
        relative_sd: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
        repeats: n,
        floor_pct,
    }
}

/// The prediction from several repeats of the reduced run together: each repeat predicted
/// alone, then every block's predicted time averaged over the repeats, rank by rank; the
/// interval of the mean (the within-run halves and the run-to-run variation over `sqrt(k)`).
/// The repeats must be of one program and input: the same ranks, iterations predicted and
/// blocks.
pub fn combined(
    spec: &MpiSpec,
    repeats: &[&RecordBatch],
    measured: Option<&RecordBatch>,
) -> Result<MpiPrediction, ModelError> {
    if repeats.len() < 2 {
        return Err(ModelError::invalid(
            "combining repeats needs two or more reduced runs".to_owned(),
        ));
    }
    let runs = predict_repeats(spec, repeats)?;
    let (_, first) = &runs[0];
    let mut mean: BTreeMap<i32, RankPrediction> = BTreeMap::new();
    for rank in first.keys() {
        let all: Vec<&RankPrediction> = runs.iter().map(|(_, r)| &r[rank]).collect();
        mean.insert(*rank, mean_rank(&all));
    }
    let measured = measured_run(measured)?;
    let ids: Vec<&str> = runs.iter().map(|(id, _)| id.as_str()).collect();
    rank_tables(
        spec,
        &format!("the mean of {} repeats' predictions", runs.len()),
        &ids.join("+"),
        &mean,
        &mean,
        measured.as_ref(),
        runs.len(),
    )
}

/// One rank's predictions from several repeats (of the same blocks) as one: each block's times
/// averaged, the within-run interval of the mean.
fn mean_rank(all: &[&RankPrediction]) -> RankPrediction {
    let k = all.len() as f64;
    let mut out = all[0].clone();
    // The mean repeat's: the naive scaling beside divides the mean time by it.
    out.iterations = (all.iter().map(|p| p.iterations).sum::<usize>() as f64 / k).round() as usize;
    out.warmup = all.iter().map(|p| p.warmup).max().unwrap_or(0);
    out.settled = all.iter().all(|p| p.settled);
    out.interval_half_secs = all
        .iter()
        .map(|p| p.interval_half_secs.powi(2))
        .sum::<f64>()
        .sqrt()
        / k;
    out.reduced_secs = all.iter().map(|p| p.reduced_secs).sum::<f64>() / k;
    for b in &mut out.blocks {
        let same = |p: &&RankPrediction| {
            p.blocks
                .iter()
                .find(|x| x.block == b.block && x.compute == b.compute)
                .map_or(0.0, |x| x.predicted_secs)
        };
        b.predicted_secs = all.iter().map(same).sum::<f64>() / k;
        let means: Vec<f64> = all
            .iter()
            .filter_map(|p| {
                p.blocks
                    .iter()
                    .find(|x| x.block == b.block && x.compute == b.compute)
                    .and_then(|x| x.mean_secs)
            })
            .collect();
        b.mean_secs = (means.len() == all.len()).then(|| means.iter().sum::<f64>() / k);
    }
    out
}

/// The earlier method: compute blocks from `compute` (a reduced run), communication blocks from
/// `communication` (a run of the communication alone), each scaled to `spec.full_iterations`.
pub fn separate_runs(
    spec: &MpiSpec,
    compute: &RecordBatch,
    communication: &RecordBatch,
    measured: Option<&RecordBatch>,
) -> Result<MpiPrediction, ModelError> {
    let compute_rows = BlockRows::new("compute", compute)?;
    let (compute_id, compute_ranks) = compute_rows.single_run()?;
    let comm_rows = BlockRows::new("communication", communication)?;
    let (comm_id, comm_ranks) = comm_rows.single_run()?;
    let c = predict_run(&compute_rows, compute_id, compute_ranks, spec)?;
    let m = predict_run(&comm_rows, comm_id, comm_ranks, spec)?;
    let measured = measured_run(measured)?;
    rank_tables(
        spec,
        "compute and communication from separate runs (earlier method)",
        compute_id,
        &c,
        &m,
        measured.as_ref(),
        1,
    )
}

/// A run's configuration from `mpi_ranks`: (ranks, binding).
fn configurations(
    role: &'static str,
    batch: &RecordBatch,
) -> Result<BTreeMap<String, (i32, String, f64)>, ModelError> {
    let input = Input::new(role, &MPI_RANKS, batch)?;
    let run_id = input.utf8(col::RUN_ID)?;
    let ranks = input.int32(col::RANKS)?;
    let binding = input.utf8(col::BINDING)?;
    let wall = input.float64(col::WALL_SECS)?;
    let mut out: BTreeMap<String, (i32, String, f64)> = BTreeMap::new();
    for i in 0..input.rows() {
        let b = binding.get(i).unwrap_or("unrecorded").to_owned();
        let entry = out
            .entry(run_id.value(i).to_owned())
            .or_insert((ranks.value(i), b, 0.0));
        entry.2 = entry.2.max(wall.value(i));
    }
    Ok(out)
}

/// One configuration of the search.
#[derive(Debug, Clone)]
struct Candidate {
    label: String,
    predicted_secs: f64,
    measured_secs: Option<f64>,
    device: String,
    measured_run: Option<String>,
    full_iterations: u64,
}

fn candidate_label(ranks: i32, binding: &str) -> String {
    format!(
        "{ranks} rank{}, bind {binding}",
        if ranks == 1 { "" } else { "s" }
    )
}

/// Best-configuration search: every run in `reduced` (an `mpi_blocks` table of reduced runs,
/// with their `mpi_ranks` in `reduced_ranks`) is one candidate configuration; each is predicted
/// for `spec.full_iterations` and the candidates are ranked by predicted run time. Measured full
/// runs (`measured_ranks`, an `mpi_ranks` table), matched by rank count and binding, are
/// ranked beside them when given.
pub fn best_configuration(
    spec: &MpiSpec,
    reduced: &RecordBatch,
    reduced_ranks: &RecordBatch,
    measured_ranks: Option<&RecordBatch>,
) -> Result<(RecordBatch, RecordBatch), ModelError> {
    let rows = BlockRows::new("reduced", reduced)?;
    let configs = configurations("reduced_ranks", reduced_ranks)?;
    let measured = match measured_ranks {
        Some(b) => configurations("measured_ranks", b)?,
        None => BTreeMap::new(),
    };
    let mut candidates: Vec<Candidate> = Vec::new();
    for (id, ranks) in &rows.ranks {
        let Some((n, binding, _)) = configs.get(id) else {
            return Err(ModelError::invalid(format!(
                "input `reduced_ranks` has no row for the reduced run `{id}`: give the `mpi_ranks` table of the same runs"
            )));
        };
        let predicted = predict_run(&rows, id, ranks, spec)?;
        let full_iterations = predicted
            .values()
            .map(|p| p.full_iterations)
            .max()
            .unwrap_or(0);
        let (total, device) = predicted
            .values()
            .map(|p| (p.secs(true) + p.secs(false), p.device.clone()))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .ok_or_else(|| ModelError::invalid(format!("the reduced run `{id}` has no ranks")))?;
        let matches: Vec<(&String, f64)> = measured
            .iter()
            .filter(|(_, m)| m.0 == *n && m.1 == *binding)
            .map(|(mid, m)| (mid, m.2))
            .collect();
        if matches.len() > 1 {
            return Err(ModelError::invalid(format!(
                "input `measured_ranks`: runs {} all have {n} ranks bound `{binding}`; keep one measured run per configuration",
                matches
                    .iter()
                    .map(|m| format!("`{}`", m.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        candidates.push(Candidate {
            label: candidate_label(*n, binding),
            predicted_secs: total,
            measured_secs: matches.first().map(|m| m.1),
            device,
            measured_run: matches.first().map(|m| m.0.clone()),
            full_iterations,
        });
    }
    let mut by_prediction: Vec<usize> = (0..candidates.len()).collect();
    by_prediction.sort_by(|a, b| {
        candidates[*a]
            .predicted_secs
            .total_cmp(&candidates[*b].predicted_secs)
    });
    let measured = |i: usize| candidates[i].measured_secs.unwrap_or(f64::INFINITY);
    let mut measured_order: Vec<usize> = (0..candidates.len())
        .filter(|i| candidates[*i].measured_secs.is_some())
        .collect();
    measured_order.sort_by(|a, b| measured(*a).total_cmp(&measured(*b)));
    let title = format!("{}: candidates ranked by predicted run time", spec.model);
    let mut rows = Vec::new();
    let mut cells = Vec::new();
    for (place, &i) in by_prediction.iter().enumerate() {
        let Candidate {
            label,
            predicted_secs: predicted,
            measured_secs,
            device,
            measured_run: measured_id,
            full_iterations,
        } = &candidates[i];
        rows.push(PredictionRow {
            model: spec.model.clone(),
            device: device.clone(),
            program: "configuration".into(),
            variant: label.clone(),
            phase: "total".into(),
            repetitions: *full_iterations as i64,
            predicted_secs: *predicted,
            measured_secs: *measured_secs,
            error_pct: error_pct(*predicted, *measured_secs),
            run_id: measured_id.clone(),
            ..PredictionRow::default()
        });
        cells.extend([
            ReportCell::number(&title, label, "predicted rank", (place + 1) as f64, ""),
            ReportCell::number(&title, label, "predicted s", *predicted, "s"),
            ReportCell::number(
                &title,
                label,
                "measured rank",
                measured_order
                    .iter()
                    .position(|m| *m == i)
                    .map_or(f64::NAN, |p| (p + 1) as f64),
                "",
            ),
            ReportCell::number(
                &title,
                label,
                "measured s",
                measured_secs.unwrap_or(f64::NAN),
                "s",
            ),
            ReportCell::number(
                &title,
                label,
                "error %",
                error_pct(*predicted, *measured_secs).unwrap_or(f64::NAN),
                "%",
            ),
        ]);
    }
    Ok((predictions_batch(&rows)?, report_batch(&cells)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use yosoku_tables::MPI_RANKS;

    use crate::fixtures::{mpi_blocks as blocks, mpi_blocks_with as blocks_with};

    fn spec(n: u64, warmup: Warmup) -> MpiSpec {
        MpiSpec {
            model: "m".into(),
            size: RunSize::Iterations(n),
            warmup,
            pooled_warmup: BTreeMap::new(),
            trend: Trend::Flag,
            published: None,
            run_to_run: RunToRun::Off,
        }
    }

    fn column(batch: &RecordBatch, name: &str) -> Vec<f64> {
        let values = yosoku_tables::access::float64(batch, name).unwrap();
        values.iter().map(|v| v.unwrap_or(f64::NAN)).collect()
    }

    #[test]
    fn loop_blocks_scale_with_iterations_and_warmup_is_taken_as_measured() {
        // Two slow warm-up iterations, then steady 2 s compute + 1 s communication.
        let reduced = blocks(
            "reduced",
            &[(
                0,
                vec![
                    (5.0, 4.0),
                    (3.0, 1.5),
                    (2.0, 1.0),
                    (2.0, 1.0),
                    (2.0, 1.0),
                    (2.0, 1.0),
                ],
            )],
        );
        let out = simplified(&spec(100, Warmup::Auto { tolerance: 0.1 }), &reduced, None).unwrap();
        // compute: setup 1 + teardown 0.5 + warm-up 5 + 3 + 98 x 2; communication: 4 + 1.5 + 98.
        let predicted = column(&out.predictions, col::PREDICTED_SECS);
        assert_eq!(predicted[..3], [205.5, 103.5, 309.0]);
        // The run row is the slowest (only) rank.
        assert_eq!(predicted[3], 309.0);
        let b = &out.block_predictions;
        assert_eq!(column(b, col::FULL_EXECUTIONS), [1.0, 100.0, 1.0, 100.0]);
        assert_eq!(column(b, col::MEAN_SECS)[1], 2.0);
        // A block between iterations runs once fewer than the loop, in both runs.
        assert_eq!(per_iteration(11.0, 12.0), 1.0);
        assert_eq!(per_iteration(23.0, 12.0), 2.0);
        assert_eq!(per_iteration(6.0, 12.0), 0.5);
        // A fixed warm-up of 0 takes the slow iterations into the mean.
        let out = simplified(&spec(100, Warmup::Iterations(0)), &reduced, None).unwrap();
        let predicted = column(&out.predictions, col::PREDICTED_SECS);
        assert!((predicted[0] - (1.5 + 100.0 * 16.0 / 6.0)).abs() < 1e-9);
    }

    #[test]
    fn the_run_takes_its_slowest_rank_and_is_compared_with_the_full_run() {
        let reduced = blocks("r", &[(0, vec![(1.0, 1.0); 4]), (1, vec![(1.5, 0.5); 4])]);
        let full = blocks(
            "f",
            &[(0, vec![(1.0, 1.0); 10]), (1, vec![(1.5, 0.75); 10])],
        );
        let out = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&full)).unwrap();
        let predicted = column(&out.predictions, col::PREDICTED_SECS);
        let measured = column(&out.predictions, col::MEASURED_SECS);
        // rank 0: 1.5 + 10 + 10 = 21.5; rank 1: 1.5 + 15 + 5 = 21.5 (measured 24).
        assert_eq!((predicted[2], predicted[5]), (21.5, 21.5));
        assert_eq!((measured[2], measured[5]), (21.5, 24.0));
        // The run row: the slowest rank of each; then the naive scaling of the reduced run's
        // time (rank 0: 1.5 + 8 = 9.5 s for 4 iterations, 23.75 s for 10).
        assert_eq!(predicted.len(), 8);
        assert_eq!((predicted[6], measured[6]), (21.5, 24.0));
        let errors = column(&out.predictions, col::ERROR_PCT);
        assert!((errors[6] - 100.0 * (21.5 - 24.0) / 24.0).abs() < 1e-9);
        assert_eq!((predicted[7], measured[7]), (23.75, 24.0));
    }

    /// The one-pass reader of a measured run sums each run's ranks apart, whatever the order of
    /// the rows, and refuses an empty table and a rank without main-loop iterations by name.
    #[test]
    fn measured_totals_are_per_run_and_rank_and_bad_tables_are_named() {
        let a = blocks("a", &[(0, vec![(1.0, 0.25); 3]), (1, vec![(2.0, 0.5); 3])]);
        let b = blocks("b", &[(0, vec![(4.0, 0.125); 2])]);
        let both = arrow_select::concat::concat_batches(&a.schema(), &[b, a]).unwrap();
        // Rows of the two runs interleaved: one of `b`, one of `a`, ...
        let n = both.num_rows() as u32;
        let order: Vec<u32> = (0..n / 2)
            .flat_map(|i| [i, n / 2 + i])
            .chain((n % 2 == 1).then_some(n - 1))
            .collect();
        let mixed =
            arrow_select::take::take_record_batch(&both, &arrow_array::UInt32Array::from(order))
                .unwrap();
        let runs = measured_totals("measured", &mixed).unwrap();
        assert_eq!(runs.keys().collect::<Vec<_>>(), ["a", "b"]);
        // Setup 1 s and teardown 0.5 s are compute outside the loop.
        assert_eq!(runs["a"].0[&0], (1.5 + 3.0, 0.75));
        assert_eq!(runs["a"].0[&1], (1.5 + 6.0, 1.5));
        assert_eq!(runs["a"].1, BTreeMap::from([(0, 3), (1, 3)]));
        assert_eq!(runs["b"].0[&0], (1.5 + 8.0, 0.25));
        assert_eq!(runs["b"].1, BTreeMap::from([(0, 2)]));

        let e = measured_totals("measured", &mixed.slice(0, 0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "input `measured`: no MPI blocks (an empty `mpi_blocks` table)"
        );
        let no_loop = blocks("c", &[(2, vec![])]);
        let e = measured_totals("measured", &no_loop)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rank 2 of run `c` has no main-loop iterations"),
            "{e}"
        );
    }

    #[test]
    fn repeated_full_runs_are_averaged_and_their_spread_reported() {
        let reduced = blocks("r", &[(0, vec![(1.0, 0.0); 4])]);
        let repeats: Vec<RecordBatch> = [1.0, 1.2, 0.9]
            .iter()
            .enumerate()
            .map(|(i, c)| blocks(&format!("f{i}"), &[(0, vec![(*c, 0.0); 10])]))
            .collect();
        let full = arrow_select::concat::concat_batches(&repeats[0].schema(), &repeats).unwrap();
        let out = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&full)).unwrap();
        let run = yosoku_tables::rows::read_predictions("p", &out.predictions)
            .unwrap()
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        // Measured: 1.5 + 10, 1.5 + 12, 1.5 + 9: mean 11.8333 + 1.5.
        assert!(
            (run.measured_secs.unwrap() - (1.5 + 31.0 / 3.0)).abs() < 1e-9,
            "{run:?}"
        );
        let report = yosoku_tables::access::utf8(&out.report, col::COLUMN_LABEL).unwrap();
        assert!(report.iter().any(|c| c == Some("spread %")));
        assert!(report.iter().any(|c| c == Some("prediction within spread")));
        // Repeats of another configuration are refused.
        let other = blocks("g", &[(0, vec![(1.0, 0.0); 12])]);
        let mixed = arrow_select::concat::concat_batches(
            &repeats[0].schema(),
            &[repeats[0].clone(), other],
        )
        .unwrap();
        let e = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&mixed)).unwrap_err();
        assert!(
            e.to_string().contains("differ in ranks or iterations"),
            "{e}"
        );
    }

    #[test]
    fn separate_runs_miss_the_wait_a_fast_rank_spends_in_communication() {
        // Rank 0 is fast and waits 1 s per iteration for rank 1; alone, communication is 0.1 s.
        let reduced = blocks("r", &[(0, vec![(1.0, 1.1); 4]), (1, vec![(2.0, 0.1); 4])]);
        let comm_only = blocks("c", &[(0, vec![(0.0, 0.1); 4]), (1, vec![(0.0, 0.1); 4])]);
        let s = spec(8, Warmup::Iterations(0));
        let same = simplified(&s, &reduced, None).unwrap();
        let separate = separate_runs(&s, &reduced, &comm_only, None).unwrap();
        let total = |b: &RecordBatch| column(b, col::PREDICTED_SECS)[2];
        assert!((total(&same.predictions) - (1.5 + 8.0 * 2.1)).abs() < 1e-9);
        assert!((total(&separate.predictions) - (1.5 + 8.0 * 1.1)).abs() < 1e-9);
    }

    #[test]
    fn bad_inputs_say_what_is_wrong() {
        let reduced = blocks("r", &[(0, vec![(1.0, 1.0); 4])]);
        let e = simplified(&spec(2, Warmup::Iterations(0)), &reduced, None).unwrap_err();
        assert!(
            e.to_string()
                .contains("fewer than the 4 the reduced run made"),
            "{e}"
        );
        let e = simplified(&spec(10, Warmup::Iterations(4)), &reduced, None).unwrap_err();
        assert!(e.to_string().contains("warmup_iterations = 4"), "{e}");
        let full = blocks("f", &[(0, vec![(1.0, 1.0); 9])]);
        let e = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&full)).unwrap_err();
        assert!(
            e.to_string()
                .contains("ran 9 iterations, but full_iterations = 10"),
            "{e}"
        );
        let two =
            arrow_select::concat::concat_batches(&reduced.schema(), [&reduced, &full]).unwrap();
        let e = simplified(&spec(10, Warmup::Iterations(0)), &two, None).unwrap_err();
        assert!(e.to_string().contains("holds 2 runs (f, r)"), "{e}");
        let other = blocks("f", &[(1, vec![(1.0, 1.0); 10])]);
        let e = simplified(&spec(10, Warmup::Iterations(0)), &reduced, Some(&other)).unwrap_err();
        assert!(
            e.to_string()
                .contains("rank 0 of the reduced run `r` has no counterpart"),
            "{e}"
        );
    }

    /// `mpi_ranks` rows: (run, ranks, binding, wall seconds), one row per run.
    fn ranks(rows: &[(&str, i32, &str, f64)]) -> RecordBatch {
        let same = |v: &str| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| v)))
        };
        MPI_RANKS
            .batch(vec![
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
                same("node"),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|_| 0))),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
                same("prog"),
                Arc::new(rows.iter().map(|r| Some(r.2)).collect::<StringArray>()),
                Arc::new(rows.iter().map(|_| None::<&str>).collect::<StringArray>()),
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.3))),
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 1))),
                same("complete"),
                Arc::new(rows.iter().map(|_| Some(4)).collect::<Int64Array>()),
                Arc::new(rows.iter().map(|_| Some(1)).collect::<Int32Array>()),
                same("repeating_unit"),
                same("MPI_Allreduce@a+0x1"),
            ])
            .unwrap()
    }

    #[test]
    fn candidates_are_ranked_by_prediction_beside_the_measured_runs() {
        let a = blocks("a", &[(0, vec![(2.0, 1.0); 4])]);
        let b = blocks("b", &[(0, vec![(1.0, 0.5); 4]), (1, vec![(1.0, 0.5); 4])]);
        let reduced = arrow_select::concat::concat_batches(&a.schema(), [&a, &b]).unwrap();
        let reduced_ranks = ranks(&[("a", 1, "core", 0.0), ("b", 2, "core", 0.0)]);
        let measured = ranks(&[("fa", 1, "core", 33.0), ("fb", 2, "core", 20.0)]);
        let s = spec(10, Warmup::Iterations(0));
        let (predictions, _) =
            best_configuration(&s, &reduced, &reduced_ranks, Some(&measured)).unwrap();
        // b: 1.5 + 10 x 1.5 = 16.5 s; a: 1.5 + 10 x 3 = 31.5 s.
        assert_eq!(column(&predictions, col::PREDICTED_SECS), [16.5, 31.5]);
        assert_eq!(column(&predictions, col::MEASURED_SECS), [20.0, 33.0]);
        let variant = yosoku_tables::access::utf8(&predictions, col::VARIANT).unwrap();
        assert_eq!(variant.value(0), "2 ranks, bind core");
        // A reduced run without its mpi_ranks row, and two measured runs of one configuration.
        let e = best_configuration(&s, &reduced, &ranks(&[("a", 1, "core", 0.0)]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no row for the reduced run `b`"), "{e}");
        let twice = ranks(&[("f1", 2, "core", 20.0), ("f2", 2, "core", 21.0)]);
        let e = best_configuration(&s, &reduced, &reduced_ranks, Some(&twice))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("runs `f1`, `f2` all have 2 ranks bound `core`"),
            "{e}"
        );
    }

    #[test]
    fn auto_warmup_excludes_until_times_settle_and_flags_runs_that_never_do() {
        assert_eq!(
            warmup_iterations(
                &[9.0, 5.0, 1.0, 1.0, 1.05, 1.0],
                Warmup::Auto { tolerance: 0.1 }
            ),
            Ok((2, true))
        );
        assert_eq!(
            warmup_iterations(&[1.0, 1.0, 1.0, 1.0], Warmup::Auto { tolerance: 0.1 }),
            Ok((0, true))
        );
        assert!(
            warmup_iterations(&[1.0, 1.0], Warmup::Auto { tolerance: -0.1 })
                .unwrap_err()
                .contains("warmup_tolerance = -0.1: expected a fraction >= 0")
        );
        // Growing times never settle: half are excluded and the rank is flagged.
        assert_eq!(
            warmup_iterations(&[1.0, 2.0, 4.0, 8.0], Warmup::Auto { tolerance: 0.1 }),
            Ok((2, false))
        );
    }

    /// Repeats of one reduced run whose own change-points differ choose one warm-up on their
    /// pooled per-iteration times; a repeat with other ranks is refused.
    #[test]
    fn repeats_share_one_warmup_chosen_on_their_pooled_times() {
        let run = |slow: usize| -> Vec<(f64, f64)> {
            (0..30)
                .map(|i| if i < slow { (3.0, 0.1) } else { (1.0, 0.1) })
                .collect()
        };
        let a = blocks("a", &[(0, run(3))]);
        let b = blocks("b", &[(0, run(1))]);
        let c = blocks("c", &[(0, run(3))]);
        let own = |batch: &RecordBatch| {
            let rows = BlockRows::new("r", batch).unwrap();
            let (id, ranks) = rows.single_run().unwrap();
            let run = rows.rank_run(&ranks[&0]);
            let k = iteration_times("r", id, 0, &run).unwrap().len();
            let occurrences = LoopOccurrences::of(&run, k);
            changepoint_warmup(&loop_times(&run, k, &occurrences)).0
        };
        assert_eq!((own(&a), own(&b), own(&c)), (3, 1, 3));
        let pooled = pooled_warmups(&[&a, &b, &c]).unwrap();
        assert_eq!(pooled, BTreeMap::from([(0, 3)]));
        let mut s = spec(100, Warmup::ChangePoint);
        s.pooled_warmup = pooled;
        let out = simplified(&s, &b, None).unwrap();
        let rows = predictions(&out);
        assert!(
            rows.iter().any(|p| p
                .flags
                .as_deref()
                .is_some_and(|f| f.contains("warmup_excluded=3"))),
            "{rows:?}"
        );
        let two = blocks("d", &[(0, run(3)), (1, run(3))]);
        let e = pooled_warmups(&[&a, &two]).unwrap_err().to_string();
        assert!(e.contains("runs `a` and `d` have different ranks"), "{e}");
    }

    fn predictions(out: &MpiPrediction) -> Vec<PredictionRow> {
        yosoku_tables::rows::read_predictions("p", &out.predictions).unwrap()
    }

    #[test]
    fn a_periodic_block_is_counted_by_its_period_and_phase_not_averaged() {
        // 20 iterations of 1 s + 0.1 s, a 5 s rebuild every 10th iteration from iteration 3.
        let reduced = blocks_with("r", &[(0, vec![(1.0, 0.1); 20])], Some((10, 3, 5.0)));
        let out = simplified(&spec(95, Warmup::Iterations(0)), &reduced, None).unwrap();
        let roles = yosoku_tables::access::utf8(&out.block_predictions, "block_role").unwrap();
        let blocks = yosoku_tables::access::utf8(&out.block_predictions, "block").unwrap();
        let role = |name: &str| {
            (0..blocks.len())
                .find(|&i| blocks.value(i) == name)
                .map(|i| roles.value(i))
        };
        assert_eq!(role("setup"), Some("setup"));
        assert_eq!(role("stencil"), Some("loop"));
        assert_eq!(role("rebuild"), Some("periodic"));
        assert_eq!(role("teardown"), Some("teardown"));
        // Iterations 3, 13, ..., 93 of 95: 10 rebuilds, not 95 / 10 = 9.5.
        let full = column(&out.block_predictions, "full_executions");
        let i = (0..blocks.len())
            .find(|&i| blocks.value(i) == "rebuild")
            .unwrap();
        assert_eq!(full[i], 10.0);
        let run = predictions(&out)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        // 1.0 setup + 95 x 1.1 + 10 x 5 + 0.5 teardown.
        assert!(
            (run.predicted_secs - (1.0 + 104.5 + 50.0 + 0.5)).abs() < 1e-9,
            "{run:?}"
        );
        assert!(run.flags.unwrap().contains("periodic_blocks=1"));
        // Identical steady iterations: a zero-width interval.
        let (lo, hi) = run.interval_secs.unwrap();
        assert!((hi - lo).abs() < 1e-9);
    }

    #[test]
    fn a_periodic_block_also_run_before_and_after_the_loop_extrapolates_only_its_loop_runs() {
        // As a program that builds a structure before its loop, rebuilds it every 20th step
        // and once more after: in 80 steps 4 rebuilds in the loop (iterations 0, 20, 40, 60)
        // and 2 outside; in 1,000 steps 50 in the loop and the same 2 outside, not
        // 6 + 46 x 6 / 4 = 75 (the 46 further loop rebuilds priced as all 6 seen).
        let rebuilt = |steps: usize| {
            crate::fixtures::mpi_blocks_rebuilt(
                "r",
                &[(0, vec![(1.0, 0.1); steps])],
                Some((20, 0, 3.0)),
                true,
            )
        };
        let out = simplified(&spec(1000, Warmup::Iterations(0)), &rebuilt(80), None).unwrap();
        let blocks = yosoku_tables::access::utf8(&out.block_predictions, "block").unwrap();
        let full = column(&out.block_predictions, "full_executions");
        let i = (0..blocks.len())
            .find(|&i| blocks.value(i) == "rebuild")
            .unwrap();
        // The true count, from the longer run itself.
        let truth = rebuilt(1000);
        let names = yosoku_tables::access::utf8(&truth, "block").unwrap();
        let executed = (0..names.len())
            .filter(|&r| names.value(r) == "rebuild")
            .count();
        assert_eq!((full[i], executed), (52.0, 52));
        let run = predictions(&out)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        // 1.0 setup + 1,000 x 1.1 + 52 x 3 + 0.5 teardown.
        assert!(
            (run.predicted_secs - (1.0 + 1100.0 + 156.0 + 0.5)).abs() < 1e-6,
            "{run:?}"
        );
    }

    /// Ranks that ran different numbers of the repeating unit (a loop polling until a message
    /// arrives), or a unit of microseconds repeated hundreds of thousands of times: flagged,
    /// with the hint to give steps or markers; a step loop is not.
    #[test]
    fn a_repeating_unit_at_a_polling_loop_is_flagged() {
        let s = spec(1000, Warmup::Iterations(0));
        let flag_of = |batch: &RecordBatch| {
            let out = simplified(&s, batch, None).unwrap();
            let run = yosoku_tables::rows::read_predictions("p", &out.predictions)
                .unwrap()
                .into_iter()
                .find(|p| p.variant == "run")
                .unwrap();
            (
                run.flags.unwrap_or_default().contains(POLLING_FLAG),
                report_text(&out.report, "repeating unit"),
            )
        };
        let steps = blocks(
            "s",
            &[(0, vec![(0.1, 0.01); 50]), (1, vec![(0.1, 0.01); 50])],
        );
        assert_eq!(flag_of(&steps), (false, String::new()));
        let polling = blocks(
            "p",
            &[(0, vec![(1e-6, 1e-6); 50]), (1, vec![(1e-6, 1e-6); 80])],
        );
        let (flagged, note) = flag_of(&polling);
        assert!(flagged, "{note}");
        assert!(
            note.contains("50 on rank 0, 80 on rank 1") && note.contains("give `steps`"),
            "{note}"
        );
    }

    /// An iteration number an execution cannot hold (negative: the table's own check; past 32
    /// bits) is refused with its row, not wrapped.
    #[test]
    fn an_iteration_out_of_range_is_refused() {
        let good = blocks("r", &[(0, vec![(0.1, 0.01); 10])]);
        let i = good.schema().index_of(col::ITERATION).unwrap();
        for (bad, said) in [
            (
                -1i64,
                "row 3: found -1, expected a finite number >= 0".to_owned(),
            ),
            (
                i64::from(u32::MAX),
                format!("row 3 has iteration {}, outside 0 to 4294967294", u32::MAX),
            ),
        ] {
            let mut iterations: Vec<Option<i64>> =
                yosoku_tables::access::int64(&good, col::ITERATION)
                    .unwrap()
                    .iter()
                    .collect();
            iterations[3] = Some(bad);
            let mut columns = good.columns().to_vec();
            columns[i] = std::sync::Arc::new(arrow_array::Int64Array::from(iterations));
            let batch = RecordBatch::try_new(good.schema(), columns).unwrap();
            let e = simplified(&spec(20, Warmup::Iterations(0)), &batch, None)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&said), "{bad}: {e}");
        }
    }

    /// The text cell `column` of a report.
    fn report_text(report: &RecordBatch, column: &str) -> String {
        let columns = yosoku_tables::access::utf8(report, col::COLUMN_LABEL).unwrap();
        let texts = yosoku_tables::access::utf8(report, col::TEXT).unwrap();
        (0..report.num_rows())
            .find(|&i| columns.value(i) == column)
            .map(|i| texts.value(i).to_owned())
            .unwrap_or_default()
    }

    /// Three repeats of one input on a machine whose speed differs from run to run: each
    /// repeat's interval carries t(0.975, 2) x their spread; their combination is their mean,
    /// with an interval over sqrt(3); a repeat of another program is refused.
    #[test]
    fn repeats_give_the_run_to_run_variation_and_combine_into_their_mean() {
        let repeat = |name: &str, scale: f64| {
            let ranks: Vec<(i32, Vec<(f64, f64)>)> = (0..2)
                .map(|r| (r, vec![(0.1 * scale, 0.02 * scale); 40]))
                .collect();
            blocks(name, &ranks)
        };
        let runs = [repeat("a", 1.0), repeat("b", 1.1), repeat("c", 0.9)];
        let refs: Vec<&RecordBatch> = runs.iter().collect();
        let mut s = spec(400, Warmup::Iterations(0));
        let totals = repeat_totals(&s, &refs).unwrap();
        // setup 1 s + 400 x 0.12 s x scale + teardown 0.5 s.
        let expect = |scale: f64| 1.5 + 400.0 * 0.12 * scale;
        for (t, scale) in totals.iter().zip([1.0, 1.1, 0.9]) {
            assert!((t - expect(scale)).abs() < 1e-9, "{t}");
        }
        s.run_to_run = run_to_run_of(&totals, None);
        let mean = expect(1.0);
        let sd = (2.0 * (400.0 * 0.12 * 0.1f64).powi(2) / 2.0).sqrt();
        let t2 = yosoku_regression::ols::t_quantile(2.0, 0.975).unwrap();
        let one = simplified(&s, &runs[0], None).unwrap();
        let run = yosoku_tables::rows::read_predictions("p", &one.predictions)
            .unwrap()
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        let (lo, hi) = run.interval_secs.unwrap();
        // No iteration noise: the half-width is the run-to-run part alone.
        assert!(((hi - lo) / 2.0 - t2 * sd / mean * run.predicted_secs).abs() < 1e-6);
        let text = report_text(&one.report, "interval");
        assert!(text.contains("the 3 repeats' spread"), "{text}");

        // Noisy iterations: the repeats' spread already holds that noise, so it is the whole
        // half-width; with the prior instead, the within-run half is added in quadrature.
        let noisy = |name: &str, scale: f64| {
            let times: Vec<(f64, f64)> = (0..40)
                .map(|i| (if i % 2 == 0 { 0.08 } else { 0.12 } * scale, 0.02 * scale))
                .collect();
            blocks(name, &[(0, times.clone()), (1, times)])
        };
        let noisy_runs = [noisy("a", 1.0), noisy("b", 1.1), noisy("c", 0.9)];
        let noisy_refs: Vec<&RecordBatch> = noisy_runs.iter().collect();
        let half_of = |s: &MpiSpec| {
            let p = simplified(s, &noisy_runs[0], None).unwrap();
            let run = yosoku_tables::rows::read_predictions("p", &p.predictions)
                .unwrap()
                .into_iter()
                .find(|p| p.variant == "run")
                .unwrap();
            let (lo, hi) = run.interval_secs.unwrap();
            ((hi - lo) / 2.0, run.predicted_secs)
        };
        let mut with_repeats = s.clone();
        with_repeats.run_to_run = run_to_run_of(&repeat_totals(&s, &noisy_refs).unwrap(), None);
        let (half, predicted) = half_of(&with_repeats);
        let expected = with_repeats.run_to_run.relative_half(1) * predicted;
        assert!((half - expected).abs() < 1e-9, "{half} {expected}");
        let mut prior = s.clone();
        prior.run_to_run = RunToRun::Floor {
            pct: 5.0,
            user: false,
        };
        let (half, predicted) = half_of(&prior);
        assert!(half > 0.05 * predicted + 1e-6, "{half} {predicted}");

        let together = combined(&s, &refs, None).unwrap();
        let run = yosoku_tables::rows::read_predictions("p", &together.predictions)
            .unwrap()
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        assert!(
            (run.predicted_secs - mean).abs() < 1e-9,
            "{}",
            run.predicted_secs
        );
        let (lo, hi) = run.interval_secs.unwrap();
        assert!(((hi - lo) / 2.0 - t2 * sd / 3f64.sqrt()).abs() < 1e-6);
        assert!(report_text(&together.report, "interval").contains("mean of 3 repeats"));

        // Another program's run among the repeats: its blocks differ (a periodic `rebuild`).
        let other = blocks_with(
            "d",
            &[(0, vec![(0.1, 0.02); 40]), (1, vec![(0.1, 0.02); 40])],
            Some((10, 0, 0.3)),
        );
        let e = combined(&s, &[&runs[0], &other], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("blocks are not the same"), "{e}");
        // Given as repeats for the run-to-run spread, it is refused as well.
        let e = repeat_totals(&s, &[&runs[0], &other])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("blocks are not the same (block `rebuild`)"),
            "{e}"
        );
        let e = combined(&s, &[&runs[0]], None).unwrap_err().to_string();
        assert!(e.contains("two or more"), "{e}");
    }

    #[test]
    fn noisy_iterations_give_an_interval_and_a_drift_is_flagged_or_extrapolated() {
        // 40 iterations alternating 0.9 / 1.1 s: the prediction of 400 has an interval around
        // it; the same with a rising cost is flagged, and extrapolated on request.
        let noisy: Vec<(f64, f64)> = (0..40)
            .map(|i| (if i % 2 == 0 { 0.9 } else { 1.1 }, 0.0))
            .collect();
        let out = simplified(
            &spec(400, Warmup::Iterations(0)),
            &blocks("r", &[(0, noisy)]),
            None,
        )
        .unwrap();
        let run = predictions(&out)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        let (lo, hi) = run.interval_secs.unwrap();
        assert!(
            lo < run.predicted_secs && run.predicted_secs < hi,
            "{run:?}"
        );
        // 360 more iterations with sd 0.1 s: at least sqrt(360) x 0.1 x 1.96 = 3.7 s each side.
        assert!(hi - run.predicted_secs > 3.7, "{run:?}");
        assert!(run.flags.is_none(), "{run:?}");
        let rising: Vec<(f64, f64)> = (0..40)
            .map(|i| {
                (
                    1.0 + 0.01 * i as f64 + if i % 2 == 0 { 0.01 } else { -0.01 },
                    0.0,
                )
            })
            .collect();
        let reduced = blocks("r", &[(0, rising)]);
        let flat = simplified(&spec(400, Warmup::Iterations(0)), &reduced, None).unwrap();
        let flat = predictions(&flat)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        assert!(
            flat.flags.as_deref().unwrap().contains("trend=+"),
            "{flat:?}"
        );
        let mut linear = spec(400, Warmup::Iterations(0));
        linear.trend = Trend::Linear;
        let linear = simplified(&linear, &reduced, None).unwrap();
        let linear = predictions(&linear)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        assert!(linear.flags.as_deref().unwrap().contains("extrapolated"));
        // Iteration i costs 1 + 0.01 i: 400 iterations cost 400 + 0.01 x 79,800 = 1,198 s
        // (plus 1.5 s of setup and teardown; the alternation tilts the fitted slope by
        // -3.75e-5 s, 2.7 s over the extrapolation); the steady mean alone says 400 x 1.195.
        assert!((linear.predicted_secs - 1199.5).abs() < 3.0, "{linear:?}");
        let (lo, hi) = linear.interval_secs.unwrap();
        assert!(lo < 1199.5 && 1199.5 < hi, "{linear:?}");
        assert!((flat.predicted_secs - 1199.5).abs() > 100.0, "{flat:?}");
    }

    #[test]
    fn the_run_is_sized_in_the_programs_steps() {
        // 20 iterations for 10 steps: 2 per step, 200 for 100.
        let reduced = blocks("r", &[(0, vec![(1.0, 0.0); 20])]);
        let mut s = spec(0, Warmup::Iterations(0));
        s.size = RunSize::Steps {
            reduced: 10,
            full: 100,
        };
        let out = simplified(&s, &reduced, None).unwrap();
        let run = predictions(&out)
            .into_iter()
            .find(|p| p.variant == "run")
            .unwrap();
        assert_eq!(run.repetitions, 200);
        assert!((run.predicted_secs - 201.5).abs() < 1e-9, "{run:?}");
        // A measured full run of another length is refused with what was derived.
        let full = blocks("f", &[(0, vec![(1.0, 0.0); 100])]);
        let e = simplified(&s, &reduced, Some(&full))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ran 100 iterations, but full_iterations = 200 (2 iteration(s) per step)"),
            "{e}"
        );
    }
}
