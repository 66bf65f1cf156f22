//! The fuzz targets of the `rocm_profiler` plugin's readers: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_rocm.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use yosoku_plugin_rocm_profiler::{compute_db, dispatches, rocprofv3_json, sysinfo};

use crate::yosoku_fuzz::{check_located, check_located_in_database, input, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[
    ("rocprof", rocprof),
    ("rocprof_compute_db", rocprof_compute_db),
];

/// The per-file readers; the tables are built from a whole workload directory (read_paths).
pub fn rocprof(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Err(e) = dispatches::read(input(), text, false) {
        check_located(&e.to_string());
    }
    if let Err(e) = sysinfo::read(input(), text) {
        check_located(&e.to_string());
    }
    if rocprofv3_json::is_rocprofv3_json(text)
        && let Err(e) = rocprofv3_json::read(input(), text)
    {
        check_located(&e.to_string());
    }
}

/// rocprof-compute's analysis database (SQLite), read from the bytes as the plugin reads a
/// file's; its dispatches become tables with the rest of a workload's files (read_paths).
pub fn rocprof_compute_db(data: &[u8]) {
    if let Err(e) = compute_db::read(input(), data) {
        check_located_in_database(&e.to_string());
    }
}
