//! A rank's prediction as the steps after it read it: each block's predicted executions and
//! time, the rank's compute and communication totals.

/// One block of one rank, predicted.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BlockPrediction {
    pub(super) block: String,
    pub(super) compute: bool,
    pub(super) in_loop: bool,
    /// `setup`, `loop`, `periodic` or `teardown`.
    pub(super) role: &'static str,
    pub(super) period_iterations: Option<i64>,
    pub(super) warmup_secs: f64,
    pub(super) steady_executions: i64,
    pub(super) mean_secs: Option<f64>,
    pub(super) full_executions: f64,
    pub(super) predicted_secs: f64,
}

/// A rank's prediction from one run's blocks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RankPrediction {
    pub(super) device: String,
    pub(super) iterations: usize,
    /// Of the run predicted, and how they were derived from its steps.
    pub(super) full_iterations: u64,
    pub(super) size_note: Option<String>,
    pub(super) warmup: usize,
    pub(super) settled: bool,
    /// Half-width of the 95 % prediction interval of the rank's total.
    pub(super) interval_half_secs: f64,
    /// Drift of the per-iteration cost: percent per 1,000 iterations, when significant.
    pub(super) trend_pct_per_1000: Option<f64>,
    pub(super) trend_extrapolated: bool,
    /// The stationarity test's drift bound (see `SteadyIterations`), relative.
    pub(super) drift_bound: f64,
    /// The 95 % half-width the drift the reduced run cannot exclude adds to the rank's total.
    pub(super) drift_half_secs: f64,
    /// Two lengths whose line was not better supported than the longer run alone: its slope's
    /// t statistic.
    pub(super) two_lengths_not_supported: Option<f64>,
    pub(super) periodic_blocks: usize,
    /// Everything the reduced run measured on this rank.
    pub(super) reduced_secs: f64,
    pub(super) blocks: Vec<BlockPrediction>,
}

impl RankPrediction {
    pub(super) fn secs(&self, compute: bool) -> f64 {
        self.blocks
            .iter()
            .filter(|b| b.compute == compute)
            .map(|b| b.predicted_secs)
            .sum()
    }
}

pub(super) fn error_pct(predicted: f64, measured: Option<f64>) -> Option<f64> {
    measured.map(|m| yosoku_tables::rows::error_pct(predicted, m))
}
