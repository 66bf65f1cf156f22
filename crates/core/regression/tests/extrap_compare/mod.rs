//! yosoku's PMNF models beside Extra-P's on the same files: what the side-by-side tests share
//! (`crates/core/regression/tests/extrap.rs` on Extra-P's test experiments,
//! `crates/app/cli/tests/extrap_export.rs` on the exports of the bundled pipelines).

#![allow(dead_code)] // each test uses its part
#![allow(clippy::unwrap_used)]
// test code: a failed unwrap is a failed test
// The tests read their fixtures and run Extra-P; the crate itself does no I/O.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use yosoku_regression::pmnf::{Exponents, PmnfError, PmnfModel, PmnfOptions, Point, extrap, fit};

/// One factor of a term: parameter, exponent numerator, denominator, log exponent.
pub type Factor = (usize, i32, i32, i32);
/// A term's factors, sorted.
pub type TermShape = Vec<Factor>;
/// A model's terms, sorted: what "the same terms" compares.
pub type Shape = Vec<TermShape>;
/// A model's identity: file, call path, metric.
pub type Key = (String, String, String);

pub fn shape_of(m: &PmnfModel) -> Shape {
    let mut s: Shape = m.terms.iter().map(|t| factors(&t.factors)).collect();
    s.sort();
    s
}

fn factors(f: &[(usize, Exponents)]) -> TermShape {
    let mut f: TermShape = f
        .iter()
        .map(|(p, e)| (*p, e.numerator, e.denominator, e.log))
        .collect();
    f.sort_unstable();
    f
}

/// Extra-P's model of one series: its shape, constant and coefficients by term.
#[derive(Debug, Clone)]
pub struct Theirs {
    pub shape: Shape,
    pub constant: f64,
    pub coefficients: Vec<(TermShape, f64)>,
    /// The seconds Extra-P took for the whole file.
    pub seconds: f64,
}

impl Theirs {
    /// Extra-P's model at `x`.
    pub fn evaluate(&self, x: &[f64]) -> f64 {
        self.constant
            + self
                .coefficients
                .iter()
                .map(|(factors, c)| {
                    c * factors
                        .iter()
                        .map(|&(p, n, d, l)| Exponents::new(n, d, l).evaluate(x[p]))
                        .product::<f64>()
                })
                .sum::<f64>()
    }
}

/// The Python with Extra-P: `YOSOKU_EXTRAP_PYTHON`, else `python3`; `None` (the test skipped)
/// where it cannot import Extra-P, unless `YOSOKU_REQUIRE_INTEROP` is set.
pub fn python() -> Option<String> {
    let python = std::env::var("YOSOKU_EXTRAP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let ok = Command::new(&python)
        .args(["-c", "import extrap.modelers.model_generator"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    assert!(
        std::env::var_os("YOSOKU_REQUIRE_INTEROP").is_none(),
        "{python} cannot import extrap, and YOSOKU_REQUIRE_INTEROP is set"
    );
    eprintln!("skipped: {python} cannot import extrap (cargo xtask test provides it)");
    None
}

/// What `tools/extrap/models.py ARGS FILES...` prints (it must succeed).
fn models_py(python: &str, args: &[&str], files: &[PathBuf]) -> String {
    try_models_py(python, args, files).unwrap_or_else(|stderr| panic!("{stderr}"))
}

/// What `tools/extrap/models.py ARGS FILES...` prints, or what it said when it failed.
fn try_models_py(python: &str, args: &[&str], files: &[PathBuf]) -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../..")
        .join("tools/extrap/models.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .args(files)
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8(out.stdout).unwrap())
}

/// Extra-P's models of `files` (tools/extrap/models.py), by (file, call path, metric), with its
/// default options or (`options.allow_negative_exponents`) negative exponents allowed.
pub fn extrap_models(
    python: &str,
    files: &[PathBuf],
    options: &PmnfOptions,
) -> BTreeMap<Key, Theirs> {
    let mut flags = Vec::new();
    if options.allow_negative_exponents {
        flags.push("--negative-exponents");
    }
    if options.aggregate == yosoku_regression::pmnf::Aggregate::Median {
        flags.push("--median");
    }
    let mut models = BTreeMap::new();
    for line in models_py(python, &flags, files).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = |k: &str| v[k].as_str().unwrap().to_owned();
        models.insert(
            (text("file"), text("callpath"), text("metric")),
            model_of_line(&v),
        );
    }
    models
}

/// A model of one JSON line as `tools/extrap/models.py` writes Extra-P's and `yosoku scaling
/// --json` writes yosoku's (constant; terms of coefficient and factors `[parameter, numerator,
/// denominator, log]`; Extra-P's seconds, 0 where the line has none).
pub fn model_of_line(v: &serde_json::Value) -> Theirs {
    let mut coefficients = Vec::new();
    for t in v["terms"].as_array().unwrap() {
        let factors: TermShape = t["factors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let n = |i: usize| f[i].as_i64().unwrap();
                (n(0) as usize, n(1) as i32, n(2) as i32, n(3) as i32)
            })
            .collect();
        coefficients.push((factors, t["coefficient"].as_f64().unwrap()));
    }
    let mut shape: Shape = coefficients.iter().map(|(f, _)| f.clone()).collect();
    shape.sort();
    Theirs {
        shape,
        constant: v["constant"].as_f64().unwrap(),
        coefficients,
        seconds: v["seconds"].as_f64().unwrap_or(0.0),
    }
}

/// Per (file, call path, metric), its points' coordinates and means, as Extra-P reads them.
pub type Measured = BTreeMap<Key, Vec<(Vec<f64>, f64)>>;

/// Each (file, call path, metric)'s points as Extra-P reads them (`models.py --measurements`,
/// with `args` before the files): coordinate and mean, in Extra-P's order.
#[allow(dead_code)] // used by the Cube test, which needs the `cube` feature
pub fn extrap_measurements(python: &str, files: &[PathBuf], args: &[&str]) -> Measured {
    try_extrap_measurements(python, files, args).unwrap_or_else(|stderr| panic!("{stderr}"))
}

/// As [`extrap_measurements`], or what Extra-P said when it failed.
#[allow(dead_code)] // used by the Cube test, which needs the `cube` feature
pub fn try_extrap_measurements(
    python: &str,
    files: &[PathBuf],
    args: &[&str],
) -> Result<Measured, String> {
    try_extrap_centres(python, files, args, "mean")
}

/// As [`extrap_measurements`], each point's median (Extra-P's `--median` value of it) instead
/// of its mean.
#[allow(dead_code)] // used by the Cube test, which needs the `cube` feature
pub fn extrap_medians(python: &str, files: &[PathBuf], args: &[&str]) -> Measured {
    try_extrap_centres(python, files, args, "median").unwrap_or_else(|stderr| panic!("{stderr}"))
}

/// Each point's `centre` (`mean` or `median`) as `models.py --measurements` prints it.
#[allow(dead_code)] // used by the Cube test, which needs the `cube` feature
fn try_extrap_centres(
    python: &str,
    files: &[PathBuf],
    args: &[&str],
    centre: &str,
) -> Result<Measured, String> {
    let args: Vec<&str> = std::iter::once("--measurements")
        .chain(args.iter().copied())
        .collect();
    let mut series = BTreeMap::new();
    for line in try_models_py(python, &args, files)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = |k: &str| v[k].as_str().unwrap().to_owned();
        let mut points: Vec<(Vec<f64>, f64)> = v["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let coordinate = p["coordinate"].as_array().unwrap();
                (
                    coordinate.iter().map(|x| x.as_f64().unwrap()).collect(),
                    p[centre].as_f64().unwrap(),
                )
            })
            .collect();
        points.sort_by(|a, b| {
            a.0.iter()
                .zip(&b.0)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        series.insert((text("file"), text("callpath"), text("metric")), points);
    }
    Ok(series)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
}

/// The residual sum of squares of `f` at the points' means.
fn rss(f: &dyn Fn(&[f64]) -> f64, points: &[Point]) -> f64 {
    points
        .iter()
        .map(|p| {
            let y = p.values.iter().sum::<f64>() / p.values.len() as f64;
            (f(&p.coordinate) - y).powi(2)
        })
        .sum()
}

/// Whether two models are the same function on the measured points: fitted values within
/// 1e-6 of the largest measured value.
fn same_on_points(ours: &PmnfModel, theirs: &Theirs, points: &[Point]) -> bool {
    let scale = points
        .iter()
        .flat_map(|p| &p.values)
        .fold(0.0f64, |m, v| m.max(v.abs()));
    points.iter().all(|p| {
        (ours.evaluate(&p.coordinate) - theirs.evaluate(&p.coordinate)).abs() <= 1e-6 * scale
    })
}

/// The outcome of modelling the same files with both tools.
#[derive(Debug, Default)]
pub struct Comparison {
    pub total: usize,
    /// Models with Extra-P's terms.
    pub same: usize,
    /// Models with other terms that are not Extra-P's function on the measured points.
    pub real: usize,
    /// Every model with other terms, both models written out.
    pub disagreements: Vec<String>,
    /// Same terms, coefficients beyond 1e-6, but the same fitted values or yosoku's smaller RSS.
    pub coefficient_notes: Vec<String>,
    /// Same terms, coefficients beyond 1e-6, and neither.
    pub coefficient_misses: Vec<String>,
    pub ours_secs: f64,
    pub theirs_secs: f64,
}

/// Reads and models every file with yosoku (`read` parses one; `options` as Extra-P was run)
/// and compares with `theirs`.
pub fn compare(
    files: &[PathBuf],
    read: &dyn Fn(&Path) -> extrap::Experiment,
    (theirs, options): (&BTreeMap<Key, Theirs>, &PmnfOptions),
    root: &Path,
) -> Comparison {
    let mut c = Comparison::default();
    for file in files {
        let started = std::time::Instant::now();
        let e = read(file);
        let models: Vec<Result<PmnfModel, PmnfError>> =
            e.series.iter().map(|s| fit(&s.points, options)).collect();
        c.ours_secs += started.elapsed().as_secs_f64();
        let names: Vec<&str> = e.parameters.iter().map(String::as_str).collect();
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (s, ours) in e.series.iter().zip(models) {
            let key = (
                file.display().to_string(),
                s.callpath.clone(),
                s.metric.clone(),
            );
            let t = theirs
                .get(&key)
                .unwrap_or_else(|| panic!("Extra-P made no model of {key:?}"));
            // Extra-P's search models every series, from one value of a parameter up.
            let ours = ours.unwrap_or_else(|e| panic!("{shown} {}: {e}", s.callpath));
            c.total += 1;
            let both = format!(
                "{shown} {} {}:\n  yosoku:  {}\n  Extra-P: {} {:?}",
                s.callpath,
                s.metric,
                ours.to_extrap(&names),
                t.constant,
                t.coefficients
            );
            if shape_of(&ours) != t.shape {
                // Where the design does not tell the terms apart (points on a cross, on lines
                // through one corner), several combinations fit the same values with the same
                // SMAPE, and rounding picks one: said so.
                if same_on_points(&ours, t, &s.points) {
                    c.disagreements
                        .push(format!("(a tie: the same fitted values) {both}"));
                } else {
                    c.real += 1;
                    c.disagreements.push(both);
                }
                continue;
            }
            c.same += 1;
            let mut ok = close(ours.constant, t.constant);
            for term in &ours.terms {
                let f = factors(&term.factors);
                let theirs = t.coefficients.iter().find(|(g, _)| *g == f).unwrap().1;
                ok &= close(term.coefficient, theirs);
            }
            // An ill-conditioned design (x^3 beside a constant at x = 10^4) fixes the function
            // on the points, not each coefficient to 1e-6, and yosoku's column-scaled solve may
            // keep digits Extra-P's unscaled one loses: accepted where the fitted values agree
            // or yosoku's fit has the smaller residual sum of squares.
            let better = rss(&|x| ours.evaluate(x), &s.points)
                <= rss(&|x| t.evaluate(x), &s.points) * (1.0 + 1e-12);
            if !ok && (same_on_points(&ours, t, &s.points) || better) {
                c.coefficient_notes.push(both);
            } else if !ok {
                c.coefficient_misses.push(both);
            }
        }
    }
    let mut per_file = BTreeMap::new();
    for ((f, _, _), t) in theirs {
        per_file.insert(f.clone(), t.seconds);
    }
    c.theirs_secs = per_file.values().sum();
    c
}

impl Comparison {
    /// Every model Extra-P's function on the measured points, at least 95 % with its terms (the
    /// rest ties the design cannot break), and the coefficients where the terms agree within
    /// 1e-6 or explained (the same fitted values, or yosoku's smaller RSS).
    pub fn assert_agrees(&self) {
        assert_eq!(
            self.real, 0,
            "models that are not Extra-P's on the measured points"
        );
        assert!(
            self.same * 100 >= self.total * 95,
            "{} of {}",
            self.same,
            self.total
        );
        assert!(
            self.coefficient_misses.is_empty(),
            "{}",
            self.coefficient_misses.join("\n")
        );
    }

    /// Prints the counts, every disagreement and every coefficient note.
    pub fn print(&self, files: usize) {
        eprintln!(
            "{} of {} models with Extra-P's terms, {} ties of the same fitted values, {} other disagreements ({files} files; reading and modelling them took yosoku {:.4} s, Extra-P {:.2} s)",
            self.same,
            self.total,
            self.disagreements.len() - self.real,
            self.real,
            self.ours_secs,
            self.theirs_secs
        );
        for d in &self.disagreements {
            eprintln!("disagreement: {d}");
        }
        for n in &self.coefficient_notes {
            eprintln!(
                "coefficients beyond 1e-6, the same fitted values or yosoku's smaller RSS: {n}"
            );
        }
        for m in &self.coefficient_misses {
            eprintln!("coefficients: {m}");
        }
    }
}
