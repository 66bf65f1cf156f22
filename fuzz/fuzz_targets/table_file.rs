#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{INPUT, check_located};
use yosoku_plugin_table::{Format, Frame};

// A user's own table as the `table` plugin reads it, in the format the first byte picks (CSV,
// TSV, Parquet, Arrow IPC file or stream): no panic, no allocation beyond what the bytes can
// hold, and an error that names the file and a place in it (or is about the file as a whole).
fuzz_target!(|data: &[u8]| {
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
});
