//! Nsight Compute `--csv` output: the details page (long form: one row per metric of a launch,
//! plus rule rows with empty metric fields) and the raw page (wide: one row per launch, hundreds
//! of metric columns, a units row under the header). `==PROF==` and other `==` lines are skipped;
//! an `==ERROR==` line is an error.

use std::collections::HashMap;
use std::path::Path;

use yosoku_plugin_sdk::PluginError;

use crate::builder::{RunKey, Tables};
use crate::input::{Header, csv_records, field, kernel_program};
use crate::units::{Prefixes, normalise_text, parse_number};

/// How to label the launches of a file.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// Device name for every row; default the name the file gives
    /// (`device__attribute_display_name`, e.g. `NVIDIA B200`), else `GPU <Device> (CC <CC>)`.
    pub device: Option<String>,
    /// Program for every row; default the kernel's name.
    pub program: Option<String>,
    /// Variant of each launch, in launch order; default empty.
    pub variants: Option<Vec<String>>,
}

/// The raw-page column and the details-page metric holding the kernel's duration.
const RAW_DURATION: &str = "gpu__time_duration.sum";
const DETAILS_DURATION: &str = "GPU Speed Of Light Throughput / Duration";

/// Identity columns that precede the metrics on both pages.
const IDENTITY: &[&str] = &[
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

/// Gives each launch (by its `ID`) a run, in order of first appearance.
struct Launches<'a> {
    path: &'a Path,
    labels: &'a Labels,
    runs: HashMap<String, u32>,
}

impl<'a> Launches<'a> {
    fn new(path: &'a Path, labels: &'a Labels) -> Self {
        Self {
            path,
            labels,
            runs: HashMap::new(),
        }
    }

    fn run(
        &mut self,
        tables: &mut Tables,
        line: usize,
        id: &str,
        kernel: &str,
        device: &str,
        cc: &str,
    ) -> Result<u32, PluginError> {
        if let Some(&run) = self.runs.get(id) {
            return Ok(run);
        }
        let ordinal = self.runs.len();
        let variant = match &self.labels.variants {
            None => String::new(),
            Some(v) => v.get(ordinal).cloned().ok_or_else(|| {
                PluginError::at_line(
                    self.path,
                    line,
                    format!(
                        "launch {} has no label: config key `variants` names {} launches",
                        ordinal + 1,
                        v.len()
                    ),
                )
            })?,
        };
        let run = tables.key(RunKey {
            run_id: id.to_owned(),
            device: self
                .labels
                .device
                .clone()
                .unwrap_or_else(|| format!("GPU {device} (CC {cc})")),
            program: self
                .labels
                .program
                .clone()
                .unwrap_or_else(|| kernel_program(kernel)),
            variant,
            kernel: Some(kernel.to_owned()),
        });
        self.runs.insert(id.to_owned(), run);
        Ok(run)
    }

    /// Names the device of `run` as the file does, unless the configuration names it.
    fn name_device(&self, tables: &mut Tables, run: u32, name: &str) {
        let name = name.trim();
        if self.labels.device.is_none() && !name.is_empty() {
            tables.set_device(run, name);
        }
    }

    /// Fails when `variants` names more launches than the file has.
    fn check_all_labelled(&self) -> Result<(), PluginError> {
        if let Some(v) = &self.labels.variants
            && v.len() != self.runs.len()
        {
            return Err(PluginError::new(format!(
                "{}: config key `variants` names {} launches, the file has {}",
                self.path.display(),
                v.len(),
                self.runs.len()
            )));
        }
        Ok(())
    }
}

/// The metric that holds the device's name (`NVIDIA B200`), in raw pages a column and in
/// details pages a row.
const DISPLAY_NAME: &str = "device__attribute_display_name";

/// Reads an `ncu --csv` file (details or raw page).
pub fn read(path: &Path, text: &str, labels: &Labels) -> Result<Tables, PluginError> {
    // Skip the profiler's own lines; they are not CSV.
    let mut csv_start = 0;
    let mut skipped_lines = 0;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("==") {
            if rest.starts_with("ERROR==") {
                return Err(PluginError::at_line(
                    path,
                    skipped_lines + 1,
                    format!("ncu reported an error: {line}"),
                ));
            }
            csv_start += line.len() + 1;
            skipped_lines += 1;
        } else {
            break;
        }
    }
    let body = &text[csv_start.min(text.len())..];
    let mut records =
        csv_records(path, body).map(|r| r.map(|(line, rec)| (line + skipped_lines, rec)));
    let Some(first) = records.next() else {
        return Err(PluginError::new(format!(
            "{}: no CSV header: not an `ncu --csv` file",
            path.display()
        )));
    };
    let (header_line, header) = first?;
    let header = Header::new(&header);
    if header.find("Metric Name").is_some() && header.find("Metric Value").is_some() {
        details(path, header_line, &header, records, labels)
    } else if header.find("ID").is_some() && header.find("Kernel Name").is_some() {
        raw(path, header_line, &header, records, labels)
    } else {
        Err(PluginError::at_line(
            path,
            header_line,
            "not an `ncu --csv` file: expected a header with `Metric Name` and `Metric Value` (details page) or `ID` and `Kernel Name` (raw page)",
        ))
    }
}

fn details(
    path: &Path,
    header_line: usize,
    header: &Header,
    records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
    labels: &Labels,
) -> Result<Tables, PluginError> {
    let format = "an `ncu --csv --page details` file";
    let id = header.require(path, header_line, "ID", format)?;
    let kernel = header.require(path, header_line, "Kernel Name", format)?;
    let section = header.require(path, header_line, "Section Name", format)?;
    let name = header.require(path, header_line, "Metric Name", format)?;
    let unit = header.require(path, header_line, "Metric Unit", format)?;
    let value = header.require(path, header_line, "Metric Value", format)?;
    let device = header.find("Device");
    let cc = header.find("CC");

    let mut tables = Tables::new("ncu", Prefixes::Decimal);
    let mut launches = Launches::new(path, labels);
    let mut durations: Vec<(u32, f64)> = Vec::new();
    let mut raw_name = String::new();
    for record in records {
        let (line, r) = record?;
        if r.len() == 1 && r.get(0).is_some_and(str::is_empty) {
            continue;
        }
        let metric = field(path, line, &r, name, header)?;
        if metric.is_empty() {
            // A rule row: advice, not a measurement.
            continue;
        }
        let text = field(path, line, &r, value, header)?;
        let is_name = metric == DISPLAY_NAME;
        if !is_name && parse_number(text).is_none() {
            // Enumerations and tuples (`PolicySpread`, `(16, 16, 1)`) are not numbers.
            continue;
        }
        let launch_id = field(path, line, &r, id, header)?;
        let kernel_name = field(path, line, &r, kernel, header)?;
        let device_id = device.and_then(|d| r.get(d)).unwrap_or("");
        let cc_text = cc.and_then(|c| r.get(c)).unwrap_or("");
        let run = launches.run(
            &mut tables,
            line,
            launch_id,
            kernel_name,
            device_id,
            cc_text,
        )?;
        if is_name {
            // The device's name, which may come after the launch's first values.
            launches.name_device(&mut tables, run, text);
            continue;
        }
        let section_name = field(path, line, &r, section, header)?;
        let unit_text = field(path, line, &r, unit, header)?;
        raw_name.clear();
        raw_name.push_str(section_name);
        raw_name.push_str(" / ");
        raw_name.push_str(metric);
        if raw_name == DETAILS_DURATION
            && let Some(seconds) = normalise_text(text, unit_text, Prefixes::Decimal)
        {
            durations.push((run, seconds.value));
        }
        let name = tables.name(&raw_name);
        tables.add_text(run, name, text, unit_text);
    }
    launches.check_all_labelled()?;
    for (run, seconds) in durations {
        tables.add_run(run, None, "kernel", seconds);
    }
    Ok(tables)
}

fn raw(
    path: &Path,
    header_line: usize,
    header: &Header,
    mut records: impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>>,
    labels: &Labels,
) -> Result<Tables, PluginError> {
    let format = "an `ncu --csv --page raw` file";
    let id = header.require(path, header_line, "ID", format)?;
    let kernel = header.require(path, header_line, "Kernel Name", format)?;
    let device = header.find("Device");
    let cc = header.find("CC");
    let display_name = header.find(DISPLAY_NAME);
    let Some((units_line, units)) = records.next().transpose()? else {
        return Err(PluginError::at_line(
            path,
            header_line,
            "the header is not followed by a units row",
        ));
    };
    if units.get(id).is_some_and(|v| !v.is_empty()) {
        return Err(PluginError::at_line(
            path,
            units_line,
            "expected the units row under the header (its `ID` field empty), found a launch",
        ));
    }
    let mut tables = Tables::new("ncu", Prefixes::Decimal);
    let metric_columns: Vec<(usize, u32)> = (0..header.names.len())
        .filter(|&i| !IDENTITY.contains(&header.names[i].as_str()))
        .map(|i| (i, tables.name(&header.names[i])))
        .collect();
    let duration = header.find(RAW_DURATION);

    let mut launches = Launches::new(path, labels);
    for record in records {
        let (line, r) = record?;
        header.check_width(path, line, &r)?;
        let launch_id = field(path, line, &r, id, header)?;
        let kernel_name = field(path, line, &r, kernel, header)?;
        let device_id = device.and_then(|d| r.get(d)).unwrap_or("");
        let cc_text = cc.and_then(|c| r.get(c)).unwrap_or("");
        let run = launches.run(
            &mut tables,
            line,
            launch_id,
            kernel_name,
            device_id,
            cc_text,
        )?;
        if let Some(name) = display_name.and_then(|d| r.get(d)) {
            launches.name_device(&mut tables, run, name);
        }
        for &(c, name) in &metric_columns {
            if let Some(text) = r.get(c) {
                tables.add_text(run, name, text, units.get(c).unwrap_or(""));
            }
        }
        if let Some(d) = duration {
            let text = field(path, line, &r, d, header)?;
            let seconds = normalise_text(text, units.get(d).unwrap_or(""), Prefixes::Decimal)
                .ok_or_else(|| {
                    PluginError::at_line(
                        path,
                        line,
                        format!("column `{RAW_DURATION}`: expected a number, found `{text}`"),
                    )
                })?;
            tables.add_run(run, None, "kernel", seconds.value);
        }
    }
    launches.check_all_labelled()?;
    Ok(tables)
}
