//! The fuzz targets of the `opencl` plugin's readers of user files: its run record
//! (`opencl-run.json`, what its `logs` collector reads back), a kernel file (the TOML that
//! declares a user's own kernel) and the OpenCL C source it names (its kernels' signatures): what
//! each runs on one input, and asserts beyond "no panic". One file per
//! plugin, so that a binary links one plugin: each plugin exports the same C entry point.
//! Included by the targets' binaries (`fuzz_targets/`) and by the replay test
//! (`crates/app/runner/tests/opencl.rs`), each of which has the helpers of `fuzz/src/lib.rs` as
//! `crate::yosoku_fuzz`.

use std::path::Path;

use yosoku_plugin_opencl::declared::{KernelFile, signature};
use yosoku_plugin_opencl::record::{RunRecord, tables};
use yosoku_plugin_sdk::PluginError;

use crate::yosoku_fuzz::{check_located, input, tables_or_located, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[
    ("opencl_record", opencl_record),
    ("opencl_kernel_file", opencl_kernel_file),
    ("opencl_kernel_source", opencl_kernel_source),
];

/// A run record as the `logs` collector reads it: a record that parses gives canonical tables
/// that pass their checks, or an error that names the file and the key it is about.
pub fn opencl_record(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match RunRecord::parse(input(), text) {
        Ok(record) => tables_or_located(tables(&[record])),
        Err(e) => check_located(&e.to_string()),
    }
}

/// A kernel file as the `run` collector reads it before any launch: every configuration resolved
/// (its arguments, NDRange and work counters evaluated at its sizes), or an error that names the
/// file and a line and column in it. The kernel source it names is one of the repository's
/// examples, found by its file name (`saxpy.cl`, `copy.cl`); any other is missing.
pub fn opencl_kernel_file(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match KernelFile::parse_with_source(input(), text, &example_source) {
        Ok(file) => {
            for c in &file.configurations {
                let _ = (c.counters(), c.check_text(), c.size_text());
            }
        }
        Err(e) => check_located(&e.to_string()),
    }
}

/// The example kernel sources a fuzzed kernel file may name.
fn example_source(path: &Path) -> Result<String, PluginError> {
    const SOURCES: &[(&str, &str)] = &[
        (
            "saxpy.cl",
            include_str!("../../../plugins/opencl/kernel-files/saxpy.cl"),
        ),
        (
            "copy.cl",
            include_str!("../../../plugins/opencl/kernels/copy.cl"),
        ),
    ];
    let name = path.file_name().and_then(|n| n.to_str());
    SOURCES
        .iter()
        .find(|(file, _)| Some(*file) == name)
        .map(|(_, source)| (*source).to_owned())
        .ok_or_else(|| PluginError::new(format!("{}: no such file", path.display())))
}

/// An OpenCL C source as a kernel file's reader scans it for its kernels' signatures (before the
/// device compiler sees it, which judges the rest of the C): every kernel found has a name that
/// is one word.
pub fn opencl_kernel_source(data: &[u8]) {
    let Some(text) = text(data) else { return };
    for kernel in signature::kernels(text) {
        assert!(
            !kernel.name.is_empty()
                && kernel
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "kernel name `{}`",
            kernel.name
        );
    }
}
