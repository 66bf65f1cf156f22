//! The importers on real files cut short at each of their last 200 bytes: a rank's log of the
//! interposer and a TAU profile. Each cut copy is refused or imports rows of the whole input
//! unchanged, never a changed value (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use yosoku_plugin_mpi_timer::{read_runs, tables, tau, tau_batches};
use yosoku_plugin_sdk::testing::{cut_copies, files_in};

const COMPARED: &[&str] = &["mpi_blocks", "mpi_ranks"];

#[test]
fn a_rank_log_cut_short_never_imports_a_changed_value() {
    let files =
        files_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/himeno-2ranks")).unwrap();
    // As a complete run (its logs end with `# end`). A run read with `allow_incomplete` (one
    // that stopped early) is analysed as what it holds, so its iterations are those of the
    // shorter run, not of the whole file: not compared.
    let outcome = cut_copies(&files, "rank-1.tsv", 200, COMPARED, |dir| {
        let mut runs = read_runs(dir, false)?;
        let (blocks, ranks) = tables(&mut runs, None)?;
        Ok(vec![
            ("mpi_blocks".to_owned(), blocks),
            ("mpi_ranks".to_owned(), ranks),
        ])
    })
    .unwrap();
    assert_eq!(outcome.imported, 0, "{outcome:?}");
}

#[test]
fn a_tau_profile_cut_short_never_imports_a_changed_value() {
    let files =
        files_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/tau-cpi-mpi"))
            .unwrap();
    let outcome = cut_copies(&files, "profile.3.0.0", 200, COMPARED, |dir| {
        let (blocks, ranks) = tau_batches("tau", &tau::read_dir(dir)?)?;
        Ok(vec![
            ("mpi_blocks".to_owned(), blocks),
            ("mpi_ranks".to_owned(), ranks),
        ])
    })
    .unwrap();
    assert!(outcome.refused > 0, "{outcome:?}");
}
