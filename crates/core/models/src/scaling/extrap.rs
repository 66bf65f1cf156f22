//! Measured runs as Extra-P's experiments (`yosoku export --format extrap`), the same call paths
//! the scaling models fit ([`super::input`]): one call path per device, program and variant
//! (`device->program`, `->variant` when there is one), metric `time` (per phase when a table has
//! several), the time of one repetition in seconds, repeats of one point as its values.
//!
//! A call path's parameters are those with a number in every one of its runs that vary among
//! them. Extra-P wants every call path of an experiment measured at every point of it: the call
//! paths are grouped into one experiment per set of points, each with the parameters that vary
//! in it; call paths measured at one point only are left out and named.

use std::collections::{BTreeMap, BTreeSet};

use arrow_array::RecordBatch;
use yosoku_regression::pmnf::Point;
use yosoku_regression::pmnf::extrap::{Experiment, Series, to_json};

use super::input::{call_path_runs, drop_restated};
use crate::ModelError;

/// One Extra-P experiment: its call paths and its JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtrapExperiment {
    pub callpaths: Vec<String>,
    pub json: String,
}

/// The experiments of a bundle's `runs` tables, and the call paths left out of every one (those
/// measured at one point only).
#[derive(Debug, Clone, PartialEq)]
pub struct ExtrapExport {
    pub experiments: Vec<ExtrapExperiment>,
    pub left_out: Vec<String>,
}

/// One measured run, as Extra-P sees it.
struct Run {
    callpath: String,
    metric: String,
    params: BTreeMap<String, f64>,
    /// The parameters' names in the order the run's `parameters` wrote them.
    order: Vec<String>,
    secs: f64,
}

/// The runs of one `runs` table, each named by its Extra-P call path and metric.
fn runs_of(name: &str, batch: &RecordBatch) -> Result<Vec<Run>, ModelError> {
    let rows =
        call_path_runs(batch).map_err(|e| ModelError::invalid(format!("table `{name}`: {e}")))?;
    let devices: BTreeSet<&str> = rows.iter().map(|(k, _, _)| k[0].as_str()).collect();
    let phases: BTreeSet<&str> = rows.iter().map(|(k, _, _)| k[3].as_str()).collect();
    let (many_devices, many_phases) = (devices.len() > 1, phases.len() > 1);
    Ok(rows
        .iter()
        .map(|([device, program, variant, phase], params, secs)| {
            let mut callpath = if many_devices {
                format!("{device}->{program}")
            } else {
                program.clone()
            };
            if !variant.is_empty() {
                callpath = format!("{callpath}->{variant}");
            }
            Run {
                callpath,
                metric: if many_phases {
                    format!("{phase} time")
                } else {
                    "time".to_owned()
                },
                order: params.iter().map(|(k, _)| k.clone()).collect(),
                params: params.iter().cloned().collect(),
                secs: *secs,
            }
        })
        .collect())
}

/// Every run of `runs` (`<namespace>.runs` tables, by name) as Extra-P experiments. A call path
/// that two tables both measure (one program measured on two machines, say) is two call paths,
/// each named after its table's namespace (`himeno16_paths->himeno_mpi->...`): their runs are
/// separate experiments, never one call path's repetitions.
pub fn experiments(runs: &[(&str, &RecordBatch)]) -> Result<ExtrapExport, ModelError> {
    let mut tables = Vec::new();
    for (name, batch) in runs {
        tables.push((*name, runs_of(name, batch)?));
    }
    let mut measured_by: BTreeMap<(String, String), BTreeSet<&str>> = BTreeMap::new();
    for (name, table) in &tables {
        for r in table {
            measured_by
                .entry((r.callpath.clone(), r.metric.clone()))
                .or_default()
                .insert(name);
        }
    }
    let mut all = Vec::new();
    for (name, table) in tables {
        let namespace = name.rsplit_once('.').map_or(name, |(n, _)| n);
        for mut r in table {
            if measured_by[&(r.callpath.clone(), r.metric.clone())].len() > 1 {
                r.callpath = format!("{namespace}->{}", r.callpath);
            }
            all.push(r);
        }
    }
    let mut by_path: BTreeMap<(&str, &str), Vec<&Run>> = BTreeMap::new();
    for r in &all {
        by_path
            .entry((r.callpath.as_str(), r.metric.as_str()))
            .or_default()
            .push(r);
    }
    experiments_by_points(&by_path)
}

/// A call path's parameters, in the order its runs write them: numeric in every one of its
/// runs and varying among them (the runs of one bundle may be of several programs, each over
/// its own parameters), less each one that only restates an earlier one (a launch's global size
/// that equals its problem size), which would give Extra-P two parameters that cannot be told
/// apart.
fn parameters_of(runs: &[&Run]) -> Vec<String> {
    let mut names: Vec<String> = runs.first().map(|r| r.order.clone()).unwrap_or_default();
    names.retain(|k| runs.iter().all(|r| r.params.contains_key(k)));
    names.retain(|k| {
        runs.iter()
            .any(|r| r.params.get(k) != runs[0].params.get(k))
    });
    let numeric: Vec<Vec<(String, f64)>> = runs
        .iter()
        .map(|r| names.iter().map(|k| (k.clone(), r.params[k])).collect())
        .collect();
    let numeric: Vec<&[(String, f64)]> = numeric.iter().map(Vec::as_slice).collect();
    drop_restated(names, &numeric)
}

/// The measurements of one call path and metric, sorted by point.
struct Member<'a> {
    callpath: &'a str,
    metric: &'a str,
    points: Vec<Point>,
}

/// The groups of call paths measured over the same parameters at the same points.
type PointGroups<'a> = Vec<((Vec<String>, Vec<Vec<f64>>), Vec<Member<'a>>)>;

/// One call path's points over `names`, its repeats as each point's values.
fn member<'a>(callpath: &'a str, metric: &'a str, runs: &[&Run], names: &[String]) -> Member<'a> {
    let mut points: Vec<Point> = Vec::new();
    for r in runs {
        let coordinate: Vec<f64> = names.iter().map(|k| r.params[k]).collect();
        match points.iter_mut().find(|p| p.coordinate == coordinate) {
            Some(p) => p.values.push(r.secs),
            None => points.push(Point {
                coordinate,
                values: vec![r.secs],
            }),
        }
    }
    points.sort_by(|a, b| {
        a.coordinate
            .partial_cmp(&b.coordinate)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Member {
        callpath,
        metric,
        points,
    }
}

/// One experiment per set of call paths measured over the same parameters at the same points,
/// each with the parameters that vary in it; call paths measured at one point only are left out
/// and named.
fn experiments_by_points(
    by_path: &BTreeMap<(&str, &str), Vec<&Run>>,
) -> Result<ExtrapExport, ModelError> {
    let mut groups: PointGroups<'_> = Vec::new();
    for (&(callpath, metric), runs) in by_path {
        let names = parameters_of(runs);
        let m = member(callpath, metric, runs, &names);
        let key = (
            names,
            m.points.iter().map(|p| p.coordinate.clone()).collect(),
        );
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(m),
            None => groups.push((key, vec![m])),
        }
    }
    let (groups, single): (Vec<_>, Vec<_>) = groups
        .into_iter()
        .partition(|((_, coordinates), _)| coordinates.len() > 1);
    let left_out: Vec<String> = single
        .iter()
        .flat_map(|(_, members)| members.iter().map(|m| m.callpath.to_owned()))
        .collect();
    if groups.is_empty() {
        return Err(ModelError::invalid(format!(
            "no parameter is a number in every run of a call path and varies among them ({} measured at one point only): the runs' `parameters` column holds `key=value` pairs (e.g. `n=1024;p=4`), and Extra-P models how a time changes between points",
            left_out.join(", ")
        )));
    }
    let experiments = groups
        .into_iter()
        .map(|((names, coordinates), members)| experiment(&coordinates, members, &names))
        .collect();
    Ok(ExtrapExport {
        experiments,
        left_out,
    })
}

/// One experiment: its members over the parameters that vary among `coordinates`.
fn experiment(
    coordinates: &[Vec<f64>],
    members: Vec<Member<'_>>,
    names: &[String],
) -> ExtrapExperiment {
    let varying: Vec<usize> = (0..names.len())
        .filter(|&k| coordinates.iter().any(|c| c[k] != coordinates[0][k]))
        .collect();
    let callpaths: Vec<String> = members.iter().map(|m| m.callpath.to_owned()).collect();
    let series = members
        .into_iter()
        .map(|m| Series {
            callpath: m.callpath.to_owned(),
            metric: m.metric.to_owned(),
            points: m
                .points
                .into_iter()
                .map(|p| Point {
                    coordinate: varying.iter().map(|&k| p.coordinate[k]).collect(),
                    values: p.values,
                })
                .collect(),
            point_values: None,
        })
        .collect();
    let experiment = Experiment {
        parameters: varying.iter().map(|&k| names[k].clone()).collect(),
        series,
        notes: Vec::new(),
    };
    ExtrapExperiment {
        callpaths,
        json: to_json(&experiment),
    }
}
