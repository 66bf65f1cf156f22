//! The ClearSpeed CSX600 steps (docs/methods.md, section 5): operation counts scaled to the chip,
//! compute time from op counts and throughputs, transfer time from bandwidth curves, and the
//! double-buffering balance.

mod double_buffer;
mod op_count;
mod scale_counts;
mod shared;
#[cfg(test)]
mod tests;
mod transfer;

pub(crate) use double_buffer::DOUBLE_BUFFER;
pub(crate) use op_count::OP_COUNT;
pub(crate) use scale_counts::SCALE_COUNTS;
pub(crate) use transfer::TRANSFER;
