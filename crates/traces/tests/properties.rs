//! Property tests of the span queries (issue 18, item 2): the nesting depth of every interval,
//! computed with one sorted pass and a stack, equals the brute-force count of the intervals that
//! contain it and come before it, for any properly nested trace in any row order.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use proptest::prelude::*;
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
