//! A kernel's time on a GPU from physics first (docs/methods.md, section 6, "Physics first"):
//! the launch floor, plus the longer of the memory time and the compute time of its work over
//! the rates that bound it, plus its dependent steps; the rates from a calibration of the target
//! where it has one (`yosoku calibrate --backend cuda`), else from the catalogue.
//!
//! - **Floor**: `kernel_floor_us`, the empty kernel's own time as a profiler sees it; without a
//!   calibration, the catalogue's `launch_latency_us`.
//! - **Memory**: the longer of two bounds on the bytes moved (`moved_bytes` where the user gives
//!   them, for uncoalesced access; else the distinct DRAM bytes). Bandwidth: one DRAM round trip
//!   plus the bytes over the copy bandwidth. Latency: a thread has [`BYTES_IN_FLIGHT`] bytes in
//!   flight a round trip (the calibration's copy, whose one block moves 256 x 32 bytes a round
//!   trip: the round trip is that over the one block's bandwidth), so each wave of resident
//!   blocks (the occupancy limits: threads and blocks an SM) waits as many round trips as its
//!   threads' bytes need: a grid of a few blocks, or a grid of very many short ones, is
//!   latency-bound, not bandwidth-bound.
//! - **Block starts**: the blocks over the rate the GPU starts them (the calibration's
//!   `block_rate_per_us`), a bound of its own for grids of very many short blocks.
//! - **Compute**: FLOPs over the FP32 rate (the calibration's FMA rate, else the datasheet's
//!   peak) times the share of the GPU the grid occupies: fewer blocks than SMs leave SMs idle,
//!   and the last wave of a grid of several leaves some idle too.
//! - **Dependent steps** (`dependent_steps`, a loop of barrier-separated phases inside the
//!   launch, as in nw or pathfinder): each step after the first costs a barrier step (the
//!   calibration's `barrier_step_us`). Reads of DRAM a thread waits for one after another
//!   (`dram_round_trips`: reads separated by barriers, or after a store they may alias) each
//!   cost a round trip, wave by wave, in the memory's latency bound.
//!
//! No part is fitted: [`GpuPhysics`] is a model family whose "fit" reads each target's rates
//! from its device entry and saves them, so a bundle says which floor and bandwidths answered.

use serde::{Deserialize, Serialize};
use yosoku_devices::Device;

use super::gpu::{GpuSpec, LAUNCH_LATENCY_SECS};
use super::work::Work;
use crate::ModelError;
use crate::model::Model;

/// One DRAM round trip where no calibration measured it: the order of an HBM or GDDR GPU's
/// (400 to 600 ns); fixed, not fitted.
pub const DEFAULT_DRAM_LATENCY_SECS: f64 = 0.5e-6;
/// One barrier-separated step where no calibration measured it: about 100 cycles at 2 GHz;
/// fixed, not fitted.
pub const DEFAULT_BARRIER_STEP_SECS: f64 = 0.05e-6;
/// Resident threads and blocks an SM where the catalogue lacks the limits.
const DEFAULT_THREADS_PER_SM: f64 = 2048.0;
const DEFAULT_BLOCKS_PER_SM: f64 = 32.0;
/// Threads of the calibration's one-block copy.
const CALIBRATION_BLOCK_THREADS: f64 = 256.0;
/// Bytes one thread has in flight a DRAM round trip: the calibration's copy, a float4 read and
/// written.
pub const BYTES_IN_FLIGHT: f64 = 32.0;

/// Where a GPU's rates come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateSource {
    /// `yosoku calibrate --backend cuda` measured the floor, the bandwidths and the FP32 rate.
    Calibration,
    /// The catalogue's datasheet values and fixed defaults.
    Catalogue,
}

/// What bounds one GPU, in the units the model uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuRates {
    pub device: String,
    pub source: RateSource,
    pub floor_secs: f64,
    pub dram_latency_secs: f64,
    pub bandwidth_bytes_per_sec: f64,
    pub fp32_flops_per_sec: f64,
    pub sm_count: f64,
    pub threads_per_sm: f64,
    pub blocks_per_sm: f64,
    pub barrier_step_secs: f64,
    /// Blocks the GPU starts a second (`None`: not measured, no bound).
    pub block_rate_per_sec: Option<f64>,
}

impl GpuRates {
    /// The rates of a catalogue device: its calibration's where it has one (every one of
    /// `kernel_floor_us`, `dram_bandwidth_gb_per_sec`, `block_bandwidth_gb_per_sec` and
    /// `fp32_gflops` measured), else its datasheet's.
    pub fn from_device(device: &Device) -> Result<Self, ModelError> {
        let measured = |key: &str| device.measured.get(key).map(|v| v.value);
        let need = |key: &str| {
            device.spec(key).ok_or_else(|| {
                ModelError::invalid(format!(
                    "device `{}` ({}): the catalogue has no `{key}`, which the physics model needs",
                    device.name, device.file
                ))
            })
        };
        let sm_count = need("sm_count")?;
        let threads_per_sm = device
            .spec("max_threads_per_sm")
            .unwrap_or(DEFAULT_THREADS_PER_SM);
        let blocks_per_sm = device
            .spec("max_blocks_per_sm")
            .unwrap_or(DEFAULT_BLOCKS_PER_SM);
        let calibrated = (
            measured("kernel_floor_us"),
            measured("dram_bandwidth_gb_per_sec"),
            measured("block_bandwidth_gb_per_sec"),
            measured("fp32_gflops"),
        );
        if let (Some(floor_us), Some(bandwidth), Some(block), Some(gflops)) = calibrated {
            return Ok(Self {
                device: device.name.clone(),
                source: RateSource::Calibration,
                floor_secs: floor_us * 1e-6,
                dram_latency_secs: CALIBRATION_BLOCK_THREADS * BYTES_IN_FLIGHT / (block * 1e9),
                bandwidth_bytes_per_sec: bandwidth * 1e9,
                fp32_flops_per_sec: gflops * 1e9,
                sm_count,
                threads_per_sm,
                blocks_per_sm,
                barrier_step_secs: measured("barrier_step_us")
                    .map_or(DEFAULT_BARRIER_STEP_SECS, |us| us * 1e-6),
                block_rate_per_sec: measured("block_rate_per_us").map(|r| r * 1e6),
            });
        }
        Ok(Self {
            device: device.name.clone(),
            source: RateSource::Catalogue,
            floor_secs: need("launch_latency_us")? * 1e-6,
            dram_latency_secs: DEFAULT_DRAM_LATENCY_SECS,
            bandwidth_bytes_per_sec: need("dram_bandwidth_gb_per_sec")? * 1e9,
            fp32_flops_per_sec: need("fp32_peak_gflops")? * 1e9,
            sm_count,
            threads_per_sm,
            blocks_per_sm,
            barrier_step_secs: DEFAULT_BARRIER_STEP_SECS,
            block_rate_per_sec: None,
        })
    }
}

impl GpuRates {
    /// The rates of a GPU known by its catalogue row alone (as the transfer models read it):
    /// the datasheet's peaks, its launch latency (measured or published; else
    /// [`LAUNCH_LATENCY_SECS`]), its occupancy limits, and the fixed defaults.
    pub fn from_spec(gpu: &GpuSpec) -> Self {
        Self {
            device: gpu.name.clone(),
            source: RateSource::Catalogue,
            floor_secs: gpu.launch_latency_secs.unwrap_or(LAUNCH_LATENCY_SECS),
            dram_latency_secs: DEFAULT_DRAM_LATENCY_SECS,
            bandwidth_bytes_per_sec: gpu.bandwidth_bytes_per_sec(),
            fp32_flops_per_sec: gpu.fp32_peak_gflops * 1e9,
            sm_count: gpu.sm_count,
            threads_per_sm: gpu
                .occupancy
                .map_or(DEFAULT_THREADS_PER_SM, |o| o.max_threads_per_sm),
            blocks_per_sm: gpu
                .occupancy
                .map_or(DEFAULT_BLOCKS_PER_SM, |o| o.max_blocks_per_sm),
            barrier_step_secs: DEFAULT_BARRIER_STEP_SECS,
            block_rate_per_sec: None,
        }
    }
}

impl KernelWork {
    /// A measured launch's work as the transfer models read it, with none of the optional
    /// fields (nothing read off its code).
    pub fn from_work(work: &Work) -> Self {
        Self {
            blocks: work.blocks,
            threads_per_block: work.threads_per_block,
            flops: work.flops,
            dram_bytes: work.dram_bytes,
            moved_bytes: None,
            dependent_steps: 1.0,
            dram_round_trips: None,
        }
    }
}

/// What the physics model reads of a launch.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelWork {
    pub blocks: f64,
    pub threads_per_block: f64,
    pub flops: f64,
    /// Distinct bytes read and written in DRAM.
    pub dram_bytes: f64,
    /// Bytes actually moved where they differ from the distinct ones (uncoalesced access).
    pub moved_bytes: Option<f64>,
    /// Barrier-separated phases run one after another inside the launch (1: none).
    pub dependent_steps: f64,
    /// DRAM reads each thread waits for one after another (`None`: as many as its bytes need,
    /// [`BYTES_IN_FLIGHT`] a round trip).
    pub dram_round_trips: Option<f64>,
}

/// A launch's time and its parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicsTime {
    pub secs: f64,
    pub floor_secs: f64,
    pub memory_secs: f64,
    pub compute_secs: f64,
    pub block_starts_secs: f64,
    pub steps_secs: f64,
}

impl PhysicsTime {
    /// What bounds the launch: the largest part.
    pub fn bound(&self) -> &'static str {
        let parts = [
            ("launch floor", self.floor_secs),
            ("memory", self.memory_secs),
            ("compute", self.compute_secs),
            ("block starts", self.block_starts_secs),
            ("dependent steps", self.steps_secs),
        ];
        parts
            .iter()
            .fold(("launch floor", f64::MIN), |best, p| {
                if p.1 > best.1 { *p } else { best }
            })
            .0
    }
}

/// The launch's time on a GPU of `rates`.
pub fn physics_time(work: &KernelWork, rates: &GpuRates) -> PhysicsTime {
    let blocks = work.blocks.max(1.0);
    let threads_per_block = work.threads_per_block.max(1.0);
    // Blocks resident on one SM at once, and the waves of the grid.
    let resident_per_sm = rates
        .blocks_per_sm
        .min((rates.threads_per_sm / threads_per_block).floor())
        .max(1.0);
    let wave = rates.sm_count * resident_per_sm;
    let waves = (blocks / wave).ceil();
    let moved = work.moved_bytes.unwrap_or(work.dram_bytes).max(0.0);
    let memory_secs = if moved > 0.0 {
        let bandwidth = rates.dram_latency_secs + moved / rates.bandwidth_bytes_per_sec;
        let per_thread = moved / (blocks * threads_per_block);
        let round_trips = (per_thread / BYTES_IN_FLIGHT)
            .ceil()
            .max(work.dram_round_trips.unwrap_or(1.0))
            .max(1.0);
        bandwidth.max(waves * round_trips * rates.dram_latency_secs)
    } else {
        0.0
    };
    // The share of the GPU busy: SMs with a block, and the last wave's filled slots.
    let busy = if blocks < rates.sm_count {
        blocks / rates.sm_count
    } else {
        blocks / (waves * wave).max(blocks)
    };
    let compute_secs = work.flops.max(0.0) / (rates.fp32_flops_per_sec * busy.max(1e-9));
    let block_starts_secs = rates.block_rate_per_sec.map_or(0.0, |r| blocks / r);
    let steps_secs = (work.dependent_steps.max(1.0) - 1.0) * rates.barrier_step_secs;
    PhysicsTime {
        secs: rates.floor_secs + memory_secs.max(compute_secs).max(block_starts_secs) + steps_secs,
        floor_secs: rates.floor_secs,
        memory_secs,
        compute_secs,
        block_starts_secs,
        steps_secs,
    }
}

/// The baseline every GPU model is reported beside: the launch floor plus the distinct DRAM
/// bytes over the copy bandwidth.
pub fn floor_plus_bytes_secs(work: &KernelWork, rates: &GpuRates) -> f64 {
    rates.floor_secs + work.dram_bytes.max(0.0) / rates.bandwidth_bytes_per_sec
}

/// The physics model family: its fitted parameters are the rates of the GPUs it answers for,
/// read from their device entries (nothing learned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuPhysics {
    pub gpus: Vec<GpuRates>,
}

/// `GpuPhysics` has no options: every choice is in the device files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhysicsOptions {}

impl Model for GpuPhysics {
    const KIND: &'static str = "gpu_physics";
    type Options = PhysicsOptions;
    type Training<'a> = &'a [&'a Device];
    type Question<'a> = (&'a KernelWork, &'a str);
    type Answer = PhysicsTime;

    fn fit(devices: &[&Device], _options: &PhysicsOptions) -> Result<Self, ModelError> {
        Ok(Self {
            gpus: devices
                .iter()
                .map(|d| GpuRates::from_device(d))
                .collect::<Result<_, _>>()?,
        })
    }

    fn predict(&self, (work, device): (&KernelWork, &str)) -> Result<PhysicsTime, ModelError> {
        let rates = self
            .gpus
            .iter()
            .find(|g| g.device == device)
            .ok_or_else(|| {
                ModelError::invalid(format!(
                    "the physics model has no rates for `{device}` (it has {})",
                    self.gpus
                        .iter()
                        .map(|g| g.device.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        Ok(physics_time(work, rates))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> GpuRates {
        // The H200's calibration (pipelines/data/gpu-calibration/h200-cuda/calibration.toml),
        // rounded.
        GpuRates {
            device: "NVIDIA H200".into(),
            source: RateSource::Calibration,
            floor_secs: 1.5e-6,
            dram_latency_secs: 256.0 * 32.0 / 20.8e9,
            bandwidth_bytes_per_sec: 4.3e12,
            fp32_flops_per_sec: 58e12,
            sm_count: 132.0,
            threads_per_sm: 2048.0,
            blocks_per_sm: 32.0,
            barrier_step_secs: 0.05e-6,
            block_rate_per_sec: None,
        }
    }

    fn work(blocks: f64, threads: f64, flops: f64, bytes: f64) -> KernelWork {
        KernelWork {
            blocks,
            threads_per_block: threads,
            flops,
            dram_bytes: bytes,
            moved_bytes: None,
            dependent_steps: 1.0,
            dram_round_trips: None,
        }
    }

    #[test]
    fn a_large_copy_is_its_bytes_over_the_bandwidth() {
        let r = h200();
        let w = work(131072.0, 256.0, 0.0, 1073741824.0);
        let t = physics_time(&w, &r);
        assert_eq!(t.bound(), "memory");
        let expect = 1.5e-6 + r.dram_latency_secs + 1073741824.0 / 4.3e12;
        assert!((t.secs - expect).abs() < 1e-12);
        // The baseline is the same bar the round trip.
        assert!((floor_plus_bytes_secs(&w, &r) - (expect - r.dram_latency_secs)).abs() < 1e-12);
    }

    #[test]
    fn one_block_is_latency_bound_as_the_calibration_measured_it() {
        // The calibration's one-block copy of 256 MiB: 20.8 GB/s, not 4.3 TB/s.
        let r = h200();
        let t = physics_time(&work(1.0, 256.0, 0.0, 268435456.0), &r);
        let gb_per_sec = 268435456.0 / (t.secs - r.floor_secs) / 1e9;
        assert!((gb_per_sec - 20.8).abs() < 1e-9, "{gb_per_sec}");
        // A grid of very many one-element blocks waits a round trip a wave: 1024 waves of 32
        // blocks of 16 threads an SM.
        let t = physics_time(
            &work(
                132.0 * 32.0 * 1024.0,
                16.0,
                0.0,
                8.0 * 16.0 * 132.0 * 32.0 * 1024.0,
            ),
            &r,
        );
        assert!((t.memory_secs - 1024.0 * r.dram_latency_secs).abs() < 1e-12);
        // Given a rate of block starts, that bounds it too.
        let started = GpuRates {
            block_rate_per_sec: Some(1e9),
            ..r.clone()
        };
        let t = physics_time(&work(1e6, 32.0, 0.0, 0.0), &started);
        assert_eq!(t.bound(), "block starts");
        assert!((t.block_starts_secs - 1e-3).abs() < 1e-15);
    }

    #[test]
    fn idle_sms_and_the_last_wave_slow_the_compute() {
        let r = h200();
        let full = physics_time(&work(1056.0, 256.0, 1e9, 0.0), &r).compute_secs;
        let half_the_sms = physics_time(&work(66.0, 256.0, 1e9, 0.0), &r).compute_secs;
        assert!((half_the_sms / full - 2.0).abs() < 1e-9);
        // One block past a wave: two waves' slots for 1057 blocks.
        let tail = physics_time(&work(1057.0, 256.0, 1e9, 0.0), &r).compute_secs;
        assert!((tail / full - 2112.0 / 1057.0).abs() < 1e-9);
    }

    #[test]
    fn dependent_steps_and_uncoalesced_bytes_add_what_the_work_alone_misses() {
        let r = h200();
        let plain = work(4.0, 16.0, 0.0, 10624.0);
        let stepped = KernelWork {
            dependent_steps: 31.0,
            ..plain.clone()
        };
        let d = physics_time(&stepped, &r).secs - physics_time(&plain, &r).secs;
        assert!((d - 30.0 * 0.05e-6).abs() < 1e-15);
        // Three reads waited for one after another: three round trips in one wave (16 bytes a
        // thread need one).
        let chained = KernelWork {
            dram_round_trips: Some(3.0),
            ..work(4.0, 16.0, 0.0, 1024.0)
        };
        let t = physics_time(&chained, &r);
        assert!((t.memory_secs - 3.0 * r.dram_latency_secs).abs() < 1e-15);
        let scattered = KernelWork {
            moved_bytes: Some(8.0 * 10624.0),
            ..plain.clone()
        };
        assert!(physics_time(&scattered, &r).memory_secs > physics_time(&plain, &r).memory_secs);
    }

    #[test]
    fn the_model_saves_its_rates_and_answers_from_them() {
        let m = GpuPhysics { gpus: vec![h200()] };
        let back = GpuPhysics::from_json(&m.to_json().expect("json")).expect("read back");
        assert_eq!(back, m);
        let w = work(1.0, 32.0, 0.0, 4096.0);
        assert_eq!(
            back.predict((&w, "NVIDIA H200")).expect("answer"),
            physics_time(&w, &h200())
        );
        let e = back.predict((&w, "NVIDIA H100")).expect_err("no rates");
        assert!(e.to_string().contains("no rates for `NVIDIA H100`"), "{e}");
    }

    #[test]
    fn a_calibrated_catalogue_entry_gives_calibrated_rates() {
        // The H200's calibration, compiled in (this crate does no I/O).
        let text = include_str!(
            "../../../../../pipelines/data/gpu-calibration/h200-cuda/calibration.toml"
        );
        let d = yosoku_devices::parse(text, "calibration.toml").expect("a device file");
        let r = GpuRates::from_device(&d).expect("rates");
        assert_eq!(r.source, RateSource::Calibration);
        assert!(
            r.floor_secs > 1e-6 && r.floor_secs < 2e-6,
            "{}",
            r.floor_secs
        );
        // The built-in H200 has no calibration: datasheet and fixed defaults.
        let built_in = yosoku_devices::Catalogue::built_in().expect("catalogue");
        let d = built_in.find("H200").expect("H200");
        let r = GpuRates::from_device(d).expect("rates");
        assert_eq!(r.source, RateSource::Catalogue);
        assert_eq!(r.floor_secs, 2.4e-6);
        assert_eq!(r.bandwidth_bytes_per_sec, 4.8e12);
    }
}
