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
        // Two more since L1/TEX and L2 Cache Throughput are named (issue 71); one more since
        // the average SM active cycles are (`active_cycles_avg`, issue 69).
        names: Some((27, 44, 44)),
        // "GPU Speed Of Light Throughput","Duration","ns","21,058,944" (line 7).
        value: ("runs", "measured_secs", 0, 21_058_944e-9),
    },
    Entry {
        file: "pipelines/data/nsys-sqlite/pipit_cloverleaf_a100_nsys.sqlite.gz",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "nsys",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 1591),
        names: Some((10, 0, 0)),
        // The first launch by `start`: 533,338,240 to 534,705,884 ns (Python's sqlite3).
        value: ("runs", "measured_secs", 0, 1_367_644e-9),
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
        // A file whose shared memory sizes the R export wrote in KiB (issue 71's unit audit).
        file: "pipelines/data/gpuperfpredict/bpnn_layerforward_CUDA-Tesla-P100.csv.gz",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "gpuperfpredict",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 57),
        names: Some((72, 0, 0)),
        // Line 2: `static.smem` 1.0625 (KiB): 1,088 bytes, as the other GPUs' files write it.
        value: ("observations", "static_shared_memory", 0, 1088.0),
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
        file: "pipelines/data/rocprof/vcopy_MI350",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((25, 234, 19)),
        // rocprof-compute 3.0, pmc_perf.csv line 2: End_Timestamp - Start_Timestamp, the means of
        // the passes: 1248227792639148.5 - 1248227792617386.5 ns.
        value: ("runs", "measured_secs", 0, 21_762e-9),
    },
    Entry {
        file: "pipelines/data/rocprof/vcopy_MI300X_A1_rocpd",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((24, 1992, 19)),
        // rocprof-compute 3.x (rocpd), the long pmc_perf.csv: dispatch 1's Grid_Size (line 2),
        // the first counter row.
        value: ("counters", "value", 0, 1_048_576.0),
    },
    Entry {
        file: "pipelines/data/rocprof/kernel_RDNA35_KRACKAN2",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((7, 17, 6)),
        // rocprof-compute 3.x, two passes: the mean of dispatch 0's durations,
        // (233619 + 240633) / 2 ns.
        value: ("runs", "measured_secs", 0, 237_126e-9),
    },
    Entry {
        file: "pipelines/data/rocprof/vcopy_pc_sampling_MI300A_A1/ps_file_results.json",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((7, 0, 0)),
        // rocprofv3 JSON, buffer_records.kernel_dispatch[0]: 1986623975876596 - 1986623975868304 ns.
        value: ("runs", "measured_secs", 0, 8_292e-9),
    },
    Entry {
        file: "pipelines/data/rocprof/rocprof_compute_db_MI350/rocprof_compute_23ed6f36.db.gz",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 10),
        // No launch configuration or counter of a dispatch: the database's analysis values are
        // of whole kernels.
        names: Some((0, 0, 0)),
        // rocprof-compute's SQLite database, compute_dispatch's first row (dispatch_id 0):
        // 150244886099176 - 150244885871614 ns.
        value: ("runs", "measured_secs", 0, 227_562e-9),
    },
    Entry {
        file: "pipelines/data/rocprof/vcopy_pc_sampling_MI300A_A1/ps_file_kernel_trace.csv",
        origin: Origin::Public,
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 3),
        names: Some((7, 0, 0)),
        // The same run's kernel trace CSV, line 2.
        value: ("runs", "measured_secs", 0, 8_292e-9),
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
        // Four more without a kind since the occupancy charts' data (`derived__pct_*`) is no
        // longer called a ratio (issue 71, the unit audit).
        names: Some((278, 84, 16)),
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
        // One more since the average SM active cycles are named (`active_cycles_avg`).
        names: Some((19, 28, 28)),
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
        file: "plugins/cuda_profiler/tests/data/formats/ncu_metrics_details_copy_float4_h100.csv",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 6),
        names: Some((13, 0, 0)),
        // "Command line profiler metrics","gpu__time_duration.sum","ns","4,960" (line 5).
        value: ("runs", "measured_secs", 0, 4_960e-9),
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
        // Issue 71: Unified Memory CPU page faults are instants (no `Duration`), never a
        // refusal; GPU page-fault groups are a phase of their own.
        file: "plugins/cuda_profiler/tests/data/formats/nvprof_gpu_trace_unified_memory.csv",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 4),
        names: Some((11, 2, 2)),
        // Line 9: `[Unified Memory GPU page faults]`, Duration 0.276608 (ms, the unit row's).
        value: ("runs", "measured_secs", 1, 0.276608e-3),
    },
    Entry {
        // Issue 71: threads per warp instruction (0-32, no unit written) read as the efficiency
        // nvprof gives (0-1).
        file: "plugins/cuda_profiler/tests/data/formats/ncu_metrics_threads_per_warp_instruction.csv",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        rows: ("runs", 1),
        names: Some((2, 0, 0)),
        // Line 3: `smsp__thread_inst_executed_per_inst_executed.ratio` 32: warp_execution_efficiency
        // 1.0 (the counters' second row; the first is the duration).
        value: ("counters", "value", 1, 1.0),
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
    Entry {
        file: "pipelines/data/chrome-trace/hta_mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        origin: Origin::Public,
        plugin: "traces",
        collector: "chrome_trace",
        config: "{ paths = [\"{path}\"] }",
        // Its 220 events but the 60 metadata ones.
        rows: ("spans", 160),
        names: None,
        // Its first event: `MseLossBackward0`'s evaluation, "dur": 340.024 (µs).
        value: ("spans", "duration_ns", 0, 340_024.0),
    },
    Entry {
        file: "plugins/cuda_profiler/tests/data/nsys/nsys_stats_stdout.txt",
        origin: Origin::Example,
        plugin: "cuda_profiler",
        collector: "nsys",
        config: "{ paths = [\"{path}\"] }",
        // 2 kernels, 3 memory operations, 6 CUDA calls.
        rows: ("runs", 11),
        names: Some((0, 5, 0)),
        // ` ** CUDA GPU Kernel Summary`, its first row: Total Time (ns) 22656.
        value: ("runs", "measured_secs", 0, 22_656e-9),
    },
    Entry {
        file: "pipelines/data/csx600/sdk250-op-throughput.csx600.log",
        origin: Origin::Example,
        plugin: "csx600_sdk_log",
        collector: "microbench",
        config: "{ path = \"{path}\" }",
        rows: ("csx600_op_throughputs", 42),
        names: None,
        // Line 13: poly, vector, float add, 8.351 Gops.
        value: (
            "csx600_op_throughputs",
            "throughput_ops_per_sec",
            0,
            8.351e9,
        ),
    },
    Entry {
        file: "pipelines/data/csx600/himeno-profile.csx600.log",
        origin: Origin::Example,
        plugin: "csx600_sdk_log",
        collector: "profile",
        config: "{ path = \"{path}\" }",
        rows: ("csx600_transfer_counts", 10),
        names: None,
        // Line 20: S, mono_to_poly, 186 transfers of 640 bytes.
        value: ("csx600_transfer_counts", "transfer_count", 0, 186.0),
    },
    Entry {
        file: "pipelines/data/neusight/test/elem.csv.gz",
        origin: Origin::Public,
        plugin: "cuda_profiler",
        collector: "neusight",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 4558),
        names: Some((11, 0, 0)),
        // Line 2: `add`, Latency 0.7671167969703674 (milliseconds).
        value: ("runs", "measured_secs", 0, 0.767_116_796_970_367_4e-3),
    },
    Entry {
        file: "pipelines/data/own-table/gtx680-rodinia.csv",
        origin: Origin::Public,
        plugin: "table",
        collector: "file",
        config: "{ paths = [\"{path}\"], device = \"gpu\", program = \"kernel\" }",
        rows: ("runs", 2629),
        names: None,
        // Line 2: time_ms 0.046208.
        value: ("runs", "measured_secs", 0, 0.046_208e-3),
    },
    Entry {
        file: "crates/core/regression/tests/data/extrap/jsonlines/band_matrix_2p.jsonl",
        origin: Origin::Public,
        plugin: "table",
        collector: "extrap",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 70),
        names: None,
        // Line 1: x = 40, y = 3, value 504.63767808259195 (seconds).
        value: ("runs", "measured_secs", 0, 504.637_678_082_591_95),
    },
    Entry {
        file: "crates/core/regression/tests/data/extrap/talpas/talpas_2.txt",
        origin: Origin::Public,
        plugin: "table",
        collector: "extrap",
        config: "{ paths = [\"{path}\"] }",
        rows: ("runs", 125),
        names: None,
        // Line 1 (Talpas, `;` between fields): x = 20, y = 1, value 1.007912824061828.
        value: ("runs", "measured_secs", 0, 1.007_912_824_061_828),
    },
    Entry {
        file: "crates/core/regression/tests/data/extrap/json/input_2.JSON",
        origin: Origin::Public,
        plugin: "table",
        collector: "extrap",
        config: "{ paths = [\"{path}\"] }",
        // Extra-P's legacy JSON: 50 measurements, 25 of them of the metric `time`.
        rows: ("runs", 25),
        names: None,
        // Measurement 1: call path 1 (`sweep`), coordinate 1 (x = 4), metric 1, value 25.5.
        value: ("runs", "measured_secs", 0, 25.5),
    },
    Entry {
        file: "crates/core/regression/tests/data/extrap/saved/experiment_3.extra-p",
        origin: Origin::Public,
        plugin: "table",
        collector: "extrap",
        config: "{ paths = [\"{path}\"] }",
        // A saved experiment: each point's mean, 4 call paths at 5 points.
        rows: ("runs", 20),
        names: None,
        // experiment.json: `met1`, metric `test`, p = 1000, mean 4.0200000000000005.
        value: ("runs", "measured_secs", 0, 4.020_000_000_000_000_5),
    },
    Entry {
        file: "pipelines/data/cuda-trace/h100/matmul_shared_thread_globaltimer.yktrace.gz",
        origin: Origin::Ours,
        plugin: "traces",
        collector: "kernel_trace",
        config: "{ paths = [\"{path}\"] }",
        // 196,608 records: 6,144 threads of 32 points, 31 spans each.
        rows: ("spans", 6_144 * 31),
        names: None,
        // Records 0 and 1 (block 0, thread 0, points 0 and 1): timestamps ...554112768 and
        // ...554115744 ns.
        value: ("spans", "duration_ns", 0, 2_976.0),
    },
];

/// A set of Cube profiles (a directory of run folders; not in `CORPUS`, whose files are also
/// read gzip-compressed, which a Cube profile never is) through the real plugin host: the
/// `extrap` collector's runs, each call path's mean over its locations, and with `scaling =
/// "strong"` their sum.
#[test]
fn a_cube_set_is_imported_through_the_plugin_host() {
    let set = repo().join("crates/core/regression/tests/data/cube/simple_threaded");
    // `main->foo` at f = 2, or with inclusive values `main`: the whole run (8.55 f).
    for (config, program_at_f2, secs) in [
        ("{ paths = [\"{path}\"] }", "main->foo", 4.95),
        (
            "{ paths = [\"{path}\"], scaling = \"strong\" }",
            "main->foo",
            19.8,
        ),
        ("{ paths = [\"{path}\"], inclusive = true }", "main", 17.1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let bundle = import_source(dir.path(), "table", "extrap", config, &set).unwrap();
        let runs = table(&bundle, "runs").unwrap();
        assert_eq!(runs.num_rows(), 20);
        let program = runs.column_by_name("program").unwrap();
        let program = program
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        let parameters = runs.column_by_name("parameters").unwrap();
        let parameters = parameters
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        let row = (0..runs.num_rows())
            .find(|&i| program.value(i) == program_at_f2 && parameters.value(i) == "f=2")
            .unwrap();
        assert!((number(runs, "measured_secs", row) - secs).abs() < 1e-9);
    }
    let dir = tempfile::tempdir().unwrap();
    let e = import_source(
        dir.path(),
        "table",
        "extrap",
        "{ paths = [\"{path}\"], scaling = \"threaded\" }",
        &set,
    )
    .unwrap_err();
    assert!(
        e.contains("`scaling` = \"threaded\": expected weak, weak_threaded or strong"),
        "{e}"
    );
}

/// The tables of importing `e`.
fn import(e: &Entry) -> (tempfile::TempDir, Bundle) {
    import_from(e, &repo().join(e.file))
}

/// The tables of importing `e`'s file (or directory) as it is at `path`.
fn import_from(e: &Entry, path: &Path) -> (tempfile::TempDir, Bundle) {
    let dir = tempfile::tempdir().unwrap();
    let bundle = import_source(dir.path(), e.plugin, e.collector, e.config, path)
        .unwrap_or_else(|err| panic!("{}: {err}", e.file));
    (dir, bundle)
}

/// Runs a pipeline of one source (`config`, `{path}` standing for `path`) in `dir`, and reads
/// the bundle it writes there.
fn import_source(
    dir: &Path,
    plugin: &str,
    collector: &str,
    config: &str,
    path: &Path,
) -> Result<Bundle, String> {
    let config = config.replace("{path}", &path.display().to_string());
    let pipeline = dir.join("corpus.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[pipeline]\nname = \"corpus\"\n\n[sources.file]\nplugin = \"{plugin}\"\ncollector = \"{collector}\"\nconfig = {config}\n"
        ),
    )
    .unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.join("bundle")),
        plugin_path: vec![],
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&pipeline, &options, &mut Quiet).map_err(|e| e.to_string())?;
    Ok(read_bundle(&outcome.bundle_dir).unwrap())
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

/// The counters whose value lies outside what their kind allows (metrics.toml: a `ratio` 0-1,
/// a `level` 0-10, every count, time, rate and clock at least 0), each named once with its raw
/// name, unit and the first value out of range: a rule that reads a tool's value in the wrong
/// unit (a percentage as a fraction, threads per warp as an efficiency) shows here.
fn out_of_range(counters: &RecordBatch) -> Vec<String> {
    let text = |c: &str| {
        yosoku_tables::text::Text::new(counters.column_by_name(c).unwrap().as_ref()).unwrap()
    };
    let (metric, raw, unit, kind) = (text("metric"), text("raw_name"), text("unit"), text("kind"));
    let value = float64(counters, "value").unwrap();
    let mut seen = std::collections::BTreeMap::new();
    for i in 0..counters.num_rows() {
        if kind.is_null(i) || value.is_null(i) || !value.value(i).is_finite() {
            continue;
        }
        let v = value.value(i);
        if !in_kind_range(kind.value(i), v) {
            seen.entry(metric.value(i).to_owned()).or_insert_with(|| {
                format!(
                    "{} ({}, `{}` in {}) = {v}, outside its kind's range",
                    metric.value(i),
                    kind.value(i),
                    raw.value(i),
                    unit.value(i)
                )
            });
        }
    }
    seen.into_values().collect()
}

/// Whether `value` lies in the range metrics.toml gives its kind: a `ratio` is a fraction
/// (0-1), a `level` 0-10, every other kind at least 0 (an `average`, one count per another, is
/// unbounded above).
fn in_kind_range(kind: &str, value: f64) -> bool {
    match kind {
        "ratio" => (0.0..=1.0 + 1e-9).contains(&value),
        "level" => (0.0..=10.0).contains(&value),
        "count" | "time" | "rate" | "average" | "clock" | "config" => value >= 0.0,
        _ => true,
    }
}

/// [`out_of_range`] over the feature columns of an `observations` table (one per counter, its
/// kind in the field's metadata): the wide table the gpuperfpredict and NeuSight readers write
/// without a long `counters` table.
fn observations_out_of_range(observations: &RecordBatch) -> Vec<String> {
    let mut out = Vec::new();
    for (field, column) in observations
        .schema()
        .fields()
        .iter()
        .zip(observations.columns())
    {
        let Some(kind) = field.metadata().get(yosoku_tables::KIND_METADATA_KEY) else {
            continue;
        };
        let Some(values) = column.as_primitive_opt::<arrow_array::types::Float64Type>() else {
            continue;
        };
        if let Some(v) = values
            .iter()
            .flatten()
            .find(|v| v.is_finite() && !in_kind_range(kind, *v))
        {
            out.push(format!(
                "{} ({kind}, an observations column) = {v}, outside its kind's range",
                field.name()
            ));
        }
    }
    out
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
        if let Some(counters) = table(&bundle, "counters") {
            failures.extend(
                out_of_range(counters)
                    .into_iter()
                    .map(|m| format!("{}: {m}", e.file)),
            );
        }
        if let Some(observations) = table(&bundle, "observations") {
            failures.extend(
                observations_out_of_range(observations)
                    .into_iter()
                    .map(|m| format!("{}: {m}", e.file)),
            );
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}\n{report}", failures.join("\n"));
}

/// `bytes` gzip-compressed when they are plain, inflated when they are gzip.
fn other_way(bytes: &[u8]) -> Vec<u8> {
    use std::io::{Read as _, Write as _};
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }
}

#[test]
fn every_importer_reads_its_corpus_files_gzip_compressed_and_plain_alike() {
    // Each file (each file of a directory) compressed when plain and inflated when compressed,
    // under its own name: the importer tells by the content. Rows, names and the checked value
    // are those of the file as it is.
    let mut readers: Vec<(&str, &str)> = Vec::new();
    for e in CORPUS {
        let (_keep, bundle) = import(e);
        let scratch = tempfile::tempdir().unwrap();
        let source = repo().join(e.file);
        let copy = scratch.path().join(source.file_name().unwrap());
        if source.is_dir() {
            std::fs::create_dir(&copy).unwrap();
            for entry in std::fs::read_dir(&source).unwrap() {
                let from = entry.unwrap().path();
                let to = copy.join(from.file_name().unwrap());
                std::fs::write(to, other_way(&std::fs::read(&from).unwrap())).unwrap();
            }
        } else {
            std::fs::write(&copy, other_way(&std::fs::read(&source).unwrap())).unwrap();
        }
        let (_keep_other, other) = import_from(e, &copy);
        let (rows_table, _) = e.rows;
        let rows = |b: &Bundle| table(b, rows_table).map(RecordBatch::num_rows);
        assert_eq!(rows(&other), rows(&bundle), "{}", e.file);
        let names = |b: &Bundle| table(b, "metric_names").map(name_counts);
        assert_eq!(names(&other), names(&bundle), "{}", e.file);
        let (t, column, row, _) = e.value;
        let value = |b: &Bundle| table(b, t).map(|b| number(b, column, row));
        assert_eq!(value(&other), value(&bundle), "{}", e.file);
        readers.push((e.plugin, e.collector));
    }
    readers.sort_unstable();
    readers.dedup();
    // `yosoku plugins` names these as reading gzip: each is shown to here.
    assert_eq!(readers, yosoku_plugin_host::GZIP_READERS);
}

/// What an input of a defect class must give.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Refused, the error saying this.
    Refused(&'static str),
    /// Imported, with this value (compared exactly) at (table, column, row).
    Value(&'static str, &'static str, usize, f64),
    /// Imported, with this integer at (table, column, row).
    Integer(&'static str, &'static str, usize, i64),
}

/// One case of a class of defect issue 54 lists: a real file (or one written exactly as its tool
/// writes it, its source in the README beside it), edited as a user's file came to be.
struct Defect {
    /// The issue's class, and what the input is.
    class: &'static str,
    /// The file or directory the case starts from; `None`: the input is `edit`'s alone.
    base: Option<&'static str>,
    /// The file of a directory `edit` applies to (`""`: the file itself).
    edited: &'static str,
    /// The input's name when `base` is `None`.
    name: &'static str,
    plugin: &'static str,
    collector: &'static str,
    config: &'static str,
    edit: fn(&[u8]) -> Vec<u8>,
    expect: Expect,
}

fn unchanged(b: &[u8]) -> Vec<u8> {
    b.to_vec()
}

/// The text with the value of column `column` of its first launch row replaced by `value` (an
/// ncu raw page: every field quoted; the header, a units row, then the launches).
fn ncu_raw_cell(b: &[u8], column: &str, value: &str) -> Vec<u8> {
    let text = String::from_utf8(b.to_vec()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let header = lines.iter().position(|l| l.starts_with("\"ID\"")).unwrap();
    let fields = |l: &str| -> Vec<String> {
        l.trim_matches('"')
            .split("\",\"")
            .map(str::to_owned)
            .collect()
    };
    let at = fields(&lines[header])
        .iter()
        .position(|f| f == column)
        .unwrap();
    let mut row = fields(&lines[header + 2]);
    row[at] = value.to_owned();
    lines[header + 2] = format!("\"{}\"", row.join("\",\""));
    (lines.join("\n") + "\n").into_bytes()
}

/// The text cut after the last occurrence of `at`, then a newline (a file cut short inside its
/// last line, whose writer or a later tool ended the line).
fn cut_after(b: &[u8], at: &str) -> Vec<u8> {
    let text = String::from_utf8(b.to_vec()).unwrap();
    let end = text.rfind(at).unwrap() + at.len();
    format!("{}\n", &text[..end]).into_bytes()
}

const DEFECTS: &[Defect] = &[
    Defect {
        class: "71: a rocprofv3 counter_collection.csv whose last record has no final newline (every field there)",
        base: Some("plugins/rocm_profiler/tests/data/rocprofv3/312_counter_collection.csv"),
        edited: "",
        name: "",
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        edit: |b| b.strip_suffix(b"\n").unwrap_or(b).to_vec(),
        expect: Expect::Value("runs", "measured_secs", 0, 10_240e-9),
    },
    Defect {
        class: "1: an `ncu --csv --metrics` details page (section \"Command line profiler metrics\")",
        base: Some(
            "plugins/cuda_profiler/tests/data/formats/ncu_metrics_details_copy_float4_h100.csv",
        ),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        edit: unchanged,
        expect: Expect::Value("runs", "measured_secs", 0, 4_960e-9),
    },
    Defect {
        class: "2: an omniperf 1.x workload, its sysinfo.csv without a final newline",
        base: Some("plugins/rocm_profiler/tests/data/omniperf-2022"),
        edited: "sysinfo.csv",
        name: "",
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        edit: unchanged,
        expect: Expect::Value("runs", "measured_secs", 0, 24_320e-9),
    },
    Defect {
        class: "3: a gzip-compressed Kineto trace (.json.gz)",
        base: Some("pipelines/data/chrome-trace/hta_mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
        edited: "",
        name: "",
        plugin: "traces",
        collector: "chrome_trace",
        config: "{ paths = [\"{path}\"] }",
        edit: unchanged,
        expect: Expect::Integer("spans", "duration_ns", 0, 340_024),
    },
    Defect {
        class: "4: Kineto starts in Unix µs with three decimals",
        base: Some("pipelines/data/chrome-trace/kineto_gpu_metrics_input.json"),
        edited: "",
        name: "",
        plugin: "traces",
        collector: "chrome_trace",
        config: "{ paths = [\"{path}\"] }",
        // Its first event's start, 1621401187223197 µs, written as today's PyTorch writes
        // starts: with three decimals.
        edit: |b| {
            String::from_utf8(b.to_vec())
                .unwrap()
                .replacen(
                    "\"ts\": 1621401187223197",
                    "\"ts\": 1621401187223197.047",
                    1,
                )
                .into_bytes()
        },
        expect: Expect::Integer("spans", "start_ns", 0, 1_621_401_187_223_197_047),
    },
    Defect {
        class: "5: a `%` value cut short, then a newline (nvprof --metrics)",
        base: Some("plugins/cuda_profiler/tests/data/formats/nvprof_metrics.csv"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\" }",
        edit: |b| cut_after(b, "12.500000%,12.5"),
        expect: Expect::Refused("without the unit its other values carry"),
    },
    Defect {
        class: "5: a legacy copy's row cut inside its gputime, then a newline",
        base: Some("plugins/cuda_profiler/tests/data/formats/legacy_v2.log"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "legacy",
        config: "{ path = \"{path}\" }",
        edit: |b| cut_after(b, "memcpyDtoH,59"),
        expect: Expect::Refused("expected 9 fields as in the header, found 2"),
    },
    Defect {
        class: "5: a legacy copy's row cut inside its cputime, then a newline",
        base: Some("plugins/cuda_profiler/tests/data/formats/legacy_v2.log"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "legacy",
        config: "{ path = \"{path}\" }",
        edit: |b| cut_after(b, "memcpyDtoH,598.112,13"),
        expect: Expect::Refused("cut short"),
    },
    Defect {
        class: "6: text in `launch__registers_per_thread` of a one-launch ncu raw page",
        base: Some("plugins/cuda_profiler/tests/data/ncu/ncu_raw_copy_float4_h100.csv"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        edit: |b| ncu_raw_cell(b, "launch__registers_per_thread", "1x"),
        expect: Expect::Refused("`launch__registers_per_thread`: expected a number"),
    },
    Defect {
        class: "6: text in `launch__grid_size` of a one-launch ncu raw page",
        base: Some("plugins/cuda_profiler/tests/data/ncu/ncu_raw_copy_float4_h100.csv"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        edit: |b| ncu_raw_cell(b, "launch__grid_size", "16,38"),
        expect: Expect::Refused("`launch__grid_size`: expected a number"),
    },
    Defect {
        class: "6: text in a `%` column of a one-launch ncu raw page",
        base: Some("plugins/cuda_profiler/tests/data/ncu/ncu_raw_copy_float4_h100.csv"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        edit: |b| ncu_raw_cell(b, "launch__occupancy_cluster_pct", "0%x"),
        expect: Expect::Refused("`launch__occupancy_cluster_pct`: expected a number"),
    },
    Defect {
        class: "7: a legacy 2.0 duration of 0.013 µs (one unit off through a float product)",
        base: Some("plugins/cuda_profiler/tests/data/formats/legacy_v2.log"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "legacy",
        config: "{ path = \"{path}\" }",
        edit: |b| {
            String::from_utf8(b.to_vec())
                .unwrap()
                .replacen("memcpyHtoD,612.480", "memcpyHtoD,0.013", 1)
                .into_bytes()
        },
        expect: Expect::Value("runs", "measured_secs", 0, 1.3e-8),
    },
    Defect {
        class: "8: an nvprof GPU trace with CRLF line ends",
        base: Some(
            "plugins/cuda_profiler/tests/data/public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv",
        ),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\" }",
        edit: |b| {
            String::from_utf8(b.to_vec())
                .unwrap()
                .replace('\n', "\r\n")
                .into_bytes()
        },
        expect: Expect::Value("runs", "measured_secs", 0, 28_321e-9),
    },
    Defect {
        class: "8: a legacy log with a UTF-8 byte-order mark",
        base: Some("plugins/cuda_profiler/tests/data/formats/legacy_v2.log"),
        edited: "",
        name: "",
        plugin: "cuda_profiler",
        collector: "legacy",
        config: "{ path = \"{path}\" }",
        edit: |b| [&[0xEF, 0xBB, 0xBF][..], b].concat(),
        expect: Expect::Value("runs", "measured_secs", 0, 612.48e-6),
    },
    Defect {
        class: "9: an ncu log that profiled no kernel",
        base: None,
        edited: "",
        name: "ncu.csv",
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        edit: |_| {
            b"==PROF== Connected to process 4242 (/work/app)\n==PROF== Disconnected from process 4242\n==WARNING== No kernels were profiled.\n"
                .to_vec()
        },
        expect: Expect::Refused("ncu profiled no kernel"),
    },
    Defect {
        class: "9: nvprof's text summary (run without --csv)",
        base: None,
        edited: "",
        name: "nvprof.txt",
        plugin: "cuda_profiler",
        collector: "nvprof",
        config: "{ path = \"{path}\" }",
        edit: |_| {
            b"==4242== NVPROF is profiling process 4242, command: ./app\n==4242== Profiling application: ./app\n==4242== Profiling result:\n            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n GPU activities:  100.00%  1.2800us         1  1.2800us  1.2800us  1.2800us  kernel(void)\n"
                .to_vec()
        },
        expect: Expect::Refused("rerun nvprof with --csv"),
    },
    Defect {
        class: "9: an empty file",
        base: None,
        edited: "",
        name: "ncu.csv",
        plugin: "cuda_profiler",
        collector: "ncu",
        config: "{ path = \"{path}\" }",
        edit: |_| Vec::new(),
        expect: Expect::Refused("empty"),
    },
    Defect {
        class: "9: a rocprofv3 memory copy trace",
        base: None,
        edited: "",
        name: "4242_memory_copy_trace.csv",
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        edit: |_| {
            b"\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,\"Agent 0\",\"Agent 1\",1,100,200\n"
                .to_vec()
        },
        expect: Expect::Refused("a rocprofv3 memory copy trace table, not kernels"),
    },
    Defect {
        class: "9: a rocprofv3 kernel trace with `Private_Segment_Size` and `Group_Segment_Size`",
        base: Some("plugins/rocm_profiler/tests/data/rocprofv3-before-1.1"),
        edited: "199_kernel_trace.csv",
        name: "",
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}\"] }",
        edit: unchanged,
        expect: Expect::Value("runs", "measured_secs", 0, 66_760e-9),
    },
    Defect {
        class: "9: rocprof v1's timestamps-only results.csv given with its counter file",
        base: Some("plugins/rocm_profiler/tests/data/rocprof-v1"),
        edited: "results.csv",
        name: "",
        plugin: "rocm_profiler",
        collector: "rocprof",
        config: "{ paths = [\"{path}/results.csv\", \"{path}/counters.csv\"] }",
        edit: unchanged,
        expect: Expect::Value("runs", "measured_secs", 1, 23_360e-9),
    },
];

/// The input of `d`, written under `dir`: the base file edited, or the base directory with its
/// file `edited` edited, or `edit`'s text alone.
fn defect_input(d: &Defect, dir: &Path) -> PathBuf {
    match d.base {
        None => {
            let path = dir.join(d.name);
            std::fs::write(&path, (d.edit)(&[])).unwrap();
            path
        }
        Some(base) => {
            let base = repo().join(base);
            let path = dir.join(base.file_name().unwrap());
            if base.is_dir() {
                std::fs::create_dir(&path).unwrap();
                for entry in std::fs::read_dir(&base).unwrap() {
                    let from = entry.unwrap().path();
                    let name = from.file_name().unwrap();
                    let bytes = std::fs::read(&from).unwrap();
                    let bytes = if name == d.edited {
                        (d.edit)(&bytes)
                    } else {
                        bytes
                    };
                    std::fs::write(path.join(name), bytes).unwrap();
                }
            } else {
                std::fs::write(&path, (d.edit)(&std::fs::read(&base).unwrap())).unwrap();
            }
            path
        }
    }
}

#[test]
fn every_defect_class_of_issue_54_is_read_right_or_refused_with_its_words() {
    let mut report = String::from("| defect class | outcome |\n|---|---|\n");
    let mut failures = Vec::new();
    for d in DEFECTS {
        let dir = tempfile::tempdir().unwrap();
        let input = defect_input(d, dir.path());
        let outcome = import_source(dir.path(), d.plugin, d.collector, d.config, &input);
        let (line, wrong) = match (outcome, d.expect) {
            (Err(e), Expect::Refused(words)) => (format!("refused: {e}"), !e.contains(words)),
            (Err(e), _) => (format!("wrongly refused: {e}"), true),
            (Ok(_), Expect::Refused(words)) => {
                (format!("imported, not refused with `{words}`"), true)
            }
            (Ok(bundle), Expect::Value(t, column, row, expected)) => {
                let got = table(&bundle, t).map_or(f64::NAN, |b| number(b, column, row));
                (format!("{t}.{column}[{row}] = {got:e}"), got != expected)
            }
            (Ok(bundle), Expect::Integer(t, column, row, expected)) => {
                let got = table(&bundle, t).map(|b| int64(b, column).unwrap().value(row));
                (
                    format!("{t}.{column}[{row}] = {got:?}"),
                    got != Some(expected),
                )
            }
        };
        report.push_str(&format!("| {} | {} |\n", d.class, line.replace('\n', " ")));
        if wrong {
            failures.push(format!("{}: {line} (expected {:?})", d.class, d.expect));
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
