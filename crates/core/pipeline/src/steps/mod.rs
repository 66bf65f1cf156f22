//! The step kinds of the normalize, fit and validate stages, and their registry.
//!
//! A step kind is one unit: a parameter struct (deserialized from its `[[stage]]` table, unknown
//! keys refused), checked completely when the file is parsed ([`StepParams::into_step`]), and a
//! [`Step`] that names its inputs and outputs and runs over a [`TableSet`](crate::TableSet).
//! Kinds are grouped by family, one module each; [`STEP_KINDS`] lists them. Adding a kind is
//! adding its unit to a family module (or a new one) and one line to [`STEP_KINDS`]: nothing
//! else in the engine names it.

mod compare;
mod counters;
mod csx600;
mod figures;
mod mpi;
mod scaling;
mod tables;
#[cfg(test)]
pub(crate) mod testing;
mod transfer;

mod registry;
mod step;

pub use registry::{STEP_KINDS, step_kind};
pub use step::{
    Added, DefinedModel, GroupedParams, KeyGroup, ModelDefinition, ParamError, ParamsError,
    PipelineStep, SavedModel, Stage, Standardization, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, TrainingTable, table_part,
};
