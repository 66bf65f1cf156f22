#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{INPUT, check_located, check_tables};
use yosoku_traces::chrome;

// As the traces plugin reads a file that fits in memory: the error is prefixed with the path.
fuzz_target!(|data: &[u8]| {
    match chrome::import_slice(data, "fuzz") {
        Ok(imported) => check_tables([("spans", &imported.spans)]),
        Err(e) => check_located(&format!("{INPUT}: {e}")),
    }
});
