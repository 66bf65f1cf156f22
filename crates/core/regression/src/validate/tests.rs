//! Validation against refits done by hand and against numpy/statsmodels (tools/oracle).

use super::holdout::{blocks_of, training_ranges_of_blocks};
use super::ridge::LooRefinement;
use faer::Mat;

use super::scheme::rows_of;
use super::*;

#[test]
fn block_training_ranges_equal_a_scan_of_the_other_blocks() {
    let n = 23;
    let x = Mat::from_fn(n, 3, |i, j| {
        ((i * 7 + j * 13) % 17) as f64 - (j as f64) * 0.5
    });
    let labels: Vec<String> = (0..n).map(|i| format!("g{}", (i * 5) % 6)).collect();
    let blocks = blocks_of(&labels);
    let fast = training_ranges_of_blocks(x.as_ref(), &blocks);
    for (b, (label, _)) in blocks.iter().enumerate() {
        let train: Vec<usize> = (0..n).filter(|&i| &labels[i] != label).collect();
        assert_eq!(fast[b], ranges(x.as_ref(), &train), "block {label}");
    }
}

/// Ridge on columns z-scored by the training rows `train`, refitted from scratch with the
/// general least-squares code: the definition `validate_standardized_ridge` must reproduce.
fn standardized_refit(
    x: MatRef<'_, f64>,
    y: &[f64],
    lambda: f64,
    train: &[usize],
    row: usize,
) -> f64 {
    let p = x.ncols();
    let nt = train.len() as f64;
    let stats: Vec<(f64, f64)> = (0..p)
        .map(|j| {
            let m = train.iter().map(|&i| x[(i, j)]).sum::<f64>() / nt;
            let v = train.iter().map(|&i| (x[(i, j)] - m).powi(2)).sum::<f64>() / nt;
            (m, v.sqrt())
        })
        .collect();
    let kept: Vec<usize> = (0..p).filter(|&j| stats[j].1 > 0.0).collect();
    let z = Mat::from_fn(train.len(), kept.len(), |r, k| {
        let j = kept[k];
        (x[(train[r], j)] - stats[j].0) / stats[j].1
    });
    let yt: Vec<f64> = train.iter().map(|&i| y[i]).collect();
    let fit = ols(
        z.as_ref(),
        &yt,
        &OlsOptions {
            ridge: lambda,
            leverage: false,
            ..OlsOptions::default()
        },
    )
    .unwrap();
    let zrow: Vec<f64> = kept
        .iter()
        .map(|&j| (x[(row, j)] - stats[j].0) / stats[j].1)
        .collect();
    fit.predict(&zrow)
}

#[test]
fn standardized_ridge_equals_refits_on_each_training_sets_own_z_scores() {
    let (mut x, y) = data(40);
    // A column only the rows of group `c` use: constant (zero) in that group's training set.
    for i in 0..40 {
        x[(i, 2)] = if i % 4 == 2 { x[(i, 2)] + 1.0 } else { 0.0 };
    }
    let labels: Vec<String> = (0..40)
        .map(|i| ["a", "b", "c", "d"][i % 4].to_owned())
        .collect();
    let lambda = 0.5;
    for scheme in [
        Scheme::Fit,
        Scheme::LeaveOneOut,
        Scheme::KFold { folds: 5, seed: 3 },
        Scheme::Grouped {
            labels: labels.clone(),
        },
    ] {
        let held = validate_standardized_ridge(x.as_ref(), &y, lambda, &scheme).unwrap();
        assert_eq!(held.len(), 40);
        let fold_rows = |h: &Held| -> Vec<usize> {
            match &scheme {
                Scheme::Fit => (0..40).collect(),
                Scheme::LeaveOneOut => (0..40).filter(|&i| i != h.row).collect(),
                Scheme::KFold { folds, seed } => {
                    let f = fold_labels(40, *folds, *seed);
                    (0..40).filter(|&i| f[i] != f[h.row]).collect()
                }
                Scheme::Grouped { labels } => {
                    (0..40).filter(|&i| labels[i] != labels[h.row]).collect()
                }
            }
        };
        for h in &held {
            let want = standardized_refit(x.as_ref(), &y, lambda, &fold_rows(h), h.row);
            assert!(
                (h.predicted - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{scheme:?} row {}: {} vs {want}",
                h.row,
                h.predicted
            );
        }
    }
}

/// Leave-one-out by refinement from one factorisation gives the direct solves' predictions
/// (every row its own group); a row that alone gives a column its variance is left to the
/// direct solve, and so is one that nearly determines the model alone.
#[test]
fn refined_leave_one_out_equals_the_direct_solves() {
    let n = 60;
    let (mut x, mut y) = data(n);
    // Column 2 nonzero in row 7 only; row 11 far out in column 0 (high leverage).
    for i in 0..n {
        x[(i, 2)] = if i == 7 { 3.0 } else { 0.0 };
    }
    x[(11, 0)] *= 1e4;
    y[11] += 50.0;
    let lambda = 1.0;
    let refined =
        validate_standardized_ridge(x.as_ref(), &y, lambda, &Scheme::LeaveOneOut).unwrap();
    let labels: Vec<String> = (0..n).map(|i| format!("row {i}")).collect();
    let direct =
        validate_standardized_ridge(x.as_ref(), &y, lambda, &Scheme::Grouped { labels }).unwrap();
    for (r, d) in refined.iter().zip(&direct) {
        assert_eq!(r.row, d.row);
        assert!(
            (r.predicted - d.predicted).abs() <= 1e-10 * d.predicted.abs().max(1.0),
            "row {}: {} vs {}",
            r.row,
            r.predicted,
            d.predicted
        );
        assert_eq!(r.extrapolated, d.extrapolated, "row {}", r.row);
        assert_eq!(&*r.fold, "loo");
    }
    // Which rows refinement solves.
    let mean_x: Vec<f64> = (0..3)
        .map(|j| (0..n).map(|i| x[(i, j)]).sum::<f64>() / n as f64)
        .collect();
    let mean_y = y.iter().sum::<f64>() / n as f64;
    let xc = Mat::from_fn(n, 3, |i, j| x[(i, j)] - mean_x[j]);
    let sxx = xc.as_ref().transpose() * xc.as_ref();
    let yc = Mat::from_fn(n, 1, |i, _| y[i] - mean_y);
    let sxy = xc.as_ref().transpose() * yc.as_ref();
    let mut refine = LooRefinement::new(sxx.as_ref(), sxy.as_ref(), lambda, n).unwrap();
    let mut solved = |i: usize| refine.predict(xc.as_ref().row(i), yc[(i, 0)]).is_some();
    assert!(!solved(7), "row 7 alone gives column 2 its variance");
    assert!(!solved(11), "row 11 nearly determines the model alone");
    assert!((0..n).filter(|&i| i != 7 && i != 11).all(&mut solved));
}

/// Nothing of the held-out rows reaches their predictions: changing the other held-out rows
/// of a group (their features and targets) leaves a held-out row's prediction as it was.
#[test]
fn a_held_out_rows_prediction_ignores_the_other_held_out_rows() {
    let (x, y) = data(40);
    let labels: Vec<String> = (0..40)
        .map(|i| ["a", "b", "c", "d"][i % 4].to_owned())
        .collect();
    let scheme = Scheme::Grouped { labels };
    let before = validate_standardized_ridge(x.as_ref(), &y, 1.0, &scheme).unwrap();
    let (mut x2, mut y2) = (x.clone(), y.clone());
    // Group `a` is rows 0, 4, 8, ...: change every one of them but row 0.
    for i in (4..40).step_by(4) {
        for j in 0..3 {
            x2[(i, j)] = x2[(i, j)] * 7.0 + 100.0;
        }
        y2[i] *= -3.0;
    }
    let after = validate_standardized_ridge(x2.as_ref(), &y2, 1.0, &scheme).unwrap();
    assert!((before[0].predicted - after[0].predicted).abs() < 1e-9);
    // The rows of the other groups did see the change (it is in their training sets).
    assert!((before[1].predicted - after[1].predicted).abs() > 1e-3);
}

fn data(n: usize) -> (Mat<f64>, Vec<f64>) {
    let x = Mat::from_fn(n, 3, |i, j| {
        ((i * (j + 3) + 7 * j) % 11) as f64 + (i as f64) * 0.1 * (j as f64 + 1.0)
    });
    let y: Vec<f64> = (0..n)
        .map(|i| {
            2.0 + 1.5 * x[(i, 0)] - 0.7 * x[(i, 1)]
                + 0.3 * x[(i, 2)]
                + ((i * 37 % 13) as f64 - 6.0) * 0.05
        })
        .collect();
    (x, y)
}

/// Refits without each label's rows, the definition the fast paths must reproduce.
fn brute(x: MatRef<'_, f64>, y: &[f64], options: &OlsOptions, labels: &[String]) -> Vec<Held> {
    let n = x.nrows();
    let mut out: Vec<Held> = Vec::new();
    for i in 0..n {
        let train: Vec<usize> = (0..n).filter(|&k| labels[k] != labels[i]).collect();
        let xt = rows_of(x, &train);
        let yt: Vec<f64> = train.iter().map(|&k| y[k]).collect();
        let fit = ols(xt.as_ref(), &yt, options).unwrap();
        let row: Vec<f64> = (0..x.ncols()).map(|j| x[(i, j)]).collect();
        out.push(Held {
            row: i,
            predicted: fit.predict(&row),
            fold: labels[i].as_str().into(),
            interval: fit.prediction_interval(&row, 0.95),
            extrapolated: outside(x, i, &ranges(x, &train), &fit.kept),
        });
    }
    out
}

fn same(fast: &[Held], slow: &[Held]) {
    assert_eq!(fast.len(), slow.len());
    for (a, b) in fast.iter().zip(slow) {
        assert_eq!(a.row, b.row);
        assert!(
            (a.predicted - b.predicted).abs() < 1e-9 * b.predicted.abs().max(1.0),
            "row {}: {} vs {}",
            a.row,
            a.predicted,
            b.predicted
        );
        match (a.interval, b.interval) {
            // Interval widths to 1e-4 of themselves: the refit's come from (X'X)^-1, whose
            // rounding grows with the square of the condition number.
            (Some(ia), Some(ib)) => {
                let tolerance = 1e-4 * (ib.1 - ib.0).abs() + 1e-12;
                assert!(
                    (ia.0 - ib.0).abs() < tolerance && (ia.1 - ib.1).abs() < tolerance,
                    "{ia:?} vs {ib:?}"
                );
            }
            (None, None) => {}
            other => panic!("intervals differ: {other:?}"),
        }
        assert_eq!(a.extrapolated, b.extrapolated, "row {}", a.row);
    }
}

#[test]
fn block_deletion_equals_refitting_without_each_group() {
    let (x, y) = data(40);
    let labels = fold_labels(40, 5, 3);
    let fast = validate(
        x.as_ref(),
        &y,
        &OlsOptions::default(),
        &Scheme::KFold { folds: 5, seed: 3 },
    )
    .unwrap();
    same(
        &fast,
        &brute(x.as_ref(), &y, &OlsOptions::default(), &labels),
    );
    // Ridge: the same identity holds for a fixed penalty (no intervals).
    let ridge = OlsOptions {
        ridge: 0.5,
        ..OlsOptions::default()
    };
    let fast = validate(
        x.as_ref(),
        &y,
        &ridge,
        &Scheme::Grouped {
            labels: labels.clone(),
        },
    )
    .unwrap();
    same(&fast, &brute(x.as_ref(), &y, &ridge, &labels));
}

/// A fit of all rows handed in is used as it is, and one made with other options is not.
#[test]
fn a_given_fit_of_all_rows_gives_what_a_fit_of_its_own_does() {
    let (x, y) = data(40);
    let ridge = OlsOptions {
        ridge: 0.5,
        ..OlsOptions::default()
    };
    let labels = fold_labels(40, 5, 3);
    for options in [OlsOptions::default(), ridge] {
        let fit = ols(x.as_ref(), &y, &options).unwrap();
        let other = ols(
            x.as_ref(),
            &y,
            &OlsOptions {
                ridge: 9.0,
                ..options
            },
        )
        .unwrap();
        for scheme in [
            Scheme::Fit,
            Scheme::LeaveOneOut,
            Scheme::Grouped {
                labels: labels.clone(),
            },
        ] {
            let own = validate(x.as_ref(), &y, &options, &scheme).unwrap();
            for given in [&fit, &other] {
                let held = validate_fitted(x.as_ref(), &y, &options, &scheme, Some(given)).unwrap();
                assert_eq!(held, own, "{scheme:?}");
            }
        }
    }
}

#[test]
fn block_deletion_stays_exact_on_an_ill_conditioned_design() {
    // Condition number ~1e7 (the QR path): column 2 is column 0 plus a small independent
    // part, as counters that count nearly the same thing are.
    let n = 300;
    let x = Mat::from_fn(n, 4, |i, j| {
        let a = (i as f64 * 0.37).sin() * 1e6 + 2e6;
        match j {
            0 => a,
            1 => ((i * 7) % 13) as f64 * 1e3,
            2 => a + ((i * 11) % 17) as f64 * 0.05,
            _ => (i as f64).sqrt(),
        }
    });
    let y: Vec<f64> = (0..n)
        .map(|i| 1e-6 * x[(i, 0)] + 2e-4 * x[(i, 1)] + 0.3 * x[(i, 3)] + ((i % 5) as f64) * 0.01)
        .collect();
    let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
    assert!(fit.condition_number > 1e6, "{}", fit.condition_number);
    let labels: Vec<String> = (0..n).map(|i| format!("size {}", i / 12)).collect();
    let fast = validate(
        x.as_ref(),
        &y,
        &OlsOptions::default(),
        &Scheme::Grouped {
            labels: labels.clone(),
        },
    )
    .unwrap();
    same(
        &fast,
        &brute(x.as_ref(), &y, &OlsOptions::default(), &labels),
    );
    let loo = validate(x.as_ref(), &y, &OlsOptions::default(), &Scheme::LeaveOneOut).unwrap();
    let each: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    same(&loo, &brute(x.as_ref(), &y, &OlsOptions::default(), &each));
}

#[test]
fn a_group_that_alone_determines_a_coefficient_is_refitted() {
    // Column 3 is non-zero only in group `b`: without `b` it is constant and dropped.
    let (x3, y) = data(24);
    let x = Mat::from_fn(24, 4, |i, j| {
        if j < 3 {
            x3[(i, j)]
        } else if i >= 18 {
            (i * i % 7) as f64 + 1.0
        } else {
            0.0
        }
    });
    let labels: Vec<String> = (0..24)
        .map(|i| if i >= 18 { "b" } else { ["a", "c", "d"][i % 3] }.to_owned())
        .collect();
    let fast = validate(
        x.as_ref(),
        &y,
        &OlsOptions::default(),
        &Scheme::Grouped {
            labels: labels.clone(),
        },
    )
    .unwrap();
    same(
        &fast,
        &brute(x.as_ref(), &y, &OlsOptions::default(), &labels),
    );
}

#[test]
fn exact_leave_one_out_equals_refitting_without_each_row() {
    let (x, y) = data(30);
    let loo = validate(x.as_ref(), &y, &OlsOptions::default(), &Scheme::LeaveOneOut).unwrap();
    let labels: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    let brute = brute(x.as_ref(), &y, &OlsOptions::default(), &labels);
    for (a, b) in loo.iter().zip(&brute) {
        assert_eq!(a.row, b.row);
        assert!(
            (a.predicted - b.predicted).abs() < 1e-9 * b.predicted.abs().max(1.0),
            "{} vs {}",
            a.predicted,
            b.predicted
        );
        let (ia, ib) = (a.interval.unwrap(), b.interval.unwrap());
        assert!(
            (ia.0 - ib.0).abs() < 1e-8 && (ia.1 - ib.1).abs() < 1e-8,
            "{ia:?} vs {ib:?}"
        );
        assert_eq!(a.extrapolated, b.extrapolated);
    }
}

#[test]
fn exact_leave_one_out_holds_for_ridge_too() {
    let (x, y) = data(25);
    let options = OlsOptions {
        ridge: 0.5,
        ..OlsOptions::default()
    };
    let loo = validate(x.as_ref(), &y, &options, &Scheme::LeaveOneOut).unwrap();
    let labels: Vec<String> = (0..25).map(|i| i.to_string()).collect();
    let brute = validate(x.as_ref(), &y, &options, &Scheme::Grouped { labels }).unwrap();
    for (a, b) in loo.iter().zip(&brute) {
        assert!(
            (a.predicted - b.predicted).abs() < 1e-9 * b.predicted.abs().max(1.0),
            "{} vs {}",
            a.predicted,
            b.predicted
        );
    }
}

#[test]
fn folds_cover_every_row_once() {
    let (x, y) = data(23);
    let held = validate(
        x.as_ref(),
        &y,
        &OlsOptions::default(),
        &Scheme::KFold { folds: 5, seed: 7 },
    )
    .unwrap();
    assert_eq!(
        held.iter().map(|h| h.row).collect::<Vec<_>>(),
        (0..23).collect::<Vec<_>>()
    );
    let again = validate(
        x.as_ref(),
        &y,
        &OlsOptions::default(),
        &Scheme::KFold { folds: 5, seed: 7 },
    )
    .unwrap();
    assert_eq!(held, again, "the same seed gives the same folds");
}

#[test]
fn metrics_and_tiny_rows() {
    let m = metrics(&[1.0, 2.0, 4.0], &[1.1, 1.8, 4.0]);
    assert!((m.mean_abs_pct - 20.0 / 3.0).abs() < 1e-12);
    assert!((m.median_abs_pct - 10.0).abs() < 1e-12);
    assert!((m.max_abs_pct - 10.0).abs() < 1e-12);
    // An even count: the mean of the two middle errors (10 % and 30 %), whatever the order.
    let m = metrics(&[10.0, 1.0, 2.0, 4.0], &[13.0, 1.1, 2.0, 4.8]);
    assert!(
        (m.median_abs_pct - 15.0).abs() < 1e-12,
        "{}",
        m.median_abs_pct
    );
    assert!((m.max_abs_pct - 30.0).abs() < 1e-12);
    let x = Mat::from_fn(
        5,
        2,
        |i, j| if i == 4 { 1e-5 } else { 100.0 + (i + j) as f64 },
    );
    assert_eq!(
        tiny_rows(x.as_ref(), 1e-3),
        [false, false, false, false, true]
    );
    // Centred (standardised) values say nothing of size: half of them near zero flag no
    // row. Before, rows of z-scores near 0 were flagged as tiny kernels.
    let z = Mat::from_fn(200, 2, |i, j| ((i as f64) - 99.5) / 57.7 + 0.001 * j as f64);
    assert!(tiny_rows(z.as_ref(), 1e-3).iter().all(|t| !t));
    // Relative to the mean, not the median: a column of many small values and a few large
    // ones makes its small values tiny.
    let skewed = Mat::from_fn(10, 1, |i, _| if i < 9 { 1.0 } else { 1e6 });
    assert_eq!(
        tiny_rows(skewed.as_ref(), 1e-3)
            .iter()
            .filter(|t| **t)
            .count(),
        9
    );
}
