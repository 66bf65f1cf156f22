//! Nsight Systems' own report as SQLite (`nsys export --type sqlite report.nsys-rep`, or
//! `nsys profile --export sqlite`): every kernel launch as a run on its GPU, named from the
//! export's GPU table, with its launch configuration as counters; kernels, copies and sets as
//! spans on their GPU's streams, CUDA API calls and NVTX ranges as spans on their threads.
//!
//! Tables and columns are read by name. The export's schema version (`META_DATA_EXPORT`) is
//! checked first: a major version yosoku does not know is refused with the version found and
//! the ones known, and a table or column a reader needs that the export lacks is named with the
//! version.

use std::collections::HashMap;
use std::path::Path;

use yosoku_plugin_sdk::PluginError;
use yosoku_traces::spans::{Span, Timeline};

use crate::builder::{RunKey, Tables};
use crate::input::kernel_program;
use crate::nsys::Labels;
use crate::units::Prefixes;
use yosoku_profiler_import::sqlite::Database;
pub use yosoku_profiler_import::sqlite::{SQLITE_MAGIC, is_sqlite};

/// The export schema's major versions yosoku reads, and the one its tests read.
const KNOWN_MAJOR: &[&str] = &["3"];
const TESTED: &str = "3.13.2 (Nsight Systems 2024.5)";

/// An open export and what every reader of it needs.
struct Export {
    base: Database,
    version: String,
    strings: HashMap<i64, String>,
}

impl Export {
    fn error(&self, what: impl std::fmt::Display) -> PluginError {
        self.base.error(what)
    }

    /// The texts of `table`'s column `text` by the table's `id` (a row where either is NULL left
    /// out): the export's strings, GPU names, copy kinds.
    fn texts_by_id(&self, table: &str, text: &str) -> Result<HashMap<i64, String>, PluginError> {
        let mut out = HashMap::new();
        self.base
            .each_row(table, &format!("SELECT id, {text} FROM {table}"), |r| {
                if let (Some(id), Some(t)) = (r.int(0)?, r.text(1)?) {
                    out.insert(id, t);
                }
                Ok(())
            })?;
        Ok(out)
    }

    fn has_table(&self, table: &str) -> Result<bool, PluginError> {
        self.base.has_table(table)
    }

    /// Refuses `table` without every one of `columns`, naming the first it lacks.
    fn require_columns(&self, table: &str, columns: &[&str]) -> Result<(), PluginError> {
        self.base.require_columns(
            table,
            columns,
            &format!(
                "the schemas yosoku knows are {}, tested on {TESTED}",
                known()
            ),
        )
    }

    fn string(&self, id: Option<i64>) -> &str {
        id.and_then(|i| self.strings.get(&i))
            .map_or("", String::as_str)
    }
}

fn known() -> String {
    KNOWN_MAJOR
        .iter()
        .map(|m| format!("{m}.x"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Opens the database in `bytes` (the file's contents, as read and hashed) and checks that it is
/// an Nsight Systems export of a schema yosoku knows.
fn open(path: &Path, bytes: &[u8]) -> Result<Export, PluginError> {
    let mut export = Export {
        base: Database::open(
            path,
            bytes,
            "an Nsight Systems SQLite export, schema unknown",
        )?,
        version: String::from("unknown"),
        strings: HashMap::new(),
    };
    if !export.has_table("META_DATA_EXPORT")? {
        return Err(PluginError::new(format!(
            "{}: an SQLite database without Nsight Systems' `META_DATA_EXPORT` table: not an `nsys export --type sqlite` file (rocprofv3's rocpd databases are read by the rocm_profiler plugin)",
            path.display()
        )));
    }
    let version = export.base.optional_text(
        "META_DATA_EXPORT",
        "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'",
    )?;
    let version = version.ok_or_else(|| {
        export.error("`META_DATA_EXPORT` has no `EXPORT_SCHEMA_VERSION`, so its schema is unknown")
    })?;
    export.base.what = format!("an Nsight Systems SQLite export, schema {version}");
    export.version = version.clone();
    let major = version.split('.').next().unwrap_or("");
    if !KNOWN_MAJOR.contains(&major) {
        return Err(export.error(format!(
            "schema version {version}, which yosoku does not read; it reads {}, tested on {TESTED}: export the report with an Nsight Systems of those versions",
            known()
        )));
    }
    export.require_columns("StringIds", &["id", "value"])?;
    let strings = export.texts_by_id("StringIds", "value")?;
    export.strings = strings;
    Ok(export)
}

/// The GPUs of the export by device id, named as the GPU table names them (`TARGET_INFO_GPU`,
/// `TARGET_INFO_CUDA_GPU` in older schemas); `GPU <id>` where neither names one.
fn gpu_names(export: &Export) -> Result<HashMap<i64, String>, PluginError> {
    for table in ["TARGET_INFO_GPU", "TARGET_INFO_CUDA_GPU"] {
        if export.has_table(table)? {
            export.require_columns(table, &["id", "name"])?;
            return export.texts_by_id(table, "name");
        }
    }
    Ok(HashMap::new())
}

/// The launch configuration of a kernel, as counters named as the export's columns.
const KERNEL_COUNTERS: &[(&str, &str)] = &[
    ("gridX", ""),
    ("gridY", ""),
    ("gridZ", ""),
    ("blockX", ""),
    ("blockY", ""),
    ("blockZ", ""),
    ("registersPerThread", ""),
    ("staticSharedMemory", "B"),
    ("dynamicSharedMemory", "B"),
];

/// Where the readers of the export's tables put what they read.
struct Out<'a> {
    tables: Tables,
    timeline: &'a str,
    /// The name of the GPU of a device id.
    gpu: &'a dyn Fn(Option<i64>) -> String,
    labels: &'a Labels,
    counts: Counts,
}

impl<'a> Out<'a> {
    /// Its fields, each borrowed on its own.
    #[allow(clippy::type_complexity)]
    fn parts(
        &mut self,
    ) -> (
        &mut Tables,
        &'a str,
        &'a dyn Fn(Option<i64>) -> String,
        &'a Labels,
        &mut Counts,
    ) {
        (
            &mut self.tables,
            self.timeline,
            self.gpu,
            self.labels,
            &mut self.counts,
        )
    }
}

/// What the reader read, for its notes.
#[derive(Debug, Default)]
struct Counts {
    kernels: usize,
    copies: usize,
    sets: usize,
    api_calls: usize,
    nvtx_ranges: usize,
}

/// Reads the export in `bytes` (the file at `path`).
pub fn read(path: &Path, bytes: &[u8], labels: &Labels) -> Result<Tables, PluginError> {
    let export = open(path, bytes)?;
    let gpus = gpu_names(&export)?;
    let gpu = |id: Option<i64>| -> String {
        labels.device.clone().unwrap_or_else(|| match id {
            Some(i) => gpus.get(&i).cloned().unwrap_or_else(|| format!("GPU {i}")),
            None => "GPU".to_owned(),
        })
    };
    let timeline = labels
        .program
        .clone()
        .unwrap_or_else(|| crate::input::csv_stem(path));
    let mut out = Out {
        tables: Tables::new("nsys", Prefixes::Decimal),
        timeline: &timeline,
        gpu: &gpu,
        labels,
        counts: Counts::default(),
    };
    kernels(&export, &mut out)?;
    copies_and_sets(&export, &mut out)?;
    host_spans(&export, &mut out.tables, &timeline, &mut out.counts)?;
    let Out {
        mut tables, counts, ..
    } = out;
    if counts.kernels == 0 {
        return Err(export.error(
            "no kernel launches (`CUPTI_ACTIVITY_KIND_KERNEL` is empty or absent): profile with `nsys profile --trace=cuda`",
        ));
    }
    tables.add_note(format!(
        "{}: {} kernel launch(es), {} copies, {} sets as runs; {} CUDA API call(s) and {} NVTX range(s) as spans (schema {})",
        path.display(),
        counts.kernels,
        counts.copies,
        counts.sets,
        counts.api_calls,
        counts.nvtx_ranges,
        export.version
    ));
    Ok(tables)
}

/// A duration in seconds from the export's nanoseconds; an end before the start is an error of
/// the export.
fn seconds(export: &Export, table: &str, start: i64, end: i64) -> Result<f64, PluginError> {
    Tables::check_duration(end.saturating_sub(start) as f64 / 1e9)
        .map_err(|e| export.error(format!("`{table}` row starting at {start} ns: {e}")))
}

fn kernels(export: &Export, out: &mut Out<'_>) -> Result<(), PluginError> {
    let (tables, timeline, gpu, labels, counts) = out.parts();
    const TABLE: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
    if !export.has_table(TABLE)? {
        return Ok(());
    }
    let mut columns = vec![
        "start",
        "end",
        "deviceId",
        "streamId",
        "demangledName",
        "shortName",
    ];
    columns.extend(KERNEL_COUNTERS.iter().map(|(c, _)| *c));
    export.require_columns(TABLE, &columns)?;
    let names: Vec<u32> = KERNEL_COUNTERS
        .iter()
        .map(|(c, _)| tables.name(c))
        .collect();
    let sql = format!("SELECT {} FROM {TABLE} ORDER BY start", columns.join(", "));
    export.base.each_row(TABLE, &sql, |r| {
        let get = |i: usize| r.int(i);
        let (start, end) = (get(0)?.unwrap_or(0), get(1)?.unwrap_or(0));
        let device = gpu(get(2)?);
        let stream = get(3)?;
        let demangled = export.string(get(4)?).to_owned();
        let short = export.string(get(5)?);
        let secs = seconds(export, TABLE, start, end)?;
        counts.kernels += 1;
        let run = tables.key(RunKey {
            run_id: format!("kernel:{}", counts.kernels),
            device: device.clone(),
            program: labels.program.clone().unwrap_or_else(|| {
                if short.is_empty() {
                    kernel_program(&demangled)
                } else {
                    short.to_owned()
                }
            }),
            variant: labels.variant.clone().unwrap_or_default(),
            kernel: Some(demangled.clone()),
        });
        tables.add_run(run, None, "kernel", secs);
        for (k, (&name, (_, unit))) in names.iter().zip(KERNEL_COUNTERS).enumerate() {
            if let Some(v) = get(6 + k)? {
                tables.add_value(run, name, v as f64, unit);
            }
        }
        let lane = stream_lane(&device, stream);
        tables.add_span(&Span::interval(
            timeline,
            Timeline::Measured,
            &lane,
            "stream",
            &demangled,
            "kernel",
            start,
            end.saturating_sub(start),
        ));
        Ok(())
    })
}

fn stream_lane(device: &str, stream: Option<i64>) -> String {
    match stream {
        Some(s) => format!("{device} / stream {s}"),
        None => device.to_owned(),
    }
}

/// Copies and sets: runs of phase `transfer` and spans on their streams, each named as nsys's
/// GPU trace names them (`[CUDA memcpy Host-to-Device]`, `[CUDA memset]`).
fn copies_and_sets(export: &Export, out: &mut Out<'_>) -> Result<(), PluginError> {
    let (tables, timeline, gpu, labels, counts) = out.parts();
    let kinds: HashMap<i64, String> = if export.has_table("ENUM_CUDA_MEMCPY_OPER")? {
        export.require_columns("ENUM_CUDA_MEMCPY_OPER", &["id", "label"])?;
        export.texts_by_id("ENUM_CUDA_MEMCPY_OPER", "label")?
    } else {
        HashMap::new()
    };
    for (table, is_copy) in [
        ("CUPTI_ACTIVITY_KIND_MEMCPY", true),
        ("CUPTI_ACTIVITY_KIND_MEMSET", false),
    ] {
        if !export.has_table(table)? {
            continue;
        }
        let kind_column = if is_copy { "copyKind" } else { "bytes" };
        export.require_columns(
            table,
            &["start", "end", "deviceId", "streamId", "bytes", kind_column],
        )?;
        let sql = format!(
            "SELECT start, end, deviceId, streamId, bytes, {kind_column} FROM {table} ORDER BY start"
        );
        let bytes_name = tables.name("bytes");
        export.base.each_row(table, &sql, |r| {
            let get = |i: usize| r.int(i);
            let (start, end) = (get(0)?.unwrap_or(0), get(1)?.unwrap_or(0));
            let device = gpu(get(2)?);
            let name = if is_copy {
                counts.copies += 1;
                let kind = get(5)?
                    .and_then(|k| kinds.get(&k).cloned())
                    .unwrap_or_else(|| "Unknown".to_owned());
                format!("[CUDA memcpy {kind}]")
            } else {
                counts.sets += 1;
                "[CUDA memset]".to_owned()
            };
            let secs = seconds(export, table, start, end)?;
            let run = tables.key(RunKey {
                run_id: format!(
                    "{}:{}",
                    if is_copy { "memcpy" } else { "memset" },
                    if is_copy { counts.copies } else { counts.sets }
                ),
                device: device.clone(),
                program: labels.program.clone().unwrap_or_else(|| name.clone()),
                variant: labels.variant.clone().unwrap_or_default(),
                kernel: Some(name.clone()),
            });
            tables.add_run(run, None, "transfer", secs);
            if let Some(b) = get(4)? {
                tables.add_value(run, bytes_name, b as f64, "B");
            }
            let lane = stream_lane(&device, get(3)?);
            tables.add_span(&Span::interval(
                timeline,
                Timeline::Measured,
                &lane,
                "stream",
                &name,
                if is_copy { "memcpy" } else { "memset" },
                start,
                end.saturating_sub(start),
            ));
            Ok(())
        })?;
    }
    Ok(())
}

/// The lane of a host thread: nsys packs the process and thread ids into `globalTid`.
fn thread_lane(global_tid: Option<i64>) -> String {
    match global_tid {
        Some(t) => format!(
            "process {} / thread {}",
            (t >> 24) & 0xFF_FFFF,
            t & 0xFF_FFFF
        ),
        None => "host".to_owned(),
    }
}

/// CUDA API calls (`CUPTI_ACTIVITY_KIND_RUNTIME`) and NVTX ranges (`NVTX_EVENTS` with an end) as
/// spans on their threads.
fn host_spans(
    export: &Export,
    tables: &mut Tables,
    timeline: &str,
    counts: &mut Counts,
) -> Result<(), PluginError> {
    const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if export.has_table(RUNTIME)? {
        export.require_columns(RUNTIME, &["start", "end", "globalTid", "nameId"])?;
        counts.api_calls = thread_spans(
            export,
            tables,
            timeline,
            (
                RUNTIME,
                &format!(
                    "SELECT start, end, globalTid, NULL, nameId FROM {RUNTIME} ORDER BY start"
                ),
            ),
            "api",
        )?;
    }
    const NVTX: &str = "NVTX_EVENTS";
    if export.has_table(NVTX)? {
        export.require_columns(NVTX, &["start", "end", "globalTid"])?;
        // A range's name is its `text`, or the string `textId` names (schemas have one or both).
        let present = export.base.columns(NVTX)?;
        let has = |c: &str| present.iter().any(|p| p == c);
        let (text, text_id) = (
            if has("text") { "text" } else { "NULL" },
            if has("textId") { "textId" } else { "NULL" },
        );
        counts.nvtx_ranges = thread_spans(
            export,
            tables,
            timeline,
            (
                NVTX,
                &format!(
                    "SELECT start, end, globalTid, {text}, {text_id} FROM {NVTX} WHERE end IS NOT NULL ORDER BY start"
                ),
            ),
            "nvtx",
        )?;
    }
    Ok(())
}

/// The rows of `sql` (start, end, globalTid, a name's text, a name's string id) as spans of
/// `category` on their threads; how many.
fn thread_spans(
    export: &Export,
    tables: &mut Tables,
    timeline: &str,
    (table, sql): (&str, &str),
    category: &str,
) -> Result<usize, PluginError> {
    let mut n = 0;
    export.base.each_row(table, sql, |r| {
        let get = |i: usize| r.int(i);
        let (start, end) = (get(0)?.unwrap_or(0), get(1)?.unwrap_or(0));
        let lane = thread_lane(get(2)?);
        let name = match r.text(3)? {
            Some(t) => t,
            None => export.string(get(4)?).to_owned(),
        };
        tables.add_span(&Span::interval(
            timeline,
            Timeline::Measured,
            &lane,
            "thread",
            &name,
            category,
            start,
            end.saturating_sub(start).max(0),
        ));
        n += 1;
        Ok(())
    })?;
    Ok(n)
}
