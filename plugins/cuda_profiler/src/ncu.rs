//! Nsight Compute `--csv` output: the details page (long form: one row per metric of a launch,
//! plus rule rows with empty metric fields) and the raw page (wide: one row per launch, hundreds
//! of metric columns, a units row under the header). `==PROF==` and other `==` lines are skipped;
//! an `==ERROR==` line is an error.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use yosoku_plugin_sdk::PluginError;

use crate::builder::{RunKey, Tables, TextCells, is_null_cell};
use crate::devices::DeviceRow;
use yosoku_plugin_sdk::formats::refusal;

/// This reader, as the refusal of a file of another format names it.
const NCU: (&str, &str) = ("cuda_profiler", "ncu");
use crate::input::{
    self, Header, csv_records, field, kernel_program, pieces_for, read_pieces, record_pieces,
};
use crate::quoted;
use crate::units::{Prefixes, Scale, normalise_text, parse_number};

/// How to label the launches of a file.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// Device name for every row; default the name the file gives
    /// (`device__attribute_display_name`, e.g. `NVIDIA B200`), else `GPU <Device> (CC <CC>)`.
    pub device: Option<String>,
    /// Program for every row; default the kernel's name.
    pub program: Option<String>,
    /// Variant of each launch, in launch order; default empty.
    pub variants: Option<Vec<String>>,
}

/// What a details-page row's value is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Number(f64),
    /// No value (`n/a`, empty): counted, not read.
    Null,
    /// `device__attribute_display_name`: the device's name.
    DeviceName,
}

/// What the value of a details-page row of `metric` (with `unit`) is: a number, no value, the
/// device's name, or (`None`) an enumeration or a tuple (`PolicySpread`, `(16, 16, 1)`), which
/// has no unit and is no counter. Text in a metric with a unit is an error (`at` places it): a
/// quantity cut or overwritten.
fn details_value(
    metric: &[u8],
    value: &str,
    unit: &[u8],
    at: impl Fn(String) -> PluginError,
) -> Result<Option<Value>, PluginError> {
    Ok(Some(if metric == DISPLAY_NAME.as_bytes() {
        Value::DeviceName
    } else if let Some(v) = parse_number(value) {
        Value::Number(v)
    } else if is_null_cell(value) {
        Value::Null
    } else if unit.is_empty() {
        return Ok(None);
    } else {
        return Err(at(format!(
            "metric `{}` ({}): expected a number (or no value: empty, n/a), found `{value}`",
            String::from_utf8_lossy(metric),
            String::from_utf8_lossy(unit)
        )));
    }))
}

/// The raw-page column and the details-page metric holding the kernel's duration.
const RAW_DURATION: &str = "gpu__time_duration.sum";
const DETAILS_DURATION: &str = "GPU Speed Of Light Throughput / Duration";

/// The section of a details page holding the metrics named with `--metrics`.
const METRICS_SECTION: &str = "Command line profiler metrics";

/// Identity columns that precede the metrics on both pages.
const IDENTITY: &[&str] = &[
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// Gives each launch (by its `ID`) a run, in order of first appearance.
struct Launches<'a> {
    path: &'a Path,
    labels: &'a Labels,
    runs: HashMap<String, u32>,
}

impl<'a> Launches<'a> {
    fn new(path: &'a Path, labels: &'a Labels) -> Self {
        Self {
            path,
            labels,
            runs: HashMap::new(),
        }
    }

    /// The run of launch `id`, made on its first row (`line` gives that row's line, wanted only
    /// for an error).
    fn run(
        &mut self,
        tables: &mut Tables,
        line: impl Fn() -> usize,
        id: &str,
        kernel: &str,
        device: &str,
        cc: &str,
    ) -> Result<u32, PluginError> {
        if let Some(&run) = self.runs.get(id) {
            return Ok(run);
        }
        let ordinal = self.runs.len();
        let variant = match &self.labels.variants {
            None => String::new(),
            Some(v) => v.get(ordinal).cloned().ok_or_else(|| {
                PluginError::at_line(
                    self.path,
                    line(),
                    format!(
                        "launch {} has no label: config key `variants` names {} launches",
                        ordinal + 1,
                        v.len()
                    ),
                )
            })?,
        };
        let run = tables.key(RunKey {
            run_id: id.to_owned(),
            device: self
                .labels
                .device
                .clone()
                .unwrap_or_else(|| format!("GPU {device} (CC {cc})")),
            program: self
                .labels
                .program
                .clone()
                .unwrap_or_else(|| kernel_program(kernel)),
            variant,
            kernel: Some(kernel.to_owned()),
        });
        self.runs.insert(id.to_owned(), run);
        Ok(run)
    }

    /// Names the device of `run` as the file does, unless the configuration names it.
    fn name_device(&self, tables: &mut Tables, run: u32, name: &str) {
        let name = name.trim();
        if self.labels.device.is_none() && !name.is_empty() {
            tables.set_device(run, name);
        }
    }

    /// Fails when `variants` names more launches than the file has.
    fn check_all_labelled(&self) -> Result<(), PluginError> {
        if let Some(v) = &self.labels.variants
            && v.len() != self.runs.len()
        {
            return Err(PluginError::new(format!(
                "{}: config key `variants` names {} launches, the file has {}",
                self.path.display(),
                v.len(),
                self.runs.len()
            )));
        }
        Ok(())
    }
}

/// The metric that holds the device's name (`NVIDIA B200`), in raw pages a column and in
/// details pages a row.
const DISPLAY_NAME: &str = "device__attribute_display_name";

/// Reads an `ncu --csv` file (details or raw page).
pub fn read(path: &Path, text: &str, labels: &Labels) -> Result<Tables, PluginError> {
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    read_in_pieces(path, text, labels, None)
}

/// [`read`], a details page cut into `pieces` read on as many threads (default: one per core
/// for large pages, else one: `input::pieces_for`).
fn read_in_pieces(
    path: &Path,
    text: &str,
    labels: &Labels,
    pieces: Option<usize>,
) -> Result<Tables, PluginError> {
    let before = Preamble::of(path, text)?;
    let (csv_start, skipped_lines) = (before.bytes, before.lines);
    let (after_bytes, after_lines) = input::lines_after_table(&text[csv_start..]);
    let body = &text[csv_start..text.len() - after_bytes];
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(body.as_bytes());
    let mut header = csv::StringRecord::new();
    let has_header = reader.read_record(&mut header).map_err(|e| {
        let line = e.position().map_or(0, |p| p.line() as usize);
        PluginError::at_line(path, line + skipped_lines, format!("malformed CSV: {e}"))
    })?;
    if !has_header {
        return Err(refusal(path, None, text, NCU, "no CSV header"));
    }
    let header_line = header.position().map_or(1, |p| p.line() as usize) + skipped_lines;
    // Where the rows start, and the line before them.
    let rows_start = (reader.position().byte() as usize).min(body.len());
    let lines_before_rows = reader.position().line() as usize - 1 + skipped_lines;
    let rows = &body[rows_start..];
    let header = Header::new(&header);
    let mut tables = if header.find("Metric Name").is_some()
        && header.find("Metric Value").is_some()
    {
        details(
            path,
            header_line,
            &header,
            rows,
            lines_before_rows,
            labels,
            pieces,
        )?
    } else if header.find("ID").is_some() && header.find("Kernel Name").is_some() {
        let records =
            csv_records(path, rows).map(|r| r.map(|(line, rec)| (line + lines_before_rows, rec)));
        raw(path, header_line, &header, records, labels)?
    } else {
        return Err(refusal(
            path,
            Some(header_line),
            text,
            NCU,
            "expected a header with `Metric Name` and `Metric Value` (details page) or `ID` and `Kernel Name` (raw page)",
        ));
    };
    tables.note_program_output(path, before.program_lines, after_lines);
    Ok(tables)
}

/// What comes before the CSV of an `ncu --csv` capture: the profiler's own lines (`==PROF==`;
/// an `==ERROR==` line is an error) and, when the program's output went to the same file
/// (`ncu --csv ./app > out.csv`), the program's lines, up to the header (`"ID",...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Preamble {
    /// Where the header starts.
    bytes: usize,
    lines: usize,
    /// Lines that were neither the profiler's nor blank.
    program_lines: usize,
    /// The profiler's own lines (`==PROF==` and the like).
    profiler_lines: usize,
}

impl Preamble {
    fn of(path: &Path, text: &str) -> Result<Self, PluginError> {
        let mut out = Preamble {
            bytes: 0,
            lines: 0,
            program_lines: 0,
            profiler_lines: 0,
        };
        // Counted on the lines as written, line ends included: a CRLF line is one byte longer
        // than `lines()` gives it (the nvprof reader's offset drifted into a character that way,
        // found by `cargo xtask fuzz --target nvprof`).
        for raw in text.split_inclusive('\n') {
            let line = raw.trim_end_matches(['\n', '\r']);
            if let Some(rest) = line.strip_prefix("==") {
                out.profiler_lines += 1;
                if rest.starts_with("ERROR==") {
                    return Err(PluginError::at_line(
                        path,
                        out.lines + 1,
                        format!("ncu reported an error: {line}"),
                    ));
                }
                // ncu ran and found nothing to profile: no table follows.
                if rest.starts_with("WARNING==") && rest.contains("No kernels were profiled") {
                    return Err(PluginError::at_line(
                        path,
                        out.lines + 1,
                        format!(
                            "ncu profiled no kernel (`{line}`): the program launched none on a GPU ncu can see, its filters (--kernel-name, --launch-skip, --launch-count) matched none, or the GPU's counters are restricted to administrators"
                        ),
                    ));
                }
            } else if line.starts_with("\"ID\",") || line.starts_with("ID,") {
                return Ok(out);
            } else if !line.trim().is_empty() {
                out.program_lines += 1;
            }
            out.bytes += raw.len();
            out.lines += 1;
        }
        if out.profiler_lines > 0 {
            // ncu ran (its `==PROF==` lines are here) and wrote no table.
            return Err(PluginError::at_line(
                path,
                out.lines,
                format!(
                    "an ncu log with no table: ncu's own lines ({}) but no header (`\"ID\",...`) after them, so no kernel was profiled (the program launched none on a GPU ncu can see, or its filters matched none) or ncu was stopped before it wrote one; run `ncu --csv` again on a run that launches kernels",
                    out.profiler_lines
                ),
            ));
        }
        Err(refusal(
            path,
            None,
            text,
            NCU,
            &format!(
                "no header line (`\"ID\",\"Process ID\",...`) in its {} lines",
                out.lines
            ),
        ))
    }
}

/// The columns of a details page the reader uses.
#[derive(Debug, Clone, Copy)]
struct DetailsColumns {
    id: usize,
    kernel: usize,
    section: usize,
    name: usize,
    unit: usize,
    value: usize,
    device: Option<usize>,
    cc: Option<usize>,
}

/// A launch as one piece of a details page first gives it.
#[derive(Debug)]
struct LaunchSeen {
    id: String,
    kernel: String,
    device: String,
    cc: String,
    /// Byte offset of its first row in the page's rows.
    offset: usize,
}

/// What one piece of a details page holds, read on its own thread: its counters (runs numbered
/// by first appearance in the piece), its launches, the device names it gives and the
/// durations.
#[derive(Debug)]
struct DetailsPiece {
    tables: Tables,
    launches: Vec<LaunchSeen>,
    device_names: Vec<(u32, String)>,
    durations: Vec<(u32, f64)>,
}

fn details(
    path: &Path,
    header_line: usize,
    header: &Header,
    rows: &str,
    lines_before_rows: usize,
    labels: &Labels,
    pieces: Option<usize>,
) -> Result<Tables, PluginError> {
    let format = "an `ncu --csv --page details` file";
    let cols = DetailsColumns {
        id: header.require(path, header_line, "ID", format)?,
        kernel: header.require(path, header_line, "Kernel Name", format)?,
        section: header.require(path, header_line, "Section Name", format)?,
        name: header.require(path, header_line, "Metric Name", format)?,
        unit: header.require(path, header_line, "Metric Unit", format)?,
        value: header.require(path, header_line, "Metric Value", format)?,
        device: header.find("Device"),
        cc: header.find("CC"),
    };
    // The line of a byte offset in `rows`: counted only when an error or a label needs it.
    let line_of = |offset: usize| {
        lines_before_rows
            + 1
            + rows.as_bytes()[..offset.min(rows.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
    };
    let bounds = record_pieces(rows, pieces.unwrap_or_else(|| pieces_for(rows.len())));
    input::check_quotes_closed(path, rows, &bounds, line_of)?;
    let pieces = read_pieces(path, bounds.len() - 1, |k| {
        let (from, to) = (bounds[k], bounds[k + 1]);
        details_piece(path, header, cols, from, &rows[from..to], &line_of)
    });

    // Put the pieces together in file order, as one reader would have read them.
    let mut tables = Tables::new("ncu", Prefixes::Decimal);
    let mut launches = Launches::new(path, labels);
    let mut durations: Vec<(u32, f64)> = Vec::new();
    for piece in pieces {
        let piece = piece?;
        let mut runs = Vec::with_capacity(piece.launches.len());
        for l in &piece.launches {
            runs.push(launches.run(
                &mut tables,
                || line_of(l.offset),
                &l.id,
                &l.kernel,
                &l.device,
                &l.cc,
            )?);
        }
        for (run, name) in &piece.device_names {
            launches.name_device(&mut tables, runs[*run as usize], name);
        }
        durations.extend(
            piece
                .durations
                .iter()
                .map(|&(run, secs)| (runs[run as usize], secs)),
        );
        tables.append_counters(piece.tables, &runs);
    }
    launches.check_all_labelled()?;
    // One time per launch: a page with both the Speed Of Light section and `--metrics
    // gpu__time_duration.sum` gives it twice (the same value, in other units).
    let mut timed = std::collections::HashSet::new();
    for (run, seconds) in durations {
        if timed.insert(run) {
            tables.add_run(run, None, "kernel", seconds);
        }
    }
    Ok(tables)
}

/// What the reader made of the `k`-th metric row of a launch: ncu writes the same sections and
/// metrics in the same order for every launch, so the next launch's `k`-th row is, byte for byte,
/// almost always the same metric in the same unit, and its name and conversion are reused
/// without building, hashing or resolving anything.
#[derive(Debug)]
struct MetricSlot {
    section: Vec<u8>,
    metric: Vec<u8>,
    unit: Vec<u8>,
    name: u32,
    scale: Scale,
    unit_idx: u32,
    is_duration: bool,
}

impl MetricSlot {
    fn is(&self, section: &[u8], metric: &[u8], unit: &[u8]) -> bool {
        self.metric == metric && self.section == section && self.unit == unit
    }
}

/// Field `i`'s bytes as text (`missing(i)` the error if they are not UTF-8).
fn as_str<'b>(
    b: &'b [u8],
    i: usize,
    missing: &dyn Fn(usize) -> PluginError,
) -> Result<&'b str, PluginError> {
    std::str::from_utf8(b).map_err(|_| missing(i))
}

/// A CSV record's fields, from either reader of [`details_piece`].
trait Record {
    fn len(&self) -> usize;
    /// Field `i` as written, without its surrounding quotes (doubled quotes left doubled).
    fn raw(&self, i: usize) -> Option<&[u8]>;
    /// Field `i` unescaped.
    fn unescaped(&self, i: usize) -> Option<Cow<'_, [u8]>>;
}

impl Record for simd_csv::ZeroCopyByteRecord<'_> {
    fn len(&self) -> usize {
        simd_csv::ZeroCopyByteRecord::len(self)
    }
    fn raw(&self, i: usize) -> Option<&[u8]> {
        self.unquote(i)
    }
    fn unescaped(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        self.unescape(i)
    }
}

/// A line whose every field is quoted or empty (`quoted::split_line`).
struct QuotedLine<'t> {
    text: &'t [u8],
    fields: &'t [Range<usize>],
}

impl Record for QuotedLine<'_> {
    fn len(&self) -> usize {
        self.fields.len()
    }
    fn raw(&self, i: usize) -> Option<&[u8]> {
        self.fields.get(i).map(|f| &self.text[f.clone()])
    }
    fn unescaped(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        self.raw(i).map(quoted::unescape)
    }
}

/// Reads the rows of one piece of a details page (`piece` starts at byte `start` of `rows`).
///
/// Lines as ncu writes them, every field quoted or empty, are split by `quoted::split_line`; from
/// the first other line (a field unquoted and not empty, or holding a line break; a blank line
/// aside) the rest of the piece goes through a general CSV reader. Both give the same records.
fn details_piece(
    path: &Path,
    header: &Header,
    cols: DetailsColumns,
    start: usize,
    piece: &str,
    line_of: &dyn Fn(usize) -> usize,
) -> Result<DetailsPiece, PluginError> {
    let mut rows = DetailsRows {
        path,
        header,
        cols,
        line_of,
        widest: [
            cols.id,
            cols.kernel,
            cols.section,
            cols.name,
            cols.unit,
            cols.value,
        ]
        .into_iter()
        .max()
        .unwrap_or(0),
        out: DetailsPiece {
            tables: Tables::new("ncu", Prefixes::Decimal),
            launches: Vec::new(),
            device_names: Vec::new(),
            durations: Vec::new(),
        },
        runs: HashMap::new(),
        last_run: None,
        row_in_launch: 0,
        slots: Vec::new(),
        raw_name: String::new(),
    };
    let text = piece.as_bytes();
    let mut pos = 0;
    let mut fields = Vec::new();
    while pos < text.len() {
        let (end, quoted) = quoted::split_line(text, pos, &mut fields);
        if quoted {
            rows.row(
                &QuotedLine {
                    text,
                    fields: &fields,
                },
                start + pos,
            )?;
        } else if !matches!(&text[pos..end], [] | [b'\r']) {
            break;
        }
        pos = end + 1;
    }
    if pos < text.len() {
        let rest = start + pos;
        let mut reader = simd_csv::ZeroCopyReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(128 << 10)
            .from_reader(&text[pos..]);
        loop {
            let offset = rest + reader.position() as usize;
            let record = reader.read_byte_record().map_err(|e| {
                PluginError::at_line(path, line_of(offset), format!("malformed CSV: {e}"))
            })?;
            let Some(r) = record else { break };
            if r.len() == 1 && r.get(0).is_some_and(<[u8]>::is_empty) {
                continue;
            }
            rows.row(&r, offset)?;
        }
    }
    Ok(rows.out)
}

/// The state of [`details_piece`] between rows.
struct DetailsRows<'a> {
    path: &'a Path,
    header: &'a Header,
    cols: DetailsColumns,
    line_of: &'a dyn Fn(usize) -> usize,
    /// The highest column index a row needs.
    widest: usize,
    out: DetailsPiece,
    runs: HashMap<String, u32>,
    /// The launch of the rows before, and its run.
    last_run: Option<(Vec<u8>, u32)>,
    /// How many metric rows of the current launch were read.
    row_in_launch: usize,
    slots: Vec<MetricSlot>,
    raw_name: String,
}

impl DetailsRows<'_> {
    /// The error of a record that lacks field `i` (or whose field `i` is not UTF-8).
    fn missing(&self, r: &impl Record, offset: usize, i: usize) -> PluginError {
        PluginError::at_line(
            self.path,
            (self.line_of)(offset),
            format!(
                "expected {} fields as in the header, found {} (no column `{}`)",
                self.header.names.len(),
                r.len(),
                self.header.names.get(i).map_or("?", String::as_str)
            ),
        )
    }

    /// Reads one record, starting at byte `offset` of the page's rows.
    fn row(&mut self, r: &impl Record, offset: usize) -> Result<(), PluginError> {
        let (path, cols) = (self.path, self.cols);
        let missing = |i: usize| self.missing(r, offset, i);
        // Rows are matched on their fields as written (`raw`: without the surrounding quotes,
        // doubled quotes left doubled); only what becomes a string is unescaped. Fields are cut
        // at ASCII delimiters of UTF-8 text, so they are UTF-8 too; the check stays for those
        // that become strings.
        let raw = |i: usize| r.raw(i).ok_or_else(|| missing(i));
        let metric = raw(cols.name)?;
        if metric.is_empty() {
            // A rule row: advice, not a measurement.
            return Ok(());
        }
        let value = as_str(raw(cols.value)?, cols.value, &missing)?;
        let at = |message: String| {
            PluginError::at(path, (self.line_of)(offset), cols.value + 1, message)
        };
        let Some(parsed) = details_value(metric, value, raw(cols.unit)?, at)? else {
            return Ok(());
        };
        if r.len() <= self.widest {
            let first_missing = [cols.id, cols.kernel, cols.section, cols.unit]
                .into_iter()
                .find(|&c| c >= r.len())
                .unwrap_or(self.widest);
            return Err(missing(first_missing));
        }
        let run = self.launch_run(r, offset)?;
        if parsed == Value::DeviceName {
            // The device's name, which may come after the launch's first values.
            let name = r
                .unescaped(cols.value)
                .ok_or_else(|| self.missing(r, offset, cols.value))?;
            let name = as_str(&name, cols.value, &|i| self.missing(r, offset, i))?.to_owned();
            self.out.device_names.push((run, name));
            return Ok(());
        }
        let k = self.row_in_launch;
        self.row_in_launch += 1;
        self.metric_slot(r, offset, k)?;
        let slot = &self.slots[k];
        let Value::Number(parsed) = parsed else {
            self.out.tables.count_null(slot.name);
            return Ok(());
        };
        if slot.is_duration
            && let Some(seconds) = normalise_text(
                value,
                as_str(
                    &r.unescaped(cols.unit)
                        .ok_or_else(|| self.missing(r, offset, cols.unit))?,
                    cols.unit,
                    &|i| self.missing(r, offset, i),
                )?,
                Prefixes::Decimal,
            )
        {
            let seconds = Tables::check_duration(seconds.value)
                .map_err(|e| PluginError::at_line(path, (self.line_of)(offset), e))?;
            self.out.durations.push((run, seconds));
        }
        if let Some(converted) = slot.scale.apply_parsed(value, parsed) {
            self.out
                .tables
                .add_resolved(run, slot.name, converted, slot.unit_idx);
        }
        Ok(())
    }

    /// The run of the record's launch: the one of the rows before when the launch is theirs,
    /// else the launch's run, made the first time its id is seen.
    fn launch_run(&mut self, r: &impl Record, offset: usize) -> Result<u32, PluginError> {
        let cols = self.cols;
        let launch_id = r
            .raw(cols.id)
            .ok_or_else(|| self.missing(r, offset, cols.id))?;
        if let Some((id, run)) = &self.last_run
            && id == launch_id
        {
            return Ok(*run);
        }
        let id = r
            .unescaped(cols.id)
            .ok_or_else(|| self.missing(r, offset, cols.id))?;
        let id = as_str(&id, cols.id, &|i| self.missing(r, offset, i))?;
        let run = match self.runs.get(id) {
            Some(&run) => run,
            None => {
                let text_of = |c: Option<usize>| {
                    c.and_then(|c| r.unescaped(c))
                        .and_then(|b| std::str::from_utf8(&b).ok().map(str::to_owned))
                        .unwrap_or_default()
                };
                let kernel = r
                    .unescaped(cols.kernel)
                    .ok_or_else(|| self.missing(r, offset, cols.kernel))?;
                let kernel = as_str(&kernel, cols.kernel, &|i| self.missing(r, offset, i))?;
                let run = self.out.tables.key(RunKey {
                    run_id: id.to_owned(),
                    device: String::new(),
                    program: String::new(),
                    variant: String::new(),
                    kernel: None,
                });
                self.out.launches.push(LaunchSeen {
                    id: id.to_owned(),
                    kernel: kernel.to_owned(),
                    device: text_of(cols.device),
                    cc: text_of(cols.cc),
                    offset,
                });
                self.runs.insert(id.to_owned(), run);
                run
            }
        };
        self.last_run = Some((launch_id.to_vec(), run));
        self.row_in_launch = 0;
        Ok(run)
    }

    /// Makes slot `k` of the launch the record's metric: kept when the launch before had the
    /// same metric in that row (the usual case: every launch lists the same metrics), else
    /// named, its unit resolved, and put there.
    fn metric_slot(&mut self, r: &impl Record, offset: usize, k: usize) -> Result<(), PluginError> {
        let cols = self.cols;
        let field = |i: usize| r.raw(i).ok_or_else(|| self.missing(r, offset, i));
        let (section, metric, unit) = (field(cols.section)?, field(cols.name)?, field(cols.unit)?);
        if self
            .slots
            .get(k)
            .is_some_and(|s| s.is(section, metric, unit))
        {
            return Ok(());
        }
        let text = |i: usize| -> Result<String, PluginError> {
            let b = r.unescaped(i).ok_or_else(|| self.missing(r, offset, i))?;
            Ok(as_str(&b, i, &|j| self.missing(r, offset, j))?.to_owned())
        };
        let (section_text, name_text, unit_text) =
            (text(cols.section)?, text(cols.name)?, text(cols.unit)?);
        let raw_name = &mut self.raw_name;
        raw_name.clear();
        // `ncu --metrics a,b,c` puts the metrics asked for in a section of their own: their
        // names are the raw page's (`gpu__time_duration.sum`), not a section's labels.
        if section_text != METRICS_SECTION {
            raw_name.push_str(&section_text);
            raw_name.push_str(" / ");
        }
        raw_name.push_str(&name_text);
        let name = self.out.tables.name(raw_name);
        let (scale, unit_idx) = self.out.tables.resolve(name, &unit_text);
        let slot = MetricSlot {
            section: section.to_vec(),
            metric: metric.to_vec(),
            unit: unit.to_vec(),
            name,
            scale,
            unit_idx,
            is_duration: *raw_name == DETAILS_DURATION || *raw_name == RAW_DURATION,
        };
        // `k` is at most the number of slots: each row before it in the launch has one.
        match self.slots.get_mut(k) {
            Some(old) => *old = slot,
            None => self.slots.push(slot),
        }
        Ok(())
    }
}

fn raw(
    path: &Path,
    header_line: usize,
    header: &Header,
    mut records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
    labels: &Labels,
) -> Result<Tables, PluginError> {
    let format = "an `ncu --csv --page raw` file";
    let id = header.require(path, header_line, "ID", format)?;
    let kernel = header.require(path, header_line, "Kernel Name", format)?;
    let device = header.find("Device");
    let cc = header.find("CC");
    let display_name = header.find(DISPLAY_NAME);
    let Some((units_line, units)) = records.next().transpose()? else {
        return Err(PluginError::at_line(
            path,
            header_line,
            "the header is not followed by a units row",
        ));
    };
    if units.get(id).is_some_and(|v| !v.is_empty()) {
        return Err(PluginError::at_line(
            path,
            units_line,
            "expected the units row under the header (its `ID` field empty), found a launch",
        ));
    }
    let mut tables = Tables::new("ncu", Prefixes::Decimal);
    let metric_columns: Vec<(usize, u32)> = (0..header.names.len())
        .filter(|&i| {
            let name = header.names[i].as_str();
            !IDENTITY.contains(&name) && !is_device_attribute(name)
        })
        .map(|i| (i, tables.name(&header.names[i])))
        .collect();
    let device_columns: Vec<usize> = (0..header.names.len())
        .filter(|&i| is_device_attribute(&header.names[i]))
        .collect();
    let duration = header.find(RAW_DURATION);

    let mut launches = Launches::new(path, labels);
    let mut text_cells = TextCells::default();
    for record in records {
        let (line, r) = record?;
        header.check_width(path, line, &r)?;
        let launch_id = field(path, line, &r, id, header)?;
        let kernel_name = field(path, line, &r, kernel, header)?;
        let device_id = device.and_then(|d| r.get(d)).unwrap_or("");
        let cc_text = cc.and_then(|c| r.get(c)).unwrap_or("");
        let run = launches.run(
            &mut tables,
            || line,
            launch_id,
            kernel_name,
            device_id,
            cc_text,
        )?;
        if let Some(name) = display_name.and_then(|d| r.get(d)) {
            launches.name_device(&mut tables, run, name);
        }
        let device_name = &tables.run_key(run).device;
        if !device_columns.is_empty() && !tables.has_device(device_name) {
            let row = device_row(device_name.clone(), &header.names, &device_columns, &r);
            tables.add_device(row);
        }
        for &(c, name) in &metric_columns {
            if let Some(text) = r.get(c) {
                let cell = tables.add_cell(run, name, text, units.get(c).unwrap_or(""));
                text_cells.record(name, cell, line, c + 1, text);
            }
        }
        if let Some(d) = duration {
            let text = field(path, line, &r, d, header)?;
            let seconds = normalise_text(text, units.get(d).unwrap_or(""), Prefixes::Decimal)
                .ok_or_else(|| {
                    PluginError::at_line(
                        path,
                        line,
                        format!("column `{RAW_DURATION}`: expected a number, found `{text}`"),
                    )
                })?;
            let seconds = Tables::check_duration(seconds.value)
                .map_err(|e| PluginError::at_line(path, line, e))?;
            tables.add_run(run, None, "kernel", seconds);
        }
    }
    launches.check_all_labelled()?;
    // A column the units row gives a unit (`%`, `register/thread`) holds a quantity in every
    // launch, a page of one launch included.
    let with_unit: std::collections::HashSet<&str> = metric_columns
        .iter()
        .filter(|&&(c, _)| units.get(c).is_some_and(|u| !u.trim().is_empty()))
        .map(|&(c, _)| header.names[c].as_str())
        .collect();
    text_cells.check(path, &tables, |raw| {
        is_quantity(raw) || with_unit.contains(raw)
    })?;
    Ok(tables)
}

/// Whether a raw-page column describes the device rather than the launch: its attributes
/// (`device__attribute_multiprocessor_count`), its NVLink, NUMA and chip-to-chip links. These go
/// to the `devices` table, not to every launch's counters.
fn is_device_attribute(name: &str) -> bool {
    ["device__", "nvlink__", "numa__", "c2clink__"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The `devices` row of `device` from one launch's device columns: the table's columns from the
/// attributes that give them, every attribute as written in `description`.
fn device_row(
    device: String,
    names: &[String],
    columns: &[usize],
    r: &csv::StringRecord,
) -> DeviceRow {
    let value = |attribute: &str| {
        columns
            .iter()
            .find(|&&c| names[c].strip_prefix("device__attribute_") == Some(attribute))
            .and_then(|&c| r.get(c))
            .and_then(parse_number)
    };
    let int = |attribute: &str| value(attribute).map(|v| v as i64);
    // Double data rate: two transfers a memory clock, the bus width in bits.
    let bandwidth = value("memory_clock_rate")
        .zip(value("global_memory_bus_width"))
        .map(|(khz, bits)| 2.0 * khz * 1e3 * bits / 8.0);
    let description = columns
        .iter()
        .filter(|&&c| names[c] != DISPLAY_NAME)
        .filter_map(|&c| {
            let text = r.get(c)?.trim();
            let key = names[c]
                .strip_prefix("device__attribute_")
                .unwrap_or(&names[c]);
            (!text.is_empty()).then(|| (key.to_owned(), text.replace(',', "")))
        })
        .collect();
    DeviceRow {
        device,
        vendor: Some("NVIDIA".to_owned()),
        device_type: Some("GPU".to_owned()),
        compute_units: int("multiprocessor_count"),
        clock_mhz: value("clock_rate").map(|khz| khz / 1e3),
        global_memory_bytes: int("total_memory"),
        local_memory_bytes: int("max_shared_memory_per_block"),
        l2_cache_bytes: int("l2_cache_size"),
        max_work_group_size: int("max_threads_per_block"),
        memory_bandwidth_bytes_per_sec: bandwidth,
        description,
        ..DeviceRow::default()
    }
}

/// Whether a raw-page metric is a quantity by its name: a hardware counter with a roll-up or a
/// ratio (`sm__cycles_elapsed.avg`, `dram__bytes_read.sum.per_second`), or a launch attribute
/// that is a size, a count or a dimension, which is a number in every launch. Other launch and
/// device attributes (`launch__func_cache_config`, `device__attribute_display_name`) may be
/// text.
fn is_quantity(raw: &str) -> bool {
    let counter = raw.split_once("__").is_some_and(|(unit, counter)| {
        unit != "launch" && unit != "device" && counter.contains('.')
    });
    // Launch attributes that are sizes, counts and dimensions by their names
    // (`launch__grid_size`, `launch__barrier_count`, `launch__block_dim_x`); the text ones are
    // policies and modes (`launch__func_cache_config`, `launch__tpc_enabled`).
    let launch_number = raw.strip_prefix("launch__").is_some_and(|a| {
        ["_size", "_count", "_dim_x", "_dim_y", "_dim_z"]
            .iter()
            .any(|s| a.ends_with(s))
    });
    counter || launch_number
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A details page of `launches` launches of the real H100 capture, with a rule row whose
    /// description holds a line break and doubled quotes, and the device's name given after the
    /// first values of every launch.
    fn page(launches: usize) -> String {
        page_with_rule(launches, "two\nlines, \"\"quoted\"\"")
    }

    /// [`page`] with `rule` (as written, quotes doubled) for the description of each launch's
    /// rule row.
    fn page_with_rule(launches: usize, rule: &str) -> String {
        let real = include_str!("../tests/data/ncu/ncu_details_matmul_tiled_h100.csv");
        let mut lines = real.lines().filter(|l| !l.starts_with("=="));
        let header = lines.next().unwrap_or_default();
        let rows: Vec<&str> = lines.collect();
        let mut out = format!("==PROF== Connected\n{header}\n");
        for launch in 0..launches {
            for (i, row) in rows.iter().enumerate() {
                let rest = row.split_once(',').map_or("", |(_, r)| r);
                out += &format!("\"{launch}\",{rest}\n");
                if i == 2 {
                    // The identity columns: all before the section (the kernel's name holds
                    // commas of its own).
                    let identity = &rest[..rest.find(",\"GPU Speed Of Light").unwrap()];
                    out += &format!(
                        "\"{launch}\",{identity},\"Device\",\"{DISPLAY_NAME}\",\"\",\"NVIDIA H100 80GB HBM3\",\n"
                    );
                    out += &format!(
                        "\"{launch}\",{identity},\"Rules\",\"\",\"\",\"\",\"R\",\"OPT\",\"{rule}\",\"\",\"\"\n"
                    );
                }
            }
        }
        out
    }

    fn tables(text: &str, pieces: Option<usize>) -> Vec<(String, arrow_array::RecordBatch)> {
        read_in_pieces(Path::new("page.csv"), text, &Labels::default(), pieces)
            .and_then(Tables::finish)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_page_read_in_pieces_gives_the_tables_of_one_reader() {
        let text = page(37);
        let one = tables(&text, Some(1));
        let runs = &one.iter().find(|(n, _)| n == "runs").unwrap().1;
        assert_eq!(runs.num_rows(), 37);
        let counters = &one.iter().find(|(n, _)| n == "counters").unwrap().1;
        assert!(counters.num_rows() > 37 * 30, "{}", counters.num_rows());
        for pieces in [2, 3, 5, 16] {
            assert_eq!(tables(&text, Some(pieces)), one, "{pieces} pieces");
        }
        // The device's name, given after the first values of each launch, is every run's.
        let device = runs
            .column_by_name(yosoku_tables::col::DEVICE)
            .and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>())
            .unwrap();
        assert!(device.iter().all(|d| d == Some("NVIDIA H100 80GB HBM3")));
    }

    #[test]
    fn lines_as_ncu_writes_them_read_as_a_csv_reader_reads_them() {
        // Every line on the fast path (quoted or empty fields, doubled quotes)...
        let fast = page_with_rule(12, "one line, \"\"quoted\"\", ,,");
        // ...and the same page with its first row's ID unquoted: from there on (all of it, read
        // as one piece) the general CSV reader reads it.
        let first_row = fast.find("\n\"0\",").unwrap() + 1;
        let general = format!("{}0{}", &fast[..first_row], &fast[first_row + 3..]);
        let expected = tables(&general, Some(1));
        assert_eq!(tables(&fast, Some(1)), expected);
        assert_eq!(tables(&fast, Some(4)), expected);
        // A line off the fast path in the middle of a piece: the rest of it is read alike.
        let middle = fast.find("\n\"5\",").unwrap() + 1;
        let switched = format!("{}5{}", &fast[..middle], &fast[middle + 3..]);
        assert_eq!(tables(&switched, Some(1)), expected);
    }

    #[test]
    fn pieces_are_cut_at_line_breaks_outside_quotes() {
        let text = page(9);
        let rows = &text[text.find("\n\"0\"").unwrap() + 1..];
        for parts in 1..40 {
            let bounds = record_pieces(rows, parts);
            assert_eq!((bounds[0], *bounds.last().unwrap()), (0, rows.len()));
            for &b in &bounds[1..bounds.len() - 1] {
                assert_eq!(&rows[b - 1..b], "\n");
                let quotes = rows[..b].bytes().filter(|&c| c == b'"').count();
                assert_eq!(quotes % 2, 0, "cut inside a quoted field at {b}");
                assert!(rows[b..].starts_with('"'));
            }
        }
    }

    #[test]
    fn a_launch_with_other_rows_or_units_than_the_one_before_is_read_as_written() {
        // Launch 1 gives its duration in us instead of ns (same place, other unit); launch 2
        // also gives its rows in reverse order. Rows matched against the launch before must
        // not reuse a name or a conversion that differs: all three read the same.
        let page = page(3);
        let header: Vec<&str> = page.lines().take(2).collect();
        let mut text = header.join("\n") + "\n";
        for launch in ["0", "1", "2"] {
            // (Without the rule rows, whose quoted field spans two lines.)
            let mut rows: Vec<String> = page
                .lines()
                .skip(2)
                .filter(|l| l.starts_with(&format!("\"{launch}\",")) && !l.contains("\"Rules\""))
                .map(|l| {
                    if launch == "0" {
                        l.to_owned()
                    } else {
                        l.replace(
                            "\"Duration\",\"ns\",\"343,840\"",
                            "\"Duration\",\"us\",\"343.84\"",
                        )
                    }
                })
                .collect();
            if launch == "2" {
                rows.reverse();
            }
            text += &(rows.join("\n") + "\n");
        }
        assert_eq!(text.matches("\"us\",\"343.84\"").count(), 2);
        let tables = tables(&text, Some(1));
        use yosoku_tables::{access, col};
        let table = |name: &str| &tables.iter().find(|(n, _)| n == name).unwrap().1;
        let counters = table("counters");
        let runs = access::utf8(counters, col::RUN_ID).unwrap();
        let metrics = access::utf8(counters, col::METRIC).unwrap();
        let values = access::float64(counters, col::VALUE).unwrap();
        let mut per_launch: HashMap<&str, Vec<(&str, u64)>> = HashMap::new();
        for i in 0..counters.num_rows() {
            per_launch
                .entry(runs.value(i))
                .or_default()
                .push((metrics.value(i), values.value(i).to_bits()));
        }
        let mut launches: Vec<Vec<(&str, u64)>> = per_launch.into_values().collect();
        for l in &mut launches {
            l.sort();
        }
        assert_eq!(launches.len(), 3);
        assert!(launches[0].len() > 20, "{launches:?}");
        assert_eq!(launches[0], launches[1]);
        assert_eq!(launches[0], launches[2]);
        let secs = access::float64(table("runs"), col::MEASURED_SECS).unwrap();
        assert_eq!(secs.values().to_vec(), vec![343.84e-6; 3]);
    }

    #[test]
    fn an_error_in_a_later_piece_names_its_line() {
        let mut text = page(20);
        let at = text.len() * 3 / 4;
        let line_start = text[..at].rfind('\n').unwrap() + 1;
        text.insert_str(line_start, "\"x\"\n");
        let line = text[..line_start].matches('\n').count() + 1;
        for pieces in [1, 2, 4] {
            let e = read_in_pieces(
                Path::new("page.csv"),
                &text,
                &Labels::default(),
                Some(pieces),
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.starts_with(&format!("page.csv:{line}: expected 20 fields")),
                "{e}"
            );
        }
    }
}
