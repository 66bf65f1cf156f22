//! `yosoku export --format extrap` loaded by Extra-P itself: every bundled pipeline whose runs
//! vary a numeric parameter, run, exported, modelled by Extra-P 4.2.5 (`YOSOKU_EXTRAP_PYTHON`, which
//! `cargo xtask test` provides) and by yosoku's PMNF modeller from the same files, side by side.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
#[path = "../../../core/regression/tests/extrap_compare/mod.rs"]
mod extrap_compare;

use std::path::{Path, PathBuf};

use common::{repo, text, yosoku};
use yosoku_regression::pmnf::{PmnfOptions, extrap};

/// The bundled pipelines whose runs vary a numeric parameter (the others have none to model).
const PIPELINES: &[&str] = &[
    "mpi-scaling",
    "opencl-local-memory",
    "opencl-scaling",
    "opencl-vector-width",
    "rocprof-amd-gpus",
];

#[test]
fn extrap_loads_every_export_and_models_it_as_yosoku_does() {
    let Some(python) = extrap_compare::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = Vec::new();
    for name in PIPELINES {
        let bundle = dir.path().join(name);
        let pipeline = repo().join("pipelines").join(format!("{name}.toml"));
        let out = yosoku(&[
            "run",
            "-q",
            pipeline.to_str().unwrap(),
            "-o",
            bundle.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let json = dir.path().join(format!("{name}.json"));
        let out = yosoku(&[
            "export",
            bundle.to_str().unwrap(),
            "--format",
            "extrap",
            "-o",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let before = files.len();
        for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let p = entry.path();
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            if file.starts_with(name) && file.ends_with(".json") {
                files.push(p);
            }
        }
        assert!(files.len() > before, "{name}: no export");
    }
    files.sort();
    // Extra-P reads every file (it refused all three exports before they were split by points).
    let options = PmnfOptions::default();
    let theirs = extrap_compare::extrap_models(&python, &files, &options);
    let read = |path: &Path| {
        extrap::parse_json(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let c = extrap_compare::compare(&files, &read, (&theirs, &options), dir.path());
    c.print(files.len());
    assert!(c.total >= 90, "{} models", c.total);
    c.assert_agrees();
    // Our MPI runs over ranks again, with negative exponents allowed in both tools (times that
    // fall as the rank count grows), as pipelines/mpi-scaling.toml models them.
    let mpi: Vec<PathBuf> = files
        .iter()
        .filter(|f| {
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("mpi-scaling")
        })
        .cloned()
        .collect();
    let negative = PmnfOptions {
        allow_negative_exponents: true,
        ..PmnfOptions::default()
    };
    let theirs = extrap_compare::extrap_models(&python, &mpi, &negative);
    let c = extrap_compare::compare(&mpi, &read, (&theirs, &negative), dir.path());
    c.print(mpi.len());
    assert!(c.total >= 10, "{} models", c.total);
    c.assert_agrees();
    held_out_like_extrap(&python, &mpi, &dir.path().join("mpi-scaling"));
}

/// Extra-P holding out each experiment's largest point and predicting it from the others (what
/// `cargo xtask scaling-headline` prints) gives the prediction each of mpi-scaling's default
/// `scaling_model` steps gives for the same call path, and the same measured mean.
fn held_out_like_extrap(python: &str, files: &[PathBuf], bundle: &Path) {
    let out = std::process::Command::new(python)
        .arg(repo().join("tools/extrap/models.py"))
        .args(["--negative-exponents", "--hold-out-largest"])
        .args(files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = yosoku_bundle::fs::read_bundle(bundle).unwrap();
    // Each runs table's namespace, the program its call paths begin with, and the step that
    // models them.
    let steps = [
        ("himeno_paths", "himeno_mpi", "himeno_scaling"),
        ("himeno16_paths", "himeno_mpi", "himeno_16_cores"),
        ("meep_paths", "meep", "meep_scaling"),
        ("meep16_paths", "meep", "meep_16_cores"),
    ];
    let ours: Vec<(&str, &str, yosoku_tables::rows::PredictionRow)> = steps
        .iter()
        .flat_map(|(_, program, step)| {
            let batch = read
                .table(&format!("{step}.predictions"))
                .unwrap_or_else(|| panic!("no {step}.predictions"));
            yosoku_tables::rows::read_predictions("p", batch)
                .unwrap()
                .into_iter()
                .map(move |r| (*program, *step, r))
        })
        .collect();
    let mut matched = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let callpath = v["callpath"].as_str().unwrap();
        // A call path two tables share carries its table's namespace; one only a single table
        // measured is found by its program.
        let (step, rest) = match steps
            .iter()
            .find(|(ns, ..)| callpath.starts_with(&format!("{ns}->")))
        {
            Some((ns, _, step)) => (Some(*step), &callpath[ns.len() + 2..]),
            None => (None, callpath),
        };
        let (program, variant) = rest.split_once("->").unwrap();
        let candidates: Vec<_> = ours
            .iter()
            .filter(|(p, s, r)| {
                *p == program && step.is_none_or(|x| x == *s) && &*r.variant == variant
            })
            .collect();
        // Extra-P also fits call paths of two rank counts, which a pipeline's step, validating
        // what it fits, leaves out (`yosoku scaling` fits them as Extra-P does).
        let Some((_, s, r)) = candidates.first() else {
            continue;
        };
        assert_eq!(candidates.len(), 1, "{callpath}");
        let held = &v["held_out"];
        let (theirs, measured) = (
            held["predicted"].as_f64().unwrap(),
            held["measured"].as_f64().unwrap(),
        );
        assert!(
            (theirs - r.predicted_secs).abs() <= 1e-6 * r.predicted_secs.abs(),
            "{s} {callpath}: Extra-P {theirs}, yosoku {}",
            r.predicted_secs
        );
        assert!(
            (measured - r.measured_secs.unwrap()).abs() <= 1e-9,
            "{callpath}"
        );
        matched += 1;
    }
    // Every call path yosoku models has Extra-P's prediction beside it.
    assert_eq!(matched, ours.len(), "{matched} of {} matched", ours.len());
}

/// A file whose first parameter has one value at every run (a study of the ranks at one size):
/// `yosoku scaling` leaves it out of its models (docs/methods.md, section 7), and Extra-P 4.2.5,
/// run beside it on the same file, gives the same terms, each at the same place among the
/// file's parameters, and the same coefficients.
#[test]
fn a_parameter_fixed_at_every_run_is_modelled_as_extrap_models_it() {
    assert_modelled_as_extrap_models_it(
        "fixed-size.txt",
        "PARAMETER n\nPARAMETER p\nPOINTS ( 100 2 ) ( 100 4 ) ( 100 8 ) ( 100 16 ) ( 100 32 )\n\
         REGION main\nMETRIC time\nDATA 1.0 1.1\nDATA 2.1 2.0\nDATA 4.2 4.1\nDATA 8.1 8.3\n\
         DATA 16.5 16.2\nREGION io\nMETRIC time\nDATA 0.50 0.52\nDATA 0.61 0.60\nDATA 0.70 0.71\n\
         DATA 0.80 0.79\nDATA 0.91 0.90\n",
        2,
    );
}

/// A parameter measured at two values (two problem sizes, five rank counts; one parameter at
/// two values alone): Extra-P 4.2.5 fits a law in it between the two, with a warning, and
/// `yosoku scaling` chooses the same terms with the same coefficients, run beside it on the same
/// file (the law a linear, a quadratic and a logarithmic growth between the two sizes).
#[test]
fn a_parameter_measured_at_two_values_is_modelled_as_extrap_models_it() {
    assert_modelled_as_extrap_models_it(
        "two-sizes.txt",
        "PARAMETER p\nPARAMETER n\nPOINTS ( 2 10 ) ( 4 10 ) ( 8 10 ) ( 16 10 ) ( 32 10 ) \
         ( 2 20 ) ( 4 20 ) ( 8 20 ) ( 16 20 ) ( 32 20 )\n\
         REGION linear\nMETRIC time\nDATA 1.1 1.0\nDATA 2.1 2.0\nDATA 4.0 4.2\nDATA 8.1 8.0\n\
         DATA 16.2 16.0\nDATA 2.1 2.0\nDATA 4.1 4.0\nDATA 8.0 8.2\nDATA 16.1 16.0\nDATA 32.2 32.0\n\
         REGION quadratic\nMETRIC time\nDATA 1.0\nDATA 2.0\nDATA 4.1\nDATA 8.0\nDATA 16.1\n\
         DATA 4.0\nDATA 8.1\nDATA 16.0\nDATA 32.2\nDATA 64.0\n\
         REGION io\nMETRIC time\nDATA 0.50\nDATA 0.61\nDATA 0.70\nDATA 0.80\nDATA 0.91\n\
         DATA 0.55\nDATA 0.66\nDATA 0.75\nDATA 0.86\nDATA 0.95\n",
        3,
    );
    assert_modelled_as_extrap_models_it(
        "two-ranks.txt",
        "PARAMETER p\nPOINTS 2 4\nREGION quadrupled\nMETRIC time\nDATA 1.0 1.1\nDATA 3.9 4.0\n\
         REGION doubled\nMETRIC time\nDATA 1.0 1.1\nDATA 2.0 2.1\n",
        2,
    );
}

/// Runs Extra-P 4.2.5 and `yosoku scaling --json` on one Extra-P text file (`name`, `content`)
/// and asserts that each of its `models` call paths has the same terms at the same places among
/// the file's parameters, with coefficients and constant within 1e-9 (relative).
fn assert_modelled_as_extrap_models_it(name: &str, content: &str, models: usize) {
    let Some(python) = extrap_compare::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, content).unwrap();
    let theirs = extrap_compare::extrap_models(
        &python,
        std::slice::from_ref(&file),
        &PmnfOptions::default(),
    );
    let out = yosoku(&["scaling", "--json", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut compared = 0;
    for line in text(&out.stdout).lines() {
        let ours: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = (
            file.display().to_string(),
            ours["callpath"].as_str().unwrap().to_owned(),
            ours["metric"].as_str().unwrap().to_owned(),
        );
        let theirs = &theirs[&key];
        let ours = extrap_compare::model_of_line(&ours);
        assert_eq!(ours.shape, theirs.shape, "{key:?}");
        for (factors, c) in &ours.coefficients {
            let (_, d) = (theirs.coefficients.iter())
                .find(|(f, _)| f == factors)
                .unwrap();
            assert!((c - d).abs() <= 1e-9 * d.abs(), "{key:?}: {c} against {d}");
        }
        let constant = ours.constant;
        assert!(
            (constant - theirs.constant).abs() <= 1e-9 * theirs.constant.abs().max(1e-12),
            "{key:?}: {constant} against {}",
            theirs.constant
        );
        compared += 1;
    }
    assert_eq!(compared, models);
}
