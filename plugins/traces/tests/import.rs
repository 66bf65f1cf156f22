//! The `traces` plugin's importers on the real Kineto trace and on kernel traces the test
//! writes, and what they say about bad files.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use yosoku_plugin_traces::{read_chrome_traces, read_kernel_traces};
use yosoku_tables::{TableDef, access, col};
use yosoku_traces::kernel_trace::{self, Header, LaneBy, Record, Timer};

fn kineto() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/chrome-trace/kineto_gpu_metrics_input.json")
}

fn canonical(name: &str) -> &'static TableDef {
    yosoku_tables::table(name).unwrap()
}

#[test]
fn the_kineto_trace_becomes_canonical_spans() {
    let (spans, notes) = read_chrome_traces(&[kineto()], None).unwrap();
    canonical("spans").check(&spans).unwrap();
    assert_eq!(spans.num_rows(), 320);
    assert!(notes.is_empty(), "{notes:?}");
    let run = access::utf8(&spans, col::RUN_ID).unwrap();
    assert_eq!(run.value(0), "kineto_gpu_metrics_input");
}

/// The whole nanoseconds a JSON number's text of microseconds says, by decimal arithmetic on
/// its digits (Kineto writes `1712195495519689.047`: integer µs, then three decimals).
fn exact_ns(text: &str) -> i64 {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac = format!("{frac:0<3}");
    whole.parse::<i64>().unwrap() * 1000 + frac[..3].parse::<i64>().unwrap()
}

/// Every `"ts": <number>` of a Chrome trace's text, of the `X` events, in file order.
fn complete_event_starts(json: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    // The texts, read off the file (serde_json's Value would round them through an f64).
    let mut texts = json.split("\"ts\":").skip(1).map(|rest| {
        rest.trim_start()
            .split(|c: char| c != '.' && !c.is_ascii_digit())
            .next()
            .unwrap()
            .to_owned()
    });
    let events = value["traceEvents"].as_array().unwrap();
    let mut starts = Vec::new();
    for e in events {
        if e.get("ts").is_some() {
            let text = texts.next().unwrap();
            if e["ph"] == "X" {
                starts.push(text);
            }
        }
    }
    starts
}

#[test]
fn a_gzipped_kineto_trace_reads_with_its_times_to_the_nanosecond() {
    // A real trace, gzip-compressed as shared (SOURCES.md), then the same events as a trace of
    // today's PyTorch writes them: Unix microseconds with three decimals (19 digits, past an
    // f64's 15.9: through one, a start moves by up to 0.25 µs).
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/chrome-trace/hta_mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    let json = std::io::read_to_string(flate2::read::GzDecoder::new(
        std::fs::File::open(&path).unwrap(),
    ))
    .unwrap();
    // Shifted to 2024-04-04 in Unix µs, digit for digit: `4203669604595.407` becomes
    // `1712195495519689.047`-like text.
    let shift_us: i64 = 1_712_195_495_000_000 - 4_203_669_604_000;
    let mut unix = String::new();
    let mut rest = json.as_str();
    while let Some(at) = rest.find("\"ts\":") {
        let (before, after) = rest.split_at(at + 5);
        unix.push_str(before);
        let number_start = after.len() - after.trim_start().len();
        unix.push_str(&after[..number_start]);
        let after = &after[number_start..];
        let end = after
            .find(|c: char| c != '.' && !c.is_ascii_digit())
            .unwrap();
        let (whole, frac) = after[..end].split_once('.').unwrap_or((&after[..end], ""));
        let whole = whole.parse::<i64>().unwrap() + shift_us;
        unix.push_str(&if frac.is_empty() {
            whole.to_string()
        } else {
            format!("{whole}.{frac}")
        });
        rest = &after[end..];
    }
    unix.push_str(rest);
    let dir = tempfile::tempdir().unwrap();
    let unix_path = dir.path().join("unix.json");
    std::fs::write(&unix_path, &unix).unwrap();

    for (file, json) in [(path, json.as_str()), (unix_path, unix.as_str())] {
        let (spans, _) = read_chrome_traces(std::slice::from_ref(&file), None).unwrap();
        let starts = access::int64(&spans, col::START_NS).unwrap();
        let mut read: Vec<i64> = (0..spans.num_rows()).map(|i| starts.value(i)).collect();
        let mut expected: Vec<i64> = complete_event_starts(json)
            .iter()
            .map(|t| exact_ns(t))
            .collect();
        read.sort_unstable();
        expected.sort_unstable();
        // Every complete event's start is among the spans', exactly.
        let mut spare = read.clone();
        for e in &expected {
            let i = spare
                .iter()
                .position(|r| r == e)
                .unwrap_or_else(|| panic!("{}: no span starts at {e} ns", file.display()));
            spare.swap_remove(i);
        }
        assert_eq!(expected.len(), 113, "{}", file.display());
    }
    // Through an f64 (the reader before), most of the Unix-time starts move.
    let moved = complete_event_starts(&unix)
        .iter()
        .filter(|t| {
            let us: f64 = t.parse().unwrap();
            let whole = us.trunc();
            (whole as i64) * 1000 + ((us - whole) * 1000.0).round() as i64 != exact_ns(t)
        })
        .count();
    assert!(moved > 50, "{moved} of 113 starts move through an f64");
}

fn write_trace(dir: &Path, name: &str, backwards: bool) -> PathBuf {
    let header = Header::new("test GPU", Timer::Clock64, 2, 1_000_000, 0);
    let mut records = Vec::new();
    for block in 0..4u32 {
        for thread in 0..4u32 {
            for point in 0..3u32 {
                let mut t = 1000 * u64::from(block) + 100 * u64::from(point);
                if backwards && block == 1 && thread == 2 && point == 2 {
                    t = 0;
                }
                records.push(Record {
                    block,
                    thread,
                    sm: block % 2,
                    point,
                    timestamp: t,
                });
            }
        }
    }
    let path = dir.join(name);
    let mut out = std::fs::File::create(&path).unwrap();
    kernel_trace::write(&header, &records, &mut out).unwrap();
    path
}

#[test]
fn kernel_traces_become_records_alignment_and_spans() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.yktrace", false);
    let b = write_trace(dir.path(), "b.yktrace", true);
    let tables = read_kernel_traces(&[a, b], None, LaneBy::Block).unwrap();
    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["trace_records", "trace_alignment", "spans"]);
    for (name, batch) in &tables {
        canonical(name).check(batch).unwrap();
    }
    let records = &tables[0].1;
    assert_eq!(records.num_rows(), 2 * 48);
    let flag = access::utf8(records, col::FLAG).unwrap();
    let run = access::utf8(records, col::RUN_ID).unwrap();
    let flagged: Vec<&str> = (0..records.num_rows())
        .filter(|&i| !flag.is_null(i))
        .map(|i| run.value(i))
        .collect();
    assert_eq!(flagged, ["b"], "one backwards step, in run b");
    let spans = &tables[2].1;
    assert_eq!(spans.num_rows(), 2 * 32);
    let lane = access::utf8(spans, col::LANE).unwrap();
    assert_eq!(lane.value(0), "SM 0 / block 0");
}

#[test]
fn bad_files_and_settings_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"traceEvents\":[\n{\"ph\":\"X\",}\n]}").unwrap();
    let e = read_chrome_traces(std::slice::from_ref(&broken), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("broken.json: line 2, column"), "{e}");

    let truncated = dir.path().join("t.yktrace");
    let good = std::fs::read(write_trace(dir.path(), "g.yktrace", false)).unwrap();
    std::fs::write(&truncated, &good[..good.len() - 30]).unwrap();
    let e = read_kernel_traces(&[truncated], None, LaneBy::Sm)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.yktrace: byte") && e.contains("truncated"),
        "{e}"
    );

    let other = dir.path().join("sub");
    std::fs::create_dir(&other).unwrap();
    let twin = write_trace(&other, "g.yktrace", false);
    let e = read_kernel_traces(&[dir.path().join("g.yktrace"), twin], None, LaneBy::Sm)
        .unwrap_err()
        .to_string();
    assert!(e.contains("would both be run `g`"), "{e}");

    let e = read_chrome_traces(&[kineto(), broken], Some("one".into()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`run_id` = \"one\" names one run"), "{e}");
}

fn h100(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/cuda-trace/h100")
        .join(name)
}

fn inflate(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut bytes = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    bytes
}

/// A real trace of tools/cuda-trace (data/cuda-trace/SOURCES.md): the matrix multiply on an
/// H100, per warp, `%globaltimer`, the records of SMs 0-5; read gzip-compressed as committed.
#[test]
fn a_measured_h100_trace_reads_as_committed() {
    let path = h100("matmul_shared_warp_globaltimer.yktrace.gz");
    let tables = read_kernel_traces(std::slice::from_ref(&path), None, LaneBy::Sm).unwrap();
    for (name, batch) in &tables {
        canonical(name).check(batch).unwrap();
    }
    let records = &tables[0].1;
    // 6 SMs' warps, 32 points each (h100/traces.json: kept_records).
    assert_eq!(records.num_rows(), 190_464);
    assert_eq!(records.num_rows() % 32, 0);
    let run = access::utf8(records, col::RUN_ID).unwrap();
    assert_eq!(run.value(0), "matmul_shared_warp_globaltimer");
    let flag = access::utf8(records, col::FLAG).unwrap();
    assert_eq!(
        flag.null_count(),
        records.num_rows(),
        "no thread's timestamps go backwards"
    );
    let alignment = &tables[1].1;
    assert_eq!(alignment.num_rows(), 6, "one row per SM kept");
    // Each warp's 32 points give 31 spans, on the lanes of its SM.
    let spans = &tables[2].1;
    assert_eq!(spans.num_rows(), 190_464 / 32 * 31);
    let lane = access::utf8(spans, col::LANE).unwrap();
    let lanes: std::collections::BTreeSet<&str> =
        (0..spans.num_rows()).map(|i| lane.value(i)).collect();
    assert_eq!(lanes.len(), 6, "{lanes:?}");

    // The same file inflated reads the same.
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("matmul_shared_warp_globaltimer.yktrace");
    std::fs::write(&plain, inflate(&path)).unwrap();
    let again = read_kernel_traces(&[plain], None, LaneBy::Sm).unwrap();
    assert_eq!(again[0].1, tables[0].1);
}

/// What an interrupted run would leave (the header's writer renames only complete files, but a
/// copy can still be cut short): a real trace cut inside a record, and its gzip stream cut.
#[test]
fn a_measured_trace_cut_short_is_refused_with_the_byte() {
    let bytes = inflate(&h100("selftest_shared_warp_globaltimer.yktrace.gz"));
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.yktrace");
    // The header (64 bytes: 40 + "NVIDIA H100 80GB HBM3", padded to 8), 100 records and 7 bytes.
    std::fs::write(&cut, &bytes[..64 + 100 * 24 + 7]).unwrap();
    let e = read_kernel_traces(&[cut], None, LaneBy::Sm)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cut.yktrace") && e.contains("100 whole records and 7 bytes"),
        "{e}"
    );

    let gz = std::fs::read(h100("selftest_shared_warp_globaltimer.yktrace.gz")).unwrap();
    let cut_gz = dir.path().join("cut.yktrace.gz");
    std::fs::write(&cut_gz, &gz[..gz.len() / 2]).unwrap();
    let e = read_kernel_traces(&[cut_gz], None, LaneBy::Sm)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cut.yktrace.gz"), "{e}");
}
