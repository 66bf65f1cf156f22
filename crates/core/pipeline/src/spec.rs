//! The pipeline file: TOML, parsed with positions so that every error names the file, line,
//! column and key. See docs/pipelines.md for the format.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

use yosoku_tables::is_valid_name;

use crate::steps::{ParamError, ParamsError, PipelineStep, Stage, step_kind};
use crate::table_set::ModelDefinition;

/// A position in the pipeline file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

/// An error in, or while running, a pipeline file: `origin:line:column: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", prefix(origin, location))]
pub struct SpecError {
    /// The file (as the user named it).
    pub origin: String,
    pub location: Option<Location>,
    pub message: String,
}

fn prefix(origin: &str, location: &Option<Location>) -> String {
    match location {
        Some(l) => format!("{origin}:{}:{}: ", l.line, l.column),
        None => format!("{origin}: "),
    }
}

/// Byte offsets to line and column in one text.
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        Self { text }
    }

    pub fn location(&self, offset: usize) -> Location {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            line,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

/// A value with the position of its first character in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub location: Location,
}

/// One source: a plugin's collector and its configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSpec {
    /// The namespace of its tables (`<name>.<table>`).
    pub name: String,
    pub location: Location,
    pub plugin: Located<String>,
    pub collector: Located<String>,
    /// The configuration, as JSON (what crosses the plugin ABI).
    pub config: serde_json::Map<String, serde_json::Value>,
    /// Where each config key is written.
    pub config_locations: BTreeMap<String, Location>,
    /// `allow_empty = true`: a source that yields no rows is not an error.
    pub allow_empty: bool,
    /// `isolate = true` or `isolate = { timeout_secs = .., memory_limit_mb = .. }`: the collector
    /// runs in a process of its own.
    pub isolate: Option<IsolateSpec>,
}

/// How an isolated source's collector is bounded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IsolateSpec {
    /// The collector's process is stopped after this long.
    pub timeout_secs: Option<f64>,
    /// The collector's process's address space limit.
    pub memory_limit_mb: Option<u64>,
}

/// A pipeline: sources, then the normalize, fit and validate stages in order.
#[derive(Debug)]
pub struct PipelineSpec {
    /// The file name as the user gave it, for messages.
    pub origin: String,
    pub name: String,
    pub description: String,
    /// Extra plugin directories, relative to the pipeline file.
    pub plugin_path: Vec<String>,
    /// Device files (a calibration's, a user's GPU) over the built-in catalogue, relative to the
    /// pipeline file; the command line's `--devices` files come over them.
    pub device_files: Vec<String>,
    pub sources: Vec<SourceSpec>,
    pub steps: Vec<Located<PipelineStep>>,
    /// The results this pipeline reproduces from a paper (`[[scoreboard]]`), in file order.
    pub scoreboard: Vec<ScoreSpec>,
    /// The file's text, to turn spans into positions.
    text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    #[serde(default)]
    plugin_path: Vec<String>,
    #[serde(default)]
    device_files: Vec<String>,
}

/// A `[[scoreboard]]` entry: one result the pipeline reproduces from a paper.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreSpec {
    /// The method and what is measured, in a few words.
    pub method: String,
    /// The step whose figure it is (`figure = "<step>.<figure name>"`).
    pub step: String,
    pub figure: String,
    /// The paper's figure as text (`4.6-38.9 %`); default: the figure's published value.
    pub paper: Option<String>,
    /// Reproduced when yosoku's figure lies in this closed range.
    pub within: Option<(f64, f64)>,
    /// Reproduced when yosoku's figure is within this many percent of its published value.
    pub tolerance_pct: Option<f64>,
    /// One of the results the demo's one screen shows (`headline = true`).
    pub headline: bool,
    /// Where the entry is in the file.
    pub location: Location,
    /// Where its `figure` key's value is.
    pub figure_location: Location,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScoreMeta {
    method: String,
    figure: Spanned<String>,
    #[serde(default)]
    paper: Option<String>,
    #[serde(default)]
    within: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    tolerance_pct: Option<Spanned<f64>>,
    #[serde(default)]
    headline: bool,
}

/// Whether `name` can name a pipeline (and its bundle directory).
pub fn is_valid_pipeline_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

struct Parser<'a> {
    origin: &'a str,
    index: LineIndex<'a>,
}

impl<'a> Parser<'a> {
    fn error_at(&self, span: &Range<usize>, message: impl Into<String>) -> SpecError {
        SpecError {
            origin: self.origin.to_owned(),
            location: Some(self.index.location(span.start)),
            message: message.into(),
        }
    }

    fn toml_error(&self, e: &toml::de::Error, table: Option<&DeTable<'_>>) -> SpecError {
        let mut message = e.message().trim().to_owned();
        let span = e.span();
        // Name the key whose value the error is in (serde's messages do not).
        if let (Some(span), Some(table)) = (&span, table) {
            for (key, value) in table.iter() {
                let vs = value.span();
                if vs.start <= span.start && span.end <= vs.end {
                    message = format!("key `{}`: {message}", key.get_ref());
                    break;
                }
            }
        }
        SpecError {
            origin: self.origin.to_owned(),
            location: span.map(|s| self.index.location(s.start)),
            message,
        }
    }

    fn location(&self, span: &Range<usize>) -> Location {
        self.index.location(span.start)
    }

    fn deserialize<T: DeserializeOwned>(
        &self,
        value: &Spanned<DeValue<'a>>,
    ) -> Result<T, SpecError> {
        let table = value.get_ref().as_table();
        T::deserialize(ValueDeserializer::from(value.clone()))
            .map_err(|e| self.toml_error(&e, table))
    }

    fn table<'v>(
        &self,
        value: &'v Spanned<DeValue<'a>>,
        what: &str,
    ) -> Result<&'v DeTable<'a>, SpecError> {
        value.get_ref().as_table().ok_or_else(|| {
            self.error_at(
                &value.span(),
                format!(
                    "{what}: expected a table, found {}",
                    value.get_ref().type_str()
                ),
            )
        })
    }

    fn string(
        &self,
        value: &Spanned<DeValue<'a>>,
        what: &str,
    ) -> Result<Located<String>, SpecError> {
        match value.get_ref().as_str() {
            Some(s) => Ok(Located {
                value: s.to_owned(),
                location: self.location(&value.span()),
            }),
            None => Err(self.error_at(
                &value.span(),
                format!(
                    "{what}: expected a string, found {}",
                    value.get_ref().type_str()
                ),
            )),
        }
    }

    fn json(
        &self,
        value: &Spanned<DeValue<'a>>,
        key: &str,
    ) -> Result<serde_json::Value, SpecError> {
        use serde_json::Value as J;
        Ok(match value.get_ref() {
            DeValue::String(s) => J::String(s.to_string()),
            DeValue::Boolean(b) => J::Bool(*b),
            DeValue::Integer(_) | DeValue::Float(_) => {
                let number: toml::Value = self.deserialize(value)?;
                match number {
                    toml::Value::Integer(i) => J::from(i),
                    toml::Value::Float(f) => serde_json::Number::from_f64(f)
                        .map(J::Number)
                        .ok_or_else(|| {
                            self.error_at(
                                &value.span(),
                                format!("config key `{key}`: {f} is not a finite number"),
                            )
                        })?,
                    _ => J::Null,
                }
            }
            DeValue::Array(items) => J::Array(
                items
                    .iter()
                    .map(|v| self.json(v, key))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(table) => {
                let mut map = serde_json::Map::new();
                for (k, v) in table.iter() {
                    map.insert(k.get_ref().to_string(), self.json(v, key)?);
                }
                J::Object(map)
            }
            DeValue::Datetime(_) => {
                return Err(self.error_at(
                    &value.span(),
                    format!("config key `{key}`: dates are not supported"),
                ));
            }
        })
    }

    fn score(&self, value: &Spanned<DeValue<'a>>) -> Result<ScoreSpec, SpecError> {
        self.table(value, "a [[scoreboard]] entry")?;
        let meta: ScoreMeta = self.deserialize(value)?;
        let Some((step, figure)) = meta.figure.get_ref().split_once('.') else {
            return Err(self.error_at(
                &meta.figure.span(),
                format!(
                    "figure `{}`: expected `<step id>.<figure name>`, e.g. \"loo.mean |error|\"",
                    meta.figure.get_ref()
                ),
            ));
        };
        let within = match &meta.within {
            None => None,
            Some(w) => match w.get_ref().as_slice() {
                [low, high] if low <= high => Some((*low, *high)),
                _ => {
                    return Err(
                        self.error_at(&w.span(), "`within`: expected [low, high] with low <= high")
                    );
                }
            },
        };
        if let Some(t) = &meta.tolerance_pct
            && (t.get_ref().is_nan() || *t.get_ref() < 0.0)
        {
            return Err(self.error_at(&t.span(), "`tolerance_pct`: expected a percentage >= 0"));
        }
        Ok(ScoreSpec {
            method: meta.method,
            step: step.to_owned(),
            figure: figure.to_owned(),
            paper: meta.paper,
            within,
            tolerance_pct: meta.tolerance_pct.map(|t| t.into_inner()),
            headline: meta.headline,
            location: self.index.location(value.span().start),
            figure_location: self.index.location(meta.figure.span().start),
        })
    }

    fn source(
        &self,
        name: &Spanned<std::borrow::Cow<'a, str>>,
        value: &Spanned<DeValue<'a>>,
    ) -> Result<SourceSpec, SpecError> {
        let source_name = name.get_ref().to_string();
        if !is_valid_name(&source_name) {
            return Err(self.error_at(
                &name.span(),
                format!("source name `{source_name}`: use lowercase ASCII letters, digits and `_`"),
            ));
        }
        let table = self.table(value, &format!("source `{source_name}`"))?;
        let (mut plugin, mut collector, mut config) = (None, None, serde_json::Map::new());
        let mut allow_empty = false;
        let mut isolate = None;
        let mut config_locations = BTreeMap::new();
        for (key, v) in table.iter() {
            match key.get_ref().as_ref() {
                "plugin" => {
                    plugin = Some(self.string(v, &format!("source `{source_name}`, key `plugin`"))?)
                }
                "collector" => {
                    collector =
                        Some(self.string(v, &format!("source `{source_name}`, key `collector`"))?)
                }
                "config" => {
                    for (k, cv) in self
                        .table(v, &format!("source `{source_name}`, key `config`"))?
                        .iter()
                    {
                        let k_name = k.get_ref().to_string();
                        config_locations.insert(k_name.clone(), self.location(&k.span()));
                        config.insert(k_name.clone(), self.json(cv, &k_name)?);
                    }
                }
                "allow_empty" => {
                    allow_empty = v.get_ref().as_bool().ok_or_else(|| {
                        self.error_at(
                            &v.span(),
                            format!(
                                "source `{source_name}`, key `allow_empty`: expected a boolean, found {}",
                                v.get_ref().type_str()
                            ),
                        )
                    })?;
                }
                "isolate" => isolate = self.isolate(v, &source_name)?,
                other => {
                    return Err(self.error_at(
                        &key.span(),
                        format!("source `{source_name}`: unknown key `{other}`; expected plugin, collector, config, allow_empty, isolate"),
                    ));
                }
            }
        }
        let location = self.location(&name.span());
        let missing = |key: &str| SpecError {
            origin: self.origin.to_owned(),
            location: Some(location),
            message: format!("source `{source_name}`: missing key `{key}`"),
        };
        Ok(SourceSpec {
            name: source_name.clone(),
            location,
            plugin: plugin.ok_or_else(|| missing("plugin"))?,
            collector: collector.ok_or_else(|| missing("collector"))?,
            config,
            config_locations,
            allow_empty,
            isolate,
        })
    }

    /// A source's `isolate`: a boolean, or a table of `timeout_secs` and `memory_limit_mb`.
    fn isolate(
        &self,
        value: &Spanned<DeValue<'a>>,
        source_name: &str,
    ) -> Result<Option<IsolateSpec>, SpecError> {
        let what = format!("source `{source_name}`, key `isolate`");
        if let Some(on) = value.get_ref().as_bool() {
            return Ok(on.then(IsolateSpec::default));
        }
        let DeValue::Table(table) = value.get_ref() else {
            return Err(self.error_at(
                &value.span(),
                format!(
                    "{what}: expected a boolean or a table of timeout_secs and memory_limit_mb, found {}",
                    value.get_ref().type_str()
                ),
            ));
        };
        let mut spec = IsolateSpec::default();
        for (key, v) in table.iter() {
            let number = self.json(v, key.get_ref())?;
            let bad = |expected: &str| {
                self.error_at(
                    &v.span(),
                    format!("{what}, `{}`: expected {expected}", key.get_ref()),
                )
            };
            match key.get_ref().as_ref() {
                "timeout_secs" => {
                    spec.timeout_secs = Some(
                        number
                            .as_f64()
                            .filter(|t| *t > 0.0 && t.is_finite())
                            .ok_or_else(|| bad("a number of seconds above 0"))?,
                    );
                }
                "memory_limit_mb" => {
                    spec.memory_limit_mb = Some(
                        number
                            .as_u64()
                            .filter(|m| (1..1 << 40).contains(m))
                            .ok_or_else(|| bad("a whole number of MiB above 0"))?,
                    );
                }
                other => {
                    return Err(self.error_at(
                        &key.span(),
                        format!(
                            "{what}: unknown key `{other}`; expected timeout_secs, memory_limit_mb"
                        ),
                    ));
                }
            }
        }
        Ok(Some(spec))
    }

    fn step(
        &self,
        stage: Stage,
        value: &Spanned<DeValue<'a>>,
    ) -> Result<Located<PipelineStep>, SpecError> {
        let table = self.table(value, &format!("a [[{}]] step", stage.name()))?;
        let Some((_, kind)) = table.iter().find(|(k, _)| k.get_ref() == "step") else {
            return Err(self.error_at(
                &value.span(),
                format!(
                    "a [[{}]] step needs a `step` key naming its kind, one of: {}",
                    stage.name(),
                    stage.step_kinds().join(", ")
                ),
            ));
        };
        let kind_name = self.string(kind, "key `step`")?;
        let Some(kind) = step_kind(stage, &kind_name.value) else {
            return Err(self.error_at(
                &kind.span(),
                format!(
                    "unknown [[{}]] step `{}`; expected one of: {}",
                    stage.name(),
                    kind_name.value,
                    stage.step_kinds().join(", ")
                ),
            ));
        };
        let Some((_, id)) = table.iter().find(|(k, _)| k.get_ref() == "id") else {
            return Err(self.error_at(&value.span(), "missing field `id`"));
        };
        let id = self.string(id, "key `id`")?;
        // The kind's own parameters: the table without `step` and `id`.
        let params: DeTable<'a> = table
            .iter()
            .filter(|(k, _)| !matches!(k.get_ref().as_ref(), "step" | "id"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let params = Spanned::new(value.span(), DeValue::Table(params));
        let step = kind.parse(params.clone()).map_err(|e| match e {
            ParamsError::Toml(e) => with_step_and_id(
                self.toml_error(&e, params.get_ref().as_table()),
                kind.group_keys,
            ),
            ParamsError::Param(e) => self.param_error(&params, &e),
        })?;
        // Locate the step by its `step` key: the table itself starts at its `[[...]]` header.
        Ok(Located {
            value: PipelineStep {
                kind,
                id: id.value,
                step,
            },
            location: kind_name.location,
        })
    }

    /// An error at the value of the parameter `e.key` of a step's table (at the table when the
    /// key is not written: a default).
    fn param_error(&self, params: &Spanned<DeValue<'a>>, e: &ParamError) -> SpecError {
        let at = params
            .get_ref()
            .as_table()
            .and_then(|t| t.iter().find(|(k, _)| k.get_ref() == e.key))
            .map_or_else(|| params.span(), |(_, v)| v.span());
        self.error_at(&at, format!("key `{}`: {}", e.key, e.message))
    }
}

/// The parser reads `step` and `id` itself, and a kind's key group apart from its own keys, so
/// serde's list of a step's fields lacks them: put them back, so that a misspelt key is answered
/// with every key the table may have.
fn with_step_and_id(mut e: SpecError, group_keys: &[&[&str]]) -> SpecError {
    if e.message.starts_with("unknown field") {
        let read_apart: String = ["step", "id"]
            .iter()
            .chain(group_keys.iter().copied().flatten())
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let (some, none) = (
            format!("expected one of {read_apart}, `"),
            format!("expected one of {read_apart}"),
        );
        for (from, to) in [
            ("expected one of `", &some),
            ("expected `", &some),
            ("there are no fields", &none),
        ] {
            if e.message.contains(from) {
                e.message = e.message.replacen(from, to, 1);
                break;
            }
        }
    }
    e
}

impl PipelineSpec {
    /// Parses a pipeline file. `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<Self, SpecError> {
        let parser = Parser {
            origin,
            index: LineIndex::new(text),
        };
        let root = DeTable::parse(text).map_err(|e| parser.toml_error(&e, None))?;
        let root_span = root.span();
        let root = root.into_inner();

        let mut meta = None;
        let mut sources = Vec::new();
        let mut scoreboard = Vec::new();
        let mut steps: Vec<Located<PipelineStep>> = Vec::new();
        for stage in Stage::ALL {
            // Stages run in their fixed order whatever the order in the file.
            let Some((_, value)) = root.iter().find(|(k, _)| k.get_ref() == stage.name()) else {
                continue;
            };
            let DeValue::Array(items) = value.get_ref() else {
                return Err(parser.error_at(
                    &value.span(),
                    format!(
                        "`{}` must be an array of tables, written [[{}]]",
                        stage.name(),
                        stage.name()
                    ),
                ));
            };
            for item in items {
                steps.push(parser.step(stage, item)?);
            }
        }
        for (key, value) in root.iter() {
            match key.get_ref().as_ref() {
                "pipeline" => meta = Some(parser.deserialize::<Meta>(value)?),
                "sources" => {
                    for (name, source) in parser.table(value, "`sources`")?.iter() {
                        sources.push(parser.source(name, source)?);
                    }
                }
                "scoreboard" => {
                    let DeValue::Array(items) = value.get_ref() else {
                        return Err(parser.error_at(
                            &value.span(),
                            "`scoreboard` must be an array of tables, written [[scoreboard]]",
                        ));
                    };
                    for item in items {
                        scoreboard.push(parser.score(item)?);
                    }
                }
                k if Stage::ALL.iter().any(|s| s.name() == k) => {}
                other => {
                    return Err(parser.error_at(
                        &key.span(),
                        format!("unknown top-level key `{other}`; expected pipeline, sources, normalize, fit, validate, scoreboard"),
                    ));
                }
            }
        }
        let meta = meta.ok_or_else(|| {
            parser.error_at(
                &root_span,
                "missing [pipeline] table (with at least `name`)",
            )
        })?;
        if !is_valid_pipeline_name(meta.name.get_ref()) {
            return Err(parser.error_at(
                &meta.name.span(),
                format!(
                    "pipeline name `{}`: use ASCII letters, digits, `-` and `_` (it names the bundle directory)",
                    meta.name.get_ref()
                ),
            ));
        }
        if sources.is_empty() {
            return Err(parser.error_at(&root_span, "no sources: add a [sources.<name>] table"));
        }
        let spec = PipelineSpec {
            origin: origin.to_owned(),
            name: meta.name.into_inner(),
            description: meta.description,
            plugin_path: meta.plugin_path,
            device_files: meta.device_files,
            sources,
            steps,
            scoreboard,
            text: text.to_owned(),
        };
        spec.check_references()?;
        spec.check_scoreboard()?;
        Ok(spec)
    }

    /// The position of a span (e.g. of a [`crate::steps::TableRef`]) in the file.
    pub fn locate(&self, span: &Range<usize>) -> Location {
        LineIndex::new(&self.text).location(span.start)
    }

    /// An error at `location` of this file.
    pub fn error(&self, location: Location, message: impl Into<String>) -> SpecError {
        SpecError {
            origin: self.origin.clone(),
            location: Some(location),
            message: message.into(),
        }
    }

    /// Every scoreboard entry names a step of this pipeline.
    fn check_scoreboard(&self) -> Result<(), SpecError> {
        for entry in &self.scoreboard {
            let ids: Vec<&str> = (self.sources.iter().map(|s| s.name.as_str()))
                .chain(self.steps.iter().map(|s| s.value.id()))
                .collect();
            if !ids.contains(&entry.step.as_str()) {
                return Err(self.error(
                    entry.figure_location,
                    format!(
                        "scoreboard figure `{}.{}`: no source or step `{}`; there are: {}",
                        entry.step,
                        entry.figure,
                        entry.step,
                        ids.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks ids and the table references that can be checked before anything runs: every
    /// reference names a source or an earlier step, a step's table is one it produces, and a
    /// model reference names an earlier step that defines a model, whose settings fit.
    fn check_references(&self) -> Result<(), SpecError> {
        let mut namespaces: BTreeMap<&str, (Location, Option<Vec<&str>>)> = BTreeMap::new();
        for s in &self.sources {
            namespaces.insert(&s.name, (s.location, None));
        }
        let mut models: Vec<(&str, ModelDefinition)> = Vec::new();
        for located in &self.steps {
            let step = &located.value;
            let id = step.id();
            if !is_valid_name(id) {
                return Err(self.error(
                    located.location,
                    format!("step id `{id}`: use lowercase ASCII letters, digits and `_`"),
                ));
            }
            if let Some(model) = step.step.model_input() {
                let name = model.get_ref().as_str();
                let Some((_, definition)) = models.iter().find(|(m, _)| *m == name) else {
                    let known: Vec<&str> = models.iter().map(|(m, _)| *m).collect();
                    return Err(self.error(
                        self.locate(&model.span()),
                        format!(
                            "step `{id}`: `model = \"{name}\"` should name an earlier fit step; fit steps before it: {}",
                            if known.is_empty() {
                                "none".to_owned()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ));
                };
                step.step.check_model(definition).map_err(|e| {
                    self.error(
                        located.location,
                        format!("step `{id}`: key `{}`: {}", e.key, e.message),
                    )
                })?;
            }
            if let Some(definition) = step.step.model_definition() {
                models.push((id, definition));
            }
            for reference in step.step.inputs() {
                let at = self.locate(&reference.span());
                let Some((ns, table)) = reference.get_ref().split_once('.') else {
                    return Err(self.error(
                        at,
                        format!("step `{id}`: table reference `{}` should be `<source or step>.<table>`", reference.get_ref()),
                    ));
                };
                match namespaces.get(ns) {
                    None => {
                        return Err(self.error(
                            at,
                            format!(
                                "step `{id}`: `{ns}` in `{}` is neither a source nor an earlier step; known: {}",
                                reference.get_ref(),
                                namespaces.keys().copied().collect::<Vec<_>>().join(", ")
                            ),
                        ));
                    }
                    Some((_, Some(outputs))) if !outputs.contains(&table) => {
                        return Err(self.error(
                            at,
                            format!(
                                "step `{id}`: step `{ns}` produces no table `{table}`; it produces: {}",
                                outputs.join(", ")
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
            if let Some((first, _)) = namespaces.get(id) {
                return Err(self.error(
                    located.location,
                    format!("step id `{id}` is already used (line {})", first.line),
                ));
            }
            namespaces.insert(id, (located.location, Some(step.step.outputs())));
        }
        Ok(())
    }
}
