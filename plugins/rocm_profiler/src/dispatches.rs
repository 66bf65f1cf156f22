//! The CSV files of AMD's profilers, read into one shape: dispatches (one kernel launch each), with
//! their identity, timestamps and raw values.
//!
//! | file | layout |
//! |---|---|
//! | omniperf `pmc_perf.csv`, `SQ_*.csv`; rocprof v2 | wide: one row per dispatch, `Dispatch_ID`, `Kernel_Name`, `GPU_ID`, launch columns (`Grid_Size`, `Workgroup_Size`, `LDS_Per_Workgroup`, ...), one column per counter (`SQ_WAVES`, `TCC_HIT_sum`, per-channel `TCC_HIT[3]`), `Start_Timestamp`/`End_Timestamp` |
//! | omniperf `timestamps.csv` | the same identity and launch columns and timestamps, no counters |
//! | rocprof v1 `results.csv` (`-o`) | wide: `Index`, `KernelName`, `gpu-id`, `grd`, `wgr`, `lds`, ..., counters, `BeginNs`/`EndNs` |
//! | rocprofv3 `*_counter_collection.csv` | long: one row per counter of a dispatch (`Counter_Name`, `Counter_Value`) |
//! | rocprofv3 `*_kernel_trace.csv` | wide, no counters: `Kind`, `Dispatch_Id`, `Workgroup_Size_X/Y/Z`, `Grid_Size_X/Y/Z` |
//!
//! Merged omniperf files repeat identity columns of every pass with a suffix (`wave_size_3`,
//! `Correlation_ID_12`): those are skipped, never read as counters.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use yosoku_plugin_sdk::formats::refusal;

use yosoku_plugin_sdk::PluginError;
use yosoku_profiler_import::input::{Header, csv_records, field};

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Hardware counters per dispatch (and perhaps timestamps).
    Counters,
    /// Timestamps (and launch configuration) per dispatch, no counters.
    Trace,
}

/// One kernel dispatch as a file wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// The 1-based line of the dispatch's (first) row; in rocprofv3's JSON, the record's 1-based
    /// place in its list.
    pub line: usize,
    /// The dispatch identifier as written (`Dispatch_ID`, `Index`, `Dispatch_Id`).
    pub id: String,
    /// The GPU (agent) identifier, when the file has one.
    pub gpu: Option<String>,
    /// The kernel name as written.
    pub kernel: String,
    /// When it ran, the sums over its passes; `None` for a file without timestamps.
    pub timing: Option<Timing>,
    /// The device's name, where the file names it (rocprofv3's JSON agents).
    pub device: Option<String>,
    /// Launch configuration and counters: (raw name, value text, 1-based column).
    pub values: Vec<(String, String, usize)>,
    /// Identity columns kept as text for the run's parameters: (lower-case name, value).
    pub text: Vec<(String, String)>,
}

/// A timestamp in billionths of a nanosecond: rocprof-compute writes the mean of its passes'
/// timestamps (`1248227792617386.5`), which whole nanoseconds cannot hold.
pub type FineTime = u128;

/// Billionths of a nanosecond per nanosecond.
pub const FINE_PER_NS: FineTime = 1_000_000_000;

/// A dispatch's start and end, summed over the passes that timed it (one pass: its own
/// timestamps). rocprof-compute runs a program once per pass of counters, so a dispatch of a
/// multi-pass file was timed once in each; its time is the mean of the passes' durations, as
/// rocprof-compute takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub start_sum: FineTime,
    pub end_sum: FineTime,
    pub passes: u32,
}

impl Timing {
    pub fn once(start: FineTime, end: FineTime) -> Self {
        Timing {
            start_sum: start,
            end_sum: end,
            passes: 1,
        }
    }

    /// Adds a further pass's timestamps.
    pub fn add(&mut self, other: Timing) {
        self.start_sum += other.start_sum;
        self.end_sum += other.end_sum;
        self.passes += other.passes;
    }

    /// Whether every pass ended after it started (the sums alone cannot say).
    pub fn ends_after_start(&self) -> bool {
        self.end_sum > self.start_sum
    }

    /// The mean duration in seconds. Whole nanoseconds over one pass are divided as they always
    /// were (`ns / 1e9`), so the value is the one the integer timestamps give.
    pub fn duration_secs(&self) -> f64 {
        let fine = self.end_sum.saturating_sub(self.start_sum);
        let passes = FineTime::from(self.passes.max(1));
        if fine.is_multiple_of(FINE_PER_NS * passes) {
            (fine / (FINE_PER_NS * passes)) as f64 / 1e9
        } else {
            fine as f64 / (1e18 * passes as f64)
        }
    }

    /// The mean start, in whole nanoseconds (rounded down).
    pub fn start_ns(&self) -> u64 {
        let mean = self.start_sum / FineTime::from(self.passes.max(1)) / FINE_PER_NS;
        u64::try_from(mean).unwrap_or(u64::MAX)
    }

    /// The mean duration, in whole nanoseconds (rounded to the nearest).
    pub fn duration_ns(&self) -> u64 {
        let fine = self.end_sum.saturating_sub(self.start_sum);
        let per_pass = fine / FineTime::from(self.passes.max(1));
        u64::try_from((per_pass + FINE_PER_NS / 2) / FINE_PER_NS).unwrap_or(u64::MAX)
    }

    /// The start and end as written, for messages: whole nanoseconds when they are.
    pub fn describe(&self) -> (String, String) {
        let show = |fine: FineTime| {
            let passes = FineTime::from(self.passes.max(1));
            let mean = fine / passes;
            if mean.is_multiple_of(FINE_PER_NS) && fine.is_multiple_of(passes) {
                format!("{}", mean / FINE_PER_NS)
            } else {
                format!("{:.3}", fine as f64 / passes as f64 / 1e9)
            }
        };
        (show(self.start_sum), show(self.end_sum))
    }
}

/// Parses a timestamp in nanoseconds: a non-negative integer, or a decimal of up to nine places
/// (rocprof-compute's mean over passes), exactly.
pub fn parse_fine_time(text: &str) -> Option<FineTime> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 9
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || (text.contains('.') && frac.is_empty())
    {
        return None;
    }
    let whole: FineTime = whole.parse().ok()?;
    let mut fraction: FineTime = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        fraction *= 10;
    }
    whole.checked_mul(FINE_PER_NS)?.checked_add(fraction)
}

/// One profiler file, read.
#[derive(Debug, Clone)]
pub struct ProfileFile {
    pub path: PathBuf,
    pub kind: FileKind,
    pub dispatches: Vec<Dispatch>,
}

/// The dispatch's identifier, the first of these the header has: rocprofv3's kernel trace
/// before it wrote `Dispatch_Id` (rocprofiler-sdk before 1.1) numbers dispatches only by their
/// `Correlation_Id`.
const ID: &[&str] = &["Dispatch_ID", "Dispatch_Id", "Index", "Correlation_Id"];
const KERNEL: &[&str] = &["Kernel_Name", "KernelName"];
const GPU: &[&str] = &["GPU_ID", "gpu-id", "Agent_Id"];
const START: &[&str] = &["Start_Timestamp", "BeginNs"];
const END: &[&str] = &["End_Timestamp", "EndNs"];

/// Text columns that identify a run, kept in its parameters: rocpd's `Guid` (the profiled
/// process, which tells a merged export's processes apart).
const KEPT_TEXT: &[&str] = &["Guid"];

/// Identity and bookkeeping columns: neither launch configuration nor counters.
const IGNORED: &[&str] = &[
    "Kind",
    // rocpd (ROCm 7) exports: the profiled process's id, and the callpath's text columns.
    "Guid",
    "queue-id",
    "queue-index",
    "Queue_ID",
    "Queue_Id",
    "Stream_Id",
    "pid",
    "tid",
    "PID",
    "TID",
    "Process_Id",
    "Thread_Id",
    "sig",
    "obj",
    "Correlation_ID",
    "Correlation_Id",
    "Kernel_Id",
    "DispatchNs",
    "CompleteNs",
    // rocprof v1's `EndNs - BeginNs`, which give the dispatch's time: not a counter (a
    // timestamps-only results.csv is a trace, paired with its counter file).
    "DurationNs",
    "XCC_Index",
    "fbar",
];

/// Launch configuration columns (kept as `config` counters through metrics.toml).
const LAUNCH: &[&str] = &[
    "Grid_Size",
    "Workgroup_Size",
    "LDS_Per_Workgroup",
    "LDS_Block_Size",
    "Scratch_Per_Workitem",
    "Scratch_Size",
    // rocprofv3's kernel trace before rocprofiler-sdk 1.1: LDS per workgroup, scratch per
    // work-item (`LDS_Block_Size` and `Scratch_Size` since).
    "Group_Segment_Size",
    "Private_Segment_Size",
    "Arch_VGPR",
    "VGPR_Count",
    "Accum_VGPR",
    "Accum_VGPR_Count",
    "SGPR",
    "SGPR_Count",
    "wave_size",
    "Wave_Size",
    "grd",
    "wgr",
    "lds",
    "scr",
    "vgpr",
    "arch_vgpr",
    "accum_vgpr",
    "sgpr",
];

/// rocprofv3's per-dimension sizes, multiplied into the totals the other formats write.
const DIMENSIONS: &[(&str, [&str; 3])] = &[
    (
        "Workgroup_Size",
        ["Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"],
    ),
    ("Grid_Size", ["Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]),
];

/// Whether `name` is `base_<n>` for a base in `bases` (a merged file's repeated column), without
/// regard to case: rocprof-compute 3 repeats `Kernel_ID` as `Kernel_ID_1`, ... where older files
/// wrote `Kernel_Id`.
fn is_repeat_of(name: &str, bases: &[&str]) -> bool {
    name.rsplit_once('_').is_some_and(|(base, n)| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && is_one_of(base, bases)
    })
}

/// What a column of a wide file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Id,
    Kernel,
    Gpu,
    Start,
    End,
    Ignored,
    /// A per-dimension size of rocprofv3, multiplied into its total.
    Dimension,
    Launch,
    Counter,
    /// A per-channel counter (`TCC_HIT[3]`), skipped unless asked for.
    Channel,
}

/// Whether `name` is a launch-configuration column (the same in every pass of a dispatch).
pub fn is_launch_column(name: &str) -> bool {
    role(name) == Role::Launch
}

/// Whether `name` is one of `names`, without regard to case: AMD's tools spell the same column
/// `VGPR_Count` (rocprofv3) and `Vgpr_Count` (rocpd), `Dispatch_ID` and `Dispatch_Id`.
fn is_one_of(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| n.eq_ignore_ascii_case(name))
}

fn role(name: &str) -> Role {
    let lower = name.to_ascii_lowercase();
    if is_one_of(name, ID) {
        Role::Id
    } else if is_one_of(name, KERNEL) {
        Role::Kernel
    } else if is_one_of(name, GPU) {
        Role::Gpu
    } else if is_one_of(name, START) {
        Role::Start
    } else if is_one_of(name, END) {
        Role::End
    } else if is_one_of(name, IGNORED)
        || is_repeat_of(name, IGNORED)
        || is_repeat_of(name, LAUNCH)
        || is_repeat_of(name, GPU)
    {
        Role::Ignored
    } else if DIMENSIONS.iter().any(|(_, dims)| is_one_of(&lower, dims)) {
        Role::Dimension
    } else if is_one_of(name, LAUNCH) {
        Role::Launch
    } else if name.ends_with(']') && name.contains('[') {
        Role::Channel
    } else {
        Role::Counter
    }
}

/// What rocprofv3 writes beside its kernel trace and counters, by the end of its file name
/// (`<pid>_memory_copy_trace.csv`): none holds kernel dispatches.
const ROCPROFV3_OTHER: &[(&str, &str)] = &[
    ("_memory_copy_trace.csv", "memory copy trace"),
    ("_memory_allocation_trace.csv", "memory allocation trace"),
    ("_scratch_memory_trace.csv", "scratch memory trace"),
    ("_hip_api_trace.csv", "HIP API trace"),
    ("_hsa_api_trace.csv", "HSA API trace"),
    ("_marker_api_trace.csv", "marker (ROCTx) trace"),
    ("_rccl_api_trace.csv", "RCCL API trace"),
    ("_kernel_stats.csv", "kernel statistics"),
    ("_hip_api_stats.csv", "HIP API statistics"),
    ("_hsa_api_stats.csv", "HSA API statistics"),
    ("_memory_copy_stats.csv", "memory copy statistics"),
    ("_domain_stats.csv", "domain statistics"),
    ("_agent_info.csv", "agent information"),
];

/// The kind of a rocprofv3 table that holds no kernel dispatch, by its name, else by its
/// header: copies (`Direction`), API calls (`Domain` and `Function`), statistics (`Calls` and
/// `TotalDurationNs`), agents (`Agent_Type`).
fn other_rocprofv3_table(path: &Path, header: &str) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if let Some((_, kind)) = ROCPROFV3_OTHER.iter().find(|(end, _)| name.ends_with(end)) {
        return Some(kind);
    }
    let has = |c: &str| header.contains(&format!("\"{c}\""));
    if has("Direction") && has("Source_Agent_Id") {
        Some("memory copy trace")
    } else if has("Domain") && has("Function") {
        Some("API trace")
    } else if has("Calls") && has("TotalDurationNs") {
        Some("statistics")
    } else if has("Agent_Type") {
        Some("agent information")
    } else {
        None
    }
}

/// rocprof v1's `--stats` table (`results.stats.csv`: `Name`, `Calls`, `TotalDurationNs`,
/// `AverageNs`, `Percentage`, without rocprofv3's `MinNs` and `MaxNs`), with what to read
/// instead.
fn rocprof_v1_statistics(path: &Path, header: &str) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let has = |c: &str| header.contains(&format!("\"{c}\""));
    let v1 = name.ends_with(".stats.csv") || !(has("MinNs") || has("MaxNs"));
    (has("Calls") && has("TotalDurationNs") && v1).then_some(
        "a rocprof (v1) `--stats` table: each kernel's total over its calls, not its dispatches; read the dispatches of the same run from rocprof's results.csv (`rocprof --timestamp on`, or `--stats`, writes it beside this file)",
    )
}

/// Reads one file of any of the layouts, recognised by its header.
pub fn read(path: &Path, text: &str, channels: bool) -> Result<ProfileFile, PluginError> {
    // Recognised before anything else is checked: such a file is not cut, it is another table.
    let first_line = text.lines().next().unwrap_or("");
    if let Some(message) = rocprof_v1_statistics(path, first_line) {
        return Err(PluginError::at_line(path, 1, message));
    }
    if let Some(kind) = other_rocprofv3_table(path, first_line) {
        return Err(PluginError::at_line(
            path,
            1,
            format!(
                "a rocprofv3 {kind} table, not kernels: name the run's directory (its *_kernel_trace.csv and *_counter_collection.csv are read) or those files in `paths`"
            ),
        ));
    }
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    let mut records = csv_records(path, text);
    let (header_line, header) = match records.next() {
        Some(r) => {
            let (line, record) = r?;
            (line, Header::new(&record))
        }
        None => {
            return Err(PluginError::new(format!(
                "{}: empty file; expected a rocprof CSV file with a header row",
                path.display()
            )));
        }
    };
    if header.find("Counter_Name").is_some() || header.find("Counter_Value").is_some() {
        read_long(path, header_line, &header, records)
    } else if header.find_any(ID).is_none() {
        Err(refusal(
            path,
            Some(header_line),
            text,
            ("rocm_profiler", "rocprof"),
            &format!(
                "the header has no dispatch identifier column ({})",
                ID.join(", ")
            ),
        ))
    } else {
        read_wide(path, header_line, &header, records, channels)
    }
}

fn require_one(
    path: &Path,
    line: usize,
    header: &Header,
    names: &[&str],
    what: &str,
) -> Result<usize, PluginError> {
    header.find_any(names).ok_or_else(|| {
        PluginError::at_line(
            path,
            line,
            format!(
                "not a rocprof dispatch file: the header has no {what} column ({}); it has: {}",
                names.join(", "),
                header.names.join(", ")
            ),
        )
    })
}

fn timestamp(
    path: &Path,
    line: usize,
    header: &Header,
    column: usize,
    text: &str,
) -> Result<FineTime, PluginError> {
    parse_fine_time(text.trim()).ok_or_else(|| {
        PluginError::at(
            path,
            line,
            column + 1,
            format!(
                "column `{}`: expected a timestamp in nanoseconds (a non-negative integer, or a decimal of up to nine places), found `{text}`",
                header.names[column]
            ),
        )
    })
}

/// Checks that no two dispatches share an identifier on one GPU.
/// The first dispatch that repeats an earlier one's identifier on one GPU: (its index, the
/// earlier one's).
pub fn first_repeat(dispatches: &[Dispatch]) -> Option<(usize, usize)> {
    let mut seen: HashMap<(&Option<String>, &str), usize> = HashMap::new();
    dispatches.iter().enumerate().find_map(|(i, d)| {
        seen.insert((&d.gpu, d.id.as_str()), i)
            .map(|first| (i, first))
    })
}

/// Checks that no two rows of a file are one dispatch of one GPU.
fn check_unique(path: &Path, dispatches: &[Dispatch]) -> Result<(), PluginError> {
    let Some((i, first)) = first_repeat(dispatches) else {
        return Ok(());
    };
    let d = &dispatches[i];
    Err(PluginError::at_line(
        path,
        d.line,
        format!(
            "dispatch {} {}appears again (first at line {}): one row per dispatch expected; were two runs' files concatenated?",
            d.id,
            d.gpu
                .as_deref()
                .map(|g| format!("of GPU {g} "))
                .unwrap_or_default(),
            dispatches[first].line
        ),
    ))
}

fn read_wide(
    path: &Path,
    header_line: usize,
    header: &Header,
    records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
    channels: bool,
) -> Result<ProfileFile, PluginError> {
    let id = require_one(path, header_line, header, ID, "dispatch identifier")?;
    let kernel = require_one(path, header_line, header, KERNEL, "kernel name")?;
    let roles: Vec<Role> = header.names.iter().map(|n| role(n)).collect();
    let gpu = roles.iter().position(|r| *r == Role::Gpu);
    let start = roles.iter().position(|r| *r == Role::Start);
    let end = roles.iter().position(|r| *r == Role::End);
    if start.is_some() != end.is_some() {
        return Err(PluginError::at_line(
            path,
            header_line,
            format!(
                "the header has {} but not {}: a dispatch's time needs both",
                if start.is_some() {
                    "a start timestamp"
                } else {
                    "an end timestamp"
                },
                if start.is_some() {
                    "its end"
                } else {
                    "its start"
                },
            ),
        ));
    }
    let kind = if roles
        .iter()
        .any(|r| matches!(r, Role::Counter | Role::Channel))
    {
        FileKind::Counters
    } else {
        FileKind::Trace
    };
    let kind_column = header.find("Kind");
    let mut dispatches = Vec::new();
    for r in records {
        let (line, record) = r?;
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        header.check_width(path, line, &record)?;
        let get = |i: usize| field(path, line, &record, i, header);
        if let Some(k) = kind_column
            && get(k)?.trim() != "KERNEL_DISPATCH"
        {
            continue;
        }
        let mut values = Vec::new();
        for (i, r) in roles.iter().enumerate() {
            let keep = match r {
                Role::Launch | Role::Counter => true,
                Role::Channel => channels,
                _ => false,
            };
            if keep {
                values.push((header.names[i].clone(), get(i)?.trim().to_owned(), i + 1));
            }
        }
        for (total, dims) in DIMENSIONS {
            let columns: Vec<usize> = dims.iter().filter_map(|d| header.find(d)).collect();
            if columns.len() != dims.len() {
                continue;
            }
            let mut product = 1u64;
            for &c in &columns {
                let text = get(c)?.trim();
                let v: u64 = text.parse().map_err(|_| {
                    PluginError::at(
                        path,
                        line,
                        c + 1,
                        format!(
                            "column `{}`: expected a non-negative integer, found `{text}`",
                            header.names[c]
                        ),
                    )
                })?;
                product = product.saturating_mul(v);
            }
            values.push(((*total).to_owned(), product.to_string(), columns[0] + 1));
        }
        let timing = match (start, end) {
            (Some(s), Some(e)) => Some(Timing::once(
                timestamp(path, line, header, s, get(s)?)?,
                timestamp(path, line, header, e, get(e)?)?,
            )),
            _ => None,
        };
        let mut text = Vec::new();
        for (i, name) in header.names.iter().enumerate() {
            if is_one_of(name, KEPT_TEXT) {
                text.push((name.to_ascii_lowercase(), get(i)?.trim().to_owned()));
            }
        }
        dispatches.push(Dispatch {
            text,
            line,
            id: get(id)?.trim().to_owned(),
            gpu: gpu
                .map(|g| get(g).map(|s| s.trim().to_owned()))
                .transpose()?,
            kernel: get(kernel)?.trim().to_owned(),
            timing,
            device: None,
            values,
        });
    }
    check_unique(path, &dispatches)?;
    Ok(ProfileFile {
        path: path.to_owned(),
        kind,
        dispatches,
    })
}

/// Records a row's (start, end) as one more pass of its dispatch, unless a row of that pass came
/// before: the passes of a dispatch are its distinct (start, end) pairs.
fn add_pass(
    path: &Path,
    line: usize,
    id: &str,
    passes: &mut Vec<(FineTime, FineTime)>,
    (start, end): (FineTime, FineTime),
) -> Result<(), PluginError> {
    if passes.contains(&(start, end)) {
        return Ok(());
    }
    if end <= start {
        let (start, end) = Timing::once(start, end).describe();
        return Err(PluginError::at_line(
            path,
            line,
            format!("dispatch {id} ends at {end} ns, not after its start at {start} ns"),
        ));
    }
    passes.push((start, end));
    Ok(())
}

/// rocprofv3's `counter_collection.csv`: one row per counter of a dispatch.
fn read_long(
    path: &Path,
    header_line: usize,
    header: &Header,
    records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
) -> Result<ProfileFile, PluginError> {
    let id = require_one(
        path,
        header_line,
        header,
        &["Dispatch_Id", "Dispatch_ID"],
        "dispatch identifier",
    )?;
    let kernel = require_one(path, header_line, header, KERNEL, "kernel name")?;
    let name = header.require(
        path,
        header_line,
        "Counter_Name",
        "a rocprofv3 counter collection",
    )?;
    let value = header.require(
        path,
        header_line,
        "Counter_Value",
        "a rocprofv3 counter collection",
    )?;
    let gpu = GPU.iter().find_map(|n| header.find(n));
    let start = START.iter().find_map(|n| header.find(n));
    let end = END.iter().find_map(|n| header.find(n));
    let launch: Vec<usize> = (0..header.names.len())
        .filter(|&i| role(&header.names[i]) == Role::Launch)
        .collect();
    let mut dispatches: Vec<Dispatch> = Vec::new();
    let mut index: HashMap<(Option<String>, String), usize> = HashMap::new();
    let mut counter_line: HashMap<(usize, String), usize> = HashMap::new();
    // The passes that timed each dispatch: rocprof-compute's long `pmc_perf.csv` holds every
    // pass's rows of a dispatch, each pass with its own timestamps.
    let mut passes: Vec<Vec<(FineTime, FineTime)>> = Vec::new();
    for r in records {
        let (line, record) = r?;
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        header.check_width(path, line, &record)?;
        let get = |i: usize| field(path, line, &record, i, header);
        let key = (
            gpu.map(|g| get(g).map(|s| s.trim().to_owned()))
                .transpose()?,
            get(id)?.trim().to_owned(),
        );
        let times = match (start, end) {
            (Some(s), Some(e)) => Some((
                timestamp(path, line, header, s, get(s)?)?,
                timestamp(path, line, header, e, get(e)?)?,
            )),
            _ => None,
        };
        let kernel_name = get(kernel)?.trim();
        let d = match index.get(&key) {
            Some(&d) => {
                if dispatches[d].kernel != kernel_name {
                    return Err(PluginError::at(
                        path,
                        line,
                        kernel + 1,
                        format!(
                            "dispatch {} is `{}` at line {} but `{kernel_name}` here: were two runs' files concatenated?",
                            dispatches[d].id, dispatches[d].kernel, dispatches[d].line
                        ),
                    ));
                }
                d
            }
            None => {
                let mut values = Vec::new();
                for &c in &launch {
                    values.push((header.names[c].clone(), get(c)?.trim().to_owned(), c + 1));
                }
                dispatches.push(Dispatch {
                    line,
                    id: key.1.clone(),
                    gpu: key.0.clone(),
                    kernel: kernel_name.to_owned(),
                    timing: None,
                    device: None,
                    values,
                    text: Vec::new(),
                });
                passes.push(Vec::new());
                index.insert(key, dispatches.len() - 1);
                dispatches.len() - 1
            }
        };
        if let Some(t) = times {
            add_pass(path, line, &dispatches[d].id, &mut passes[d], t)?;
        }
        let counter = get(name)?.trim().to_owned();
        if let Some(first) = counter_line.insert((d, counter.clone()), line) {
            return Err(PluginError::at_line(
                path,
                line,
                format!(
                    "counter `{counter}` of dispatch {} appears again (first at line {first}); one value per counter and dispatch expected",
                    dispatches[d].id
                ),
            ));
        }
        let text = get(value)?.trim().to_owned();
        dispatches[d].values.push((counter, text, value + 1));
    }
    for (d, timed) in dispatches.iter_mut().zip(passes) {
        d.timing = timed
            .into_iter()
            .map(|(s, e)| Timing::once(s, e))
            .reduce(|mut sum, pass| {
                sum.add(pass);
                sum
            });
    }
    Ok(ProfileFile {
        path: path.to_owned(),
        kind: FileKind::Counters,
        dispatches,
    })
}

/// The program of a kernel name: rocprof's `.kd` suffixes and the argument list removed
/// (`vecCopy(double*, double*) [clone .kd]` -> `vecCopy`).
pub fn program_of(kernel: &str) -> String {
    let k = kernel.trim();
    let k = k
        .strip_suffix("[clone .kd]")
        .or_else(|| k.strip_suffix("(.kd)"))
        .unwrap_or(k)
        .trim();
    let k = k.strip_suffix(".kd").unwrap_or(k);
    yosoku_profiler_import::input::kernel_program(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_of_merged_omniperf_columns() {
        assert_eq!(role("wave_size_3"), Role::Ignored);
        assert_eq!(role("Correlation_ID_12"), Role::Ignored);
        assert_eq!(role("XCC_Index_5"), Role::Ignored);
        // rocprof-compute 3's merged passes repeat `Kernel_ID` in its own case.
        assert_eq!(role("Kernel_ID_12"), Role::Ignored);
        assert_eq!(role("SQC_DCACHE_REQ_READ_16"), Role::Counter);
        assert_eq!(role("TCC_HIT[3]"), Role::Channel);
        assert_eq!(role("Grid_Size"), Role::Launch);
        assert_eq!(role("Grid_Size_X"), Role::Dimension);
        assert_eq!(role("BeginNs"), Role::Start);
    }

    #[test]
    fn timestamps_are_read_exactly_whole_or_decimal() {
        assert_eq!(
            parse_fine_time("1986623975868304"),
            Some(1_986_623_975_868_304 * FINE_PER_NS)
        );
        // rocprof-compute 3.0's mean over its passes.
        assert_eq!(
            parse_fine_time("1248227792617386.5"),
            Some(1_248_227_792_617_386 * FINE_PER_NS + 500_000_000)
        );
        for bad in ["", "1.", ".5", "-1", "1e9", "1.0000000001", "12a", " 1"] {
            assert_eq!(parse_fine_time(bad), None, "{bad:?}");
        }
        let t = Timing::once(
            parse_fine_time("1248227792617386.5").unwrap(),
            parse_fine_time("1248227792635836.75").unwrap(),
        );
        assert_eq!(t.duration_ns(), 18_450);
        assert!((t.duration_secs() - 18_450.25e-9).abs() < 1e-21);
        // Whole nanoseconds give the value they always gave.
        let whole = Timing::once(100 * FINE_PER_NS, 24_420 * FINE_PER_NS);
        assert_eq!(whole.duration_secs(), 24_320.0 / 1e9);
        // Three passes: the mean of their durations.
        let mut three = Timing::once(0, 10 * FINE_PER_NS);
        three.add(Timing::once(100 * FINE_PER_NS, 112 * FINE_PER_NS));
        three.add(Timing::once(200 * FINE_PER_NS, 214 * FINE_PER_NS));
        assert_eq!(three.passes, 3);
        assert_eq!(three.duration_ns(), 12);
        assert_eq!(three.duration_secs(), 12.0 / 1e9);
    }

    #[test]
    fn programs_of_kernel_names() {
        assert_eq!(
            program_of("vecCopy(double*, double*, double*, int, int) [clone .kd]"),
            "vecCopy"
        );
        assert_eq!(
            program_of("vecCopy(double*, double*, double*, int, int) (.kd)"),
            "vecCopy"
        );
        assert_eq!(
            program_of("_Z15addition_kernelIfEvPT_PKfS3_ii.kd"),
            "_Z15addition_kernelIfEvPT_PKfS3_ii"
        );
        assert_eq!(
            program_of("void addition_kernel<float>(float*, float const*, int)"),
            "addition_kernel<float>"
        );
    }
}
