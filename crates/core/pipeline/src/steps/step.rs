//! What a step is: the [`Step`] trait every step kind implements, its parameters
//! ([`StepParams`], [`ParamError`]), its [`StepKind`] (name, stage, parser), what it sees when it
//! runs ([`StepContext`]) and what it hands on ([`StepOutput`]: tables, figures, the model it
//! defines or saves, the scores of the model it names). The registry of kinds is
//! [`super::registry`]; the kinds themselves are in the family modules beside.

use std::fmt;
use std::ops::Range;

use arrow_array::RecordBatch;
use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use yosoku_devices::Catalogue;
use yosoku_models::ModelError;
use yosoku_tables::rows::RowsError;
use yosoku_tables::{Figure, TableDef};

pub use crate::table_set::{DefinedModel, ModelDefinition, Standardization};
use crate::table_set::{DuplicateTable, TableSet};

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
}

/// A reference to a table: `<source or step>.<table>`, with its position in the file.
pub type TableRef = Spanned<String>;

/// The table part of a reference (`predictions` of `fit.predictions`).
pub fn table_part(reference: &TableRef) -> &str {
    reference
        .get_ref()
        .split_once('.')
        .map_or("", |(_, table)| table)
}

/// A parameter that deserialized but is not valid: the key it is written at, and what was
/// expected. The parser turns it into an error at that key's line and column.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    pub key: &'static str,
    pub message: String,
}

impl ParamError {
    pub fn new(key: &'static str, message: impl Into<String>) -> Self {
        Self {
            key,
            message: message.into(),
        }
    }
}

/// The parameters of a step kind, as written in its table (without `step` and `id`, which the
/// parser reads). `into_step` checks everything that can be checked without the data.
pub trait StepParams: DeserializeOwned {
    type Step: Step + 'static;
    fn into_step(self) -> Result<Self::Step, ParamError>;
}

/// One step of a pipeline, with its parameters checked.
pub trait Step: fmt::Debug + Send + Sync {
    /// The tables it reads.
    fn inputs(&self) -> Vec<&TableRef>;

    /// The table names (`<id>.<name>`) it produces, in the order it produces them.
    fn outputs(&self) -> Vec<&str>;

    /// The fit step whose model it uses (`model = "<id>"`).
    fn model_input(&self) -> Option<&Spanned<String>> {
        None
    }

    /// The model it defines, for validation steps that name it.
    fn model_definition(&self) -> Option<ModelDefinition> {
        None
    }

    /// Checks its parameters against the model of [`Step::model_input`] (when it has one).
    fn check_model(&self, _model: &ModelDefinition) -> Result<(), ParamError> {
        Ok(())
    }

    /// Whether it reads the device catalogue (the runner then reads the user's device files).
    fn uses_devices(&self) -> bool {
        false
    }

    /// Runs the step over the tables in `cx`.
    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError>;
}

/// Keys several step kinds share, read once as one typed group beside each kind's own keys
/// ([`GroupedParams`]). The group's keys are taken out of a step's table first; the kind's own
/// parameters (`deny_unknown_fields`) then refuse any other key at its line and column.
pub trait KeyGroup: DeserializeOwned {
    /// The keys of the group.
    const KEYS: &'static [&'static str];
}

/// The key groups a grouped step kind reads beside its own keys: one [`KeyGroup`], or a pair of
/// them (`(SettingKeys, PmnfKeys)`), each read from its own keys with their spans.
pub trait KeyGroups: Sized {
    /// The keys of each group.
    const KEY_SETS: &'static [&'static [&'static str]];
    /// Reads the groups from a table that holds only keys of [`KeyGroups::KEY_SETS`] (`span`:
    /// the step's table, where a missing key is reported).
    fn read(span: Range<usize>, table: DeTable<'_>) -> Result<Self, toml::de::Error>;
}

impl<G: KeyGroup> KeyGroups for G {
    const KEY_SETS: &'static [&'static [&'static str]] = &[G::KEYS];
    fn read(span: Range<usize>, table: DeTable<'_>) -> Result<Self, toml::de::Error> {
        G::deserialize(ValueDeserializer::from(Spanned::new(
            span,
            DeValue::Table(table),
        )))
    }
}

impl<A: KeyGroup, B: KeyGroup> KeyGroups for (A, B) {
    const KEY_SETS: &'static [&'static [&'static str]] = &[A::KEYS, B::KEYS];
    fn read(span: Range<usize>, table: DeTable<'_>) -> Result<Self, toml::de::Error> {
        let (a, b): (DeTable<'_>, DeTable<'_>) = table
            .into_iter()
            .partition(|(key, _)| A::KEYS.contains(&key.get_ref().as_ref()));
        Ok((A::read(span.clone(), a)?, B::read(span, b)?))
    }
}

/// The parameters of a step kind whose table holds [`KeyGroups`] beside its own keys.
pub trait GroupedParams: DeserializeOwned {
    type Group: KeyGroups;
    type Step: Step + 'static;
    fn into_step(self, group: Self::Group) -> Result<Self::Step, ParamError>;
}

/// Why a step's parameters were refused: serde's error (unknown key, wrong type, with the span
/// of the value) or a check of [`StepParams::into_step`]. The parser turns either into a
/// `file:line:column` error.
#[derive(Debug)]
pub enum ParamsError {
    Toml(toml::de::Error),
    Param(ParamError),
}

type ParseFn = for<'a> fn(Spanned<DeValue<'a>>) -> Result<Box<dyn Step>, ParamsError>;

/// One kind of step: the name written after `step =`, the stage it belongs to, a line of what it
/// does, and how its parameters are read.
pub struct StepKind {
    pub name: &'static str,
    pub stage: Stage,
    pub summary: &'static str,
    /// The keys of its [`KeyGroups`], read beside its own (none for a kind without one): named
    /// with its own when a key is misspelt.
    pub group_keys: &'static [&'static [&'static str]],
    parse: ParseFn,
}

impl fmt::Debug for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepKind")
            .field("name", &self.name)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl StepKind {
    /// A kind whose parameters are `P`.
    pub const fn new<P: StepParams + 'static>(
        name: &'static str,
        stage: Stage,
        summary: &'static str,
    ) -> Self {
        Self::with_parser(name, stage, summary, &[], parse_step::<P>)
    }

    /// A kind whose parameters are `P`, with the keys of `P::Group` beside its own.
    pub const fn grouped<P: GroupedParams + 'static>(
        name: &'static str,
        stage: Stage,
        summary: &'static str,
    ) -> Self {
        Self::with_parser(
            name,
            stage,
            summary,
            <P::Group as KeyGroups>::KEY_SETS,
            parse_grouped::<P>,
        )
    }

    const fn with_parser(
        name: &'static str,
        stage: Stage,
        summary: &'static str,
        group_keys: &'static [&'static [&'static str]],
        parse: ParseFn,
    ) -> Self {
        Self {
            name,
            stage,
            summary,
            group_keys,
            parse,
        }
    }

    /// Reads and checks the parameters of a step of this kind: its table without `step` and
    /// `id`.
    pub fn parse(&self, params: Spanned<DeValue<'_>>) -> Result<Box<dyn Step>, ParamsError> {
        (self.parse)(params)
    }
}

fn parse_step<P: StepParams + 'static>(
    params: Spanned<DeValue<'_>>,
) -> Result<Box<dyn Step>, ParamsError> {
    let parsed = P::deserialize(ValueDeserializer::from(params)).map_err(ParamsError::Toml)?;
    let step = parsed.into_step().map_err(ParamsError::Param)?;
    Ok(Box::new(step))
}

/// [`parse_step`] of a kind with a key group: the group's keys read as `P::Group`, the others
/// as `P`, each value with its own span (an error points at the key's line and column).
fn parse_grouped<P: GroupedParams + 'static>(
    params: Spanned<DeValue<'_>>,
) -> Result<Box<dyn Step>, ParamsError> {
    let span = params.span();
    let (own, group) = match params.into_inner() {
        DeValue::Table(table) => {
            let (mut own, mut group) = (DeTable::new(), DeTable::new());
            for (key, value) in table {
                let name: &str = key.get_ref().as_ref();
                if <P::Group as KeyGroups>::KEY_SETS
                    .iter()
                    .any(|keys| keys.contains(&name))
                {
                    group.insert(key, value);
                } else {
                    own.insert(key, value);
                }
            }
            (DeValue::Table(own), group)
        }
        // Not a table: the kind's own parameters say what was expected.
        other => (other, DeTable::new()),
    };
    let parsed = P::deserialize(ValueDeserializer::from(Spanned::new(span.clone(), own)))
        .map_err(ParamsError::Toml)?;
    let group = <P::Group as KeyGroups>::read(span, group).map_err(ParamsError::Toml)?;
    let step = parsed.into_step(group).map_err(ParamsError::Param)?;
    Ok(Box::new(step))
}

/// A parsed step: its kind, its id and its parameters.
#[derive(Debug)]
pub struct PipelineStep {
    pub kind: &'static StepKind,
    pub id: String,
    pub step: Box<dyn Step>,
}

impl PipelineStep {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The step's kind, as written after `step =`.
    pub fn kind(&self) -> &'static str {
        self.kind.name
    }

    pub fn stage(&self) -> Stage {
        self.kind.stage
    }
}

/// Why a step could not run.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A reference names a table its namespace did not produce.
    #[error("no table `{name}`; `{namespace}` produced: {}", if produced.is_empty() { "nothing".to_owned() } else { produced.join(", ") })]
    MissingTable {
        /// Where the reference is written.
        span: Range<usize>,
        name: String,
        namespace: String,
        produced: Vec<String>,
    },
    /// `model = "<id>"` names a step that defined no model (checked when parsing; a bug here).
    #[error("step `{name}` defined no model")]
    MissingModel { span: Range<usize>, name: String },
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The inputs are valid tables, but the step cannot use them.
    #[error("{0}")]
    Invalid(String),
    /// The step produced other tables than it declares: a bug in the step.
    #[error("internal error: the step produced tables {produced:?} but declares {declared:?}")]
    Outputs {
        declared: Vec<String>,
        produced: Vec<String>,
    },
}

impl From<RowsError> for StepError {
    fn from(e: RowsError) -> Self {
        StepError::Model(ModelError::Table(e))
    }
}

/// What a step sees when it runs: its id and the tables (and fitted models) of the run so far.
#[derive(Debug)]
pub struct StepContext<'a> {
    pub id: &'a str,
    pub tables: &'a TableSet,
    /// The device catalogue of the run: the built-in devices and the user's files.
    pub devices: &'a Catalogue,
}

impl<'a> StepContext<'a> {
    /// The table a reference names.
    pub fn input(&self, reference: &TableRef) -> Result<&'a RecordBatch, StepError> {
        let name = reference.get_ref();
        self.tables.get(name).ok_or_else(|| {
            let namespace = name.split_once('.').map_or(name.as_str(), |(ns, _)| ns);
            StepError::MissingTable {
                span: reference.span(),
                name: name.clone(),
                namespace: namespace.to_owned(),
                produced: self
                    .tables
                    .in_namespace(namespace)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }
        })
    }

    /// An optional input.
    pub fn optional_input(
        &self,
        reference: Option<&TableRef>,
    ) -> Result<Option<&'a RecordBatch>, StepError> {
        reference.map(|r| self.input(r)).transpose()
    }

    /// The table a reference names, restricted to one device when `device` is given.
    pub fn input_on(
        &self,
        reference: &TableRef,
        device: Option<&str>,
    ) -> Result<RecordBatch, StepError> {
        let batch = self.input(reference)?;
        let Some(d) = device else {
            return Ok(batch.clone());
        };
        let filtered = yosoku_models::filter_eq(batch, yosoku_tables::col::DEVICE, d)?;
        if filtered.num_rows() == 0 {
            return Err(StepError::Invalid(format!(
                "`{}` has no rows for device `{d}`",
                reference.get_ref()
            )));
        }
        Ok(filtered)
    }

    /// The model the fit step `reference` names, with the observations it was fitted on.
    pub fn model_observations(
        &self,
        reference: &Spanned<String>,
    ) -> Result<(&'a ModelDefinition, &'a RecordBatch), StepError> {
        let model = self.model(reference)?;
        let observations = self.tables.get(&model.observations).ok_or_else(|| {
            StepError::Invalid(format!(
                "the observations of model `{}` (`{}`) are gone",
                reference.get_ref(),
                model.observations
            ))
        })?;
        Ok((model, observations))
    }

    /// The model the fit step `reference` names defined when it ran.
    pub fn model(&self, reference: &Spanned<String>) -> Result<&'a ModelDefinition, StepError> {
        self.tables
            .model(reference.get_ref())
            .ok_or_else(|| StepError::MissingModel {
                span: reference.span(),
                name: reference.get_ref().clone(),
            })
    }
}

/// What a step produced: its tables (by table name, in its namespace), summary figures, and the
/// model it defines (fit steps).
#[derive(Debug, Clone, Default)]
pub struct StepOutput {
    pub tables: Vec<(String, RecordBatch)>,
    pub figures: Vec<Figure>,
    pub model: Option<ModelDefinition>,
    /// Set by `zscore`: its table is its input standardised.
    pub standardization: Option<Standardization>,
    /// The model the step fitted, to be recorded in the bundle for commands that use it later.
    pub saved_model: Option<SavedModel>,
    /// Its table of held-out scores of the model it names (`model = "<id>"`): recorded in that
    /// model's `scores`.
    pub scores: Option<String>,
}

/// A model a step fitted, as the bundle's manifest records it: what it is, what it was fitted
/// on and with which options, its fitted parameters as its family saves them, and the tables
/// that describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedModel {
    /// What the model is (`yosoku_models::transfer::GpuTransfer::KIND`, ...).
    pub kind: &'static str,
    /// Its training table: one of the step's own (`<table>` in a [`StepOutput`]) or one it read
    /// (`<namespace>.<table>`); always `<namespace>.<table>` once added.
    pub training: TrainingTable,
    /// The tables that describe it (coefficients): `<table>` in a [`StepOutput`],
    /// `<namespace>.<table>` once added.
    pub tables: Vec<String>,
    /// The options it was fitted with, by name.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Its fitted parameters as JSON (`Model::to_json`), where its family saves them apart
    /// from its tables.
    pub fitted_json: Option<String>,
}

/// Which table a saved model was fitted on.
#[derive(Debug, Clone, PartialEq)]
pub enum TrainingTable {
    /// A table the step made, by its name in the step's namespace.
    Own(String),
    /// A table the step read, `<namespace>.<table>`.
    Input(String),
}

impl TrainingTable {
    /// The table's name as written: `<table>` for [`TrainingTable::Own`] before the step's
    /// output is added, `<namespace>.<table>` after.
    pub fn name(&self) -> &str {
        match self {
            TrainingTable::Own(t) | TrainingTable::Input(t) => t,
        }
    }

    fn full_name(&self, id: &str) -> String {
        match self {
            TrainingTable::Own(t) => format!("{id}.{t}"),
            TrainingTable::Input(t) => t.clone(),
        }
    }
}

/// What [`PipelineStep::add_output`] added to the run's tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Added {
    /// The tables, `<namespace>.<table>`, in the order the step made them.
    pub tables: Vec<String>,
    /// The model the step fitted, its tables named in full.
    pub saved_model: Option<SavedModel>,
    /// Held-out scores of the model the step names: (the model's name, the table in full).
    pub scores: Option<(String, String)>,
}

impl StepOutput {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a canonical table, named by its definition.
    pub fn table(mut self, def: &TableDef, batch: RecordBatch) -> Self {
        self.tables.push((def.name.to_owned(), batch));
        self
    }

    /// Adds a table that is not one canonical kind (a filtered copy of any input).
    pub fn named_table(mut self, name: &str, batch: RecordBatch) -> Self {
        self.tables.push((name.to_owned(), batch));
        self
    }

    pub fn figures(mut self, figures: Vec<Figure>) -> Self {
        self.figures.extend(figures);
        self
    }

    pub fn model(mut self, model: ModelDefinition) -> Self {
        self.model = Some(model);
        self
    }

    pub fn standardization(mut self, standardization: Standardization) -> Self {
        self.standardization = Some(standardization);
        self
    }

    /// Records the model the step fitted in the bundle: a model of `kind` fitted on `training`,
    /// described by the step's tables `tables`.
    pub fn saved_model(
        mut self,
        kind: &'static str,
        training: TrainingTable,
        tables: &[&TableDef],
    ) -> Self {
        self.saved_model = Some(SavedModel {
            kind,
            training,
            tables: tables.iter().map(|t| t.name.to_owned()).collect(),
            options: serde_json::Map::new(),
            fitted_json: None,
        });
        self
    }

    /// The options and the fitted parameters of the model recorded by [`StepOutput::saved_model`].
    pub fn saved_parameters(
        mut self,
        options: serde_json::Map<String, serde_json::Value>,
        fitted_json: String,
    ) -> Self {
        if let Some(m) = &mut self.saved_model {
            m.options = options;
            m.fitted_json = Some(fitted_json);
        }
        self
    }

    /// Records the step's table `def` as held-out scores of the model the step names.
    pub fn scores(mut self, def: &TableDef) -> Self {
        self.scores = Some(def.name.to_owned());
        self
    }
}

impl PipelineStep {
    /// Adds what this step produced to `tables`: its tables under `<id>.`, each recorded as made
    /// from the step's inputs, its model and its standardisation. Returns the names of the
    /// tables added and the model to record.
    pub fn add_output(
        &self,
        output: StepOutput,
        tables: &mut TableSet,
    ) -> Result<Added, DuplicateTable> {
        let parents: Vec<String> = self
            .step
            .inputs()
            .into_iter()
            .map(|r| r.get_ref().clone())
            .chain(
                // A validation step reads its model's table.
                self.step
                    .model_input()
                    .and_then(|m| tables.model(m.get_ref()))
                    .map(|m| m.observations.clone()),
            )
            .collect();
        let mut names = Vec::with_capacity(output.tables.len());
        for (table, batch) in output.tables {
            tables.insert(&self.id, &table, batch)?;
            let name = format!("{}.{table}", self.id);
            tables.insert_parents(&name, parents.clone());
            if let Some(s) = &output.standardization {
                tables.insert_standardization(&name, s.clone());
            }
            names.push(name);
        }
        if let Some(model) = output.model {
            tables.insert_model(&self.id, model);
        }
        let saved_model = output.saved_model.map(|m| SavedModel {
            training: TrainingTable::Input(m.training.full_name(&self.id)),
            tables: std::iter::once(m.training.full_name(&self.id))
                .chain(m.tables.iter().map(|t| format!("{}.{t}", self.id)))
                .collect(),
            ..m
        });
        let scores = output.scores.and_then(|t| {
            let model = self.step.model_input()?.get_ref().clone();
            Some((model, format!("{}.{t}", self.id)))
        });
        Ok(Added {
            tables: names,
            saved_model,
            scores,
        })
    }
}

/// The names of canonical tables, for [`Step::outputs`].
pub(crate) fn names(defs: &[&'static TableDef]) -> Vec<&'static str> {
    defs.iter().map(|d| d.name).collect()
}

/// A finite number `>= 0`.
pub(crate) fn non_negative(key: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            key,
            format!("`{key}` must be a number >= 0, found {value}"),
        ))
    }
}
