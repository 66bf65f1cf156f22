//! The gpuperfpredict dataset (Amaris et al.): nvprof metrics and events, launch configuration
//! and the measured `duration` (seconds) of one kernel on one GPU, one row per launch, exported
//! from R: the first column an unnamed row index, column names with `.` for punctuation, `NA` for
//! a missing value. Read directly from the `.csv.gz` files.

use std::path::Path;

use yosoku_plugin_sdk::PluginError;

use crate::builder::{RunKey, Tables};
use crate::input::{Header, csv_records, field};
use crate::units::{Prefixes, parse_number};

/// Columns that identify a launch rather than measure it.
const IDENTITY: &[&str] = &[
    "",
    "input.size.1",
    "input.size.2",
    "duration",
    "device",
    "name",
    "kernel",
    "gpu_name",
];

/// Adds one file of the dataset to `tables`.
pub fn read_into(path: &Path, text: &str, tables: &mut Tables) -> Result<(), PluginError> {
    let mut records = csv_records(path, text);
    let Some(first) = records.next() else {
        return Err(PluginError::new(format!("{}: empty file", path.display())));
    };
    let (header_line, header) = first?;
    let header = Header::new(&header);
    let format = "a gpuperfpredict dataset file";
    let index = header.require(path, header_line, "", format)?;
    let size1 = header.require(path, header_line, "input.size.1", format)?;
    let size2 = header.find("input.size.2");
    let duration = header.require(path, header_line, "duration", format)?;
    let name = header.require(path, header_line, "name", format)?;
    let gpu = header.require(path, header_line, "gpu_name", format)?;
    let counters: Vec<usize> = (0..header.names.len())
        .filter(|&i| !IDENTITY.contains(&header.names[i].as_str()))
        .collect();
    let stem = path
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .trim_end_matches(".gz")
                .trim_end_matches(".csv")
                .to_owned()
        })
        .unwrap_or_default();
    let number =
        |line: usize, r: &csv::StringRecord, column: usize| -> Result<Option<f64>, PluginError> {
            let text = field(path, line, r, column, &header)?;
            if text == "NA" || text.is_empty() {
                return Ok(None);
            }
            parse_number(text).map(Some).ok_or_else(|| {
                PluginError::at_line(
                    path,
                    line,
                    format!(
                        "column `{}`: expected a number or NA, found `{text}`",
                        header.names[column]
                    ),
                )
            })
        };
    for record in records {
        let (line, r) = record?;
        if r.len() != header.names.len() {
            return Err(PluginError::at_line(
                path,
                line,
                format!(
                    "expected {} fields as in the header, found {}",
                    header.names.len(),
                    r.len()
                ),
            ));
        }
        let s1 = field(path, line, &r, size1, &header)?;
        let s2 = size2
            .map(|c| field(path, line, &r, c, &header))
            .transpose()?
            .unwrap_or("0");
        let variant = if s2 == "0" {
            s1.to_owned()
        } else {
            format!("{s1}x{s2}")
        };
        let key = RunKey {
            run_id: format!("{stem}:{}", field(path, line, &r, index, &header)?),
            device: field(path, line, &r, gpu, &header)?.to_owned(),
            program: field(path, line, &r, name, &header)?.to_owned(),
            variant,
            kernel: None,
        };
        let seconds = number(line, &r, duration)?
            .filter(|s| *s > 0.0)
            .ok_or_else(|| {
                PluginError::at_line(path, line, "column `duration`: expected a time > 0")
            })?;
        let parameters = format!("input.size.1={s1};input.size.2={s2}");
        tables.add_run(&key, Some(&parameters), "kernel", seconds);
        for &c in &counters {
            if let Some(v) = number(line, &r, c)? {
                tables.add_counter(&key, &header.names[c], v, "");
            }
        }
    }
    Ok(())
}

/// The tool naming and prefixes of the dataset (nvprof's, binary).
pub fn tables() -> Tables {
    Tables::new("gpuperfpredict", Prefixes::Binary)
}
