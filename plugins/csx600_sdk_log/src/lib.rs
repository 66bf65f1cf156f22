//! `csx600_sdk_log`: imports ClearSpeed CSX600 SDK benchmark results and program profiles written
//! in the `csx600-sdk-log` text format (README.md), for the op-count and bandwidth-curve models
//! of Nishikawa et al. (docs/methods.md, section 5).

pub mod log;
mod sections;

use std::path::Path;

use arrow_array::RecordBatch;
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};

use crate::log::{Log, Section};

#[derive(Debug, Default)]
pub struct Csx600SdkLog;

impl Plugin for Csx600SdkLog {
    fn name(&self) -> &'static str {
        "csx600_sdk_log"
    }

    fn description(&self) -> &'static str {
        "ClearSpeed CSX600 SDK logs: op throughputs and bandwidth curves; program op-count and transfer profiles"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(Microbench), Box::new(Profile)]
    }
}

export_plugin!(Csx600SdkLog);

/// Tables read from one log, in section order.
pub type Tables = Vec<(String, RecordBatch)>;

fn path_key() -> ConfigKey {
    ConfigKey::required("path", ConfigType::Path, "The csx600-sdk-log file")
}

/// Refuses sections that belong to the other kind of log.
fn check_sections(log: &Log, allowed: &[&str], kind: &str) -> Result<(), PluginError> {
    if log.sections.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no `[section]` line; a {kind} log has: {}",
            log.path.display(),
            allowed
                .iter()
                .map(|s| format!("[{s}]"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    for section in &log.sections {
        if !allowed.contains(&section.name.as_str()) {
            return Err(PluginError::at_line(
                &log.path,
                section.line,
                format!(
                    "unexpected section [{}] in a {kind} log; expected: {}",
                    section.name,
                    allowed
                        .iter()
                        .map(|s| format!("[{s}]"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Reads a microbenchmark log: `[op_throughput]` and `[bandwidth]` sections.
pub fn read_microbench(path: &Path) -> Result<Tables, PluginError> {
    microbench_tables(path, &Log::read(path)?)
}

/// The tables of a microbenchmark log read from `path` (errors name it).
pub fn microbench_tables(path: &Path, log: &Log) -> Result<Tables, PluginError> {
    check_sections(log, &["op_throughput", "bandwidth"], "microbench")?;
    let device = log.required_directive("device", "the device the benchmarks ran on")?;
    let provenance = match log.directive("provenance") {
        Some(d) if yosoku_tables::PROVENANCES.contains(&d.value.as_str()) => Some(d.value.as_str()),
        Some(d) => {
            return Err(PluginError::at_line(
                path,
                d.line,
                format!(
                    "`@provenance`: expected measured or illustrative, found `{}`",
                    d.value
                ),
            ));
        }
        None => None,
    };
    log.sections
        .iter()
        .map(|section: &Section| {
            Ok(match section.name.as_str() {
                "op_throughput" => (
                    yosoku_tables::CSX600_OP_THROUGHPUTS.name.to_owned(),
                    sections::op_throughputs(log, section, device)?,
                ),
                _ => (
                    yosoku_tables::BANDWIDTH_CURVES.name.to_owned(),
                    sections::bandwidth_curves(log, section, device, provenance)?,
                ),
            })
        })
        .collect()
}

/// Reads a program profile: `[op_count]`, `[transfer]`, `[measured]` and `[reference]` sections.
pub fn read_profile(path: &Path) -> Result<Tables, PluginError> {
    profile_tables(&Log::read(path)?)
}

/// The tables of a program profile (errors name the file the log was read from).
pub fn profile_tables(log: &Log) -> Result<Tables, PluginError> {
    check_sections(
        log,
        &["op_count", "transfer", "measured", "reference"],
        "profile",
    )?;
    let program = log.required_directive("program", "the program the profile is of")?;
    let source = log.directive("source").map(|d| d.value.as_str());
    log.sections
        .iter()
        .map(|section| {
            Ok(match section.name.as_str() {
                "op_count" => (
                    yosoku_tables::CSX600_OP_COUNTS.name.to_owned(),
                    sections::op_counts(log, section, program)?,
                ),
                "transfer" => (
                    yosoku_tables::CSX600_TRANSFER_COUNTS.name.to_owned(),
                    sections::transfer_counts(log, section, program)?,
                ),
                "measured" => {
                    let device =
                        log.required_directive("device", "the device of the [measured] runs")?;
                    (
                        yosoku_tables::RUNS.name.to_owned(),
                        sections::measured_runs(log, section, program, device)?,
                    )
                }
                _ => (
                    yosoku_tables::REFERENCE_VALUES.name.to_owned(),
                    sections::reference_values(log, section, program, source)?,
                ),
            })
        })
        .collect()
}

fn push_all(out: &mut Output<'_>, tables: Tables) -> Result<(), PluginError> {
    for (name, batch) in tables {
        out.push_batch(&name, batch)?;
    }
    Ok(())
}

/// Importer of SDK microbenchmark results.
struct Microbench;

impl Collector for Microbench {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "microbench",
            "Op throughputs ([op_throughput], Tables 1-2) and bandwidth curves ([bandwidth], Figures 2-4)",
        )
        .key(path_key())
        .tables(&["csx600_op_throughputs", "bandwidth_curves"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        push_all(out, read_microbench(&config.path("path")?)?)
    }
}

/// Importer of a program's op-count and transfer profile.
struct Profile;

impl Collector for Profile {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "profile",
            "A program's op counts ([op_count], Table 3), transfers ([transfer], Table 5), measured times ([measured]) and published figures ([reference])",
        )
        .key(path_key())
        .tables(&["csx600_op_counts", "csx600_transfer_counts", "runs", "reference_values"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        push_all(out, read_profile(&config.path("path")?)?)
    }
}
