//! The columns several families' tables share, and how a column is defined.

use crate::{ColumnDef, ColumnType as T, ValueCheck as V, col};

/// Phases a measured or predicted time can cover.
pub const PHASES: &[&str] = &[
    "total",
    "compute",
    "transfer",
    "communication",
    "kernel",
    "api",
    // The time a GPU spent servicing unified-memory page faults (nvprof's `[Unified Memory GPU
    // page faults]`): neither a kernel's work nor a copy's.
    "page_fault",
];

/// Whether a number was measured or is an illustration standing in for a measurement.
pub const PROVENANCES: &[&str] = &["measured", "illustrative"];

pub(super) const fn column(
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

pub(super) const fn label(name: &'static str, doc: &'static str) -> ColumnDef {
    column(name, T::Utf8, false, None, V::Any, doc)
}

pub(super) const RUN_ID: ColumnDef = label(
    col::RUN_ID,
    "Identifies one measured run within its source; rows of different tables with the same `run_id` come from the same run.",
);

pub(super) const DEVICE: ColumnDef = label(
    col::DEVICE,
    "The processor the row is about (a GPU model, a CPU, a CSX600, an MPI node).",
);

pub(super) const PROGRAM: ColumnDef = label(col::PROGRAM, "The benchmark or kernel.");

pub(super) const VARIANT: ColumnDef = label(
    col::VARIANT,
    "The version of the program (input size, loop count, optimisation); empty when there is one.",
);

pub(super) const MODEL: ColumnDef = label(
    col::MODEL,
    "The model (pipeline step id) that made the row.",
);

pub(super) const PHASE: ColumnDef = column(
    col::PHASE,
    T::Utf8,
    false,
    None,
    V::OneOf(PHASES),
    "Which part of the run a time covers.",
);

pub(super) const REPETITIONS: ColumnDef = column(
    col::REPETITIONS,
    T::Int64,
    false,
    None,
    V::Positive,
    "How many executions of the profiled unit (a loop iteration, a kernel launch, the whole program) the time covers.",
);
