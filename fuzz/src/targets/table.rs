//! The fuzz targets of the `table` plugin's reader: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_table.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use std::path::Path;

use yosoku_plugin_table::{Format, Frame};

use crate::yosoku_fuzz::{INPUT, check_located};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[("table_file", table_file)];

/// A user's own table as the `table` plugin reads it, in the format the first byte picks (CSV,
/// TSV, Parquet, Arrow IPC file or stream): no panic, no allocation beyond what the bytes can
/// hold, and an error that names the file and a place in it (or is about the file as a whole).
pub fn table_file(data: &[u8]) {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let format = [Format::Csv, Format::Tsv, Format::Parquet, Format::Ipc][usize::from(pick % 4)];
    match Frame::from_bytes(Path::new(INPUT), format, bytes.to_vec()) {
        Ok(frame) => {
            for c in 0..frame.columns.len() {
                if frame.is_numeric(c) {
                    let _ = frame.numbers(c);
                }
            }
        }
        Err(e) => check_located(&e.to_string()),
    }
}
