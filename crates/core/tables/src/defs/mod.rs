//! The definitions of the canonical tables, one module per model family (`compare`,
//! `counters`, `csx600`, `mpi`, `scaling`, `transfer`, as in `yosoku-models` and the pipeline's
//! steps) and two that no model owns: `measurements` (what sources produce) and `traces`
//! (timelines). `columns` holds the columns several families share.

mod columns;
mod compare;
mod counters;
mod csx600;
mod measurements;
mod mpi;
mod scaling;
mod traces;
mod transfer;

pub use columns::{PHASES, PROVENANCES};
pub use compare::*;
pub use counters::*;
pub use csx600::*;
pub use measurements::*;
pub use mpi::*;
pub use scaling::*;
pub use traces::*;
pub use transfer::*;
