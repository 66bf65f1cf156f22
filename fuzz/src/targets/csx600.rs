//! The fuzz targets of the `csx600_sdk_log` plugin's reader: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_csx600.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use yosoku_plugin_csx600_sdk_log::{log::Log, microbench_tables, profile_tables};

use crate::yosoku_fuzz::{check_located, input, tables_or_located, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[("csx600_log", csx600_log)];

pub fn csx600_log(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match Log::parse(input(), text) {
        Ok(log) => {
            tables_or_located(microbench_tables(input(), &log));
            tables_or_located(profile_tables(&log));
        }
        Err(e) => check_located(&e.to_string()),
    }
}
