//! `yosoku metrics`: the canonical names, a bundle's unmapped names, and a user's own mapping
//! file (`YOSOKU_METRICS`) taken up by a real import.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
use common::plugin_dir;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn yosoku(args: &[&str], user_file: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_yosoku"));
    cmd.args(args)
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .env_remove("YOSOKU_METRICS");
    if let Some(f) = user_file {
        cmd.env("YOSOKU_METRICS", f);
    }
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A pipeline importing a real ncu raw page (a matrix-multiply sweep on an H100), with `extra`
/// config keys.
fn import_pipeline(dir: &Path, extra: &str) -> PathBuf {
    let csv =
        repo().join("plugins/cuda_profiler/tests/data/ncu/ncu_raw_sweep_matmul_tiled_h100.csv");
    let file = dir.join("import.toml");
    std::fs::write(
        &file,
        format!(
            "[pipeline]\nname = \"import\"\n\n[sources.ncu]\nplugin = \"cuda_profiler\"\ncollector = \"ncu\"\nconfig = {{ path = {:?}{extra} }}\n",
            csv.display().to_string()
        ),
    )
    .unwrap();
    file
}

const MINE: &str = "[[metric]]\nname = \"occupancy_limit_barriers\"\nkind = \"config\"\ndoc = \"Blocks per SM the barriers allow\"\naliases = [{ tool = \"ncu\", name = \"launch__occupancy_limit_barriers\" }]\n";

#[test]
fn metrics_lists_canonical_names_with_each_tools_names() {
    let out = yosoku(&["metrics", "--tool", "ncu", "dram_read_bytes"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("dram_read_bytes  (count; metrics.toml)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ncu             dram__bytes_read.sum"),
        "{stdout}"
    );
    // The rules are listed when no name is asked for.
    let out = yosoku(&["metrics", "--tool", "ncu", "--kind", "ratio"], None);
    assert!(text(&out.stdout).contains("*.pct_of_peak_*"));
    // A tool or kind that does not exist is an error that lists the ones that do.
    let out = yosoku(&["metrics", "--kind", "speed"], None);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("expected one of count, config"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_users_mapping_file_names_what_the_bundle_left_unmapped() {
    let dir = tempfile::tempdir().unwrap();
    let pipeline = import_pipeline(dir.path(), "");
    let bundle = dir.path().join("bundle");
    let run = |user: Option<&Path>| {
        yosoku(
            &[
                "run",
                pipeline.to_str().unwrap(),
                "-o",
                bundle.to_str().unwrap(),
                "-q",
            ],
            user,
        )
    };
    let out = run(None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = yosoku(&["metrics", "--unmapped", bundle.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    // Unmapped by name, but with the kind a naming rule gives it.
    let line = listed
        .lines()
        .find(|l| l.contains("launch__occupancy_limit_barriers"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains("config"), "{line}");
    // The device's attributes are not counters: not listed.
    assert!(!listed.contains("device__attribute"), "{listed}");

    // The user names it; the next import maps it.
    let user = dir.path().join("mine.toml");
    std::fs::write(&user, MINE).unwrap();
    let out = run(Some(&user));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&yosoku(&["metrics", "--unmapped", bundle.to_str().unwrap()], None).stdout);
    assert!(
        !listed.contains("launch__occupancy_limit_barriers"),
        "{listed}"
    );
    let out = yosoku(&["metrics", "occupancy_limit_barriers"], Some(&user));
    assert!(
        text(&out.stdout).contains("(config; "),
        "{}",
        text(&out.stdout)
    );

    // A broken file is an error naming it, and the earlier bundle stays.
    std::fs::write(
        &user,
        "[[metric]]\nname = \"x\"\nkind = \"speed\"\naliases = []\n",
    )
    .unwrap();
    let out = run(Some(&user));
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("mine.toml:3:8: metric `x`: unknown kind `speed`"),
        "{stderr}"
    );
    assert!(bundle.join("manifest.json").exists());
    let out = yosoku(&["metrics"], Some(&user));
    assert!(!out.status.success());
}

#[test]
fn unmapped_needs_a_bundle_with_imports() {
    let dir = tempfile::tempdir().unwrap();
    let out = yosoku(
        &["metrics", "--unmapped", dir.path().to_str().unwrap()],
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot read the bundle"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_sources_metrics_key_names_its_own_mapping_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.toml"), MINE).unwrap();
    // Relative to the pipeline file, as every path of a source's configuration.
    let pipeline = import_pipeline(dir.path(), ", metrics = [\"mine.toml\"]");
    let bundle = dir.path().join("bundle");
    let args = [
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
        "-q",
    ];
    let out = yosoku(&args, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&yosoku(&["metrics", "--unmapped", bundle.to_str().unwrap()], None).stdout);
    assert!(
        !listed.contains("launch__occupancy_limit_barriers"),
        "{listed}"
    );
    assert!(
        listed.contains("launch__occupancy_limit_warps") || listed.contains("of"),
        "{listed}"
    );
    // A file that is not a mapping stops the run before anything is read, naming it, the line
    // and column of the value, and the key.
    std::fs::write(dir.path().join("mine.toml"), "[[metric]]\nname = 3\n").unwrap();
    let out = yosoku(&args, None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("mine.toml:2:8: invalid type")
            && stderr.contains("(a metric mapping named by config key `metrics`)"),
        "{stderr}"
    );
}
