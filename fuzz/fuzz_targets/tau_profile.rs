#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{check_located, check_tables, input, text};
use yosoku_plugin_mpi_timer::{tau, tau_batches};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    match tau::parse(input(), 0, text) {
        Ok(profile) => match tau_batches("fuzz", &[profile]) {
            Ok((blocks, ranks)) => check_tables([("mpi_blocks", &blocks), ("mpi_ranks", &ranks)]),
            Err(e) => check_located(&e.to_string()),
        },
        Err(e) => check_located(&e.to_string()),
    }
});
