//! The `opencl` plugin through the real plugin host, on a real OpenCL device (POCL on the CPU
//! in CI): the quick suite measured, checked and re-imported from its record; every kind of
//! failure named (a kernel that does not build, a wrong result, a launch the driver refuses, a
//! timeout, a device that is not there), with no bundle written.
//!
//! Also the fuzz targets of the plugin's readers (its run record, a kernel file): their seeds and
//! regressions replayed through the targets' checks (`fuzz_replay/mod.rs`), in this binary, which
//! links the plugin already.
//!
//! Without an OpenCL platform these tests say so and pass, unless `YOSOKU_REQUIRE_OPENCL` is set
//! (`cargo xtask test` installs POCL and sets it, so CI always runs them).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use yosoku_plugin_opencl::device::{Selector, choose};
use yosoku_runner::{Quiet, RunOptions, run_pipeline};

#[path = "../../../../fuzz/src/lib.rs"]
#[allow(dead_code, clippy::panic)] // the target uses some of the helpers; they are its checks
mod yosoku_fuzz;

#[path = "../../../../fuzz/src/targets/opencl.rs"]
mod fuzz_targets;

#[allow(clippy::expect_used, clippy::panic)] // the replay's checks
mod fuzz_replay;

/// Every seed and regression of the fuzz targets of the run record and of kernel files passes its
/// target's checks (no OpenCL device needed: the files are read, nothing is measured).
#[test]
fn every_seed_and_regression_of_the_opencl_readers_passes_its_fuzz_targets_checks() {
    let replayed = fuzz_replay::replay(fuzz_targets::TARGETS);
    assert!(replayed >= 4, "{replayed} inputs");
}

/// Whether an OpenCL device is there; panics when one is required and missing. Asked once per
/// process, before any test runs a pipeline: the ICD loader's first initialisation is not safe
/// from two threads at once (this test's copy of the plugin code and the loaded plugin's are
/// separate, so the plugin's own lock does not cover both).
fn opencl_available() -> bool {
    static FOUND: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        choose(
            &Selector::All,
            &Selector::All,
            opencl3::device::CL_DEVICE_TYPE_ALL,
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    });
    match found {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("YOSOKU_REQUIRE_OPENCL").is_none(),
                "YOSOKU_REQUIRE_OPENCL is set but there is no OpenCL device: {e}"
            );
            eprintln!("no OpenCL device, the test is skipped: {e}");
            false
        }
    }
}

fn options(dir: &Path) -> RunOptions {
    RunOptions {
        bundle_dir: Some(dir.join("results/opencl")),
        plugin_path: vec![],
        ..RunOptions::default()
    }
}

fn write_pipeline(dir: &Path, sources: &str) -> PathBuf {
    let p = dir.join("p.toml");
    std::fs::write(&p, format!("[pipeline]\nname = \"opencl\"\n\n{sources}")).unwrap();
    p
}

/// A pipeline of `sources` that must fail: no bundle, the error returned.
fn failing(dir: &Path, sources: &str) -> String {
    let p = write_pipeline(dir, sources);
    let e = run_pipeline(&p, &options(dir), &mut Quiet)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        !dir.join("results/opencl").exists(),
        "a bundle was written: {e}"
    );
    e
}

fn table<'a>(bundle: &'a yosoku_bundle::fs::Bundle, name: &str) -> &'a RecordBatch {
    bundle
        .table(name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

fn strings(b: &RecordBatch, c: &str) -> Vec<String> {
    let a = b
        .column_by_name(c)
        .map(|a| yosoku_tables::text::Text::new(a.as_ref()).expect("text"))
        .unwrap();
    (0..a.len()).map(|i| a.value(i).to_owned()).collect()
}

#[test]
fn the_quick_suite_runs_checks_and_reimports_through_the_host() {
    if !opencl_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let p = write_pipeline(
        dir.path(),
        &format!(
            "[sources.cl]\nplugin = \"opencl\"\ncollector = \"run\"\n\
             config = {{ preset = \"quick\", device_type = \"all\", device = \"0\", platform = \"0\", log_dir = {:?}, max_launches = 20 }}\n",
            logs.display().to_string()
        ),
    );
    run_pipeline(&p, &options(dir.path()), &mut Quiet).unwrap();
    let bundle = yosoku_bundle::fs::read_bundle(&dir.path().join("results/opencl")).unwrap();
    let runs = table(&bundle, "cl.runs");
    // copy at five widths, five programs in two variants; two sizes each.
    assert_eq!(runs.num_rows(), 2 * (5 + 5 * 2));
    let programs = strings(runs, "program");
    for p in ["copy", "matmul", "transpose", "sobel", "reduce", "nbody"] {
        assert!(programs.iter().any(|x| x == p), "{p}");
    }
    assert!(strings(runs, "phase").iter().all(|p| p == "kernel"));
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!(secs.values().iter().all(|s| *s > 0.0 && *s < 1.0));

    // Work counters: computed, under canonical names, exact for a known configuration.
    let counters = table(&bundle, "cl.counters");
    assert!(strings(counters, "origin").iter().all(|o| o == "computed"));
    let (ids, metrics) = (strings(counters, "run_id"), strings(counters, "metric"));
    let values = counters
        .column_by_name("value")
        .unwrap()
        .as_primitive::<Float64Type>();
    let value = |run: &str, metric: &str| {
        let i = (0..ids.len())
            .find(|&i| ids[i].ends_with(run) && metrics[i] == metric)
            .unwrap_or_else(|| panic!("no {metric} of {run}"));
        values.value(i)
    };
    assert_eq!(
        value(":matmul:local:n=64", "flop_count_sp"),
        2.0 * 64f64.powi(3)
    );
    assert_eq!(
        value(":matmul:local:n=64", "gld_bytes"),
        4.0 * 2.0 * 64f64.powi(3) / 16.0
    );
    assert_eq!(value(":matmul:global:n=64", "shared_load_bytes"), 0.0);
    assert_eq!(value(":copy:float4:n=65536", "vector_width"), 4.0);
    assert_eq!(value(":copy:float4:n=65536", "threads"), 65536.0 / 4.0);

    // Statistics and raw launches beside each run.
    let timings = table(&bundle, "cl.kernel_timings");
    assert_eq!(timings.num_rows(), runs.num_rows());
    let launches = timings
        .column_by_name("launches")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert!(launches.values().iter().all(|n| (5..=20).contains(n)));
    let raw = table(&bundle, "cl.kernel_launches");
    let measured: i64 = launches.values().iter().sum();
    assert_eq!(raw.num_rows() as i64, measured + 2 * runs.num_rows() as i64);
    let devices = table(&bundle, "cl.devices");
    assert_eq!(devices.num_rows(), 1);
    assert!(!devices.column_by_name("compute_units").unwrap().is_null(0));

    // The kept record re-imports into the same runs and counters.
    assert!(logs.join("opencl-run.json").is_file());
    let dir2 = tempfile::tempdir().unwrap();
    let p2 = write_pipeline(
        dir2.path(),
        &format!(
            "[sources.cl]\nplugin = \"opencl\"\ncollector = \"logs\"\nconfig = {{ paths = [{:?}] }}\n",
            logs.display().to_string()
        ),
    );
    run_pipeline(&p2, &options(dir2.path()), &mut Quiet).unwrap();
    let again = yosoku_bundle::fs::read_bundle(&dir2.path().join("results/opencl")).unwrap();
    for t in [
        "cl.runs",
        "cl.counters",
        "cl.kernel_timings",
        "cl.kernel_launches",
        "cl.devices",
    ] {
        assert_eq!(table(&again, t), table(&bundle, t), "{t}");
    }
}

/// A copy of the suite's kernels with `file` replaced by `text`.
fn kernel_dir(dir: &Path, file: &str, text: &str) -> PathBuf {
    let kernels = dir.join("kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../plugins/opencl/kernels");
    for entry in std::fs::read_dir(suite).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, kernels.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::write(kernels.join(file), text).unwrap();
    kernels
}

fn run_source(kernels: &str, extra: &str) -> String {
    format!(
        "[sources.cl]\nplugin = \"opencl\"\ncollector = \"run\"\n\
         config = {{ preset = \"quick\", kernels = [{kernels}], device = \"0\", platform = \"0\"{extra} }}\n"
    )
}

#[test]
fn failures_name_the_kernel_size_and_device_and_write_nothing() {
    if !opencl_available() {
        return;
    }
    // A kernel that does not build: the build log in the error.
    let dir = tempfile::tempdir().unwrap();
    let k = kernel_dir(
        dir.path(),
        "matmul.cl",
        "__kernel void matmul_global(__global float *a) { a[0] = undefined_name; }\n",
    );
    let e = failing(
        dir.path(),
        &run_source(
            "\"matmul\"",
            &format!(", kernel_dir = {:?}", k.display().to_string()),
        ),
    );
    assert!(
        e.contains("matmul.cl does not build for") && e.contains("undefined_name"),
        "{e}"
    );

    // A wrong result: no time recorded.
    let dir = tempfile::tempdir().unwrap();
    let k = kernel_dir(
        dir.path(),
        "copy.cl",
        "__kernel void copy(__global const VEC *in, __global VEC *out) { size_t i = get_global_id(0); out[i] = in[i] + (VEC)(1.0f); }\n",
    );
    let e = failing(
        dir.path(),
        &run_source(
            "\"copy/float4\"",
            &format!(", kernel_dir = {:?}", k.display().to_string()),
        ),
    );
    assert!(
        e.contains("copy/float4 n=65536 on ") && e.contains("wrong result, no time recorded: output 0 differs from the CPU reference at element 0"),
        "{e}"
    );

    // A launch the driver refuses (the kernel demands work-groups of 8; the suite launches 256).
    let dir = tempfile::tempdir().unwrap();
    let k = kernel_dir(
        dir.path(),
        "copy.cl",
        "__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void copy(__global const VEC *in, __global VEC *out) { size_t i = get_global_id(0); out[i] = in[i]; }\n",
    );
    let e = failing(
        dir.path(),
        &run_source(
            "\"copy/float\"",
            &format!(", kernel_dir = {:?}", k.display().to_string()),
        ),
    );
    assert!(
        e.contains("copy/float n=65536 on ")
            && e.contains(
                "the launch failed (global 65536, local 256): CL_INVALID_WORK_GROUP_SIZE"
            ),
        "{e}"
    );

    // A run past its timeout.
    let dir = tempfile::tempdir().unwrap();
    let e = failing(
        dir.path(),
        &run_source("\"all\"", ", timeout_secs = 0.000001"),
    );
    assert!(
        e.contains("timeout: the run passed its `timeout_secs` during copy/float n=65536"),
        "{e}"
    );

    // A device index out of range: the error lists what there is.
    let dir = tempfile::tempdir().unwrap();
    let e = failing(
        dir.path(),
        "[sources.cl]\nplugin = \"opencl\"\ncollector = \"run\"\nconfig = { preset = \"quick\", device = \"7\" }\n",
    );
    assert!(
        e.contains("selects no device; this machine has: platform 0 ("),
        "{e}"
    );

    // Settings checked before anything runs.
    let dir = tempfile::tempdir().unwrap();
    let e = failing(
        dir.path(),
        &run_source("\"matmul\"", ", sizes = [\"matmul=40\"]"),
    );
    assert!(
        e.contains("matmul at size 40: n (matrix edge) must be a positive multiple of 16, not 40"),
        "{e}"
    );
    let e = failing(dir.path(), &run_source("\"fft\"", ""));
    assert!(
        e.contains(
            "kernels: no program `fft` in the suite (copy, matmul, transpose, sobel, reduce, nbody)"
        ),
        "{e}"
    );
}

/// Needs no OpenCL: the committed record read twice under one run id is refused.
#[test]
fn two_records_with_one_run_id_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let record = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../pipelines/data/opencl/pocl-xeon-2vcpu.json");
    std::fs::copy(&record, dir.path().join("a.json")).unwrap();
    std::fs::copy(&record, dir.path().join("b.json")).unwrap();
    let e = failing(
        dir.path(),
        "[sources.cl]\nplugin = \"opencl\"\ncollector = \"logs\"\nconfig = { paths = [\"a.json\", \"b.json\"] }\n",
    );
    assert!(
        e.contains("two records have run_id `pocl-xeon-2vcpu`"),
        "{e}"
    );
}

fn kernel_files_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../plugins/opencl/kernel-files")
}

/// README.md's "Your own kernel": a kernel declared in a TOML file, no Rust, measured and
/// checked against its reference kernel; the suite's `copy` declared the same way gives the
/// suite's counters on the device too.
#[test]
fn kernels_declared_in_files_run_are_checked_and_count_as_the_suite_does() {
    if !opencl_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files = kernel_files_dir();
    let p = write_pipeline(
        dir.path(),
        &format!(
            "[sources.cl]\nplugin = \"opencl\"\ncollector = \"run\"\n\
             config = {{ kernel_files = [{:?}, {:?}], kernels = [\"copy\"], preset = \"quick\", device = \"0\", platform = \"0\", max_launches = 10 }}\n",
            files.join("saxpy.toml").display().to_string(),
            files.join("copy.toml").display().to_string(),
        ),
    );
    run_pipeline(&p, &options(dir.path()), &mut Quiet).unwrap();
    let bundle = yosoku_bundle::fs::read_bundle(&dir.path().join("results/opencl")).unwrap();
    let timings = table(&bundle, "cl.kernel_timings");
    let (ids, checks) = (strings(timings, "run_id"), strings(timings, "check"));
    let check = |id_end: &str| {
        let i = ids
            .iter()
            .position(|id| id.ends_with(id_end))
            .unwrap_or_else(|| panic!("no {id_end} in {ids:?}"));
        checks[i].clone()
    };
    assert_eq!(
        check(":saxpy:default:n=1048576"),
        "reference kernel saxpy_ref"
    );
    assert_eq!(
        check(":copy-file:float4:n=65536"),
        "unchecked",
        "copy.toml has no check"
    );
    assert_eq!(check(":copy:float4:n=65536"), "cpu reference");
    let runs = table(&bundle, "cl.runs");
    let params = strings(runs, "parameters");
    assert!(
        params.iter().any(|p| p == "n=65536;global=16384;local=64"),
        "{params:?}"
    );
    // The suite's copy and the file's copy: the same counters, configuration by configuration.
    let counters = table(&bundle, "cl.counters");
    let (cids, metrics) = (strings(counters, "run_id"), strings(counters, "metric"));
    let values = counters
        .column_by_name("value")
        .unwrap()
        .as_primitive::<Float64Type>();
    let of = |run_end: &str| {
        let mut v: Vec<(String, f64)> = (0..cids.len())
            .filter(|&i| cids[i].ends_with(run_end))
            .map(|i| (metrics[i].clone(), values.value(i)))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    for variant in ["float", "float4", "float16"] {
        for n in [65536, 262144] {
            let suite = of(&format!(":copy:{variant}:n={n}"));
            assert_eq!(suite.len(), 10, "{variant} n={n}: {suite:?}");
            assert_eq!(of(&format!(":copy-file:{variant}:n={n}")), suite);
        }
    }
}

/// A kernel file's mistakes stop the pipeline at validation, before any launch: no bundle.
#[test]
fn a_kernel_files_mistake_is_an_error_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(kernel_files_dir().join("saxpy.toml"))
        .unwrap()
        .replace(
            "local = [\"min(64, n / 4)\"]",
            "local = [\"min(96, n / 4)\"]",
        );
    std::fs::copy(
        kernel_files_dir().join("saxpy.cl"),
        dir.path().join("saxpy.cl"),
    )
    .unwrap();
    let file = dir.path().join("saxpy.toml");
    std::fs::write(&file, text).unwrap();
    let e = failing(
        dir.path(),
        &format!(
            "[sources.cl]\nplugin = \"opencl\"\ncollector = \"run\"\nconfig = {{ kernel_files = [{:?}] }}\n",
            file.display().to_string()
        ),
    );
    assert!(
        e.contains("saxpy.toml:38:11: ndrange: at n=65536, the local size 96 does not divide the global size 16384 in dimension 0"),
        "{e}"
    );
    // A kernel that disagrees with its reference: no time recorded, the element named.
    if !opencl_available() {
        return;
    }
    let source = std::fs::read_to_string(kernel_files_dir().join("saxpy.cl"))
        .unwrap()
        .replace("y[i] = a * x[i] + y[i];", "y[i] = a * x[i] - y[i];");
    std::fs::write(dir.path().join("saxpy.cl"), source).unwrap();
    std::fs::copy(kernel_files_dir().join("saxpy.toml"), &file).unwrap();
    let e = failing(
        dir.path(),
        &format!(
            "[sources.cl]\nplugin = \"opencl\"\ncollector = \"run\"\nconfig = {{ kernel_files = [{:?}], device = \"0\", platform = \"0\" }}\n",
            file.display().to_string()
        ),
    );
    assert!(
        e.contains("saxpy/default n=65536 on ")
            && e.contains("wrong result, no time recorded: argument 2 (`y`, float) differs from reference kernel `saxpy_ref` at element 1:"),
        "{e}"
    );
}
