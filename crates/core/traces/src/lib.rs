//! Timelines as one table, `spans` (docs/tables.md): every timeline yosoku has — MPI blocks
//! measured and predicted, in-kernel timestamp traces, Chrome/Perfetto traces, profiler kernel
//! traces — is events on lanes.
//!
//! - [`spans`]: the builder of `spans` batches and the nesting depth of intervals.
//! - [`kernel_trace`]: the binary format of in-kernel traces (docs/kernel-trace.md): header,
//!   records, writer, and the conversion to `trace_records`, `trace_alignment` and spans.
//! - [`chrome`]: Chrome trace event JSON, read event by event (no document tree), written from
//!   any `spans` table, and checked against the format's rules.
//! - [`mpi`]: `mpi_blocks` and `mpi_block_predictions` as spans.
//!
//! Pure: bytes, readers and batches in, batches and bytes out (ARCHITECTURE.md, invariant 1).
//!
//! The kernel-trace reader works in chunks and pairs spans as it streams, and aligns each SM's
//! clock; [`pyramid`] keeps large traces as a level-of-detail pyramid (tiles of binned occupancy per
//! level, chunks of records) and says which pieces a view of a time span needs, so a viewer reads
//! only those.

pub mod chrome;
pub mod kernel_trace;
pub mod mpi;
pub mod pyramid;
pub mod spans;

/// Why a trace could not be read or converted. Every variant says where.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The bytes are not a valid trace; `at` is a byte offset, a record or a line and column.
    #[error("{at}: {message}")]
    Format { at: String, message: String },
    #[error(transparent)]
    Table(#[from] yosoku_tables::TableMismatch),
    #[error("{0}")]
    Access(#[from] yosoku_tables::access::AccessError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl TraceError {
    pub fn format(at: impl Into<String>, message: impl Into<String>) -> Self {
        TraceError::Format {
            at: at.into(),
            message: message.into(),
        }
    }
}
