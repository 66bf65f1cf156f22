//! yosoku's PMNF modeller beside Extra-P itself, on Extra-P's own test experiments
//! (`tests/data/extrap/`, BSD-3): every (call path, metric) model the same function as Extra-P's
//! on the measured points, the same terms wherever the design tells the hypotheses apart,
//! coefficients within 1e-6 (relative) where the terms agree (or, in an ill-conditioned design,
//! the smaller residual sum of squares), and every disagreement printed with both models.
//! Extra-P runs from `YOSOKU_EXTRAP_PYTHON` (`cargo xtask test` installs `extrap` 4.2.5 into its
//! Python); without it the test is skipped, unless `YOSOKU_REQUIRE_INTEROP` is set.

#![allow(clippy::unwrap_used)]
// test code: a failed unwrap is a failed test
// The test reads its fixtures; the crate itself does no I/O.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod extrap_compare;

use std::path::{Path, PathBuf};

use yosoku_regression::pmnf::{PmnfOptions, extrap};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/extrap")
}

/// The experiments Extra-P accepts: every file but its examples of bad input.
fn experiments() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                // Strong scaling needs negative exponents (their own test below).
                if name != "strong_scaling" {
                    walk(&path, out);
                }
            } else if (name.ends_with(".txt")
                || name.ends_with(".jsonl")
                || name.ends_with(".extra-p"))
                && !name.contains("_neg")
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&data(), &mut out);
    out.sort();
    out
}

fn read(path: &Path) -> extrap::Experiment {
    if path.extension().is_some_and(|e| e == "extra-p") {
        let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut zip.by_name("experiment.json").unwrap(), &mut text)
            .unwrap();
        return extrap::parse_extra_p(&text, false)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let text = std::fs::read_to_string(path).unwrap();
    let format = extrap::Format::of(&path.to_string_lossy());
    extrap::parse(format, &text, false).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn yosoku_picks_the_terms_extrap_picks_with_the_same_coefficients() {
    let Some(python) = extrap_compare::python() else {
        return;
    };
    let files = experiments();
    let options = PmnfOptions::default();
    let theirs = extrap_compare::extrap_models(&python, &files, &options);
    let c = extrap_compare::compare(&files, &read, (&theirs, &options), &data());
    c.print(files.len());
    // Every model is Extra-P's function on the measured points; where the design leaves a tie,
    // yosoku keeps the earlier hypothesis (exact arithmetic) and Extra-P's pick follows its
    // rounding, so the share of identical terms is a little below the count of same functions.
    c.assert_agrees();
}

/// Extra-P's strong-scaling experiments (times that fall as the process count grows), modelled
/// by both with negative exponents allowed.
#[test]
fn with_negative_exponents_yosoku_picks_extrap_s_terms_on_its_strong_scaling_experiments() {
    let Some(python) = extrap_compare::python() else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(data().join("strong_scaling"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let options = PmnfOptions {
        allow_negative_exponents: true,
        ..PmnfOptions::default()
    };
    let theirs = extrap_compare::extrap_models(&python, &files, &options);
    let c = extrap_compare::compare(&files, &read, (&theirs, &options), &data());
    c.print(files.len());
    assert!(c.total >= 10, "{} models", c.total);
    c.assert_agrees();
}

#[test]
fn extrap_s_examples_of_bad_input_are_refused_at_their_line() {
    let read = |name: &str| std::fs::read_to_string(data().join("input").join(name)).unwrap();
    // Extra-P: "The number of measurements (24) ... does not match the number of coordinates".
    let e = extrap::parse_text(&read("experiment_MP_neg1.txt")).unwrap_err();
    assert!(
        e.to_string()
            .contains("24 measured points of the 25 POINTS"),
        "{e}"
    );
    // Extra-P: "To many DATA lines (25) for the number of POINTS (25)".
    let e = extrap::parse_text(&read("experiment_MP_neg2.txt")).unwrap_err();
    assert!(
        e.to_string().contains("more DATA lines than the 25 POINTS"),
        "{e}"
    );
    // Extra-P: "The number of coordinate units of (1000.0,) does not match".
    let e = extrap::parse_text(&read("experiment3_neg.txt")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 5: points of several parameters are written in parentheses: (x y)"
    );
    // Extra-P: "This file has no parameters."
    let e = extrap::parse_text(&read("experiment_neg.txt")).unwrap_err();
    assert_eq!(e.to_string(), "line 1: POINTS before PARAMETER");
}
