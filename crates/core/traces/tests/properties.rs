//! Property tests of the span and pyramid queries (issue 18, item 2):
//!
//! - the nesting depth of every interval, computed with one sorted pass and a stack, equals the
//!   brute-force count of the intervals that contain it and come before it, for any properly
//!   nested trace in any row order;
//! - every bin of every level of a trace pyramid (built in constant time per record from
//!   difference arrays, coarser levels by halving) holds the busy time of its lane in it over its
//!   length, as summed record by record over the bin.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
use yosoku_traces::pyramid::{PyramidBuilder, PyramidRecord, TILE_BINS};
use yosoku_traces::spans::nesting_depths;

/// A properly nested trace drawn from `seed`: per lane, intervals split into disjoint children
/// (sometimes starting with or filling their parent), up to four levels deep; the rows shuffled
/// and a few non-intervals (lane `u32::MAX`) mixed in.
fn nested_trace(seed: u64, lanes: u32) -> (Vec<u32>, Vec<i64>, Vec<i64>) {
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut rows: Vec<(u32, i64, i64)> = Vec::new();
    fn children(
        lane: u32,
        lo: i64,
        hi: i64,
        level: u32,
        next: &mut dyn FnMut() -> u64,
        rows: &mut Vec<(u32, i64, i64)>,
    ) {
        if level > 4 || hi - lo < 2 {
            return;
        }
        let count = next() % 4;
        let mut cuts: Vec<i64> = (0..2 * count)
            .map(|_| lo + (next() % (hi - lo + 1) as u64) as i64)
            .collect();
        cuts.sort_unstable();
        for pair in cuts.chunks(2) {
            let (a, b) = (pair[0], pair[1]);
            if b > a {
                rows.push((lane, a, b - a));
                children(lane, a, b, level + 1, next, rows);
            }
        }
    }
    for lane in 0..lanes {
        let end = 50 + (next() % 1000) as i64;
        rows.push((lane, 0, end));
        children(lane, 0, end, 1, &mut next, &mut rows);
    }
    for _ in 0..next() % 3 {
        rows.push((u32::MAX, (next() % 100) as i64, 0));
    }
    for i in (1..rows.len()).rev() {
        rows.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    (
        rows.iter().map(|r| r.0).collect(),
        rows.iter().map(|r| r.1).collect(),
        rows.iter().map(|r| r.2).collect(),
    )
}

/// Row `j` contains row `i` and comes before it in the reading order (earlier start, or the same
/// start and longer, or identical and earlier in the table).
fn encloses_before(j: usize, i: usize, start: &[i64], duration: &[i64]) -> bool {
    let (ej, ei) = (start[j] + duration[j], start[i] + duration[i]);
    let contains = start[j] <= start[i] && ei <= ej;
    let before = start[j] < start[i]
        || (start[j] == start[i]
            && (duration[j] > duration[i] || (duration[j] == duration[i] && j < i)));
    contains && before
}

proptest! {
    #[test]
    fn nesting_depths_equal_a_brute_force_count(seed in any::<u64>(), lanes in 1u32..4) {
        let (lane, start, duration) = nested_trace(seed, lanes);
        let depths = nesting_depths(&lane, &start, &duration);
        for i in 0..lane.len() {
            let expected = if lane[i] == u32::MAX {
                0
            } else {
                (0..lane.len())
                    .filter(|&j| j != i && lane[j] == lane[i] && encloses_before(j, i, &start, &duration))
                    .count() as i32
            };
            prop_assert_eq!(depths[i], expected, "row {} (lane {}, {} + {})", i, lane[i], start[i], duration[i]);
        }
    }
}

/// Records on `lanes` lanes over [0, span) ns: (lane, start, duration); a few are longer than
/// the trace's end or of zero length.
fn records() -> impl Strategy<Value = (u32, i64, Vec<(u32, i64, i64)>)> {
    (1u32..4, 1_000i64..10_000_000).prop_flat_map(|(lanes, span)| {
        let record = (
            0..lanes,
            0..span,
            prop_oneof![
                8 => 0..span / 4,
                1 => Just(0i64),
                1 => span / 2..span * 2,
            ],
        );
        (
            Just(lanes),
            Just(span),
            proptest::collection::vec(record, 0..200),
        )
    })
}

/// The busy time over the bin length of each of `bins` bins per lane over [0, span_ns), summed
/// record by record (a record at least `min_ns` long, cut at the trace's end).
fn busy_by_brute_force(
    records: &[(u32, i64, i64)],
    lanes: usize,
    span_ns: f64,
    bins: usize,
    min_ns: f64,
) -> Vec<f64> {
    let bin_ns = span_ns / bins as f64;
    let mut busy = vec![0.0; lanes * bins];
    for &(lane, s, d) in records {
        let s = s as f64;
        let e = (s + (d as f64).max(min_ns)).min(span_ns);
        let first = ((s / bin_ns) as usize).min(bins - 1);
        let last = ((e / bin_ns) as usize).min(bins - 1);
        for b in first..=last {
            let (from, to) = (b as f64 * bin_ns, (b + 1) as f64 * bin_ns);
            busy[lane as usize * bins + b] += (e.min(to) - s.max(from)).max(0.0) / bin_ns;
        }
    }
    busy
}

proptest! {
    #[test]
    fn pyramid_bins_hold_the_busy_time_summed_record_by_record(
        (lanes, span, records) in records(),
        levels_hint in 0u64..3,
    ) {
        // The record count the builder is told sizes the pyramid: up to three levels.
        let hint = (4 * TILE_BINS as u64 * u64::from(lanes)) << levels_hint;
        let mut builder = PyramidBuilder::new(lanes as usize, 0, span, hint);
        let levels = builder.levels();
        let finest_bins = TILE_BINS << (levels - 1);
        for (i, &(lane, start, duration)) in records.iter().enumerate() {
            builder.add(&PyramidRecord {
                lane,
                kind: (i % 3) as u16,
                start_ns: start,
                duration_ns: duration,
                source_row: i as i64,
            });
        }
        let span_ns = span as f64;
        let min_ns = 1e-3 * span_ns / finest_bins as f64;
        let expected: Vec<Vec<f64>> = (0..levels)
            .map(|l| busy_by_brute_force(&records, lanes as usize, span_ns, TILE_BINS << l, min_ns))
            .collect();
        let mut tiles = 0;
        for (level, tile, t) in builder.tiles() {
            tiles += 1;
            let bins = TILE_BINS << level;
            for lane in 0..lanes as usize {
                for b in 0..TILE_BINS {
                    let want = expected[level as usize][lane * bins + tile * TILE_BINS + b];
                    let got = f64::from(t.occupancy[lane * TILE_BINS + b]);
                    prop_assert!(
                        (got - want).abs() <= 1e-3 + 1e-4 * want,
                        "level {level}, tile {tile}, lane {lane}, bin {b}: {got} != {want}"
                    );
                }
            }
        }
        prop_assert_eq!(tiles, (1 << levels) - 1);
    }
}
