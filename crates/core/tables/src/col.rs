//! Column names of the canonical tables. Code refers to columns through these constants only.

pub const RUN_ID: &str = "run_id";
pub const DEVICE: &str = "device";
pub const PROGRAM: &str = "program";
pub const VARIANT: &str = "variant";
pub const KERNEL: &str = "kernel";
pub const PARAMETERS: &str = "parameters";
pub const PHASE: &str = "phase";
pub const REPETITIONS: &str = "repetitions";
pub const MEASURED_SECS: &str = "measured_secs";

pub const METRIC: &str = "metric";
pub const RAW_NAME: &str = "raw_name";
pub const VALUE: &str = "value";
pub const UNIT: &str = "unit";

pub const BLOCK_ID: &str = "block_id";
pub const THREAD_ID: &str = "thread_id";
pub const SM_ID: &str = "sm_id";
pub const POINT_ID: &str = "point_id";
pub const TIMESTAMP_TICKS: &str = "timestamp_ticks";
pub const TIME_NS: &str = "time_ns";
pub const FLAG: &str = "flag";
pub const RECORDS: &str = "records";
pub const OFFSET_TICKS: &str = "offset_ticks";
pub const FIRST_NS: &str = "first_ns";
pub const LAST_NS: &str = "last_ns";

pub const TIMELINE: &str = "timeline";
pub const LANE: &str = "lane";
pub const LANE_KIND: &str = "lane_kind";
pub const NAME: &str = "name";
pub const CATEGORY: &str = "category";
pub const EVENT: &str = "event";
pub const START_NS: &str = "start_ns";
pub const DURATION_NS: &str = "duration_ns";
pub const DEPTH: &str = "depth";
pub const SOURCE_ROW: &str = "source_row";
pub const FLOW_ID: &str = "flow_id";
pub const ARGS: &str = "args";

pub const RANK: &str = "rank";
pub const BLOCK: &str = "block";
pub const KIND: &str = "kind";
pub const ORIGIN: &str = "origin";
pub const CALL_SITE: &str = "call_site";
pub const RANKS: &str = "ranks";
pub const COMMAND: &str = "command";
pub const BINDING: &str = "binding";
pub const WALL_SECS: &str = "wall_secs";
pub const MPI_CALLS: &str = "mpi_calls";
pub const LOG_END: &str = "log_end";
pub const ITERATION: &str = "iteration";
pub const START_SECS: &str = "start_secs";
pub const DURATION_SECS: &str = "duration_secs";
pub const IN_LOOP: &str = "in_loop";
pub const BLOCK_ROLE: &str = "block_role";
pub const PERIOD_ITERATIONS: &str = "period_iterations";
pub const ITERATIONS: &str = "iterations";
pub const SUB_ITERATIONS: &str = "sub_iterations";
pub const ITERATIONS_BY: &str = "iterations_by";
pub const ITERATION_START: &str = "iteration_start";
pub const WARMUP_SECS: &str = "warmup_secs";
pub const STEADY_EXECUTIONS: &str = "steady_executions";
pub const MEAN_SECS: &str = "mean_secs";
pub const FULL_EXECUTIONS: &str = "full_executions";

pub const EXEC_UNIT: &str = "exec_unit";
pub const VECTOR: &str = "vector";
pub const DTYPE: &str = "dtype";
pub const OP: &str = "op";
pub const DTYPE_TO: &str = "dtype_to";
pub const THROUGHPUT_OPS_PER_SEC: &str = "throughput_ops_per_sec";
pub const EXECUTIONS: &str = "executions";
pub const COUNT: &str = "count";
pub const COUNT_BASIS: &str = "count_basis";

pub const PATH: &str = "path";
pub const TRANSFER_COUNT: &str = "transfer_count";
pub const SIZE_BYTES: &str = "size_bytes";
pub const BANDWIDTH_BYTES_PER_SEC: &str = "bandwidth_bytes_per_sec";
pub const SAMPLES: &str = "samples";
pub const PROVENANCE: &str = "provenance";

pub const MODEL: &str = "model";
pub const COMPONENT: &str = "component";
pub const WORK: &str = "work";
pub const WORK_UNIT: &str = "work_unit";
pub const RATE: &str = "rate";
pub const RATE_UNIT: &str = "rate_unit";
pub const PREDICTED_SECS: &str = "predicted_secs";
pub const ERROR_PCT: &str = "error_pct";
pub const FLAGS: &str = "flags";

pub const TABLE_NAME: &str = "table_name";
pub const COLUMN_NAME: &str = "column_name";
pub const LABEL: &str = "label";
pub const SOURCE: &str = "source";
pub const COMPUTED: &str = "computed";
pub const REFERENCE: &str = "reference";
pub const DIFFERENCE: &str = "difference";

pub const VENDOR: &str = "vendor";
pub const PLATFORM: &str = "platform";
pub const DRIVER_VERSION: &str = "driver_version";
pub const DEVICE_TYPE: &str = "device_type";
pub const COMPUTE_UNITS: &str = "compute_units";
pub const CLOCK_MHZ: &str = "clock_mhz";
pub const GLOBAL_MEMORY_BYTES: &str = "global_memory_bytes";
pub const LOCAL_MEMORY_BYTES: &str = "local_memory_bytes";
pub const L2_CACHE_BYTES: &str = "l2_cache_bytes";
pub const MAX_WORK_GROUP_SIZE: &str = "max_work_group_size";
pub const PREFERRED_VECTOR_WIDTHS: &str = "preferred_vector_widths";
pub const MEMORY_BANDWIDTH_BYTES_PER_SEC: &str = "memory_bandwidth_bytes_per_sec";
pub const DESCRIPTION: &str = "description";

pub const LAUNCHES: &str = "launches";
pub const WARMUP_LAUNCHES: &str = "warmup_launches";
pub const MEDIAN_SECS: &str = "median_secs";
pub const MIN_SECS: &str = "min_secs";
pub const MAX_SECS: &str = "max_secs";
pub const CV: &str = "cv";
pub const HOST_MEDIAN_SECS: &str = "host_median_secs";
pub const STABLE: &str = "stable";
pub const CHECK: &str = "check";
pub const LAUNCH_INDEX: &str = "launch_index";
pub const WARMUP: &str = "warmup";
pub const DEVICE_SECS: &str = "device_secs";
pub const HOST_SECS: &str = "host_secs";
pub const SUBMIT_TO_START_SECS: &str = "submit_to_start_secs";

pub const GROUP: &str = "group";
pub const CANDIDATE: &str = "candidate";
pub const SIZES: &str = "sizes";
pub const PEAK_RATE: &str = "peak_rate";
pub const RELATIVE_TO_BEST: &str = "relative_to_best";
pub const BEST: &str = "best";

pub const MIX_RATIO: &str = "mix_ratio";
pub const WINDOW_SECS: &str = "window_secs";
pub const OPS_PER_WINDOW: &str = "ops_per_window";

pub const TOOL: &str = "tool";
pub const MAPPED: &str = "mapped";
pub const OCCURRENCES: &str = "occurrences";
pub const NULLS: &str = "nulls";

pub const MODEL_GROUP: &str = "model_group";
pub const VALIDATION: &str = "validation";
pub const HELD_OUT: &str = "held_out";
pub const INTERVAL_LOW_SECS: &str = "interval_low_secs";
pub const CONFIGURATION: &str = "configuration";
pub const AXIS_VALUE: &str = "axis_value";
pub const SERIES: &str = "series";
pub const FITTED: &str = "fitted";
pub const EXTRAPOLATED: &str = "extrapolated";
pub const INTERVAL_HIGH_SECS: &str = "interval_high_secs";
/// In `observations` made by a cross-device join: the device the features were measured on.
pub const FEATURE_DEVICE: &str = "feature_device";

pub const TERM: &str = "term";
pub const FEATURE: &str = "feature";
pub const ESTIMATE: &str = "estimate";
pub const STANDARDISED_ESTIMATE: &str = "standardised_estimate";
pub const STD_ERROR: &str = "std_error";
pub const T_VALUE: &str = "t_value";
pub const P_VALUE: &str = "p_value";
pub const STATUS: &str = "status";

pub const METHOD: &str = "method";
pub const TARGET: &str = "target";
pub const OBSERVATION_COUNT: &str = "observation_count";
pub const TERM_COUNT: &str = "term_count";
pub const FORMULA: &str = "formula";
pub const RSS: &str = "rss";
pub const SMAPE_PCT: &str = "smape_pct";
pub const CROSS_VALIDATED: &str = "cross_validated";
pub const R2: &str = "r2";
pub const ADJUSTED_R2: &str = "adjusted_r2";
pub const RMSE_SECS: &str = "rmse_secs";
pub const RESIDUAL_STD_ERROR: &str = "residual_std_error";
pub const CONDITION_NUMBER: &str = "condition_number";
pub const DROPPED: &str = "dropped";

pub const STEP: &str = "step";
pub const ACTION: &str = "action";
pub const COLUMN_COUNT: &str = "column_count";

pub const MEAN_ABS_ERROR_PCT: &str = "mean_abs_error_pct";
pub const PREDICTED_COUNT: &str = "predicted_count";
pub const WITHIN_25_PCT: &str = "within_25_pct";
pub const INTERVAL_COVERAGE_PCT: &str = "interval_coverage_pct";
pub const NOT_PREDICTED: &str = "not_predicted";
pub const LEARNED: &str = "learned";
pub const MEDIAN_ABS_ERROR_PCT: &str = "median_abs_error_pct";
pub const MAX_ABS_ERROR_PCT: &str = "max_abs_error_pct";
pub const MEAN_RATIO: &str = "mean_predicted_over_measured";
pub const NEGATIVE_COUNT: &str = "negative_count";
pub const EXTRAPOLATED_COUNT: &str = "extrapolated_count";
pub const TINY_COUNTER_COUNT: &str = "tiny_counter_count";

pub const TITLE: &str = "title";
pub const ROW_LABEL: &str = "row_label";
pub const COLUMN_LABEL: &str = "column_label";
pub const TEXT: &str = "text";

// `overheads`
pub const VALUE_COLUMN: &str = "value_column";
pub const BASELINE_VARIANT: &str = "baseline_variant";
pub const BASELINE_RUNS: &str = "baseline_runs";
pub const BASELINE_MEDIAN: &str = "baseline_median";
pub const VARIANT_RUNS: &str = "variant_runs";
pub const VARIANT_MEDIAN: &str = "variant_median";
pub const RATIO: &str = "ratio";
pub const OVERHEAD_PCT: &str = "overhead_pct";
pub const PAIRED_MEAN_PCT: &str = "paired_mean_pct";
pub const CI_LOW_PCT: &str = "ci_low_pct";
pub const CI_HIGH_PCT: &str = "ci_high_pct";
pub const LOWEST: &str = "lowest";
