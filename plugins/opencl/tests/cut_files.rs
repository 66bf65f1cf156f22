//! The record importer (collector `logs`) on the committed run record cut short at each of its
//! last 200 bytes: each cut copy is refused or imports rows of the whole record unchanged, never
//! a changed value (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use yosoku_plugin_opencl::record::{RunRecord, tables};
use yosoku_plugin_sdk::testing::cut_copies;

#[test]
fn a_run_record_cut_short_never_imports_a_changed_value() {
    let file = "opencl-run.json";
    let contents = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../pipelines/data/opencl/pocl-xeon-2vcpu.json"),
    )
    .unwrap();
    let outcome = cut_copies(
        &[(file, &contents)],
        file,
        200,
        &[
            "runs",
            "counters",
            "kernel_timings",
            "kernel_launches",
            "devices",
        ],
        |dir| tables(&[RunRecord::read(&dir.join(file))?]),
    )
    .unwrap();
    assert!(outcome.refused > 0, "{outcome:?}");
}
