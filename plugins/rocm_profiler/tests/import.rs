//! The importer on real omniperf workloads of three AMD GPUs (pipelines/data/rocprof), on the
//! rocprofv3 layouts as AMD documents them (tests/data/rocprofv3), and on broken input.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use yosoku_plugin_rocm_profiler::{Labels, read_paths};

type Tables = Vec<(String, RecordBatch)>;

fn workloads() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/rocprof")
}

fn table<'a>(tables: &'a Tables, name: &str) -> &'a RecordBatch {
    &tables
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no table {name}"))
        .1
}

fn strings(b: &RecordBatch, c: &str) -> Vec<String> {
    let a = b
        .column_by_name(c)
        .map(|a| yosoku_tables::text::Text::new(a.as_ref()).expect("text"))
        .unwrap();
    (0..a.len())
        .map(|i| {
            if a.is_null(i) {
                String::new()
            } else {
                a.value(i).to_owned()
            }
        })
        .collect()
}

fn floats(b: &RecordBatch, c: &str) -> Vec<f64> {
    b.column_by_name(c)
        .unwrap()
        .as_primitive::<Float64Type>()
        .values()
        .to_vec()
}

/// (value, unit, kind) of one counter of one run.
fn counter(tables: &Tables, run_id: &str, metric: &str) -> Option<(f64, String, String)> {
    let c = table(tables, "counters");
    let (ids, metrics, units, kinds, values) = (
        strings(c, "run_id"),
        strings(c, "metric"),
        strings(c, "unit"),
        strings(c, "kind"),
        floats(c, "value"),
    );
    (0..c.num_rows())
        .find(|&i| ids[i] == run_id && metrics[i] == metric)
        .map(|i| (values[i], units[i].clone(), kinds[i].clone()))
}

fn seconds(tables: &Tables, run_id: &str) -> f64 {
    let runs = table(tables, "runs");
    let ids = strings(runs, "run_id");
    let i = ids.iter().position(|r| r == run_id).unwrap();
    floats(runs, "measured_secs")[i]
}

fn error(paths: &[PathBuf]) -> String {
    read_paths(paths, &Labels::default())
        .unwrap_err()
        .to_string()
}

#[test]
fn three_amd_gpus_from_their_omniperf_workloads() {
    let dirs: Vec<PathBuf> = ["MI100", "MI200", "MI300X_A1"]
        .iter()
        .map(|g| workloads().join(format!("dispatch_0_{g}")))
        .collect();
    let tables = read_paths(&dirs, &Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(
        strings(runs, "run_id"),
        [
            "dispatch_0_MI100:0",
            "dispatch_0_MI200:0",
            "dispatch_0_MI300X_A1:0",
            "dispatch_0_MI300X_A1:1",
            "dispatch_0_MI300X_A1:2"
        ]
    );
    assert_eq!(
        strings(runs, "device"),
        ["MI100", "MI200", "MI300X_A1", "MI300X_A1", "MI300X_A1"]
    );
    assert!(strings(runs, "program").iter().all(|p| p == "vecCopy"));
    assert!(strings(runs, "phase").iter().all(|p| p == "kernel"));
    // Times from timestamps.csv: End_Timestamp - Start_Timestamp.
    assert_eq!(seconds(&tables, "dispatch_0_MI100:0"), 24_320e-9);
    assert_eq!(seconds(&tables, "dispatch_0_MI200:0"), 20_160e-9);
    // MI300X's timestamps.csv numbers its dispatches 1..3, pmc_perf.csv 0..2: paired by order.
    assert_eq!(seconds(&tables, "dispatch_0_MI300X_A1:0"), 16_160e-9);
    assert_eq!(seconds(&tables, "dispatch_0_MI300X_A1:2"), 14_160e-9);
    assert!(strings(runs, "parameters")[0].contains("time_from=timestamps.csv"));

    // AMD names under the vendor-neutral canonical ones.
    let waves = counter(&tables, "dispatch_0_MI100:0", "warps_launched").unwrap();
    assert_eq!(waves, (16384.0, "count".into(), "count".into()));
    assert_eq!(
        counter(&tables, "dispatch_0_MI200:0", "gld_request")
            .unwrap()
            .0,
        16384.0
    );
    assert_eq!(
        counter(&tables, "dispatch_0_MI300X_A1:1", "threads").unwrap(),
        (1_048_576.0, "count".into(), "config".into())
    );
    let lds = counter(&tables, "dispatch_0_MI100:0", "static_shared_memory").unwrap();
    assert_eq!((lds.0, lds.1.as_str()), (0.0, "bytes"));
    // MI300X writes TCC_EA0_*; MI100 TCC_EA_*: one canonical name.
    assert_eq!(
        counter(&tables, "dispatch_0_MI100:0", "dram_write_transactions")
            .unwrap()
            .0,
        131_072.0
    );
    assert_eq!(
        counter(&tables, "dispatch_0_MI300X_A1:0", "dram_write_transactions")
            .unwrap()
            .0,
        131_072.0
    );
    // Per-channel counters and merged files' repeated identity columns are not counters.
    let metrics = strings(table(&tables, "counters"), "metric");
    assert!(!metrics.iter().any(|m| m.contains('[')));
    assert!(
        !metrics
            .iter()
            .any(|m| m.starts_with("wave_size") || m.starts_with("obj"))
    );
    assert!(metrics.iter().any(|m| m == "SQC_DCACHE_REQ_READ_16"));
    let origins = strings(table(&tables, "counters"), "origin");
    assert!(origins.iter().all(|o| o == "measured"));

    // Unmapped names are listed, mapped ones with their kind.
    let names = table(&tables, "metric_names");
    let raw = strings(names, "raw_name");
    let mapped = names.column_by_name("mapped").unwrap().as_boolean();
    let i = raw.iter().position(|r| r == "SQ_WAVES").unwrap();
    assert!(mapped.value(i));
    assert!((0..names.num_rows()).any(|i| !mapped.value(i)));

    // The devices from sysinfo.csv.
    let devices = table(&tables, "devices");
    assert_eq!(strings(devices, "device"), ["MI100", "MI200", "MI300X_A1"]);
    let cus = devices
        .column_by_name("compute_units")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!((cus.value(0), cus.value(1), cus.value(2)), (120, 104, 304));
    assert_eq!(floats(devices, "clock_mhz"), [1502.0, 1700.0, 2100.0]);
    assert_eq!(
        floats(devices, "memory_bandwidth_bytes_per_sec")[0],
        1228.8e9
    );
    let l2 = devices
        .column_by_name("l2_cache_bytes")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(l2.value(0), 8192 * 1024);
    assert!(strings(devices, "description")[2].contains("gpu_arch=gfx942"));
    assert_eq!(strings(devices, "platform")[0], "ROCm 6.0.2-115");
}

#[test]
fn a_counter_file_alone_is_timed_by_its_own_timestamps_and_channels_on_request() {
    let file = workloads().join("dispatch_0_MI100/pmc_perf.csv");
    let tables = read_paths(
        std::slice::from_ref(&file),
        &Labels {
            channels: true,
            device: Some("MI100 (renamed)".into()),
            ..Labels::default()
        },
    )
    .unwrap();
    // pmc_perf.csv's own timestamps happen to be the trace's on this workload.
    assert_eq!(seconds(&tables, "dispatch_0_MI100:0"), 24_320e-9);
    assert!(strings(table(&tables, "runs"), "parameters")[0].contains("time_from=pmc_perf.csv"));
    assert!(
        strings(table(&tables, "counters"), "metric")
            .iter()
            .any(|m| m == "TCC_HIT[0]")
    );
    assert_eq!(
        strings(table(&tables, "runs"), "device")[0],
        "MI100 (renamed)"
    );
    assert!(
        tables.iter().all(|(n, _)| n != "devices"),
        "no sysinfo.csv was named"
    );
}

#[test]
fn rocprofv3_counter_collection_and_kernel_trace_as_documented() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocprofv3");
    // The long counter file alone: one run per dispatch, its own timestamps.
    let counters = read_paths(
        &[dir.join("312_counter_collection.csv")],
        &Labels::default(),
    )
    .unwrap();
    assert_eq!(
        strings(table(&counters, "runs"), "program"),
        [
            "addition_kernel<float>",
            "subtract_kernel",
            "multiply_kernel",
            "divide_kernel"
        ]
    );
    assert_eq!(seconds(&counters, "rocprofv3:1"), 10_240e-9);
    assert_eq!(
        counter(&counters, "rocprofv3:4", "warps_launched")
            .unwrap()
            .0,
        16384.0
    );
    assert_eq!(
        counter(&counters, "rocprofv3:4", "registers_per_thread")
            .unwrap()
            .0,
        12.0
    );
    assert_eq!(
        counter(&counters, "rocprofv3:4", "block_size").unwrap().0,
        64.0
    );

    // The kernel trace alone: per-dimension sizes multiplied into totals.
    let trace = read_paths(&[dir.join("123_kernel_trace.csv")], &Labels::default()).unwrap();
    assert_eq!(table(&trace, "runs").num_rows(), 4);
    assert_eq!(seconds(&trace, "rocprofv3:8"), 9_160e-9);
    assert_eq!(
        counter(&trace, "rocprofv3:8", "threads").unwrap().0,
        1_048_576.0
    );
    assert_eq!(
        counter(&trace, "rocprofv3:8", "block_size").unwrap().0,
        64.0
    );
    // The dispatches on the workload's timeline, exact to the ns.
    let spans = table(&trace, "spans");
    yosoku_tables::SPANS.check(spans).unwrap();
    assert_eq!(spans.num_rows(), 4);
    assert!(
        strings(spans, "lane")[0].contains("GPU Agent 4"),
        "{:?}",
        strings(spans, "lane")
    );
    assert_eq!(
        strings(spans, "name")[1],
        "subtract_kernel(float*, float const*, float const*, int, int)"
    );
    let start = yosoku_tables::access::int64(spans, "start_ns").unwrap();
    assert_eq!(start.value(0), 1_551_874_061_244_694);

    // Both in one directory: counters from one, times from the trace, paired per kernel.
    let both = read_paths(std::slice::from_ref(&dir), &Labels::default()).unwrap();
    assert_eq!(table(&both, "runs").num_rows(), 4);
    assert_eq!(seconds(&both, "rocprofv3:1"), 11_040e-9);
    assert!(
        strings(table(&both, "runs"), "parameters")[0].contains("time_from=123_kernel_trace.csv")
    );
    let c = table(&both, "counters");
    assert_eq!(
        strings(c, "metric")
            .iter()
            .filter(|m| *m == "threads")
            .count(),
        4,
        "launch columns once per dispatch, from the counter file"
    );
}

#[test]
fn rocprof_v1_results_layout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    std::fs::write(
        &path,
        "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,wave_size,sig,obj,Wavefronts,FETCH_SIZE,DispatchNs,BeginNs,EndNs,CompleteNs\n\
         0,\"copy_kernel(float*, float*, int) [clone .kd]\",0,0,0,100,100,16777216,1024,0,0,4,0,24,64,0x0,0x7ffd,262144,65536,10,1000,166000,167000\n",
    )
    .unwrap();
    let tables = read_paths(&[path], &Labels::default()).unwrap();
    let id = format!("{}:0", dir.path().file_name().unwrap().to_string_lossy());
    assert_eq!(seconds(&tables, &id), 165_000e-9);
    assert_eq!(strings(table(&tables, "runs"), "program"), ["copy_kernel"]);
    assert_eq!(counter(&tables, &id, "threads").unwrap().0, 16_777_216.0);
    assert_eq!(
        counter(&tables, &id, "warps_launched").unwrap().0,
        262_144.0
    );
    // FETCH_SIZE is in KiB.
    let fetched = counter(&tables, &id, "dram_read_bytes").unwrap();
    assert_eq!((fetched.0, fetched.1.as_str()), (65536.0 * 1024.0, "bytes"));
}

#[test]
fn a_rocprofv3_kernel_trace_of_before_dispatch_ids_reads_by_its_correlation_ids() {
    // rocprofiler-sdk before 1.1: no `Dispatch_Id`, `Private_Segment_Size` and
    // `Group_Segment_Size` (tests/data/README.md).
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rocprofv3-before-1.1/199_kernel_trace.csv");
    let tables = read_paths(&[path], &Labels::default()).unwrap();
    assert_eq!(table(&tables, "runs").num_rows(), 1);
    // 671599825328 - 671599758568 ns.
    assert_eq!(seconds(&tables, "rocprofv3-before-1.1:0"), 66_760e-9);
    for (metric, value) in [
        ("scratch_per_thread", 0.0),
        ("static_shared_memory", 0.0),
        ("threads", 1024.0 * 1024.0),
        ("block_size", 16.0),
    ] {
        assert_eq!(
            counter(&tables, "rocprofv3-before-1.1:0", metric).map(|c| c.0),
            Some(value),
            "{metric}"
        );
    }
}

#[test]
fn a_timestamps_only_results_file_is_paired_with_its_counter_file() {
    // rocprof v1: `--timestamp on` wrote results.csv (times and their `DurationNs`), `-i
    // pmc.txt` the counters of a second run; given together, each dispatch takes its time
    // from one and its counters from the other.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocprof-v1");
    let tables = read_paths(
        &[dir.join("results.csv"), dir.join("counters.csv")],
        &Labels::default(),
    )
    .unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(runs.num_rows(), 2);
    assert_eq!(floats(runs, "measured_secs"), [24_320e-9, 23_360e-9]);
    assert!(strings(runs, "parameters")[0].contains("time_from=results.csv"));
    assert_eq!(
        counter(&tables, "rocprof-v1:0", "warps_launched").map(|c| c.0),
        Some(16_384.0)
    );
    // `DurationNs` is the time, not a counter.
    assert!(!strings(table(&tables, "metric_names"), "raw_name").contains(&"DurationNs".into()));
}

#[test]
fn rocprofv3_tables_of_copies_api_calls_and_statistics_are_named_not_read_as_kernels() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text, kind) in [
        (
            "9_memory_copy_trace.csv",
            "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,\"Agent 0\",\"Agent 1\",1,100,200\n",
            "memory copy trace",
        ),
        (
            "9_hip_api_stats.csv",
            "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n\"hipMemcpy\",2,5000,2500.0,99.0,2000,3000,707.1\n",
            "HIP API statistics",
        ),
        (
            "9_hsa_api_trace.csv",
            "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\"HSA_CORE_API\",\"hsa_init\",1,1,1,100,200",
            "HSA API trace",
        ),
        // Renamed: told by the header.
        (
            "copies.csv",
            "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n",
            "memory copy trace",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = error(&[path]);
        assert!(
            e.contains(&format!("a rocprofv3 {kind} table, not kernels"))
                && !e.contains("cut short"),
            "{name}: {e}"
        );
    }
}

/// rocprof v1's `--stats` output (its header as rocprof's documentation prints it) is named as
/// rocprof v1's, with where its dispatches are, not as a rocprofv3 table.
#[test]
fn a_rocprof_v1_statistics_table_is_named_with_where_the_dispatches_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.stats.csv");
    std::fs::write(
        &path,
        "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\"vecCopy(double*, double*, double*, int, int)\",3,30720,10240,100.0\n",
    )
    .unwrap();
    let e = error(&[path]);
    assert!(
        e.ends_with("results.stats.csv:1: a rocprof (v1) `--stats` table: each kernel's total over its calls, not its dispatches; read the dispatches of the same run from rocprof's results.csv (`rocprof --timestamp on`, or `--stats`, writes it beside this file)"),
        "{e}"
    );
}

/// A copy of a real workload directory with `edit` applied to one of its files.
fn edited(file: &str, edit: impl Fn(&str) -> String) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for name in ["pmc_perf.csv", "timestamps.csv", "sysinfo.csv"] {
        let text =
            std::fs::read_to_string(workloads().join("dispatch_0_MI300X_A1").join(name)).unwrap();
        let mut text = if name == file { edit(&text) } else { text };
        // Edits by lines join them without the final newline every real file has.
        if !text.ends_with('\n') {
            text.push('\n');
        }
        std::fs::write(run.join(name), text).unwrap();
    }
    (dir, run)
}

#[test]
fn broken_files_are_refused_with_where_and_what() {
    // A missing identity column.
    let (_d, run) = edited("pmc_perf.csv", |t| t.replacen("Kernel_Name", "Kernel", 1));
    let e = error(&[run]);
    assert!(
        e.contains(
            "pmc_perf.csv:1: not a rocprof dispatch file: the header has no kernel name column"
        ),
        "{e}"
    );

    // A non-numeric counter value: file, line and column.
    let (_d, run) = edited("pmc_perf.csv", |t| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        lines[2] = lines[2].replacen(",16384.0,", ",lots,", 1);
        lines.join("\n")
    });
    let e = error(&[run]);
    assert!(
        e.contains("pmc_perf.csv:3:") && e.contains("expected a number, found `lots`"),
        "{e}"
    );

    // A dispatch twice.
    let (_d, run) = edited("pmc_perf.csv", |t| {
        let mut lines: Vec<String> = t.lines().map(str::to_owned).collect();
        lines[3] = format!("1{}", &lines[3][1..]);
        lines.join("\n")
    });
    let e = error(&[run]);
    assert!(
        e.contains("pmc_perf.csv:4: dispatch 1 of GPU 60633 appears again (first at line 3)"),
        "{e}"
    );

    // A trace of another run (fewer dispatches).
    let (_d, run) = edited("timestamps.csv", |t| {
        t.lines().take(3).collect::<Vec<_>>().join("\n")
    });
    let e = error(&[run]);
    assert!(
        e.contains("3 dispatches of `vecCopy` but") && e.contains("timestamps.csv has 2"),
        "{e}"
    );

    // A dispatch ending before it starts.
    let (_d, run) = edited("timestamps.csv", |t| {
        t.replacen("716272603621412", "716272603605000", 1)
    });
    let e = error(&[run]);
    assert!(
        e.contains("timestamps.csv:2: dispatch 1 ends at 716272603605000 ns, not after its start"),
        "{e}"
    );

    // A timestamp that is not an integer.
    let (_d, run) = edited("timestamps.csv", |t| {
        t.replacen("716272603621412", "soon", 1)
    });
    let e = error(&[run]);
    assert!(
        e.contains("timestamps.csv:2:16: column `End_Timestamp`: expected a timestamp"),
        "{e}"
    );

    // A row cut short.
    let (_d, run) = edited("timestamps.csv", |t| {
        t.replacen(",716272603621412,0", "", 1)
    });
    let e = error(&[run]);
    assert!(
        e.contains("timestamps.csv:2: expected 17 fields as in the header, found 15"),
        "{e}"
    );

    // Two counter files of one directory.
    let dir = workloads().join("dispatch_0_MI100");
    let e = error(&[dir.join("pmc_perf.csv"), dir.join("SQ_LEVEL_WAVES.csv")]);
    assert!(e.contains("a second counter file"), "{e}");

    // A directory with nothing of rocprof's.
    let empty = tempfile::tempdir().unwrap();
    let e = error(&[empty.path().to_path_buf()]);
    assert!(e.contains("no rocprof files in this directory"), "{e}");

    // A duplicate counter of one dispatch in rocprofv3's long form.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x_counter_collection.csv");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/rocprofv3/312_counter_collection.csv"),
    )
    .unwrap();
    let second = text.lines().nth(1).unwrap().to_owned();
    std::fs::write(&path, format!("{text}{second}\n")).unwrap();
    let e = error(&[path]);
    assert!(e.contains("x_counter_collection.csv:6: counter `SQ_WAVES` of dispatch 1 appears again (first at line 2)"), "{e}");
}

#[test]
fn a_rocpd_export_keeps_its_text_columns_out_of_the_counters() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocpd/out_kernel_trace.csv");
    let tables = read_paths(&[file], &Labels::default()).unwrap();
    assert_eq!(table(&tables, "runs").num_rows(), 3);
    assert_eq!(seconds(&tables, "rocpd:1"), 100_080e-9);
    // `Vgpr_Count`, `Lds_Block_Size`: rocprofv3's columns in rocpd's case, mapped all the same.
    assert_eq!(
        counter(&tables, "rocpd:1", "registers_per_thread").unwrap(),
        (16.0, "count".into(), "config".into())
    );
    assert_eq!(counter(&tables, "rocpd:3", "threads").unwrap().0, 4096.0);
    let raw = strings(table(&tables, "counters"), "raw_name");
    assert!(!raw.iter().any(|r| r == "Guid"), "{raw:?}");
    // The profiled process's Guid, kept as text in the run's parameters.
    assert!(
        strings(table(&tables, "runs"), "parameters")[0]
            .ends_with(";guid=00006409-00d1-70d1-a5cb-b5ab88214544"),
        "{:?}",
        strings(table(&tables, "runs"), "parameters")
    );
    let mapped = table(&tables, "metric_names");
    let flags = mapped.column_by_name("mapped").unwrap().as_boolean();
    assert!(
        (0..mapped.num_rows()).all(|i| flags.value(i)),
        "{:?}",
        strings(mapped, "raw_name")
    );
}

#[test]
fn an_omniperf_workload_of_2022_reads_its_old_sysinfo() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/omniperf-2022");
    let tables = read_paths(&[dir], &Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(strings(runs, "device"), ["MI100"]);
    assert_eq!(floats(runs, "measured_secs"), [24_320e-9]);
    let devices = table(&tables, "devices");
    assert_eq!(
        devices
            .column_by_name("compute_units")
            .unwrap()
            .as_primitive::<Int64Type>()
            .value(0),
        120
    );
    assert_eq!(floats(devices, "clock_mhz"), [1502.0]);
    assert_eq!(
        floats(devices, "memory_bandwidth_bytes_per_sec"),
        [1228.8e9]
    );
    assert!(strings(devices, "platform")[0].contains("ROCm 5.2.0"));
}

/// A counter's raw names in `metric_names`.
fn raw_names(tables: &Tables) -> Vec<String> {
    strings(table(tables, "metric_names"), "raw_name")
}

#[test]
fn rocprof_compute_3_workloads_of_2025_and_2026() {
    // 3.0 (March 2025, MI350): the passes merged into one wide pmc_perf.csv whose timestamps are
    // the passes' means, written with a decimal (`1248227793203453.2`).
    let t = read_paths(&[workloads().join("vcopy_MI350")], &Labels::default()).unwrap();
    assert_eq!(table(&t, "runs").num_rows(), 3);
    assert_eq!(strings(table(&t, "runs"), "device"), ["MI350"; 3]);
    // Line 3: End_Timestamp - Start_Timestamp = 1248227793220373.0 - 1248227793203453.2 ns,
    // exactly (through an f64 it is 16919.75).
    assert_eq!(seconds(&t, "vcopy_MI350:1"), 16_919.8e-9);
    assert_eq!(
        counter(&t, "vcopy_MI350:1", "warps_launched").unwrap().0,
        16_384.0
    );
    // The merged file repeats `Kernel_ID` once per pass (`Kernel_ID_1` ... `Kernel_ID_12`):
    // identity, never a counter.
    assert!(
        !raw_names(&t)
            .iter()
            .any(|n| n.to_ascii_lowercase().starts_with("kernel_id")),
        "{:?}",
        raw_names(&t)
    );
    // 3.x with rocpd (July 2025, MI300X): a long pmc_perf.csv, gzip-compressed here, holding each
    // of the 12 passes' rows of a dispatch with that pass's timestamps: the time is their mean.
    let t = read_paths(
        &[workloads().join("vcopy_MI300X_A1_rocpd")],
        &Labels::default(),
    )
    .unwrap();
    let runs = table(&t, "runs");
    assert_eq!(runs.num_rows(), 3);
    assert!(strings(runs, "parameters")[0].contains("passes=12"));
    // The 12 distinct (start, end) pairs of dispatch 1 add up to 97,505 ns.
    assert!((seconds(&t, "vcopy_MI300X_A1_rocpd:1") - 97_505e-9 / 12.0).abs() < 1e-18);
    assert!((seconds(&t, "vcopy_MI300X_A1_rocpd:2") - 75_074e-9 / 12.0).abs() < 1e-18);
    assert_eq!(
        counter(&t, "vcopy_MI300X_A1_rocpd:1", "warps_launched")
            .unwrap()
            .0,
        16_384.0
    );
    assert_eq!(
        counter(&t, "vcopy_MI300X_A1_rocpd:1", "l2_hits").unwrap().0,
        68_496.0
    );
    // 3.x (June 2026, RDNA 3.5): one long results_pmc_perf_<n>.csv per pass and no merged file:
    // the passes are merged, each dispatch timed in both.
    let t = read_paths(
        &[workloads().join("kernel_RDNA35_KRACKAN2")],
        &Labels::default(),
    )
    .unwrap();
    let runs = table(&t, "runs");
    assert_eq!(runs.num_rows(), 3);
    assert_eq!(
        strings(runs, "parameters")[0],
        "dispatch=0;time_from=results_pmc_perf_5.csv+results_pmc_perf_6.csv;passes=2"
    );
    // (10982435675125 - 10982435441506 + 10985096084649 - 10985095844016) / 2 ns.
    assert_eq!(seconds(&t, "kernel_RDNA35_KRACKAN2:0"), 237_126e-9);
    // A counter of each pass, and the launch columns once.
    let names = raw_names(&t);
    for name in [
        "CPC_ME1_STALL_WAIT_ON_MEM_READ",
        "CPC_ME1_STALL_WAIT_ON_MEM_WRITE",
        "Grid_Size",
    ] {
        assert_eq!(names.iter().filter(|n| *n == name).count(), 1, "{name}");
    }
    let c = table(&t, "counters");
    assert_eq!(c.num_rows(), 3 * (10 + 7 + 7));
    assert_eq!(strings(table(&t, "devices"), "device"), ["RDNA35_KRACKAN2"]);
}

#[test]
fn passes_of_different_runs_are_refused_and_a_counter_of_two_passes_is_their_mean() {
    let source = workloads().join("kernel_RDNA35_KRACKAN2");
    let copy = |edit: &dyn Fn(&str) -> String| {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        for name in [
            "sysinfo.csv",
            "results_pmc_perf_5.csv",
            "results_pmc_perf_6.csv",
        ] {
            let text = std::fs::read_to_string(source.join(name)).unwrap();
            let text = if name == "results_pmc_perf_6.csv" {
                edit(&text)
            } else {
                text
            };
            std::fs::write(run.join(name), text).unwrap();
        }
        (dir, run)
    };
    // A pass without the third dispatch.
    let (_d, run) = copy(&|t| {
        t.lines()
            .filter(|l| !l.starts_with("1,000000a7-9da4-7da4-8fa7-5616fc3869ec,3,2,"))
            .map(|l| format!("{l}\n"))
            .collect()
    });
    let e = error(&[run]);
    assert!(
        e.contains("2 dispatches, but the pass") && e.contains("has 3"),
        "{e}"
    );
    // A pass of another grid size.
    let (_d, run) = copy(&|t| t.replacen(",1048576,256,", ",2097152,256,", 1));
    let e = error(&[run]);
    assert!(
        e.contains("results_pmc_perf_6.csv:2:")
            && e.contains("`Grid_Size` 2097152 here but 1048576"),
        "{e}"
    );
    // A pass of another kernel.
    let (_d, run) = copy(&|t| t.replace("\"vecCopy(", "\"vecAdd("));
    let e = error(&[run]);
    assert!(e.contains("not passes of one run"), "{e}");
    // Both passes measured GL2C_WRITE_sum: the run takes their mean.
    let (_d, run) = copy(&|t| {
        t.replacen(
            "CPC_ME1_STALL_WAIT_ON_MEM_WRITE,0.0",
            "GL2C_WRITE_sum,131074.0",
            1,
        )
    });
    let t = read_paths(&[run], &Labels::default()).unwrap();
    let c = table(&t, "counters");
    let (ids, raw, values) = (
        strings(c, "run_id"),
        strings(c, "raw_name"),
        floats(c, "value"),
    );
    let of = |id: &str| {
        (0..c.num_rows())
            .filter(|&i| ids[i] == id && raw[i] == "GL2C_WRITE_sum")
            .map(|i| values[i])
            .collect::<Vec<_>>()
    };
    assert_eq!(of("run:0"), [131_073.0]);
    assert_eq!(of("run:1"), [131_072.0]);
}

/// The runs and counters of a rocprofv3 output, without what tells the files apart (the
/// `time_from` parameter and the device, which only the JSON names).
/// (run, parameters, seconds) of each run and (run, metric, value's bits) of each counter.
type RunsAndCounters = (Vec<(String, String, f64)>, Vec<(String, String, u64)>);

fn runs_and_counters(t: &Tables) -> RunsAndCounters {
    let runs = table(t, "runs");
    let params: Vec<String> = strings(runs, "parameters")
        .iter()
        .map(|p| {
            p.split(';')
                .filter(|kv| !kv.starts_with("time_from="))
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    let r = strings(runs, "run_id")
        .into_iter()
        .zip(params)
        .zip(floats(runs, "measured_secs"))
        .map(|((id, p), s)| (id, p, s))
        .collect();
    let c = table(t, "counters");
    let mut counters: Vec<(String, String, u64)> = strings(c, "run_id")
        .into_iter()
        .zip(strings(c, "metric"))
        .zip(floats(c, "value"))
        .map(|((id, m), v)| (id, m, v.to_bits()))
        .collect();
    counters.sort();
    (r, counters)
}

#[test]
fn rocprofv3_json_reads_as_the_csv_of_the_same_run() {
    let dir = workloads().join("vcopy_pc_sampling_MI300A_A1");
    let json = read_paths(&[dir.join("ps_file_results.json")], &Labels::default()).unwrap();
    let csv = read_paths(&[dir.join("ps_file_kernel_trace.csv")], &Labels::default()).unwrap();
    assert_eq!(runs_and_counters(&json), runs_and_counters(&csv));
    assert_eq!(table(&json, "runs").num_rows(), 3);
    // `buffer_records.kernel_dispatch[0]`: 1986623975876596 - 1986623975868304 ns.
    assert_eq!(seconds(&json, "vcopy_pc_sampling_MI300A_A1:1"), 8_292e-9);
    // The JSON names the GPU and describes it.
    assert_eq!(
        strings(table(&json, "runs"), "device"),
        ["AMD Instinct MI300X"; 3]
    );
    let devices = table(&json, "devices");
    assert_eq!(strings(devices, "device"), ["AMD Instinct MI300X"]);
    let int = |c: &str| {
        devices
            .column_by_name(c)
            .unwrap()
            .as_primitive::<Int64Type>()
            .value(0)
    };
    assert_eq!(int("compute_units"), 304);
    assert_eq!(int("l2_cache_bytes"), 4096 * 1024);
    assert_eq!(int("global_memory_bytes"), 206_141_652_992);
    // The directory holds both outputs of the run: the JSON is read, the CSV beside it not
    // (no "second kernel-trace file").
    let both = read_paths(&[dir], &Labels::default()).unwrap();
    assert!(
        strings(table(&both, "runs"), "parameters")[0].contains("time_from=ps_file_results.json")
    );
    assert_eq!(runs_and_counters(&both), runs_and_counters(&json));
}

/// The real JSON with `edit` applied, written to a file of its own.
fn json_edited(edit: &dyn Fn(&str) -> String) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(
        workloads().join("vcopy_pc_sampling_MI300A_A1/ps_file_results.json"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("edited")).unwrap();
    let path = dir.path().join("edited/edited_results.json");
    std::fs::write(&path, edit(&text)).unwrap();
    (dir, path)
}

#[test]
fn rocprofv3_json_counters_are_summed_over_dimensions_as_its_csv_writes_them() {
    // The real run had no counters. This edit adds, as rocprofiler-sdk serialises them, one
    // counter record for the first dispatch: SQ_WAVES over two dimension instances.
    let (_d, path) = json_edited(&|t| {
        t.replacen(
            "\"counters\":[]",
            "\"counters\":[{\"agent_id\":{\"handle\":32602},\"id\":{\"handle\":7},\"is_constant\":0,\"is_derived\":0,\"name\":\"SQ_WAVES\",\"description\":\"\",\"block\":\"SQ\",\"expression\":\"\",\"dimensions\":[],\"instances\":[]}]",
            1,
        )
        .replacen(
            "\"callback_records\":{\"counter_collection\":[]}",
            "\"callback_records\":{\"counter_collection\":[{\"thread_id\":281643,\"dispatch_data\":{\"size\":0,\"correlation_id\":{\"internal\":1,\"external\":0},\"start_timestamp\":1986623975868304,\"end_timestamp\":1986623975876596,\"dispatch_info\":{\"size\":72,\"agent_id\":{\"handle\":32602},\"queue_id\":{\"handle\":2},\"kernel_id\":12,\"dispatch_id\":1,\"private_segment_size\":0,\"group_segment_size\":0,\"workgroup_size\":{\"x\":256,\"y\":1,\"z\":1},\"grid_size\":{\"x\":1048576,\"y\":1,\"z\":1}}},\"records\":[{\"counter_id\":{\"handle\":7},\"value\":8192.0},{\"counter_id\":{\"handle\":7},\"value\":8192.0}],\"stream_id\":{\"handle\":0}}]}",
            1,
        )
    });
    let t = read_paths(&[path], &Labels::default()).unwrap();
    // The counter record's dispatch is the run, timed by the kernel trace of the same run.
    assert_eq!(table(&t, "runs").num_rows(), 1);
    assert_eq!(seconds(&t, "edited:1"), 8_292e-9);
    assert_eq!(
        counter(&t, "edited:1", "warps_launched").unwrap().0,
        16_384.0
    );
    assert_eq!(counter(&t, "edited:1", "threads").unwrap().0, 1_048_576.0);
}

#[test]
fn broken_rocprofv3_json_is_refused_with_where_and_what() {
    /// What is broken, the edit that breaks it, and what the error must say.
    type Case<'a> = (&'a str, &'a dyn Fn(&str) -> String, &'a str);
    let cases: &[Case] = &[
        (
            "cut short",
            &|t| t[..t.len() / 2].to_owned(),
            "edited_results.json:1:",
        ),
        (
            "cut short (the message)",
            &|t| t[..t.len() / 2].to_owned(),
            "cut short",
        ),
        (
            "a kernel no symbol names",
            &|t| {
                t.replace(
                    "\"kernel_id\":12,\"dispatch_id\":2",
                    "\"kernel_id\":99,\"dispatch_id\":2",
                )
            },
            "record buffer_records.kernel_dispatch[1]: kernel_id 99 is not among the 13 kernel_symbols",
        ),
        (
            "an end before its start",
            &|t| {
                t.replace(
                    "\"end_timestamp\":1986623975936443",
                    "\"end_timestamp\":1986623975930955",
                )
            },
            "record buffer_records.kernel_dispatch[2]: dispatch 3 ends at 1986623975930955 ns, not after its start",
        ),
        (
            "text for a timestamp",
            &|t| {
                t.replace(
                    "\"start_timestamp\":1986623975909003",
                    "\"start_timestamp\":\"soon\"",
                )
            },
            "invalid type: string \"soon\", expected u64",
        ),
        (
            "no dispatch and no counter",
            &|t| {
                let start =
                    t.find("\"kernel_dispatch\":[").unwrap() + "\"kernel_dispatch\":[".len();
                let end = t.find("],\"hip_api\"").unwrap();
                format!("{}{}", &t[..start], &t[end..])
            },
            "no kernel dispatch and no counter record",
        ),
        (
            "a dispatch given twice",
            &|t| t.replace("\"dispatch_id\":2,", "\"dispatch_id\":1,"),
            "record buffer_records.kernel_dispatch[1]: dispatch 1 of Agent 2 appears again (first at buffer_records.kernel_dispatch[0])",
        ),
        (
            "no process",
            &|_| "{\"rocprofiler-sdk-tool\":[]}\n".to_owned(),
            "no profiled process in `rocprofiler-sdk-tool`",
        ),
    ];
    for (what, edit, expected) in cases {
        let (_d, path) = json_edited(edit);
        let e = error(&[path]);
        assert!(
            e.contains("edited_results.json") && e.contains(expected),
            "{what}: {e}"
        );
    }
}

#[test]
fn broken_long_files_and_decimal_timestamps_are_refused_at_their_line() {
    let pass = workloads().join("kernel_RDNA35_KRACKAN2/results_pmc_perf_5.csv");
    let text = std::fs::read_to_string(&pass).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        path
    };
    // Dispatch 0's third row names another kernel.
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[3] = lines[3].replace("\"vecCopy(", "\"vecAdd(");
    let e = error(&[write("kernel.csv", lines.join("\n") + "\n")]);
    assert!(
        e.contains("kernel.csv:4:12:")
            && e.contains("dispatch 0 is `vecCopy(")
            && e.contains("concatenated"),
        "{e}"
    );
    // A pass of dispatch 1 that ends before it starts.
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[11] = lines[11].replace(",10982436039560,", ",10982435800000,");
    let e = error(&[write("ends.csv", lines.join("\n") + "\n")]);
    assert!(
        e.contains("ends.csv:12:")
            && e.contains(
                "dispatch 1 ends at 10982435800000 ns, not after its start at 10982435810750 ns"
            ),
        "{e}"
    );
    // Timestamps with a decimal point and no digits after it, or more than nine places.
    for (name, bad) in [
        ("point.csv", "10982435441506."),
        ("places.csv", "10982435441506.1234567891"),
    ] {
        let body = text.replacen("10982435441506,", &format!("{bad},"), 1);
        let e = error(&[write(name, body)]);
        assert!(
            e.contains(&format!("{name}:2:13:"))
                && e.contains("expected a timestamp in nanoseconds")
                && e.contains(bad),
            "{e}"
        );
    }
}

/// The counter collection rocprofiler-sdk's documentation prints (pipelines/data/rocprof
/// SOURCES.md): no newline after its last record, every field of it there, so it is read whole;
/// the same file cut inside its last quoted field, or after a separator, is still refused.
#[test]
fn a_rocprofv3_counter_collection_without_a_final_newline_is_read_whole() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/rocprof/rocprofiler_sdk_docs/counter_collection.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.ends_with('\n'));
    let tables = read_paths(std::slice::from_ref(&path), &Labels::default()).unwrap();
    assert_eq!(table(&tables, "runs").num_rows(), 4);
    // divide_kernel: 3200098838927550 - 3200098838879399 ns, its last field the file's last.
    // (Runs are named by the file's directory and the dispatch.)
    assert_eq!(seconds(&tables, "rocprofiler_sdk_docs:4"), 48_151e-9);
    assert_eq!(
        counter(&tables, "rocprofiler_sdk_docs:4", "warps_launched")
            .unwrap()
            .0,
        16384.0
    );
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("x_counter_collection.csv");
    let last_quote = text.rfind("\"SQ_WAVES\"").unwrap();
    for end in [last_quote + 4, text.len() - "3200098838927550".len()] {
        std::fs::write(&cut, &text[..end]).unwrap();
        assert!(
            read_paths(std::slice::from_ref(&cut), &Labels::default()).is_err(),
            "cut after {end}: {:?}",
            &text[end - 10..end]
        );
    }
}

/// A rocprof-compute workload whose application launched no kernel: its files hold their
/// header lines only (the real headers of the MI200 workload's). Said so, not called a second
/// trace file.
#[test]
fn an_empty_rocprof_compute_workload_is_named_as_holding_no_dispatch() {
    let dir = tempfile::tempdir().unwrap();
    let real = workloads().join("dispatch_0_MI200");
    for name in [
        "pmc_perf.csv",
        "timestamps.csv",
        "SQ_LEVEL_WAVES.csv",
        "sysinfo.csv",
    ] {
        let text = std::fs::read_to_string(real.join(name)).unwrap();
        let kept = if name == "sysinfo.csv" {
            text
        } else {
            format!("{}\n", text.lines().next().unwrap())
        };
        std::fs::write(dir.path().join(name), kept).unwrap();
    }
    let e = error(&[dir.path().to_path_buf()]);
    assert!(
        e.contains("header lines only, so the profiled application launched no kernel"),
        "{e}"
    );
    assert!(!e.contains("a second"), "{e}");
    // Beside a workload with dispatches, it is left out and said so.
    let (tables, notes) = yosoku_plugin_rocm_profiler::read_paths_noted(
        &[
            dir.path().to_path_buf(),
            workloads().join("dispatch_0_MI100"),
        ],
        &Labels::default(),
    )
    .unwrap();
    assert!(!strings(table(&tables, "runs"), "run_id").is_empty());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("no dispatch"), "{notes:?}");
}

/// rocprof-compute 3.5's analysis database (ROCm 7.3, MI350; pipelines/data/rocprof/SOURCES.md):
/// each of its 10 dispatches a run timed by its timestamps, on the MI350 its workload describes,
/// and a span; its per-kernel analysis values are counted in a note, not imported. The figures
/// were read from the database with Python's sqlite3.
#[test]
fn a_rocprof_compute_database_gives_its_dispatches_and_gpu() {
    let dir = workloads().join("rocprof_compute_db_MI350");
    let (t, notes) = yosoku_plugin_rocm_profiler::read_paths_noted(
        std::slice::from_ref(&dir),
        &Labels::default(),
    )
    .unwrap();
    let runs = table(&t, "runs");
    assert_eq!(runs.num_rows(), 10);
    assert_eq!(strings(runs, "device"), ["MI350"; 10]);
    // compute_dispatch's first row: dispatch_id 0, 150244886099176 - 150244885871614 ns.
    let id = "rocprof_compute_db_MI350:0";
    assert_eq!(seconds(&t, id), 227_562e-9);
    // Dispatch 7 is the fourth kernel's second dispatch: 150244970230296 - 150244969895452 ns.
    assert_eq!(seconds(&t, "rocprof_compute_db_MI350:7"), 334_844e-9);
    let programs = strings(runs, "program");
    assert!(
        programs[2].contains("__amd_rocclr_initHeap"),
        "{programs:?}"
    );
    assert_eq!(table(&t, "spans").num_rows(), 10);
    let devices = table(&t, "devices");
    assert_eq!(strings(devices, "device"), ["MI350"]);
    assert_eq!(
        devices
            .column_by_name("compute_units")
            .unwrap()
            .as_primitive::<Int64Type>()
            .value(0),
        256
    );
    assert!(
        notes.iter().any(|n| n.contains("10 dispatch(es)")
            && n.contains("schema 1.3.0")
            && n.contains("48405 analysis value(s)")),
        "{notes:?}"
    );
    // The file named alone reads the same.
    let alone = read_paths(
        &[dir.join("rocprof_compute_23ed6f36.db.gz")],
        &Labels::default(),
    )
    .unwrap();
    assert_eq!(table(&alone, "runs").num_rows(), 10);
}

/// A database written by the test with `sql`.
fn database(sql: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rocprof_compute_test.db");
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(sql).unwrap();
    drop(db);
    (dir, path)
}

const DISPATCH_TABLES: &str = "CREATE TABLE compute_kernel (kernel_uuid INTEGER, workload_id INTEGER, kernel_name VARCHAR);
CREATE TABLE compute_dispatch (dispatch_uuid INTEGER, kernel_uuid INTEGER, dispatch_id INTEGER, gpu_id INTEGER, start_timestamp INTEGER, end_timestamp INTEGER);";

#[test]
fn broken_rocprof_compute_databases_are_refused_with_what_and_where() {
    let v1 = "CREATE TABLE compute_metadata (id INTEGER, schema_version VARCHAR); INSERT INTO compute_metadata VALUES (1, '1.3.0');";
    let cases: [(String, &[&str]); 7] = [
        (
            "CREATE TABLE results (x INTEGER);".to_owned(),
            &[
                "not a rocprof-compute database",
                "rocpd convert --output-format csv",
            ],
        ),
        (
            format!(
                "CREATE TABLE compute_metadata (id INTEGER, schema_version VARCHAR); INSERT INTO compute_metadata VALUES (1, '2.0.0'); {DISPATCH_TABLES}"
            ),
            &[
                "schema version 2.0.0, which yosoku does not read",
                "1.x, tested on 1.3.0",
            ],
        ),
        (
            format!("{v1} {DISPATCH_TABLES}"),
            &["no dispatch (`compute_dispatch` is empty)"],
        ),
        (
            format!(
                "{v1} CREATE TABLE compute_kernel (kernel_uuid INTEGER, kernel_name VARCHAR); CREATE TABLE compute_dispatch (dispatch_uuid INTEGER, kernel_uuid INTEGER, dispatch_id INTEGER, gpu_id INTEGER, start_timestamp INTEGER);"
            ),
            &[
                "table `compute_dispatch` has no column `end_timestamp`",
                "schema 1.3.0",
            ],
        ),
        (
            format!(
                "{v1} {DISPATCH_TABLES} INSERT INTO compute_kernel VALUES (1, 1, 'k'); INSERT INTO compute_dispatch VALUES (1, 1, 0, 0, 200, 100);"
            ),
            &["ends at 100 ns, not after its start at 200 ns"],
        ),
        (
            format!(
                "{v1} {DISPATCH_TABLES} INSERT INTO compute_dispatch VALUES (1, 9, 0, 0, 100, 200);"
            ),
            &["dispatch 1 of `compute_dispatch`: its `kernel_uuid` names no kernel"],
        ),
        // Text where the database keeps a time (the `rocprof_compute_db` fuzz target's kind of
        // input, whose message named no place): the dispatch and the table are named.
        (
            format!(
                "{v1} {DISPATCH_TABLES} INSERT INTO compute_kernel VALUES (1, 1, 'k'); INSERT INTO compute_dispatch VALUES (1, 1, 0, 0, 'soon', 200);"
            ),
            &[
                "dispatch 1 of `compute_dispatch`",
                "Invalid column type Text",
            ],
        ),
    ];
    for (sql, words) in cases {
        let (_dir, path) = database(&sql);
        let e = error(&[path]);
        for w in words {
            assert!(e.contains(w), "`{w}` not in: {e}");
        }
    }
}
