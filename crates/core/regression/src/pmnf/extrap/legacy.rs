//! Extra-P's legacy JSON format (Extra-P 3's, which Extra-P 4 still reads): `parameters`,
//! `callpaths`, `metrics` and `coordinates` as lists of objects with an `id`, and `measurements`
//! a flat list, each naming its call path, metric and coordinate by id; a coordinate's
//! `parameter_value_pairs` name their parameters by id too. One measurement is one repetition.

use serde_json::Value;

use super::super::Point;
use super::experiment::{Experiment, InputError, end_line, error, line_of};

/// Each listed object's `id` and `name` (a `parameters`, `callpaths` or `metrics` list).
fn names(doc: &Value, list: &str, text: &str) -> Result<Vec<(i64, String)>, InputError> {
    let line = line_of(text, &format!("\"{list}\""));
    doc.get(list)
        .and_then(Value::as_array)
        .ok_or_else(|| error(end_line(text), format!("no `{list}` list in the file")))?
        .iter()
        .map(|item| {
            let id = item.get("id").and_then(Value::as_i64);
            let name = item.get("name").and_then(Value::as_str);
            match (id, name) {
                (Some(id), Some(name)) => Ok((id, name.to_owned())),
                _ => Err(error(
                    line,
                    format!("`{list}`: an entry without an integer `id` and a text `name`: {item}"),
                )),
            }
        })
        .collect()
}

/// The position, among the ids of the `list` it refers to, of the id under `key` in `object`
/// (`owner` says which object, for the error).
fn index_of(
    ids: &[i64],
    object: &Value,
    key: &str,
    (list, owner): (&str, &str),
    line: usize,
) -> Result<usize, InputError> {
    let id = object.get(key).and_then(Value::as_i64);
    id.and_then(|id| ids.iter().position(|&i| i == id))
        .ok_or_else(|| {
            let id = id.map_or_else(|| "missing".to_owned(), |id| id.to_string());
            error(
                line,
                format!("{owner}: `{key}` ({id}) names none of the `{list}`"),
            )
        })
}

/// A JSON number, or a number written as text (Extra-P reads either), as a finite value.
fn finite(v: Option<&Value>) -> Option<f64> {
    let x = match v? {
        Value::String(s) => s.trim().parse().ok()?,
        v => v.as_f64()?,
    };
    x.is_finite().then_some(x)
}

/// Every coordinate by id, its values in the parameters' order (`parameter_ids`).
fn coordinates(
    doc: &Value,
    parameter_ids: &[i64],
    text: &str,
) -> Result<Vec<(i64, Vec<f64>)>, InputError> {
    let line = line_of(text, "\"coordinates\"");
    let list = doc
        .get("coordinates")
        .and_then(Value::as_array)
        .ok_or_else(|| error(end_line(text), "no `coordinates` list in the file"))?;
    list.iter()
        .map(|c| {
            let id = c.get("id").and_then(Value::as_i64).ok_or_else(|| {
                error(
                    line,
                    format!("`coordinates`: an entry without an integer `id`: {c}"),
                )
            })?;
            let pairs = c
                .get("parameter_value_pairs")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    error(
                        line,
                        format!("coordinate {id}: no `parameter_value_pairs` list"),
                    )
                })?;
            let mut values = vec![None; parameter_ids.len()];
            for pair in pairs {
                let owner = format!("coordinate {id}");
                let at = index_of(
                    parameter_ids,
                    pair,
                    "parameter_id",
                    ("parameters", &owner),
                    line,
                )?;
                let value = finite(pair.get("parameter_value")).ok_or_else(|| {
                    error(
                        line,
                        format!("coordinate {id}: `{pair}`: the value is not a finite number"),
                    )
                })?;
                if values[at].replace(value).is_some() {
                    return Err(error(
                        line,
                        format!("coordinate {id}: a parameter given twice"),
                    ));
                }
            }
            let values = values
                .into_iter()
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| {
                    error(
                        line,
                        format!(
                            "coordinate {id}: {} of the {} parameters given",
                            pairs.len(),
                            parameter_ids.len()
                        ),
                    )
                })?;
            Ok((id, values))
        })
        .collect()
}

/// Who refers to call paths, metrics and coordinates, in errors.
const MEASUREMENT: &str = "a measurement";

/// Reads the legacy format's document `doc` (the file's `text`, for the lines errors name).
/// Series are in order of their first measurement, a series' points in order of theirs; every
/// id refers to a listed object (Extra-P takes an id as a position in its list sorted by id,
/// which is the same where the ids are 1, 2, 3, ...).
pub(super) fn parse(doc: &Value, text: &str) -> Result<Experiment, InputError> {
    let mut parameters = names(doc, "parameters", text)?;
    parameters.sort_by_key(|(id, _)| *id);
    let parameter_ids: Vec<i64> = parameters.iter().map(|(id, _)| *id).collect();
    let callpaths = names(doc, "callpaths", text)?;
    let metrics = names(doc, "metrics", text)?;
    let coordinates = coordinates(doc, &parameter_ids, text)?;
    let ids = |list: &[(i64, String)]| list.iter().map(|(id, _)| *id).collect::<Vec<_>>();
    let (callpath_ids, metric_ids) = (ids(&callpaths), ids(&metrics));
    let coordinate_ids: Vec<i64> = coordinates.iter().map(|(id, _)| *id).collect();
    let line = line_of(text, "\"measurements\"");
    let list = doc
        .get("measurements")
        .and_then(Value::as_array)
        .ok_or_else(|| error(end_line(text), "no `measurements` list in the file"))?;
    let mut e = Experiment {
        parameters: parameters.into_iter().map(|(_, name)| name).collect(),
        ..Experiment::default()
    };
    for m in list {
        let callpath = &callpaths[index_of(
            &callpath_ids,
            m,
            "callpath_id",
            ("callpaths", MEASUREMENT),
            line,
        )?]
        .1;
        let metric =
            &metrics[index_of(&metric_ids, m, "metric_id", ("metrics", MEASUREMENT), line)?].1;
        let coordinate = &coordinates[index_of(
            &coordinate_ids,
            m,
            "coordinate_id",
            ("coordinates", MEASUREMENT),
            line,
        )?]
        .1;
        let value = finite(m.get("value")).ok_or_else(|| {
            error(
                line,
                format!("a measurement's `value` is not a finite number: {m}"),
            )
        })?;
        let series = e.series_mut(callpath, metric);
        match series
            .points
            .iter_mut()
            .find(|p| &p.coordinate == coordinate)
        {
            Some(p) => p.values.push(value),
            None => series.points.push(Point {
                coordinate: coordinate.clone(),
                values: vec![value],
            }),
        }
    }
    if e.series.is_empty() {
        return Err(error(end_line(text), "no measurement in the file"));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::super::parse_json;

    const LEGACY: &str = r#"{
  "callpaths": [{"id": 1, "name": "sweep"}],
  "coordinates": [
    {"id": 2, "parameter_value_pairs": [{"parameter_id": 7, "parameter_value": 8}, {"parameter_id": 3, "parameter_value": 1}]},
    {"id": 1, "parameter_value_pairs": [{"parameter_id": 3, "parameter_value": 2}, {"parameter_id": 7, "parameter_value": 4}]}
  ],
  "measurements": [
    {"callpath_id": 1, "coordinate_id": 1, "id": 1, "metric_id": 1, "value": 3.5},
    {"callpath_id": 1, "coordinate_id": 2, "id": 2, "metric_id": 1, "value": 5.5},
    {"callpath_id": 1, "coordinate_id": 1, "id": 3, "metric_id": 1, "value": "4.5"}
  ],
  "metrics": [{"id": 1, "name": "time"}],
  "parameters": [{"id": 7, "name": "y"}, {"id": 3, "name": "x"}]
}"#;

    #[test]
    fn the_legacy_json_format_reads_ids_into_series_and_repetitions() {
        let e = parse_json(LEGACY).unwrap();
        // Parameters in order of their ids, each coordinate's values in that order.
        assert_eq!(e.parameters, ["x", "y"]);
        assert_eq!(e.series.len(), 1);
        let s = &e.series[0];
        assert_eq!((s.callpath.as_str(), s.metric.as_str()), ("sweep", "time"));
        assert_eq!(s.points[0].coordinate, [2.0, 4.0]);
        assert_eq!(s.points[0].values, [3.5, 4.5]);
        assert_eq!(s.points[1].coordinate, [1.0, 8.0]);
    }

    #[test]
    fn a_legacy_id_that_names_nothing_is_refused_at_its_list() {
        let bad = |from: &str, to: &str| parse_json(&LEGACY.replace(from, to)).unwrap_err();
        let e = bad(r#""coordinate_id": 2"#, r#""coordinate_id": 9"#);
        assert_eq!(
            e.to_string(),
            "line 7: a measurement: `coordinate_id` (9) names none of the `coordinates`"
        );
        let e = bad(
            r#""parameter_id": 7, "parameter_value": 8"#,
            r#""parameter_id": 3, "parameter_value": 8"#,
        );
        assert!(
            e.to_string()
                .contains("coordinate 2: a parameter given twice"),
            "{e}"
        );
        let e = bad(
            r#""parameter_id": 7, "parameter_value": 4"#,
            r#""parameter_id": 8, "parameter_value": 4"#,
        );
        assert!(
            e.to_string()
                .contains("coordinate 1: `parameter_id` (8) names none of the `parameters`"),
            "{e}"
        );
        let e = bad(r#""value": 5.5"#, r#""value": null"#);
        assert!(
            e.to_string().contains("`value` is not a finite number"),
            "{e}"
        );
        let e = bad(r#""name": "time""#, r#""title": "time""#);
        assert!(
            e.to_string()
                .starts_with("line 12: `metrics`: an entry without"),
            "{e}"
        );
    }
}
