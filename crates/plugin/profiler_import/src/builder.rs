//! Accumulates what an importer reads into the `runs`, `counters` and `metric_names` tables,
//! mapping names to canonical ones and normalising units on the way.
//!
//! A counter row is stored as four numbers (run, name, value, unit); the string columns of the
//! long-form `counters` table are gathered from the small lists of runs, names and units once,
//! at the end. Importing a dataset file of 5,000 launches x 75 counters thus appends 375,000 rows
//! without building 2 million strings one by one.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt32Array};
use yosoku_plugin_sdk::PluginError;
use yosoku_tables::{COUNTERS, METRIC_NAMES, RUNS};

use crate::devices::{DeviceRow, devices_batch};
use crate::metrics::{self, Mapping, mapping, user_file_error};
use crate::units::{Prefixes, Scale, conversion};

/// Rows from which gathering the string columns of a long table is spread over the cores.
const PARALLEL_GATHER_ROWS: usize = 100_000;

/// Each `values` column taken at its `indices` (`arrow_select::take`), in order; for long
/// tables on as many threads as there are cores (each string column is a copy of its own).
fn gather_all(jobs: &[(&StringArray, &UInt32Array)]) -> Result<Vec<ArrayRef>, PluginError> {
    let take = |(values, indices): &(&StringArray, &UInt32Array)| {
        arrow_select::take::take(*values, *indices, None)
            .map_err(|e| PluginError::new(format!("building a table: {e}")))
    };
    let rows = jobs.first().map_or(0, |(_, i)| i.len());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if rows < PARALLEL_GATHER_ROWS || threads < 2 {
        return jobs.iter().map(take).collect();
    }
    let per_thread = jobs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(per_thread)
            .map(|chunk| scope.spawn(move || chunk.iter().map(take).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::with_capacity(jobs.len());
        for handle in handles {
            let columns = handle
                .join()
                .map_err(|_| PluginError::new("building a table: a gathering thread failed"))?;
            for column in columns {
                out.push(column?);
            }
        }
        Ok(out)
    })
}

/// Identity of one run (a kernel launch, a trace row, a dataset row).
#[derive(Debug, Clone, PartialEq)]
pub struct RunKey {
    pub run_id: String,
    pub device: String,
    pub program: String,
    pub variant: String,
    pub kernel: Option<String>,
}

/// How one raw name was resolved, and how often it occurred.
#[derive(Debug, Clone)]
struct NameInfo {
    raw: String,
    metric: String,
    kind: Option<&'static str>,
    /// Whether an alias of the mapping names it (else its kind, if any, is a naming rule's).
    mapped: bool,
    unit_override: Option<String>,
    /// The last unit seen for this name and its conversion (a file gives one unit per metric).
    last: Option<(String, Scale, u32)>,
    canonical_unit: Option<String>,
    occurrences: i64,
    /// Cells the tool left without a value ([`is_null_cell`]).
    nulls: i64,
}

/// Whether a cell is one of the ways profilers write "no value here": empty (or blank), `n/a`,
/// `N/A`, and nvprof's `<INVALID>` (a metric it could not compute for the launch). Such a cell is
/// counted (`metric_names.nulls`), not read as a value.
pub fn is_null_cell(text: &str) -> bool {
    let text = text.trim();
    text.is_empty() || text == "n/a" || text == "N/A" || text == "<INVALID>"
}

/// What a counter cell held ([`Tables::add_cell`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// A number, added.
    Number,
    /// No value ([`is_null_cell`]), counted.
    Null,
    /// Text that is not a number: added nowhere; [`TextCells`] decides whether it is an error.
    Text,
}

/// The cells of counter columns that held text, kept while a file is read: text in a column
/// that holds numbers (a value cut short or overwritten: `abc` in `Grid X`) is an error, found
/// once the whole file is read; a column of text only (an enumeration such as
/// `launch__func_cache_config`) is no counter, unless its name says it counts.
#[derive(Debug, Clone, Default)]
pub struct TextCells {
    /// Per name id: whether a number was read in its column.
    numeric: Vec<bool>,
    /// Per name id: the first text cell (line, 1-based column, text).
    first_text: Vec<Option<(usize, usize, String)>>,
}

impl TextCells {
    /// Records `cell`, the cell of name `name` at `line` and 1-based `column` (0 in a format of
    /// lines without columns), holding `text`.
    pub fn record(&mut self, name: u32, cell: Cell, line: usize, column: usize, text: &str) {
        let i = name as usize;
        if self.numeric.len() <= i {
            self.numeric.resize(i + 1, false);
            self.first_text.resize(i + 1, None);
        }
        match cell {
            Cell::Number => self.numeric[i] = true,
            Cell::Null => {}
            Cell::Text => {
                if self.first_text[i].is_none() {
                    self.first_text[i] = Some((line, column, text.to_owned()));
                }
            }
        }
    }

    /// The error of the earliest text cell in a column that holds numbers, or whose raw name
    /// `counts` says it is a quantity (a column of one launch has one value only).
    pub fn check(
        &self,
        path: &std::path::Path,
        tables: &Tables,
        counts: impl Fn(&str) -> bool,
    ) -> Result<(), PluginError> {
        let offending = self
            .first_text
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.as_ref().map(|t| (i, t)))
            .filter(|(i, _)| self.numeric[*i] || counts(&tables.names[*i].raw))
            .min_by_key(|(_, (line, column, _))| (*line, *column));
        match offending {
            None => Ok(()),
            Some((i, (line, column, text))) => {
                let message = format!(
                    "`{}`: expected a number (or no value: empty, n/a), found `{text}`",
                    tables.names[i].raw
                );
                Err(if *column == 0 {
                    PluginError::at_line(path, *line, message)
                } else {
                    PluginError::at(path, *line, *column, format!("column {message}"))
                })
            }
        }
    }
}

/// A measured time the `runs` table cannot take: not finite, or not above zero.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("a duration of {seconds} s; a measured time must be a finite number above 0")]
pub struct BadDuration {
    pub seconds: f64,
}

/// Tables of one imported file.
#[derive(Debug)]
pub struct Tables {
    tool: &'static str,
    prefixes: Prefixes,
    names: Vec<NameInfo>,
    index: HashMap<String, u32>,
    keys: Vec<RunKey>,
    units: Vec<String>,
    /// (run, parameters, phase, seconds of all repetitions, repetitions).
    runs: Vec<(u32, Option<String>, &'static str, f64, i64)>,
    /// Whether to emit the long-form `counters` table (wide importers keep their own values).
    long_form: bool,
    counter_run: Vec<u32>,
    counter_name: Vec<u32>,
    counter_value: Vec<f64>,
    counter_unit: Vec<u32>,
    /// The timeline, for importers of traces that give start times.
    spans: yosoku_traces::spans::SpansBuilder,
    /// What the reader noted about the file that is no error (lines of a program's output it
    /// skipped), for the user to read beside the tables.
    notes: Vec<String>,
    /// The devices the file describes (one row per device name), for the `devices` table.
    devices: Vec<DeviceRow>,
    /// The collector's own mapping files over the built-in mapping, if its configuration names
    /// any (`metrics::scope`); taken when the builder is made.
    scoped: Option<Arc<Mapping>>,
}

impl Tables {
    /// Tables of a wide importer: `runs` and `metric_names`, no `counters`.
    pub fn wide(tool: &'static str, prefixes: Prefixes) -> Self {
        Self {
            long_form: false,
            ..Self::new(tool, prefixes)
        }
    }

    pub fn new(tool: &'static str, prefixes: Prefixes) -> Self {
        Self {
            tool,
            prefixes,
            names: Vec::new(),
            index: HashMap::new(),
            keys: Vec::new(),
            units: Vec::new(),
            runs: Vec::new(),
            long_form: true,
            counter_run: Vec::new(),
            counter_name: Vec::new(),
            counter_value: Vec::new(),
            counter_unit: Vec::new(),
            spans: yosoku_traces::spans::SpansBuilder::new(),
            notes: Vec::new(),
            devices: Vec::new(),
            scoped: metrics::current(),
        }
    }

    /// Whether the `devices` table has a row for `device` yet.
    pub fn has_device(&self, device: &str) -> bool {
        self.devices.iter().any(|d| d.device == device)
    }

    /// A device's description, for the `devices` table; a second row for one device name is
    /// dropped (the first launch's description stands).
    pub fn add_device(&mut self, row: DeviceRow) {
        if !self.has_device(&row.device) {
            self.devices.push(row);
        }
    }

    /// Notes something about the file that is no error, for the user ([`Tables::notes`]).
    pub fn add_note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// Notes the lines of the profiled program's output a reader of `path` skipped before and
    /// after its table.
    pub fn note_program_output(&mut self, path: &std::path::Path, before: usize, after: usize) {
        for (lines, place) in [(before, "before"), (after, "after")] {
            if lines > 0 {
                self.add_note(format!(
                    "{}: skipped {lines} line(s) of program output {place} the table",
                    path.display()
                ));
            }
        }
    }

    /// What the reader noted about the file (lines of program output skipped, ...).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// A row of the file's timeline (a kernel or copy with its start), for the `spans` table.
    pub fn add_span(&mut self, span: &yosoku_traces::spans::Span<'_>) {
        self.spans.push(span);
    }

    /// Registers a run's identity; returns the handle to add its counters and time with.
    pub fn key(&mut self, key: RunKey) -> u32 {
        self.keys.push(key);
        (self.keys.len() - 1) as u32
    }

    pub fn run_key(&self, run: u32) -> &RunKey {
        &self.keys[run as usize]
    }

    /// Names the device of `run` (a name the file gives after the run's first value).
    pub fn set_device(&mut self, run: u32, device: &str) {
        if let Some(key) = self.keys.get_mut(run as usize) {
            device.clone_into(&mut key.device);
        }
    }

    /// A measured time as the `runs` table takes it: finite and above zero (a profiler that
    /// rounds a short kernel to 0 gives no time to model). The error is the reader's to locate.
    pub fn check_duration(seconds: f64) -> Result<f64, BadDuration> {
        if seconds.is_finite() && seconds > 0.0 {
            Ok(seconds)
        } else {
            Err(BadDuration { seconds })
        }
    }

    /// A measured time of run `run`: `seconds` of `phase` (`kernel` for a launch, `transfer` for
    /// a copy).
    pub fn add_run(
        &mut self,
        run: u32,
        parameters: Option<&str>,
        phase: &'static str,
        seconds: f64,
    ) {
        self.add_repeated_run(run, parameters, phase, seconds, 1);
    }

    /// A run of `repetitions` executions that took `seconds` together (a profiler's summary:
    /// a kernel's instances and their total time).
    pub fn add_repeated_run(
        &mut self,
        run: u32,
        parameters: Option<&str>,
        phase: &'static str,
        seconds: f64,
        repetitions: i64,
    ) {
        self.runs.push((
            run,
            parameters.map(str::to_owned),
            phase,
            seconds,
            repetitions,
        ));
    }

    fn name_index(&mut self, raw: &str) -> u32 {
        if let Some(&i) = self.index.get(raw) {
            return i;
        }
        let mapping = self.scoped.as_deref().unwrap_or_else(|| mapping());
        let canonical = mapping.resolve(self.tool, raw);
        let canonical = canonical.as_ref();
        self.names.push(NameInfo {
            raw: raw.to_owned(),
            metric: canonical.map_or_else(|| raw.to_owned(), |c| c.name.clone()),
            kind: canonical
                .map(|c| c.kind)
                .or_else(|| mapping.rule_kind(self.tool, raw)),
            mapped: canonical.is_some(),
            unit_override: canonical.and_then(|c| c.unit.clone()),
            last: None,
            canonical_unit: None,
            occurrences: 0,
            nulls: 0,
        });
        let i = (self.names.len() - 1) as u32;
        self.index.insert(raw.to_owned(), i);
        i
    }

    fn unit_index(&mut self, unit: &str) -> u32 {
        match self.units.iter().position(|u| u == unit) {
            Some(i) => i as u32,
            None => {
                self.units.push(unit.to_owned());
                (self.units.len() - 1) as u32
            }
        }
    }

    /// One counter value of run `run`, in the unit the file gives (the mapping's unit when the
    /// file gives none).
    pub fn add_counter(&mut self, run: u32, raw: &str, value: f64, unit: &str) {
        let i = self.name_index(raw);
        self.add_value(run, i, value, unit);
    }

    /// The handle of a raw name, for files whose columns are names (resolve once per column).
    pub fn name(&mut self, raw: &str) -> u32 {
        self.name_index(raw)
    }

    /// The canonical name and kind of a resolved name.
    pub fn metric(&self, i: u32) -> (&str, Option<&'static str>) {
        let info = &self.names[i as usize];
        (&info.metric, info.kind)
    }

    /// Records one value of name `i` in `unit` (for `metric_names`) without storing a counter
    /// row, and returns the conversion to apply (wide importers keep the values themselves).
    pub fn note(&mut self, i: u32, unit: &str) -> Scale {
        let (conv, _) = self.resolve_unit(i, unit);
        self.names[i as usize].occurrences += 1;
        conv
    }

    /// The conversion of values of name `i` in `unit`, for a wide importer to resolve once per
    /// column rather than per value; count each value with [`Tables::count_value`].
    pub fn scale(&mut self, i: u32, unit: &str) -> Scale {
        self.resolve_unit(i, unit).0
    }

    /// The conversion of values of name `i` in `unit` and the index of their canonical unit, for
    /// a long-form reader that meets the same (name, unit) in row after row: it resolves them
    /// once and adds each value with [`Tables::add_resolved`]. The same (name, unit) always
    /// resolves the same.
    pub fn resolve(&mut self, i: u32, unit: &str) -> (Scale, u32) {
        self.resolve_unit(i, unit)
    }

    /// Records one value of name `i` (for `metric_names`), converted with [`Tables::scale`].
    pub fn count_value(&mut self, i: u32) {
        self.count_values(i, 1);
    }

    /// Counts `count` values of name `i` at once.
    pub fn count_values(&mut self, i: u32, count: i64) {
        self.names[i as usize].occurrences += count;
    }

    /// The canonical unit values of name `i` are converted to (once one was recorded).
    pub fn canonical_unit(&self, i: u32) -> Option<&str> {
        self.names[i as usize].canonical_unit.as_deref()
    }

    fn resolve_unit(&mut self, i: u32, unit: &str) -> (Scale, u32) {
        // Units are a few bytes: compared inline (through libc's memcmp, this comparison was
        // two thirds of an import's time in the benchmarks).
        if let Some((u, scale, unit_idx)) = &self.names[i as usize].last
            && u.len() == unit.len()
            && u.bytes().zip(unit.bytes()).all(|(a, b)| a == b)
        {
            return (*scale, *unit_idx);
        }
        let info = &self.names[i as usize];
        let effective = info
            .unit_override
            .as_deref()
            .filter(|_| unit.is_empty())
            .unwrap_or(unit);
        let conv = conversion(effective, self.prefixes);
        let unit_idx = self.unit_index(&conv.unit);
        let info = &mut self.names[i as usize];
        let scale = conv.scale();
        info.last = Some((unit.to_owned(), scale, unit_idx));
        info.canonical_unit.get_or_insert_with(|| conv.unit.clone());
        (scale, unit_idx)
    }

    /// [`Tables::add_value`] from the value's text, converted in one correctly rounded step
    /// (`1.028854` ms is the double nearest 0.001028854 s). False, and nothing added, when the
    /// text is not a number.
    pub fn add_text(&mut self, run: u32, i: u32, text: &str, unit: &str) -> bool {
        let (conv, unit_idx) = self.resolve_unit(i, unit);
        let Some(value) = conv.apply_text(text) else {
            return false;
        };
        self.add_resolved(run, i, value, unit_idx);
        true
    }

    /// A cell of name `i`'s column: added when it is a number, counted as a null when it holds
    /// no value ([`is_null_cell`]), else left to the caller ([`Cell::Text`]).
    pub fn add_cell(&mut self, run: u32, i: u32, text: &str, unit: &str) -> Cell {
        if self.add_text(run, i, text, unit) {
            Cell::Number
        } else if is_null_cell(text) {
            self.count_null(i);
            Cell::Null
        } else {
            Cell::Text
        }
    }

    /// Counts a cell of name `i` the tool left without a value.
    pub fn count_null(&mut self, i: u32) {
        self.names[i as usize].nulls += 1;
    }

    /// A value of name `i` already converted with [`Tables::resolve`] (`unit_idx` its canonical
    /// unit).
    pub fn add_resolved(&mut self, run: u32, i: u32, value: f64, unit_idx: u32) {
        self.names[i as usize].occurrences += 1;
        self.counter_run.push(run);
        self.counter_name.push(i);
        self.counter_value.push(value);
        self.counter_unit.push(unit_idx);
    }

    /// Appends the counters of `part`, a builder that read a later piece of the same file (on
    /// another thread), as if they had been read here: names keep the order in which the file
    /// gives them first, their canonical unit is the first one seen. `runs[r]` is the run here
    /// of `part`'s run `r`; `part`'s runs, times and spans are not taken.
    pub fn append_counters(&mut self, part: Tables, runs: &[u32]) {
        for row in part.devices {
            self.add_device(row);
        }
        let names: Vec<u32> = part
            .names
            .iter()
            .map(|n| {
                let i = self.name_index(&n.raw);
                let info = &mut self.names[i as usize];
                info.occurrences += n.occurrences;
                info.nulls += n.nulls;
                if info.canonical_unit.is_none() {
                    info.canonical_unit.clone_from(&n.canonical_unit);
                }
                i
            })
            .collect();
        let units: Vec<u32> = part.units.iter().map(|u| self.unit_index(u)).collect();
        self.counter_run
            .extend(part.counter_run.iter().map(|&r| runs[r as usize]));
        self.counter_name
            .extend(part.counter_name.iter().map(|&n| names[n as usize]));
        self.counter_value.extend_from_slice(&part.counter_value);
        self.counter_unit
            .extend(part.counter_unit.iter().map(|&u| units[u as usize]));
    }

    /// Changes every run's identity with `f` (the variant a file's path names, the file's name
    /// before a run id), before [`Tables::append_file`] joins another file's runs to these.
    pub fn relabel(&mut self, mut f: impl FnMut(&mut RunKey)) {
        self.keys.iter_mut().for_each(&mut f);
    }

    /// Appends everything `part` read from another file of the same tool (runs, times, counters,
    /// devices, notes) as if it had been read here, after these runs. Run ids must be told
    /// apart first ([`Tables::relabel`]); a file with a timeline is refused (its spans are not
    /// joined).
    pub fn append_file(&mut self, mut part: Tables) -> Result<(), PluginError> {
        if part.tool != self.tool || part.long_form != self.long_form {
            return Err(PluginError::new(format!(
                "{} tables cannot take in {} tables",
                self.tool, part.tool
            )));
        }
        if !part.spans.is_empty() {
            return Err(PluginError::new(format!(
                "{} files with a timeline are read one at a time",
                part.tool
            )));
        }
        let offset = self.keys.len() as u32;
        let runs: Vec<u32> = (0..part.keys.len() as u32).map(|r| r + offset).collect();
        self.keys.append(&mut part.keys);
        self.runs
            .extend(std::mem::take(&mut part.runs).into_iter().map(
                |(run, parameters, phase, seconds, repetitions)| {
                    (run + offset, parameters, phase, seconds, repetitions)
                },
            ));
        self.notes.append(&mut part.notes);
        self.append_counters(part, &runs);
        Ok(())
    }

    /// [`Tables::add_counter`] with the name resolved by [`Tables::name`].
    pub fn add_value(&mut self, run: u32, i: u32, value: f64, unit: &str) {
        let (conv, unit_idx) = self.resolve_unit(i, unit);
        self.add_resolved(run, i, conv.apply(value), unit_idx);
    }

    /// `counters.origin` of every value: `computed` for the work counters of tool `computed`
    /// (metrics.toml), `measured` for every tool that reads counters.
    fn origin(&self) -> &'static str {
        if self.tool == "computed" {
            "computed"
        } else {
            "measured"
        }
    }

    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// The tables: `runs` (when there were runs), `counters`, `metric_names`.
    pub fn finish(self) -> Result<Vec<(String, RecordBatch)>, PluginError> {
        if let Some(e) = user_file_error() {
            return Err(PluginError::new(e));
        }
        let strings = |f: &dyn Fn(&RunKey) -> Option<&str>| -> StringArray {
            self.keys.iter().map(f).collect()
        };
        let run_id = strings(&|k| Some(&k.run_id));
        let device = strings(&|k| Some(&k.device));
        let program = strings(&|k| Some(&k.program));
        let variant = strings(&|k| Some(&k.variant));
        let kernel = strings(&|k| k.kernel.as_deref());
        let gather =
            |values: &StringArray, indices: &UInt32Array| -> Result<ArrayRef, PluginError> {
                arrow_select::take::take(values, indices, None)
                    .map_err(|e| PluginError::new(format!("building a table: {e}")))
            };
        let origin = self.origin();
        let mut out = Vec::new();
        if !self.runs.is_empty() {
            let which = UInt32Array::from_iter_values(self.runs.iter().map(|r| r.0));
            let runs = RUNS.batch(vec![
                gather(&run_id, &which)?,
                gather(&device, &which)?,
                gather(&program, &which)?,
                gather(&variant, &which)?,
                Arc::new(
                    self.runs
                        .iter()
                        .map(|r| r.1.as_deref())
                        .collect::<StringArray>(),
                ),
                Arc::new(StringArray::from_iter_values(self.runs.iter().map(|r| r.2))),
                Arc::new(arrow_array::Int64Array::from_iter_values(
                    self.runs.iter().map(|r| r.4),
                )),
                Arc::new(arrow_array::Float64Array::from_iter_values(
                    self.runs.iter().map(|r| r.3),
                )),
            ])?;
            out.push(("runs".to_owned(), runs));
        }
        if self.long_form {
            let which_run = UInt32Array::from(self.counter_run);
            let which_name = UInt32Array::from(self.counter_name);
            let which_unit = UInt32Array::from(self.counter_unit);
            let metric: StringArray = self.names.iter().map(|n| Some(n.metric.as_str())).collect();
            let raw: StringArray = self.names.iter().map(|n| Some(n.raw.as_str())).collect();
            let kind: StringArray = self.names.iter().map(|n| n.kind).collect();
            let units: StringArray = self.units.iter().map(|u| Some(u.as_str())).collect();
            let mut gathered = gather_all(&[
                (&run_id, &which_run),
                (&device, &which_run),
                (&program, &which_run),
                (&variant, &which_run),
                (&kernel, &which_run),
                (&metric, &which_name),
                (&raw, &which_name),
                (&units, &which_unit),
                (&kind, &which_name),
            ])?
            .into_iter();
            let mut next = || {
                gathered
                    .next()
                    .ok_or_else(|| PluginError::new("building a table: a column is missing"))
            };
            let counters = COUNTERS.batch(vec![
                next()?,
                next()?,
                next()?,
                next()?,
                next()?,
                next()?,
                next()?,
                Arc::new(arrow_array::Float64Array::from(self.counter_value)),
                next()?,
                next()?,
                Arc::new(StringArray::from(vec![origin; which_run.len()])),
            ])?;
            out.push(("counters".to_owned(), counters));
        }

        let mut tool = StringBuilder::new();
        let mut raw = StringBuilder::new();
        let mut metric = StringBuilder::new();
        let mut kind = StringBuilder::new();
        let mut unit = StringBuilder::new();
        let mut mapped = BooleanBuilder::new();
        let mut occurrences = Int64Builder::new();
        let mut nulls = Int64Builder::new();
        for n in self
            .names
            .iter()
            .filter(|n| n.occurrences > 0 || n.nulls > 0)
        {
            tool.append_value(self.tool);
            raw.append_value(&n.raw);
            metric.append_value(&n.metric);
            kind.append_option(n.kind);
            unit.append_value(n.canonical_unit.as_deref().unwrap_or(""));
            mapped.append_value(n.mapped);
            occurrences.append_value(n.occurrences);
            nulls.append_value(n.nulls);
        }
        let names = METRIC_NAMES.batch(vec![
            Arc::new(tool.finish()) as ArrayRef,
            Arc::new(raw.finish()),
            Arc::new(metric.finish()),
            Arc::new(kind.finish()),
            Arc::new(unit.finish()),
            Arc::new(mapped.finish()),
            Arc::new(occurrences.finish()),
            Arc::new(nulls.finish()),
        ])?;
        out.push(("metric_names".to_owned(), names));
        if !self.devices.is_empty() {
            out.push(("devices".to_owned(), devices_batch(&self.devices)?));
        }
        if !self.spans.is_empty() {
            out.push(("spans".to_owned(), self.spans.finish()?));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's tables of `tool`: one run `0` with a time and one counter.
    fn file(tool: &'static str, seconds: f64, value: f64) -> Tables {
        let mut t = Tables::new(tool, Prefixes::Decimal);
        let run = t.key(RunKey {
            run_id: "0".into(),
            device: "GPU".into(),
            program: "k".into(),
            variant: String::new(),
            kernel: Some("k".into()),
        });
        t.add_run(run, None, "kernel", seconds);
        t.add_counter(run, "inst_executed", value, "");
        t
    }

    #[test]
    fn a_second_file_is_appended_after_the_first_and_other_tools_or_timelines_are_refused() {
        let mut all = file("ncu", 1e-6, 10.0);
        let mut second = file("ncu", 2e-6, 20.0);
        second.relabel(|k| k.run_id = "b:0".into());
        all.append_file(second).unwrap();
        assert_eq!(all.runs(), 2);
        let tables = all.finish().unwrap();
        let runs = &tables.iter().find(|(n, _)| n == "runs").unwrap().1;
        let ids = yosoku_tables::text::Text::new(
            runs.column_by_name(yosoku_tables::col::RUN_ID)
                .unwrap()
                .as_ref(),
        )
        .unwrap();
        assert_eq!((ids.value(0), ids.value(1)), ("0", "b:0"));
        let counters = &tables.iter().find(|(n, _)| n == "counters").unwrap().1;
        assert_eq!(counters.num_rows(), 2);
        let names = &tables.iter().find(|(n, _)| n == "metric_names").unwrap().1;
        assert_eq!(names.num_rows(), 1, "one row per name, whatever the files");

        let e = file("ncu", 1e-6, 1.0)
            .append_file(file("nvprof", 1e-6, 1.0))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("ncu tables cannot take in nvprof tables"),
            "{e}"
        );
        let mut timed = file("ncu", 1e-6, 1.0);
        timed.add_span(&yosoku_traces::spans::Span::interval(
            "t",
            yosoku_traces::spans::Timeline::Measured,
            "stream 7",
            "stream",
            "k",
            "kernel",
            0,
            1000,
        ));
        let e = file("ncu", 1e-6, 1.0).append_file(timed).unwrap_err();
        assert!(e.to_string().contains("read one at a time"), "{e}");
    }
}
