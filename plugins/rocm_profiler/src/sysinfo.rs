//! omniperf's `sysinfo.csv`: one row describing the machine and GPU a workload ran on.

use std::path::Path;

use yosoku_plugin_sdk::PluginError;
use yosoku_profiler_import::devices::DeviceRow;
use yosoku_profiler_import::input::{Header, csv_records};

/// The columns of `sysinfo.csv`, by name, and the GPU model they describe.
#[derive(Debug, Clone, PartialEq)]
pub struct SysInfo {
    pub gpu_model: String,
    pub fields: Vec<(String, String)>,
}

/// Columns that become `devices` columns rather than description pairs.
const MAPPED: &[&str] = &[
    "gpu_model",
    "rocm_version",
    "amd_gpu_kernel_version",
    "cu_per_gpu",
    "max_sclk",
    "gpu_memory",
    "gpu_l2",
    "workgroup_max_size",
    "hbm_bw",
];

/// Columns not describing the device (the machine, the command, when).
const SKIPPED: &[&str] = &[
    "workload_name",
    "command",
    "timestamp",
    "hostname",
    "ip_blocks",
    "version",
];

/// omniperf 1.x (2022) wrote other names for the same columns (`gen_sysinfo`: `name` for the
/// GPU, `numCU`, `sclk`, `L2`, `hbmBW`, ...): each read as today's.
const NAMES_OF_2022: &[(&str, &str)] = &[
    ("name", "gpu_model"),
    ("gpu_soc", "gpu_arch"),
    ("numSE", "se_per_gpu"),
    ("numCU", "cu_per_gpu"),
    ("numSIMD", "simd_per_cu"),
    ("waveSize", "wave_size"),
    ("maxWavesPerCU", "max_waves_per_cu"),
    ("maxWorkgroupSize", "workgroup_max_size"),
    ("L1", "gpu_l1"),
    ("L2", "gpu_l2"),
    ("sclk", "max_sclk"),
    ("mclk", "max_mclk"),
    ("L2Banks", "total_l2_chan"),
    ("LDSBanks", "lds_banks_per_cu"),
    ("numSQC", "sqc_per_gpu"),
    ("hbmBW", "hbm_bw"),
    ("host_name", "hostname"),
    ("host_cpu", "cpu_model"),
    ("host_distro", "linux_distro"),
    ("host_kernel", "linux_kernel_version"),
    ("host_rocmver", "rocm_version"),
    ("date", "timestamp"),
];

/// Whether a header is omniperf 1.x's (2022): no `gpu_model`, but its `name` and `gpu_soc`.
fn is_2022(names: &[String]) -> bool {
    let has = |n: &str| names.iter().any(|h| h == n);
    !has("gpu_model") && has("name") && has("gpu_soc")
}

pub fn read(path: &Path, text: &str) -> Result<SysInfo, PluginError> {
    // omniperf 1.x wrote its row without a newline after it (`sysinfo.write(",".join(param))`):
    // checked below, once the row is read.
    let ends_whole = text.is_empty() || text.ends_with('\n');
    let mut records = csv_records(path, text);
    let Some(first) = records.next() else {
        return Err(PluginError::new(format!(
            "{}: empty file; expected omniperf's sysinfo.csv (a header and one row)",
            path.display()
        )));
    };
    let (header_line, header) = first?;
    let mut header = Header::new(&header);
    let old_format = is_2022(&header.names);
    if old_format {
        header = Header::new(&csv::StringRecord::from(
            header
                .names
                .iter()
                .map(|n| {
                    NAMES_OF_2022
                        .iter()
                        .find(|(old, _)| old == n)
                        .map_or(n.as_str(), |(_, new)| new)
                })
                .collect::<Vec<_>>(),
        ));
    }
    let model = header.require(path, header_line, "gpu_model", "omniperf's sysinfo.csv")?;
    let Some(row) = records.next() else {
        return Err(PluginError::at_line(
            path,
            header_line,
            "a header but no row: expected one row describing the GPU",
        ));
    };
    let (line, record) = row?;
    header.check_width(path, line, &record)?;
    // A row with no newline after it ends where the file was cut, or where omniperf 1.x
    // stopped writing. It is whole when it has every column and the last is one read for
    // nothing (`ip_blocks`): a cut inside that column changes no value read.
    if !ends_whole
        && !header
            .names
            .last()
            .is_some_and(|n| SKIPPED.contains(&n.as_str()))
    {
        yosoku_plugin_sdk::check_whole_lines(path, text)?;
    }
    let fields: Vec<(String, String)> = header
        .names
        .iter()
        .zip(record.iter())
        .map(|(k, v)| (k.clone(), v.trim().to_owned()))
        .collect();
    // omniperf 1.x wrote the model in lower case (`mi100`); today's tools, `MI100`.
    let gpu_model = if old_format {
        fields[model].1.to_ascii_uppercase()
    } else {
        fields[model].1.clone()
    };
    if gpu_model.is_empty() {
        return Err(PluginError::at(
            path,
            line,
            model + 1,
            "`gpu_model` is empty",
        ));
    }
    Ok(SysInfo { gpu_model, fields })
}

impl SysInfo {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty() && *v != "NA")
    }

    fn number(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(|v| v.parse::<f64>().ok())
    }

    /// The device as a `devices` row. Units as omniperf writes them: clocks in MHz, L2 in KiB,
    /// HBM bandwidth in GB/s, GPU memory in KiB.
    pub fn device_row(&self) -> DeviceRow {
        DeviceRow {
            device: self.gpu_model.clone(),
            vendor: Some("AMD".to_owned()),
            platform: self.get("rocm_version").map(|v| format!("ROCm {v}")),
            driver_version: self.get("amd_gpu_kernel_version").map(str::to_owned),
            device_type: Some("GPU".to_owned()),
            compute_units: self.number("cu_per_gpu").map(|v| v as i64),
            clock_mhz: self.number("max_sclk"),
            global_memory_bytes: self.number("gpu_memory").map(|v| (v * 1024.0) as i64),
            local_memory_bytes: None,
            l2_cache_bytes: self.number("gpu_l2").map(|v| (v * 1024.0) as i64),
            max_work_group_size: self.number("workgroup_max_size").map(|v| v as i64),
            preferred_vector_widths: Vec::new(),
            memory_bandwidth_bytes_per_sec: self.number("hbm_bw").map(|v| v * 1e9),
            description: self
                .fields
                .iter()
                .filter(|(k, v)| {
                    !v.is_empty()
                        && v != "NA"
                        && !MAPPED.contains(&k.as_str())
                        && !SKIPPED.contains(&k.as_str())
                })
                .cloned()
                .collect(),
        }
    }
}
