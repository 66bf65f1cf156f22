//! The counters family: kernel throughputs, tracing overheads, fitted models (coefficients,
//! summaries, the stepwise path) and their validation.

use crate::{ColumnDef, ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{MODEL, VARIANT, column, label};

pub(super) const MODEL_GROUP_OPT: ColumnDef = column(
    col::MODEL_GROUP,
    T::Utf8,
    true,
    None,
    V::Any,
    "The group the model was fitted to when a step fits one model per group (`group_by`), as `column=value` pairs joined by `, `; null for a single model.",
);

pub(super) const MODEL_GROUP: ColumnDef = label(
    col::MODEL_GROUP,
    "The group the model was fitted to (`column=value` pairs joined by `, `); empty for a single model.",
);

pub(super) const R2: ColumnDef = column(
    col::R2,
    T::Float64,
    true,
    None,
    V::Any,
    "Coefficient of determination 1 - SSE/SST (of the target as modelled); null when undefined.",
);

pub(super) const ADJUSTED_R2: ColumnDef = column(
    col::ADJUSTED_R2,
    T::Float64,
    true,
    None,
    V::Any,
    "R^2 adjusted for the degrees of freedom: 1 - (1 - R^2)(n - 1)/(n - k - 1); null when n <= k + 1.",
);

pub static THROUGHPUTS: TableDef = TableDef {
    name: "throughputs",
    doc: "Candidates (vector widths, variants, devices) of one group side by side: work per second at the largest work every candidate was measured at, the peak over all sizes, and which is fastest.",
    columns: &[
        label(
            col::GROUP,
            "The group compared within, `column=value` pairs (`device=..., program=copy`).",
        ),
        label(
            col::CANDIDATE,
            "The candidate: a value of the compared column (`float4`, a device).",
        ),
        column(
            col::SIZES,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows (sizes, repeats) measured of the candidate.",
        ),
        column(
            col::WORK,
            T::Float64,
            false,
            None,
            V::Positive,
            "The work the candidates are compared at: the largest every candidate of the group was measured at, in `work_unit`.",
        ),
        label(col::WORK_UNIT, "Unit of `work` (`bytes`, `count`)."),
        column(
            col::RATE,
            T::Float64,
            false,
            None,
            V::Positive,
            "Work per second at `work` (mean over repeats), in `rate_unit`.",
        ),
        column(
            col::PEAK_RATE,
            T::Float64,
            false,
            None,
            V::Positive,
            "Highest work per second over all sizes, in `rate_unit` (often a cache-resident size).",
        ),
        label(col::RATE_UNIT, "Unit of the rates (`bytes/s`)."),
        column(
            col::RELATIVE_TO_BEST,
            T::Float64,
            false,
            Some("ratio"),
            V::Positive,
            "`rate` over the best candidate's `rate`.",
        ),
        column(
            col::BEST,
            T::Boolean,
            false,
            None,
            V::Any,
            "The fastest candidate of its group at `work`.",
        ),
    ],
};

pub static OVERHEADS: TableDef = TableDef {
    name: "overheads",
    doc: "Each variant of a program beside its baseline (an instrumented kernel beside the original): the medians of a value (the run time, an instruction count), their ratio, the overhead R = 100 (ratio - 1) in percent and, when the runs were repeated in pairs, the mean of the paired overheads with its 95 % confidence interval.",
    columns: &[
        label(
            col::GROUP,
            "The group compared within, `column=value` pairs (`device=..., program=matmul`).",
        ),
        VARIANT,
        label(
            col::BASELINE_VARIANT,
            "The variant every other is compared with (`original`).",
        ),
        label(
            col::VALUE_COLUMN,
            "What is compared: `measured_secs` or a feature column (`inst_executed`).",
        ),
        label(col::UNIT, "Unit of the medians (`s`, `count`)."),
        column(
            col::BASELINE_RUNS,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows of the baseline variant in the group.",
        ),
        column(
            col::VARIANT_RUNS,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows of this variant in the group.",
        ),
        column(
            col::BASELINE_MEDIAN,
            T::Float64,
            false,
            None,
            V::Positive,
            "Median of the baseline's values, in `unit`.",
        ),
        column(
            col::VARIANT_MEDIAN,
            T::Float64,
            false,
            None,
            V::NonNegative,
            "Median of this variant's values, in `unit`.",
        ),
        column(
            col::RATIO,
            T::Float64,
            false,
            Some("ratio"),
            V::NonNegative,
            "`variant_median` over `baseline_median`.",
        ),
        column(
            col::OVERHEAD_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Finite,
            "100 (ratio - 1): the overhead R of docs/methods.md, section 2 (negative: less than the baseline).",
        ),
        column(
            col::PAIRED_MEAN_PCT,
            T::Float64,
            true,
            Some("%"),
            V::Finite,
            "Mean over the k-th rows of the variant and the baseline of 100 (v_k / b_k - 1) (runs repeated in rounds, each round running every variant); null unless both have the same number of rows, at least 2.",
        ),
        column(
            col::CI_LOW_PCT,
            T::Float64,
            true,
            Some("%"),
            V::Finite,
            "Lower end of the 95 % confidence interval of `paired_mean_pct` (Student's t).",
        ),
        column(
            col::CI_HIGH_PCT,
            T::Float64,
            true,
            Some("%"),
            V::Finite,
            "Upper end of that interval.",
        ),
        column(
            col::LOWEST,
            T::Boolean,
            false,
            None,
            V::Any,
            "The variant of lowest `overhead_pct` in its group, among those eligible (the step's `lowest_among`).",
        ),
    ],
};

pub static MODEL_COEFFICIENTS: TableDef = TableDef {
    name: "model_coefficients",
    doc: "One term of a fitted linear model: its estimate on the scale of its column as the model used it (after `log_features`), with standard error and test, or why it was dropped.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        label(
            col::TERM,
            "`(intercept)`, a feature name, a spline basis column `x:s1`, or an interaction `a*b` (product of z-scores).",
        ),
        column(
            col::ESTIMATE,
            T::Float64,
            true,
            None,
            V::Finite,
            "The coefficient; null when the column was dropped.",
        ),
        column(
            col::STANDARDISED_ESTIMATE,
            T::Float64,
            true,
            None,
            V::Any,
            "estimate x sd(column) / sd(target), both on the scale the model used them (beta weight): the change of the target in its standard deviations per standard deviation of the column; comparable across terms. Null for the intercept, a dropped column, or a constant target.",
        ),
        column(
            col::STD_ERROR,
            T::Float64,
            true,
            None,
            V::Any,
            "Standard error of the estimate; null when dropped or without residual degrees of freedom.",
        ),
        column(
            col::T_VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "estimate / std_error.",
        ),
        column(
            col::P_VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "Two-sided p-value of the t test that the coefficient is zero.",
        ),
        column(
            col::STATUS,
            T::Utf8,
            false,
            None,
            V::OneOf(COEFFICIENT_STATUSES),
            "`kept`, `constant` (zero variance in this group, dropped) or `collinear` (a combination of the columns before it, dropped).",
        ),
    ],
};

/// What happened to a model column.
pub const COEFFICIENT_STATUSES: &[&str] = &["kept", "constant", "collinear"];

pub static MODEL_SUMMARY: TableDef = TableDef {
    name: "model_summary",
    doc: "One fitted linear model: how it was fitted, its fit statistics and its diagnostics.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        label(
            col::METHOD,
            "`ols`, `ridge(lambda)`, `stepwise_forward` or `stepwise_backward`, and the factorisation (`qr`, `cholesky`).",
        ),
        label(
            col::TARGET,
            "What was regressed: `measured_secs` or `ln(measured_secs)`.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::Positive,
            "Rows fitted.",
        ),
        column(
            col::TERM_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Columns in the model besides the intercept (after dropping).",
        ),
        R2,
        ADJUSTED_R2,
        column(
            col::RMSE_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NonNegative,
            "Root mean square error of the fitted times, in seconds (back-transformed when the target is a logarithm): sqrt(SSE / n), divided by the rows, not by the residual degrees of freedom.",
        ),
        column(
            col::RESIDUAL_STD_ERROR,
            T::Float64,
            true,
            None,
            V::NonNegative,
            "Residual standard error on the modelled scale (seconds, or ln seconds for a log target): sqrt(RSS / (n - terms - 1)), divided by the residual degrees of freedom, as statsmodels' sqrt(scale) and R's sigma; null with none left.",
        ),
        column(
            col::CONDITION_NUMBER,
            T::Float64,
            true,
            None,
            V::Any,
            "Condition number of the centred, unit-norm design of the kept columns (collinearity: above ~1e3 estimates are unstable); null for stepwise models.",
        ),
        label(
            col::DROPPED,
            "Columns dropped as constant or collinear, comma-separated.",
        ),
        column(
            col::FLAGS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Warnings: `r2_below_0.8` (the cross-platform papers' bar for a usable model), `ill_conditioned`, `rank_deficient`.",
        ),
    ],
};

pub static SELECTION_PATH: TableDef = TableDef {
    name: "selection_path",
    doc: "One step of a stepwise selection: the term added or removed and the model's fit after it.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        column(
            col::STEP,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "0 for the starting model, then 1, 2, ...",
        ),
        column(
            col::ACTION,
            T::Utf8,
            false,
            None,
            V::OneOf(SELECTION_ACTIONS),
            "`start`, `add` or `remove`.",
        ),
        label(
            col::TERM,
            "The term: a counter (entering with its spline columns) or an interaction `a*b`; empty at the start.",
        ),
        column(
            col::R2,
            T::Float64,
            false,
            None,
            V::Finite,
            "R^2 of the model after the step.",
        ),
        ADJUSTED_R2,
        column(
            col::COLUMN_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Columns in the model after the step (a spline term has several).",
        ),
    ],
};

/// Stepwise actions.
pub const SELECTION_ACTIONS: &[&str] = &["start", "add", "remove"];

pub static VALIDATION_SUMMARY: TableDef = TableDef {
    name: "validation_summary",
    doc: "How well a model predicted out of sample, over all its rows and per program.",
    columns: &[
        MODEL,
        MODEL_GROUP,
        label(
            col::VALIDATION,
            "`fit`, `loo`, `kfold(k)` or `leave_one_out(<column>)`.",
        ),
        column(
            col::PROGRAM,
            T::Utf8,
            true,
            None,
            V::Any,
            "The program the row summarises; null for all rows of the model.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Predictions summarised.",
        ),
        column(
            col::MEAN_ABS_ERROR_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Any,
            "Mean of 100 |predicted - measured| / measured (the papers' error rate).",
        ),
        column(
            col::MEDIAN_ABS_ERROR_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Any,
            "Median of the same.",
        ),
        column(
            col::MAX_ABS_ERROR_PCT,
            T::Float64,
            false,
            Some("%"),
            V::Any,
            "Largest of the same.",
        ),
        column(
            col::MEAN_RATIO,
            T::Float64,
            false,
            None,
            V::Any,
            "Mean of predicted / measured (the per-program bars of Shimada et al.).",
        ),
        R2,
        ADJUSTED_R2,
        column(
            col::RMSE_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Any,
            "Root mean square error of the predicted times.",
        ),
        column(
            col::NEGATIVE_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Predictions below zero.",
        ),
        column(
            col::EXTRAPOLATED_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Predictions for rows with a feature outside the range the model was fitted on.",
        ),
        column(
            col::TINY_COUNTER_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Rows whose counters are far smaller than the rest (median ratio to the column medians below the step's threshold).",
        ),
    ],
};
