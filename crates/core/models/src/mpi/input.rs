//! The runs as the predictions read them: each rank's block executions decoded from an
//! `mpi_blocks` table once, the measured full runs' totals, and the checks that runs to compare
//! are of one configuration.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use yosoku_tables::{MPI_BLOCKS, col};

use crate::{Input, ModelError};

use super::rank::RankPrediction;

/// One execution of a block: 16 bytes, so that a reduced run of tens of millions of
/// executions fits beside its table (the block's name is an index into [`RankRun::names`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Execution {
    pub(super) duration_secs: f64,
    /// The main-loop iteration, [`NO_ITERATION`] outside the loop.
    pub(super) iteration: u32,
    /// The block's index in [`RankRun::names`], and [`COMPUTE_BIT`] for a compute block.
    pub(super) block_and_kind: u32,
}

/// [`Execution::iteration`] of a block outside the main loop.
pub(super) const NO_ITERATION: u32 = u32::MAX;

/// The bit of [`Execution::block_and_kind`] that marks a compute block.
pub(super) const COMPUTE_BIT: u32 = 1 << 31;

const _: () = assert!(std::mem::size_of::<Execution>() == 16);

impl Execution {
    pub(super) fn iteration(&self) -> Option<i64> {
        (self.iteration != NO_ITERATION).then_some(i64::from(self.iteration))
    }

    /// The block's index in its run's names.
    pub(super) fn block(&self) -> usize {
        (self.block_and_kind & !COMPUTE_BIT) as usize
    }

    pub(super) fn compute(&self) -> bool {
        self.block_and_kind & COMPUTE_BIT != 0
    }
}

/// One rank of one run: its rows of the table, read as executions on each pass
/// ([`RankRun::executions`]) and not kept (16 bytes an execution was 0.3 GB beside the table
/// for a rank of ten million calls).
#[derive(Clone, Copy)]
pub(super) struct RankRun<'a> {
    pub(super) rows: &'a BlockRows<'a>,
    pub(super) stretches: &'a [std::ops::Range<usize>],
}

impl<'a> RankRun<'a> {
    pub(super) fn device(&self) -> &'a str {
        self.rows
            .device
            .value(self.stretches.first().map_or(0, |r| r.start))
    }

    /// The distinct block names of the table ([`Execution::block`] indexes them).
    pub(super) fn names(&self) -> &'a [Arc<str>] {
        &self.rows.names
    }

    pub(super) fn name(&self, block: usize) -> &'a str {
        &self.rows.names[block]
    }

    /// The rank's executions in time order.
    pub(super) fn executions(&self) -> impl Iterator<Item = Execution> + 'a {
        let rows = self.rows;
        self.stretches
            .iter()
            .flat_map(|r| r.clone())
            .map(move |i| rows.execution(i))
    }
}

/// The distinct block names of a table, numbered in order of first sight.
#[derive(Default)]
pub(super) struct BlockNumbering {
    pub(super) ids: HashMap<String, u32>,
    pub(super) names: Vec<Arc<str>>,
}

impl BlockNumbering {
    pub(super) fn number(&mut self, name: &str) -> u32 {
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
pub(super) struct BlockRows<'a> {
    pub(super) role: &'static str,
    pub(super) device: yosoku_tables::text::Text<'a>,
    pub(super) iteration: &'a arrow_array::Int64Array,
    pub(super) duration: &'a arrow_array::Float64Array,
    /// Each row's block number ([`BlockNumbering`]), by its text.
    pub(super) blocks: yosoku_tables::text::Lookup<'a, u32>,
    /// Whether a row is a compute block, by its text.
    pub(super) compute: yosoku_tables::text::Lookup<'a, bool>,
    pub(super) names: Vec<Arc<str>>,
    /// run id -> rank -> the stretches of rows of that rank, in table order.
    pub(super) ranks: BTreeMap<String, RankRows>,
}

/// rank -> the stretches of rows of that rank in an `mpi_blocks` table, in table order.
pub(super) type RankRows = BTreeMap<i32, Vec<std::ops::Range<usize>>>;

impl<'a> BlockRows<'a> {
    pub(super) fn new(role: &'static str, batch: &'a RecordBatch) -> Result<Self, ModelError> {
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
    pub(super) fn execution(&self, i: usize) -> Execution {
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
    pub(super) fn rank_run(&'a self, stretches: &'a [std::ops::Range<usize>]) -> RankRun<'a> {
        RankRun {
            rows: self,
            stretches,
        }
    }

    /// The one run of a table that must hold one, its ranks' stretches of rows.
    pub(super) fn single_run(&self) -> Result<(&str, &RankRows), ModelError> {
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
pub(super) fn single_run_error<'s>(
    role: &str,
    ids: impl ExactSizeIterator<Item = &'s str>,
) -> ModelError {
    let n = ids.len();
    ModelError::invalid(format!(
        "input `{role}` holds {n} runs ({}); this step predicts one run from one reduced run: filter the table on `run_id`, or use `mpi_best_configuration` to compare runs",
        ids.collect::<Vec<_>>().join(", ")
    ))
}

pub(super) fn no_iterations(role: &str, run_id: &str, rank: i32) -> ModelError {
    ModelError::invalid(format!(
        "input `{role}`: rank {rank} of run `{run_id}` has no main-loop iterations (no repeating MPI call sites and no yosoku_mpi_iteration markers); a simplified-execution prediction scales the loop"
    ))
}

/// Rank -> measured (compute, communication) seconds of a full run.
pub(super) type MeasuredRanks = BTreeMap<i32, (f64, f64)>;

/// A measured full run: its id and its ranks' times.
#[derive(Debug, Clone)]
pub(super) struct MeasuredRun {
    /// The run's id (repeats: their ids joined with `+`).
    pub(super) id: String,
    /// Per rank, the mean over the repeats.
    pub(super) ranks: MeasuredRanks,
    /// Main-loop iterations each rank ran.
    pub(super) iterations: BTreeMap<i32, u64>,
    /// Each repeat's run time (its slowest rank's total).
    pub(super) run_secs: Vec<f64>,
}

/// One run's measured ranks and the main-loop iterations each ran.
pub(super) type RunTotals = (MeasuredRanks, BTreeMap<i32, u64>);

/// Per run, per rank of an `mpi_blocks` table: the compute and communication seconds (summed in
/// the table's order, as the executions ran) and the main-loop iterations run. All that a
/// measured run needs, read in one pass without keeping the executions: a full run's table has
/// a million of them, and three prediction steps may read it.
pub(super) fn measured_totals(
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

/// The compute and communication runs, and the measured full run, are of one configuration: the
/// same ranks, and the measured run made the iterations predicted.
pub(super) fn check_same_configuration(
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

/// The measured full run: one run, or several repeats of one configuration (the same ranks and
/// iterations), whose spread is the noise a prediction is judged against.
pub(super) fn measured_run(
    measured: Option<&RecordBatch>,
) -> Result<Option<MeasuredRun>, ModelError> {
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
