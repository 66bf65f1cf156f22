#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{input, tables_or_located, text};
use yosoku_plugin_csx600_sdk_log::{log::Log, microbench_tables, profile_tables};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    match Log::parse(input(), text) {
        Ok(log) => {
            tables_or_located(microbench_tables(input(), &log));
            tables_or_located(profile_tables(&log));
        }
        Err(e) => yosoku_fuzz::check_located(&e.to_string()),
    }
});
