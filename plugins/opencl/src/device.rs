//! OpenCL platforms and devices: loading the ICD loader, choosing devices by index or name, and
//! describing them as the driver reports.

use opencl3::device::{
    CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device,
};
use opencl3::error_codes::{
    CL_DEVICE_NOT_FOUND, CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::platform::get_platforms;
use opencl3::types::cl_device_type;
use serde::{Deserialize, Serialize};
use yosoku_plugin_sdk::PluginError;
use yosoku_profiler_import::devices::DeviceRow;

/// The ICD loader the binding loads at run time.
pub const LOADER: &str = "libOpenCL.so.1";

/// What to install when there is no OpenCL.
pub const INSTALL_HINT: &str = "install the OpenCL ICD loader and a driver: on Debian or Ubuntu `apt install ocl-icd-libopencl1 pocl-opencl-icd` (POCL runs OpenCL on any CPU), plus the GPU vendor's OpenCL driver for a GPU (NVIDIA: the driver's OpenCL ICD; AMD: rocm-opencl-runtime; Intel: intel-opencl-icd)";

/// Checks that the ICD loader `name` can be loaded; the error says what to install.
pub fn probe_loader(name: &str) -> Result<(), PluginError> {
    // SAFETY: loading the ICD loader runs its initialisers, which only register the ICDs it
    // finds; the handle is closed again at once (the binding keeps its own).
    match unsafe { libloading::Library::new(name) } {
        Ok(library) => {
            drop(library);
            Ok(())
        }
        Err(e) => Err(PluginError::new(format!(
            "no OpenCL on this machine: cannot load the ICD loader {name} ({e}); {INSTALL_HINT}"
        ))),
    }
}

/// Which devices a run takes: `all`, an index, or a case-insensitive name substring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    All,
    Index(usize),
    Name(String),
}

impl Selector {
    pub fn parse(text: &str) -> Self {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") || t.is_empty() {
            Selector::All
        } else if let Ok(i) = t.parse::<usize>() {
            Selector::Index(i)
        } else {
            Selector::Name(t.to_lowercase())
        }
    }

    fn matches(&self, index: usize, name: &str) -> bool {
        match self {
            Selector::All => true,
            Selector::Index(i) => *i == index,
            Selector::Name(n) => name.to_lowercase().contains(n.as_str()),
        }
    }
}

/// `all`, `gpu`, `cpu` or `accelerator`.
pub fn device_type(text: &str) -> Option<cl_device_type> {
    match text.trim().to_lowercase().as_str() {
        "all" => Some(CL_DEVICE_TYPE_ALL),
        "gpu" => Some(CL_DEVICE_TYPE_GPU),
        "cpu" => Some(CL_DEVICE_TYPE_CPU),
        "accelerator" => Some(CL_DEVICE_TYPE_ACCELERATOR),
        _ => None,
    }
}

/// A device as the driver describes it (the run's record keeps this).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The name rows carry (`runs.device`): the driver's name, made unique within a run.
    pub label: String,
    pub name: String,
    pub platform: String,
    pub platform_version: String,
    pub vendor: String,
    pub driver_version: String,
    pub device_version: String,
    pub device_type: String,
    pub compute_units: u64,
    pub clock_mhz: u64,
    pub global_memory_bytes: u64,
    pub local_memory_bytes: u64,
    pub global_cache_bytes: u64,
    pub max_work_group_size: u64,
    pub profiling_timer_resolution_ns: u64,
    /// (type, preferred width), as `clGetDeviceInfo` reports.
    pub preferred_vector_widths: Vec<(String, u64)>,
}

impl DeviceInfo {
    pub fn row(&self) -> DeviceRow {
        DeviceRow {
            device: self.label.clone(),
            vendor: Some(self.vendor.clone()),
            platform: Some(format!("{} ({})", self.platform, self.platform_version)),
            driver_version: Some(self.driver_version.clone()),
            device_type: Some(self.device_type.clone()),
            compute_units: i64::try_from(self.compute_units).ok(),
            clock_mhz: Some(self.clock_mhz as f64),
            global_memory_bytes: i64::try_from(self.global_memory_bytes).ok(),
            local_memory_bytes: i64::try_from(self.local_memory_bytes).ok(),
            l2_cache_bytes: i64::try_from(self.global_cache_bytes).ok(),
            max_work_group_size: i64::try_from(self.max_work_group_size).ok(),
            preferred_vector_widths: self
                .preferred_vector_widths
                .iter()
                .map(|(t, w)| (t.clone(), *w as i64))
                .collect(),
            memory_bandwidth_bytes_per_sec: None,
            description: vec![
                ("opencl_name".to_owned(), self.name.clone()),
                ("device_version".to_owned(), self.device_version.clone()),
                (
                    "profiling_timer_resolution_ns".to_owned(),
                    self.profiling_timer_resolution_ns.to_string(),
                ),
            ],
        }
    }
}

/// A chosen device.
#[derive(Debug)]
pub struct Chosen {
    pub device: Device,
    pub info: DeviceInfo,
}

fn cl<T>(what: &str, r: opencl3::Result<T>) -> Result<T, PluginError> {
    r.map_err(|e| PluginError::new(format!("{what}: {e}")))
}

fn type_name(t: cl_device_type) -> &'static str {
    if t & CL_DEVICE_TYPE_GPU != 0 {
        "GPU"
    } else if t & CL_DEVICE_TYPE_CPU != 0 {
        "CPU"
    } else if t & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "accelerator"
    } else {
        "other"
    }
}

fn describe(device: &Device, platform: (&str, &str)) -> Result<DeviceInfo, PluginError> {
    let name = cl("CL_DEVICE_NAME", device.name())?.trim().to_owned();
    let what = |key: &str| format!("device {name}: {key}");
    let widths = [
        ("char", device.max_preferred_vector_width_char()),
        ("short", device.max_preferred_vector_width_short()),
        ("int", device.max_preferred_vector_width_int()),
        ("long", device.max_preferred_vector_width_long()),
        ("float", device.max_preferred_vector_width_float()),
        ("double", device.max_preferred_vector_width_double()),
    ];
    let mut preferred = Vec::new();
    for (t, w) in widths {
        preferred.push((
            t.to_owned(),
            u64::from(cl(&what("preferred vector width"), w)?),
        ));
    }
    Ok(DeviceInfo {
        label: name.clone(),
        vendor: cl(&what("CL_DEVICE_VENDOR"), device.vendor())?
            .trim()
            .to_owned(),
        driver_version: cl(&what("CL_DRIVER_VERSION"), device.driver_version())?
            .trim()
            .to_owned(),
        device_version: cl(&what("CL_DEVICE_VERSION"), device.version())?
            .trim()
            .to_owned(),
        device_type: type_name(cl(&what("CL_DEVICE_TYPE"), device.dev_type())?).to_owned(),
        compute_units: u64::from(cl(
            &what("CL_DEVICE_MAX_COMPUTE_UNITS"),
            device.max_compute_units(),
        )?),
        clock_mhz: u64::from(cl(
            &what("CL_DEVICE_MAX_CLOCK_FREQUENCY"),
            device.max_clock_frequency(),
        )?),
        global_memory_bytes: cl(&what("CL_DEVICE_GLOBAL_MEM_SIZE"), device.global_mem_size())?,
        local_memory_bytes: cl(&what("CL_DEVICE_LOCAL_MEM_SIZE"), device.local_mem_size())?,
        global_cache_bytes: cl(
            &what("CL_DEVICE_GLOBAL_MEM_CACHE_SIZE"),
            device.global_mem_cache_size(),
        )?,
        max_work_group_size: cl(
            &what("CL_DEVICE_MAX_WORK_GROUP_SIZE"),
            device.max_work_group_size(),
        )? as u64,
        profiling_timer_resolution_ns: cl(
            &what("CL_DEVICE_PROFILING_TIMER_RESOLUTION"),
            device.profiling_timer_resolution(),
        )? as u64,
        preferred_vector_widths: preferred,
        platform: platform.0.to_owned(),
        platform_version: platform.1.to_owned(),
        name,
    })
}

/// Every platform and device (platform index, device index within its platform, device), for
/// listing what a selector can name.
fn all_devices(
    kind: cl_device_type,
) -> Result<Vec<(usize, usize, Device, DeviceInfo)>, PluginError> {
    // The ICD loader initialises itself on the first call without a lock (two threads enumerating
    // at once have seen no devices): one enumeration at a time.
    static ENUMERATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = ENUMERATING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    probe_loader(LOADER)?;
    let platforms = match get_platforms() {
        Ok(p) => p,
        Err(e) if e.0 == DLOPEN_RUNTIME_LOAD_FAILED => {
            return Err(PluginError::new(format!(
                "no OpenCL on this machine: the ICD loader {LOADER} could not be loaded; {INSTALL_HINT}"
            )));
        }
        Err(e) if e.0 == CL_PLATFORM_NOT_FOUND_KHR => Vec::new(),
        Err(e) => return Err(PluginError::new(format!("clGetPlatformIDs: {e}"))),
    };
    if platforms.is_empty() {
        return Err(PluginError::new(format!(
            "no OpenCL platform: the ICD loader found no driver (no .icd file in /etc/OpenCL/vendors, or OCL_ICD_VENDORS points elsewhere); {INSTALL_HINT}"
        )));
    }
    let mut out = Vec::new();
    for (p, platform) in platforms.iter().enumerate() {
        let pname = cl("CL_PLATFORM_NAME", platform.name())?.trim().to_owned();
        let pversion = cl("CL_PLATFORM_VERSION", platform.version())?
            .trim()
            .to_owned();
        let ids = match platform.get_devices(kind) {
            Ok(ids) => ids,
            Err(e) if e.0 == CL_DEVICE_NOT_FOUND => Vec::new(),
            Err(e) => {
                return Err(PluginError::new(format!(
                    "platform {pname}: clGetDeviceIDs: {e}"
                )));
            }
        };
        for (d, id) in ids.into_iter().enumerate() {
            let device = Device::new(id);
            let info = describe(&device, (&pname, &pversion))?;
            out.push((p, d, device, info));
        }
    }
    Ok(out)
}

/// The devices `platform` and `device` select, of type `kind`; each label unique.
pub fn choose(
    platform: &Selector,
    device: &Selector,
    kind: cl_device_type,
) -> Result<Vec<Chosen>, PluginError> {
    let all = all_devices(kind)?;
    let listing = || {
        all.iter()
            .map(|(p, d, _, info)| {
                format!("platform {p} ({}) device {d}: {}", info.platform, info.name)
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut chosen: Vec<Chosen> = all
        .iter()
        .filter(|(p, d, _, info)| {
            platform.matches(*p, &info.platform) && device.matches(*d, &info.name)
        })
        .map(|(_, _, dev, info)| Chosen {
            device: *dev,
            info: info.clone(),
        })
        .collect();
    if chosen.is_empty() {
        return Err(PluginError::new(format!(
            "platform = {platform:?}, device = {device:?} selects no device; this machine has: {}",
            if all.is_empty() {
                "no device of the requested type".to_owned()
            } else {
                listing()
            }
        )));
    }
    // Two devices of one name (two identical GPUs) get their position appended.
    let names: Vec<String> = chosen.iter().map(|c| c.info.label.clone()).collect();
    for (i, c) in chosen.iter_mut().enumerate() {
        if names.iter().filter(|n| **n == names[i]).count() > 1 {
            c.info.label = format!(
                "{} #{}",
                names[i],
                names[..i].iter().filter(|n| **n == names[i]).count()
            );
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        assert_eq!(Selector::parse("all"), Selector::All);
        assert_eq!(Selector::parse("1"), Selector::Index(1));
        assert!(Selector::parse("NVIDIA").matches(0, "NVIDIA H100 80GB HBM3"));
        assert!(!Selector::parse("amd").matches(0, "NVIDIA H100"));
        assert!(Selector::Index(2).matches(2, "x"));
    }

    #[test]
    fn a_missing_loader_says_what_to_install() {
        let e = probe_loader("libOpenCL-not-installed.so.1")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "no OpenCL on this machine: cannot load the ICD loader libOpenCL-not-installed.so.1"
            ),
            "{e}"
        );
        assert!(
            e.contains("apt install ocl-icd-libopencl1 pocl-opencl-icd"),
            "{e}"
        );
    }
}
