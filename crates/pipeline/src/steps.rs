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
            Stage::Normalize => &[
                "csx600_scale_counts",
                "filter",
                "pivot_counters",
                "merge_counters",
                "zscore",
                "derive",
                "aggregate",
                "cross_device",
            ],
            Stage::Fit => &[
                "csx600_op_count",
                "csx600_transfer",
                "csx600_double_buffer",
                "ols",
                "stepwise",
                "mpi_simplified",
                "mpi_separate_runs",
                "mpi_best_configuration",
            ],
            Stage::Validate => &["compare_measured", "compare_reference", "cross_validate"],
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

/// `pivot_counters`: long `counters` and `runs` to `observations` (one column per metric).
/// Produces `<id>.observations`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PivotCounters {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub runs: TableRef,
    pub counters: TableRef,
    /// Only these metrics (default: all).
    pub metrics: Option<Vec<String>>,
}

/// One merge of [`MergeCounters`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    pub into: String,
    pub from: Vec<String>,
}

/// `merge_counters`: alternative counters summed into one (`gst = gst32b + gst64b + gst128b`).
/// Produces `<id>.observations`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeCounters {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub input: TableRef,
    pub merges: Vec<MergeSpec>,
    #[serde(default)]
    pub keep_parts: bool,
}

/// `zscore`: features to mean 0, variance 1 within each group; constant columns are dropped
/// and reported. Produces `<id>.observations`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZScore {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub input: TableRef,
    /// Only these columns (default: every feature).
    #[serde(default)]
    pub columns: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
}

fn default_ratio_scale() -> f64 {
    1.0
}

fn default_ratio_kind() -> String {
    "ratio".to_owned()
}

/// One derived ratio of [`Derive`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioSpec {
    pub name: String,
    pub numerator: String,
    pub denominator: String,
    #[serde(default = "default_ratio_scale")]
    pub scale: f64,
    #[serde(default = "default_ratio_kind")]
    pub kind: String,
}

/// `derive`: new feature columns `scale x numerator / denominator` (per-1000-instruction rates).
/// Produces `<id>.observations`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Derive {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub input: TableRef,
    pub ratios: Vec<RatioSpec>,
}

/// `aggregate`: means over rows that agree on `by`. Produces `<id>.observations`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aggregate {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub input: TableRef,
    pub by: Vec<String>,
}

fn default_join_on() -> Vec<String> {
    vec!["program".to_owned(), "variant".to_owned()]
}

/// `cross_device`: features of one device beside the time of another. Produces
/// `<id>.observations` with a `feature_device` column.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossDevice {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub features: TableRef,
    pub target: TableRef,
    #[serde(default)]
    pub feature_devices: Vec<String>,
    #[serde(default)]
    pub target_devices: Vec<String>,
    #[serde(default = "default_join_on")]
    pub on: Vec<String>,
    #[serde(default)]
    pub include_same: bool,
    pub reference_time_feature: Option<String>,
}

/// Rows and columns of a matrix report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    pub rows: String,
    pub columns: String,
}

/// `ols`: least squares of time on the chosen features, one model per group. Produces
/// `<id>.model_coefficients`, `<id>.model_summary`, `<id>.predictions` (in sample) and
/// `<id>.report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ols {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub observations: TableRef,
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub ridge: f64,
    #[serde(default)]
    pub log_target: bool,
    #[serde(default)]
    pub log_features: bool,
    pub matrix: Option<MatrixSpec>,
}

fn default_direction() -> String {
    "forward".to_owned()
}

fn default_knots() -> usize {
    4
}

fn default_true() -> bool {
    true
}

fn default_max_interactions() -> usize {
    45
}

/// `stepwise`: forward (or backward) selection by adjusted R^2 with spline terms and
/// interactions, one model per group. Produces what `ols` does and `<id>.selection_path`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stepwise {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub observations: TableRef,
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub log_target: bool,
    #[serde(default)]
    pub log_features: bool,
    /// `forward` or `backward`.
    #[serde(default = "default_direction")]
    pub direction: String,
    /// Knots of each counter's natural cubic spline; below 3 for linear terms.
    #[serde(default = "default_knots")]
    pub spline_knots: usize,
    #[serde(default = "default_true")]
    pub interactions: bool,
    #[serde(default = "default_max_interactions")]
    pub max_interactions: usize,
    pub max_terms: Option<usize>,
    pub matrix: Option<MatrixSpec>,
}

/// A published figure printed beside the computed ones.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSpec {
    pub row: String,
    /// A column of the step's first report table; without it, a `published` column.
    pub column: Option<String>,
    pub value: Option<f64>,
    pub text: Option<String>,
}

fn default_holdouts() -> Vec<String> {
    vec!["loo".to_owned()]
}

fn default_tiny_threshold() -> f64 {
    1e-3
}

/// `cross_validate`: out-of-sample predictions of a fitted model (`model` = the fit step's id).
/// Produces `<id>.predictions`, `<id>.validation_summary` and `<id>.report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossValidate {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    pub model: Spanned<String>,
    /// `fit`, `loo`, `kfold(<k>)`, `leave_one_out(<column>)`.
    #[serde(default = "default_holdouts")]
    pub holdouts: Vec<String>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_tiny_threshold")]
    pub tiny_threshold: f64,
    pub matrix: Option<MatrixSpec>,
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

fn default_warmup_tolerance() -> f64 {
    0.1
}

/// The settings every MPI prediction step has: the full run's iteration count, the warm-up
/// iterations (a fixed count, or without one the leading iterations whose time is more than
/// `warmup_tolerance`, a fraction, from the steady time) and the paper's figure.
#[derive(Debug, Clone, PartialEq)]
pub struct MpiCommon<'a> {
    pub full_iterations: u64,
    pub warmup_iterations: Option<usize>,
    pub warmup_tolerance: f64,
    pub published: Option<&'a str>,
}

macro_rules! mpi_common {
    ($($t:ty),*) => {$(
        impl $t {
            pub fn common(&self) -> MpiCommon<'_> {
                MpiCommon {
                    full_iterations: self.full_iterations,
                    warmup_iterations: self.warmup_iterations,
                    warmup_tolerance: self.warmup_tolerance,
                    published: self.published.as_deref(),
                }
            }
        }
    )*};
}

mpi_common!(MpiSimplified, MpiSeparateRuns, MpiBestConfiguration);

/// `mpi_simplified`: per-rank prediction of a full MPI run from a reduced run's blocks, compute
/// and communication from the same run (Chida et al.). Produces `<id>.predictions`,
/// `<id>.mpi_block_predictions` and `<id>.report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpiSimplified {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// `mpi_blocks` of the reduced run.
    pub reduced: TableRef,
    /// `mpi_blocks` of the full run, to compare with.
    pub measured: Option<TableRef>,
    /// Main-loop iterations of the run to predict.
    pub full_iterations: u64,
    /// Warm-up iterations to exclude; without it, found from where iteration times settle.
    pub warmup_iterations: Option<usize>,
    #[serde(default = "default_warmup_tolerance")]
    pub warmup_tolerance: f64,
    /// The paper's figure for this setting, printed beside ours.
    pub published: Option<String>,
}

/// `mpi_separate_runs`: the earlier method as a baseline: compute blocks from one reduced run,
/// communication blocks from a communication-only run. Produces what `mpi_simplified` does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpiSeparateRuns {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// `mpi_blocks` of the run the compute blocks are taken from.
    pub compute: TableRef,
    /// `mpi_blocks` of the communication-only run.
    pub communication: TableRef,
    pub measured: Option<TableRef>,
    /// Main-loop iterations of the run to predict.
    pub full_iterations: u64,
    /// Warm-up iterations to exclude; without it, found from where iteration times settle.
    pub warmup_iterations: Option<usize>,
    #[serde(default = "default_warmup_tolerance")]
    pub warmup_tolerance: f64,
    /// The paper's figure for this setting, printed beside ours.
    pub published: Option<String>,
}

/// `mpi_best_configuration`: one reduced run per candidate configuration (rank count, binding),
/// each predicted for the full run and ranked. Produces `<id>.predictions` and `<id>.report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpiBestConfiguration {
    #[allow(dead_code)]
    step: String,
    pub id: String,
    /// `mpi_blocks` of the reduced runs, one run per candidate.
    pub reduced: TableRef,
    /// `mpi_ranks` of the same runs (their rank counts and bindings).
    pub reduced_ranks: TableRef,
    /// `mpi_ranks` of measured full runs of the candidates, to rank beside the predictions.
    pub measured_ranks: Option<TableRef>,
    /// Main-loop iterations of the run to predict.
    pub full_iterations: u64,
    /// Warm-up iterations to exclude; without it, found from where iteration times settle.
    pub warmup_iterations: Option<usize>,
    #[serde(default = "default_warmup_tolerance")]
    pub warmup_tolerance: f64,
    /// The paper's figure for this setting, printed beside ours.
    pub published: Option<String>,
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
    PivotCounters(PivotCounters),
    MergeCounters(MergeCounters),
    ZScore(ZScore),
    Derive(Derive),
    Aggregate(Aggregate),
    CrossDevice(CrossDevice),
    Ols(Ols),
    Stepwise(Stepwise),
    CrossValidate(CrossValidate),
    MpiSimplified(MpiSimplified),
    MpiSeparateRuns(MpiSeparateRuns),
    MpiBestConfiguration(MpiBestConfiguration),
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
            (Stage::Normalize, "pivot_counters") => {
                parser.deserialize(value).map(Step::PivotCounters)
            }
            (Stage::Normalize, "merge_counters") => {
                parser.deserialize(value).map(Step::MergeCounters)
            }
            (Stage::Normalize, "zscore") => parser.deserialize(value).map(Step::ZScore),
            (Stage::Normalize, "derive") => parser.deserialize(value).map(Step::Derive),
            (Stage::Normalize, "aggregate") => parser.deserialize(value).map(Step::Aggregate),
            (Stage::Normalize, "cross_device") => parser.deserialize(value).map(Step::CrossDevice),
            (Stage::Fit, "ols") => parser.deserialize(value).map(Step::Ols),
            (Stage::Fit, "stepwise") => parser.deserialize(value).map(Step::Stepwise),
            (Stage::Validate, "cross_validate") => {
                parser.deserialize(value).map(Step::CrossValidate)
            }
            (Stage::Fit, "mpi_simplified") => parser.deserialize(value).map(Step::MpiSimplified),
            (Stage::Fit, "mpi_separate_runs") => {
                parser.deserialize(value).map(Step::MpiSeparateRuns)
            }
            (Stage::Fit, "mpi_best_configuration") => {
                parser.deserialize(value).map(Step::MpiBestConfiguration)
            }
            _ => return None,
        })
    }

    pub fn stage(&self) -> Stage {
        match self {
            Step::ScaleCounts(_)
            | Step::Filter(_)
            | Step::PivotCounters(_)
            | Step::MergeCounters(_)
            | Step::ZScore(_)
            | Step::Derive(_)
            | Step::Aggregate(_)
            | Step::CrossDevice(_) => Stage::Normalize,
            Step::OpCount(_)
            | Step::Transfer(_)
            | Step::DoubleBuffer(_)
            | Step::Ols(_)
            | Step::Stepwise(_)
            | Step::MpiSimplified(_)
            | Step::MpiSeparateRuns(_)
            | Step::MpiBestConfiguration(_) => Stage::Fit,
            Step::CompareMeasured(_) | Step::CompareReference(_) | Step::CrossValidate(_) => {
                Stage::Validate
            }
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
            Step::PivotCounters(_) => "pivot_counters",
            Step::MergeCounters(_) => "merge_counters",
            Step::ZScore(_) => "zscore",
            Step::Derive(_) => "derive",
            Step::Aggregate(_) => "aggregate",
            Step::CrossDevice(_) => "cross_device",
            Step::Ols(_) => "ols",
            Step::Stepwise(_) => "stepwise",
            Step::CrossValidate(_) => "cross_validate",
            Step::MpiSimplified(_) => "mpi_simplified",
            Step::MpiSeparateRuns(_) => "mpi_separate_runs",
            Step::MpiBestConfiguration(_) => "mpi_best_configuration",
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
            Step::PivotCounters(s) => &s.id,
            Step::MergeCounters(s) => &s.id,
            Step::ZScore(s) => &s.id,
            Step::Derive(s) => &s.id,
            Step::Aggregate(s) => &s.id,
            Step::CrossDevice(s) => &s.id,
            Step::Ols(s) => &s.id,
            Step::Stepwise(s) => &s.id,
            Step::CrossValidate(s) => &s.id,
            Step::MpiSimplified(s) => &s.id,
            Step::MpiSeparateRuns(s) => &s.id,
            Step::MpiBestConfiguration(s) => &s.id,
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
            Step::PivotCounters(s) => vec![&s.runs, &s.counters],
            Step::MergeCounters(s) => vec![&s.input],
            Step::ZScore(s) => vec![&s.input],
            Step::Derive(s) => vec![&s.input],
            Step::Aggregate(s) => vec![&s.input],
            Step::CrossDevice(s) => vec![&s.features, &s.target],
            Step::Ols(s) => vec![&s.observations],
            Step::Stepwise(s) => vec![&s.observations],
            // The model's table is checked through the model reference.
            Step::CrossValidate(_) => vec![],
            Step::MpiSimplified(s) => [Some(&s.reduced), s.measured.as_ref()]
                .into_iter()
                .flatten()
                .collect(),
            Step::MpiSeparateRuns(s) => [
                Some(&s.compute),
                Some(&s.communication),
                s.measured.as_ref(),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Step::MpiBestConfiguration(s) => [
                Some(&s.reduced),
                Some(&s.reduced_ranks),
                s.measured_ranks.as_ref(),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    }

    /// The fit step a validation step refits, when it names one.
    pub fn model_reference(&self) -> Option<&Spanned<String>> {
        match self {
            Step::CrossValidate(s) => Some(&s.model),
            _ => None,
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
            Step::PivotCounters(_)
            | Step::MergeCounters(_)
            | Step::ZScore(_)
            | Step::Derive(_)
            | Step::Aggregate(_)
            | Step::CrossDevice(_) => &["observations"],
            Step::Ols(_) => &[
                "model_coefficients",
                "model_summary",
                "predictions",
                "report",
            ],
            Step::Stepwise(_) => &[
                "model_coefficients",
                "model_summary",
                "selection_path",
                "predictions",
                "report",
            ],
            Step::CrossValidate(_) => &["predictions", "validation_summary", "report"],
            Step::MpiSimplified(_) | Step::MpiSeparateRuns(_) => {
                &["predictions", "mpi_block_predictions", "report"]
            }
            Step::MpiBestConfiguration(_) => &["predictions", "report"],
        };
        names.iter().map(|n| (*n).to_owned()).collect()
    }
}
