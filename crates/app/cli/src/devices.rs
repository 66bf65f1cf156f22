//! `yosoku devices`: the device catalogue (`yosoku-devices`), the built-in devices and a user's
//! own files (`YOSOKU_DEVICES`, `--devices`), each value with where it comes from.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Result, bail};
use yosoku_runner::devices::{
    Catalogue, Device, MEASURED_CURVE_FIELDS, MEASURED_FIELDS, SPEC_FIELDS,
};

pub use yosoku_runner::devices::DEVICES_VAR;

/// The built-in catalogue with the user's files over it: those of `YOSOKU_DEVICES`, then `extra`.
/// What looks wrong in the user's files goes to stderr, each line naming its file and field.
pub fn catalogue(extra: &[PathBuf]) -> Result<Catalogue> {
    let c = yosoku_runner::devices::load_catalogue(extra)?;
    for w in c.warnings() {
        eprintln!("warning: {w}");
    }
    Ok(c)
}

fn number(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn cell(d: &Device, key: &str, scale: f64) -> String {
    d.spec(key).map_or("-".to_owned(), |v| number(v / scale))
}

fn measured(d: &Device, key: &str) -> String {
    d.measured
        .get(key)
        .map_or("-".to_owned(), |v| number(v.value))
}

/// The table of every device, or everything about the one `name` names.
pub fn list(name: Option<&str>, extra: &[PathBuf]) -> Result<String> {
    let c = catalogue(extra)?;
    let mut out = String::new();
    if let Some(name) = name {
        let Some(d) = c.find(name) else {
            bail!(
                "no device `{name}` in the catalogue; the closest: {} (`yosoku devices` lists all; add one with a TOML file, {DEVICES_VAR})",
                c.closest(name, 3).join(", ")
            );
        };
        let _ = writeln!(
            out,
            "{}  ({}, {}; {})",
            d.name, d.vendor, d.architecture, d.file
        );
        if !d.aliases.is_empty() {
            let _ = writeln!(out, "  also: {}", d.aliases.join(", "));
        }
        if let Some(cc) = &d.compute_capability {
            let _ = writeln!(out, "  compute capability {cc}");
        }
        if let Some(y) = d.year {
            let _ = writeln!(out, "  year {y}");
        }
        for (section, fields, values) in [
            ("specification", SPEC_FIELDS, &d.spec),
            ("measured by yosoku", MEASURED_FIELDS, &d.measured),
        ] {
            let _ = writeln!(out, "  {section}:");
            for (key, what) in fields {
                if let Some(v) = values.get(*key) {
                    let _ = writeln!(
                        out,
                        "    {key:<28} {:>16}  [{}] {what}",
                        number(v.value),
                        v.source
                    );
                }
            }
        }
        for (key, what) in MEASURED_CURVE_FIELDS {
            if let Some(c) = d.measured_curves.get(*key) {
                let points: Vec<String> =
                    c.x.iter()
                        .zip(&c.y)
                        .map(|(x, y)| format!("{}: {}", number(*x), number(*y)))
                        .collect();
                let _ = writeln!(out, "    {key} [{}] {what}", c.source);
                let _ = writeln!(out, "      {}", points.join(", "));
            }
        }
        let _ = writeln!(out, "  sources:");
        for (key, text) in &d.sources {
            let _ = writeln!(out, "    [{key}] {text}");
        }
        return Ok(out);
    }
    let _ = writeln!(
        out,
        "{:<52} {:<4} {:<10} {:>6} {:>5} {:>5} {:>9} {:>9} {:>7} {:>6} {:>10} {:>10}",
        "device",
        "kind",
        "arch",
        "cc",
        "year",
        "SMs",
        "FP32 GF/s",
        "FP64 GF/s",
        "DRAM GB/s",
        "L2 MiB",
        "meas. GB/s",
        "meas. GF/s"
    );
    for d in c.devices() {
        let _ = writeln!(
            out,
            "{:<52} {:<4} {:<10} {:>6} {:>5} {:>5} {:>9} {:>9} {:>7} {:>6} {:>10} {:>10}",
            d.name,
            d.kind,
            // Whole where it fits the column (`CDNA 2`), else its first word.
            if d.architecture.len() <= 10 {
                d.architecture.as_str()
            } else {
                d.architecture.split_whitespace().next().unwrap_or("")
            },
            d.compute_capability.as_deref().unwrap_or("-"),
            d.year.map_or("-".to_owned(), |y| y.to_string()),
            cell(d, "sm_count", 1.0),
            cell(d, "fp32_peak_gflops", 1.0),
            cell(d, "fp64_peak_gflops", 1.0),
            cell(d, "dram_bandwidth_gb_per_sec", 1.0),
            cell(d, "l2_bytes", 1_048_576.0),
            measured(d, "dram_bandwidth_gb_per_sec"),
            measured(d, "fp32_gflops"),
        );
    }
    let _ = writeln!(
        out,
        "\n{} devices; `yosoku devices NAME` shows every value with its source. Add a device with a TOML file (crates/core/devices/README.md) named by {DEVICES_VAR} or --devices.",
        c.devices().len()
    );
    Ok(out)
}
