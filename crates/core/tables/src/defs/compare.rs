//! The compare family: predictions (of every model, against measurements where there are any),
//! the printed report, published reference values and the comparison with them.

use crate::{ColumnType as T, TableDef, ValueCheck as V, col};

use super::columns::{DEVICE, MODEL, PHASE, PROGRAM, REPETITIONS, VARIANT, column, label};
use super::counters::MODEL_GROUP_OPT;

pub static PREDICTIONS: TableDef = TableDef {
    name: "predictions",
    doc: "A model's predicted time for one run, with the measured time and the error when known.",
    columns: &[
        MODEL,
        DEVICE,
        PROGRAM,
        VARIANT,
        PHASE,
        REPETITIONS,
        column(
            col::PREDICTED_SECS,
            T::Float64,
            false,
            Some("s"),
            V::NotNan,
            "Predicted time of all `repetitions` together (negative values are kept and flagged `negative`; a log-time model whose prediction overflows gives +inf, flagged `overflow`).",
        ),
        column(
            col::MEASURED_SECS,
            T::Float64,
            true,
            Some("s"),
            V::Positive,
            "Measured time of the same repetitions, when a measurement exists.",
        ),
        column(
            col::ERROR_PCT,
            T::Float64,
            true,
            Some("%"),
            V::NotNan,
            "Signed relative error 100 x (predicted - measured) / measured.",
        ),
        column(
            col::FLAGS,
            T::Utf8,
            true,
            None,
            V::Any,
            "Warnings about the prediction, `;`-separated (`negative`, `extrapolated`, `tiny_counters`, ...).",
        ),
        column(
            col::RUN_ID,
            T::Utf8,
            true,
            None,
            V::Any,
            "The run predicted, when the prediction is of one run (counter models).",
        ),
        MODEL_GROUP_OPT,
        column(
            col::VALIDATION,
            T::Utf8,
            true,
            None,
            V::Any,
            "How the prediction was made: `fit` (in sample), `loo` (leave one out), `kfold(k)`, `leave_one_out(<column>)`; null for models without fitted parameters.",
        ),
        column(
            col::HELD_OUT,
            T::Utf8,
            true,
            None,
            V::Any,
            "The fold or group that was held out when the row was predicted.",
        ),
        column(
            col::INTERVAL_LOW_SECS,
            T::Float64,
            true,
            Some("s"),
            V::NotNan,
            "Lower end of the 95 % prediction interval.",
        ),
        column(
            col::INTERVAL_HIGH_SECS,
            T::Float64,
            true,
            Some("s"),
            V::NotNan,
            "Upper end of the 95 % prediction interval.",
        ),
    ],
};

pub static REPORT: TableDef = TableDef {
    name: "report",
    doc: "Cells of the tables a step prints: each cell a number or a text, at a row and column of a titled table (the CLI prints them as matrices, the viewer as tables).",
    columns: &[
        label(col::TITLE, "The table the cell belongs to."),
        label(col::ROW_LABEL, "Its row."),
        label(col::COLUMN_LABEL, "Its column."),
        column(
            col::VALUE,
            T::Float64,
            true,
            None,
            V::Any,
            "The number; null for a text cell or a missing figure.",
        ),
        column(
            col::TEXT,
            T::Utf8,
            true,
            None,
            V::Any,
            "The text of a text cell.",
        ),
        label(col::UNIT, "Unit of the number (`%`, `s`, empty)."),
    ],
};

pub static REFERENCE_VALUES: TableDef = TableDef {
    name: "reference_values",
    doc: "A figure printed in a publication, with the canonical table, column and row it is comparable with.",
    columns: &[
        PROGRAM,
        VARIANT,
        label(
            col::TABLE_NAME,
            "The canonical table whose rows the figure compares with (`cost_breakdown`, `predictions`, ...).",
        ),
        label(
            col::COLUMN_NAME,
            "The column of that table holding the comparable figure (`predicted_secs`, `work`, `error_pct`, ...).",
        ),
        label(
            col::LABEL,
            "The row: its `component` in `cost_breakdown`, its `phase` in `predictions`.",
        ),
        column(
            col::VALUE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The figure as printed.",
        ),
        label(col::UNIT, "Unit of `value`."),
        label(col::SOURCE, "Where it is printed (publication, table)."),
    ],
};

pub static REFERENCE_COMPARISON: TableDef = TableDef {
    name: "reference_comparison",
    doc: "A computed figure beside the published figure it reproduces.",
    columns: &[
        MODEL,
        PROGRAM,
        VARIANT,
        label(col::COLUMN_NAME, "The column compared."),
        label(col::LABEL, "The row compared."),
        column(
            col::COMPUTED,
            T::Float64,
            true,
            None,
            V::Finite,
            "The figure yosoku computed; null when no computed row has this label.",
        ),
        column(
            col::REFERENCE,
            T::Float64,
            false,
            None,
            V::Finite,
            "The published figure.",
        ),
        column(
            col::DIFFERENCE,
            T::Float64,
            true,
            None,
            V::Finite,
            "computed - reference.",
        ),
        label(col::UNIT, "Unit of the three figures."),
        label(col::SOURCE, "Where the reference is printed."),
    ],
};
