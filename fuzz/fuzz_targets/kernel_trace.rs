#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{INPUT, check_located, check_tables};
use yosoku_traces::kernel_trace::{self, LaneBy};

// Read in small chunks, so records straddle chunk ends.
fuzz_target!(|data: &[u8]| {
    let tables = kernel_trace::read(data, 64).and_then(|t| t.tables("fuzz", LaneBy::Sm));
    match tables {
        Ok(t) => check_tables([
            ("trace_records", &t.records),
            ("trace_alignment", &t.alignment),
            ("spans", &t.spans),
        ]),
        Err(e) => check_located(&format!("{INPUT}: {e}")),
    }
});
