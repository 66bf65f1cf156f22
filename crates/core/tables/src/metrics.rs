//! The canonical metric names, one registry for every crate: the vendor-neutral name of each
//! quantity a profiler import maps to, with its kind (docs/tables.md, `counters.kind`), as
//! `col` holds the column names. Models name the counters they read through the constants here;
//! the names each tool writes for a quantity (its aliases) stay with the importers
//! (`yosoku-profiler-import`'s `metrics.toml`, where a test checks that every `[[metric]]` is here
//! with the same kind, and nothing else is).

/// A canonical metric: its name and its kind (one of [`crate::METRIC_KINDS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    pub name: &'static str,
    pub kind: &'static str,
}

/// Warp-level instructions executed (count).
pub const INST_EXECUTED: &str = "inst_executed";

/// Warp-level instructions issued (including replays) (count).
pub const INST_ISSUED: &str = "inst_issued";

/// Threads per warp (NVIDIA) or wavefront (AMD) (config).
pub const WARP_SIZE: &str = "warp_size";

/// Threads launched (config).
pub const THREADS: &str = "threads";

/// Single-precision floating-point operations (an FMA counts two) (count).
pub const FLOP_COUNT_SP: &str = "flop_count_sp";

/// Double-precision floating-point operations (an FMA counts two) (count).
pub const FLOP_COUNT_DP: &str = "flop_count_dp";

/// DRAM read transactions (32-byte sectors) (count).
pub const DRAM_READ_TRANSACTIONS: &str = "dram_read_transactions";

/// DRAM write transactions (32-byte sectors) (count).
pub const DRAM_WRITE_TRANSACTIONS: &str = "dram_write_transactions";

/// Bytes read from DRAM (count).
pub const DRAM_READ_BYTES: &str = "dram_read_bytes";

/// Bytes written to DRAM (count).
pub const DRAM_WRITE_BYTES: &str = "dram_write_bytes";

/// Blocks in the grid (config).
pub const GRID_SIZE: &str = "grid_size";

/// Threads per block (config).
pub const BLOCK_SIZE: &str = "block_size";

/// Grid dimension x (config).
pub const GRID_X: &str = "grid_x";

/// Grid dimension y (config).
pub const GRID_Y: &str = "grid_y";

/// Block dimension x (config).
pub const BLOCK_X: &str = "block_x";

/// Block dimension y (config).
pub const BLOCK_Y: &str = "block_y";

/// Registers per thread (config).
pub const REGISTERS_PER_THREAD: &str = "registers_per_thread";

/// Static shared memory per block (config).
pub const STATIC_SHARED_MEMORY: &str = "static_shared_memory";

/// L2 read transactions (count).
pub const L2_READ_TRANSACTIONS: &str = "l2_read_transactions";

/// L2 write transactions (count).
pub const L2_WRITE_TRANSACTIONS: &str = "l2_write_transactions";

/// Shared-memory load transactions (count).
pub const SHARED_LOAD_TRANSACTIONS: &str = "shared_load_transactions";

/// Shared-memory store transactions (count).
pub const SHARED_STORE_TRANSACTIONS: &str = "shared_store_transactions";

/// Global load transactions (32-byte sectors) (count).
pub const GLD_TRANSACTIONS: &str = "gld_transactions";

/// Global store transactions (32-byte sectors) (count).
pub const GST_TRANSACTIONS: &str = "gst_transactions";

/// Bytes of global loads at L1 (count).
pub const GLD_BYTES: &str = "gld_bytes";

/// Bytes of global stores at L1 (count).
pub const GST_BYTES: &str = "gst_bytes";

/// Global load requests (warp-level load instructions) (count).
pub const GLD_REQUEST: &str = "gld_request";

/// Global store requests (count).
pub const GST_REQUEST: &str = "gst_request";

/// Control-flow instructions executed (count).
pub const CF_EXECUTED: &str = "cf_executed";

/// Single instructions issued (Kepler event) (count).
pub const INST_ISSUED1: &str = "inst_issued1";

/// Shared-memory load instructions executed (count).
pub const SHARED_LOAD: &str = "shared_load";

/// Shared-memory store instructions executed (count).
pub const SHARED_STORE: &str = "shared_store";

/// Kernel execution time (time).
pub const DURATION: &str = "duration";

/// Elapsed cycles, summed over the SMs (time).
pub const ELAPSED_CYCLES_SM: &str = "elapsed_cycles_sm";

/// Cycles an SM had at least one active warp (time).
pub const ACTIVE_CYCLES: &str = "active_cycles";

/// Cycles an SM had at least one active warp, the average over the SMs (time).
pub const ACTIVE_CYCLES_AVG: &str = "active_cycles_avg";

/// Active warps per active cycle over the maximum (ratio).
pub const ACHIEVED_OCCUPANCY: &str = "achieved_occupancy";

/// Active warps accumulated every cycle (grows with the run time) (time).
pub const ACTIVE_WARPS: &str = "active_warps";

/// Warps launched (count).
pub const WARPS_LAUNCHED: &str = "warps_launched";

/// Single-precision additions (count).
pub const FLOP_COUNT_SP_ADD: &str = "flop_count_sp_add";

/// Single-precision multiplications (count).
pub const FLOP_COUNT_SP_MUL: &str = "flop_count_sp_mul";

/// Single-precision fused multiply-adds (count).
pub const FLOP_COUNT_SP_FMA: &str = "flop_count_sp_fma";

/// Double-precision additions (count).
pub const FLOP_COUNT_DP_ADD: &str = "flop_count_dp_add";

/// Double-precision multiplications (count).
pub const FLOP_COUNT_DP_MUL: &str = "flop_count_dp_mul";

/// Branch instructions executed (count).
pub const BRANCH: &str = "branch";

/// Every canonical metric, in the order `metrics.toml` lists them.
pub static ALL: &[Metric] = &[
    Metric {
        name: "duration",
        kind: "time",
    },
    Metric {
        name: "cpu_time",
        kind: "time",
    },
    Metric {
        name: "elapsed_cycles_sm",
        kind: "time",
    },
    Metric {
        name: "elapsed_cycles",
        kind: "time",
    },
    Metric {
        name: "active_cycles",
        kind: "time",
    },
    Metric {
        name: "active_cycles_avg",
        kind: "time",
    },
    Metric {
        name: "active_warps",
        kind: "time",
    },
    Metric {
        name: "inst_executed",
        kind: "count",
    },
    Metric {
        name: "inst_issued",
        kind: "count",
    },
    Metric {
        name: "inst_issued1",
        kind: "count",
    },
    Metric {
        name: "warps_launched",
        kind: "count",
    },
    Metric {
        name: "cta_launched",
        kind: "count",
    },
    Metric {
        name: "gld_inst_32bit",
        kind: "count",
    },
    Metric {
        name: "gst_inst_32bit",
        kind: "count",
    },
    Metric {
        name: "gld_request",
        kind: "count",
    },
    Metric {
        name: "gst_request",
        kind: "count",
    },
    Metric {
        name: "gld_32b",
        kind: "count",
    },
    Metric {
        name: "gld_64b",
        kind: "count",
    },
    Metric {
        name: "gld_128b",
        kind: "count",
    },
    Metric {
        name: "gst_32b",
        kind: "count",
    },
    Metric {
        name: "gst_64b",
        kind: "count",
    },
    Metric {
        name: "gst_128b",
        kind: "count",
    },
    Metric {
        name: "local_load",
        kind: "count",
    },
    Metric {
        name: "local_store",
        kind: "count",
    },
    Metric {
        name: "warp_serialize",
        kind: "count",
    },
    Metric {
        name: "branch",
        kind: "count",
    },
    Metric {
        name: "divergent_branch",
        kind: "count",
    },
    Metric {
        name: "shared_load",
        kind: "count",
    },
    Metric {
        name: "shared_store",
        kind: "count",
    },
    Metric {
        name: "shared_load_transactions",
        kind: "count",
    },
    Metric {
        name: "shared_store_transactions",
        kind: "count",
    },
    Metric {
        name: "gld_transactions",
        kind: "count",
    },
    Metric {
        name: "gst_transactions",
        kind: "count",
    },
    Metric {
        name: "gld_bytes",
        kind: "count",
    },
    Metric {
        name: "gst_bytes",
        kind: "count",
    },
    Metric {
        name: "dram_read_transactions",
        kind: "count",
    },
    Metric {
        name: "dram_write_transactions",
        kind: "count",
    },
    Metric {
        name: "dram_read_bytes",
        kind: "count",
    },
    Metric {
        name: "dram_write_bytes",
        kind: "count",
    },
    Metric {
        name: "l2_read_transactions",
        kind: "count",
    },
    Metric {
        name: "l2_write_transactions",
        kind: "count",
    },
    Metric {
        name: "cf_issued",
        kind: "count",
    },
    Metric {
        name: "cf_executed",
        kind: "count",
    },
    Metric {
        name: "ldst_issued",
        kind: "count",
    },
    Metric {
        name: "ldst_executed",
        kind: "count",
    },
    Metric {
        name: "flop_count_sp",
        kind: "count",
    },
    Metric {
        name: "flop_count_sp_add",
        kind: "count",
    },
    Metric {
        name: "flop_count_sp_mul",
        kind: "count",
    },
    Metric {
        name: "flop_count_sp_fma",
        kind: "count",
    },
    Metric {
        name: "flop_count_sp_special",
        kind: "count",
    },
    Metric {
        name: "flop_count_dp",
        kind: "count",
    },
    Metric {
        name: "flop_count_dp_add",
        kind: "count",
    },
    Metric {
        name: "flop_count_dp_mul",
        kind: "count",
    },
    Metric {
        name: "issue_slots",
        kind: "count",
    },
    Metric {
        name: "inst_fp_32",
        kind: "count",
    },
    Metric {
        name: "inst_fp_64",
        kind: "count",
    },
    Metric {
        name: "inst_integer",
        kind: "count",
    },
    Metric {
        name: "inst_control",
        kind: "count",
    },
    Metric {
        name: "inst_compute_ld_st",
        kind: "count",
    },
    Metric {
        name: "inst_misc",
        kind: "count",
    },
    Metric {
        name: "flop_count_sp_thread",
        kind: "count",
    },
    Metric {
        name: "ipc",
        kind: "rate",
    },
    Metric {
        name: "issued_ipc",
        kind: "rate",
    },
    Metric {
        name: "gld_requested_throughput",
        kind: "rate",
    },
    Metric {
        name: "gst_requested_throughput",
        kind: "rate",
    },
    Metric {
        name: "gld_throughput",
        kind: "rate",
    },
    Metric {
        name: "gst_throughput",
        kind: "rate",
    },
    Metric {
        name: "dram_read_throughput",
        kind: "rate",
    },
    Metric {
        name: "dram_write_throughput",
        kind: "rate",
    },
    Metric {
        name: "shared_load_throughput",
        kind: "rate",
    },
    Metric {
        name: "shared_store_throughput",
        kind: "rate",
    },
    Metric {
        name: "l2_read_throughput",
        kind: "rate",
    },
    Metric {
        name: "l2_write_throughput",
        kind: "rate",
    },
    Metric {
        name: "memory_throughput",
        kind: "rate",
    },
    Metric {
        name: "achieved_occupancy",
        kind: "ratio",
    },
    Metric {
        name: "occupancy",
        kind: "ratio",
    },
    Metric {
        name: "theoretical_occupancy",
        kind: "ratio",
    },
    Metric {
        name: "shared_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "gld_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "gst_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "branch_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "warp_execution_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "issue_slot_utilization",
        kind: "ratio",
    },
    Metric {
        name: "inst_per_warp",
        kind: "average",
    },
    Metric {
        name: "shared_load_transactions_per_request",
        kind: "average",
    },
    Metric {
        name: "shared_store_transactions_per_request",
        kind: "average",
    },
    Metric {
        name: "gld_transactions_per_request",
        kind: "average",
    },
    Metric {
        name: "gst_transactions_per_request",
        kind: "average",
    },
    Metric {
        name: "flop_sp_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "flop_dp_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "eligible_warps_per_cycle",
        kind: "rate",
    },
    Metric {
        name: "sm_throughput_pct_of_peak",
        kind: "ratio",
    },
    Metric {
        name: "memory_throughput_pct_of_peak",
        kind: "ratio",
    },
    Metric {
        name: "dram_throughput_pct_of_peak",
        kind: "ratio",
    },
    Metric {
        name: "l1_shared_utilization",
        kind: "level",
    },
    Metric {
        name: "dram_utilization",
        kind: "level",
    },
    Metric {
        name: "cf_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "shared_utilization",
        kind: "level",
    },
    Metric {
        name: "sm_frequency",
        kind: "clock",
    },
    Metric {
        name: "dram_frequency",
        kind: "clock",
    },
    Metric {
        name: "grid_size",
        kind: "config",
    },
    Metric {
        name: "block_size",
        kind: "config",
    },
    Metric {
        name: "grid_x",
        kind: "config",
    },
    Metric {
        name: "grid_y",
        kind: "config",
    },
    Metric {
        name: "grid_z",
        kind: "config",
    },
    Metric {
        name: "block_x",
        kind: "config",
    },
    Metric {
        name: "block_y",
        kind: "config",
    },
    Metric {
        name: "block_z",
        kind: "config",
    },
    Metric {
        name: "registers_per_thread",
        kind: "config",
    },
    Metric {
        name: "static_shared_memory",
        kind: "config",
    },
    Metric {
        name: "dynamic_shared_memory",
        kind: "config",
    },
    Metric {
        name: "threads",
        kind: "config",
    },
    Metric {
        name: "transfer_size",
        kind: "count",
    },
    Metric {
        name: "transfer_throughput",
        kind: "rate",
    },
    Metric {
        name: "inst_valu",
        kind: "count",
    },
    Metric {
        name: "inst_salu",
        kind: "count",
    },
    Metric {
        name: "inst_smem",
        kind: "count",
    },
    Metric {
        name: "inst_flat",
        kind: "count",
    },
    Metric {
        name: "inst_shared",
        kind: "count",
    },
    Metric {
        name: "l2_hits",
        kind: "count",
    },
    Metric {
        name: "l2_misses",
        kind: "count",
    },
    Metric {
        name: "gpu_cycles_total",
        kind: "time",
    },
    Metric {
        name: "scalar_registers_per_wave",
        kind: "config",
    },
    Metric {
        name: "accum_registers_per_thread",
        kind: "config",
    },
    Metric {
        name: "scratch_per_thread",
        kind: "config",
    },
    Metric {
        name: "warp_size",
        kind: "config",
    },
    Metric {
        name: "shared_load_bytes",
        kind: "count",
    },
    Metric {
        name: "shared_store_bytes",
        kind: "count",
    },
    Metric {
        name: "vector_width",
        kind: "config",
    },
    Metric {
        name: "inst_fp_16",
        kind: "count",
    },
    Metric {
        name: "inst_bit_convert",
        kind: "count",
    },
    Metric {
        name: "inst_inter_thread_communication",
        kind: "count",
    },
    Metric {
        name: "inst_executed_global_loads",
        kind: "count",
    },
    Metric {
        name: "inst_executed_global_stores",
        kind: "count",
    },
    Metric {
        name: "inst_executed_local_loads",
        kind: "count",
    },
    Metric {
        name: "inst_executed_local_stores",
        kind: "count",
    },
    Metric {
        name: "inst_executed_global_atomics",
        kind: "count",
    },
    Metric {
        name: "inst_executed_global_reductions",
        kind: "count",
    },
    Metric {
        name: "inst_executed_shared_atomics",
        kind: "count",
    },
    Metric {
        name: "inst_executed_surface_loads",
        kind: "count",
    },
    Metric {
        name: "inst_executed_surface_stores",
        kind: "count",
    },
    Metric {
        name: "inst_executed_tex_ops",
        kind: "count",
    },
    Metric {
        name: "flop_count_hp",
        kind: "count",
    },
    Metric {
        name: "flop_count_hp_add",
        kind: "count",
    },
    Metric {
        name: "flop_count_hp_mul",
        kind: "count",
    },
    Metric {
        name: "flop_count_hp_fma",
        kind: "count",
    },
    Metric {
        name: "flop_count_dp_fma",
        kind: "count",
    },
    Metric {
        name: "local_load_transactions",
        kind: "count",
    },
    Metric {
        name: "local_store_transactions",
        kind: "count",
    },
    Metric {
        name: "local_load_requests",
        kind: "count",
    },
    Metric {
        name: "local_store_requests",
        kind: "count",
    },
    Metric {
        name: "texture_load_requests",
        kind: "count",
    },
    Metric {
        name: "global_atomic_requests",
        kind: "count",
    },
    Metric {
        name: "global_reduction_requests",
        kind: "count",
    },
    Metric {
        name: "atomic_transactions",
        kind: "count",
    },
    Metric {
        name: "l2_atomic_transactions",
        kind: "count",
    },
    Metric {
        name: "l2_reduction_transactions",
        kind: "count",
    },
    Metric {
        name: "l2_tex_read_transactions",
        kind: "count",
    },
    Metric {
        name: "l2_tex_write_transactions",
        kind: "count",
    },
    Metric {
        name: "l2_global_load_bytes",
        kind: "count",
    },
    Metric {
        name: "l2_local_load_bytes",
        kind: "count",
    },
    Metric {
        name: "l2_sectors",
        kind: "count",
    },
    Metric {
        name: "l2_requests",
        kind: "count",
    },
    Metric {
        name: "l1tex_sectors",
        kind: "count",
    },
    Metric {
        name: "l1tex_requests",
        kind: "count",
    },
    Metric {
        name: "dram_bytes",
        kind: "count",
    },
    Metric {
        name: "sysmem_read_transactions",
        kind: "count",
    },
    Metric {
        name: "sysmem_write_transactions",
        kind: "count",
    },
    Metric {
        name: "shared_ld_bank_conflict",
        kind: "count",
    },
    Metric {
        name: "shared_st_bank_conflict",
        kind: "count",
    },
    Metric {
        name: "unique_warps_launched",
        kind: "count",
    },
    Metric {
        name: "thread_inst_executed",
        kind: "count",
    },
    Metric {
        name: "inst_executed_sm",
        kind: "count",
    },
    Metric {
        name: "tex_cache_transactions",
        kind: "count",
    },
    Metric {
        name: "ecc_transactions",
        kind: "count",
    },
    Metric {
        name: "pcie_total_data_received",
        kind: "count",
    },
    Metric {
        name: "pcie_total_data_transmitted",
        kind: "count",
    },
    Metric {
        name: "tex_cache_hit_rate",
        kind: "ratio",
    },
    Metric {
        name: "global_hit_rate",
        kind: "ratio",
    },
    Metric {
        name: "local_hit_rate",
        kind: "ratio",
    },
    Metric {
        name: "l2_tex_hit_rate",
        kind: "ratio",
    },
    Metric {
        name: "l2_tex_read_hit_rate",
        kind: "ratio",
    },
    Metric {
        name: "l2_tex_write_hit_rate",
        kind: "ratio",
    },
    Metric {
        name: "sm_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "warp_nonpred_execution_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "inst_replay_overhead",
        kind: "average",
    },
    Metric {
        name: "shared_replay_overhead",
        kind: "average",
    },
    Metric {
        name: "global_cache_replay_overhead",
        kind: "average",
    },
    Metric {
        name: "local_memory_overhead",
        kind: "ratio",
    },
    Metric {
        name: "local_load_transactions_per_request",
        kind: "average",
    },
    Metric {
        name: "local_store_transactions_per_request",
        kind: "average",
    },
    Metric {
        name: "flop_hp_efficiency",
        kind: "ratio",
    },
    Metric {
        name: "l2_throughput_pct_of_peak",
        kind: "ratio",
    },
    Metric {
        name: "l1tex_throughput_pct_of_peak",
        kind: "ratio",
    },
    Metric {
        name: "stall_inst_fetch",
        kind: "ratio",
    },
    Metric {
        name: "stall_exec_dependency",
        kind: "ratio",
    },
    Metric {
        name: "stall_memory_dependency",
        kind: "ratio",
    },
    Metric {
        name: "stall_texture",
        kind: "ratio",
    },
    Metric {
        name: "stall_sync",
        kind: "ratio",
    },
    Metric {
        name: "stall_other",
        kind: "ratio",
    },
    Metric {
        name: "stall_pipe_busy",
        kind: "ratio",
    },
    Metric {
        name: "stall_constant_memory_dependency",
        kind: "ratio",
    },
    Metric {
        name: "stall_memory_throttle",
        kind: "ratio",
    },
    Metric {
        name: "stall_not_selected",
        kind: "ratio",
    },
    Metric {
        name: "stall_sleeping",
        kind: "ratio",
    },
    Metric {
        name: "stall_mio_throttle",
        kind: "ratio",
    },
    Metric {
        name: "stall_math_pipe_throttle",
        kind: "ratio",
    },
    Metric {
        name: "stall_short_scoreboard",
        kind: "ratio",
    },
    Metric {
        name: "stall_wait",
        kind: "ratio",
    },
    Metric {
        name: "stall_lg_throttle",
        kind: "ratio",
    },
    Metric {
        name: "stall_drain",
        kind: "ratio",
    },
    Metric {
        name: "stall_dispatch",
        kind: "ratio",
    },
    Metric {
        name: "stall_misc",
        kind: "ratio",
    },
    Metric {
        name: "stall_membar",
        kind: "ratio",
    },
    Metric {
        name: "stall_branch_resolving",
        kind: "ratio",
    },
    Metric {
        name: "tex_cache_throughput",
        kind: "rate",
    },
    Metric {
        name: "l2_tex_read_throughput",
        kind: "rate",
    },
    Metric {
        name: "l2_tex_write_throughput",
        kind: "rate",
    },
    Metric {
        name: "local_load_throughput",
        kind: "rate",
    },
    Metric {
        name: "local_store_throughput",
        kind: "rate",
    },
    Metric {
        name: "sysmem_read_throughput",
        kind: "rate",
    },
    Metric {
        name: "sysmem_write_throughput",
        kind: "rate",
    },
    Metric {
        name: "l2_atomic_throughput",
        kind: "rate",
    },
    Metric {
        name: "atomic_throughput",
        kind: "rate",
    },
    Metric {
        name: "ecc_throughput",
        kind: "rate",
    },
    Metric {
        name: "dram_throughput",
        kind: "rate",
    },
    Metric {
        name: "tex_utilization",
        kind: "level",
    },
    Metric {
        name: "l2_utilization",
        kind: "level",
    },
    Metric {
        name: "sysmem_utilization",
        kind: "level",
    },
    Metric {
        name: "sysmem_read_utilization",
        kind: "level",
    },
    Metric {
        name: "sysmem_write_utilization",
        kind: "level",
    },
    Metric {
        name: "ldst_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "single_precision_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "double_precision_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "half_precision_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "special_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "tex_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "tensor_precision_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "tensor_int_fu_utilization",
        kind: "level",
    },
    Metric {
        name: "ldst_fu_pct_of_peak",
        kind: "ratio",
    },
    Metric {
        name: "cluster_size",
        kind: "config",
    },
    Metric {
        name: "waves_per_sm",
        kind: "config",
    },
    Metric {
        name: "sm_count",
        kind: "config",
    },
    Metric {
        name: "shared_memory_per_block",
        kind: "config",
    },
    Metric {
        name: "occupancy_limit_registers",
        kind: "config",
    },
    Metric {
        name: "occupancy_limit_shared_mem",
        kind: "config",
    },
    Metric {
        name: "occupancy_limit_warps",
        kind: "config",
    },
    Metric {
        name: "occupancy_limit_blocks",
        kind: "config",
    },
    Metric {
        name: "dram_cycles_active",
        kind: "time",
    },
    Metric {
        name: "dram_cycles_elapsed",
        kind: "time",
    },
    Metric {
        name: "fbpa_dram_sectors",
        kind: "count",
    },
    Metric {
        name: "gpc_cycles_elapsed",
        kind: "time",
    },
    Metric {
        name: "idc_request_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l1tex_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l1tex_cycles_elapsed",
        kind: "time",
    },
    Metric {
        name: "l1tex_data_bank_reads",
        kind: "count",
    },
    Metric {
        name: "l1tex_data_bank_writes",
        kind: "count",
    },
    Metric {
        name: "l1tex_data_pipe_lsu_wavefronts",
        kind: "count",
    },
    Metric {
        name: "l1tex_data_pipe_tex_wavefronts",
        kind: "count",
    },
    Metric {
        name: "l1tex_f_wavefronts",
        kind: "count",
    },
    Metric {
        name: "l1tex_lsu_writeback_active",
        kind: "time",
    },
    Metric {
        name: "l1tex_lsuin_requests",
        kind: "count",
    },
    Metric {
        name: "l1tex_m_l1tex2xbar_req_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l1tex_m_xbar2l1tex_read_sectors",
        kind: "count",
    },
    Metric {
        name: "l1tex_m_xbar2l1tex_read_sectors_mem_dshared",
        kind: "count",
    },
    Metric {
        name: "l1tex_tex_writeback_active",
        kind: "time",
    },
    Metric {
        name: "l1tex_texin_sm2tex_req_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l1tex_tmain_requests",
        kind: "count",
    },
    Metric {
        name: "l2_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l2_cycles_elapsed",
        kind: "time",
    },
    Metric {
        name: "l2_d_atomic_input_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l2_d_decomp_input_sectors",
        kind: "count",
    },
    Metric {
        name: "l2_d_sectors",
        kind: "count",
    },
    Metric {
        name: "l2_d_sectors_fill_device",
        kind: "count",
    },
    Metric {
        name: "l2_d_sectors_fill_sysmem",
        kind: "count",
    },
    Metric {
        name: "l2_lts2xbar_cycles_active",
        kind: "time",
    },
    Metric {
        name: "l2_t_tag_requests",
        kind: "count",
    },
    Metric {
        name: "l2_xbar2lts_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_inst_executed_pipe_adu",
        kind: "count",
    },
    Metric {
        name: "sm_inst_executed_pipe_cbu_pred_on_any",
        kind: "count",
    },
    Metric {
        name: "sm_inst_executed_pipe_ipa",
        kind: "count",
    },
    Metric {
        name: "sm_inst_executed_pipe_lsu",
        kind: "count",
    },
    Metric {
        name: "sm_inst_executed_pipe_tex",
        kind: "count",
    },
    Metric {
        name: "sm_inst_executed_pipe_uniform",
        kind: "count",
    },
    Metric {
        name: "sm_inst_executed_pipe_xu",
        kind: "count",
    },
    Metric {
        name: "sm_issue_active",
        kind: "time",
    },
    Metric {
        name: "sm_mio2rf_writeback_active",
        kind: "time",
    },
    Metric {
        name: "sm_mio_inst_issued",
        kind: "count",
    },
    Metric {
        name: "sm_mio_pq_read_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_mio_pq_write_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_alu_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_fma_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_fmaheavy_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_fp64_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_shared_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_tensor_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_tensor_op_dmma_cycles_active",
        kind: "time",
    },
    Metric {
        name: "sm_pipe_tma_cycles_active",
        kind: "time",
    },
    Metric {
        name: "smsp_cycles_active",
        kind: "time",
    },
    Metric {
        name: "smsp_cycles_elapsed",
        kind: "time",
    },
    Metric {
        name: "smsp_warps_active",
        kind: "time",
    },
];

/// The canonical metric called `name`.
pub fn find(name: &str) -> Option<&'static Metric> {
    ALL.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_kinds_known() {
        let mut seen = std::collections::BTreeSet::new();
        for m in ALL {
            assert!(seen.insert(m.name), "{} is listed twice", m.name);
            assert!(crate::METRIC_KINDS.contains(&m.kind), "{m:?}");
        }
        assert_eq!(find(INST_EXECUTED).map(|m| m.kind), Some("count"));
        assert_eq!(find(DURATION).map(|m| m.kind), Some("time"));
    }
}
