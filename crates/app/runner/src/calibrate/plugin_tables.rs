//! The tables a calibration plugin returns, read: the devices it measured and the timings of its
//! configurations.

use anyhow::{Result, anyhow};
use arrow_array::{Array, RecordBatch};
use yosoku_tables::access::{Text, float64, int64, opt_f64, utf8};
use yosoku_tables::col;

use super::device_file::Selected;

/// The table `name` of what plugin `plugin` returned.
pub fn table<'a>(
    tables: &'a [(String, RecordBatch)],
    name: &str,
    plugin: &str,
) -> Result<&'a RecordBatch> {
    tables
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| b)
        .ok_or_else(|| anyhow!("the {plugin} plugin returned no `{name}` table"))
}

/// Each device of a `devices` table as the calibration needs it.
pub fn selected(
    devices: &RecordBatch,
    driver_source: (&'static str, &'static str),
) -> Result<Vec<Selected>> {
    let names = utf8(devices, col::DEVICE)?;
    let types = utf8(devices, col::DEVICE_TYPE)?;
    let vendors = utf8(devices, col::VENDOR)?;
    let platforms = utf8(devices, col::PLATFORM)?;
    let units = int64(devices, col::COMPUTE_UNITS)?;
    let clocks = float64(devices, col::CLOCK_MHZ)?;
    let text = |a: &Text<'_>, i: usize| a.get(i).unwrap_or_default().to_owned();
    (0..devices.num_rows())
        .map(|i| {
            let compute_units = (!units.is_null(i))
                .then(|| units.value(i))
                .filter(|u| *u > 0)
                .ok_or_else(|| anyhow!("the driver gives `{}` no compute units", names.value(i)))?;
            Ok(Selected {
                name: names.value(i).to_owned(),
                gpu: text(&types, i).eq_ignore_ascii_case("gpu"),
                compute_units: compute_units as u64,
                clock_mhz: opt_f64(clocks, i).filter(|c| *c > 0.0),
                vendor: text(&vendors, i),
                description: text(&platforms, i),
                driver_source,
            })
        })
        .collect()
}

/// One configuration's summary from `kernel_timings`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingRow {
    pub program: String,
    pub variant: String,
    /// `key=value;...`
    pub parameters: String,
    pub median_secs: f64,
    pub min_secs: f64,
    pub max_secs: f64,
    pub cv: f64,
    pub launches: i64,
    pub host_median_secs: f64,
}

impl TimingRow {
    /// The integer parameter `key`, if the row has it.
    pub fn parameter(&self, key: &str) -> Option<u64> {
        self.parameters
            .split(';')
            .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
    }
}

/// Every row of the `kernel_timings` table of what `plugin` returned.
pub fn timing_rows(tables: &[(String, RecordBatch)], plugin: &str) -> Result<Vec<TimingRow>> {
    let t = table(tables, yosoku_tables::KERNEL_TIMINGS.name, plugin)?;
    let program = utf8(t, col::PROGRAM)?;
    let variant = utf8(t, col::VARIANT)?;
    let parameters = utf8(t, col::PARAMETERS)?;
    let launches = int64(t, col::LAUNCHES)?;
    let [median, min, max, cv, host] = [
        col::MEDIAN_SECS,
        col::MIN_SECS,
        col::MAX_SECS,
        col::CV,
        col::HOST_MEDIAN_SECS,
    ]
    .map(|c| float64(t, c));
    let (median, min, max, cv, host) = (median?, min?, max?, cv?, host?);
    let text = |a: &Text<'_>, i: usize| a.get(i).unwrap_or_default().to_owned();
    Ok((0..t.num_rows())
        .map(|i| TimingRow {
            program: program.value(i).to_owned(),
            variant: text(&variant, i),
            parameters: text(&parameters, i),
            median_secs: median.value(i),
            min_secs: min.value(i),
            max_secs: max.value(i),
            cv: cv.value(i),
            launches: launches.value(i),
            host_median_secs: opt_f64(host, i).unwrap_or(f64::NAN),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_is_found_by_its_whole_key() {
        let row = TimingRow {
            program: "p".into(),
            variant: "v".into(),
            parameters: "bytes_per=3;bytes=4096;blocks=2".into(),
            median_secs: 1.0,
            min_secs: 1.0,
            max_secs: 1.0,
            cv: 0.0,
            launches: 1,
            host_median_secs: 1.0,
        };
        assert_eq!(row.parameter("bytes"), Some(4096));
        assert_eq!(row.parameter("blocks"), Some(2));
        assert_eq!(row.parameter("flops"), None);
    }
}
