//! The transfer family: the fitted transfer model's coefficients and the held-out scores of every
//! scheme and method.

use crate::{ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{MODEL, column, label};

pub static TRANSFER_SCORES: TableDef = TableDef {
    name: "transfer_scores",
    doc: "How well each method predicted held-out GPUs and kernels (docs/methods.md, section 6): per validation scheme and method, the rows held out, how many were predicted, the absolute errors and the coverage of the 95 % intervals.",
    columns: &[
        label(
            col::VALIDATION,
            "The scheme: `leave_one_gpu_out`, `leave_one_gpu_out_other_architectures`, `leave_one_architecture_out`, `leave_one_kernel_out`, `leave_one_kernel_and_gpu_out`.",
        ),
        MODEL,
        column(
            col::LEARNED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether the method is a learned model (true) or a baseline.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Held-out rows (launches on GPUs).",
        ),
        column(
            col::PREDICTED_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Rows the method gave a time for.",
        ),
        column(
            col::MEAN_ABS_ERROR_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Mean of 100 |predicted - measured| / measured over the predicted rows.",
        ),
        column(
            col::MEDIAN_ABS_ERROR_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Median of the same.",
        ),
        column(
            col::WITHIN_25_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Share of the predicted rows within 25 % of the measurement.",
        ),
        column(
            col::INTERVAL_COVERAGE_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NonNegative,
            "Share of the predicted rows whose measurement lies inside the 95 % interval.",
        ),
        column(
            col::NOT_PREDICTED,
            T::Utf8,
            true,
            None,
            V::Any,
            "Rows without a prediction, by reason (`no_source: 12; negative: 3`).",
        ),
    ],
};

pub static TRANSFER_COEFFICIENTS: TableDef = TableDef {
    name: "transfer_coefficients",
    doc: "The transfer model a `gpu_transfer_fit` step fitted on every training launch (docs/methods.md, section 6): per model (within architectures, across them) and device feature, how the log time of one launch changes between GPUs per unit of the feature.",
    columns: &[
        label(
            col::MODEL,
            "`within_architecture` (used where a GPU of the target's architecture measured the launch) or `across_architectures`.",
        ),
        label(
            col::TERM,
            "A device feature of the launch on a GPU (`ln_roofline_secs`, `ln_waves`, ...), and `ln_physics_secs`, the physics model's log time of the launch on the GPU: 1 where the ridge learned a correction to the physics model's ratio between two GPUs, 0 where it learned the times themselves (the fit chose by a nested cross-validation over its training GPUs; a fixed offset, not a fitted slope, so both estimates are the same).",
        ),
        column(
            col::ESTIMATE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The change of ln(seconds) per unit of the feature, within one launch.",
        ),
        column(
            col::STANDARDISED_ESTIMATE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The same per standard deviation of the feature over the training launches: comparable across features.",
        ),
    ],
};
