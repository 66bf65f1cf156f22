//! Logs of the legacy CUDA profiler (`CUDA_PROFILE=1` / `COMPUTE_PROFILE=1`, CUDA 1.x-4.x), in
//! either of its two layouts, whatever the log version says. One `key=[ value ]` list per call,
//! usually after a line listing the fields:
//!
//! ```text
//! # CUDA_PROFILE_LOG_VERSION 2.0
//! # CUDA_DEVICE 0 Tesla C2050
//! method,gputime,cputime,occupancy
//! method=[ memcpyHtoD ] gputime=[ 331.936 ] cputime=[ 833.000 ]
//! method=[ _Z6kernelPfi ] gputime=[ 4.800 ] cputime=[ 9.000 ] occupancy=[ 1.000 ]
//! ```
//!
//! or CSV (`# CUDA_PROFILE_CSV 1`), where a memory copy's row stops after the fields it has:
//!
//! ```text
//! # CUDA_PROFILE_LOG_VERSION 2.0
//! # CUDA_DEVICE 0 Tesla C2050
//! # CUDA_PROFILE_CSV 1
//! method,gputime,cputime,occupancy,gld_request
//! memcpyHtoD,0.800,7.000
//! _Z6kernelPfi,4.800,9.000,1.000,128
//! ```
//!
//! `gputime` and `cputime` are in microseconds. Every call becomes a run (memory copies,
//! `memcpy*` and the older `memcopy*`, in the `transfer` phase) and every other numeric field a
//! counter.

use std::collections::HashMap;
use std::path::Path;
use yosoku_plugin_sdk::formats::refusal;

use yosoku_plugin_sdk::PluginError;

use crate::builder::{Cell, RunKey, Tables, TextCells, is_null_cell};
use crate::input::{Header, csv_records, field};
use crate::units::{Prefixes, parse_number, parse_scaled};

#[derive(Debug, Clone, Default)]
pub struct Labels {
    pub device: Option<String>,
    pub program: Option<String>,
    pub variant: Option<String>,
}

/// One profiled call: its method and its named values.
struct Call {
    line: usize,
    method: String,
    fields: Vec<(String, String)>,
}

pub fn read(path: &Path, text: &str, labels: &Labels) -> Result<Tables, PluginError> {
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    // The version and the line (1-based) it is on.
    let mut version: Option<(String, usize)> = None;
    let mut device: Option<String> = None;
    let mut first_data_line = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let directive = directive.trim();
            if let Some(v) = directive.strip_prefix("CUDA_PROFILE_LOG_VERSION") {
                version = Some((v.trim().to_owned(), i + 1));
            } else if let Some(d) = directive.strip_prefix("CUDA_DEVICE") {
                // `0 Tesla C2050`: the device number, then its name.
                let d = d.trim();
                device = Some(
                    d.split_once(' ')
                        .map_or(d, |(_, name)| name)
                        .trim()
                        .to_owned(),
                );
            }
        } else if !trimmed.is_empty() {
            first_data_line = Some(i);
            break;
        }
    }
    let Some((version, version_line)) = version else {
        return Err(refusal(
            path,
            None,
            text,
            ("cuda_profiler", "legacy"),
            "no `# CUDA_PROFILE_LOG_VERSION` line",
        ));
    };
    if !matches!(version.split('.').next(), Some("1" | "2")) {
        return Err(PluginError::at_line(
            path,
            version_line,
            format!("CUDA_PROFILE_LOG_VERSION {version} is not supported (1.x and 2.x are)"),
        ));
    }
    // The layout is the data's, not the version's: real 2.0 logs come in both.
    let calls = match first_data_line {
        Some(first) if is_key_value_log(text, first) => key_value_calls(path, text)?,
        _ => csv_calls(path, text, first_data_line.unwrap_or(0))?,
    };
    let device = labels.device.clone().or(device).ok_or_else(|| {
        PluginError::new(format!(
            "{}: no `# CUDA_DEVICE` line; set config key `device`",
            path.display()
        ))
    })?;
    check_fixed_decimals(path, &calls)?;
    let mut tables = Tables::new("legacy", Prefixes::Decimal);
    let mut text_cells = TextCells::default();
    for call in calls {
        let run = tables.key(RunKey {
            run_id: format!("line{}", call.line),
            device: device.clone(),
            program: labels
                .program
                .clone()
                .unwrap_or_else(|| call.method.clone()),
            variant: labels.variant.clone().unwrap_or_default(),
            kernel: Some(call.method.clone()),
        });
        let mut gputime = None;
        for (name, value) in &call.fields {
            let i = tables.name(name);
            let Some(number) = parse_number(value) else {
                if name == "gputime" {
                    return Err(PluginError::at_line(
                        path,
                        call.line,
                        format!("`gputime`: expected a number, found `{value}`"),
                    ));
                }
                let cell = if is_null_cell(value) {
                    tables.count_null(i);
                    Cell::Null
                } else {
                    Cell::Text
                };
                text_cells.record(i, cell, call.line, 0, value);
                continue;
            };
            text_cells.record(i, Cell::Number, call.line, 0, value);
            if name == "gputime" {
                // Microseconds to seconds in one correctly rounded step.
                gputime = parse_scaled(value, -6);
            }
            // Converted from the text (the mapping's unit, `us` for the times), in one
            // correctly rounded step as `gputime` above: 0.832 us is 8.32e-7 s in both tables.
            if !tables.add_text(run, i, value, "") {
                tables.add_value(run, i, number, "");
            }
        }
        let Some(secs) = gputime else {
            return Err(PluginError::at_line(
                path,
                call.line,
                "the call has no `gputime`",
            ));
        };
        let phase = if is_transfer(&call.method) {
            "transfer"
        } else {
            "kernel"
        };
        let secs =
            Tables::check_duration(secs).map_err(|e| PluginError::at_line(path, call.line, e))?;
        tables.add_run(run, None, phase, secs);
    }
    // A field that is a number in some calls and text in another was cut or overwritten.
    text_cells.check(path, &tables, |_| false)?;
    Ok(tables)
}

/// The profiler writes its times and ratios with a fixed number of decimals (`%.3f`: `4.800`,
/// `1220.000`, `1.000`). A value of a field written so in every other call with fewer or more
/// decimals was cut (`1220.000` cut to `1`, then a line end) or overwritten: an error at its
/// line. A field with one value in the file is held to the profiler's format (three decimals for
/// `gputime`, `cputime` and `occupancy`, [`FIXED_THREE`]). Fields of integers (counters) have no
/// decimals to compare.
const FIXED_THREE: &[&str] = &["gputime", "cputime", "occupancy"];

fn check_fixed_decimals(path: &Path, calls: &[Call]) -> Result<(), PluginError> {
    let decimals = |v: &str| v.trim().split_once('.').map(|(_, d)| d.len());
    let mut written: HashMap<&str, HashMap<Option<usize>, usize>> = HashMap::new();
    for call in calls {
        for (name, value) in &call.fields {
            if parse_number(value).is_some() {
                *written
                    .entry(name.as_str())
                    .or_default()
                    .entry(decimals(value))
                    .or_default() += 1;
            }
        }
    }
    for call in calls {
        for (name, value) in &call.fields {
            let Some(counts) = written.get(name.as_str()) else {
                continue;
            };
            let here = decimals(value);
            // The way all the field's other values are written, when there is one.
            let others: Vec<_> = counts
                .iter()
                .filter(|&(&d, &n)| n > usize::from(d == here))
                .collect();
            // With no other value to compare, the profiler's own format: `%.3f` for the times
            // and the occupancy.
            let fixed = match others[..] {
                [(&Some(fixed), _)] => Some(fixed),
                [] if FIXED_THREE.contains(&name.as_str()) => Some(3),
                _ => None,
            };
            if parse_number(value).is_some()
                && let Some(fixed) = fixed
                && here != Some(fixed)
            {
                return Err(PluginError::at_line(
                    path,
                    call.line,
                    format!(
                        "`{name}` is `{value}`, where every other call writes it with {fixed} decimals: cut short or overwritten?"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A memory copy: `memcpyHtoD`, `memcpyDtoHasync`, and `memcopy` in older logs.
fn is_transfer(method: &str) -> bool {
    method.starts_with("memcpy") || method.starts_with("memcopy")
}

/// A line listing the fields (`method,gputime,cputime,occupancy`): names and commas only.
fn is_field_list(line: &str) -> bool {
    line.contains(',')
        && line.split(',').all(|f| {
            !f.trim().is_empty()
                && f.trim()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Whether the calls are `key=[ value ]` lists: the first data line is one, or is the field
/// list and the line after it is one.
fn is_key_value_log(text: &str, first: usize) -> bool {
    let mut data = text
        .lines()
        .skip(first)
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    match data.next() {
        Some(line) if line.contains("=[") => true,
        Some(line) if is_field_list(line) => data.next().is_some_and(|l| l.contains("=[")),
        _ => false,
    }
}

/// `method=[ name ] gputime=[ 4.800 ] ...` per line, after an optional line listing the fields.
fn key_value_calls(path: &Path, text: &str) -> Result<Vec<Call>, PluginError> {
    let mut calls = Vec::new();
    let mut seen_data = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let first = !seen_data;
        seen_data = true;
        if first && is_field_list(trimmed) {
            continue;
        }
        let mut fields = Vec::new();
        let mut rest = trimmed;
        while !rest.is_empty() {
            // `rest` is a suffix of `line`: its offset is the column.
            let column = rest.as_ptr() as usize - line.as_ptr() as usize + 1;
            let Some((key, after)) = rest.split_once("=[") else {
                return Err(PluginError::at(
                    path,
                    i + 1,
                    column,
                    format!("expected `key=[ value ]`, found `{rest}`"),
                ));
            };
            let Some((value, after)) = after.split_once(']') else {
                return Err(PluginError::at(
                    path,
                    i + 1,
                    column,
                    format!("`{}=[` is not closed by `]`", key.trim()),
                ));
            };
            fields.push((key.trim().to_owned(), value.trim().to_owned()));
            rest = after.trim_start();
        }
        let Some(pos) = fields.iter().position(|(k, _)| k == "method") else {
            return Err(PluginError::at_line(
                path,
                i + 1,
                "the call has no `method=[ ... ]`",
            ));
        };
        let method = fields.remove(pos).1;
        calls.push(Call {
            line: i + 1,
            method,
            fields,
        });
    }
    // Each call lists its times: a call without one another call has was cut after its last
    // `]` (`... gputime=[ 4.800 ]` of `... gputime=[ 4.800 ] cputime=[ 9.000 ]`).
    for time in ["gputime", "cputime"] {
        let has = |c: &Call| c.fields.iter().any(|(k, _)| k == time);
        if calls.iter().any(has)
            && let Some(call) = calls.iter().find(|c| !has(c))
        {
            return Err(PluginError::at_line(
                path,
                call.line,
                format!("the call has no `{time}=[ ... ]`, which the other calls have: cut short?"),
            ));
        }
    }
    Ok(calls)
}

/// A CSV header line, then one line per call. A memory copy's row may stop after its times
/// (`memcpyHtoD,0.800,7.000` under a header of more columns); any other short row, and a copy's
/// row without its `cputime`, is an error.
fn csv_calls(path: &Path, text: &str, header_index: usize) -> Result<Vec<Call>, PluginError> {
    let body: String = text
        .lines()
        .skip(header_index)
        .collect::<Vec<_>>()
        .join("\n");
    let mut records =
        csv_records(path, &body).map(|r| r.map(|(line, rec)| (line + header_index, rec)));
    let Some(first) = records.next() else {
        return Err(PluginError::new(format!(
            "{}: no CSV header after the `#` lines",
            path.display()
        )));
    };
    let (header_line, header) = first?;
    let header = Header::new(&header);
    let format = "a CUDA profiler log (CSV)";
    let method = header.require(path, header_line, "method", format)?;
    let gputime = header.require(path, header_line, "gputime", format)?;
    // A copy's short row still has its times: up to `cputime` (else `gputime`). A shorter one
    // was cut (`memcpyHtoD,1266.048,1779.000` cut to `memcpyHtoD,126`), not written so.
    let copy_width = header.find("cputime").unwrap_or(gputime).max(gputime) + 1;
    // The line and width of each copy's row.
    let mut copy_rows: Vec<(usize, usize)> = Vec::new();
    let mut calls = Vec::new();
    for record in records {
        let (line, r) = record?;
        if r.get(0).is_some_and(|f| f.trim_start().starts_with('#')) || r.iter().all(str::is_empty)
        {
            continue;
        }
        let method_name = field(path, line, &r, method, &header)?.to_owned();
        if is_transfer(&method_name) {
            copy_rows.push((line, r.len()));
        }
        if !(is_transfer(&method_name) && r.len() >= copy_width && r.len() < header.names.len()) {
            header.check_width(path, line, &r)?;
        }
        let fields = header
            .names
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != method)
            .map(|(i, n)| (n.clone(), r.get(i).unwrap_or("").to_owned()))
            .collect();
        calls.push(Call {
            line,
            method: method_name,
            fields,
        });
    }
    // A log writes its copies' rows one way: all short, or all as wide as the header. A short
    // one among wide ones was cut (`memcpyHtoD,612.480,1` of `memcpyHtoD,612.480,1220.000,,,`).
    let full = header.names.len();
    if copy_rows.iter().any(|&(_, width)| width == full)
        && let Some(&(line, width)) = copy_rows.iter().find(|&&(_, width)| width < full)
    {
        return Err(PluginError::at_line(
            path,
            line,
            format!(
                "a copy's row of {width} fields among copies' rows of {full} (as in the header): cut short?"
            ),
        ));
    }
    Ok(calls)
}
