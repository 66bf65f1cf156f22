//! `cuda`: measures an NVIDIA GPU itself through the CUDA driver API, its kernels compiled by
//! NVRTC (README.md).
//!
//! Collector `calibrate` runs the calibration's microbenchmarks ([`plan`]) on one GPU
//! ([`measure`]) and returns `kernel_timings` (one row per configuration: its test as the
//! variant, bytes, grid and FLOPs as parameters, the median, extremes and spread of its
//! samples) and `devices` (what the driver says of the GPU). `yosoku calibrate --backend cuda`
//! reads them and writes the device file. Collector `devices` lists the GPUs the driver sees
//! (nothing is launched).
//!
//! Both libraries are loaded at run time: the plugin builds without a CUDA toolkit and loads on
//! a machine without a driver, where a run fails with one error saying what is missing.

pub mod measure;
pub mod plan;

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};
use yosoku_profiler_import::devices::{DeviceRow, devices_batch};
use yosoku_profiler_import::timings::statistics;
use yosoku_tables::KERNEL_TIMINGS;

use crate::measure::{GpuInfo, Samples, WARMUP};

#[derive(Debug, Default)]
pub struct Cuda;

impl Plugin for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn description(&self) -> &'static str {
        "An NVIDIA GPU measured through the CUDA driver API and NVRTC: launch floor, DRAM and L2 bandwidth curves, FP32 rate, waves"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(Calibrate), Box::new(Devices)]
    }
}

export_plugin!(Cuda);

/// The program name of every calibration row.
pub const PROGRAM: &str = "cuda-calibration";

/// The most samples a configuration may ask for.
const MAX_REPEATS: i64 = 1000;

fn gpu_key(info: CollectorInfo) -> CollectorInfo {
    info.key(ConfigKey::optional(
        "gpu",
        ConfigType::Integer,
        Some(0.into()),
        "The GPU's ordinal, as the CUDA driver numbers them (CUDA_VISIBLE_DEVICES applies)",
    ))
}

fn ordinal(config: &Config) -> Result<usize, PluginError> {
    let g = config.integer("gpu")?;
    usize::try_from(g)
        .map_err(|_| PluginError::new(format!("gpu: expected 0 or a positive ordinal, found {g}")))
}

fn repeats(config: &Config) -> Result<usize, PluginError> {
    let r = config.integer("repeats")?;
    if !(1..=MAX_REPEATS).contains(&r) {
        return Err(PluginError::new(format!(
            "repeats: expected 1 to {MAX_REPEATS}, found {r}"
        )));
    }
    Ok(r as usize)
}

/// The `devices` row of a GPU.
pub fn device_row(g: &GpuInfo) -> DeviceRow {
    let mut description = vec![
        (
            "compute_capability".to_owned(),
            format!("{}.{}", g.compute_capability.0, g.compute_capability.1),
        ),
        ("ordinal".to_owned(), g.ordinal.to_string()),
    ];
    let mut more = |key: &str, v: Option<String>| {
        if let Some(v) = v {
            description.push((key.to_owned(), v));
        }
    };
    more(
        "memory_clock_mhz",
        g.memory_clock_mhz.map(|c| c.to_string()),
    );
    more("memory_bus_bits", g.memory_bus_bits.map(|b| b.to_string()));
    more(
        "max_threads_per_sm",
        (g.max_threads_per_sm > 0).then(|| g.max_threads_per_sm.to_string()),
    );
    more(
        "registers_per_sm",
        (g.registers_per_sm > 0).then(|| g.registers_per_sm.to_string()),
    );
    more(
        "shared_memory_per_sm_bytes",
        (g.shared_memory_per_sm_bytes > 0).then(|| g.shared_memory_per_sm_bytes.to_string()),
    );
    DeviceRow {
        device: g.name.clone(),
        vendor: Some("NVIDIA".to_owned()),
        platform: Some(format!("CUDA driver {}", g.driver_version)),
        driver_version: Some(g.driver_version.clone()),
        device_type: Some("gpu".to_owned()),
        compute_units: Some(g.sm_count as i64),
        clock_mhz: g.clock_mhz,
        global_memory_bytes: i64::try_from(g.memory_bytes).ok(),
        local_memory_bytes: None,
        l2_cache_bytes: i64::try_from(g.l2_bytes).ok(),
        max_work_group_size: Some(g.max_threads_per_block as i64),
        preferred_vector_widths: Vec::new(),
        memory_bandwidth_bytes_per_sec: None,
        description,
    }
}

/// Median, minimum, maximum, coefficient of variation.
type Statistics = (f64, f64, f64, f64);

/// The `kernel_timings` batch of a calibration: one row per configuration.
pub fn timings_batch(device: &str, samples: &[Samples]) -> Result<RecordBatch, PluginError> {
    let text = |f: &dyn Fn(usize, &Samples) -> String| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(
            samples.iter().enumerate().map(|(i, s)| f(i, s)),
        ))
    };
    let stats: Vec<_> = samples.iter().map(|s| statistics(&s.device_secs)).collect();
    let float = |f: &dyn Fn(&Statistics) -> f64| -> ArrayRef {
        Arc::new(Float64Array::from_iter_values(stats.iter().map(f)))
    };
    Ok(KERNEL_TIMINGS.batch(vec![
        text(&|i, _| format!("calibration-{i}")),
        text(&|_, _| device.to_owned()),
        text(&|_, _| PROGRAM.to_owned()),
        text(&|_, s| s.launch.test.to_owned()),
        text(&|_, s| s.launch.parameters()),
        Arc::new(Int64Array::from_iter_values(
            samples.iter().map(|s| s.device_secs.len() as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            samples.iter().map(|_| WARMUP as i64),
        )),
        float(&|s| s.0),
        float(&|s| s.1),
        float(&|s| s.2),
        float(&|s| s.3),
        Arc::new(Float64Array::from_iter_values(
            samples.iter().map(|s| statistics(&s.host_secs).0),
        )),
        // A fixed number of samples: no stopping rule to reach.
        Arc::new(BooleanArray::from_iter(samples.iter().map(|_| Some(true)))),
        text(&|_, _| "unchecked".to_owned()),
    ])?)
}

/// Runner: the calibration on one GPU.
struct Calibrate;

impl Collector for Calibrate {
    fn info(&self) -> CollectorInfo {
        gpu_key(CollectorInfo::runner(
            "calibrate",
            "The calibration's microbenchmarks on one GPU: an empty kernel alone and back to back, DRAM read, write and copy over 4 KiB to 1 GiB, a copy by 1 block to many waves, L2 reads, FP32 FMAs, a wave sweep",
        ))
        .key(ConfigKey::optional(
            "repeats",
            ConfigType::Integer,
            Some(20.into()),
            "Timed samples of each configuration, after two warm-up launches",
        ))
        .tables(&["kernel_timings", "devices"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        ordinal(config)?;
        repeats(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let (gpu, repeats) = (ordinal(config)?, repeats(config)?);
        measure::check_libraries(true)?;
        let ctx = measure::open(gpu)?;
        let info = measure::describe(&ctx)?;
        let launches = plan::plan(&info.plan_gpu());
        let samples = measure::run(&ctx, &info, &launches, repeats)?;
        out.push_batch("kernel_timings", timings_batch(&info.name, &samples)?)?;
        out.push_batch("devices", devices_batch(&[device_row(&info)])?)
    }
}

/// Runner: the GPUs the driver sees.
struct Devices;

impl Collector for Devices {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::runner(
            "devices",
            "The GPUs the CUDA driver sees, as it describes them (nothing is launched)",
        )
        .tables(&["devices"])
    }

    fn collect(&self, _config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let rows = (0..measure::gpu_count()?)
            .map(|g| measure::open(g).and_then(|ctx| measure::describe(&ctx)))
            .map(|info| info.map(|i| device_row(&i)))
            .collect::<Result<Vec<_>, _>>()?;
        out.push_batch("devices", devices_batch(&rows)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_calibrate_says_what_is_missing() {
        // This machine (CI, the development VM) has no CUDA driver; where one is, the check
        // passes and there is nothing to refuse.
        // SAFETY: only tries to open the library.
        if unsafe { cudarc::driver::sys::is_culib_present() } {
            return;
        }
        let e = measure::check_libraries(true).expect_err("no driver here");
        assert!(e.to_string().contains("no CUDA driver"), "{e}");
        let e = measure::gpu_count().expect_err("no driver here");
        assert!(e.to_string().contains("libcuda.so.1"), "{e}");
    }

    #[test]
    fn the_timings_carry_each_test_with_its_bytes_and_grid() {
        let launches = plan::plan(&plan::Gpu {
            sm_count: 4,
            l2_bytes: 4 << 20,
            memory_bytes: 8 << 30,
        });
        let samples: Vec<Samples> = launches
            .iter()
            .map(|l| Samples {
                launch: l.clone(),
                device_secs: vec![2e-6, 1e-6, 3e-6],
                host_secs: vec![5e-6; 3],
            })
            .collect();
        let b = timings_batch("GPU", &samples).expect("batch");
        assert_eq!(b.num_rows(), launches.len());
        let variant =
            yosoku_tables::access::utf8(&b, yosoku_tables::col::VARIANT).expect("variant");
        assert_eq!(variant.value(0), "empty");
        let median =
            yosoku_tables::access::float64(&b, yosoku_tables::col::MEDIAN_SECS).expect("median");
        assert_eq!(median.value(0), 2e-6);
    }
}
