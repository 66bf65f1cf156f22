//! `traces`: imports timelines as the canonical `spans` table (README.md).
//!
//! - `kernel_trace`: in-kernel timestamp traces in yosoku's binary format (docs/kernel-trace.md),
//!   as `trace_records`, `trace_alignment` and `spans`; read in chunks, never whole.
//! - `chrome_trace`: Chrome trace event JSON (chrome://tracing, Perfetto, PyTorch's Kineto), as
//!   `spans`, read event by event.
//!
//! Either kind of file may be gzip-compressed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin, open_input, read_input,
};
use yosoku_traces::TraceError;
use yosoku_traces::chrome;
use yosoku_traces::kernel_trace::{self, LaneBy};

#[derive(Debug, Default)]
pub struct Traces;

impl Plugin for Traces {
    fn name(&self) -> &'static str {
        "traces"
    }

    fn description(&self) -> &'static str {
        "Timelines as spans: in-kernel kernel-trace files, Chrome trace event JSON (Perfetto, Kineto)"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(KernelTraceCollector),
            Box::new(ChromeTraceCollector),
        ]
    }
}

export_plugin!(Traces);

/// Chunk size of streamed reads.
const CHUNK_BYTES: usize = 8 << 20;
/// Chrome JSON files up to this size are read whole, larger ones streamed.
const WHOLE_JSON_BYTES: u64 = 1 << 30;

fn located(path: &Path, e: TraceError) -> PluginError {
    PluginError::new(format!("{}: {e}", path.display()))
}

/// The first kilobytes of a file as text (lossy), for telling its format.
fn head_of(path: &Path) -> String {
    let mut head = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(4096).read_to_end(&mut head);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// `e` for `path` read by `collector`, or, when the file does not begin as that collector's
/// format does (`begins_right`), the refusal that names the format yosoku reads it as.
fn refused_or_located(
    path: &Path,
    e: TraceError,
    collector: &str,
    begins_right: impl Fn(&[u8]) -> bool,
) -> PluginError {
    let head = head_of(path);
    let gzip = head.as_bytes().starts_with(&[0x1f, 0x8b]);
    if gzip || begins_right(head.trim_start().as_bytes()) {
        located(path, e)
    } else {
        yosoku_plugin_sdk::formats::refusal(
            path,
            None,
            &head,
            ("traces", collector),
            &e.to_string(),
        )
    }
}

/// A run id per file: `run_id` for a single file, else the file's name without extension;
/// two files of one name are refused.
fn run_ids(paths: &[PathBuf], run_id: Option<String>) -> Result<Vec<String>, PluginError> {
    if let Some(id) = run_id {
        if paths.len() > 1 {
            return Err(PluginError::new(format!(
                "`run_id` = {id:?} names one run but `paths` has {} files: leave `run_id` out (each file's name is its run id)",
                paths.len()
            )));
        }
        return Ok(vec![id]);
    }
    let mut seen: BTreeMap<String, &Path> = BTreeMap::new();
    let mut ids = Vec::new();
    for p in paths {
        let id = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = id.strip_suffix(".gz").unwrap_or(&id);
        let id = id
            .strip_suffix(".json")
            .or_else(|| id.strip_suffix(".yktrace"))
            .unwrap_or(id)
            .to_owned();
        if let Some(other) = seen.insert(id.clone(), p) {
            return Err(PluginError::new(format!(
                "{} and {} would both be run `{id}`: rename one",
                other.display(),
                p.display()
            )));
        }
        ids.push(id);
    }
    Ok(ids)
}

fn concat(name: &str, batches: &[RecordBatch]) -> Result<Option<RecordBatch>, PluginError> {
    let Some(first) = batches.first() else {
        return Ok(None);
    };
    if batches.len() == 1 {
        // One file: its table as it is (a concatenation would copy every column).
        return Ok(Some(first.clone()));
    }
    let batches = yosoku_tables::text::unify(batches)
        .map_err(|e| PluginError::new(format!("joining the `{name}` tables of the files: {e}")))?;
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches)
        .map(Some)
        .map_err(|e| PluginError::new(format!("joining the `{name}` tables of the files: {e}")))
}

/// Reads `input` through `read`, inflated first when it starts with gzip's magic bytes (a
/// `.yktrace.gz` or `.json.gz` file; detected by content, not by name).
fn read_maybe_gzip<T>(
    input: &mut impl Read,
    read: impl FnOnce(&mut dyn Read) -> Result<T, TraceError>,
) -> Result<T, TraceError> {
    let mut head = [0u8; 2];
    let mut got = 0;
    while got < head.len() {
        match input.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let mut whole = std::io::Cursor::new(&head[..got]).chain(input);
    if head[..got] == [0x1f, 0x8b] {
        read(&mut flate2::read::MultiGzDecoder::new(whole))
    } else {
        read(&mut whole)
    }
}

/// Reads kernel-trace files into `trace_records`, `trace_alignment` and `spans`.
pub fn read_kernel_traces(
    paths: &[PathBuf],
    run_id: Option<String>,
    lanes: LaneBy,
) -> Result<Vec<(String, RecordBatch)>, PluginError> {
    let ids = run_ids(paths, run_id)?;
    let (mut records, mut alignment, mut spans) = (Vec::new(), Vec::new(), Vec::new());
    for (path, id) in paths.iter().zip(&ids) {
        let mut input = open_input(path)?;
        let trace =
            read_maybe_gzip(&mut input, |r| kernel_trace::read(r, CHUNK_BYTES)).map_err(|e| {
                refused_or_located(path, e, "kernel_trace", |h| h.starts_with(b"YKTRACE"))
            })?;
        input.finish();
        let t = trace.tables(id, lanes).map_err(|e| located(path, e))?;
        records.push(t.records);
        alignment.push(t.alignment);
        spans.push(t.spans);
    }
    let mut out = Vec::new();
    for (name, batches) in [
        ("trace_records", records),
        ("trace_alignment", alignment),
        ("spans", spans),
    ] {
        if let Some(b) = concat(name, &batches)? {
            out.push((name.to_owned(), b));
        }
    }
    Ok(out)
}

/// Reads Chrome trace event JSON files into `spans`, with what was odd about each.
pub fn read_chrome_traces(
    paths: &[PathBuf],
    run_id: Option<String>,
) -> Result<(RecordBatch, Vec<String>), PluginError> {
    let ids = run_ids(paths, run_id)?;
    let mut spans = Vec::new();
    let mut notes = Vec::new();
    for (path, id) in paths.iter().zip(&ids) {
        // A file that fits comfortably is read whole and parsed from memory (serde_json reads a
        // slice about 40 % faster than a stream); a larger one is streamed. Neither builds a
        // document tree: events become spans one by one.
        let on_disk = std::fs::metadata(path).map(|m| m.len()).unwrap_or(u64::MAX);
        let imported = if on_disk <= WHOLE_JSON_BYTES {
            // Gzip-compressed as PyTorch users share them (`.json.gz`), told by content.
            let bytes = yosoku_plugin_sdk::inflate_if_gzip(path, read_input(path)?)?;
            chrome::import_slice(&bytes, id).map_err(|e| {
                refused_or_located(path, e, "chrome_trace", |h| {
                    h.starts_with(b"{") || h.starts_with(b"[")
                })
            })?
        } else {
            let mut input = open_input(path)?;
            let imported = read_maybe_gzip(&mut input, |r| chrome::import_reader(r, id))
                .map_err(|e| located(path, e))?;
            input.finish();
            imported
        };
        let mut odd = Vec::new();
        if imported.unmatched_begin > 0 {
            odd.push(format!("{} `B` without `E`", imported.unmatched_begin));
        }
        if imported.unmatched_end > 0 {
            odd.push(format!("{} `E` without `B`", imported.unmatched_end));
        }
        if imported.negative_durations > 0 {
            odd.push(format!(
                "{} events ending before they start",
                imported.negative_durations
            ));
        }
        for (phase, n) in &imported.unknown_phases {
            odd.push(format!("{n} events of phase {phase:?} kept as instants"));
        }
        if !odd.is_empty() {
            notes.push(format!(
                "{}: {} (flagged in `spans.flag`)",
                path.display(),
                odd.join(", ")
            ));
        }
        spans.push(imported.spans);
    }
    let batch =
        concat("spans", &spans)?.ok_or_else(|| PluginError::new("`paths` names no file"))?;
    Ok((batch, notes))
}

struct KernelTraceCollector;

impl Collector for KernelTraceCollector {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "kernel_trace",
            "In-kernel timestamp traces in yosoku's binary format (docs/kernel-trace.md): records, per-SM clock alignment, and spans between a thread's consecutive points",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "Kernel-trace files (.yktrace)",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "Run id of a single file (default: the file's name without extension)",
        ))
        .key(ConfigKey::optional(
            "lanes",
            ConfigType::String,
            Some("sm".into()),
            "Lanes of the spans: `sm`, `block` or `thread`",
        ))
        .tables(&["trace_records", "trace_alignment", "spans"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        lanes(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        for (name, batch) in read_kernel_traces(
            &config.path_list("paths")?,
            config.opt_string("run_id")?,
            lanes(config)?,
        )? {
            out.push_batch(&name, batch)?;
        }
        Ok(())
    }
}

fn lanes(config: &Config) -> Result<LaneBy, PluginError> {
    let s = config.string("lanes")?;
    LaneBy::parse(&s).ok_or_else(|| {
        PluginError::new(format!(
            "`lanes` = {s:?}: expected \"sm\", \"block\" or \"thread\""
        ))
    })
}

struct ChromeTraceCollector;

impl Collector for ChromeTraceCollector {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "chrome_trace",
            "Chrome trace event JSON (chrome://tracing, Perfetto, PyTorch Kineto): complete, begin/end, instant, counter, async and flow events as spans; read event by event",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "Trace files (.json)",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "Run id of a single file (default: the file's name without extension)",
        ))
        .tables(&["spans"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let (spans, notes) =
            read_chrome_traces(&config.path_list("paths")?, config.opt_string("run_id")?)?;
        for note in notes {
            out.progress(0, 0, &note);
        }
        out.push_batch("spans", spans)?;
        Ok(())
    }
}
