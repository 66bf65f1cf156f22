//! The compare family: predictions validated against measurements (`compare_measured`) and
//! results against published figures (`compare_reference`).

mod measured;
mod reference;
#[cfg(test)]
mod tests;

pub(crate) use measured::COMPARE_MEASURED;
pub(crate) use reference::COMPARE_REFERENCE;
