//! Running the steps of a pipeline over a set of named tables. No I/O, no clock: the caller
//! collects the sources, times the steps and writes the bundle.

use arrow_array::RecordBatch;

use crate::spec::{Located, Location, PipelineSpec};
use crate::steps::{ModelDefinition, PipelineStep, StepContext, StepError, StepOutput};

/// A table name given twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("table `{0}` exists already")]
pub struct DuplicateTable(pub String);

/// The tables of a run, each named `<namespace>.<table>`, in the order they were added, and the
/// models the fit steps defined, by step id.
#[derive(Debug, Clone, Default)]
pub struct TableSet {
    tables: Vec<(String, RecordBatch)>,
    models: Vec<(String, ModelDefinition)>,
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
    ) -> Result<(), DuplicateTable> {
        let name = format!("{namespace}.{table}");
        if self.get(&name).is_some() {
            return Err(DuplicateTable(name));
        }
        self.tables.push((name, batch));
        Ok(())
    }

    /// Adds what the step `id` produced: its tables under `<id>.` and its model. Returns the
    /// names of the tables added.
    pub fn insert_output(
        &mut self,
        id: &str,
        output: StepOutput,
    ) -> Result<Vec<String>, DuplicateTable> {
        let mut names = Vec::with_capacity(output.tables.len());
        for (table, batch) in output.tables {
            self.insert(id, &table, batch)?;
            names.push(format!("{id}.{table}"));
        }
        if let Some(model) = output.model {
            self.models.push((id.to_owned(), model));
        }
        Ok(names)
    }

    pub fn get(&self, name: &str) -> Option<&RecordBatch> {
        self.tables.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    /// The model the fit step `id` defined.
    pub fn model(&self, id: &str) -> Option<&ModelDefinition> {
        self.models.iter().find(|(n, _)| n == id).map(|(_, m)| m)
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
    pub fn in_namespace(&self, namespace: &str) -> Vec<&str> {
        self.tables
            .iter()
            .filter_map(|(n, _)| n.strip_prefix(namespace)?.strip_prefix('.'))
            .collect()
    }

    /// Every table, as owned pairs (for the bundle writer).
    pub fn into_tables(self) -> Vec<(String, RecordBatch)> {
        self.tables
    }
}

/// A step that failed, where it is written: `file:line:column: step `id` (kind): why`. A
/// missing input table is reported at its reference.
#[derive(Debug, thiserror::Error)]
#[error("{origin}:{}:{}: {}", location.line, location.column, self.describe())]
pub struct StepFailure {
    pub origin: String,
    pub location: Location,
    pub step: String,
    pub kind: &'static str,
    pub error: Box<StepError>,
}

impl StepFailure {
    fn describe(&self) -> String {
        match self.error.as_ref() {
            StepError::MissingTable { .. } | StepError::MissingModel { .. } => {
                format!("step `{}`: {}", self.step, self.error)
            }
            e => format!("step `{}` ({}): {e}", self.step, self.kind),
        }
    }
}

/// Runs one step over `tables` (which must hold every table it reads, and the models it uses)
/// and returns what it made, having checked that it made exactly the tables it declares. The
/// caller adds the output to `tables` ([`TableSet::insert_output`]).
pub fn run_step(
    spec: &PipelineSpec,
    step: &Located<PipelineStep>,
    tables: &TableSet,
) -> Result<StepOutput, StepFailure> {
    let fail = |error: StepError| {
        let location = match &error {
            StepError::MissingTable { span, .. } | StepError::MissingModel { span, .. } => {
                spec.locate(span)
            }
            _ => step.location,
        };
        StepFailure {
            origin: spec.origin.clone(),
            location,
            step: step.value.id().to_owned(),
            kind: step.value.kind(),
            error: Box::new(error),
        }
    };
    let cx = StepContext {
        id: step.value.id(),
        tables,
    };
    let output = step.value.step.run(&cx).map_err(fail)?;
    let declared = step.value.step.outputs();
    if output.tables.len() != declared.len()
        || output
            .tables
            .iter()
            .zip(&declared)
            .any(|((n, _), d)| n != d)
    {
        return Err(fail(StepError::Outputs {
            declared: declared.iter().map(|d| (*d).to_owned()).collect(),
            produced: output.tables.iter().map(|(n, _)| n.clone()).collect(),
        }));
    }
    Ok(output)
}
