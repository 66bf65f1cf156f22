//! Runs the plan on one GPU through the CUDA driver API, its kernels compiled by NVRTC for the
//! GPU's own architecture; both libraries are loaded at run time.
//!
//! Every sample is a pair of CUDA events around [`Launch::launches_per_sample`] launches on one
//! stream (the device's own clock, as ncu's `gpu__time_duration` is), after warm-up launches that
//! are not kept; where a launch's L2 must be cold, a read of twice L2's bytes of another buffer
//! runs before the first event, and where the sample is queued, a one-block waiting kernel runs before it so that the
//! events and launches are on the GPU before the first event fires. The host's time from the
//! first event to the stream's end is kept beside it.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{
    CUdevice_attribute, CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode,
};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileOptions, compile_ptx_with_opts};
use yosoku_plugin_sdk::PluginError;

use crate::plan::{Gpu, Kernel, Launch, buffer_elements};

/// The calibration's kernels.
pub const SOURCE: &str = include_str!("kernels.cu");

/// Warm-up launches before each configuration's samples (not kept).
pub const WARMUP: usize = 2;

/// What the driver says of the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuInfo {
    pub ordinal: usize,
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sm_count: u64,
    pub clock_mhz: Option<f64>,
    pub memory_clock_mhz: Option<f64>,
    pub memory_bus_bits: Option<u64>,
    pub memory_bytes: u64,
    pub l2_bytes: u64,
    pub max_threads_per_block: u64,
    pub max_threads_per_sm: u64,
    pub shared_memory_per_sm_bytes: u64,
    pub registers_per_sm: u64,
    pub driver_version: String,
}

impl GpuInfo {
    pub fn plan_gpu(&self) -> Gpu {
        Gpu {
            sm_count: self.sm_count,
            l2_bytes: self.l2_bytes,
            memory_bytes: self.memory_bytes,
        }
    }
}

/// One configuration's samples: seconds of one launch each (device and host).
#[derive(Debug, Clone)]
pub struct Samples {
    pub launch: Launch,
    pub device_secs: Vec<f64>,
    pub host_secs: Vec<f64>,
}

fn driver(what: &str) -> impl Fn(DriverError) -> PluginError + '_ {
    move |e| PluginError::new(format!("CUDA driver: {what}: {e}"))
}

/// The driver library, or the error that says it is missing. cudarc panics where a library it
/// is asked for is missing; this asks first.
pub fn check_libraries(need_nvrtc: bool) -> Result<(), PluginError> {
    // SAFETY: only tries to open the library by its usual names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(PluginError::new(
            "no CUDA driver on this machine (libcuda.so.1 not found on the library path): install NVIDIA's driver, or calibrate another device with --backend opencl",
        ));
    }
    // SAFETY: as above.
    if need_nvrtc && !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(PluginError::new(
            "no NVRTC on this machine (libnvrtc.so, .so.13 or .so.12 not found on the library path): it comes with the CUDA toolkit or the nvidia-cuda-nvrtc wheel; put its lib directory on LD_LIBRARY_PATH",
        ));
    }
    Ok(())
}

/// The GPUs the driver sees.
pub fn gpu_count() -> Result<usize, PluginError> {
    check_libraries(false)?;
    cudarc::driver::result::init().map_err(driver("cuInit"))?;
    let n = cudarc::driver::result::device::get_count().map_err(driver("cuDeviceGetCount"))?;
    Ok(n.max(0) as usize)
}

/// Opens GPU `ordinal`.
pub fn open(ordinal: usize) -> Result<Arc<CudaContext>, PluginError> {
    let count = gpu_count()?;
    if ordinal >= count {
        return Err(PluginError::new(format!(
            "gpu: {ordinal}, but the CUDA driver sees {count} GPU{} (0 to {})",
            if count == 1 { "" } else { "s" },
            count.saturating_sub(1)
        )));
    }
    CudaContext::new(ordinal).map_err(driver("creating a context"))
}

/// What the driver says of the context's GPU.
pub fn describe(ctx: &Arc<CudaContext>) -> Result<GpuInfo, PluginError> {
    use CUdevice_attribute as A;
    let attr = |a: CUdevice_attribute| ctx.attribute(a).map_err(driver("cuDeviceGetAttribute"));
    let positive = |v: i32| (v > 0).then_some(v as u64);
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(driver("cuDriverGetVersion"))?;
    // SAFETY: the device handle is the context's own.
    let memory = unsafe { cudarc::driver::result::device::total_mem(ctx.cu_device()) }
        .map_err(driver("cuDeviceTotalMem"))?;
    Ok(GpuInfo {
        ordinal: ctx.ordinal(),
        name: ctx.name().map_err(driver("cuDeviceGetName"))?,
        compute_capability: ctx
            .compute_capability()
            .map_err(driver("compute capability"))?,
        sm_count: positive(attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?).unwrap_or(1),
        clock_mhz: positive(attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?).map(|k| k as f64 / 1e3),
        memory_clock_mhz: positive(attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?)
            .map(|k| k as f64 / 1e3),
        memory_bus_bits: positive(attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?),
        memory_bytes: memory as u64,
        l2_bytes: positive(attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?).unwrap_or(0),
        max_threads_per_block: positive(attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?)
            .unwrap_or(1024),
        max_threads_per_sm: positive(attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?)
            .unwrap_or(0),
        shared_memory_per_sm_bytes: positive(attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )?)
        .unwrap_or(0),
        registers_per_sm: positive(attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        )?)
        .unwrap_or(0),
        driver_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
    })
}

/// The compiled kernels and the buffers they walk.
struct Bench {
    stream: Arc<CudaStream>,
    functions: Vec<(Kernel, CudaFunction)>,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    out: CudaSlice<f32>,
    flush: CudaSlice<f32>,
    a_elements: u64,
    b_elements: u64,
}

/// Compiles the kernels for the GPU's architecture and allocates the buffers of `launches`.
fn prepare(
    ctx: &Arc<CudaContext>,
    info: &GpuInfo,
    launches: &[Launch],
) -> Result<Bench, PluginError> {
    let (major, minor) = info.compute_capability;
    let ptx = compile_ptx_with_opts(
        SOURCE,
        CompileOptions {
            options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
            name: Some("yosoku_calibration.cu".to_owned()),
            ..Default::default()
        },
    )
    .map_err(|e| PluginError::new(format!("NVRTC: compiling the calibration kernels: {e:?}")))?;
    let module = ctx
        .load_module(ptx)
        .map_err(driver("loading the calibration kernels"))?;
    let kernels = [
        Kernel::Empty,
        Kernel::Read,
        Kernel::Write,
        Kernel::Copy,
        Kernel::L2Read,
        Kernel::Fma,
        Kernel::Spin,
        Kernel::Steps,
    ];
    let functions = kernels
        .into_iter()
        .map(|k| {
            module
                .load_function(k.symbol())
                .map(|f| (k, f))
                .map_err(driver(k.symbol()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // SAFETY: one stream uses every buffer, in order.
    unsafe { ctx.disable_event_tracking() };
    // A stream of its own (the legacy default stream cannot be captured into a graph).
    let stream = ctx.new_stream().map_err(driver("creating a stream"))?;
    let (a_elements, b_elements) = buffer_elements(launches);
    let alloc = |elements: u64| {
        stream
            .alloc_zeros::<f32>(4 * elements as usize)
            .map_err(driver("allocating the calibration's buffers"))
    };
    let a = alloc(a_elements)?;
    let b = alloc(b_elements)?;
    let out = alloc(1)?;
    let flush = stream
        .alloc_zeros::<f32>((2 * info.l2_bytes.max(1 << 20) / 4) as usize)
        .map_err(driver("allocating the L2-emptying buffer"))?;
    Ok(Bench {
        stream,
        functions,
        a,
        b,
        out,
        flush,
        a_elements,
        b_elements,
    })
}

impl Bench {
    fn function(&self, kernel: Kernel) -> Result<&CudaFunction, PluginError> {
        self.functions
            .iter()
            .find(|(k, _)| *k == kernel)
            .map(|(_, f)| f)
            .ok_or_else(|| PluginError::new(format!("no kernel {}", kernel.symbol())))
    }

    fn launch(&self, l: &Launch) -> Result<(), PluginError> {
        let f = self.function(l.kernel)?;
        let cfg = config(l);
        if l.elements > self.a_elements
            || (l.kernel == Kernel::Copy && l.elements > self.b_elements)
        {
            return Err(PluginError::new(format!(
                "{}: {} elements, beyond the buffers",
                l.test, l.elements
            )));
        }
        let n = l.elements;
        let repeat = l.repeat as i32;
        let cycles = l.repeat as i64;
        let (fa, fb) = (0.999_f32, 0.001_f32);
        let mut b = self.stream.launch_builder(f);
        match l.kernel {
            Kernel::Empty => {}
            Kernel::Read => {
                b.arg(&self.a).arg(&n).arg(&self.out);
            }
            Kernel::Write => {
                b.arg(&self.a).arg(&n).arg(&fb);
            }
            Kernel::Copy => {
                b.arg(&self.a).arg(&self.b).arg(&n);
            }
            Kernel::L2Read => {
                b.arg(&self.a).arg(&n).arg(&repeat).arg(&self.out);
            }
            Kernel::Fma => {
                b.arg(&self.out).arg(&repeat).arg(&fa).arg(&fb);
            }
            Kernel::Spin => {
                b.arg(&cycles).arg(&self.out);
            }
            Kernel::Steps => {
                b.arg(&repeat).arg(&self.out);
            }
        }
        // SAFETY: every argument matches the kernel's signature in kernels.cu, and no launch
        // walks past its buffers (checked above).
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(driver(l.kernel.symbol()))
    }

    /// Reads twice L2's bytes of another buffer: L2 then holds none of the launch's lines, and
    /// no dirty line to write back (a memset would leave L2 full of them, and the launch would
    /// pay for their write-back).
    fn empty_l2(&mut self) -> Result<(), PluginError> {
        let flush = crate::plan::flush(self.flush.len() as u64 / 4);
        let f = self.function(Kernel::Read)?;
        let mut b = self.stream.launch_builder(f);
        b.arg(&self.flush).arg(&flush.elements).arg(&self.out);
        // SAFETY: yk_read's signature; the flush buffer holds `elements` float4.
        unsafe { b.launch(config(&flush)) }
            .map(|_| ())
            .map_err(driver("emptying L2"))
    }

    /// `repeats` samples of `l` after the warm-up.
    fn samples(&mut self, l: &Launch, repeats: usize) -> Result<Samples, PluginError> {
        let ctx = self.stream.context().clone();
        let event = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver("creating an event"))
        };
        let (start, end) = (event()?, event()?);
        let queue = crate::plan::queue();
        // The back-to-back launches captured once into a graph, replayed for every sample.
        let graph = if l.graph {
            self.stream
                .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .map_err(driver("capturing a graph"))?;
            for _ in 0..l.launches_per_sample {
                self.launch(l)?;
            }
            let g = self
                .stream
                .end_capture(CUgraphInstantiate_flags(0))
                .map_err(driver("instantiating a graph"))?
                .ok_or_else(|| PluginError::new("CUDA driver: the captured graph is empty"))?;
            g.upload().map_err(driver("uploading a graph"))?;
            Some(g)
        } else {
            None
        };
        let mut device_secs = Vec::with_capacity(repeats);
        let mut host_secs = Vec::with_capacity(repeats);
        for i in 0..WARMUP + repeats {
            if l.cold_l2 {
                self.empty_l2()?;
            }
            self.stream.synchronize().map_err(driver("synchronising"))?;
            if l.queued {
                self.launch(&queue)?;
            }
            let host = Instant::now();
            start.record(&self.stream).map_err(driver("recording"))?;
            match &graph {
                Some(g) => g.launch().map_err(driver("launching a graph"))?,
                None => {
                    for _ in 0..l.launches_per_sample {
                        self.launch(l)?;
                    }
                }
            }
            end.record(&self.stream).map_err(driver("recording"))?;
            end.synchronize().map_err(driver("synchronising"))?;
            let host = host.elapsed().as_secs_f64();
            let ms = start.elapsed_ms(&end).map_err(driver("reading events"))?;
            if i >= WARMUP {
                let per = l.launches_per_sample.max(1) as f64;
                device_secs.push(f64::from(ms) / 1e3 / per);
                host_secs.push(host / per);
            }
        }
        Ok(Samples {
            launch: l.clone(),
            device_secs,
            host_secs,
        })
    }
}

fn config(l: &Launch) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (l.blocks as u32, 1, 1),
        block_dim: (l.threads as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Runs `launches` on the context's GPU, `repeats` samples each.
pub fn run(
    ctx: &Arc<CudaContext>,
    info: &GpuInfo,
    launches: &[Launch],
    repeats: usize,
) -> Result<Vec<Samples>, PluginError> {
    let mut bench = prepare(ctx, info, launches)?;
    launches.iter().map(|l| bench.samples(l, repeats)).collect()
}
