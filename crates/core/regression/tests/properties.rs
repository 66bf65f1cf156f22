//! Property tests of the regression core (issue 18, item 2): invariants that must hold for any
//! data, checked on random designs drawn by proptest (its default 256 cases a property; a
//! failure is shrunk to a minimal design and printed).
//!
//! - least squares does not depend on the order of the rows;
//! - scaling a column scales its coefficient inversely and changes no prediction;
//! - a duplicated column is detected as collinear and changes no prediction;
//! - leave-one-out and grouped hold-outs equal refits without the held-out rows (the hat-matrix
//!   and block-deletion identities are exact, not approximations);
//! - ridge with a fixed penalty keeps leave-one-out exact as well.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use faer::Mat;
use proptest::prelude::*;
use yosoku_regression::validate::{Scheme, validate};
use yosoku_regression::{OlsOptions, ols};

/// A design of `n` rows and `p` columns with a target: values in [-10, 10] plus a linear signal,
/// so that the fits are well conditioned (random columns of 8+ rows almost surely are).
fn design() -> impl Strategy<Value = (Mat<f64>, Vec<f64>)> {
    (1usize..5, 0usize..25).prop_flat_map(|(p, extra)| {
        let n = p + 6 + extra;
        (
            proptest::collection::vec(-10.0f64..10.0, n * p),
            proptest::collection::vec(-1.0f64..1.0, n),
            proptest::collection::vec(-3.0f64..3.0, p),
        )
            .prop_map(move |(values, noise, beta)| {
                let x = Mat::from_fn(n, p, |i, j| values[i * p + j]);
                let y = (0..n)
                    .map(|i| 2.0 + (0..p).map(|j| beta[j] * x[(i, j)]).sum::<f64>() + noise[i])
                    .collect();
                (x, y)
            })
    })
}

/// `a` and `b` agree to 1e-8 of the larger magnitude (or 1e-8 absolutely near zero).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-8 * a.abs().max(b.abs()).max(1.0)
}

fn all_close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(*x, *y))
}

fn rows(x: &Mat<f64>, keep: &[usize]) -> Mat<f64> {
    Mat::from_fn(keep.len(), x.ncols(), |i, j| x[(keep[i], j)])
}

proptest! {
    #[test]
    fn the_order_of_the_rows_does_not_matter((x, y) in design(), seed in any::<u64>()) {
        let n = x.nrows();
        // A seeded shuffle of the rows.
        let mut order: Vec<usize> = (0..n).collect();
        let mut state = seed | 1;
        for i in (1..n).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let xs = rows(&x, &order);
        let ys: Vec<f64> = order.iter().map(|&i| y[i]).collect();
        let a = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
        let b = ols(xs.as_ref(), &ys, &OlsOptions::default()).unwrap();
        prop_assert!(close(a.intercept, b.intercept));
        prop_assert!(all_close(&a.coefficients, &b.coefficients), "{:?} vs {:?}", a.coefficients, b.coefficients);
        let fitted_in_order: Vec<f64> = order.iter().map(|&i| a.fitted[i]).collect();
        prop_assert!(all_close(&fitted_in_order, &b.fitted));
        let leverage_in_order: Vec<f64> = order.iter().map(|&i| a.leverage[i]).collect();
        prop_assert!(all_close(&leverage_in_order, &b.leverage));
    }

    #[test]
    fn a_scaled_column_scales_its_coefficient_and_nothing_else(
        (x, y) in design(),
        column in any::<prop::sample::Index>(),
        exponent in -6i32..7,
    ) {
        let j = column.index(x.ncols());
        let c = 10f64.powi(exponent) * 1.7;
        let scaled = Mat::from_fn(x.nrows(), x.ncols(), |i, k| if k == j { c * x[(i, k)] } else { x[(i, k)] });
        let a = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
        let b = ols(scaled.as_ref(), &y, &OlsOptions::default()).unwrap();
        prop_assert_eq!(&a.kept, &b.kept);
        let k = a.kept.iter().position(|&kj| kj == j).unwrap();
        prop_assert!(close(a.coefficients[k], c * b.coefficients[k]), "{} vs {} x {}", a.coefficients[k], c, b.coefficients[k]);
        prop_assert!(all_close(&a.fitted, &b.fitted));
        prop_assert!(close(a.r2, b.r2));
    }

    #[test]
    fn a_duplicated_column_is_dropped_and_changes_no_prediction(
        (x, y) in design(),
        column in any::<prop::sample::Index>(),
    ) {
        let p = x.ncols();
        let j = column.index(p);
        let wider = Mat::from_fn(x.nrows(), p + 1, |i, k| x[(i, if k == p { j } else { k })]);
        let a = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
        let b = ols(wider.as_ref(), &y, &OlsOptions::default()).unwrap();
        prop_assert_eq!(b.kept.len(), p);
        prop_assert_eq!(b.dropped.len(), 1);
        prop_assert!(b.dropped[0] == j || b.dropped[0] == p, "dropped {:?} of duplicate {} / {}", b.dropped, j, p);
        prop_assert!(all_close(&a.fitted, &b.fitted));
    }

    #[test]
    fn leave_one_out_equals_refits((x, y) in design(), ridge in prop_oneof![Just(0.0), 0.01f64..5.0]) {
        let options = OlsOptions { ridge, ..OlsOptions::default() };
        let held = validate(x.as_ref(), &y, &options, &Scheme::LeaveOneOut).unwrap();
        let n = x.nrows();
        prop_assert_eq!(held.len(), n);
        for h in &held {
            let train: Vec<usize> = (0..n).filter(|&i| i != h.row).collect();
            let fit = ols(rows(&x, &train).as_ref(), &train.iter().map(|&i| y[i]).collect::<Vec<_>>(), &options).unwrap();
            let row: Vec<f64> = (0..x.ncols()).map(|j| x[(h.row, j)]).collect();
            let refit = fit.predict(&row);
            prop_assert!(close(h.predicted, refit), "row {}: {} vs refit {}", h.row, h.predicted, refit);
        }
    }

    #[test]
    fn grouped_hold_outs_equal_refits((x, y) in design(), groups in 2usize..5, ridge in prop_oneof![Just(0.0), 0.01f64..5.0]) {
        let n = x.nrows();
        // Contiguous blocks of rows, as a program's launches come in a file.
        let labels: Vec<String> = (0..n).map(|i| format!("g{}", i * groups / n)).collect();
        let options = OlsOptions { ridge, ..OlsOptions::default() };
        let held = validate(x.as_ref(), &y, &options, &Scheme::Grouped { labels: labels.clone() }).unwrap();
        prop_assert_eq!(held.len(), n);
        for h in &held {
            let train: Vec<usize> = (0..n).filter(|&i| labels[i] != labels[h.row]).collect();
            let ys: Vec<f64> = train.iter().map(|&i| y[i]).collect();
            let Ok(fit) = ols(rows(&x, &train).as_ref(), &ys, &options) else {
                // Too few training rows for the model: validate must have failed too, not here.
                prop_assert!(false, "refit without {} failed where validate did not", labels[h.row]);
                unreachable!()
            };
            let row: Vec<f64> = (0..x.ncols()).map(|j| x[(h.row, j)]).collect();
            let refit = fit.predict(&row);
            prop_assert!(close(h.predicted, refit), "row {} ({}): {} vs refit {}", h.row, labels[h.row], h.predicted, refit);
            prop_assert_eq!(&*h.fold, labels[h.row].as_str());
        }
    }
}
