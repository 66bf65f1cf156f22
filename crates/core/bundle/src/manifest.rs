//! `manifest.json`: what a run did, enough to trust and reproduce it.

use serde::{Deserialize, Serialize};
use yosoku_tables::{Figure, ScoreRow};

/// The `format` field of every manifest.
pub const FORMAT: &str = "yosoku-bundle";
/// The version of the bundle format this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    pub format_version: u32,
    /// The version of yosoku that wrote the bundle.
    pub yosoku_version: String,
    pub pipeline: PipelineRecord,
    /// When the run finished, seconds since the Unix epoch.
    pub created_unix_secs: u64,
    /// Wall time of the whole run.
    pub total_wall_secs: f64,
    /// Every file a source read, with its SHA-256.
    pub inputs: Vec<InputFile>,
    /// The plugins that produced the sources.
    pub plugins: Vec<PluginRecord>,
    /// `collect` (the sources), then `normalize`, `fit`, `validate`.
    pub stages: Vec<StageRecord>,
    /// Every table of the bundle.
    pub tables: Vec<TableRecord>,
    /// The models the steps fitted, by name, with the tables a command reads to use one
    /// (`yosoku predict` finds its transfer model here). Absent when a bundle has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelRecord>,
    /// Large traces stored as a level-of-detail pyramid with chunked records (a viewer reads only
    /// what is on screen), not as tables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<TraceRecord>,
    /// The results the pipeline reproduces from a paper (its `[[scoreboard]]`), each with the
    /// paper's figure beside yosoku's: what `cargo xtask demo` and the viewer's home show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scoreboard: Vec<ScoreRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRecord {
    pub name: String,
    /// Directory of the pyramid (its `index.json`), relative to the bundle.
    pub dir: String,
    pub records: u64,
    pub lanes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineRecord {
    pub name: String,
    pub description: String,
    /// The pipeline file as given on the command line.
    pub spec_path: String,
    pub spec_sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The source that read the file.
    pub source: String,
    /// The config key that named it.
    pub key: String,
    /// The path as the pipeline file wrote it: relative to the file's directory unless written
    /// absolute (it is not made relative). A file a `*` pattern matched is shown by its own name
    /// in the pattern's directory; a file under a directory input as that directory followed by
    /// the file's path inside it.
    pub path: String,
    pub sha256: String,
    pub size_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginRecord {
    pub name: String,
    pub version: String,
    pub abi_version: u32,
    /// File name of the plugin library.
    pub library: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageRecord {
    /// `collect`, `normalize`, `fit` or `validate`.
    pub stage: String,
    pub wall_secs: f64,
    pub steps: Vec<StepRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRecord {
    /// The source name or step id (the namespace of its tables).
    pub id: String,
    /// The step kind, or `<plugin>/<collector>` for a source.
    pub kind: String,
    pub wall_secs: f64,
    /// The tables it read (`<namespace>.<table>`; none for a source): what a viewer follows
    /// from a figure to the data behind it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    pub tables: Vec<String>,
    pub figures: Vec<Figure>,
    /// What a source's collector noted about its inputs that is no error (lines of a program's
    /// output skipped around a profiler's table, oddities of a trace); none for a step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableRecord {
    /// `<namespace>.<table>`.
    pub name: String,
    /// Path of the Arrow IPC file, relative to the bundle.
    pub file: String,
    /// The canonical table it is (docs/tables.md), if any.
    pub kind: Option<String>,
    pub rows: u64,
    /// Its columns, as the file's schema has them: what a reader that has not fetched the file
    /// (the web viewer) knows of it. Absent in bundles written before December 2026.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<ColumnRecord>,
}

/// One column of a table: its name and its Arrow type as arrow-rs writes it (`Float64`, `Utf8`,
/// `Dictionary(Int32, Utf8)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnRecord {
    pub name: String,
    #[serde(rename = "type")]
    pub data_type: String,
    pub nullable: bool,
}

impl ColumnRecord {
    /// The column of `field`.
    pub fn of(field: &arrow_schema::Field) -> Self {
        Self {
            name: field.name().clone(),
            data_type: field.data_type().to_string(),
            nullable: field.is_nullable(),
        }
    }
}

impl TableRecord {
    /// The table's schema as the manifest gives it: none when it gives no columns (an older
    /// bundle) or a type this arrow-rs cannot read back.
    pub fn schema(&self) -> Option<arrow_schema::Schema> {
        if self.columns.is_empty() {
            return None;
        }
        let fields = self
            .columns
            .iter()
            .map(|c| {
                let data_type = c.data_type.parse::<arrow_schema::DataType>().ok()?;
                Some(arrow_schema::Field::new(&c.name, data_type, c.nullable))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(arrow_schema::Schema::new(fields))
    }
}

/// A model a step of the fit stage fitted, as every family saves it: what it is, the table it
/// was fitted on (with that file's hash, so that a model whose table changed is refused), the
/// options it was fitted with, its fitted parameters (a file of its own), the tables that
/// describe it and the held-out scores of the validation steps that named it. A command uses the
/// model later from these fields alone, without knowing the pipeline that fitted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRecord {
    /// The model's name: the id of the step that fitted it.
    pub name: String,
    /// What the model is (`gpu_transfer`, `counter_regression`, `scaling`): what a command looks
    /// models up by.
    pub kind: String,
    /// The tables it is made of (`<namespace>.<table>`): its training table first, then those
    /// that describe it (coefficients).
    pub tables: Vec<String>,
    /// The table it was fitted on and the SHA-256 of that table's file. Absent in bundles
    /// written before December 2026.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<HashedTable>,
    /// The options it was fitted with, by name, as the step was given them (defaults filled in).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Its fitted parameters as its family saves them (coefficients, calibrations), a JSON file
    /// of the bundle (`models/<name>.json`) with its SHA-256; absent for a family whose tables
    /// are its saved form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted: Option<HashedFile>,
    /// The held-out scores of the validation steps that named it (`<namespace>.<table>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<String>,
}

/// A table of the bundle and the SHA-256 of its file as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HashedTable {
    /// `<namespace>.<table>`.
    pub table: String,
    pub sha256: String,
}

/// A file of the bundle (relative to it) and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HashedFile {
    pub file: String,
    pub sha256: String,
}

impl Manifest {
    /// The models of `kind`, in the order the steps fitted them.
    pub fn models_of(&self, kind: &str) -> impl Iterator<Item = &ModelRecord> {
        self.models.iter().filter(move |m| m.kind == kind)
    }

    /// The model called `name` (the id of the step that fitted it).
    pub fn model(&self, name: &str) -> Option<&ModelRecord> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The record of the table `name`.
    pub fn table(&self, name: &str) -> Option<&TableRecord> {
        self.tables.iter().find(|t| t.name == name)
    }
}

/// Why a manifest cannot be read. A caller can tell a newer bundle ([`ManifestError::Version`])
/// from a broken one.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("key `format`: `{0}`, expected `{FORMAT}`")]
    Format(String),
    #[error(
        "key `format_version`: version {0} is not supported (this yosoku reads version {FORMAT_VERSION})"
    )]
    Version(u32),
}

impl Manifest {
    pub fn to_json(&self) -> String {
        // Serialising plain data to a string cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Parses a manifest and checks its format and version.
    pub fn from_json(text: &str) -> Result<Self, ManifestError> {
        let manifest: Manifest = serde_json::from_str(text)?;
        if manifest.format != FORMAT {
            return Err(ManifestError::Format(manifest.format));
        }
        if manifest.format_version != FORMAT_VERSION {
            return Err(ManifestError::Version(manifest.format_version));
        }
        Ok(manifest)
    }

    /// All figures of all stages, with the id of the step that reported each.
    pub fn figures(&self) -> impl Iterator<Item = (&str, &Figure)> {
        self.stages
            .iter()
            .flat_map(|s| s.steps.iter())
            .flat_map(|step| step.figures.iter().map(move |f| (step.id.as_str(), f)))
    }
}
