//! Every importer of this plugin, on real files cut short at each of their last 200 bytes: each
//! cut copy is refused or imports rows of the whole file unchanged, never a changed value
//! (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use yosoku_plugin_cuda_profiler::{
    Tables, legacy, ncu, nvprof, read_gpuperfpredict, read_legacy, read_ncu, read_nvprof,
};
use yosoku_plugin_sdk::testing::cut_copies;

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// The tables a cut file may hold a part of.
const COMPARED: &[&str] = &["runs", "counters", "spans", "observations"];

/// Cuts `file` (read as `name`) and checks every cut copy with `import`; at least one cut must
/// be refused (a cut inside a line) and the rows of the others must be the whole file's.
fn check(name: &str, contents: &[u8], import: impl Fn(&Path) -> Result<Tables, String>) {
    let outcome = cut_copies(&[(name, contents)], name, 200, COMPARED, |dir| {
        import(&dir.join(name)).map_err(yosoku_plugin_sdk::PluginError::new)
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(outcome.refused > 0, "{name}: {outcome:?}");
    assert!(
        outcome.refused + outcome.imported >= 399,
        "{name}: {outcome:?}"
    );
}

#[test]
fn ncu_pages_cut_short_never_import_a_changed_value() {
    for file in [
        "ncu/ncu_raw_copy_float4_h100.csv",
        "ncu/ncu_raw_sweep_matmul_tiled_h100.csv",
        "ncu/ncu_details_matmul_naive_h100.csv",
        "public/nsightful_copy_blocked_details_cc75.csv",
        "formats/ncu_metrics_details_copy_float4_h100.csv",
    ] {
        let contents = std::fs::read(data(file)).unwrap();
        check("capture.csv", &contents, |p| {
            read_ncu(p, &ncu::Labels::default()).map_err(|e| e.to_string())
        });
    }
}

#[test]
fn nvprof_files_cut_short_never_import_a_changed_value() {
    for file in [
        "public/gpuperfpredict_matMul_gpu_sharedmem-traces_K40_prefixed.csv",
        "formats/nvprof_metrics.csv",
        "formats/nvprof_events.csv",
    ] {
        let contents = std::fs::read(data(file)).unwrap();
        check("nvprof.csv", &contents, |p| {
            read_nvprof(p, &nvprof::Labels::default()).map_err(|e| e.to_string())
        });
    }
}

#[test]
fn legacy_logs_cut_short_never_import_a_changed_value() {
    for file in [
        "formats/legacy_v1.log",
        "formats/legacy_v1_4.log",
        "formats/legacy_v2.log",
        "formats/legacy_v2_csv_short_copies.log",
        "formats/legacy_v2_key_value.log",
    ] {
        let contents = std::fs::read(data(file)).unwrap();
        check("cuda_profile_0.log", &contents, |p| {
            read_legacy(p, &legacy::Labels::default()).map_err(|e| e.to_string())
        });
    }
}

#[test]
fn a_gpuperfpredict_file_cut_short_never_imports_a_changed_value() {
    // Its text (the committed file is gzip-compressed, and a cut gzip stream fails whole).
    let text = yosoku_plugin_cuda_profiler::input::read_text(&data(
        "public/bpnn_layerforward_CUDA-Tesla-K40.csv.gz",
    ))
    .unwrap();
    check(
        "bpnn_layerforward_CUDA-Tesla-K40.csv",
        text.as_bytes(),
        |p| read_gpuperfpredict(&[p]).map_err(|e| e.to_string()),
    );
}

#[test]
fn nsys_reports_cut_short_never_import_a_changed_value() {
    for file in [
        "nsys/run_cuda_gpu_kern_sum.csv",
        "nsys/run_cuda_gpu_trace.csv",
        "nsys/nsys_stats_stdout.txt",
    ] {
        let contents = std::fs::read(data(file)).unwrap();
        // The summaries name no GPU: the device is given, as a user gives it.
        let labels = yosoku_plugin_cuda_profiler::nsys::Labels {
            device: Some("H100".into()),
            ..Default::default()
        };
        let name = Path::new(file).file_name().unwrap().to_str().unwrap();
        check(name, &contents, |p| {
            yosoku_plugin_cuda_profiler::read_nsys(&[p.to_path_buf()], &labels)
                .map_err(|e| e.to_string())
        });
    }
}
