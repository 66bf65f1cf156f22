use super::super::testing::{observations, parse_error, run_error};

#[test]
fn a_split_is_fixed_or_leave_one_out_never_both_nor_neither() {
    let step = "step = \"gpu_split\"\nid = \"s\"\nmodel = \"m\"";
    for (extra, expected) in [
        (
            "",
            "give `train` and `test`, or at least two GPUs in `leave_one_out`",
        ),
        ("train = [\"A\"]", "`test`: name at least one GPU"),
        (
            "train = [\"A\"]\ntest = [\"B\"]\nleave_one_out = [\"A\", \"B\"]",
            "give `train` and `test`, or `leave_one_out`, not both",
        ),
        (
            "leave_one_out = [\"A\"]",
            "at least two GPUs in `leave_one_out`",
        ),
        (
            "train = [\"A\"]\ntest = [\"B\"]\nshared_only = true",
            "`shared_only` goes with `leave_one_out`",
        ),
        (
            "leave_one_out = [\"A\", \"B\"]\nprofile_from = \"A\"",
            "`profile_from` goes with `train` and `test`",
        ),
        (
            "train = [\"A\"]\ntest = [\"B\"]\npublished = [{ row = \"x\" }]",
            "published figure `x`: give its `value`",
        ),
        (
            "train = [\"A\"]\ntest = [\"B\"]\nobservations = \"src.observations\"",
            "unknown field `observations`",
        ),
    ] {
        let e = parse_error("validate", &format!("{step}\n{extra}"));
        assert!(
            e.starts_with("p.toml:") && e.contains(expected),
            "{extra}: {e}"
        );
    }
    // The work model's keys are its fit step's, checked there.
    let fit = "step = \"work_model_fit\"\nid = \"m\"\nobservations = \"src.observations\"";
    for (extra, expected) in [
        ("level = 1.0", "level 1: expected a number in [0.5, 1)"),
        (
            "peaks = \"best\"",
            "`peaks = \"best\"`: expected `datasheet` or `measured`",
        ),
    ] {
        let e = parse_error("fit", &format!("{fit}\n{extra}"));
        assert!(
            e.starts_with("p.toml:") && e.contains(expected),
            "{extra}: {e}"
        );
    }
    // A split validates a work model, and no other family's.
    let text = super::super::testing::pipeline(
        "[[fit]]\nstep = \"scaling_fit\"\nid = \"m\"\nruns = \"src.runs\"\n\n[[validate]]\nstep = \"gpu_split\"\nid = \"s\"\nmodel = \"m\"\nleave_one_out = [\"A\", \"B\"]",
    );
    let e = crate::PipelineSpec::parse("p.toml", &text)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("key `model`: names a `scaling_fit` step; `gpu_split` validates a `work_model_fit` step's model"),
        "{e}"
    );
}

#[test]
fn bad_parameters_are_refused_at_their_key() {
    let step = "step = \"gpu_transfer\"\nid = \"t\"\nmodel = \"m\"";
    let e = parse_error(
        "validate",
        &format!("{step}\nschemes = [\"leave_one_out\"]"),
    );
    assert!(e.contains("p.toml:8:"), "{e}");
    assert!(
        e.contains("unknown scheme `leave_one_out`; expected one of leave_one_gpu_out"),
        "{e}"
    );
    let e = parse_error("validate", &format!("{step}\nlevel = 1.5"));
    assert!(
        e.contains("level 1.5: expected a number in [0.5, 1)"),
        "{e}"
    );
    let e = parse_error("validate", &format!("{step}\npredictions = \"some\""));
    assert!(e.contains("expected `learned` or `all`"), "{e}");
    let e = parse_error(
        "validate",
        &format!("{step}\npublished = [{{ row = \"Habitat\", text = \"11.8\" }}]"),
    );
    assert!(
        e.contains("published figure `Habitat`: give its `value`"),
        "{e}"
    );
    let e = parse_error("validate", &format!("{step}\nlevels = 0.9"));
    assert!(e.contains("unknown field `levels`"), "{e}");
}

#[test]
fn a_model_of_another_family_is_refused_at_the_step() {
    let transfer_fit =
        "[[fit]]\nstep = \"gpu_transfer_fit\"\nid = \"m\"\nobservations = \"src.observations\"";
    let ols = "[[fit]]\nstep = \"ols\"\nid = \"m\"\nobservations = \"src.observations\"\nfeatures = [\"x\"]";
    let validate = "[[validate]]\nstep = \"gpu_transfer\"\nid = \"t\"\nmodel = \"m\"";
    let cv = "[[validate]]\nstep = \"cross_validate\"\nid = \"t\"\nmodel = \"m\"";
    for (fit, step, expected) in [
        (
            ols,
            validate,
            "names an `ols` or `stepwise` fit step; `gpu_transfer` validates a `gpu_transfer_fit` step",
        ),
        (
            transfer_fit,
            cv,
            "names a `gpu_transfer_fit` step; cross-validation refits an `ols` or `stepwise` fit step",
        ),
    ] {
        let text = super::super::testing::pipeline(&format!("{fit}\n\n{step}"));
        let e = crate::PipelineSpec::parse("p.toml", &text)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml:") && e.contains("key `model`"), "{e}");
        assert!(e.contains(expected), "{e}");
    }
}

#[test]
fn a_device_the_catalogue_lacks_or_missing_counters_stop_the_step() {
    let steps = "[[fit]]\nstep = \"gpu_transfer_fit\"\nid = \"m\"\nobservations = \"src.observations\"\n\n[[validate]]\nstep = \"gpu_transfer\"\nid = \"t\"\nmodel = \"m\"";
    let counters: &[(&str, &[f64])] = &[
        ("inst_executed", &[1e6, 1e6]),
        ("dram_read_transactions", &[1e4, 1e4]),
        ("grid_x", &[64.0, 64.0]),
        ("block_x", &[256.0, 256.0]),
    ];
    let obs = observations(&["GTX-680", "GeForce GTX 9800"], &[1e-3, 2e-3], counters);
    let e = run_error(steps, vec![("observations", obs)]);
    assert!(e.contains("step `m` (gpu_transfer_fit)"), "{e}");
    assert!(
        e.contains("device `GeForce GTX 9800` is not in the device catalogue (closest:"),
        "{e}"
    );
    assert!(e.contains("skip_unknown_devices = true"), "{e}");
    let obs = observations(&["GTX-680", "GTX-980"], &[1e-3, 2e-3], &counters[1..]);
    let e = run_error(steps, vec![("observations", obs)]);
    assert!(
        e.contains("the transfer models need counters the table lacks: warp instructions"),
        "{e}"
    );
}

#[test]
fn choose_base_is_a_boolean_of_the_fit_step() {
    let fit =
        "[[fit]]\nstep = \"gpu_transfer_fit\"\nid = \"m\"\nobservations = \"src.observations\"";
    let text = super::super::testing::pipeline(&format!("{fit}\nchoose_base = true"));
    crate::PipelineSpec::parse("p.toml", &text).unwrap();
    let text = super::super::testing::pipeline(&format!("{fit}\nchoose_base = \"yes\""));
    let e = crate::PipelineSpec::parse("p.toml", &text)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("p.toml:") && e.contains("choose_base"), "{e}");
}
