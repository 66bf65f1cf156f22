//! The normalize steps of counter models: long counters to `observations`, merged alternative
//! counters, standardised features, derived ratios, means over repeats, and one device's
//! features beside another's time (docs/methods.md, sections 1 and 4).

mod aggregate;
mod cross_device;
mod derive;
mod merge_counters;
mod pivot_counters;
mod shared;
#[cfg(test)]
mod tests;
mod zscore;

pub(crate) use aggregate::AGGREGATE;
pub(crate) use cross_device::CROSS_DEVICE;
pub(crate) use derive::DERIVE;
pub(crate) use merge_counters::MERGE_COUNTERS;
pub(crate) use pivot_counters::PIVOT_COUNTERS;
pub(crate) use zscore::ZSCORE;
