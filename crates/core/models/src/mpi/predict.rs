//! The prediction itself: per rank and block, everything the reduced run measured plus the
//! further iterations at a steady iteration's mean ([`simplified`], the paper's method).

use std::collections::{BTreeMap, HashMap};

use arrow_array::RecordBatch;

use crate::ModelError;

use super::input::{BlockRows, RankRows, RankRun, measured_run};
use super::loops::{Occurrence, RunSize, full_iterations, periodic_count};
use super::model::{
    FittedBlock, FittedPeriodic, FittedRank, MPI_SIMPLIFIED_KIND, MpiSimplified, PredictedRank,
    SimplifiedOptions, SimplifiedTraining, simplified_options,
};
use super::rank::{BlockPrediction, RankPrediction};
use super::spec::{MpiPrediction, MpiSpec, Trend};
use super::tables::rank_tables;
use super::warmup::{
    LoopOccurrences, SteadyIterations, iteration_times, loop_times, warmup_iterations,
};
use crate::model::Model;

pub(super) fn predict_rank(
    role: &str,
    run_id: &str,
    rank: i32,
    run: &RankRun,
    spec: &MpiSpec,
) -> Result<RankPrediction, ModelError> {
    let fitted = fit_rank(role, run_id, rank, run, spec)?;
    fitted.predict(spec.size, spec.trend, run_id)
}

/// What a rank of the reduced run says of any run length: its iterations, warm-up and
/// per-iteration times, and per block what it measured (docs/methods.md, section 3).
pub(super) fn fit_rank(
    role: &str,
    run_id: &str,
    rank: i32,
    run: &RankRun,
    spec: &MpiSpec,
) -> Result<FittedRank, ModelError> {
    let all_times = iteration_times(role, run_id, rank, run)?;
    let k = all_times.len();
    let at = |e: String| ModelError::invalid(format!("rank {rank} of run `{run_id}`: {e}"));
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
    let (order, mut acc) = block_sums(run, w, &occurrences);
    let blocks = order
        .into_iter()
        .filter_map(|key| acc[key].take().map(|b| (key, b)))
        .map(|(key, b)| {
            let periodic = match occurrences.by_block[key] {
                Some(Occurrence::Periodic { period, phase }) => {
                    let (in_loop_executions, in_loop_secs) = periodic_in_loop[&key];
                    Some(FittedPeriodic {
                        period,
                        phase,
                        seen: occurrences.present[key],
                        in_loop_executions,
                        in_loop_secs,
                    })
                }
                _ => None,
            };
            FittedBlock {
                block: b.block,
                compute: b.compute,
                in_loop: b.in_loop,
                before_loop: b.role == "setup",
                warmup_secs: b.warmup_secs,
                steady_executions: b.steady_executions,
                steady_secs: b.mean_secs,
                other_executions: b.full_executions,
                periodic,
            }
        })
        .collect();
    Ok(FittedRank {
        rank,
        device: run.device().to_owned(),
        iterations: k,
        warmup: w,
        settled,
        loop_secs: times,
        shorter_loop_secs: (!spec.shorter.is_empty())
            .then(|| spec.shorter.get(&rank).cloned())
            .map(|s| {
                s.ok_or_else(|| {
                    at("the shorter run has no such rank: two lengths of one configuration have the same ranks"
                        .to_owned())
                })
            })
            .transpose()?,
        reduced_secs: run.executions().map(|e| e.duration_secs).sum(),
        blocks,
    })
}

impl FittedRank {
    /// The rank's prediction of a run of `size` (`trend` for a drift of one length); `run_id`
    /// names the reduced run in errors.
    pub(super) fn predict(
        &self,
        size: RunSize,
        trend: Trend,
        run_id: &str,
    ) -> Result<RankPrediction, ModelError> {
        let rank = self.rank;
        let at = |e: String| ModelError::invalid(format!("rank {rank} of run `{run_id}`: {e}"));
        let k = self.iterations;
        let w = self.warmup;
        let (full, size_note) = full_iterations(size, k).map_err(|e| at(e.to_string()))?;
        let steady = self.steady_iterations(full, trend).map_err(at)?;
        let steady_iterations = (k - w) as f64;
        let mut periodic_blocks = 0;
        let blocks = self
            .blocks
            .iter()
            .map(|f| {
                let mut b = BlockPrediction {
                    block: f.block.clone(),
                    compute: f.compute,
                    in_loop: f.in_loop,
                    role: if f.in_loop {
                        "loop"
                    } else if f.before_loop {
                        "setup"
                    } else {
                        "teardown"
                    },
                    period_iterations: None,
                    warmup_secs: f.warmup_secs,
                    steady_executions: f.steady_executions,
                    mean_secs: f.steady_secs,
                    full_executions: f.other_executions,
                    predicted_secs: 0.0,
                };
                if let Some(p) = &f.periodic {
                    // Measured as it ran (all its executions are in `warmup_secs`); the full
                    // run's further occurrences at its period and phase, each as long as the
                    // reduced run's on average.
                    periodic_blocks += 1;
                    let seen = p.seen as f64;
                    let more = periodic_count(full, p.period, p.phase) as f64 - seen;
                    let (executions, secs) = (b.full_executions, b.warmup_secs);
                    b.role = "periodic";
                    b.period_iterations = Some(p.period as i64);
                    b.mean_secs = Some(secs / executions);
                    b.full_executions = executions + more * p.in_loop_executions / seen;
                    b.predicted_secs = secs + more * p.in_loop_secs / seen;
                } else if let Some(sum) = f.steady_secs {
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
            device: self.device.clone(),
            iterations: k,
            full_iterations: full,
            size_note,
            warmup: w,
            settled: self.settled,
            interval_half_secs: steady.interval_half_secs,
            trend_pct_per_1000: steady.trend_pct_per_1000,
            trend_extrapolated: steady.extrapolate,
            drift_bound: steady.drift_bound,
            drift_half_secs: steady.drift_half_secs,
            two_lengths_not_supported: steady.two_lengths_not_supported,
            periodic_blocks,
            reduced_secs: self.reduced_secs,
            blocks,
        })
    }

    /// What the steady iterations say of the extra ones: of this run alone, or, with two
    /// lengths, the line through both runs' steady iterations where it is better supported.
    fn steady_iterations(&self, full: u64, trend: Trend) -> Result<SteadyIterations, String> {
        let (times, w) = (&self.loop_secs, self.warmup);
        let Some(shorter) = &self.shorter_loop_secs else {
            return Ok(SteadyIterations::of(times, w, full, trend));
        };
        if shorter.len() >= times.len() {
            return Err(format!(
                "the shorter run has {} iterations, the reduced run {}: two lengths need the reduced run to be the longer",
                shorter.len(),
                times.len()
            ));
        }
        Ok(SteadyIterations::two_lengths(times, shorter, w, full))
    }
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

impl MpiSimplified {
    /// Every rank's prediction of a run of `size`, in the form the tables are written from.
    pub(super) fn rank_predictions(
        &self,
        size: RunSize,
    ) -> Result<BTreeMap<i32, RankPrediction>, ModelError> {
        let trend = match self.options.trend.as_str() {
            "linear" => Trend::Linear,
            _ => Trend::Flag,
        };
        self.ranks
            .iter()
            .map(|r| Ok((r.rank, r.predict(size, trend, &self.reduced_run)?)))
            .collect()
    }
}

impl Model for MpiSimplified {
    const KIND: &'static str = MPI_SIMPLIFIED_KIND;
    type Options = SimplifiedOptions;
    type Training<'a> = SimplifiedTraining<'a>;
    type Question<'a> = RunSize;
    type Answer = Vec<PredictedRank>;

    /// Fits every rank of the reduced run; `options` is what the step's settings say
    /// (`SimplifiedOptions::of` the training's spec), recorded beside the model.
    fn fit(training: Self::Training<'_>, _options: &Self::Options) -> Result<Self, ModelError> {
        let rows = BlockRows::new("reduced", training.reduced)?;
        let (id, ranks) = rows.single_run()?;
        let ranks = ranks
            .iter()
            .map(|(rank, stretches)| {
                let run = rows.rank_run(stretches);
                fit_rank(rows.role, id, *rank, &run, training.spec)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MpiSimplified {
            reduced_run: id.to_owned(),
            options: simplified_options(training.spec),
            ranks,
        })
    }

    fn predict(&self, size: Self::Question<'_>) -> Result<Self::Answer, ModelError> {
        Ok(predicted_ranks(self.rank_predictions(size)?))
    }
}

/// Ranks' predictions as a model answers them: each rank's compute and communication time.
pub(super) fn predicted_ranks(ranks: BTreeMap<i32, RankPrediction>) -> Vec<PredictedRank> {
    ranks
        .into_iter()
        .map(|(rank, p)| PredictedRank {
            rank,
            compute_secs: p.secs(true),
            communication_secs: p.secs(false),
            full_iterations: p.full_iterations,
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
    simplified_model(spec, reduced, measured).map(|(p, _)| p)
}

/// [`simplified`], and the model it fitted and asked ([`MpiSimplified`]: saved, it predicts
/// runs of other lengths).
pub fn simplified_model(
    spec: &MpiSpec,
    reduced: &RecordBatch,
    measured: Option<&RecordBatch>,
) -> Result<(MpiPrediction, MpiSimplified), ModelError> {
    let model = MpiSimplified::fit(
        SimplifiedTraining { reduced, spec },
        &simplified_options(spec),
    )?;
    let predicted = model.rank_predictions(spec.size)?;
    let measured = measured_run(measured)?;
    let tables = rank_tables(
        spec,
        if !spec.shorter.is_empty() {
            "compute and communication from the same reduced run, its cost per iteration a line through its iterations and a shorter run's (two lengths)"
        } else if spec.pooled_warmup.is_empty() {
            "compute and communication from the same reduced run"
        } else {
            "compute and communication from the same reduced run, the warm-up chosen once on the pooled per-iteration times of its repeats"
        },
        &model.reduced_run,
        &predicted,
        &predicted,
        measured.as_ref(),
        1,
    )?;
    Ok((tables, model))
}
