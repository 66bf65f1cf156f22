//! The importer on a user's CSV file (the committed own-table example) cut short at each of its
//! last 200 bytes: each cut copy is refused or imports rows of the whole file unchanged, never a
//! changed value (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use yosoku_plugin_sdk::testing::cut_copies;
use yosoku_plugin_table::{Mapping, import};

#[test]
fn a_csv_file_cut_short_never_imports_a_changed_value() {
    let file = "gtx680-rodinia.csv";
    let contents = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../pipelines/data/own-table")
            .join(file),
    )
    .unwrap();
    let mapping = Mapping {
        device: Some("gpu".into()),
        program: Some("kernel".into()),
        variant: Some("input_size".into()),
        default_device: "unknown".into(),
        phase: "total".into(),
        ..Mapping::default()
    };
    let outcome = cut_copies(
        &[(file, &contents)],
        file,
        200,
        &["runs", "observations", "counters"],
        |dir| Ok(import(&[dir.join(file)], &mapping)?.tables),
    )
    .unwrap();
    assert!(outcome.refused > 0, "{outcome:?}");
}
