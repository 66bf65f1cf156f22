//! A set of Cube profiles (one Score-P run each) as one experiment, as Extra-P's `--cube` reads
//! a directory of them: each run's folder is named by its parameters (`mm.x10y25z1.r1`: x = 10,
//! y = 25, z = 1, repetition 1), every parameter whose value changes is one of the experiment's,
//! runs at the same values are repetitions, and each call path's value in a run is its exclusive
//! value over the run's locations (processes and threads): their mean (weak scaling, Extra-P's
//! default), the mean of the locations that measured something (threaded weak scaling) or their
//! sum (strong scaling). A call path some points lack is added to its nearest caller that every
//! point has, as Extra-P merges it. With inclusive values ([`Values::Inclusive`]: its callees'
//! included) such a call path is left out, its values already in its callers'. No I/O: the
//! caller reads the files.

mod profile;

pub use profile::{Aggregation, Profile, ProfileMetric, Values, parse_members, parse_profile};

use std::borrow::Cow;
use std::collections::HashMap;

use super::super::Point;
use super::experiment::{Experiment, InputError, Series, error};

/// How a run's locations (processes, threads) combine into one value per call path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scaling {
    /// Their mean (the work per process: weak scaling; Extra-P's default).
    #[default]
    Weak,
    /// The mean of the locations that measured something (threads that never ran a call path
    /// left out), as Extra-P's `weak_threaded`.
    WeakThreaded,
    /// Their sum (the whole run's cost: strong scaling).
    Strong,
}

impl std::str::FromStr for Scaling {
    type Err = String;

    /// Extra-P's names (`weak`, `weak_threaded`, `strong`; `weak-threaded` too).
    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "weak" => Ok(Scaling::Weak),
            "weak_threaded" | "weak-threaded" => Ok(Scaling::WeakThreaded),
            "strong" => Ok(Scaling::Strong),
            other => Err(format!(
                "{other:?}: expected weak, weak_threaded or strong (how a run's processes and \
                 threads combine)"
            )),
        }
    }
}

/// How a Cube set is read: which value of each call path (exclusive, Extra-P's default, or
/// inclusive) and how a run's locations combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reading {
    pub values: Values,
    pub scaling: Scaling,
}

/// One run of a Cube set: the folder that holds its profile (whose name gives the parameters),
/// the file's name, and what it holds: each call path's value at every location, or, read with
/// [`Run::read`], their one combined value.
#[derive(Debug, Clone)]
pub struct Run {
    pub folder: String,
    pub file: String,
    pub profile: Profile,
    /// Its `time` by medians over its locations, for [`time_shares`]: kept when its locations
    /// are combined ([`Run::combined`]), over its point's runs' locations where
    /// [`combine_point`] combined it; `None` before, or where the profile has no time.
    pub times: Option<RunTimes>,
    /// Its `time` at each location, kept by [`Run::combined`] until [`combine_point`] pools
    /// them with the other runs of its point ([`TimeAtLocations::pooled`]); `None` otherwise.
    pub time_at_locations: Option<TimeAtLocations>,
    /// Per metric and call path of its profile (in its order), the median over every location
    /// of every run at its point (Extra-P's median of the point), kept by [`combine_point`]
    /// where medians are asked with a weak scaling; `None` elsewhere.
    pub point_medians: Option<Vec<Vec<f64>>>,
    /// Per metric and call path of its profile (in its order), how many of its locations its
    /// value is the mean of (all of them, or with threaded weak scaling those that measured
    /// it), kept by [`Run::combined`]: a point's mean over every location of every run there
    /// weighs each run's by it, as Extra-P pools them. `None` before it is combined.
    pub location_counts: Option<Vec<Vec<u32>>>,
}

/// A run's `time` as Extra-P's small-kernel filter weighs it: each call path's values at the
/// run's locations combined as the scaling combines them but by their median (with strong
/// scaling, their sum), and the run's own time so combined: at each location its call paths'
/// exclusive times together (read inclusive: its roots' times), Extra-P's root's inclusive time.
/// Where a point has several runs (its repetitions) and the scaling is weak, each median is over
/// every location of every one of them, as Extra-P pools them ([`TimeAtLocations::pooled`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RunTimes {
    /// In the order of the profile's `time` call paths (their names are the profile's).
    pub callpaths: Vec<f64>,
    pub run: f64,
}

/// A run's `time` at each of its locations, as [`RunTimes`] weighs it before its locations are
/// combined: each call path's values (in the order of the profile's `time` call paths) and the
/// run's own.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeAtLocations {
    pub callpaths: Vec<(String, Vec<f64>)>,
    pub run: Vec<f64>,
}

impl TimeAtLocations {
    /// The times of `profile`, its values still at its locations; `None` without a `time`.
    fn of(profile: &Profile) -> Option<TimeAtLocations> {
        let time = profile.metrics.iter().find(|m| m.name == "time")?;
        let mut run = vec![0.0; profile.locations];
        for (callpath, values) in &time.callpaths {
            if profile.values == Values::Exclusive || !callpath.contains("->") {
                for (sum, v) in run.iter_mut().zip(values) {
                    *sum += v;
                }
            }
        }
        Some(TimeAtLocations {
            callpaths: time.callpaths.clone(),
            run,
        })
    }

    /// The times of one point's runs (`runs`, its repetitions), each in the order of its own
    /// call paths. Weak scaling: each call path's median over every location of every run that
    /// has it, and the run's over every location of every run, as Extra-P pools a point's
    /// repetitions (threaded: of a run's locations, those that measured the call path, where
    /// any did; the run's own time over all of them, zeros too, as Extra-P's median of its
    /// root's values takes them). Strong scaling: each run's sums, a point's runs then giving
    /// the median of theirs ([`time_shares`]).
    pub fn pooled(runs: &[&TimeAtLocations], scaling: Scaling) -> Vec<RunTimes> {
        if scaling == Scaling::Strong {
            let sum = |v: &[f64]| v.iter().sum::<f64>();
            return (runs.iter())
                .map(|t| RunTimes {
                    callpaths: t.callpaths.iter().map(|(_, v)| sum(v)).collect(),
                    run: sum(&t.run),
                })
                .collect();
        }
        let mut by_callpath: HashMap<&str, Vec<f64>> = HashMap::new();
        for t in runs {
            for (callpath, values) in &t.callpaths {
                let at = by_callpath.entry(callpath).or_default();
                let measured = values.iter().copied().filter(|&v| v != 0.0);
                if scaling == Scaling::WeakThreaded && measured.clone().next().is_some() {
                    at.extend(measured);
                } else {
                    at.extend(values);
                }
            }
        }
        let medians: HashMap<&str, f64> = (by_callpath.into_iter())
            .map(|(callpath, mut values)| {
                (callpath, super::super::median_by_selection(&mut values))
            })
            .collect();
        let mut all: Vec<f64> = runs.iter().flat_map(|t| t.run.iter().copied()).collect();
        let run = super::super::median_by_selection(&mut all);
        (runs.iter())
            .map(|t| RunTimes {
                callpaths: t
                    .callpaths
                    .iter()
                    .map(|(c, _)| medians[c.as_str()])
                    .collect(),
                run,
            })
            .collect()
    }
}

impl Run {
    /// The run of the profile `bytes` (in `folder`, named `file`), read for `values`: each call
    /// path's value at every location. [`combine_point`] then combines the runs of one point
    /// (or [`Run::combined`] one run alone), so that a reader holds one point's locations at a
    /// time: a study at 10,000 processes needs the memory of its repetitions of one point, not
    /// of every run. [`cube_set`] gives the same experiment from runs so combined as from their
    /// whole profiles (a value combined again stays as it is).
    pub fn read(folder: String, file: String, bytes: &[u8], values: Values) -> Result<Run, String> {
        Ok(Run::of_profile(folder, file, parse_profile(bytes, values)?))
    }

    /// The run of `profile` (read already), as [`Run::read`] gives it.
    pub fn of_profile(folder: String, file: String, profile: Profile) -> Run {
        Run {
            folder,
            file,
            profile,
            times: None,
            time_at_locations: None,
            point_medians: None,
            location_counts: None,
        }
    }

    /// This run with each call path's values at its locations combined into one, as
    /// [`cube_set`] combines them with `scaling` and `median` (see [`Run::read`]); its times
    /// by medians kept for [`time_shares`].
    pub fn combined(mut self, scaling: Scaling, median: bool) -> Run {
        if self.times.is_none() {
            self.time_at_locations = TimeAtLocations::of(&self.profile);
            self.times = (self.time_at_locations.as_ref())
                .and_then(|t| TimeAtLocations::pooled(&[t], scaling).pop());
        }
        if self.location_counts.is_none() {
            self.location_counts = Some(
                (self.profile.metrics.iter())
                    .map(|m| {
                        (m.callpaths.iter())
                            .map(|(_, values)| locations_counted(values, scaling))
                            .collect()
                    })
                    .collect(),
            );
        }
        for metric in &mut self.profile.metrics {
            for (_, values) in &mut metric.callpaths {
                *values = vec![run_value(values, metric.aggregation, scaling, median)];
            }
        }
        self
    }

    /// How many locations its value of metric `m`'s call path `c` (`values`, at its locations
    /// or combined) is the mean of ([`Run::location_counts`]).
    fn counted(&self, m: usize, c: usize, values: &[f64], scaling: Scaling) -> u32 {
        match &self.location_counts {
            Some(counts) => counts[m][c],
            None => locations_counted(values, scaling),
        }
    }
}

/// The runs of one point (its repetitions), each combined as [`Run::combined`] combines it;
/// with `median` and a weak scaling each keeps the point's medians over every location of every
/// run, which the runs' own medians do not give ([`Run::point_medians`]). Each keeps its
/// point's times pooled over their locations, for [`time_shares`] ([`TimeAtLocations::pooled`]),
/// the runs' locations then let go (runs combined already give theirs as they kept them).
pub fn combine_point(runs: Vec<Run>, scaling: Scaling, median: bool) -> Vec<Run> {
    let mut medians = (median && scaling != Scaling::Strong)
        .then(|| point_medians(&runs.iter().collect::<Vec<&Run>>(), scaling))
        .map(Vec::into_iter);
    let mut times = point_times(&runs.iter().collect::<Vec<&Run>>(), scaling).map(Vec::into_iter);
    runs.into_iter()
        .map(|mut run| {
            let of_run = medians.as_mut().and_then(Iterator::next);
            if run.point_medians.is_none() {
                run.point_medians = of_run;
            }
            if let Some(pooled) = times.as_mut().and_then(Iterator::next) {
                run.times = pooled;
            }
            let mut run = run.combined(scaling, median);
            run.time_at_locations = None;
            run
        })
        .collect()
}

/// The times of one point's runs (its repetitions), each pooled with the others'
/// ([`TimeAtLocations::pooled`]; `None` for a run without `time`); `None` where a run's
/// locations are no longer there to pool (a run [`combine_point`] combined: its times are its
/// point's already).
fn point_times(runs: &[&Run], scaling: Scaling) -> Option<Vec<Option<RunTimes>>> {
    let located = (runs.iter())
        .map(|r| match (&r.time_at_locations, &r.times) {
            (Some(t), _) => Some(Some(Cow::Borrowed(t))),
            (None, None) => Some(TimeAtLocations::of(&r.profile).map(Cow::Owned)),
            (None, Some(_)) => None,
        })
        .collect::<Option<Vec<Option<Cow<TimeAtLocations>>>>>()?;
    let with_time: Vec<&TimeAtLocations> = located.iter().flatten().map(Cow::as_ref).collect();
    let mut pooled = TimeAtLocations::pooled(&with_time, scaling).into_iter();
    Some(
        (located.iter())
            .map(|t| t.as_ref().and_then(|_| pooled.next()))
            .collect(),
    )
}

/// `runs` (each by the name of its folder) grouped by the point their folders name, in the order
/// first met: a point's runs are read and combined together ([`combine_point`]). A folder whose
/// name gives no parameters is a group of its own ([`cube_set`] says what is wrong with it).
pub fn group_by_point<T>(runs: impl IntoIterator<Item = (String, T)>) -> Vec<Vec<T>> {
    let mut points: Vec<Option<Vec<(String, f64)>>> = Vec::new();
    let mut groups: Vec<Vec<T>> = Vec::new();
    for (folder, run) in runs {
        let point = folder_parameters(&folder).ok();
        match points.iter().position(|p| point.is_some() && *p == point) {
            Some(at) => groups[at].push(run),
            None => {
                points.push(point);
                groups.push(vec![run]);
            }
        }
    }
    groups
}

/// Per run of `runs` (one point's repetitions), metric and call path (in the order of the run's
/// profile), the median over every location of every run that measured it, as Extra-P's median
/// of a point: with threaded weak scaling, each run's locations that measured something (all of
/// them where none did); a run with a value that is no number left out, as [`cube_set`] leaves it
/// out of its point. Runs combined already give theirs as they kept them.
fn point_medians(runs: &[&Run], scaling: Scaling) -> Vec<Vec<Vec<f64>>> {
    if runs.iter().all(|r| r.point_medians.is_some()) {
        return runs
            .iter()
            .filter_map(|r| r.point_medians.clone())
            .collect();
    }
    let mut pooled: HashMap<(&str, &str), Vec<f64>> = HashMap::new();
    for run in runs {
        for metric in &run.profile.metrics {
            for (callpath, values) in &metric.callpaths {
                let at = pooled.entry((callpath, &metric.name)).or_default();
                if values.iter().any(|v| !v.is_finite()) {
                    continue;
                }
                let measured = values.iter().copied().filter(|&v| v != 0.0);
                if scaling == Scaling::WeakThreaded && measured.clone().next().is_some() {
                    at.extend(measured);
                } else {
                    at.extend(values);
                }
            }
        }
    }
    let medians: HashMap<(&str, &str), f64> = pooled
        .into_iter()
        .map(|(key, mut values)| (key, super::super::median_by_selection(&mut values)))
        .collect();
    runs.iter()
        .map(|run| {
            (run.profile.metrics.iter())
                .map(|m| {
                    (m.callpaths.iter())
                        .map(|(c, _)| medians.get(&(c.as_str(), m.name.as_str())).copied())
                        .map(|median| median.unwrap_or(f64::NAN))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The parameters a run's folder is named by, as Extra-P reads them: after the first `.` and
/// before the repetition (`.r` and its number, at the end), names each followed by a value
/// (`x10y25z1`; a `,` may stand for the decimal point: `x20,5`).
pub fn folder_parameters(folder: &str) -> Result<Vec<(String, f64)>, String> {
    let start = folder.find('.').map_or(0, |i| i + 1);
    // The repetition: `.r` and digits at the end (Extra-P cuts at the first `.r`, which loses
    // a parameter whose name starts with r: `app.ranks64.r1`).
    let end = folder
        .rfind(".r")
        .filter(|&at| {
            let digits = &folder[at + 2..];
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        })
        .unwrap_or(folder.len());
    let text = folder.get(start..end).unwrap_or_default();
    let is_number = |c: char| c.is_ascii_digit() || c == '.' || c == ',';
    let mut out: Vec<(String, f64)> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let name_end = rest.find(is_number).unwrap_or(rest.len());
        let (name, after) = rest.split_at(name_end);
        if name.is_empty() {
            return Err(format!(
                "{folder:?}: a value before any parameter's name; name each run's folder by its \
                 parameters, each a name and its value (`mm.p64n1000.r1`)"
            ));
        }
        let value_end = after.find(|c| !is_number(c)).unwrap_or(after.len());
        let (raw, next) = after.split_at(value_end);
        if raw.is_empty() {
            return Err(format!(
                "{folder:?}: parameter {name:?} has no value; name each run's folder by its \
                 parameters, each a name and its value (`mm.p64n1000.r1`)"
            ));
        }
        let value: f64 = raw
            .replace(',', ".")
            .trim_end_matches('.')
            .parse()
            .map_err(|_| format!("{folder:?}: {name}'s value {raw:?} is not a number"))?;
        out.push((name.to_owned(), value));
        rest = next;
    }
    if out.is_empty() {
        return Err(format!(
            "{folder:?}: no parameter in the folder's name; name each run's folder by its \
             parameters (`mm.p64n1000.r1`: p = 64, n = 1000, repetition 1)"
        ));
    }
    if out[0].0.starts_with("scorep-") {
        return Err(format!(
            "{folder:?}: Score-P's own name for an experiment, which gives no parameters; \
             rename each run's folder by its parameters (`mm.p64n1000.r1`), or set \
             SCOREP_EXPERIMENT_DIRECTORY so when you run"
        ));
    }
    Ok(out)
}

/// How many of a call path's `values` at a run's locations its mean is over ([`run_value`]):
/// all of them, or with threaded weak scaling those that measured it (all where none did).
fn locations_counted(values: &[f64], scaling: Scaling) -> u32 {
    let measured = values.iter().filter(|&&v| v != 0.0).count();
    let counted = match scaling {
        Scaling::WeakThreaded if measured > 0 => measured,
        _ => values.len(),
    };
    u32::try_from(counted).unwrap_or(u32::MAX)
}

/// One run's value of a call path from its values at every location.
fn run_value(values: &[f64], aggregation: Aggregation, scaling: Scaling, median: bool) -> f64 {
    let centre = |v: &[f64]| {
        if median {
            super::super::median(v)
        } else {
            super::super::mean(v)
        }
    };
    match (scaling, aggregation) {
        (Scaling::Strong, Aggregation::Minimum) => values.iter().copied().fold(f64::NAN, f64::min),
        (Scaling::Strong, Aggregation::Maximum) => values.iter().copied().fold(f64::NAN, f64::max),
        (Scaling::Strong, Aggregation::Sum) => values.iter().sum(),
        (Scaling::Weak, _) => centre(values),
        (Scaling::WeakThreaded, _) => {
            let measured: Vec<f64> = values.iter().copied().filter(|&v| v != 0.0).collect();
            if measured.is_empty() {
                centre(values)
            } else {
                centre(&measured)
            }
        }
    }
}

/// The runs grouped by point: the names of the parameters that change, and each point's
/// coordinate (in those) with its runs, the points in order. Errors name the run's folder.
type Points<'r> = (Vec<String>, Vec<(Vec<f64>, Vec<&'r Run>)>);

fn points_of(runs: &[Run]) -> Result<Points<'_>, InputError> {
    let whole = |message: String| error(0, message);
    let first = runs
        .first()
        .ok_or_else(|| whole("no Cube profile (`<run folder>/*.cubex`) in the set".to_owned()))?;
    let named = |run: &Run| -> Result<Vec<(String, f64)>, InputError> {
        folder_parameters(&run.folder)
            .map_err(|e| whole(format!("{}/{}: {e}", run.folder, run.file)))
    };
    let names: Vec<String> = named(first)?.into_iter().map(|(n, _)| n).collect();
    let mut values_of_runs = Vec::with_capacity(runs.len());
    for run in runs {
        let parameters = named(run)?;
        if parameters.iter().map(|(n, _)| n).ne(names.iter()) {
            return Err(whole(format!(
                "{}/{}: parameters {:?}, where {}'s are {names:?}: every run's folder must name \
                 the same parameters in the same order",
                run.folder,
                run.file,
                parameters
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
                first.folder
            )));
        }
        values_of_runs.push(parameters.into_iter().map(|(_, v)| v).collect::<Vec<f64>>());
    }
    // Only the parameters that change are the experiment's (a fixed one cannot be modelled).
    let changing: Vec<usize> = (0..names.len())
        .filter(|&i| values_of_runs.iter().any(|v| v[i] != values_of_runs[0][i]))
        .collect();
    if changing.is_empty() {
        return Err(whole(format!(
            "every run's folder names the same values ({}): no parameter changes, so there is \
             nothing to model",
            first.folder
        )));
    }
    let mut by_point: Vec<(Vec<f64>, Vec<&Run>)> = Vec::new();
    for (run, values) in runs.iter().zip(&values_of_runs) {
        let coordinate: Vec<f64> = changing.iter().map(|&i| values[i]).collect();
        match by_point.iter_mut().find(|(c, _)| *c == coordinate) {
            Some((_, group)) => group.push(run),
            None => by_point.push((coordinate, vec![run])),
        }
    }
    by_point.sort_by(|a, b| {
        a.0.iter()
            .zip(&b.0)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok((
        changing.iter().map(|&i| names[i].clone()).collect(),
        by_point,
    ))
}

/// Per (call path, metric), in the order first met: its runs' values at each point.
#[derive(Debug, Default)]
struct Gathered {
    keys: Vec<(String, String)>,
    index: HashMap<(String, String), usize>,
    values: Vec<Vec<Vec<f64>>>,
    /// With a weak scaling, each point's value over all its runs' locations: their median
    /// (medians asked) or mean.
    point_values: Vec<Vec<Option<f64>>>,
    /// Of a series read for means, whether some point's mean over all its runs' locations is
    /// not the mean of the runs' values (they are over different numbers of locations).
    pooled_differs: Vec<bool>,
    notes: Vec<String>,
}

/// A point's mean over every location of every run there, from the runs' means and how many
/// locations each is over; whether those numbers differ.
#[derive(Debug, Default)]
struct PooledMean {
    weighted: f64,
    locations: u64,
    first: Option<u32>,
    differs: bool,
}

impl PooledMean {
    fn add(&mut self, mean: f64, locations: u32) {
        self.weighted += mean * f64::from(locations);
        self.locations += u64::from(locations);
        self.differs |= self.first.is_some_and(|f| f != locations);
        self.first.get_or_insert(locations);
    }
}

impl Gathered {
    fn of(by_point: &[(Vec<f64>, Vec<&Run>)], scaling: Scaling, median: bool) -> Self {
        let mut g = Gathered::default();
        for (point, (_, group)) in by_point.iter().enumerate() {
            let medians =
                (median && scaling != Scaling::Strong).then(|| point_medians(group, scaling));
            let pool_means = !median && scaling != Scaling::Strong;
            let mut means: HashMap<usize, PooledMean> = HashMap::new();
            for (r, run) in group.iter().enumerate() {
                for note in &run.profile.notes {
                    if !g.notes.contains(note) {
                        g.notes.push(note.clone());
                    }
                }
                for (m, metric) in run.profile.metrics.iter().enumerate() {
                    for (c, (callpath, at_locations)) in metric.callpaths.iter().enumerate() {
                        let key = (callpath.clone(), metric.name.clone());
                        let k = *g.index.entry(key.clone()).or_insert_with(|| {
                            g.keys.push(key);
                            g.values.push(vec![Vec::new(); by_point.len()]);
                            g.point_values.push(vec![None; by_point.len()]);
                            g.pooled_differs.push(false);
                            g.keys.len() - 1
                        });
                        let value = run_value(at_locations, metric.aggregation, scaling, median);
                        if value.is_finite() {
                            g.values[k][point].push(value);
                            if pool_means {
                                let counted = run.counted(m, c, at_locations, scaling);
                                means.entry(k).or_default().add(value, counted);
                            } else {
                                g.point_values[k][point] = (medians.as_ref())
                                    .map(|of_runs| of_runs[r][m][c])
                                    .filter(|median| median.is_finite());
                            }
                        } else {
                            // That run's value alone is left out; the point keeps the others'.
                            g.notes.push(format!(
                                "{}/{}: call path {callpath}, metric {}: a value at a location \
                                 is not a finite number ({value}): this run left out of the point",
                                run.folder, run.file, metric.name
                            ));
                        }
                    }
                }
            }
            for (k, mean) in means {
                if mean.locations > 0 {
                    g.point_values[k][point] = Some(mean.weighted / mean.locations as f64);
                }
                g.pooled_differs[k] |= mean.differs;
            }
        }
        g
    }

    /// Why no call path has values at every one of `points` points: the roots of the runs'
    /// call trees, each at the most points it has (runs of different programs, or of one built
    /// differently).
    fn nothing_shared(&self, points: usize) -> String {
        let mut roots: Vec<(&str, usize)> = Vec::new();
        for (k, (callpath, _)) in self.keys.iter().enumerate() {
            let root = callpath.split("->").next().unwrap_or_default();
            let at = self.values[k].iter().filter(|v| !v.is_empty()).count();
            match roots.iter_mut().find(|(r, _)| *r == root) {
                Some((_, most)) => *most = (*most).max(at),
                None => roots.push((root, at)),
            }
        }
        let roots: Vec<String> = roots
            .iter()
            .map(|(root, at)| format!("{root} at {at}"))
            .collect();
        format!(
            "no call path has values at all {points} points, so there is nothing to model: do the \
             runs measure one program? (their call trees' roots, at most points: {})",
            roots.join(", ")
        )
    }

    /// Which (call path, metric) has values at every point.
    fn complete(&self) -> Vec<bool> {
        self.values
            .iter()
            .map(|at| at.iter().all(|v| !v.is_empty()))
            .collect()
    }

    /// Adds each call path some points lack to its nearest caller every point has (the value
    /// it adds at a point: the mean of its runs there, to each run's value of the caller), and
    /// says so, once per call path. With `inclusive` values (its callers' hold it already) it
    /// is left out and said.
    fn merge_incomplete(&mut self, complete: &[bool], inclusive: bool) {
        let points = self.values.first().map_or(0, Vec::len);
        if inclusive {
            let mut left_out: Vec<&str> = Vec::new();
            for k in (0..self.keys.len()).filter(|&k| !complete[k]) {
                if !left_out.contains(&self.keys[k].0.as_str()) {
                    left_out.push(&self.keys[k].0);
                }
            }
            for callpath in left_out {
                let measured = (0..self.keys.len())
                    .filter(|&k| self.keys[k].0 == callpath)
                    .map(|k| self.values[k].iter().filter(|v| !v.is_empty()).count())
                    .max()
                    .unwrap_or(0);
                self.notes.push(format!(
                    "call path {callpath} has values at {measured} of the {points} points: left \
                     out, its inclusive values are in its callers' (as Extra-P leaves it out)"
                ));
            }
            return;
        }
        let mut merged: Vec<(String, Option<String>, usize)> = Vec::new();
        for k in (0..self.keys.len()).filter(|&k| !complete[k]) {
            let (callpath, metric) = &self.keys[k];
            let target = nearest_complete_caller(callpath, |caller| {
                (self.index.get(&(caller.to_owned(), metric.clone()))).filter(|&&t| complete[t])
            });
            if let Some(t) = target {
                // Each point's mean of its runs there (none where it has no value).
                let adds: Vec<Option<f64>> = self.values[k]
                    .iter()
                    .map(|here| (!here.is_empty()).then(|| super::super::mean(here)))
                    .collect();
                for (at, add) in self.values[t].iter_mut().zip(adds) {
                    for v in at.iter_mut() {
                        *v += add.unwrap_or(0.0);
                    }
                }
                // And its value over all runs' locations to the caller's, as Extra-P merges a
                // point's medians and means.
                let adds = self.point_values[k].clone();
                for (to, add) in self.point_values[t].iter_mut().zip(adds) {
                    if let (Some(to), Some(add)) = (to.as_mut(), add) {
                        *to += add;
                    }
                }
                self.pooled_differs[t] |= self.pooled_differs[k];
            }
            let measured = self.values[k].iter().filter(|v| !v.is_empty()).count();
            if !merged.iter().any(|(c, _, _)| c == callpath) {
                merged.push((
                    callpath.clone(),
                    target.map(|t| self.keys[t].0.clone()),
                    measured,
                ));
            }
        }
        for (callpath, caller, measured) in merged {
            self.notes.push(match caller {
                Some(caller) => format!(
                    "call path {callpath} has values at {measured} of the {points} points: added \
                     to its caller {caller}, which has them at every point (as Extra-P merges it)"
                ),
                None => format!(
                    "call path {callpath} has values at {measured} of the {points} points and no \
                     caller that has them at every point: left out"
                ),
            });
        }
    }
}

/// The nearest caller of `callpath` (`main->solve` of `main->solve->MPI_Wait`, then `main`) that
/// every point has, as `complete` finds it (its index): where a call path some points lack is
/// merged, as Extra-P merges it.
fn nearest_complete_caller<'k>(
    callpath: &str,
    complete: impl Fn(&str) -> Option<&'k usize>,
) -> Option<usize> {
    let mut caller = callpath;
    while let Some((up, _)) = caller.rsplit_once("->") {
        caller = up;
        if let Some(&t) = complete(caller) {
            return Some(t);
        }
    }
    None
}

/// What a run's value of a call path is, in words, for the experiment's notes.
fn combined_how(runs: &[Run], scaling: Scaling, median: bool, inclusive: bool) -> String {
    let counts = runs.iter().map(|r| r.profile.locations);
    let (fewest, most) = (counts.clone().min().unwrap_or(0), counts.max().unwrap_or(0));
    let locations = match (fewest, most) {
        (1, 1) => "its one location".to_owned(),
        (f, m) if f == m => format!("its {f} locations"),
        (f, m) => format!("its {f} to {m} locations"),
    };
    let centre = if median { "median" } else { "mean" };
    let value = if inclusive {
        "inclusive value of a call path (its callees' included)"
    } else {
        "value of a call path"
    };
    let pooled = if median && scaling != Scaling::Strong {
        "; a point's, fitted by Extra-P's search, the median over every location of every run \
         there, as Extra-P's (the runs' medians are its repetitions)"
    } else {
        ""
    };
    let how = match scaling {
        Scaling::Weak => format!(
            "each run's {value}: the {centre} over {locations} (processes and \
             threads; weak scaling, Extra-P's default)"
        ),
        Scaling::WeakThreaded => format!(
            "each run's {value}: the {centre} over those of {locations} that \
             measured it (threaded weak scaling)"
        ),
        Scaling::Strong => format!(
            "each run's {value}: the sum over {locations} (processes and \
             threads; strong scaling)"
        ),
    };
    how + pooled
}

/// The experiment of a Cube set's runs (each point's values: one per run there, its mean, or
/// median with `median`, over the run's locations; see [`Scaling`]; with `median` and a weak
/// scaling, each point's median over every location of every run there too, and read for means
/// its mean so where its runs' means are over different numbers of locations,
/// [`Series::point_values`]). Errors have line 0 and name the run's folder.
pub fn cube_set(runs: &[Run], scaling: Scaling, median: bool) -> Result<Experiment, InputError> {
    let (parameters, by_point) = points_of(runs)?;
    let mut gathered = Gathered::of(&by_point, scaling, median);
    let complete = gathered.complete();
    let inclusive = runs.iter().any(|r| r.profile.values == Values::Inclusive);
    if inclusive && runs.iter().any(|r| r.profile.values != Values::Inclusive) {
        return Err(error(
            0,
            "some profiles were read for their inclusive values, others for their exclusive \
             ones: read every run's the same way",
        ));
    }
    gathered.merge_incomplete(&complete, inclusive);
    gathered
        .notes
        .push(combined_how(runs, scaling, median, inclusive));
    if !complete.iter().any(|&c| c) {
        return Err(error(0, gathered.nothing_shared(by_point.len())));
    }
    let Gathered {
        keys,
        values,
        point_values,
        pooled_differs,
        notes,
        ..
    } = gathered;
    // Read for means, Extra-P's values of a series' points are given only where they are not
    // the means of its runs' values.
    let given = |differs: bool| (median || differs) && scaling != Scaling::Strong;
    let series = keys
        .into_iter()
        .zip(values)
        .zip(point_values.into_iter().zip(pooled_differs))
        .zip(complete)
        .filter(|(_, complete)| *complete)
        .map(
            |((((callpath, metric), values), (at_points, differs)), _)| Series {
                point_values: given(differs)
                    .then(|| at_points.into_iter().collect())
                    .flatten(),
                callpath,
                metric,
                points: by_point
                    .iter()
                    .zip(values)
                    .map(|((coordinate, _), values)| Point {
                        coordinate: coordinate.clone(),
                        values,
                    })
                    .collect(),
            },
        )
        .collect();
    Ok(Experiment {
        parameters,
        series,
        notes,
    })
}

/// Each call path's largest share of its run's time over the points of a Cube set's `runs`, as
/// Extra-P's small-kernel filter weighs it (which leaves out the call paths under 1 % at every
/// point): at each point, the call path's median time over a run's locations (with strong
/// `scaling`, their sum; see [`RunTimes`]) over the run's so combined, with weak scaling over
/// every location of every run at the point (its repetitions), as Extra-P pools them (strong: the
/// median of the runs' sums, as Extra-P's). A call path some points lack adds its
/// time, where it has one, to its nearest caller that every point has (exclusive values), as
/// Extra-P merges it. In the order first met; empty where the set has no `time` or no points.
pub fn time_shares(runs: &[Run], scaling: Scaling) -> Vec<(String, f64)> {
    let Ok((_, by_point)) = points_of(runs) else {
        return Vec::new();
    };
    let inclusive = runs.iter().any(|r| r.profile.values == Values::Inclusive);
    // Per call path, in the order first met: its time at each point (the median of its runs').
    let mut callpaths: Vec<String> = Vec::new();
    let mut at_points: Vec<Vec<Option<f64>>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut run_at_points: Vec<f64> = Vec::with_capacity(by_point.len());
    for (point, (_, group)) in by_point.iter().enumerate() {
        // Each run's times (its point's, pooled) beside its `time` call paths' names.
        let pooled = point_times(group, scaling);
        let times: Vec<(RunTimes, &ProfileMetric)> = (group.iter().enumerate())
            .filter_map(|(i, r)| {
                let time = r.profile.metrics.iter().find(|m| m.name == "time")?;
                let times = match &pooled {
                    Some(pooled) => pooled[i].clone()?,
                    None => r.times.clone()?,
                };
                Some((times, time))
            })
            .collect();
        run_at_points.push(super::super::median(
            &times.iter().map(|(t, _)| t.run).collect::<Vec<f64>>(),
        ));
        let mut of_runs: HashMap<&str, Vec<f64>> = HashMap::new();
        for (t, time) in &times {
            for ((callpath, _), value) in time.callpaths.iter().zip(&t.callpaths) {
                if !of_runs.contains_key(callpath.as_str()) && !index.contains_key(callpath) {
                    index.insert(callpath.clone(), callpaths.len());
                    callpaths.push(callpath.clone());
                    at_points.push(vec![None; by_point.len()]);
                }
                of_runs.entry(callpath).or_default().push(*value);
            }
        }
        for (callpath, values) in of_runs {
            at_points[index[callpath]][point] = Some(super::super::median(&values));
        }
    }
    let complete: Vec<bool> = (at_points.iter())
        .map(|at| at.iter().all(Option::is_some))
        .collect();
    for k in (0..callpaths.len()).filter(|&k| !complete[k] && !inclusive) {
        let target = nearest_complete_caller(&callpaths[k], |caller| {
            index.get(caller).filter(|&&t| complete[t])
        });
        if let Some(t) = target {
            let adds = at_points[k].clone();
            for (to, add) in at_points[t].iter_mut().zip(adds) {
                if let (Some(to), Some(add)) = (to.as_mut(), add) {
                    *to += add;
                }
            }
        }
    }
    (0..callpaths.len())
        .filter(|&k| complete[k])
        .map(|k| {
            let share = (at_points[k].iter().zip(&run_at_points))
                .filter_map(|(time, run)| Some(time.as_ref()? / run))
                .filter(|r| r.is_finite())
                .fold(0.0, f64::max);
            (callpaths[k].clone(), share)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_give_parameters_in_every_spelling_extrap_reads() {
        let named = |folder: &str| -> Vec<(String, f64)> { folder_parameters(folder).unwrap() };
        let pairs = |p: &[(&str, f64)]| -> Vec<(String, f64)> {
            p.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect()
        };
        assert_eq!(
            named("mm.x10y25z1.r1"),
            pairs(&[("x", 10.0), ("y", 25.0), ("z", 1.0)])
        );
        assert_eq!(
            named("x10y1z1"),
            pairs(&[("x", 10.0), ("y", 1.0), ("z", 1.0)])
        );
        assert_eq!(
            named("mm.x1.1y1.1z1.1"),
            pairs(&[("x", 1.1), ("y", 1.1), ("z", 1.1)])
        );
        assert_eq!(
            named("mm.x20,5.y20,5.z1,5.r1"),
            pairs(&[("x", 20.5), ("y", 20.5), ("z", 1.5)])
        );
        assert_eq!(
            named("mm.x21.5,y21,5,z1.15.r1"),
            pairs(&[("x", 21.5), ("y", 21.5), ("z", 1.15)])
        );
        assert_eq!(
            named("lulesh.p64s30.r3"),
            pairs(&[("p", 64.0), ("s", 30.0)])
        );
        assert_eq!(
            named("kripke.p8.d2.g32.r1"),
            pairs(&[("p", 8.0), ("d", 2.0), ("g", 32.0)])
        );
        // A parameter whose name starts with r (Extra-P would cut the name at `.ranks`).
        assert_eq!(
            named("app.ranks64.size30.r2"),
            pairs(&[("ranks", 64.0), ("size", 30.0)])
        );
        for (folder, wanted) in [
            ("mm.10x.r1", "a value before any parameter's name"),
            ("mm.x1y.r1", "parameter \"y\" has no value"),
            ("mm.x1.2.3y1.r1", "x's value \"1.2.3\" is not a number"),
            ("mm.r1", "no parameter in the folder's name"),
            ("scorep-20261206_1200_123", "Score-P's own name"),
        ] {
            let e = folder_parameters(folder).unwrap_err();
            assert!(e.contains(wanted), "{folder}: {e}");
        }
    }

    /// A run at `folder` of one metric (`time`), each call path's values at its locations.
    fn run(folder: &str, callpaths: &[(&str, &[f64])]) -> Run {
        Run {
            folder: folder.to_owned(),
            file: "profile.cubex".to_owned(),
            times: None,
            time_at_locations: None,
            point_medians: None,
            location_counts: None,
            profile: Profile {
                locations: callpaths.first().map_or(1, |(_, v)| v.len()),
                values: Values::Exclusive,
                metrics: vec![ProfileMetric {
                    name: "time".to_owned(),
                    unit: "sec".to_owned(),
                    aggregation: Aggregation::Sum,
                    callpaths: callpaths
                        .iter()
                        .map(|(c, v)| ((*c).to_owned(), v.to_vec()))
                        .collect(),
                }],
                notes: Vec::new(),
            },
        }
    }

    #[test]
    fn runs_become_points_and_repetitions_by_the_parameters_that_change() {
        let runs = [
            run("app.p4n10.r1", &[("main", &[1.0, 3.0])]),
            run("app.p2n10.r1", &[("main", &[2.0, 2.0])]),
            run("app.p4n10.r2", &[("main", &[3.0, 5.0])]),
            run("app.p8n10.r1", &[("main", &[0.0, 8.0])]),
        ];
        let e = cube_set(&runs, Scaling::Weak, false).unwrap();
        // n never changes: not a parameter.
        assert_eq!(e.parameters, ["p"]);
        let points: Vec<(f64, Vec<f64>)> = e.series[0]
            .points
            .iter()
            .map(|p| (p.coordinate[0], p.values.clone()))
            .collect();
        assert_eq!(
            points,
            [(2.0, vec![2.0]), (4.0, vec![2.0, 4.0]), (8.0, vec![4.0])]
        );
        let strong = cube_set(&runs, Scaling::Strong, false).unwrap();
        assert_eq!(strong.series[0].points[1].values, [4.0, 8.0]);
        // Threads that never ran the call path are left out of the threaded mean.
        let threaded = cube_set(&runs, Scaling::WeakThreaded, false).unwrap();
        assert_eq!(threaded.series[0].points[2].values, [8.0]);
        assert!(
            e.notes
                .last()
                .unwrap()
                .contains("the mean over its 2 locations")
        );
    }

    #[test]
    fn runs_combined_as_they_are_read_give_the_experiment_of_their_whole_profiles() {
        // Two locations, one that never ran `main->init` (threaded weak scaling leaves it out),
        // a location whose value is not a number (that run is left out of its point, said), a
        // call path one point lacks (added to its caller), and a minimum of each kind.
        let runs: Vec<Run> = [
            run(
                "a.p1.r1",
                &[("main", &[1.0, 3.0]), ("main->init", &[0.0, 0.5])],
            ),
            run(
                "a.p1.r2",
                &[("main", &[2.0, 2.5]), ("main->init", &[0.25, 0.5])],
            ),
            run(
                "a.p2.r1",
                &[("main", &[4.0, f64::NAN]), ("main->init", &[1.0, 0.0])],
            ),
            run(
                "a.p2.r2",
                &[("main", &[4.5, 5.0]), ("main->init", &[0.75, 0.0])],
            ),
            run("a.p4.r1", &[("main", &[5.0, 9.0])]),
        ]
        .into_iter()
        .map(|mut r| {
            let mut least = r.profile.metrics[0].clone();
            least.name = "min_time".to_owned();
            least.aggregation = Aggregation::Minimum;
            r.profile.metrics.push(least);
            r
        })
        .collect();
        for scaling in [Scaling::Weak, Scaling::WeakThreaded, Scaling::Strong] {
            for median in [false, true] {
                let whole = cube_set(&runs, scaling, median).unwrap();
                let combined: Vec<Run> = runs
                    .iter()
                    .map(|r| r.clone().combined(scaling, median))
                    .collect();
                assert!(
                    combined[0].profile.metrics[0]
                        .callpaths
                        .iter()
                        .all(|(_, v)| v.len() == 1)
                );
                let read = cube_set(&combined, scaling, median).unwrap();
                assert_eq!(read.parameters, whole.parameters);
                assert_eq!(read.notes, whole.notes, "{scaling:?}, median {median}");
                assert_eq!(read.series.len(), whole.series.len());
                for (a, b) in read.series.iter().zip(&whole.series) {
                    assert_eq!((&a.callpath, &a.metric), (&b.callpath, &b.metric));
                    assert_eq!(a.points, b.points, "{scaling:?}, median {median}");
                }
            }
        }
    }

    #[test]
    fn a_call_path_some_points_lack_is_added_to_its_caller() {
        let runs = [
            run("a.p1", &[("main", &[1.0]), ("main->init", &[0.5])]),
            run("a.p2", &[("main", &[2.0])]),
            run("a.p3", &[("main", &[3.0]), ("main->init", &[0.25])]),
        ];
        let e = cube_set(&runs, Scaling::Weak, false).unwrap();
        assert_eq!(e.series.len(), 1);
        let values: Vec<f64> = e.series[0].points.iter().map(|p| p.values[0]).collect();
        assert_eq!(values, [1.5, 2.0, 3.25]);
        assert!(
            e.notes[0]
                .contains("main->init has values at 2 of the 3 points: added to its caller main"),
            "{:?}",
            e.notes
        );
    }

    #[test]
    fn with_inclusive_values_a_call_path_some_points_lack_is_left_out() {
        let mut runs = [
            run("a.p1", &[("main", &[1.5]), ("main->init", &[0.5])]),
            run("a.p2", &[("main", &[2.0])]),
            run("a.p3", &[("main", &[3.25]), ("main->init", &[0.25])]),
        ];
        for r in &mut runs[1..] {
            r.profile.values = Values::Inclusive;
        }
        let mixed = cube_set(&runs, Scaling::Weak, false).unwrap_err();
        assert!(mixed.message.contains("read every run's the same way"));
        runs[0].profile.values = Values::Inclusive;
        let e = cube_set(&runs, Scaling::Weak, false).unwrap();
        assert_eq!(e.series.len(), 1);
        let values: Vec<f64> = e.series[0].points.iter().map(|p| p.values[0]).collect();
        assert_eq!(values, [1.5, 2.0, 3.25]);
        assert!(
            e.notes[0].contains(
                "main->init has values at 2 of the 3 points: left out, its inclusive values are \
                 in its callers'"
            ),
            "{:?}",
            e.notes
        );
        assert!(
            e.notes[1]
                .contains("each run's inclusive value of a call path (its callees' included)")
        );
    }

    #[test]
    fn a_call_path_s_share_of_the_run_is_its_largest_over_the_points() {
        let runs = [
            run(
                "a.p1",
                &[
                    ("main", &[1.0]),
                    ("main->init", &[0.5]),
                    ("main->solve", &[8.5]),
                ],
            ),
            run(
                "a.p2",
                &[
                    ("main", &[1.0]),
                    ("main->init", &[0.1]),
                    ("main->solve", &[18.9]),
                ],
            ),
            run(
                "a.p3",
                &[
                    ("main", &[1.0]),
                    ("main->init", &[0.1]),
                    ("main->solve", &[28.9]),
                ],
            ),
        ];
        let shares = time_shares(&runs, Scaling::Weak);
        let share = |c: &str| shares.iter().find(|(p, _)| p == c).unwrap().1;
        // A run takes 10, 20, 30 s: init 5 % at p = 1, less after.
        assert!((share("main") - 0.1).abs() < 1e-12);
        assert!((share("main->init") - 0.05).abs() < 1e-12);
        assert!((share("main->solve") - 28.9 / 30.0).abs() < 1e-12);
        // Read inclusive, the root is the run.
        let mut inclusive = runs.clone();
        for r in &mut inclusive {
            r.profile.values = Values::Inclusive;
            r.profile.metrics[0].callpaths[0].1[0] = 10.0 * r.folder[3..].parse::<f64>().unwrap();
        }
        let shares = time_shares(&inclusive, Scaling::Weak);
        assert_eq!(shares[0], ("main".to_owned(), 1.0));
        assert!((shares[1].1 - 0.05).abs() < 1e-12);
    }

    /// Shares weigh a run's locations by their median, as Extra-P's filter does: a call path
    /// one rank of three spends its time in takes no share of the median rank's run (by the
    /// mean it would take a ninth); a call path some points lack adds its time to its caller's
    /// where it has one.
    #[test]
    fn shares_are_medians_over_a_run_s_locations() {
        let runs = [
            run(
                "a.p1",
                &[
                    ("main", &[0.0, 0.0, 0.0]),
                    ("main->solve", &[9.0, 9.0, 6.0]),
                    ("main->comm", &[0.0, 0.0, 3.0]),
                ],
            ),
            run(
                "a.p2.r1",
                &[
                    ("main", &[0.0, 0.0, 0.0]),
                    ("main->solve", &[9.0, 9.0, 9.0]),
                    ("main->comm", &[1.0, 1.0, 1.0]),
                    ("main->comm->wait", &[1.0, 1.0, 1.0]),
                ],
            ),
            run(
                "a.p2.r2",
                &[
                    ("main", &[0.0, 0.0, 0.0]),
                    ("main->solve", &[9.0, 9.0, 9.0]),
                    ("main->comm", &[3.0, 3.0, 3.0]),
                    ("main->comm->wait", &[3.0, 3.0, 3.0]),
                ],
            ),
        ];
        let shares = time_shares(&runs, Scaling::Weak);
        let share = |c: &str| shares.iter().find(|(p, _)| p == c).map(|(_, s)| *s);
        // At p = 2 the run takes 11 or 15 s (median 13), comm 1 or 3 (2) and its callee's 1 or 3
        // (2) added: 4 / 13.
        assert!(
            (share("main->comm").unwrap() - 4.0 / 13.0).abs() < 1e-12,
            "{shares:?}"
        );
        assert!(
            (share("main->solve").unwrap() - 1.0).abs() < 1e-12,
            "{shares:?}"
        );
        assert_eq!(share("main->comm->wait"), None, "{shares:?}");
        // Read whole and combined as read, the same.
        let combined: Vec<Run> = (runs.iter())
            .map(|r| r.clone().combined(Scaling::Weak, false))
            .collect();
        assert_eq!(time_shares(&combined, Scaling::Weak), shares);
        // Summed over the locations (strong scaling), comm's 3 s of 27 at p = 1 (here twice).
        let mut again = runs[0].clone();
        again.folder = "a.p3".to_owned();
        let twice = [runs[0].clone(), again];
        let strong = time_shares(&twice, Scaling::Strong);
        assert!((strong[2].1 - 3.0 / 27.0).abs() < 1e-12, "{strong:?}");
        assert_eq!(time_shares(&twice, Scaling::Weak)[2].1, 0.0);
    }

    /// A point's repetitions pool their locations, as Extra-P's filter does: a call path's
    /// median and its run's are over every location of every repetition there, not the median
    /// of the repetitions' own; read whole, combined run by run, or a point's runs together, the
    /// same. Threaded, a call path's locations are those that measured it, but the run's own
    /// time counts every location, as Extra-P's median of its root's values does.
    #[test]
    fn a_point_s_repetitions_pool_their_locations() {
        let runs = [
            run(
                "a.p1.r1",
                &[("main->x", &[1.0, 1.0, 5.0]), ("main->y", &[9.0; 3])],
            ),
            run(
                "a.p1.r2",
                &[("main->x", &[5.0, 6.0, 7.0]), ("main->y", &[9.0; 3])],
            ),
            run(
                "a.p2",
                &[("main->x", &[1.0, 1.0, 5.0]), ("main->y", &[9.0; 3])],
            ),
        ];
        let x = |shares: &[(String, f64)]| shares[0].1;
        // At p = 1, x over {1, 1, 5, 5, 6, 7}: 5; the run over {10, 10, 14, 14, 15, 16}: 14 (by
        // the repetitions' own medians: (1 + 6) / 2 over (10 + 15) / 2). At p = 2, 1 over 10.
        let shares = time_shares(&runs, Scaling::Weak);
        assert!((x(&shares) - 5.0 / 14.0).abs() < 1e-12, "{shares:?}");
        let one_by_one: Vec<Run> = (runs.iter())
            .map(|r| r.clone().combined(Scaling::Weak, false))
            .collect();
        assert_eq!(time_shares(&one_by_one, Scaling::Weak), shares);
        let together: Vec<Run> = group_by_point(runs.iter().map(|r| (r.folder.clone(), r.clone())))
            .into_iter()
            .flat_map(|point| combine_point(point, Scaling::Weak, false))
            .collect();
        assert!(together.iter().all(|r| r.time_at_locations.is_none()));
        assert_eq!(time_shares(&together, Scaling::Weak), shares);
        // Combined run by run, then a point's runs together, the same.
        let mut twice = combine_point(one_by_one[..2].to_vec(), Scaling::Weak, false);
        twice.push(one_by_one[2].clone());
        assert_eq!(time_shares(&twice, Scaling::Weak), shares);
        // Threaded: x measured at two threads of three, over {2, 4}: 3; the run over {0, 2, 4}.
        let threaded = [
            run("a.p1", &[("main->x", &[0.0, 2.0, 4.0])]),
            run("a.p2", &[("main->x", &[0.0, 2.0, 4.0])]),
        ];
        let shares = time_shares(&threaded, Scaling::WeakThreaded);
        assert!((x(&shares) - 3.0 / 2.0).abs() < 1e-12, "{shares:?}");
        // Strong: the median of the repetitions' sums, 7 and 18 over 34 and 45 (at p = 2, 7 / 34).
        let strong = time_shares(&runs, Scaling::Strong);
        assert!((x(&strong) - 12.5 / 39.5).abs() < 1e-12, "{strong:?}");
    }

    /// A point's runs are read together wherever their folders lie in the listing; a folder that
    /// names no parameters is a group of its own.
    #[test]
    fn runs_are_grouped_by_the_point_their_folders_name() {
        let folders = [
            "a.p1.r1", "a.p2.r1", "a.p1.r2", "scorep-x", "a.p2.r2", "b.p1",
        ];
        let groups = group_by_point(folders.iter().map(|f| ((*f).to_owned(), *f)));
        assert_eq!(
            groups,
            [
                vec!["a.p1.r1", "a.p1.r2", "b.p1"],
                vec!["a.p2.r1", "a.p2.r2"],
                vec!["scorep-x"]
            ]
        );
    }

    /// A profile that measured nothing at any location (fuzz/regressions/cube_profile/
    /// threads-that-measured-nothing) gives a share of 0, by any scaling: its median over no
    /// location is not a number, as its mean is, where it was once a panic.
    #[test]
    fn runs_that_measured_at_no_location_take_no_share() {
        let runs = [run("a.p1", &[("main", &[])]), run("a.p2", &[("main", &[])])];
        assert_eq!(runs[0].profile.locations, 0);
        for scaling in [Scaling::Weak, Scaling::WeakThreaded, Scaling::Strong] {
            assert_eq!(time_shares(&runs, scaling), [("main".to_owned(), 0.0)]);
        }
    }

    #[test]
    fn a_run_whose_value_is_not_a_number_is_left_out_of_its_point_and_said() {
        let runs = [
            run("a.p1", &[("main", &[1.0])]),
            run("a.p2.r1", &[("main", &[2.0])]),
            run("a.p2.r2", &[("main", &[f64::NAN])]),
            run("a.p3", &[("main", &[3.0])]),
        ];
        let e = cube_set(&runs, Scaling::Weak, false).unwrap();
        assert_eq!(e.series[0].points[1].values, [2.0]);
        assert!(
            e.notes[0].starts_with("a.p2.r2/profile.cubex: call path main, metric time: a value"),
            "{:?}",
            e.notes
        );
    }

    #[test]
    fn runs_of_different_programs_are_refused_naming_what_each_measured() {
        let runs = [
            run("a.p1", &[("main", &[1.0])]),
            run("a.p2", &[("PARALLEL", &[2.0])]),
            run("a.p3", &[("main", &[3.0])]),
        ];
        let e = cube_set(&runs, Scaling::Weak, false).unwrap_err();
        assert!(
            e.message
                .contains("no call path has values at all 3 points")
                && e.message.contains("main at 2, PARALLEL at 1"),
            "{e}"
        );
    }

    #[test]
    fn sets_that_give_no_experiment_are_refused_naming_the_run() {
        let refused = |runs: &[Run], wanted: &str| {
            let e = cube_set(runs, Scaling::Weak, false).unwrap_err();
            assert_eq!(e.line, 0);
            assert!(e.message.contains(wanted), "{}", e.message);
        };
        refused(&[], "no Cube profile");
        refused(
            &[
                run("a.p1n2", &[("main", &[1.0])]),
                run("a.n2p1", &[("main", &[1.0])]),
            ],
            "a.n2p1/profile.cubex: parameters [\"n\", \"p\"], where a.p1n2's are [\"p\", \"n\"]",
        );
        refused(
            &[
                run("a.p1.r1", &[("main", &[1.0])]),
                run("a.p1.r2", &[("main", &[1.0])]),
            ],
            "no parameter changes",
        );
        refused(
            &[run("a.1p", &[("main", &[1.0])])],
            "a.1p/profile.cubex: \"a.1p\": a value before",
        );
    }
}
