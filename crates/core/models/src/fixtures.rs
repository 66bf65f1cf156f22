//! Builders of small input tables for the unit tests.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use yosoku_tables::{
    BANDWIDTH_CURVES, CSX600_OP_COUNTS, CSX600_OP_THROUGHPUTS, CSX600_TRANSFER_COUNTS, MPI_BLOCKS,
    REFERENCE_VALUES, RUNS,
};

fn s(values: Vec<&str>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn opt(values: Vec<Option<&str>>) -> ArrayRef {
    Arc::new(StringArray::from(values))
}

fn f(values: Vec<f64>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}

fn i(values: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::from(values))
}

fn b(values: Vec<bool>) -> ArrayRef {
    Arc::new(BooleanArray::from(values))
}

/// (exec_unit, vector, dtype, op, dtype_to, ops/s).
pub type ThroughputRow<'a> = (&'a str, bool, &'a str, &'a str, Option<&'a str>, f64);
/// (variant, exec_unit, vector, dtype, op, dtype_to, count, basis).
pub type CountRow<'a> = (
    &'a str,
    &'a str,
    bool,
    &'a str,
    &'a str,
    Option<&'a str>,
    f64,
    &'a str,
);

/// Throughputs on device "csx".
pub fn throughputs(rows: &[ThroughputRow<'_>]) -> RecordBatch {
    throughputs_on("csx", rows)
}

pub fn throughputs_on(device: &str, rows: &[ThroughputRow<'_>]) -> RecordBatch {
    CSX600_OP_THROUGHPUTS
        .batch(vec![
            s(vec![device; rows.len()]),
            s(rows.iter().map(|r| r.0).collect()),
            b(rows.iter().map(|r| r.1).collect()),
            s(rows.iter().map(|r| r.2).collect()),
            s(rows.iter().map(|r| r.3).collect()),
            opt(rows.iter().map(|r| r.4).collect()),
            f(rows.iter().map(|r| r.5).collect()),
            Arc::new(Int64Array::from(vec![None; rows.len()])),
        ])
        .unwrap()
}

/// Op counts of program "p".
pub fn counts(rows: &[CountRow<'_>]) -> RecordBatch {
    CSX600_OP_COUNTS
        .batch(vec![
            s(vec!["p"; rows.len()]),
            s(rows.iter().map(|r| r.0).collect()),
            s(rows.iter().map(|r| r.1).collect()),
            b(rows.iter().map(|r| r.2).collect()),
            s(rows.iter().map(|r| r.3).collect()),
            s(rows.iter().map(|r| r.4).collect()),
            opt(rows.iter().map(|r| r.5).collect()),
            f(rows.iter().map(|r| r.6).collect()),
            s(rows.iter().map(|r| r.7).collect()),
        ])
        .unwrap()
}

/// (path, size_bytes, bytes/s, provenance) on device "csx".
pub fn curves(rows: &[(&str, i64, f64, &str)]) -> RecordBatch {
    BANDWIDTH_CURVES
        .batch(vec![
            s(vec!["csx"; rows.len()]),
            s(rows.iter().map(|r| r.0).collect()),
            i(rows.iter().map(|r| r.1).collect()),
            f(rows.iter().map(|r| r.2).collect()),
            Arc::new(Int64Array::from(vec![None; rows.len()])),
            s(rows.iter().map(|r| r.3).collect()),
        ])
        .unwrap()
}

/// (variant, path, count, size_bytes) of program "p".
pub fn transfers(rows: &[(&str, &str, i64, i64)]) -> RecordBatch {
    CSX600_TRANSFER_COUNTS
        .batch(vec![
            s(vec!["p"; rows.len()]),
            s(rows.iter().map(|r| r.0).collect()),
            s(rows.iter().map(|r| r.1).collect()),
            i(rows.iter().map(|r| r.2).collect()),
            i(rows.iter().map(|r| r.3).collect()),
        ])
        .unwrap()
}

/// (device, variant, phase, repetitions, seconds) of program "p".
pub fn runs(rows: &[(&str, &str, &str, i64, f64)]) -> RecordBatch {
    RUNS.batch(vec![
        s(rows.iter().map(|r| r.1).collect()),
        s(rows.iter().map(|r| r.0).collect()),
        s(vec!["p"; rows.len()]),
        s(rows.iter().map(|r| r.1).collect()),
        opt(vec![None; rows.len()]),
        s(rows.iter().map(|r| r.2).collect()),
        i(rows.iter().map(|r| r.3).collect()),
        f(rows.iter().map(|r| r.4).collect()),
    ])
    .unwrap()
}

/// (variant, table, column, label, value, unit) of program "p".
pub fn references(rows: &[(&str, &str, &str, &str, f64, &str)]) -> RecordBatch {
    REFERENCE_VALUES
        .batch(vec![
            s(vec!["p"; rows.len()]),
            s(rows.iter().map(|r| r.0).collect()),
            s(rows.iter().map(|r| r.1).collect()),
            s(rows.iter().map(|r| r.2).collect()),
            s(rows.iter().map(|r| r.3).collect()),
            f(rows.iter().map(|r| r.4).collect()),
            s(rows.iter().map(|r| r.5).collect()),
            s(vec!["paper"; rows.len()]),
        ])
        .unwrap()
}

pub fn floats(batch: &RecordBatch, column: &str) -> Vec<f64> {
    yosoku_tables::access::float64(batch, column)
        .unwrap()
        .values()
        .to_vec()
}

pub fn strings(batch: &RecordBatch, column: &str) -> Vec<String> {
    let a = yosoku_tables::access::utf8(batch, column).unwrap();
    a.iter().map(|v| v.unwrap_or("-").to_owned()).collect()
}

/// `mpi_blocks` of one run, per rank: `setup` once, then per iteration a compute block and a
/// communication block of the given times, then `teardown` once.
pub fn mpi_blocks(run: &str, ranks: &[(i32, Vec<(f64, f64)>)]) -> RecordBatch {
    mpi_blocks_with(run, ranks, None)
}

/// [`mpi_blocks`] with a block `rebuild` of `secs` in iterations `phase`, `phase + period`, ...
pub fn mpi_blocks_with(
    run: &str,
    ranks: &[(i32, Vec<(f64, f64)>)],
    periodic: Option<(usize, usize, f64)>,
) -> RecordBatch {
    mpi_blocks_rebuilt(run, ranks, periodic, false)
}

/// [`mpi_blocks_with`]; with `outside`, `rebuild` also runs once before the loop (after
/// `setup`) and once after it (before `teardown`), as a program that builds a structure at the
/// start, rebuilds it every few steps and once more at the end.
pub fn mpi_blocks_rebuilt(
    run: &str,
    ranks: &[(i32, Vec<(f64, f64)>)],
    periodic: Option<(usize, usize, f64)>,
    outside: bool,
) -> RecordBatch {
    let mut rows: Vec<(i32, &str, bool, Option<i64>, f64)> = Vec::new();
    for (rank, iterations) in ranks {
        rows.push((*rank, "setup", true, None, 1.0));
        if let (true, Some((_, _, secs))) = (outside, periodic) {
            rows.push((*rank, "rebuild", true, None, secs));
        }
        for (i, (c, m)) in iterations.iter().enumerate() {
            rows.push((*rank, "stencil", true, Some(i as i64), *c));
            if let Some((period, phase, secs)) = periodic
                && i % period == phase
            {
                rows.push((*rank, "rebuild", true, Some(i as i64), secs));
            }
            rows.push((*rank, "MPI_Allreduce@a+0x1", false, Some(i as i64), *m));
        }
        if let (true, Some((_, _, secs))) = (outside, periodic) {
            rows.push((*rank, "rebuild", true, None, secs));
        }
        rows.push((*rank, "teardown", true, None, 0.5));
    }
    MPI_BLOCKS
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| run))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| "node"))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(StringArray::from_iter_values(
                rows.iter()
                    .map(|r| if r.2 { "compute" } else { "communication" }),
            )),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(rows.iter().map(|r| r.3).collect::<Int64Array>()),
            Arc::new(rows.iter().map(|_| Some(0.0)).collect::<Float64Array>()),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.4))),
        ])
        .unwrap()
}

/// An `mpi_ranks` row: (run, rank, ranks, parameters, wall seconds).
pub type RankRow<'a> = (&'a str, i32, i32, Option<&'a str>, f64);

/// `mpi_ranks` of runs of `/opt/bin/solver`, one row per rank, 4 iterations each.
pub fn mpi_ranks(rows: &[RankRow<'_>]) -> RecordBatch {
    mpi_ranks_iterations(rows, 4)
}

/// [`mpi_ranks`] with `iterations` main-loop iterations on every rank.
pub fn mpi_ranks_iterations(rows: &[RankRow<'_>], iterations: i64) -> RecordBatch {
    let s = |f: &dyn Fn(&RankRow<'_>) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    yosoku_tables::MPI_RANKS
        .batch(vec![
            s(&|r| r.0.to_owned()),
            s(&|_| "node".to_owned()),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.2))),
            s(&|_| "/opt/bin/solver 65 33 33 40".to_owned()),
            Arc::new(rows.iter().map(|_| Some("core")).collect::<StringArray>()),
            Arc::new(rows.iter().map(|r| r.3).collect::<StringArray>()),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.4))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 1))),
            s(&|_| "complete".to_owned()),
            Arc::new(
                rows.iter()
                    .map(|_| Some(iterations))
                    .collect::<Int64Array>(),
            ),
            Arc::new(rows.iter().map(|_| Some(1)).collect::<Int32Array>()),
            s(&|_| "repeating_unit".to_owned()),
            s(&|_| "MPI_Allreduce@a+0x1".to_owned()),
        ])
        .unwrap()
}

/// `n` pseudo-random numbers uniform in [0, 1) from `seed` (a linear congruential generator:
/// noise that tests can reproduce, without a dependency).
pub fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}
