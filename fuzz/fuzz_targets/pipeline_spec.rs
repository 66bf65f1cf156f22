#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{INPUT, check_located, text};
use yosoku_pipeline::PipelineSpec;

fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    if let Err(e) = PipelineSpec::parse(INPUT, text) {
        check_located(&e.to_string());
    }
});
