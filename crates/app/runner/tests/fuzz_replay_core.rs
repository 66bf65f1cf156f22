//! The fuzz targets of the core crates' readers (bundles, pipeline files, traces): every seed and regression replayed through the
//! target's checks (`fuzz_replay/mod.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code and the fuzz checks

#[path = "../../../../fuzz/src/lib.rs"]
#[allow(dead_code)] // the targets use some of the helpers
mod yosoku_fuzz;

#[path = "../../../../fuzz/src/targets/core.rs"]
mod targets;

mod fuzz_replay;

#[test]
fn every_seed_and_regression_passes_its_targets_checks() {
    let replayed = fuzz_replay::replay(targets::TARGETS);
    assert!(replayed >= targets::TARGETS.len(), "{replayed} inputs");
}

/// Every fuzz target is in exactly one target file (and so replayed by one of these tests), and
/// in the seed list.
#[test]
fn every_fuzz_target_is_replayed_by_one_test() {
    let mut binaries = Vec::new();
    fuzz_replay::files_under(
        &fuzz_replay::repo().join("fuzz/fuzz_targets"),
        ".rs",
        &mut binaries,
    );
    let mut files = Vec::new();
    fuzz_replay::files_under(
        &fuzz_replay::repo().join("fuzz/src/targets"),
        ".rs",
        &mut files,
    );
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert!(binaries.len() >= 15, "{binaries:?}");
    for binary in &binaries {
        let name = binary.file_stem().unwrap().to_string_lossy().into_owned();
        let listed = texts
            .iter()
            .filter(|t| t.contains(&format!("(\"{name}\", {name})")))
            .count();
        assert_eq!(listed, 1, "`{name}` is in {listed} target files' TARGETS");
        assert!(
            yosoku_fuzz::seeds::of(&name).is_some(),
            "`{name}` has no seed list"
        );
    }
}
