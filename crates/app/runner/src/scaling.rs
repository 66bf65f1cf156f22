//! `yosoku scaling FILE...`: Extra-P's experiment files modelled by yosoku's PMNF search
//! (docs/methods.md, section 7), as `extrap` models them: one model per call path and metric.
//! Each file is read (its format by what it holds, `yosoku_regression::pmnf::extrap::Format`) and
//! modelled on its own: a bad file is reported, and the good ones beside it still modelled.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use yosoku_regression::pmnf::Point;
use yosoku_regression::pmnf::calibrate::{
    self, CalibratedIntervals, extrap_calibration, robust_calibration,
};
pub use yosoku_regression::pmnf::calibrate::{Basis, Calibration};
pub use yosoku_regression::pmnf::extrap::FixedParameter;
pub use yosoku_regression::pmnf::extrap::cube::{
    Reading as CubeReading, Scaling as CubeScaling, Values as CubeValues,
};
use yosoku_regression::pmnf::extrap::{self, Experiment, Format, Series, cube};
use yosoku_regression::pmnf::fit;
use yosoku_regression::pmnf::robust::fit_robust;
pub use yosoku_regression::pmnf::robust::{RobustFit, moved_with_first_said, ranked_off_line_said};
pub use yosoku_regression::pmnf::suggest::Suggestions;
pub use yosoku_regression::pmnf::suggest::{Candidate, Grid, ToModel};
pub use yosoku_regression::pmnf::suggest::{MetricUnit, is_time_metric};
use yosoku_regression::pmnf::suggest::{RunCost, candidates, runs_to_model, suggest_from};
pub use yosoku_regression::pmnf::without_line_said;
pub use yosoku_regression::pmnf::{Aggregate, PmnfError, PmnfModel, PmnfOptions, Term, term_shape};
pub use yosoku_regression::pmnf::{FewValues, few_values};

/// The models of one file.
#[derive(Debug)]
pub struct FileModels {
    pub file: PathBuf,
    /// The parameters the models are over: the file's, less the fixed ones.
    pub parameters: Vec<String>,
    /// The file's parameters with one value at every run, left out of the models.
    pub fixed: Vec<FixedParameter>,
    /// Per call path and metric, its model or why there is none.
    pub models: Vec<SeriesModel>,
    /// What the reader left out of the file and why, each at its line.
    pub notes: Vec<String>,
    /// The configuration asked for (`--target`), each parameter's value in the file's order,
    /// and how the file's own held-out points calibrate the intervals there.
    pub prediction: Option<FilePrediction>,
    /// Of a Cube set, each call path's largest share of its run's time over the points
    /// (`cube::time_shares`); `None` for a file, whose times need not add up to a run's.
    pub time_shares: Option<Vec<(String, f64)>>,
}

impl FileModels {
    /// The place among the file's own parameters of the models' parameter `i` (`parameters[i]`):
    /// `i`, where no parameter is fixed.
    pub fn file_position(&self, i: usize) -> usize {
        (0..)
            .filter(|p| !self.fixed.iter().any(|f| f.position == *p))
            .nth(i)
            .unwrap_or(i)
    }
}

/// Where the models of a file are asked to predict, and how far to trust their intervals.
#[derive(Debug)]
pub struct FilePrediction {
    pub coordinate: Vec<f64>,
    /// Per unit of the file's metrics (times, counts, bytes...), in the order it names them,
    /// its intervals' calibrations.
    pub units: Vec<UnitCalibration>,
}

/// How the call paths of the metrics in one unit calibrate their intervals: each unit apart,
/// since times, visits and bytes do not err alike (visits are counted exactly: among times they
/// would narrow the times' intervals), while the times of a file's metrics (its phases') do.
#[derive(Debug)]
pub struct UnitCalibration {
    pub unit: MetricUnit,
    /// The Extra-P-compatible search's intervals, calibrated on the unit's checks.
    pub calibration: Calibration,
    /// The robust search's, when it was asked for.
    pub robust: Option<Calibration>,
}

impl FilePrediction {
    /// The calibrations of `metric`'s intervals (those of its unit).
    pub fn of(&self, metric: &str) -> &UnitCalibration {
        let unit = MetricUnit::of(metric);
        self.units
            .iter()
            .find(|u| u.unit == unit)
            .expect("every unit of the file's metrics is calibrated")
    }
}

/// Each unit of `series`' metrics, in the order first met, with its call paths' points.
fn by_unit(series: &[Series]) -> Vec<(MetricUnit, Vec<&[Point]>)> {
    calibrate::by_unit(
        series
            .iter()
            .map(|s| (s.metric.as_str(), s.points.as_slice())),
    )
}

/// The points the Extra-P-compatible search fits, per series ([`Series::extrap_points`]).
fn extrap_points(series: &[Series]) -> Vec<Cow<'_, [Point]>> {
    series.iter().map(Series::extrap_points).collect()
}

/// The level of every interval `yosoku scaling` prints.
pub const LEVEL: f64 = 0.95;

/// One call path's model.
#[derive(Debug)]
pub struct SeriesModel {
    pub callpath: String,
    pub metric: String,
    pub model: Result<PmnfModel, PmnfError>,
    /// The robust search's model (docs/methods.md, section 7), when asked for.
    pub robust: Option<Result<RobustFit, PmnfError>>,
    /// With a target: each model's prediction there, its interval calibrated on the file.
    pub prediction: Option<Prediction>,
    pub robust_prediction: Option<Prediction>,
    /// The parameters no line of the call path's runs ranks the terms of
    /// ([`pmnf::without_line`](yosoku_regression::pmnf::without_line)): the Extra-P-compatible
    /// search's model has none of their terms.
    pub without_line: Vec<usize>,
    /// The parameters the call path's runs measure at one or two values
    /// ([`FewValues`]): the Extra-P-compatible search's model has no term in them, or a law
    /// chosen between two points.
    pub few_values: Vec<FewValues>,
}

/// A model's prediction at the target and its interval under the file's calibration (`None`
/// where neither the fit nor the checks give a bound).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    /// A parameter ([`FewValues`]) at a value the call path was not measured at: the law in it
    /// there is unchecked (one value: none; two: Extra-P's choice between them), so no interval
    /// is given.
    pub unchecked: Option<usize>,
}

impl Prediction {
    /// `model`'s prediction at `coordinate` for a call path measured at `points`, its interval
    /// under the file's `calibration`; `lender_model` is the Extra-P-compatible search's model of
    /// the same call path, whose calibrated interval a borrowed calibration lends. The low end is
    /// at 0 where nothing measured was negative (times, visits, bytes).
    fn of(
        model: &PmnfModel,
        coordinate: &[f64],
        points: &[yosoku_regression::pmnf::Point],
        calibration: &Calibration,
        lender_model: Option<&PmnfModel>,
    ) -> Self {
        let intervals =
            CalibratedIntervals::new(calibration.clone(), points, lender_model.cloned());
        Prediction {
            value: model.evaluate(coordinate),
            interval: intervals.interval(model, coordinate),
            unchecked: None,
        }
    }

    /// The prediction with no interval where `coordinate` puts a parameter of `few` at a value
    /// the call path was not measured at: what the checks calibrated says nothing of a law
    /// that no third value tested.
    fn unchecked_off(mut self, few: &[FewValues], coordinate: &[f64]) -> Self {
        if let Some(f) = few.iter().find(|f| !f.measured_at(coordinate[f.parameter])) {
            self.interval = None;
            self.unchecked = Some(f.parameter);
        }
        self
    }
}

/// Reads one Extra-P file in the format it holds, whatever its name (a saved experiment: each
/// point's mean, or its median with `median`), or a directory of Cube profiles, one folder per
/// run named by its parameters, as Extra-P's `--cube` reads it (each call path's values and
/// each run's locations combined as `cube` says; see [`read_cube_set`]). Inclusive values are
/// a Cube set's alone: asked of a file, an error. A Cube set's call paths' shares of their run's
/// time come with it (`cube::time_shares`); a file's times need not add up to a run's.
pub fn read_experiment(path: &Path, median: bool, cube: CubeReading) -> Result<ReadExperiment> {
    let (mut experiment, shares) = read_file_or_set(path, median, cube)?;
    let fixed = experiment.take_fixed_parameters();
    if !fixed.is_empty() {
        experiment
            .notes
            .push(fixed_said(&fixed, &experiment.parameters));
    }
    let negative = negative_said(&experiment);
    experiment.notes.extend(negative);
    Ok(ReadExperiment {
        experiment,
        time_shares: shares,
        fixed,
    })
}

/// What a file measured at one value of some parameters is modelled as
/// ([`Experiment::take_fixed_parameters`]): `n = 100 at every run: the models are over p alone
/// (what was measured at one value of a parameter says nothing of how it changes with it; ...)`.
fn fixed_said(fixed: &[FixedParameter], varying: &[String]) -> String {
    let values: Vec<String> = fixed
        .iter()
        .map(|f| format!("{} = {}", f.name, f.value))
        .collect();
    format!(
        "{} at every run: the models are over {} alone (what was measured at one value of a \
         parameter says nothing of how it changes with it; Extra-P's models have no term of it \
         either)",
        values.join(", "),
        varying.join(", ")
    )
}

/// Per metric whose name says a quantity that is never negative (a time, bytes, FLOPs, a
/// count), the negative values the file holds, said: Extra-P models them without a word, and so
/// does yosoku, but a negative time is a measuring or a writing error the user should see.
fn negative_said(experiment: &Experiment) -> Vec<String> {
    let mut by_metric: Vec<(&str, Vec<&str>, usize)> = Vec::new();
    for s in &experiment.series {
        let negative = s
            .points
            .iter()
            .flat_map(|p| &p.values)
            .filter(|v| **v < 0.0)
            .count();
        if negative == 0 || MetricUnit::of(&s.metric) == MetricUnit::Unnamed {
            continue;
        }
        match by_metric.iter_mut().find(|(m, _, _)| *m == s.metric) {
            Some((_, callpaths, count)) => {
                callpaths.push(&s.callpath);
                *count += negative;
            }
            None => by_metric.push((&s.metric, vec![&s.callpath], negative)),
        }
    }
    by_metric
        .into_iter()
        .map(|(metric, callpaths, count)| {
            let what = match MetricUnit::of(metric) {
                MetricUnit::Seconds => "a time",
                MetricUnit::Bytes => "a number of bytes",
                MetricUnit::Flop => "a number of FLOPs",
                MetricUnit::Count | MetricUnit::Events | MetricUnit::Unnamed => "a count",
            };
            let shown: Vec<String> = callpaths.iter().take(3).map(|c| format!("`{c}`")).collect();
            let more = callpaths.len().saturating_sub(shown.len());
            format!(
                "metric `{metric}`: {count} negative value(s), in call path(s) {}{}: {what} is \
                 never negative, so the file holds a measuring or writing error; modelled as \
                 given, as Extra-P models them",
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect()
}

/// [`read_experiment`] before the fixed parameters are taken out.
fn read_file_or_set(
    path: &Path,
    median: bool,
    cube: CubeReading,
) -> Result<(Experiment, Option<TimeShares>)> {
    if path.is_dir() {
        return read_cube_set(path, median, cube)
            .map(|(experiment, shares)| (experiment, Some(shares)));
    }
    if cube.values == CubeValues::Inclusive {
        bail!(
            "{}: inclusive values are read from a set of Cube profiles (a directory), where each \
             call path's callees can be added to it; an Extra-P file holds its values as they \
             were measured",
            path.display()
        );
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let format = Format::detect(&bytes)
        .map_err(|e| anyhow!("{}:{}: {}", path.display(), e.line, e.message))?;
    // The one name Extra-P gives a file itself: a `.extra-p` file that is no zip is damaged.
    if path.extension().is_some_and(|e| e == "extra-p") && format != Format::Saved {
        bail!(
            "{}: not an experiment Extra-P saved (a zip holding experiment.json), though its name \
             says so",
            path.display()
        );
    }
    let read = extrap::parse_bytes(format, &bytes, median);
    let experiment = read.map_err(|e| match e.line {
        0 => anyhow!("{}: {}", path.display(), e.message),
        line => anyhow!("{}:{line}: {}", path.display(), e.message),
    })?;
    Ok((experiment, None))
}

/// Each call path's largest share of its run's time (`cube::time_shares`).
pub type TimeShares = Vec<(String, f64)>;

/// An experiment read by [`read_experiment`].
#[derive(Debug)]
pub struct ReadExperiment {
    /// Without its fixed parameters.
    pub experiment: Experiment,
    /// Of a Cube set, each call path's largest share of its run's time.
    pub time_shares: Option<TimeShares>,
    /// The parameters with one value at every run, taken out of the experiment
    /// ([`Experiment::take_fixed_parameters`]).
    pub fixed: Vec<FixedParameter>,
}

/// A Cube set: every `<dir>/<run folder>/*.cubex` (as Extra-P's `--cube` finds them; files and
/// folders whose names start with `.` left out), the folder's name giving the run's parameters
/// (`mm.x10y25.r1`), each run's locations combined as it is read (one profile's values in memory
/// at a time, and its `time` at every location until its point's runs are all read, for shares
/// over all their locations; with `median`, a point's runs together, for its medians over all
/// their locations, as Extra-P's), and each call path's largest share of its run's time
/// (`cube::time_shares`). Errors name the folder or file.
pub fn read_cube_set(
    dir: &Path,
    median: bool,
    reading: CubeReading,
) -> Result<(Experiment, Vec<(String, f64)>)> {
    let hidden = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    let mut files = Vec::new();
    for folder in
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?
    {
        let folder = folder
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        if !folder.is_dir() || hidden(&folder) {
            continue;
        }
        for file in std::fs::read_dir(&folder)
            .with_context(|| format!("cannot read {}", folder.display()))?
        {
            let file = file
                .with_context(|| format!("cannot read {}", folder.display()))?
                .path();
            if file.is_file() && !hidden(&file) && file.extension().is_some_and(|e| e == "cubex") {
                files.push(file);
            }
        }
    }
    // The same set in the same order on every file system.
    files.sort();
    if files.is_empty() {
        bail!(
            "{}: a directory without Cube profiles (`<run folder>/*.cubex`, one folder per run \
             named by its parameters: `mm.p64n1000.r1`); yosoku reads such a directory, or one \
             of Extra-P's files (text, JSON, JSON Lines, Talpas or a saved .extra-p experiment)",
            dir.display()
        );
    }
    // The runs of one point (its repetitions) read and combined together, so that a point's
    // medians are over all their locations: one point's profiles in memory at a time. A folder
    // whose name gives no parameters is a point of its own (`cube_set` says what is wrong).
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let points = cube::group_by_point(
        (files.iter()).map(|file| (file.parent().and_then(name).unwrap_or_default(), file)),
    );
    // Only a point's medians need its runs' locations together; otherwise each run is combined
    // as it is read, one profile's values in memory at a time.
    let pooled = median && reading.scaling != cube::Scaling::Strong;
    let mut runs = Vec::with_capacity(files.len());
    for group in points {
        let read = group
            .into_iter()
            .map(|file| {
                let bytes = std::fs::read(file)
                    .with_context(|| format!("cannot read {}", file.display()))?;
                let run = cube::Run::read(
                    file.parent().and_then(name).unwrap_or_default(),
                    name(file).unwrap_or_default(),
                    &bytes,
                    reading.values,
                )
                .map_err(|e| anyhow!("{}: {e}", file.display()))?;
                Ok(if pooled {
                    run
                } else {
                    run.combined(reading.scaling, median)
                })
            })
            .collect::<Result<Vec<_>>>()?;
        runs.extend(cube::combine_point(read, reading.scaling, median));
    }
    let experiment = cube::cube_set(&runs, reading.scaling, median)
        .map_err(|e| anyhow!("{}: {}", dir.display(), e.message))?;
    Ok((experiment, cube::time_shares(&runs, reading.scaling)))
}

/// Every call path of every file modelled with `options` (a Cube set's runs combined by
/// `cube`; and, with `robust`, by the robust
/// search too): per file, in the order given, its models or why it could not be read. With a
/// `target` (each parameter's value by name), each file's intervals are calibrated on its own
/// held-out points for the prediction there.
pub fn model_files(
    files: &[PathBuf],
    options: &PmnfOptions,
    cube: CubeReading,
    robust: bool,
    target: Option<&[(String, f64)]>,
) -> Vec<Result<FileModels>> {
    let median = options.aggregate == yosoku_regression::pmnf::Aggregate::Median;
    files
        .iter()
        .map(|file| {
            let ReadExperiment {
                experiment: e,
                time_shares,
                fixed,
            } = read_experiment(file, median, cube)?;
            let fitted = extrap_points(&e.series);
            let prediction = match target {
                Some(target) => Some(FilePrediction {
                    coordinate: target_coordinate(file, &e.parameters, &fixed, target)?,
                    units: by_unit(&e.series)
                        .into_iter()
                        .zip(calibrate::by_unit(
                            (e.series.iter().zip(&fitted)).map(|(s, f)| (s.metric.as_str(), &**f)),
                        ))
                        .map(|((unit, points), (_, fitted))| {
                            let calibration = extrap_calibration(&fitted, options, LEVEL);
                            UnitCalibration {
                                robust: robust.then(|| {
                                    robust_calibration(&points, options, LEVEL, || {
                                        calibration.clone()
                                    })
                                }),
                                calibration,
                                unit,
                            }
                        })
                        .collect(),
                }),
                None => None,
            };
            let models = (e.series.iter().zip(&fitted))
                .map(|(s, fitted)| {
                    let model = fit(fitted, options);
                    let robust = robust.then(|| fit_robust(&s.points, options));
                    let (prediction, robust_prediction) = match &prediction {
                        Some(p) => {
                            let c = p.of(&s.metric);
                            (
                                model.as_ref().ok().map(|m| {
                                    Prediction::of(m, &p.coordinate, fitted, &c.calibration, None)
                                        .unchecked_off(&few_values(fitted), &p.coordinate)
                                }),
                                match (&robust, &c.robust) {
                                    (Some(Ok(r)), Some(c)) => Some(Prediction::of(
                                        &r.model,
                                        &p.coordinate,
                                        &s.points,
                                        c,
                                        model.as_ref().ok(),
                                    )),
                                    _ => None,
                                },
                            )
                        }
                        None => (None, None),
                    };
                    SeriesModel {
                        model,
                        robust,
                        prediction,
                        robust_prediction,
                        without_line: yosoku_regression::pmnf::without_line(&s.points),
                        few_values: few_values(fitted),
                        callpath: s.callpath.clone(),
                        metric: s.metric.clone(),
                    }
                })
                .collect();
            Ok(FileModels {
                file: file.clone(),
                notes: e.notes,
                prediction,
                time_shares,
                models,
                parameters: e.parameters,
                fixed,
            })
        })
        .collect()
}

/// `target`'s values (by name) in the order of the file's `parameters`; a name the file lacks,
/// or a parameter without a value, is an error naming both. A `fixed` parameter may be given
/// at its one value (or not at all); at another, no model can answer, and that is an error.
fn target_coordinate(
    file: &Path,
    parameters: &[String],
    fixed: &[FixedParameter],
    target: &[(String, f64)],
) -> Result<Vec<f64>> {
    let mut coordinate = vec![f64::NAN; parameters.len()];
    for (name, value) in target {
        if let Some(FixedParameter {
            value: measured, ..
        }) = fixed.iter().find(|f| &f.name == name)
        {
            if value != measured {
                bail!(
                    "{}: --target {name}={value}, but {name} is {measured} at every run of the file: \
                     no model can say how the time changes with it; ask at {name}={measured}, or \
                     measure runs at other values of it",
                    file.display()
                );
            }
            continue;
        }
        let p = parameters.iter().position(|p| p == name).ok_or_else(|| {
            anyhow!(
                "{}: --target names `{name}`, but the file's parameters are {}",
                file.display(),
                parameters.join(", ")
            )
        })?;
        coordinate[p] = *value;
    }
    if let Some(missing) = parameters.iter().zip(&coordinate).find(|(_, v)| v.is_nan()) {
        anyhow::bail!(
            "{}: --target gives no value of the parameter `{}` (expected {})",
            file.display(),
            missing.0,
            parameters.join(", ")
        );
    }
    Ok(coordinate)
}

/// `--grid`'s grid of each of the file's `parameters` (inferred where it names none) and the
/// place of `--cost-parameter`; a name the file lacks, or one of its `fixed` parameters, is an
/// error saying why.
fn grids_and_cost(
    file: &Path,
    (parameters, fixed): (&[String], &[FixedParameter]),
    grids: &[(String, Grid)],
    cost_parameter: Option<&str>,
) -> Result<(Vec<Grid>, Option<usize>)> {
    let at = |name: &str| parameters.iter().position(|p| p == name);
    let fixed_at = |name: &str, flag: &str, why: &str| match fixed.iter().find(|f| f.name == name) {
        Some(f) => Err(anyhow!(
            "{}: {flag} names `{name}`, which is {} at every run of the file: {why}",
            file.display(),
            f.value
        )),
        None => Ok(()),
    };
    let mut by_parameter = vec![Grid::Inferred; parameters.len()];
    for (name, grid) in grids {
        fixed_at(
            name,
            "--grid",
            &format!(
                "the runs suggested keep it there; give the grid of {}",
                parameters.join(", ")
            ),
        )?;
        let p = at(name).ok_or_else(|| {
            anyhow!(
                "{}: --grid names `{name}`, but the file's parameters are {}",
                file.display(),
                parameters.join(", ")
            )
        })?;
        by_parameter[p] = grid.clone();
    }
    let Some(name) = cost_parameter else {
        return Ok((by_parameter, None));
    };
    fixed_at(
        name,
        "--cost-parameter",
        "every run's cost would be its time times the same number, which ranks the runs as their time does; leave --cost-parameter out",
    )?;
    let processes = at(name).ok_or_else(|| {
        anyhow!(
            "{}: --cost-parameter `{name}` is not a parameter of the file ({})",
            file.display(),
            parameters.join(", ")
        )
    })?;
    Ok((by_parameter, Some(processes)))
}

/// The next runs to measure for one call path (`yosoku scaling --suggest`).
#[derive(Debug)]
pub struct SeriesSuggestions {
    pub callpath: String,
    pub metric: String,
    pub suggestions: Result<Suggestions, PmnfError>,
    /// The robust model's prediction at the target, its interval calibrated on the file.
    pub prediction: Option<Prediction>,
    /// Where the robust search could not model the call path for a parameter measured at too
    /// few values: the runs that would give it one more.
    pub to_model: Vec<ToModel>,
}

/// What `--suggest` found in one file: its parameters and, per call path, the ranked runs.
#[derive(Debug)]
pub struct FileSuggestions {
    pub file: PathBuf,
    pub parameters: Vec<String>,
    pub series: Vec<SeriesSuggestions>,
    /// What the reader left out of the file and why, each at its line.
    pub notes: Vec<String>,
    /// Whether runs are costed by their number (the file measures no time), not by the time of
    /// a run: its longest call path's there (`pmnf::suggest::RunCost`).
    pub costed_per_run: bool,
    /// Per unit of the file's metrics, in the order it names them, the robust search's
    /// intervals calibrated on that unit's held-out points (or, where none could be checked,
    /// borrowed from the Extra-P-compatible search's).
    pub calibrations: Vec<(MetricUnit, Calibration)>,
    /// As [`FileModels::time_shares`].
    pub time_shares: Option<Vec<(String, f64)>>,
}

impl FileSuggestions {
    /// The calibration of `metric`'s robust intervals (its unit's).
    pub fn calibration_of(&self, metric: &str) -> &Calibration {
        Self::calibration_in(&self.calibrations, metric)
    }

    fn calibration_in<'c>(
        calibrations: &'c [(MetricUnit, Calibration)],
        metric: &str,
    ) -> &'c Calibration {
        let unit = MetricUnit::of(metric);
        calibrations
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, c)| c)
            .expect("every unit of the file's metrics is calibrated")
    }
}

/// Every call path of every file: the runs that would most narrow the prediction at `target`
/// (each parameter's value by name, as `p=1024,n=4096` names them), per unit of cost (the
/// parameter `cost_parameter` counting processes, if given), the next values of a parameter on
/// its grid in `grids` (by name; inferred for the others). A file whose parameters differ from
/// the target's or the grids' names is an error naming both.
pub fn suggest_files(
    files: &[PathBuf],
    options: &PmnfOptions,
    cube: CubeReading,
    target: &[(String, f64)],
    cost_parameter: Option<&str>,
    grids: &[(String, Grid)],
) -> Vec<Result<FileSuggestions>> {
    let median = options.aggregate == yosoku_regression::pmnf::Aggregate::Median;
    files
        .iter()
        .map(|file| {
            let ReadExperiment {
                experiment: e,
                time_shares,
                fixed,
            } = read_experiment(file, median, cube)?;
            let coordinate = target_coordinate(file, &e.parameters, &fixed, target)?;
            let (by_parameter, processes) =
                grids_and_cost(file, (&e.parameters, &fixed), grids, cost_parameter)?;
            // The Extra-P-compatible search lends its intervals where the robust one could check
            // nothing: fitted as `model_files` fits it.
            let lent = extrap_points(&e.series);
            let calibrations: Vec<(MetricUnit, Calibration)> = by_unit(&e.series)
                .into_iter()
                .zip(calibrate::by_unit(
                    (e.series.iter().zip(&lent)).map(|(s, f)| (s.metric.as_str(), &**f)),
                ))
                .map(|((unit, points), (_, lent))| {
                    let calibration = robust_calibration(&points, options, LEVEL, || {
                        extrap_calibration(&lent, options, LEVEL)
                    });
                    (unit, calibration)
                })
                .collect();
            // Every call path's robust model, once: their times cost the runs.
            let fits: Vec<Result<RobustFit, PmnfError>> = e
                .series
                .iter()
                .map(|s| fit_robust(&s.points, options))
                .collect();
            let run_cost = RunCost::new(
                e.series
                    .iter()
                    .zip(&fits)
                    .filter(|(s, _)| is_time_metric(&s.metric))
                    .map(|(s, f)| (s.points.as_slice(), f.as_ref().ok().map(|f| &f.model))),
            );
            let run_cost = if run_cost.is_empty() {
                RunCost::per_run()
            } else {
                run_cost
            };
            let series = (e.series.iter().zip(&lent).zip(fits))
                .map(|((s, lent), fitted)| {
                    let suggestions = fitted.and_then(|f| {
                        suggest_from(
                            f,
                            &s.points,
                            &coordinate,
                            &candidates(&s.points, &coordinate, &by_parameter),
                            processes,
                            Some(&run_cost),
                        )
                    });
                    let calibration = FileSuggestions::calibration_in(&calibrations, &s.metric);
                    // The Extra-P-compatible search's model, only where it lends the intervals.
                    let lender = (calibration.basis == Basis::Borrowed)
                        .then(|| fit(lent, options).ok())
                        .flatten();
                    let to_model = match &suggestions {
                        Err(_) => runs_to_model(&s.points, &by_parameter, &run_cost, processes),
                        Ok(_) => Vec::new(),
                    };
                    SeriesSuggestions {
                        to_model,
                        prediction: suggestions.as_ref().ok().map(|f| {
                            Prediction::of(
                                &f.fit.model,
                                &coordinate,
                                &s.points,
                                calibration,
                                lender.as_ref(),
                            )
                        }),
                        suggestions,
                        callpath: s.callpath.clone(),
                        metric: s.metric.clone(),
                    }
                })
                .collect();
            Ok(FileSuggestions {
                file: file.clone(),
                costed_per_run: run_cost.is_per_run(),
                calibrations,
                time_shares,
                notes: e.notes,
                series,
                parameters: e.parameters,
            })
        })
        .collect()
}
