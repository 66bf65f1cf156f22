//! The importers on the committed SDK logs cut short at each of their last 200 bytes: each cut
//! copy is refused or imports rows of the whole log unchanged, never a changed value
//! (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use yosoku_plugin_csx600_sdk_log::{read_microbench, read_profile};
use yosoku_plugin_sdk::testing::cut_copies;

const COMPARED: &[&str] = &[
    "csx600_op_throughputs",
    "bandwidth_curves",
    "csx600_op_counts",
    "csx600_transfer_counts",
    "runs",
    "reference_values",
];

#[test]
fn sdk_logs_cut_short_never_import_a_changed_value() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/csx600");
    for (file, profile) in [
        ("sdk250-op-throughput.csx600.log", false),
        ("illustrative-bandwidth.csx600.log", false),
        ("montecarlo-profile.csx600.log", true),
        ("himeno-profile.csx600.log", true),
    ] {
        let contents = std::fs::read(data.join(file)).unwrap();
        let outcome = cut_copies(&[(file, &contents)], file, 200, COMPARED, |dir| {
            let path = dir.join(file);
            if profile {
                read_profile(&path)
            } else {
                read_microbench(&path)
            }
        })
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(outcome.refused > 0, "{file}: {outcome:?}");
    }
}
