//! The launches of an `observations` table, joined across GPUs: one [`Cell`] per launch measured
//! on one GPU, with what the launch did ([`Work`]) as that GPU's counters say.
//!
//! A launch is a (kernel, variant, occurrence) triple: the k-th row of a (program, variant) on
//! one GPU is the same launch as the k-th on another (the gpuperfpredict files record the
//! launches of one size in the same order on every GPU; the Apps-Gpus layout's variant also
//! names the block shape).

use std::collections::HashMap;

use arrow_array::{Array, Float64Array, RecordBatch};
use yosoku_devices::Catalogue;

use super::gpu::{DRAM_TRANSACTION_BYTES, GpuSpec};
use super::physics::{GpuRates, KernelWork, occupancy_share};
pub use super::work::Work;
use crate::ModelError;
use crate::counters::Observations;

/// The counters a [`Work`] is made of: canonical metric names of the registry
/// (`yosoku_tables::metrics`), under the names this module's code gives them.
pub mod counter {
    use yosoku_tables::metrics as m;

    pub const WARP_INSTRUCTIONS: &str = m::INST_EXECUTED;
    /// rocprof counts the wavefront instructions issued (`SQ_INSTS`), not executed.
    pub const INSTRUCTIONS_ISSUED: &str = m::INST_ISSUED;
    /// Threads of a warp or wavefront (64 on AMD's CDNA GPUs); 32 where not given.
    pub const WARP_SIZE: &str = m::WARP_SIZE;
    /// rocprof gives the grid in threads.
    pub const THREADS: &str = m::THREADS;
    pub const FLOPS_SP: &str = m::FLOP_COUNT_SP;
    pub const FLOPS_DP: &str = m::FLOP_COUNT_DP;
    pub const DRAM_READS: &str = m::DRAM_READ_TRANSACTIONS;
    pub const DRAM_WRITES: &str = m::DRAM_WRITE_TRANSACTIONS;
    /// Nsight Compute counts DRAM bytes (`dram__bytes_read.sum`), nvprof transactions.
    pub const DRAM_READ_BYTES: &str = m::DRAM_READ_BYTES;
    pub const DRAM_WRITE_BYTES: &str = m::DRAM_WRITE_BYTES;
    /// Nsight Compute gives the launch's blocks and threads per block as totals.
    pub const GRID_SIZE: &str = m::GRID_SIZE;
    pub const BLOCK_SIZE: &str = m::BLOCK_SIZE;
    pub const GRID_X: &str = m::GRID_X;
    pub const GRID_Y: &str = m::GRID_Y;
    pub const BLOCK_X: &str = m::BLOCK_X;
    pub const BLOCK_Y: &str = m::BLOCK_Y;
    pub const REGISTERS: &str = m::REGISTERS_PER_THREAD;
    pub const SHARED_BYTES: &str = m::STATIC_SHARED_MEMORY;
    pub const L2_READS: &str = m::L2_READ_TRANSACTIONS;
    pub const L2_WRITES: &str = m::L2_WRITE_TRANSACTIONS;
    pub const SHARED_LOADS: &str = m::SHARED_LOAD_TRANSACTIONS;
    pub const SHARED_STORES: &str = m::SHARED_STORE_TRANSACTIONS;
    pub const GLOBAL_LOADS: &str = m::GLD_TRANSACTIONS;
    pub const GLOBAL_STORES: &str = m::GST_TRANSACTIONS;
    /// Cycles the SMs had an active warp, summed over the SMs (the physics model's SM cycles).
    pub const ACTIVE_CYCLES: &str = m::ACTIVE_CYCLES;
    /// The same, the average over the SMs (ncu's "SM Active Cycles"): times the profiled GPU's
    /// SMs where the sum is missing.
    pub const ACTIVE_CYCLES_AVG: &str = m::ACTIVE_CYCLES_AVG;
    /// Active warps an active cycle over the SM's maximum, 0-1.
    pub const ACHIEVED_OCCUPANCY: &str = m::ACHIEVED_OCCUPANCY;
    /// Bytes a kernel loads and stores in global memory as its code says (the OpenCL suite's
    /// computed counters): DRAM traffic where no profiler counted it.
    pub const GLOBAL_LOAD_BYTES: &str = m::GLD_BYTES;
    pub const GLOBAL_STORE_BYTES: &str = m::GST_BYTES;
    /// Every counter a [`super::Work`] reads.
    pub const ALL: &[&str] = &[
        ACTIVE_CYCLES,
        ACTIVE_CYCLES_AVG,
        ACHIEVED_OCCUPANCY,
        WARP_INSTRUCTIONS,
        INSTRUCTIONS_ISSUED,
        WARP_SIZE,
        THREADS,
        FLOPS_SP,
        FLOPS_DP,
        DRAM_READS,
        DRAM_WRITES,
        DRAM_READ_BYTES,
        DRAM_WRITE_BYTES,
        GRID_X,
        GRID_Y,
        BLOCK_X,
        BLOCK_Y,
        GRID_SIZE,
        BLOCK_SIZE,
        REGISTERS,
        SHARED_BYTES,
        L2_READS,
        L2_WRITES,
        SHARED_LOADS,
        SHARED_STORES,
        GLOBAL_LOADS,
        GLOBAL_STORES,
        GLOBAL_LOAD_BYTES,
        GLOBAL_STORE_BYTES,
    ];
    /// The counters of the seed's counter regression (Shimada et al., docs/methods.md section 1).
    pub const SEED: [&str; 6] = [
        m::GLD_REQUEST,
        m::GST_REQUEST,
        m::CF_EXECUTED,
        m::INST_ISSUED1,
        m::SHARED_LOAD,
        m::L2_READ_TRANSACTIONS,
    ];
}

/// A source's launches as model rows, one `observations` row per launch: the source's own
/// `observations` (the gpuperfpredict reader makes them), or its `runs` with the counters a
/// [`Work`] reads pivoted beside (an ncu, nvprof or rocprof import: a raw page maps several of
/// its hundreds of metrics to one canonical name no model reads, so only these are taken).
/// `tables` are the source's tables by their names without the source's (`runs`, ...).
pub fn launches<'a>(
    tables: impl Iterator<Item = (&'a str, &'a RecordBatch)> + Clone,
) -> Result<RecordBatch, ModelError> {
    let table = |name: &str| tables.clone().find(|(n, _)| *n == name).map(|(_, b)| b);
    if let Some(observations) = table("observations") {
        return Ok(observations.clone());
    }
    let (Some(runs), Some(counters)) = (table("runs"), table("counters")) else {
        return Err(ModelError::invalid(
            "no `observations` and no `runs` and `counters` tables: no launches to read",
        ));
    };
    let metric = crate::Input::new("counters", &yosoku_tables::COUNTERS, counters)?
        .utf8(yosoku_tables::col::METRIC)?;
    let present: Vec<String> = counter::ALL
        .iter()
        .filter(|n| metric.iter().any(|m| m == Some(**n)))
        .map(|n| (*n).to_owned())
        .collect();
    crate::counters::normalize::pivot_counters(runs, counters, Some(&present))
        .map_err(|e| ModelError::invalid(format!("its counters as one row per launch: {e}")))
}

/// One launch measured on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Its row in the `observations` table.
    pub row: usize,
    pub launch: usize,
    pub kernel: usize,
    /// Index into [`Measurements::gpus`].
    pub gpu: usize,
    pub secs: f64,
    pub work: Work,
}

/// Every launch of a table on every GPU that ran it.
#[derive(Debug, Clone)]
pub struct Measurements {
    pub gpus: Vec<GpuSpec>,
    /// The table's name of each GPU (`GTX-970`; the catalogue's is in `gpus`).
    pub gpu_labels: Vec<String>,
    pub kernels: Vec<String>,
    /// Per launch: its kernel and variant.
    pub launches: Vec<(usize, String)>,
    pub cells: Vec<Cell>,
    /// Per launch: its cells.
    pub by_launch: Vec<Vec<usize>>,
    /// Rows and devices left out, and why, for the report.
    pub left_out: Vec<String>,
    /// The launches left out for what their rows lack, per kernel and reason.
    pub dropped: Vec<Dropped>,
}

/// Launches of one kernel left out for one reason (what their rows lack).
#[derive(Debug, Clone, PartialEq)]
pub struct Dropped {
    pub kernel: String,
    pub launches: usize,
    pub why: &'static str,
}

/// A counter column, or `None` when the table lacks it.
fn column<'a>(obs: &Observations<'a>, name: &str) -> Option<&'a Float64Array> {
    obs.feature(name).ok()
}

fn value(column: Option<&Float64Array>, row: usize) -> Option<f64> {
    column.and_then(|c| c.is_valid(row).then(|| c.value(row)))
}

/// Why a launch has no [`Work`]: what its row lacks.
const NO_BYTES: &str = "no DRAM reads (nor, with its FLOPs, the global bytes its code moves)";
const NO_INSTRUCTIONS: &str = "no instruction count";
const NO_INSTRUCTIONS_OR_FLOPS: &str = "no instruction count and no FLOP count";
const NO_BLOCK: &str = "no block size";
const NO_GRID: &str = "no grid size";
const NO_TIME: &str = "no positive time";

/// The counter columns a [`Work`] is read from (`None` where the table lacks one).
struct WorkColumns<'a> {
    inst: Option<&'a Float64Array>,
    issued: Option<&'a Float64Array>,
    warp_size: Option<&'a Float64Array>,
    threads: Option<&'a Float64Array>,
    flops: [Option<&'a Float64Array>; 2],
    /// Transactions read and written, or bytes read and written.
    transactions: [Option<&'a Float64Array>; 2],
    bytes: [Option<&'a Float64Array>; 2],
    global_bytes: [Option<&'a Float64Array>; 2],
    grid: [Option<&'a Float64Array>; 3],
    block: [Option<&'a Float64Array>; 3],
    registers: Option<&'a Float64Array>,
    shared_bytes: Option<&'a Float64Array>,
    l2: [Option<&'a Float64Array>; 2],
    shared: [Option<&'a Float64Array>; 2],
    global: [Option<&'a Float64Array>; 2],
    active_cycles: Option<&'a Float64Array>,
    active_cycles_avg: Option<&'a Float64Array>,
    achieved_occupancy: Option<&'a Float64Array>,
    seed: Vec<Option<&'a Float64Array>>,
}

impl<'a> WorkColumns<'a> {
    /// The columns of `obs`; an error names the counters the models need and it lacks. With
    /// `work_only`, a table without instruction counts will do where it has the FLOPs and the
    /// bytes moved (DRAM, or global memory as the kernel's code says): what wave scaling needs.
    fn of(obs: &Observations<'a>, work_only: bool) -> Result<Self, ModelError> {
        let c = |n: &str| column(obs, n);
        let lacks = |names: &[&str]| names.iter().all(|n| c(n).is_none());
        let launch = [
            (
                &[counter::GRID_X, counter::GRID_SIZE, counter::THREADS][..],
                "the grid",
            ),
            (&[counter::BLOCK_X, counter::BLOCK_SIZE][..], "the block"),
        ];
        let counted = [
            (
                &[counter::WARP_INSTRUCTIONS, counter::INSTRUCTIONS_ISSUED][..],
                "warp instructions executed",
            ),
            (
                &[counter::DRAM_READS, counter::DRAM_READ_BYTES][..],
                "DRAM reads",
            ),
        ];
        let work = [
            (
                &[counter::FLOPS_SP, counter::FLOPS_DP][..],
                "floating-point operations",
            ),
            (
                &[
                    counter::DRAM_READS,
                    counter::DRAM_READ_BYTES,
                    counter::GLOBAL_LOAD_BYTES,
                ][..],
                "bytes read",
            ),
        ];
        let missing = |needs: &[(&[&str], &str)]| -> Vec<String> {
            needs
                .iter()
                .filter(|(names, _)| lacks(names))
                .map(|(names, what)| format!("{what} (`{}`)", names.join("` or `")))
                .collect()
        };
        let mut lacking = missing(&launch);
        let (by_counters, by_work) = (missing(&counted), missing(&work));
        match (work_only, by_counters.is_empty(), by_work.is_empty()) {
            (_, true, _) | (true, false, true) => {}
            (false, false, _) => lacking.extend(by_counters),
            (true, false, false) => lacking.push(format!(
                "{}; or, for wave scaling alone, {}",
                by_counters.join(", "),
                by_work.join(", ")
            )),
        }
        if !lacking.is_empty() {
            return Err(ModelError::invalid(format!(
                "input `observations`: the transfer models need counters the table lacks: {}",
                lacking.join(", ")
            )));
        }
        Ok(Self {
            inst: c(counter::WARP_INSTRUCTIONS),
            issued: c(counter::INSTRUCTIONS_ISSUED),
            warp_size: c(counter::WARP_SIZE),
            threads: c(counter::THREADS),
            flops: [c(counter::FLOPS_SP), c(counter::FLOPS_DP)],
            transactions: [c(counter::DRAM_READS), c(counter::DRAM_WRITES)],
            bytes: [c(counter::DRAM_READ_BYTES), c(counter::DRAM_WRITE_BYTES)],
            global_bytes: [
                c(counter::GLOBAL_LOAD_BYTES),
                c(counter::GLOBAL_STORE_BYTES),
            ],
            grid: [
                c(counter::GRID_SIZE),
                c(counter::GRID_X),
                c(counter::GRID_Y),
            ],
            block: [
                c(counter::BLOCK_SIZE),
                c(counter::BLOCK_X),
                c(counter::BLOCK_Y),
            ],
            registers: c(counter::REGISTERS),
            shared_bytes: c(counter::SHARED_BYTES),
            l2: [c(counter::L2_READS), c(counter::L2_WRITES)],
            shared: [c(counter::SHARED_LOADS), c(counter::SHARED_STORES)],
            global: [c(counter::GLOBAL_LOADS), c(counter::GLOBAL_STORES)],
            active_cycles: c(counter::ACTIVE_CYCLES),
            active_cycles_avg: c(counter::ACTIVE_CYCLES_AVG),
            achieved_occupancy: c(counter::ACHIEVED_OCCUPANCY),
            seed: counter::SEED.iter().map(|n| c(n)).collect(),
        })
    }

    /// The launch of `row`, or what it lacks of its instructions, DRAM reads or configuration.
    /// With `work_only`, a launch without instructions has them NaN, and without DRAM counters
    /// its global bytes stand in, where it has its FLOPs.
    fn work(&self, row: usize, work_only: bool) -> Result<Work, &'static str> {
        let sum = |[a, b]: [Option<&Float64Array>; 2]| {
            value(a, row).unwrap_or(0.0) + value(b, row).unwrap_or(0.0)
        };
        let has_flops = self.flops.iter().any(|f| value(*f, row).is_some());
        let dram_bytes = match (value(self.transactions[0], row), value(self.bytes[0], row)) {
            (Some(_), _) => sum(self.transactions) * DRAM_TRANSACTION_BYTES,
            (None, Some(read)) => read + value(self.bytes[1], row).unwrap_or(0.0),
            (None, None) if work_only && has_flops => {
                value(self.global_bytes[0], row).ok_or(NO_BYTES)?
                    + value(self.global_bytes[1], row).unwrap_or(0.0)
            }
            (None, None) => return Err(NO_BYTES),
        };
        // A total (Nsight Compute's `launch__grid_size`), or x times y.
        let total = |[size, x, y]: [Option<&Float64Array>; 3]| match value(size, row) {
            Some(t) => Some(t),
            None => value(x, row).map(|x| x * value(y, row).unwrap_or(1.0)),
        };
        // Instructions in 32-thread warps: a 64-wide wavefront's count doubled.
        let width = value(self.warp_size, row)
            .filter(|w| *w > 0.0)
            .unwrap_or(32.0);
        let instructions = match value(self.inst, row).or_else(|| value(self.issued, row)) {
            Some(n) => n,
            None if work_only && has_flops => f64::NAN,
            None if work_only => return Err(NO_INSTRUCTIONS_OR_FLOPS),
            None => return Err(NO_INSTRUCTIONS),
        };
        let threads_per_block = total(self.block).ok_or(NO_BLOCK)?;
        let blocks = match total(self.grid) {
            Some(b) => b,
            None => (value(self.threads, row).ok_or(NO_GRID)? / threads_per_block.max(1.0)).ceil(),
        };
        Ok(Work {
            warp_instructions: instructions * width / 32.0,
            flops: sum(self.flops),
            dram_bytes,
            blocks,
            threads_per_block,
            registers_per_thread: value(self.registers, row).unwrap_or(0.0),
            shared_bytes_per_block: value(self.shared_bytes, row).unwrap_or(0.0),
            l2_transactions: sum(self.l2),
            shared_transactions: sum(self.shared),
            global_loads: value(self.global[0], row).unwrap_or(0.0),
            global_stores: value(self.global[1], row).unwrap_or(0.0),
            // NaN where not counted, so that a median over GPUs takes the ones that counted.
            active_cycles: value(self.active_cycles, row).unwrap_or(f64::NAN),
            // Set by `Measurements::read`, which knows the launch's GPU.
            occupancy_share: f64::NAN,
            seed: std::array::from_fn(|i| value(self.seed[i], row).unwrap_or(f64::NAN)),
        })
    }
}

impl Measurements {
    /// The launches of `batch` (an `observations` table). Devices are looked up in `catalogue`;
    /// one it lacks is an error naming the closest entries, or, with `skip_unknown`, left out
    /// and said so. Rows without the instruction count, the DRAM reads or the launch
    /// configuration are left out and counted.
    pub fn from_observations(
        batch: &RecordBatch,
        catalogue: &Catalogue,
        skip_unknown: bool,
    ) -> Result<Self, ModelError> {
        Self::read(batch, catalogue, skip_unknown, false)
    }

    /// A profile to predict from: as [`Measurements::from_observations`], but a launch without
    /// an instruction count is kept (instructions NaN) where it has its FLOPs and the bytes it
    /// moves, DRAM or global (an OpenCL run's computed counters): wave scaling answers it.
    pub fn from_profile(batch: &RecordBatch, catalogue: &Catalogue) -> Result<Self, ModelError> {
        Self::read(batch, catalogue, false, true)
    }

    /// The GPU of a device name met for the first time: its catalogue entry added, or, where
    /// the catalogue lacks it, an error naming the row (`describe`) or, with `skip_unknown`,
    /// none (its rows left out, and said so).
    fn add_gpu(
        &mut self,
        device: &str,
        catalogue: &Catalogue,
        skip_unknown: bool,
        describe: impl Fn() -> String,
    ) -> Result<Option<usize>, ModelError> {
        match catalogue.find(device) {
            Some(d) => {
                let spec = GpuSpec::from_device(d).map_err(ModelError::invalid)?;
                self.gpus.push(spec);
                self.gpu_labels.push(device.to_owned());
                Ok(Some(self.gpus.len() - 1))
            }
            None if skip_unknown => {
                self.left_out.push(format!(
                    "device `{device}`: not in the device catalogue, its rows left out"
                ));
                Ok(None)
            }
            None => Err(ModelError::invalid(format!(
                "{}: device `{device}` is not in the device catalogue (closest: {}); add a catalogue file for it (`yosoku devices` lists them) or set `skip_unknown_devices = true`",
                describe(),
                catalogue.closest(device, 3).join(", ")
            ))),
        }
    }

    fn read(
        batch: &RecordBatch,
        catalogue: &Catalogue,
        skip_unknown: bool,
        work_only: bool,
    ) -> Result<Self, ModelError> {
        let obs = Observations::new("observations", batch)?;
        let columns = WorkColumns::of(&obs, work_only)?;
        let mut m = Measurements {
            gpus: Vec::new(),
            gpu_labels: Vec::new(),
            kernels: Vec::new(),
            launches: Vec::new(),
            cells: Vec::new(),
            by_launch: Vec::new(),
            left_out: Vec::new(),
            dropped: Vec::new(),
        };
        let mut gpu_of: HashMap<String, Option<usize>> = HashMap::new();
        let mut kernel_of: HashMap<String, usize> = HashMap::new();
        let mut launch_of: HashMap<(usize, String, usize), usize> = HashMap::new();
        let mut occurrences: HashMap<(usize, String, usize), usize> = HashMap::new();
        let (mut incomplete, mut unknown_rows) = (0usize, 0usize);
        let mut dropped: std::collections::BTreeMap<(String, &'static str), usize> =
            Default::default();
        for row in 0..obs.rows() {
            let (Some(device), Some(program), Some(variant)) = (
                obs.device.get(row),
                obs.program.get(row),
                obs.variant.get(row),
            ) else {
                incomplete += 1;
                continue;
            };
            let gpu = match gpu_of.get(device) {
                Some(g) => *g,
                None => {
                    let g = m.add_gpu(device, catalogue, skip_unknown, || obs.describe(row))?;
                    gpu_of.insert(device.to_owned(), g);
                    g
                }
            };
            let Some(gpu) = gpu else {
                unknown_rows += 1;
                continue;
            };
            let secs = obs.measured.value(row);
            let work = columns.work(row, work_only).and_then(|w| {
                if secs > 0.0 && secs.is_finite() {
                    Ok(w)
                } else {
                    Err(NO_TIME)
                }
            });
            let mut work = match work {
                Ok(w) => w,
                Err(why) => {
                    incomplete += 1;
                    *dropped.entry((program.to_owned(), why)).or_insert(0) += 1;
                    continue;
                }
            };
            if (work.active_cycles.is_nan() || work.active_cycles <= 0.0)
                && let Some(average) = value(columns.active_cycles_avg, row)
            {
                work.active_cycles = average * m.gpus[gpu].sm_count;
            }
            if let Some(achieved) = value(columns.achieved_occupancy, row) {
                let rates = GpuRates::from_spec(&m.gpus[gpu]);
                work.occupancy_share =
                    occupancy_share(achieved, &KernelWork::from_work(&work), &rates)
                        .unwrap_or(f64::NAN);
            }
            let kernel = *kernel_of.entry(program.to_owned()).or_insert_with(|| {
                m.kernels.push(program.to_owned());
                m.kernels.len() - 1
            });
            let nth = occurrences
                .entry((kernel, variant.to_owned(), gpu))
                .or_insert(0);
            let key = (kernel, variant.to_owned(), *nth);
            *nth += 1;
            let launch = *launch_of.entry(key).or_insert_with(|| {
                m.launches.push((kernel, variant.to_owned()));
                m.by_launch.push(Vec::new());
                m.launches.len() - 1
            });
            m.by_launch[launch].push(m.cells.len());
            m.cells.push(Cell {
                row,
                launch,
                kernel,
                gpu,
                secs,
                work,
            });
        }
        if unknown_rows > 0 {
            m.left_out.push(format!(
                "{unknown_rows} rows of devices not in the catalogue"
            ));
        }
        if incomplete > 0 {
            m.left_out.push(format!(
                "{incomplete} rows without a positive time, the instructions, the DRAM reads or the launch configuration"
            ));
        }
        m.dropped = dropped
            .into_iter()
            .map(|((kernel, why), launches)| Dropped {
                kernel,
                launches,
                why,
            })
            .collect();
        if m.cells.is_empty() {
            return Err(ModelError::invalid(format!(
                "input `observations`: no launch to use ({})",
                m.left_out.join("; ")
            )));
        }
        Ok(m)
    }
}
