//! The corpus: every profiler and trace file the repository holds — real public files (their
//! SOURCES.md says where from and under which license), files measured by the project itself,
//! and the format examples written by us where no licensed real file exists (their README names
//! the real file each stands for) — imported through the real plugin host, each checked for its
//! rows, how many of its metric names map, and one value read off the file by hand.
//!
//! `cargo test -p yosoku-runner --test corpus -- --nocapture` prints the table.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use yosoku_bundle::fs::{Bundle, read_bundle};
use yosoku_runner::{Quiet, RunOptions, run_pipeline};
use yosoku_tables::access::{float64, int64};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Where a file comes from.
#[derive(Debug, Clone, Copy)]
enum Origin {
    /// Copied byte for byte from a public repository (SOURCES.md beside it).
    Public,
    /// Measured by the project on a borrowed GPU or this VM.
    Ours,
    /// Written by us where no licensed real file exists (README beside it names the real one).
    Example,
}

/// One file of the corpus and what its import must give.
struct Entry {
    file: &'static str,
    origin: Origin,
    plugin: &'static str,
    collector: &'static str,
    /// The source's config, `{path}` standing for the file's absolute path.
    config: &'static str,
    /// The table that holds one row per run, launch or span, and its rows.
    rows: (&'static str, usize),
    /// Names of `metric_names`: (mapped by an alias, unmapped, without a kind).
    names: Option<(usize, usize, usize)>,
    /// One value checked against the file: (table, column, row, value).
    value: (&'static str, &'static str, usize, f64),
}

const CORPUS: &[Entry] = &[
    Entry {
        file: "plugins/cuda_profiler/tests/data/public/nsightful_copy_blocked_details_cc75.csv",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 1),
        names: Some((24, 47, 47)),
        // "GPU Speed Of Light Throughput","Duration","ns","21,058,944" (line 7).
        value: ("runs", "measured_secs", 0, 21_058_944e-9),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\", prefix_names = [\"n\"] }",
        rows: ("runs", 96),
        names: Some((11, 0, 0)),
        // Line 3: the first run's first copy, `Duration` 28321.000000 ns.
        value: ("runs", "measured_secs", 0, 28_321e-9),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/public/bpnn_layerforward_CUDA-Tesla-K40.csv.gz",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "gpuperfpredict",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 57),
        names: Some((72, 0, 0)),
        // Line 2: `duration` 2.0576e-05 (seconds).
        value: ("runs", "measured_secs", 0, 2.0576e-5),
    },
    Entry {
        file: "pipelines/data/gpuperfpredict/apps/vectorAdd-Tesla-K40.csv.gz",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "gpuperfpredict",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 207),
        // nvprof's metric descriptions mostly have no alias yet (issue 38).
        names: Some((73, 201, 201)),
        // Line 2: index 784, vectorAdd, 131072, `Duration` 1.0496e-05 (seconds), block 64.
        value: ("runs", "measured_secs", 0, 1.0496e-5),
    },
    Entry {
        file: "pipelines/data/rocprof/dispatch_0_MI100",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 1),
        names: Some((29, 192, 21)),
        // timestamps.csv: End_Timestamp - Start_Timestamp = 1410140689707365 - 1410140689683045 ns.
        value: ("runs", "measured_secs", 0, 24_320e-9),
    },
    Entry {
        file: "pipelines/data/rocprof/dispatch_0_MI200",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 1),
        names: Some((29, 215, 21)),
        // timestamps.csv: End_Timestamp - Start_Timestamp of its one dispatch.
        value: ("runs", "measured_secs", 0, 20_160e-9),
    },
    Entry {
        file: "pipelines/data/rocprof/dispatch_0_MI300X_A1",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((29, 212, 21)),
        // timestamps.csv: End_Timestamp - Start_Timestamp of its first dispatch.
        value: ("runs", "measured_secs", 0, 16_160e-9),
    },
    Entry {
        file: "pipelines/data/tau-cpi-mpi",
        origin: Origin::Public,
        plugin: "mpi_timer",
        collector: "tau_profile",
        config: "{ dir = \"{path}\" }",
        rows: ("mpi_blocks", 48),
        names: None,
        // 4 ranks x (11 MPI functions + the time outside them); profile.0.0.0:
        // ".TAU application" 1 7 449 51781 (inclusive microseconds).
        value: ("mpi_ranks", "wall_secs", 0, 0.051_781),
    },
    Entry {
        file: "pipelines/data/chrome-trace/kineto_gpu_metrics_input.json",
        origin: Origin::Public,
        plugin: "traces",
        collector: "chrome_trace",
        config: "{ paths = [\"{path}\"] }",
        rows: ("spans", 320),
        names: None,
        // The first complete event: aten::empty, "dur": 21 (microseconds).
        value: ("spans", "duration_ns", 0, 21_000.0),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/ncu/ncu_raw_copy_float4_h100.csv",
        origin: Origin::Ours,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 1),
        names: Some((278, 84, 12)),
        // gpu__time_duration.sum: ns, "42,176".
        value: ("runs", "measured_secs", 0, 42_176e-9),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/ncu/ncu_details_matmul_tiled_h100.csv",
        origin: Origin::Ours,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 1),
        names: Some((16, 31, 31)),
        // "GPU Speed Of Light Throughput","Duration","ns","343,840".
        value: ("runs", "measured_secs", 0, 343_840e-9),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/ncu/ncu_raw_sweep_matmul_naive_h100.csv",
        origin: Origin::Ours,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 11),
        names: Some((63, 44, 11)),
        // gpu__time_duration.sum of the first launch: ns, "10,240".
        value: ("runs", "measured_secs", 0, 10_240e-9),
    },
    Entry {
        file: "pipelines/data/cuda-trace/h200-run2/ncu_raw_srad.csv",
        origin: Origin::Ours,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 9),
        names: Some((45, 36, 3)),
        // gpu__time_duration.sum of the first launch: ns, "602,592".
        value: ("runs", "measured_secs", 0, 602_592e-9),
    },
    Entry {
        file: "pipelines/data/opencl/nvidia-h200.json",
        origin: Origin::Ours,
        plugin: "opencl",
        collector: "logs",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 90),
        names: Some((10, 0, 0)),
        // The copy of 2^18 floats: the median of its 100 launches' device times, 6400 ns.
        value: ("runs", "measured_secs", 0, 6_400e-9),
    },
    Entry {
        file: "plugins/mpi_timer/tests/data/himeno-2ranks",
        origin: Origin::Ours,
        plugin: "mpi_timer",
        collector: "logs",
        config: "{ dir = \"{path}\" }",
        rows: ("mpi_blocks", 250),
        names: None,
        // rank-0.tsv: its `call` lines.
        value: ("mpi_ranks", "mpi_calls", 0, 62.0),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/formats/nvprof_metrics.csv",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\" }",
        rows: ("counters", 8),
        names: Some((6, 1, 1)),
        // achieved_occupancy, Avg 0.870145.
        value: ("counters", "value", 0, 0.870_145),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/formats/nvprof_events.csv",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\" }",
        rows: ("counters", 3),
        names: Some((3, 0, 0)),
        // inst_executed, Avg 196608.
        value: ("counters", "value", 0, 196_608.0),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/formats/legacy_v1_4.log",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "legacy",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 3),
        names: Some((3, 4, 4)),
        // The first copy, gputime=[ 80.000 ] (microseconds).
        value: ("runs", "measured_secs", 0, 80e-6),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/formats/legacy_v2_key_value.log",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "legacy",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 4),
        names: Some((3, 0, 0)),
        // memset128, gputime=[ 12.000 ] (microseconds).
        value: ("runs", "measured_secs", 0, 12e-6),
    },
    Entry {
        file: "plugins/rocm_profiler/tests/data/rocprofv3/312_counter_collection.csv",
        origin: Origin::Example,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 4),
        names: Some((8, 0, 0)),
        // The first dispatch: End_Timestamp - Start_Timestamp.
        value: ("runs", "measured_secs", 0, 10_240e-9),
    },
    Entry {
        file: "plugins/rocm_profiler/tests/data/rocpd/out_kernel_trace.csv",
        origin: Origin::Example,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((7, 0, 0)),
        // 1678314003082277 - 1678314002982197 ns.
        value: ("runs", "measured_secs", 0, 100_080e-9),
    },
    Entry {
        file: "plugins/rocm_profiler/tests/data/omniperf-2022",
        origin: Origin::Example,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 1),
        names: Some((6, 0, 0)),
        // timestamps.csv: EndNs - BeginNs.
        value: ("runs", "measured_secs", 0, 24_320e-9),
    },
];

/// The tables of importing `e`.
fn import(e: &Entry) -> (tempfile::TempDir, Bundle) {
    let dir = tempfile::tempdir().unwrap();
    let path = repo().join(e.file);
    let config = e.config.replace("{path}", &path.display().to_string());
    let pipeline = dir.path().join("corpus.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[pipeline]\nname = \"corpus\"\n\n[sources.file]\nplugin = \"{}\"\ncollector = \"{}\"\nconfig = {config}\n",
            e.plugin, e.collector
        ),
    )
    .unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("bundle")),
        plugin_path: vec![],
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&pipeline, &options, &mut Quiet)
        .unwrap_or_else(|err| panic!("{}: {err}", e.file));
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    (dir, bundle)
}

fn table<'a>(bundle: &'a Bundle, name: &str) -> Option<&'a RecordBatch> {
    bundle.table(&format!("file.{name}"))
}

/// The value at `row` of a float or integer column (NaN when there is none).
fn number(b: &RecordBatch, column: &str, row: usize) -> f64 {
    if let Ok(c) = float64(b, column) {
        return if row < c.len() {
            c.value(row)
        } else {
            f64::NAN
        };
    }
    match int64(b, column) {
        Ok(c) if row < c.len() => c.value(row) as f64,
        _ => b
            .column_by_name(column)
            .and_then(|c| c.as_primitive_opt::<arrow_array::types::Int32Type>())
            .filter(|c| row < c.len())
            .map_or(f64::NAN, |c| f64::from(c.value(row))),
    }
}

/// (mapped by an alias, unmapped, without a kind) of a `metric_names` table.
fn name_counts(names: &RecordBatch) -> (usize, usize, usize) {
    let mapped = names.column_by_name("mapped").unwrap().as_boolean();
    let kind = names.column_by_name("kind").unwrap();
    let n = names.num_rows();
    let by_alias = (0..n).filter(|&i| mapped.value(i)).count();
    (by_alias, n - by_alias, kind.null_count())
}

/// (counters, counters with a canonical name) of a `metric_names` table: the names of kind
/// `count` (events, bytes, instructions) or `time` (cycles, durations).
fn counters_named(names: &RecordBatch) -> (usize, usize) {
    let mapped = names.column_by_name("mapped").unwrap().as_boolean();
    let kind =
        yosoku_tables::text::Text::new(names.column_by_name("kind").unwrap().as_ref()).unwrap();
    let counters: Vec<usize> = (0..names.num_rows())
        .filter(|&i| !kind.is_null(i) && matches!(kind.value(i), "count" | "time"))
        .collect();
    let named = counters.iter().filter(|&&i| mapped.value(i)).count();
    (counters.len(), named)
}

#[test]
fn every_file_of_the_corpus_imports_with_its_rows_names_and_a_value_right() {
    let mut report = String::from(
        "| file | origin | plugin/collector | rows | names mapped / unmapped / no kind | counters named | checked value |\n|---|---|---|---|---|---|---|\n",
    );
    let mut failures = Vec::new();
    for e in CORPUS {
        let (_dir, bundle) = import(e);
        let (rows_table, expected_rows) = e.rows;
        let rows = table(&bundle, rows_table).map_or(0, RecordBatch::num_rows);
        let names = table(&bundle, "metric_names").map(name_counts);
        let counters = table(&bundle, "metric_names").map(counters_named);
        let (t, column, row, expected) = e.value;
        let got = table(&bundle, t).map_or(f64::NAN, |b| number(b, column, row));
        let close = (got - expected).abs() <= 1e-9 * expected.abs().max(1e-300);
        let name = Path::new(e.file).file_name().unwrap().to_string_lossy();
        report.push_str(&format!(
            "| `{name}` | {:?} | {}/{} | {rows} {rows_table} | {} | {} | {t}.{column}[{row}] = {got:e} |\n",
            e.origin,
            e.plugin,
            e.collector,
            names.map_or("-".to_owned(), |(a, b, c)| format!("{a} / {b} / {c}")),
            counters.map_or("-".to_owned(), |(n, named)| format!("{named} of {n}")),
        ));
        // Issue 37's target on today's Nsight Compute raw pages: every counter (events, bytes,
        // instructions, cycles) has a canonical name.
        if e.collector == "ncu"
            && e.file.contains("raw")
            && let Some((n, named)) = counters
            && (n == 0 || named != n)
        {
            failures.push(format!("{}: {named} of {n} counters named", e.file));
        }
        if rows != expected_rows {
            failures.push(format!(
                "{}: {rows} {rows_table} rows, expected {expected_rows}",
                e.file
            ));
        }
        if names != e.names {
            failures.push(format!(
                "{}: names {names:?}, expected {:?}",
                e.file, e.names
            ));
        }
        if !close {
            failures.push(format!(
                "{}: {t}.{column}[{row}] = {got}, expected {expected}",
                e.file
            ));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}\n{report}", failures.join("\n"));
}
