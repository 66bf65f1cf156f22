use super::robust::fit_robust;
use super::*;

fn points(xs: &[f64], f: impl Fn(f64) -> f64) -> Vec<Point> {
    xs.iter()
        .map(|&x| Point {
            coordinate: vec![x],
            values: vec![f(x)],
        })
        .collect()
}

#[test]
fn one_parameter_recovers_the_term_and_its_coefficients() {
    let xs = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
    let m = fit(
        &points(&xs, |x| 3.0 + 2.0 * x.powf(1.5) * x.log2()),
        &PmnfOptions::default(),
    )
    .unwrap();
    assert_eq!(m.terms.len(), 1);
    assert_eq!(m.terms[0].factors, vec![(0, Exponents::new(3, 2, 1))]);
    assert!((m.terms[0].coefficient - 2.0).abs() < 1e-9, "{m:?}");
    assert!((m.constant - 3.0).abs() < 1e-6, "{m:?}");
    assert!(m.cross_validated && m.smape < 1e-6);
    assert_eq!(m.to_extrap(&["p"]).split(" + ").count(), 2);
    assert!(m.to_extrap(&["p"]).ends_with("* p^(3/2) * log2(p)^(1)"));
}

#[test]
fn constant_measurements_give_the_constant_model() {
    let m = fit(
        &points(&[1.0, 2.0, 3.0, 4.0, 5.0], |_| 7.5),
        &PmnfOptions::default(),
    )
    .unwrap();
    assert!(m.terms.is_empty());
    assert_eq!(m.constant, 7.5);
    assert_eq!(m.rss, 0.0);
}

#[test]
fn values_below_one_rule_out_logarithms_and_noise_alone_stays_constant() {
    // x in (0, 1]: no log2 term may be chosen.
    let xs = [0.25, 0.5, 0.75, 1.0, 1.25];
    let m = fit(&points(&xs, |x| 1.0 + 4.0 * x * x), &PmnfOptions::default()).unwrap();
    assert_eq!(m.terms[0].factors, vec![(0, Exponents::new(2, 1, 0))]);
    // A tiny alternating wobble around 5: no term earns its place over the mean.
    let wobble = points(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], |x| {
        5.0 + if x as i64 % 2 == 0 { 1e-3 } else { -1e-3 }
    });
    let m = fit(&wobble, &PmnfOptions::default()).unwrap();
    assert!(m.terms.is_empty(), "{m:?}");
}

#[test]
fn repetitions_reduce_to_their_mean_or_median() {
    let pts: Vec<Point> = [1.0, 2.0, 3.0, 4.0, 5.0]
        .iter()
        .map(|&x| Point {
            coordinate: vec![x],
            values: vec![10.0 * x, 10.0 * x, 10.0 * x + 100.0],
        })
        .collect();
    let median = PmnfOptions {
        aggregate: Aggregate::Median,
        ..PmnfOptions::default()
    };
    let m = fit(&pts, &median).unwrap();
    assert!((m.evaluate(&[3.0]) - 30.0).abs() < 1e-6, "{m:?}");
    let m = fit(&pts, &PmnfOptions::default()).unwrap();
    assert!(
        (m.evaluate(&[3.0]) - (30.0 + 100.0 / 3.0)).abs() < 1e-6,
        "{m:?}"
    );
}

#[test]
fn two_parameters_combine_their_terms_multiplicatively_where_the_data_says_so() {
    let mut pts = Vec::new();
    for &p in &[2.0, 4.0, 8.0, 16.0, 32.0] {
        for &q in &[10.0, 20.0, 30.0, 40.0, 50.0] {
            pts.push(Point {
                coordinate: vec![p, q],
                values: vec![1.0 + 0.5 * p * q.powf(0.5)],
            });
        }
    }
    let m = fit(&pts, &PmnfOptions::default()).unwrap();
    assert_eq!(m.terms.len(), 1, "{m:?}");
    assert_eq!(
        m.terms[0].factors,
        vec![(0, Exponents::new(1, 1, 0)), (1, Exponents::new(1, 2, 0))]
    );
    assert!((m.terms[0].coefficient - 0.5).abs() < 1e-9);
    assert!(!m.cross_validated && m.smape < 1e-6);
    // And additively.
    for p in &mut pts {
        let (a, b) = (p.coordinate[0], p.coordinate[1]);
        p.values = vec![1.0 + 0.5 * a + 3.0 * b * b];
    }
    let m = fit(&pts, &PmnfOptions::default()).unwrap();
    let factors: Vec<_> = m.terms.iter().map(|t| t.factors.clone()).collect();
    assert_eq!(
        factors,
        vec![
            vec![(0, Exponents::new(1, 1, 0))],
            vec![(1, Exponents::new(2, 1, 0))]
        ]
    );
}

#[test]
fn the_interval_holds_the_fit_and_widens_away_from_the_points() {
    let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let noise = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0, -0.1, 0.3];
    let pts: Vec<Point> = xs
        .iter()
        .zip(noise)
        .map(|(&x, e)| Point {
            coordinate: vec![x],
            values: vec![2.0 + 3.0 * x + e],
        })
        .collect();
    let m = fit(&pts, &PmnfOptions::default()).unwrap();
    let (lo, hi) = m.interval(&[4.0], 0.95).unwrap();
    assert!(lo < m.evaluate(&[4.0]) && m.evaluate(&[4.0]) < hi);
    let (lo2, hi2) = m.interval(&[64.0], 0.95).unwrap();
    assert!(hi2 - lo2 > hi - lo);
}

#[test]
fn degenerate_input_is_an_error_naming_the_point_or_parameter() {
    let e = fit(&[], &PmnfOptions::default()).unwrap_err();
    assert_eq!(e, PmnfError::Empty);
    let e = fit_robust(&points(&[1.0, 2.0], |x| x), &PmnfOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("parameter 0: 2 distinct values"),
        "{e}"
    );
    let mut pts = points(&[1.0, 2.0, 3.0], |x| x);
    pts[1].values = vec![f64::NAN];
    let e = fit(&pts, &PmnfOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("point 1: "), "{e}");
    pts[1] = Point {
        coordinate: vec![2.0, 1.0],
        values: vec![2.0],
    };
    let e = fit(&pts, &PmnfOptions::default()).unwrap_err();
    assert!(
        e.to_string()
            .contains("2 parameter values where the first point has 1"),
        "{e}"
    );
}

#[test]
fn each_leave_one_out_line_is_the_svds_line() {
    // Bases from nearly flat to steep, on grids from 1 to 2^20, values with a 1 % wobble.
    let grids: [&[f64]; 3] = [
        &[1.0, 2.0, 3.0, 4.0, 5.0],
        &[2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
        &[1.0, 1024.0, 8192.0, 65536.0, 1048576.0],
    ];
    let mut compared = 0;
    for xs in grids {
        let ys: Vec<f64> = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| (3.0 + x.sqrt()) * (1.0 + 0.01 * [1.0, -1.0, 0.5][i % 3]))
            .collect();
        for e in DEFAULT_EXPONENTS.into_iter().chain(NEGATIVE_EXPONENTS) {
            let basis: Vec<f64> = xs.iter().map(|&x| e.evaluate(x)).collect();
            if basis.iter().any(|b| !b.is_finite()) {
                continue;
            }
            for i in 0..xs.len() {
                let others = |v: &[f64]| -> Vec<f64> {
                    v.iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, v)| *v)
                        .collect()
                };
                let svd = fit_two(&others(xs), &others(&ys), e).unwrap();
                let Some(line) = line_without(&basis, &ys, i) else {
                    continue;
                };
                compared += 1;
                // Compared where it predicts: at the point left out.
                let (a, b) = (line.0 + line.1 * basis[i], svd.0 + svd.1 * basis[i]);
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "{e:?} at {xs:?} without {i}: {line:?} against {svd:?}"
                );
            }
        }
    }
    assert!(compared > 500, "{compared}");
    // A basis that does not vary over the other points (log2(1) = 0 twice) is left to the SVD:
    // there the line is not determined.
    assert_eq!(line_without(&[0.0, 0.0, 5.0], &[1.0, 2.0, 3.0], 2), None);
}

#[test]
fn hypotheses_that_fit_exactly_tie_and_extrap_s_order_decides() {
    // On 2, 4, 8, n log2(n)^2 (2, 16, 72) is 7/6 n^2 (4, 16, 64) - 8/3: both fit exact n^2 data
    // to rounding, and which rounds smaller must not decide. Extra-P lists n log2(n)^2 first,
    // and in exact arithmetic keeps it; so does yosoku, whatever its solver's last bits.
    let term_of_squares = |xs: &[f64]| {
        let m = fit(&points(xs, |x| x * x), &PmnfOptions::default()).unwrap();
        m.terms[0].factors.clone()
    };
    assert_eq!(
        term_of_squares(&[2.0, 4.0, 8.0]),
        vec![(0, Exponents::new(1, 1, 2))]
    );
    // A fourth point tells them apart.
    assert_eq!(
        term_of_squares(&[2.0, 4.0, 8.0, 16.0]),
        vec![(0, Exponents::new(2, 1, 0))]
    );
    // Rounding is not a tie with measured noise: 1e-6 % is a relative error of 1e-8.
    assert!(smaller(0.0, 2e-6) && !smaller(0.0, 5e-7) && !smaller(1.0, 1.0 + 1e-10));
}

/// The median by selection is the median by sorting, odd and even; not a number of nothing.
#[test]
fn a_median_by_selection_is_the_median() {
    for values in [
        vec![3.0, 1.0, 2.0],
        vec![4.0, 1.0, 3.0, 2.0],
        vec![5.0],
        vec![2.0, 2.0],
    ] {
        let expected = median(&values);
        assert_eq!(
            median_by_selection(&mut values.clone()),
            expected,
            "{values:?}"
        );
    }
    assert!(median_by_selection(&mut []).is_nan() && median(&[]).is_nan());
}

/// Runs off any line leave Extra-P's search no line to rank a parameter's terms on, and it is
/// said with the parameters' names; a grid, or one parameter, has its lines, and a parameter
/// measured at one or two values is said as such ([`few_values`]).
#[test]
fn the_parameters_without_a_line_of_two_runs_are_named() {
    let point = |x: f64, y: f64| Point {
        coordinate: vec![x, y],
        values: vec![x * y],
    };
    let scattered: Vec<Point> = (1..=12)
        .map(|i| point(i as f64, ((i * 5) % 12 + 1) as f64))
        .collect();
    assert_eq!(without_line(&scattered), vec![0, 1]);
    assert_eq!(
        without_line_said(&without_line(&scattered), &["p", "n"]).unwrap(),
        "p, n: no two runs on a line of any (the other parameters fixed), so Extra-P's search \
         can put none of their terms into the model; the robust search models them from all the \
         runs"
    );
    assert!(few_values(&scattered).is_empty());
    assert!(
        without_line_said(&[1], &["x", "y"])
            .unwrap()
            .starts_with("y: no two runs on a line of it")
    );
    // Three values of x on the line y = 1; y at 1 and 3 alone: two values, on the line x = 1.
    let partial = vec![
        point(1.0, 1.0),
        point(2.0, 1.0),
        point(4.0, 1.0),
        point(1.0, 3.0),
    ];
    assert!(without_line(&partial).is_empty());
    let few = few_values(&partial);
    assert_eq!(
        few,
        [FewValues {
            parameter: 1,
            values: vec![1.0, 3.0]
        }]
    );
    assert!(few[0].measured_at(3.0) && !few[0].measured_at(9.0));
    assert_eq!(
        few[0].said(&["x", "y"]),
        "y: measured at 2 values (1, 3) on this call path: its law in y is the one that predicts \
         each from the other best, as Extra-P chooses it; no third value checks it (Extra-P \
         recommends 5)"
    );
    // y at one value (with x measured at three): no term in it, and no line to speak of.
    let once: Vec<Point> = [1.0, 2.0, 4.0].iter().map(|&x| point(x, 5.0)).collect();
    assert!(without_line(&once).is_empty());
    assert_eq!(
        few_values(&once)[0].said(&["x", "y"]),
        "y: measured at one value (5) on this call path: the model has no term in it"
    );
    let grid: Vec<Point> = [1.0, 2.0, 4.0]
        .iter()
        .flat_map(|&x: &f64| [1.0, 3.0, 9.0].map(|y: f64| point(x, y)))
        .collect();
    assert!(without_line(&grid).is_empty() && few_values(&grid).is_empty());
    let one: Vec<Point> = (1..=5)
        .map(|i| Point {
            coordinate: vec![i as f64],
            values: vec![1.0],
        })
        .collect();
    assert!(without_line(&one).is_empty());
    assert_eq!(without_line_said::<&str>(&[], &["x"]), None);
}

/// Extra-P's search models a parameter measured at two values (with a warning): each fold fits
/// a term's two coefficients to the one point left (numpy's least-norm solution), so the term
/// whose ratio between the two values is the measured one predicts the other best. Extra-P
/// 4.2.5 on these two files: `0.0833 + 0.2417 p^2` and `0.05 + 0.5 p`.
#[test]
fn two_values_of_a_parameter_choose_the_term_extra_p_chooses() {
    let two = |second: [f64; 2]| {
        vec![
            Point {
                coordinate: vec![2.0],
                values: vec![1.0, 1.1],
            },
            Point {
                coordinate: vec![4.0],
                values: second.to_vec(),
            },
        ]
    };
    let quadrupled = fit(&two([3.9, 4.0]), &PmnfOptions::default()).unwrap();
    assert_eq!(quadrupled.terms.len(), 1);
    assert_eq!(
        quadrupled.terms[0].factors,
        vec![(0, Exponents::new(2, 1, 0))]
    );
    assert!((quadrupled.constant - 0.083_333_333).abs() < 1e-6);
    assert!((quadrupled.terms[0].coefficient - 0.241_666_667).abs() < 1e-6);
    let doubled = fit(&two([2.0, 2.1]), &PmnfOptions::default()).unwrap();
    assert_eq!(doubled.terms[0].factors, vec![(0, Exponents::new(1, 1, 0))]);
    assert!((doubled.constant - 0.05).abs() < 1e-9);
    // Two points fit two coefficients exactly: no interval, where the checks could widen none.
    assert_eq!(doubled.interval(&[8.0], 0.95), None);
    // One value: no term in it, the mean.
    let once = fit(&two([1.0, 1.1])[..1], &PmnfOptions::default()).unwrap();
    assert!(once.terms.is_empty() && (once.constant - 1.05).abs() < 1e-12);
}
