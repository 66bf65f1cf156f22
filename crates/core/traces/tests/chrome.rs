//! Chrome trace event JSON: the real Kineto trace, every phase, bad files, and export checked
//! against the format's rules.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::disallowed_methods)] // reads a data file of the repository

use std::collections::BTreeMap;

use yosoku_tables::{access, col};
use yosoku_traces::chrome::{check, export, import_reader, import_slice};
use yosoku_traces::mpi;

const KINETO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../pipelines/data/chrome-trace/kineto_gpu_metrics_input.json"
);

fn kineto() -> Vec<u8> {
    std::fs::read(KINETO).unwrap()
}

#[test]
fn the_real_kineto_trace_imports_whole() {
    let bytes = kineto();
    let t = import_slice(&bytes, "kineto").unwrap();
    assert_eq!(t.events, 340);
    // 254 X + 64 flow ends + 2 instants; metadata is not a row.
    assert_eq!(t.spans.num_rows(), 320);
    assert_eq!(
        (t.unmatched_begin, t.unmatched_end, t.negative_durations),
        (0, 0, 0)
    );
    assert!(t.unknown_phases.is_empty());
    let event = access::utf8(&t.spans, col::EVENT).unwrap();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for i in 0..t.spans.num_rows() {
        *counts.entry(event.value(i)).or_default() += 1;
    }
    assert_eq!(counts["span"], 254);
    assert_eq!(counts["flow_start"], 32);
    assert_eq!(counts["flow_end"], 32);
    assert_eq!(counts["instant"], 2);
    // Threads named by metadata; GPU streams are string tids.
    let lane = access::utf8(&t.spans, col::LANE).unwrap();
    let lanes: std::collections::BTreeSet<&str> =
        (0..t.spans.num_rows()).map(|i| lane.value(i)).collect();
    // Process names and labels from metadata; tid 24572 and "24572" are one thread; GPU
    // streams are named by their string tid; Kineto's own pids are strings.
    for want in [
        "python (CPU) / thread 24572 (python)",
        "python (CPU) / thread 24610 (python)",
        "python (GPU 0) / stream 7",
        "Traces / PyTorch Profiler",
    ] {
        assert!(lanes.contains(want), "no lane {want:?} in {lanes:?}");
    }
    assert_eq!(lanes.len(), 6, "{lanes:?}");
    // µs to ns exactly: the first event's ts 1621401187223005 µs.
    let start = access::int64(&t.spans, col::START_NS).unwrap();
    assert!(start.values().contains(&1_621_401_187_223_005_000));
    // The streaming reader reads the same.
    let streamed = import_reader(&bytes[..], "kineto").unwrap();
    assert_eq!(streamed.spans, t.spans);
    // Nested CPU operators get depths.
    let depth = access::int32(&t.spans, col::DEPTH).unwrap();
    assert!(depth.values().iter().any(|&d| d > 0));
}

#[test]
fn every_phase_finds_its_place() {
    let json = br#"{"traceEvents":[
      {"ph":"M","name":"process_name","pid":1,"args":{"name":"app"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main"}},
      {"ph":"B","name":"outer","pid":1,"tid":2,"ts":0},
      {"ph":"B","name":"inner","pid":1,"tid":2,"ts":1.5},
      {"ph":"E","pid":1,"tid":2,"ts":2.5},
      {"ph":"E","pid":1,"tid":2,"ts":10},
      {"ph":"E","name":"stray","pid":1,"tid":2,"ts":11},
      {"ph":"X","name":"bad","pid":1,"tid":2,"ts":20,"dur":-3},
      {"ph":"i","name":"mark","pid":1,"tid":2,"ts":5,"s":"t"},
      {"ph":"C","name":"mem","pid":1,"ts":3,"args":{"heap":10,"stack":2}},
      {"ph":"b","name":"req","cat":"net","id":"0x1","pid":1,"ts":4},
      {"ph":"e","name":"req","cat":"net","id":"0x1","pid":1,"ts":9},
      {"ph":"s","name":"f","id":7,"pid":1,"tid":2,"ts":1},
      {"ph":"f","name":"f","id":7,"pid":1,"tid":3,"ts":6,"bp":"e"},
      {"ph":"P","name":"sample","pid":1,"tid":2,"ts":7},
      {"ph":"B","name":"open","pid":1,"tid":3,"ts":8}
    ]}"#;
    let t = import_slice(json, "r").unwrap();
    assert_eq!(t.unmatched_end, 1);
    assert_eq!(t.unmatched_begin, 1);
    assert_eq!(t.negative_durations, 1);
    assert_eq!(t.unknown_phases["P"], 1);
    let s = &t.spans;
    let name = access::utf8(s, col::NAME).unwrap();
    let lane = access::utf8(s, col::LANE).unwrap();
    let dur = access::int64(s, col::DURATION_NS).unwrap();
    let depth = access::int32(s, col::DEPTH).unwrap();
    let flag = access::utf8(s, col::FLAG).unwrap();
    let value = access::float64(s, col::VALUE).unwrap();
    let flow = access::int64(s, col::FLOW_ID).unwrap();
    let row = |n: &str| (0..s.num_rows()).find(|&i| name.value(i) == n).unwrap();
    assert_eq!(lane.value(row("outer")), "app / main");
    assert_eq!(dur.value(row("outer")), 10_000);
    assert_eq!(dur.value(row("inner")), 1_000);
    assert_eq!(depth.value(row("inner")), 1);
    assert_eq!(flag.value(row("stray")), "unmatched_end");
    assert_eq!(flag.value(row("bad")), "negative_duration");
    assert_eq!(value.value(row("mem.heap")), 10.0);
    assert_eq!(lane.value(row("mem.stack")), "app / mem.stack");
    assert_eq!(dur.value(row("req")), 5_000);
    assert_eq!(flow.value(row("f")), 7);
    assert_eq!(flag.value(row("sample")), "unknown_phase");
    assert_eq!(flag.value(row("open")), "unmatched_begin");
    // The trace's last timestamp is 20 µs: the open span reaches it.
    assert_eq!(dur.value(row("open")), 12_000);
    assert!(flag.is_null(row("outer")));
}

#[test]
fn a_bare_array_is_a_trace_too() {
    let t = import_slice(
        br#"[{"ph":"X","name":"k","pid":0,"tid":0,"ts":1,"dur":2}]"#,
        "a",
    )
    .unwrap();
    assert_eq!(t.spans.num_rows(), 1);
}

fn error_of(json: &[u8]) -> String {
    import_slice(json, "r").unwrap_err().to_string()
}

#[test]
fn malformed_files_say_line_and_column() {
    let e = error_of(b"{\"traceEvents\":[\n{\"ph\":\"X\",\"ts\":1,}\n]}");
    assert!(e.starts_with("line 2, column 18: trailing comma"), "{e}");
    // Truncated in the middle of an event.
    let bytes = kineto();
    let e = error_of(&bytes[..bytes.len() / 2]);
    assert!(e.contains("truncated file"), "{e}");
    let e = error_of(br#"{"traceEvents":[{"ph":"X","name":"k","pid":0,"tid":0}]}"#);
    assert!(e.contains("event 0") && e.contains("no `ts`"), "{e}");
    let e = error_of(br#"{"events":[]}"#);
    assert!(e.contains("no `traceEvents`"), "{e}");
    let e = error_of(br#"{"traceEvents":[{"ph":"X","ts":"soon"}]}"#);
    assert!(e.starts_with("line 1, column"), "{e}");
    let e = error_of(br#"{"traceEvents":[{"ph":"C","name":"c","pid":1,"ts":1,"args":{"a":"x"}}]}"#);
    assert!(e.contains("no numeric `args`"), "{e}");
}

#[test]
fn an_export_passes_the_format_check_and_reads_back() {
    let t = import_slice(&kineto(), "kineto").unwrap();
    let mut out = Vec::new();
    let summary = export(&[&t.spans], &mut out).unwrap();
    assert_eq!(summary.events, 320);
    let checked = check(&out).unwrap_or_else(|p| panic!("{p:#?}"));
    assert_eq!(checked.complete, 254);
    assert_eq!(checked.flows, 64);
    assert_eq!(checked.instants, 2);
    // Read back: the same spans, times exact to the ns.
    let back = import_slice(&out, "kineto").unwrap();
    assert_eq!(back.spans.num_rows(), t.spans.num_rows());
    let mut a: Vec<i64> = access::int64(&t.spans, col::START_NS)
        .unwrap()
        .values()
        .to_vec();
    let mut b: Vec<i64> = access::int64(&back.spans, col::START_NS)
        .unwrap()
        .values()
        .to_vec();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
}

#[test]
fn the_checker_finds_what_breaks_a_viewer() {
    let bad = br#"{"traceEvents":[
      {"ph":"X","name":"a","pid":1,"tid":1,"ts":0},
      {"ph":"Q","name":"a","pid":1,"tid":1,"ts":0},
      {"ph":"B","name":"b","pid":1,"tid":1,"ts":5},
      {"ph":"E","pid":1,"tid":1,"ts":4},
      {"ph":"E","pid":1,"tid":2,"ts":4},
      {"ph":"C","name":"c","pid":1,"tid":1,"ts":0,"args":{"v":"x"}},
      {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{}},
      {"ph":"i","name":"i","pid":1,"tid":1,"ts":0,"s":"x"},
      {"ph":"B","name":"open","pid":1,"tid":1,"ts":9}
    ]}"#;
    let problems = check(bad).unwrap_err();
    let all = problems.join("\n");
    for want in [
        "event 0: a complete event (`X`) needs `dur`",
        "event 1: `ph` \"Q\"",
        "event 3: ends \"b\" at 4 before its begin at 5",
        "event 4: `E` with no open `B`",
        "event 5: a counter (`C`) needs numeric `args`",
        "event 6: metadata \"thread_name\" without its value",
        "event 7: instant scope \"x\"",
        "`B` \"open\" at 9 is never ended",
    ] {
        assert!(all.contains(want), "missing {want:?} in\n{all}");
    }
}

#[test]
fn mpi_blocks_export_as_one_process_per_run_and_timeline() {
    use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, StringArray};
    use std::sync::Arc;
    let n = 4;
    let blocks = yosoku_tables::MPI_BLOCKS
        .batch(vec![
            Arc::new(StringArray::from(vec!["r"; n])) as ArrayRef,
            Arc::new(StringArray::from(vec!["node"; n])),
            Arc::new(Int32Array::from(vec![0, 0, 10, 2])),
            Arc::new(StringArray::from(vec!["c", "m", "c", "c"])),
            Arc::new(StringArray::from(vec![
                "compute",
                "communication",
                "compute",
                "compute",
            ])),
            Arc::new(StringArray::from(vec!["a", "MPI_Send", "a", "a"])),
            Arc::new(Int64Array::from(vec![Some(0), Some(0), Some(0), None])),
            Arc::new(Float64Array::from(vec![
                Some(0.0),
                Some(1.0),
                Some(0.0),
                None,
            ])),
            Arc::new(Float64Array::from(vec![1.0, 0.5, 1.2, 9.0])),
        ])
        .unwrap();
    let spans = mpi::measured_spans(&blocks).unwrap();
    // The row without a start (a TAU total) has no place on a timeline.
    assert_eq!(spans.num_rows(), 3);
    let mut out = Vec::new();
    let s = export(&[&spans], &mut out).unwrap();
    assert_eq!((s.processes, s.threads, s.events), (1, 2, 3));
    check(&out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\"r (measured)\""));
    // rank 0 sorts before rank 10.
    let sort_of = |lane: &str| {
        let at = text.find(&format!("\"name\":\"{lane}\"")).unwrap();
        let rest = &text[at..];
        let i = rest.find("\"sort_index\":").unwrap() + 13;
        rest[i..i + 1].to_owned()
    };
    assert_eq!(sort_of("rank 0"), "0");
    assert_eq!(sort_of("rank 10"), "1");
}
