//! `yosoku calibrate`: the runner's calibration sweep (`yosoku_runner::calibrate`) asked from the
//! command line, and what it measured printed.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use yosoku_runner::calibrate::{Calibration, CalibrationRequest, calibrate};

use crate::format::secs;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The device file to write (a catalogue file: `--devices FILE` or YOSOKU_DEVICES reads it).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// OpenCL device type: gpu, cpu, accelerator or all.
    #[arg(long = "device-type", default_value = "all")]
    pub device_type: String,
    /// OpenCL platform: `all`, an index or a substring of its name.
    #[arg(long, default_value = "all")]
    pub platform: String,
    /// OpenCL device within the platform: `all`, an index or a substring of its name.
    #[arg(long, default_value = "all")]
    pub device: String,
    /// The catalogue device measured (its name or an alias); default: the OpenCL device's name.
    #[arg(long)]
    pub name: Option<String>,
    /// A catalogue file or a directory of them, over the built-in ones (repeatable).
    #[arg(long = "devices", value_name = "PATH")]
    pub devices: Vec<PathBuf>,
    /// Extra plugin directories or libraries, searched first (repeatable).
    #[arg(long = "plugin-path", value_name = "PATH")]
    pub plugin_path: Vec<PathBuf>,
}

/// Runs the calibration and says what it measured and where the file is.
pub fn run(args: &Args) -> Result<String> {
    let c = calibrate(&CalibrationRequest {
        platform: args.platform.clone(),
        device: args.device.clone(),
        device_type: args.device_type.clone(),
        name: args.name.clone(),
        devices: args.devices.clone(),
        plugin_path: args.plugin_path.clone(),
        out: args.out.clone(),
    })?;
    Ok(text(&c))
}

fn text(c: &Calibration) -> String {
    let m = &c.measured;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} compute units){}",
        c.opencl_device,
        c.compute_units,
        if c.catalogued {
            format!(": the catalogue's `{}`", c.device.name)
        } else {
            ": not in the catalogue, written as a new device".to_owned()
        }
    );
    let _ = writeln!(
        out,
        "  bandwidth        {:.1} GB/s (float4 copy of {} floats)",
        m.bandwidth_gb_per_sec, m.copy_floats
    );
    let _ = writeln!(
        out,
        "  FP32             {:.1} GFLOP/s (local-memory matrix multiply, n = {})",
        m.fp32_gflops, m.matmul_n
    );
    let _ = writeln!(
        out,
        "  launch latency   {:.2} us on the device (an almost empty kernel; {:.1} us enqueue to completion on the host)",
        m.launch_latency_us, m.host_latency_us
    );
    let sweep: Vec<String> = m
        .sweep
        .iter()
        .map(|(g, s)| format!("{g}: {}", secs(*s)))
        .collect();
    let _ = writeln!(out, "  wave sweep       {}", sweep.join(", "));
    let _ = writeln!(
        out,
        "  one wave         {}",
        m.wave_work_groups.map_or_else(
            || "not found (the time never stepped up by 25 %)".to_owned(),
            |w| format!("{w} work-groups of 256 work-items")
        )
    );
    let _ = writeln!(
        out,
        "wrote {} (use it with `--devices {}` or YOSOKU_DEVICES)",
        c.file.display(),
        c.file.display()
    );
    out
}
