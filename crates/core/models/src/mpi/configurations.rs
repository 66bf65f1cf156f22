//! Across configurations: the separate-runs baseline (compute and communication measured in
//! different runs) and the best configuration among several reduced runs (rank counts,
//! bindings).

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use yosoku_tables::report::{ReportCell, report_batch};
use yosoku_tables::rows::{PredictionRow, predictions_batch};
use yosoku_tables::{MPI_RANKS, col};

use crate::{Input, ModelError};

use super::input::{BlockRows, measured_run};
use super::predict::predict_run;
use super::rank::error_pct;
use super::spec::{MpiPrediction, MpiSpec};
use super::tables::rank_tables;

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
pub(super) fn configurations(
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
pub(super) struct Candidate {
    pub(super) label: String,
    pub(super) predicted_secs: f64,
    pub(super) measured_secs: Option<f64>,
    pub(super) device: String,
    pub(super) measured_run: Option<String>,
    pub(super) full_iterations: u64,
}

pub(super) fn candidate_label(ranks: i32, binding: &str) -> String {
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
