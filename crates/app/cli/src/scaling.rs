//! `yosoku scaling FILE...`: the arguments, and the models printed (the runner,
//! `yosoku_runner::scaling`, reads the files and fits them): one model per call path and metric,
//! or (`--json`) one JSON line per model in the form `tools/extrap/models.py` writes Extra-P's,
//! so the two tools' models of one experiment can be compared line by line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use yosoku_runner::scaling::{
    Aggregate, Calibration, CubeReading, CubeScaling, CubeValues, FilePrediction, Grid, PmnfError,
    PmnfModel, PmnfOptions, Prediction, RobustFit, SeriesModel, Term, moved_with_first_said,
    ranked_off_line_said, term_shape, without_line_said,
};

/// What `yosoku scaling` is asked.
#[derive(Debug, clap::Args)]
pub struct Request {
    /// Extra-P experiment files, in any of the formats Extra-P reads from a file, told by what
    /// they hold, whatever their names: its text format, JSON (current, as `yosoku export
    /// --format extrap` writes, or legacy with ids), JSON Lines, Talpas, or an experiment
    /// Extra-P saved (`.extra-p`: each point's mean, or median with --median), an Extra-P 3
    /// experiment (binary; likewise); or a directory of Score-P's Cube profiles, as Extra-P's
    /// --cube reads one: a folder per run named by its parameters (`mm.p64n1000.r1`: p = 64,
    /// n = 1000, repetition 1) holding its `*.cubex`.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// How a Cube set's run combines its processes' and threads' values of a call path: their
    /// mean (weak scaling: the work per process, Extra-P's default), the mean of those that
    /// measured it (weak_threaded), or their sum (strong scaling: the whole run's cost).
    #[arg(long, default_value = "weak", value_parser = |s: &str| s.parse::<CubeScaling>())]
    scaling: CubeScaling,
    /// Model a Cube set's inclusive values (each call path with all its callees: a root's time
    /// is its run's) instead of exclusive ones (Extra-P's default); a call path some runs lack
    /// is then left out, its values already in its callers'.
    #[arg(long)]
    inclusive: bool,
    /// Print only the models (or suggestions) of this metric (`time`, `visits`, a counter);
    /// repeat it for several. They are fitted and their intervals calibrated as without it, so
    /// the figures printed are the same. A file that has none of them is an error naming its
    /// metrics.
    #[arg(long = "metric", value_name = "METRIC")]
    metrics: Vec<String>,
    /// Of a Cube set, print only the call paths whose time is at least this per cent of their
    /// run's at some point (Extra-P's small-kernel filter keeps 1); like --metric, a filter on
    /// what is printed.
    #[arg(long, value_name = "PCT", value_parser = parse_share)]
    min_share: Option<f64>,
    /// One JSON object per model (file, callpath, metric, constant, terms with their factors
    /// [parameter, numerator, denominator, log], smape, rss, ar2); with --suggest, one per call
    /// path with the runs suggested.
    #[arg(long)]
    json: bool,
    /// Reduce a point's repetitions to their median (default: mean).
    #[arg(long)]
    median: bool,
    /// Also try negative exponents (Extra-P's allow_negative_exponents).
    #[arg(long)]
    negative_exponents: bool,
    /// Also model each call path with the noise-resilient search (weighted by the repetitions'
    /// noise, one criterion for every shape, negative exponents and products plus terms; its
    /// 95 % interval carries the choice's uncertainty), printed under the Extra-P-compatible
    /// model, or as `robust` in each JSON line.
    #[arg(long)]
    robust: bool,
    /// The next runs to measure, instead of the models: per call path, the configurations
    /// (each parameter's measured values and its next value on the grid they keep: consecutive
    /// cubes or squares, a constant ratio or step, else a doubling, or on the grid --grid gives;
    /// not measured yet) that most
    /// narrow the robust model's prediction at --target per unit of cost, best first (one JSON
    /// line per call path with --json).
    #[arg(long, requires = "target")]
    suggest: bool,
    /// The configuration to predict, every parameter by name: `p=1024,n=4096`. Each model's
    /// prediction there is printed with its 95 % interval, calibrated on the file's own
    /// held-out points (each call path's largest, predicted from the rest; where the robust
    /// search's cannot be checked, the Extra-P-compatible search's lent, stretched to hold the
    /// robust prediction; the sentence under the file says how); with --suggest, the runs that
    /// would narrow it.
    #[arg(long, value_parser = parse_target)]
    target: Option<Target>,
    /// The parameter that counts processes (ranks): a run's cost is then its time times that
    /// value (core-seconds), not its time alone.
    #[arg(long, requires = "suggest")]
    cost_parameter: Option<String>,
    /// The grid the next runs lie on, per parameter by name (the others' inferred from their
    /// measured values): `p=cubes,n=x2` (also `squares`, `+10` a step, `512/1024/2048` the
    /// values one can measure).
    #[arg(long, value_parser = parse_grids, requires = "suggest")]
    grid: Option<Grids>,
}

/// `--min-share`: a per cent above 0 and at most 100.
fn parse_share(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(pct) if pct > 0.0 && pct <= 100.0 => Ok(pct),
        _ => Err(format!(
            "{text:?}: expected a per cent of the run's time above 0 and at most 100 (1: Extra-P's \
             small-kernel filter)"
        )),
    }
}

/// What is printed of one file: the metrics `--metric` asks for, the call paths `--min-share`
/// keeps (all where it is not given).
struct Shown<'r> {
    metrics: &'r [String],
    callpaths: Option<Vec<String>>,
}

impl Shown<'_> {
    fn metric(&self, metric: &str) -> bool {
        self.metrics.is_empty() || self.metrics.iter().any(|m| m == metric)
    }

    fn shows(&self, callpath: &str, metric: &str) -> bool {
        self.metric(metric)
            && self
                .callpaths
                .as_ref()
                .is_none_or(|kept| kept.iter().any(|c| c == callpath))
    }

    /// Whether it shows any of `series` (call path, metric) measured in `unit`: what decides
    /// whether a unit's calibration is printed.
    fn shows_unit<'s>(
        &self,
        mut series: impl Iterator<Item = (&'s str, &'s str)>,
        unit: yosoku_runner::scaling::MetricUnit,
    ) -> bool {
        series.any(|(callpath, metric)| {
            self.shows(callpath, metric) && yosoku_runner::scaling::MetricUnit::of(metric) == unit
        })
    }
}

impl Request {
    /// What is printed of `file`, whose series have these `metrics` and (a Cube set) these
    /// `shares` of their run's time; says on stderr how many call paths `--min-share` leaves
    /// out. An error where the file has none of the metrics asked for (naming its own), or
    /// `--min-share` is asked of a file that is no Cube set or measures no time.
    fn shown<'a>(
        &self,
        file: &Path,
        metrics: impl Iterator<Item = &'a str>,
        shares: Option<&[(String, f64)]>,
    ) -> Result<Shown<'_>, anyhow::Error> {
        let mut shown = Shown {
            metrics: &self.metrics,
            callpaths: None,
        };
        let mut has: Vec<&str> = metrics.collect();
        if !has.iter().any(|m| shown.metric(m)) {
            has.sort_unstable();
            has.dedup();
            bail!(
                "{}: no metric {} (--metric); the file has: {}",
                file.display(),
                self.metrics.join(", "),
                has.join(", ")
            );
        }
        let Some(pct) = self.min_share else {
            return Ok(shown);
        };
        let shares = match shares {
            Some(s) if !s.is_empty() => s,
            Some(_) => bail!(
                "{}: --min-share: the set measures no `time`",
                file.display()
            ),
            None => bail!(
                "{}: --min-share reads a set of Cube profiles (a directory), whose call paths' \
                 times add up to their run's; an Extra-P file's need not",
                file.display()
            ),
        };
        let kept: Vec<String> = shares
            .iter()
            .filter(|(_, share)| *share * 100.0 >= pct)
            .map(|(c, _)| c.clone())
            .collect();
        eprintln!(
            "note: {}: {} of {} call paths under {pct} % of their run's time at every point not \
             printed (--min-share)",
            file.display(),
            shares.len() - kept.len(),
            shares.len()
        );
        shown.callpaths = Some(kept);
        Ok(shown)
    }

    /// How a Cube set among the files is read (`--inclusive`, `--scaling`).
    fn cube_reading(&self) -> CubeReading {
        CubeReading {
            values: if self.inclusive {
                CubeValues::Inclusive
            } else {
                CubeValues::Exclusive
            },
            scaling: self.scaling,
        }
    }
}

/// Each named parameter's grid (`--grid`).
#[derive(Debug, Clone)]
pub struct Grids(Vec<(String, Grid)>);

/// `p=cubes,n=x2`: each parameter's name and its grid.
fn parse_grids(text: &str) -> Result<Grids, String> {
    text.split(',')
        .map(|part| {
            let (name, grid) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected name=grid, as in p=cubes,n=x2"))?;
            Ok((name.trim().to_owned(), Grid::parse(grid)?))
        })
        .collect::<Result<Vec<_>, String>>()
        .and_then(named_once)
        .map(Grids)
}

/// `pairs` if no name is given twice (`p=8,p=16` is a slip, not a choice of the last).
fn named_once<T>(pairs: Vec<(String, T)>) -> Result<Vec<(String, T)>, String> {
    match pairs
        .iter()
        .enumerate()
        .find(|(i, (name, _))| pairs[..*i].iter().any(|(n, _)| n == name))
    {
        Some((_, (name, _))) => Err(format!("`{name}` is given twice")),
        None => Ok(pairs),
    }
}

/// A configuration to predict: each parameter's name and value.
#[derive(Debug, Clone)]
pub struct Target(Vec<(String, f64)>);

/// `p=1024,n=4096`: each parameter's name and its value, a positive number.
fn parse_target(text: &str) -> Result<Target, String> {
    text.split(',')
        .map(|part| {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected name=value, as in p=1024,n=4096"))?;
            let v: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| format!("`{part}`: `{value}` is not a finite number"))?;
            if v <= 0.0 {
                return Err(format!(
                    "`{part}`: a parameter's value is a positive number (a model's terms are its powers and logarithms)"
                ));
            }
            Ok((name.trim().to_owned(), v))
        })
        .collect::<Result<Vec<_>, String>>()
        .and_then(named_once)
        .map(Target)
}

/// What `yosoku scaling` printed, and the files it could not model (each error names its file):
/// the models of the good files are printed all the same, and the command then fails.
pub struct Outcome {
    pub text: String,
    pub failed: Vec<anyhow::Error>,
}

/// Runs `request`, prints (with `emit`) the models of the files that could be read, then fails
/// naming each file that could not, if any.
pub fn print(request: &Request, emit: impl Fn(&str) -> Result<()>) -> Result<()> {
    let outcome = run(request);
    emit(&outcome.text)?;
    match outcome.failed.as_slice() {
        [] => Ok(()),
        [one] => bail!("{one:#}"),
        many => {
            let each: Vec<String> = many.iter().map(|e| format!("  {e:#}")).collect();
            bail!(
                "{} of {} files could not be modelled:\n{}",
                many.len(),
                request.files.len(),
                each.join("\n")
            )
        }
    }
}

/// A file's heading in `--suggest`'s text: its name, its parameters, and how the robust
/// intervals of each unit printed (`printed`) were calibrated.
fn suggestions_heading(
    out: &mut String,
    file: &yosoku_runner::scaling::FileSuggestions,
    printed: impl Fn(yosoku_runner::scaling::MetricUnit) -> bool,
) {
    let _ = writeln!(
        out,
        "{} (parameters: {})",
        file.file.display(),
        file.parameters.join(", "),
    );
    for (unit, calibration) in (file.calibrations.iter()).filter(|(unit, _)| printed(*unit)) {
        let _ = writeln!(
            out,
            "  robust intervals{}: {}",
            of_unit(file.calibrations.len(), *unit),
            calibration.describe()
        );
    }
}

/// The next runs to measure for every call path of every file, as text.
fn suggestions(request: &Request, options: &PmnfOptions, target: &[(String, f64)]) -> Outcome {
    let mut out = String::new();
    let mut failed = Vec::new();
    let at: Vec<String> = target.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let at = at.join(", ");
    let files = yosoku_runner::scaling::suggest_files(
        &request.files,
        options,
        request.cube_reading(),
        target,
        request.cost_parameter.as_deref(),
        request.grid.as_ref().map_or(&[][..], |g| g.0.as_slice()),
    );
    for file in files {
        let shown = |f: yosoku_runner::scaling::FileSuggestions| {
            for note in &f.notes {
                eprintln!("note: {}: {note}", f.file.display());
            }
            let metrics = f.series.iter().map(|s| &*s.metric);
            let shown = request.shown(&f.file, metrics, f.time_shares.as_deref())?;
            Ok((f, shown))
        };
        let (file, shown) = match file.and_then(shown) {
            Ok(f) => f,
            Err(e) => {
                failed.push(e);
                continue;
            }
        };
        // A run's time (its longest call path's), or, where the file measures no time, a run.
        let unit = match (file.costed_per_run, request.cost_parameter.is_some()) {
            (false, true) => "core-s",
            (false, false) => "s",
            (true, true) => "process-runs",
            (true, false) => "runs",
        };
        let series = || (file.series.iter()).filter(|s| shown.shows(&s.callpath, &s.metric));
        let names: Vec<&str> = file.parameters.iter().map(String::as_str).collect();
        if request.json {
            for s in series() {
                let line = suggestion_json(&file, s, unit);
                let _ = writeln!(out, "{line}");
            }
            continue;
        }
        let printed = |unit| {
            let all = file.series.iter();
            shown.shows_unit(all.map(|s| (s.callpath.as_str(), s.metric.as_str())), unit)
        };
        suggestions_heading(&mut out, &file, printed);
        for s in series() {
            let found = match &s.suggestions {
                Ok(found) => found,
                Err(e) => {
                    let e = e.said(&file.parameters);
                    let _ = writeln!(
                        out,
                        "  {}: not modelled: {e}",
                        series_name(&s.callpath, &s.metric)
                    );
                    out.push_str(&to_model_text(&file, s, unit));
                    continue;
                }
            };
            let half = |variance: f64| 1.96 * variance.max(0.0).sqrt();
            let Some(prediction) = &s.prediction else {
                continue;
            };
            let predicted = Predicted {
                prediction,
                calibration: file.calibration_of(&s.metric),
            };
            let _ = writeln!(
                out,
                "  {}: at {at} the robust model predicts {}; its own fit is uncertain by +- {} there (what the runs below narrow; the interval is calibrated on the file's held-out points)\n    measure next, the most narrowing per {} first:",
                series_name(&s.callpath, &s.metric),
                predicted.text(&s.metric, &file.parameters),
                crate::format::metric_value(half(found.variance_now), &s.metric),
                if file.costed_per_run {
                    format!("{} (the file measures no time)", unit.trim_end_matches('s'))
                } else {
                    format!("{unit} of runs (a run as long as its longest call path)")
                },
            );
            if let Some(moved) =
                moved_with_first_said(&found.fit.moved_with_first, &file.parameters)
            {
                let _ = writeln!(out, "      {moved}: only runs on that curve are proposed");
            }
            if found.ranked.is_empty() {
                let _ = writeln!(out, "      {}", nothing_to_suggest(found, &s.metric));
            }
            let line = |c: &yosoku_runner::scaling::Candidate| {
                format!(
                    "{}{}: the model's +- {} at the target; the runs take {}",
                    at_text(&names, &c.coordinate),
                    if c.repeat {
                        " again (measured already)"
                    } else {
                        ""
                    },
                    crate::format::metric_value(half(c.variance_after), &s.metric),
                    cost_text(&file, c.cost, unit),
                )
            };
            for (i, c) in found.ranked.iter().take(5).enumerate() {
                let _ = writeln!(out, "      {}. {}", i + 1, line(c));
            }
            if !found.repeats.is_empty() {
                let _ = writeln!(
                    out,
                    "    the points show no trend beyond their noise: more repetitions narrow that noise (not the choice of terms, which runs beyond the points settle):"
                );
                for c in found.repeats.iter().take(2) {
                    let _ = writeln!(out, "      repeat {}", line(c));
                }
            }
        }
    }
    Outcome { text: out, failed }
}

/// A metric's unit in JSON, from its name (`s`, `B`, `FLOP`, `count`), null where it says none.
fn unit_json(metric: &str) -> serde_json::Value {
    serde_json::json!(yosoku_runner::scaling::MetricUnit::of(metric).symbol())
}

/// Why a call path has no run to suggest.
fn nothing_to_suggest(found: &yosoku_runner::scaling::Suggestions, metric: &str) -> String {
    if let Some(v) = found.every_value {
        return format!(
            "nothing to suggest: every value measured is {}, at every run, so no run would narrow its prediction",
            crate::format::metric_value(v, metric)
        );
    }
    format!(
        "nothing to suggest: the robust model predicts no positive value at any of the {} runs one could measure next, so none can be costed (it predicts {} at the target); measure more points below the target",
        found.offered,
        crate::format::metric_value(found.predicted, metric)
    )
}

/// One call path's suggestions as a JSON line: the prediction at the target with its 95 %
/// half-width, and each run to measure (its configuration by name, the half-width after it, its
/// cost in `unit`), or why there is none.
fn suggestion_json(
    file: &yosoku_runner::scaling::FileSuggestions,
    s: &yosoku_runner::scaling::SeriesSuggestions,
    unit: &str,
) -> serde_json::Value {
    let parameters = &file.parameters;
    let half = |variance: f64| 1.96 * variance.max(0.0).sqrt();
    let named = |c: &[f64]| -> serde_json::Map<String, serde_json::Value> {
        parameters
            .iter()
            .zip(c)
            .map(|(n, v)| (n.clone(), serde_json::json!(v)))
            .collect()
    };
    let mut line = serde_json::json!({
        "file": file.file.display().to_string(),
        "callpath": s.callpath,
        "metric": s.metric,
    });
    match &s.suggestions {
        Ok(found) => {
            line["target"] = serde_json::Value::Object(named(&found.target));
            // The metric's unit: `_secs` keys only where it is time (they were written for
            // visits and bytes too).
            let is_time = yosoku_runner::scaling::is_time_metric(&s.metric);
            line["unit"] = unit_json(&s.metric);
            line["predicted"] = serde_json::json!(found.predicted);
            if is_time {
                line["predicted_secs"] = serde_json::json!(found.predicted);
            }
            let names: Vec<&str> = parameters.iter().map(String::as_str).collect();
            if let Some(prediction) = &s.prediction {
                line["prediction"] = Predicted {
                    prediction,
                    calibration: file.calibration_of(&s.metric),
                }
                .json(&names, &found.target);
            }
            line["model_half_width_95"] = serde_json::json!(half(found.variance_now));
            if is_time {
                line["model_half_width_95_secs"] = serde_json::json!(half(found.variance_now));
            }
            let runs = |list: &[yosoku_runner::scaling::Candidate]| -> serde_json::Value {
                list.iter()
                    .map(|c| {
                        let mut run = serde_json::json!({
                            "configuration": named(&c.coordinate),
                            "repeat": c.repeat,
                            "model_half_width_95_after": half(c.variance_after),
                            "cost": c.cost,
                            "cost_unit": unit,
                        });
                        if is_time {
                            run["model_half_width_95_after_secs"] =
                                serde_json::json!(half(c.variance_after));
                        }
                        run
                    })
                    .collect()
            };
            line["next"] = runs(&found.ranked);
            // Measured configurations again, where the noise dominates the points; else empty.
            line["repeats"] = runs(&found.repeats);
            if found.ranked.is_empty() {
                line["why_none"] = serde_json::json!(nothing_to_suggest(found, &s.metric));
            }
        }
        Err(e) => {
            line["error"] = serde_json::json!(format!("not modelled: {}", e.said(parameters)));
            if !s.to_model.is_empty() {
                line["to_model"] = (s.to_model.iter())
                    .map(|m| {
                        serde_json::json!({
                            "parameter": parameters.get(m.parameter),
                            "measured": m.measured,
                            "next": m.next,
                            "grid": m.grid,
                            "runs": m.runs.iter().map(|(c, cost)| serde_json::json!({
                                "configuration": named(c),
                                "cost": cost,
                                "cost_unit": unit,
                            })).collect::<Vec<_>>(),
                        })
                    })
                    .collect::<Vec<_>>()
                    .into();
            }
        }
    }
    line
}

/// The runs that would let the robust search model a call path it could not (a parameter
/// measured at too few values), the three cheapest of each such parameter, as printed.
fn to_model_text(
    file: &yosoku_runner::scaling::FileSuggestions,
    s: &yosoku_runner::scaling::SeriesSuggestions,
    unit: &str,
) -> String {
    let mut out = String::new();
    for m in &s.to_model {
        let name = file.parameters.get(m.parameter).map_or("?", String::as_str);
        let measured: Vec<String> = m.measured.iter().map(f64::to_string).collect();
        let Some(next) = m.next else {
            let _ = writeln!(
                out,
                "    to model it, {name} needs a third value, and --grid gives none past {}: \
                 give one",
                measured.join(", ")
            );
            continue;
        };
        let _ = writeln!(
            out,
            "    to model it, measure {name}={next} ({}, past {}), at any of:",
            m.grid,
            measured.join(", ")
        );
        let names: Vec<&str> = file.parameters.iter().map(String::as_str).collect();
        for (i, (c, cost)) in m.runs.iter().take(3).enumerate() {
            let _ = writeln!(
                out,
                "      {}. {}: the run takes at least {}",
                i + 1,
                at_text(&names, c),
                cost_text(file, *cost, unit)
            );
        }
    }
    out
}

/// A run's cost as printed: a number of runs where the file measures no time, else in `unit`
/// (`s`, `core-s`).
fn cost_text(file: &yosoku_runner::scaling::FileSuggestions, cost: f64, unit: &str) -> String {
    if file.costed_per_run {
        format!("{} {unit}", crate::format::value(cost.round(), ""))
    } else {
        crate::format::value(cost, unit)
    }
}

/// The models of every file, as text or JSON lines.
pub fn run(request: &Request) -> Outcome {
    let options = PmnfOptions {
        aggregate: if request.median {
            Aggregate::Median
        } else {
            Aggregate::Mean
        },
        allow_negative_exponents: request.negative_exponents,
        ..PmnfOptions::default()
    };
    if let (true, Some(Target(target))) = (request.suggest, &request.target) {
        return suggestions(request, &options, target);
    }
    let mut out = String::new();
    let mut failed = Vec::new();
    let target = request.target.as_ref().map(|t| t.0.as_slice());
    let (files, cube) = (&request.files, request.cube_reading());
    for file_models in
        yosoku_runner::scaling::model_files(files, &options, cube, request.robust, target)
    {
        let file_models = match file_models {
            Ok(m) => m,
            Err(e) => {
                failed.push(e);
                continue;
            }
        };
        let (file, names) = (&file_models.file, &file_models.parameters);
        let metrics = file_models.models.iter().map(|s| &*s.metric);
        let shown = match request.shown(file, metrics, file_models.time_shares.as_deref()) {
            Ok(shown) => shown,
            Err(e) => {
                failed.push(e);
                continue;
            }
        };
        // What the reader left out, on stderr (stdout stays the models, JSON with --json).
        for note in &file_models.notes {
            eprintln!("note: {}: {note}", file.display());
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        if !request.json {
            let _ = writeln!(out, "{} (parameters: {})", file.display(), names.join(", "));
        }
        let prediction = file_models.prediction.as_ref();
        let at = prediction.map(|p| at_text(&names, &p.coordinate));
        for s in (file_models.models.iter()).filter(|s| shown.shows(&s.callpath, &s.metric)) {
            let model = &s.model;
            let (extrap_predicted, robust_predicted) = predicted_at(prediction, s);
            match (&model, request.json) {
                (Ok(m), true) => {
                    let position = |i| file_models.file_position(i);
                    let line = model_json(file, s, m, (&names, &position), prediction);
                    let _ = writeln!(out, "{line}");
                }
                (Err(e), true) => {
                    let line = serde_json::json!({
                        "file": file.display().to_string(),
                        "callpath": s.callpath,
                        "metric": s.metric,
                        "error": e.said(&names),
                    });
                    let _ = writeln!(out, "{line}");
                }
                (Ok(m), false) => {
                    // A constant explains none of the variation: Extra-P reports 1 for it (and
                    // `--json` does, as Extra-P's), which would read as a perfect fit.
                    let adjusted_r2 = if m.terms.is_empty() {
                        "- (a constant)".to_owned()
                    } else if !m.adjusted_r2.is_finite() {
                        "- (as many coefficients as points)".to_owned()
                    } else {
                        format!("{:.6}", m.adjusted_r2)
                    };
                    let _ = writeln!(
                        out,
                        "  {}: {}\n    SMAPE {:.3} %, adjusted R^2 {adjusted_r2}, RSS {:.6e}{}",
                        series_name(&s.callpath, &s.metric),
                        m.to_extrap(&names),
                        m.smape,
                        m.rss,
                        if m.cross_validated {
                            " (leave-one-out)"
                        } else {
                            ""
                        }
                    );
                    if let (Some(at), Some(predicted)) = (&at, &extrap_predicted) {
                        let _ = writeln!(out, "    at {at}: {}", predicted.text(&s.metric, &names));
                    }
                    if s.robust.is_none()
                        && let Some(said) = without_line_said(&s.without_line, &names)
                    {
                        let _ = writeln!(out, "    {said}");
                    }
                    for few in &s.few_values {
                        let _ = writeln!(out, "    {}", few.said(&names));
                    }
                    if let Some(robust) = &s.robust {
                        let _ = writeln!(out, "{}", robust_text(robust, m, &names));
                        if let (Some(at), Some(predicted)) = (&at, &robust_predicted) {
                            let _ = writeln!(
                                out,
                                "      at {at}: {}",
                                predicted.text(&s.metric, &names)
                            );
                        }
                    }
                }
                (Err(e), false) => {
                    let e = e.said(&names);
                    let _ = writeln!(
                        out,
                        "  {}: not modelled: {e}",
                        series_name(&s.callpath, &s.metric)
                    );
                }
            }
        }
        if let (Some(p), false) = (prediction, request.json) {
            out.push_str(&calibrations_text(p, &file_models.models, &shown));
        }
    }
    Outcome { text: out, failed }
}

/// How the intervals of each unit printed were calibrated, a line per search (`--metric time`
/// prints no visits', so not their calibration either).
fn calibrations_text(p: &FilePrediction, models: &[SeriesModel], shown: &Shown) -> String {
    let printed = |unit| {
        let all = models.iter();
        shown.shows_unit(all.map(|s| (s.callpath.as_str(), s.metric.as_str())), unit)
    };
    let mut out = String::new();
    for m in p.units.iter().filter(|m| printed(m.unit)) {
        let of = of_unit(p.units.len(), m.unit);
        let _ = writeln!(out, "  intervals{of}: {}", m.calibration.describe());
        if let Some(c) = &m.robust {
            let _ = writeln!(out, "  robust intervals{of}: {}", c.describe());
        }
    }
    out
}

/// A call path's models as one JSON line (`--json`): the Extra-P-compatible search's, as
/// Extra-P's fields name them, its prediction at the target, and the robust search's.
fn model_json(
    file: &Path,
    s: &SeriesModel,
    m: &PmnfModel,
    (names, position): (&[&str], &dyn Fn(usize) -> usize),
    prediction: Option<&FilePrediction>,
) -> serde_json::Value {
    let (extrap_predicted, robust_predicted) = predicted_at(prediction, s);
    let mut line = serde_json::json!({
        "file": file.display().to_string(),
        "callpath": s.callpath,
        "metric": s.metric,
        "constant": m.constant,
        "terms": terms_json(&m.terms, position),
        "smape": m.smape,
        "rss": m.rss,
        "ar2": m.adjusted_r2,
        "unit": unit_json(&s.metric),
    });
    if let (Some(p), Some(predicted)) = (prediction, &extrap_predicted) {
        line["prediction"] = predicted.json(names, &p.coordinate);
    }
    // The parameters whose terms this search could not rank (no line of three runs), only
    // where there are any.
    if !s.without_line.is_empty() {
        line["without_line"] = (s.without_line.iter())
            .filter_map(|&p| names.get(p).copied())
            .collect::<Vec<&str>>()
            .into();
    }
    // The parameters measured at one or two values on this call path, only where there are.
    if !s.few_values.is_empty() {
        line["few_values"] = (s.few_values.iter())
            .map(|f| serde_json::json!({"parameter": names.get(f.parameter), "values": f.values}))
            .collect::<Vec<_>>()
            .into();
    }
    if let Some(robust) = &s.robust {
        line["robust"] = robust_json(robust, names, position);
        if let (Some(p), Some(predicted)) = (prediction, &robust_predicted) {
            line["robust"]["prediction"] = predicted.json(names, &p.coordinate);
        }
    }
    line
}

/// The robust search's model of a call path as JSON, or why it has none.
fn robust_json(
    robust: &Result<RobustFit, PmnfError>,
    names: &[&str],
    position: &dyn Fn(usize) -> usize,
) -> serde_json::Value {
    match robust {
        Ok(r) => serde_json::json!({
            "constant": r.model.constant,
            "terms": terms_json(&r.model.terms, position),
            "smape": r.model.smape,
            "noise_pct": r.noise_pct,
            // The parameters that grew with the first at every run, left out of the model
            // (empty where each varied on its own).
            "moved_with_first": r
                .moved_with_first
                .iter()
                .filter_map(|&p| names.get(p))
                .collect::<Vec<_>>(),
            // The parameters no line of runs ranked the terms of: ranked over all the runs
            // (empty where every parameter has a line).
            "ranked_off_line": r
                .ranked_off_line
                .iter()
                .filter_map(|&p| names.get(p))
                .collect::<Vec<_>>(),
        }),
        Err(e) => serde_json::json!({ "error": e.said(names) }),
    }
}

/// A call path's predictions at the file's target (`--target`), by the Extra-P-compatible
/// search and by the robust one, each with the calibration of its interval.
fn predicted_at<'a>(
    prediction: Option<&'a FilePrediction>,
    s: &'a SeriesModel,
) -> (Option<Predicted<'a>>, Option<Predicted<'a>>) {
    let Some(p) = prediction else {
        return (None, None);
    };
    let c = p.of(&s.metric);
    let extrap = s.prediction.as_ref().map(|prediction| Predicted {
        prediction,
        calibration: &c.calibration,
    });
    let robust = match (&s.robust_prediction, &c.robust) {
        (Some(prediction), Some(calibration)) => Some(Predicted {
            prediction,
            calibration,
        }),
        _ => None,
    };
    (extrap, robust)
}

/// ` of times` after `intervals` where a file's metrics are in several units, each calibrated
/// apart (`units` of them); nothing where they are in one.
fn of_unit(units: usize, unit: yosoku_runner::scaling::MetricUnit) -> &'static str {
    use yosoku_runner::scaling::MetricUnit;
    if units < 2 {
        return "";
    }
    match unit {
        MetricUnit::Seconds => " of times",
        MetricUnit::Bytes => " of bytes",
        MetricUnit::Flop => " of FLOPs",
        MetricUnit::Count => " of counts",
        MetricUnit::Events => " of hardware events",
        MetricUnit::Unnamed => " of metrics without a unit",
    }
}

/// `p=343, n=64`: a configuration by its parameters' names.
/// `call path / metric` as a line names a series; a name the file left empty (a text file's
/// DATA before any REGION or METRIC line, which Extra-P reads as the empty name) is
/// `(unnamed)`, not a blank.
fn series_name(callpath: &str, metric: &str) -> String {
    let shown = |name: &str| {
        if name.is_empty() {
            "(unnamed)".to_owned()
        } else {
            name.to_owned()
        }
    };
    format!("{} / {}", shown(callpath), shown(metric))
}

fn at_text(names: &[&str], coordinate: &[f64]) -> String {
    let parts: Vec<String> = names
        .iter()
        .zip(coordinate)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    parts.join(", ")
}

/// A model's prediction at a configuration (the runner's) and the calibration of its interval,
/// as printed.
struct Predicted<'a> {
    prediction: &'a Prediction,
    calibration: &'a Calibration,
}

impl Predicted<'_> {
    /// `1.23 s (95 % interval 1.01 s to 1.45 s)`, in the metric's unit. A model that falls
    /// below zero where no measured value does (its interval then starts at 0) is said to, and
    /// where its whole interval does too, no interval is printed: `0 s to 0 s` would be a
    /// certainty the model does not have.
    fn text<S: AsRef<str>>(&self, metric: &str, names: &[S]) -> String {
        let value = |v: f64| crate::format::metric_value(v, metric);
        if let Some(p) = self.prediction.unchecked {
            let name = names.get(p).map_or("a parameter", AsRef::as_ref);
            return format!(
                "{} (no interval: the call path was measured at other values of {name}, too few \
                 to check its law in {name}, as said below)",
                value(self.prediction.value)
            );
        }
        let below_zero = ": the model falls below zero here, where no measured value does";
        match self.prediction.interval {
            Some((lo, hi)) if self.prediction.value < 0.0 && lo >= 0.0 && hi <= 0.0 => format!(
                "{}{below_zero}, and so does its whole {:.0} % interval",
                value(self.prediction.value),
                100.0 * self.calibration.level,
            ),
            Some((lo, hi)) => format!(
                "{}{} ({:.0} % interval {} to {})",
                value(self.prediction.value),
                if self.prediction.value < 0.0 && lo >= 0.0 {
                    below_zero
                } else {
                    ""
                },
                100.0 * self.calibration.level,
                value(lo),
                value(hi)
            ),
            None => format!(
                "{} (no interval: the fit has no residual degrees of freedom)",
                value(self.prediction.value)
            ),
        }
    }

    /// The prediction as JSON: the configuration by name, the value, the interval's bounds and
    /// level, and the calibration's scale and checks.
    fn json(&self, names: &[&str], coordinate: &[f64]) -> serde_json::Value {
        let target: serde_json::Map<String, serde_json::Value> = names
            .iter()
            .zip(coordinate)
            .map(|(n, v)| ((*n).to_owned(), serde_json::json!(v)))
            .collect();
        serde_json::json!({
            "target": target,
            "value": self.prediction.value,
            "low": self.prediction.interval.map(|i| i.0),
            "high": self.prediction.interval.map(|i| i.1),
            // The parameter whose law is unchecked at the target (no interval), if one is.
            "unchecked": self.prediction.unchecked.and_then(|p| names.get(p)),
            "level": self.calibration.level,
            "calibration": self.calibration,
        })
    }
}

/// A model's terms as `tools/extrap/models.py` writes Extra-P's: coefficient and factors
/// `[parameter, numerator, denominator, log]`, the parameter's place among the file's own
/// (`position` of the model's: they differ where a fixed parameter was left out).
fn terms_json(terms: &[Term], position: &dyn Fn(usize) -> usize) -> Vec<serde_json::Value> {
    terms
        .iter()
        .map(|t| {
            let mut factors: Vec<[i64; 4]> = t
                .factors
                .iter()
                .map(|(p, e)| {
                    [
                        position(*p) as i64,
                        i64::from(e.numerator),
                        i64::from(e.denominator),
                        i64::from(e.log),
                    ]
                })
                .collect();
            factors.sort_unstable();
            serde_json::json!({ "coefficient": t.coefficient, "factors": factors })
        })
        .collect()
}

/// The robust search's model under the Extra-P-compatible one (`extrap`): its formula, the
/// noise the repetitions showed, and whether it chose other terms.
fn robust_text(
    robust: &Result<RobustFit, PmnfError>,
    extrap: &PmnfModel,
    names: &[&str],
) -> String {
    let r = match robust {
        Ok(r) => r,
        Err(e) => return format!("    robust: not modelled: {}", e.said(names)),
    };
    let noise = match r.noise_pct {
        None => "no repetitions".to_owned(),
        Some(0.0) => "repetitions agree exactly".to_owned(),
        Some(n) => format!("repetitions vary by {n:.2} %"),
    };
    let verdict = if term_shape(&r.model.terms) == term_shape(&extrap.terms) {
        "the same terms"
    } else {
        "other terms than Extra-P's search"
    };
    let together = match moved_with_first_said(&r.moved_with_first, names) {
        Some(moved) => format!(
            "\n      {moved}: modelled over {} alone (a value off that curve is predicted as if \
             on it)",
            names.first().copied().unwrap_or("the first parameter")
        ),
        None => String::new(),
    };
    let off_line = match ranked_off_line_said(&r.ranked_off_line, names) {
        Some(said) => format!("\n      {said}"),
        None => String::new(),
    };
    format!(
        "    robust: {}\n      {noise}; {verdict}; SMAPE {:.3} %{together}{off_line}",
        r.model.to_extrap(names),
        r.model.smape
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        request: Request,
    }

    fn request(args: &[&str]) -> Result<Request, clap::Error> {
        Command::try_parse_from(std::iter::once("scaling").chain(args.iter().copied()))
            .map(|c| c.request)
    }

    #[test]
    fn a_name_the_file_left_empty_is_said_unnamed() {
        assert_eq!(series_name("", ""), "(unnamed) / (unnamed)");
        assert_eq!(series_name("main", "time"), "main / time");
    }

    #[test]
    fn a_parameter_named_twice_in_target_or_grid_is_refused() {
        for (flag, value) in [("--target", "p=8,n=1,n=2"), ("--grid", "p=cubes,p=x2")] {
            let e = request(&[flag, value, "set"]).err().unwrap().to_string();
            assert!(e.contains("is given twice"), "{flag} {value}: {e}");
        }
        let e = request(&["--target", "p=1e400", "set"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("`1e400` is not a finite number"), "{e}");
    }

    #[test]
    fn a_share_outside_0_to_100_per_cent_is_refused_saying_what_is_expected() {
        for bad in ["0", "-1", "150", "one"] {
            let e = request(&[&format!("--min-share={bad}"), "set"])
                .err()
                .unwrap()
                .to_string();
            assert!(
                e.contains("expected a per cent of the run's time above 0"),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            request(&["--min-share", "2.5%", "set"]).unwrap().min_share,
            Some(2.5)
        );
    }

    #[test]
    fn a_share_asked_of_a_file_or_a_set_without_time_is_an_error_naming_it() {
        let r = request(&["--min-share", "1", "set"]).unwrap();
        let file = Path::new("exp.txt");
        let no_file = r.shown(file, ["time"].into_iter(), None).err().unwrap();
        assert!(
            no_file
                .to_string()
                .contains("exp.txt: --min-share reads a set of Cube profiles")
        );
        let no_time = r
            .shown(file, ["visits"].into_iter(), Some(&[]))
            .err()
            .unwrap();
        assert!(
            no_time
                .to_string()
                .contains("--min-share: the set measures no `time`")
        );
        let shares = [("main".to_owned(), 0.5), ("main->tiny".to_owned(), 0.001)];
        let shown = r.shown(file, ["time"].into_iter(), Some(&shares)).unwrap();
        assert!(shown.shows("main", "time") && !shown.shows("main->tiny", "time"));
    }
}
