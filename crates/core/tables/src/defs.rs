//! The definitions of the canonical tables.

use crate::col;
use crate::{ColumnDef, ColumnType as T, TableDef, ValueCheck as V};

/// Phases a measured or predicted time can cover.
pub const PHASES: &[&str] = &["total", "compute", "transfer", "communication", "kernel"];
/// Kinds of MPI block.
pub const MPI_BLOCK_KINDS: &[&str] = &["compute", "communication"];
/// How a rank's main-loop iterations were found.
pub const MPI_ITERATIONS_BY: &[&str] = &["markers", "repeating_unit", "steps", "none"];
/// Where a block of a reduced MPI run sits: before the main loop, in every iteration, every
/// k-th iteration, after the loop.
pub const MPI_BLOCK_ROLES: &[&str] = &["setup", "loop", "periodic", "teardown"];
/// CSX600 execution units: the control unit (`mono`) and the 96-PE array (`poly`).
pub const EXEC_UNITS: &[&str] = &["mono", "poly"];
/// Operand types of CSX600 operations.
pub const DTYPES: &[&str] = &["int", "float", "double"];
/// CSX600 operations (Tables 1 and 2 of Nishikawa et al.).
pub const OPS: &[&str] = &["add", "mul", "mac", "div", "cast", "build", "split"];
/// What a `csx600_op_counts.count` counts.
pub const COUNT_BASES: &[&str] = &["issued", "operations"];
/// CSX600 data paths.
pub const TRANSFER_PATHS: &[&str] = &["mono_to_poly", "poly_to_mono", "swazzle"];
/// What a counter measures; `time` and `rate` metrics are functions of the run time itself.
pub const METRIC_KINDS: &[&str] = &["count", "config", "time", "rate", "ratio", "clock", "level"];
/// Whether a number was measured or is an illustration standing in for a measurement.
pub const PROVENANCES: &[&str] = &["measured", "illustrative"];
/// Where a counter value comes from: a counter tool (`measured`) or the kernel's arguments and
/// launch configuration (`computed`, on devices without counters).
pub const COUNTER_ORIGINS: &[&str] = &["measured", "computed"];
pub const WORK_UNITS: &[&str] = &["ops", "bytes"];
pub const RATE_UNITS: &[&str] = &["ops/s", "bytes/s"];

const fn column(
    name: &'static str,
    ty: T,
    nullable: bool,
    unit: Option<&'static str>,
    check: V,
    doc: &'static str,
) -> ColumnDef {
    ColumnDef {
        name,
        ty,
        nullable,
        unit,
        check,
        doc,
    }
}

const fn label(name: &'static str, doc: &'static str) -> ColumnDef {
    column(name, T::Utf8, false, None, V::Any, doc)
}

const RUN_ID: ColumnDef = label(
    col::RUN_ID,
    "Identifies one measured run within its source; rows of different tables with the same `run_id` come from the same run.",
);
const DEVICE: ColumnDef = label(
    col::DEVICE,
    "The processor the row is about (a GPU model, a CPU, a CSX600, an MPI node).",
);
const PROGRAM: ColumnDef = label(col::PROGRAM, "The benchmark or kernel.");
const VARIANT: ColumnDef = label(
    col::VARIANT,
    "The version of the program (input size, loop count, optimisation); empty when there is one.",
);
const MODEL: ColumnDef = label(
    col::MODEL,
    "The model (pipeline step id) that made the row.",
);
const PHASE: ColumnDef = column(
    col::PHASE,
    T::Utf8,
    false,
    None,
    V::OneOf(PHASES),
    "Which part of the run a time covers.",
);
const REPETITIONS: ColumnDef = column(
    col::REPETITIONS,
    T::Int64,
    false,
    None,
    V::Positive,
    "How many executions of the profiled unit (a loop iteration, a kernel launch, the whole program) the time covers.",
);
const EXEC_UNIT: ColumnDef = column(
    col::EXEC_UNIT,
    T::Utf8,
    false,
    None,
    V::OneOf(EXEC_UNITS),
    "`mono` (control unit) or `poly` (the PE array).",
);
const VECTOR: ColumnDef = column(
    col::VECTOR,
    T::Boolean,
    false,
    None,
    V::Any,
    "Whether the operation uses the 4-wide vector unit.",
);
const DTYPE: ColumnDef = column(
    col::DTYPE,
    T::Utf8,
    false,
    None,
    V::OneOf(DTYPES),
    "Operand type; for a cast, the source type.",
);
const OP: ColumnDef = column(
    col::OP,
    T::Utf8,
    false,
    None,
    V::OneOf(OPS),
    "The operation.",
);
const DTYPE_TO: ColumnDef = column(
    col::DTYPE_TO,
    T::Utf8,
    true,
    None,
    V::OneOf(DTYPES),
    "Target type of a cast; null for every other operation.",
);
const TRANSFER_PATH: ColumnDef = column(
    col::PATH,
    T::Utf8,
    false,
    None,
    V::OneOf(TRANSFER_PATHS),
    "Data path: `mono_to_poly`, `poly_to_mono` or `swazzle` (PE to neighbouring PE).",
);
const SIZE_BYTES: ColumnDef = column(
    col::SIZE_BYTES,
    T::Int64,
    false,
    Some("bytes"),
    V::Positive,
    "Size of one transfer.",
);

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
            "What the metric measures: `count` (work: instructions, transactions, bytes), `config` (launch configuration), `time` (durations, cycles), `rate` (per second or per cycle), `ratio` (efficiencies, utilisations, occupancy), `clock` (frequencies), `level` (a 0-10 utilisation level); null when the name is not in the canonical mapping.",
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

/// Timers a kernel trace can be recorded with (docs/kernel-trace.md).
pub const TRACE_TIMERS: &[&str] = &["clock64", "globaltimer"];
/// How the clocks of a trace's SMs were put on one time base.
pub const ALIGNMENT_METHODS: &[&str] = &["first_record", "global_timer"];
/// Whether a timeline was measured or predicted.
pub const TIMELINES: &[&str] = &["measured", "predicted"];
/// What a row of `spans` is: an interval, a point in time, a sample of a counter track, or one
/// end of a flow arrow between events.
pub const SPAN_EVENTS: &[&str] = &[
    "span",
    "instant",
    "counter",
    "flow_start",
    "flow_step",
    "flow_end",
];

pub static TRACE_RECORDS: TableDef = TableDef {
    name: "trace_records",
    doc: "One in-kernel timestamp: a thread reaching an instrumentation point, with the SM that ran it (docs/kernel-trace.md).",
    columns: &[
        RUN_ID,
        column(
            col::BLOCK_ID,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Linear thread-block index.",
        ),
        column(
            col::THREAD_ID,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Linear thread index within the block.",
        ),
        column(
            col::SM_ID,
            T::Int32,
            false,
            None,
            V::NonNegative,
            "Multiprocessor that ran the thread.",
        ),
        column(
            col::POINT_ID,
            T::Int32,
            false,
            None,
            V::NonNegative,
            "Instrumentation point.",
        ),
        column(
            col::TIMESTAMP_TICKS,
            T::Int64,
            false,
            Some("ticks"),
            V::Any,
            "The timer's value as recorded: SM cycles (`clock64`) or nanoseconds (`%globaltimer`).",
        ),
        column(
            col::TIME_NS,
            T::Int64,
            false,
            Some("ns"),
            V::Any,
            "The same instant on the trace's common time base, from its earliest record: cycles converted with the recorded clock rate and the SM's offset removed (`trace_alignment`).",
        ),
        column(
            col::FLAG,
            T::Utf8,
            true,
            None,
            V::OneOf(&["backwards"]),
            "`backwards` when the timestamp is earlier than the thread's previous record (a timer that wrapped or a thread that moved); null otherwise.",
        ),
    ],
};

pub static TRACE_ALIGNMENT: TableDef = TableDef {
    name: "trace_alignment",
    doc: "How one SM's records of a kernel trace were put on the trace's common time base.",
    columns: &[
        RUN_ID,
        column(
            col::SM_ID,
            T::Int32,
            false,
            None,
            V::NonNegative,
            "Multiprocessor.",
        ),
        column(
            col::RECORDS,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Records of this SM.",
        ),
        column(
            col::OFFSET_TICKS,
            T::Int64,
            false,
            Some("ticks"),
            V::Any,
            "Subtracted from this SM's timestamps before conversion to ns.",
        ),
        column(
            col::FIRST_NS,
            T::Int64,
            false,
            Some("ns"),
            V::Any,
            "This SM's first record on the common time base.",
        ),
        column(
            col::LAST_NS,
            T::Int64,
            false,
            Some("ns"),
            V::Any,
            "This SM's last record on the common time base.",
        ),
        column(
            col::METHOD,
            T::Utf8,
            false,
            None,
            V::OneOf(ALIGNMENT_METHODS),
            "`first_record`: per-SM cycle counters are independent, so each SM's first record is taken as the kernel's start (SMs receive their first blocks together); `global_timer`: one clock for all SMs, offset = the trace's earliest record.",
        ),
    ],
};

pub static SPANS: TableDef = TableDef {
    name: "spans",
    doc: "One event of a timeline on a lane: an interval (a kernel, an MPI block, the time between two trace points), an instant, a counter sample or one end of a flow arrow. Every timeline maps to it: MPI blocks measured and predicted, kernel traces, Chrome/Perfetto traces, profiler kernel traces.",
    columns: &[
        RUN_ID,
        column(
            col::TIMELINE,
            T::Utf8,
            false,
            None,
            V::OneOf(TIMELINES),
            "`measured`, or `predicted` by a model.",
        ),
        label(
            col::LANE,
            "The row the event is drawn on (`rank 3`, `SM 12`, `pid 1 / tid 7`).",
        ),
        label(
            col::LANE_KIND,
            "What a lane is: `rank`, `sm`, `block`, `thread`, `stream`, `process`, `counter`.",
        ),
        label(
            col::NAME,
            "The event's name (a block, a kernel, a point pair).",
        ),
        label(
            col::CATEGORY,
            "The event's kind, used for colour (`compute`, `communication`, `kernel`, `memcpy`).",
        ),
        column(
            col::EVENT,
            T::Utf8,
            false,
            None,
            V::OneOf(SPAN_EVENTS),
            "`span`, `instant`, `counter`, `flow_start`, `flow_step` or `flow_end`.",
        ),
        column(
            col::START_NS,
            T::Int64,
            false,
            Some("ns"),
            V::Any,
            "Start, on the timeline's own time base.",
        ),
        column(
            col::DURATION_NS,
            T::Int64,
            false,
            Some("ns"),
            V::NonNegative,
            "Length; 0 for instants, counter samples and flow ends.",
        ),
        column(
            col::DEPTH,
            T::Int32,
            false,
            None,
            V::NonNegative,
            "Nesting level within the lane: 0 for outermost events.",
        ),
        column(
            col::SOURCE_ROW,
            T::Int64,
            true,
            None,
            V::NonNegative,
            "The row (or record, or event) of the source the span was made from.",
        ),
        column(
            col::VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "A counter sample's value; null for other events.",
        ),
        column(
            col::FLOW_ID,
            T::Int64,
            true,
            None,
            V::Any,
            "The flow (arrow between events) this row is an end of; null for other events.",
        ),
        column(
            col::ARGS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Other fields of the source event, as a JSON object.",
        ),
        column(
            col::FLAG,
            T::Utf8,
            true,
            None,
            V::Any,
            "What is wrong with the event, when something is: `unmatched_begin`, `unmatched_end`, `negative_duration`, `backwards`, `unknown_phase`.",
        ),
    ],
};

const RANK: ColumnDef = column(
    col::RANK,
    T::Int32,
    false,
    None,
    V::NonNegative,
    "MPI rank (processing unit).",
);

pub static MPI_BLOCKS: TableDef = TableDef {
    name: "mpi_blocks",
    doc: "One execution of a compute or communication block by one MPI rank; from profiles that keep totals only (TAU), all executions of the block together, with no iteration and no start.",
    columns: &[
        RUN_ID,
        DEVICE,
        RANK,
        label(
            col::BLOCK,
            "Block identifier, stable across ranks and runs.",
        ),
        column(
            col::KIND,
            T::Utf8,
            false,
            None,
            V::OneOf(MPI_BLOCK_KINDS),
            "`compute` or `communication`.",
        ),
        label(
            col::CALL_SITE,
            "Where the block is in the program (the MPI call, or the calls bounding a compute block).",
        ),
        column(
            col::ITERATION,
            T::Int64,
            true,
            None,
            V::NonNegative,
            "Main-loop iteration; null outside the loop.",
        ),
        column(
            col::START_SECS,
            T::Float64,
            true,
            Some("s"),
            V::NonNegative,
            "Start, from the rank's first record.",
        ),
        column(
            col::DURATION_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Duration of this execution of the block.",
        ),
    ],
};

/// How an MPI timer log ended.
pub const MPI_LOG_ENDS: &[&str] = &["complete", "abort", "exit"];

pub static MPI_RANKS: TableDef = TableDef {
    name: "mpi_ranks",
    doc: "One rank of one MPI run as the MPI timer recorded it: where and how it ran and its wall time.",
    columns: &[
        RUN_ID,
        DEVICE,
        RANK,
        column(
            col::RANKS,
            T::Int32,
            false,
            None,
            V::Positive,
            "Ranks in the run (the size of MPI_COMM_WORLD).",
        ),
        label(col::COMMAND, "The command line the rank ran."),
        column(
            col::BINDING,
            T::Utf8,
            true,
            None,
            V::Any,
            "The CPU binding the run was launched with; null when the logs were imported without it.",
        ),
        column(
            col::PARAMETERS,
            T::Utf8,
            true,
            None,
            V::Any,
            "The run's input parameters as `key=value` pairs separated by `;` (`YOSOKU_MPI_PARAMETERS`, or the collector's `parameters`); null when none were given.",
        ),
        column(
            col::WALL_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "From the end of MPI_Init to the start of MPI_Finalize on this rank.",
        ),
        column(
            col::MPI_CALLS,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "MPI calls recorded.",
        ),
        column(
            col::LOG_END,
            T::Utf8,
            false,
            None,
            V::OneOf(MPI_LOG_ENDS),
            "`complete` (MPI_Finalize), `abort` (MPI_Abort) or `exit` (the process ended without finalizing).",
        ),
        column(
            col::ITERATIONS,
            T::Int64,
            true,
            None,
            V::NonNegative,
            "Main-loop iterations found on this rank; null when none were (or the source has no loop, as TAU profiles).",
        ),
        column(
            col::SUB_ITERATIONS,
            T::Int32,
            true,
            None,
            V::Positive,
            "Executions of `iteration_start` per iteration (2 when the call that starts the program's repeating unit runs twice in it); null unless found from the repeating unit.",
        ),
        column(
            col::ITERATIONS_BY,
            T::Utf8,
            true,
            None,
            V::OneOf(MPI_ITERATIONS_BY),
            "How: `markers` (yosoku_mpi_iteration), `repeating_unit` (the shortest repeating sequence of call sites), `steps` (the unit that repeats once per step the user gave), `none`; null for sources without blocks.",
        ),
        column(
            col::ITERATION_START,
            T::Utf8,
            true,
            None,
            V::Any,
            "The block that starts each iteration (a call and its call site); null with markers or without a loop.",
        ),
    ],
};

pub static CSX600_OP_THROUGHPUTS: TableDef = TableDef {
    name: "csx600_op_throughputs",
    doc: "Microbenchmarked throughput of one CSX600 operation (Nishikawa et al., Tables 1 and 2).",
    columns: &[
        DEVICE,
        EXEC_UNIT,
        VECTOR,
        DTYPE,
        OP,
        DTYPE_TO,
        column(
            col::THROUGHPUT_OPS_PER_SEC,
            T::Float64,
            false,
            Some("ops/s"),
            V::Positive,
            "Operations per second of the whole unit (all 96 PEs for poly; 4 per vector instruction).",
        ),
        column(
            col::EXECUTIONS,
            T::Int64,
            true,
            None,
            V::Positive,
            "How many executions the benchmark timed.",
        ),
    ],
};

pub static CSX600_OP_COUNTS: TableDef = TableDef {
    name: "csx600_op_counts",
    doc: "How many times a program executes one kind of CSX600 operation (Nishikawa et al., Table 3).",
    columns: &[
        PROGRAM,
        VARIANT,
        EXEC_UNIT,
        VECTOR,
        DTYPE,
        OP,
        DTYPE_TO,
        column(
            col::COUNT,
            T::Float64,
            false,
            None,
            V::NonNegative,
            "The count, on the basis `count_basis` says.",
        ),
        column(
            col::COUNT_BASIS,
            T::Utf8,
            false,
            None,
            V::OneOf(COUNT_BASES),
            "`issued`: instructions issued (per PE for poly code, as the source reads); `operations`: arithmetic operations of the whole chip (issued x 96 PEs for poly x 4 for vector).",
        ),
    ],
};

pub static CSX600_TRANSFER_COUNTS: TableDef = TableDef {
    name: "csx600_transfer_counts",
    doc: "Transfers of one size on one data path per execution of the profiled unit (Nishikawa et al., Table 5).",
    columns: &[
        PROGRAM,
        VARIANT,
        TRANSFER_PATH,
        column(
            col::TRANSFER_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Number of transfers.",
        ),
        SIZE_BYTES,
    ],
};

pub static BANDWIDTH_CURVES: TableDef = TableDef {
    name: "bandwidth_curves",
    doc: "One point of a bandwidth curve b(d): the bandwidth of a data path for transfers of size d.",
    columns: &[
        DEVICE,
        TRANSFER_PATH,
        SIZE_BYTES,
        column(
            col::BANDWIDTH_BYTES_PER_SEC,
            T::Float64,
            false,
            Some("bytes/s"),
            V::Positive,
            "Bandwidth at this transfer size.",
        ),
        column(
            col::SAMPLES,
            T::Int64,
            true,
            None,
            V::Positive,
            "Transfers averaged for this point.",
        ),
        column(
            col::PROVENANCE,
            T::Utf8,
            false,
            None,
            V::OneOf(PROVENANCES),
            "`measured`, or `illustrative` for a stand-in curve that was not measured.",
        ),
    ],
};

pub static COST_BREAKDOWN: TableDef = TableDef {
    name: "cost_breakdown",
    doc: "One component of a prediction: work divided by the rate it runs at (Nishikawa et al., Tables 4 and 5).",
    columns: &[
        MODEL,
        PROGRAM,
        VARIANT,
        label(
            col::COMPONENT,
            "What the row costs: an operation (`poly vector double mul`) or a transfer (`mono_to_poly 640 B`).",
        ),
        column(
            col::WORK,
            T::Float64,
            false,
            None,
            V::NonNegative,
            "Amount of work, in `work_unit`.",
        ),
        column(
            col::WORK_UNIT,
            T::Utf8,
            false,
            None,
            V::OneOf(WORK_UNITS),
            "`ops` or `bytes`.",
        ),
        column(
            col::RATE,
            T::Float64,
            false,
            None,
            V::Positive,
            "Rate the work runs at, in `rate_unit`.",
        ),
        column(
            col::RATE_UNIT,
            T::Utf8,
            false,
            None,
            V::OneOf(RATE_UNITS),
            "`ops/s` or `bytes/s`.",
        ),
        column(
            col::PREDICTED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Predicted time of this component per execution of the profiled unit.",
        ),
        column(
            col::FLAGS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Warnings about the row, `;`-separated (e.g. `extrapolated`).",
        ),
    ],
};

pub static PREDICTIONS: TableDef = TableDef {
    name: "predictions",
    doc: "A model's predicted time for one run, with the measured time and the error when known.",
    columns: &[
        MODEL,
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        REPETITIONS,
        column(
            col::PREDICTED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NotNan,
            "Predicted time of all `repetitions` together (negative values are kept and flagged `negative`; a log-time model whose prediction overflows gives +inf, flagged `overflow`).",
        ),
        column(
            col::MEASURED_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Positive,
            "Measured time of the same repetitions, when a measurement exists.",
        ),
        column(
            col::ERROR_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NotNan,
            "Signed relative error 100 x (predicted - measured) / measured.",
        ),
        column(
            col::FLAGS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Warnings about the prediction, `;`-separated (`negative`, `extrapolated`, `tiny_counters`, ...).",
        ),
        column(
            col::RUN_ID,
            T::Utf8,
            true,
            None,
            V::Any,
            "The run predicted, when the prediction is of one run (counter models).",
        ),
        MODEL_GROUP_OPT,
        column(
            col::VALIDATION,
            T::Utf8,
            true,
            None,
            V::Any,
            "How the prediction was made: `fit` (in sample), `loo` (leave one out), `kfold(k)`, `leave_one_out(<column>)`; null for models without fitted parameters.",
        ),
        column(
            col::HELD_OUT,
            T::Utf8,
            true,
            None,
            V::Any,
            "The fold or group that was held out when the row was predicted.",
        ),
        column(
            col::INTERVAL_LOW_SECS,
            T::Float64,
            true,
            Some("s"),
            V::NotNan,
            "Lower end of the 95 % prediction interval.",
        ),
        column(
            col::INTERVAL_HIGH_SECS,
            T::Float64,
            true,
            Some("s"),
            V::NotNan,
            "Upper end of the 95 % prediction interval.",
        ),
    ],
};

pub static TRANSFER_SCORES: TableDef = TableDef {
    name: "transfer_scores",
    doc: "How well each method predicted held-out GPUs and kernels (docs/methods.md, section 6): per validation scheme and method, the rows held out, how many were predicted, the absolute errors and the coverage of the 95 % intervals.",
    columns: &[
        label(
            col::VALIDATION,
            "The scheme: `leave_one_gpu_out`, `leave_one_gpu_out_other_architectures`, `leave_one_kernel_out`, `leave_one_kernel_and_gpu_out`.",
        ),
        MODEL,
        column(
            col::LEARNED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether the method is a learned model (true) or a baseline.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Held-out rows (launches on GPUs).",
        ),
        column(
            col::PREDICTED_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Rows the method gave a time for.",
        ),
        column(
            col::MEAN_ABS_ERROR_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Mean of 100 |predicted - measured| / measured over the predicted rows.",
        ),
        column(
            col::MEDIAN_ABS_ERROR_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Median of the same.",
        ),
        column(
            col::WITHIN_25_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Share of the predicted rows within 25 % of the measurement.",
        ),
        column(
            col::INTERVAL_COVERAGE_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Share of the predicted rows whose measurement lies inside the 95 % interval.",
        ),
        column(
            col::NOT_PREDICTED,
            T::Utf8,
            true,
            None,
            V::Any,
            "Rows without a prediction, by reason (`no_source: 12; negative: 3`).",
        ),
    ],
};

pub static MPI_BLOCK_PREDICTIONS: TableDef = TableDef {
    name: "mpi_block_predictions",
    doc: "One block of one rank in a simplified-execution prediction (Chida et al.): its mean time per execution in the reduced run, after warm-up, times its executions in the full run.",
    columns: &[
        MODEL,
        label(col::RUN_ID, "The reduced run the block was measured in."),
        RANK,
        label(col::BLOCK, "Block identifier, as in `mpi_blocks`."),
        column(
            col::KIND,
            T::Utf8,
            false,
            None,
            V::OneOf(MPI_BLOCK_KINDS),
            "`compute` or `communication`.",
        ),
        column(
            col::IN_LOOP,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether the block is in the main loop (it scales with the iteration count) or runs once.",
        ),
        column(
            col::BLOCK_ROLE,
            T::Utf8,
            false,
            None,
            V::OneOf(MPI_BLOCK_ROLES),
            "`setup` (before the main loop, runs once), `loop` (in the iterations, scaled with their count), `periodic` (every `period_iterations` iterations: a rebuild, an output step; its count in the full run follows its period and phase) or `teardown` (after the loop, runs once).",
        ),
        column(
            col::PERIOD_ITERATIONS,
            T::Int64,
            true,
            None,
            V::Positive,
            "Iterations between two executions of a periodic block; null for the others.",
        ),
        column(
            col::WARMUP_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Time in the excluded warm-up iterations (taken as measured), or the measured time of a block outside the loop.",
        ),
        column(
            col::STEADY_EXECUTIONS,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Executions after warm-up that the mean is taken over (0 outside the loop).",
        ),
        column(
            col::MEAN_SECS,
            T::Float64,
            true,
            Some("s"),
            V::NonNegative,
            "Mean time per execution after warm-up; null outside the loop.",
        ),
        column(
            col::FULL_EXECUTIONS,
            T::Float64,
            false,
            None,
            V::NonNegative,
            "Executions in the full run.",
        ),
        column(
            col::PREDICTED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Predicted time of the block over the full run.",
        ),
    ],
};

const MODEL_GROUP_OPT: ColumnDef = column(
    col::MODEL_GROUP,
    T::Utf8,
    true,
    None,
    V::Any,
    "The group the model was fitted to when a step fits one model per group (`group_by`), as `column=value` pairs joined by `, `; null for a single model.",
);

const MODEL_GROUP: ColumnDef = label(
    col::MODEL_GROUP,
    "The group the model was fitted to (`column=value` pairs joined by `, `); empty for a single model.",
);

const R2: ColumnDef = column(
    col::R2,
    T::Float64,
    true,
    None,
    V::Any,
    "Coefficient of determination 1 - SSE/SST (of the target as modelled); null when undefined.",
);

const ADJUSTED_R2: ColumnDef = column(
    col::ADJUSTED_R2,
    T::Float64,
    true,
    None,
    V::Any,
    "R^2 adjusted for the degrees of freedom: 1 - (1 - R^2)(n - 1)/(n - k - 1); null when n <= k + 1.",
);

pub static THROUGHPUTS: TableDef = TableDef {
    name: "throughputs",
    doc: "Candidates (vector widths, variants, devices) of one group side by side: work per second at the largest work every candidate was measured at, the peak over all sizes, and which is fastest.",
    columns: &[
        label(
            col::GROUP,
            "The group compared within, `column=value` pairs (`device=..., program=copy`).",
        ),
        label(
            col::CANDIDATE,
            "The candidate: a value of the compared column (`float4`, a device).",
        ),
        column(
            col::SIZES,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows (sizes, repeats) measured of the candidate.",
        ),
        column(
            col::WORK,
            T::Float64,
            false,
            None,
            V::Positive,
            "The work the candidates are compared at: the largest every candidate of the group was measured at, in `work_unit`.",
        ),
        label(col::WORK_UNIT, "Unit of `work` (`bytes`, `count`)."),
        column(
            col::RATE,
            T::Float64,
            false,
            None,
            V::Positive,
            "Work per second at `work` (mean over repeats), in `rate_unit`.",
        ),
        column(
            col::PEAK_RATE,
            T::Float64,
            false,
            None,
            V::Positive,
            "Highest work per second over all sizes, in `rate_unit` (often a cache-resident size).",
        ),
        label(col::RATE_UNIT, "Unit of the rates (`bytes/s`)."),
        column(
            col::RELATIVE_TO_BEST,
            T::Float64,
            false,
            Some("ratio"),
            V::Positive,
            "`rate` over the best candidate's `rate`.",
        ),
        column(
            col::BEST,
            T::Boolean,
            false,
            None,
            V::Any,
            "The fastest candidate of its group at `work`.",
        ),
    ],
};

pub static OVERHEADS: TableDef = TableDef {
    name: "overheads",
    doc: "Each variant of a program beside its baseline (an instrumented kernel beside the original): the medians of a value (the run time, an instruction count), their ratio, the overhead R = 100 (ratio - 1) in percent and, when the runs were repeated in pairs, the mean of the paired overheads with its 95 % confidence interval.",
    columns: &[
        label(
            col::GROUP,
            "The group compared within, `column=value` pairs (`device=..., program=matmul`).",
        ),
        VARIANT,
        label(
            col::BASELINE_VARIANT,
            "The variant every other is compared with (`original`).",
        ),
        label(
            col::VALUE_COLUMN,
            "What is compared: `measured_secs` or a feature column (`inst_executed`).",
        ),
        label(col::UNIT, "Unit of the medians (`s`, `count`)."),
        column(
            col::BASELINE_RUNS,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows of the baseline variant in the group.",
        ),
        column(
            col::VARIANT_RUNS,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows of this variant in the group.",
        ),
        column(
            col::BASELINE_MEDIAN,
            T::Float64,
            false,
            None,
            V::Positive,
            "Median of the baseline's values, in `unit`.",
        ),
        column(
            col::VARIANT_MEDIAN,
            T::Float64,
            false,
            None,
            V::NonNegative,
            "Median of this variant's values, in `unit`.",
        ),
        column(
            col::RATIO,
            T::Float64,
            false,
            Some("ratio"),
            V::NonNegative,
            "`variant_median` over `baseline_median`.",
        ),
        column(
            col::OVERHEAD_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Finite,
            "100 (ratio - 1): the overhead R of docs/methods.md, section 2 (negative: less than the baseline).",
        ),
        column(
            col::PAIRED_MEAN_PCT,
            T::Float64,
            true,
            Some("%"),
            V::Finite,
            "Mean over the k-th rows of the variant and the baseline of 100 (v_k / b_k - 1) (runs repeated in rounds, each round running every variant); null unless both have the same number of rows, at least 2.",
        ),
        column(
            col::CI_LOW_PCT,
            T::Float64,
            true,
            Some("%"),
            V::Finite,
            "Lower end of the 95 % confidence interval of `paired_mean_pct` (Student's t).",
        ),
        column(
            col::CI_HIGH_PCT,
            T::Float64,
            true,
            Some("%"),
            V::Finite,
            "Upper end of that interval.",
        ),
        column(
            col::LOWEST,
            T::Boolean,
            false,
            None,
            V::Any,
            "The variant of lowest `overhead_pct` in its group, among those eligible (the step's `lowest_among`).",
        ),
    ],
};

pub static MODEL_COEFFICIENTS: TableDef = TableDef {
    name: "model_coefficients",
    doc: "One term of a fitted linear model: its estimate on the scale of its column as the model used it (after `log_features`), with standard error and test, or why it was dropped.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        label(
            col::TERM,
            "`(intercept)`, a feature name, a spline basis column `x:s1`, or an interaction `a*b` (product of z-scores).",
        ),
        column(
            col::ESTIMATE,
            T::Float64,
            true,
            None,
            V::Finite,
            "The coefficient; null when the column was dropped.",
        ),
        column(
            col::STANDARDISED_ESTIMATE,
            T::Float64,
            true,
            None,
            V::Any,
            "estimate x sd(column) / sd(target), both on the scale the model used them (beta weight): the change of the target in its standard deviations per standard deviation of the column; comparable across terms. Null for the intercept, a dropped column, or a constant target.",
        ),
        column(
            col::STD_ERROR,
            T::Float64,
            true,
            None,
            V::Any,
            "Standard error of the estimate; null when dropped or without residual degrees of freedom.",
        ),
        column(
            col::T_VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "estimate / std_error.",
        ),
        column(
            col::P_VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "Two-sided p-value of the t test that the coefficient is zero.",
        ),
        column(
            col::STATUS,
            T::Utf8,
            false,
            None,
            V::OneOf(COEFFICIENT_STATUSES),
            "`kept`, `constant` (zero variance in this group, dropped) or `collinear` (a combination of the columns before it, dropped).",
        ),
    ],
};

/// What happened to a model column.
pub const COEFFICIENT_STATUSES: &[&str] = &["kept", "constant", "collinear"];

pub static MODEL_SUMMARY: TableDef = TableDef {
    name: "model_summary",
    doc: "One fitted linear model: how it was fitted, its fit statistics and its diagnostics.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        label(
            col::METHOD,
            "`ols`, `ridge(lambda)`, `stepwise_forward` or `stepwise_backward`, and the factorisation (`qr`, `cholesky`).",
        ),
        label(
            col::TARGET,
            "What was regressed: `measured_secs` or `ln(measured_secs)`.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows fitted.",
        ),
        column(
            col::TERM_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Columns in the model besides the intercept (after dropping).",
        ),
        R2,
        ADJUSTED_R2,
        column(
            col::RMSE_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Root mean square error of the fitted times, in seconds (back-transformed when the target is a logarithm): sqrt(SSE / n), divided by the rows, not by the residual degrees of freedom.",
        ),
        column(
            col::RESIDUAL_STD_ERROR,
            T::Float64,
            true,
            None,
            V::NonNegative,
            "Residual standard error on the modelled scale (seconds, or ln seconds for a log target): sqrt(RSS / (n - terms - 1)), divided by the residual degrees of freedom, as statsmodels' sqrt(scale) and R's sigma; null with none left.",
        ),
        column(
            col::CONDITION_NUMBER,
            T::Float64,
            true,
            None,
            V::Any,
            "Condition number of the centred, unit-norm design of the kept columns (collinearity: above ~1e3 estimates are unstable); null for stepwise models.",
        ),
        label(
            col::DROPPED,
            "Columns dropped as constant or collinear, comma-separated.",
        ),
        column(
            col::FLAGS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Warnings: `r2_below_0.8` (the cross-platform papers' bar for a usable model), `ill_conditioned`, `rank_deficient`.",
        ),
    ],
};

pub static SCALING_MODELS: TableDef = TableDef {
    name: "scaling_models",
    doc: "One performance-model-normal-form model per call path (device, program, variant) and phase over its numeric parameters, found by Extra-P's hypothesis search (docs/methods.md, section 7).",
    columns: &[
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        label(
            col::PARAMETERS,
            "The parameters the model is over, comma-separated, as in the runs' `parameters`.",
        ),
        label(
            col::FORMULA,
            "The model as Extra-P writes it: `c0 + c1 * n^(3/2) * log2(n)^(1) + ...`, times in seconds.",
        ),
        column(
            col::TERM_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Terms besides the constant.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::Positive,
            "Measurement points fitted (repetitions of a point reduced to their mean or median).",
        ),
        column(
            col::RSS,
            T::Float64,
            false,
            Some("s^2"),
            V::NonNegative,
            "Residual sum of squares: of the leave-one-out predictions for one parameter, in-sample for several (as the model was selected).",
        ),
        column(
            col::SMAPE_PCT,
            T::Float64,
            false,
            Some("%"),
            V::NonNegative,
            "Symmetric mean absolute percentage error, measured as `rss` is.",
        ),
        ADJUSTED_R2,
        column(
            col::CROSS_VALIDATED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether `rss` and `smape_pct` are leave-one-out.",
        ),
        column(
            col::HELD_OUT,
            T::Utf8,
            true,
            None,
            V::Any,
            "The configuration left out of the fit and predicted (`n=8388608`); null when every point was fitted.",
        ),
    ],
};

pub static SCALING_POINTS: TableDef = TableDef {
    name: "scaling_points",
    doc: "One measured configuration of a call path a scaling model was fitted to or predicted: its repetitions' mean and spread, placed on the model's first parameter (the axis) and the values of the others (the series).",
    columns: &[
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        label(
            col::CONFIGURATION,
            "Every parameter's value: `n=97;ranks=4`.",
        ),
        column(
            col::AXIS_VALUE,
            T::Float64,
            false,
            None,
            V::Any,
            "The value of the model's first parameter, the plot's horizontal axis.",
        ),
        label(
            col::SERIES,
            "The other parameters' values (`ranks=4`): one curve each; empty for a model of one parameter.",
        ),
        REPETITIONS,
        column(
            col::MEASURED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Mean time of one repetition.",
        ),
        column(
            col::MIN_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Fastest repetition.",
        ),
        column(
            col::MAX_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Slowest repetition.",
        ),
        column(
            col::FITTED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether the model was fitted to this configuration (false: held out and predicted).",
        ),
    ],
};

pub static SCALING_CURVES: TableDef = TableDef {
    name: "scaling_curves",
    doc: "A scaling model evaluated along its first parameter, from the smallest measured value to 1.5 times the largest, for each series of the other parameters' measured values, with its prediction interval.",
    columns: &[
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        label(
            col::SERIES,
            "The other parameters' values (`ranks=4`); empty for a model of one parameter.",
        ),
        column(
            col::AXIS_VALUE,
            T::Float64,
            false,
            None,
            V::Any,
            "The value of the model's first parameter.",
        ),
        column(
            col::PREDICTED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Any,
            "The model's time there (may be negative where a model with a negative constant is extrapolated down).",
        ),
        column(
            col::INTERVAL_LOW_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Any,
            "Lower end of the prediction interval; null where the fit has no residual degrees of freedom.",
        ),
        column(
            col::INTERVAL_HIGH_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Any,
            "Upper end of the prediction interval.",
        ),
        column(
            col::EXTRAPOLATED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether this value lies beyond the largest one the model was fitted to in this series.",
        ),
    ],
};

pub static SELECTION_PATH: TableDef = TableDef {
    name: "selection_path",
    doc: "One step of a stepwise selection: the term added or removed and the model's fit after it.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        column(
            col::STEP,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "0 for the starting model, then 1, 2, ...",
        ),
        column(
            col::ACTION,
            T::Utf8,
            false,
            None,
            V::OneOf(SELECTION_ACTIONS),
            "`start`, `add` or `remove`.",
        ),
        label(
            col::TERM,
            "The term: a counter (entering with its spline columns) or an interaction `a*b`; empty at the start.",
        ),
        column(
            col::R2,
            T::Float64,
            false,
            None,
            V::Finite,
            "R^2 of the model after the step.",
        ),
        ADJUSTED_R2,
        column(
            col::COLUMN_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Columns in the model after the step (a spline term has several).",
        ),
    ],
};

/// Stepwise actions.
pub const SELECTION_ACTIONS: &[&str] = &["start", "add", "remove"];

pub static VALIDATION_SUMMARY: TableDef = TableDef {
    name: "validation_summary",
    doc: "How well a model predicted out of sample, over all its rows and per program.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        label(
            col::VALIDATION,
            "`fit`, `loo`, `kfold(k)` or `leave_one_out(<column>)`.",
        ),
        column(
            col::PROGRAM,
            T::Utf8,
            true,
            None,
            V::Any,
            "The program the row summarises; null for all rows of the model.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Predictions summarised.",
        ),
        column(
            col::MEAN_ABS_ERROR_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Any,
            "Mean of 100 |predicted - measured| / measured (the papers' error rate).",
        ),
        column(
            col::MEDIAN_ABS_ERROR_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Any,
            "Median of the same.",
        ),
        column(
            col::MAX_ABS_ERROR_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Any,
            "Largest of the same.",
        ),
        column(
            col::MEAN_RATIO,
            T::Float64,
            false,
            None,
            V::Any,
            "Mean of predicted / measured (the per-program bars of Shimada et al.).",
        ),
        R2,
        ADJUSTED_R2,
        column(
            col::RMSE_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Any,
            "Root mean square error of the predicted times.",
        ),
        column(
            col::NEGATIVE_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Predictions below zero.",
        ),
        column(
            col::EXTRAPOLATED_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Predictions for rows with a feature outside the range the model was fitted on.",
        ),
        column(
            col::TINY_COUNTER_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Rows whose counters are far smaller than the rest (median ratio to the column medians below the step's threshold).",
        ),
    ],
};

pub static REPORT: TableDef = TableDef {
    name: "report",
    doc: "Cells of the tables a step prints: each cell a number or a text, at a row and column of a titled table (the CLI prints them as matrices, the viewer as tables).",
    columns: &[
        label(col::TITLE, "The table the cell belongs to."),
        label(col::ROW_LABEL, "Its row."),
        label(col::COLUMN_LABEL, "Its column."),
        column(
            col::VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "The number; null for a text cell or a missing figure.",
        ),
        column(
            col::TEXT,
            T::Utf8,
            true,
            None,
            V::Any,
            "The text of a text cell.",
        ),
        label(col::UNIT, "Unit of the number (`%`, `s`, empty)."),
    ],
};

pub static REFERENCE_VALUES: TableDef = TableDef {
    name: "reference_values",
    doc: "A figure printed in a publication, with the canonical table, column and row it is comparable with.",
    columns: &[
        PROGRAM,
        VARIANT,
        label(
            col::TABLE_NAME,
            "The canonical table whose rows the figure compares with (`cost_breakdown`, `predictions`, ...).",
        ),
        label(
            col::COLUMN_NAME,
            "The column of that table holding the comparable figure (`predicted_secs`, `work`, `error_pct`, ...).",
        ),
        label(
            col::LABEL,
            "The row: its `component` in `cost_breakdown`, its `phase` in `predictions`.",
        ),
        column(
            col::VALUE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The figure as printed.",
        ),
        label(col::UNIT, "Unit of `value`."),
        label(col::SOURCE, "Where it is printed (publication, table)."),
    ],
};

pub static REFERENCE_COMPARISON: TableDef = TableDef {
    name: "reference_comparison",
    doc: "A computed figure beside the published figure it reproduces.",
    columns: &[
        MODEL,
        PROGRAM,
        VARIANT,
        label(col::COLUMN_NAME, "The column compared."),
        label(col::LABEL, "The row compared."),
        column(
            col::COMPUTED,
            T::Float64,
            true,
            None,
            V::Finite,
            "The figure yosoku computed; null when no computed row has this label.",
        ),
        column(
            col::REFERENCE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The published figure.",
        ),
        column(
            col::DIFFERENCE,
            T::Float64,
            true,
            None,
            V::Finite,
            "computed - reference.",
        ),
        label(col::UNIT, "Unit of the three figures."),
        label(col::SOURCE, "Where the reference is printed."),
    ],
};

pub static DOUBLE_BUFFER_BALANCE: TableDef = TableDef {
    name: "double_buffer_balance",
    doc: "Double-buffering match point (Nishikawa et al., eqs. 3-4): how many operations of each kind fit into the time one buffer half takes to transfer.",
    columns: &[
        MODEL,
        PROGRAM,
        VARIANT,
        label(
            col::COMPONENT,
            "The operation (label as in `cost_breakdown`).",
        ),
        column(
            col::MIX_RATIO,
            T::Float64,
            false,
            None,
            V::NonNegative,
            "Share a_i / sum(a_j) of this operation in the program's operation mix.",
        ),
        column(
            col::THROUGHPUT_OPS_PER_SEC,
            T::Float64,
            false,
            Some("ops/s"),
            V::Positive,
            "Throughput P_i of the operation.",
        ),
        column(
            col::WINDOW_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "T_trans: time to transfer half the heap, S / (2 sum b(d_i)).",
        ),
        column(
            col::OPS_PER_WINDOW,
            T::Float64,
            false,
            Some("ops"),
            V::NonNegative,
            "Operations of this kind that must run per window to hide the transfer: (a_i P_i / sum a_j) x T_trans. Fewer and compute waits for data.",
        ),
    ],
};
