//! MPI runs as `runs` rows per call path (docs/methods.md, section 7): the time each run spent
//! in each block of its ranks (a communication call site, or the compute between two), over the
//! ranks as the user asks, with the run's parameters and its rank count, so that the scaling
//! models see an MPI experiment (several runs over sizes and rank counts) as Extra-P sees a
//! Score-P one: one series per call path.
//!
//! A block a rank never executed counts as 0 s on that rank. Runs whose parameters are equal are
//! repetitions of one point.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_tables::{MPI_BLOCKS, MPI_RANKS, RUNS, col};

use crate::{Input, ModelError};

/// The call path that stands for the whole run (its slowest rank's wall time, or as
/// [`OverRanks`] says), phase `total`.
pub use yosoku_tables::rows::WHOLE_RUN;
/// The parameter that holds a run's rank count.
pub const RANKS_PARAMETER: &str = "ranks";

/// How one run's per-rank times of a call path become the run's time of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverRanks {
    /// The slowest rank's: what bounds the run.
    Max,
    /// The mean over all ranks (0 s on a rank that never ran the block).
    Mean,
    /// The sum over the ranks: the CPU time, as Score-P's profiles sum over locations.
    Sum,
}

impl OverRanks {
    pub fn parse(text: &str) -> Option<OverRanks> {
        match text {
            "max" => Some(OverRanks::Max),
            "mean" => Some(OverRanks::Mean),
            "sum" => Some(OverRanks::Sum),
            _ => None,
        }
    }

    fn reduce(self, per_rank: &[f64]) -> f64 {
        match self {
            OverRanks::Max => per_rank.iter().copied().fold(0.0, f64::max),
            OverRanks::Sum => per_rank.iter().sum(),
            OverRanks::Mean => per_rank.iter().sum::<f64>() / per_rank.len().max(1) as f64,
        }
    }
}

/// What `mpi_call_paths` is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct CallPathSpec {
    pub over_ranks: OverRanks,
    /// Keep a call path only if its time over all runs is at least this share (0..1) of the
    /// runs' whole time.
    pub min_share: f64,
}

/// One run as `mpi_ranks` describes it.
pub(super) struct RunInfo {
    pub(super) device: String,
    pub(super) program: String,
    /// Its `parameters`, with its rank count among them.
    pub(super) parameters: String,
    ranks: usize,
    /// Wall seconds per rank, by rank.
    pub(super) wall_secs: Vec<f64>,
}

/// The runs of `mpi_ranks`, in order of first appearance.
pub(super) fn read_runs(batch: &RecordBatch) -> Result<Vec<(String, RunInfo)>, ModelError> {
    let input = Input::new("ranks", &MPI_RANKS, batch)?;
    let (run_id, device, command) = (
        input.utf8(col::RUN_ID)?,
        input.utf8(col::DEVICE)?,
        input.utf8(col::COMMAND)?,
    );
    let parameters = input.utf8(col::PARAMETERS)?;
    let (rank, size, wall) = (
        input.int32(col::RANK)?,
        input.int32(col::RANKS)?,
        input.float64(col::WALL_SECS)?,
    );
    let mut runs: Vec<(String, RunInfo)> = Vec::new();
    for r in 0..input.rows() {
        let id = run_id.value(r);
        let i = match runs.iter().position(|(k, _)| k == id) {
            Some(i) => i,
            None => {
                let ranks = usize::try_from(size.value(r)).unwrap_or(0).max(1);
                let program = command
                    .value(r)
                    .split_whitespace()
                    .next()
                    .map(|p| p.rsplit('/').next().unwrap_or(p))
                    .unwrap_or("")
                    .to_owned();
                let given = parameters.get(r).unwrap_or("");
                let has_ranks = given.split(';').any(|p| {
                    p.split_once('=')
                        .is_some_and(|(k, _)| k.trim() == RANKS_PARAMETER)
                });
                let parameters = match (given.is_empty(), has_ranks) {
                    (_, true) => given.to_owned(),
                    (true, false) => format!("{RANKS_PARAMETER}={ranks}"),
                    (false, false) => format!("{given};{RANKS_PARAMETER}={ranks}"),
                };
                runs.push((
                    id.to_owned(),
                    RunInfo {
                        device: device.value(r).to_owned(),
                        program,
                        parameters,
                        ranks,
                        wall_secs: vec![0.0; ranks],
                    },
                ));
                runs.len() - 1
            }
        };
        let info = &mut runs[i].1;
        let slot = usize::try_from(rank.value(r))
            .ok()
            .filter(|&k| k < info.ranks)
            .ok_or_else(|| {
                ModelError::invalid(format!(
                    "ranks: run `{id}` has rank {} of {}",
                    rank.value(r),
                    info.ranks
                ))
            })?;
        info.wall_secs[slot] = wall.value(r);
    }
    Ok(runs)
}

/// One call path of one run: its kind and each rank's time in it.
struct PathTimes {
    kind: Arc<str>,
    per_rank: Vec<f64>,
}

/// `runs` rows, one per run and call path (and one per run for the whole run), from a run's
/// `mpi_blocks` and `mpi_ranks`.
pub fn call_path_runs(
    blocks: &RecordBatch,
    ranks: &RecordBatch,
    spec: &CallPathSpec,
) -> Result<RecordBatch, ModelError> {
    let runs = read_runs(ranks)?;
    let input = Input::new("blocks", &MPI_BLOCKS, blocks)?;
    let (run_id, block, kind) = (
        input.utf8(col::RUN_ID)?,
        input.utf8(col::BLOCK)?,
        input.utf8(col::KIND)?,
    );
    let (rank, duration) = (input.int32(col::RANK)?, input.float64(col::DURATION_SECS)?);
    let block_names: Vec<Arc<str>> = block.per_row(|b| Arc::from(b));
    let kinds: Vec<Arc<str>> = kind.per_row(|k| Arc::from(k));
    // Call paths in order of first appearance; per run, each path's times.
    let mut paths: Vec<Arc<str>> = Vec::new();
    let mut times: HashMap<(usize, Arc<str>), PathTimes> = HashMap::new();
    let mut run_of_row: Option<(usize, usize)> = None;
    for r in 0..input.rows() {
        let run = match run_of_row {
            Some((row, run)) if run_id.same(row, r) => run,
            _ => {
                let id = run_id.value(r);
                runs.iter().position(|(k, _)| k == id).ok_or_else(|| {
                    ModelError::invalid(format!(
                        "blocks: run `{id}` is not in the ranks table (mpi_ranks of the same source)"
                    ))
                })?
            }
        };
        run_of_row = Some((r, run));
        let info = &runs[run].1;
        let slot = usize::try_from(rank.value(r))
            .ok()
            .filter(|&k| k < info.ranks)
            .ok_or_else(|| {
                ModelError::invalid(format!(
                    "blocks: run `{}` has rank {} of {}",
                    runs[run].0,
                    rank.value(r),
                    info.ranks
                ))
            })?;
        let name = &block_names[r];
        let entry = times.entry((run, Arc::clone(name))).or_insert_with(|| {
            if !paths.contains(name) {
                paths.push(Arc::clone(name));
            }
            PathTimes {
                kind: Arc::clone(&kinds[r]),
                per_rank: vec![0.0; info.ranks],
            }
        });
        entry.per_rank[slot] += duration.value(r);
    }
    let whole: Vec<f64> = runs
        .iter()
        .map(|(_, i)| spec.over_ranks.reduce(&i.wall_secs))
        .collect();
    let whole_total: f64 = whole.iter().sum();
    // Each kept path with its share of all runs' time, largest first.
    let mut kept: Vec<(Arc<str>, f64)> = paths
        .iter()
        .map(|p| {
            let total: f64 = (0..runs.len())
                .filter_map(|run| times.get(&(run, Arc::clone(p))))
                .map(|t| spec.over_ranks.reduce(&t.per_rank))
                .sum();
            (Arc::clone(p), total / whole_total.max(f64::MIN_POSITIVE))
        })
        .filter(|(_, share)| *share >= spec.min_share)
        .collect();
    kept.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut rows: Vec<[String; 5]> = Vec::new();
    let mut secs: Vec<f64> = Vec::new();
    for (run, (id, info)) in runs.iter().enumerate() {
        let mut push = |variant: &str, phase: &str, value: f64| {
            rows.push([
                id.clone(),
                info.device.clone(),
                info.program.clone(),
                variant.to_owned(),
                phase.to_owned(),
            ]);
            secs.push(value);
        };
        push(WHOLE_RUN, "total", whole[run]);
        for (path, _) in &kept {
            match times.get(&(run, Arc::clone(path))) {
                Some(t) => push(path, &t.kind, spec.over_ranks.reduce(&t.per_rank)),
                // Not run at all in this run (a path of other rank counts): no point.
                None => continue,
            }
        }
    }
    let text = |i: usize| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|r| r[i].as_str()),
        ))
    };
    let parameters: Vec<&str> = rows
        .iter()
        .map(|r| {
            runs.iter()
                .find(|(k, _)| *k == r[0])
                .map_or("", |(_, i)| i.parameters.as_str())
        })
        .collect();
    RUNS.batch(vec![
        text(0),
        text(1),
        text(2),
        text(3),
        Arc::new(StringArray::from_iter_values(parameters)),
        text(4),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 1))),
        // A run-long path of 0 s (a block that took no measurable time) is not a measurement
        // a positive-time table can hold: it becomes the smallest positive time.
        Arc::new(Float64Array::from_iter_values(
            secs.iter().map(|s| s.max(f64::MIN_POSITIVE)),
        )),
    ])
    .map_err(|e| ModelError::invalid(format!("runs: {e}")))
}

#[cfg(test)]
mod tests {
    use arrow_array::Int32Array;

    use super::*;
    use crate::fixtures::mpi_ranks as ranks;

    /// An `mpi_blocks` row: (run, rank, block, kind, seconds).
    type BlockRow<'a> = (&'a str, i32, &'a str, &'a str, f64);
    fn blocks(rows: &[BlockRow<'_>]) -> RecordBatch {
        let s = |f: &dyn Fn(&BlockRow<'_>) -> String| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
        };
        MPI_BLOCKS
            .batch(vec![
                s(&|r| r.0.to_owned()),
                s(&|_| "node".to_owned()),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
                s(&|r| r.2.to_owned()),
                s(&|r| r.3.to_owned()),
                s(&|r| r.2.to_owned()),
                Arc::new(rows.iter().map(|_| Some(0)).collect::<Int64Array>()),
                Arc::new(rows.iter().map(|_| Some(0.0)).collect::<Float64Array>()),
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.4))),
            ])
            .unwrap()
    }

    fn spec(over_ranks: OverRanks, min_share: f64) -> CallPathSpec {
        CallPathSpec {
            over_ranks,
            min_share,
        }
    }

    /// (variant, parameters, seconds) of every row.
    fn rows(batch: &RecordBatch) -> Vec<(String, String, f64)> {
        let input = Input::new("runs", &RUNS, batch).unwrap();
        let (v, p) = (
            input.utf8(col::VARIANT).unwrap(),
            input.utf8(col::PARAMETERS).unwrap(),
        );
        let s = input.float64(col::MEASURED_SECS).unwrap();
        (0..input.rows())
            .map(|r| (v.value(r).to_owned(), p.value(r).to_owned(), s.value(r)))
            .collect()
    }

    #[test]
    fn each_runs_call_paths_over_its_ranks_with_its_parameters_and_rank_count() {
        let b = blocks(&[
            ("a", 0, "sweep", "compute", 1.0),
            ("a", 0, "sweep", "compute", 2.0),
            ("a", 0, "halo", "communication", 0.5),
            ("a", 1, "sweep", "compute", 4.0),
            ("b", 0, "sweep", "compute", 8.0),
        ]);
        let r = ranks(&[
            ("a", 0, 2, Some("n=65"), 4.0),
            ("a", 1, 2, Some("n=65"), 5.0),
            ("b", 0, 1, None, 9.0),
        ]);
        let max = rows(&call_path_runs(&b, &r, &spec(OverRanks::Max, 0.0)).unwrap());
        assert_eq!(
            max,
            vec![
                ("whole run".into(), "n=65;ranks=2".into(), 5.0),
                ("sweep".into(), "n=65;ranks=2".into(), 4.0),
                ("halo".into(), "n=65;ranks=2".into(), 0.5),
                ("whole run".into(), "ranks=1".into(), 9.0),
                ("sweep".into(), "ranks=1".into(), 8.0),
            ]
        );
        // The mean counts a rank that never ran the block (rank 1's halo) as 0 s.
        let mean = rows(&call_path_runs(&b, &r, &spec(OverRanks::Mean, 0.0)).unwrap());
        assert_eq!(mean[2], ("halo".into(), "n=65;ranks=2".into(), 0.25));
        let sum = rows(&call_path_runs(&b, &r, &spec(OverRanks::Sum, 0.0)).unwrap());
        assert_eq!(sum[1], ("sweep".into(), "n=65;ranks=2".into(), 7.0));
        // halo: 0.5 of 14 s, under 5 %: left out; the whole run stays.
        let big = rows(&call_path_runs(&b, &r, &spec(OverRanks::Max, 0.05)).unwrap());
        assert_eq!(big.len(), 4);
        assert!(big.iter().all(|(v, _, _)| v != "halo"));
    }

    #[test]
    fn a_rank_count_given_as_a_parameter_is_kept_and_a_run_without_ranks_is_named() {
        let b = blocks(&[("a", 0, "sweep", "compute", 1.0)]);
        let r = ranks(&[("a", 0, 1, Some("ranks=8;n=3"), 2.0)]);
        let out = rows(&call_path_runs(&b, &r, &spec(OverRanks::Max, 0.0)).unwrap());
        assert_eq!(out[0].1, "ranks=8;n=3");
        let other = ranks(&[("z", 0, 1, None, 2.0)]);
        let e = call_path_runs(&b, &other, &spec(OverRanks::Max, 0.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("run `a` is not in the ranks table"), "{e}");
    }
}
