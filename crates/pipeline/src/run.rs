//! Running the steps of a pipeline over a set of named tables. No I/O, no clock: the caller
//! collects the sources, times the steps and writes the bundle.

use arrow_array::RecordBatch;
use yosoku_models::compare::{compare_measured, compare_reference};
use yosoku_models::csx600::{self, Fitted};
use yosoku_models::rows::read_predictions;
use yosoku_models::{ModelError, filter_eq};
use yosoku_tables::access::{float64, utf8};
use yosoku_tables::{Figure, col};

use crate::spec::{Located, PipelineSpec, SpecError};
use crate::steps::{Step, TableRef};

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
        Step::CompareMeasured(s) => {
            let compared = compare_measured(cx.input(&s.predictions)?, cx.input(&s.measured)?)
                .map_err(|e| cx.model(e))?;
            let figures = measured_figures(&compared).map_err(|e| cx.model(e))?;
            StepOutput {
                tables: vec![("predictions".into(), compared)],
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
