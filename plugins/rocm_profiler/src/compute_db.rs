//! rocprof-compute's analysis database (`rocprof_compute_<hash>.db`, rocprof-compute 3.5 with
//! ROCm 7): one profiled workload as SQLite, its dispatches with their kernels, GPU and
//! timestamps (`compute_dispatch`, `compute_kernel`), the machine and GPU it ran on
//! (`compute_workload.sys_info_extdata`, the fields of a workload's `sysinfo.csv` as JSON), and
//! rocprof-compute's analysis of each kernel over all its dispatches
//! (`compute_kernel_metric_value`).
//!
//! Each dispatch becomes a run timed by its timestamps, on the GPU the workload describes, and a
//! span on the workload's timeline, as a rocprofv3 kernel trace gives them. The analysis values
//! are per kernel, not per dispatch (a mean over its dispatches, its peak, a percentage of it), so
//! they are no counters of a run: counted in a note, not imported.
//!
//! Tables and columns are read by name; the schema's major version (`compute_metadata`) is
//! checked first, and one yosoku does not know is refused with the version found and those known.

use std::path::Path;

use yosoku_plugin_sdk::PluginError;
use yosoku_profiler_import::sqlite::Database;

use crate::dispatches::{Dispatch, FINE_PER_NS, FileKind, ProfileFile, Timing};
use crate::sysinfo::SysInfo;

/// The schema major versions yosoku reads, and the one its tests read.
const KNOWN_MAJOR: &[&str] = &["1"];
const TESTED: &str = "1.3.0 (rocprof-compute 3.5.0, ROCm 7.3)";

/// What a rocprof-compute database holds for the importer.
#[derive(Debug)]
pub struct ComputeDb {
    /// Its dispatches, as a kernel trace's.
    pub file: ProfileFile,
    /// The machine and GPU of the workload, where the database describes them.
    pub sysinfo: Option<SysInfo>,
    /// What was read and what was left out, for the run's notes.
    pub note: String,
}

fn known() -> String {
    let majors: Vec<String> = KNOWN_MAJOR.iter().map(|m| format!("{m}.x")).collect();
    format!(
        "the schemas yosoku knows are {}, tested on {TESTED}",
        majors.join(", ")
    )
}

/// Reads the rocprof-compute database in `bytes` (the file at `path`).
pub fn read(path: &Path, bytes: &[u8]) -> Result<ComputeDb, PluginError> {
    let mut db = Database::open(path, bytes, "a rocprof-compute database, schema unknown")?;
    if !db.has_table("compute_metadata")? {
        return Err(PluginError::new(format!(
            "{}: an SQLite database without rocprof-compute's `compute_metadata` table: not a rocprof-compute database (rocprofv3's rocpd databases are not read yet: convert one with `rocpd convert --output-format csv` and import its kernel trace; Nsight Systems exports are read by the cuda_profiler plugin's `nsys` collector)",
            path.display()
        )));
    }
    db.require_columns("compute_metadata", &["schema_version"], &known())?;
    let version = db
        .optional_text(
            "compute_metadata",
            "SELECT schema_version FROM compute_metadata LIMIT 1",
        )?
        .ok_or_else(|| db.error("`compute_metadata` is empty, so its schema is unknown"))?;
    db.what = format!("a rocprof-compute database, schema {version}");
    let major = version.split('.').next().unwrap_or("");
    if !KNOWN_MAJOR.contains(&major) {
        return Err(db.error(format!(
            "schema version {version}, which yosoku does not read; {}: analyse the workload with a rocprof-compute of those versions, or import its CSV files",
            known()
        )));
    }
    let dispatches = dispatches(&db)?;
    if dispatches.is_empty() {
        return Err(db.error(
            "no dispatch (`compute_dispatch` is empty): the profiled application launched no kernel on the GPU; profile a run that reaches the GPU",
        ));
    }
    let sysinfo = sysinfo(&db)?;
    let analysis_values: i64 = if db.has_table("compute_kernel_metric_value")? {
        db.db
            .query_row(
                "SELECT count(*) FROM compute_kernel_metric_value",
                [],
                |r| r.get(0),
            )
            .map_err(|e| db.table_error("compute_kernel_metric_value", e))?
    } else {
        0
    };
    let note = format!(
        "{}: {} dispatch(es) of a rocprof-compute database (schema {version}) as runs; its {analysis_values} analysis value(s) of whole kernels (rocprof-compute's mean, peak and share of peak over each kernel's dispatches, not counters of one dispatch) are not imported",
        path.display(),
        dispatches.len()
    );
    Ok(ComputeDb {
        file: ProfileFile {
            path: path.to_path_buf(),
            kind: FileKind::Trace,
            dispatches,
        },
        sysinfo,
        note,
    })
}

/// Every dispatch, in the order rocprof-compute numbered them, with its kernel's name.
fn dispatches(db: &Database) -> Result<Vec<Dispatch>, PluginError> {
    let columns = [
        "dispatch_uuid",
        "kernel_uuid",
        "dispatch_id",
        "gpu_id",
        "start_timestamp",
        "end_timestamp",
    ];
    db.require_columns("compute_dispatch", &columns, &known())?;
    db.require_columns("compute_kernel", &["kernel_uuid", "kernel_name"], &known())?;
    let mut statement = db
        .db
        .prepare(
            "SELECT d.dispatch_id, d.gpu_id, k.kernel_name, d.start_timestamp, d.end_timestamp \
             FROM compute_dispatch d LEFT JOIN compute_kernel k ON k.kernel_uuid = d.kernel_uuid \
             ORDER BY d.dispatch_id, d.dispatch_uuid",
        )
        .map_err(|e| db.table_error("compute_dispatch", e))?;
    let rows = statement
        .query_map([], |r| {
            Ok((
                r.get::<_, Option<i64>>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })
        .map_err(|e| db.table_error("compute_dispatch", e))?;
    let mut out = Vec::new();
    for (place, row) in rows.enumerate() {
        let (id, gpu, kernel, start, end) = row
            .map_err(|e| db.error(format!("dispatch {} of `compute_dispatch`: {e}", place + 1)))?;
        let at = |what: &str| {
            db.error(format!(
                "dispatch {} of `compute_dispatch`: {what}",
                place + 1
            ))
        };
        let id = id.ok_or_else(|| at("no `dispatch_id`"))?;
        let kernel =
            kernel.ok_or_else(|| at("its `kernel_uuid` names no kernel of `compute_kernel`"))?;
        let timestamp = |t: Option<i64>, name: &str| {
            t.and_then(|t| u128::try_from(t).ok())
                .map(|t| t * FINE_PER_NS)
                .ok_or_else(|| at(&format!("`{name}` is missing or negative")))
        };
        let timing = Timing::once(
            timestamp(start, "start_timestamp")?,
            timestamp(end, "end_timestamp")?,
        );
        out.push(Dispatch {
            line: place + 1,
            id: id.to_string(),
            gpu: gpu.map(|g| g.to_string()),
            kernel,
            timing: Some(timing),
            device: None,
            values: Vec::new(),
            text: Vec::new(),
        });
    }
    Ok(out)
}

/// The workload's `sys_info_extdata`: the fields of its `sysinfo.csv`, as a JSON object.
fn sysinfo(db: &Database) -> Result<Option<SysInfo>, PluginError> {
    if !db.has_table("compute_workload")?
        || !db
            .columns("compute_workload")?
            .iter()
            .any(|c| c == "sys_info_extdata")
    {
        return Ok(None);
    }
    let Some(text) = db.optional_text(
        "compute_workload",
        "SELECT sys_info_extdata FROM compute_workload LIMIT 1",
    )?
    else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        db.error(format!(
            "`compute_workload.sys_info_extdata` is not JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })?;
    let Some(object) = value.as_object() else {
        return Err(db.error(
            "`compute_workload.sys_info_extdata` is not a JSON object of the workload's system fields",
        ));
    };
    let fields: Vec<(String, String)> = object
        .iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.trim().to_owned(),
                serde_json::Value::Null => String::new(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect();
    let gpu_model = fields
        .iter()
        .find(|(k, _)| k == "gpu_model")
        .map(|(_, v)| v.clone())
        .filter(|v| !v.is_empty());
    Ok(gpu_model.map(|gpu_model| SysInfo { gpu_model, fields }))
}
