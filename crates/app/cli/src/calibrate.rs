//! `yosoku calibrate`: the runner's calibration sweep (`yosoku_runner::calibrate`) asked from the
//! command line, and what it measured printed.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use yosoku_runner::calibrate::{
    Backend, Calibration, CalibrationRequest, CudaMeasured, CudaSelection, Measured,
    OpenClMeasured, OpenClSelection, calibrate,
};

use crate::format::secs;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The device file to write (a catalogue file: `--devices FILE` or YOSOKU_DEVICES reads it).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// How the device is measured: `opencl` (any device with an OpenCL driver) or `cuda` (an
    /// NVIDIA GPU through the CUDA driver and NVRTC: launch floor, DRAM and L2 bandwidth curves,
    /// small grids, FP32 rate).
    #[arg(long, value_enum, default_value = "opencl")]
    pub backend: BackendName,
    /// CUDA: the GPU's ordinal.
    #[arg(long, default_value_t = 0)]
    pub gpu: u32,
    /// CUDA: timed samples of each configuration.
    #[arg(long, default_value_t = 20)]
    pub repeats: u32,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendName {
    Opencl,
    Cuda,
}

/// Runs the calibration and says what it measured and where the file is.
pub fn run(args: &Args) -> Result<String> {
    let backend = match args.backend {
        BackendName::Opencl => Backend::OpenCl(OpenClSelection {
            platform: args.platform.clone(),
            device: args.device.clone(),
            device_type: args.device_type.clone(),
        }),
        BackendName::Cuda => Backend::Cuda(CudaSelection {
            gpu: args.gpu,
            repeats: args.repeats,
        }),
    };
    let c = calibrate(&CalibrationRequest {
        backend,
        name: args.name.clone(),
        devices: args.devices.clone(),
        plugin_path: args.plugin_path.clone(),
        out: args.out.clone(),
    })?;
    Ok(text(&c))
}

fn text(c: &Calibration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} compute units){}",
        c.driver_device,
        c.compute_units,
        if c.catalogued {
            format!(": the catalogue's `{}`", c.device.name)
        } else {
            ": not in the catalogue, written as a new device".to_owned()
        }
    );
    match &c.measured {
        Measured::OpenCl(m) => opencl_text(&mut out, m),
        Measured::Cuda(m) => cuda_text(&mut out, m),
    }
    let _ = writeln!(
        out,
        "wrote {} (use it with `--devices {}` or YOSOKU_DEVICES)",
        c.file.display(),
        c.file.display()
    );
    out
}

fn opencl_text(out: &mut String, m: &OpenClMeasured) {
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
}

fn cuda_text(out: &mut String, m: &CudaMeasured) {
    let (median, min, max) = m.empty_kernel_us;
    let _ = writeln!(
        out,
        "  launch           {:.2} us a launch back to back (1000 empty launches between two events); {:.2} us replayed from a CUDA graph",
        m.launch_latency_us, m.graph_launch_us
    );
    let _ = writeln!(
        out,
        "  empty kernel     {median:.2} us alone between two events (min {min:.2}, max {max:.2}; {:.1} us launch to completion on the host)",
        m.host_latency_us
    );
    let _ = writeln!(
        out,
        "  kernel floor     {:.2} us (an empty kernel queued on the GPU between two events, {:.2} us, less the two events alone, {:.2} us)",
        m.kernel_floor_us(),
        m.empty_queued_us,
        m.event_pair_us
    );
    let _ = writeln!(
        out,
        "  DRAM             copy {:.0} GB/s, read {:.0}, write {:.0} (best of each curve, L2 emptied before each launch; times with the events')",
        m.copy_gb_per_sec(),
        m.read_gb_per_sec(),
        m.write_gb_per_sec()
    );
    for (name, curve) in [("read", &m.read), ("write", &m.write), ("copy", &m.copy)] {
        let points: Vec<String> = curve
            .iter()
            .map(|p| {
                format!(
                    "{}: {} ({:.0} GB/s)",
                    bytes(p.bytes),
                    secs(p.median_secs),
                    p.gb_per_sec()
                )
            })
            .collect();
        let _ = writeln!(out, "    {name:<6}         {}", points.join(", "));
    }
    let grid: Vec<String> = m
        .grid
        .iter()
        .map(|p| format!("{}: {:.0}", p.x, p.gb_per_sec()))
        .collect();
    let _ = writeln!(
        out,
        "  small grids      copy GB/s by blocks of 256 threads: {}",
        grid.join(", ")
    );
    let _ = writeln!(
        out,
        "                   one block {:.1} GB/s; 90 % of the best from {} blocks",
        m.block_gb_per_sec(),
        m.blocks_to_reach(0.9)
            .map_or_else(|| "(never)".to_owned(), |b| b.to_string())
    );
    let _ = writeln!(out, "  L2               {:.0} GB/s read", m.l2_gb_per_sec);
    let _ = writeln!(
        out,
        "  FP32             {:.0} GFLOP/s (FMA chains)",
        m.fp32_gflops
    );
    let _ = writeln!(
        out,
        "  barrier step     {:.3} us (a shared-memory read and write and a barrier, 256 threads)",
        m.barrier_step_us
    );
    let blocks: Vec<String> = m
        .many_blocks
        .iter()
        .map(|(t, b, s)| format!("{b} of {t} threads: {}", secs(*s)))
        .collect();
    let _ = writeln!(
        out,
        "  block starts     {:.0} blocks a microsecond ({})",
        m.block_rate_per_us(),
        blocks.join(", ")
    );
    let waves: Vec<String> = m
        .waves
        .iter()
        .map(|(b, s)| format!("{b}: {}", secs(*s)))
        .collect();
    let _ = writeln!(out, "  wave sweep       {}", waves.join(", "));
    let _ = writeln!(
        out,
        "  one wave         {}",
        m.wave_blocks.map_or_else(
            || "not found (the time never stepped up by 25 %)".to_owned(),
            |w| format!("{w} blocks of 256 threads")
        )
    );
}

fn bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}
