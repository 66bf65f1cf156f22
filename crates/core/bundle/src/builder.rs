//! [`ManifestBuilder`]: the one place a bundle's manifest is put together. Every bundle yosoku
//! writes (a pipeline run, a forecast of `yosoku predict`, an imported trace) is described
//! through it, so that its tables' files are named, its models recorded and its inputs hashed the
//! same way; [`crate::fs::write`] stamps the time and writes it.

use arrow_array::RecordBatch;
use sha2::{Digest, Sha256};
use yosoku_tables::ScoreRow;

use crate::manifest::{
    ColumnRecord, FORMAT, FORMAT_VERSION, HashedFile, InputFile, Manifest, ModelRecord,
    PipelineRecord, PluginRecord, StageRecord, StepRecord, TableRecord, TraceRecord,
};
use crate::{MODELS_DIR, TABLES_DIR, table_file_name};

/// The SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of a digest.
pub(crate) fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    digest.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// A manifest being put together: what made the bundle, what it read, its stages and steps,
/// tables, models and traces. [`ManifestBuilder::build`] gives the manifest; the time it was
/// made is set by whoever writes it ([`crate::fs::write`]).
#[derive(Debug, Clone)]
pub struct ManifestBuilder {
    manifest: Manifest,
    /// Files of the bundle beside its tables (the fitted models' parameters): path relative to
    /// the bundle, and bytes.
    files: Vec<(String, Vec<u8>)>,
}

impl ManifestBuilder {
    /// A bundle called `name` (a pipeline's name, `forecast`, `trace-<name>`), with a line of
    /// what it holds.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            manifest: Manifest {
                format: FORMAT.to_owned(),
                format_version: FORMAT_VERSION,
                yosoku_version: env!("CARGO_PKG_VERSION").to_owned(),
                pipeline: PipelineRecord {
                    name: name.into(),
                    description: description.into(),
                    spec_path: String::new(),
                    spec_sha256: String::new(),
                },
                created_unix_secs: 0,
                total_wall_secs: 0.0,
                inputs: Vec::new(),
                plugins: Vec::new(),
                stages: Vec::new(),
                tables: Vec::new(),
                models: Vec::new(),
                traces: Vec::new(),
                scoreboard: Vec::new(),
            },
            files: Vec::new(),
        }
    }

    /// The file that said what to do (a pipeline file), as given, with its text's hash.
    pub fn spec_text(&mut self, path: impl Into<String>, text: &[u8]) -> &mut Self {
        self.spec_hashed(path, sha256_hex(text))
    }

    /// The file that said what to do, with a hash already computed (a trace of gigabytes is
    /// hashed as it is read).
    pub fn spec_hashed(&mut self, path: impl Into<String>, sha256: String) -> &mut Self {
        self.manifest.pipeline.spec_path = path.into();
        self.manifest.pipeline.spec_sha256 = sha256;
        self
    }

    /// How long the whole run took.
    pub fn total_wall_secs(&mut self, secs: f64) -> &mut Self {
        self.manifest.total_wall_secs = secs;
        self
    }

    /// A file the bundle was made from ([`crate::fs::hashed_input`] hashes one).
    pub fn input(&mut self, input: InputFile) -> &mut Self {
        self.manifest.inputs.push(input);
        self
    }

    /// A plugin a source was collected by; a plugin already recorded is recorded once.
    pub fn plugin(&mut self, plugin: PluginRecord) -> &mut Self {
        if !self.manifest.plugins.iter().any(|p| p.name == plugin.name) {
            self.manifest.plugins.push(plugin);
        }
        self
    }

    /// A stage with its steps, after the stages recorded so far.
    pub fn stage(&mut self, stage: StageRecord) -> &mut Self {
        self.manifest.stages.push(stage);
        self
    }

    /// A stage of one step that took no measurable time (a command's single step).
    pub fn single_step(&mut self, stage: &str, step: StepRecord) -> &mut Self {
        self.stage(StageRecord {
            stage: stage.to_owned(),
            wall_secs: step.wall_secs,
            steps: vec![step],
        })
    }

    /// Every table the bundle holds, in the order given: each one's file under `tables/`, its
    /// canonical kind (by the part of its name after the namespace) and its rows.
    pub(crate) fn tables(&mut self, tables: &[(String, RecordBatch)]) -> &mut Self {
        for (name, batch) in tables {
            self.table(name, batch.num_rows() as u64, batch.schema_ref());
        }
        self
    }

    /// One table of the bundle, `<namespace>.<table>`, of `rows` rows and columns `schema`.
    pub(crate) fn table(
        &mut self,
        name: &str,
        rows: u64,
        schema: &arrow_schema::Schema,
    ) -> &mut Self {
        self.manifest.tables.push(TableRecord {
            name: name.to_owned(),
            file: format!("{TABLES_DIR}/{}", table_file_name(name)),
            kind: name
                .split_once('.')
                .and_then(|(_, t)| yosoku_tables::table(t))
                .map(|t| t.name.to_owned()),
            rows,
            columns: schema
                .fields()
                .iter()
                .map(|f| ColumnRecord::of(f))
                .collect(),
        });
        self
    }

    /// A model a fit step fitted, for commands that use it later (`yosoku predict`), with its
    /// fitted parameters as its family saves them (JSON), written as `models/<name>.json` and
    /// hashed here. Its training table's hash is filled in when [`crate::fs::write`] writes the
    /// table.
    pub fn model(&mut self, mut model: ModelRecord, fitted_json: Option<Vec<u8>>) -> &mut Self {
        if let Some(bytes) = fitted_json {
            let file = format!("{MODELS_DIR}/{}.json", model.name);
            model.fitted = Some(HashedFile {
                file: file.clone(),
                sha256: sha256_hex(&bytes),
            });
            self.files.push((file, bytes));
        }
        self.manifest.models.push(model);
        self
    }

    /// Records `table` as held-out scores of the model called `model` (a validation step that
    /// named it). False where no model of that name was recorded.
    pub fn model_scores(&mut self, model: &str, table: &str) -> bool {
        match self.manifest.models.iter_mut().find(|m| m.name == model) {
            Some(m) => {
                m.scores.push(table.to_owned());
                true
            }
            None => false,
        }
    }

    /// A trace stored as a level-of-detail pyramid.
    pub fn trace(&mut self, trace: TraceRecord) -> &mut Self {
        self.manifest.traces.push(trace);
        self
    }

    /// The results reproduced from papers.
    pub fn scoreboard(&mut self, rows: Vec<ScoreRow>) -> &mut Self {
        self.manifest.scoreboard = rows;
        self
    }

    /// The figures of the steps recorded so far, with the id of the step that reported each.
    pub fn figures(&self) -> impl Iterator<Item = (&str, &yosoku_tables::Figure)> {
        self.manifest.figures()
    }

    /// The manifest, made at `created_unix_secs`.
    pub fn build(self, created_unix_secs: u64) -> Manifest {
        self.build_with_files(created_unix_secs).0
    }

    /// The manifest, made at `created_unix_secs`, and the files to write beside its tables.
    pub fn build_with_files(self, created_unix_secs: u64) -> (Manifest, Vec<(String, Vec<u8>)>) {
        (
            Manifest {
                created_unix_secs,
                ..self.manifest
            },
            self.files,
        )
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::Schema;

    use super::*;

    #[test]
    fn tables_are_named_by_file_and_kind_and_plugins_recorded_once() {
        let mut b = ManifestBuilder::new("p", "d");
        b.spec_text("p.toml", b"abc")
            .table("src.runs", 3, &Schema::empty())
            .table("fit.anything", 1, &Schema::empty());
        let plugin = PluginRecord {
            name: "x".into(),
            version: "1".into(),
            abi_version: 1,
            library: "libx.so".into(),
        };
        b.plugin(plugin.clone()).plugin(plugin);
        let m = b.build(7);
        assert_eq!(m.created_unix_secs, 7);
        assert_eq!(m.plugins.len(), 1);
        assert_eq!(
            m.pipeline.spec_sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(m.tables[0].file, "tables/src.runs.arrow");
        assert_eq!(m.tables[0].kind.as_deref(), Some("runs"));
        assert_eq!(m.tables[1].kind, None);
        // A manifest without models reads back, and one with them round-trips.
        assert_eq!(Manifest::from_json(&m.to_json()).unwrap(), m);
        assert!(!m.to_json().contains("\"models\""));
    }

    /// A table's columns in the manifest read back as the schema they were written from, for
    /// the types bundles hold (dictionaries, lists, timestamps included).
    #[test]
    fn the_manifest_gives_each_table_s_schema() {
        use arrow_schema::{DataType, Field, TimeUnit};
        let dictionary = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let schema = Schema::new(vec![
            Field::new("program", dictionary, false),
            Field::new("measured_secs", DataType::Float64, true),
            Field::new("rank", DataType::Int64, false),
            Field::new("ok", DataType::Boolean, true),
            Field::new("values", DataType::new_list(DataType::Float64, true), true),
            Field::new("at", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new("label", DataType::LargeUtf8, true),
        ]);
        let mut b = ManifestBuilder::new("p", "d");
        b.table("src.runs", 0, &schema);
        let m = Manifest::from_json(&b.build(1).to_json()).unwrap();
        assert_eq!(m.tables[0].schema().unwrap(), schema);
        // Written before columns were recorded: no schema, not a wrong one.
        let mut old = m.tables[0].clone();
        old.columns.clear();
        assert_eq!(old.schema(), None);
    }
}
