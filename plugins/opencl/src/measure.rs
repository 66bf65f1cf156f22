//! Timing one configuration as the field expects: a profiling-enabled queue, each launch timed by
//! its event's `CL_PROFILING_COMMAND_START/END` (and by the host clock around it), warm-up
//! launches excluded, launches repeated until the spread is known, and the output checked
//! against a CPU reference before any time is kept.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::ptr;
use std::time::{Duration, Instant};

use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, ClMem};
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_int};
use yosoku_plugin_sdk::PluginError;

use crate::declared::{Access, Argument, Configuration, first_difference, initial_bytes};
use crate::device::Chosen;
use crate::record::{Launch, Measurement, statistics};
use crate::suite::{Arg, Plan, SuiteKernel};

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Launches before the measured ones (compilation, first touch of the buffers, clocks).
    pub warmup: usize,
    pub min_launches: usize,
    pub max_launches: usize,
    /// Stop once the coefficient of variation of the device times is at most this.
    pub target_cv: f64,
    /// Stop a configuration after this much host time in measured launches (after `min_launches`).
    pub max_secs_per_config: f64,
    /// Work-items per work-group of the 1-D kernels.
    pub group: usize,
}

/// One device's context, profiling queue and built programs.
pub struct Session<'d> {
    chosen: &'d Chosen,
    context: Context,
    queue: CommandQueue,
    programs: HashMap<(String, String), Program>,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("device", &self.chosen.info.label)
            .finish_non_exhaustive()
    }
}

fn cl_err(what: impl std::fmt::Display, e: impl std::fmt::Display) -> PluginError {
    PluginError::new(format!("{what}: {e}"))
}

impl<'d> Session<'d> {
    pub fn new(chosen: &'d Chosen) -> Result<Self, PluginError> {
        let label = &chosen.info.label;
        let context = Context::from_device(&chosen.device)
            .map_err(|e| cl_err(format!("device {label}: clCreateContext"), e))?;
        // OpenCL 2.0+ queue creation, falling back to the 1.x call on older platforms.
        let queue = match CommandQueue::create_default_with_properties(
            &context,
            CL_QUEUE_PROFILING_ENABLE,
            0,
        ) {
            Ok(q) => q,
            Err(_) => {
                #[allow(deprecated)]
                let q = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE);
                q.map_err(|e| cl_err(format!("device {label}: a profiling command queue"), e))?
            }
        };
        Ok(Self {
            chosen,
            context,
            queue,
            programs: HashMap::new(),
        })
    }

    fn program(
        &mut self,
        file: &str,
        source: &str,
        options: &str,
    ) -> Result<&Program, PluginError> {
        let key = (file.to_owned(), options.to_owned());
        if !self.programs.contains_key(&key) {
            let program = Program::create_and_build_from_source(&self.context, source, options)
                .map_err(|log| {
                    PluginError::new(format!(
                        "{file} does not build for {} (options `{options}`): {}",
                        self.chosen.info.label,
                        log.trim()
                    ))
                })?;
            self.programs.insert(key.clone(), program);
        }
        self.programs
            .get(&key)
            .ok_or_else(|| PluginError::new(format!("{file}: built program lost")))
    }

    /// Measures one configuration; the output is checked before any time is returned.
    pub fn measure(
        &mut self,
        kernel: &dyn SuiteKernel,
        source: (&str, &str),
        variant: &str,
        size: u64,
        settings: &Settings,
        deadline: Instant,
    ) -> Result<Measurement, PluginError> {
        let device = self.chosen.info.label.clone();
        let what = format!("{}/{variant} n={size} on {device}", kernel.program());
        let plan = kernel.plan(variant, size, settings.group);
        let options = kernel.build_options(variant, settings.group);
        let name = kernel.kernel_name(variant);
        let program = self.program(source.0, source.1, &options)?;
        let k = Kernel::create(program, &name)
            .map_err(|e| cl_err(format!("{what}: kernel `{name}` of {}", source.0), e))?;
        let inputs = self.input_buffers(&plan, &what)?;
        let outputs = self.output_buffers(&plan, &what)?;
        set_arguments(&k, &plan, &inputs, &outputs, &what)?;
        let launch = Launcher {
            queue: &self.queue,
            kernel: &k,
            global: &plan.global,
            local: Some(&plan.local),
            what: &what,
            deadline,
        };
        let (warmup, launches) = launch.warmup_and_measured(settings)?;
        let results = self.read_outputs(&plan, &outputs, &what)?;
        kernel.check(&plan, size, &results).map_err(|m| {
            PluginError::new(format!(
                "{what}: wrong result, no time recorded: {m} ({} of {})",
                name, source.0
            ))
        })?;
        Ok(Measurement {
            device,
            program: kernel.program().to_owned(),
            variant: variant.to_owned(),
            size,
            size_meaning: kernel.size_meaning().to_owned(),
            global: plan.global.clone(),
            local: plan.local.clone(),
            stable: is_stable(&launches, settings),
            warmup,
            launches,
            counters: owned(plan.counters()),
            target_cv: settings.target_cv,
            sizes: None,
            check: None,
        })
    }

    /// Measures one configuration of a kernel file. With a reference kernel, the kernel and the
    /// reference first run once each on fresh buffers with the same contents and every buffer
    /// they may write is compared; the timed launches follow on the kernel's buffers.
    pub fn measure_declared(
        &mut self,
        c: &Configuration,
        settings: &Settings,
        deadline: Instant,
    ) -> Result<Measurement, PluginError> {
        let device = self.chosen.info.label.clone();
        let what = format!("{}/{} {} on {device}", c.program, c.variant, c.size_text());
        let file = c.file.path.display().to_string();
        let program = self.program(&file, &c.file.text, &c.build_options)?;
        let create = |name: &str| -> Result<Kernel, PluginError> {
            let k = Kernel::create(program, name)
                .map_err(|e| cl_err(format!("{what}: kernel `{name}` of {file}"), e))?;
            let n = k
                .num_args()
                .map_err(|e| cl_err(format!("{what}: CL_KERNEL_NUM_ARGS of `{name}`"), e))?;
            if n as usize != c.args.len() {
                return Err(PluginError::new(format!(
                    "{what}: the device's compiler says kernel `{name}` of {file} takes {n} argument(s), the kernel file gives {}",
                    c.args.len()
                )));
            }
            Ok(k)
        };
        let k = create(&c.kernel)?;
        let reference = c
            .reference
            .as_ref()
            .map(|r| create(&r.kernel).map(|k| (r, k)))
            .transpose()?;
        let buffers = self.declared_buffers(c, &what)?;
        set_declared_arguments(&k, c, &buffers, &what)?;
        let launch = Launcher {
            queue: &self.queue,
            kernel: &k,
            global: &c.global,
            local: Some(&c.local),
            what: &what,
            deadline,
        };
        if let Some((r, rk)) = &reference {
            let expected_buffers = self.declared_buffers(c, &what)?;
            set_declared_arguments(rk, c, &expected_buffers, &what)?;
            let check = format!("{what}, reference kernel {}", r.kernel);
            Launcher {
                kernel: rk,
                global: &r.global,
                local: r.local.as_deref(),
                what: &check,
                ..launch
            }
            .once()?;
            launch.once()?;
            for (i, arg) in c.args.iter().enumerate() {
                let (
                    Argument::Buffer {
                        elem, access, name, ..
                    },
                    Some(got),
                    Some(expected),
                ) = (arg, &buffers[i], &expected_buffers[i])
                else {
                    continue;
                };
                if *access == Access::Read {
                    continue;
                }
                let got = self.read_bytes(got, &what)?;
                let expected = self.read_bytes(expected, &what)?;
                if let Some(d) = first_difference(*elem, &got, &expected, r.tolerance) {
                    return Err(PluginError::new(format!(
                        "{what}: wrong result, no time recorded: argument {i} (`{name}`, {}) differs from reference kernel `{}` at element {}: got {}, expected {} (tolerance {:e})",
                        elem.name(),
                        r.kernel,
                        d.index,
                        d.got,
                        d.expected,
                        r.tolerance
                    )));
                }
            }
        }
        let (warmup, launches) = launch.warmup_and_measured(settings)?;
        Ok(Measurement {
            device,
            program: c.program.clone(),
            variant: c.variant.clone(),
            size: c.sizes.first().map_or(0, |s| s.1),
            size_meaning: c.size_meaning.clone(),
            global: c.global.clone(),
            local: c.local.clone(),
            stable: is_stable(&launches, settings),
            warmup,
            launches,
            counters: owned(c.counters()),
            target_cv: settings.target_cv,
            sizes: Some(c.size_text()),
            check: Some(c.check_text()),
        })
    }

    /// One buffer per buffer argument of `c` (None for the others), with its initial contents.
    fn declared_buffers(
        &self,
        c: &Configuration,
        what: &str,
    ) -> Result<Vec<Option<Buffer<u8>>>, PluginError> {
        let mut out = Vec::new();
        for (i, arg) in c.args.iter().enumerate() {
            let Argument::Buffer {
                elem,
                length,
                init,
                access,
                name,
            } = arg
            else {
                out.push(None);
                continue;
            };
            let data = initial_bytes(*elem, *length, init);
            let flags = if *access == Access::Read {
                CL_MEM_READ_ONLY
            } else {
                CL_MEM_READ_WRITE
            };
            // SAFETY: the buffer is created with the byte length of the host data written into
            // it, from no host pointer.
            let mut b = unsafe {
                Buffer::<u8>::create(&self.context, flags, data.len(), ptr::null_mut::<c_void>())
            }
            .map_err(|e| {
                cl_err(
                    format!(
                        "{what}: argument {i} (`{name}`, {length} x {})",
                        elem.name()
                    ),
                    e,
                )
            })?;
            // SAFETY: a blocking write of `data.len()` bytes into a buffer of that length.
            unsafe {
                self.queue
                    .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, &data, &[])
            }
            .map_err(|e| cl_err(format!("{what}: writing argument {i} (`{name}`)"), e))?;
            out.push(Some(b));
        }
        Ok(out)
    }

    fn read_bytes(&self, b: &Buffer<u8>, what: &str) -> Result<Vec<u8>, PluginError> {
        let len = b
            .size()
            .map_err(|e| cl_err(format!("{what}: CL_MEM_SIZE"), e))?;
        let mut host = vec![0u8; len];
        // SAFETY: a blocking read of `len` bytes from a buffer of that size.
        unsafe {
            self.queue
                .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut host, &[])
        }
        .map_err(|e| cl_err(format!("{what}: reading a buffer back"), e))?;
        Ok(host)
    }

    /// The plan's input buffers, written from its host vectors.
    fn input_buffers(&self, plan: &Plan, what: &str) -> Result<Vec<Buffer<f32>>, PluginError> {
        let mut inputs = Vec::new();
        for (i, data) in plan.inputs.iter().enumerate() {
            // SAFETY: the buffer is created with the length of the host vector written into it,
            // from no host pointer.
            let mut b = unsafe {
                Buffer::<f32>::create(
                    &self.context,
                    CL_MEM_READ_ONLY,
                    data.len(),
                    ptr::null_mut::<c_void>(),
                )
            }
            .map_err(|e| {
                cl_err(
                    format!("{what}: input buffer {i} ({} floats)", data.len()),
                    e,
                )
            })?;
            // SAFETY: a blocking write of `data.len()` floats into a buffer of that length.
            unsafe {
                self.queue
                    .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, data, &[])
            }
            .map_err(|e| cl_err(format!("{what}: writing input {i}"), e))?;
            inputs.push(b);
        }
        Ok(inputs)
    }

    /// The plan's output buffers, filled with NaN: an element the kernel never writes fails the
    /// check.
    fn output_buffers(&self, plan: &Plan, what: &str) -> Result<Vec<Buffer<f32>>, PluginError> {
        let mut outputs = Vec::new();
        for (i, len) in plan.outputs.iter().enumerate() {
            // SAFETY: the buffer is created with the length the plan gives, from no host pointer.
            let mut b = unsafe {
                Buffer::<f32>::create(
                    &self.context,
                    CL_MEM_READ_WRITE,
                    *len,
                    ptr::null_mut::<c_void>(),
                )
            }
            .map_err(|e| cl_err(format!("{what}: output buffer {i} ({len} floats)"), e))?;
            let poison = vec![f32::NAN; *len];
            // SAFETY: a blocking write of `len` floats into a buffer of that length.
            unsafe {
                self.queue
                    .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, &poison, &[])
            }
            .map_err(|e| cl_err(format!("{what}: clearing output {i}"), e))?;
            outputs.push(b);
        }
        Ok(outputs)
    }

    /// The output buffers' contents.
    fn read_outputs(
        &self,
        plan: &Plan,
        outputs: &[Buffer<f32>],
        what: &str,
    ) -> Result<Vec<Vec<f32>>, PluginError> {
        let mut results = Vec::new();
        for (i, (b, len)) in outputs.iter().zip(&plan.outputs).enumerate() {
            let mut host = vec![0.0f32; *len];
            // SAFETY: a blocking read of `len` floats from a buffer of that length.
            unsafe {
                self.queue
                    .enqueue_read_buffer(b, CL_BLOCKING, 0, &mut host, &[])
            }
            .map_err(|e| cl_err(format!("{what}: reading output {i}"), e))?;
            results.push(host);
        }
        Ok(results)
    }
}

/// Whether the measured launches' coefficient of variation reached the target.
fn is_stable(launches: &[Launch], settings: &Settings) -> bool {
    let times: Vec<f64> = launches.iter().map(|l| l.device_ns as f64).collect();
    statistics(&times).3 <= settings.target_cv
}

/// Work counters as the record keeps them.
fn owned(counters: BTreeMap<&'static str, (f64, &'static str)>) -> BTreeMap<String, (f64, String)> {
    counters
        .into_iter()
        .map(|(k, (v, u))| (k.to_owned(), (v, u.to_owned())))
        .collect()
}

/// Sets the kernel's arguments in the plan's order.
fn set_arguments(
    k: &Kernel,
    plan: &Plan,
    inputs: &[Buffer<f32>],
    outputs: &[Buffer<f32>],
    what: &str,
) -> Result<(), PluginError> {
    for (index, arg) in plan.args.iter().enumerate() {
        // SAFETY: the arguments are set in the kernel's order with the types its signature
        // declares (buffers as cl_mem, int as cl_int), as the suite module for this kernel
        // states.
        let r = match arg {
            Arg::Input(i) => unsafe { k.set_arg(index as u32, &inputs[*i].get()) },
            Arg::Output(i) => unsafe { k.set_arg(index as u32, &outputs[*i].get()) },
            Arg::Int(v) => unsafe { k.set_arg(index as u32, &(*v as cl_int)) },
        };
        r.map_err(|e| cl_err(format!("{what}: kernel argument {index}"), e))?;
    }
    Ok(())
}

/// Sets a kernel file's arguments: buffers, scalars in their declared type, local memory.
fn set_declared_arguments(
    k: &Kernel,
    c: &Configuration,
    buffers: &[Option<Buffer<u8>>],
    what: &str,
) -> Result<(), PluginError> {
    for (index, arg) in c.args.iter().enumerate() {
        let r = match (arg, &buffers[index]) {
            // SAFETY: the kernel file's arguments were matched against the kernel's parameters
            // (a buffer for a pointer to global or constant memory), and their count against
            // CL_KERNEL_NUM_ARGS.
            (Argument::Buffer { .. }, Some(b)) => unsafe { k.set_arg(index as u32, &b.get()) },
            (Argument::Scalar { elem, value, .. }, _) => {
                let mut bytes = Vec::with_capacity(8);
                elem.push(*value, &mut bytes);
                // SAFETY: a value of the scalar's declared type, by its size in bytes.
                unsafe {
                    opencl3::kernel::set_kernel_arg(
                        k.get(),
                        index as u32,
                        bytes.len(),
                        bytes.as_ptr().cast::<c_void>(),
                    )
                }
                .map_err(opencl3::error_codes::ClError)
            }
            // SAFETY: a `__local` parameter, sized in bytes with no data.
            (Argument::Local { bytes, .. }, _) => unsafe {
                k.set_arg_local_buffer(index as u32, *bytes)
            },
            (Argument::Buffer { .. }, None) => Ok(()),
        };
        r.map_err(|e| {
            cl_err(
                format!("{what}: kernel argument {index} (`{}`)", arg.name()),
                e,
            )
        })?;
    }
    Ok(())
}

/// Launches of one configuration, each timed by its event (and the host clock around it).
#[derive(Clone, Copy)]
struct Launcher<'a> {
    queue: &'a CommandQueue,
    kernel: &'a Kernel,
    global: &'a [usize],
    /// None: the driver picks the work-group size.
    local: Option<&'a [usize]>,
    /// The configuration, as errors name it.
    what: &'a str,
    deadline: Instant,
}

impl Launcher<'_> {
    /// One launch, waited for, with its device time from the profiling timestamps.
    fn once(&self) -> Result<Launch, PluginError> {
        let what = self.what;
        let dims = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
        let started = Instant::now();
        // SAFETY: the kernel's arguments are all set, and the local size, when given, has the
        // global size's number of dimensions.
        let event = unsafe {
            self.queue.enqueue_nd_range_kernel(
                self.kernel.get(),
                self.global.len() as u32,
                ptr::null(),
                self.global.as_ptr(),
                self.local.map_or(ptr::null(), <[usize]>::as_ptr),
                &[],
            )
        }
        .map_err(|e| {
            cl_err(
                format!(
                    "{what}: the launch failed (global {}, local {})",
                    dims(self.global),
                    self.local
                        .map_or_else(|| "chosen by the driver".to_owned(), dims)
                ),
                e,
            )
        })?;
        event
            .wait()
            .map_err(|e| cl_err(format!("{what}: waiting for the launch"), e))?;
        let host_ns = started.elapsed().as_nanos() as u64;
        let start = event
            .profiling_command_start()
            .map_err(|e| cl_err(format!("{what}: CL_PROFILING_COMMAND_START"), e))?;
        let end = event
            .profiling_command_end()
            .map_err(|e| cl_err(format!("{what}: CL_PROFILING_COMMAND_END"), e))?;
        let submit = event.profiling_command_submit().ok();
        if end < start {
            return Err(PluginError::new(format!(
                "{what}: the driver's profiling timestamps run backwards (start {start} ns, end {end} ns)"
            )));
        }
        Ok(Launch {
            device_ns: end - start,
            host_ns,
            submit_to_start_ns: submit.map(|s| start as i64 - s as i64),
        })
    }

    /// Fails once the run is past its deadline, after `done` launches of this configuration.
    fn check_deadline(&self, done: usize) -> Result<(), PluginError> {
        if Instant::now() > self.deadline {
            return Err(PluginError::new(format!(
                "timeout: the run passed its `timeout_secs` during {} (after {done} launches of it); nothing was recorded",
                self.what
            )));
        }
        Ok(())
    }

    /// `settings.warmup` launches, then the measured ones.
    fn warmup_and_measured(
        &self,
        settings: &Settings,
    ) -> Result<(Vec<Launch>, Vec<Launch>), PluginError> {
        let mut warmup = Vec::with_capacity(settings.warmup);
        for i in 0..settings.warmup {
            self.check_deadline(i)?;
            warmup.push(self.once()?);
        }
        Ok((warmup, self.until_stable(settings)?))
    }

    /// The measured launches: at least `min_launches`, then until the device times' coefficient
    /// of variation reaches the target, `max_launches` or the time budget.
    fn until_stable(&self, settings: &Settings) -> Result<Vec<Launch>, PluginError> {
        let mut launches: Vec<Launch> = Vec::new();
        let budget = Duration::from_secs_f64(settings.max_secs_per_config);
        let measuring = Instant::now();
        loop {
            self.check_deadline(settings.warmup + launches.len())?;
            launches.push(self.once()?);
            let n = launches.len();
            if n < settings.min_launches {
                continue;
            }
            let times: Vec<f64> = launches.iter().map(|l| l.device_ns as f64).collect();
            let (_, _, _, cv) = statistics(&times);
            if cv <= settings.target_cv
                || n >= settings.max_launches
                || measuring.elapsed() >= budget
            {
                return Ok(launches);
            }
        }
    }
}
