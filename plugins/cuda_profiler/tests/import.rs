//! Every importer on real files (tests/data/public: public projects'; tests/data/ncu: recorded by
//! yosoku on an H100) and on format examples (tests/data/formats), and on broken input.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use yosoku_plugin_cuda_profiler::{
    Tables, legacy, ncu, nsys, nvprof, path_variant, read_gpuperfpredict, read_legacy, read_ncu,
    read_ncu_files, read_nsys, read_nvprof,
};

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
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
                "-".into()
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

/// (value, unit, kind) of one counter of one run, by canonical metric name.
fn counter(tables: &Tables, run_id: &str, metric: &str) -> (f64, String, String) {
    let c = table(tables, "counters");
    let (ids, metrics, units, kinds, values) = (
        strings(c, "run_id"),
        strings(c, "metric"),
        strings(c, "unit"),
        strings(c, "kind"),
        floats(c, "value"),
    );
    let i = (0..c.num_rows())
        .find(|&i| ids[i] == run_id && metrics[i] == metric)
        .unwrap_or_else(|| panic!("no counter {metric} of run {run_id}"));
    (values[i], units[i].clone(), kinds[i].clone())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

#[test]
fn ncu_details_page_of_a_public_file() {
    let tables = read_ncu(
        &data("public/nsightful_copy_blocked_details_cc75.csv"),
        &ncu::Labels::default(),
    )
    .unwrap();
    // Thousands separators, hz.
    let (v, unit, kind) = counter(&tables, "0", "dram_frequency");
    assert_eq!(
        (v, unit.as_str(), kind.as_str()),
        (4_963_609_951.19, "hz", "clock")
    );
    // The kernel's duration (21,058,944 ns) is the run's time.
    // The Speed Of Light section's cache throughputs (`%`, lines 8 and 9), as ratios.
    let (v, unit, kind) = counter(&tables, "0", "l1tex_throughput_pct_of_peak");
    assert_eq!(
        (v, unit.as_str(), kind.as_str()),
        (0.1829, "ratio", "ratio")
    );
    assert_eq!(counter(&tables, "0", "l2_throughput_pct_of_peak").0, 0.0838);
    let runs = table(&tables, "runs");
    assert_eq!(floats(runs, "measured_secs"), [0.021058944]);
    assert_eq!(strings(runs, "device"), ["GPU 0 (CC 7.5)"]);
    assert!(strings(runs, "program")[0].starts_with("copy_blocked["));
    // Rule rows (empty metric fields) are not counters: 71 numeric metric rows.
    assert_eq!(table(&tables, "counters").num_rows(), 71);
    let names = table(&tables, "metric_names");
    assert_eq!(names.num_rows(), 71);
    let mapped = names.column_by_name("mapped").unwrap().as_boolean();
    assert!(
        mapped.true_count() >= 10 && mapped.false_count() >= 10,
        "{}",
        mapped.true_count()
    );
}

#[test]
fn ncu_details_page_recorded_on_an_h100() {
    let labels = ncu::Labels {
        device: Some("H100".into()),
        program: None,
        variants: Some(vec!["n=1024".into()]),
    };
    let tables = read_ncu(&data("ncu/ncu_details_matmul_tiled_h100.csv"), &labels).unwrap();
    assert_eq!(
        floats(table(&tables, "runs"), "measured_secs"),
        [343_840e-9]
    );
    assert_eq!(
        counter(&tables, "0", "registers_per_thread"),
        (32.0, "register/thread".into(), "config".into())
    );
    let (cycles, unit, kind) = counter(&tables, "0", "elapsed_cycles");
    assert_eq!((unit.as_str(), kind.as_str()), ("cycles", "time"));
    assert!(cycles > 1e5, "{cycles}");
    let (occupancy, unit, _) = counter(&tables, "0", "achieved_occupancy");
    assert_eq!(unit, "ratio");
    assert!(occupancy > 0.0 && occupancy <= 1.0, "{occupancy}");
    assert_eq!(strings(table(&tables, "runs"), "variant"), ["n=1024"]);
    assert_eq!(strings(table(&tables, "runs"), "program"), ["matmul_tiled"]);
}

#[test]
fn ncu_raw_page_sweep_recorded_on_an_h100() {
    let sizes: Vec<String> = [128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024]
        .iter()
        .map(|n| format!("n={n}"))
        .collect();
    let labels = ncu::Labels {
        device: Some("H100".into()),
        program: None,
        variants: Some(sizes.clone()),
    };
    let tables = read_ncu(&data("ncu/ncu_raw_sweep_matmul_tiled_h100.csv"), &labels).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(strings(runs, "variant"), sizes);
    let secs = floats(runs, "measured_secs");
    assert!(
        close(secs[0], 7_744e-9) && close(secs[10], 344_384e-9),
        "{secs:?}"
    );
    assert_eq!(counter(&tables, "0", "inst_executed").0, 272_384.0);
    assert_eq!(counter(&tables, "1", "inst_executed").0, 893_952.0);
    assert_eq!(
        counter(&tables, "0", "dram_read_bytes"),
        (135_424.0, "bytes".into(), "count".into())
    );
    assert_eq!(counter(&tables, "0", "registers_per_thread").2, "config");
    // Every roll-up of a mapped counter maps, under the counter's name and the roll-up's.
    assert_eq!(
        counter(&tables, "0", "dram_read_bytes_avg"),
        (3_385.6, "bytes".into(), "count".into())
    );
    // A name nothing maps passes through unchanged, listed as unmapped, with its rule's kind.
    let names = table(&tables, "metric_names");
    let (raw, mapped) = (
        strings(names, "raw_name"),
        names.column_by_name("mapped").unwrap().as_boolean().clone(),
    );
    let i = raw
        .iter()
        .position(|r| r == "launch__occupancy_limit_barriers")
        .unwrap();
    assert!(!mapped.value(i));
    // Text values (`PolicySpread`, `all`) are not counters.
    assert!(
        !strings(table(&tables, "counters"), "raw_name")
            .contains(&"launch__cluster_scheduling_policy".to_owned())
    );
}

#[test]
fn an_ncu_metrics_details_page_reads_as_the_raw_page_of_the_same_launches() {
    // `ncu --csv --metrics a,b,c` (details page): the metrics asked for, in the section
    // "Command line profiler metrics", named as on the raw page. The example holds the raw
    // sweep's 13 metrics of its six launches (formats/README.md).
    let details = read_ncu(
        &data("formats/ncu_metrics_details_copy_float4_h100.csv"),
        &ncu::Labels::default(),
    )
    .unwrap();
    let raw = read_ncu(
        &data("ncu/ncu_raw_sweep_copy_float4_h100.csv"),
        &ncu::Labels::default(),
    )
    .unwrap();
    // Each launch has a run, timed by its `gpu__time_duration.sum`, as on the raw page.
    let runs = table(&details, "runs");
    assert_eq!(runs.num_rows(), 6);
    assert_eq!(
        floats(runs, "measured_secs"),
        floats(table(&raw, "runs"), "measured_secs")
    );
    // Every name maps, and the kernel's time is a time, not a count a fit would take as a
    // feature of itself.
    let names = table(&details, "metric_names");
    let mapped = names.column_by_name("mapped").unwrap().as_boolean();
    assert_eq!(mapped.true_count(), names.num_rows());
    for run in ["0", "5"] {
        for metric in [
            "duration",
            "dram_read_bytes",
            "inst_executed",
            "registers_per_thread",
        ] {
            assert_eq!(
                counter(&details, run, metric),
                counter(&raw, run, metric),
                "{metric} of launch {run}"
            );
        }
    }
    assert_eq!(counter(&details, "0", "duration").2, "time");
}

#[test]
fn nsys_statistics_read_as_runs_with_their_instances_and_the_trace_as_spans() {
    let dir = data("nsys");
    let reports: Vec<PathBuf> = [
        "cuda_gpu_kern_sum",
        "cuda_gpu_mem_time_sum",
        "cuda_api_sum",
        "cuda_gpu_trace",
    ]
    .iter()
    .map(|r| dir.join(format!("run_{r}.csv")))
    .collect();
    let tables = read_nsys(&reports, &nsys::Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    // 2 kernels, 3 memory operations, 6 CUDA calls.
    assert_eq!(runs.num_rows(), 11);
    assert_eq!(
        &strings(runs, "program")[..2],
        ["copy<float4>", "copy<float>"]
    );
    assert_eq!(strings(runs, "device")[0], "NVIDIA H100 80GB HBM3");
    let reps = runs
        .column_by_name("repetitions")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(reps.value(0), 3);
    // Total Time (ns) 22656 of the three instances, in seconds, exactly.
    assert_eq!(floats(runs, "measured_secs")[0], 22_656e-9);
    assert_eq!(
        strings(runs, "phase"),
        [
            "kernel", "kernel", "transfer", "transfer", "transfer", "api", "api", "api", "api",
            "api", "api"
        ]
    );
    // Each instance's statistics as counters in seconds, kind `time` (no fit takes them as a
    // feature of the time they are).
    let run0 = &strings(runs, "run_id")[0];
    assert_eq!(
        counter(&tables, run0, "Med (ns)"),
        (6_816e-9, "s".into(), "time".into())
    );
    assert_eq!(counter(&tables, run0, "Min (ns)").0, 4_960e-9);
    // The trace: every kernel, copy and set a span.
    assert_eq!(table(&tables, "spans").num_rows(), 9);

    // What nsys printed, several reports in one text: the same tables.
    let printed = read_nsys(
        &[dir.join("nsys_stats_stdout.txt")],
        &nsys::Labels::default(),
    )
    .unwrap();
    for name in ["runs", "counters", "spans"] {
        let (a, b) = (table(&tables, name), table(&printed, name));
        assert_eq!(a.num_rows(), b.num_rows(), "{name}");
        for column in ["measured_secs", "value", "duration_ns"] {
            if a.column_by_name(column).is_some() {
                assert_eq!(
                    a.column_by_name(column),
                    b.column_by_name(column),
                    "{name}.{column}"
                );
            }
        }
    }

    // The trace alone: one run per launch, copy and set.
    let trace = read_nsys(&reports[3..], &nsys::Labels::default()).unwrap();
    let runs = table(&trace, "runs");
    assert_eq!(runs.num_rows(), 9);
    assert_eq!(floats(runs, "measured_secs")[3], 4_960e-9);

    // The summaries alone name no GPU: said, with the key that does.
    let e = read_nsys(&reports[..1], &nsys::Labels::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("set config key `device`"), "{e}");
    let labelled = nsys::Labels {
        device: Some("H100".into()),
        ..Default::default()
    };
    assert_eq!(
        table(&read_nsys(&reports[..1], &labelled).unwrap(), "runs").num_rows(),
        2
    );
}

#[test]
fn nsys_summaries_with_broken_cells_are_refused_at_their_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let header =
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n";
    for (row, expected) in [
        (
            "63.0,22656,three,7552.0,6816.0,4960,10880,3027.8,k\n",
            ":2:3: `Instances`: expected a count",
        ),
        (
            "63.0,-5,3,7552.0,6816.0,4960,10880,3027.8,k\n",
            ":2:2: `Total Time (ns)`: expected a time",
        ),
        (
            "63.0,22656,3,7552.0,6816.0,x,10880,3027.8,k\n",
            ":2:6: `Min (ns)`: expected a time in ns",
        ),
        (
            "63.0,22656,3,7552.0,6816.0,4960,10880,3027.8\n",
            ":2: expected 9 fields as in the header, found 8",
        ),
        (
            "63.0,13312,2,6656.0,6656.0,5120,8192,2172.2,[CUDA memcpy Host\n",
            ":2:9: the name `[CUDA memcpy Host` is not whole",
        ),
    ] {
        let path = dir.path().join("run_cuda_gpu_kern_sum.csv");
        std::fs::write(&path, format!("{header}{row}")).unwrap();
        let labels = nsys::Labels {
            device: Some("H100".into()),
            ..Default::default()
        };
        let e = read_nsys(&[path], &labels).unwrap_err().to_string();
        assert!(e.contains(expected), "{row:?}: {e}");
    }
}

#[test]
fn nsys_reports_of_other_kinds_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run_osrt_sum.csv");
    std::fs::write(
        &path,
        "Time (%),Total Time (ns),Num Calls,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n90.0,1000,2,500.0,500.0,400,600,141.4,poll\n",
    )
    .unwrap();
    let e = read_nsys(&[path], &nsys::Labels::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("an nsys `osrt_sum` report"), "{e}");
}

/// Reports of the Rodinia measurement on an H200 (pipelines/data/gpu-measured): one per size.
fn measured(kernel: &str, size: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/gpu-measured/h200")
        .join(kernel)
        .join(size)
        .join("ncu.csv.gz")
}

#[test]
fn ncu_reports_of_a_sweep_read_as_one_with_their_directory_as_variant() {
    let labels = ncu::Labels::default();
    let paths = [
        measured("lud_diagonal", "512"),
        measured("lud_diagonal", "8192"),
    ];
    let (tables, _) = read_ncu_files(&paths, &labels, Some("n={parent}")).unwrap();
    let runs = table(&tables, "runs");
    // Five launches a report, in the order of the files; ids restart in each report, so each
    // is prefixed with its file, below the directory the files share.
    assert_eq!(
        strings(runs, "variant"),
        [["n=512"; 5], ["n=8192"; 5]].concat()
    );
    let ids = strings(runs, "run_id");
    assert_eq!(
        (ids[0].as_str(), ids[5].as_str()),
        ("512/ncu.csv.gz:0", "8192/ncu.csv.gz:0")
    );
    assert_eq!(strings(runs, "program"), vec!["lud_diagonal"; 10]);
    assert_eq!(strings(runs, "device"), vec!["NVIDIA H200"; 10]);
    // The same times and counters as each file read alone; one device row, one row per name.
    for (i, path) in paths.iter().enumerate() {
        let alone = read_ncu(path, &labels).unwrap();
        let secs = floats(table(&alone, "runs"), "measured_secs");
        assert_eq!(floats(runs, "measured_secs")[5 * i..5 * i + 5], secs[..]);
        assert_eq!(
            counter(&tables, &ids[5 * i + 2], "elapsed_cycles_sm").0,
            counter(&alone, "2", "elapsed_cycles_sm").0
        );
        assert_eq!(
            table(&tables, "metric_names").num_rows(),
            table(&alone, "metric_names").num_rows()
        );
    }
    assert_eq!(table(&tables, "devices").num_rows(), 1);
    assert_eq!(
        table(&tables, "counters").num_rows(),
        paths
            .iter()
            .map(|p| table(&read_ncu(p, &labels).unwrap(), "counters").num_rows())
            .sum::<usize>()
    );
    // What a path gives a variant; a path without a directory has no `{parent}`.
    let p = Path::new("runs/1024x256/ncu.csv.gz");
    assert_eq!(path_variant("{parent}", p).unwrap(), "1024x256");
    assert_eq!(path_variant("{stem}@{parent}", p).unwrap(), "ncu@1024x256");
    assert!(
        path_variant("{parent}", Path::new("ncu.csv"))
            .unwrap_err()
            .to_string()
            .contains("ncu.csv has no directory")
    );
    assert!(
        read_ncu_files(&[], &labels, None)
            .unwrap_err()
            .to_string()
            .contains("expected one file or more")
    );
}

#[test]
fn ncu_raw_page_with_hundreds_of_columns() {
    let tables = read_ncu(
        &data("ncu/ncu_raw_copy_float4_h100.csv"),
        &ncu::Labels::default(),
    )
    .unwrap();
    assert_eq!(table(&tables, "runs").num_rows(), 1);
    let (seconds, unit, kind) = counter(&tables, "0", "duration");
    assert_eq!((unit.as_str(), kind.as_str()), ("s", "time"));
    assert_eq!(floats(table(&tables, "runs"), "measured_secs"), [seconds]);
    // The device's attributes (166 columns) describe the device, not the launch: one row of
    // `devices`, no counters.
    let counters = table(&tables, "counters");
    let raw = strings(counters, "raw_name");
    assert!(raw.iter().all(|r| !r.starts_with("device__")));
    assert!(counters.num_rows() > 300, "{}", counters.num_rows());
    let devices = table(&tables, "devices");
    assert_eq!(strings(devices, "device"), ["NVIDIA H100 80GB HBM3"]);
    let ints = |c: &str| {
        devices
            .column_by_name(c)
            .unwrap()
            .as_primitive::<arrow_array::types::Int64Type>()
            .value(0)
    };
    assert_eq!(ints("compute_units"), 132);
    assert_eq!(ints("l2_cache_bytes"), 52_428_800);
    assert_eq!(floats(devices, "clock_mhz"), [1980.0]);
    // 2 transfers x 2,619 MHz x 5,120 bits / 8: the H100 SXM's 3.35 TB/s.
    let bandwidth = floats(devices, "memory_bandwidth_bytes_per_sec")[0];
    assert!((bandwidth - 3.352_32e12).abs() < 1e6, "{bandwidth}");
    assert!(strings(devices, "description")[0].contains("compute_capability_major=9"));
    // Every counter of the page has a kind: by name (the comparison table's equivalents of
    // nvprof's metrics) or by a naming rule (the raw name kept, `mapped` false).
    let kinds = strings(counters, "kind");
    let without: Vec<&String> = (0..kinds.len())
        .filter(|&i| kinds[i] == "-")
        .map(|i| &raw[i])
        .collect();
    // But Nsight Compute's own bookkeeping (replay passes, bytes saved for replay, intermediate
    // values) and its occupancy charts' data (`derived__pct_*`: no ratio of the kernel).
    assert!(
        without.iter().all(|r| r.starts_with("profiler__")
            || r.starts_with("derived_temp")
            || r.starts_with("derived__pct_")),
        "{without:?}"
    );
    assert_eq!(counter(&tables, "0", "dram_cycles_active_avg").2, "time");
    assert_eq!(
        counter(
            &tables,
            "0",
            "l1tex__throughput.max.pct_of_peak_sustained_active"
        )
        .2,
        "ratio"
    );
    assert_eq!(
        counter(&tables, "0", "l2_sectors_avg_pct_of_peak_sustained_elapsed").2,
        "ratio"
    );
    assert_eq!(
        counter(&tables, "0", "l2_throughput_pct_of_peak").2,
        "ratio"
    );
    assert_eq!(counter(&tables, "0", "sm_frequency").2, "clock");
    let names = table(&tables, "metric_names");
    let mapped = names.column_by_name("mapped").unwrap().as_boolean().clone();
    // Named: every counter of the page (cycles, sectors, instructions: 48 of 48) and three in
    // four of all its names; the rest are launch attributes and breakdown throughputs, with kinds.
    let by_name = (0..names.num_rows()).filter(|&i| mapped.value(i)).count();
    assert!(
        (250..300).contains(&by_name),
        "{by_name} of {}",
        names.num_rows()
    );
}

#[test]
fn nvprof_gpu_trace_with_prefixed_and_repeated_headers() {
    let labels = nvprof::Labels {
        prefix_names: Some(vec!["n".into()]),
        ..Default::default()
    };
    let tables = read_nvprof(
        &data("public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv"),
        &labels,
    )
    .unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(runs.num_rows(), 96, "32 runs of 2 copies and a kernel");
    let (programs, phases, variants, secs) = (
        strings(runs, "program"),
        strings(runs, "phase"),
        strings(runs, "variant"),
        floats(runs, "measured_secs"),
    );
    assert_eq!(programs.iter().filter(|p| *p == "matMul").count(), 32);
    assert_eq!(phases.iter().filter(|p| *p == "transfer").count(), 64);
    let last = programs.iter().rposition(|p| p == "matMul").unwrap();
    assert_eq!(variants[last], "n=8192");
    assert!(close(secs[last], 3_928_982_508e-9), "{}", secs[last]);
    assert_eq!(strings(runs, "device")[0], "Tesla K40c");
    // Units come from each block's own units row: 256 KB, then 1 MB (binary, as nvprof prints them).
    let c = table(&tables, "counters");
    let (metric, value, variant) = (
        strings(c, "metric"),
        floats(c, "value"),
        strings(c, "variant"),
    );
    let size = |n: &str| {
        (0..c.num_rows())
            .find(|&i| metric[i] == "transfer_size" && variant[i] == n)
            .map(|i| value[i])
            .unwrap()
    };
    assert_eq!(size("n=256"), 262_144.0);
    assert_eq!(size("n=512"), 1_048_576.0);
    assert_eq!(
        counter(
            &tables,
            &strings(runs, "run_id")[last],
            "registers_per_thread"
        )
        .0,
        23.0
    );
    // The timeline: each run's copies and kernel as spans on the K40's stream, one timeline per
    // input size, in order and without overlap.
    let spans = table(&tables, "spans");
    yosoku_tables::SPANS.check(spans).unwrap();
    assert_eq!(spans.num_rows(), 96);
    let (run, lane, category) = (
        strings(spans, "run_id"),
        strings(spans, "lane"),
        strings(spans, "category"),
    );
    assert!(run[0].ends_with(";n=256"), "{}", run[0]);
    assert!(lane[0].starts_with("Tesla K40c / stream "), "{}", lane[0]);
    assert_eq!(category.iter().filter(|c| *c == "memcpy").count(), 64);
    let start = yosoku_tables::access::int64(spans, "start_ns").unwrap();
    let duration = yosoku_tables::access::int64(spans, "duration_ns").unwrap();
    for i in 1..3 {
        assert!(start.value(i) >= start.value(i - 1) + duration.value(i - 1));
    }
}

/// nvprof on Windows writes CRLF line ends. The `==` lines before the CSV were skipped by a
/// byte count that took each line as one byte shorter than written, so the CSV began inside the
/// last skipped line (and inside a character, a panic, when that line was not ASCII: found by
/// `cargo xtask fuzz --target nvprof`).
/// `banner` (with a non-ASCII line) and then the real file `file`, written with LF and with CRLF
/// line ends under one file name in two directories (the tables name the file's stem): `read`
/// gives the same tables for both.
fn crlf_reads_as_lf(
    file: &str,
    banner: &str,
    read: impl Fn(&Path) -> Result<Tables, yosoku_plugin_sdk::PluginError>,
) {
    let text = std::fs::read_to_string(data(file)).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (crlf, lf) = (a.path().join("input.csv"), b.path().join("input.csv"));
    let with_banner = format!("{banner}{text}");
    std::fs::write(&crlf, with_banner.replace('\n', "\r\n")).unwrap();
    std::fs::write(&lf, with_banner).unwrap();
    assert_eq!(read(&crlf).unwrap(), read(&lf).unwrap());
}

#[test]
fn nvprof_with_crlf_line_ends_reads_as_with_lf() {
    crlf_reads_as_lf(
        "formats/nvprof_metrics.csv",
        "==1224== \u{41c}etrics\n",
        |p| read_nvprof(p, &nvprof::Labels::default()),
    );
}

/// The same for ncu: a banner of `==PROF==` lines before the CSV.
#[test]
fn ncu_with_crlf_line_ends_reads_as_with_lf() {
    crlf_reads_as_lf(
        "ncu/ncu_details_matmul_naive_h100.csv",
        "==PROF== Connected to process 7 (\u{41c})\n==PROF== Disconnected\n",
        |p| read_ncu(p, &ncu::Labels::default()),
    );
}

#[test]
fn nvprof_metric_and_event_summaries() {
    let tables = read_nvprof(
        &data("formats/nvprof_metrics.csv"),
        &nvprof::Labels::default(),
    )
    .unwrap();
    assert!(
        tables.iter().all(|(n, _)| n != "runs"),
        "summaries hold no times"
    );
    assert_eq!(
        counter(&tables, "kernel0", "gld_efficiency"),
        (1.0, "ratio".into(), "ratio".into())
    );
    let (bw, unit, kind) = counter(&tables, "kernel0", "dram_read_throughput");
    assert!(
        close(bw, 190.706924 * 1024.0 * 1024.0 * 1024.0) && unit == "bytes/s" && kind == "rate",
        "{bw} {unit}"
    );
    assert_eq!(
        counter(&tables, "kernel0", "l1_shared_utilization"),
        (1.0, "level".into(), "level".into())
    );
    assert_eq!(
        counter(&tables, "kernel1", "inst_executed").0,
        65_538.0,
        "the Avg column"
    );
    assert_eq!(
        counter(&tables, "kernel1", "sm_efficiency_custom"),
        (0.125, "ratio".into(), "-".into())
    );
    let c = table(&tables, "counters");
    assert_eq!(strings(c, "device")[0], "Tesla K40c");
    assert_eq!(strings(c, "program")[6], "scale");

    let tables = read_nvprof(
        &data("formats/nvprof_events.csv"),
        &nvprof::Labels::default(),
    )
    .unwrap();
    assert_eq!(counter(&tables, "kernel0", "gld_request").0, 32_768.0);
    assert_eq!(counter(&tables, "kernel0", "active_cycles").2, "time");
}

#[test]
fn legacy_profiler_logs_version_2_and_1() {
    let tables = read_legacy(&data("formats/legacy_v2.log"), &legacy::Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(
        strings(runs, "phase"),
        ["transfer", "kernel", "kernel", "transfer"]
    );
    assert!(close(floats(runs, "measured_secs")[1], 4.8e-6));
    assert_eq!(strings(runs, "device")[0], "Tesla C2050");
    assert_eq!(
        strings(runs, "run_id"),
        ["line5", "line6", "line7", "line8"],
        "run ids are the log's lines"
    );
    assert_eq!(counter(&tables, "line6", "gld_request").0, 128.0);
    assert_eq!(
        counter(&tables, "line6", "inst_executed").0,
        2048.0,
        "`instructions` is inst_executed"
    );

    let tables = read_legacy(&data("formats/legacy_v1.log"), &legacy::Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(strings(runs, "program"), ["memcpyHtoD", "_Z6kernelPfi"]);
    assert_eq!(strings(runs, "device")[0], "GeForce GTX 285");
    assert_eq!(counter(&tables, "line4", "gld_64b").0, 1024.0);
    assert_eq!(counter(&tables, "line4", "warp_serialize").2, "count");
    assert!(close(counter(&tables, "line4", "duration").0, 4.8e-6));
}

/// The layouts real legacy logs have (tests/data/formats/README.md says which real logs): the
/// `key=[ value ]` layout under version 2.0 after a field list, CSV rows of memory copies that
/// stop early, and version 1.4's field list and `memcopy`.
#[test]
fn legacy_times_are_the_seconds_the_text_says_in_both_tables() {
    // 0.013 us and 0.019 us: times 1e-6 in floating point each is one unit in the last place
    // off the decimal (1.3000000000000001e-8). Both `runs` and the `duration` counter hold the
    // double nearest the decimal.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cuda_profile_0.log");
    std::fs::write(
        &path,
        "# CUDA_PROFILE_LOG_VERSION 2.0\n# CUDA_DEVICE 0 Tesla C2050\nmethod,gputime,cputime,occupancy\n_Z1kv,0.013,5.000,1.000\n_Z1kv,0.019,5.000,1.000\n",
    )
    .unwrap();
    let tables = read_legacy(&path, &legacy::Labels::default()).unwrap();
    let exact = ["1.3e-8".parse::<f64>().unwrap(), "1.9e-8".parse().unwrap()];
    assert_eq!(floats(table(&tables, "runs"), "measured_secs"), exact);
    assert_eq!(counter(&tables, "line4", "duration").0, exact[0]);
    assert_eq!(counter(&tables, "line5", "duration").0, exact[1]);
    assert_eq!(counter(&tables, "line4", "cpu_time").0, 5e-6);
    assert_ne!(
        0.013 * 1e-6,
        exact[0],
        "the value shows the rounding it is about"
    );
}

#[test]
fn legacy_logs_as_real_profilers_wrote_them() {
    let labels = legacy::Labels::default();
    let tables = read_legacy(&data("formats/legacy_v2_key_value.log"), &labels).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(
        strings(runs, "phase"),
        ["kernel", "transfer", "kernel", "transfer"]
    );
    assert!(close(floats(runs, "measured_secs")[2], 1.2e-3));
    assert_eq!(strings(runs, "device")[0], "Tesla C2050");

    let tables = read_legacy(&data("formats/legacy_v2_csv_short_copies.log"), &labels).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(
        strings(runs, "phase"),
        ["kernel", "transfer", "kernel", "transfer"]
    );
    assert!(close(floats(runs, "measured_secs")[1], 0.75e-6));

    let tables = read_legacy(&data("formats/legacy_v1_4.log"), &labels).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(strings(runs, "phase"), ["transfer", "kernel", "transfer"]);
    assert_eq!(strings(runs, "device")[0], "GeForce 8600 GT");
    assert_eq!(counter(&tables, "line5", "gld_coherent").0, 2048.0);

    // Only a memory copy may stop early: a short kernel row is still refused.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.log");
    std::fs::write(
        &path,
        "# CUDA_PROFILE_LOG_VERSION 2.0\n# CUDA_DEVICE 0 G\n# CUDA_PROFILE_CSV 1\nmethod,gputime,cputime,occupancy\nk,1.0,2.0\n",
    )
    .unwrap();
    let e = read_legacy(&path, &labels).unwrap_err().to_string();
    assert!(
        e.ends_with("short.log:5: expected 4 fields as in the header, found 3"),
        "{e}"
    );
}

/// (value, unit, kind) of an `observations` column at `row`, by canonical metric name.
fn observation(tables: &Tables, row: usize, metric: &str) -> (f64, String, String) {
    let obs = table(tables, "observations");
    let schema = obs.schema();
    let field = schema
        .field_with_name(metric)
        .unwrap_or_else(|_| panic!("no column {metric}"));
    let unit = field
        .metadata()
        .get("yosoku.unit")
        .cloned()
        .unwrap_or_default();
    let kind = field
        .metadata()
        .get("yosoku.kind")
        .cloned()
        .unwrap_or_else(|| "-".into());
    (floats(obs, metric)[row], unit, kind)
}

#[test]
fn the_gpuperfpredict_dataset_read_from_gzip() {
    let tables =
        read_gpuperfpredict(&[data("public/bpnn_layerforward_CUDA-Tesla-K40.csv.gz")]).unwrap();
    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["runs", "observations", "metric_names"]);
    let obs = table(&tables, "observations");
    assert_eq!(obs.num_rows(), 57);
    assert_eq!(strings(obs, "device")[0], "Tesla-K40");
    assert_eq!(strings(obs, "program")[0], "bpnn_layerforward_CUDA");
    assert_eq!(strings(obs, "variant")[0], "8192");
    assert!(strings(obs, "run_id")[0].starts_with("bpnn_layerforward_CUDA-Tesla-K40:"));
    assert_eq!(floats(obs, "measured_secs")[0], 2.0576e-05);
    assert_eq!(
        strings(table(&tables, "runs"), "parameters")[0],
        "input.size.1=8192;input.size.2=0"
    );
    // R-export names map to canonical columns; units the export dropped are restored.
    assert_eq!(
        observation(&tables, 0, "static_shared_memory"),
        (1088.0, "bytes".into(), "config".into())
    );
    assert_eq!(
        observation(&tables, 0, "inst_executed"),
        (520_192.0, "count".into(), "count".into())
    );
    let (bw, unit, kind) = observation(&tables, 0, "dram_read_throughput");
    assert_eq!((unit.as_str(), kind.as_str()), ("bytes/s", "rate"));
    assert!(bw > 0.0);
    assert_eq!(observation(&tables, 0, "gld_efficiency").1, "ratio");
    assert_eq!(observation(&tables, 0, "elapsed_cycles_sm").2, "time");
    // Every column of the export is mapped.
    let names = table(&tables, "metric_names");
    let unmapped: Vec<String> = strings(names, "raw_name")
        .into_iter()
        .zip(names.column_by_name("mapped").unwrap().as_boolean().iter())
        .filter(|(_, m)| m == &Some(false))
        .map(|(n, _)| n)
        .collect();
    assert!(unmapped.is_empty(), "unmapped: {unmapped:?}");
}

/// Writes `text` to a file and returns the importer's error, with the path shortened to `bad.csv`.
fn error(
    read: impl Fn(&Path) -> Result<Tables, yosoku_plugin_sdk::PluginError>,
    text: &str,
) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, text).unwrap();
    read(&path)
        .unwrap_err()
        .to_string()
        .replace(&path.display().to_string(), "bad.csv")
}

#[test]
fn files_that_are_not_what_the_importer_expects_are_refused_by_line() {
    let ncu = |p: &Path| read_ncu(p, &ncu::Labels::default());
    let nvprof = |p: &Path| read_nvprof(p, &nvprof::Labels::default());
    let legacy = |p: &Path| read_legacy(p, &legacy::Labels::default());
    let gpp = |p: &Path| read_gpuperfpredict(&[p]);
    for (got, expected) in [
        (
            error(ncu, "a,b,c\n1,2,3\n"),
            "bad.csv: not a format yosoku reads (cuda_profiler/ncu: no header line (`\"ID\",\"Process ID\",...`) in its 2 lines); it reads, by collector: `ncu --csv` output",
        ),
        (
            // In the shape of nvprof-result's cfd `print-gpu-summary.csv` (TITAN Xp).
            error(
                nvprof,
                "==308050== Profiling result:\n\"Type\",\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n,%,ms,,us,us,ms,\n\"GPU activities\",68.739052,268.352834,6000,44.725000,43.106000,1.791976,\"cuda_compute_flux(int, int*, float*, float*, float*)\"\n",
            ),
            "bad.csv:2: nvprof's GPU summary (`--print-gpu-summary`, or `--csv` alone): each kernel's total over its calls, not its launches; rerun nvprof with --csv --print-gpu-trace for each launch's time (and --metrics or --events for counters)",
        ),
        (
            error(
                ncu,
                "==PROF== Connected to process 58960 (./app)\nresult: ok\n==PROF== Disconnected from process 58960\n",
            ),
            "bad.csv:3: an ncu log with no table: ncu's own lines (2) but no header (`\"ID\",...`) after them, so no kernel was profiled (the program launched none on a GPU ncu can see, or its filters matched none) or ncu was stopped before it wrote one; run `ncu --csv` again on a run that launches kernels",
        ),
        (
            error(
                ncu,
                "==PROF== Connected\n==ERROR== The application returned an error code (1).\n",
            ),
            "bad.csv:2: ncu reported an error: ==ERROR== The application returned an error code (1).",
        ),
        (
            error(ncu, "\"ID\",\"Kernel Name\",\"x\"\n\"0\",\"k\",\"1\"\n"),
            "bad.csv:2: expected the units row under the header",
        ),
        (
            error(
                ncu,
                "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"fast\"\n",
            ),
            "bad.csv:3: column `gpu__time_duration.sum`: expected a number, found `fast`",
        ),
        // Found by `cargo xtask fuzz`: a zero duration reached the `runs` table's check, whose
        // error named neither the file nor the line.
        (
            error(
                ncu,
                "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"0\"\n",
            ),
            "bad.csv:3: a duration of 0 s; a measured time must be a finite number above 0",
        ),
        (
            error(
                legacy,
                "# CUDA_PROFILE_LOG_VERSION 1.6\n# CUDA_DEVICE 0 G\nmethod=[ k ] gputime=[ 0.000 ]\n",
            ),
            "bad.csv:3: a duration of 0 s; a measured time must be a finite number above 0",
        ),
        (
            error(
                ncu,
                "\"ID\",\"Kernel Name\",\"x\"\n\"\",\"\",\"\"\n\"0\",\"k\"\n",
            ),
            "bad.csv:3: expected 3 fields as in the header, found 2",
        ),
        (
            error(
                nvprof,
                "==1== Profiling result:\n\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\",\"Metric Description\",\"Min\",\"Max\",\"Avg\"\n\"K40\",\"k\",1,\"ipc\",\"IPC\",1,1,high\n",
            ),
            "bad.csv:3: column `Avg` of `ipc`: expected a number, found `high`",
        ),
        // The same with CRLF line ends, after nvprof's banner: the same line.
        (
            error(
                nvprof,
                "==1== NVPROF is profiling process 1\r\n==1== Profiling result:\r\n\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\",\"Metric Description\",\"Min\",\"Max\",\"Avg\"\r\n\"K40\",\"k\",1,\"ipc\",\"IPC\",1,1,1\r\n\"K40\",\"k\",1,\"ipc2\",\"IPC\",1,1,high\r\n",
            ),
            "bad.csv:5: column `Avg` of `ipc2`: expected a number, found `high`",
        ),
        (
            error(nvprof, "x,y\n"),
            "bad.csv:1: not a format yosoku reads (cuda_profiler/nvprof: expected a header with",
        ),
        (
            error(legacy, "method,gputime\nk,1\n"),
            "bad.csv: not a format yosoku reads (cuda_profiler/legacy: no `# CUDA_PROFILE_LOG_VERSION` line)",
        ),
        // A UTF-8 byte-order mark before the version line is no reason to refuse a log: it is
        // read (and refused here only for its cut record, at its line).
        (
            error(
                legacy,
                "\u{feff}# CUDA_PROFILE_LOG_VERSION 1.6\n# CUDA_DEVICE 0 G\nmethod=[ k ] gputime=[ 1.0 \n",
            ),
            "bad.csv:3:14: `gputime=[` is not closed by `]`",
        ),
        // An ncu log that profiled nothing says so (ncu's own warning line).
        (
            error(
                ncu,
                "==PROF== Connected to process 4242 (/tmp/app)\nhello\n==PROF== Disconnected from process 4242\n==WARNING== No kernels were profiled.\n",
            ),
            "bad.csv:4: ncu profiled no kernel (`==WARNING== No kernels were profiled.`)",
        ),
        // nvprof's text summary (run without --csv) and an nvprof run that profiled nothing.
        (
            error(
                nvprof,
                "==4242== NVPROF is profiling process 4242, command: ./app\n==4242== Profiling application: ./app\n==4242== Profiling result:\n            Type  Time(%)      Time     Calls       Avg       Min       Max  Name\n GPU activities:  100.00%  2.1440us         1  2.1440us  2.1440us  2.1440us  add(int, float*, float*)\n",
            ),
            "bad.csv:4: nvprof's text summary, not its CSV: rerun nvprof with --csv",
        ),
        (
            error(
                nvprof,
                "==4242== NVPROF is profiling process 4242, command: ./app\n==4242== Profiling application: ./app\n==4242== Warning: No kernels were profiled.\n",
            ),
            "bad.csv:3: nvprof profiled no kernel",
        ),
        // An empty file is called empty, with what the collector reads.
        (
            error(ncu, ""),
            "bad.csv: empty file (0 bytes); expected `ncu --csv` output (details or raw page)",
        ),
        (
            error(nvprof, "\n\n"),
            "bad.csv: empty file (only blank lines, 2 bytes); expected `nvprof --csv` output",
        ),
        (
            error(legacy, ""),
            "bad.csv: empty file (0 bytes); expected a legacy CUDA profiler log",
        ),
        (
            error(
                legacy,
                "# CUDA_PROFILE_LOG_VERSION 1.6\n# CUDA_DEVICE 0 G\nmethod=[ k ] gputime=[ 1.0 \n",
            ),
            "bad.csv:3:14: `gputime=[` is not closed by `]`",
        ),
        (
            error(
                legacy,
                "# CUDA_PROFILE_LOG_VERSION 2.0\n# CUDA_DEVICE 0 G\nmethod,gputime\nk,slow\n",
            ),
            "bad.csv:4: `gputime`: expected a number, found `slow`",
        ),
        (
            error(legacy, "# CUDA_PROFILE_LOG_VERSION 3.0\n"),
            "bad.csv:1: CUDA_PROFILE_LOG_VERSION 3.0 is not supported",
        ),
        (
            error(
                gpp,
                "\"\",\"input.size.1\",\"duration\",\"name\",\"gpu_name\",\"inst_executed\"\n\"1\",8,1e-3,\"k\",\"G\",many\n",
            ),
            "bad.csv:2: column `inst_executed`: expected a number or NA, found `many`",
        ),
        (
            error(gpp, "\"\",\"input.size.1\",\"name\"\n"),
            "bad.csv:1: not a gpuperfpredict dataset file: the header has no column `duration`",
        ),
    ] {
        assert!(got.starts_with(expected), "\n got: {got}\nwant: {expected}");
    }
    // NA is a missing value, not an error.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("na.csv");
    std::fs::write(&path, "\"\",\"input.size.1\",\"duration\",\"name\",\"gpu_name\",\"inst_executed\"\n\"1\",8,1e-3,\"k\",\"G\",NA\n").unwrap();
    let tables = read_gpuperfpredict(&[&path]).unwrap();
    let obs = table(&tables, "observations");
    assert_eq!(obs.num_rows(), 1);
    assert!(obs.column_by_name("inst_executed").unwrap().is_null(0));
    // A sweep labelled with the wrong number of variants.
    let labels = ncu::Labels {
        variants: Some(vec!["a".into()]),
        ..Default::default()
    };
    let err = read_ncu(&data("ncu/ncu_raw_sweep_matmul_tiled_h100.csv"), &labels)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("launch 2 has no label: config key `variants` names 1 launches"),
        "{err}"
    );
    let err = read_ncu(Path::new("/no/such/file.csv"), &ncu::Labels::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "/no/such/file.csv: No such file or directory (os error 2)"
    );
}

/// A device name the file gives (`device__attribute_display_name`, as ncu writes it for a
/// B200) names the device, in raw pages (a column) and details pages (a row, which may come
/// after the launch's first values); the configuration's `device` still wins.
#[test]
fn ncu_names_the_device_as_the_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw.csv");
    std::fs::write(
        &raw,
        "\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"device__attribute_display_name\",\"gpu__time_duration.sum\"\n\
         \"\",\"\",\"\",\"\",\"\",\"ns\"\n\
         \"0\",\"copy(float*)\",\"0\",\"10.0\",\"NVIDIA B200\",\"2048\"\n",
    )
    .unwrap();
    let tables = read_ncu(&raw, &ncu::Labels::default()).unwrap();
    assert_eq!(strings(table(&tables, "runs"), "device"), ["NVIDIA B200"]);
    let named = ncu::Labels {
        device: Some("B200 (node 7)".into()),
        ..ncu::Labels::default()
    };
    let tables = read_ncu(&raw, &named).unwrap();
    assert_eq!(strings(table(&tables, "runs"), "device"), ["B200 (node 7)"]);

    let details = dir.path().join("details.csv");
    std::fs::write(
        &details,
        "\"ID\",\"Kernel Name\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
         \"0\",\"copy(float*)\",\"0\",\"10.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"usecond\",\"2.05\"\n\
         \"0\",\"copy(float*)\",\"0\",\"10.0\",\"Device Attributes\",\"device__attribute_display_name\",\"\",\"NVIDIA B200\"\n",
    )
    .unwrap();
    let tables = read_ncu(&details, &ncu::Labels::default()).unwrap();
    assert_eq!(strings(table(&tables, "runs"), "device"), ["NVIDIA B200"]);
}

/// Durations in milliseconds (as nvprof prints long traces) become seconds in one correctly
/// rounded step: the double nearest the decimal value, where parsing and then dividing by 1000
/// was one unit in the last place off for about one value in five.
#[test]
fn trace_durations_are_converted_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.csv");
    let durations = [
        "1.028854",
        "0.027328",
        "3.928982",
        "12.345678",
        "0.100001",
        "7.777777",
    ];
    let mut text = String::from(
        "\"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\"Block Y\",\"Block Z\",\"Registers Per Thread\",\"Static SMem\",\"Dynamic SMem\",\"Size\",\"Throughput\",\"Device\",\"Context\",\"Stream\",\"Name\"\n\
         ms,ms,,,,,,,,KB,B,KB,GB/s,,,,\n",
    );
    for (i, d) in durations.iter().enumerate() {
        text.push_str(&format!(
            "{}.000000,{d},16,16,1,16,16,1,23,2.000000,0,,,\"Tesla K40c (0)\",\"1\",\"7\",\"matMul(float*, float*, float*, int) [{i}]\"\n",
            i * 100
        ));
    }
    std::fs::write(&path, text).unwrap();
    let tables = read_nvprof(&path, &nvprof::Labels::default()).unwrap();
    let secs = floats(table(&tables, "runs"), "measured_secs");
    for (got, d) in secs.iter().zip(durations) {
        let exact: f64 = format!("{d}e-3").parse().unwrap();
        assert_eq!(*got, exact, "{d} ms");
    }
    let two_step: Vec<f64> = durations
        .iter()
        .map(|d| d.parse::<f64>().unwrap() / 1e3)
        .collect();
    assert_ne!(
        secs, two_step,
        "the data has values the two-step conversion gets wrong"
    );
}

#[test]
fn a_gpu_trace_row_without_a_time_in_start_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.csv");
    std::fs::write(
        &path,
        "\"Start\",\"Duration\",\"Device\",\"Context\",\"Stream\",\"Name\"\n\
         ms,us,,,,\n\
         1.5,2.0,\"Tesla K40c (0)\",\"1\",\"7\",\"k(int)\"\n\
         soon,2.0,\"Tesla K40c (0)\",\"1\",\"7\",\"k(int)\"\n",
    )
    .unwrap();
    let e = read_nvprof(&path, &nvprof::Labels::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("trace.csv")
            && e.contains(":4")
            && e.contains("column `Start`: expected a time, found `soon`"),
        "{e}"
    );
}

/// `text` with field `column` (1-based) of line `line` (1-based) set to `value`, the line
/// written back as CSV (quoted where needed).
fn edit_field(text: &str, line: usize, column: usize, value: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut record = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(lines[line - 1].as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    record[column - 1] = value.to_owned();
    let mut out = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_writer(Vec::new());
    out.write_record(&record).unwrap();
    lines[line - 1] = String::from_utf8(out.into_inner().unwrap())
        .unwrap()
        .trim_end()
        .to_owned();
    lines.join("\n") + "\n"
}

/// Imports `text` as a file with `read`.
fn imported(
    read: impl Fn(&Path) -> Result<Tables, yosoku_plugin_sdk::PluginError>,
    text: &str,
) -> Tables {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file.csv");
    std::fs::write(&path, text).unwrap();
    read(&path).unwrap()
}

/// (occurrences, nulls) of a raw name in `metric_names`.
fn occurrences_and_nulls(tables: &Tables, raw: &str) -> (i64, i64) {
    let names = table(tables, "metric_names");
    let raws = strings(names, "raw_name");
    let i = raws
        .iter()
        .position(|r| r == raw)
        .unwrap_or_else(|| panic!("no {raw}"));
    let int = |c: &str| {
        names
            .column_by_name(c)
            .unwrap()
            .as_primitive::<arrow_array::types::Int64Type>()
            .value(i)
    };
    (int("occurrences"), int("nulls"))
}

/// A counter cell that is not a number is an error naming the file, line and column (a value
/// cut or overwritten), never dropped without a word; `n/a` or an empty cell is no value, left
/// out of `counters` and counted in `metric_names.nulls`.
#[test]
fn a_counter_that_is_not_a_number_is_named_and_no_value_is_counted() {
    let ncu = |p: &Path| read_ncu(p, &ncu::Labels::default());
    let nvprof = |p: &Path| read_nvprof(p, &nvprof::Labels::default());
    // An ncu raw page of one launch: `sm__cycles_elapsed.avg` (line 5, column 440) is a
    // quantity by its name even where it is the column's only value.
    let raw = std::fs::read_to_string(data("ncu/ncu_raw_copy_float4_h100.csv")).unwrap();
    let e = error(ncu, &edit_field(&raw, 5, 440, "abc"));
    assert!(
        e.contains(
            "bad.csv:5:440: column `sm__cycles_elapsed.avg`: expected a number (or no value: empty, n/a), found `abc`"
        ),
        "{e}"
    );
    let tables = imported(ncu, &edit_field(&raw, 5, 440, "n/a"));
    assert_eq!(
        occurrences_and_nulls(&tables, "sm__cycles_elapsed.avg"),
        (0, 1)
    );
    assert!(
        !strings(table(&tables, "counters"), "raw_name")
            .contains(&"sm__cycles_elapsed.avg".to_owned())
    );
    // An nvprof GPU trace: `Grid X` of the first kernel (line 5, column 4).
    let trace = std::fs::read_to_string(data(
        "public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv",
    ))
    .unwrap();
    let e = error(nvprof, &edit_field(&trace, 5, 4, "abc"));
    assert!(
        e.contains(
            "bad.csv:5:4: column `Grid X`: expected a number (or no value: empty, n/a), found `abc`"
        ),
        "{e}"
    );
    // Its copies leave `Grid X` empty: no value, counted.
    let tables = imported(nvprof, &trace);
    let (occurrences, nulls) = occurrences_and_nulls(&tables, "Grid X");
    assert!(occurrences > 0 && nulls > 0, "{occurrences} {nulls}");
    // An ncu details page: `Elapsed Cycles` (line 6) has a unit, so it is a quantity.
    let details = std::fs::read_to_string(data("ncu/ncu_details_matmul_naive_h100.csv")).unwrap();
    let e = error(ncu, &edit_field(&details, 6, 15, "abc"));
    assert!(
        e.contains(
            "bad.csv:6:15: metric `Elapsed Cycles` (cycle): expected a number (or no value: empty, n/a), found `abc`"
        ),
        "{e}"
    );
}

/// `ncu --csv ./app > out.csv` (and nvprof with the program's output in the same file) puts the
/// program's own lines around the table: skipped, counted in the reader's notes, and the tables
/// are those of the capture without them.
#[test]
fn program_output_around_the_table_is_skipped_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    for (file, read) in [
        (
            "ncu/ncu_raw_copy_float4_h100.csv",
            &(|p: &Path| yosoku_plugin_cuda_profiler::read_ncu_noted(p, &ncu::Labels::default()))
                as &dyn Fn(&Path) -> Result<(Tables, Vec<String>), yosoku_plugin_sdk::PluginError>,
        ),
        (
            "public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv",
            &|p: &Path| {
                yosoku_plugin_cuda_profiler::read_nvprof_noted(p, &nvprof::Labels::default())
            },
        ),
    ] {
        let clean = std::fs::read_to_string(data(file)).unwrap();
        // The program prints as it starts (before the profiler's lines) and as it ends (after
        // the table, which the profiler prints when the program exits).
        let noisy = format!(
            "Starting the copy benchmark\nn = 16777216, float4\n\n{clean}copy: 1.23 ms\nPASSED\n"
        );
        let (clean_path, noisy_path) = (dir.path().join("clean.csv"), dir.path().join("noisy.csv"));
        std::fs::write(&clean_path, &clean).unwrap();
        std::fs::write(&noisy_path, &noisy).unwrap();
        let (clean_tables, clean_notes) = read(&clean_path).unwrap();
        let (noisy_tables, notes) = read(&noisy_path).unwrap();
        assert!(clean_notes.is_empty(), "{clean_notes:?}");
        // nvprof's runs are named after their lines (`line5`), 3 lines later in the noisy file.
        assert_eq!(
            without_lines(&clean_tables),
            without_lines(&noisy_tables),
            "{file}"
        );
        let shown = noisy_path.display().to_string();
        assert_eq!(
            notes,
            [
                format!("{shown}: skipped 2 line(s) of program output before the table"),
                format!("{shown}: skipped 2 line(s) of program output after the table"),
            ],
            "{file}"
        );
    }
}

/// `tables` without the columns that name a line of the file (`run_id`, `source_row`).
fn without_lines(tables: &Tables) -> Tables {
    tables
        .iter()
        .map(|(name, batch)| {
            let keep: Vec<usize> = (0..batch.num_columns())
                .filter(|&i| {
                    !matches!(
                        batch.schema().field(i).name().as_str(),
                        "run_id" | "source_row"
                    )
                })
                .collect();
            (name.clone(), batch.project(&keep).unwrap())
        })
        .collect()
}

#[test]
fn a_file_of_another_profiler_is_sent_to_the_collector_that_reads_it() {
    let ncu_file = data("ncu/ncu_raw_copy_float4_h100.csv");
    let e = read_nvprof(&ncu_file, &nvprof::Labels::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not a format collector `cuda_profiler`/`nvprof` reads")
            && e.contains("it looks like `ncu --csv` output (details or raw page): plugin `cuda_profiler`, collector `ncu`"),
        "{e}"
    );
    // An EZTrace text file, to each NVIDIA importer: one message, the formats yosoku reads.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.eztrace");
    std::fs::write(
        &path,
        "EZTrace trace file\nversion 2.0\n0.000 ENTER MPI_Init\n",
    )
    .unwrap();
    let errors = [
        read_ncu(&path, &ncu::Labels::default())
            .unwrap_err()
            .to_string(),
        read_nvprof(&path, &nvprof::Labels::default())
            .unwrap_err()
            .to_string(),
        read_legacy(&path, &legacy::Labels::default())
            .unwrap_err()
            .to_string(),
        read_gpuperfpredict(&[&path]).unwrap_err().to_string(),
    ];
    for e in errors {
        assert!(e.contains("not a format yosoku reads ("), "{e}");
        assert!(
            e.contains("it reads, by collector: `ncu --csv` output"),
            "{e}"
        );
        assert!(e.contains("(table/file)"), "{e}");
    }
}

#[test]
fn a_file_cut_inside_a_quoted_field_is_refused_even_with_a_newline_after_the_cut() {
    // A copy cut inside a quoted field, then given a line break (an editor, a `sed`): the CSV
    // readers would take the rest as the field's value.
    let dir = tempfile::tempdir().unwrap();
    for (file, read) in [
        (
            "ncu/ncu_details_matmul_tiled_h100.csv",
            &(|p: &Path| read_ncu(p, &ncu::Labels::default()).map(|_| ()))
                as &dyn Fn(&Path) -> Result<(), yosoku_plugin_sdk::PluginError>,
        ),
        ("ncu/ncu_raw_sweep_matmul_tiled_h100.csv", &|p: &Path| {
            read_ncu(p, &ncu::Labels::default()).map(|_| ())
        }),
        (
            "public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv",
            &|p: &Path| {
                let labels = nvprof::Labels {
                    prefix_names: Some(vec!["n".into()]),
                    ..Default::default()
                };
                read_nvprof(p, &labels).map(|_| ())
            },
        ),
    ] {
        let text = std::fs::read_to_string(data(file)).unwrap();
        let body = text.trim_end_matches('\n');
        // Just after the last field's opening quote.
        let cut = body.rfind(",\"").unwrap() + 2;
        let path = dir.path().join("cut.csv");
        std::fs::write(&path, format!("{}\n", &body[..cut])).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("the file ends inside a quoted field"),
            "{file}: {e}"
        );
    }
}

#[test]
fn gpuperfpredict_apps_gpus_files_read_with_their_launch_configuration() {
    // One of the dataset's Apps-Gpus files (pipelines/data/gpuperfpredict/apps, SOURCES.md
    // there): nvprof's metric descriptions as R's dotted names, `Input.Size`, `Duration`, three
    // launch configurations per size, the GPU's description in every row.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/gpuperfpredict/apps/vectorAdd-Tesla-K40.csv.gz");
    let tables = read_gpuperfpredict(&[&path]).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(runs.num_rows(), 207);
    // Its first row, line 2: index 784, vectorAdd, 131072, Duration 1.0496e-05 s, block 64 x 1.
    assert_eq!(strings(runs, "run_id")[0], "vectorAdd-Tesla-K40:784");
    assert_eq!(strings(runs, "program")[0], "vectorAdd");
    assert_eq!(strings(runs, "variant")[0], "131072/64x1");
    assert_eq!(strings(runs, "device")[0], "Tesla-K40");
    assert_eq!(floats(runs, "measured_secs")[0], 1.0496e-5);
    // The GPU's description is not a counter (the catalogue has the device); the launch
    // configuration and nvprof's names map whatever their case and dots.
    let names = strings(table(&tables, "metric_names"), "raw_name");
    for spec in ["num_of_cores", "max_clock_rate", "bandwith", "L2"] {
        assert!(!names.contains(&spec.to_owned()), "{spec}");
    }
    let obs = table(&tables, "observations");
    for canonical in ["block_x", "grid_x", "registers_per_thread", "inst_executed"] {
        assert!(obs.column_by_name(canonical).is_some(), "{canonical}");
    }
}

/// The dataset's R export writes each launch's static shared memory without nvprof's unit row:
/// in bytes in most files, in KiB in the GTX 980's and Tesla P100's (`1.0625`, `1`, `3` where the
/// other GPUs' files of the same kernels write 1088, 1024 and 3072). Read as written, the P100's
/// back-propagation kernel had 1.06 bytes of shared memory; every GPU's file now gives bytes.
#[test]
fn gpuperfpredict_shared_memory_in_kib_is_read_in_bytes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/gpuperfpredict");
    for (kernel, bytes) in [
        ("bpnn_layerforward_CUDA", 1088.0),
        ("lud_diagonal", 1024.0),
        ("calculate_temp", 3072.0),
        ("kernel", 11872.0),
        ("bpnn_adjust_weights_cuda", 0.0),
    ] {
        for gpu in ["GTX-680", "GTX-980", "Tesla-P100", "TitanX"] {
            let path = dir.join(format!("{kernel}-{gpu}.csv.gz"));
            let tables = read_gpuperfpredict(&[&path]).unwrap();
            let smem = floats(table(&tables, "observations"), "static_shared_memory");
            assert!(
                smem.iter().all(|&b| b == bytes),
                "{kernel} on {gpu}: {:?}, not {bytes} bytes",
                &smem[..3]
            );
        }
    }
    // The Apps-Gpus files write bytes on every GPU (256 to 16,392), GTX 980 included.
    let path = dir.join("apps/subSeqMax-GTX-980.csv.gz");
    let tables = read_gpuperfpredict(&[&path]).unwrap();
    let smem = floats(table(&tables, "observations"), "static_shared_memory");
    assert!(smem.iter().all(|&b| b == 16392.0), "{:?}", &smem[..3]);
}

/// ncu's `smsp__thread_inst_executed_per_inst_executed.ratio` is threads per warp instruction
/// (0-32, no unit written); the canonical `warp_execution_efficiency` is nvprof's, active
/// threads over the warp size (100 % = 1.0). The line is in the shape of a public `ncu --csv
/// --metrics` page of an RTX 5070 (Olajide-Badejo/GPU-Roofline-Profiler,
/// results/sample_run/ncu/saxpy.csv, no license, so not copied): its saxpy reads 32, a fully
/// efficient kernel, which is 1.0 and not 32.0.
#[test]
fn threads_per_warp_instruction_read_as_the_efficiency_nvprof_gives() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("saxpy.csv");
    let row = |metric: &str, unit: &str, value: &str| {
        format!(
            "\"0\",\"58960\",\"roofline_profiler.exe\",\"127.0.0.1\",\"saxpy_kernel(float, const float *, float *, int)\",\"1\",\"7\",\"(256, 1, 1)\",\"(65536, 1, 1)\",\"0\",\"12.0\",\"Command line profiler metrics\",\"{metric}\",\"{unit}\",\"{value}\"\n"
        )
    };
    let mut text = String::from(
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n",
    );
    text.push_str(&row("gpu__time_duration.sum", "ns", "292,928"));
    text.push_str(&row(
        "smsp__thread_inst_executed_per_inst_executed.ratio",
        "",
        "32",
    ));
    let divergent = text.replace("\"32\"\n", "\"20\"\n");
    std::fs::write(&path, &text).unwrap();
    let tables = read_ncu(&path, &ncu::Labels::default()).unwrap();
    let (value, unit, kind) = counter(&tables, "0", "warp_execution_efficiency");
    assert_eq!(
        (value, unit.as_str(), kind.as_str()),
        (1.0, "ratio", "ratio")
    );
    std::fs::write(&path, divergent).unwrap();
    let tables = read_ncu(&path, &ncu::Labels::default()).unwrap();
    assert_eq!(counter(&tables, "0", "warp_execution_efficiency").0, 0.625);
}

/// A unified-memory program's `--print-gpu-trace` (in the shape of a public TITAN Xp trace of
/// Rodinia's cfd, nanzifan/nvprof-result `cfd-setpreferredlocation/csv/print-gpu-trace.csv`, no
/// license, so written by us): CPU page faults are instants with an empty `Duration`, kept on
/// the timeline and said so, never a refusal of the file; GPU page-fault servicing is a phase
/// of its own, not a copy.
#[test]
fn unified_memory_page_faults_are_instants_and_a_phase_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("print-gpu-trace.csv");
    let fault = |start: &str, pc: &str, address: &str| {
        format!(
            "{start},,,,,,,,,,,,,,,,,,\"PC {pc}\",\"{address}\",\"[Unified Memory CPU page faults]\",\n"
        )
    };
    let mut text = String::from(
        "==308065== Profiling result:\n\
         \"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\"Block Y\",\"Block Z\",\"Registers Per Thread\",\"Static SMem\",\"Dynamic SMem\",\"Size\",\"Throughput\",\"SrcMemType\",\"DstMemType\",\"Device\",\"Context\",\"Stream\",\"Unified Memory\",\"Virtual Address\",\"Name\",\"Correlation_ID\"\n\
         s,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,\n\
         1.183779,0.000992,,,,,,,,,,0.000019,0.018777,\"Pageable\",\"Device\",\"TITAN Xp (0)\",\"1\",\"7\",,,\"[CUDA memcpy HtoD]\",105\n",
    );
    text.push_str(&fault("1.204081", "0x5e240510", "0x7f54d8000000"));
    text.push_str(&fault("1.204135", "0x5e286de0", "0x7f54d805e000"));
    text.push_str(&fault("1.204173", "0x5e240510", "0x7f54d8200000"));
    text.push_str(
        "1.801239,0.276608,,,,,,,,,,,,,,\"TITAN Xp (0)\",,,\"18\",\"0x7f54d8800000\",\"[Unified Memory GPU page faults]\",\n\
         1.801299,0.287308,506,1,1,192,1,1,16,0,0,,,,,\"TITAN Xp (0)\",\"1\",\"7\",,,\"cuda_initialize_variables(int, float*)\",121\n\
         1.802441,0.007360,,,,,,,,,,,,,,\"TITAN Xp (0)\",,,65536.000000,\"0x7f54d8000000\",\"[Unified Memory Memcpy HtoD]\",\n",
    );
    std::fs::write(&path, &text).unwrap();
    let (tables, notes) =
        yosoku_plugin_cuda_profiler::read_nvprof_noted(&path, &nvprof::Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(
        strings(runs, "phase"),
        ["transfer", "page_fault", "kernel", "transfer"]
    );
    assert_eq!(floats(runs, "measured_secs")[1], 0.276608e-3);
    let spans = table(&tables, "spans");
    let categories = strings(spans, "category");
    let durations = spans
        .column_by_name("duration_ns")
        .unwrap()
        .as_primitive::<Int64Type>()
        .values()
        .to_vec();
    let instants: Vec<usize> = (0..spans.num_rows())
        .filter(|&i| durations[i] == 0)
        .collect();
    assert_eq!(instants.len(), 3);
    assert!(instants.iter().all(|&i| categories[i] == "page_fault"));
    assert_eq!(
        notes,
        [
            "3 `[Unified Memory CPU page faults]` row(s) have no duration (events at an instant, not work of a time): kept on the timeline as instants, not as runs"
        ]
    );
    // A kernel without a duration is still an error, at its line.
    let broken = text.replace("1.801299,0.287308,506", "1.801299,,506");
    std::fs::write(&path, broken).unwrap();
    let e = read_nvprof(&path, &nvprof::Labels::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains(":9:") && e.contains("`Duration`"), "{e}");
}

/// A trace row whose `Duration` the file prints as 0 (a copy shorter than its resolution, as in
/// `--normalized-time-unit s` with microsecond digits) is kept on the timeline and said so, not a
/// refusal of the whole trace (found by the `nvprof` fuzz target: the `runs` check refused the
/// file without naming it); a negative duration is an error at its line.
#[test]
fn a_trace_row_of_zero_duration_stays_on_the_timeline_not_among_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("print-gpu-trace.csv");
    let text = "==1== Profiling result:\n\
         \"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\"Block Y\",\"Block Z\",\"Size\",\"Device\",\"Stream\",\"Name\"\n\
         s,s,,,,,,,B,,,\n\
         1.183779,0.000000,,,,,,,19,\"TITAN Xp (0)\",\"7\",\"[CUDA memcpy HtoD]\"\n\
         1.801299,0.000287,506,1,1,192,1,1,,\"TITAN Xp (0)\",\"7\",\"init(int, float*)\"\n\
         1.802441,0.000000,,,,,,,19,\"TITAN Xp (0)\",\"7\",\"[CUDA memcpy DtoH]\"\n";
    std::fs::write(&path, text).unwrap();
    let (tables, notes) =
        yosoku_plugin_cuda_profiler::read_nvprof_noted(&path, &nvprof::Labels::default()).unwrap();
    let runs = table(&tables, "runs");
    assert_eq!(strings(runs, "phase"), ["kernel"]);
    assert_eq!(floats(runs, "measured_secs"), [0.000287]);
    assert_eq!(table(&tables, "spans").num_rows(), 3);
    assert_eq!(
        notes,
        [
            "2 row(s) have a duration of 0 at the file's resolution (the first at line 4): kept on the timeline, not as runs (a time of 0 is nothing to model)"
        ]
    );
    std::fs::write(
        &path,
        text.replace("1.802441,0.000000", "1.802441,-0.000001"),
    )
    .unwrap();
    let e = read_nvprof(&path, &nvprof::Labels::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains(":6:") && e.contains("`Duration`"), "{e}");
}

/// A real Nsight Systems SQLite export (CloverLeaf on Perlmutter's A100s, pipelines/data/nsys-sqlite/SOURCES.md):
/// every kernel launch a run on the GPU the export's GPU table names, with its launch
/// configuration; copies as transfers; kernels, copies and CUDA API calls as spans. The figures
/// are Python's sqlite3 on the same database (`SELECT count(*), sum(end - start) FROM
/// CUPTI_ACTIVITY_KIND_KERNEL`, the first launch by start, copies by `copyKind`).
#[test]
fn an_nsys_sqlite_export_reads_as_launches_on_their_gpu_with_its_timeline() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/nsys-sqlite/pipit_cloverleaf_a100_nsys.sqlite.gz");
    let (tables, notes) = yosoku_plugin_cuda_profiler::read_nsys_noted(
        std::slice::from_ref(&path),
        &nsys::Labels::default(),
    )
    .unwrap();
    let runs = table(&tables, "runs");
    let phases = strings(runs, "phase");
    let secs = floats(runs, "measured_secs");
    let kernels: Vec<usize> = (0..runs.num_rows())
        .filter(|&i| phases[i] == "kernel")
        .collect();
    assert_eq!(kernels.len(), 1312);
    assert_eq!(phases.iter().filter(|p| *p == "transfer").count(), 279);
    let total: f64 = kernels.iter().map(|&i| secs[i]).sum();
    assert!((total - 0.294_404_540).abs() < 1e-12, "{total}");
    assert!(
        strings(runs, "device")
            .iter()
            .all(|d| d == "NVIDIA A100-SXM4-80GB")
    );
    // The first launch: 533,338,240 to 534,705,884 ns, grid 115,426 x 1 x 1 of 256 threads,
    // 32 registers.
    assert_eq!(secs[0], 1_367_644e-9);
    assert_eq!(strings(runs, "program")[0], "par_ranged2d_kernel");
    let id = &strings(runs, "run_id")[0];
    assert_eq!(counter(&tables, id, "grid_x").0, 115_426.0);
    assert_eq!(counter(&tables, id, "block_x").0, 256.0);
    assert_eq!(counter(&tables, id, "registers_per_thread").0, 32.0);
    // Copies by kind: 254 host-to-device, 25 device-to-host.
    let spans = table(&tables, "spans");
    let names = strings(spans, "name");
    let categories = strings(spans, "category");
    let count = |category: &str| categories.iter().filter(|c| *c == category).count();
    assert_eq!(
        (count("kernel"), count("memcpy"), count("api")),
        (1312, 279, 3048)
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| *n == "[CUDA memcpy Host-to-Device]")
            .count(),
        254
    );
    let lanes = strings(spans, "lane");
    assert!(lanes.contains(&"NVIDIA A100-SXM4-80GB / stream 7".to_owned()));
    assert_eq!(
        notes,
        [format!(
            "{}: 1312 kernel launch(es), 279 copies, 0 sets as runs; 3048 CUDA API call(s) and 0 NVTX range(s) as spans (schema 3.13.2)",
            path.display()
        )]
    );
}

/// SQLite files that are not an export yosoku reads are refused with what they are: another
/// database, an export schema of another major version (the version found and those known), an
/// export whose kernel table lacks a column (named), an export with no kernels.
#[test]
fn sqlite_files_yosoku_does_not_read_are_refused_with_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &str, sql: &str| {
        let path = dir.path().join(name);
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(sql).unwrap();
        drop(db);
        path
    };
    let read = |path: PathBuf| {
        yosoku_plugin_cuda_profiler::read_nsys(&[path], &nsys::Labels::default())
            .unwrap_err()
            .to_string()
    };
    let meta = |version: &str| {
        format!(
            "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '{version}');             CREATE TABLE StringIds (id INTEGER, value TEXT);"
        )
    };
    let e = read(make("other.sqlite", "CREATE TABLE t (a INTEGER);"));
    assert!(
        e.contains("without Nsight Systems' `META_DATA_EXPORT` table"),
        "{e}"
    );
    let e = read(make("v4.sqlite", &meta("4.0.0")));
    assert!(
        e.contains(
            "schema version 4.0.0, which yosoku does not read; it reads 3.x, tested on 3.13.2"
        ),
        "{e}"
    );
    let e = read(make(
        "old.sqlite",
        &(meta("3.13.2")
            + "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, demangledName INTEGER, shortName INTEGER);"),
    ));
    assert!(
        e.contains("table `CUPTI_ACTIVITY_KIND_KERNEL` has no column `gridX`")
            && e.contains("schema 3.13.2"),
        "{e}"
    );
    let e = read(make("empty.sqlite", &meta("3.13.2")));
    assert!(e.contains("no kernel launches"), "{e}");
    // Text where the export keeps a number (found by the `nsys_sqlite` fuzz target, whose
    // message named neither table nor column): the table and the column are named.
    let e = read(make(
        "text.sqlite",
        &(meta("3.13.2")
            + "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER); \
               INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, NULL, NULL, 1, 1, 1, 32, 1, 'z', 16, 0, 0);"),
    ));
    assert!(
        e.contains("table `CUPTI_ACTIVITY_KIND_KERNEL`") && e.contains("blockZ"),
        "{e}"
    );
    // A database cut short (its first 100 bytes, the header alone): refused by name, no panic.
    let whole = std::fs::read(make("whole.sqlite", &meta("3.13.2"))).unwrap();
    let cut = dir.path().join("cut.sqlite");
    std::fs::write(&cut, &whole[..100]).unwrap();
    let e = read(cut);
    assert!(e.contains("cut.sqlite"), "{e}");
}
