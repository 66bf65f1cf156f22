//! The CSX600 family: operation throughputs and counts, transfer counts, bandwidth curves,
//! the cost breakdown and the double-buffering balance.

use crate::{ColumnDef, ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{DEVICE, MODEL, PROGRAM, PROVENANCES, VARIANT, column, label};
use super::measurements::{RATE_UNITS, WORK_UNITS};

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

pub(super) const EXEC_UNIT: ColumnDef = column(
    col::EXEC_UNIT,
    T::Utf8,
    false,
    None,
    V::OneOf(EXEC_UNITS),
    "`mono` (control unit) or `poly` (the PE array).",
);

pub(super) const VECTOR: ColumnDef = column(
    col::VECTOR,
    T::Boolean,
    false,
    None,
    V::Any,
    "Whether the operation uses the 4-wide vector unit.",
);

pub(super) const DTYPE: ColumnDef = column(
    col::DTYPE,
    T::Utf8,
    false,
    None,
    V::OneOf(DTYPES),
    "Operand type; for a cast, the source type.",
);

pub(super) const OP: ColumnDef = column(
    col::OP,
    T::Utf8,
    false,
    None,
    V::OneOf(OPS),
    "The operation.",
);

pub(super) const DTYPE_TO: ColumnDef = column(
    col::DTYPE_TO,
    T::Utf8,
    true,
    None,
    V::OneOf(DTYPES),
    "Target type of a cast; null for every other operation.",
);

pub(super) const TRANSFER_PATH: ColumnDef = column(
    col::PATH,
    T::Utf8,
    false,
    None,
    V::OneOf(TRANSFER_PATHS),
    "Data path: `mono_to_poly`, `poly_to_mono` or `swazzle` (PE to neighbouring PE).",
);

pub(super) const SIZE_BYTES: ColumnDef = column(
    col::SIZE_BYTES,
    T::Int64,
    false,
    Some("bytes"),
    V::Positive,
    "Size of one transfer.",
);

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
