//! Chrome trace event JSON (the format of chrome://tracing, Perfetto's UI and PyTorch's Kineto):
//! [`import`] reads it event by event into spans, [`export`] writes any `spans` table as it, and
//! [`check`] checks a file against the format's rules.
//!
//! Timestamps in the format are microseconds (floats); spans hold nanoseconds.

pub mod check;
pub mod export;
pub mod import;

pub use check::{CheckSummary, check};
pub use export::{ExportSummary, export};
pub use import::{ChromeImport, import_reader, import_slice};

/// µs (the format's unit, a float) to ns. The whole microseconds are converted exactly (a Unix
/// time in µs times 1000 is past f64's 53 bits), the fraction rounded to the ns.
pub(crate) fn us_to_ns(us: f64) -> i64 {
    let whole = us.trunc();
    let frac_ns = ((us - whole) * 1000.0).round() as i64;
    (whole as i64).saturating_mul(1000).saturating_add(frac_ns)
}

#[cfg(test)]
mod tests {
    #[test]
    fn microseconds_since_the_epoch_convert_exactly() {
        assert_eq!(
            super::us_to_ns(1_621_401_187_223_005.0),
            1_621_401_187_223_005_000
        );
        assert_eq!(super::us_to_ns(1.5), 1_500);
        assert_eq!(super::us_to_ns(-2.25), -2_250);
        assert_eq!(super::us_to_ns(0.0004), 0);
    }
}
