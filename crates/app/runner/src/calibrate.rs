//! `yosoku calibrate`: a short microbenchmark sweep on a device the user can reach, written as a
//! device file with what it measured (docs/methods.md, section 6, "Calibration").
//!
//! Two backends: OpenCL ([`opencl`], any device with an OpenCL driver) and CUDA ([`cuda`], an
//! NVIDIA GPU through the driver API and NVRTC: the launch floor, DRAM and L2 bandwidth curves,
//! the small-grid regime, the FP32 rate). Either way the device file ([`device_file`]) is the
//! catalogue's entry for the device with `[measured]` replaced by what the sweep measured, or,
//! for a device the catalogue lacks, what the driver says of it; written atomically.

pub mod cuda;
pub mod device_file;
pub mod opencl;
pub mod plugin_tables;

use std::path::PathBuf;

use anyhow::Result;
use yosoku_devices::Device;

pub use cuda::{CudaMeasured, CudaSelection};
pub use opencl::{OpenClMeasured, OpenClSelection};

/// Which backend measures the device.
#[derive(Debug, Clone)]
pub enum Backend {
    OpenCl(OpenClSelection),
    Cuda(CudaSelection),
}

/// What `yosoku calibrate` is asked: which device, and where the file goes.
#[derive(Debug, Clone)]
pub struct CalibrationRequest {
    pub backend: Backend,
    /// The catalogue device the measurement is of (default: the driver's name for the device).
    pub name: Option<String>,
    /// The user's device files, over the built-in catalogue.
    pub devices: Vec<PathBuf>,
    pub plugin_path: Vec<PathBuf>,
    /// The device file to write.
    pub out: PathBuf,
}

/// What a backend's sweep measured.
#[derive(Debug, Clone)]
pub enum Measured {
    OpenCl(OpenClMeasured),
    Cuda(CudaMeasured),
}

/// What the sweep measured, and the device file written.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The device as written (the catalogue's entry with `[measured]`, or a new one).
    pub device: Device,
    /// Whether the catalogue had the device.
    pub catalogued: bool,
    /// The driver's name for the device, and its compute units (SMs).
    pub driver_device: String,
    pub compute_units: u64,
    pub measured: Measured,
    pub file: PathBuf,
}

/// Runs the sweep on the selected device and writes the device file.
pub fn calibrate(r: &CalibrationRequest) -> Result<Calibration> {
    let catalogue = crate::devices::load_catalogue(&r.devices)?;
    let (d, measured, values, source_text) = match &r.backend {
        Backend::OpenCl(s) => {
            let (d, m) = opencl::sweep(s, &r.plugin_path)?;
            let values = device_file::MeasuredValues {
                entries: m.entries(),
                curves: Vec::new(),
            };
            let text = m.source_text(&d);
            (d, Measured::OpenCl(m), values, text)
        }
        Backend::Cuda(s) => {
            let (d, m) = cuda::sweep(*s, &r.plugin_path)?;
            let values = device_file::MeasuredValues {
                entries: m.entries(),
                curves: m.curves(),
            };
            let text = m.source_text(&d);
            (d, Measured::Cuda(m), values, text)
        }
    };
    let name = r.name.clone().unwrap_or_else(|| d.name.clone());
    let (device, catalogued) = device_file::device_of(&catalogue, &name, &d, &values, source_text)?;
    device_file::write_device(&device, &r.out)?;
    Ok(Calibration {
        device,
        catalogued,
        driver_device: d.name,
        compute_units: d.compute_units,
        measured,
        file: r.out.clone(),
    })
}
