//! The scaling family's steps run over runs built in memory.

use arrow_array::RecordBatch;
use yosoku_tables::RUNS;
use yosoku_tables::access::{float64, utf8};

use crate::steps::testing::{f, i64s, opt_s, parse_error, run_error, run_steps_with_figures, s};

/// Runs of two kernels over n (and one run without a number for it).
fn runs(params: &[Option<&str>], secs: &[f64]) -> RecordBatch {
    let n = params.len();
    let ids: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let program: Vec<&str> = (0..n).map(|i| if i % 2 == 0 { "a" } else { "b" }).collect();
    RUNS.batch(vec![
        s(&ids),
        s(&vec!["dev"; n]),
        s(&program),
        s(&vec![""; n]),
        opt_s(params),
        s(&vec!["kernel"; n]),
        i64s(&vec![Some(1); n]),
        f(secs),
    ])
    .unwrap()
}

const BODY: &str = "step = \"scaling_fit\"\nid = \"f\"\nruns = \"src.runs\"\n";

/// A `scaling_fit` step with `keys` and the `scaling_model` step that validates it.
fn fit_and_validate(keys: &str) -> String {
    format!(
        "[[fit]]\n{BODY}{keys}\n\n[[validate]]\nstep = \"scaling_model\"\nid = \"s\"\nmodel = \"f\"\n"
    )
}

#[test]
fn each_call_path_is_modelled_and_its_largest_size_predicted() {
    // a: 2 + 3 n; b: 1 + n^2 / 100, at n = 1..6, twice each; n = 6 held out.
    let (mut params, mut secs) = (Vec::new(), Vec::new());
    let texts: Vec<String> = (1..=6).map(|n| format!("n={n};label=x")).collect();
    for (i, t) in texts.iter().enumerate() {
        let n = (i + 1) as f64;
        for _ in 0..2 {
            params.extend([Some(t.as_str()), Some(t.as_str())]);
            secs.extend([2.0 + 3.0 * n, 1.0 + n * n / 100.0]);
        }
    }
    let step = fit_and_validate("meanings = { n = \"the problem's size\" }");
    let (set, figures) =
        run_steps_with_figures(&step, vec![("runs", runs(&params, &secs))]).unwrap();
    // The meaning given is in the report, where the viewer and `yosoku report` show it.
    let report = set.get("s.report").unwrap();
    let titles = utf8(report, "title").unwrap();
    let last = report.num_rows() - 1;
    assert_eq!(
        titles.value(last),
        yosoku_tables::report::PARAMETER_MEANINGS_TITLE
    );
    assert_eq!(utf8(report, "row_label").unwrap().value(last), "n");
    assert_eq!(
        utf8(report, "text").unwrap().value(last),
        "the problem's size"
    );
    let models = set.get("s.scaling_models").unwrap();
    let formula = utf8(models, "formula").unwrap();
    assert!(
        formula.value(0).ends_with("* n^(1)"),
        "{}",
        formula.value(0)
    );
    assert!(
        formula.value(1).ends_with("* n^(2)"),
        "{}",
        formula.value(1)
    );
    assert_eq!(utf8(models, "held_out").unwrap().value(0), "n=6");
    let p = set.get("s.predictions").unwrap();
    let predicted = float64(p, "predicted_secs").unwrap();
    assert!((predicted.value(0) - 20.0).abs() < 1e-9 && (predicted.value(1) - 1.36).abs() < 1e-9);
    let fig = &figures.iter().find(|(id, _)| id == "s").unwrap().1;
    assert!(
        fig.iter()
            .any(|f| f.name == "largest configuration held out: median |error|" && f.value < 1e-6)
    );
}

/// `search = "robust"`: a time that falls as n grows (1 + 8 / n, three repetitions 1 % apart)
/// is found with its negative exponent, which Extra-P's search tries only when asked; the
/// report names the search.
#[test]
fn the_robust_search_is_a_choice_of_the_step() {
    let (mut params, mut secs) = (Vec::new(), Vec::new());
    let texts: Vec<String> = (1..=6).map(|n| format!("n={}", 1 << n)).collect();
    for (i, t) in texts.iter().enumerate() {
        let n = f64::from(1 << (i + 1));
        for noise in [0.99, 1.0, 1.01] {
            params.extend([Some(t.as_str()), Some(t.as_str())]);
            secs.extend([(1.0 + 8.0 / n) * noise, (2.0 + n) * noise]);
        }
    }
    let formulas = |search: &str| {
        let step = fit_and_validate(&format!("search = \"{search}\""));
        let (set, _) = run_steps_with_figures(&step, vec![("runs", runs(&params, &secs))]).unwrap();
        let title = utf8(set.get("s.report").unwrap(), "title")
            .unwrap()
            .value(0)
            .to_owned();
        let models = set.get("s.scaling_models").unwrap();
        let formula = utf8(models, "formula").unwrap();
        (
            title,
            formula.value(0).to_owned(),
            formula.value(1).to_owned(),
        )
    };
    let (title, falling, rising) = formulas("robust");
    assert!(title.contains("(the robust PMNF search)"), "{title}");
    assert!(falling.ends_with("* n^(-1)"), "{falling}");
    assert!(rising.ends_with("* n^(1)"), "{rising}");
    let (title, falling, _) = formulas("extrap");
    assert!(title.contains("(Extra-P's PMNF search)"), "{title}");
    assert!(!falling.contains("^(-"), "{falling}");
}

/// Runs whose size and rank count grew together (a weak-scaling study, ranks = n / 8): the
/// robust search models them over n alone, and the report says so beside the model.
#[test]
fn runs_whose_parameters_grew_together_are_modelled_over_the_first_and_said_so() {
    let (mut params, mut secs) = (Vec::new(), Vec::new());
    let texts: Vec<String> = (3..=7)
        .map(|k| format!("n={};ranks={}", 1 << k, 1 << (k - 3)))
        .collect();
    for (i, t) in texts.iter().enumerate() {
        let n = f64::from(1 << (i + 3));
        for noise in [0.99, 1.0, 1.01] {
            params.extend([Some(t.as_str()), Some(t.as_str())]);
            secs.extend([1e-3 * n * n * noise, (2.0 + n) * noise]);
        }
    }
    let step = fit_and_validate("search = \"robust\"\nparameters = [\"n\", \"ranks\"]");
    let (set, _) = run_steps_with_figures(&step, vec![("runs", runs(&params, &secs))]).unwrap();
    let report = set.get("s.report").unwrap();
    let (columns, texts) = (
        utf8(report, "column_label").unwrap(),
        utf8(report, "text").unwrap(),
    );
    let notes: Vec<&str> = (0..report.num_rows())
        .filter(|&i| columns.value(i) == "note")
        .map(|i| texts.value(i))
        .collect();
    assert_eq!(
        notes,
        vec!["ranks moved with n at every run: modelled over n alone"; 2]
    );
    let formula = utf8(set.get("s.scaling_models").unwrap(), "formula").unwrap();
    assert!(
        formula.value(0).ends_with("* n^(2)"),
        "{}",
        formula.value(0)
    );
}

#[test]
fn bad_parameters_and_runs_without_a_numeric_parameter_are_refused() {
    let e = parse_error("fit", &format!("{BODY}search = \"bayes\""));
    assert!(
        e.contains("key `search`: `search = \"bayes\"`: expected `extrap`"),
        "{e}"
    );
    let e = parse_error("fit", &format!("{BODY}aggregate = \"max\""));
    assert!(e.contains("expected `mean` or `median`"), "{e}");
    let e = parse_error("fit", &format!("{BODY}hold_out = \"none\""));
    assert!(e.contains("unknown field `hold_out`"), "{e}");
    let e = parse_error("fit", &format!("{BODY}level = 1.5"));
    assert!(e.contains("level 1.5"), "{e}");
    let e = parse_error(
        "fit",
        &format!("{BODY}parameters = [\"n\"]\nmeanings = {{ p = \"ranks\" }}"),
    );
    assert!(
        e.contains("`p` is not one of the parameters modelled (n)"),
        "{e}"
    );
    let e = run_error(
        &fit_and_validate(""),
        vec![("runs", runs(&[Some("size=big"), None], &[1.0, 2.0]))],
    );
    assert!(e.contains("no parameter is a number in every run"), "{e}");
    let named = fit_and_validate("parameters = [\"n\"]");
    let e = run_error(
        &named,
        vec![("runs", runs(&[Some("n=1"), Some("m=2")], &[1.0, 2.0]))],
    );
    assert!(
        e.contains("parameter `n`: the run of dev / b /  / kernel has no number"),
        "{e}"
    );
}

/// `scaling_model` validates a `scaling_fit` step and nothing else, and its old form (a `runs`
/// table of its own) is refused at the key: the model is fitted in the fit stage.
#[test]
fn scaling_model_names_a_scaling_fit_step() {
    let ols = "[[fit]]\nstep = \"ols\"\nid = \"f\"\nobservations = \"src.observations\"\nfeatures = [\"x\"]";
    let validate = "[[validate]]\nstep = \"scaling_model\"\nid = \"s\"\nmodel = \"f\"";
    let text = crate::steps::testing::pipeline(&format!("{ols}\n\n{validate}"));
    let e = crate::PipelineSpec::parse("p.toml", &text)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("p.toml:") && e.contains("key `model`"), "{e}");
    assert!(
        e.contains(
            "names an `ols` or `stepwise` fit step; `scaling_model` validates a `scaling_fit` step"
        ),
        "{e}"
    );
    let e = parse_error(
        "validate",
        "step = \"scaling_model\"\nid = \"s\"\nruns = \"src.runs\"",
    );
    assert!(
        e.contains("p.toml:7:1: unknown field `runs`, expected one of `step`, `id`, `model`"),
        "{e}"
    );
}
