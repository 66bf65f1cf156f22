//! Timelines: in-kernel trace records, their clocks' alignment, and `spans` (every timeline).

use crate::{ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{RUN_ID, column, label};

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
