//! The noise benchmark of the scaling models (`cargo xtask bench-scaling`; BENCHMARKS.md,
//! "Scaling models under noise"): synthetic experiments with known laws
//! (`yosoku_regression::pmnf::synthetic`), modelled by yosoku's Extra-P-compatible search, by its
//! robust search and, from the files this writes, by Extra-P itself.
//!
//! ```text
//! scaling_noise write DIR [--laws N] [--seed S] [--repetitions N] [--design grid|scattered|latin]
//!                                                   the experiments as Extra-P text files
//! scaling_noise score DIR [--laws N] [--seed S] [--repetitions N] [--design grid|scattered|latin]
//!                         [--extrap FILE.jsonl]...
//! scaling_noise suggest DIR [--laws N] [--seed S] [--advisor PYTHON [--advisor-laws N]]
//!                                                   the next run to measure, against a full grid
//! ```
//!
//! `score` regenerates the same experiments from the seed, models them both ways, reads each
//! `--extrap` file (tools/extrap/models.py's output on DIR's files, one per Extra-P option set,
//! named by its file name) and prints, per search: the laws whose terms it recovered, by noise
//! level and by family, its held-out configuration's median |error|, and how often the 95 %
//! interval held the held-out mean (yosoku's searches). `--design scattered` measures the laws of
//! two parameters off any grid instead (`synthetic::scattered`: as a space-filling design does,
//! no two runs on a line) and leaves out those of one; `--design latin` at a Latin hypercube
//! (`synthetic::latin_hypercube`: no two runs share a value of any parameter).

// The benchmark's harness writes and reads its files; the crate itself does no I/O.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use yosoku_regression::pmnf::synthetic::{self, Experiment, FAMILIES, NOISE_LEVELS};
use yosoku_regression::pmnf::{self, Exponents, PmnfModel, PmnfOptions, Term};

type Shape = Vec<Vec<(usize, Exponents)>>;

/// What one search made of one experiment.
#[derive(Debug, Clone)]
struct Outcome {
    shape: Shape,
    recovered: Option<bool>,
    held_out_error_pct: f64,
    covered: Option<bool>,
    /// The interval's half-width at the held-out point, in % of the prediction.
    half_width_pct: Option<f64>,
}

fn file_name(i: usize) -> String {
    format!("law-{i:04}.txt")
}

/// The experiment in Extra-P's text format.
fn extrap_text(measured: &[pmnf::Point]) -> String {
    let mut out = String::new();
    let names = ["x", "y", "z"];
    for name in names.iter().take(measured[0].coordinate.len()) {
        let _ = writeln!(out, "PARAMETER {name}");
    }
    let points: Vec<String> = measured
        .iter()
        .map(|p| {
            let c: Vec<String> = p.coordinate.iter().map(|v| v.to_string()).collect();
            format!("( {} )", c.join(" "))
        })
        .collect();
    let _ = writeln!(out, "POINTS {}", points.join(" "));
    let _ = writeln!(out, "REGION law");
    let _ = writeln!(out, "METRIC time");
    for p in measured {
        let v: Vec<String> = p.values.iter().map(|v| format!("{v:e}")).collect();
        let _ = writeln!(out, "DATA {}", v.join(" "));
    }
    out
}

fn outcome(e: &Experiment, model: &PmnfModel, shape: &Shape) -> Outcome {
    let x = &e.held_out.coordinate;
    let measured = e.held_out.values.iter().sum::<f64>() / e.held_out.values.len() as f64;
    let predicted = model.evaluate(x);
    let interval = model.interval(x, 0.95);
    Outcome {
        shape: shape.clone(),
        recovered: e.shape().map(|truth| truth == *shape),
        held_out_error_pct: 100.0 * (predicted - measured).abs() / measured.abs(),
        covered: interval.map(|(lo, hi)| (lo..=hi).contains(&measured)),
        half_width_pct: interval.map(|(lo, hi)| 100.0 * (hi - lo) / 2.0 / predicted.abs()),
    }
}

/// An Extra-P model line: its terms and its value at `x`.
fn extrap_outcome(e: &Experiment, line: &serde_json::Value) -> Option<Outcome> {
    let constant = line.get("constant")?.as_f64()?;
    let mut terms = Vec::new();
    for t in line.get("terms")?.as_array()? {
        let coefficient = t.get("coefficient")?.as_f64()?;
        let mut factors = Vec::new();
        for f in t.get("factors")?.as_array()? {
            let f: Vec<i64> = f.as_array()?.iter().filter_map(|v| v.as_i64()).collect();
            let [p, n, d, l] = f[..] else { return None };
            factors.push((p as usize, Exponents::new(n as i32, d as i32, l as i32)));
        }
        terms.push(Term {
            coefficient,
            factors,
        });
    }
    let x = &e.held_out.coordinate;
    let predicted = constant + terms.iter().map(|t| t.evaluate(x)).sum::<f64>();
    let measured = e.held_out.values.iter().sum::<f64>() / e.held_out.values.len() as f64;
    let shape = synthetic::shape(&terms);
    Some(Outcome {
        recovered: e.shape().map(|truth| truth == shape),
        shape,
        held_out_error_pct: 100.0 * (predicted - measured).abs() / measured.abs(),
        covered: None,
        half_width_pct: None,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn report(laws: &[Experiment], searches: &[(String, Vec<Option<Outcome>>)]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "laws: {}", laws.len());
    let header: Vec<&str> = searches.iter().map(|(n, _)| n.as_str()).collect();
    let _ = writeln!(
        out,
        "\nterms recovered, by noise (laws whose terms a PMNF search can build):"
    );
    let _ = writeln!(out, "| noise | laws | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(header.len()));
    // One row: the laws `pick` takes, and how many of them each search recovered.
    let row = |label: String, pick: &dyn Fn(&Experiment) -> bool| {
        let total = laws.iter().filter(|e| pick(e)).count();
        let cells: Vec<String> = searches
            .iter()
            .map(|(_, s)| {
                let recovered = laws
                    .iter()
                    .zip(s)
                    .filter(|(e, _)| pick(e))
                    .filter(|(_, o)| o.as_ref().and_then(|o| o.recovered) == Some(true))
                    .count();
                recovered.to_string()
            })
            .collect();
        format!("| {label} | {total} | {} |\n", cells.join(" | "))
    };
    for noise in NOISE_LEVELS {
        let label = format!("{:.0} %", noise * 100.0);
        out.push_str(&row(label, &|e| e.noise == noise && e.shape().is_some()));
    }
    let _ = writeln!(out, "\nterms recovered, by family (all noise levels):");
    let _ = writeln!(out, "| family | laws | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(header.len()));
    for &family in FAMILIES
        .iter()
        .filter(|f| **f != synthetic::Family::OffGrid)
    {
        out.push_str(&row(family.name().to_owned(), &|e| e.family == family));
    }
    let _ = writeln!(
        out,
        "\nheld-out configuration (one doubling past the largest), median |error| by noise:"
    );
    let _ = writeln!(out, "| noise | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(header.len()));
    for noise in NOISE_LEVELS {
        let cells: Vec<String> = searches
            .iter()
            .map(|(_, s)| {
                let errors: Vec<f64> = laws
                    .iter()
                    .zip(s)
                    .filter(|(e, _)| e.noise == noise)
                    .filter_map(|(_, o)| o.as_ref().map(|o| o.held_out_error_pct))
                    .collect();
                format!("{:.1} %", median(errors))
            })
            .collect();
        let _ = writeln!(out, "| {:.0} % | {} |", noise * 100.0, cells.join(" | "));
    }
    let _ = writeln!(out, "\n95 % intervals holding the held-out mean:");
    for (name, s) in searches {
        let held: Vec<bool> = s.iter().flatten().filter_map(|o| o.covered).collect();
        if held.is_empty() {
            continue;
        }
        // The share of held-out means inside the interval, of the laws `pick` takes.
        let share = |pick: &dyn Fn(&Experiment) -> bool| {
            let h: Vec<bool> = laws
                .iter()
                .zip(s)
                .filter(|(e, _)| pick(e))
                .filter_map(|(_, o)| o.as_ref().and_then(|o| o.covered))
                .collect();
            100.0 * h.iter().filter(|c| **c).count() as f64 / h.len().max(1) as f64
        };
        let by_noise: Vec<String> = NOISE_LEVELS
            .iter()
            .map(|&noise| {
                format!(
                    "{:.0} %: {:.1} %",
                    noise * 100.0,
                    share(&|e| e.noise == noise)
                )
            })
            .collect();
        let by_family: Vec<String> = FAMILIES
            .iter()
            .map(|&f| format!("{}: {:.1} %", f.name(), share(&|e| e.family == f)))
            .collect();
        let _ = writeln!(
            out,
            "- {name}: {:.1} % of {} ({})",
            100.0 * held.iter().filter(|c| **c).count() as f64 / held.len() as f64,
            held.len(),
            by_noise.join(", ")
        );
        let _ = writeln!(out, "  by family: {}", by_family.join(", "));
        let widths: Vec<f64> = s
            .iter()
            .flatten()
            .filter_map(|o| o.half_width_pct)
            .collect();
        if !widths.is_empty() {
            let _ = writeln!(
                out,
                "  median half-width: {:.1} % of the prediction",
                median(widths)
            );
        }
    }
    out
}

/// How often two searches chose the same terms.
fn agreement(a: &[Option<Outcome>], b: &[Option<Outcome>]) -> (usize, usize) {
    let both: Vec<(&Outcome, &Outcome)> = a
        .iter()
        .zip(b)
        .filter_map(|(a, b)| Some((a.as_ref()?, b.as_ref()?)))
        .collect();
    (
        both.iter().filter(|(a, b)| a.shape == b.shape).count(),
        both.len(),
    )
}

struct Args {
    command: String,
    dir: PathBuf,
    laws: usize,
    seed: u64,
    extrap: Vec<PathBuf>,
    /// A Python with Extra-P: `suggest` follows its measurement point advisor too, on the first
    /// `advisor_laws` laws.
    advisor: Option<PathBuf>,
    advisor_laws: usize,
    /// Each measured point keeps its first this many repetitions (1: as users' files without
    /// repetitions are); all where not given.
    repetitions: Option<usize>,
    /// How the runs are laid out (`--design`): off a grid, the laws of one parameter are left
    /// out.
    design: Design,
}

/// Where a law is measured (`--design`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Design {
    /// On its grid.
    Grid,
    /// Off any grid, values drawn and rounded (`synthetic::scattered`).
    Scattered,
    /// At a Latin hypercube (`synthetic::latin_hypercube`).
    Latin,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let usage = "usage: scaling_noise write|score|suggest DIR [--laws N] [--seed S] [--repetitions N] [--design grid|scattered|latin] [--extrap FILE]... [--advisor PYTHON [--advisor-laws N]]";
    let (Some(command), Some(dir)) = (args.first(), args.get(1)) else {
        return Err(usage.to_owned());
    };
    let mut parsed = Args {
        command: command.clone(),
        dir: PathBuf::from(dir),
        laws: 300,
        seed: 56,
        extrap: Vec::new(),
        advisor: None,
        advisor_laws: 12,
        repetitions: None,
        design: Design::Grid,
    };
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        let value = rest
            .next()
            .ok_or(format!("{flag} needs a value; {usage}"))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag} {value}: not a number"))
        };
        match flag.as_str() {
            "--laws" => parsed.laws = number()? as usize,
            "--seed" => parsed.seed = number()?,
            "--extrap" => parsed.extrap.push(PathBuf::from(value)),
            "--advisor" => parsed.advisor = Some(PathBuf::from(value)),
            "--advisor-laws" => parsed.advisor_laws = number()? as usize,
            "--design" => {
                parsed.design = match value.as_str() {
                    "grid" => Design::Grid,
                    "scattered" => Design::Scattered,
                    "latin" => Design::Latin,
                    other => return Err(format!("--design {other}: grid, scattered or latin")),
                }
            }
            "--repetitions" => match number()? {
                0 => return Err("--repetitions 0: a point keeps at least one".to_owned()),
                n => parsed.repetitions = Some(n as usize),
            },
            _ => return Err(format!("unknown option {flag}; {usage}")),
        }
    }
    Ok(parsed)
}

fn extrap_lines(path: &Path) -> Result<BTreeMap<String, serde_json::Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), n + 1))?;
        let file = v.get("file").and_then(|f| f.as_str()).unwrap_or_default();
        let name = Path::new(file)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned());
        out.insert(name.unwrap_or_default(), v);
    }
    Ok(out)
}

/// How the next configuration to measure is chosen in [`suggest_benchmark`].
#[derive(Clone, Copy, PartialEq)]
enum Strategy {
    /// `yosoku scaling --suggest`'s first suggestion among the grid's configurations.
    Suggested,
    /// The cheapest grid configuration not measured yet (a user's plain choice).
    CheapestFirst,
    /// Extra-P's measurement point advisor (tools/extrap/advise.py): its first suggestion not
    /// measured yet, on the grid or off it (it extends each parameter's series).
    Advisor,
}

/// Extra-P's measurement point advisor in a Python process of its own, asked one experiment at
/// a time (tools/extrap/advise.py).
struct Advisor {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    file: PathBuf,
    /// Requests answered in each of its modes (`base`, `add`, `gpr`), and refused.
    modes: BTreeMap<String, usize>,
}

impl Advisor {
    fn start(python: &Path, dir: &Path) -> Result<Self, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tools/extrap/advise.py");
        let mut child = std::process::Command::new(python)
            .arg(&script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the advisor's pipes".to_owned());
        };
        Ok(Self {
            child,
            stdin,
            stdout: std::io::BufReader::new(stdout),
            file: dir.join("advisor-request.txt"),
            modes: BTreeMap::new(),
        })
    }

    /// Its first suggestion for `points` that is not among them.
    fn next(&mut self, points: &[pmnf::Point]) -> Option<Vec<f64>> {
        use std::io::{BufRead, Write};
        std::fs::write(&self.file, extrap_text(points)).ok()?;
        let request = serde_json::json!({ "file": self.file });
        writeln!(self.stdin, "{request}").ok()?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).ok()?;
        let answer: serde_json::Value = serde_json::from_str(&line).ok()?;
        let mode = answer["mode"].as_str().unwrap_or("refused").to_owned();
        *self.modes.entry(mode).or_default() += 1;
        answer["points"]
            .as_array()?
            .iter()
            .filter_map(|p| {
                p.as_array()?
                    .iter()
                    .map(|v| v.as_f64())
                    .collect::<Option<Vec<f64>>>()
            })
            .find(|c| !points.iter().any(|p| p.coordinate == *c))
    }
}

impl Drop for Advisor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// From the grid's first 3 values of every parameter, configurations of the law's grid are
/// measured one at a time (as often as the rest, with the law's noise), chosen by `strategy`,
/// until the prediction of the held-out configuration is within `goal` %: the cost then and the
/// configurations added, or `None` when 40 did not get there.
fn follow(
    e: &Experiment,
    strategy: Strategy,
    goal: f64,
    rng: &mut synthetic::SplitMix,
    advisor: Option<&mut Advisor>,
) -> Option<(f64, usize)> {
    let mut advisor = advisor;
    let options = PmnfOptions::default();
    let dims = e.points[0].coordinate.len();
    let reps = e.points[0].values.len();
    let target = &e.held_out.coordinate;
    let truth = e.truth(target);
    let firsts: Vec<Vec<f64>> = (0..dims)
        .map(|d| {
            let mut v: Vec<f64> = e.points.iter().map(|p| p.coordinate[d]).collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v.truncate(3);
            v
        })
        .collect();
    let mut points: Vec<pmnf::Point> = e
        .points
        .iter()
        .filter(|p| (0..dims).all(|d| firsts[d].contains(&p.coordinate[d])))
        .cloned()
        .collect();
    let mut cost: f64 = points.iter().map(|p| cost_of(e, &p.coordinate)).sum();
    let grid: Vec<Vec<f64>> = e.points.iter().map(|p| p.coordinate.clone()).collect();
    for added in 0..=40 {
        let m = pmnf::robust::fit_robust(&points, &options).ok()?.model;
        if 100.0 * (m.evaluate(target) - truth).abs() / truth <= goal {
            return Some((cost, added));
        }
        let next = match strategy {
            Strategy::Suggested => {
                // Configurations not measured yet; `suggest` adds repeats of measured ones
                // where the noise dominates, as `yosoku scaling --suggest` offers them.
                let fresh: Vec<Vec<f64>> = grid
                    .iter()
                    .filter(|c| !points.iter().any(|p| p.coordinate == **c))
                    .cloned()
                    .collect();
                let s = pmnf::suggest::suggest(
                    &points,
                    &options,
                    target,
                    &fresh,
                    (dims == 2).then_some(1),
                    None,
                )
                .ok()?;
                s.ranked.first()?.coordinate.clone()
            }
            Strategy::CheapestFirst => grid
                .iter()
                .filter(|c| !points.iter().any(|p| p.coordinate == **c))
                .min_by(|a, b| cost_of(e, a).total_cmp(&cost_of(e, b)))?
                .clone(),
            Strategy::Advisor => advisor.as_deref_mut()?.next(&points)?,
        };
        let y = e.truth(&next);
        let values: Vec<f64> = (0..reps)
            .map(|_| y * (1.0 + e.noise * (2.0 * rng.unit() - 1.0)))
            .collect();
        cost += cost_of(e, &next);
        match points.iter_mut().find(|p| p.coordinate == next) {
            Some(p) => p.values.extend(values),
            None => points.push(pmnf::Point {
                coordinate: next,
                values,
            }),
        }
    }
    None
}

/// The time of a configuration's repetitions, times its last parameter's value for two
/// parameters (as ranks: core-seconds).
fn cost_of(e: &Experiment, x: &[f64]) -> f64 {
    let reps = e.points[0].values.len() as f64;
    e.truth(x) * reps * if x.len() == 2 { x[1] } else { 1.0 }
}

/// What following `yosoku scaling --suggest` costs, against measuring the law's whole grid,
/// against adding the cheapest configurations first and, given `advisor` (a Python with Extra-P,
/// the directory for its requests, and how many of the laws it is asked about: it takes seconds
/// a request), against following Extra-P's measurement point advisor: the goal is the full
/// grid's own error at the held-out configuration, or 10 %, whichever is larger; every
/// strategy's choices are judged by the same robust model.
fn suggest_benchmark(
    laws: &[Experiment],
    seed: u64,
    advisor: Option<(&Path, &Path, usize)>,
) -> Result<String, String> {
    let options = PmnfOptions::default();
    let mut rng = synthetic::SplitMix::new(seed ^ 0x5EED);
    // The advisor's runs draw their noise from a stream of their own: the other strategies' draws
    // are the same with it or without.
    let mut advisor_rng = synthetic::SplitMix::new(seed ^ 0xAD71);
    let advisor_laws = advisor.map_or(0, |a| a.2);
    let mut advisor = advisor
        .map(|(python, dir, _)| Advisor::start(python, dir))
        .transpose()?;
    let mut rows: Vec<SuggestRow> = Vec::new();
    for (i, e) in laws.iter().enumerate() {
        let target = &e.held_out.coordinate;
        let truth = e.truth(target);
        let Ok(full) = pmnf::robust::fit_robust(&e.points, &options) else {
            continue;
        };
        let goal = (100.0 * (full.model.evaluate(target) - truth).abs() / truth).max(10.0);
        let grid_cost: f64 = e.points.iter().map(|p| cost_of(e, &p.coordinate)).sum();
        let suggested = follow(e, Strategy::Suggested, goal, &mut rng, None);
        let cheapest = follow(e, Strategy::CheapestFirst, goal, &mut rng, None);
        let advised = advisor
            .as_mut()
            .filter(|_| i < advisor_laws)
            .map(|a| follow(e, Strategy::Advisor, goal, &mut advisor_rng, Some(a)));
        rows.push((grid_cost, [suggested, cheapest], advised));
    }
    let mut out = String::new();
    for (pick, name) in ["following the suggestions", "cheapest configuration first"]
        .iter()
        .enumerate()
    {
        let reached: Vec<Reached> = rows.iter().map(|r| r.1[pick]).collect();
        let _ = writeln!(out, "- {name}: {}", reached_summary(&rows, &reached));
    }
    if let Some(a) = &advisor {
        let asked: Vec<SuggestRow> = rows.iter().filter(|r| r.2.is_some()).cloned().collect();
        let modes: Vec<String> = a.modes.iter().map(|(m, k)| format!("{m} {k}")).collect();
        let _ = writeln!(
            out,
            "On the first {} laws, side by side with Extra-P 4.2.5's measurement point advisor (its requests by mode: {}):",
            asked.len(),
            modes.join(", ")
        );
        let columns: [(&str, Vec<Reached>); 3] = [
            (
                "following the suggestions",
                asked.iter().map(|r| r.1[0]).collect(),
            ),
            (
                "cheapest configuration first",
                asked.iter().map(|r| r.1[1]).collect(),
            ),
            (
                "following Extra-P's advisor",
                asked.iter().map(|r| r.2.flatten()).collect(),
            ),
        ];
        for (name, reached) in &columns {
            let _ = writeln!(out, "  - {name}: {}", reached_summary(&asked, reached));
        }
    }
    Ok(out)
}

/// (cost, configurations added) when a strategy reached the goal.
type Reached = Option<(f64, usize)>;
/// Per law: the full grid's cost, what the suggestions and cheapest-first reached, and what
/// Extra-P's advisor reached where it was asked.
type SuggestRow = (f64, [Reached; 2], Option<Reached>);

/// How many of `rows`' laws a strategy's `reached` got to the goal, how many for less than the
/// full grid, and at what cost.
fn reached_summary(rows: &[SuggestRow], reached: &[Reached]) -> String {
    let got: Vec<(f64, usize)> = rows
        .iter()
        .zip(reached)
        .filter_map(|(row, r)| r.map(|(cost, added)| (cost / row.0, added)))
        .collect();
    let ratios: Vec<f64> = got.iter().map(|g| g.0).collect();
    let needed: Vec<f64> = got.iter().filter(|g| g.1 > 0).map(|g| g.0).collect();
    format!(
        "{} of {} laws reached the goal, {} for less than the full grid; median cost {:.1} % of the full grid's ({} laws needed runs beyond the first 3 values: median {:.1} %)",
        got.len(),
        rows.len(),
        ratios.iter().filter(|r| **r < 1.0).count(),
        100.0 * median(ratios.clone()),
        needed.len(),
        100.0 * median(needed),
    )
}

fn run(args: &Args) -> Result<(), String> {
    let mut laws = synthetic::benchmark(args.seed, args.laws);
    let off_grid = match args.design {
        Design::Grid => None,
        Design::Scattered => Some(synthetic::scattered as fn(&Experiment, u64) -> Experiment),
        Design::Latin => Some(synthetic::latin_hypercube as fn(&Experiment, u64) -> Experiment),
    };
    if let Some(measure) = off_grid {
        laws = laws
            .iter()
            .enumerate()
            .filter(|(_, e)| e.family.parameters() > 1)
            .map(|(i, e)| measure(e, args.seed ^ (i as u64 + 1)))
            .collect();
    }
    if let Some(kept) = args.repetitions {
        // The held-out point keeps every repetition: its mean is what a prediction is judged by.
        for p in laws.iter_mut().flat_map(|e| e.points.iter_mut()) {
            p.values.truncate(kept);
        }
    }
    match args.command.as_str() {
        "write" => {
            std::fs::create_dir_all(&args.dir)
                .map_err(|e| format!("{}: {e}", args.dir.display()))?;
            for (i, e) in laws.iter().enumerate() {
                let path = args.dir.join(file_name(i));
                std::fs::write(&path, extrap_text(&e.points))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
            println!(
                "{} experiments written to {}",
                laws.len(),
                args.dir.display()
            );
            Ok(())
        }
        "score" => {
            let options = PmnfOptions::default();
            let negative = PmnfOptions {
                allow_negative_exponents: true,
                ..options
            };
            let mut searches: Vec<(String, Vec<Option<Outcome>>)> = Vec::new();
            for (name, opts) in [
                ("yosoku (Extra-P's search)", options),
                ("yosoku, negative exponents", negative),
            ] {
                let outcomes = laws
                    .iter()
                    .map(|e| {
                        let m = pmnf::fit(&e.points, &opts).ok()?;
                        Some(outcome(e, &m, &synthetic::shape(&m.terms)))
                    })
                    .collect();
                searches.push((name.to_owned(), outcomes));
            }
            for path in &args.extrap {
                let lines = extrap_lines(path)?;
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let outcomes = laws
                    .iter()
                    .enumerate()
                    .map(|(i, e)| extrap_outcome(e, lines.get(&file_name(i))?))
                    .collect();
                searches.push((name, outcomes));
            }
            let robust = laws
                .iter()
                .map(|e| {
                    let m = pmnf::robust::fit_robust(&e.points, &options).ok()?.model;
                    Some(outcome(e, &m, &synthetic::shape(&m.terms)))
                })
                .collect();
            searches.push(("yosoku robust".to_owned(), robust));
            print!("{}", report(&laws, &searches));
            // Extra-P's own runs against yosoku's search with the same options.
            for (name, outcomes) in &searches {
                let twin = match name.as_str() {
                    n if n.ends_with("negative-exponents") => 1,
                    n if n.starts_with("extrap") => 0,
                    _ => continue,
                };
                let (same, of) = agreement(outcomes, &searches[twin].1);
                println!(
                    "{name} and {}: the same terms in {same} of {of} laws",
                    searches[twin].0
                );
            }
            Ok(())
        }
        "suggest" if args.design != Design::Grid => {
            Err("suggest follows a grid: --design scattered or latin has none".to_owned())
        }
        "suggest" => {
            let advisor = args
                .advisor
                .as_deref()
                .map(|python| (python, args.dir.as_path(), args.advisor_laws));
            print!("{}", suggest_benchmark(&laws, args.seed, advisor)?);
            Ok(())
        }
        other => Err(format!("unknown command {other}: write, score or suggest")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = parse(&args).and_then(|a| run(&a)) {
        eprintln!("scaling_noise: {e}");
        std::process::exit(2);
    }
}
