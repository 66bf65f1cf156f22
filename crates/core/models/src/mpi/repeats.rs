//! Several reduced runs of one configuration: each predicted (the run-to-run spread of the
//! predictions is the interval) or combined into one prediction (every block's time averaged).

use std::collections::BTreeMap;

use arrow_array::RecordBatch;

use crate::ModelError;
use crate::model::Model;

use super::input::{BlockRows, measured_run};
use super::loops::RunSize;
use super::model::{
    MPI_SIMPLIFIED_REPEATS_KIND, MpiSimplified, MpiSimplifiedRepeats, PredictedRank,
    RepeatsTraining, SimplifiedOptions, SimplifiedTraining, simplified_options,
};
use super::predict::{predict_run, predicted_ranks};
use super::rank::RankPrediction;
use super::spec::{MpiPrediction, MpiSpec, RunToRun};
use super::tables::rank_tables;

/// The predicted run time (its slowest rank's total) of each repeat of the reduced run, each
/// predicted alone with `spec`: their spread is the run-to-run variation of a prediction.
/// Repeats of other programs or inputs (other ranks, iterations or blocks) are refused: their
/// spread would not be run-to-run variation.
pub fn repeat_totals(spec: &MpiSpec, repeats: &[&RecordBatch]) -> Result<Vec<f64>, ModelError> {
    paired_repeat_totals(spec, repeats, &[])
}

/// [`repeat_totals`] in two lengths, each repeat paired with a shorter run of its own
/// (`shorters`, one per repeat, in their order; none: every repeat with `spec`'s): each pair's
/// prediction varies from run to run as the full run will, the shorter run's noise included.
pub fn paired_repeat_totals(
    spec: &MpiSpec,
    repeats: &[&RecordBatch],
    shorters: &[BTreeMap<i32, Vec<f64>>],
) -> Result<Vec<f64>, ModelError> {
    if !shorters.is_empty() && shorters.len() != repeats.len() {
        return Err(ModelError::invalid(format!(
            "{} shorter runs for {} repeats: pair each repeat with one shorter run",
            shorters.len(),
            repeats.len()
        )));
    }
    Ok(predict_repeats(spec, repeats, shorters)?
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
pub(super) type RankPredictions = BTreeMap<i32, RankPrediction>;

/// Each repeat of the reduced run predicted alone (repeat `i` paired with `shorters[i]` where
/// given: two lengths), (run id, ranks' predictions), after checking that they are of one
/// program and input: the same ranks, iterations predicted and blocks.
fn predict_repeats(
    spec: &MpiSpec,
    repeats: &[&RecordBatch],
    shorters: &[BTreeMap<i32, Vec<f64>>],
) -> Result<Vec<(String, RankPredictions)>, ModelError> {
    let mut runs: Vec<(String, RankPredictions)> = Vec::new();
    for (i, batch) in repeats.iter().enumerate() {
        let paired;
        let spec = match shorters.get(i) {
            Some(shorter) => {
                paired = MpiSpec {
                    shorter: shorter.clone(),
                    ..spec.clone()
                };
                &paired
            }
            None => spec,
        };
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
pub(super) fn same_program(
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
    combined_model(spec, repeats, measured).map(|(p, _)| p)
}

/// [`combined`], and the model it fitted and asked ([`MpiSimplifiedRepeats`]: saved, it
/// predicts runs of other lengths).
pub fn combined_model(
    spec: &MpiSpec,
    repeats: &[&RecordBatch],
    measured: Option<&RecordBatch>,
) -> Result<(MpiPrediction, MpiSimplifiedRepeats), ModelError> {
    let model =
        MpiSimplifiedRepeats::fit(RepeatsTraining { repeats, spec }, &simplified_options(spec))?;
    let mean = model.rank_predictions(spec.size)?;
    let measured = measured_run(measured)?;
    let ids: Vec<&str> = model
        .repeats
        .iter()
        .map(|m| m.reduced_run.as_str())
        .collect();
    let tables = rank_tables(
        spec,
        &format!("the mean of {} repeats' predictions", model.repeats.len()),
        &ids.join("+"),
        &mean,
        &mean,
        measured.as_ref(),
        model.repeats.len(),
    )?;
    Ok((tables, model))
}

impl MpiSimplifiedRepeats {
    /// Every rank's prediction of a run of `size`: each repeat's, averaged ([`mean_rank`]),
    /// after checking that the repeats are of one program and input.
    pub(super) fn rank_predictions(&self, size: RunSize) -> Result<RankPredictions, ModelError> {
        let runs: Vec<(&str, RankPredictions)> = self
            .repeats
            .iter()
            .map(|m| Ok((m.reduced_run.as_str(), m.rank_predictions(size)?)))
            .collect::<Result<_, ModelError>>()?;
        let Some((first_id, first)) = runs.first() else {
            return Err(ModelError::invalid(
                "combining repeats needs two or more reduced runs".to_owned(),
            ));
        };
        for (id, other) in &runs[1..] {
            same_program((first_id, first), (id, other))?;
        }
        Ok(first
            .keys()
            .map(|rank| {
                let all: Vec<&RankPrediction> = runs.iter().map(|(_, r)| &r[rank]).collect();
                (*rank, mean_rank(&all))
            })
            .collect())
    }
}

impl Model for MpiSimplifiedRepeats {
    const KIND: &'static str = MPI_SIMPLIFIED_REPEATS_KIND;
    type Options = SimplifiedOptions;
    type Training<'a> = RepeatsTraining<'a>;
    type Question<'a> = RunSize;
    type Answer = Vec<PredictedRank>;

    /// Fits each repeat's model ([`MpiSimplified`]); two or more repeats.
    fn fit(training: Self::Training<'_>, options: &Self::Options) -> Result<Self, ModelError> {
        if training.repeats.len() < 2 {
            return Err(ModelError::invalid(
                "combining repeats needs two or more reduced runs".to_owned(),
            ));
        }
        let repeats = training
            .repeats
            .iter()
            .enumerate()
            .map(|(i, reduced)| {
                MpiSimplified::fit(
                    SimplifiedTraining {
                        reduced,
                        spec: training.spec,
                    },
                    options,
                )
                .map_err(|e| ModelError::invalid(format!("repeat {}: {e}", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let model = MpiSimplifiedRepeats { repeats };
        // The repeats are checked to be of one program here, at the length the step asks.
        model.rank_predictions(training.spec.size)?;
        Ok(model)
    }

    fn predict(&self, size: Self::Question<'_>) -> Result<Self::Answer, ModelError> {
        Ok(predicted_ranks(self.rank_predictions(size)?))
    }
}

/// One rank's predictions from several repeats (of the same blocks) as one: each block's times
/// averaged, the within-run interval of the mean.
pub(super) fn mean_rank(all: &[&RankPrediction]) -> RankPrediction {
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
    // Repeats of one length cannot show a drift beyond it: the mean of theirs, not less.
    out.drift_half_secs = all.iter().map(|p| p.drift_half_secs).sum::<f64>() / k;
    out.drift_bound = all.iter().map(|p| p.drift_bound).sum::<f64>() / k;
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
