//! Extra-P's file formats, the one place yosoku reads and writes them, from and to their text (no
//! I/O): the text format (`PARAMETER`, `POINTS`, `REGION`, `METRIC`, `DATA` lines), JSON Lines
//! (one measurement per line: `{"params": {...}, "callpath": ..., "metric": ..., "value": ...}`),
//! Talpas (the same under `parameters`, its fields parted by `;`), JSON (`{"parameters": [...],
//! "measurements": {callpath: {metric: [{"point", "values"}]}}}`, which [`to_json`] writes for
//! `yosoku export --format extrap`, and the legacy form with ids, [`legacy`]) and the
//! `experiment.json` of an experiment Extra-P saved, as Extra-P 4.2 reads them.
//! [`Format::detect`] tells a file's format by what it holds, [`parse`] reads it. Errors name the
//! line. A set of Score-P's Cube profiles (a directory Extra-P's `--cube` reads) is read by
//! `cube` (the `cube` feature) from its files' bytes.

#[cfg(feature = "cube")]
pub mod cube;
mod detect;
mod experiment;
mod extrap3;
mod legacy;

pub use experiment::{Experiment, FixedParameter, InputError, Series};
use experiment::{end_line, error, line_of};
pub use extrap3::parse_extrap3;

use serde::Deserialize;

use super::Point;

/// One of Extra-P's file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The text format (`PARAMETER`, `POINTS`, ... lines).
    Text,
    /// One JSON measurement per line, its coordinate under `params`.
    JsonLines,
    /// Talpas: one measurement per line, its coordinate under `parameters`, fields parted by
    /// `;` (read as Extra-P reads it: every `;` a `,`).
    Talpas,
    /// The JSON input format, current or legacy (one document).
    Json,
    /// An experiment Extra-P saved (`*.extra-p`: a zip whose `experiment.json` [`parse`] reads).
    Saved,
    /// An Extra-P 3 experiment (binary; [`parse_extrap3`]).
    Extrap3,
}

/// Reads `text` in `format` (for [`Format::Saved`], its `experiment.json`: each point's mean, or
/// median with `median`).
pub fn parse(format: Format, text: &str, median: bool) -> Result<Experiment, InputError> {
    // A byte-order mark (as editors on Windows write) is no part of the first line.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format {
        Format::Text => parse_text(text),
        Format::JsonLines => parse_jsonl(text),
        Format::Talpas => parse_talpas(text),
        Format::Json => parse_json(text),
        Format::Saved => parse_extra_p(text, median),
        Format::Extrap3 => parse_extrap3(text.as_bytes(), median),
    }
}

/// Reads a file's `bytes` in `format` ([`Format::detect`]'s): a saved experiment's zip (with the
/// `saved` feature) and an Extra-P 3 experiment from their bytes, the text formats from their
/// text. Errors about the file as a whole have line 0.
pub fn parse_bytes(format: Format, bytes: &[u8], median: bool) -> Result<Experiment, InputError> {
    match format {
        #[cfg(feature = "saved")]
        Format::Saved => parse_saved(bytes, median),
        #[cfg(not(feature = "saved"))]
        Format::Saved => Err(error(
            0,
            "an experiment Extra-P saved (a zip): this build reads them only with the regression \
             crate's `saved` feature",
        )),
        Format::Extrap3 => parse_extrap3(bytes, median),
        format => {
            let text = std::str::from_utf8(bytes).map_err(|e| {
                let line = bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                error(line, "not UTF-8 text")
            })?;
            parse(format, text, median)
        }
    }
}

/// `experiment` in Extra-P's JSON input format, as Extra-P 4.2 loads it: its parameters, and
/// per call path and metric every point with its values (pretty-printed, with a final newline).
pub fn to_json(experiment: &Experiment) -> String {
    let mut measurements = serde_json::Map::new();
    for s in &experiment.series {
        let points: Vec<serde_json::Value> = s
            .points
            .iter()
            .map(|p| serde_json::json!({ "point": p.coordinate, "values": p.values }))
            .collect();
        if let Some(by_metric) = measurements
            .entry(s.callpath.clone())
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
            .as_object_mut()
        {
            by_metric.insert(s.metric.clone(), serde_json::Value::Array(points));
        }
    }
    let doc = serde_json::json!({
        "parameters": experiment.parameters,
        "measurements": measurements,
    });
    // Serialising plain data to a string cannot fail.
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// A JSON object's entries in the order written (Extra-P takes the parameters' order from the
/// first line as written).
struct Ordered(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of parameter values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((name, value)) = map.next_entry::<String, serde_json::Value>()? {
                    if out.iter().any(|(k, _)| *k == name) {
                        return Err(serde::de::Error::custom(format!(
                            "parameter `{name}` given twice"
                        )));
                    }
                    out.push((name, value));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// One line of JSON Lines (`params`) or Talpas (`parameters`) input.
#[derive(Deserialize)]
struct Line {
    params: Option<Ordered>,
    parameters: Option<Ordered>,
    callpath: Option<String>,
    metric: Option<String>,
    value: serde_json::Value,
}

fn number(text: &str, line: usize) -> Result<f64, InputError> {
    text.parse::<f64>()
        .map_err(|_| error(line, format!("`{text}` is not a number")))
}

/// A parameter's value in `POINTS`: a finite number (`nan` and `inf` parse as numbers and are
/// none).
fn coordinate_value(text: &str, line: usize) -> Result<f64, InputError> {
    let v = number(text, line)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(error(
            line,
            format!("`{text}` in POINTS: a parameter's value must be a finite number"),
        ))
    }
}

/// The finite values of a `DATA` line; the others left out and noted with the line, or the
/// line refused when none is finite.
fn data_values(
    value: &str,
    line: usize,
    callpath: &str,
    metric: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<f64>, InputError> {
    let all = value
        .split_whitespace()
        .map(|v| number(v, line))
        .collect::<Result<Vec<f64>, _>>()?;
    if all.is_empty() {
        return Err(error(line, "a DATA line without values"));
    }
    let finite: Vec<f64> = all.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return Err(error(
            line,
            format!(
                "a DATA line without a finite value ({} repetition(s), none a number): measure the point or leave it out of POINTS",
                all.len()
            ),
        ));
    }
    if finite.len() < all.len() {
        notes.push(format!(
            "line {line}: region `{callpath}`, metric `{metric}`: {} of {} repetitions are not finite numbers and are left out; the point keeps {}",
            all.len() - finite.len(),
            all.len(),
            finite.len()
        ));
    }
    Ok(finite)
}

/// The coordinates of one `POINTS` line: `( 20 )` groups, `(1000 10) (2000 20)`, or plain
/// numbers of one parameter.
fn points_line(value: &str, parameters: usize, line: usize) -> Result<Vec<Vec<f64>>, InputError> {
    if parameters == 0 {
        return Err(error(line, "POINTS before PARAMETER"));
    }
    if value.contains('(') {
        let mut out = Vec::new();
        for group in value.split('(').skip(1) {
            let inner = group
                .split(')')
                .next()
                .ok_or_else(|| error(line, "a `(` without `)`"))?;
            let coordinate = inner
                .split_whitespace()
                .map(|v| coordinate_value(v, line))
                .collect::<Result<Vec<f64>, _>>()?;
            out.push(coordinate);
        }
        Ok(out)
    } else if parameters == 1 {
        value
            .split_whitespace()
            .map(|v| coordinate_value(v, line).map(|x| vec![x]))
            .collect()
    } else {
        Err(error(
            line,
            "points of several parameters are written in parentheses: (x y)",
        ))
    }
}

/// Reads Extra-P's text format.
pub fn parse_text(text: &str) -> Result<Experiment, InputError> {
    let mut e = Experiment::default();
    let mut coordinates: Vec<Vec<f64>> = Vec::new();
    // The line each coordinate was given on: a point given twice is refused, naming both.
    let mut coordinate_lines: Vec<usize> = Vec::new();
    let (mut callpath, mut metric) = (String::new(), String::new());
    let mut next = 0usize;
    // The REGION line being read and whether a DATA line followed it: a region without any is
    // noted, not dropped in silence.
    let mut open_region: Option<(usize, String, bool)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (field, value) = trimmed
            .split_once(char::is_whitespace)
            .unwrap_or((trimmed, ""));
        let value = value.trim();
        match field {
            "PARAMETER" => {
                if let Some(&first) = coordinate_lines.first() {
                    return Err(error(
                        line,
                        format!(
                            "PARAMETER after POINTS (line {first}), whose points give {} value(s) \
                             each: name every parameter before the points",
                            e.parameters.len()
                        ),
                    ));
                }
                for name in value.split_whitespace() {
                    if e.parameters.iter().any(|p| p == name) {
                        return Err(error(
                            line,
                            format!("parameter `{name}` named twice: each names one coordinate"),
                        ));
                    }
                    e.parameters.push(name.to_owned());
                }
            }
            "POINTS" => {
                for c in points_line(value, e.parameters.len(), line)? {
                    if c.len() != e.parameters.len() {
                        return Err(error(
                            line,
                            format!(
                                "a point of {} values for {} parameters",
                                c.len(),
                                e.parameters.len()
                            ),
                        ));
                    }
                    if let Some(k) = coordinates.iter().position(|x| *x == c) {
                        return Err(error(
                            line,
                            format!(
                                "point {c:?} given twice: at line {} and here (its repetitions \
                                 belong on its DATA line)",
                                coordinate_lines[k]
                            ),
                        ));
                    }
                    coordinates.push(c);
                    coordinate_lines.push(line);
                }
            }
            "REGION" => {
                note_empty_region(open_region.take(), &mut e.notes);
                open_region = Some((line, value.to_owned(), false));
                callpath = value.to_owned();
                next = 0;
            }
            "METRIC" => {
                metric = value.to_owned();
                next = 0;
            }
            "DATA" => {
                let coordinate = coordinates.get(next).ok_or_else(|| {
                    error(
                        line,
                        format!("more DATA lines than the {} POINTS", coordinates.len()),
                    )
                })?;
                let values = data_values(value, line, &callpath, &metric, &mut e.notes)?;
                if let Some((_, _, measured)) = &mut open_region {
                    *measured = true;
                }
                let coordinate = coordinate.clone();
                let series = e.series_mut(&callpath, &metric);
                // Each REGION or METRIC line restarts at the first point, so a series read
                // before holds this point already.
                if series.points.len() != next {
                    return Err(error(
                        line,
                        format!(
                            "region `{callpath}`, metric `{metric}`: point {coordinate:?} has a \
                             DATA line already (REGION and METRIC given twice?): a point's \
                             repetitions belong on its one DATA line"
                        ),
                    ));
                }
                series.points.push(Point { coordinate, values });
                next += 1;
            }
            other => {
                return Err(error(
                    line,
                    format!(
                        "unknown field `{other}`; expected PARAMETER, POINTS, REGION, METRIC or DATA"
                    ),
                ));
            }
        }
    }
    note_empty_region(open_region, &mut e.notes);
    check(&e, coordinates.len(), end_line(text))?;
    Ok(e)
}

/// Notes a region that no DATA line followed (line, name, whether one did).
fn note_empty_region(region: Option<(usize, String, bool)>, notes: &mut Vec<String>) {
    if let Some((line, name, false)) = region {
        notes.push(format!(
            "line {line}: region `{name}` has no DATA lines: not modelled"
        ));
    }
}

/// Every series measured at every coordinate, as Extra-P requires; what is missing is reported
/// at the file's last line, `end`.
fn check(e: &Experiment, coordinates: usize, end: usize) -> Result<(), InputError> {
    if e.parameters.is_empty() {
        return Err(error(end, "no PARAMETER line in the file"));
    }
    if e.series.is_empty() {
        return Err(error(end, "no DATA line in the file"));
    }
    for s in &e.series {
        if s.points.len() != coordinates {
            return Err(error(
                end,
                format!(
                    "region `{}`, metric `{}`: {} measured points of the {coordinates} POINTS",
                    s.callpath,
                    s.metric,
                    s.points.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Reads Extra-P's JSON Lines format: repetitions of one coordinate are gathered in order of
/// first appearance; the parameters' order is the first line's. A line without `callpath` or
/// `metric` is `<root>` or `<default>`'s, as Extra-P reads it.
pub fn parse_jsonl(text: &str) -> Result<Experiment, InputError> {
    parse_lines(text, false)
}

/// Reads the Talpas format as Extra-P does: JSON Lines with every `;` read as `,`, each
/// measurement's coordinate under `parameters`, its `callpath` and `metric` required.
pub fn parse_talpas(text: &str) -> Result<Experiment, InputError> {
    parse_lines(text, true)
}

/// One measurement a line: JSON Lines, or with `talpas` the Talpas format.
fn parse_lines(text: &str, talpas: bool) -> Result<Experiment, InputError> {
    let mut e = Experiment::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let v: Line = if talpas {
            serde_json::from_str(&raw.replace(';', ","))
        } else {
            serde_json::from_str(raw)
        }
        .map_err(|err| error(line, format!("not a measurement: {err}")))?;
        let (params, key) = if talpas {
            (&v.parameters, "parameters")
        } else {
            (&v.params, "params")
        };
        let params = params
            .as_ref()
            .ok_or_else(|| error(line, format!("no `{key}` object of parameter values")))?;
        if talpas && (v.callpath.is_none() || v.metric.is_none()) {
            return Err(error(
                line,
                "a Talpas measurement names its `callpath` and its `metric`",
            ));
        }
        if e.parameters.is_empty() {
            e.parameters = params.0.iter().map(|(k, _)| k.clone()).collect();
            if e.parameters.is_empty() {
                return Err(error(
                    line,
                    format!("`{key}` is empty: a model is a function of at least one parameter"),
                ));
            }
        }
        let coordinate = e
            .parameters
            .iter()
            .map(|p| {
                params
                    .0
                    .iter()
                    .find(|(k, _)| k == p)
                    .and_then(|(_, x)| x.as_f64())
                    .ok_or_else(|| error(line, format!("parameter `{p}` missing or not a number")))
            })
            .collect::<Result<Vec<f64>, _>>()?;
        if let Some((other, _)) = params.0.iter().find(|(k, _)| !e.parameters.contains(k)) {
            // Extra-P drops it without a word, merging runs that differ in it.
            return Err(error(
                line,
                format!(
                    "parameter `{other}` is not one of the first line's ({}): every line gives \
                     the same parameters",
                    e.parameters.join(", ")
                ),
            ));
        }
        let callpath = v.callpath.unwrap_or_else(|| "<root>".to_owned());
        let metric = v.metric.unwrap_or_else(|| "<default>".to_owned());
        let values: Vec<f64> = match &v.value {
            serde_json::Value::Array(a) => a
                .iter()
                .map(|x| {
                    x.as_f64()
                        .ok_or_else(|| error(line, "a value is not a number"))
                })
                .collect::<Result<_, _>>()?,
            x => vec![
                x.as_f64()
                    .ok_or_else(|| error(line, "`value` is not a number"))?,
            ],
        };
        let series = e.series_mut(&callpath, &metric);
        match series
            .points
            .iter_mut()
            .find(|p| p.coordinate == coordinate)
        {
            Some(p) => p.values.extend(values),
            None => series.points.push(Point { coordinate, values }),
        }
    }
    if e.series.is_empty() {
        return Err(error(end_line(text), "no measurement in the file"));
    }
    note_unmeasured(&mut e, text);
    Ok(e)
}

/// Notes each series measured at fewer of the file's coordinates than the others (Extra-P
/// refuses such a file; yosoku models the points measured, and says so).
fn note_unmeasured(e: &mut Experiment, text: &str) {
    let mut all: Vec<Vec<u64>> = e
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.coordinate.iter().map(|x| x.to_bits()).collect())
        .collect();
    all.sort_unstable();
    all.dedup();
    let coordinates = all.len();
    let notes: Vec<String> = e
        .series
        .iter()
        .filter(|s| s.points.len() < coordinates)
        .map(|s| {
            let line = line_of(text, &serde_json::Value::from(s.callpath.as_str()).to_string());
            format!(
                "line {line}: call path `{}`, metric `{}`: measured at {} of the file's {coordinates} \
                 points (Extra-P refuses such a file): modelled from those",
                s.callpath,
                s.metric,
                s.points.len()
            )
        })
        .collect();
    e.notes.extend(notes);
}

/// Reads Extra-P's JSON format, its current form (each measurement a `point` and its `values`)
/// or its legacy one (with `callpaths`: lists of objects with ids, [`legacy`]).
pub fn parse_json(text: &str) -> Result<Experiment, InputError> {
    if let Ok(doc) = serde_json::from_str::<serde_json::Value>(text)
        && doc.get("callpaths").is_some()
    {
        let mut e = legacy::parse(&doc, text)?;
        note_unmeasured(&mut e, text);
        return Ok(e);
    }
    let mut e = parse_json_with(text, "point", &|m, what, line| {
        numbers(&m["values"], &format!("{what}: `values`"), line)
    })?;
    note_unmeasured(&mut e, text);
    Ok(e)
}

/// Reads the `experiment.json` of an experiment Extra-P saved (a `.extra-p` file is a zip of
/// it): each measurement a `coordinate` with its repetitions' mean, median, minimum, maximum and
/// deviation, not the repetitions themselves. A point's value is its `mean` (what Extra-P models
/// by default), or its `median` with `median`. A call path's tags (after a U+0003 in its key, as
/// Extra-P writes them) are not part of its name.
pub fn parse_extra_p(text: &str, median: bool) -> Result<Experiment, InputError> {
    let key = if median { "median" } else { "mean" };
    parse_json_with(text, "coordinate", &|m, what, line| {
        numbers(&m[key], &format!("{what}: `{key}`"), line)
    })
}

/// Reads an experiment Extra-P saved from the bytes of its `.extra-p` file, a zip holding
/// `experiment.json` ([`parse_extra_p`]; each point's mean, or median with `median`). Every error
/// has line 0 (no line of the zip): one inside `experiment.json` names that file and its line in
/// the message (`experiment.json:12: ...`).
#[cfg(feature = "saved")]
pub fn parse_saved(bytes: &[u8], median: bool) -> Result<Experiment, InputError> {
    use std::io::Read as _;
    let whole = |message: String| error(0, message);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| {
        whole(format!(
            "not an experiment Extra-P saved (a zip holding experiment.json): {e}"
        ))
    })?;
    let mut text = String::new();
    zip.by_name("experiment.json")
        .map_err(|_| whole("the zip holds no experiment.json".to_owned()))?
        .read_to_string(&mut text)
        .map_err(|e| whole(format!("experiment.json in the zip: {e}")))?;
    parse_extra_p(&text, median)
        .map_err(|e| whole(format!("experiment.json:{}: {}", e.line, e.message)))
}

/// A JSON number, or a list of them, as a list; an error names `line`.
fn numbers(x: &serde_json::Value, what: &str, line: usize) -> Result<Vec<f64>, InputError> {
    let one = |v: &serde_json::Value| {
        v.as_f64()
            .ok_or_else(|| error(line, format!("{what}: not a number")))
    };
    match x {
        serde_json::Value::Array(a) => a.iter().map(one).collect(),
        v => Ok(vec![one(v)?]),
    }
}

/// What one measurement of a JSON experiment holds besides its coordinate.
type ValuesOf<'a> = dyn Fn(&serde_json::Value, &str, usize) -> Result<Vec<f64>, InputError> + 'a;

/// Extra-P's JSON experiments: `parameters`, and `measurements` by call path and metric, each a
/// list of measurements with their coordinate under `coordinate_key`.
fn parse_json_with(
    text: &str,
    coordinate_key: &str,
    values_of: &ValuesOf<'_>,
) -> Result<Experiment, InputError> {
    let at = |e: &serde_json::Error| e.line();
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| error(at(&e), format!("not JSON: {e}")))?;
    let parameters: Vec<String> = v
        .get("parameters")
        .and_then(|p| p.as_array())
        .ok_or_else(|| error(end_line(text), "no `parameters` list in the file"))?
        .iter()
        .map(|p| {
            p.as_str().map(str::to_owned).ok_or_else(|| {
                error(
                    line_of(text, "\"parameters\""),
                    "a parameter name is not text",
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let parameters_line = || line_of(text, "\"parameters\"");
    if parameters.is_empty() {
        return Err(error(
            parameters_line(),
            "no parameters: a model is a function of at least one",
        ));
    }
    if let Some((_, name)) = parameters
        .iter()
        .enumerate()
        .find(|(i, name)| parameters[..*i].contains(name))
    {
        return Err(error(
            parameters_line(),
            format!("parameter `{name}` named twice in `parameters`"),
        ));
    }
    let measurements = v
        .get("measurements")
        .and_then(|m| m.as_object())
        .ok_or_else(|| error(end_line(text), "no `measurements` object in the file"))?;
    if measurements.is_empty() {
        return Err(error(
            line_of(text, "\"measurements\""),
            "no measurement in the file: `measurements` is empty",
        ));
    }
    let mut e = Experiment {
        parameters,
        series: Vec::new(),
        notes: Vec::new(),
    };
    for (callpath, metrics) in measurements {
        // serde_json keeps no positions: an error names the line the call path's key is on,
        // looked for only when there is one (a search of the whole text per call path made
        // reading a file of thousands quadratic).
        let series = series_of(callpath, metrics, &e.parameters, coordinate_key, values_of)
            .map_err(|mut err| {
                err.line = line_of(
                    text,
                    &serde_json::Value::from(callpath.as_str()).to_string(),
                );
                err
            })?;
        e.series.extend(series);
    }
    Ok(e)
}

/// The series of one call path of Extra-P's JSON (its metrics' lists of measurements); errors
/// have line 0, which the caller sets to the call path's.
fn series_of(
    callpath: &str,
    metrics: &serde_json::Value,
    parameters: &[String],
    coordinate_key: &str,
    values_of: &ValuesOf<'_>,
) -> Result<Vec<Series>, InputError> {
    let line = 0;
    let metrics = metrics.as_object().ok_or_else(|| {
        error(
            line,
            format!("call path `{callpath}`: not an object of metrics"),
        )
    })?;
    let mut out = Vec::new();
    for (metric, list) in metrics {
        let what = format!("call path `{callpath}`, metric `{metric}`");
        let list = list
            .as_array()
            .ok_or_else(|| error(line, format!("{what}: not a list of measurements")))?;
        let mut points = Vec::new();
        for m in list {
            let coordinate = numbers(
                &m[coordinate_key],
                &format!("{what}: a `{coordinate_key}`"),
                line,
            )?;
            if coordinate.len() != parameters.len() {
                return Err(error(
                    line,
                    format!(
                        "{what}: a point of {} values for {} parameters",
                        coordinate.len(),
                        parameters.len()
                    ),
                ));
            }
            let values = values_of(m, &what, line)?;
            if values.is_empty() {
                return Err(error(
                    line,
                    format!(
                        "{what}: point {coordinate:?} has no values: measure it or leave it out"
                    ),
                ));
            }
            if points.iter().any(|p: &Point| p.coordinate == coordinate) {
                return Err(error(
                    line,
                    format!(
                        "{what}: point {coordinate:?} given twice (its repetitions belong \
                         in one measurement's values)"
                    ),
                ));
            }
            points.push(Point { coordinate, values });
        }
        let callpath = match coordinate_key {
            "coordinate" => callpath.split('\u{3}').next().unwrap_or(callpath),
            _ => callpath,
        };
        out.push(Series {
            callpath: callpath.to_owned(),
            metric: metric.clone(),
            points,
            point_values: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_experiment_extrap_saved_reads_each_points_mean_or_median() {
        let text = r#"{"Extra-P": "4.0.2", "scaling": null, "parameters": ["s"], "measurements": {"main": {"time": [
            {"coordinate": [64.0], "median": 2.0, "mean": 3.0, "minimum": 1.0, "maximum": 6.0, "std": 2.0},
            {"coordinate": [512.0], "median": 5.0, "mean": 5.5, "minimum": 5.0, "maximum": 6.0, "std": 0.5}]}}}"#;
        let e = parse_extra_p(text, false).unwrap();
        assert_eq!(e.parameters, ["s"]);
        assert_eq!(e.series[0].callpath, "main");
        assert_eq!(e.series[0].points[1].coordinate, [512.0]);
        assert_eq!(e.series[0].points[0].values, [3.0]);
        assert_eq!(
            parse_extra_p(text, true).unwrap().series[0].points[0].values,
            [2.0]
        );
        let e =
            parse_extra_p(&text.replace(r#""mean": 5.5"#, r#""mean": "x""#), false).unwrap_err();
        assert!(e.to_string().contains("`mean`: not a number"), "{e}");
    }

    /// Issue 56, item 6: a point given twice is refused naming both lines (text) or the call
    /// path's line (JSON), never modelled twice; what is missing is reported at the file's last
    /// line, never at line 0. JSON Lines gather a coordinate's lines as its repetitions.
    #[test]
    fn duplicate_points_and_missing_parts_name_real_lines() {
        let text = |t: &str| parse_text(t).unwrap_err().to_string();
        assert_eq!(
            text("PARAMETER x\nPOINTS (1) (2)\nPOINTS (1)\n"),
            "line 3: point [1.0] given twice: at line 2 and here (its repetitions belong on its \
             DATA line)"
        );
        assert_eq!(text(""), "line 1: no PARAMETER line in the file");
        assert_eq!(
            text("PARAMETER x\nPOINTS (1) (2)\nREGION r\nMETRIC t\n"),
            "line 4: no DATA line in the file"
        );
        assert!(
            text("PARAMETER x\nPOINTS (1) (2)\nREGION r\nDATA 1\n\n")
                .starts_with("line 5: region `r`"),
        );
        let json = "{\n \"parameters\": [\"x\"],\n \"measurements\": {\n  \"main\": {\"time\": [\n   {\"point\": [1], \"values\": [1]},\n   {\"point\": [1], \"values\": [2]}]}}}\n";
        let e = parse_json(json).unwrap_err().to_string();
        assert!(
            e.starts_with("line 4: call path `main`, metric `time`: point [1.0] given twice"),
            "{e}"
        );
        let e = parse_json("{\"parameters\": [\"x\"]}\n\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "line 2: no `measurements` object in the file");
        // No parameter, a parameter twice, nothing measured, a point without values: each
        // refused with what is wrong (Extra-P 4.2.5 crashes on the last).
        let point = r#"{"r": {"time": [{"point": [1, 1], "values": []}]}}"#;
        for (text, start) in [
            (
                format!("{{\"parameters\": [],\n\"measurements\": {point}}}"),
                "line 1: no parameters: a model is a function of at least one",
            ),
            (
                format!("{{\"parameters\": [\"p\", \"p\"], \"measurements\": {point}}}"),
                "line 1: parameter `p` named twice",
            ),
            (
                "{\"parameters\": [\"p\"],\n\"measurements\": {}}".to_owned(),
                "line 2: no measurement in the file: `measurements` is empty",
            ),
            (
                format!("{{\"parameters\": [\"p\", \"q\"], \"measurements\": {point}}}"),
                "line 1: call path `r`, metric `time`: point [1.0, 1.0] has no values",
            ),
        ] {
            let e = parse_json(&text).unwrap_err().to_string();
            assert!(e.starts_with(start), "{text}: {e}");
        }
        let e = parse_jsonl("{\"params\": {}, \"value\": 1}\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 1: `params` is empty"), "{e}");
        assert_eq!(
            parse_jsonl("\n").unwrap_err().to_string(),
            "line 1: no measurement in the file"
        );
        let repeated = parse_jsonl(
            "{\"params\": {\"x\": 1}, \"value\": 1}\n{\"params\": {\"x\": 1}, \"value\": 2}\n",
        )
        .unwrap();
        assert_eq!(repeated.series[0].points[0].values, [1.0, 2.0]);
        // A parameter the first line lacks would merge runs that differ in it (Extra-P drops
        // it without a word): refused, as is a parameter given twice.
        let e = parse_jsonl(
            "{\"params\": {\"p\": 1}, \"value\": 1}\n{\"params\": {\"p\": 1, \"q\": 2}, \"value\": 2}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("line 2: parameter `q` is not one of the first line's (p)"),
            "{e}"
        );
        let e = parse_jsonl("{\"params\": {\"p\": 1, \"p\": 2}, \"value\": 1}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("parameter `p` given twice"), "{e}");
    }

    #[test]
    fn the_text_format_reads_points_regions_and_repetitions() {
        let e = parse_text(
            "PARAMETER p q\nPOINTS (1 10) (2 20)\n\nREGION a\nMETRIC time\nDATA 1 2\nDATA 3\nREGION b\nDATA 5\nDATA 6 7\n",
        )
        .unwrap();
        assert_eq!(e.parameters, vec!["p", "q"]);
        assert_eq!(e.series.len(), 2);
        assert_eq!(e.series[0].points[1].coordinate, vec![2.0, 20.0]);
        assert_eq!(e.series[1].points[1].values, vec![6.0, 7.0]);
        let e = parse_text("PARAMETER x\nPOINTS ( 20 )\nPOINTS ( 30 )\nPOINTS 40 50\nDATA 1\nDATA 2\nDATA 3\nDATA 4\n")
            .unwrap();
        assert_eq!(e.series[0].points[3].coordinate, vec![50.0]);
    }

    #[test]
    fn bad_text_names_its_line() {
        let bad = |t: &str| parse_text(t).unwrap_err().to_string();
        for (text, start) in [
            (
                "PARAMETER x\nPOINTS 1 2\nDATA 1\nDATA 2\nDATA 3\n",
                "line 5: more DATA lines",
            ),
            (
                "PARAMETER x\nPOINTS 1 2\nDATA 1 two\n",
                "line 3: `two` is not a number",
            ),
            (
                "PARAMETER x\nPOINTS 1 2\nREGION a\nDATA 1\n",
                "line 4: region `a`, metric ``: 1 measured points of the 2 POINTS",
            ),
            (
                "PARAMETER x y\nPOINTS (1)\n",
                "line 2: a point of 1 values for 2",
            ),
            ("VALUES 1\n", "line 1: unknown field `VALUES`"),
            // The parameters, each once, before the points they give values of.
            (
                "PARAMETER p\nPOINTS 1 2\nPARAMETER q\nDATA 1\nDATA 2\n",
                "line 3: PARAMETER after POINTS (line 2), whose points give 1 value",
            ),
            (
                "PARAMETER p\nPARAMETER p\nPOINTS (1 1) (2 2)\n",
                "line 2: parameter `p` named twice",
            ),
            // A region's metric read twice would restart at the first point: refused there.
            (
                "PARAMETER x\nPOINTS 1 2\nREGION r\nMETRIC t\nDATA 1\nDATA 2\nREGION r\nMETRIC t\nDATA 3\n",
                "line 9: region `r`, metric `t`: point [1.0] has a DATA line already",
            ),
        ] {
            let e = bad(text);
            assert!(e.starts_with(start), "{text}: {e}");
        }
        // Not-a-number: a coordinate is refused at its line; a DATA line of none refused too.
        assert_eq!(
            bad("PARAMETER x\nPOINTS 1 nan\nDATA 1\nDATA 2\n"),
            "line 2: `nan` in POINTS: a parameter's value must be a finite number"
        );
        assert!(
            bad("PARAMETER x\nPOINTS 1 2\nREGION a\nDATA 1\nDATA NaN nan\n").starts_with(
                "line 5: a DATA line without a finite value (2 repetition(s), none a number)"
            )
        );
    }

    /// One repetition that is not a number leaves that repetition out, said with its line, and
    /// the point keeps the others; a region without DATA lines before a measured one is said,
    /// not dropped in silence.
    #[test]
    fn a_nan_repetition_and_an_empty_region_are_noted_with_their_lines() {
        let e = parse_text(
            "PARAMETER x\nPOINTS 1 2 3\nREGION empty\nREGION a\nMETRIC time\nDATA 1 1.1\nDATA 2 NaN 2.2\nDATA 3\n",
        )
        .unwrap();
        assert_eq!(e.series.len(), 1);
        assert_eq!(e.series[0].points[1].values, vec![2.0, 2.2]);
        assert_eq!(
            e.notes,
            [
                "line 3: region `empty` has no DATA lines: not modelled",
                "line 7: region `a`, metric `time`: 1 of 3 repetitions are not finite numbers and are left out; the point keeps 2",
            ]
        );
    }

    #[test]
    fn json_reads_what_the_export_writes() {
        let e = parse_json(
            r#"{"parameters": ["n"], "measurements": {"copy": {"time": [{"point": [2], "values": [1, 2]}, {"point": 4, "values": 3}]}}}"#,
        )
        .unwrap();
        assert_eq!(e.series[0].points[1].coordinate, vec![4.0]);
        assert_eq!(e.series[0].points[0].values, vec![1.0, 2.0]);
        let bad = parse_json(r#"{"parameters": ["n", "p"], "measurements": {"c": {"t": [{"point": [1], "values": [1]}]}}}"#)
            .unwrap_err();
        assert!(
            bad.to_string()
                .contains("a point of 1 values for 2 parameters"),
            "{bad}"
        );
    }

    /// Talpas: `;` between fields, the coordinate under `parameters`; a line without its call
    /// path or metric, or with JSON Lines' `params`, is refused at its line.
    #[test]
    fn talpas_reads_semicolons_and_refuses_a_measurement_it_cannot_place() {
        let line = |x: u32, v: f64| {
            format!(
                "{{\"parameters\":{{\"x\":{x}}};\"metric\":\"time\";\"callpath\":\"c\";\"value\":{v}}}\n"
            )
        };
        let e = parse_talpas(&(line(2, 1.0) + &line(2, 1.5) + &line(4, 2.0))).unwrap();
        assert_eq!(e.series[0].points[0].values, [1.0, 1.5]);
        assert_eq!(e.series[0].points[1].coordinate, [4.0]);
        let bad = |text: String| parse_talpas(&text).unwrap_err().to_string();
        assert_eq!(
            bad(line(2, 1.0) + "{\"parameters\":{\"x\":4};\"metric\":\"time\";\"value\":2}\n"),
            "line 2: a Talpas measurement names its `callpath` and its `metric`"
        );
        assert_eq!(
            bad("{\"params\":{\"x\":4};\"metric\":\"t\";\"callpath\":\"c\";\"value\":2}\n".into()),
            "line 1: no `parameters` object of parameter values"
        );
        assert!(
            bad(line(2, 1.0) + "{\"parameters\":{\"x\":4};\n")
                .starts_with("line 2: not a measurement")
        );
    }

    /// A saved experiment from its bytes: what is not a zip, a zip without experiment.json, and
    /// an experiment.json that is wrong are refused, the last naming its line there.
    #[cfg(feature = "saved")]
    #[test]
    fn a_saved_experiment_s_bytes_that_are_not_one_are_refused() {
        use std::io::Write as _;
        let zip_of = |name: &str, text: &str| {
            let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            zip.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(text.as_bytes()).unwrap();
            zip.finish().unwrap().into_inner()
        };
        let good = r#"{"parameters": ["s"], "measurements": {"main": {"time": [{"coordinate": [8], "mean": 3.0, "median": 2.0}]}}}"#;
        let e = parse_saved(&zip_of("experiment.json", good), true).unwrap();
        assert_eq!(e.series[0].points[0].values, [2.0]);
        let bad = |bytes: &[u8]| parse_saved(bytes, false).unwrap_err();
        let e = bad(b"PARAMETER p\n");
        assert_eq!(e.line, 0);
        assert!(
            e.message
                .starts_with("not an experiment Extra-P saved (a zip"),
            "{e}"
        );
        assert_eq!(
            bad(&zip_of("other.json", good)).message,
            "the zip holds no experiment.json"
        );
        let e = bad(&zip_of("experiment.json", &good.replace("3.0", "\"x\"")));
        assert!(
            e.message.starts_with("experiment.json:1: call path `main`"),
            "{e}"
        );
    }

    #[test]
    fn json_lines_gather_repetitions_by_coordinate() {
        let e = parse_jsonl(
            "{\"params\":{\"x\":1,\"y\":2},\"metric\":\"m\",\"value\":1.0}\n{\"params\":{\"y\":2,\"x\":1},\"metric\":\"m\",\"value\":[2.0,3.0]}\n\n{\"params\":{\"x\":2,\"y\":2},\"metric\":\"m\",\"value\":4}\n",
        )
        .unwrap();
        assert_eq!(e.parameters, vec!["x", "y"]);
        assert_eq!(e.series[0].callpath, "<root>");
        assert_eq!(e.series[0].points[0].values, vec![1.0, 2.0, 3.0]);
        assert_eq!(e.series[0].points.len(), 2);
        let err =
            parse_jsonl("{\"params\":{\"x\":1},\"value\":1}\n{\"params\":{\"z\":1},\"value\":1}\n")
                .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: parameter `x` missing or not a number"
        );
    }
}
