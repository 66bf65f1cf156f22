//! The fuzz targets of the `mpi_timer` plugin's readers: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_mpi.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use yosoku_plugin_mpi_timer::{Run, tau, tau_batches};

use crate::yosoku_fuzz::{check_located, check_tables, input, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[
    ("mpi_timer_log", mpi_timer_log),
    ("tau_profile", tau_profile),
];

pub fn mpi_timer_log(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match yosoku_plugin_mpi_timer::log::parse(input(), text) {
        Ok(log) => {
            let run = Run {
                run_id: "fuzz".to_owned(),
                binding: log.binding.clone(),
                parameters: log.parameters.clone(),
                ranks: vec![log],
            };
            match yosoku_plugin_mpi_timer::tables(&mut [run], None) {
                Ok((blocks, ranks)) => {
                    check_tables([("mpi_blocks", &blocks), ("mpi_ranks", &ranks)])
                }
                Err(e) => check_located(&e.to_string()),
            }
        }
        Err(e) => check_located(&e.to_string()),
    }
}

pub fn tau_profile(data: &[u8]) {
    let Some(text) = text(data) else { return };
    match tau::parse(input(), 0, text) {
        Ok(profile) => match tau_batches("fuzz", &[profile]) {
            Ok((blocks, ranks)) => check_tables([("mpi_blocks", &blocks), ("mpi_ranks", &ranks)]),
            Err(e) => check_located(&e.to_string()),
        },
        Err(e) => check_located(&e.to_string()),
    }
}
