//! The tables of a run and the models its fit steps defined: what every step reads.

use arrow_array::RecordBatch;
use yosoku_models::counters::fit::ModelSpec;
use yosoku_models::mpi::StepsAndRanksSpec;
use yosoku_models::scaling::ScalingSpec;
use yosoku_models::transfer::work_forecast::WorkModelOptions;

/// What a fit step defines for the validation steps that refit it: the table it fits on and
/// the model. Known when the file is parsed, and handed to validation steps as the fit step's
/// output when it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelDefinition {
    /// `<namespace>.<table>` of the table the model is fitted on (`observations`, or `runs` for
    /// a scaling model).
    pub observations: String,
    pub model: DefinedModel,
}

/// The model a fit step defines, by family.
#[derive(Debug, Clone, PartialEq)]
pub enum DefinedModel {
    /// A counter model (`ols`, `stepwise`).
    Counters(ModelSpec),
    /// The transfer models (`gpu_transfer_fit`), fitted on the launches of devices in the
    /// catalogue (the others left out, and said so, with `skip_unknown_devices`).
    Transfer {
        skip_unknown_devices: bool,
        choose_base: bool,
    },
    /// The scaling models (`scaling_fit`): every call path of a `runs` table in PMNF, with
    /// what each parameter is, in words.
    Scaling {
        spec: ScalingSpec,
        meanings: std::collections::BTreeMap<String, String>,
    },
    /// The parts' models of short MPI runs (`mpi_steps_and_ranks_fit`): fitted on their
    /// `mpi_blocks` (the definition's table) and `mpi_ranks` (`ranks`, `<namespace>.<table>`),
    /// with no target yet (`spec.target` empty).
    StepsAndRanks {
        spec: StepsAndRanksSpec,
        ranks: String,
        meanings: std::collections::BTreeMap<String, String>,
    },
    /// The latency-aware model of work (`work_model_fit`), fitted on the launches of the GPUs
    /// `train` names.
    Work {
        options: WorkModelOptions,
        train: Vec<String>,
    },
}

impl ModelDefinition {
    /// The counter model, where it is one.
    pub fn counters(&self) -> Option<&ModelSpec> {
        match &self.model {
            DefinedModel::Counters(spec) => Some(spec),
            DefinedModel::Transfer { .. }
            | DefinedModel::Scaling { .. }
            | DefinedModel::StepsAndRanks { .. }
            | DefinedModel::Work { .. } => None,
        }
    }

    /// The step kinds that define a model of this family, for messages.
    pub fn family(&self) -> &'static str {
        match self.model {
            DefinedModel::Counters(_) => "an `ols` or `stepwise` fit step",
            DefinedModel::Transfer { .. } => "a `gpu_transfer_fit` step",
            DefinedModel::Scaling { .. } => "a `scaling_fit` step",
            DefinedModel::StepsAndRanks { .. } => "an `mpi_steps_and_ranks_fit` step",
            DefinedModel::Work { .. } => "a `work_model_fit` step",
        }
    }
}

/// A table standardised (z-scored) over all its rows by a `zscore` step: the fit it feeds is
/// validated by standardising every training set again, from the table before.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardization {
    /// `<namespace>.<table>` of the observations before standardisation.
    pub input: String,
    /// The columns standardised (empty: every feature).
    pub columns: Vec<String>,
    pub group_by: Vec<String>,
}

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
    /// The tables each step's table was made from.
    parents: Vec<(String, Vec<String>)>,
    standardized: Vec<(String, Standardization)>,
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

    /// Records the model the fit step `id` defined.
    pub fn insert_model(&mut self, id: &str, model: ModelDefinition) {
        self.models.push((id.to_owned(), model));
    }

    /// Records that `table` was made from `parents` (a step's inputs).
    pub fn insert_parents(&mut self, table: &str, parents: Vec<String>) {
        self.parents.push((table.to_owned(), parents));
    }

    /// Records that `table` is `standardization.input` standardised.
    pub fn insert_standardization(&mut self, table: &str, standardization: Standardization) {
        self.standardized.push((table.to_owned(), standardization));
    }

    /// How `table` was standardised, when a `zscore` step made it.
    pub fn standardization(&self, table: &str) -> Option<&Standardization> {
        self.standardized
            .iter()
            .find(|(t, _)| t == table)
            .map(|(_, s)| s)
    }

    /// Every table `table` was made from, directly or not (sources have none).
    pub fn ancestors(&self, table: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let mut todo = vec![table];
        while let Some(t) = todo.pop() {
            for (_, parents) in self.parents.iter().filter(|(c, _)| c == t) {
                for p in parents {
                    if !out.contains(&p.as_str()) {
                        out.push(p);
                        todo.push(p);
                    }
                }
            }
        }
        out
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
