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
}
