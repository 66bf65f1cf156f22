//! What the calibration launches, decided from what the driver says of the GPU before anything
//! runs (no CUDA here: the arithmetic is tested on any machine).
//!
//! Every test but `empty` and the back-to-back ones is *queued*: a one-block kernel waiting
//! [`QUEUE_CYCLES`] runs first, so that the events and the launches between them are already
//! on the GPU when it starts and the time is the GPU's own, as a profiler's is, without the
//! host's submission in it.
//!
//! - `empty`: one block of one warp doing nothing, one launch between two events, not queued
//!   (the host's submission in it), `empty-queued` the same queued (what ncu's
//!   `gpu__time_duration` sees of a kernel that does nothing), `empty-back-to-back`: [`BACK_TO_BACK`] launches between two events (the
//!   launch throughput with the host enqueuing each, what the catalogue's `launch_latency_us`
//!   is), and `empty-graph`: [`GRAPH_LAUNCHES`] launches replayed from a CUDA graph (the GPU's
//!   own cost of a launch, no host in it); `no-launch`: the two events with nothing between
//!   them (what the events add to every single launch's time).
//! - `read`, `write`, `copy`: one float4 a thread over 4 KiB to [`MAX_BYTES`] moved, with L2
//!   emptied (by reading another buffer of twice its size) before every timed launch: DRAM's bandwidth curve over bytes, from a few blocks that
//!   cannot fill the memory system to many waves.
//! - `copy-grid`: [`GRID_SWEEP_BYTES`] copied by 1, 2, 4, ... blocks of 256 threads in a
//!   grid-stride loop, L2 emptied: the bandwidth a grid of a few blocks reaches (latency-bound)
//!   up to many waves.
//! - `l2-read`: an eighth of L2 read [`L2_PASSES`] times, past L1.
//! - `fma`: eight independent FMA chains a thread, four waves of 256-thread blocks: the FP32 rate.
//! - `empty-blocks`: [`MANY_BLOCKS`] blocks of 32 and of 256 threads doing nothing: how fast the
//!   GPU starts blocks, what bounds a grid of many short blocks.
//! - `barrier-steps`: one block of 256 threads taking 0 and [`BARRIER_STEPS`] steps, each a
//!   shared-memory read and write and a barrier: the cost of one step of a loop of
//!   barrier-separated phases inside a launch.
//! - `waves`: 256-thread blocks that each wait [`SPIN_CYCLES`] of the SM clock, one to twelve
//!   an SM: a block's time does not depend on what else runs, so where the time steps up, one
//!   wave (the blocks resident at once) ended.

/// Launches between the two events of `empty-back-to-back`.
pub const BACK_TO_BACK: u64 = 1000;
/// The largest bytes moved by `read`, `write` and `copy` (cut to a quarter of the device's memory).
pub const MAX_BYTES: u64 = 1 << 30;
/// Launches in the CUDA graph of `empty-graph`.
pub const GRAPH_LAUNCHES: u64 = 100;
/// SM clock cycles the kernel that queues a sample's launches waits (50 us at 2 GHz).
pub const QUEUE_CYCLES: u64 = 100_000;
/// Blocks of the `empty-blocks` launches.
pub const MANY_BLOCKS: u64 = 1 << 20;
/// Barrier-separated steps of the longer `barrier-steps` launch (the shorter has none).
pub const BARRIER_STEPS: u64 = 4096;
/// SM clock cycles each thread of `waves` waits.
pub const SPIN_CYCLES: u64 = 20_000;
/// Bytes moved (read + written) by every grid of `copy-grid`.
pub const GRID_SWEEP_BYTES: u64 = 256 << 20;
/// How often `l2-read` reads its buffer.
pub const L2_PASSES: u64 = 32;
/// FMA chain length of `fma`.
pub const FMA_ITERS: u64 = 4096;
/// Bytes of one float4.
const FLOAT4: u64 = 16;

/// What the driver says of the GPU, as the plan needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gpu {
    pub sm_count: u64,
    pub l2_bytes: u64,
    pub memory_bytes: u64,
}

/// The kernel a configuration launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Empty,
    Read,
    Write,
    Copy,
    L2Read,
    Fma,
    Spin,
    Steps,
}

impl Kernel {
    /// The kernel's name in `kernels.cu`.
    pub fn symbol(self) -> &'static str {
        match self {
            Kernel::Empty => "yk_empty",
            Kernel::Read => "yk_read",
            Kernel::Write => "yk_write",
            Kernel::Copy => "yk_copy",
            Kernel::L2Read => "yk_l2_read",
            Kernel::Fma => "yk_fma",
            Kernel::Spin => "yk_spin",
            Kernel::Steps => "yk_steps",
        }
    }
}

/// One configuration: a kernel, its grid, and what one timed sample moves and computes.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The test's name (the `kernel_timings` variant).
    pub test: &'static str,
    pub kernel: Kernel,
    pub blocks: u64,
    pub threads: u64,
    /// float4 elements of each array the kernel walks.
    pub elements: u64,
    /// DRAM (or, for `l2-read`, L2) bytes one launch moves: read + written.
    pub bytes: u64,
    /// FLOPs one launch does.
    pub flops: u64,
    /// `l2-read`'s passes, `fma`'s chain length, `waves`' cycles, `barrier-steps`' steps; 0
    /// where unused.
    pub repeat: u64,
    /// Launches between the two events of one sample (1 but for the back-to-back tests, 0 for
    /// `no-launch`).
    pub launches_per_sample: u64,
    /// Whether the launches of a sample are replayed from a CUDA graph.
    pub graph: bool,
    /// Whether a waiting kernel runs before the sample's events, so that they and the launches
    /// are queued on the GPU before the first event.
    pub queued: bool,
    /// Whether L2 is emptied before every sample.
    pub cold_l2: bool,
}

impl Launch {
    /// `key=value;...` for the `kernel_timings` parameters column.
    pub fn parameters(&self) -> String {
        format!(
            "bytes={};blocks={};threads={};flops={};repeat={};launches_per_sample={};graph={};queued={};cold_l2={}",
            self.bytes,
            self.blocks,
            self.threads,
            self.flops,
            self.repeat,
            self.launches_per_sample,
            self.graph,
            self.queued,
            self.cold_l2
        )
    }
}

fn streaming(test: &'static str, kernel: Kernel, bytes: u64, blocks: Option<u64>) -> Launch {
    let arrays = if kernel == Kernel::Copy { 2 } else { 1 };
    let elements = (bytes / arrays / FLOAT4).max(1);
    Launch {
        test,
        kernel,
        blocks: blocks.unwrap_or_else(|| elements.div_ceil(256)),
        threads: 256,
        elements,
        bytes: elements * arrays * FLOAT4,
        flops: 0,
        repeat: 0,
        launches_per_sample: 1,
        graph: false,
        queued: true,
        cold_l2: true,
    }
}

/// One block of one warp, not queued, L2 left as it is.
fn one_warp(test: &'static str, kernel: Kernel, repeat: u64) -> Launch {
    Launch {
        test,
        kernel,
        blocks: 1,
        threads: 32,
        elements: 0,
        bytes: 0,
        flops: 0,
        repeat,
        launches_per_sample: 1,
        graph: false,
        queued: false,
        cold_l2: false,
    }
}

/// The kernel that queues a sample: one warp waiting [`QUEUE_CYCLES`].
pub fn queue() -> Launch {
    one_warp("queue", Kernel::Spin, QUEUE_CYCLES)
}

/// The read that empties L2: `elements` float4 of another buffer, one a thread.
pub fn flush(elements: u64) -> Launch {
    Launch {
        cold_l2: false,
        queued: false,
        ..streaming("flush", Kernel::Read, 16 * elements, None)
    }
}

/// The bytes of the DRAM curve: 4 KiB, 16 KiB, ... up to [`MAX_BYTES`] or a quarter of memory.
pub fn curve_bytes(gpu: &Gpu) -> Vec<u64> {
    let cap = MAX_BYTES.min(gpu.memory_bytes / 4);
    std::iter::successors(Some(4u64 << 10), |b| Some(b * 4))
        .take_while(|b| *b <= cap)
        .collect()
}

/// The grids of `copy-grid`: 1, 2, 4, ... blocks up to 32 blocks an SM (four waves of 256
/// threads on a GPU of 2048 threads an SM).
pub fn grid_sweep(gpu: &Gpu) -> Vec<u64> {
    let most = 32 * gpu.sm_count.max(1);
    std::iter::successors(Some(1u64), |b| Some(b * 2))
        .take_while(|b| *b <= most)
        .collect()
}

/// Every configuration, in the order they run.
pub fn plan(gpu: &Gpu) -> Vec<Launch> {
    let sms = gpu.sm_count.max(1);
    let empty = one_warp("empty", Kernel::Empty, 0);
    let mut out = vec![
        empty.clone(),
        Launch {
            test: "empty-queued",
            queued: true,
            ..empty.clone()
        },
        Launch {
            test: "empty-back-to-back",
            launches_per_sample: BACK_TO_BACK,
            ..empty.clone()
        },
        Launch {
            test: "empty-graph",
            launches_per_sample: GRAPH_LAUNCHES,
            graph: true,
            ..empty.clone()
        },
        Launch {
            test: "no-launch",
            launches_per_sample: 0,
            queued: true,
            ..empty
        },
    ];
    for bytes in curve_bytes(gpu) {
        out.push(streaming("read", Kernel::Read, bytes, None));
        out.push(streaming("write", Kernel::Write, bytes, None));
        out.push(streaming("copy", Kernel::Copy, bytes, None));
    }
    let sweep_bytes = GRID_SWEEP_BYTES.min(gpu.memory_bytes / 8);
    for blocks in grid_sweep(gpu) {
        out.push(streaming(
            "copy-grid",
            Kernel::Copy,
            sweep_bytes,
            Some(blocks),
        ));
    }
    // An eighth of L2 in whole MiB (at least 1 MiB), read L2_PASSES times by eight blocks an SM.
    let l2_buffer = ((gpu.l2_bytes / 8) >> 20).max(1) << 20;
    let l2 = streaming("l2-read", Kernel::L2Read, l2_buffer, Some(8 * sms));
    out.push(Launch {
        bytes: l2.bytes * L2_PASSES,
        repeat: L2_PASSES,
        cold_l2: false,
        ..l2
    });
    let fma = |test, blocks: u64, threads: u64| Launch {
        test,
        kernel: Kernel::Fma,
        blocks,
        threads,
        elements: 0,
        bytes: 0,
        flops: 16 * FMA_ITERS * threads * blocks,
        repeat: FMA_ITERS,
        launches_per_sample: 1,
        graph: false,
        queued: true,
        cold_l2: false,
    };
    out.push(fma("fma", 32 * sms, 256));
    for threads in [32, 256] {
        out.push(Launch {
            blocks: MANY_BLOCKS,
            threads,
            queued: true,
            ..one_warp("empty-blocks", Kernel::Empty, 0)
        });
    }
    for steps in [0, BARRIER_STEPS] {
        out.push(Launch {
            threads: 256,
            repeat: steps,
            queued: true,
            ..one_warp("barrier-steps", Kernel::Steps, steps)
        });
    }
    for k in 1..=12 {
        out.push(Launch {
            test: "waves",
            kernel: Kernel::Spin,
            blocks: k * sms,
            threads: 256,
            elements: 0,
            bytes: 0,
            flops: 0,
            repeat: SPIN_CYCLES,
            launches_per_sample: 1,
            graph: false,
            queued: true,
            cold_l2: false,
        });
    }
    out
}

/// The largest float4 arrays the plan walks: (first array, second array), in elements.
pub fn buffer_elements(launches: &[Launch]) -> (u64, u64) {
    let first = launches.iter().map(|l| l.elements).max().unwrap_or(0);
    let second = launches
        .iter()
        .filter(|l| l.kernel == Kernel::Copy)
        .map(|l| l.elements)
        .max()
        .unwrap_or(0);
    (first.max(1), second.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H200: Gpu = Gpu {
        sm_count: 132,
        l2_bytes: 60 << 20,
        memory_bytes: 140 << 30,
    };

    #[test]
    fn the_curve_runs_from_4_kib_to_1_gib_in_steps_of_four() {
        let b = curve_bytes(&H200);
        assert_eq!(b.first(), Some(&4096));
        assert_eq!(b.last(), Some(&(1 << 30)));
        assert_eq!(b.len(), 10);
        // A GPU of 2 GiB stops at a quarter of it.
        let small = Gpu {
            memory_bytes: 2 << 30,
            ..H200
        };
        assert_eq!(curve_bytes(&small).last(), Some(&(256 << 20)));
    }

    #[test]
    fn a_copy_is_charged_its_read_and_written_bytes_one_float4_a_thread() {
        let c = streaming("copy", Kernel::Copy, 1 << 20, None);
        // 512 KiB read + 512 KiB written: 32768 float4 each, 128 blocks of 256.
        assert_eq!((c.elements, c.bytes, c.blocks), (32768, 1 << 20, 128));
        let r = streaming("read", Kernel::Read, 4096, None);
        assert_eq!((r.elements, r.bytes, r.blocks), (256, 4096, 1));
    }

    #[test]
    fn the_grid_sweep_goes_from_one_block_past_a_wave() {
        let g = grid_sweep(&H200);
        assert_eq!(g.first(), Some(&1));
        assert_eq!(g.last(), Some(&4096));
        assert!(g.iter().any(|b| *b > H200.sm_count * 2));
    }

    #[test]
    fn every_test_is_planned_and_the_rates_add_up() {
        let p = plan(&H200);
        for test in [
            "empty",
            "empty-queued",
            "empty-back-to-back",
            "empty-graph",
            "no-launch",
            "read",
            "write",
            "copy",
            "copy-grid",
            "l2-read",
            "fma",
            "empty-blocks",
            "barrier-steps",
            "waves",
        ] {
            assert!(p.iter().any(|l| l.test == test), "{test}");
        }
        let l2 = p.iter().find(|l| l.test == "l2-read").expect("l2-read");
        // 7 MiB (an eighth of 60 MiB, in whole MiB) read 32 times.
        assert_eq!(l2.bytes, (7 << 20) * L2_PASSES);
        assert!(!l2.cold_l2);
        let fma = p.iter().find(|l| l.test == "fma").expect("fma");
        assert_eq!(fma.flops, 16 * FMA_ITERS * 256 * 32 * 132);
        let waves: Vec<u64> = p
            .iter()
            .filter(|l| l.test == "waves")
            .map(|l| l.blocks)
            .collect();
        assert_eq!(waves.first(), Some(&132));
        assert_eq!(waves.last(), Some(&1584));
        // Buffers: the largest read (1 GiB of float4) and the largest copy's second array.
        assert_eq!(buffer_elements(&p), (1 << 26, 1 << 25));
        assert!(p.iter().all(|l| l.blocks >= 1 && l.blocks < (1 << 31)));
    }
}
