//! The scaling models' intervals on real files, beside Extra-P's predictions of the same
//! held-out points (issue 70, item 1; `cargo xtask bench-intervals` runs it; BENCHMARKS.md,
//! "Intervals on real files").
//!
//! scaling_intervals write OUT FILE...
//!   Each Extra-P file (text, JSON Lines, JSON, or a saved `.extra-p`) written to OUT as
//!   Extra-P's JSON twice: as it is (`NAME.json`) and thinned the way users' files are
//!   (`NAME-thinned.json`: each point's first repetition only, each parameter's 5 largest
//!   values only); each without the call paths not measured at every point of it, which
//!   Extra-P refuses.
//! scaling_intervals score OUT --extrap FILE.jsonl
//!   Per file of OUT: the point largest in every parameter held out of every call path measured
//!   there (as tools/extrap/models.py --hold-out-largest holds it out, whose output FILE.jsonl
//!   is), the rest fitted by yosoku's Extra-P-compatible search and by its robust search, each
//!   prediction's 95 % interval calibrated on the rest alone (`pmnf::calibrate`: each call
//!   path's largest remaining point held out of it in turn); printed: held-out points, median
//!   |error| of Extra-P's, the default's and the robust search's predictions, and per search how
//!   many held-out means its own and its calibrated intervals held and their median half-width
//!   (per cent of the prediction). With `--series NAME`, after the row of each file whose name
//!   contains NAME, a table of its call paths: the held-out mean, Extra-P's, the default's and
//!   the robust search's error and models, and the points fitted.

// A benchmark program: it reads and writes its files (the crate's library does not).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yosoku_regression::pmnf::calibrate::{
    Basis, Calibration, by_unit, extrap_calibration, measured, robust_calibration,
};
use yosoku_regression::pmnf::extrap::{self, Experiment, Series};
use yosoku_regression::pmnf::robust::fit_robust;
use yosoku_regression::pmnf::suggest::MetricUnit;
use yosoku_regression::pmnf::{Aggregate, PmnfModel, PmnfOptions, Point, fit};

const LEVEL: f64 = 0.95;
/// The files of real programs' measurements, by the start of their names: LULESH (Extra-P's
/// `comparison/` experiments), RELeARN (Extra-P's `text/mpa/relearn_data.txt`, the brain
/// simulation's own measurements: tests/data/extrap/SOURCES.md) and the repository's MPI scaling
/// runs; every other file of Extra-P's test data is a synthetic law. Issue 70's targets are
/// judged on these.
const REAL_MEASUREMENTS: [&str; 3] = ["lulesh", "relearn", "mpi-scaling"];
/// Held-out points a file needs before its coverage is judged against the 90-98 % band.
const JUDGED_FROM: usize = 20;
/// Each parameter's largest values a thinned file keeps.
const THINNED_VALUES: usize = 5;

fn read(path: &Path) -> Result<Experiment, String> {
    let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let bytes = std::fs::read(path).map_err(|e| shown(&e))?;
    let format = extrap::Format::detect(&bytes).map_err(|e| shown(&e))?;
    if format == extrap::Format::Saved {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| shown(&e))?;
        let mut text = String::new();
        let mut inner = zip.by_name("experiment.json").map_err(|e| shown(&e))?;
        std::io::Read::read_to_string(&mut inner, &mut text).map_err(|e| shown(&e))?;
        return extrap::parse_extra_p(&text, false).map_err(|e| shown(&e));
    }
    let text = String::from_utf8(bytes).map_err(|e| shown(&e))?;
    extrap::parse(format, &text, false).map_err(|e| shown(&e))
}

/// `e` as users' files often are: one repetition a point, each parameter's largest
/// [`THINNED_VALUES`] values.
fn thinned(e: &Experiment) -> Experiment {
    let dims = e.parameters.len();
    let kept: Vec<Vec<f64>> = (0..dims)
        .map(|d| {
            let mut v: Vec<f64> = e
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(move |p| p.coordinate[d]))
                .collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v.split_off(v.len().saturating_sub(THINNED_VALUES))
        })
        .collect();
    Experiment {
        parameters: e.parameters.clone(),
        series: e
            .series
            .iter()
            .map(|s| Series {
                callpath: s.callpath.clone(),
                metric: s.metric.clone(),
                points: s
                    .points
                    .iter()
                    .filter(|p| p.coordinate.iter().zip(&kept).all(|(x, k)| k.contains(x)))
                    .map(|p| Point {
                        coordinate: p.coordinate.clone(),
                        values: p.values[..1].to_vec(),
                    })
                    .collect(),
                point_values: None,
            })
            .filter(|s| !s.points.is_empty())
            .collect(),
        notes: Vec::new(),
    }
}

/// `e` without the call paths not measured at every point of it (Extra-P refuses a file with
/// them).
fn complete(e: &Experiment) -> Experiment {
    let mut all: Vec<&Vec<f64>> = e
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| &p.coordinate))
        .collect();
    all.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    all.dedup();
    Experiment {
        parameters: e.parameters.clone(),
        series: e
            .series
            .iter()
            .filter(|s| {
                all.iter()
                    .all(|c| s.points.iter().any(|p| &p.coordinate == *c))
            })
            .cloned()
            .collect(),
        notes: Vec::new(),
    }
}

/// The point largest in every parameter over the whole file.
fn corner(e: &Experiment) -> Vec<f64> {
    (0..e.parameters.len())
        .map(|d| {
            e.series
                .iter()
                .flat_map(|s| s.points.iter().map(move |p| p.coordinate[d]))
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect()
}

/// One search's held-out predictions on one file.
#[derive(Default)]
struct Scored {
    errors_pct: Vec<f64>,
    held_own: usize,
    held_calibrated: usize,
    half_widths_pct: Vec<f64>,
    /// Each unit's calibration, in the order the file names its metrics.
    calibrations: Vec<Calibration>,
}

impl Scored {
    fn add(
        &mut self,
        model: &PmnfModel,
        calibration: &Calibration,
        lender_model: Option<&PmnfModel>,
        x: &[f64],
        measured: f64,
    ) -> f64 {
        let predicted = model.evaluate(x);
        self.errors_pct
            .push(100.0 * (predicted - measured).abs() / measured.abs());
        let inside =
            |i: Option<(f64, f64)>| i.is_some_and(|(lo, hi)| (lo..=hi).contains(&measured));
        self.held_own += usize::from(inside(model.interval(x, LEVEL)));
        let calibrated = calibration.interval_beside(model, x, lender_model);
        self.held_calibrated += usize::from(inside(calibrated));
        self.half_widths_pct
            .push(calibrated.map_or(f64::INFINITY, |(lo, hi)| {
                100.0 * (hi - lo) / 2.0 / predicted.abs()
            }));
        predicted
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Extra-P's held-out predictions of one file (models.py --hold-out-largest), by call path and
/// metric.
fn extrap_predictions(lines: &str, file: &str) -> BTreeMap<(String, String), f64> {
    lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| {
            v["file"]
                .as_str()
                .is_some_and(|f| Path::new(f).file_name() == Path::new(file).file_name())
        })
        .filter_map(|v| {
            let predicted = v["held_out"]["predicted"].as_f64()?;
            Some((
                (
                    v["callpath"].as_str()?.to_owned(),
                    v["metric"].as_str()?.to_owned(),
                ),
                predicted,
            ))
        })
        .collect()
}

/// Each unit's held-out call paths (times, counts, bytes) calibrated apart, on the rest of
/// their points, as `yosoku scaling --target` calibrates them: per unit, the Extra-P-compatible
/// search's calibration and the robust search's.
fn unit_calibrations(
    split: &[(&Series, Vec<Point>, f64)],
    options: &PmnfOptions,
) -> Vec<(MetricUnit, Calibration, Calibration)> {
    by_unit(
        split
            .iter()
            .map(|(s, rest, _)| (s.metric.as_str(), rest.as_slice())),
    )
    .into_iter()
    .map(|(unit, rests)| {
        let default = extrap_calibration(&rests, options, LEVEL);
        let robust = robust_calibration(&rests, options, LEVEL, || default.clone());
        (unit, default, robust)
    })
    .collect()
}

/// One file's row of the table; with `series`, a row per call path after it (its held-out
/// mean, each search's error and model, the points fitted).
fn score_file(path: &Path, extrap_lines: &str, series: bool) -> Result<(String, Summary), String> {
    let e = read(path)?;
    let at = corner(&e);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let theirs = extrap_predictions(extrap_lines, &name);
    let options = PmnfOptions::default();
    // Every call path measured at the corner, without it.
    let split: Vec<(&Series, Vec<Point>, f64)> = e
        .series
        .iter()
        .filter_map(|s| {
            let held = s.points.iter().find(|p| p.coordinate == at)?;
            let rest: Vec<Point> = s
                .points
                .iter()
                .filter(|p| p.coordinate != at)
                .cloned()
                .collect();
            let m = measured(held, Aggregate::Mean);
            (m != 0.0 && m.is_finite()).then_some((s, rest, m))
        })
        .collect();
    let calibrations = unit_calibrations(&split, &options);
    let calibrations_of = |metric: &str| {
        let unit = MetricUnit::of(metric);
        let (_, d, r) = calibrations
            .iter()
            .find(|(u, _, _)| *u == unit)
            .expect("every unit calibrated");
        (d, r)
    };
    let (mut default, mut robust, mut extrap_errors) =
        (Scored::default(), Scored::default(), Vec::new());
    let mut held = 0;
    let mut details = Vec::new();
    for (s, rest, m) in &split {
        let (Ok(d), Ok(r)) = (fit(rest, &options), fit_robust(rest, &options)) else {
            continue;
        };
        held += 1;
        let (default_calibration, robust_calibration) = calibrations_of(&s.metric);
        default.add(&d, default_calibration, None, &at, *m);
        robust.add(&r.model, robust_calibration, Some(&d), &at, *m);
        let their = theirs.get(&(s.callpath.clone(), s.metric.clone())).copied();
        if let Some(p) = their {
            extrap_errors.push(100.0 * (p - m).abs() / m.abs());
        }
        if series {
            let error = |p: f64| format!("{:.2}", 100.0 * (p - m).abs() / m.abs());
            let names: Vec<String> = (0..at.len()).map(|d| format!("x{}", d + 1)).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let measured_points: Vec<String> = rest
                .iter()
                .map(|p| {
                    let value = measured(p, Aggregate::Mean);
                    format!("{:?}: {value:.4e} x{}", p.coordinate, p.values.len())
                })
                .collect();
            details.push(format!(
                "| {} | {m:.4e} | {} | {} `{}` | {} `{}` | {} |",
                s.callpath,
                their.map_or_else(|| "-".to_owned(), error),
                error(d.evaluate(&at)),
                d.to_extrap(&names),
                error(r.model.evaluate(&at)),
                r.model.to_extrap(&names),
                measured_points.join(", "),
            ));
        }
    }
    default.calibrations = calibrations.iter().map(|(_, d, _)| d.clone()).collect();
    robust.calibrations = calibrations.iter().map(|(_, _, r)| r.clone()).collect();
    let columns = |s: &Scored| {
        // Each unit's factor (`/` between units), and their checks together.
        let factors: Vec<String> = s
            .calibrations
            .iter()
            .map(|c| {
                if c.basis == Basis::Borrowed {
                    "lent".to_owned()
                } else {
                    format!("x{:.3}", c.factor)
                }
            })
            .collect();
        let factors = if factors.is_empty() {
            "x1.000".to_owned()
        } else {
            factors.join("/")
        };
        format!(
            "{:>6.2} | {:>3}/{:<3} {:>3}/{:<3} {:>8.1} | {:<8}{:>3}",
            median(s.errors_pct.clone()),
            s.held_own,
            held,
            s.held_calibrated,
            held,
            median(s.half_widths_pct.clone()),
            factors,
            s.calibrations.iter().map(|c| c.checks).sum::<usize>(),
        )
    };
    let extrap_count = extrap_errors.len();
    let extrap_median = (extrap_count == held && held > 0).then(|| median(extrap_errors));
    let row = format!(
        "| {name:<34} | {held:>4} | {:>8} | {} | {} |",
        extrap_median.map_or_else(|| format!("{extrap_count}/{held}"), |m| format!("{m:.2}")),
        columns(&default),
        columns(&robust),
    );
    let summary = Summary {
        name: name.into_owned(),
        held,
        extrap_median,
        robust_median: median(robust.errors_pct.clone()),
        robust_held: robust.held_calibrated,
        half_width_ratio: median(robust.half_widths_pct.clone())
            / median(default.half_widths_pct.clone()),
    };
    if details.is_empty() {
        return Ok((row, summary));
    }
    Ok((
        format!(
            "{row}\n\n| call path | held-out mean | Extra-P: \\|err\\| % | default: \\|err\\| %, model | robust: \\|err\\| %, model | points fitted (mean, repetitions) |\n|---|---|---|---|---|---|\n{}\n",
            details.join("\n")
        ),
        summary,
    ))
}

/// One file's figures against issue 70's targets.
struct Summary {
    name: String,
    held: usize,
    extrap_median: Option<f64>,
    robust_median: f64,
    /// Held-out means the robust search's calibrated (or borrowed) intervals held.
    robust_held: usize,
    /// The robust intervals' median half-width over the default's calibrated ones.
    half_width_ratio: f64,
}

impl Summary {
    /// `| file | robust against Extra-P | coverage | half-width ratio |`, each with its verdict.
    fn row(&self) -> String {
        let error = match self.extrap_median {
            Some(e) => format!(
                "{:.2} % against {e:.2} %: {}",
                self.robust_median,
                if self.robust_median <= e {
                    "met"
                } else {
                    "missed"
                }
            ),
            None => "Extra-P did not predict every point: not judged".to_owned(),
        };
        let share = 100.0 * self.robust_held as f64 / self.held as f64;
        let coverage = if self.held >= JUDGED_FROM {
            format!(
                "{}/{} ({share:.1} %): {}",
                self.robust_held,
                self.held,
                if (90.0..=98.0).contains(&share) {
                    "met"
                } else {
                    "missed"
                }
            )
        } else {
            format!(
                "{}/{}: fewer than {JUDGED_FROM} points, not judged",
                self.robust_held, self.held
            )
        };
        let ratio = if self.held >= JUDGED_FROM {
            format!(
                "{:.2}: {}",
                self.half_width_ratio,
                if self.half_width_ratio <= 2.0 {
                    "met"
                } else {
                    "missed"
                }
            )
        } else {
            format!("{:.2}", self.half_width_ratio)
        };
        format!("| {} | {error} | {coverage} | {ratio} |", self.name)
    }
}

fn files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

fn run(args: &[String]) -> Result<(), String> {
    let usage = "usage: scaling_intervals write OUT FILE... | score OUT --extrap FILE.jsonl [--series NAME]";
    match args {
        [mode, out, files @ ..] if mode == "write" => {
            let out = Path::new(out);
            std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
            for file in files {
                let path = Path::new(file);
                let e = read(path)?;
                let stem = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .replace('.', "_");
                for (name, experiment) in [
                    (format!("{stem}.json"), complete(&e)),
                    (format!("{stem}-thinned.json"), complete(&thinned(&e))),
                ] {
                    let target = out.join(name);
                    std::fs::write(&target, extrap::to_json(&experiment))
                        .map_err(|e| format!("{}: {e}", target.display()))?;
                }
            }
            Ok(())
        }
        [mode, out, flag, lines, more @ ..] if mode == "score" && flag == "--extrap" => {
            // `--series NAME`: a row per call path of the files whose name contains NAME.
            let series = match more {
                [] => None,
                [flag, name] if flag == "--series" => Some(name.as_str()),
                _ => return Err(usage.to_owned()),
            };
            let lines = std::fs::read_to_string(lines).map_err(|e| format!("{lines}: {e}"))?;
            println!(
                "| file | held out | Extra-P: median \\|err\\| % | default: median \\|err\\| % | its own interval held, calibrated held, median half-width % | calibration factor, checks | robust: median \\|err\\| % | its own interval held, calibrated held, median half-width % | calibration factor, checks |"
            );
            println!("|---|---|---|---|---|---|---|---|---|");
            let mut real = Vec::new();
            for file in files_in(Path::new(out))? {
                let name = file.file_name().unwrap_or_default().to_string_lossy();
                let detailed = series.is_some_and(|s| name.contains(s));
                let (row, summary) = score_file(&file, &lines, detailed)?;
                println!("{row}");
                if REAL_MEASUREMENTS.iter().any(|r| name.starts_with(r)) && summary.held > 0 {
                    real.push(summary);
                }
            }
            println!(
                "\nIssue 70's targets on the files of real programs' measurements (robust search; coverage of its calibrated or borrowed 95 % intervals judged from {JUDGED_FROM} held-out points):\n"
            );
            println!(
                "| file | median \\|err\\|, robust against Extra-P (no worse) | intervals held (90-98 %) | median half-width, robust over default (at most 2) |"
            );
            println!("|---|---|---|---|");
            for summary in &real {
                println!("{}", summary.row());
            }
            Ok(())
        }
        _ => Err(usage.to_owned()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run(&args) {
        eprintln!("scaling_intervals: {e}");
        std::process::exit(2);
    }
}
