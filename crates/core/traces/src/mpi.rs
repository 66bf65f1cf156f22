//! MPI runs as spans: the blocks of a measured run (`mpi_blocks`), and the run a
//! simplified-execution prediction (`mpi_block_predictions`) predicts, laid out as a timeline.
//!
//! The predicted timeline is the reduced run as measured with the iterations the full run has
//! beyond it inserted after its last iteration: each in-loop block at its predicted mean time, as
//! many times as the prediction adds executions of it, in the order of the reduced run's last
//! iteration; what follows the loop is shifted after them. Each rank's predicted blocks then sum
//! to the prediction's `predicted_secs`. Ranks are laid out independently, as the model predicts
//! them (waiting between ranks is inside the measured communication blocks).

use std::collections::{BTreeMap, HashMap};

use arrow_array::{Array, RecordBatch};
use yosoku_tables::{access, col};

use crate::TraceError;
use crate::spans::{Span, SpansBuilder, Timeline};

/// Above this many inserted iterations per rank, consecutive inserted iterations are drawn as one
/// span per block covering several of them (its `args` say how many), so that a run predicted
/// for millions of iterations stays a timeline a viewer can hold.
pub const MAX_INSERTED_ITERATIONS: u64 = 2_000;

fn secs_to_ns(secs: f64) -> i64 {
    (secs * 1e9).round() as i64
}

/// Per block of a rank's prediction: (mean time per execution, executions in the full run).
type BlockMeans = HashMap<String, (f64, f64)>;

#[derive(Debug, Clone)]
struct Block {
    row: usize,
    block: String,
    kind: String,
    call_site: String,
    device: String,
    iteration: Option<i64>,
    start_secs: f64,
    duration_secs: f64,
}

/// The timed blocks of `blocks` per (run, rank), in order of start. Rows without a start (TAU
/// totals) have no place on a timeline and are left out.
fn timed_blocks(blocks: &RecordBatch) -> Result<BTreeMap<(String, i32), Vec<Block>>, TraceError> {
    let run = access::utf8(blocks, col::RUN_ID)?;
    let device = access::utf8(blocks, col::DEVICE)?;
    let rank = access::int32(blocks, col::RANK)?;
    let block = access::utf8(blocks, col::BLOCK)?;
    let kind = access::utf8(blocks, col::KIND)?;
    let call_site = access::utf8(blocks, col::CALL_SITE)?;
    let iteration = access::int64(blocks, col::ITERATION)?;
    let start = access::float64(blocks, col::START_SECS)?;
    let duration = access::float64(blocks, col::DURATION_SECS)?;
    let mut out: BTreeMap<(String, i32), Vec<Block>> = BTreeMap::new();
    for i in 0..blocks.num_rows() {
        let Some(start_secs) = access::opt_f64(start, i) else {
            continue;
        };
        out.entry((run.value(i).to_owned(), rank.value(i)))
            .or_default()
            .push(Block {
                row: i,
                block: block.value(i).to_owned(),
                kind: kind.value(i).to_owned(),
                call_site: call_site.value(i).to_owned(),
                device: device.value(i).to_owned(),
                iteration: (!iteration.is_null(i)).then(|| iteration.value(i)),
                start_secs,
                duration_secs: duration.value(i),
            });
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| {
            a.start_secs
                .total_cmp(&b.start_secs)
                .then(a.row.cmp(&b.row))
        });
    }
    Ok(out)
}

fn block_args(b: &Block, extra: &str) -> String {
    let iteration = b.iteration.map_or("null".to_owned(), |i| i.to_string());
    let json = |s: &str| serde_json::Value::from(s).to_string();
    format!(
        "{{\"device\":{},\"block\":{},\"call_site\":{},\"iteration\":{iteration}{extra}}}",
        json(&b.device),
        json(&b.block),
        json(&b.call_site)
    )
}

/// Measured runs (`mpi_blocks` tables) and, with `predicted` (the reduced run's `mpi_blocks` and
/// an `mpi_block_predictions` table), the predicted run, as one `spans` table.
pub fn timeline(
    measured: &[&RecordBatch],
    predicted: Option<(&RecordBatch, &RecordBatch)>,
) -> Result<RecordBatch, TraceError> {
    let mut spans = SpansBuilder::new();
    for blocks in measured {
        push_measured(&mut spans, blocks)?;
    }
    if let Some((reduced, predictions)) = predicted {
        push_predicted(&mut spans, reduced, predictions)?;
    }
    Ok(spans.finish()?)
}

/// The blocks of measured runs (`mpi_blocks`) as spans, one lane per rank.
pub fn measured_spans(blocks: &RecordBatch) -> Result<RecordBatch, TraceError> {
    let mut spans = SpansBuilder::new();
    push_measured(&mut spans, blocks)?;
    Ok(spans.finish()?)
}

pub(crate) fn push_measured(
    spans: &mut SpansBuilder,
    blocks: &RecordBatch,
) -> Result<(), TraceError> {
    for ((run, rank), rows) in timed_blocks(blocks)? {
        let lane = format!("rank {rank}");
        for b in &rows {
            let args = block_args(b, "");
            spans.push(&Span {
                source_row: Some(b.row as i64),
                args: Some(&args),
                ..Span::interval(
                    &run,
                    Timeline::Measured,
                    &lane,
                    "rank",
                    &b.block,
                    &b.kind,
                    secs_to_ns(b.start_secs),
                    secs_to_ns(b.duration_secs),
                )
            });
        }
    }
    Ok(())
}

/// The run `predictions` (an `mpi_block_predictions` table) predicts, as spans on the predicted
/// timeline, from the reduced run's blocks (`reduced`, the `mpi_blocks` the prediction was made
/// from). `run_id` of the rows: the reduced run's; `args` name the model.
pub fn predicted_spans(
    reduced: &RecordBatch,
    predictions: &RecordBatch,
) -> Result<RecordBatch, TraceError> {
    let mut spans = SpansBuilder::new();
    push_predicted(&mut spans, reduced, predictions)?;
    Ok(spans.finish()?)
}

pub(crate) fn push_predicted(
    spans: &mut SpansBuilder,
    reduced: &RecordBatch,
    predictions: &RecordBatch,
) -> Result<(), TraceError> {
    let predicted = predicted_means(predictions)?;
    let measured = timed_blocks(reduced)?;
    for ((model, run, rank), per_block) in &predicted {
        let Some(rows) = measured.get(&(run.clone(), *rank)) else {
            return Err(TraceError::format(
                format!("run `{run}`, rank {rank}"),
                format!(
                    "model `{model}` predicted this rank, but the reduced run's `mpi_blocks` given has no timed blocks of it: name the table the prediction was made from"
                ),
            ));
        };
        let added = added_executions(rows, per_block);
        let model_arg = format!(",\"model\":{}", serde_json::Value::from(model.as_str()));
        push_predicted_rank(spans, run, *rank, rows, &added, &model_arg);
    }
    Ok(())
}

/// The mean time and full-run executions of each in-loop block, by (model, run, rank).
fn predicted_means(
    predictions: &RecordBatch,
) -> Result<BTreeMap<(String, String, i32), BlockMeans>, TraceError> {
    let model = access::utf8(predictions, col::MODEL)?;
    let run = access::utf8(predictions, col::RUN_ID)?;
    let rank = access::int32(predictions, col::RANK)?;
    let block = access::utf8(predictions, col::BLOCK)?;
    let in_loop = access::boolean(predictions, col::IN_LOOP)?;
    let mean = access::float64(predictions, col::MEAN_SECS)?;
    let full = access::float64(predictions, col::FULL_EXECUTIONS)?;
    let mut predicted: BTreeMap<(String, String, i32), BlockMeans> = BTreeMap::new();
    for i in 0..predictions.num_rows() {
        if !in_loop.value(i) {
            continue;
        }
        let Some(m) = access::opt_f64(mean, i) else {
            continue;
        };
        predicted
            .entry((
                model.value(i).to_owned(),
                run.value(i).to_owned(),
                rank.value(i),
            ))
            .or_default()
            .insert(block.value(i).to_owned(), (m, full.value(i)));
    }
    Ok(predicted)
}

/// What the full run adds to a rank's loop: each in-loop block of its last iteration (then
/// those the last iteration lacks, in the order of their last execution) with the executions it
/// gains and its mean time.
fn added_executions<'a>(rows: &'a [Block], per_block: &BlockMeans) -> Vec<(&'a Block, u64, f64)> {
    let last_iteration = rows.iter().filter_map(|b| b.iteration).max();
    let mut measured_count: HashMap<&str, f64> = HashMap::new();
    for b in rows {
        *measured_count.entry(b.block.as_str()).or_insert(0.0) += 1.0;
    }
    let mut last: Vec<&Block> = rows
        .iter()
        .filter(|b| b.iteration.is_some() && b.iteration == last_iteration)
        .collect();
    // In-loop blocks that the last iteration lacks (one between iterations runs once fewer
    // than the loop) follow, in the order of their last execution.
    let mut others: Vec<&Block> = Vec::new();
    for b in rows.iter().rev() {
        if per_block.contains_key(&b.block)
            && !last.iter().any(|l| l.block == b.block)
            && !others.iter().any(|o| o.block == b.block)
        {
            others.push(b);
        }
    }
    others.reverse();
    last.extend(others);
    last.iter()
        .filter_map(|b| {
            let (mean, full) = per_block.get(&b.block)?;
            let n = (full - measured_count.get(b.block.as_str()).copied().unwrap_or(0.0))
                .round()
                .max(0.0) as u64;
            Some((*b, n, *mean))
        })
        .collect()
}

/// A rank's predicted timeline: its measured blocks, with the `added` executions (drawn as at
/// most `MAX_INSERTED_ITERATIONS` groups of iterations) after the loop's last execution and the
/// blocks after it shifted by as much.
fn push_predicted_rank(
    spans: &mut SpansBuilder,
    run: &str,
    rank: i32,
    rows: &[Block],
    added: &[(&Block, u64, f64)],
    model_arg: &str,
) {
    let lane = format!("rank {rank}");
    // The extra iterations go after the loop's last execution.
    let loop_end = rows
        .iter()
        .rev()
        .find(|b| b.iteration.is_some())
        .map(|b| b.row);
    let inserted = added.iter().map(|a| a.1).max().unwrap_or(0);
    // Iterations per drawn span, and how many drawn groups.
    let per_group = inserted.div_ceil(MAX_INSERTED_ITERATIONS).max(1);
    let groups = inserted.div_ceil(per_group);
    let mut shift_ns: i64 = 0;
    let mut cursor_ns: i64 = 0;
    for b in rows {
        let start = secs_to_ns(b.start_secs) + shift_ns;
        let duration = secs_to_ns(b.duration_secs);
        let args = block_args(b, model_arg);
        spans.push(&Span {
            source_row: Some(b.row as i64),
            args: Some(&args),
            ..Span::interval(
                run,
                Timeline::Predicted,
                &lane,
                "rank",
                &b.block,
                &b.kind,
                start,
                duration,
            )
        });
        cursor_ns = cursor_ns.max(start + duration);
        if Some(b.row) != loop_end {
            continue;
        }
        let loop_stop = cursor_ns;
        for g in 0..groups {
            let first = g * per_group;
            for (block, n, mean) in added {
                let count = n.saturating_sub(first).min(per_group);
                if count == 0 {
                    continue;
                }
                let duration = secs_to_ns(mean * count as f64);
                let extra = format!(
                    "{model_arg},\"predicted_iterations\":{count},\"first_inserted_iteration\":{first}"
                );
                let args = block_args(
                    &Block {
                        iteration: None,
                        ..(*block).clone()
                    },
                    &extra,
                );
                spans.push(&Span {
                    args: Some(&args),
                    ..Span::interval(
                        run,
                        Timeline::Predicted,
                        &lane,
                        "rank",
                        &block.block,
                        &block.kind,
                        cursor_ns,
                        duration,
                    )
                });
                cursor_ns += duration;
            }
        }
        shift_ns += cursor_ns - loop_stop;
    }
}
