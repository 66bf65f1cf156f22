#![no_main]

// The helpers as `crate::yosoku_fuzz`, as the target files expect them.
extern crate yosoku_fuzz;

use libfuzzer_sys::fuzz_target;

#[path = "../src/targets/cuda.rs"]
#[allow(dead_code)] // the file's other targets are other binaries
mod targets;

fuzz_target!(|data: &[u8]| targets::saved_transfer_model(data));
