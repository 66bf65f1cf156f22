//! What the transfer models know of a GPU ([`GpuSpec`], from its catalogue row) and the physics
//! over it that needs no fit: occupancy and waves, Habitat's wave scaling, peak scaling, and the
//! device-normalised features the learned models read.

use yosoku_devices::Device;

use super::work::Work;

/// Bytes of one DRAM transaction as nvprof counts them (a 32-byte sector).
pub const DRAM_TRANSACTION_BYTES: f64 = 32.0;

/// A kernel launch's fixed cost, added to its roofline time in one feature: kernels of a few
/// microseconds do not scale with a GPU's peak rates. 5 us is the order of a CUDA launch on the
/// GPUs of our data, fixed before any fit (not fitted, not tuned).
pub const LAUNCH_LATENCY_SECS: f64 = 5e-6;

/// What limits the blocks resident on one SM at once (the CUDA occupancy calculation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyLimits {
    pub max_threads_per_sm: f64,
    pub max_blocks_per_sm: f64,
    pub registers_per_sm: f64,
    pub shared_memory_per_sm_bytes: f64,
}

/// What the transfer models use of a device's catalogue entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSpec {
    /// The catalogue's name of the device.
    pub name: String,
    pub architecture: String,
    pub sm_count: f64,
    /// The base clock (the boost clock where the catalogue has no base clock).
    pub clock_mhz: f64,
    pub fp32_peak_gflops: f64,
    pub dram_bandwidth_gb_per_sec: f64,
    pub l2_bytes: Option<f64>,
    pub occupancy: Option<OccupancyLimits>,
    /// An empty kernel's launch time: yosoku's measurement where the catalogue has one, else
    /// the catalogue's published figure.
    pub launch_latency_secs: Option<f64>,
}

impl GpuSpec {
    /// The spec of a catalogue device; an error names every missing key and the device's file.
    pub fn from_device(device: &Device) -> Result<Self, String> {
        let clock = device
            .spec("base_clock_mhz")
            .or(device.spec("boost_clock_mhz"));
        let needed = [
            ("sm_count", device.spec("sm_count")),
            ("base_clock_mhz` or `boost_clock_mhz", clock),
            ("fp32_peak_gflops", device.spec("fp32_peak_gflops")),
            (
                "dram_bandwidth_gb_per_sec",
                device.spec("dram_bandwidth_gb_per_sec"),
            ),
        ];
        let missing: Vec<String> = needed
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| format!("`{k}`"))
            .collect();
        let (Some(sm_count), Some(clock_mhz), Some(fp32_peak_gflops), Some(dram)) =
            (needed[0].1, needed[1].1, needed[2].1, needed[3].1)
        else {
            return Err(format!(
                "device `{}` ({}): the catalogue has no {}, which the transfer models need",
                device.name,
                device.file,
                missing.join(", ")
            ));
        };
        let occupancy = match (
            device.spec("max_threads_per_sm"),
            device.spec("max_blocks_per_sm"),
            device.spec("registers_per_sm"),
            device.spec("shared_memory_per_sm_bytes"),
        ) {
            (Some(t), Some(b), Some(r), Some(s)) => Some(OccupancyLimits {
                max_threads_per_sm: t,
                max_blocks_per_sm: b,
                registers_per_sm: r,
                shared_memory_per_sm_bytes: s,
            }),
            _ => None,
        };
        Ok(Self {
            name: device.name.clone(),
            architecture: device.architecture.clone(),
            sm_count,
            clock_mhz,
            fp32_peak_gflops,
            dram_bandwidth_gb_per_sec: dram,
            l2_bytes: device.spec("l2_bytes"),
            occupancy,
            launch_latency_secs: device
                .measured
                .get("launch_latency_us")
                .map(|m| m.value)
                .or_else(|| device.spec("launch_latency_us"))
                .map(|us| us * 1e-6),
        })
    }

    /// Thread instructions per second at one per core per cycle: cores x clock, the FP32 peak
    /// without the factor 2 of a fused multiply-add.
    pub fn instruction_rate(&self) -> f64 {
        self.fp32_peak_gflops * 1e9 / 2.0
    }

    pub fn bandwidth_bytes_per_sec(&self) -> f64 {
        self.dram_bandwidth_gb_per_sec * 1e9
    }

    /// The FP32 FLOP/s per DRAM byte/s at which a kernel turns from memory- to compute-bound.
    pub fn ridge_flops_per_byte(&self) -> f64 {
        self.fp32_peak_gflops / self.dram_bandwidth_gb_per_sec
    }

    /// Blocks of a launch resident on one SM at once (threads, blocks, registers and shared
    /// memory each limit it; registers are allocated per warp in units of 256), or `None`
    /// where the catalogue lacks the limits.
    pub fn blocks_per_sm(&self, work: &Work) -> Option<f64> {
        let o = self.occupancy?;
        let tpb = work.threads_per_block.max(1.0);
        let warps = (tpb / 32.0).ceil();
        let mut blocks = o
            .max_blocks_per_sm
            .min((o.max_threads_per_sm / tpb).floor());
        if work.registers_per_thread > 0.0 {
            let per_warp = (work.registers_per_thread * 32.0 / 256.0).ceil() * 256.0;
            blocks = blocks.min((o.registers_per_sm / (per_warp * warps)).floor());
        }
        if work.shared_bytes_per_block > 0.0 {
            let per_block = (work.shared_bytes_per_block / 256.0).ceil() * 256.0;
            blocks = blocks.min((o.shared_memory_per_sm_bytes / per_block).floor());
        }
        Some(blocks.max(1.0))
    }

    /// Blocks that run at once on the whole GPU (one "wave"); the SM count where the
    /// occupancy limits are unknown.
    pub fn wave_size(&self, work: &Work) -> f64 {
        self.sm_count * self.blocks_per_sm(work).unwrap_or(1.0)
    }

    /// Waves of a launch: its blocks over the wave size, rounded up.
    pub fn waves(&self, work: &Work) -> f64 {
        (work.blocks.max(1.0) / self.wave_size(work)).ceil()
    }
}

/// Habitat's memory-boundness gamma of a kernel (Yu et al., USENIX ATC '21): 1 for a kernel
/// with no floating-point work, falling linearly to 1/2 at the target's ridge point, then as
/// R / (2 x intensity) beyond it; 0 for a kernel that moves no DRAM bytes.
pub fn habitat_gamma(work: &Work, target: &GpuSpec) -> f64 {
    if work.flops <= 0.0 {
        return 1.0;
    }
    if work.dram_bytes <= 0.0 {
        return 0.0;
    }
    let intensity = work.flops / work.dram_bytes;
    let ridge = target.ridge_flops_per_byte();
    if intensity > ridge {
        0.5 * ridge / intensity
    } else {
        1.0 - 0.5 * intensity / ridge
    }
}

/// Wave scaling: a launch measured on `origin` taking `secs`, scaled to `target`. The memory
/// part (weight gamma) by the bandwidth ratio; the compute part (1 - gamma) by the ratio of
/// cores x clock and of the wave quantisation (the tail wave's idle SMs). Habitat scales the
/// compute part by SMs x clock; the SMs of the GPUs here hold 192 (Kepler) or 128 (Maxwell)
/// cores, so the core count stands in for the SM count. A launch under one wave on both GPUs
/// scales, as in Habitat, by the clock and the blocks per SM alone.
pub fn wave_scaling(secs: f64, work: &Work, origin: &GpuSpec, target: &GpuSpec) -> f64 {
    let gamma = habitat_gamma(work, target);
    let blocks = work.blocks.max(1.0);
    let (wave_o, wave_t) = (origin.wave_size(work), target.wave_size(work));
    if blocks < wave_o && blocks < wave_t {
        let per_sm_o = (blocks / origin.sm_count).ceil();
        let per_sm_t = (blocks / target.sm_count).ceil();
        let factor = origin.clock_mhz / target.clock_mhz * per_sm_t / per_sm_o;
        return secs * factor.powf(1.0 - gamma);
    }
    let bandwidth = origin.dram_bandwidth_gb_per_sec / target.dram_bandwidth_gb_per_sec;
    // Work per wave slot: the launch's blocks padded to whole waves.
    let padded_o = origin.waves(work) * wave_o / blocks;
    let padded_t = target.waves(work) * wave_t / blocks;
    let compute =
        origin.instruction_rate() / target.instruction_rate() * (padded_t / padded_o).max(1e-9);
    secs * bandwidth.powf(gamma) * compute.powf(1.0 - gamma)
}

/// Cores x clock scaling: the time on `origin` times the ratio of the FP32 peaks.
pub fn peak_scaling(secs: f64, origin: &GpuSpec, target: &GpuSpec) -> f64 {
    secs * origin.fp32_peak_gflops / target.fp32_peak_gflops
}

/// The names of [`device_features`], in order.
pub const DEVICE_FEATURES: &[&str] = &[
    "ln_compute_secs",
    "ln_memory_secs",
    "ln_roofline_secs",
    "ln_roofline_plus_launch_secs",
    "ln_waves",
    "memory_share",
    "memory_share_x_ln_bandwidth",
    "ln_sm_count",
    "ln_clock_mhz",
    "ln_bandwidth",
    "ln_bytes_over_l2",
];

/// Device-normalised features of `work` on `gpu`: the work over the GPU's peak rates (compute
/// time = thread instructions over cores x clock, memory time = DRAM bytes over bandwidth), the
/// roofline (their maximum) with and without the launch latency, the waves, the memory share
/// and its interaction with the bandwidth, the GPU's own scale, and the DRAM bytes over its L2.
pub fn device_features(work: &Work, gpu: &GpuSpec) -> [f64; 11] {
    let compute = (work.warp_instructions * 32.0).max(32.0) / gpu.instruction_rate();
    let memory = work.dram_bytes.max(DRAM_TRANSACTION_BYTES) / gpu.bandwidth_bytes_per_sec();
    let roof = compute.max(memory);
    let share = memory / (memory + compute);
    let bandwidth = gpu.dram_bandwidth_gb_per_sec.ln();
    let l2 = gpu.l2_bytes.unwrap_or(1.0 * 1024.0 * 1024.0);
    [
        compute.ln(),
        memory.ln(),
        roof.ln(),
        (roof + LAUNCH_LATENCY_SECS).ln(),
        gpu.waves(work).ln(),
        share,
        share * bandwidth,
        gpu.sm_count.ln(),
        gpu.clock_mhz.ln(),
        bandwidth,
        (1.0 + work.dram_bytes / l2).ln(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_field_of_a_device_is_named_at_once() {
        let device = yosoku_devices::parse(
            "name = \"X\"\nvendor = \"NVIDIA\"\nkind = \"gpu\"\narchitecture = \"Hopper\"\n\
             [spec]\nsm_count = { value = 132, source = \"s\" }\n\
             [sources]\ns = \"a datasheet\"\n",
            "x.toml",
        )
        .unwrap();
        assert_eq!(
            GpuSpec::from_device(&device).unwrap_err(),
            "device `X` (x.toml): the catalogue has no `base_clock_mhz` or `boost_clock_mhz`, `fp32_peak_gflops`, `dram_bandwidth_gb_per_sec`, which the transfer models need"
        );
    }
}
