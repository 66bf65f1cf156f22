//! Counter models: least squares and stepwise selection of run time on counters, one model per
//! group, and their out-of-sample validation (docs/methods.md, sections 1 and 4).

mod cross_validate;
mod fit;
mod normalize;
mod ols;
mod overhead;
mod published;
mod stepwise;
#[cfg(test)]
mod tests;
mod throughput;

pub(crate) use cross_validate::CROSS_VALIDATE;
pub(crate) use normalize::{
    AGGREGATE, CROSS_DEVICE, DERIVE, MERGE_COUNTERS, PIVOT_COUNTERS, ZSCORE,
};
pub(crate) use ols::OLS;
pub(crate) use overhead::OVERHEAD;
pub(crate) use published::PublishedSpec;
pub(crate) use stepwise::STEPWISE;
pub(crate) use throughput::THROUGHPUT;
