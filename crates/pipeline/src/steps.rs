//! The typed steps of the normalize, fit and validate stages.

use serde::Deserialize;
use toml::Spanned;
use toml::de::DeValue;

use crate::spec::{Parser, SpecError};

/// The three stages, run in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Normalize,
    Fit,
    Validate,
}

impl Stage {
    pub const ALL: [Stage; 3] = [Stage::Normalize, Stage::Fit, Stage::Validate];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Normalize => "normalize",
            Stage::Fit => "fit",
            Stage::Validate => "validate",
        }
    }

    /// The step kinds the stage accepts.
    pub fn step_kinds(self) -> &'static [&'static str] {
        match self {
            Stage::Normalize => &["csx600_scale_counts", "filter"],
            Stage::Fit => &["csx600_op_count", "csx600_transfer", "csx600_double_buffer"],
            Stage::Validate => &["compare_measured", "compare_reference"],
        }
    }
}

/// A reference to a table: `<source or step>.<table>`, with its position in the file.
pub type TableRef = Spanned<String>;

fn default_pe_count() -> u32 {
    yosoku_models::csx600::CSX600_PE_COUNT
}

fn default_vector_width() -> u32 {
    yosoku_models::csx600::CSX600_VECTOR_WIDTH
}

fn default_path() -> String {
    "mono_to_poly".to_owned()
}

/// `csx600_scale_counts`: issued instruction counts to chip-wide operations (x PEs for poly,
/// x vector width for vector instructions). Produces `<id>.csx600_op_counts`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleCounts {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// A `csx600_op_counts` table.
    pub counts: TableRef,
    #[serde(default = "default_pe_count")]
    pub pe_count: u32,
    #[serde(default = "default_vector_width")]
    pub vector_width: u32,
}

/// `filter`: the rows of a table whose text column equals a value. Produces `<id>.<table>`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub input: TableRef,
    pub column: String,
    pub equals: String,
}

/// `csx600_op_count`: compute time = operations / throughput (Table 4). Produces
/// `<id>.cost_breakdown` and `<id>.predictions`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpCount {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// A `csx600_op_throughputs` table.
    pub throughputs: TableRef,
    /// A `csx600_op_counts` table in chip-wide operations.
    pub counts: TableRef,
    /// Which device's throughputs to use, when the table has several.
    pub device: Option<String>,
}

/// `csx600_transfer`: transfer time from bandwidth curves (eq. 1-2, Table 5). Produces
/// `<id>.cost_breakdown` and `<id>.predictions`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// A `bandwidth_curves` table.
    pub curves: TableRef,
    /// A `csx600_transfer_counts` table.
    pub transfers: TableRef,
    pub device: Option<String>,
}

/// `csx600_double_buffer`: the double-buffering match point (eq. 3-4). Produces
/// `<id>.double_buffer_balance`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleBuffer {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub throughputs: TableRef,
    /// The op mix: a `csx600_op_counts` table.
    pub counts: TableRef,
    pub curves: TableRef,
    /// S, the heap of one PE in bytes.
    pub heap_bytes: f64,
    #[serde(default = "default_path")]
    pub path: String,
    /// d_i, the sizes of the transfers that fill a buffer concurrently.
    pub transfer_sizes_bytes: Vec<f64>,
    pub device: Option<String>,
}

/// `compare_measured`: predictions against measured runs. Produces `<id>.predictions`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareMeasured {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub predictions: TableRef,
    /// A `runs` table.
    pub measured: TableRef,
}

/// `compare_reference`: computed figures against published ones. Produces
/// `<id>.reference_comparison`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareReference {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// A canonical table the pipeline computed.
    pub computed: TableRef,
    /// A `reference_values` table.
    pub reference: TableRef,
    /// The column that labels the rows of `computed` (default: `component` for
    /// `cost_breakdown` and `double_buffer_balance`, `phase` for `predictions`).
    pub label_column: Option<String>,
}

/// One step of a pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    ScaleCounts(ScaleCounts),
    Filter(Filter),
    OpCount(OpCount),
    Transfer(Transfer),
    DoubleBuffer(DoubleBuffer),
    CompareMeasured(CompareMeasured),
    CompareReference(CompareReference),
}

impl Step {
    /// Deserializes the step of kind `kind` in `stage`; `None` when the stage has no such kind.
    pub(crate) fn parse<'a>(
        stage: Stage,
        kind: &str,
        parser: &Parser<'a>,
        value: &Spanned<DeValue<'a>>,
    ) -> Option<Result<Step, SpecError>> {
        Some(match (stage, kind) {
            (Stage::Normalize, "csx600_scale_counts") => {
                parser.deserialize(value).map(Step::ScaleCounts)
            }
            (Stage::Normalize, "filter") => parser.deserialize(value).map(Step::Filter),
            (Stage::Fit, "csx600_op_count") => parser.deserialize(value).map(Step::OpCount),
            (Stage::Fit, "csx600_transfer") => parser.deserialize(value).map(Step::Transfer),
            (Stage::Fit, "csx600_double_buffer") => {
                parser.deserialize(value).map(Step::DoubleBuffer)
            }
            (Stage::Validate, "compare_measured") => {
                parser.deserialize(value).map(Step::CompareMeasured)
            }
            (Stage::Validate, "compare_reference") => {
                parser.deserialize(value).map(Step::CompareReference)
            }
            _ => return None,
        })
    }

    pub fn stage(&self) -> Stage {
        match self {
            Step::ScaleCounts(_) | Step::Filter(_) => Stage::Normalize,
            Step::OpCount(_) | Step::Transfer(_) | Step::DoubleBuffer(_) => Stage::Fit,
            Step::CompareMeasured(_) | Step::CompareReference(_) => Stage::Validate,
        }
    }

    /// The step's kind, as written after `step =`.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::ScaleCounts(_) => "csx600_scale_counts",
            Step::Filter(_) => "filter",
            Step::OpCount(_) => "csx600_op_count",
            Step::Transfer(_) => "csx600_transfer",
            Step::DoubleBuffer(_) => "csx600_double_buffer",
            Step::CompareMeasured(_) => "compare_measured",
            Step::CompareReference(_) => "compare_reference",
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Step::ScaleCounts(s) => &s.id,
            Step::Filter(s) => &s.id,
            Step::OpCount(s) => &s.id,
            Step::Transfer(s) => &s.id,
            Step::DoubleBuffer(s) => &s.id,
            Step::CompareMeasured(s) => &s.id,
            Step::CompareReference(s) => &s.id,
        }
    }

    /// The tables the step reads.
    pub fn inputs(&self) -> Vec<&TableRef> {
        match self {
            Step::ScaleCounts(s) => vec![&s.counts],
            Step::Filter(s) => vec![&s.input],
            Step::OpCount(s) => vec![&s.throughputs, &s.counts],
            Step::Transfer(s) => vec![&s.curves, &s.transfers],
            Step::DoubleBuffer(s) => vec![&s.throughputs, &s.counts, &s.curves],
            Step::CompareMeasured(s) => vec![&s.predictions, &s.measured],
            Step::CompareReference(s) => vec![&s.computed, &s.reference],
        }
    }

    /// The tables the step produces, as `<id>.<table>`'s table part.
    pub fn output_tables(&self) -> Vec<String> {
        let names: &[&str] = match self {
            Step::ScaleCounts(_) => &["csx600_op_counts"],
            Step::Filter(s) => {
                return vec![
                    s.input
                        .get_ref()
                        .split_once('.')
                        .map_or("", |(_, t)| t)
                        .to_owned(),
                ];
            }
            Step::OpCount(_) | Step::Transfer(_) => &["cost_breakdown", "predictions"],
            Step::DoubleBuffer(_) => &["double_buffer_balance"],
            Step::CompareMeasured(_) => &["predictions"],
            Step::CompareReference(_) => &["reference_comparison"],
        };
        names.iter().map(|n| (*n).to_owned()).collect()
    }
}
