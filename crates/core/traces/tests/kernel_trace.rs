//! The kernel-trace format (docs/kernel-trace.md) on files these tests write, good and bad.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use yosoku_tables::{access, col};
use yosoku_traces::kernel_trace::{
    self, FIXED_HEADER_BYTES, Header, LaneBy, RECORD_BYTES, Reader, Record, Timer,
};

/// Two SMs whose cycle counters differ by 1,000,000; 2 blocks x 2 threads x 3 points at
/// 1 GHz (1 cycle = 1 ns), each step 100 cycles.
fn two_sm_trace() -> (Header, Vec<Record>) {
    let header = Header::new("Test GPU", Timer::Clock64, 2, 1_000_000, 0);
    let mut records = Vec::new();
    for block in 0..2u32 {
        let sm = block;
        let base = if sm == 0 { 5_000 } else { 1_005_000 };
        for thread in 0..2u32 {
            for point in 0..3u32 {
                records.push(Record {
                    block,
                    thread,
                    sm,
                    point,
                    timestamp: base + u64::from(thread) * 10 + u64::from(point) * 100,
                });
            }
        }
    }
    (header, records)
}

fn bytes_of(header: &Header, records: &[Record]) -> Vec<u8> {
    let mut out = Vec::new();
    kernel_trace::write(header, records, &mut out).unwrap();
    out
}

#[test]
fn the_header_is_laid_out_as_the_spec_says() {
    let (header, records) = two_sm_trace();
    let b = bytes_of(&header, &records);
    assert_eq!(&b[..8], b"YKTRACE\0");
    assert_eq!(u16::from_le_bytes([b[8], b[9]]), 1, "version");
    let header_bytes = usize::from(u16::from_le_bytes([b[10], b[11]]));
    assert_eq!(header_bytes % 8, 0);
    assert_eq!(
        header_bytes,
        (FIXED_HEADER_BYTES + "Test GPU".len()).div_ceil(8) * 8
    );
    assert_eq!(u16::from_le_bytes([b[12], b[13]]), 24, "record bytes");
    assert_eq!(b[14], 0, "clock64");
    assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 1_000_000);
    assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 12);
    assert_eq!(&b[40..48], b"Test GPU");
    assert_eq!(b.len(), header_bytes + 12 * RECORD_BYTES);
    // The third record: block 0, thread 0, sm 0, point 2, timestamp 5200.
    let r = &b[header_bytes + 2 * 24..header_bytes + 3 * 24];
    assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 2);
    assert_eq!(u64::from_le_bytes(r[16..24].try_into().unwrap()), 5_200);
}

#[test]
fn records_round_trip_in_chunks_of_any_size() {
    let (header, records) = two_sm_trace();
    let b = bytes_of(&header, &records);
    let whole = kernel_trace::read(&b[..], 1 << 20).unwrap();
    for chunk in [1, 7, 24, 25, 41, 1000] {
        let mut r = Reader::new();
        for c in b.chunks(chunk) {
            r.feed(c).unwrap();
        }
        assert_eq!(r.finish().unwrap(), whole, "chunks of {chunk} bytes");
    }
    assert_eq!(whole.header.device, "Test GPU");
    assert_eq!(whole.records.len(), 12);
    assert_eq!(whole.records.timestamp[2], 5_200);
}

#[test]
fn sm_clocks_are_aligned_on_their_first_record_and_the_alignment_is_reported() {
    let (header, records) = two_sm_trace();
    let trace = kernel_trace::read(&bytes_of(&header, &records)[..], 4096).unwrap();
    let t = trace.tables("k", LaneBy::Sm).unwrap();
    let ns = access::int64(&t.records, col::TIME_NS).unwrap();
    // SM 1's counter is 1,000,000 cycles ahead; aligned, both blocks start at 0.
    assert_eq!(ns.value(0), 0);
    assert_eq!(ns.value(6), 0);
    assert_eq!(ns.value(8), 200);
    let offsets = access::int64(&t.alignment, col::OFFSET_TICKS).unwrap();
    assert_eq!(offsets.values().to_vec(), vec![5_000, 1_005_000]);
    let method = access::utf8(&t.alignment, col::METHOD).unwrap();
    assert_eq!(method.value(0), "first_record");
    // 2 blocks x 2 threads x 2 steps.
    assert_eq!(t.spans.num_rows(), 8);
    let lane = access::utf8(&t.spans, col::LANE).unwrap();
    assert_eq!(lane.value(0), "SM 0");
    assert_eq!(lane.value(7), "SM 1");
    let dur = access::int64(&t.spans, col::DURATION_NS).unwrap();
    assert!(dur.values().iter().all(|&d| d == 100));
    let name = access::utf8(&t.spans, col::NAME).unwrap();
    assert_eq!(name.value(0), "point 0 -> 1");
    assert_eq!(t.backwards, 0);
}

/// Found by `cargo xtask fuzz --target kernel_trace`: a record with SM id 3,515,023,360 sized a
/// vector of offsets by that id (28 GB) and aborted. `%smid` values need not be dense; any u32 is
/// aligned, without a table as large as the id.
#[test]
fn sm_ids_of_any_size_are_aligned_without_a_table_that_large() {
    let (header, records) = two_sm_trace();
    let with_sm = |sm: u32| {
        let mut records = records.clone();
        for r in records.iter_mut().filter(|r| r.sm == 1) {
            r.sm = sm;
        }
        kernel_trace::read(&bytes_of(&header, &records)[..], 4096)
            .unwrap()
            .tables("k", LaneBy::Sm)
    };
    let t = with_sm(3_000_000).unwrap();
    let ns = access::int64(&t.records, col::TIME_NS).unwrap();
    assert_eq!((ns.value(0), ns.value(6), ns.value(8)), (0, 0, 200));
    let offsets = access::int64(&t.alignment, col::OFFSET_TICKS).unwrap();
    assert_eq!(offsets.values().to_vec(), vec![5_000, 1_005_000]);
    // Beyond the `sm_id` column's range: refused, naming the first such record.
    let error = with_sm(u32::MAX - 1).unwrap_err().to_string();
    assert!(
        error.contains("sm_id") && error.contains("row 6"),
        "{error}"
    );
}

#[test]
fn cycles_are_converted_with_the_recorded_clock() {
    let (mut header, records) = two_sm_trace();
    header.clock_khz = 1_500_000; // 1.5 GHz: 100 cycles = 66.7 ns
    let trace = kernel_trace::read(&bytes_of(&header, &records)[..], 4096).unwrap();
    let t = trace.tables("k", LaneBy::Thread).unwrap();
    let ns = access::int64(&t.records, col::TIME_NS).unwrap();
    assert_eq!(ns.value(1), 67);
    assert_eq!(ns.value(2), 133);
    let lane = access::utf8(&t.spans, col::LANE).unwrap();
    assert_eq!(lane.value(0), "SM 0 / block 0 / thread 0");
}

#[test]
fn the_global_timer_keeps_one_time_base() {
    let (mut header, records) = two_sm_trace();
    header.timer = Timer::GlobalTimer;
    let trace = kernel_trace::read(&bytes_of(&header, &records)[..], 4096).unwrap();
    let t = trace.tables("k", LaneBy::Block).unwrap();
    let ns = access::int64(&t.records, col::TIME_NS).unwrap();
    // One clock: SM 1's records stay 1,000,000 ns later.
    assert_eq!(ns.value(6), 1_000_000);
    let method = access::utf8(&t.alignment, col::METHOD).unwrap();
    assert_eq!(method.value(1), "global_timer");
}

#[test]
fn unsorted_records_are_grouped_by_thread_and_backwards_steps_flagged() {
    let (header, mut records) = two_sm_trace();
    // Reversed, every thread's points come in the order 2, 1, 0: both of its steps go back.
    records.reverse();
    let trace = kernel_trace::read(&bytes_of(&header, &records)[..], 4096).unwrap();
    let t = trace.tables("k", LaneBy::Sm).unwrap();
    assert_eq!(t.spans.num_rows(), 8, "the threads' consecutive points");
    assert_eq!(t.backwards, 8);
    let flag = access::utf8(&t.records, col::FLAG).unwrap();
    assert_eq!(flag.null_count(), 12 - 8);
    let span_flag = access::utf8(&t.spans, col::FLAG).unwrap();
    assert_eq!(span_flag.value(0), "backwards");
    let dur = access::int64(&t.spans, col::DURATION_NS).unwrap();
    assert_eq!(dur.value(0), 0, "a backwards step has no length");
}

fn error_of(bytes: &[u8]) -> String {
    match kernel_trace::read(bytes, 4096) {
        Ok(_) => panic!("accepted a bad file"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_files_are_refused_with_where_and_why() {
    let (header, records) = two_sm_trace();
    let good = bytes_of(&header, &records);

    let e = error_of(b"");
    assert!(e.contains("not a kernel trace"), "{e}");
    let mut wrong = good.clone();
    wrong[..8].copy_from_slice(b"PK\x03\x04zip!");
    let e = error_of(&wrong);
    assert!(e.starts_with("byte 0: not a kernel trace"), "{e}");

    let e = error_of(&good[..20]);
    assert!(e.contains("truncated header"), "{e}");

    let mut future = good.clone();
    future[8..10].copy_from_slice(&2u16.to_le_bytes());
    let e = error_of(&future);
    assert!(e.starts_with("byte 8: kernel-trace version 2"), "{e}");

    // A record cut in the middle.
    let e = error_of(&good[..good.len() - 5]);
    assert!(
        e.contains("truncated") && e.contains("11 whole records and 19 bytes"),
        "{e}"
    );

    // A record count past the end of the file.
    let mut count = good.clone();
    count[24..32].copy_from_slice(&1_000_000_000u64.to_le_bytes());
    let e = error_of(&count);
    assert!(
        e.contains("announces 1000000000 records") && e.contains("12 whole records"),
        "{e}"
    );

    // Fewer records announced than the file holds.
    let mut short = good.clone();
    short[24..32].copy_from_slice(&10u64.to_le_bytes());
    let e = error_of(&short);
    assert!(e.contains("data after the 10 records"), "{e}");

    let mut timer = good.clone();
    timer[14] = 7;
    assert!(error_of(&timer).starts_with("byte 14: timer 7"));
    let mut layout = good.clone();
    layout[12] = 32;
    assert!(error_of(&layout).contains("record layout 0 of 32 bytes"));
    let mut clock = good;
    clock[20..24].copy_from_slice(&0u32.to_le_bytes());
    assert!(error_of(&clock).contains("clock rate 0 kHz"));
}
