#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{input, tables_or_located, text};
use yosoku_plugin_cuda_profiler::nvprof;

fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    tables_or_located(nvprof::read(input(), text, &nvprof::Labels::default()).and_then(|t| t.finish()));
});
