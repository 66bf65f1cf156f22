//! The device file a calibration writes: the catalogue's entry for the device with `[measured]`
//! replaced by what the sweep measured, or, for a device the catalogue lacks, what the driver
//! says of it; written to a temporary file, read back as a catalogue file, then renamed into
//! place.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use yosoku_devices::{Device, Sourced, SourcedCurve};

/// The source key of every measured value.
pub const SOURCE: &str = "calibration";

/// What the driver says of the device measured.
#[derive(Debug, Clone)]
pub struct Selected {
    pub name: String,
    pub gpu: bool,
    pub compute_units: u64,
    pub clock_mhz: Option<f64>,
    pub vendor: String,
    /// The platform or driver, for the source text.
    pub description: String,
    /// `driver` source text and the key it goes under, for a device the catalogue lacks.
    pub driver_source: (&'static str, &'static str),
}

/// What a sweep measured: the `[measured]` values and the `[measured_curves]`, (key, x, y).
#[derive(Debug, Clone, Default)]
pub struct MeasuredValues {
    pub entries: Vec<(&'static str, f64)>,
    pub curves: Vec<(&'static str, Vec<f64>, Vec<f64>)>,
}

/// The catalogue's entry for `name` with `[measured]` and `[measured_curves]` replaced by
/// `measured` (each under the source `calibration`, described by `source_text`; a value that is
/// not a positive number, or a curve the catalogue would not read, left out), or a new device
/// from what the driver says; and whether the catalogue had it.
pub fn device_of(
    catalogue: &yosoku_devices::Catalogue,
    name: &str,
    d: &Selected,
    measured: &MeasuredValues,
    source_text: String,
) -> Result<(Device, bool)> {
    let (mut device, catalogued) = match catalogue.find(name) {
        Some(known) => (known.clone(), true),
        // A device the catalogue lacks is written as new under its own name only.
        None if name == d.name => (new_device(d), false),
        None => bail!(
            "no device `{name}` in the catalogue; the closest: {} (`yosoku devices` lists all; without --name the driver's own name for the device is used)",
            catalogue.closest(name, 3).join(", ")
        ),
    };
    device.measured.clear();
    device.measured_curves.clear();
    for (key, x, y) in &measured.curves {
        if yosoku_devices::checks::curve_problem(x, y).is_none() {
            device.measured_curves.insert(
                (*key).to_owned(),
                SourcedCurve {
                    x: x.clone(),
                    y: y.clone(),
                    source: SOURCE.to_owned(),
                },
            );
        }
    }
    for (key, value) in &measured.entries {
        if value.is_finite() && *value > 0.0 {
            device.measured.insert(
                (*key).to_owned(),
                Sourced {
                    value: *value,
                    source: SOURCE.to_owned(),
                },
            );
        }
    }
    device.sources.insert(SOURCE.to_owned(), source_text);
    // Sources no value names any more (the replaced measurements') are dropped.
    let named: Vec<String> = device
        .spec
        .values()
        .chain(device.measured.values())
        .map(|v| v.source.clone())
        .chain(device.measured_curves.values().map(|c| c.source.clone()))
        .collect();
    device.sources.retain(|k, _| named.contains(k));
    Ok((device, catalogued))
}

/// A device the catalogue lacks, from what its driver says.
fn new_device(d: &Selected) -> Device {
    let (key, text) = d.driver_source;
    let mut spec = std::collections::BTreeMap::new();
    let driver = |value: f64| Sourced {
        value,
        source: key.to_owned(),
    };
    spec.insert("sm_count".to_owned(), driver(d.compute_units as f64));
    if let Some(clock) = d.clock_mhz {
        spec.insert("boost_clock_mhz".to_owned(), driver(clock));
    }
    Device {
        name: d.name.clone(),
        aliases: Vec::new(),
        vendor: d.vendor.clone(),
        kind: if d.gpu { "gpu" } else { "cpu" }.to_owned(),
        architecture: "unknown (not in the catalogue)".to_owned(),
        compute_capability: None,
        year: None,
        spec,
        measured: Default::default(),
        measured_curves: Default::default(),
        sources: [(key.to_owned(), text.to_owned())].into_iter().collect(),
        file: String::new(),
    }
}

/// Writes the device file: to a temporary file beside it, read back as a catalogue file, then
/// renamed over `out`.
pub fn write_device(device: &Device, out: &Path) -> Result<()> {
    let text = device.to_toml(&format!(
        "{} as `yosoku calibrate` measured it: [measured] is the calibration's, [spec] the catalogue's.",
        device.name
    ));
    yosoku_devices::parse(&text, &out.display().to_string())
        .map_err(|e| anyhow!("the device file does not read back: {e}"))?;
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty());
    let tmp = match dir {
        Some(d) => d.join(format!(".{}.tmp", file_name(out))),
        None => PathBuf::from(format!(".{}.tmp", file_name(out))),
    };
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, out).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}", out.display())
    })?;
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || "device.toml".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Selected {
        Selected {
            name: "NVIDIA H200".into(),
            gpu: true,
            compute_units: 132,
            clock_mhz: Some(1980.0),
            vendor: "NVIDIA".into(),
            description: "CUDA driver 13.0".into(),
            driver_source: ("driver", "what the driver said"),
        }
    }

    /// The catalogue's entry with what the sweep measured in place of its own `[measured]`: a
    /// value that is not a positive number and a curve the catalogue would refuse are left out,
    /// the rest written under `calibration` and read back the same.
    #[test]
    fn a_calibration_replaces_the_measured_values_and_curves_and_reads_back() {
        let catalogue = yosoku_devices::Catalogue::built_in().unwrap();
        let measured = MeasuredValues {
            entries: vec![
                ("dram_bandwidth_gb_per_sec", 4298.0),
                ("fp32_gflops", f64::NAN),
            ],
            curves: vec![
                (
                    "dram_copy_us_by_bytes",
                    vec![4096.0, 1048576.0],
                    vec![1.99, 2.49],
                ),
                // Not rising: left out.
                (
                    "copy_gb_per_sec_by_blocks",
                    vec![2.0, 1.0],
                    vec![39.0, 20.0],
                ),
            ],
        };
        let (device, catalogued) =
            device_of(&catalogue, "H200", &h200(), &measured, "the sweep".into()).unwrap();
        assert!(catalogued);
        assert_eq!(device.measured.len(), 1);
        assert_eq!(device.measured["dram_bandwidth_gb_per_sec"].value, 4298.0);
        assert_eq!(device.measured_curves.len(), 1);
        let curve = &device.measured_curves["dram_copy_us_by_bytes"];
        assert_eq!(
            (curve.y.clone(), curve.source.as_str()),
            (vec![1.99, 2.49], SOURCE)
        );
        assert_eq!(device.sources[SOURCE], "the sweep");
        let text = device.to_toml("a test");
        assert_eq!(
            yosoku_devices::parse(&text, "h200.toml")
                .unwrap()
                .measured_curves,
            device.measured_curves
        );
    }
}
