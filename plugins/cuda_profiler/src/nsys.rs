//! Nsight Systems' statistics exports (`nsys stats --report <name> --format csv`): the kernel
//! summary (`cuda_gpu_kern_sum`; `gpukernsum` before 2022), the memory-operation summary
//! (`cuda_gpu_mem_time_sum`; `gpumemtimesum`), the CUDA API summary (`cuda_api_sum`;
//! `cudaapisum`) and the GPU trace (`cuda_gpu_trace`; `gputrace`). A file holds one report
//! (`--output <prefix>` writes `<prefix>_<report>.csv`) or several, as nsys prints them on its
//! standard output, each after a ` ** <title> (<report>):` line and nsys's notices.

use std::path::Path;

use arrow_array::RecordBatch;
use yosoku_plugin_sdk::PluginError;
use yosoku_traces::spans::{Span, SpansBuilder, Timeline};

use crate::builder::{RunKey, Tables};
use crate::input::kernel_program;
use crate::units::{Prefixes, parse_number};

/// How to label the runs.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// Device for every run; default the GPU trace's device when it names one.
    pub device: Option<String>,
    /// Program for every run; default the kernel's (or the operation's, the call's) name.
    pub program: Option<String>,
    pub variant: Option<String>,
}

/// A report nsys writes, and what yosoku makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Report {
    /// Runs of kernels: their count (`Instances`) and total time, the statistics as counters.
    Kernels,
    /// Runs of copies and sets (phase `transfer`).
    MemoryOps,
    /// Runs of CUDA API calls (phase `api`).
    Api,
    /// One span per kernel, copy or set.
    Trace,
}

/// The names of the reports, today's and those before nsys 2022.
const REPORTS: &[(&str, Report)] = &[
    ("cuda_gpu_kern_sum", Report::Kernels),
    ("gpukernsum", Report::Kernels),
    ("cuda_gpu_mem_time_sum", Report::MemoryOps),
    ("gpumemtimesum", Report::MemoryOps),
    ("cuda_api_sum", Report::Api),
    ("cudaapisum", Report::Api),
    ("cuda_gpu_trace", Report::Trace),
    ("gputrace", Report::Trace),
];

/// Reports nsys writes that hold no kernel, copy or CUDA call times.
const OTHER_REPORTS: &[&str] = &[
    "osrt_sum",
    "nvtx_sum",
    "nvtx_pushpop_sum",
    "nvtx_startend_sum",
    "nvtx_gpu_proj_sum",
    "cuda_gpu_mem_size_sum",
    "gpumemsizesum",
    "cuda_gpu_sum",
    "cuda_kern_exec_sum",
    "cuda_api_gpu_sum",
    "openmp_sum",
    "opengl_khr_range_sum",
    "vulkan_marker_sum",
    "dx11_pix_sum",
    "dx12_pix_sum",
    "um_sum",
    "um_total_sum",
    "um_cpu_page_faults_sum",
    "wddm_queue_sum",
    "mpi_event_sum",
    "nvtxsum",
    "osrtsum",
];

/// A summary's columns: the count, the total, the name, and the statistics of one instance.
const COUNT: &[&str] = &["Instances", "Count", "Num Calls", "Operations", "Calls"];
const TOTAL: &[&str] = &["Total Time (ns)", "Total Time"];
const NAME: &[&str] = &["Name", "Operation"];
/// Each statistic: the raw name it is stored under (a time in ns) and the headers that give it.
const STATISTICS: &[(&str, &[&str])] = &[
    ("Avg (ns)", &["Avg (ns)", "Average (ns)", "Average", "Avg"]),
    ("Med (ns)", &["Med (ns)", "Median (ns)", "Median", "Med"]),
    ("Min (ns)", &["Min (ns)", "Minimum (ns)", "Minimum", "Min"]),
    ("Max (ns)", &["Max (ns)", "Maximum (ns)", "Maximum", "Max"]),
    ("StdDev (ns)", &["StdDev (ns)", "StdDev"]),
];

/// One table of a file: its report, the line of its header and its lines (header first).
struct Table<'t> {
    report: Report,
    header_line: usize,
    lines: Vec<&'t str>,
}

/// Whether a line is a report's header.
fn is_header(line: &str) -> bool {
    let l = line.trim_start_matches('"');
    l.starts_with("Start (ns)")
        || line.contains("Total Time (ns)")
        || (line.contains("Total Time") && line.contains("Time(%)"))
}

/// The report of the table whose header is `header`: named by the file (`<prefix>_<report>.csv`)
/// or by the title line before it, else told by its columns.
fn report_of(path: &Path, title: Option<&str>, header: &str) -> Result<Report, String> {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let named = |text: &str, name: &str| {
        text.contains(&format!("_{name}.csv"))
            || text.contains(&format!("({name})"))
            || text.starts_with(&format!("{name}."))
    };
    for text in title.into_iter().chain([file.as_str()]) {
        if let Some((_, r)) = REPORTS.iter().find(|(n, _)| named(text, n)) {
            return Ok(*r);
        }
        if let Some(name) = OTHER_REPORTS.iter().find(|n| named(text, n)) {
            return Err(format!(
                "an nsys `{name}` report, which holds no kernel, copy or CUDA call times: yosoku reads cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum and cuda_gpu_trace"
            ));
        }
    }
    let has = |c: &str| header.contains(c);
    Ok(if has("Start (ns)") && has("Duration (ns)") {
        Report::Trace
    } else if has("Operation") {
        Report::MemoryOps
    } else if has("Num Calls") {
        Report::Api
    } else {
        Report::Kernels
    })
}

/// The tables of `text`: each from its header to the next blank line.
fn tables<'t>(path: &Path, text: &'t str) -> Result<Vec<Table<'t>>, PluginError> {
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_header(lines[i]) {
            i += 1;
            continue;
        }
        let title = lines[..i]
            .iter()
            .rev()
            .take_while(|l| !is_header(l))
            .find(|l| l.contains(" ** ") || l.contains("Processing ["))
            .copied();
        let report =
            report_of(path, title, lines[i]).map_err(|e| PluginError::at_line(path, i + 1, e))?;
        let end = lines[i..]
            .iter()
            .position(|l| l.trim().is_empty())
            .map_or(lines.len(), |n| i + n);
        out.push(Table {
            report,
            header_line: i + 1,
            lines: lines[i..end].to_vec(),
        });
        i = end;
    }
    if out.is_empty() {
        return Err(yosoku_plugin_sdk::formats::refusal(
            path,
            None,
            text,
            ("cuda_profiler", "nsys"),
            "no nsys stats table (a header with `Total Time (ns)`, or `Start (ns)` for the GPU trace)",
        ));
    }
    Ok(out)
}

/// The records of a table, each with its line; every record as wide as the header.
fn records(path: &Path, table: &Table<'_>) -> Result<Vec<(usize, csv::StringRecord)>, PluginError> {
    // Blank lines for those before the table (the CSV reader skips them): records are numbered
    // by the file's lines, and a quoted name cut short fails at its line (`csv_records`).
    let body = "\n".repeat(table.header_line - 1) + &table.lines.join("\n") + "\n";
    let mut out: Vec<(usize, csv::StringRecord)> = Vec::new();
    for record in crate::input::csv_records(path, &body) {
        let (line, r) = record?;
        if let Some((_, first)) = out.first()
            && r.len() != csv::StringRecord::len(first)
        {
            return Err(PluginError::at_line(
                path,
                line,
                format!(
                    "expected {} fields as in the header, found {}: cut short?",
                    csv::StringRecord::len(first),
                    r.len()
                ),
            ));
        }
        out.push((line, r));
    }
    Ok(out)
}

/// One row of a GPU trace.
struct TraceRow {
    line: usize,
    start_ns: i64,
    duration_ns: i64,
    name: String,
    device: String,
    stream: String,
}

/// The rows of a GPU trace table.
fn trace_rows(path: &Path, table: &Table<'_>) -> Result<Vec<TraceRow>, PluginError> {
    let records = records(path, table)?;
    let Some(((_, header), rows)) = records.split_first() else {
        return Ok(Vec::new());
    };
    let column = |name: &str| header.iter().position(|h| h == name);
    let required = |name: &str| {
        column(name).ok_or_else(|| {
            PluginError::at_line(
                path,
                table.header_line,
                format!("no column `{name}` in the GPU trace's header"),
            )
        })
    };
    let (start, duration, name) = (
        required("Start (ns)")?,
        required("Duration (ns)")?,
        required("Name")?,
    );
    let (device, stream) = (column("Device"), column("Strm"));
    let mut out = Vec::with_capacity(rows.len());
    for (line, r) in rows {
        let number = |c: usize, what: &str| {
            let text = r.get(c).unwrap_or("");
            parse_number(text)
                .filter(|v| v.fract() == 0.0 && *v >= 0.0)
                .map(|v| v as i64)
                .ok_or_else(|| {
                    PluginError::at(
                        path,
                        *line,
                        c + 1,
                        format!("column `{what}`: expected whole nanoseconds, found `{text}`"),
                    )
                })
        };
        let text = |c: Option<usize>| c.and_then(|c| r.get(c)).unwrap_or("").trim().to_owned();
        let kernel = text(Some(name));
        check_name(path, *line, name, &kernel)?;
        out.push(TraceRow {
            line: *line,
            start_ns: number(start, "Start (ns)")?,
            duration_ns: number(duration, "Duration (ns)")?,
            name: kernel,
            device: text(device),
            stream: text(stream),
        });
    }
    Ok(out)
}

/// A row's name (column `column`) is whole: not empty, and a memory operation's bracketed
/// name (`[CUDA memcpy Device-to-Host]`) closed. Either was cut short otherwise.
fn check_name(path: &Path, line: usize, column: usize, name: &str) -> Result<(), PluginError> {
    if name.is_empty() || (name.starts_with('[') && !name.ends_with(']')) {
        return Err(PluginError::at(
            path,
            line,
            column + 1,
            format!("the name `{name}` is not whole (empty, or a `[` not closed): cut short?"),
        ));
    }
    Ok(())
}

/// What a trace row is: `memcpy`, `memset` or `kernel`.
fn category(name: &str) -> &'static str {
    if name.starts_with("[CUDA memcpy") {
        "memcpy"
    } else if name.starts_with("[CUDA memset") {
        "memset"
    } else {
        "kernel"
    }
}

/// `NVIDIA H100 80GB HBM3 (0)` -> `NVIDIA H100 80GB HBM3`.
fn device_name(text: &str) -> &str {
    match text.rfind(" (") {
        Some(i) if text.ends_with(')') => &text[..i],
        _ => text,
    }
}

fn span<'a>(row: &'a TraceRow, timeline: &'a str, lane: &'a str) -> Span<'a> {
    Span {
        source_row: Some(row.line as i64),
        ..Span::interval(
            timeline,
            Timeline::Measured,
            lane,
            "stream",
            &row.name,
            category(&row.name),
            row.start_ns,
            row.duration_ns,
        )
    }
}

fn lane(row: &TraceRow) -> String {
    let device = if row.device.is_empty() {
        "GPU"
    } else {
        &row.device
    };
    if row.stream.is_empty() {
        device.to_owned()
    } else {
        format!("{device} / stream {}", row.stream)
    }
}

/// `nsys stats --report cuda_gpu_trace --format csv` as `spans`: one per kernel, copy or set,
/// on a lane per device and stream. Lines before the header (nsys's notices) are skipped.
pub fn read_gpu_trace(path: &Path, text: &str, timeline: &str) -> Result<RecordBatch, PluginError> {
    let trace = tables(path, text)?
        .into_iter()
        .find(|t| t.report == Report::Trace)
        .ok_or_else(|| {
            PluginError::new(format!(
                "{}: not an nsys cuda_gpu_trace CSV (no header starting `Start (ns)`)",
                path.display()
            ))
        })?;
    let mut spans = SpansBuilder::new();
    for row in trace_rows(path, &trace)? {
        let lane = lane(&row);
        spans.push(&span(&row, timeline, &lane));
    }
    spans
        .finish()
        .map_err(|e| PluginError::new(format!("{}: {e}", path.display())))
}

/// Reads the nsys statistics exports of one profiled run (`files`: path and text, each one
/// report or several) into `runs` (from the summaries: one per kernel, memory operation and
/// CUDA call, its count as `repetitions` and its total time; from the GPU trace, one per
/// launch, when no kernel summary is given), `counters` (each summary's statistics of one
/// instance, in seconds) and `spans` (the GPU trace).
pub fn read(files: &[(&Path, &str)], labels: &Labels) -> Result<Tables, PluginError> {
    let mut summaries = Vec::new();
    let mut traces = Vec::new();
    for &(path, text) in files {
        for table in tables(path, text)? {
            if table.report == Report::Trace {
                traces.push((path, trace_rows(path, &table)?));
            } else {
                summaries.push((path, table));
            }
        }
    }
    let devices: std::collections::BTreeSet<&str> = traces
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|r| device_name(&r.device)))
        .filter(|d| !d.is_empty())
        .collect();
    let device = match (&labels.device, devices.len()) {
        (Some(d), _) => Some(d.clone()),
        (None, 1) => devices.first().map(|d| (*d).to_owned()),
        _ => None,
    };
    let mut tables = Tables::new("nsys", Prefixes::Decimal);
    for (path, table) in &summaries {
        let device = device.as_deref().ok_or_else(|| {
            PluginError::new(format!(
                "{}: nsys's summaries do not name the GPU{}: set config key `device`",
                path.display(),
                if devices.len() > 1 {
                    format!(" (the GPU trace names {})", devices.len())
                } else {
                    String::new()
                }
            ))
        })?;
        summary(&mut tables, path, table, device, labels)?;
    }
    let kernels_summarised = summaries.iter().any(|(_, t)| t.report == Report::Kernels);
    for (path, rows) in &traces {
        let stem = crate::input::csv_stem(path);
        let timeline = labels.program.as_deref().unwrap_or(&stem);
        for row in rows {
            let lane = lane(row);
            tables.add_span(&span(row, timeline, &lane));
            if !kernels_summarised {
                trace_run(&mut tables, &stem, row, labels)?;
            }
        }
    }
    Ok(tables)
}

/// The run of one launch (or copy, or set) of a GPU trace.
fn trace_run(
    tables: &mut Tables,
    stem: &str,
    row: &TraceRow,
    labels: &Labels,
) -> Result<(), PluginError> {
    let is_kernel = category(&row.name) == "kernel";
    let run = tables.key(RunKey {
        run_id: format!("{stem}:{}", row.line),
        device: labels
            .device
            .clone()
            .unwrap_or_else(|| device_name(&row.device).to_owned()),
        program: labels.program.clone().unwrap_or_else(|| {
            if is_kernel {
                kernel_program(&row.name)
            } else {
                row.name.clone()
            }
        }),
        variant: labels.variant.clone().unwrap_or_default(),
        kernel: Some(row.name.clone()),
    });
    // Whole nanoseconds: the quotient of two exact doubles, correctly rounded.
    let seconds = Tables::check_duration(row.duration_ns as f64 / 1e9)
        .map_err(|e| PluginError::new(format!("line {}: {e}", row.line)))?;
    let phase = if is_kernel { "kernel" } else { "transfer" };
    tables.add_run(run, None, phase, seconds);
    Ok(())
}

/// The runs of one summary table: one per row, its count and total, its statistics as counters.
fn summary(
    tables: &mut Tables,
    path: &Path,
    table: &Table<'_>,
    device: &str,
    labels: &Labels,
) -> Result<(), PluginError> {
    let records = records(path, table)?;
    let Some(((_, header), rows)) = records.split_first() else {
        return Ok(());
    };
    let find = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| header.iter().position(|h| h.trim() == *n))
    };
    let need = |names: &[&str]| {
        find(names).ok_or_else(|| {
            PluginError::at_line(
                path,
                table.header_line,
                format!(
                    "expected a column {} in this nsys summary's header",
                    names.join(" or ")
                ),
            )
        })
    };
    let (count, total, name) = (need(COUNT)?, need(TOTAL)?, need(NAME)?);
    let statistics: Vec<(u32, usize)> = STATISTICS
        .iter()
        .filter_map(|(raw, heads)| find(heads).map(|c| (tables.name(raw), c)))
        .collect();
    let (phase, is_kernels) = match table.report {
        Report::Kernels => ("kernel", true),
        Report::MemoryOps => ("transfer", false),
        _ => ("api", false),
    };
    let stem = crate::input::csv_stem(path);
    for (line, r) in rows {
        let cell = |c: usize| r.get(c).unwrap_or("").trim();
        let at = |c: usize, what: String| PluginError::at(path, *line, c + 1, what);
        let label = cell(name);
        check_name(path, *line, name, label)?;
        let n = parse_number(cell(count))
            .filter(|v| v.fract() == 0.0 && *v >= 1.0)
            .ok_or_else(|| {
                at(
                    count,
                    format!(
                        "`{}`: expected a count of at least 1, found `{}`",
                        header[count].trim(),
                        cell(count)
                    ),
                )
            })?;
        let seconds = crate::units::parse_scaled(cell(total), -9)
            .and_then(|s| Tables::check_duration(s).ok())
            .ok_or_else(|| {
                at(
                    total,
                    format!(
                        "`{}`: expected a time in ns above zero, found `{}`",
                        header[total].trim(),
                        cell(total)
                    ),
                )
            })?;
        let run = tables.key(RunKey {
            run_id: format!("{stem}:{line}"),
            device: device.to_owned(),
            program: labels.program.clone().unwrap_or_else(|| {
                if is_kernels {
                    kernel_program(label)
                } else {
                    label.to_owned()
                }
            }),
            variant: labels.variant.clone().unwrap_or_default(),
            kernel: Some(label.to_owned()),
        });
        tables.add_repeated_run(run, None, phase, seconds, n as i64);
        for &(statistic, c) in &statistics {
            let text = cell(c);
            if text.is_empty() {
                tables.count_null(statistic);
            } else if !tables.add_text(run, statistic, text, "ns") {
                return Err(at(
                    c,
                    format!(
                        "`{}`: expected a time in ns, found `{text}`",
                        header[c].trim()
                    ),
                ));
            }
        }
    }
    Ok(())
}
