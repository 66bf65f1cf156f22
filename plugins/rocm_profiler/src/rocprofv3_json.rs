//! rocprofv3's JSON output (`rocprofv3 --output-format json`, `<name>_results.json`): the same
//! dispatches, counters and agents as its CSV files, in one document.
//!
//! ```text
//! {"rocprofiler-sdk-tool": [            one object per profiled process
//!   {"metadata": {"pid": ...},
//!    "agents": [{"id": {"handle"}, "type": 2 (GPU), "product_name", "cu_count", ...}],
//!    "counters": [{"agent_id", "id": {"handle"}, "name"}],
//!    "kernel_symbols": [{"kernel_id", "formatted_kernel_name", "arch_vgpr_count", ...}],
//!    "callback_records": {"counter_collection": [{"dispatch_data": {"start_timestamp",
//!        "end_timestamp", "dispatch_info": {...}}, "records": [{"counter_id", "value"}]}]},
//!    "buffer_records": {"kernel_dispatch": [{"start_timestamp", "end_timestamp",
//!        "dispatch_info": {"agent_id", "kernel_id", "dispatch_id", "workgroup_size": {x, y, z},
//!        "grid_size": {x, y, z}, "group_segment_size", "private_segment_size"}}]}}]}
//! ```
//!
//! The kernel trace (`buffer_records.kernel_dispatch`) reads as `*_kernel_trace.csv` does, the
//! counter records (`callback_records.counter_collection`) as `*_counter_collection.csv` does
//! (a counter's records over its dimensions summed, as rocprofv3's CSV writes them), with the
//! same column names, so that the JSON and the CSV of one run give the same tables. GPU agents
//! name the device and give its `devices` row. Keys not listed are not read.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use yosoku_plugin_sdk::PluginError;
use yosoku_profiler_import::devices::DeviceRow;

use crate::dispatches::{Dispatch, FINE_PER_NS, FileKind, FineTime, ProfileFile, Timing};

/// The key every rocprofv3 JSON document starts with.
pub const ROOT_KEY: &str = "rocprofiler-sdk-tool";

/// Whether `text` looks like rocprofv3's JSON output (told from its first bytes, whatever the
/// file's name).
pub fn is_rocprofv3_json(text: &str) -> bool {
    let head: String = text
        .trim_start()
        .chars()
        .take(64)
        .filter(|c| !c.is_whitespace())
        .collect();
    head.starts_with(&format!("{{\"{ROOT_KEY}\""))
}

#[derive(Debug, Deserialize)]
struct Document {
    #[serde(rename = "rocprofiler-sdk-tool")]
    processes: Vec<Process>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Process {
    metadata: Metadata,
    agents: Vec<Agent>,
    counters: Vec<CounterInfo>,
    kernel_symbols: Vec<KernelSymbol>,
    callback_records: CallbackRecords,
    buffer_records: BufferRecords,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Metadata {
    pid: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
struct Handle {
    handle: u64,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
struct Dim3 {
    x: u64,
    y: u64,
    z: u64,
}

impl Dim3 {
    fn total(&self) -> u64 {
        self.x.saturating_mul(self.y).saturating_mul(self.z)
    }
}

/// The agent types of rocprofiler-sdk (`rocprofiler_agent_type_t`).
const AGENT_TYPE_GPU: u64 = 2;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Agent {
    id: Handle,
    #[serde(rename = "type")]
    agent_type: u64,
    name: String,
    product_name: String,
    node_id: u64,
    cu_count: i64,
    simd_per_cu: i64,
    wave_front_size: i64,
    num_xcc: i64,
    lds_size_in_kb: i64,
    workgroup_max_size: i64,
    max_engine_clk_fcompute: f64,
    mem_banks: Vec<MemBank>,
    caches: Vec<Cache>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MemBank {
    size_in_bytes: i64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Cache {
    /// KiB.
    size: i64,
    level: i64,
}

impl Agent {
    /// The agent as rocprofv3's CSV names it (`Agent 2`: its node).
    fn label(&self) -> String {
        format!("Agent {}", self.node_id)
    }

    fn device_name(&self) -> String {
        if self.product_name.trim().is_empty() {
            self.name.clone()
        } else {
            self.product_name.trim().to_owned()
        }
    }

    fn device_row(&self) -> DeviceRow {
        let cache = |level: i64| {
            self.caches
                .iter()
                .find(|c| c.level == level)
                .map(|c| c.size * 1024)
        };
        let mut description = vec![("architecture".to_owned(), self.name.clone())];
        for (key, value) in [
            ("wave_size", self.wave_front_size),
            ("simd_per_cu", self.simd_per_cu),
            ("num_xcc", self.num_xcc),
        ] {
            if value > 0 {
                description.push((key.to_owned(), value.to_string()));
            }
        }
        if let Some(l3) = cache(3) {
            description.push(("l3_cache_bytes".to_owned(), l3.to_string()));
        }
        DeviceRow {
            device: self.device_name(),
            vendor: Some("AMD".to_owned()),
            device_type: Some("GPU".to_owned()),
            compute_units: Some(self.cu_count),
            clock_mhz: Some(self.max_engine_clk_fcompute),
            global_memory_bytes: Some(self.mem_banks.iter().map(|b| b.size_in_bytes).sum()),
            local_memory_bytes: Some(self.lds_size_in_kb * 1024),
            l2_cache_bytes: cache(2),
            max_work_group_size: Some(self.workgroup_max_size),
            description,
            ..DeviceRow::default()
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CounterInfo {
    agent_id: Handle,
    id: Handle,
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct KernelSymbol {
    kernel_id: u64,
    kernel_name: String,
    formatted_kernel_name: String,
    arch_vgpr_count: u64,
    accum_vgpr_count: u64,
    sgpr_count: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CallbackRecords {
    counter_collection: Vec<CounterRecord>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct BufferRecords {
    kernel_dispatch: Vec<TimedDispatch>,
}

/// A dispatch with its times: a kernel-trace record, or a counter record's `dispatch_data`.
#[derive(Debug, Deserialize)]
struct TimedDispatch {
    start_timestamp: u64,
    end_timestamp: u64,
    dispatch_info: DispatchInfo,
}

#[derive(Debug, Deserialize)]
struct CounterRecord {
    dispatch_data: TimedDispatch,
    records: Vec<CounterValue>,
}

#[derive(Debug, Deserialize)]
struct CounterValue {
    counter_id: Handle,
    value: f64,
}

#[derive(Debug, Deserialize)]
struct DispatchInfo {
    agent_id: Handle,
    kernel_id: u64,
    dispatch_id: u64,
    #[serde(default)]
    private_segment_size: u64,
    #[serde(default)]
    group_segment_size: u64,
    workgroup_size: Dim3,
    grid_size: Dim3,
}

/// A rocprofv3 JSON document, read: its kernel trace and its counters (either may be absent) and
/// the GPUs they ran on.
#[derive(Debug)]
pub struct JsonRun {
    pub files: Vec<ProfileFile>,
    pub devices: Vec<DeviceRow>,
}

fn at(path: &Path, list: &str, i: usize, message: String) -> PluginError {
    PluginError::new(format!("{}: record {list}[{i}]: {message}", path.display()))
}

/// The dispatch a record describes, with its launch configuration in the CSV's column names.
fn dispatch(
    path: &Path,
    list: &str,
    i: usize,
    record: &TimedDispatch,
    process: &Process,
    several_processes: bool,
) -> Result<Dispatch, PluginError> {
    let info = &record.dispatch_info;
    let symbol = process
        .kernel_symbols
        .iter()
        .find(|s| s.kernel_id == info.kernel_id)
        .ok_or_else(|| {
            at(
                path,
                list,
                i,
                format!(
                    "kernel_id {} is not among the {} kernel_symbols",
                    info.kernel_id,
                    process.kernel_symbols.len()
                ),
            )
        })?;
    let agent = process.agents.iter().find(|a| a.id == info.agent_id);
    if record.end_timestamp <= record.start_timestamp {
        return Err(at(
            path,
            list,
            i,
            format!(
                "dispatch {} ends at {} ns, not after its start at {} ns",
                info.dispatch_id, record.end_timestamp, record.start_timestamp
            ),
        ));
    }
    let kernel = if symbol.formatted_kernel_name.is_empty() {
        symbol.kernel_name.clone()
    } else {
        symbol.formatted_kernel_name.clone()
    };
    let value = |name: &str, v: u64| (name.to_owned(), v.to_string(), 1);
    Ok(Dispatch {
        line: i + 1,
        id: if several_processes {
            format!("{}:{}", process.metadata.pid, info.dispatch_id)
        } else {
            info.dispatch_id.to_string()
        },
        gpu: Some(agent.map_or_else(|| format!("Agent {}", info.agent_id.handle), Agent::label)),
        kernel,
        timing: Some(Timing::once(
            FineTime::from(record.start_timestamp) * FINE_PER_NS,
            FineTime::from(record.end_timestamp) * FINE_PER_NS,
        )),
        device: agent.map(Agent::device_name),
        values: vec![
            value("LDS_Block_Size", info.group_segment_size),
            value("Scratch_Size", info.private_segment_size),
            value("VGPR_Count", symbol.arch_vgpr_count),
            value("Accum_VGPR_Count", symbol.accum_vgpr_count),
            value("SGPR_Count", symbol.sgpr_count),
            value("Workgroup_Size", info.workgroup_size.total()),
            value("Grid_Size", info.grid_size.total()),
        ],
        text: Vec::new(),
    })
}

/// Checks that no two records of a list are one dispatch of one GPU.
fn check_unique(path: &Path, list: &str, dispatches: &[Dispatch]) -> Result<(), PluginError> {
    let Some((i, first)) = crate::dispatches::first_repeat(dispatches) else {
        return Ok(());
    };
    let d = &dispatches[i];
    Err(at(
        path,
        list,
        i,
        format!(
            "dispatch {} of {} appears again (first at {list}[{first}]): one record per dispatch expected",
            d.id,
            d.gpu.as_deref().unwrap_or("its GPU")
        ),
    ))
}

/// Reads a rocprofv3 JSON document.
pub fn read(path: &Path, text: &str) -> Result<JsonRun, PluginError> {
    let document: Document = serde_json::from_str(text).map_err(|e| {
        let what = if e.is_eof() {
            "the JSON ends early (cut short?)".to_owned()
        } else {
            format!("not rocprofv3's JSON output: {e}")
        };
        PluginError::at(path, e.line().max(1), e.column().max(1), what)
    })?;
    if document.processes.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no profiled process in `{ROOT_KEY}`",
            path.display()
        )));
    }
    let several = document.processes.len() > 1;
    let mut trace = Vec::new();
    let mut counters = Vec::new();
    let mut devices: Vec<DeviceRow> = Vec::new();
    for process in &document.processes {
        for (i, record) in process.buffer_records.kernel_dispatch.iter().enumerate() {
            trace.push(dispatch(
                path,
                "buffer_records.kernel_dispatch",
                i,
                record,
                process,
                several,
            )?);
        }
        let names: HashMap<(Handle, Handle), &str> = process
            .counters
            .iter()
            .map(|c| ((c.agent_id, c.id), c.name.as_str()))
            .collect();
        let list = "callback_records.counter_collection";
        for (i, record) in process
            .callback_records
            .counter_collection
            .iter()
            .enumerate()
        {
            let mut d = dispatch(path, list, i, &record.dispatch_data, process, several)?;
            let agent = record.dispatch_data.dispatch_info.agent_id;
            // A counter's records over its dimensions (per XCC, per shader engine) summed, in the
            // order the counters first appear.
            let mut sums: Vec<(&str, f64)> = Vec::new();
            for value in &record.records {
                let name = names.get(&(agent, value.counter_id)).ok_or_else(|| {
                    at(
                        path,
                        list,
                        i,
                        format!(
                            "counter id {} of agent {} is not among the `counters`",
                            value.counter_id.handle, agent.handle
                        ),
                    )
                })?;
                if !value.value.is_finite() {
                    return Err(at(path, list, i, format!("counter `{name}` is not finite")));
                }
                match sums.iter_mut().find(|(n, _)| n == name) {
                    Some((_, sum)) => *sum += value.value,
                    None => sums.push((name, value.value)),
                }
            }
            d.values.extend(
                sums.into_iter()
                    .map(|(name, sum)| (name.to_owned(), format!("{sum:?}"), 1)),
            );
            counters.push(d);
        }
        for agent in process
            .agents
            .iter()
            .filter(|a| a.agent_type == AGENT_TYPE_GPU)
        {
            let row = agent.device_row();
            let used = trace
                .iter()
                .chain(&counters)
                .any(|d| d.device.as_deref() == Some(row.device.as_str()));
            if used && !devices.iter().any(|r| r.device == row.device) {
                devices.push(row);
            }
        }
    }
    check_unique(path, "buffer_records.kernel_dispatch", &trace)?;
    check_unique(path, "callback_records.counter_collection", &counters)?;
    let mut files = Vec::new();
    for (kind, dispatches) in [(FileKind::Counters, counters), (FileKind::Trace, trace)] {
        if !dispatches.is_empty() {
            files.push(ProfileFile {
                path: path.to_owned(),
                kind,
                dispatches,
            });
        }
    }
    if files.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no kernel dispatch and no counter record in this rocprofv3 JSON (was it run with --kernel-trace or --pmc?)",
            path.display()
        )));
    }
    Ok(JsonRun { files, devices })
}
