#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_bundle::Manifest;
use yosoku_fuzz::{INPUT, check_located, text};

// The reader prefixes the manifest path; the parse error must say where in it.
fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    if let Err(e) = Manifest::from_json(text) {
        check_located(&format!("{INPUT}: {e}"));
    }
});
