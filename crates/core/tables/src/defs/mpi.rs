//! The MPI family: each rank's blocks, each rank's totals, and the blocks predicted.

use crate::{ColumnDef, ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{DEVICE, MODEL, RUN_ID, column, label};

/// Kinds of MPI block.
pub const MPI_BLOCK_KINDS: &[&str] = &["compute", "communication"];

/// How a rank's main-loop iterations were found.
pub const MPI_ITERATIONS_BY: &[&str] = &["markers", "repeating_unit", "steps", "none"];

/// Where a block of a reduced MPI run sits: before the main loop, in every iteration, every
/// k-th iteration, after the loop.
pub const MPI_BLOCK_ROLES: &[&str] = &["setup", "loop", "periodic", "teardown"];

pub(super) const RANK: ColumnDef = column(
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
