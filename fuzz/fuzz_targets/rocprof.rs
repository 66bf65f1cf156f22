#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{check_located, input, text};
use yosoku_plugin_rocm_profiler::{dispatches, rocprofv3_json, sysinfo};

// The per-file readers; the tables are built from a whole workload directory (read_paths).
fuzz_target!(|data: &[u8]| {
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
});
