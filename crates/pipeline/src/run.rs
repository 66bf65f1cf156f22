//! Running the steps of a pipeline over a set of named tables. No I/O, no clock: the caller
//! collects the sources, times the steps and writes the bundle.

use arrow_array::RecordBatch;
use yosoku_models::compare::{compare_measured, compare_reference};
use yosoku_models::csx600::{self, Fitted};
use yosoku_models::mpi;
use yosoku_models::observations::fit::{self, ModelSpec};
use yosoku_models::observations::{FeatureChoice, crossval, normalize, report};
use yosoku_models::regression::stepwise::{Direction, StepwiseOptions};
use yosoku_models::rows::{PredictionRow, predictions_batch, read_predictions};
use yosoku_models::{ModelError, filter_eq};
use yosoku_tables::access::{float64, utf8};
use yosoku_tables::{Figure, col};

use crate::spec::{Located, PipelineSpec, SpecError};
use crate::steps::{MatrixSpec, MpiCommon, Step, TableRef};

/// The tables of a run, each named `<namespace>.<table>`, in the order they were added.
#[derive(Debug, Clone, Default)]
pub struct TableSet {
    tables: Vec<(String, RecordBatch)>,
}

impl TableSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `<namespace>.<table>`; a name given twice is an error.
    pub fn insert(
        &mut self,
        namespace: &str,
        table: &str,
        batch: RecordBatch,
    ) -> Result<(), String> {
        let name = format!("{namespace}.{table}");
        if self.get(&name).is_some() {
            return Err(format!("table `{name}` exists already"));
        }
        self.tables.push((name, batch));
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&RecordBatch> {
        self.tables.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &RecordBatch)> {
        self.tables.iter().map(|(n, b)| (n.as_str(), b))
    }

    pub fn len(&self) -> usize {
        self.tables.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The table names of one namespace.
    fn in_namespace(&self, namespace: &str) -> Vec<&str> {
        self.tables
            .iter()
            .filter_map(|(n, _)| n.strip_prefix(namespace)?.strip_prefix('.'))
            .collect()
    }
}

/// What a step produced: its tables (by table name, in its namespace) and summary figures.
#[derive(Debug, Clone)]
pub struct StepOutput {
    pub tables: Vec<(String, RecordBatch)>,
    pub figures: Vec<Figure>,
}

struct Context<'a> {
    spec: &'a PipelineSpec,
    step: &'a Located<Step>,
    tables: &'a TableSet,
}

impl Context<'_> {
    fn fail(&self, message: impl std::fmt::Display) -> SpecError {
        self.spec.error(
            self.step.location,
            format!(
                "step `{}` ({}): {message}",
                self.step.value.id(),
                self.step.value.kind()
            ),
        )
    }

    fn model(&self, e: ModelError) -> SpecError {
        self.fail(e)
    }

    /// The table a reference names.
    fn input(&self, reference: &TableRef) -> Result<&RecordBatch, SpecError> {
        let name = reference.get_ref();
        self.tables.get(name).ok_or_else(|| {
            let namespace = name.split_once('.').map_or(name.as_str(), |(ns, _)| ns);
            let there = self.tables.in_namespace(namespace);
            let has = if there.is_empty() {
                "nothing".to_owned()
            } else {
                there.join(", ")
            };
            self.spec.error(
                self.spec.locate(&reference.span()),
                format!(
                    "step `{}`: no table `{name}`; `{namespace}` produced: {has}",
                    self.step.value.id()
                ),
            )
        })
    }

    /// The table a reference names, restricted to one device when `device` is given.
    fn input_on(
        &self,
        reference: &TableRef,
        device: &Option<String>,
    ) -> Result<RecordBatch, SpecError> {
        let batch = self.input(reference)?;
        match device {
            None => Ok(batch.clone()),
            Some(d) => {
                let filtered = filter_eq(batch, col::DEVICE, d).map_err(|e| self.model(e))?;
                if filtered.num_rows() == 0 {
                    return Err(self.fail(format!(
                        "`{}` has no rows for device `{d}`",
                        reference.get_ref()
                    )));
                }
                Ok(filtered)
            }
        }
    }
}

fn name_of(program: &str, variant: &str) -> String {
    if variant.is_empty() {
        program.to_owned()
    } else {
        format!("{program} {variant}")
    }
}

/// One figure per prediction: `<program> <variant> <phase>`.
fn prediction_figures(predictions: &RecordBatch) -> Result<Vec<Figure>, ModelError> {
    Ok(read_predictions("predictions", predictions)?
        .into_iter()
        .map(|p| {
            Figure::new(
                format!("{} {}: predicted", name_of(&p.program, &p.variant), p.phase),
                p.predicted_secs,
                "s",
            )
        })
        .collect())
}

fn mpi_spec(model: &str, c: MpiCommon<'_>) -> mpi::MpiSpec {
    mpi::MpiSpec {
        model: model.to_owned(),
        full_iterations: c.full_iterations,
        warmup: match c.warmup_iterations {
            Some(n) => mpi::Warmup::Iterations(n),
            None => mpi::Warmup::Auto {
                tolerance: c.warmup_tolerance,
            },
        },
        published: c.published.map(str::to_owned),
    }
}

/// Per `total` prediction (each rank, the run, each candidate) the predicted time and, when
/// measured, the error; the run's and the candidates' are headlines.
fn mpi_figures(predictions: &RecordBatch) -> Result<Vec<Figure>, ModelError> {
    let mut figures = Vec::new();
    for p in read_predictions("predictions", predictions)?
        .iter()
        .filter(|p| p.phase == "total")
    {
        let headline = !p.variant.starts_with("rank ");
        let mark = |f: Figure| if headline { f.headline() } else { f };
        figures.push(mark(Figure::new(
            format!("{}: predicted", p.variant),
            p.predicted_secs,
            "s",
        )));
        if let (Some(m), Some(e)) = (p.measured_secs, p.error_pct) {
            figures.push(mark(Figure::new(
                format!("{}: measured", p.variant),
                m,
                "s",
            )));
            figures.push(mark(Figure::new(format!("{}: error", p.variant), e, "%")));
        }
    }
    Ok(figures)
}

fn mpi_output(p: mpi::MpiPrediction) -> Result<StepOutput, ModelError> {
    Ok(StepOutput {
        figures: mpi_figures(&p.predictions)?,
        tables: vec![
            ("predictions".into(), p.predictions),
            ("mpi_block_predictions".into(), p.block_predictions),
            ("report".into(), p.report),
        ],
    })
}

fn fitted(fitted: Fitted) -> Result<StepOutput, ModelError> {
    let figures = prediction_figures(&fitted.predictions)?;
    Ok(StepOutput {
        tables: vec![
            ("cost_breakdown".into(), fitted.cost_breakdown),
            ("predictions".into(), fitted.predictions),
        ],
        figures,
    })
}

/// Runs one step over `tables` (which must hold every table it reads) and returns what it made.
/// The caller adds the outputs to `tables` under the step's id.
pub fn run_step(
    spec: &PipelineSpec,
    step: &Located<Step>,
    tables: &TableSet,
) -> Result<StepOutput, SpecError> {
    let cx = Context { spec, step, tables };
    let model_id = step.value.id();
    let out = match &step.value {
        Step::ScaleCounts(s) => {
            let scaled = csx600::scale_counts(cx.input(&s.counts)?, s.pe_count, s.vector_width)
                .map_err(|e| cx.model(e))?;
            let figures = operation_totals(&scaled).map_err(|e| cx.model(e))?;
            StepOutput {
                tables: vec![("csx600_op_counts".into(), scaled)],
                figures,
            }
        }
        Step::Filter(s) => {
            let batch = cx.input(&s.input)?;
            let kept = filter_eq(batch, &s.column, &s.equals).map_err(|e| cx.model(e))?;
            let table = s
                .input
                .get_ref()
                .split_once('.')
                .map_or("", |(_, t)| t)
                .to_owned();
            let figures = vec![Figure::new("rows kept", kept.num_rows() as f64, "")];
            StepOutput {
                tables: vec![(table, kept)],
                figures,
            }
        }
        Step::OpCount(s) => {
            let rates = cx.input_on(&s.throughputs, &s.device)?;
            let result = csx600::op_count_model(model_id, &rates, cx.input(&s.counts)?)
                .map_err(|e| cx.model(e))?;
            fitted(result).map_err(|e| cx.model(e))?
        }
        Step::Transfer(s) => {
            let curves = cx.input_on(&s.curves, &s.device)?;
            let result = csx600::transfer_model(model_id, &curves, cx.input(&s.transfers)?)
                .map_err(|e| cx.model(e))?;
            fitted(result).map_err(|e| cx.model(e))?
        }
        Step::DoubleBuffer(s) => {
            let params = csx600::DoubleBuffer {
                heap_bytes: s.heap_bytes,
                path: s.path.clone(),
                transfer_sizes_bytes: s.transfer_sizes_bytes.clone(),
            };
            let balance = csx600::double_buffer_balance(
                model_id,
                &cx.input_on(&s.throughputs, &s.device)?,
                cx.input(&s.counts)?,
                &cx.input_on(&s.curves, &s.device)?,
                &params,
            )
            .map_err(|e| cx.model(e))?;
            let figures = balance_figures(&balance).map_err(|e| cx.model(e))?;
            StepOutput {
                tables: vec![("double_buffer_balance".into(), balance)],
                figures,
            }
        }
        Step::MpiSimplified(s) => {
            let measured = s.measured.as_ref().map(|m| cx.input(m)).transpose()?;
            let p = mpi::simplified(
                &mpi_spec(model_id, s.common()),
                cx.input(&s.reduced)?,
                measured,
            )
            .map_err(|e| cx.model(e))?;
            mpi_output(p).map_err(|e| cx.model(e))?
        }
        Step::MpiSeparateRuns(s) => {
            let measured = s.measured.as_ref().map(|m| cx.input(m)).transpose()?;
            let p = mpi::separate_runs(
                &mpi_spec(model_id, s.common()),
                cx.input(&s.compute)?,
                cx.input(&s.communication)?,
                measured,
            )
            .map_err(|e| cx.model(e))?;
            mpi_output(p).map_err(|e| cx.model(e))?
        }
        Step::MpiBestConfiguration(s) => {
            let measured = s.measured_ranks.as_ref().map(|m| cx.input(m)).transpose()?;
            let (predictions, report) = mpi::best_configuration(
                &mpi_spec(model_id, s.common()),
                cx.input(&s.reduced)?,
                cx.input(&s.reduced_ranks)?,
                measured,
            )
            .map_err(|e| cx.model(e))?;
            StepOutput {
                figures: mpi_figures(&predictions).map_err(|e| cx.model(e))?,
                tables: vec![
                    ("predictions".into(), predictions),
                    ("report".into(), report),
                ],
            }
        }
        Step::CompareMeasured(s) => {
            let compared = compare_measured(cx.input(&s.predictions)?, cx.input(&s.measured)?)
                .map_err(|e| cx.model(e))?;
            let figures = measured_figures(&compared).map_err(|e| cx.model(e))?;
            StepOutput {
                tables: vec![("predictions".into(), compared)],
                figures,
            }
        }
        Step::PivotCounters(s) => {
            let batch = normalize::pivot_counters(
                cx.input(&s.runs)?,
                cx.input(&s.counters)?,
                s.metrics.as_deref(),
            )
            .map_err(|e| cx.model(e))?;
            observations_output(batch, vec![])
        }
        Step::MergeCounters(s) => {
            let merges: Vec<normalize::Merge> = s
                .merges
                .iter()
                .map(|m| normalize::Merge {
                    into: m.into.clone(),
                    from: m.from.clone(),
                })
                .collect();
            let batch = normalize::merge_counters(cx.input(&s.input)?, &merges, s.keep_parts)
                .map_err(|e| cx.model(e))?;
            observations_output(batch, vec![])
        }
        Step::ZScore(s) => {
            let z = normalize::zscore(cx.input(&s.input)?, &s.columns, &s.group_by)
                .map_err(|e| cx.model(e))?;
            let mut figures = vec![
                Figure::new(
                    "columns dropped for zero variance",
                    z.zero_variance.len() as f64,
                    "",
                )
                .headline(),
            ];
            // One figure per group listing what it lost.
            let mut by_group: Vec<(String, Vec<String>)> = Vec::new();
            for (group, column) in &z.zero_variance {
                match by_group.iter_mut().find(|(g, _)| g == group) {
                    Some((_, c)) => c.push(column.clone()),
                    None => by_group.push((group.clone(), vec![column.clone()])),
                }
            }
            for (group, columns) in by_group {
                let who = if group.is_empty() {
                    "all rows".to_owned()
                } else {
                    group
                };
                figures.push(Figure::new(
                    format!("zero variance in {who}: {}", columns.join(", ")),
                    columns.len() as f64,
                    "",
                ));
            }
            observations_output(z.observations, figures)
        }
        Step::Derive(s) => {
            let ratios: Vec<normalize::Ratio> = s
                .ratios
                .iter()
                .map(|r| normalize::Ratio {
                    name: r.name.clone(),
                    numerator: r.numerator.clone(),
                    denominator: r.denominator.clone(),
                    scale: r.scale,
                    kind: r.kind.clone(),
                })
                .collect();
            let (batch, undefined) =
                normalize::derive_ratios(cx.input(&s.input)?, &ratios).map_err(|e| cx.model(e))?;
            let figures = undefined
                .into_iter()
                .map(|(name, rows)| {
                    Figure::new(format!("{name}: rows without a value"), rows as f64, "")
                })
                .collect();
            observations_output(batch, figures)
        }
        Step::Aggregate(s) => {
            let input = cx.input(&s.input)?;
            let batch = normalize::aggregate(input, &s.by).map_err(|e| cx.model(e))?;
            let figures = vec![Figure::new("rows before", input.num_rows() as f64, "")];
            observations_output(batch, figures)
        }
        Step::CrossDevice(s) => {
            let options = normalize::CrossDevice {
                feature_devices: s.feature_devices.clone(),
                target_devices: s.target_devices.clone(),
                on: s.on.clone(),
                include_same: s.include_same,
                reference_time_feature: s.reference_time_feature.clone(),
            };
            let joined =
                normalize::cross_device(cx.input(&s.features)?, cx.input(&s.target)?, &options)
                    .map_err(|e| cx.model(e))?;
            let unpaired: usize = joined.pairs.iter().map(|p| p.3).sum();
            let figures = vec![
                Figure::new("device pairs", joined.pairs.len() as f64, "").headline(),
                Figure::new("target rows without a partner", unpaired as f64, "").headline(),
            ];
            observations_output(joined.observations, figures)
        }
        Step::Ols(_) | Step::Stepwise(_) => {
            let (observations, model, matrix) = model_spec(&step.value).map_err(|m| cx.fail(m))?;
            let fits =
                fit::fit(model_id, cx.input(observations)?, &model).map_err(|e| cx.model(e))?;
            let report = fit::fit_report(model_id, &model, &fits, matrix.as_ref())
                .map_err(|e| cx.model(e))?;
            let mut tables = vec![
                (
                    "model_coefficients".to_owned(),
                    fit::coefficients_batch(model_id, &fits).map_err(|e| cx.model(e))?,
                ),
                (
                    "model_summary".to_owned(),
                    fit::summary_batch(model_id, &model, &fits).map_err(|e| cx.model(e))?,
                ),
            ];
            if matches!(step.value, Step::Stepwise(_)) {
                tables.push((
                    "selection_path".to_owned(),
                    fit::path_batch(model_id, &fits).map_err(|e| cx.model(e))?,
                ));
            }
            let predictions: Vec<PredictionRow> =
                fits.iter().flat_map(|f| f.predictions.clone()).collect();
            tables.push((
                "predictions".to_owned(),
                predictions_batch(&predictions).map_err(|e| cx.model(e))?,
            ));
            tables.push((
                "report".to_owned(),
                report::report_batch(&report).map_err(|e| cx.model(e))?,
            ));
            StepOutput {
                tables,
                figures: fit_figures(&fits),
            }
        }
        Step::CrossValidate(s) => {
            let fit_step = spec
                .steps
                .iter()
                .find(|st| st.value.id() == s.model.get_ref())
                .ok_or_else(|| cx.fail(format!("no fit step `{}`", s.model.get_ref())))?;
            let (observations, model, _) = model_spec(&fit_step.value).map_err(|m| cx.fail(m))?;
            let holdouts = s
                .holdouts
                .iter()
                .map(|h| crossval::Holdout::parse(h, s.seed))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|m| cx.fail(format!("`holdouts`: {m}")))?;
            if holdouts.is_empty() {
                return Err(cx.fail("`holdouts` is empty: name at least one, e.g. [\"loo\"]"));
            }
            if !(s.tiny_threshold.is_finite() && s.tiny_threshold >= 0.0) {
                return Err(cx.fail("`tiny_threshold` must be a number >= 0"));
            }
            let cv = crossval::CrossValidation {
                holdouts,
                tiny_threshold: s.tiny_threshold,
                matrix: s.matrix.as_ref().map(matrix_of),
                published: s
                    .published
                    .iter()
                    .map(|p| report::Published {
                        row: p.row.clone(),
                        column: p.column.clone(),
                        value: p.value,
                        text: p.text.clone(),
                    })
                    .collect(),
            };
            for p in &cv.published {
                if p.value.is_none() == p.text.is_none() {
                    return Err(cx.fail(format!(
                        "published figure `{}`: give exactly one of `value` and `text`",
                        p.row
                    )));
                }
            }
            let validated =
                crossval::cross_validate(model_id, cx.input(observations)?, &model, &cv)
                    .map_err(|e| cx.model(e))?;
            let mut figures = Vec::new();
            for (scheme, mean, lo, hi) in crossval::scheme_ranges(&validated.summary) {
                figures.push(
                    Figure::new(
                        format!("{scheme}: mean |error|, mean over models"),
                        mean,
                        "%",
                    )
                    .headline(),
                );
                figures.push(
                    Figure::new(format!("{scheme}: mean |error|, best model"), lo, "%").headline(),
                );
                figures.push(
                    Figure::new(format!("{scheme}: mean |error|, worst model"), hi, "%").headline(),
                );
            }
            let negative: usize = validated
                .summary
                .iter()
                .filter(|r| r.program.is_none())
                .map(|r| r.negative)
                .sum();
            figures.push(Figure::new("negative predictions", negative as f64, "").headline());
            StepOutput {
                tables: vec![
                    (
                        "predictions".to_owned(),
                        predictions_batch(&validated.predictions).map_err(|e| cx.model(e))?,
                    ),
                    (
                        "validation_summary".to_owned(),
                        crossval::summary_batch(model_id, &validated.summary)
                            .map_err(|e| cx.model(e))?,
                    ),
                    (
                        "report".to_owned(),
                        report::report_batch(&validated.report).map_err(|e| cx.model(e))?,
                    ),
                ],
                figures,
            }
        }
        Step::CompareReference(s) => {
            let table_name = s.computed.get_ref().split_once('.').map_or("", |(_, t)| t);
            let Some(def) = yosoku_tables::table(table_name) else {
                return Err(cx.fail(format!(
                    "`computed` must be a canonical table, `{table_name}` is not one"
                )));
            };
            let label_column = match (&s.label_column, def.name) {
                (Some(c), _) => c.as_str(),
                (None, "cost_breakdown" | "double_buffer_balance") => col::COMPONENT,
                (None, "predictions") => col::PHASE,
                (None, other) => {
                    return Err(cx.fail(format!(
                        "name the column that labels the rows of `{other}` with `label_column`"
                    )));
                }
            };
            let compared = compare_reference(
                model_id,
                def,
                cx.input(&s.computed)?,
                label_column,
                cx.input(&s.reference)?,
            )
            .map_err(|e| cx.model(e))?;
            let figures = reference_figures(def.name, &compared).map_err(|e| cx.model(e))?;
            StepOutput {
                tables: vec![("reference_comparison".into(), compared)],
                figures,
            }
        }
    };
    Ok(out)
}

fn observations_output(batch: RecordBatch, mut figures: Vec<Figure>) -> StepOutput {
    let features = batch
        .num_columns()
        .saturating_sub(yosoku_tables::OBSERVATIONS.columns.len());
    figures.insert(0, Figure::new("rows", batch.num_rows() as f64, ""));
    figures.insert(1, Figure::new("feature columns", features as f64, ""));
    StepOutput {
        tables: vec![("observations".to_owned(), batch)],
        figures,
    }
}

fn matrix_of(m: &MatrixSpec) -> report::Matrix {
    report::Matrix {
        rows: m.rows.clone(),
        columns: m.columns.clone(),
    }
}

/// The observations table, model definition and report layout of an `ols` or `stepwise` step.
fn model_spec(step: &Step) -> Result<(&TableRef, ModelSpec, Option<report::Matrix>), String> {
    match step {
        Step::Ols(s) => {
            if !(s.ridge.is_finite() && s.ridge >= 0.0) {
                return Err(format!("`ridge` must be a number >= 0, found {}", s.ridge));
            }
            Ok((
                &s.observations,
                ModelSpec {
                    choice: FeatureChoice {
                        features: s.features.clone(),
                        kinds: s.kinds.clone(),
                        exclude: s.exclude.clone(),
                    },
                    group_by: s.group_by.clone(),
                    log_target: s.log_target,
                    log_features: s.log_features,
                    method: fit::Method::Ols { ridge: s.ridge },
                },
                s.matrix.as_ref().map(matrix_of),
            ))
        }
        Step::Stepwise(s) => {
            let direction = match s.direction.as_str() {
                "forward" => Direction::Forward,
                "backward" => Direction::Backward,
                other => {
                    return Err(format!(
                        "`direction` is `{other}`; expected `forward` or `backward`"
                    ));
                }
            };
            Ok((
                &s.observations,
                ModelSpec {
                    choice: FeatureChoice {
                        features: s.features.clone(),
                        kinds: s.kinds.clone(),
                        exclude: s.exclude.clone(),
                    },
                    group_by: s.group_by.clone(),
                    log_target: s.log_target,
                    log_features: s.log_features,
                    method: fit::Method::Stepwise(StepwiseOptions {
                        direction,
                        spline_knots: (s.spline_knots >= 3).then_some(s.spline_knots),
                        interactions: s.interactions,
                        max_interactions: s.max_interactions,
                        max_terms: s.max_terms,
                        full_path: false,
                    }),
                },
                s.matrix.as_ref().map(matrix_of),
            ))
        }
        other => Err(format!(
            "step `{}` ({}) is not an `ols` or `stepwise` fit",
            other.id(),
            other.kind()
        )),
    }
}

/// Per model R^2 and adjusted R^2 (not headline), and how many models fall below 0.8.
fn fit_figures(fits: &[fit::GroupFit]) -> Vec<Figure> {
    let mut figures = vec![Figure::new("models fitted", fits.len() as f64, "").headline()];
    let weak = fits
        .iter()
        .filter(|f| f.flags.iter().any(|x| x == "r2_below_0.8"))
        .count();
    figures.push(Figure::new("models with adjusted R² < 0.8", weak as f64, "").headline());
    for f in fits {
        let who = if f.group.is_empty() {
            "model"
        } else {
            &f.group
        };
        figures.push(Figure::new(format!("{who}: R²"), f.r2, ""));
        figures.push(Figure::new(format!("{who}: adjusted R²"), f.adj_r2, ""));
    }
    figures
}

fn access(e: yosoku_tables::access::AccessError) -> ModelError {
    ModelError::Access {
        role: "output",
        source: e,
    }
}

/// Total operations per (program, variant).
fn operation_totals(counts: &RecordBatch) -> Result<Vec<Figure>, ModelError> {
    let program = utf8(counts, col::PROGRAM).map_err(access)?;
    let variant = utf8(counts, col::VARIANT).map_err(access)?;
    let count = float64(counts, col::COUNT).map_err(access)?;
    let mut figures: Vec<Figure> = Vec::new();
    for i in 0..counts.num_rows() {
        let name = format!(
            "{}: operations",
            name_of(program.value(i), variant.value(i))
        );
        match figures.iter_mut().find(|f| f.name == name) {
            Some(f) => f.value += count.value(i),
            None => figures.push(Figure::new(name, count.value(i), "ops")),
        }
    }
    Ok(figures)
}

fn balance_figures(balance: &RecordBatch) -> Result<Vec<Figure>, ModelError> {
    let program = utf8(balance, col::PROGRAM).map_err(access)?;
    let variant = utf8(balance, col::VARIANT).map_err(access)?;
    let component = utf8(balance, col::COMPONENT).map_err(access)?;
    let window = float64(balance, col::WINDOW_SECS).map_err(access)?;
    let ops = float64(balance, col::OPS_PER_WINDOW).map_err(access)?;
    let mut figures = Vec::new();
    for i in 0..balance.num_rows() {
        let who = name_of(program.value(i), variant.value(i));
        if i == 0
            || program.value(i) != program.value(i - 1)
            || variant.value(i) != variant.value(i - 1)
        {
            figures.push(
                Figure::new(format!("{who}: transfer window"), window.value(i), "s").headline(),
            );
        }
        figures.push(
            Figure::new(
                format!("{who}: {} per window", component.value(i)),
                ops.value(i),
                "ops",
            )
            .headline(),
        );
    }
    Ok(figures)
}

fn measured_figures(compared: &RecordBatch) -> Result<Vec<Figure>, ModelError> {
    let rows = read_predictions("predictions", compared)?;
    let mut figures = Vec::new();
    let mut errors = Vec::new();
    for p in &rows {
        let who = format!("{} {}", name_of(&p.program, &p.variant), p.phase);
        // Flags (an illustrative input, a negative time) travel with the figures they qualify.
        let flags = p
            .flags
            .as_ref()
            .map(|f| format!(" [{f}]"))
            .unwrap_or_default();
        figures.push(
            Figure::new(format!("{who}: predicted{flags}"), p.predicted_secs, "s").headline(),
        );
        if let (Some(m), Some(e)) = (p.measured_secs, p.error_pct) {
            figures.push(Figure::new(format!("{who}: measured"), m, "s").headline());
            figures.push(Figure::new(format!("{who}: error{flags}"), e, "%").headline());
            errors.push(e.abs());
        }
    }
    if !errors.is_empty() {
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        figures.push(Figure::new("mean |error|", mean, "%").headline());
    }
    Ok(figures)
}

/// Per compared figure of a `predictions` table a headline figure with its reference; for other
/// tables the largest difference per column (headline) and each row (not headline).
fn reference_figures(table: &str, compared: &RecordBatch) -> Result<Vec<Figure>, ModelError> {
    let program = utf8(compared, col::PROGRAM).map_err(access)?;
    let variant = utf8(compared, col::VARIANT).map_err(access)?;
    let column = utf8(compared, col::COLUMN_NAME).map_err(access)?;
    let label = utf8(compared, col::LABEL).map_err(access)?;
    let computed = float64(compared, col::COMPUTED).map_err(access)?;
    let reference = float64(compared, col::REFERENCE).map_err(access)?;
    let unit = utf8(compared, col::UNIT).map_err(access)?;
    let mut figures = Vec::new();
    let mut largest: Vec<(String, String, f64)> = Vec::new();
    let mut unmatched = 0usize;
    for i in 0..compared.num_rows() {
        if yosoku_tables::access::opt_f64(computed, i).is_none() {
            unmatched += 1;
            continue;
        }
        let name = format!(
            "{} {}: {}",
            name_of(program.value(i), variant.value(i)),
            label.value(i),
            column.value(i)
        );
        let figure =
            Figure::new(name, computed.value(i), unit.value(i)).with_reference(reference.value(i));
        let difference = (computed.value(i) - reference.value(i)).abs();
        if table == "predictions" {
            figures.push(figure.headline());
        } else {
            figures.push(figure);
            match largest.iter_mut().find(|(c, _, _)| c == column.value(i)) {
                Some(entry) => entry.2 = entry.2.max(difference),
                None => largest.push((
                    column.value(i).to_owned(),
                    unit.value(i).to_owned(),
                    difference,
                )),
            }
        }
    }
    for (c, u, d) in largest {
        figures.push(Figure::new(format!("largest |difference| in {c}"), d, &u).headline());
    }
    figures
        .push(Figure::new("references without a computed figure", unmatched as f64, "").headline());
    Ok(figures)
}
