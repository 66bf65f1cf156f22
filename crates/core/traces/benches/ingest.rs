//! Ingest speed, in bytes of input per second (`cargo bench -p yosoku-traces --bench ingest`;
//! BENCHMARKS.md): the kernel-trace binary format, and Chrome trace JSON beside serde_json
//! reading the same file into structs. Inputs are synthetic (generated here).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::Deserialize;
use yosoku_traces::chrome;
use yosoku_traces::kernel_trace::{self, AlignmentScan, Header, LaneBy, Reader, Record, Timer};

/// 2 M records (48 MB) in the layout the host library writes: block, thread, 32 points.
fn kernel_trace_bytes() -> Vec<u8> {
    let mut records = Vec::with_capacity(1 << 21);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for block in 0..256u32 {
        for thread in 0..256u32 {
            let mut t = 1_000_000 * u64::from(block % 132) + u64::from(block / 132) * 20_000;
            for point in 0..32u32 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                t += 100 + (state >> 55);
                records.push(Record {
                    block,
                    thread,
                    sm: block % 132,
                    point,
                    timestamp: t,
                });
            }
        }
    }
    let header = Header::new("synthetic", Timer::Clock64, 132, 1_755_000, 0);
    let mut out = Vec::new();
    kernel_trace::write(&header, &records, &mut out).expect("in memory");
    out
}

/// Decodes `bytes` in 8 MiB chunks as a file would be read, and puts every record on the
/// common time base: what the importer does per byte before building tables.
fn decode_and_align(bytes: &[u8]) -> i64 {
    let mut reader = Reader::new();
    let mut scan: Option<AlignmentScan> = None;
    let mut kept = Vec::new();
    for chunk in bytes.chunks(8 << 20) {
        reader.feed(chunk).expect("valid");
        let cols = reader.take_records();
        if let Some(h) = reader.header() {
            scan.get_or_insert_with(|| AlignmentScan::new(h)).add(&cols);
        }
        kept.push(cols);
    }
    let align = scan.expect("records").finish();
    let mut sum = 0i64;
    for cols in &kept {
        for (&sm, &ts) in cols.sm.iter().zip(&cols.timestamp) {
            sum = sum.wrapping_add(align.ns(sm, ts));
        }
    }
    sum
}

fn kernel_trace_ingest(c: &mut Criterion) {
    let bytes = kernel_trace_bytes();
    let mut g = c.benchmark_group("kernel_trace");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(20);
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut r = Reader::new();
            let mut n = 0;
            for chunk in bytes.chunks(8 << 20) {
                r.feed(chunk).expect("valid");
                n += r.take_records().len();
            }
            black_box(n)
        });
    });
    g.bench_function("decode_align", |b| {
        b.iter(|| black_box(decode_and_align(&bytes)));
    });
    g.bench_function("to_arrow_tables", |b| {
        b.iter(|| {
            let trace = kernel_trace::read(&bytes[..], 8 << 20).expect("valid");
            black_box(trace.tables("bench", LaneBy::Sm).expect("tables"))
        });
    });
    g.finish();
}

/// 200,000 events shaped like a profiler's: complete events with args, instants, counters,
/// flows, on 16 threads.
fn chrome_bytes() -> Vec<u8> {
    let mut s = String::from("{\"traceEvents\":[\n");
    s.push_str(r#"{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"app"}}"#);
    for i in 0..200_000u64 {
        let tid = i % 16;
        let ts = i * 3;
        let e = match i % 10 {
            0 => format!(
                r#",{{"ph":"i","name":"mark","cat":"m","pid":1,"tid":{tid},"ts":{ts},"s":"t"}}"#
            ),
            1 => format!(
                r#",{{"ph":"C","name":"mem","pid":1,"tid":0,"ts":{ts},"args":{{"bytes":{i}}}}}"#
            ),
            2 => format!(
                r#",{{"ph":"s","name":"launch","cat":"flow","id":{i},"pid":1,"tid":{tid},"ts":{ts}}}"#
            ),
            _ => format!(
                r#",{{"ph":"X","name":"kernel_{}","cat":"kernel","pid":1,"tid":{tid},"ts":{ts}.5,"dur":2.25,"args":{{"grid":[{},1,1],"stream":7}}}}"#,
                i % 7,
                i % 1024
            ),
        };
        s.push('\n');
        s.push_str(&e);
    }
    s.push_str("\n]}\n");
    s.into_bytes()
}

/// What a program reading the format with serde_json into structs would write.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Event {
    ph: String,
    name: Option<String>,
    cat: Option<String>,
    ts: Option<f64>,
    dur: Option<f64>,
    pid: Option<serde_json::Value>,
    tid: Option<serde_json::Value>,
    id: Option<serde_json::Value>,
    args: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct TraceFile {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<Event>,
}

fn chrome_ingest(c: &mut Criterion) {
    let bytes = chrome_bytes();
    let mut g = c.benchmark_group("chrome_json");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(20);
    g.bench_function("serde_json_structs", |b| {
        b.iter(|| black_box(serde_json::from_slice::<TraceFile>(&bytes).expect("valid")));
    });
    g.bench_function("yosoku_spans", |b| {
        b.iter(|| black_box(chrome::import_slice(&bytes, "bench").expect("valid")));
    });
    g.bench_function("yosoku_spans_streamed", |b| {
        b.iter(|| black_box(chrome::import_reader(&bytes[..], "bench").expect("valid")));
    });
    g.finish();
}

criterion_group!(benches, kernel_trace_ingest, chrome_ingest);
criterion_main!(benches);
