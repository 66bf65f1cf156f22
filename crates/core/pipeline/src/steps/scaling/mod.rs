//! The scaling family (docs/methods.md, section 7): `scaling_fit`, each call path's time over
//! the numeric parameters of a `runs` table in Extra-P's performance model normal form, fitted
//! on every configuration and saved as the family's model (`PmnfScaling`); `scaling_model`, that
//! model validated with each call path's largest configuration held out and predicted.

mod fit;
mod holdout;
mod shared;
#[cfg(test)]
mod tests;

pub(crate) use fit::SCALING_FIT;
pub(crate) use holdout::SCALING_MODEL;
pub(crate) use shared::{PmnfKeys, SCALING_TABLES, meaning_cells};
