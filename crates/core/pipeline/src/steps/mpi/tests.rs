use arrow_array::RecordBatch;
use yosoku_tables::MPI_BLOCKS;

use crate::steps::testing::{assert_refused, f, i32s, i64s, opt_f, parse_error, run_steps, s};

/// One rank, one compute block per iteration of `secs` seconds, over `iterations`
/// iterations.
fn blocks(run: &str, iterations: i64, secs: f64) -> RecordBatch {
    let n = iterations as usize;
    let its: Vec<Option<i64>> = (0..iterations).map(Some).collect();
    let starts: Vec<Option<f64>> = (0..n).map(|i| Some(i as f64 * secs)).collect();
    MPI_BLOCKS
        .batch(vec![
            s(&vec![run; n]),
            s(&vec!["host"; n]),
            i32s(&vec![0; n]),
            s(&vec!["loop"; n]),
            s(&vec!["compute"; n]),
            s(&vec!["main.c:10"; n]),
            i64s(&its),
            opt_f(&starts),
            f(&vec![secs; n]),
        ])
        .unwrap()
}

#[test]
fn a_reduced_run_predicts_the_full_one() {
    let set = run_steps(
            "[[fit]]\nstep = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.reduced\"\nmeasured = \"src.full\"\nfull_iterations = 100\nwarmup_iterations = 0",
            vec![("reduced", blocks("r", 10, 0.5)), ("full", blocks("f", 100, 0.5))],
        )
        .unwrap();
    let predictions =
        yosoku_tables::rows::read_predictions("p", set.get("p.predictions").unwrap()).unwrap();
    let run = predictions
        .iter()
        .find(|p| &*p.variant == "run" && &*p.phase == "total")
        .unwrap();
    assert!((run.predicted_secs - 50.0).abs() < 1e-9, "{run:?}");
    assert!(run.error_pct.unwrap().abs() < 1e-9, "{run:?}");
}

#[test]
fn settings_are_checked_when_the_file_is_parsed() {
    // Two lengths pair with one reduced run, not with repeats combined.
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nrepeats = [\"a.blocks\", \"b.blocks\"]\ncombine_repeats = true\nshorter = \"s.blocks\"\nfull_iterations = 400",
        "key `shorter`: `shorter` pairs with the one `reduced` run",
    );
    // Shorter runs paired with the repeats: one each, and with the reduced run's own.
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"a.blocks\"\nshorter = \"s.blocks\"\nrepeats = [\"a.blocks\", \"b.blocks\"]\nshorter_repeats = [\"s.blocks\"]\nfull_iterations = 400",
        "key `shorter_repeats`: `shorter_repeats` names 1 runs, `repeats` 2",
    );
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"a.blocks\"\nrepeats = [\"a.blocks\", \"b.blocks\"]\nshorter_repeats = [\"s.blocks\", \"t.blocks\"]\nfull_iterations = 400",
        "give `shorter`",
    );
    let e = parse_error(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = 400\nwarmup_tolerance = -0.1",
    );
    assert!(
        e.starts_with(
            "p.toml:9:20: key `warmup_tolerance`: warmup_tolerance = -0.1: expected a fraction >= 0"
        ),
        "{e}"
    );
    let e = parse_error(
        "fit",
        "step = \"mpi_best_configuration\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_ranks = \"src.ranks\"\nfull_iterations = 0",
    );
    assert!(
        e.starts_with("p.toml:9:19: key `full_iterations`: `full_iterations` must be at least 1"),
        "{e}"
    );
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_steps = 100",
        "key `reduced_steps`: `reduced_steps` needs `full_steps`",
    );
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_steps = 100\nfull_steps = 10",
        "full_steps = 10 is fewer than reduced_steps = 100",
    );
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"",
        "the size of the run to predict is missing",
    );
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = 4\nwarmup_iterations = 1\nwarmup_tolerance = 0.1",
        "not both",
    );
    assert_refused(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = 4\ntrend = \"cubic\"",
        "trend",
    );
}

#[test]
fn the_run_to_predict_is_sized_in_steps() {
    // 10 iterations in 5 steps: 2 per step, 100 for 50.
    let set = run_steps(
            "[[fit]]\nstep = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.reduced\"\nreduced_steps = 5\nfull_steps = 50\nwarmup_iterations = 0",
            vec![("reduced", blocks("r", 10, 0.5)), ("full", blocks("f", 100, 0.5))],
        )
        .unwrap();
    let predictions =
        yosoku_tables::rows::read_predictions("p", set.get("p.predictions").unwrap()).unwrap();
    let run = predictions.iter().find(|p| &*p.variant == "run").unwrap();
    assert_eq!(run.repetitions, 100);
    assert!((run.predicted_secs - 50.0).abs() < 1e-9, "{run:?}");
}

#[test]
fn a_pooled_warmup_needs_two_repeats_and_no_fixed_warmup() {
    let body = "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.a\"\nfull_iterations = 4\n";
    let e = parse_error(
        "fit",
        &format!("{body}warmup_from = [\"src.a\", \"src.b\"]\nwarmup_iterations = 1"),
    );
    assert!(e.contains("give `repeats`"), "{e}");
    let e = parse_error("fit", &format!("{body}repeats = [\"src.a\"]"));
    assert!(e.contains("`repeats` names one run"), "{e}");
    let e = parse_error("fit", &format!("{body}run_to_run_pct = -1"));
    assert!(e.contains("expected a percentage >= 0"), "{e}");
    let e = parse_error("fit", &format!("{body}combine_repeats = true"));
    assert!(e.contains("combines the runs of `repeats`"), "{e}");
    let e = parse_error(
        "fit",
        &format!("{body}combine_repeats = true\nrepeats = [\"src.a\", \"src.b\"]"),
    );
    assert!(e.contains("leave `reduced` out"), "{e}");
}

/// The keys the MPI prediction steps share are read once as one group (`SettingKeys`) beside
/// each step's own: a value of the wrong type in either, and a key of neither, are refused at
/// their line and column; `mpi_steps_and_ranks_fit` refuses the group's `published`.
#[test]
fn shared_and_own_keys_are_refused_at_their_line_and_column() {
    let e = parse_error(
        "fit",
        "step = \"mpi_simplified\"\nid = \"p\"\nreduced = \"src.blocks\"\nfull_iterations = \"many\"",
    );
    assert!(e.starts_with("p.toml:8:19:"), "{e}");
    assert!(e.contains("many"), "{e}");
    let e = parse_error(
        "fit",
        "step = \"mpi_separate_runs\"\nid = \"p\"\ncompute = \"src.blocks\"\ncommunication = \"src.blocks\"\nfull_iterations = 10\nwarmup_iteration = 2",
    );
    assert!(e.starts_with("p.toml:10:1:"), "{e}");
    assert!(e.contains("warmup_iteration"), "{e}");
    let e = parse_error(
        "fit",
        "step = \"mpi_best_configuration\"\nid = \"p\"\nreduced = \"src.blocks\"\nreduced_ranks = \"src.ranks\"\nfull_iterations = 10\ntrend = \"sideways\"",
    );
    assert!(e.starts_with("p.toml:10:9:"), "{e}");
    assert_refused(
        "fit",
        "step = \"mpi_steps_and_ranks_fit\"\nid = \"p\"\nblocks = \"src.blocks\"\nranks = \"src.ranks\"\nreduced_steps = 20\nfull_steps = 400\npublished = \"x\"",
        "key `published`",
    );
}

/// `mpi_steps_and_ranks_fit` reads two shared groups beside its own keys, the MPI settings
/// (`SettingKeys`) and the PMNF search's (`PmnfKeys`, also `scaling_fit`'s): a value of the wrong
/// type in either is refused at its line and column, and a misspelt key is answered with the
/// keys of both groups and its own.
#[test]
fn both_key_groups_of_steps_and_ranks_are_refused_at_their_line_and_column() {
    let head = "step = \"mpi_steps_and_ranks_fit\"\nid = \"p\"\nblocks = \"src.blocks\"\nranks = \"src.ranks\"\n";
    let e = parse_error(
        "fit",
        &format!("{head}reduced_steps = 20\nfull_steps = 400\nlevel = \"high\""),
    );
    assert!(e.starts_with("p.toml:11:9:"), "{e}");
    let e = parse_error(
        "fit",
        &format!("{head}reduced_steps = \"20\"\nfull_steps = 400"),
    );
    assert!(e.starts_with("p.toml:9:17:"), "{e}");
    let e = parse_error(
        "fit",
        &format!("{head}reduced_steps = 20\nfull_steps = 400\nsearch = \"fast\""),
    );
    assert!(e.starts_with("p.toml:11:10:"), "{e}");
    assert!(
        e.contains("expected `extrap` (Extra-P's search) or `robust`"),
        "{e}"
    );
    let e = parse_error(
        "fit",
        &format!("{head}reduced_steps = 20\nfull_steps = 400\nparameter = [\"n\"]"),
    );
    assert!(
        e.starts_with("p.toml:11:1: unknown field `parameter`"),
        "{e}"
    );
    for key in [
        "`blocks`",
        "`min_share_pct`",
        "`full_steps`",
        "`trend`",
        "`parameters`",
        "`negative_exponents`",
        "`search`",
    ] {
        assert!(e.contains(key), "{key} not named: {e}");
    }
    // Both groups read: a robust search over the named parameters, and the run's size.
    let text = crate::steps::testing::pipeline(&format!(
        "[[fit]]\n{head}reduced_steps = 20\nfull_steps = 400\nparameters = [\"n\"]\nsearch = \"robust\"\nmeanings = {{ n = \"cells\" }}"
    ));
    let spec = crate::PipelineSpec::parse("p.toml", &text).unwrap();
    let Some(crate::steps::ModelDefinition {
        model: crate::steps::DefinedModel::StepsAndRanks { spec, meanings, .. },
        ..
    }) = spec.steps[0].value.step.model_definition()
    else {
        panic!("not a steps-and-ranks model");
    };
    assert_eq!(spec.scaling.parameters, ["n"]);
    assert_eq!(spec.scaling.search, yosoku_models::scaling::Search::Robust);
    assert_eq!(meanings["n"], "cells");
}

const STEPS_AND_RANKS_FIT: &str = "step = \"mpi_steps_and_ranks_fit\"\nid = \"f\"\nblocks = \"src.mpi_blocks\"\nranks = \"src.mpi_ranks\"\n";

/// Every key of the fit step and of the step that asks its model is checked when the file is
/// parsed, before any run; `mpi_steps_and_ranks` asks an `mpi_steps_and_ranks_fit` step only.
#[test]
fn steps_and_ranks_keys_are_checked_when_the_file_is_parsed() {
    let fit_error = |extra: &str| parse_error("fit", &format!("{STEPS_AND_RANKS_FIT}{extra}"));
    let e = fit_error("");
    assert!(
        e.contains("the size of the run to predict is missing"),
        "{e}"
    );
    let sized = "reduced_steps = 20\nfull_steps = 400\n";
    let e = fit_error(&format!("{sized}min_share_pct = 100"));
    assert!(
        e.contains("min_share_pct = 100: expected a percentage in [0, 100)"),
        "{e}"
    );
    let e = fit_error(&format!("{sized}level = 1.5"));
    assert!(e.contains("key `level`: level 1.5"), "{e}");
    let e = fit_error(&format!(
        "{sized}parameters = [\"n\"]\nmeanings = {{ p = \"x\" }}"
    ));
    assert!(
        e.contains("`p` is not one of the parameters modelled (n)"),
        "{e}"
    );
    let e = fit_error(&format!("{sized}aggregate = \"max\""));
    assert!(e.contains("expected `mean` or `median`"), "{e}");
    let e = fit_error(&format!("{sized}target = {{ n = 129 }}"));
    assert!(e.contains("unknown field `target`"), "{e}");

    let fit = format!("[[fit]]\n{STEPS_AND_RANKS_FIT}reduced_steps = 20\nfull_steps = 400\n");
    let asked = |extra: &str| {
        let text = crate::steps::testing::pipeline(&format!(
            "{fit}\n[[validate]]\nstep = \"mpi_steps_and_ranks\"\nid = \"p\"\nmodel = \"f\"\n{extra}"
        ));
        crate::PipelineSpec::parse("p.toml", &text)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = asked("");
    assert!(e.contains("missing field `target`"), "{e}");
    let e = asked("target = {}");
    assert!(e.contains("key `target`: `target` is empty"), "{e}");
    let e = asked("target = { n = nan }");
    assert!(
        e.contains("target `n` = NaN: expected a finite number"),
        "{e}"
    );
    let target = "target = { n = 129 }\n";
    let e = asked(&format!("{target}measured_blocks = \"t.mpi_blocks\""));
    assert!(
        e.contains("`measured_blocks` needs `measured_ranks`"),
        "{e}"
    );
    let e = asked(&format!("{target}measured_ranks = \"t.mpi_ranks\""));
    assert!(
        e.contains("`measured_ranks` needs `measured_blocks`"),
        "{e}"
    );
    let e = asked(&format!("{target}full_steps = 400"));
    assert!(e.contains("unknown field `full_steps`"), "{e}");
    let scaling = "[[fit]]\nstep = \"scaling_fit\"\nid = \"f\"\nruns = \"src.runs\"\n";
    let text = crate::steps::testing::pipeline(&format!(
        "{scaling}\n[[validate]]\nstep = \"mpi_steps_and_ranks\"\nid = \"p\"\nmodel = \"f\"\n{target}"
    ));
    let e = crate::PipelineSpec::parse("p.toml", &text)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("key `model`: names a `scaling_fit` step; `mpi_steps_and_ranks` asks an `mpi_steps_and_ranks_fit` step"),
        "{e}"
    );
}
