//! nvprof `--csv` output:
//! - metric and event summaries (`--metrics ...` / `--events ...`): one row per kernel and
//!   metric with Min/Max/Avg, units written into the values (`100.000000%`, `190.7GB/s`,
//!   `Low (1)`), preceded by `==PID==` banner lines;
//! - GPU traces (`--print-gpu-trace`): one row per kernel launch or memory copy, a units row under
//!   the header, and header and units rows repeated when several runs are concatenated (as the
//!   gpuperfpredict scripts do, prefixing every line with the run's input size).

use std::collections::BTreeMap;
use std::path::Path;
use yosoku_plugin_sdk::formats::refusal;

use yosoku_plugin_sdk::PluginError;

use crate::builder::{RunKey, Tables, TextCells};
use crate::input::{self, Header, csv_records, field, kernel_program, text_field};
use crate::units::{Prefixes, normalise_text, split_inline_unit};

/// How to label the rows of a file.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    pub device: Option<String>,
    pub program: Option<String>,
    pub variant: Option<String>,
    /// Names of the columns a script prefixed to a trace's lines (default `prefix1`, ...).
    pub prefix_names: Option<Vec<String>>,
}

/// This reader, as the refusal of a file of another format names it.
const NVPROF: (&str, &str) = ("cuda_profiler", "nvprof");

/// `Tesla K20c (0)` -> `Tesla K20c`.
fn device_name(text: &str) -> String {
    match text.rfind(" (") {
        Some(i) if text.ends_with(')') => text[..i].to_owned(),
        _ => text.to_owned(),
    }
}

pub fn read(path: &Path, text: &str, labels: &Labels) -> Result<Tables, PluginError> {
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    not_a_table(path, text)?;
    let before = preamble(text);
    let (csv_start, skipped) = (before.bytes, before.lines);
    let (after_bytes, after_lines) = if before.found_header {
        input::lines_after_table(&text[csv_start..])
    } else {
        (0, 0)
    };
    let body = &text[csv_start..text.len() - after_bytes];
    let mut records = csv_records(path, body).map(|r| r.map(|(line, rec)| (line + skipped, rec)));
    let Some(first) = records.next() else {
        return Err(refusal(path, None, text, NVPROF, "no CSV header"));
    };
    let (line, header) = first?;
    let header = Header::new(&header);
    let mut tables = if header.find("Metric Name").is_some() {
        summary(path, line, &header, records, labels, "Metric Name")?
    } else if header.find("Event Name").is_some() {
        summary(path, line, &header, records, labels, "Event Name")?
    } else if let (Some(start), Some(_)) = (header.find("Start"), header.find("Duration")) {
        trace(path, line, &header, start, records, labels)?
    } else if header.find("Time(%)").is_some() && header.find("Calls").is_some() {
        return Err(PluginError::at_line(
            path,
            line,
            "nvprof's GPU summary (`--print-gpu-summary`, or `--csv` alone): each kernel's total over its calls, not its launches; rerun nvprof with --csv --print-gpu-trace for each launch's time (and --metrics or --events for counters)",
        ));
    } else {
        return Err(refusal(
            path,
            Some(line),
            text,
            NVPROF,
            "expected a header with `Metric Name`, `Event Name`, or `Start` and `Duration` (GPU trace)",
        ));
    };
    tables.note_program_output(path, before.program_lines, after_lines);
    Ok(tables)
}

/// The two outputs of nvprof that hold no CSV table, each refused with what to do: its text
/// summary (a run without `--csv`: a `Type  Time(%)` header and `GPU activities:` rows) and a
/// run that profiled no kernel (its `No kernels were profiled.` warning).
fn not_a_table(path: &Path, text: &str) -> Result<(), PluginError> {
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        // `Type  Time(%) ...` since CUDA 9, `Time(%)      Time     Calls ...` before.
        if trimmed.starts_with("Type  Time(%)")
            || trimmed.starts_with("Time(%) ")
            || trimmed.starts_with("GPU activities:")
        {
            return Err(PluginError::at_line(
                path,
                i + 1,
                "nvprof's text summary, not its CSV: rerun nvprof with --csv (and --print-gpu-trace, --metrics or --events for launches and counters)",
            ));
        }
        if line.starts_with("==") && line.contains("No kernels were profiled") {
            return Err(PluginError::at_line(
                path,
                i + 1,
                format!(
                    "nvprof profiled no kernel (`{}`): the program launched none on a GPU nvprof can see",
                    line.trim()
                ),
            ));
        }
        // The table's header: what follows is CSV.
        if is_header(line) {
            break;
        }
    }
    Ok(())
}

/// The lines before an `nvprof --csv` table: the profiler's (`==PID== ...`, blank lines) and,
/// when the program's output went to the same file, the program's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Preamble {
    bytes: usize,
    lines: usize,
    /// Lines that were neither the profiler's nor blank.
    program_lines: usize,
    /// Whether a header of a table the reader knows ends the preamble.
    found_header: bool,
}

/// Whether a line is the header of a table the reader knows (nvprof quotes every name).
fn is_header(line: &str) -> bool {
    line.contains("\"Metric Name\"")
        || line.contains("\"Event Name\"")
        || (line.contains("\"Start\"") && line.contains("\"Duration\""))
}

/// What comes before the table: up to the first header line, or, in a file without one, up to
/// the first line that is neither the profiler's nor blank (which the reader then refuses as a
/// header).
fn preamble(text: &str) -> Preamble {
    let has_header = text.lines().any(is_header);
    let mut out = Preamble {
        found_header: has_header,
        ..Preamble::default()
    };
    // Counted on the lines as written: a CRLF line is one byte longer than `lines()` gives it
    // (found by `cargo xtask fuzz --target nvprof`: the offset drifted into a character).
    for raw in text.split_inclusive('\n') {
        let banner = raw.starts_with("==") || raw.trim().is_empty();
        if (has_header && is_header(raw)) || (!has_header && !banner) {
            break;
        }
        if !banner {
            out.program_lines += 1;
        }
        out.bytes += raw.len();
        out.lines += 1;
    }
    out
}

fn summary(
    path: &Path,
    header_line: usize,
    header: &Header,
    records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
    labels: &Labels,
    name_column: &str,
) -> Result<Tables, PluginError> {
    let format = "an `nvprof --csv` metric or event summary";
    let device = header.require(path, header_line, "Device", format)?;
    let kernel = header.require(path, header_line, "Kernel", format)?;
    let name = header.require(path, header_line, name_column, format)?;
    let avg = header.require(path, header_line, "Avg", format)?;
    let (min, max) = (header.find("Min"), header.find("Max"));
    // Whether each metric's values carry a unit (`%`, `GB/s`).
    let mut has_unit: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    let mut tables = Tables::new("nvprof", Prefixes::Binary);
    let mut runs: BTreeMap<(String, String), u32> = BTreeMap::new();
    for record in records {
        let (line, r) = record?;
        if r.iter().all(str::is_empty) || r.get(0).is_some_and(|f| f.starts_with("==")) {
            continue;
        }
        header.check_width(path, line, &r)?;
        let device_text = field(path, line, &r, device, header)?;
        let kernel_text = field(path, line, &r, kernel, header)?;
        let n = runs.len();
        let run = *runs
            .entry((device_text.to_owned(), kernel_text.to_owned()))
            .or_insert_with(|| {
                tables.key(RunKey {
                    run_id: format!("kernel{n}"),
                    device: labels
                        .device
                        .clone()
                        .unwrap_or_else(|| device_name(device_text)),
                    program: labels
                        .program
                        .clone()
                        .unwrap_or_else(|| kernel_program(kernel_text)),
                    variant: labels.variant.clone().unwrap_or_default(),
                    kernel: Some(kernel_text.to_owned()),
                })
            });
        let metric = field(path, line, &r, name, header)?;
        let text = field(path, line, &r, avg, header)?;
        let (value, unit) = split_inline_unit(text).ok_or_else(|| {
            PluginError::at_line(
                path,
                line,
                format!("column `Avg` of `{metric}`: expected a number, found `{text}`"),
            )
        })?;
        // A unit written beside the row's other values, or the metric's in another row, and
        // missing here: the value was cut (`69.190984%` to `69.19`, then a line end).
        let with_unit = [min, max]
            .into_iter()
            .flatten()
            .filter_map(|c| r.get(c))
            .filter_map(split_inline_unit)
            .any(|(_, u)| !u.is_empty())
            || has_unit.get(metric).copied().unwrap_or(false);
        if unit.is_empty() && with_unit {
            return Err(PluginError::at(
                path,
                line,
                avg + 1,
                format!(
                    "column `Avg` of `{metric}` is `{text}`, without the unit its other values carry: cut short?"
                ),
            ));
        }
        has_unit.insert(metric.to_owned(), !unit.is_empty());
        tables.add_counter(run, metric, value, &unit);
    }
    Ok(tables)
}

/// The columns of a GPU trace that are numbers in every row that has them.
const NUMERIC_TRACE_COLUMNS: &[&str] = &[
    "Grid X",
    "Grid Y",
    "Grid Z",
    "Block X",
    "Block Y",
    "Block Z",
    "Registers Per Thread",
    "Static SMem",
    "Dynamic SMem",
    "Size",
    "Throughput",
];

fn trace(
    path: &Path,
    header_line: usize,
    header: &Header,
    start: usize,
    records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
    labels: &Labels,
) -> Result<Tables, PluginError> {
    let format = "an `nvprof --csv --print-gpu-trace` file";
    let mut tables = Tables::new("nvprof", Prefixes::Binary);
    // Rows of the tool's own activities without a duration (unified-memory CPU page faults), by
    // name: instants on the timeline.
    let mut instants: std::collections::BTreeMap<String, usize> = Default::default();
    // Lines of rows whose duration the file prints as 0 (below its resolution).
    let mut zero_rows: Vec<usize> = Vec::new();
    let columns = TraceColumns {
        path,
        header,
        labels,
        start,
        duration: header.require(path, header_line, "Duration", format)?,
        name: header.require(path, header_line, "Name", format)?,
        device: header.find("Device"),
        stream: header.find("Stream"),
        stem: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        prefix_names: prefix_names(path, header_line, labels, start)?,
        counters: counter_columns(header, start)
            .into_iter()
            .map(|i| (i, tables.name(&header.names[i])))
            .collect(),
    };
    let mut units: Option<csv::StringRecord> = None;
    let mut expect_units = true;
    let mut text_cells = TextCells::default();
    for record in records {
        let (line, r) = record?;
        if r.iter().all(str::is_empty) {
            continue;
        }
        if r.get(start).is_some_and(|f| f == "Start") {
            // A repeated header: its units row follows.
            expect_units = true;
            continue;
        }
        if expect_units {
            units = Some(r);
            expect_units = false;
            continue;
        }
        let Some(units) = units.as_ref() else {
            return Err(PluginError::at_line(
                path,
                line,
                "a trace row before any units row",
            ));
        };
        header.check_width(path, line, &r)?;
        if let Some(name) = columns.instant(&mut tables, line, &r, units)? {
            *instants.entry(name).or_default() += 1;
            continue;
        }
        if !columns.row(&mut tables, &mut text_cells, line, &r, units)? {
            zero_rows.push(line);
        }
    }
    for (name, n) in instants {
        tables.add_note(format!(
            "{n} `{name}` row(s) have no duration (events at an instant, not work of a time): \
             kept on the timeline as instants, not as runs"
        ));
    }
    if let Some(first) = zero_rows.first() {
        tables.add_note(format!(
            "{} row(s) have a duration of 0 at the file's resolution (the first at line {first}): \
             kept on the timeline, not as runs (a time of 0 is nothing to model)",
            zero_rows.len()
        ));
    }
    // The launch and copy columns hold numbers only: text there is a value cut or overwritten
    // (other columns, such as a unified-memory trace's addresses, may be text throughout).
    text_cells.check(path, &tables, |raw| NUMERIC_TRACE_COLUMNS.contains(&raw))?;
    Ok(tables)
}

/// The names of the columns a script put before `Start` (they label the run, e.g. the input
/// size): the configuration's `prefix_names`, else `prefix1`, `prefix2`, ...
fn prefix_names(
    path: &Path,
    header_line: usize,
    labels: &Labels,
    start: usize,
) -> Result<Vec<String>, PluginError> {
    match &labels.prefix_names {
        Some(names) if names.len() == start => Ok(names.clone()),
        Some(names) => Err(PluginError::at_line(
            path,
            header_line,
            format!(
                "config key `prefix_names` names {} columns, the lines carry {start} before `Start`",
                names.len()
            ),
        )),
        None => Ok((1..=start).map(|i| format!("prefix{i}")).collect()),
    }
}

/// The columns of a GPU trace from `Start` on that are counters, not the trace's own fields.
fn counter_columns(header: &Header, start: usize) -> Vec<usize> {
    (start..header.names.len())
        .filter(|&i| {
            !matches!(
                header.names[i].as_str(),
                "Start"
                    | "Duration"
                    | "Device"
                    | "Context"
                    | "Stream"
                    | "Name"
                    | "Correlation_ID"
                    | "Src Dev"
                    | "Src Ctx"
                    | "Dst Dev"
                    | "Dst Ctx"
                    | "SrcMemType"
                    | "DstMemType"
            )
        })
        .collect()
}

/// Where a GPU trace keeps what a row becomes.
struct TraceColumns<'a> {
    path: &'a Path,
    header: &'a Header,
    labels: &'a Labels,
    /// The index of `Start`: the columns before it are the script's prefix.
    start: usize,
    duration: usize,
    name: usize,
    device: Option<usize>,
    stream: Option<usize>,
    /// The file's stem: the timeline's name.
    stem: String,
    prefix_names: Vec<String>,
    /// Counter columns, with their name ids.
    counters: Vec<(usize, u32)>,
}

/// The phase of a trace row named `name`: a kernel, a copy or memset (`[CUDA memcpy HtoD]`,
/// `[Unified Memory Memcpy DtoH]`), or the time a GPU spent servicing unified-memory page faults
/// (`[Unified Memory GPU page faults]`), which is neither.
fn trace_phase(name: &str) -> (&'static str, &'static str) {
    if name.starts_with("[Unified Memory") && name.contains("page fault") {
        ("page_fault", "page_fault")
    } else if name.starts_with('[') {
        ("transfer", "memcpy")
    } else {
        ("kernel", "kernel")
    }
}

impl TraceColumns<'_> {
    /// The `name=value` cells of the columns a script put before `Start`.
    fn prefix(&self, r: &csv::StringRecord) -> Vec<String> {
        (0..self.start)
            .map(|i| format!("{}={}", self.prefix_names[i], r.get(i).unwrap_or("")))
            .collect()
    }

    /// The timeline of a row with `prefix`: the file's, one per prefix.
    fn timeline(&self, prefix: &[String]) -> String {
        if prefix.is_empty() {
            self.stem.clone()
        } else {
            format!("{};{}", self.stem, prefix.join(";"))
        }
    }

    /// Row `r`'s `Start`, in seconds (its unit from the units row).
    fn start_secs(
        &self,
        line: usize,
        r: &csv::StringRecord,
        units: &csv::StringRecord,
    ) -> Result<f64, PluginError> {
        let start_text = field(self.path, line, r, self.start, self.header)?;
        normalise_text(
            start_text,
            units.get(self.start).unwrap_or(""),
            Prefixes::Binary,
        )
        .filter(|v| v.unit == "s")
        .map(|v| v.value)
        .ok_or_else(|| {
            PluginError::at_line(
                self.path,
                line,
                format!("column `Start`: expected a time, found `{start_text}`"),
            )
        })
    }

    /// The device a row ran on, as the runs name it.
    fn device_of(&self, r: &csv::StringRecord) -> String {
        self.labels.device.clone().unwrap_or_else(|| {
            self.device
                .and_then(|d| r.get(d))
                .map(device_name)
                .unwrap_or_default()
        })
    }

    /// Row `r` as an instant on the timeline, when it is one: an activity of the tool (its name
    /// in brackets) with an empty `Duration`, as nvprof writes unified-memory CPU page faults.
    /// Its name, or `None` for a row of a time (a kernel without a duration is an error of
    /// [`TraceColumns::row`]).
    fn instant(
        &self,
        tables: &mut Tables,
        line: usize,
        r: &csv::StringRecord,
        units: &csv::StringRecord,
    ) -> Result<Option<String>, PluginError> {
        let name = r.get(self.name).unwrap_or("");
        let empty = r.get(self.duration).is_none_or(|d| d.trim().is_empty());
        if !(empty && name.starts_with('[') && name.ends_with(']')) {
            return Ok(None);
        }
        let start_secs = self.start_secs(line, r, units)?;
        let device = self.device_of(r);
        let lane = if device.is_empty() {
            "host".to_owned()
        } else {
            format!("{device} / host")
        };
        tables.add_span(&yosoku_traces::spans::Span {
            source_row: Some(line as i64),
            ..yosoku_traces::spans::Span::interval(
                &self.timeline(&self.prefix(r)),
                yosoku_traces::spans::Timeline::Measured,
                &lane,
                "stream",
                name,
                trace_phase(name).1,
                (start_secs * 1e9).round() as i64,
                0,
            )
        });
        Ok(Some(name.to_owned()))
    }

    /// Row `r` (line `line`, under `units`): a run (kernel or transfer) with its time and
    /// counters, and a span on its device's stream; `false` where its duration is printed as 0
    /// (the span alone, of no length: no time to model). A negative duration is an error.
    fn row(
        &self,
        tables: &mut Tables,
        text_cells: &mut TextCells,
        line: usize,
        r: &csv::StringRecord,
        units: &csv::StringRecord,
    ) -> Result<bool, PluginError> {
        let (path, header, labels) = (self.path, self.header, self.labels);
        let prefix = self.prefix(r);
        let name_text = text_field(path, line, r, self.name, header)?;
        let (phase, category) = trace_phase(name_text);
        let duration_text = field(path, line, r, self.duration, header)?;
        let seconds = normalise_text(
            duration_text,
            units.get(self.duration).unwrap_or(""),
            Prefixes::Binary,
        )
        .ok_or_else(|| {
            PluginError::at_line(
                path,
                line,
                format!("column `Duration`: expected a number, found `{duration_text}`"),
            )
        })?;
        if seconds.unit != "s" {
            return Err(PluginError::at_line(
                path,
                line,
                format!(
                    "column `Duration`: expected a time unit in the units row, found `{}`",
                    units.get(self.duration).unwrap_or("")
                ),
            ));
        }
        if !(seconds.value >= 0.0 && seconds.value.is_finite()) {
            return Err(PluginError::at_line(
                path,
                line,
                format!("column `Duration`: expected a time of 0 or more, found `{duration_text}`"),
            ));
        }
        let measured = seconds.value > 0.0;
        // The row on the file's timeline: its start (same units row) and its stream.
        let start_secs = self.start_secs(line, r, units)?;
        let timeline = self.timeline(&prefix);
        let device_label = self.device_of(r);
        let lane = match self.stream.and_then(|s| r.get(s)).filter(|s| !s.is_empty()) {
            Some(s) => format!("{device_label} / stream {s}"),
            None => device_label,
        };
        tables.add_span(&yosoku_traces::spans::Span {
            source_row: Some(line as i64),
            ..yosoku_traces::spans::Span::interval(
                &timeline,
                yosoku_traces::spans::Timeline::Measured,
                &lane,
                "stream",
                name_text,
                category,
                (start_secs * 1e9).round() as i64,
                (seconds.value * 1e9).round() as i64,
            )
        });
        if !measured {
            return Ok(false);
        }
        let run = tables.key(RunKey {
            run_id: format!("line{line}"),
            device: self.device_of(r),
            program: labels.program.clone().unwrap_or_else(|| {
                let program = kernel_program(name_text);
                // `matMul(float*, ...) [110]`: drop nvprof's correlation suffix.
                program.split(" [").next().unwrap_or(&program).to_owned()
            }),
            variant: labels.variant.clone().unwrap_or_else(|| prefix.join(";")),
            kernel: Some(name_text.to_owned()),
        });
        let parameters = (!prefix.is_empty()).then(|| prefix.join(";"));
        tables.add_run(run, parameters.as_deref(), phase, seconds.value);
        for &(c, name) in &self.counters {
            if let Some(text) = r.get(c) {
                let cell = tables.add_cell(run, name, text, units.get(c).unwrap_or(""));
                text_cells.record(name, cell, line, c + 1, text);
            }
        }
        Ok(true)
    }
}
