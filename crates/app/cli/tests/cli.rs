//! The `yosoku` binary: help, plugins, run, inspect, exit codes, and a run killed midway.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
use common::{plugin_dir, repo, text, yosoku};

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn every_command_has_help() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["plugins", "--help"],
        vec!["inspect", "--help"],
        vec!["report", "--help"],
        vec!["scoreboard", "--help"],
        vec!["metrics", "--help"],
        vec!["serve", "--help"],
        vec!["devices", "--help"],
        vec!["predict", "--help"],
        vec!["trace", "export", "--help"],
        vec!["trace", "import", "--help"],
        vec!["trace", "check", "--help"],
    ] {
        let out = yosoku(&args);
        assert!(out.status.success(), "{args:?}");
        assert!(
            text(&out.stdout).contains("Usage: yosoku"),
            "{args:?}: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn plugins_lists_collectors_and_their_config_keys() {
    let out = yosoku(&["plugins"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    for expected in [
        "csx600_sdk_log 0.1.0 (ABI v2",
        "  microbench [importer]: ",
        "    path (path, required): The csx600-sdk-log file",
        "dummy 0.1.0",
        "  time_command [runner]: ",
        "    repetitions (integer, default 3): How many times to run it",
        "  nsys [importer]: ",
    ] {
        assert!(stdout.contains(expected), "lacks {expected:?} in\n{stdout}");
    }
    // The importers that read gzip-compressed files, named once after the listing.
    let gzip = stdout
        .lines()
        .find(|l| l.starts_with("gzip-compressed files"))
        .unwrap_or_else(|| panic!("no gzip line in\n{stdout}"));
    for importer in [
        "cuda_profiler/ncu",
        "cuda_profiler/nsys",
        "traces/chrome_trace",
        "table/file",
    ] {
        assert!(gzip.contains(importer), "{importer} not in {gzip}");
    }
}

#[test]
fn run_prints_the_headline_figures_and_inspect_reads_the_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("mc");
    let pipeline = repo().join("pipelines/csx600-montecarlo.toml");
    let out = yosoku(&[
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The headline figures, with the published ones beside them, and the scoreboard.
    assert!(
        stdout.contains("montecarlo d=2 compute: predicted_secs      3.777 s    3.775 s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("CSX600 op-count model: Monte Carlo d=2 time  3.777 s  3.775 s"),
        "{stdout}"
    );

    let out = yosoku(&["report", bundle.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for expected in [
        "montecarlo d=2 compute: predicted_secs      3.777 s    3.775 s",
        "montecarlo d=3 compute: predicted_secs      5.262 s    5.262 s",
        "montecarlo d=3 compute: error_pct            1.61 %     1.60 %",
    ] {
        assert!(stdout.contains(expected), "lacks {expected:?} in\n{stdout}");
    }

    // Exports: CSV of one table; Extra-P needs a parameter that varies within a call path (the
    // two Monte Carlo runs are two call paths); a directory it did not write is never replaced.
    let csv = dir.path().join("csv");
    let out = yosoku(&[
        "export",
        bundle.to_str().unwrap(),
        "--format",
        "csv",
        "--table",
        "opcount.predictions",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let predictions = std::fs::read_to_string(csv.join("opcount.predictions.csv")).unwrap();
    assert_eq!(predictions.lines().count(), 3, "{predictions}");
    assert!(
        predictions
            .lines()
            .next()
            .unwrap()
            .contains("predicted_secs")
    );
    let json = dir.path().join("extrap.json");
    let out = yosoku(&[
        "export",
        bundle.to_str().unwrap(),
        "--format",
        "extrap",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("no parameter is a number in every run of a call path and varies"),
        "{}",
        text(&out.stderr)
    );
    assert!(!json.exists());
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("keep.txt"), "mine").unwrap();
    let out = yosoku(&[
        "export",
        bundle.to_str().unwrap(),
        "--format",
        "parquet",
        "-o",
        mine.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("refusing to replace"),
        "{}",
        text(&out.stderr)
    );
    assert!(mine.join("keep.txt").exists());

    // Without a terminal and in the C locale: plain text, words for the marks.
    let out = Command::new(env!("CARGO_BIN_EXE_yosoku"))
        .args(["scoreboard", dir.path().to_str().unwrap()])
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("ok    CSX600 op-count model: Monte Carlo d=3 time  5.262 s  5.262 s  mc"),
        "{stdout}"
    );
    assert!(!stdout.contains('\x1b'), "{stdout}");
    let out = yosoku(&["scoreboard", repo().join("pipelines").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no bundle in it"),
        "{}",
        text(&out.stderr)
    );

    let out = yosoku(&["inspect", bundle.to_str().unwrap(), "--rows", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("pipeline csx600-montecarlo"), "{stdout}");
    assert!(
        stdout.contains("input data/csx600/montecarlo-profile.csx600.log [montecarlo.path]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("opcount.cost_breakdown: 16 rows"),
        "{stdout}"
    );
    assert!(stdout.contains("predicted_secs: Float64 [s]"), "{stdout}");

    let file = bundle.join("tables/opcount.predictions.arrow");
    let out = yosoku(&["inspect", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("opcount.predictions.arrow: 2 rows"));

    let out = yosoku(&["inspect", bundle.to_str().unwrap(), "--table", "nope.x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("has no table `nope.x`; it has: bench.csx600_op_throughputs")
    );
}

#[test]
fn bad_input_exits_nonzero_with_the_location() {
    let dir = tempfile::tempdir().unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[pipeline]\nname = \"x\"\n[sources.a]\nplugin = \"dummy\"\ncollector = \"fail\"\n",
    )
    .unwrap();
    let out = yosoku(&[
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        format!(
            "error: {}:3:10: source `a`: plugin `dummy`, collector `fail` failed: nothing works",
            pipeline.display()
        )
    );
    assert!(!dir.path().join("out").exists());

    let out = yosoku(&["inspect", dir.path().join("none.arrow").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("none.arrow: No such file or directory"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(dir.path().join("junk.arrow"), "junk").unwrap();
    let out = yosoku(&["inspect", dir.path().join("junk.arrow").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("junk.arrow: invalid Arrow IPC data"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_killed_run_leaves_the_previous_bundle_intact() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("out");
    let pipeline = dir.path().join("p.toml");
    let write = |seconds: &str| {
        std::fs::write(
            &pipeline,
            format!(
                "[pipeline]\nname = \"slow\"\n[sources.timing]\nplugin = \"dummy\"\ncollector = \"time_command\"\nconfig = {{ command = [\"sleep\", \"{seconds}\"], repetitions = 1 }}\n"
            ),
        )
        .unwrap();
    };
    write("0");
    let out = yosoku(&[
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = std::fs::read(bundle.join("manifest.json")).unwrap();

    // A run that takes 5 s, killed (SIGKILL) after it has started collecting.
    write("5");
    let mut child = Command::new(env!("CARGO_BIN_EXE_yosoku"))
        .args([
            "run",
            pipeline.to_str().unwrap(),
            "-o",
            bundle.to_str().unwrap(),
        ])
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the run was not killed midway"
    );
    assert_eq!(std::fs::read(bundle.join("manifest.json")).unwrap(), before);
    let table = yosoku_bundle_table_rows(&bundle);
    assert_eq!(table, 1);
}

fn yosoku_bundle_table_rows(bundle: &Path) -> u64 {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("manifest.json")).unwrap())
            .unwrap();
    manifest["tables"][0]["rows"].as_u64().unwrap()
}

/// `yosoku plugins` lists the OpenCL plugin, its collectors and their keys; without an OpenCL
/// driver (here: the ICD loader pointed at an empty vendors directory) a run fails with one error
/// that says what to install, exit code 1, and no bundle.
#[test]
fn opencl_is_listed_and_a_machine_without_a_driver_is_told_what_to_install() {
    let out = yosoku(&["plugins"]);
    let stdout = text(&out.stdout);
    for expected in [
        "opencl 0.1.0 (ABI v2",
        "  run [runner]: ",
        "  logs [importer]: ",
        "  devices [runner]: ",
        "    kernels (string_list, optional): ",
        "    kernel_files (path_list, default []): ",
        "    timeout_secs (float, default 3600.0): ",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let vendors = dir.path().join("no-vendors");
    std::fs::create_dir(&vendors).unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[pipeline]\nname = \"cl\"\n\n[sources.cl]\nplugin = \"opencl\"\ncollector = \"devices\"\n",
    )
    .unwrap();
    let bundle = dir.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_yosoku"))
        .args([
            "run",
            pipeline.to_str().unwrap(),
            "-o",
            bundle.to_str().unwrap(),
        ])
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .env("OCL_ICD_VENDORS", &vendors)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("opencl")
            && stderr.contains("apt install ocl-icd-libopencl1 pocl-opencl-icd"),
        "{stderr}"
    );
    assert!(!bundle.exists());
}

/// A small synthetic kernel trace: 4 SMs, 16 blocks of 32 threads, 4 points each.
fn write_trace(path: &Path) -> Vec<u8> {
    use yosoku_traces::kernel_trace::{self, Header, Record, Timer};
    let mut header = Header::new("test GPU", Timer::Clock64, 4, 1_000_000, 0);
    header.synthetic = true;
    let mut records = Vec::new();
    for block in 0..16u32 {
        for thread in 0..32u32 {
            for point in 0..4u32 {
                records.push(Record {
                    block,
                    thread,
                    sm: block % 4,
                    point,
                    timestamp: 1000 * u64::from(block) + 100 * u64::from(point),
                });
            }
        }
    }
    let mut bytes = Vec::new();
    kernel_trace::write(&header, &records, &mut bytes).unwrap();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn trace_import_writes_a_bundle_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("k.yktrace");
    let bytes = write_trace(&good);
    let bundle = dir.path().join("bundle");
    let out = yosoku(&[
        "trace",
        "import",
        good.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("2048 synthetic records"),
        "{}",
        text(&out.stdout)
    );
    assert!(bundle.join("traces/k/index.json").is_file());
    let manifest = std::fs::read_to_string(bundle.join("manifest.json")).unwrap();
    // A truncated file: an error naming the file and byte, exit code 1, the bundle untouched.
    let bad = dir.path().join("bad.yktrace");
    std::fs::write(&bad, &bytes[..bytes.len() - 7]).unwrap();
    let out = yosoku(&[
        "trace",
        "import",
        bad.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("bad.yktrace: byte") && err.contains("truncated"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(bundle.join("manifest.json")).unwrap(),
        manifest
    );
    let fresh = dir.path().join("never");
    let out = yosoku(&[
        "trace",
        "import",
        bad.to_str().unwrap(),
        "-o",
        fresh.to_str().unwrap(),
        "--lanes",
        "thread",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!fresh.exists());
    // A bundle without spans has nothing to export; a broken trace file fails the check.
    let out = yosoku(&[
        "trace",
        "export",
        bundle.to_str().unwrap(),
        "-o",
        dir.path().join("x.json").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("has no spans table"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("x.json").exists());
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        r#"{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0}]}"#,
    )
    .unwrap();
    let out = yosoku(&["trace", "check", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("event 0: a complete event (`X`) needs `dur`"));
}

/// The `opencl-vector-width` pipeline run quietly into `<dir>/vw` (its path returned).
fn vector_width_bundle(dir: &Path) -> std::path::PathBuf {
    let bundle = dir.join("vw");
    let pipeline = repo().join("pipelines/opencl-vector-width.toml");
    let out = yosoku(&[
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        out.stdout.is_empty(),
        "--quiet printed: {}",
        text(&out.stdout)
    );
    bundle
}

/// Part of a bundle as a bundle of its own: the tables chosen under the run's manifest, read
/// back by every command that reads bundles; a name the bundle lacks, a directory that is not a
/// bundle and the bundle itself are refused, and nothing is written.
#[test]
fn export_writes_the_tables_chosen_as_a_bundle_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = vector_width_bundle(dir.path());
    let part = dir.path().join("part");
    let export = |output: &Path, tables: &[&str]| {
        let mut args = vec!["export", bundle.to_str().unwrap(), "--format", "bundle"];
        for t in tables {
            args.extend(["--table", t]);
        }
        args.extend(["-o", output.to_str().unwrap()]);
        yosoku(&args)
    };
    let out = export(&part, &["width.report", "width.throughputs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        format!(
            "wrote a bundle of 2 table(s) into {}: width.throughputs, width.report",
            part.display()
        )
    );
    let report = yosoku(&["report", part.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(text(&report.stdout).contains("NVIDIA H200 copy: best variant float4"));
    let inspect = text(&yosoku(&["inspect", part.to_str().unwrap()]).stdout);
    assert!(
        inspect.contains("width.report:") && !inspect.contains("cl.runs:"),
        "{inspect}"
    );
    // The same tables, cell for cell, as the whole bundle's.
    let whole = yosoku_bundle::fs::read_bundle(&bundle).unwrap();
    let kept = yosoku_bundle::fs::read_bundle(&part).unwrap();
    assert_eq!(kept.table("width.report"), whole.table("width.report"));
    assert_eq!(kept.manifest.stages, whole.manifest.stages);

    let missing = export(&dir.path().join("other"), &["width.nothing"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("no table `width.nothing`; the bundle has: cl.runs"));
    assert!(!dir.path().join("other").exists());
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("notes.txt"), "mine").unwrap();
    let refused = export(&plain, &["width.report"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stderr).contains("is not a yosoku bundle"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(plain.join("notes.txt")).unwrap(),
        "mine"
    );
    let itself = export(&bundle, &["width.report"]);
    assert_eq!(itself.status.code(), Some(1));
    assert!(text(&itself.stderr).contains("is the bundle read"));
    assert_eq!(
        yosoku_bundle::fs::read_bundle(&bundle)
            .unwrap()
            .tables
            .len(),
        whole.tables.len()
    );
}

/// Extra-P's JSON input from measured runs over a parameter: the OpenCL record's kernels over
/// their size `n`, one call path per program and variant, values in seconds.
#[test]
fn export_writes_extrap_json_of_runs_over_their_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = vector_width_bundle(dir.path());
    let json = dir.path().join("extrap.json");
    let out = yosoku(&[
        "export",
        bundle.to_str().unwrap(),
        "--format",
        "extrap",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Extra-P wants every call path of an experiment measured at the same points: one file per
    // set of sizes (the copies' sizes are not the matrix multiplies').
    assert!(!json.exists());
    assert!(text(&out.stdout).starts_with("wrote 4 Extra-P experiments"));
    let docs: Vec<serde_json::Value> = (1..=4)
        .map(|k| {
            let path = dir.path().join(format!("extrap-{k}.json"));
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
        })
        .collect();
    let doc = docs
        .iter()
        .find(|d| {
            d["measurements"]
                .as_object()
                .unwrap()
                .keys()
                .any(|k| k.ends_with("->copy->float4"))
        })
        .unwrap();
    assert_eq!(doc["parameters"], serde_json::json!(["n"]));
    // Three devices measured (POCL, an H100, an H200): each callpath names its device.
    let measurements = doc["measurements"].as_object().unwrap();
    let copies: Vec<&String> = measurements
        .keys()
        .filter(|k| k.ends_with("->copy->float4"))
        .collect();
    assert_eq!(copies.len(), 3, "{copies:?}");
    for key in copies {
        let copy = measurements[key]["time"].as_array().unwrap();
        assert!(copy.len() >= 2, "{copy:?}");
        for m in copy {
            assert_eq!(m["point"].as_array().unwrap().len(), 1);
            let t = m["values"][0].as_f64().unwrap();
            assert!(t > 0.0 && t < 1.0, "{t}");
        }
    }
    // Issue 56, item 6: `-o` into a directory that is missing makes it; one that cannot be made
    // (a file of its name is there) is named, never a temporary file.
    let export_to = |path: &Path| {
        yosoku(&[
            "export",
            bundle.to_str().unwrap(),
            "--format",
            "extrap",
            "-o",
            path.to_str().unwrap(),
        ])
    };
    let deeper = dir.path().join("made/here/x.json");
    let out = export_to(&deeper);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("made/here/x-1.json").is_file());
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = export_to(&file.join("x.json"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot create the directory {}", file.display()))
            && !stderr.contains("x.json"),
        "{stderr}"
    );
}

#[test]
fn serve_refuses_a_missing_directory_and_web_files_that_are_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-results");
    let out = yosoku(&["serve", missing.to_str().unwrap(), "--port", "0"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no such directory of bundles"),
        "{}",
        text(&out.stderr)
    );
    let out = yosoku(&[
        "serve",
        dir.path().to_str().unwrap(),
        "--port",
        "0",
        "--web",
        dir.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no index.html there"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn devices_lists_the_catalogue_and_a_users_file_adds_a_device() {
    let out = yosoku(&["devices"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("NVIDIA H200"),
        "{}",
        text(&out.stdout)
    );
    let out = yosoku(&["devices", "h100"]);
    assert!(text(&out.stdout).contains("[datasheet] NVIDIA H100 Tensor Core GPU datasheet"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a100.toml"),
        "name = \"NVIDIA A100-SXM4-40GB\"\naliases = [\"A100\"]\nvendor = \"NVIDIA\"\nkind = \"gpu\"\narchitecture = \"Ampere\"\n[spec]\nsm_count = { value = 108, source = \"wp\" }\n[sources]\nwp = \"NVIDIA A100 Tensor Core GPU Architecture whitepaper\"\n",
    )
    .unwrap();
    let out = yosoku(&["devices", "a100", "--devices", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("sm_count"),
        "{}",
        text(&out.stdout)
    );
    // A value its architecture rules out is a warning naming the file and field.
    let odd = tempfile::tempdir().unwrap();
    std::fs::write(
        odd.path().join("odd.toml"),
        "name = \"Odd H100\"\nvendor = \"NVIDIA\"\nkind = \"gpu\"\narchitecture = \"HOPPER\"\n[spec]\nsm_count = { value = 132, source = \"s\" }\nboost_clock_mhz = { value = 1980, source = \"s\" }\nfp32_peak_gflops = { value = 670000, source = \"s\" }\n[sources]\ns = \"a typo\"\n",
    )
    .unwrap();
    let out = yosoku(&[
        "devices",
        "odd h100",
        "--devices",
        odd.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("odd.toml: spec.fp32_peak_gflops = 670000 disagrees with sm_count x FP32 lanes per SM x 2 x clock"),
        "{}",
        text(&out.stderr)
    );
    // Unknown names get the closest; a broken file its line and column.
    let out = yosoku(&["devices", "H20"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("the closest: NVIDIA H200"),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(
        dir.path().join("bad.toml"),
        "name = \"B\"\nvendor = \"V\"\nkind = \"gpu\"\narchitecture = \"A\"\n[spec]\nsm_count = { value = -1, source = \"s\" }\n[sources]\ns = \"x\"\n",
    )
    .unwrap();
    let out = yosoku(&["devices", "--devices", dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("bad.toml:6:12: spec.sm_count: expected a positive number"),
        "{stderr}"
    );
}

/// `yosoku scaling`: Extra-P's text files and the experiments it saves (`.extra-p`) modelled as
/// `extrap` models them, as text or as JSON lines; a file that is neither is refused by name.
#[test]
fn robust_intervals_that_no_check_can_calibrate_are_borrowed_from_the_checked_search() {
    // Extra-P's one_parameter_1 without its largest size: four sizes, one value a point. The
    // robust search's checks would keep three values (a constant, nothing to check); the
    // Extra-P-compatible search's can be checked, and lend theirs.
    let original = std::fs::read_to_string(
        repo().join("crates/core/regression/tests/data/extrap/text/one_parameter_1.txt"),
    )
    .unwrap();
    let four: String = original
        .lines()
        .filter(|l| *l != "POINTS ( 60 )" && !l.starts_with("DATA 725."))
        .map(|l| match l.strip_prefix("DATA ") {
            Some(values) => format!("DATA {}\n", values.split(' ').next().unwrap()),
            None => format!("{l}\n"),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("four_sizes.txt");
    std::fs::write(&file, four).unwrap();
    let out = yosoku(&[
        "scaling",
        "--robust",
        "--target",
        "x=60",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed
            .contains("  robust intervals: 95 % intervals borrowed: no call path keeps 4 values"),
        "{printed}"
    );
    // The robust prediction's interval is the other's, stretched to hold it: both hold 725.4,
    // the measured value left out.
    let intervals: Vec<(f64, f64)> = printed
        .lines()
        .filter_map(|l| {
            let inner = l.split_once("(95 % interval ")?.1;
            let (lo, hi) = inner.split_once(" s to ")?;
            Some((lo.parse().ok()?, hi.trim_end_matches(" s)").parse().ok()?))
        })
        .collect();
    assert_eq!(intervals.len(), 2, "{printed}");
    let (own, robust) = (intervals[0], intervals[1]);
    assert!(robust.0 <= own.0 && own.1 <= robust.1, "{printed}");
    assert!((robust.0..=robust.1).contains(&725.39), "{printed}");
}

/// A model that falls below zero at the target, where no measured time does, is said to: its
/// interval starts at 0, and where the whole interval lies below zero too none is printed
/// (`0 s to 0 s` would claim a certainty).
#[test]
fn a_prediction_below_zero_is_said_to_be() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER p\n\nPOINTS ( 1 ) ( 2 ) ( 3 ) ( 4 ) ( 5 )\n\nREGION r\nMETRIC time\n\
         DATA 4.1\nDATA 3.0\nDATA 2.1\nDATA 0.9\nDATA 0.1\n",
    );
    let below = ": the model falls below zero here, where no measured value does";
    let at = |p: &str| {
        let printed = succeeded(&["scaling", "--target", p, &file]);
        let line = printed.lines().find(|l| l.contains(" at p=")).unwrap();
        line.split_once(": ").unwrap().1.to_owned()
    };
    // At 5 the model is just above zero; at 5.5 below it, its band not wholly; at 8 wholly.
    let (above, partly, wholly) = (at("p=5"), at("p=5.5"), at("p=8"));
    assert!(
        !above.contains(below) && above.contains("(95 % interval "),
        "{above}"
    );
    assert!(
        partly.starts_with('-') && partly.contains(below),
        "{partly}"
    );
    assert!(partly.contains("(95 % interval 0 s to "), "{partly}");
    assert!(
        wholly.starts_with('-') && wholly.ends_with(", and so does its whole 95 % interval"),
        "{wholly}"
    );
    assert!(!wholly.contains("0 s to 0 s"), "{wholly}");
}

/// An Extra-P text file of `text` in a temporary directory (kept while the first is alive), and
/// its path.
/// `yosoku args`' standard output, the command having succeeded (else its error, in the panic).
fn succeeded(args: &[&str]) -> String {
    let out = yosoku(args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).to_owned()
}

fn extrap_text_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("experiment.txt");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

/// Two parameters measured together along one curve (q = p / 100, a weak-scaling study): the
/// robust model is over p alone and says so, where a constant was flat through a 64x rise; the
/// runs --suggest proposes stay on the curve.
#[test]
fn parameters_measured_together_are_modelled_over_the_first_and_said_so() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER p q\nPOINTS (1000 10) (2000 20) (4000 40) (8000 80)\nREGION solve\nMETRIC time\nDATA 1.0 1.01\nDATA 4.0 4.02\nDATA 16.0 16.1\nDATA 64.0 63.8\n",
    );
    let printed = succeeded(&["scaling", "--robust", "--target", "p=16000,q=160", &file]);
    assert!(
        printed.contains("q moved with p at every run: modelled over p alone"),
        "{printed}"
    );
    let robust = printed.split("robust:").nth(1).unwrap_or_default();
    assert!(robust.contains("p^(2)"), "{printed}");
    let printed = succeeded(&["scaling", "--robust", "--json", &file]);
    let line: serde_json::Value = serde_json::from_str(printed.trim()).unwrap();
    assert_eq!(line["robust"]["moved_with_first"], serde_json::json!(["q"]));
    let printed = succeeded(&["scaling", "--suggest", "--target", "p=16000,q=160", &file]);
    assert!(printed.contains("1. p=16000, q=160:"), "{printed}");
    assert!(
        printed.contains("q moved with p at every run: only runs on that curve are proposed"),
        "{printed}"
    );
    assert!(!printed.contains("p=16000, q=10:"), "{printed}");
}

/// Runs off any line (12 configurations, no two sharing a value of p or of n, as a
/// space-filling design): the robust search ranks each parameter's terms over all the runs and
/// says so, in words and in its JSON.
#[test]
fn runs_off_any_line_are_said_to_be_ranked_over_all_the_runs() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER p n\nPOINTS (2 100) (3 900) (5 300) (7 1100) (11 500) (13 700) (17 200) (19 1000) (23 400) (29 1200) (31 600) (37 800)\nREGION solve\nMETRIC time\nDATA 0.2 0.202\nDATA 1.52647 1.54173\nDATA 0.796578 0.804544\nDATA 3.18809 3.21997\nDATA 1.82972 1.84801\nDATA 2.69031 2.71721\nDATA 0.917493 0.926667\nDATA 4.34793 4.39141\nDATA 1.90942 1.92852\nDATA 5.92958 5.98887\nDATA 3.07252 3.10324\nDATA 4.26756 4.31024\n",
    );
    let printed = succeeded(&["scaling", "--robust", &file]);
    assert!(
        printed.contains(
            "p, n: no three runs on a line of any (the other parameters fixed), so their terms \
             were ranked over all the runs"
        ),
        "{printed}"
    );
    let printed = succeeded(&["scaling", "--robust", "--json", &file]);
    let line: serde_json::Value = serde_json::from_str(printed.trim()).unwrap();
    assert_eq!(
        line["robust"]["ranked_off_line"],
        serde_json::json!(["p", "n"])
    );
    assert_eq!(line["without_line"], serde_json::json!(["p", "n"]));
    // Without --robust: Extra-P's search gives a constant, and says why and what can do more.
    let printed = succeeded(&["scaling", &file]);
    assert!(
        printed.contains(
            "p, n: no two runs on a line of any (the other parameters fixed), so Extra-P's \
             search can put none of their terms into the model; the robust search models them"
        ),
        "{printed}"
    );
    // Where each parameter has a line, nothing is said.
    let (_dir, file) = extrap_text_file(
        "PARAMETER p\nPOINTS (2) (4) (8) (16) (32)\nREGION solve\nMETRIC time\nDATA 1 1.01\nDATA 2 2.02\nDATA 3 3.03\nDATA 4 4.04\nDATA 5 5.05\n",
    );
    let printed = succeeded(&["scaling", "--robust", &file]);
    assert!(!printed.contains("runs on a line"), "{printed}");
    let printed = succeeded(&["scaling", "--json", &file]);
    assert!(!printed.contains("without_line"), "{printed}");
}

/// A time below zero is a measuring or writing error: modelled as given, as Extra-P models it,
/// and said on stderr; a metric whose name says no unit (`energy_delta`) may go below zero and
/// is not. DATA before any REGION line is Extra-P's empty call path, printed as `(unnamed)`.
#[test]
fn negative_times_are_said_and_an_unnamed_call_path_is_named_so() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER p\nPOINTS 2 4 8 16 32\nMETRIC time\nDATA 1\nDATA 2\nDATA 3\nDATA 4\nDATA 5\nREGION r\nMETRIC time\nDATA 1\nDATA -2\nDATA 3\nDATA -4 -4.5\nDATA 5\nMETRIC energy_delta\nDATA -1\nDATA -2\nDATA -3\nDATA -4\nDATA -5\n",
    );
    let out = yosoku(&["scaling", file.as_str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("\n  (unnamed) / time: "), "{printed}");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "metric `time`: 3 negative value(s), in call path(s) `r`: a time is never negative"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("energy_delta"), "{stderr}");
}

/// A parameter measured at one value (a study of the ranks at one size, the size written as a
/// parameter) is left out of the models, as Extra-P 4.2.5 leaves it out of its model (`0.0354 +
/// 0.5100 * p^(1)` for this file), and said so; in the JSON each factor keeps its parameter's
/// place among the file's own. A target, grid or cost at the fixed parameter is refused where it
/// asks what no model can answer; one of two values is named in its refusal.
#[test]
fn a_parameter_measured_at_one_value_is_left_out_of_the_models_and_said_so() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER n\nPARAMETER p\nPOINTS ( 100 2 ) ( 100 4 ) ( 100 8 ) ( 100 16 ) ( 100 32 )\nREGION main\nMETRIC time\nDATA 1.0 1.1\nDATA 2.1 2.0\nDATA 4.2 4.1\nDATA 8.1 8.3\nDATA 16.5 16.2\n",
    );
    let file = file.as_str();
    let out = yosoku(&["scaling", "--robust", "--target", "p=64,n=100", file]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("(parameters: p)"), "{printed}");
    assert!(
        printed.contains("main / time: 3.541667e-2 + 5.100470e-1 * p^(1)"),
        "{printed}"
    );
    assert!(printed.contains("at p=64: 32.678 s"), "{printed}");
    assert!(
        text(&out.stderr).contains("n = 100 at every run: the models are over p alone"),
        "{}",
        text(&out.stderr)
    );
    let printed = succeeded(&["scaling", "--robust", "--json", file]);
    let line: serde_json::Value = serde_json::from_str(printed.trim()).unwrap();
    assert_eq!(
        line["terms"][0]["factors"],
        serde_json::json!([[1, 1, 1, 0]])
    );
    assert_eq!(
        line["robust"]["terms"][0]["factors"],
        serde_json::json!([[1, 1, 1, 0]])
    );
    for (args, expected) in [
        (
            &["--target", "p=64,n=200"][..],
            "--target n=200, but n is 100 at every run of the file",
        ),
        (
            &["--suggest", "--target", "p=64", "--grid", "n=x2"][..],
            "--grid names `n`, which is 100 at every run of the file",
        ),
        (
            &["--suggest", "--target", "p=64", "--cost-parameter", "n"][..],
            "--cost-parameter names `n`, which is 100 at every run of the file",
        ),
    ] {
        let out = yosoku(&[&["scaling"][..], args, &[file]].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            text(&out.stderr).contains(expected),
            "{}",
            text(&out.stderr)
        );
    }
    let printed = succeeded(&["scaling", "--suggest", "--target", "p=64", file]);
    assert!(printed.contains("1. p=64:"), "{printed}");
    // Two values are not one: Extra-P's search chooses a law in n between them, said so; a
    // prediction at another n has no interval (nothing checked that law), one at a measured n
    // has; the robust search, which models a parameter from three values, names it.
    let (_dir, file) = extrap_text_file(
        "PARAMETER p\nPARAMETER n\nPOINTS ( 2 100 ) ( 4 100 ) ( 8 100 ) ( 2 200 ) ( 4 200 ) ( 8 200 )\nREGION main\nMETRIC time\nDATA 1\nDATA 2\nDATA 4\nDATA 2\nDATA 4\nDATA 8\n",
    );
    let printed = succeeded(&["scaling", "--robust", "--target", "p=16,n=400", &file]);
    for said in [
        "main / time: ",
        "at p=16, n=400: 32.000 s (no interval: the call path was measured at other values of n, \
         too few to check its law in n, as said below)",
        "n: measured at 2 values (100, 200) on this call path: its law in n is the one that \
         predicts each from the other best, as Extra-P chooses it; no third value checks it",
        "robust: not modelled: parameter n: 2 distinct values; this search models a parameter \
         from 3 values up",
    ] {
        assert!(printed.contains(said), "{said}\n{printed}");
    }
    let printed = succeeded(&["scaling", "--target", "p=16,n=200", &file]);
    assert!(
        printed.contains("at p=16, n=200: 16.000 s (95 % interval"),
        "{printed}"
    );
    let out = yosoku(&["scaling", "--json", "--target", "p=16,n=400", &file]);
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["prediction"]["unchecked"], "n", "{line}");
    assert!(line["prediction"]["low"].is_null(), "{line}");
    assert_eq!(line["few_values"][0]["parameter"], "n", "{line}");
    // --suggest: the robust search cannot model it yet, and the runs that would let it are a
    // third value of n on its grid (100, 200: a doubling), at each p, the cheapest first.
    let printed = succeeded(&["scaling", "--suggest", "--target", "p=16,n=400", &file]);
    assert!(
        printed.contains(
            "    to model it, measure n=400 (a doubling, past 100, 200), at any of:\n      \
             1. p=2, n=400: the run takes at least 2.000 s\n      2. p=4, n=400: "
        ),
        "{printed}"
    );
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--json",
        "--target",
        "p=16,n=400",
        "--grid",
        "n=+300",
        &file,
    ]);
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    let to_model = &line["to_model"][0];
    assert_eq!(to_model["next"], 500.0, "{line}");
    assert_eq!(to_model["grid"], "the grid --grid gives", "{line}");
    assert_eq!(to_model["runs"].as_array().unwrap().len(), 3, "{line}");
    assert_eq!(to_model["runs"][0]["configuration"]["p"], 2.0, "{line}");
    // A --grid with no value past the measured ones: said, not a silent empty list.
    let printed = succeeded(&[
        "scaling",
        "--suggest",
        "--target",
        "p=16,n=400",
        "--grid",
        "n=50/150",
        &file,
    ]);
    assert!(
        printed.contains(
            "to model it, n needs a third value, and --grid gives none past 100, 200: give one"
        ),
        "{printed}"
    );
}

/// A call path measured as 0 at every run (RELeARN's "Update #synaptic elements + del
/// synapses", in Extra-P's test data): both searches predict 0 within 0 to 0, repetitions that
/// agree exactly are not called "no repetitions", and --suggest says why it has nothing to offer.
#[test]
fn a_call_path_that_took_no_time_at_any_run_is_predicted_0_and_says_why_nothing_narrows_it() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION idle\nMETRIC time\nDATA 0 0\nDATA 0 0\nDATA 0 0\nDATA 0 0\nDATA 0 0\n",
    );
    let file = file.as_str();
    let printed = succeeded(&["scaling", "--robust", "--target", "p=64", file]);
    assert!(printed.contains("repetitions agree exactly"), "{printed}");
    assert_eq!(
        printed
            .matches("at p=64: 0 s (95 % interval 0 s to 0 s)")
            .count(),
        2,
        "{printed}"
    );
    let out = yosoku(&["scaling", "--suggest", "--target", "p=64", "--json", file]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert!(
        line["why_none"]
            .as_str()
            .is_some_and(|w| w.contains("every value measured is 0")),
        "{line}"
    );
    assert_eq!(line["prediction"]["high"], 0.0, "{line}");
}

/// JSON values carry their metric's unit: a count of visits is never written under a `_secs`
/// key (the suggestions once were, whatever the metric), a time keeps its `_secs` keys.
#[test]
fn scaling_json_carries_each_metric_s_unit_and_seconds_only_for_times() {
    let (_dir, file) = extrap_text_file(
        "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION solve\nMETRIC visits\nDATA 1\nDATA 2\nDATA 4\nDATA 8\nDATA 16\nMETRIC time\nDATA 1e-7\nDATA 1.1e-7\nDATA 1.2e-7\nDATA 1.3e-7\nDATA 1.4e-7\n",
    );
    let file = file.as_str();
    for suggest in [false, true] {
        let mut args = vec!["scaling", "--json", "--target", "p=64", file];
        if suggest {
            args.push("--suggest");
        }
        let out = yosoku(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let lines: Vec<serde_json::Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        for line in &lines {
            let time = line["metric"] == "time";
            assert_eq!(line["unit"], if time { "s" } else { "count" }, "{line}");
            if suggest {
                assert!(line["predicted"].as_f64().is_some(), "{line}");
                assert_eq!(line.get("predicted_secs").is_some(), time, "{line}");
                assert_eq!(
                    line.get("model_half_width_95_secs").is_some(),
                    time,
                    "{line}"
                );
            }
        }
    }
}

/// Extra-P's command is told a file's format by a flag, so users' files carry any name:
/// `yosoku scaling` tells the format by what the file holds (Extra-P's legacy JSON under
/// `.JSON`, Talpas under `.txt`, text under no extension), and refuses the formats Extra-P
/// reads that it does not with the `extrap` command that converts them.
#[test]
fn scaling_tells_a_file_s_format_by_what_it_holds() {
    let data = repo().join("crates/core/regression/tests/data/extrap");
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("experiment");
    std::fs::copy(data.join("text/one_parameter_1.txt"), &bare).unwrap();
    for (file, model) in [
        (
            data.join("json/input_1.JSON"),
            "sweep / time: 1.500000e0 + 5.000000e-1 * x^(1)",
        ),
        (
            data.join("talpas/talpas_1.txt"),
            "compute / time: -1.298818e0 + 2.018256e-1 * x^(2)",
        ),
        (
            bare.clone(),
            "compute / time: -8.897934e-1 + 2.016824e-1 * x^(2)",
        ),
    ] {
        let out = yosoku(&["scaling", file.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains(model), "{}", text(&out.stdout));
    }
    // An Extra-P 3 experiment (binary): read, its saved models said to be left.
    let extrap3 = data.join("extrap3/experiment_3");
    let out = yosoku(&["scaling", extrap3.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("met1 / test: "),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("models Extra-P 3 saved in the file are not read"),
        "{}",
        text(&out.stderr)
    );
    let cut = dir.path().join("experiment_3");
    std::fs::write(&cut, &std::fs::read(&extrap3).unwrap()[..200]).unwrap();
    let out = yosoku(&["scaling", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("experiment_3: byte ")
            && text(&out.stderr).contains("the file ends inside"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn scaling_models_extrap_s_files_and_refuses_one_that_is_not() {
    let data = repo().join("crates/core/regression/tests/data/extrap");
    let text_file = data.join("text/two_parameter_1.txt");
    let out = yosoku(&["scaling", text_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Extra-P 4.2.5's model of this file (pipelines.rs checks the same through scaling_model).
    assert!(
        text(&out.stdout).contains("1.374208e0 + 6.698080e0 * log2(y)^(1) + 4.384166e-2 * x^(3/2) * log2(x)^(2) * log2(y)^(1)"),
        "{}",
        text(&out.stdout)
    );
    // --robust: the noise-resilient model under each Extra-P-compatible one, unchanged.
    let out = yosoku(&["scaling", "--robust", text_file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains("1.374208e0 + 6.698080e0 * log2(y)^(1)"),
        "{printed}"
    );
    assert!(printed.contains("    robust: "), "{printed}");
    assert!(printed.contains("repetitions vary by 1.10 %"), "{printed}");
    let out = yosoku(&["scaling", "--robust", "--json", text_file.to_str().unwrap()]);
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert!(line["robust"]["noise_pct"].as_f64().is_some(), "{line}");
    assert!(line["robust"]["terms"].as_array().is_some(), "{line}");
    // A NaN repetition is left out and said on stderr with its line; stdout stays the models.
    let dir = tempfile::tempdir().unwrap();
    let nan = dir.path().join("nan.txt");
    std::fs::write(
        &nan,
        "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION solve\nMETRIC time\nDATA 1.0 1.1\nDATA 2.1 nan\nDATA 4.0\nDATA 8.2\nDATA 15.9\n",
    )
    .unwrap();
    let out = yosoku(&["scaling", "--json", nan.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("nan.txt: line 6: region `solve`, metric `time`: 1 of 2 repetitions are not finite numbers and are left out"),
        "{}",
        text(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["callpath"], "solve", "{line}");
    // A constant's adjusted R^2: 1 in JSON, as Extra-P writes it; in words, none.
    let flat = dir.path().join("flat.txt");
    std::fs::write(
        &flat,
        "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION wait\nMETRIC time\nDATA 1.0\nDATA 1.1\nDATA 0.9\nDATA 1.0\nDATA 1.05\n",
    )
    .unwrap();
    let out = yosoku(&["scaling", flat.to_str().unwrap()]);
    assert!(
        text(&out.stdout).contains("adjusted R^2 - (a constant)"),
        "{}",
        text(&out.stdout)
    );
    let out = yosoku(&["scaling", "--json", flat.to_str().unwrap()]);
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["terms"].as_array().map(Vec::len), Some(0), "{line}");
    assert_eq!(line["ar2"], 1.0, "{line}");
    // --suggest: the next runs to measure for a prediction at x=100, y=10, y counting the
    // processes; a target that leaves a parameter out, or names another, is refused by name.
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--target",
        "x=100,y=10",
        "--cost-parameter",
        "y",
        text_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains("at x=100, y=10 the robust model predicts"),
        "{printed}"
    );
    // The fit's own uncertainty, which the runs narrow, told apart from the calibrated interval.
    assert!(
        printed.contains("its own fit is uncertain by +- ")
            && printed.contains("the interval is calibrated on the file's held-out points"),
        "{printed}"
    );
    assert!(printed.contains("      1. x="), "{printed}");
    // Its one metric is no time (`metr`): a run costs one, times its processes.
    assert!(
        printed.contains("the most narrowing per process-run (the file measures no time)"),
        "{printed}"
    );
    assert!(
        printed.contains("the runs take 10 process-runs"),
        "{printed}"
    );
    // A file of times: a run costs its longest call path's time, in core-seconds with a
    // parameter counting processes, never less than a run measured at smaller values.
    let timed = data.join("text/one_parameter_1.txt");
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--target",
        "x=100",
        "--cost-parameter",
        "x",
        timed.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains("per core-s of runs (a run as long as its longest call path) first"),
        "{printed}"
    );
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--target",
        "x=100",
        text_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--target gives no value of the parameter `y` (expected x, y)"),
        "{}",
        text(&out.stderr)
    );
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--target",
        "z=1,y=2",
        text_file.to_str().unwrap(),
    ]);
    assert!(
        text(&out.stderr).contains("--target names `z`"),
        "{}",
        text(&out.stderr)
    );
    // --grid: the next values on the user's grid (y by fours, x by tens), not the inferred
    // ones; a parameter the file lacks is refused by name, a grid that is none at parsing.
    let suggest_on_grid = |grid: &str| {
        yosoku(&[
            "scaling",
            "--suggest",
            "--target",
            "x=100,y=10",
            "--grid",
            grid,
            text_file.to_str().unwrap(),
        ])
    };
    let out = suggest_on_grid("y=x4,x=+10");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("x=70, y="), "{printed}");
    // Every run proposed lies on the grid: y measured (1 to 5), its next value 20 or the
    // target's 10, never the inferred step's 6; x measured (20 to 60), 70 or the target's 100.
    let proposed: Vec<(&str, &str)> = printed
        .lines()
        .filter_map(|l| l.trim().split_once(". x=")?.1.split_once(':'))
        .filter_map(|(configuration, _)| configuration.split_once(", y="))
        .collect();
    assert!(!proposed.is_empty(), "{printed}");
    for (x, y) in proposed {
        assert!(
            ["20", "30", "40", "50", "60", "70", "100"].contains(&x),
            "x={x}: {printed}"
        );
        assert!(
            ["1", "2", "3", "4", "5", "10", "20"].contains(&y),
            "y={y}: {printed}"
        );
    }
    for (grid, code, said) in [
        (
            "z=cubes",
            1,
            "--grid names `z`, but the file's parameters are x, y",
        ),
        ("y=hexagons", 2, "expected cubes, squares"),
    ] {
        let out = suggest_on_grid(grid);
        assert_eq!(out.status.code(), Some(code), "{grid}");
        assert!(text(&out.stderr).contains(said), "{}", text(&out.stderr));
    }
    // --suggest --json: one JSON line per call path, its runs to measure by name.
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--json",
        "--target",
        "x=10,y=2",
        text_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line: serde_json::Value =
        serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(line["target"]["x"], 10.0, "{line}");
    let next = line["next"].as_array().unwrap();
    assert!(!next.is_empty(), "{line}");
    assert!(next[0]["configuration"]["y"].is_number(), "{line}");
    assert!(next[0]["cost"].as_f64().unwrap() > 0.0, "{line}");
    // A flat time per process measured with 30 % noise: the points show no trend beyond it,
    // so measured configurations are offered again, beside the ranked runs (text and JSON).
    let noisy = dir.path().join("noisy.txt");
    std::fs::write(
        &noisy,
        "PARAMETER p\nPOINTS 2 4 8 16\nREGION solve\nMETRIC time\nDATA 13 7.5\nDATA 8 12.5\nDATA 12 8.5\nDATA 7 12\n",
    )
    .unwrap();
    let suggest_noisy = |json: bool| {
        let mut args = vec!["scaling", "--suggest", "--target", "p=32"];
        args.extend(["--cost-parameter", "p", noisy.to_str().unwrap()]);
        if json {
            args.push("--json");
        }
        yosoku(&args)
    };
    let out = suggest_noisy(false);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("      1. p=32: "), "{printed}");
    assert!(
        printed.contains("the points show no trend beyond their noise"),
        "{printed}"
    );
    assert!(
        printed.contains("      repeat p=2 again (measured already): "),
        "{printed}"
    );
    let out = suggest_noisy(true);
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["next"][0]["repeat"], false, "{line}");
    assert_eq!(line["repeats"][0]["repeat"], true, "{line}");
    assert_eq!(line["repeats"].as_array().unwrap().len(), 4, "{line}");
    // A value no model can be evaluated at is refused before any file is read.
    for target in ["x=-8,y=2", "x=0,y=2"] {
        let out = yosoku(&[
            "scaling",
            "--suggest",
            "--target",
            target,
            text_file.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{target}");
        assert!(
            text(&out.stderr).contains("a parameter's value is a positive number"),
            "{}",
            text(&out.stderr)
        );
        assert!(text(&out.stdout).is_empty());
    }
    // A cost parameter that is not one of the file's is refused by name, before any ranking.
    let out = yosoku(&[
        "scaling",
        "--suggest",
        "--target",
        "x=100,y=10",
        "--cost-parameter",
        "ranks",
        text_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("--cost-parameter `ranks` is not a parameter of the file (x, y)"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    let saved = data.join("comparison/lulesh_with_tags.extra-p");
    // --target without --suggest: each model's prediction there with its 95 % interval,
    // calibrated on the file's own held-out points, and a sentence per search saying how.
    let out = yosoku(&[
        "scaling",
        "--robust",
        "--target",
        "s=60",
        saved.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("    at s=60: "), "{printed}");
    assert!(printed.contains("      at s=60: "), "{printed}");
    assert!(printed.contains("(95 % interval "), "{printed}");
    assert!(
        printed.contains("  intervals: 95 % intervals calibrated on 48 held-out points (each call"),
        "{printed}"
    );
    // The robust search's checks: the call paths that keep 4 sizes without their largest.
    assert!(
        printed.contains("  robust intervals: 95 % intervals calibrated on 43 held-out points"),
        "{printed}"
    );
    // Metrics in two units (times, FLOPs), each unit calibrated on its own call paths' checks:
    // exact counts among times would narrow the times' intervals.
    let two_units = data.join("text/one_parameter_5.txt");
    let out = yosoku(&["scaling", "--target", "x=100", two_units.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    for unit in ["times", "FLOPs"] {
        assert!(
            printed.contains(&format!("  intervals of {unit}: only 2 held-out points")),
            "{printed}"
        );
    }
    let out = yosoku(&[
        "scaling",
        "--json",
        "--target",
        "s=60",
        saved.to_str().unwrap(),
    ]);
    let first: serde_json::Value =
        serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    let p = &first["prediction"];
    assert_eq!(p["target"]["s"], 60.0, "{first}");
    assert!(
        p["low"].as_f64().unwrap() < p["value"].as_f64().unwrap()
            && p["value"].as_f64().unwrap() < p["high"].as_f64().unwrap(),
        "{first}"
    );
    assert_eq!(p["calibration"]["basis"], "conformal", "{first}");
    assert_eq!(p["calibration"]["checks"], 48, "{first}");
    let out = yosoku(&["scaling", "--json", saved.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 62);
    assert!(
        lines
            .iter()
            .any(|l| l["terms"].as_array().is_some_and(|t| !t.is_empty()))
    );
    // Call paths measured at fewer than 3 sizes are modelled as Extra-P models them, and the
    // parameter measured at one or two values is named with them.
    assert!(lines.iter().all(|l| l.get("error").is_none()));
    assert!(lines.iter().any(|l| {
        l["few_values"][0]["values"]
            .as_array()
            .is_some_and(|v| v.len() == 2)
    }));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("notes.extra-p");
    std::fs::write(&bad, "not a zip").unwrap();
    let out = yosoku(&[
        "scaling",
        text_file.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    // Issue 56, item 6: the good file's models are printed all the same, the bad one is named,
    // and the command fails.
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("two_parameter_1.txt (parameters: x, y)"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("notes.extra-p: not an experiment Extra-P saved"),
        "{}",
        text(&out.stderr)
    );
    let twice = dir.path().join("twice.txt");
    std::fs::write(&twice, "PARAMETER x\nPOINTS (1) (2)\nPOINTS (1)\n").unwrap();
    let out = yosoku(&[
        "scaling",
        bad.to_str().unwrap(),
        twice.to_str().unwrap(),
        text_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("2 of 3 files could not be modelled"),
        "{stderr}"
    );
    assert!(
        stderr.contains("twice.txt:3: point [1.0] given twice: at line 2 and here"),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("two_parameter_1.txt"));
    // A directory without Cube profiles is named and what to give said.
    let out = yosoku(&["scaling", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("a directory without Cube profiles"),
        "{}",
        text(&out.stderr)
    );
}

/// A directory of Cube profiles, one folder per run named by its parameters, read as Extra-P's
/// `--cube` reads it, each run's locations combined as `--scaling` says; a profile alone, or a
/// set whose folders name other parameters, refused saying what to give.
#[test]
fn scaling_reads_a_set_of_cube_profiles() {
    let data = repo().join("crates/core/regression/tests/data/cube");
    let set = data.join("simple_threaded");
    let out = yosoku(&["scaling", set.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Extra-P 4.2.5's model of the set (`extrap --cube`), the mean over 4 threads.
    assert!(
        text(&out.stdout).contains("main->foo / time: -1.588822e-15 + 2.475000e0 * f^(1)"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("the mean over its 4 locations"),
        "{}",
        text(&out.stderr)
    );
    let out = yosoku(&["scaling", "--scaling", "strong", set.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("main->foo / time: -6.355287e-15 + 9.900000e0 * f^(1)"),
        "{}",
        text(&out.stdout)
    );
    // Inclusive values: `main` is the whole run, 0.7 f of its own and its callees' 2.475 f,
    // 2.075 f and 3.3 f (Extra-P's reader with `use_inclusive_measurements` reads the same).
    let out = yosoku(&["scaling", "--inclusive", set.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("main / time: -4.766466e-15 + 8.550000e0 * f^(1)")
            && text(&out.stderr).contains("each run's inclusive value of a call path"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // --median with repetitions: a point's median over every location of every run there, as
    // Extra-P's (2 runs of 4 locations at each point; Extra-P 4.2.5's median model `1.083333`,
    // tools/extrap/models.py --median), not the median of the runs' own medians.
    let dir = tempfile::tempdir().unwrap();
    let runs = [("q1.r1", 1), ("q1.r2", 2), ("q2.r1", 3), ("q2.r2", 4)];
    for (run, f) in runs.into_iter().chain([("q3.r1", 5), ("q3.r2", 1)]) {
        let to = dir.path().join(format!("app.{run}"));
        std::fs::create_dir_all(&to).unwrap();
        let profile = set.join(format!("example.f{f}/cube-example{f}.cubex"));
        std::fs::copy(profile, to.join("p.cubex")).unwrap();
    }
    let args = ["scaling", "--median", "--metric", "time"];
    let out = yosoku(&[&args[..], &[dir.path().to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("  main / time: 1.083333e0\n")
            && text(&out.stderr).contains("the median over every location of every run there"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let file = data.join("../extrap/text/one_parameter_1.txt");
    let out = yosoku(&["scaling", "--inclusive", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("one_parameter_1.txt: inclusive values are read from a set of Cube profiles"),
        "{}",
        text(&out.stderr)
    );
    let one = set.join("example.f1/cube-example1.cubex");
    let out = yosoku(&["scaling", one.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cube-example1.cubex:1: a tar archive, as a Cube profile")
            && text(&out.stderr).contains("give the directory of the set"),
        "{}",
        text(&out.stderr)
    );
    let out = yosoku(&["scaling", data.join("negative_example2").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "x10y1z1/profile.cubex: parameters [\"x\", \"y\", \"z\"], where mm.y1x1z1's are \
             [\"y\", \"x\", \"z\"]"
        ),
        "{}",
        text(&out.stderr)
    );
    // A damaged profile is named with what is wrong.
    let dir = tempfile::tempdir().unwrap();
    for p in [1, 2, 3] {
        let run = dir.path().join(format!("app.p{p}"));
        std::fs::create_dir(&run).unwrap();
        std::fs::write(run.join("profile.cubex"), b"not a tar").unwrap();
    }
    let out = yosoku(&["scaling", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("app.p1/profile.cubex: not a tar archive"),
        "{}",
        text(&out.stderr)
    );
}

/// `--metric` prints one metric's models (of a Score-P set's seven), with the figures printed
/// without it, and names a file's metrics where it has none of those asked; `--min-share`
/// prints a Cube set's call paths that take a share of their run's time.
#[test]
fn scaling_prints_only_the_metrics_asked_with_the_same_figures() {
    let set = repo().join("crates/core/regression/tests/data/cube/single_parameter");
    let set = set.to_str().unwrap();
    let every = yosoku(&["scaling", "--target", "x=2000", set]);
    let time = yosoku(&["scaling", "--target", "x=2000", "--metric", "time", set]);
    assert!(time.status.success(), "{}", text(&time.stderr));
    let lines = |out: &std::process::Output| -> Vec<String> {
        text(&out.stdout).lines().map(str::to_owned).collect()
    };
    let (every, time) = (lines(&every), lines(&time));
    let models: Vec<&String> = time.iter().filter(|l| l.contains(" / ")).collect();
    assert_eq!(models.len(), 4, "{time:?}");
    assert!(models.iter().all(|l| l.contains(" / time: ")), "{time:?}");
    // Every line, the predictions and the calibration's sentence among them, as without it.
    assert!(time.iter().all(|l| every.contains(l)), "{time:?}");
    assert!(every.len() > time.len());
    // Each unit's intervals are calibrated apart, and the calibrations of the units printed
    // are printed: times alone with --metric time; without it, the PAPI counters' too, FLOPs
    // apart from the hardware events (cache misses), and both apart from the visits.
    let calibrated = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| l.trim().strip_prefix("intervals of "))
            .map(|l| l.split(':').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(calibrated(&time), ["times"], "{time:?}");
    // So does --suggest's heading.
    let suggest = yosoku(&[
        "scaling",
        "--suggest",
        "--target",
        "x=2000",
        "--metric",
        "time",
        set,
    ]);
    assert!(suggest.status.success(), "{}", text(&suggest.stderr));
    let printed = text(&suggest.stdout).to_owned();
    let headings: Vec<&str> = (printed.lines())
        .filter(|l| l.trim_start().starts_with("robust intervals"))
        .collect();
    assert_eq!(headings.len(), 1, "{headings:?}");
    assert!(
        headings[0].starts_with("  robust intervals of times: "),
        "{headings:?}"
    );
    assert_eq!(
        calibrated(&every),
        ["counts", "times", "FLOPs", "hardware events"],
        "{every:?}"
    );
    // --min-share: of Extra-P's threaded example (runs of 8.55 f s), `main`'s own 0.7 f s is
    // under 10 % of the run at every point; its three callees are above.
    let threaded = repo().join("crates/core/regression/tests/data/cube/simple_threaded");
    let args = ["scaling", "--metric", "time", "--min-share", "10"];
    let out = yosoku(&[&args[..], &[threaded.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let printed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" / "))
        .map(|l| l.split(':').next().unwrap().trim())
        .collect();
    assert_eq!(
        printed,
        [
            "main->foo / time",
            "main->bar / time",
            "main->omp parallel / time"
        ]
    );
    assert!(
        text(&out.stderr).contains("1 of 4 call paths under 10 % of their run's time"),
        "{}",
        text(&out.stderr)
    );
    let file = repo().join("crates/core/regression/tests/data/extrap/text/one_parameter_1.txt");
    let out = yosoku(&["scaling", "--min-share", "1", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--min-share reads a set of Cube profiles"),
        "{}",
        text(&out.stderr)
    );
    let out = yosoku(&["scaling", "--metric", "flops", set]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "no metric flops (--metric); the file has: PAPI_FP_OPS, PAPI_L2_TCM, PAPI_L3_TCM, \
             max_time, min_time, time, visits"
        ),
        "{}",
        text(&out.stderr)
    );
}

/// `--format` takes the runner's export formats by name, and a name it lacks is refused with
/// every name it takes, before anything is read or written.
#[test]
fn an_unknown_export_format_is_refused_with_the_formats_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = yosoku(&[
        "export",
        dir.path().to_str().unwrap(),
        "--format",
        "arrow",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = text(&o.stderr);
    assert!(
        e.contains("invalid value 'arrow' for '--format <FORMAT>'"),
        "{e}"
    );
    assert!(
        e.contains("parquet, csv, chrome-trace, extrap, bundle"),
        "{e}"
    );
    assert!(!out.exists());
}
