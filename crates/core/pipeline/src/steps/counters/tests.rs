use crate::steps::testing::{
    observations, observations_of, parse_error, run_error, run_steps, run_steps_with_figures,
};

/// time = 1 + 2 x inst on two devices, with a second counter of noise.
fn data() -> arrow_array::RecordBatch {
    observations(
        &["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"],
        &[3.0, 5.1, 6.9, 9.0, 11.05, 3.0, 5.0, 7.1, 8.9, 11.0],
        &[
            ("inst", &[1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
            ("gld", &[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0]),
        ],
    )
}

const FIT: &str = "[[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"src.observations\"\nfeatures = [\"inst\"]\ngroup_by = [\"device\"]\n";

#[test]
fn validation_refits_the_model_the_fit_step_defined() {
    let set = run_steps(
            &format!("{FIT}[[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nholdouts = [\"loo\", \"kfold(5)\"]"),
            vec![("observations", data())],
        )
        .unwrap();
    let definition = set.model("fit").unwrap();
    assert_eq!(definition.observations, "src.observations");
    assert_eq!(definition.counters().unwrap().group_by, ["device"]);
    // Two models (devices) x two hold-out schemes, each over all its rows.
    let predictions = set.get("cv.predictions").unwrap();
    assert_eq!(predictions.num_rows(), 2 * 2 * 5);
    assert!(set.get("cv.validation_summary").is_some());
}

#[test]
fn validation_settings_are_checked_when_the_file_is_parsed() {
    let cases = [
        (
            "holdouts = [\"lopo\"]",
            "p.toml:8:12: key `holdouts`: `holdouts`: unknown validation `lopo`; expected fit, loo, kfold(<k>) or leave_one_out(<column>)",
        ),
        (
            "holdouts = []",
            "p.toml:8:12: key `holdouts`: `holdouts` is empty",
        ),
        (
            "tiny_threshold = -1",
            "p.toml:8:18: key `tiny_threshold`: `tiny_threshold` must be a number >= 0, found -1",
        ),
        (
            "published = [{ row = \"paper\", value = 1.0, text = \"x\" }]",
            "p.toml:8:13: key `published`: published figure `paper`: give exactly one of `value` and `text`",
        ),
    ];
    for (line, want) in cases {
        let e = parse_error(
            "validate",
            &format!("step = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\n{line}"),
        );
        assert!(e.starts_with(want), "\n got: {e}\nwant: {want}");
    }
    let e = parse_error(
        "fit",
        "step = \"stepwise\"\nid = \"s\"\nobservations = \"src.observations\"\ndirection = \"sideways\"",
    );
    assert!(
            e.starts_with("p.toml:8:13: key `direction`: unknown variant `sideways`, expected `forward` or `backward`"),
            "{e}"
        );
    let e = parse_error(
        "fit",
        "step = \"ols\"\nid = \"o\"\nobservations = \"src.observations\"\nridge = -0.5",
    );
    assert!(
        e.starts_with("p.toml:8:9: key `ridge`: `ridge` must be a number >= 0, found -0.5"),
        "{e}"
    );
}

#[test]
fn a_validation_matrix_must_use_the_models_groups() {
    let text = crate::steps::testing::pipeline(&format!(
        "{FIT}[[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nmatrix = {{ rows = \"device\", columns = \"program\" }}"
    ));
    let e = crate::PipelineSpec::parse("p.toml", &text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "key `matrix`: matrix: `program` is not one of the model's `group_by` columns (device)"
        ),
        "{e}"
    );
}

#[test]
fn a_feature_the_table_lacks_fails_when_the_fit_runs() {
    let e = run_error(
        "[[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"src.observations\"\nfeatures = [\"inst_exec\"]",
        vec![("observations", data())],
    );
    assert!(
            e.contains("step `fit` (ols): input `observations` has no feature column `inst_exec`; did you mean inst?"),
            "{e}"
        );
}

/// Three programs; the rows of program `c` but the first changed when `change` is set.
fn programs(change: bool) -> arrow_array::RecordBatch {
    let mut rows = Vec::new();
    let (mut secs, mut inst, mut gld) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..24 {
        let program = ["a", "b", "c"][i % 3];
        let (mut x, mut y) = (1.0 + i as f64, ((i * 5) % 7) as f64 + 1.0);
        secs.push(0.5 + 0.2 * x + 0.05 * y + 0.01 * ((i * 11 % 5) as f64));
        if change && program == "c" && i != 2 {
            x = x * 30.0 + 400.0;
            y *= 8.0;
        }
        rows.push(("gpu", program));
        inst.push(x);
        gld.push(y);
    }
    observations_of(&rows, &secs, &[("inst", &inst), ("gld", &gld)])
}

const HONEST: &str = "[[normalize]]\nstep = \"zscore\"\nid = \"z\"\ninput = \"src.observations\"\n\
        [[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"z.observations\"\nridge = 1.0\n\
        [[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nholdouts = [\"leave_one_out(program)\"]";

/// The prediction of row 2 (program `c`) with `c` held out.
fn row_2(batch: arrow_array::RecordBatch) -> f64 {
    let set = run_steps(HONEST, vec![("observations", batch)]).unwrap();
    let p = yosoku_tables::rows::read_predictions("p", set.get("cv.predictions").unwrap()).unwrap();
    p[2].predicted_secs
}

/// A `zscore` step feeding a ridge fit: validation standardises each training set by itself,
/// so a held-out row's prediction is unchanged when the other held-out rows change.
#[test]
fn a_zscore_is_refitted_inside_every_training_set() {
    let (before, after) = (row_2(programs(false)), row_2(programs(true)));
    assert!(
        (before - after).abs() <= 1e-10 * before.abs(),
        "{before} vs {after}"
    );
    // A standardisation further upstream cannot be refitted per training set: refused.
    let e = run_error(
            &HONEST.replace(
                "observations = \"z.observations\"",
                "observations = \"d.observations\"",
            )
            .replace(
                "[[fit]]",
                "[[normalize]]\nstep = \"derive\"\nid = \"d\"\ninput = \"z.observations\"\nratios = [{ name = \"r\", numerator = \"inst\", denominator = \"gld\" }]\n[[fit]]",
            ),
            vec![("observations", programs(false))],
        );
    assert!(
        e.contains("made from `z.observations`, which a `zscore` step standardised over all rows"),
        "{e}"
    );
}

/// Whether a model predicts a program it was never fitted on is said in words: here the
/// three programs follow one law (it does), then one follows another (it cannot).
#[test]
fn the_summary_says_whether_unseen_programs_are_predicted() {
    let steps = "[[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"src.observations\"\n\
            [[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nholdouts = [\"loo\", \"leave_one_out(program)\"]";
    let verdict = |batch| -> String {
        let (_, figures) = run_steps_with_figures(steps, vec![("observations", batch)]).unwrap();
        let cv = &figures.iter().find(|(id, _)| id == "cv").unwrap().1;
        cv.iter()
            .find(|f| f.name.contains("unseen programs"))
            .map(|f| f.name.clone())
            .unwrap()
    };
    assert!(verdict(programs(false)).starts_with("predicts unseen programs"));
    // Program `c` takes 40 times longer for the same counters.
    let mut rows = Vec::new();
    let (mut secs, mut inst, mut gld) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..24 {
        let program = ["a", "b", "c"][i % 3];
        let (x, y) = (1.0 + i as f64, ((i * 5) % 7) as f64 + 1.0);
        let t = 0.5 + 0.2 * x + 0.05 * y;
        secs.push(if program == "c" { 40.0 * t } else { t });
        rows.push(("gpu", program));
        inst.push(x);
        gld.push(y);
    }
    let unlike = observations_of(&rows, &secs, &[("inst", &inst), ("gld", &gld)]);
    assert!(verdict(unlike).starts_with("cannot predict unseen programs"));
}

/// `ols` and `stepwise` read their shared keys as one group (`FitKeys`) beside their own: a bad
/// value of either is refused at its line and column, and a misspelt key is answered with every
/// key the step may have, shared and own.
#[test]
fn shared_and_own_fit_keys_are_refused_at_their_line_and_column() {
    use crate::steps::testing::parse_error;
    let e = parse_error(
        "fit",
        "step = \"ols\"\nid = \"o\"\nobservations = \"src.observations\"\nlog_target = \"yes\"",
    );
    assert!(e.starts_with("p.toml:8:14:"), "{e}");
    assert!(e.contains("yes"), "{e}");
    let e = parse_error(
        "fit",
        "step = \"ols\"\nid = \"o\"\nobservations = \"src.observations\"\nfeature = [\"x\"]",
    );
    assert!(
        e.starts_with("p.toml:8:1: unknown field `feature`, expected one of `step`, `id`, `observations`, `features`, `kinds`, `exclude`, `group_by`, `log_target`, `log_features`, `matrix`, `ridge`"),
        "{e}"
    );
    let e = parse_error(
        "fit",
        "step = \"stepwise\"\nid = \"s\"\nobservations = \"src.observations\"\nmatrix = { rows = \"device\" }",
    );
    assert!(e.starts_with("p.toml:8:"), "{e}");
    assert!(e.contains("missing field `columns`"), "{e}");
    let e = parse_error(
        "fit",
        "step = \"stepwise\"\nid = \"s\"\nobservations = \"src.observations\"\nridge = 1.0",
    );
    assert!(
        e.contains("unknown field `ridge`") && e.contains("`matrix`, `direction`"),
        "{e}"
    );
    let e = parse_error("fit", "step = \"ols\"\nid = \"o\"\nridge = 1.0");
    assert!(e.contains("missing field `observations`"), "{e}");
}
