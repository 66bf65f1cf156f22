//! Scaling models of measured runs (docs/methods.md, section 7): each call path's time over the
//! numeric parameters of its runs, fitted in Extra-P's performance model normal form
//! (`yosoku_regression::pmnf`), optionally with its largest configuration held out of the fit
//! and predicted, the measured time beside.
//!
//! A call path is a (device, program, variant) and a phase; a run's time is its
//! `measured_secs` over its repetitions; runs of one call path at one configuration are
//! repetitions of one point. [`input`] reads runs into call paths, [`scaling_models`] fits them,
//! `tables` and `report` lay the models out, and [`extrap`] writes the same call paths as
//! Extra-P's experiments (`yosoku export --format extrap`).

pub mod extrap;
mod fitting;
pub mod input;
mod model;
mod report;
mod spec;
mod tables;

pub use fitting::{Scaling, scaling_models};
pub use input::{drop_restated, numeric_parameters};
pub use model::{CallPathModel, MODEL_KIND, PmnfScaling, ScalingAnswer, ScalingQuestion};
pub use spec::{ScalingSpec, Search};
