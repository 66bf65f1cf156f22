//! The tables sources produce: measured runs, their counters and the names they were mapped from,
//! counters pivoted to one row per run, the devices, kernel timings and launches.

use crate::{ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{DEVICE, PHASE, PROGRAM, REPETITIONS, RUN_ID, VARIANT, column, label};

/// What a counter measures; `time` and `rate` metrics are functions of the run time itself.
pub const METRIC_KINDS: &[&str] = &[
    "count", "config", "time", "rate", "ratio", "average", "clock", "level",
];

/// Where a counter value comes from: a counter tool (`measured`) or the kernel's arguments and
/// launch configuration (`computed`, on devices without counters).
pub const COUNTER_ORIGINS: &[&str] = &["measured", "computed"];

pub const WORK_UNITS: &[&str] = &["ops", "bytes"];

pub const RATE_UNITS: &[&str] = &["ops/s", "bytes/s"];

pub static RUNS: TableDef = TableDef {
    name: "runs",
    doc: "One measured execution time: what ran, where, and how long it took.",
    columns: &[
        RUN_ID,
        DEVICE,
        PROGRAM,
        VARIANT,
        column(
            col::PARAMETERS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Input parameters as `key=value` pairs separated by `;` (e.g. `n=2;N=10000000`).",
        ),
        PHASE,
        REPETITIONS,
        column(
            col::MEASURED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Measured wall time of all `repetitions` together.",
        ),
    ],
};

pub static COUNTERS: TableDef = TableDef {
    name: "counters",
    doc: "One performance-counter value of one run (long form: one row per counter).",
    columns: &[
        RUN_ID,
        DEVICE,
        PROGRAM,
        VARIANT,
        column(
            col::KERNEL,
            T::Utf8,
            true,
            None,
            V::Any,
            "The kernel the counter was read for, when the run had several.",
        ),
        label(
            col::METRIC,
            "Canonical metric name (tool-independent); unmapped names pass through unchanged.",
        ),
        label(col::RAW_NAME, "The name the tool wrote."),
        column(
            col::VALUE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The value, in `unit`.",
        ),
        label(
            col::UNIT,
            "Canonical unit of `value` (`count`, `bytes`, `s`, `bytes/s`, `ratio`, ...).",
        ),
        column(
            col::KIND,
            T::Utf8,
            true,
            None,
            V::OneOf(METRIC_KINDS),
            "What the metric measures: `count` (work: instructions, transactions, bytes), `config` (launch configuration), `time` (durations, cycles), `rate` (per second or per cycle), `ratio` (a fraction, 0-1: efficiencies, hit rates, occupancy), `average` (one count per another, unbounded: transactions per request, instructions per warp), `clock` (frequencies), `level` (a 0-10 utilisation level); null when the name is not in the canonical mapping.",
        ),
        column(
            col::ORIGIN,
            T::Utf8,
            false,
            None,
            V::OneOf(COUNTER_ORIGINS),
            "`measured`: read by a counter tool (hardware counters, profiler launch records); `computed`: derived from the kernel's arguments and launch configuration by the runner that launched it (bytes a kernel is written to move, work-items), on devices that have no counters.",
        ),
    ],
};

pub static METRIC_NAMES: TableDef = TableDef {
    name: "metric_names",
    doc: "How an importer named the metrics of one file: each raw name, the canonical name it maps to, or itself when unmapped.",
    columns: &[
        label(
            col::TOOL,
            "The tool whose naming the raw name follows (`ncu`, `nvprof`, `legacy`, `gpuperfpredict`).",
        ),
        label(col::RAW_NAME, "The name the tool wrote."),
        label(
            col::METRIC,
            "The canonical name (the raw name itself when unmapped).",
        ),
        column(
            col::KIND,
            T::Utf8,
            true,
            None,
            V::OneOf(METRIC_KINDS),
            "The canonical metric's kind, or the kind a naming rule gives an unmapped name; null when neither knows it.",
        ),
        label(col::UNIT, "Canonical unit of the values."),
        column(
            col::MAPPED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether an alias of the canonical mapping names the raw name.",
        ),
        column(
            col::OCCURRENCES,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "How many values of this metric the file held.",
        ),
        column(
            col::NULLS,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "How many cells of this metric the tool left without a value (empty, `n/a`, `N/A`): no value, not an error.",
        ),
    ],
};

pub static OBSERVATIONS: TableDef = TableDef {
    name: "observations",
    doc: "One observation for a model: a run's identity, its measured time, and its features as further Float64 columns (one per counter or derived quantity; the wide form of `counters` joined with `runs`).",
    columns: &[
        RUN_ID,
        DEVICE,
        PROGRAM,
        VARIANT,
        column(
            col::MEASURED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Measured time of the run (the model's target).",
        ),
    ],
};

pub static DEVICES: TableDef = TableDef {
    name: "devices",
    doc: "One device as its driver or profiler described it: what a time measured on it ran on. Joined to the other tables by `device`; properties a source does not give are null.",
    columns: &[
        DEVICE,
        column(
            col::VENDOR,
            T::Utf8,
            true,
            None,
            V::Any,
            "Vendor as the driver names it.",
        ),
        column(
            col::PLATFORM,
            T::Utf8,
            true,
            None,
            V::Any,
            "The software stack that ran the device (an OpenCL platform and its version, a ROCm release).",
        ),
        column(
            col::DRIVER_VERSION,
            T::Utf8,
            true,
            None,
            V::Any,
            "Driver version.",
        ),
        column(
            col::DEVICE_TYPE,
            T::Utf8,
            true,
            None,
            V::Any,
            "`GPU`, `CPU`, `accelerator`, ... as the driver reports it.",
        ),
        column(
            col::COMPUTE_UNITS,
            T::Int64,
            true,
            None,
            V::Positive,
            "Compute units (OpenCL), CUs (AMD) or SMs (NVIDIA); on a CPU, the cores or hardware threads the driver uses.",
        ),
        column(
            col::CLOCK_MHZ,
            T::Float64,
            true,
            Some("MHz"),
            V::Positive,
            "Maximum clock frequency the driver reports.",
        ),
        column(
            col::GLOBAL_MEMORY_BYTES,
            T::Int64,
            true,
            Some("bytes"),
            V::Positive,
            "Global (device) memory size.",
        ),
        column(
            col::LOCAL_MEMORY_BYTES,
            T::Int64,
            true,
            Some("bytes"),
            V::Positive,
            "Local (shared) memory available to one work-group.",
        ),
        column(
            col::L2_CACHE_BYTES,
            T::Int64,
            true,
            Some("bytes"),
            V::Positive,
            "Last-level cache of the device (OpenCL: the global memory cache).",
        ),
        column(
            col::MAX_WORK_GROUP_SIZE,
            T::Int64,
            true,
            None,
            V::Positive,
            "Largest work-group (thread block) the device accepts.",
        ),
        column(
            col::PREFERRED_VECTOR_WIDTHS,
            T::Utf8,
            true,
            None,
            V::Any,
            "The driver's preferred vector width per type, `type=width` separated by `;` (`char=16;float=16;double=8`).",
        ),
        column(
            col::MEMORY_BANDWIDTH_BYTES_PER_SEC,
            T::Float64,
            true,
            Some("bytes/s"),
            V::Positive,
            "Peak memory bandwidth as the source states it (not measured).",
        ),
        column(
            col::DESCRIPTION,
            T::Utf8,
            true,
            None,
            V::Any,
            "Further properties, `key=value` separated by `;`.",
        ),
    ],
};

pub static KERNEL_TIMINGS: TableDef = TableDef {
    name: "kernel_timings",
    doc: "The measured launches of one kernel configuration summarised: how long one launch takes, and how much that varies. One row per `runs` row of a runner that repeats launches.",
    columns: &[
        RUN_ID,
        DEVICE,
        PROGRAM,
        VARIANT,
        column(
            col::PARAMETERS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Input parameters as `key=value` pairs separated by `;`.",
        ),
        column(
            col::LAUNCHES,
            T::Int64,
            false,
            None,
            V::Positive,
            "Launches measured (warm-up launches excluded).",
        ),
        column(
            col::WARMUP_LAUNCHES,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Launches run before the measured ones and not counted.",
        ),
        column(
            col::MEDIAN_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Median device time of one launch (the `runs` time).",
        ),
        column(
            col::MIN_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Fastest launch.",
        ),
        column(
            col::MAX_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Slowest launch.",
        ),
        column(
            col::CV,
            T::Float64,
            false,
            Some("ratio"),
            V::NonNegative,
            "Coefficient of variation of the launch times: standard deviation / mean.",
        ),
        column(
            col::HOST_MEDIAN_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Median wall time of one launch seen from the host, from submission to completion (device time plus launch and completion overheads).",
        ),
        column(
            col::STABLE,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether the coefficient of variation reached the runner's threshold before its launch limit.",
        ),
        column(
            col::CHECK,
            T::Utf8,
            true,
            None,
            V::Any,
            "How the output was checked before any time was kept: `cpu reference`, `reference kernel <name>` (another kernel of a kernel file, on the same inputs), or `unchecked`.",
        ),
    ],
};

pub static KERNEL_LAUNCHES: TableDef = TableDef {
    name: "kernel_launches",
    doc: "One launch of a kernel configuration, warm-up launches included: the raw times behind `kernel_timings`.",
    columns: &[
        RUN_ID,
        DEVICE,
        PROGRAM,
        VARIANT,
        column(
            col::LAUNCH_INDEX,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Position of the launch in its configuration's sequence, from 0.",
        ),
        column(
            col::WARMUP,
            T::Boolean,
            false,
            None,
            V::Any,
            "A warm-up launch, not counted in the statistics.",
        ),
        column(
            col::DEVICE_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Device time: the profiling timestamps' end minus start.",
        ),
        column(
            col::HOST_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Host wall time from submitting the launch to seeing it complete.",
        ),
        column(
            col::SUBMIT_TO_START_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Any,
            "Device timestamps' start minus submit: the launch latency the device saw.",
        ),
    ],
};
