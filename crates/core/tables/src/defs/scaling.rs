//! The scaling family: each call path's model, its measured points and its curve.

use crate::{ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{DEVICE, PHASE, PROGRAM, REPETITIONS, VARIANT, column, label};
use super::counters::ADJUSTED_R2;

pub static SCALING_MODELS: TableDef = TableDef {
    name: "scaling_models",
    doc: "One performance-model-normal-form model per call path (device, program, variant) and phase over its numeric parameters, found by Extra-P's hypothesis search (docs/methods.md, section 7).",
    columns: &[
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        label(
            col::PARAMETERS,
            "The parameters the model is over, comma-separated, as in the runs' `parameters`.",
        ),
        label(
            col::FORMULA,
            "The model as Extra-P writes it: `c0 + c1 * n^(3/2) * log2(n)^(1) + ...`, times in seconds.",
        ),
        column(
            col::TERM_COUNT,
            T::Int64,
            false,
            None,
            V::NonNegative,
            "Terms besides the constant.",
        ),
        column(
            col::OBSERVATION_COUNT,
            T::Int64,
            false,
            None,
            V::Positive,
            "Measurement points fitted (repetitions of a point reduced to their mean or median).",
        ),
        column(
            col::RSS,
            T::Float64,
            false,
            Some("s^2"),
            V::NonNegative,
            "Residual sum of squares: of the leave-one-out predictions for one parameter, in-sample for several (as the model was selected).",
        ),
        column(
            col::SMAPE_PCT,
            T::Float64,
            false,
            Some("%"),
            V::NonNegative,
            "Symmetric mean absolute percentage error, measured as `rss` is.",
        ),
        ADJUSTED_R2,
        column(
            col::CROSS_VALIDATED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether `rss` and `smape_pct` are leave-one-out.",
        ),
        column(
            col::HELD_OUT,
            T::Utf8,
            true,
            None,
            V::Any,
            "The configuration left out of the fit and predicted (`n=8388608`); null when every point was fitted.",
        ),
    ],
};

pub static SCALING_POINTS: TableDef = TableDef {
    name: "scaling_points",
    doc: "One measured configuration of a call path a scaling model was fitted to or predicted: its repetitions' mean and spread, placed on the model's first parameter (the axis) and the values of the others (the series).",
    columns: &[
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        label(
            col::CONFIGURATION,
            "Every parameter's value: `n=97;ranks=4`.",
        ),
        column(
            col::AXIS_VALUE,
            T::Float64,
            false,
            None,
            V::Any,
            "The value of the model's first parameter, the plot's horizontal axis.",
        ),
        label(
            col::SERIES,
            "The other parameters' values (`ranks=4`): one curve each; empty for a model of one parameter.",
        ),
        REPETITIONS,
        column(
            col::MEASURED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Mean time of one repetition.",
        ),
        column(
            col::MIN_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Fastest repetition.",
        ),
        column(
            col::MAX_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Positive,
            "Slowest repetition.",
        ),
        column(
            col::FITTED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether the model was fitted to this configuration (false: held out and predicted).",
        ),
    ],
};

pub static SCALING_CURVES: TableDef = TableDef {
    name: "scaling_curves",
    doc: "A scaling model evaluated along its first parameter, from the smallest measured value to 1.5 times the largest, for each series of the other parameters' measured values, with its prediction interval.",
    columns: &[
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        label(
            col::SERIES,
            "The other parameters' values (`ranks=4`); empty for a model of one parameter.",
        ),
        column(
            col::AXIS_VALUE,
            T::Float64,
            false,
            None,
            V::Any,
            "The value of the model's first parameter.",
        ),
        column(
            col::PREDICTED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::Any,
            "The model's time there (may be negative where a model with a negative constant is extrapolated down).",
        ),
        column(
            col::INTERVAL_LOW_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Any,
            "Lower end of the prediction interval; null where the fit has no residual degrees of freedom.",
        ),
        column(
            col::INTERVAL_HIGH_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Any,
            "Upper end of the prediction interval.",
        ),
        column(
            col::EXTRAPOLATED,
            T::Boolean,
            false,
            None,
            V::Any,
            "Whether this value lies beyond the largest one the model was fitted to in this series.",
        ),
    ],
};
