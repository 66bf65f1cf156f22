//! Declarative pipelines: the pipeline file (TOML) and its normalize, fit and validate steps.
//!
//! A pipeline names its sources (plugin, collector, config) and lists typed steps; see
//! docs/pipelines.md. This crate parses the file, checking every key, type, parameter and table
//! reference with file, line and column, and runs steps over a [`TableSet`] of Arrow record
//! batches. Step kinds are registered in [`steps::STEP_KINDS`], one unit each. It does no I/O and
//! reads no clock: `yosoku-runner` collects the sources through the plugin host, times the steps
//! and writes the bundle.
//!
//! Its modules depend one way: `table_set` <- `steps` <- `spec` <- `run`. A new step kind is one
//! unit in `steps/<family>.rs` and one line in `STEP_KINDS` (with its row in docs/pipelines.md, which
//! a test compares with the registry).

pub mod run;
pub mod scoreboard;
pub mod spec;
pub mod steps;
pub mod table_set;

pub use run::{StepFailure, run_step};
pub use spec::{Located, Location, PipelineSpec, SourceSpec, SpecError};
pub use steps::{
    Added, PipelineStep, STEP_KINDS, SavedModel, Stage, Step, StepError, StepKind, StepOutput,
    TrainingTable,
};
pub use table_set::{DefinedModel, DuplicateTable, ModelDefinition, TableSet};
