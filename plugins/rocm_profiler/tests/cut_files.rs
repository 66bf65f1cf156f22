//! The importer on real files cut short at each of their last 200 bytes: an omniperf workload
//! with one of its files cut, rocprofv3 outputs, a rocpd export and an omniperf 1.x workload. Each cut copy is refused or imports rows of
//! the whole input unchanged, never a changed value (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use yosoku_plugin_rocm_profiler::{Labels, read_paths};
use yosoku_plugin_sdk::testing::{cut_copies, files_in};

const COMPARED: &[&str] = &["runs", "counters", "spans", "devices"];

fn check(files: &[(String, Vec<u8>)], cut: &str, import: &dyn Fn(&Path) -> Vec<PathBuf>) {
    let outcome = cut_copies(files, cut, 200, COMPARED, |dir| {
        read_paths(&import(dir), &Labels::default())
    })
    .unwrap_or_else(|e| panic!("{cut}: {e}"));
    assert!(outcome.refused > 0, "{cut}: {outcome:?}");
}

#[test]
fn a_workload_with_a_file_cut_short_never_imports_a_changed_value() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/rocprof/dispatch_0_MI300X_A1");
    let files = files_in(&dir).unwrap();
    for cut in ["pmc_perf.csv", "timestamps.csv", "sysinfo.csv"] {
        check(&files, cut, &|d| vec![d.to_path_buf()]);
    }
}

#[test]
fn rocprofv3_files_cut_short_never_import_a_changed_value() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rocprofv3");
    for file in ["123_kernel_trace.csv", "312_counter_collection.csv"] {
        let contents = std::fs::read(dir.join(file)).unwrap();
        let files = vec![(file.to_owned(), contents)];
        check(&files, file, &|d| vec![d.join(file)]);
    }
}

#[test]
fn a_rocpd_export_and_a_2022_workload_cut_short_never_import_a_changed_value() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let file = "out_kernel_trace.csv";
    let files = vec![(
        file.to_owned(),
        std::fs::read(data.join("rocpd").join(file)).unwrap(),
    )];
    check(&files, file, &|d| vec![d.join(file)]);
    let files = files_in(&data.join("omniperf-2022")).unwrap();
    for cut in ["timestamps.csv", "sysinfo.csv"] {
        check(&files, cut, &|d| vec![d.to_path_buf()]);
    }
}

#[test]
fn rocprof_compute_3_workloads_and_rocprofv3_json_cut_short_never_import_a_changed_value() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/rocprof");
    // 3.0's merged file, whose timestamps end in decimals.
    let files = files_in(&data.join("vcopy_MI350")).unwrap();
    check(&files, "pmc_perf.csv", &|d| vec![d.to_path_buf()]);
    // A pass of a 3.x workload, merged with the other.
    let files = files_in(&data.join("kernel_RDNA35_KRACKAN2")).unwrap();
    for cut in ["results_pmc_perf_5.csv", "results_pmc_perf_6.csv"] {
        check(&files, cut, &|d| vec![d.to_path_buf()]);
    }
    // rocprofv3's JSON.
    let file = "ps_file_results.json";
    let files = vec![(
        file.to_owned(),
        std::fs::read(data.join("vcopy_pc_sampling_MI300A_A1").join(file)).unwrap(),
    )];
    check(&files, file, &|d| vec![d.join(file)]);
}
