//! Result bundles: a directory with `manifest.json` and one Arrow IPC file per table.
//!
//! ```text
//! results/csx600-montecarlo/
//!   manifest.json                      what ran, on what, how long, with which figures
//!   tables/opcount.cost_breakdown.arrow
//!   tables/...
//! ```
//!
//! [`ManifestBuilder`] is the one way a manifest is made: every bundle, a pipeline run's, a
//! forecast's or an imported trace's, names its files, hashes its inputs and records its models
//! through it. [`manifest`], [`builder`] and [`ipc`] are pure (they work on bytes and compile to wasm32, for the viewer);
//! [`fs`] writes a bundle atomically: a failed or killed run leaves the previous bundle as it was.
//! docs/bundles.md describes the format.
//!
//! Every reader of Arrow IPC bytes from outside the process checks them first
//! ([`ipc::check_file`], [`ipc::check_stream`]: blocks and bodies within the bytes, alignment, whole
//! offsets, LZ4 frames within their bounds), since arrow-ipc trusts what it reads; the trace
//! pyramids and the `table` plugin use the same checks.

// The one module that reads and writes files; clippy refuses I/O everywhere else in the crate.
pub mod builder;
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
pub mod fs;
pub mod ipc;
pub mod manifest;

pub use builder::{ManifestBuilder, sha256_hex};
pub use manifest::{
    ColumnRecord, HashedFile, HashedTable, InputFile, Manifest, ManifestError, ModelRecord,
    PipelineRecord, PluginRecord, StageRecord, StepRecord, TableRecord, TraceRecord,
};

/// The name of the manifest file in a bundle.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The directory of the table files in a bundle.
pub const TABLES_DIR: &str = "tables";
/// The directory of the fitted models' files in a bundle (`<model name>.json`).
pub const MODELS_DIR: &str = "models";
/// The extension of table files.
pub const TABLE_EXTENSION: &str = "arrow";

/// The file name of a table in a bundle: `<name>.arrow` (names are `<namespace>.<table>`).
pub fn table_file_name(table: &str) -> String {
    format!("{table}.{TABLE_EXTENSION}")
}

/// Why a bundle could not be written or read. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: invalid Arrow IPC data: {source}")]
    Arrow {
        path: String,
        source: arrow_schema::ArrowError,
    },
    #[error("{path}: invalid manifest: {source}")]
    Manifest { path: String, source: ManifestError },
    #[error(
        "refusing to replace {path}: it exists and is not a yosoku bundle (it has no {MANIFEST_FILE})"
    )]
    NotABundle { path: String },
    /// A saved model cannot be used as saved: its bundle changed since it was fitted, or it was
    /// saved before models recorded what they were fitted on.
    #[error("{dir}: model `{model}`: {what}")]
    ModelChanged {
        dir: String,
        model: String,
        what: String,
    },
    /// Writing a new bundle failed (a full disk, a lost permission): what is at `dir` is as it
    /// was before, and the half-written copy is removed.
    #[error("{cause}; {dir} is as it was before")]
    Write {
        dir: String,
        cause: Box<BundleError>,
    },
}

impl BundleError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        BundleError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
