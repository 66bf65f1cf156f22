//! Measured runs as call paths: each run's (device, program, variant, phase), its numeric
//! parameters and the time of one repetition, grouped into the points of one call path.

use arrow_array::RecordBatch;
use yosoku_regression::pmnf::Point;
use yosoku_tables::rows::Input;
use yosoku_tables::{RUNS, col};

use crate::ModelError;

/// One call path's runs: (device, program, variant, phase) and its points.
pub(super) struct Series {
    pub key: [String; 4],
    pub points: Vec<Point>,
}

/// The `key=value` pairs of a `parameters` cell whose value is a finite number, in order (what
/// the scaling models and `yosoku export --format extrap` read of a run).
pub fn numeric_parameters(cell: &str) -> Vec<(String, f64)> {
    cell.split(';')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let v = v.trim().parse::<f64>().ok().filter(|v| v.is_finite())?;
            Some((k.trim().to_owned(), v))
        })
        .collect()
}

/// `names` less each one that only restates an earlier one over `runs` (each run's numeric
/// parameters): one value of either for each value of the other, as a launch's global size that
/// equals its problem size (`n=1024;global=1024`). Two such parameters cannot be told apart by a
/// model (nor by Extra-P, which `yosoku export --format extrap` writes for). Every run must have
/// every name.
pub fn drop_restated(names: Vec<String>, runs: &[&[(String, f64)]]) -> Vec<String> {
    let value = |p: &[(String, f64)], k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let one_to_one = |a: &str, b: &str| {
        runs.iter().all(|r| {
            runs.iter()
                .all(|q| (value(r, a) == value(q, a)) == (value(r, b) == value(q, b)))
        })
    };
    let mut kept: Vec<String> = Vec::new();
    for k in names {
        if !kept.iter().any(|j| one_to_one(j, &k)) {
            kept.push(k);
        }
    }
    kept
}

/// A run: its call path (device, program, variant, phase), its numeric parameters in the order
/// its `parameters` cell writes them, and the time of one repetition.
pub type RunValues = ([String; 4], Vec<(String, f64)>, f64);

/// Every run of a `runs` table, read as the scaling models and Extra-P's export see it.
pub fn call_path_runs(batch: &RecordBatch) -> Result<Vec<RunValues>, ModelError> {
    let input = Input::new("runs", &RUNS, batch)?;
    let (device, program, variant) = (
        input.utf8(col::DEVICE)?,
        input.utf8(col::PROGRAM)?,
        input.utf8(col::VARIANT)?,
    );
    let (phase, params) = (input.utf8(col::PHASE)?, input.utf8(col::PARAMETERS)?);
    let secs = input.float64(col::MEASURED_SECS)?;
    let reps = input.int64(col::REPETITIONS)?;
    Ok((0..input.rows())
        .map(|r| {
            let key =
                [&device, &program, &variant, &phase].map(|c| c.get(r).unwrap_or("").to_owned());
            let p = params.get(r).map(numeric_parameters).unwrap_or_default();
            (key, p, secs.value(r) / reps.value(r).max(1) as f64)
        })
        .collect())
}

/// The runs of `batch` as series over `names` (chosen as [`super::ScalingSpec::parameters`]
/// says).
pub(super) fn series(
    batch: &RecordBatch,
    wanted: &[String],
) -> Result<(Vec<String>, Vec<Series>), ModelError> {
    let rows = call_path_runs(batch)?;
    let value = |p: &[(String, f64)], k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let names: Vec<String> = if wanted.is_empty() {
        let mut names: Vec<String> = rows
            .first()
            .map(|(_, p, _)| p.iter().map(|(k, _)| k.clone()).collect())
            .unwrap_or_default();
        names.retain(|k| rows.iter().all(|(_, p, _)| value(p, k).is_some()));
        names.retain(|k| {
            rows.iter().any(|(key, p, _)| {
                rows.iter()
                    .any(|(key2, p2, _)| key == key2 && value(p, k) != value(p2, k))
            })
        });
        let params: Vec<&[(String, f64)]> = rows.iter().map(|(_, p, _)| p.as_slice()).collect();
        drop_restated(names, &params)
    } else {
        for k in wanted {
            if let Some((key, _, _)) = rows.iter().find(|(_, p, _)| value(p, k).is_none()) {
                return Err(ModelError::invalid(format!(
                    "parameter `{k}`: the run of {} has no number for it in `parameters`",
                    key.join(" / ")
                )));
            }
        }
        wanted.to_vec()
    };
    if names.is_empty() {
        return Err(ModelError::invalid(
            "no parameter is a number in every run and varies within a call path: the runs' `parameters` hold `key=value` pairs (`n=1024;p=4`), and a scaling model needs one that changes",
        ));
    }
    let mut out: Vec<Series> = Vec::new();
    for (key, p, secs) in rows {
        let coordinate: Vec<f64> = names.iter().filter_map(|k| value(&p, k)).collect();
        let i = match out.iter().position(|s| s.key == key) {
            Some(i) => i,
            None => {
                out.push(Series {
                    key,
                    points: Vec::new(),
                });
                out.len() - 1
            }
        };
        let points = &mut out[i].points;
        match points.iter_mut().find(|q| q.coordinate == coordinate) {
            Some(q) => q.values.push(secs),
            None => points.push(Point {
                coordinate,
                values: vec![secs],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| {
            a.coordinate
                .partial_cmp(&b.coordinate)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    Ok((names, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_that_restates_an_earlier_one_is_dropped() {
        let p = |n: f64, global: f64, ranks: f64| {
            vec![
                ("n".to_owned(), n),
                ("global".to_owned(), global),
                ("ranks".to_owned(), ranks),
            ]
        };
        // global = 2 n: one value of either for each of the other; ranks varies on its own.
        let runs = [
            p(1.0, 2.0, 1.0),
            p(2.0, 4.0, 1.0),
            p(2.0, 4.0, 2.0),
            p(3.0, 6.0, 2.0),
        ];
        let runs: Vec<&[(String, f64)]> = runs.iter().map(Vec::as_slice).collect();
        let names = vec!["n".to_owned(), "global".to_owned(), "ranks".to_owned()];
        assert_eq!(drop_restated(names, &runs), ["n", "ranks"]);
        // A parameter that takes one value where another takes two is kept.
        let runs = [p(1.0, 5.0, 1.0), p(2.0, 5.0, 1.0), p(3.0, 6.0, 1.0)];
        let runs: Vec<&[(String, f64)]> = runs.iter().map(Vec::as_slice).collect();
        let names = vec!["n".to_owned(), "global".to_owned()];
        assert_eq!(drop_restated(names, &runs), ["n", "global"]);
    }
}
