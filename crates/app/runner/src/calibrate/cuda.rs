//! The calibration through the `cuda` plugin (its `calibrate` collector on one GPU): what its
//! microbenchmarks' timings say of the GPU. Free of I/O but the plugin's call, so the arithmetic
//! is tested without a GPU.
//!
//! - The launch floor three ways: `empty` alone between two events (`empty_kernel_us`),
//!   `empty-back-to-back`, a thousand launches enqueued by the host between two events
//!   (`launch_latency_us`: the launch throughput, as the catalogue's figure is), and
//!   `empty-graph`, a hundred launches replayed from a CUDA graph (`graph_launch_us`: the GPU's
//!   own cost of a launch with the next one's overlapped); and `kernel_floor_us`, the kernel's own
//!   time: `empty-queued` (one empty launch between two events already queued on the GPU behind
//!   a waiting kernel, so that the host's submission is not in it) less `no-launch` (the two
//!   events queued alone), never below the graph's time a launch: what ncu's
//!   `gpu__time_duration` sees of a kernel that does nothing (docs/methods.md, section 6,
//!   "Calibration").
//! - DRAM: the best bytes per second of `read`, `write` and `copy` over their curves (4 KiB to
//!   1 GiB, L2 emptied before every launch); `dram_bandwidth_gb_per_sec` is the copy's, as the
//!   OpenCL calibration's is.
//! - The small grid: `copy-grid`'s one block, its read + written bytes per second
//!   (`block_bandwidth_gb_per_sec`), and the fewest blocks that reach 90 % of the best copy.
//! - L2's bytes per second, the FP32 FMA rate, one wave from the sweep of waiting blocks, and
//!   the blocks the GPU starts a second (`block_rate_per_us`: the `empty-blocks` launch of
//!   256-thread blocks, its blocks over its time less the kernel floor), and
//!   one barrier-separated step (`barrier_step_us`: the difference of `barrier-steps` at 4,096
//!   steps and at none, over 4,096).

use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value};

use super::device_file::Selected;
use super::plugin_tables::{TimingRow, selected, table, timing_rows};
use crate::sources::{SourceRequest, import};

const PLUGIN: &str = "cuda";

const DRIVER_SOURCE: (&str, &str) = (
    "cuda-driver",
    "the CUDA driver's device attributes: multiprocessors and clock",
);

/// Which GPU, and how many samples of each configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaSelection {
    pub gpu: u32,
    pub repeats: u32,
}

/// One point of a curve: (bytes moved or blocks, median seconds, min, max).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub x: u64,
    pub bytes: u64,
    pub median_secs: f64,
    pub min_secs: f64,
    pub max_secs: f64,
}

impl CurvePoint {
    pub fn gb_per_sec(&self) -> f64 {
        self.bytes as f64 / self.median_secs / 1e9
    }
}

/// What the CUDA calibration measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CudaMeasured {
    /// One empty launch between two events, and its spread (min, max).
    pub empty_kernel_us: (f64, f64, f64),
    /// Back-to-back empty launches: the time of one.
    pub launch_latency_us: f64,
    /// Empty launches replayed from a CUDA graph: the time of one.
    pub graph_launch_us: f64,
    /// One empty launch between two events queued on the GPU.
    pub empty_queued_us: f64,
    /// Two events queued with nothing between them.
    pub event_pair_us: f64,
    /// Host time of one launch of `empty` (launch to completion seen from the host).
    pub host_latency_us: f64,
    pub read: Vec<CurvePoint>,
    pub write: Vec<CurvePoint>,
    pub copy: Vec<CurvePoint>,
    /// `copy-grid`: x is blocks.
    pub grid: Vec<CurvePoint>,
    pub l2_gb_per_sec: f64,
    pub fp32_gflops: f64,
    /// One barrier-separated step inside a launch.
    pub barrier_step_us: f64,
    /// `empty-blocks`: (threads a block, blocks, median seconds).
    pub many_blocks: Vec<(u64, u64, f64)>,
    /// `waves`: (blocks, median seconds).
    pub waves: Vec<(u64, f64)>,
    pub wave_blocks: Option<u64>,
    pub repeats: u32,
}

fn best(curve: &[CurvePoint]) -> f64 {
    curve
        .iter()
        .map(CurvePoint::gb_per_sec)
        .fold(f64::NAN, f64::max)
}

impl CudaMeasured {
    /// An empty kernel's own time: queued between two events, less the events' own, never
    /// below the graph's time a launch.
    pub fn kernel_floor_us(&self) -> f64 {
        (self.empty_queued_us - self.event_pair_us).max(self.graph_launch_us)
    }

    pub fn read_gb_per_sec(&self) -> f64 {
        best(&self.read)
    }
    pub fn write_gb_per_sec(&self) -> f64 {
        best(&self.write)
    }
    pub fn copy_gb_per_sec(&self) -> f64 {
        best(&self.copy)
    }
    /// One block's copy bandwidth (the latency-bound end of the grid sweep).
    pub fn block_gb_per_sec(&self) -> f64 {
        self.grid
            .iter()
            .find(|p| p.x == 1)
            .map_or(f64::NAN, CurvePoint::gb_per_sec)
    }
    /// Blocks of 256 threads (or the most threads measured) the GPU starts a microsecond: the
    /// `empty-blocks` launch's blocks over its time less the kernel floor.
    pub fn block_rate_per_us(&self) -> f64 {
        self.many_blocks
            .iter()
            .max_by_key(|b| (b.0 == 256, b.0))
            .map_or(f64::NAN, |&(_, blocks, secs)| {
                blocks as f64 / (secs * 1e6 - self.kernel_floor_us()).max(1e-9)
            })
    }

    /// The fewest blocks of the grid sweep whose copy reaches `share` of the best copy.
    pub fn blocks_to_reach(&self, share: f64) -> Option<u64> {
        let target = share * best(&self.grid).max(self.copy_gb_per_sec());
        self.grid
            .iter()
            .find(|p| p.gb_per_sec() >= target)
            .map(|p| p.x)
    }

    /// The device file's `[measured]` values.
    pub fn entries(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("dram_bandwidth_gb_per_sec", self.copy_gb_per_sec()),
            ("dram_read_gb_per_sec", self.read_gb_per_sec()),
            ("dram_write_gb_per_sec", self.write_gb_per_sec()),
            ("block_bandwidth_gb_per_sec", self.block_gb_per_sec()),
            ("l2_bandwidth_gb_per_sec", self.l2_gb_per_sec),
            ("fp32_gflops", self.fp32_gflops),
            ("barrier_step_us", self.barrier_step_us),
            ("block_rate_per_us", self.block_rate_per_us()),
            ("launch_latency_us", self.launch_latency_us),
            ("graph_launch_us", self.graph_launch_us),
            ("kernel_floor_us", self.kernel_floor_us()),
            ("empty_kernel_us", self.empty_kernel_us.0),
            (
                "wave_work_groups",
                self.wave_blocks.map_or(f64::NAN, |w| w as f64),
            ),
        ]
    }

    /// The device file's `[measured_curves]`: the copy's kernel time by the bytes it reads
    /// and writes (the events' own time taken off, never below the kernel floor) and the grid
    /// sweep's copy bandwidth by blocks of 256 threads; (key, x, y).
    pub fn curves(&self) -> Vec<(&'static str, Vec<f64>, Vec<f64>)> {
        let floor = self.kernel_floor_us();
        vec![
            (
                "dram_copy_us_by_bytes",
                self.copy.iter().map(|p| p.bytes as f64).collect(),
                self.copy
                    .iter()
                    .map(|p| (p.median_secs * 1e6 - self.event_pair_us).max(floor))
                    .collect(),
            ),
            (
                "copy_gb_per_sec_by_blocks",
                self.grid.iter().map(|p| p.x as f64).collect(),
                self.grid.iter().map(CurvePoint::gb_per_sec).collect(),
            ),
        ]
    }

    /// The `calibration` source's text.
    pub fn source_text(&self, d: &Selected) -> String {
        let range = |c: &[CurvePoint]| {
            format!(
                "{} to {} bytes",
                c.first().map_or(0, |p| p.bytes),
                c.last().map_or(0, |p| p.bytes)
            )
        };
        format!(
            "`yosoku calibrate --backend cuda` on `{}` ({}), kernels compiled by NVRTC, each configuration the median of {} samples timed by CUDA events after 2 warm-ups: an empty kernel alone (empty_kernel_us), 1000 back to back (launch_latency_us) and 100 replayed from a CUDA graph (graph_launch_us), one queued on the GPU behind a waiting kernel and two events queued alone (kernel_floor_us: the first less the second, no host submission in it; every test below is queued so); float4 read, write and copy over {} with L2 emptied (a read of twice its bytes) before each launch (best read + written bytes per second; dram_bandwidth_gb_per_sec is the copy's); the copy of {} bytes by 1 to {} blocks of 256 threads (block_bandwidth_gb_per_sec: 1 block); reads of an eighth of L2, past L1; eight FMA chains a thread (16 FLOPs an iteration); 1048576 empty blocks of 32 and 256 threads (block_rate_per_us: the 256-thread launch's blocks over its time less kernel_floor_us); one block of 256 threads taking 0 and 4096 steps of a shared-memory read, write and barrier (barrier_step_us: the difference over 4096); blocks of 256 threads waiting a fixed number of SM clock cycles, {} to {} blocks (one wave: the most before the time steps up by 25 %)",
            d.name,
            d.description,
            self.repeats,
            range(&self.copy),
            self.grid.first().map_or(0, |p| p.bytes),
            self.grid.last().map_or(0, |p| p.x),
            self.waves.first().map_or(0, |w| w.0),
            self.waves.last().map_or(0, |w| w.0),
        )
    }
}

/// What the timings say (the arithmetic of the calibration, apart from the GPU).
pub fn measured(rows: &[TimingRow], repeats: u32) -> Result<CudaMeasured> {
    let of = |test: &'static str| rows.iter().filter(move |r| r.variant == test);
    let one = |test: &'static str| {
        of(test)
            .next()
            .ok_or_else(|| anyhow!("the calibration has no `{test}` timing"))
    };
    let param = |r: &TimingRow, key: &str| {
        r.parameter(key).ok_or_else(|| {
            anyhow!(
                "a `{}` timing without `{key}`: `{}`",
                r.variant,
                r.parameters
            )
        })
    };
    let curve = |test: &'static str, x: &'static str| -> Result<Vec<CurvePoint>> {
        let mut c = of(test)
            .map(|r| {
                Ok(CurvePoint {
                    x: param(r, x)?,
                    bytes: param(r, "bytes")?,
                    median_secs: r.median_secs,
                    min_secs: r.min_secs,
                    max_secs: r.max_secs,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        c.sort_by_key(|p| p.x);
        if c.is_empty() {
            bail!("the calibration has no `{test}` timings");
        }
        Ok(c)
    };
    let empty = one("empty")?;
    let l2 = one("l2-read")?;
    let fma = one("fma")?;
    let steps: Vec<(u64, f64)> = of("barrier-steps")
        .map(|r| Ok((param(r, "repeat")?, r.median_secs)))
        .collect::<Result<_>>()?;
    let barrier_step_us = match (
        steps.iter().find(|s| s.0 == 0),
        steps.iter().max_by_key(|s| s.0),
    ) {
        (Some(none), Some(most)) if most.0 > 0 => (most.1 - none.1) / most.0 as f64 * 1e6,
        _ => bail!("the calibration has no `barrier-steps` timings at 0 and more steps"),
    };
    let waves: Vec<(u64, f64)> = of("waves")
        .map(|r| Ok((param(r, "blocks")?, r.median_secs)))
        .collect::<Result<_>>()?;
    let m = CudaMeasured {
        empty_kernel_us: (
            empty.median_secs * 1e6,
            empty.min_secs * 1e6,
            empty.max_secs * 1e6,
        ),
        launch_latency_us: one("empty-back-to-back")?.median_secs * 1e6,
        graph_launch_us: one("empty-graph")?.median_secs * 1e6,
        event_pair_us: one("no-launch")?.median_secs * 1e6,
        empty_queued_us: one("empty-queued")?.median_secs * 1e6,
        host_latency_us: empty.host_median_secs * 1e6,
        read: curve("read", "bytes")?,
        write: curve("write", "bytes")?,
        copy: curve("copy", "bytes")?,
        grid: curve("copy-grid", "blocks")?,
        l2_gb_per_sec: param(l2, "bytes")? as f64 / l2.median_secs / 1e9,
        fp32_gflops: param(fma, "flops")? as f64 / fma.median_secs / 1e9,
        barrier_step_us,
        many_blocks: of("empty-blocks")
            .map(|r| Ok((param(r, "threads")?, param(r, "blocks")?, r.median_secs)))
            .collect::<Result<_>>()?,
        wave_blocks: super::opencl::wave_work_groups(&waves),
        waves,
        repeats,
    };
    for (what, v) in [
        ("the copy", m.copy_gb_per_sec()),
        ("the FMA kernel", m.fp32_gflops),
        ("the empty kernel", m.launch_latency_us),
    ] {
        if !(v.is_finite() && v > 0.0) {
            bail!("{what} gave no rate");
        }
    }
    Ok(m)
}

/// Runs the calibration on the selected GPU.
pub fn sweep(s: CudaSelection, plugin_path: &[PathBuf]) -> Result<(Selected, CudaMeasured)> {
    let request = SourceRequest {
        what: format!("the CUDA calibration of GPU {}", s.gpu),
        name: "calibration",
        plugin: PLUGIN,
        collector: "calibrate",
        plugin_path,
    };
    let imported = import(&request, |_| {
        let mut config = Map::new();
        config.insert("gpu".into(), Value::from(s.gpu));
        config.insert("repeats".into(), Value::from(s.repeats));
        Ok(config)
    })?;
    let devices = table(&imported.tables, yosoku_tables::DEVICES.name, PLUGIN)?;
    let d = selected(devices, DRIVER_SOURCE)?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("the cuda plugin described no GPU"))?;
    let rows = timing_rows(&imported.tables, PLUGIN)?;
    Ok((d, measured(&rows, s.repeats)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(variant: &str, parameters: String, median_secs: f64) -> TimingRow {
        TimingRow {
            program: "cuda-calibration".into(),
            variant: variant.into(),
            parameters,
            median_secs,
            min_secs: 0.9 * median_secs,
            max_secs: 1.2 * median_secs,
            cv: 0.01,
            launches: 20,
            host_median_secs: median_secs + 5e-6,
        }
    }

    /// The timings of a GPU whose every launch costs 2 us, whose DRAM moves 4 TB/s (copies
    /// 3.5), one block of which copies 10 GB/s, 32 blocks 320 GB/s and 512 blocks at 3.5 TB/s,
    /// L2 10 TB/s, FP32 60 TFLOP/s, and 264 blocks a wave.
    fn timings() -> Vec<TimingRow> {
        let p = |bytes: u64, blocks: u64, flops: u64| {
            format!("bytes={bytes};blocks={blocks};threads=256;flops={flops}")
        };
        let mut rows = vec![
            row("empty", p(0, 1, 0), 3e-6),
            row("empty-back-to-back", p(0, 1, 0), 2e-6),
            row("empty-graph", p(0, 1, 0), 0.5e-6),
            row("no-launch", p(0, 1, 0), 0.2e-6),
            row("empty-queued", p(0, 1, 0), 1.7e-6),
            row("l2-read", p(1 << 30, 1056, 0), (1u64 << 30) as f64 / 10e12),
            row("fma", p(0, 4224, 60_000_000_000), 1e-3),
            row("empty-blocks", "blocks=1048576;threads=32".into(), 200e-6),
            row(
                "empty-blocks",
                "blocks=1048576;threads=256".into(),
                1.5e-6 + 1048576.0 / 2000.0 * 1e-6,
            ),
            row(
                "barrier-steps",
                "blocks=1;threads=256;repeat=0".into(),
                3e-6,
            ),
            row(
                "barrier-steps",
                "blocks=1;threads=256;repeat=4096".into(),
                3e-6 + 4096.0 * 40e-9,
            ),
        ];
        for k in 1..=12u64 {
            let blocks = 66 * k;
            rows.push(row(
                "waves",
                p(0, blocks, 0),
                1e-4 * blocks.div_ceil(264) as f64,
            ));
        }
        for bytes in [4096u64, 1 << 20, 1 << 30] {
            let t = |gb: f64| 2e-6 + bytes as f64 / (gb * 1e9);
            rows.push(row("read", p(bytes, 1, 0), t(4000.0)));
            rows.push(row("write", p(bytes, 1, 0), t(4000.0)));
            rows.push(row("copy", p(bytes, 1, 0), t(3500.0)));
        }
        for blocks in [1u64, 32, 512] {
            let gb = (10.0 * blocks as f64).min(3500.0);
            rows.push(row(
                "copy-grid",
                p(256 << 20, blocks, 0),
                (256u64 << 20) as f64 / (gb * 1e9),
            ));
        }
        rows
    }

    #[test]
    fn the_rates_are_bytes_and_flops_over_the_median() {
        let m = measured(&timings(), 20).expect("measured");
        assert_eq!(m.launch_latency_us, 2.0);
        assert_eq!(m.graph_launch_us, 0.5);
        assert!((m.kernel_floor_us() - 1.5).abs() < 1e-9);
        assert_eq!(m.empty_kernel_us.0, 3.0);
        assert!((m.host_latency_us - 8.0).abs() < 1e-9);
        // The best of the curve is its largest size, where the 2 us floor weighs least.
        let gib = (1u64 << 30) as f64;
        let expect = gib / (2e-6 + gib / 3500e9) / 1e9;
        assert!(
            (m.copy_gb_per_sec() - expect).abs() < 1e-6,
            "{}",
            m.copy_gb_per_sec()
        );
        assert!(m.read_gb_per_sec() > m.copy_gb_per_sec());
        assert!((m.block_gb_per_sec() - 10.0).abs() < 1e-9);
        assert_eq!(m.blocks_to_reach(0.9), Some(512));
        assert!((m.l2_gb_per_sec - 10_000.0).abs() < 1e-6);
        assert!((m.fp32_gflops - 60_000.0).abs() < 1e-6);
        assert_eq!(m.wave_blocks, Some(264));
        assert!(
            (m.barrier_step_us - 0.04).abs() < 1e-9,
            "{}",
            m.barrier_step_us
        );
        assert!(
            (m.block_rate_per_us() - 2000.0).abs() < 1e-6,
            "{}",
            m.block_rate_per_us()
        );
        // The curves: the copy's kernel time (2 us less the events' 0.2 us, plus its bytes
        // over 3.5 TB/s) by bytes, and the grid sweep's bandwidth by blocks.
        let curves = m.curves();
        let (_, bytes, us) = &curves[0];
        assert_eq!(bytes, &vec![4096.0, 1048576.0, gib]);
        assert!(
            (us[0] - (1.8 + 4096.0 / 3500e9 * 1e6)).abs() < 1e-9,
            "{us:?}"
        );
        let (_, blocks, gb) = &curves[1];
        assert_eq!(blocks, &vec![1.0, 32.0, 512.0]);
        assert!((gb[1] - 320.0).abs() < 1e-9, "{gb:?}");
        for (key, x, y) in &curves {
            assert!(
                yosoku_devices::MEASURED_CURVE_FIELDS
                    .iter()
                    .any(|(k, _)| k == key),
                "{key} is not a measured curve"
            );
            assert!(yosoku_devices::checks::curve_problem(x, y).is_none());
        }
        let entries = m.entries();
        assert_eq!(entries.len(), 13);
        for (key, _) in &entries {
            assert!(
                yosoku_devices::MEASURED_FIELDS
                    .iter()
                    .any(|(k, _)| k == key),
                "{key} is not a measured field"
            );
        }
    }

    #[test]
    fn a_missing_test_or_parameter_is_named() {
        let mut rows = timings();
        rows.retain(|r| r.variant != "l2-read");
        let e = measured(&rows, 20).expect_err("no l2-read");
        assert!(e.to_string().contains("`l2-read`"), "{e}");
        let mut rows = timings();
        if let Some(fma) = rows.iter_mut().find(|r| r.variant == "fma") {
            fma.parameters = "bytes=0;blocks=4224".into();
        }
        let e = measured(&rows, 20).expect_err("no flops");
        assert!(e.to_string().contains("without `flops`"), "{e}");
    }
}
