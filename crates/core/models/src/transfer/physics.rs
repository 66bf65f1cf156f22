//! A kernel's time on a GPU from physics first (docs/methods.md, section 6, "Physics first"):
//! the launch floor, plus the longer of the memory time and the compute time of its work over
//! the rates that bound it, plus its dependent steps; the rates from a calibration of the target
//! where it has one (`yosoku calibrate --backend cuda`), else from the catalogue.
//!
//! - **Floor**: `kernel_floor_us`, the empty kernel's own time as a profiler sees it; without a
//!   calibration, the catalogue's `launch_latency_us`, else [`LAUNCH_LATENCY_SECS`] (5 us, the
//!   order of a launch as the host submits it).
//! - **Memory**: the longer of two bounds on the bytes moved (`moved_bytes` where the user gives
//!   them, for uncoalesced access; else the distinct DRAM bytes). Bandwidth: one DRAM round trip
//!   plus the bytes over the copy bandwidth. Latency: a thread has [`BYTES_IN_FLIGHT`] bytes in
//!   flight a round trip (the calibration's copy, whose one block moves 256 x 32 bytes a round
//!   trip: the round trip is that over the one block's bandwidth), so each wave of resident
//!   blocks (the occupancy limits: threads and blocks an SM, and registers and shared memory
//!   where a profile gives the launch's) waits as many round trips as its threads' bytes need: a grid of a few blocks, or a grid of very many short ones, is
//!   latency-bound, not bandwidth-bound.
//! - **Block starts**: the blocks over the rate the GPU starts them (the calibration's
//!   `block_rate_per_us`), a bound of its own for grids of very many short blocks.
//! - **Compute**: FLOPs over the FP32 rate (the calibration's FMA rate, else the datasheet's
//!   peak) times the share of the GPU the grid occupies: fewer blocks than SMs leave SMs idle,
//!   and the last wave of a grid of several leaves some idle too.
//! - **Instruction issue** (where a profile counted the launch's warp instructions): the warp
//!   instructions over the rate the SMs issue them ([`WARP_SCHEDULERS_PER_SM`] a cycle at the
//!   clock) times the share of the GPU the grid occupies, as for compute.
//! - **L2** (where a profile counted the launch's L2 transactions and the target's calibration
//!   measured its L2 bandwidth): the L2 bytes over that bandwidth.
//! - **SM cycles** (where a profile counted the cycles its SMs were active, summed over the SMs):
//!   those cycles over the target's SMs that have a block, at its clock —
//!   the issue bound at the rate the profile achieved instead of the peak's four a cycle, so
//!   that dependency and latency stalls the work cannot show are priced. It assumes a block
//!   needs as many cycles on the target as on the profiled GPU (so it over-prices a
//!   memory-bound launch moved to faster memory; the memory bound prices that launch already).
//!   The span holds the part of the floor in which the SMs work, so it is added to the floor's
//!   idle part only ([`IDLE_FLOOR_SECS`]), and the launch takes the longer of that and the floor
//!   plus the other bounds.
//! - **Achieved occupancy** (where a profile measured it): the share of the warps the launch
//!   could have had resident on the profiled GPU that it had on average (tails, imbalance,
//!   launch ramp) scales the blocks resident on the target in the memory's latency bound.
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
use crate::curve::BandwidthCurve;
use crate::model::Model;

/// The part of a launch in which no SM is active (the GPU receiving it, starting its grid and
/// ending it), where a profile's SM active cycles price the rest: the floor where a calibration
/// measured it (an empty kernel's time on the GPU, nearly all of it this part), else this: the
/// order of the one yosoku measured, an H200's `kernel_floor_us` of 1.44 to 1.60 us; fixed, not
/// fitted. The catalogue's launch latency (and the 5 us default) is a launch as the host submits
/// it, larger: a short launch's profiled time is mostly its SMs' active span.
pub const IDLE_FLOOR_SECS: f64 = 1.5e-6;
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
/// Warp schedulers an SM, each issuing one warp instruction a cycle: every NVIDIA architecture
/// since Kepler (Kepler's dual issue is not counted: the bound is the usual rate).
pub const WARP_SCHEDULERS_PER_SM: f64 = 4.0;
/// Bytes of one L2 transaction (a 32-byte sector; nvprof's and ncu's L2 counters count them).
pub const L2_TRANSACTION_BYTES: f64 = 32.0;
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
    /// Warp instructions the SMs issue a second: SMs x [`WARP_SCHEDULERS_PER_SM`] x the clock
    /// (`None`: no clock in the catalogue, no bound).
    #[serde(default)]
    pub issue_rate_per_sec: Option<f64>,
    /// L2 bytes a second, as the calibration measured them (`None`: not measured, no bound).
    #[serde(default)]
    pub l2_bandwidth_bytes_per_sec: Option<f64>,
    /// Registers and shared-memory bytes an SM, the occupancy limits beside threads and blocks
    /// (`None`: not in the catalogue, no limit).
    #[serde(default)]
    pub registers_per_sm: Option<f64>,
    #[serde(default)]
    pub shared_memory_per_sm_bytes: Option<f64>,
    /// The calibration's copy over sizes: (bytes read and written, the kernel's seconds, its
    /// floor in them), bytes rising (`None`: not measured).
    #[serde(default)]
    pub copy_secs_by_bytes: Option<Vec<(f64, f64)>>,
    /// The calibration's grid sweep: (blocks of [`CALIBRATION_BLOCK_THREADS`] threads, the
    /// copy's bytes a second), blocks rising (`None`: not measured).
    #[serde(default)]
    pub copy_bandwidth_by_blocks: Option<Vec<(f64, f64)>>,
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
        let registers_per_sm = device.spec("registers_per_sm");
        let shared_memory_per_sm_bytes = device.spec("shared_memory_per_sm_bytes");
        let issue_rate_per_sec = device
            .spec("boost_clock_mhz")
            .or(device.spec("base_clock_mhz"))
            .map(|mhz| sm_count * WARP_SCHEDULERS_PER_SM * mhz * 1e6);
        let calibrated = (
            measured("kernel_floor_us"),
            measured("dram_bandwidth_gb_per_sec"),
            measured("block_bandwidth_gb_per_sec"),
            measured("fp32_gflops"),
        );
        let curve = |key: &str, scale: f64| {
            device.measured_curves.get(key).map(|c| {
                c.x.iter()
                    .zip(&c.y)
                    .map(|(x, y)| (*x, y * scale))
                    .collect::<Vec<_>>()
            })
        };
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
                issue_rate_per_sec,
                l2_bandwidth_bytes_per_sec: measured("l2_bandwidth_gb_per_sec").map(|g| g * 1e9),
                registers_per_sm,
                shared_memory_per_sm_bytes,
                copy_secs_by_bytes: curve("dram_copy_us_by_bytes", 1e-6),
                copy_bandwidth_by_blocks: curve("copy_gb_per_sec_by_blocks", 1e9),
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
            issue_rate_per_sec,
            l2_bandwidth_bytes_per_sec: None,
            registers_per_sm,
            shared_memory_per_sm_bytes,
            copy_secs_by_bytes: None,
            copy_bandwidth_by_blocks: None,
        })
    }
}

impl GpuRates {
    /// The rates of `device` (whose catalogue row `spec` was read from it): its calibration's,
    /// or its datasheet's where it has all the physics model needs, else those of its catalogue
    /// row alone ([`GpuRates::from_spec`]: the default launch floor where the row has none).
    pub fn from_device_or_spec(device: &Device, spec: &GpuSpec) -> Self {
        Self::from_device(device).unwrap_or_else(|_| Self::from_spec(spec))
    }

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
            issue_rate_per_sec: Some(gpu.sm_count * WARP_SCHEDULERS_PER_SM * gpu.clock_mhz * 1e6),
            l2_bandwidth_bytes_per_sec: None,
            registers_per_sm: gpu.occupancy.map(|o| o.registers_per_sm),
            shared_memory_per_sm_bytes: gpu.occupancy.map(|o| o.shared_memory_per_sm_bytes),
            copy_secs_by_bytes: None,
            copy_bandwidth_by_blocks: None,
        }
    }
}

impl KernelWork {
    /// A launch known by its grid and work alone: none of the optional fields, nothing a
    /// profiler counted.
    pub fn of_work_alone(blocks: f64, threads_per_block: f64, flops: f64, dram_bytes: f64) -> Self {
        Self {
            blocks,
            threads_per_block,
            flops,
            dram_bytes,
            moved_bytes: None,
            dependent_steps: 1.0,
            dram_round_trips: None,
            warp_instructions: None,
            l2_bytes: None,
            registers_per_thread: None,
            shared_bytes_per_block: None,
            sm_active_cycles: None,
            occupancy_share: None,
        }
    }

    /// A measured launch's work as the transfer models read it, with none of the optional
    /// fields (nothing read off its code); its warp instructions and L2 bytes where the profile
    /// counted them.
    pub fn from_work(work: &Work) -> Self {
        let counted = |v: f64| (v.is_finite() && v > 0.0).then_some(v);
        Self {
            blocks: work.blocks,
            threads_per_block: work.threads_per_block,
            flops: work.flops,
            dram_bytes: work.dram_bytes,
            moved_bytes: None,
            dependent_steps: 1.0,
            dram_round_trips: None,
            warp_instructions: counted(work.warp_instructions),
            l2_bytes: counted(work.l2_transactions * L2_TRANSACTION_BYTES),
            registers_per_thread: counted(work.registers_per_thread),
            shared_bytes_per_block: counted(work.shared_bytes_per_block),
            sm_active_cycles: counted(work.active_cycles),
            occupancy_share: counted(work.occupancy_share).map(|s| s.min(1.0)),
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
    /// Warp instructions executed, where a profile counted them.
    pub warp_instructions: Option<f64>,
    /// Bytes read and written in L2, where a profile counted them.
    pub l2_bytes: Option<f64>,
    /// Registers a thread and shared memory a block, where a profile gives them: with the
    /// target's registers and shared memory an SM, they limit the blocks resident at once.
    pub registers_per_thread: Option<f64>,
    pub shared_bytes_per_block: Option<f64>,
    /// Cycles the SMs had an active warp, summed over the SMs, where a profile counted them.
    pub sm_active_cycles: Option<f64>,
    /// The achieved share of the warps the launch could have had resident, where a profile
    /// measured its achieved occupancy ([`occupancy_share`]), in (0, 1].
    pub occupancy_share: Option<f64>,
}

/// A launch's time and its parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhysicsTime {
    pub secs: f64,
    pub floor_secs: f64,
    pub memory_secs: f64,
    pub compute_secs: f64,
    pub block_starts_secs: f64,
    /// The warp instructions over the issue rate (0 where not counted).
    pub issue_secs: f64,
    /// The L2 bytes over the L2 bandwidth (0 where either is unknown).
    pub l2_secs: f64,
    /// The profile's SM cycles at the target's SMs and clock (0 where not counted).
    pub sm_cycles_secs: f64,
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
            ("instruction issue", self.issue_secs),
            ("L2", self.l2_secs),
            ("SM cycles", self.sm_cycles_secs),
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

/// Blocks of `work` resident on one SM of `rates` at once, as the limits allow: threads and
/// blocks an SM, and where both are known registers (allocated per warp in units of 256) and
/// shared memory (in units of 256 bytes); at least one.
pub fn resident_blocks_per_sm(work: &KernelWork, rates: &GpuRates) -> f64 {
    let threads_per_block = work.threads_per_block.max(1.0);
    let warps = (threads_per_block / 32.0).ceil();
    let by_registers = match (work.registers_per_thread, rates.registers_per_sm) {
        (Some(r), Some(sm)) => (sm / ((r * 32.0 / 256.0).ceil() * 256.0 * warps)).floor(),
        _ => f64::INFINITY,
    };
    let by_shared = match (
        work.shared_bytes_per_block,
        rates.shared_memory_per_sm_bytes,
    ) {
        (Some(b), Some(sm)) => (sm / ((b / 256.0).ceil() * 256.0)).floor(),
        _ => f64::INFINITY,
    };
    rates
        .blocks_per_sm
        .min((rates.threads_per_sm / threads_per_block).floor())
        .min(by_registers)
        .min(by_shared)
        .max(1.0)
}

/// The share of the warps `work` could have had resident on an SM of `measured_on` that a
/// profile's `achieved_occupancy` (active warps an active cycle over the SM's maximum) says it
/// had: the resident blocks the limits allow, or the grid's blocks an SM where it has fewer,
/// are the possible warps. In (0, 1]; `None` where the occupancy is not a positive number.
pub fn occupancy_share(
    achieved_occupancy: f64,
    work: &KernelWork,
    measured_on: &GpuRates,
) -> Option<f64> {
    if !(achieved_occupancy > 0.0 && achieved_occupancy.is_finite()) {
        return None;
    }
    let warps_per_block = (work.threads_per_block.max(1.0) / 32.0).ceil();
    let blocks_per_sm = (work.blocks.max(1.0) / measured_on.sm_count)
        .min(resident_blocks_per_sm(work, measured_on));
    let possible = blocks_per_sm * warps_per_block;
    let achieved = achieved_occupancy * measured_on.threads_per_sm / 32.0;
    Some((achieved / possible).min(1.0))
}

/// The launch's time on a GPU of `rates`.
pub fn physics_time(work: &KernelWork, rates: &GpuRates) -> PhysicsTime {
    let blocks = work.blocks.max(1.0);
    let threads_per_block = work.threads_per_block.max(1.0);
    // Blocks resident on one SM at once and the waves of the grid: as the limits allow (the
    // share of the GPU busy), and on average where a profile says what share of the possible
    // the launch achieved (the waves of round trips the memory's latency bound counts).
    let resident_per_sm = resident_blocks_per_sm(work, rates);
    let wave = rates.sm_count * resident_per_sm;
    let waves = (blocks / wave).ceil();
    let achieved_waves = match work.occupancy_share {
        Some(share) => (blocks / (rates.sm_count * (resident_per_sm * share).max(1.0))).ceil(),
        None => waves,
    };
    let moved = work.moved_bytes.unwrap_or(work.dram_bytes).max(0.0);
    let memory_secs = if moved > 0.0 {
        let bandwidth = rates.dram_latency_secs + moved / rates.bandwidth_bytes_per_sec;
        let per_thread = moved / (blocks * threads_per_block);
        let round_trips = (per_thread / BYTES_IN_FLIGHT)
            .ceil()
            .max(work.dram_round_trips.unwrap_or(1.0))
            .max(1.0);
        // A grid of one wave or less, in blocks of the calibration's size: what the grid
        // sweep measured (a wave of blocks that each loop over their share of the bytes).
        let one_wave =
            (blocks <= wave).then(|| blocks * threads_per_block / CALIBRATION_BLOCK_THREADS);
        bandwidth
            .max(achieved_waves * round_trips * rates.dram_latency_secs)
            .max(measured_copy_secs(moved, one_wave, rates))
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
    let issue_secs = match (work.warp_instructions, rates.issue_rate_per_sec) {
        (Some(instructions), Some(rate)) => instructions / (rate * busy.max(1e-9)),
        _ => 0.0,
    };
    let l2_secs = match (work.l2_bytes, rates.l2_bandwidth_bytes_per_sec) {
        (Some(bytes), Some(bandwidth)) => bytes / bandwidth,
        _ => 0.0,
    };
    // The profile's SM cycles over the SMs with a block (a cycle counts once however many
    // blocks an SM holds), at the clock: the issue rate over the schedulers an SM.
    let sms_with_work = (blocks / rates.sm_count).min(1.0);
    let sm_cycles_secs = match (work.sm_active_cycles, rates.issue_rate_per_sec) {
        (Some(cycles), Some(rate)) => cycles / (rate / WARP_SCHEDULERS_PER_SM * sms_with_work),
        _ => 0.0,
    };
    let steps_secs = (work.dependent_steps.max(1.0) - 1.0) * rates.barrier_step_secs;
    let work_secs = [compute_secs, block_starts_secs, issue_secs, l2_secs]
        .into_iter()
        .fold(memory_secs, f64::max);
    // The SMs' active span a profile counted already holds the part of the floor in which the
    // SMs work: it adds only the part no SM is active in, at most a device-side floor (where
    // the floor is a calibration's, that floor itself; a catalogue's launch latency is the
    // host's, larger).
    let idle_floor_secs = rates.floor_secs.min(IDLE_FLOOR_SECS);
    let secs = (rates.floor_secs + work_secs).max(if sm_cycles_secs > 0.0 {
        idle_floor_secs + sm_cycles_secs
    } else {
        0.0
    });
    PhysicsTime {
        secs: secs + steps_secs,
        floor_secs: rates.floor_secs,
        memory_secs,
        compute_secs,
        block_starts_secs,
        issue_secs,
        l2_secs,
        sm_cycles_secs,
        steps_secs,
    }
}

/// The memory time the calibration's own curves give `moved` bytes (read and written): the copy
/// of as many bytes, its floor taken off ([`BandwidthCurve::transfer_time`]: linear in time
/// between the sizes it measured, which is exact for a round trip plus the bytes over a
/// bandwidth; below the smallest, the smallest's time: a launch that touches DRAM waits at least
/// that; above the largest, at the largest's bandwidth); and, for a grid of one wave or less
/// (`one_wave`: its blocks in blocks of [`CALIBRATION_BLOCK_THREADS`] threads), the bytes over
/// the bandwidth the grid sweep measured with as many blocks (in log-log between its block
/// counts, bandwidth growing with the blocks in flight; below its fewest, in proportion to the
/// threads; above its most, the most's). 0 where the rates have no curves: the other bounds
/// answer alone.
fn measured_copy_secs(moved: f64, one_wave: Option<f64>, rates: &GpuRates) -> f64 {
    let stream = measured_curve(&rates.copy_secs_by_bytes)
        .and_then(|c| BandwidthCurve::new(c.iter().map(|&(b, s)| (b, b / s)).collect()).ok())
        .map_or(0.0, |curve| {
            let smallest = curve.points()[0].0;
            (curve.transfer_time(moved.max(smallest)).secs - rates.floor_secs).max(0.0)
        });
    let grid = match (measured_curve(&rates.copy_bandwidth_by_blocks), one_wave) {
        (Some(curve), Some(at_once)) => {
            let (fewest, rate) = curve[0];
            let bandwidth = if at_once < fewest {
                rate * at_once / fewest
            } else {
                log_log(curve, at_once)
            };
            moved / bandwidth
        }
        _ => 0.0,
    };
    stream.max(grid)
}

/// A curve the rates hold, where it has a point.
fn measured_curve(curve: &Option<Vec<(f64, f64)>>) -> Option<&[(f64, f64)]> {
    curve.as_deref().filter(|c| !c.is_empty())
}

/// `curve` (x rising, at least one point, every value positive) at `x`, interpolated between
/// its points in log x and log y; its first point's value below them, its last's above.
fn log_log(curve: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (curve[0], curve[curve.len() - 1]);
    if x <= first.0 {
        return first.1;
    }
    if x >= last.0 {
        return last.1;
    }
    let i = curve.partition_point(|p| p.0 <= x);
    let ((x0, y0), (x1, y1)) = (curve[i - 1], curve[i]);
    let t = (x / x0).ln() / (x1 / x0).ln();
    (y0.ln() + t * (y1 / y0).ln()).exp()
}

/// `measured_secs`, the launch's time on a GPU of `measured_on`, carried to a GPU of `target` by
/// the physics model's ratio of the launch's times on the two (`physics_scaled`, nothing fitted):
/// whatever bounds the launch on each (memory, compute, issue, latency) sets the ratio. NaN where
/// either physics time is not a positive number.
pub fn physics_scaled_secs(
    measured_secs: f64,
    work: &KernelWork,
    measured_on: &GpuRates,
    target: &GpuRates,
) -> f64 {
    let (to, from) = (
        physics_time(work, target).secs,
        physics_time(work, measured_on).secs,
    );
    if to > 0.0 && from > 0.0 {
        measured_secs * to / from
    } else {
        f64::NAN
    }
}

/// The physics time of a launch's profile `work` on `gpu`, over the GPU's catalogue rates
/// ([`GpuRates::from_spec`]): what the learned corrections and the transfer ridge's physics base
/// are measured against.
pub fn catalogue_physics_secs(work: &Work, gpu: &GpuSpec) -> f64 {
    physics_time(&KernelWork::from_work(work), &GpuRates::from_spec(gpu)).secs
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
            issue_rate_per_sec: Some(132.0 * 4.0 * 1.98e9),
            l2_bandwidth_bytes_per_sec: Some(7.4e12),
            registers_per_sm: Some(65536.0),
            shared_memory_per_sm_bytes: Some(228.0 * 1024.0),
            copy_secs_by_bytes: None,
            copy_bandwidth_by_blocks: None,
        }
    }

    /// Where the calibration measured its copy over sizes and over grids, a launch that moves
    /// as many bytes takes what the copy took (the ramp from one round trip to the bandwidth that
    /// one round trip plus the bytes over the bandwidth misses), and a grid of one wave or less
    /// the bandwidth the grid sweep measured with as many blocks; a grid of several waves is
    /// not held to the grid sweep's (looping) blocks.
    #[test]
    fn a_calibrations_curves_price_the_sizes_and_grids_it_measured() {
        let curved = GpuRates {
            copy_secs_by_bytes: Some(vec![(4096.0, 2.0e-6), (1048576.0, 2.5e-6), (1e9, 250e-6)]),
            copy_bandwidth_by_blocks: Some(vec![(1.0, 20e9), (128.0, 1.86e12), (1024.0, 4.0e12)]),
            ..h200()
        };
        // 1 MiB, a float4 per thread: the copy's 2.5 us, against 2.14 us without the curve.
        let mib = work(256.0, 256.0, 0.0, 1048576.0);
        assert!((physics_time(&mib, &curved).secs - 2.5e-6).abs() < 1e-15);
        let plain = physics_time(&mib, &h200()).secs;
        assert!((plain - (1.5e-6 + h200().dram_latency_secs + 1048576.0 / 4.3e12)).abs() < 1e-15);
        // Between two sizes, linear in time; below the smallest, the smallest's.
        let between = physics_time(&work(256.0, 256.0, 0.0, 65536.0), &curved).secs;
        let expect = 2.0e-6 + 0.5e-6 * (65536.0 - 4096.0) / (1048576.0 - 4096.0);
        assert!((between - expect).abs() < 1e-15, "{between} {expect}");
        let tiny = physics_time(&work(1.0, 32.0, 0.0, 128.0), &curved).secs;
        assert!((tiny - 2.0e-6).abs() < 1e-15, "{tiny}");
        // Beyond the largest, at the largest's bandwidth.
        let big = physics_time(&work(1e6, 256.0, 0.0, 2e9), &curved).secs;
        assert!((big - 2.0 * 250e-6).abs() < 1e-12, "{big}");
        // 128 blocks looping over 256 MiB: the grid sweep's 1.86 TB/s.
        let looping = physics_time(&work(128.0, 256.0, 0.0, 268435456.0), &curved);
        assert!((looping.memory_secs - 268435456.0 / 1.86e12).abs() < 1e-12);
        // Half a block of 256 threads: half of one block's bandwidth.
        let half = physics_time(&work(1.0, 128.0, 0.0, 1e6), &curved);
        assert!((half.memory_secs - 1e6 / 10e9).abs() < 1e-12);
        // Many waves of short blocks: the bandwidth, not the grid sweep's.
        let waves = physics_time(&work(65536.0, 256.0, 0.0, 268435456.0), &curved);
        let expect = 2.5e-6 + 247.5e-6 * (268435456.0 - 1048576.0) / (1e9 - 1048576.0) - 1.5e-6;
        assert!(
            (waves.memory_secs - expect).abs() < 1e-12,
            "{}",
            waves.memory_secs
        );
    }

    fn work(blocks: f64, threads: f64, flops: f64, bytes: f64) -> KernelWork {
        KernelWork::of_work_alone(blocks, threads, flops, bytes)
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
    fn counted_instructions_and_l2_bytes_bound_the_launch_where_a_profile_has_them() {
        let r = h200();
        // 1,056 blocks (one wave) issuing 1e9 warp instructions: 1e9 / (132 x 4 x 1.98 GHz).
        let busy = KernelWork {
            warp_instructions: Some(1e9),
            ..work(1056.0, 256.0, 0.0, 1e6)
        };
        let t = physics_time(&busy, &r);
        assert_eq!(t.bound(), "instruction issue");
        assert!((t.issue_secs - 1e9 / (132.0 * 4.0 * 1.98e9)).abs() < 1e-15);
        assert!((t.secs - (r.floor_secs + t.issue_secs)).abs() < 1e-15);
        // Half the SMs with a block: twice as long.
        let half = KernelWork {
            warp_instructions: Some(1e9),
            ..work(66.0, 256.0, 0.0, 1e6)
        };
        assert!((physics_time(&half, &r).issue_secs / t.issue_secs - 2.0).abs() < 1e-9);
        // 74 GB read from L2 (a tiled kernel re-reading its tiles) at 7.4 TB/s: 10 ms, where
        // its 1 GB of DRAM takes a quarter of that.
        let tiled = KernelWork {
            l2_bytes: Some(74e9),
            ..work(1056.0, 256.0, 0.0, 1e9)
        };
        let t = physics_time(&tiled, &r);
        assert_eq!(t.bound(), "L2");
        assert!((t.l2_secs - 0.01).abs() < 1e-12);
        // Without an L2 bandwidth (the catalogue's rates), no L2 bound; without a count, none.
        let catalogue = GpuRates {
            l2_bandwidth_bytes_per_sec: None,
            issue_rate_per_sec: None,
            ..r.clone()
        };
        assert_eq!(physics_time(&tiled, &catalogue).bound(), "memory");
        assert_eq!(physics_time(&busy, &catalogue).issue_secs, 0.0);
        assert_eq!(
            physics_time(&work(1056.0, 256.0, 0.0, 1e9), &r),
            physics_time(&work(1056.0, 256.0, 0.0, 1e9), &catalogue)
        );
    }

    #[test]
    fn registers_and_shared_memory_a_profile_gives_limit_the_blocks_resident() {
        let r = h200();
        // One wave of 8 blocks of 256 threads an SM (by threads), 8 bytes a thread: one round
        // trip a wave, so its bytes over the bandwidth bound it.
        let grid = work(132.0 * 8.0, 256.0, 0.0, 132.0 * 8.0 * 256.0 * 8.0);
        let t = physics_time(&grid, &r);
        let bandwidth = r.dram_latency_secs + grid.dram_bytes / r.bandwidth_bytes_per_sec;
        assert!((t.memory_secs - bandwidth).abs() < 1e-15);
        // 128 registers a thread allow 2 blocks an SM (65,536 / (128 x 32 x 8 warps)), 100 KB
        // of shared memory a block 2 (228 KB / 100 KB): 4 waves, a round trip each.
        let registers = KernelWork {
            registers_per_thread: Some(128.0),
            ..grid.clone()
        };
        let shared = KernelWork {
            shared_bytes_per_block: Some(100.0 * 1024.0),
            ..grid.clone()
        };
        for limited in [&registers, &shared] {
            let t = physics_time(limited, &r);
            assert!((t.memory_secs - 4.0 * r.dram_latency_secs).abs() < 1e-15);
        }
        // Without the target's limits, none.
        let unlimited = GpuRates {
            registers_per_sm: None,
            shared_memory_per_sm_bytes: None,
            ..r.clone()
        };
        assert_eq!(
            physics_time(&registers, &unlimited),
            physics_time(&grid, &unlimited)
        );
    }

    #[test]
    fn counted_sm_cycles_are_priced_at_the_targets_sms_and_clock() {
        let r = h200();
        // 1,056 blocks (one wave, every SM busy) whose SMs were active 1e9 cycles in all: 1e9
        // cycles over 132 SMs at 1.98 GHz, above the same launch's 1e8 warp instructions at
        // the peak's four a cycle.
        let stalled = KernelWork {
            warp_instructions: Some(1e8),
            sm_active_cycles: Some(1e9),
            ..work(1056.0, 256.0, 0.0, 1e6)
        };
        let t = physics_time(&stalled, &r);
        assert_eq!(t.bound(), "SM cycles");
        assert!((t.sm_cycles_secs - 1e9 / (132.0 * 1.98e9)).abs() < 1e-15);
        assert!(t.sm_cycles_secs > t.issue_secs);
        // A grid of 33 blocks: each block's cycles on an SM of its own, four times as long.
        let few = KernelWork {
            sm_active_cycles: Some(1e9),
            ..work(33.0, 256.0, 0.0, 1e6)
        };
        assert!((physics_time(&few, &r).sm_cycles_secs / t.sm_cycles_secs - 4.0).abs() < 1e-9);
        // 510 blocks of 16 threads fill a few of each SM's 32 slots, and every SM has work: the
        // cycles are spread over all 132 SMs, not over the slots (the H200's own ncu profile of
        // Rodinia's needle_cuda_shared_2 at 8,192: 1.66e6 cycles, 8.1 us measured, 1.44 us of it
        // the floor; pipelines/data/gpu-measured/h200-counters).
        let needle = KernelWork {
            sm_active_cycles: Some(1_662_584.0),
            ..work(510.0, 16.0, 0.0, 1e6)
        };
        let t = physics_time(&needle, &r);
        assert!((t.sm_cycles_secs - 1_662_584.0 / (132.0 * 1.98e9)).abs() < 1e-15);
        // Without a clock (no issue rate), or without the count, no bound.
        let no_clock = GpuRates {
            issue_rate_per_sec: None,
            ..r.clone()
        };
        assert_eq!(physics_time(&stalled, &no_clock).sm_cycles_secs, 0.0);
        assert_eq!(
            physics_time(&work(1056.0, 256.0, 0.0, 1e6), &r).sm_cycles_secs,
            0.0
        );
    }

    #[test]
    fn a_profiles_sm_span_adds_only_the_idle_part_of_a_hosts_launch_latency() {
        // A calibrated H200: its floor, measured on the GPU, is the idle part, so the
        // SM span adds to it in full.
        let r = h200();
        let spanned = |cycles: f64| KernelWork {
            sm_active_cycles: Some(cycles),
            ..work(1056.0, 256.0, 0.0, 1e3)
        };
        let t = physics_time(&spanned(132.0 * 1.98e9 * 3e-6), &r);
        assert!((t.secs - (r.floor_secs + 3e-6)).abs() < 1e-12, "{}", t.secs);
        // A GPU known by the catalogue alone, whose floor is the host's 5 us launch: a span of
        // 3 us does not lengthen the floor plus the work (a launch measured at about 4.5 us, not
        // 8); a span of 10 us gives 11.5 us, the idle part of a launch added, not 5 us.
        let catalogue = GpuRates {
            floor_secs: LAUNCH_LATENCY_SECS,
            ..r.clone()
        };
        let short = physics_time(&spanned(132.0 * 1.98e9 * 3e-6), &catalogue);
        let no_span = physics_time(&work(1056.0, 256.0, 0.0, 1e3), &catalogue);
        assert_eq!(short.secs, no_span.secs);
        assert!(short.secs < LAUNCH_LATENCY_SECS + 1e-6, "{}", short.secs);
        let long = physics_time(&spanned(132.0 * 1.98e9 * 10e-6), &catalogue);
        assert!(
            (long.secs - (IDLE_FLOOR_SECS + 10e-6)).abs() < 1e-12,
            "{}",
            long.secs
        );
        assert_eq!(long.bound(), "SM cycles");
    }

    #[test]
    fn achieved_occupancy_is_a_share_of_the_possible_that_slows_the_latency_bound() {
        let r = h200();
        // 8 blocks of 256 threads an SM are possible (2,048 threads): 64 warps. An achieved
        // occupancy of 0.25 is 16 warps, a quarter of them.
        let grid = work(132.0 * 8.0, 256.0, 0.0, 132.0 * 8.0 * 256.0 * 8.0);
        let share = occupancy_share(0.25, &grid, &r).expect("a share");
        assert!((share - 0.25).abs() < 1e-12);
        // A grid of 66 blocks can have at most half a block an SM: 4 warps of 64 possible on
        // average, and 2 of them achieved is half.
        let small = work(66.0, 256.0, 0.0, 1e6);
        let half = occupancy_share(2.0 / 64.0, &small, &r).expect("a share");
        assert!((half - 0.5).abs() < 1e-12);
        // Never above one; nothing from a non-positive occupancy.
        assert_eq!(occupancy_share(1.0, &small, &r), Some(1.0));
        assert_eq!(occupancy_share(0.0, &grid, &r), None);
        assert_eq!(occupancy_share(f64::NAN, &grid, &r), None);
        // On the target, 2 blocks an SM resident on average instead of 8: 4 waves of round
        // trips instead of 1 (8 bytes a thread, one round trip each).
        let quarter = KernelWork {
            occupancy_share: Some(0.25),
            ..grid.clone()
        };
        let t = physics_time(&quarter, &r);
        assert!((t.memory_secs - 4.0 * r.dram_latency_secs).abs() < 1e-15);
        // The compute and issue bounds keep the limits' waves.
        let busy = KernelWork {
            flops: 1e12,
            ..grid.clone()
        };
        let busy_quarter = KernelWork {
            occupancy_share: Some(0.25),
            ..busy.clone()
        };
        assert_eq!(
            physics_time(&busy, &r).compute_secs,
            physics_time(&busy_quarter, &r).compute_secs
        );
    }

    #[test]
    fn a_measured_time_is_carried_by_the_ratio_of_the_two_gpus_physics() {
        let h200 = h200();
        let half = GpuRates {
            bandwidth_bytes_per_sec: h200.bandwidth_bytes_per_sec / 2.0,
            floor_secs: 0.0,
            dram_latency_secs: 0.0,
            ..h200.clone()
        };
        let fast = GpuRates {
            floor_secs: 0.0,
            dram_latency_secs: 0.0,
            ..h200
        };
        // A copy bound by its bytes: half the bandwidth, twice the measured time.
        let copy = work(132.0 * 64.0, 256.0, 0.0, 1e9);
        assert!((physics_scaled_secs(1e-3, &copy, &fast, &half) - 2e-3).abs() < 1e-15);
        // No work and no floor: no ratio to carry.
        let nothing = work(1.0, 1.0, 0.0, 0.0);
        assert!(physics_scaled_secs(1e-3, &nothing, &fast, &half).is_nan());
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
