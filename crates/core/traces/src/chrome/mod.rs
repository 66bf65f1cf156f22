//! Chrome trace event JSON (the format of chrome://tracing, Perfetto's UI and PyTorch's Kineto):
//! [`import`] reads it event by event into spans, [`export`] writes any `spans` table as it, and
//! [`check`] checks a file against the format's rules.
//!
//! Timestamps in the format are microseconds (numbers, often with decimals); spans hold whole
//! nanoseconds, read off each number's decimal text.

pub mod check;
pub mod export;
pub mod import;

pub use check::{CheckSummary, check};
pub use export::{ExportSummary, export};
pub use import::{ChromeImport, import_reader, import_slice};
