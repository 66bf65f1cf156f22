//! The device catalogue: what each device is on paper (SM or CU count, clocks, peak FLOP/s, DRAM
//! bandwidth, caches, memory), every value with the public source it was taken from, and, where
//! yosoku measured the device, the measured bandwidth and FLOP/s beside. It is data: one TOML
//! file per device (`catalogue/*.toml`, compiled in; a user's own files add or replace devices
//! with no rebuild). Free of file I/O: callers hand over the files' text.

pub mod checks;
mod write;

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// The specification fields, in display order: (key, what it is). Units are in the names.
pub const SPEC_FIELDS: &[(&str, &str)] = &[
    ("sm_count", "SMs (NVIDIA), CUs (AMD) or cores (CPU)"),
    ("base_clock_mhz", "base clock"),
    ("boost_clock_mhz", "boost (maximum) clock"),
    ("fp32_peak_gflops", "single-precision peak, non-tensor"),
    ("fp64_peak_gflops", "double-precision peak, non-tensor"),
    ("dram_bandwidth_gb_per_sec", "DRAM bandwidth"),
    ("l2_bytes", "last-level (L2) cache"),
    (
        "shared_memory_per_sm_bytes",
        "shared (local) memory per SM or CU",
    ),
    ("memory_bytes", "device memory"),
    (
        "max_threads_per_sm",
        "resident threads per SM (occupancy limit)",
    ),
    (
        "max_blocks_per_sm",
        "resident blocks per SM (occupancy limit)",
    ),
    (
        "registers_per_sm",
        "32-bit registers per SM (occupancy limit)",
    ),
    (
        "launch_latency_us",
        "time of one launch of a tiny kernel, back to back (its source says whether the host's side is in it)",
    ),
];

/// What yosoku measured on a device itself: (key, what it is).
pub const MEASURED_FIELDS: &[(&str, &str)] = &[
    (
        "dram_bandwidth_gb_per_sec",
        "a large copy's read + write bytes per second",
    ),
    (
        "fp32_gflops",
        "the best single-precision rate of a kernel yosoku ran",
    ),
    (
        "launch_latency_us",
        "an empty kernel's launch time, back to back, as yosoku measured it",
    ),
    (
        "wave_work_groups",
        "work-groups of a compute-bound kernel that run at once (one wave), from a sweep over work-groups",
    ),
    (
        "graph_launch_us",
        "an empty kernel's launch time, back to back in a CUDA graph (the GPU's own cost, no host in it)",
    ),
    (
        "kernel_floor_us",
        "an empty kernel's own time on the device: between two events queued on the GPU less the two events' own, the host's submission not in it (what ncu's gpu__time_duration sees of a kernel that does nothing)",
    ),
    (
        "empty_kernel_us",
        "one empty kernel's device time, alone between two events",
    ),
    (
        "dram_read_gb_per_sec",
        "a large read's bytes per second (L2 emptied first)",
    ),
    (
        "dram_write_gb_per_sec",
        "a large write's bytes per second (L2 emptied first)",
    ),
    (
        "block_bandwidth_gb_per_sec",
        "the read + write bytes per second one block of 256 threads reaches: the latency-bound small grid",
    ),
    (
        "block_rate_per_us",
        "blocks of 256 threads the GPU starts a microsecond (a launch of a million empty blocks)",
    ),
    (
        "barrier_step_us",
        "one step of a loop of barrier-separated phases inside a launch (a shared-memory read and write and a barrier)",
    ),
    (
        "l2_bandwidth_gb_per_sec",
        "bytes per second read from L2 (a buffer an eighth of L2, past L1)",
    ),
];

/// Curves yosoku measured on a device: (key, what its `x` and `y` are).
pub const MEASURED_CURVE_FIELDS: &[(&str, &str)] = &[
    (
        "dram_copy_us_by_bytes",
        "a copy's kernel time (us, the events' own time taken off, the kernel floor in it) by the bytes it reads and writes, L2 emptied first: the ramp from a DRAM round trip to the bandwidth",
    ),
    (
        "copy_gb_per_sec_by_blocks",
        "a large copy's read + write bytes per second by the blocks of 256 threads that run it: the small grid's latency-bound bandwidth",
    ),
];

/// A measured curve: `y` at each `x`, `x` rising.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedCurve {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub source: String,
}

/// A value and the source (a key of the file's `[sources]`) it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced {
    pub value: f64,
    pub source: String,
}

/// One device of the catalogue.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub name: String,
    pub aliases: Vec<String>,
    pub vendor: String,
    /// `gpu` or `cpu`.
    pub kind: String,
    pub architecture: String,
    pub compute_capability: Option<String>,
    pub year: Option<i64>,
    /// By key of [`SPEC_FIELDS`].
    pub spec: BTreeMap<String, Sourced>,
    /// By key of [`MEASURED_FIELDS`].
    pub measured: BTreeMap<String, Sourced>,
    /// By key of [`MEASURED_CURVE_FIELDS`].
    pub measured_curves: BTreeMap<String, SourcedCurve>,
    /// Source key -> what it is (a datasheet, a whitepaper, a file of this repository).
    pub sources: BTreeMap<String, String>,
    /// The file it was read from.
    pub file: String,
}

impl Device {
    /// A specification value, if the catalogue has it.
    pub fn spec(&self, key: &str) -> Option<f64> {
        self.spec.get(key).map(|s| s.value)
    }

    /// The measured fields that stand in for the datasheet peaks: (measured, spec).
    pub const MEASURED_PEAKS: [(&'static str, &'static str); 2] = [
        ("fp32_gflops", "fp32_peak_gflops"),
        ("dram_bandwidth_gb_per_sec", "dram_bandwidth_gb_per_sec"),
    ];

    /// Whether yosoku measured both the FP32 rate and the bandwidth of this device.
    pub fn has_measured_peaks(&self) -> bool {
        Self::MEASURED_PEAKS
            .iter()
            .all(|(m, _)| self.measured.contains_key(*m))
    }

    /// The device with its FP32 peak and bandwidth replaced by what yosoku measured (a
    /// calibration's matrix multiply and copy): the rates a real kernel reached, which models
    /// then scale from as they would from the datasheet's. Unchanged without both measurements.
    pub fn with_measured_peaks(&self) -> Device {
        let mut d = self.clone();
        if self.has_measured_peaks() {
            for (m, spec) in Self::MEASURED_PEAKS {
                d.spec.insert(spec.to_owned(), self.measured[m].clone());
            }
        }
        d
    }

    /// Whether `name` names this device: its name or an alias, without regard to case.
    pub fn is_named(&self, name: &str) -> bool {
        std::iter::once(&self.name)
            .chain(&self.aliases)
            .any(|n| n.eq_ignore_ascii_case(name.trim()))
    }
}

/// What is wrong with a catalogue file: where, and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct CatalogueError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    name: Spanned<String>,
    #[serde(default)]
    aliases: Vec<String>,
    vendor: String,
    kind: Spanned<String>,
    architecture: Spanned<String>,
    compute_capability: Option<String>,
    year: Option<i64>,
    #[serde(default)]
    spec: BTreeMap<Spanned<String>, Spanned<ValueDef>>,
    #[serde(default)]
    measured: BTreeMap<Spanned<String>, Spanned<ValueDef>>,
    #[serde(default)]
    measured_curves: BTreeMap<Spanned<String>, Spanned<CurveDef>>,
    sources: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CurveDef {
    x: Vec<f64>,
    y: Vec<f64>,
    source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ValueDef {
    value: f64,
    source: String,
}

/// Line and column (1-based) of byte offset `at` of `text`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// The message for `name`, a key of `[section]` that is none of `fields`.
fn unknown_field(section: &str, name: &str, fields: &[(&str, &str)], hint: &str) -> String {
    format!(
        "[{section}] has no field `{name}`; expected one of {}{hint}",
        fields
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The message for a value of `[section]` whose source is not in `[sources]`.
fn unknown_source(
    section: &str,
    name: &str,
    source: &str,
    sources: &BTreeMap<String, String>,
) -> String {
    format!(
        "{section}.{name}: source `{source}` is not in [sources] (it has: {})",
        sources.keys().cloned().collect::<Vec<_>>().join(", ")
    )
}

/// A file's `[measured_curves]`: each a key of [`MEASURED_CURVE_FIELDS`], a curve the physics can
/// read ([`checks::curve_problem`]) and a source in `[sources]`; `error` places a message at a
/// byte offset of the file.
fn read_curves(
    curves: &BTreeMap<Spanned<String>, Spanned<CurveDef>>,
    sources: &BTreeMap<String, String>,
    error: &dyn Fn(usize, String) -> CatalogueError,
) -> Result<BTreeMap<String, SourcedCurve>, CatalogueError> {
    let mut out = BTreeMap::new();
    for (key, curve) in curves {
        let name = key.get_ref();
        let at = curve.span().start;
        if !MEASURED_CURVE_FIELDS.iter().any(|(k, _)| k == name) {
            let message = unknown_field("measured_curves", name, MEASURED_CURVE_FIELDS, "");
            return Err(error(key.span().start, message));
        }
        let c = curve.get_ref();
        if let Some(problem) = checks::curve_problem(&c.x, &c.y) {
            return Err(error(at, format!("measured_curves.{name}: {problem}")));
        }
        if !sources.contains_key(&c.source) {
            let message = unknown_source("measured_curves", name, &c.source, sources);
            return Err(error(at, message));
        }
        out.insert(
            name.clone(),
            SourcedCurve {
                x: c.x.clone(),
                y: c.y.clone(),
                source: c.source.clone(),
            },
        );
    }
    Ok(out)
}

/// Reads one catalogue file.
pub fn parse(text: &str, file: &str) -> Result<Device, CatalogueError> {
    let error = |at: usize, message: String| {
        let (line, column) = line_column(text, at);
        CatalogueError {
            file: file.to_owned(),
            line,
            column,
            message,
        }
    };
    let def: FileDef = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(0, |s| s.start);
        error(at, e.message().trim().to_owned())
    })?;
    // An architecture yosoku knows, spelled in another case, is that one.
    let architecture = match checks::gpu_architecture(def.architecture.get_ref()) {
        Some(known) => {
            if def.kind.get_ref() == "cpu" {
                return Err(error(
                    def.kind.span().start,
                    format!(
                        "kind `cpu`, but architecture `{}` is a GPU architecture: expected kind = \"gpu\"",
                        def.architecture.get_ref()
                    ),
                ));
            }
            known.name.to_owned()
        }
        None => def.architecture.get_ref().clone(),
    };
    if !matches!(def.kind.get_ref().as_str(), "gpu" | "cpu") {
        return Err(error(
            def.kind.span().start,
            format!("kind `{}`: expected `gpu` or `cpu`", def.kind.get_ref()),
        ));
    }
    let read = |table: &BTreeMap<Spanned<String>, Spanned<ValueDef>>,
                fields: &[(&str, &str)],
                section: &str|
     -> Result<BTreeMap<String, Sourced>, CatalogueError> {
        let mut out = BTreeMap::new();
        for (key, v) in table {
            let name = key.get_ref();
            if !fields.iter().any(|(k, _)| k == name) {
                let hint = " (the unit is in the name)";
                return Err(error(
                    key.span().start,
                    unknown_field(section, name, fields, hint),
                ));
            }
            let value = v.get_ref();
            if !value.value.is_finite() || value.value <= 0.0 {
                return Err(error(
                    v.span().start,
                    format!(
                        "{section}.{name}: expected a positive number, found {}",
                        value.value
                    ),
                ));
            }
            if !def.sources.contains_key(&value.source) {
                return Err(error(
                    v.span().start,
                    unknown_source(section, name, &value.source, &def.sources),
                ));
            }
            out.insert(
                name.clone(),
                Sourced {
                    value: value.value,
                    source: value.source.clone(),
                },
            );
        }
        Ok(out)
    };
    let spec = read(&def.spec, SPEC_FIELDS, "spec")?;
    if let (Some(base), Some(boost)) = (spec.get("base_clock_mhz"), spec.get("boost_clock_mhz"))
        && base.value > boost.value
    {
        let at = def
            .spec
            .iter()
            .find(|(k, _)| k.get_ref() == "base_clock_mhz")
            .map_or(0, |(_, v)| v.span().start);
        return Err(error(
            at,
            format!(
                "spec.base_clock_mhz = {} is above spec.boost_clock_mhz = {}: expected base <= boost",
                base.value, boost.value
            ),
        ));
    }
    let measured = read(&def.measured, MEASURED_FIELDS, "measured")?;
    let measured_curves = read_curves(&def.measured_curves, &def.sources, &error)?;
    if def.name.get_ref().trim().is_empty() {
        return Err(error(def.name.span().start, "the name is empty".to_owned()));
    }
    Ok(Device {
        name: def.name.into_inner(),
        aliases: def.aliases,
        vendor: def.vendor,
        kind: def.kind.into_inner(),
        architecture,
        compute_capability: def.compute_capability,
        year: def.year,
        spec,
        measured,
        measured_curves,
        sources: def.sources,
        file: file.to_owned(),
    })
}

/// The built-in catalogue files: (file name, text).
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "amd-instinct-mi100.toml",
        include_str!("../catalogue/amd-instinct-mi100.toml"),
    ),
    (
        "amd-instinct-mi210.toml",
        include_str!("../catalogue/amd-instinct-mi210.toml"),
    ),
    (
        "amd-instinct-mi300x.toml",
        include_str!("../catalogue/amd-instinct-mi300x.toml"),
    ),
    (
        "nvidia-a100-80gb-pcie.toml",
        include_str!("../catalogue/nvidia-a100-80gb-pcie.toml"),
    ),
    (
        "nvidia-a100-pcie-40gb.toml",
        include_str!("../catalogue/nvidia-a100-pcie-40gb.toml"),
    ),
    (
        "nvidia-b200.toml",
        include_str!("../catalogue/nvidia-b200.toml"),
    ),
    (
        "nvidia-gtx-680.toml",
        include_str!("../catalogue/nvidia-gtx-680.toml"),
    ),
    (
        "nvidia-gtx-970.toml",
        include_str!("../catalogue/nvidia-gtx-970.toml"),
    ),
    (
        "nvidia-gtx-980.toml",
        include_str!("../catalogue/nvidia-gtx-980.toml"),
    ),
    (
        "nvidia-gtx-titan-x.toml",
        include_str!("../catalogue/nvidia-gtx-titan-x.toml"),
    ),
    (
        "nvidia-gtx-titan.toml",
        include_str!("../catalogue/nvidia-gtx-titan.toml"),
    ),
    (
        "nvidia-h100-sxm5.toml",
        include_str!("../catalogue/nvidia-h100-sxm5.toml"),
    ),
    (
        "nvidia-h200-sxm.toml",
        include_str!("../catalogue/nvidia-h200-sxm.toml"),
    ),
    (
        "nvidia-l4.toml",
        include_str!("../catalogue/nvidia-l4.toml"),
    ),
    (
        "nvidia-quadro-k5200.toml",
        include_str!("../catalogue/nvidia-quadro-k5200.toml"),
    ),
    (
        "nvidia-tesla-k20c.toml",
        include_str!("../catalogue/nvidia-tesla-k20c.toml"),
    ),
    (
        "nvidia-tesla-k40c.toml",
        include_str!("../catalogue/nvidia-tesla-k40c.toml"),
    ),
    (
        "nvidia-tesla-p100-pcie-16gb.toml",
        include_str!("../catalogue/nvidia-tesla-p100-pcie-16gb.toml"),
    ),
    (
        "nvidia-tesla-p4.toml",
        include_str!("../catalogue/nvidia-tesla-p4.toml"),
    ),
    (
        "nvidia-tesla-t4.toml",
        include_str!("../catalogue/nvidia-tesla-t4.toml"),
    ),
    (
        "nvidia-tesla-v100-dgxs-32gb.toml",
        include_str!("../catalogue/nvidia-tesla-v100-dgxs-32gb.toml"),
    ),
    (
        "nvidia-tesla-v100-pcie-32gb.toml",
        include_str!("../catalogue/nvidia-tesla-v100-pcie-32gb.toml"),
    ),
    (
        "pocl-xeon-2vcpu.toml",
        include_str!("../catalogue/pocl-xeon-2vcpu.toml"),
    ),
];

/// Devices by name, from any number of files.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    devices: Vec<Device>,
    /// What looks wrong in the devices added from users' files ([`checks::warnings`]).
    warnings: Vec<String>,
}

impl Catalogue {
    /// The built-in devices.
    pub fn built_in() -> Result<Self, CatalogueError> {
        let mut c = Self::default();
        for (file, text) in BUILT_IN {
            c.add(parse(text, &format!("catalogue/{file}"))?, false)?;
        }
        Ok(c)
    }

    /// Adds a device; one whose name or an alias another device has is an error, unless
    /// `replace` (a user's file replacing a built-in device of the same name).
    pub fn add(&mut self, device: Device, replace: bool) -> Result<(), CatalogueError> {
        self.add_device(device, replace)
    }

    /// [`Catalogue::add`] for a device of a user's file: what looks wrong in its values for
    /// its architecture is kept as a warning ([`Catalogue::warnings`]).
    pub fn add_checked(&mut self, device: Device, replace: bool) -> Result<(), CatalogueError> {
        let warnings = checks::warnings(&device, self);
        self.add_device(device, replace)?;
        self.warnings.extend(warnings);
        Ok(())
    }

    /// What looks wrong in the values of the users' devices, each naming its file and field.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn add_device(&mut self, device: Device, replace: bool) -> Result<(), CatalogueError> {
        let names: Vec<&String> = std::iter::once(&device.name)
            .chain(&device.aliases)
            .collect();
        if let Some(i) = self
            .devices
            .iter()
            .position(|d| names.iter().any(|n| d.is_named(n)))
        {
            if replace && self.devices[i].is_named(&device.name) {
                self.devices[i] = device;
                return Ok(());
            }
            return Err(CatalogueError {
                file: device.file.clone(),
                line: 1,
                column: 1,
                message: format!(
                    "device `{}` is already in the catalogue as `{}` ({})",
                    device.name, self.devices[i].name, self.devices[i].file
                ),
            });
        }
        self.devices.push(device);
        Ok(())
    }

    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The catalogue with each device's datasheet peaks replaced by what yosoku measured on it
    /// ([`Device::with_measured_peaks`]); devices without measurements are kept as they are, to
    /// be refused where they are used ([`Device::has_measured_peaks`]).
    pub fn with_measured_peaks(&self) -> Catalogue {
        Catalogue {
            devices: self
                .devices
                .iter()
                .map(Device::with_measured_peaks)
                .collect(),
            warnings: self.warnings.clone(),
        }
    }

    /// The device `name` names (its name or an alias, without regard to case).
    pub fn find(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.is_named(name))
    }

    /// Up to `n` device names closest to `name`, for an error about a name not found.
    pub fn closest(&self, name: &str, n: usize) -> Vec<&str> {
        let want = name.to_ascii_lowercase();
        let mut scored: Vec<(usize, &str)> = self
            .devices
            .iter()
            .map(|d| {
                let best = std::iter::once(&d.name)
                    .chain(&d.aliases)
                    .map(|a| distance(&want, &a.to_ascii_lowercase()))
                    .min()
                    .unwrap_or(usize::MAX);
                (best, d.name.as_str())
            })
            .collect();
        scored.sort();
        scored.into_iter().take(n).map(|(_, name)| name).collect()
    }
}

/// Levenshtein distance of two strings, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests;
