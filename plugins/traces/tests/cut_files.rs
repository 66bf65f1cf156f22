//! The importers on files cut short at each of their last 200 bytes: the real Kineto trace and
//! a kernel trace the test writes. Each cut copy is refused or imports rows of the whole file
//! unchanged, never a changed value (`yosoku_plugin_sdk::testing::cut_copies`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use yosoku_plugin_sdk::testing::cut_copies;
use yosoku_plugin_traces::{read_chrome_traces, read_kernel_traces};
use yosoku_traces::kernel_trace::{self, Header, LaneBy, Record, Timer};

#[test]
fn a_chrome_trace_cut_short_never_imports_a_changed_value() {
    let file = "kineto_gpu_metrics_input.json";
    let contents = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../pipelines/data/chrome-trace")
            .join(file),
    )
    .unwrap();
    let outcome = cut_copies(&[(file, &contents)], file, 200, &["spans"], |dir| {
        let (spans, _) = read_chrome_traces(&[dir.join(file)], None)?;
        Ok(vec![("spans".to_owned(), spans)])
    })
    .unwrap();
    assert!(outcome.refused > 0, "{outcome:?}");
}

#[test]
fn a_kernel_trace_cut_short_never_imports_a_changed_value() {
    let header = Header::new("test GPU", Timer::Clock64, 2, 1_000_000, 0);
    let mut records = Vec::new();
    for block in 0..4u32 {
        for thread in 0..4u32 {
            for point in 0..3u32 {
                records.push(Record {
                    block,
                    thread,
                    sm: block % 2,
                    point,
                    timestamp: 1000 * u64::from(block) + 100 * u64::from(point),
                });
            }
        }
    }
    let mut contents = Vec::new();
    kernel_trace::write(&header, &records, &mut contents).unwrap();
    let file = "k.yktrace";
    let outcome = cut_copies(
        &[(file, &contents)],
        file,
        200,
        &["trace_records", "trace_alignment", "spans"],
        |dir| read_kernel_traces(&[dir.join(file)], None, LaneBy::Sm),
    )
    .unwrap();
    assert_eq!(outcome.imported, 0, "{outcome:?}");
}
