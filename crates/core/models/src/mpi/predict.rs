//! The prediction itself: per rank and block, everything the reduced run measured plus the
//! further iterations at a steady iteration's mean ([`simplified`], the paper's method).

use std::collections::{BTreeMap, HashMap};

use arrow_array::RecordBatch;

use crate::ModelError;

use super::input::{BlockRows, RankRows, RankRun, measured_run};
use super::loops::{Occurrence, full_iterations, periodic_count};
use super::rank::{BlockPrediction, RankPrediction};
use super::spec::{MpiPrediction, MpiSpec};
use super::tables::rank_tables;
use super::warmup::{
    LoopOccurrences, SteadyIterations, iteration_times, loop_times, warmup_iterations,
};

pub(super) fn predict_rank(
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
    let steady = steady_iterations(&times, w, full, spec, rank).map_err(at)?;
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
        drift_bound: steady.drift_bound,
        drift_half_secs: steady.drift_half_secs,
        two_lengths_not_supported: steady.two_lengths_not_supported,
        periodic_blocks,
        reduced_secs: run.executions().map(|e| e.duration_secs).sum(),
        blocks,
    })
}

/// What the steady iterations say of the extra ones: of this run alone, or, with two lengths,
/// of the shorter run's iterations averaged into this one's where both ran them, the line
/// through them extrapolated.
fn steady_iterations(
    times: &[f64],
    w: usize,
    full: u64,
    spec: &MpiSpec,
    rank: i32,
) -> Result<SteadyIterations, String> {
    if spec.shorter.is_empty() {
        return Ok(SteadyIterations::of(times, w, full, spec.trend));
    }
    let shorter = spec.shorter.get(&rank).ok_or_else(|| {
        "the shorter run has no such rank: two lengths of one configuration have the same ranks"
            .to_owned()
    })?;
    if shorter.len() >= times.len() {
        return Err(format!(
            "the shorter run has {} iterations, the reduced run {}: two lengths need the reduced run to be the longer",
            shorter.len(),
            times.len()
        ));
    }
    Ok(SteadyIterations::two_lengths(times, shorter, w, full))
}

/// Each block's executions summed, blocks in order of first execution: steady executions (loop
/// iterations from `w` on, periodic blocks aside) into `mean_secs` (a sum for now), everything
/// else into `warmup_secs`. A block first run before the loop's first block is setup, after it
/// teardown (until it shows up in the loop).
pub(super) fn block_sums(
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
pub(super) fn per_iteration(executions: f64, iterations: f64) -> f64 {
    let raw = executions / iterations;
    let whole = raw.round();
    if whole > 0.0 && (executions - whole * iterations).abs() <= 1.0 {
        whole
    } else {
        raw
    }
}

/// Each rank of the run `run_id` of `rows` predicted, one rank's executions read at a time.
pub(super) fn predict_run(
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
        if !spec.shorter.is_empty() {
            "compute and communication from the same reduced run, its cost per iteration a line through its iterations and a shorter run's (two lengths)"
        } else if spec.pooled_warmup.is_empty() {
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
