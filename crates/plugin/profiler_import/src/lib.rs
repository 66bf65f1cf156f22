//! What every profiler importer shares (the `cuda_profiler` and `rocm_profiler` plugins, and the
//! computed work counters of the `opencl` runner):
//!
//! - [`metrics`]: the canonical, vendor-neutral metric names (`metrics.toml`): which name each
//!   tool writes for a quantity, the quantity's canonical name and kind, so that one pipeline
//!   takes NVIDIA, AMD and computed counters alike;
//! - [`units`]: units normalised to a canonical set (bytes, seconds, counts), exactly;
//! - [`input`]: profiler files as text (gzip or not) and CSV records with their line numbers;
//! - [`quoted`]: the fast path for CSV lines whose every field is quoted (as ncu writes them);
//! - [`builder`]: the `runs`, `counters` and `metric_names` tables of one imported file;
//! - [`devices`]: the `devices` table (what a driver or profiler says about a device);
//! - [`sqlite`]: profilers' SQLite files, opened from the bytes read, tables and columns checked
//!   by name;
//! - [`timings`]: launch times summarised (median, extremes, spread).
//!
//! Large texts are checked as UTF-8 once and cut into quote-safe pieces of whole records
//! (`input::record_pieces`), read on all cores and merged in file order (`input::read_pieces`); lines
//! whose every field is quoted or empty are split by following their quotes, with SIMD where the
//! CPU has it, and any other line is left to a general CSV reader.

pub mod builder;
pub mod devices;
pub mod input;
pub mod metrics;
pub mod quoted;
pub mod sqlite;
pub mod timings;
pub mod units;
