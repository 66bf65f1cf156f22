//! Plugin faults (RELIABILITY.md, "A plugin cannot take yosoku down"): a stream whose schema
//! lies is an error in any mode; a collector in a process of its own (`isolate`) that segfaults,
//! aborts, never returns, streams without end or allocates without bound ends the run with an
//! error that says so, in bounded time, and the bundle that was there is kept.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
use common::{files, plugin_dir};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A pipeline of one dummy source with `collector` and the source's extra TOML (`isolate = ...`).
fn pipeline(dir: &Path, collector: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{collector}.toml"));
    let config = if collector == "synthetic" {
        "config = { device = \"cpu\", programs = [\"a\", \"b\"] }\n"
    } else {
        ""
    };
    std::fs::write(
        &path,
        format!(
            "[pipeline]\nname = \"faults\"\n\n[sources.d]\nplugin = \"dummy\"\ncollector = \"{collector}\"\n{config}{extra}\n"
        ),
    )
    .unwrap();
    path
}

fn yosoku_run(spec: &Path, out: &Path, flags: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_yosoku"))
        .args(["run", "--quiet"])
        .args(flags)
        .arg(spec)
        .arg("-o")
        .arg(out)
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .output()
        .unwrap();
    (output, started.elapsed())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn isolated_faults_end_the_run_with_an_error_and_keep_the_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (good, _) = yosoku_run(&pipeline(dir.path(), "synthetic", ""), &out, &[]);
    assert!(good.status.success(), "{}", stderr(&good));
    let before = files(&out);

    let cases: &[(&str, &str, &str)] = &[
        (
            "segfault",
            "isolate = true",
            "(run in a process of its own) its process died of signal 11 (SIGSEGV, a segmentation fault); this process is unharmed, the run stops here",
        ),
        (
            "abort",
            "isolate = true",
            "(run in a process of its own) its process died of signal 6 (SIGABRT, an abort)",
        ),
        (
            "hang",
            "isolate = { timeout_secs = 1 }",
            "(run in a process of its own) did not finish within 1 s (`timeout_secs`); its process was stopped",
        ),
        (
            "endless_stream",
            "isolate = { timeout_secs = 2 }",
            "(run in a process of its own) did not finish within 2 s (`timeout_secs`); its process was stopped",
        ),
        (
            "unbounded_memory",
            "isolate = { memory_limit_mb = 512, timeout_secs = 60 }",
            "(run in a process of its own) ran out of its memory limit of 512 MiB (`memory_limit_mb`) and was aborted",
        ),
    ];
    for (collector, isolate, expected) in cases {
        let spec = pipeline(dir.path(), collector, isolate);
        let (output, took) = yosoku_run(&spec, &out, &[]);
        let text = stderr(&output);
        eprintln!("{collector}: {:.2} s: {}", took.as_secs_f64(), text.trim());
        assert_eq!(output.status.code(), Some(1), "{collector}: {text}");
        let line = text.lines().last().unwrap_or_default();
        assert!(
            line.starts_with(&format!(
                "error: {}:4:10: source `d`: plugin `dummy`, collector `{collector}`",
                spec.display()
            )),
            "{collector}: {line}"
        );
        assert!(line.contains(expected), "{collector}: {line}");
        assert!(took < Duration::from_secs(30), "{collector}: {took:?}");
        assert_eq!(files(&out), before, "{collector}: the bundle changed");
    }

    // `--isolate` does the same for every source.
    let (output, _) = yosoku_run(&pipeline(dir.path(), "segfault", ""), &out, &["--isolate"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("SIGSEGV"), "{}", stderr(&output));
}

#[test]
fn a_stream_whose_schema_lies_is_an_error_in_this_process_and_in_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for isolate in ["", "isolate = true"] {
        let spec = pipeline(dir.path(), "lying_schema", isolate);
        let (output, _) = yosoku_run(&spec, &out, &[]);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{isolate}: {text}");
        assert!(
            text.contains(
                "plugin `dummy`, collector `lying_schema`, table `runs`: the stream's arrays do not match its schema: column `measured_secs` (Utf8)"
            ),
            "{isolate}: {text}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn an_isolated_collection_gives_the_tables_of_one_in_this_process() {
    let dir = tempfile::tempdir().unwrap();
    let (inside, isolated) = (dir.path().join("inside"), dir.path().join("isolated"));
    let (a, _) = yosoku_run(&pipeline(dir.path(), "synthetic", ""), &inside, &[]);
    let (b, _) = yosoku_run(
        &pipeline(dir.path(), "synthetic", ""),
        &isolated,
        &["--isolate"],
    );
    assert!(
        a.status.success() && b.status.success(),
        "{}{}",
        stderr(&a),
        stderr(&b)
    );
    let tables = |dir: &Path| {
        let mut all = files(dir);
        all.retain(|p, _| p.starts_with("tables"));
        all
    };
    assert!(!tables(&inside).is_empty());
    assert_eq!(tables(&inside), tables(&isolated));
}

#[test]
fn bad_isolate_keys_are_errors_at_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (isolate, expected) in [
        (
            "isolate = \"yes\"",
            ":8:11: source `d`, key `isolate`: expected a boolean or a table of timeout_secs and memory_limit_mb, found string",
        ),
        (
            "isolate = { timeout_secs = -1 }",
            ":8:28: source `d`, key `isolate`, `timeout_secs`: expected a number of seconds above 0",
        ),
        (
            "isolate = { memory_limit_mb = 1.5 }",
            ":8:31: source `d`, key `isolate`, `memory_limit_mb`: expected a whole number of MiB above 0",
        ),
        (
            "isolate = { memory = 1 }",
            ":8:13: source `d`, key `isolate`: unknown key `memory`; expected timeout_secs, memory_limit_mb",
        ),
    ] {
        let spec = pipeline(dir.path(), "synthetic", isolate);
        let (output, _) = yosoku_run(&spec, &out, &[]);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{isolate}: {text}");
        assert!(
            text.contains(&format!("{}{expected}", spec.display())),
            "{isolate}: {text}"
        );
    }
}
