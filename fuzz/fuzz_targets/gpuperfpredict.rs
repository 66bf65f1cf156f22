#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{input, tables_or_located, text};
use yosoku_plugin_cuda_profiler::gpuperfpredict::Dataset;

fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    let mut dataset = Dataset::new();
    tables_or_located(dataset.read(input(), text).and_then(|()| dataset.finish()));
});
