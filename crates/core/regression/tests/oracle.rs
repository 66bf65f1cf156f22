//! The regression code against the oracle (tools/oracle/regression_oracle.py: numpy and
//! statsmodels, stepwise paths by brute-force refits), to 1e-8 relative.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::disallowed_methods)] // a test reads its fixtures; the crate itself does no I/O

use std::path::Path;

use faer::Mat;
use serde_json::Value;
use yosoku_regression::spline::{natural_cubic_basis, quantile_knots};
use yosoku_regression::stepwise::{Action, Direction, StepwiseOptions, select};
use yosoku_regression::validate::{Scheme, validate};
use yosoku_regression::{Method, OlsOptions, ols};

const TOLERANCE: f64 = 1e-8;

fn case(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracle")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn vector(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn matrix(v: &Value) -> Mat<f64> {
    let rows: Vec<Vec<f64>> = v.as_array().unwrap().iter().map(vector).collect();
    Mat::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

/// Elementwise relative agreement, with a floor scaled to the reference's magnitude so that
/// entries near zero are judged against the vector's scale.
fn assert_close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = TOLERANCE * g.abs().max(w.abs()).max(scale * 1e-3);
        assert!(
            (g - w).abs() <= tol,
            "{what}[{i}]: {g} vs {w} (difference {:e})",
            (g - w).abs()
        );
    }
}

fn check_ols(name: &str, coefficients: bool) {
    let c = case(name);
    let x = matrix(&c["x"]);
    let y = vector(&c["y"]);
    let fit = ols(x.as_ref(), &y, &OlsOptions::default()).unwrap();
    assert_close(
        &format!("{name} fitted"),
        &fit.fitted,
        &vector(&c["fitted"]),
    );
    assert_close(
        &format!("{name} leverage"),
        &fit.leverage,
        &vector(&c["leverage"]),
    );
    assert_close(
        &format!("{name} r2"),
        &[fit.r2, fit.adj_r2],
        &[c["r2"].as_f64().unwrap(), c["adj_r2"].as_f64().unwrap()],
    );
    assert_eq!(
        fit.kept.len(),
        c["rank"].as_u64().unwrap() as usize,
        "{name}: rank"
    );
    let loo: Vec<f64> = fit
        .loo_predictions(&y)
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_close(&format!("{name} loo"), &loo, &vector(&c["loo"]));
    let held = validate(x.as_ref(), &y, &OlsOptions::default(), &Scheme::LeaveOneOut).unwrap();
    assert_close(
        &format!("{name} validate loo"),
        &held.iter().map(|h| h.predicted).collect::<Vec<_>>(),
        &vector(&c["loo"]),
    );
    if coefficients {
        assert!(fit.dropped.is_empty(), "{name}: dropped {:?}", fit.dropped);
        assert_close(
            &format!("{name} coefficients"),
            &fit.coefficients,
            &vector(&c["coefficients"]),
        );
        assert_close(
            &format!("{name} std errors"),
            &fit.std_errors,
            &vector(&c["std_errors"]),
        );
        // The intercept is y-bar - x-bar'beta: a difference of terms of y's size, so it is judged
        // on y's scale (here ~1e-3 against an intercept of ~1e-6).
        let y_scale = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let want = c["intercept"].as_f64().unwrap();
        assert!(
            (fit.intercept - want).abs() <= TOLERANCE * y_scale,
            "{name} intercept: {} vs {want}",
            fit.intercept
        );
        assert_close(
            &format!("{name} condition"),
            &[fit.condition_number],
            &[c["condition_number"].as_f64().unwrap()],
        );
    }
}

#[test]
fn real_data_well_conditioned_takes_the_cholesky_path() {
    check_ols("real_heartwall_k40", true);
    let c = case("real_heartwall_k40");
    let fit = ols(
        matrix(&c["x"]).as_ref(),
        &vector(&c["y"]),
        &OlsOptions::default(),
    )
    .unwrap();
    assert_eq!(fit.method, Method::Cholesky);
}

#[test]
fn synthetic_well_conditioned() {
    check_ols("well_conditioned", true);
}

#[test]
fn ill_conditioned_takes_the_qr_path_and_stays_accurate() {
    check_ols("ill_conditioned", true);
    let c = case("ill_conditioned");
    let fit = ols(
        matrix(&c["x"]).as_ref(),
        &vector(&c["y"]),
        &OlsOptions::default(),
    )
    .unwrap();
    assert_eq!(fit.method, Method::Qr);
    assert!(fit.condition_number > 1e4);
}

#[test]
fn collinear_columns_are_dropped_and_reported() {
    check_ols("collinear", false);
    let c = case("collinear");
    let fit = ols(
        matrix(&c["x"]).as_ref(),
        &vector(&c["y"]),
        &OlsOptions::default(),
    )
    .unwrap();
    assert_eq!(fit.dropped.len(), 1, "one of x1, x2, x4 = 2 x1 - x2");
    assert!(
        fit.coefficients
            .iter()
            .all(|b| b.is_finite() && b.abs() < 10.0),
        "{:?}",
        fit.coefficients
    );
}

#[test]
fn real_counters_that_are_all_multiples_of_the_input_size() {
    check_ols("real_bpnn_k40", false);
    let c = case("real_bpnn_k40");
    let fit = ols(
        matrix(&c["x"]).as_ref(),
        &vector(&c["y"]),
        &OlsOptions::default(),
    )
    .unwrap();
    assert_eq!((fit.kept.len(), fit.dropped.len()), (1, 4));
}

#[test]
fn ridge_against_the_closed_form_and_brute_force_leave_one_out() {
    let c = case("ridge");
    let (x, y) = (matrix(&c["x"]), vector(&c["y"]));
    let options = OlsOptions {
        ridge: c["ridge"].as_f64().unwrap(),
        ..OlsOptions::default()
    };
    let fit = ols(x.as_ref(), &y, &options).unwrap();
    assert_close(
        "ridge coefficients",
        &fit.coefficients,
        &vector(&c["coefficients"]),
    );
    assert_close(
        "ridge intercept",
        &[fit.intercept],
        &[c["intercept"].as_f64().unwrap()],
    );
    assert_close("ridge fitted", &fit.fitted, &vector(&c["fitted"]));
    let loo: Vec<f64> = fit
        .loo_predictions(&y)
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_close("ridge loo", &loo, &vector(&c["loo"]));
}

fn check_stepwise(name: &str) {
    let c = case(name);
    let x = matrix(&c["x"]);
    let y = vector(&c["y"]);
    let names: Vec<String> = c["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_owned())
        .collect();
    let features: Vec<(String, Vec<f64>)> = names
        .iter()
        .enumerate()
        .map(|(j, n)| (n.clone(), (0..x.nrows()).map(|i| x[(i, j)]).collect()))
        .collect();
    let options = StepwiseOptions {
        direction: if c["direction"] == "forward" {
            Direction::Forward
        } else {
            Direction::Backward
        },
        spline_knots: c["spline_knots"].as_u64().map(|k| k as usize),
        interactions: c["interactions"].as_bool().unwrap(),
        ..StepwiseOptions::default()
    };
    let selection = select(&features, &y, &options).unwrap();
    let want = c["path"].as_array().unwrap();
    let got: Vec<(String, String)> = selection
        .path
        .iter()
        .map(|s| {
            let action = match s.action {
                Action::Start => "start",
                Action::Add => "add",
                Action::Remove => "remove",
            };
            (action.to_owned(), s.term.clone())
        })
        .collect();
    let expected: Vec<(String, String)> = want
        .iter()
        .map(|s| {
            (
                s["action"].as_str().unwrap().to_owned(),
                s["term"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(got, expected, "{name}: path");
    let adj: Vec<f64> = selection.path.iter().map(|s| s.adj_r2).collect();
    let r2: Vec<f64> = selection.path.iter().map(|s| s.r2).collect();
    assert_close(
        &format!("{name} adjusted R2"),
        &adj,
        &want
            .iter()
            .map(|s| s["adj_r2"].as_f64().unwrap())
            .collect::<Vec<_>>(),
    );
    assert_close(
        &format!("{name} R2"),
        &r2,
        &want
            .iter()
            .map(|s| s["r2"].as_f64().unwrap())
            .collect::<Vec<_>>(),
    );
}

#[test]
fn forward_stepwise_with_linear_terms() {
    check_stepwise("forward_linear");
}

#[test]
fn forward_stepwise_with_splines_and_interactions() {
    check_stepwise("forward_splines_interactions");
}

#[test]
fn backward_elimination_of_spline_terms() {
    check_stepwise("backward_splines");
}

#[test]
fn natural_spline_basis_and_knots() {
    let c = case("spline_basis");
    let x = vector(&c["x"]);
    let knots = quantile_knots(&x, c["knot_count"].as_u64().unwrap() as usize);
    assert_close("knots", &knots, &vector(&c["knots"]));
    let basis = natural_cubic_basis(&x, &knots);
    let want: Vec<Vec<f64>> = c["basis"].as_array().unwrap().iter().map(vector).collect();
    assert_eq!(basis.len(), want.len());
    for (k, (g, w)) in basis.iter().zip(&want).enumerate() {
        assert_close(&format!("basis column {k}"), g, w);
    }
}
