#![no_main]

use libfuzzer_sys::fuzz_target;

use yosoku_fuzz::{check_located, check_tables, input, text};
use yosoku_plugin_mpi_timer::{Run, log, tables};

fuzz_target!(|data: &[u8]| {
    let Some(text) = text(data) else { return };
    match log::parse(input(), text) {
        Ok(log) => {
            let run = Run { run_id: "fuzz".to_owned(), binding: log.binding.clone(), parameters: log.parameters.clone(), ranks: vec![log] };
            match tables(&mut [run], None) {
                Ok((blocks, ranks)) => check_tables([("mpi_blocks", &blocks), ("mpi_ranks", &ranks)]),
                Err(e) => check_located(&e.to_string()),
            }
        }
        Err(e) => check_located(&e.to_string()),
    }
});
