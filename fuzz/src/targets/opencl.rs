//! The fuzz target of the `opencl` plugin's run record (`opencl-run.json`, what its `logs`
//! collector reads back): what it runs on one input, and asserts beyond "no panic". One file per
//! plugin, so that a binary links one plugin: each plugin exports the same C entry point.
//! Included by the target's binary (`fuzz_targets/`) and by the replay test
//! (`crates/app/runner/tests/opencl.rs`), each of which has the helpers of `fuzz/src/lib.rs` as
//! `crate::yosoku_fuzz`.

use yosoku_plugin_opencl::record::{RunRecord, tables};

use crate::yosoku_fuzz::{check_located, input, tables_or_located, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[("opencl_record", opencl_record)];

/// A run record as the `logs` collector reads it: a record that parses gives canonical tables
/// that pass their checks, or an error that names the file and the key it is about.
pub fn opencl_record(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match RunRecord::parse(input(), text) {
        Ok(record) => tables_or_located(tables(&[record])),
        Err(e) => check_located(&e.to_string()),
    }
}
