//! The fuzz targets of the `cuda_profiler` plugin's readers: every seed and regression replayed through the
//! target's checks (`fuzz_replay/mod.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code and the fuzz checks

#[path = "../../../../fuzz/src/lib.rs"]
#[allow(dead_code)] // the targets use some of the helpers
mod yosoku_fuzz;

#[path = "../../../../fuzz/src/targets/cuda.rs"]
mod targets;

mod fuzz_replay;

#[test]
fn every_seed_and_regression_passes_its_targets_checks() {
    let replayed = fuzz_replay::replay(targets::TARGETS);
    assert!(replayed >= targets::TARGETS.len(), "{replayed} inputs");
}
