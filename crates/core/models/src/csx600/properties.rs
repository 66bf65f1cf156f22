//! Property tests of the CSX600 operation-count model (issue 18, item 2), on random counts and
//! throughputs drawn by proptest (256 cases a property; a failure is shrunk and printed):
//!
//! - each variant's prediction is the sum of its counts over their throughputs (an oracle
//!   computed here, independently of the model's grouping);
//! - the prediction never falls when a count grows, and never rises when a throughput grows;
//! - scaling every count by k scales every prediction by k.

use proptest::prelude::*;
use yosoku_tables::col;

use crate::csx600::op_count_model;
use crate::fixtures::{counts, floats, strings, throughputs};

const OPS: [&str; 4] = ["add", "mul", "mac", "div"];

/// Throughputs of the four operations (ops/s) and, per variant (up to 3), a count of each.
fn cases() -> impl Strategy<Value = ([f64; 4], Vec<[f64; 4]>)> {
    (
        proptest::array::uniform4(1e6f64..1e10),
        proptest::collection::vec(proptest::array::uniform4(0.0f64..1e10), 1..4),
    )
}

const VARIANTS: [&str; 3] = ["a", "b", "c"];

/// Each variant's predicted seconds, in variant order.
fn predict(rates: &[f64; 4], variants: &[[f64; 4]]) -> Vec<f64> {
    let rate_rows: Vec<_> = OPS
        .iter()
        .zip(rates)
        .map(|(op, r)| ("poly", false, "double", *op, None, *r))
        .collect();
    let count_rows: Vec<_> = variants
        .iter()
        .zip(VARIANTS)
        .flat_map(|(c, v)| {
            OPS.iter()
                .zip(c)
                .map(move |(op, n)| (v, "poly", false, "double", *op, None, *n, "operations"))
        })
        .collect();
    let fitted = op_count_model("m", &throughputs(&rate_rows), &counts(&count_rows)).unwrap();
    let names = strings(&fitted.predictions, col::VARIANT);
    let secs = floats(&fitted.predictions, col::PREDICTED_SECS);
    VARIANTS[..variants.len()]
        .iter()
        .map(|v| secs[names.iter().position(|n| n == v).unwrap()])
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}

proptest! {
    #[test]
    fn a_prediction_is_the_sum_of_counts_over_throughputs((rates, variants) in cases()) {
        let predicted = predict(&rates, &variants);
        for (p, c) in predicted.iter().zip(&variants) {
            let oracle: f64 = c.iter().zip(&rates).map(|(n, r)| n / r).sum();
            prop_assert!(close(*p, oracle), "{p} vs {oracle}");
        }
    }

    #[test]
    fn more_work_never_takes_less_time_and_faster_units_never_more(
        (rates, variants) in cases(),
        which in 0usize..4,
        factor in 1.0f64..10.0,
    ) {
        let base = predict(&rates, &variants);
        let mut more = variants.clone();
        for c in &mut more {
            c[which] *= factor;
        }
        for (b, m) in base.iter().zip(predict(&rates, &more)) {
            prop_assert!(m >= *b, "a count grew by {factor} and the time fell: {b} -> {m}");
        }
        let mut faster = rates;
        faster[which] *= factor;
        for (b, f) in base.iter().zip(predict(&faster, &variants)) {
            prop_assert!(f <= *b, "a throughput grew by {factor} and the time rose: {b} -> {f}");
        }
    }

    #[test]
    fn scaling_every_count_scales_every_prediction((rates, variants) in cases(), k in 0.5f64..100.0) {
        let base = predict(&rates, &variants);
        let scaled: Vec<[f64; 4]> = variants.iter().map(|c| c.map(|n| n * k)).collect();
        for (b, s) in base.iter().zip(predict(&rates, &scaled)) {
            prop_assert!((s - b * k).abs() <= 1e-9 * (b * k).abs().max(1e-300), "{b} x {k} vs {s}");
        }
    }
}
