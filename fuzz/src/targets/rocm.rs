//! The fuzz targets of the `rocm_profiler` plugin's readers: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_rocm.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use yosoku_plugin_rocm_profiler::{dispatches, rocprofv3_json, sysinfo};

use crate::yosoku_fuzz::{check_located, input, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[("rocprof", rocprof)];

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
