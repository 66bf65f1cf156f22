//! Bundles as the viewer holds them: the manifest and every table, decoded from the bytes of a
//! bundle directory, of files dropped on the window, or of files fetched from a server.

use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use yosoku_bundle::{Manifest, ipc};

/// One bundle, decoded.
#[derive(Debug, Clone)]
pub struct LoadedBundle {
    /// Where it came from: a directory, a URL, or "dropped files".
    pub origin: String,
    /// The name it is shown under when another open bundle has its own (`x (2)`).
    pub alias: Option<String>,
    /// The manifest, when the bundle had one (files dropped alone have none).
    pub manifest: Option<Manifest>,
    /// `<namespace>.<table>`, its canonical kind (from the manifest), the batch.
    pub tables: Vec<LoadedTable>,
    /// Large traces, read piece by piece as views need them.
    pub traces: Vec<crate::trace_store::LoadedTrace>,
}

#[derive(Debug, Clone)]
pub struct LoadedTable {
    pub name: String,
    pub kind: Option<String>,
    /// The rows; while [`LoadedTable::pending`], none: only the columns the manifest names,
    /// which is all a view needs to say whether it draws the table.
    pub batch: RecordBatch,
    /// The file (relative to the bundle) the rows are still to be read from; none once read.
    pub pending: Option<String>,
}

impl LoadedTable {
    /// A table whose rows are read.
    pub fn loaded(name: impl Into<String>, kind: Option<String>, batch: RecordBatch) -> Self {
        Self {
            name: name.into(),
            kind,
            batch,
            pending: None,
        }
    }
}

/// The table in `bytes`, an Arrow IPC file read from `file` of the bundle at `origin`.
pub fn decode_table(origin: &str, file: &str, bytes: &[u8]) -> Result<RecordBatch, String> {
    ipc::decode(bytes).map_err(|e| format!("{origin}/{file}: {e}"))
}

/// Why a dropped file that is not an Arrow IPC file (no `ARROW1` at its start) cannot be
/// opened, and what to do with it.
fn not_a_table(name: &str, bytes: &[u8]) -> String {
    let what = if bytes.starts_with(b"PAR1") {
        "a Parquet file"
    } else if bytes.starts_with(&[0x1f, 0x8b]) {
        "a gzip-compressed file"
    } else if bytes.is_empty() {
        "an empty file"
    } else if std::str::from_utf8(&bytes[..bytes.len().min(4096)]).is_ok() {
        "a text file (CSV, TSV, JSON, a profiler's output)"
    } else {
        "not an Arrow IPC file (it does not begin with ARROW1)"
    };
    format!(
        "{name}: {what}, not a table of a result bundle. The viewer opens bundles: a bundle's \
         .arrow files, or the bundle zipped. Import your file first with `yosoku run` (the table \
         plugin reads CSV, TSV, Parquet and Arrow, gzip-compressed too: docs/your-own-data.md; \
         `yosoku plugins` lists the profilers' importers), then open the bundle it writes"
    )
}

impl LoadedBundle {
    /// The bundle's name: its pipeline's, else the origin's last path segment.
    pub fn name(&self) -> String {
        if let Some(alias) = &self.alias {
            return alias.clone();
        }
        match &self.manifest {
            Some(m) => m.pipeline.name.clone(),
            None => self
                .origin
                .rsplit(['/', '\\'])
                .find(|s| !s.is_empty())
                .unwrap_or(&self.origin)
                .to_owned(),
        }
    }

    /// Decodes a bundle from its manifest text and a function that returns the bytes of a file
    /// named relative to the bundle (`tables/x.y.arrow`).
    pub fn from_manifest(
        origin: &str,
        manifest_json: &str,
        read: impl FnMut(&str) -> Result<Vec<u8>, String>,
    ) -> Result<Self, String> {
        Self::decode(origin, manifest_json, read, false)
    }

    /// A bundle of which only the manifest is read (and the index of each large trace): each
    /// table's columns come from the manifest and its rows are read when a view needs them
    /// ([`LoadedBundle::pending_files`], [`LoadedBundle::fill`]). A table the manifest gives no
    /// columns for (a bundle written before they were recorded) is read as well, so that every
    /// view knows what it draws.
    pub fn from_manifest_lazily(
        origin: &str,
        manifest_json: &str,
        read: impl FnMut(&str) -> Result<Vec<u8>, String>,
    ) -> Result<Self, String> {
        Self::decode(origin, manifest_json, read, true)
    }

    /// The files [`LoadedBundle::from_manifest_lazily`] reads at once: the tables the manifest
    /// gives no columns for and the index of each large trace.
    pub fn files_read_first(manifest: &Manifest) -> Vec<String> {
        let tables = manifest.tables.iter().filter(|t| t.schema().is_none());
        tables
            .map(|t| t.file.clone())
            .chain(
                manifest
                    .traces
                    .iter()
                    .map(|t| format!("{}/index.json", t.dir)),
            )
            .collect()
    }

    fn decode(
        origin: &str,
        manifest_json: &str,
        mut read: impl FnMut(&str) -> Result<Vec<u8>, String>,
        lazily: bool,
    ) -> Result<Self, String> {
        let manifest = Manifest::from_json(manifest_json)
            .map_err(|e| format!("{origin}/manifest.json: {e}"))?;
        let mut tables = Vec::with_capacity(manifest.tables.len());
        for t in &manifest.tables {
            let table = match t.schema().filter(|_| lazily) {
                Some(schema) => LoadedTable {
                    name: t.name.clone(),
                    kind: t.kind.clone(),
                    batch: RecordBatch::new_empty(std::sync::Arc::new(schema)),
                    pending: Some(t.file.clone()),
                },
                None => {
                    let bytes = read(&t.file)?;
                    let batch =
                        ipc::decode(&bytes).map_err(|e| format!("{origin}/{}: {e}", t.file))?;
                    LoadedTable::loaded(&t.name, t.kind.clone(), batch)
                }
            };
            tables.push(table);
        }
        let traces = Self::traces_of(origin, &manifest, &mut read)?;
        Ok(Self {
            origin: origin.to_owned(),
            alias: None,
            manifest: Some(manifest),
            tables,
            traces,
        })
    }

    /// The files of the tables whose rows are not read yet.
    pub fn pending_files(&self) -> Vec<String> {
        self.tables
            .iter()
            .filter_map(|t| t.pending.clone())
            .collect()
    }

    /// Whether every table's rows are read.
    pub fn is_loaded(&self) -> bool {
        self.tables.iter().all(|t| t.pending.is_none())
    }

    /// Gives the table read from `file` its rows, decoded by [`decode_table`]: refused, naming
    /// the file, when its columns are not the ones the manifest gives.
    pub fn fill(&mut self, file: &str, batch: RecordBatch) -> Result<(), String> {
        let origin = &self.origin;
        let Some(table) = self
            .tables
            .iter_mut()
            .find(|t| t.pending.as_deref() == Some(file))
        else {
            return Ok(());
        };
        let columns = |schema: &arrow_schema::Schema| -> Vec<(String, DataType)> {
            schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect()
        };
        let (given, read) = (
            columns(table.batch.schema_ref()),
            columns(batch.schema_ref()),
        );
        if given != read {
            let names = |c: &[(String, DataType)]| {
                c.iter()
                    .map(|(n, t)| format!("{n} ({t})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "{origin}/{file}: its columns are {}, the manifest gives {}",
                names(&read),
                names(&given)
            ));
        }
        table.batch = batch;
        table.pending = None;
        Ok(())
    }

    /// Stops waiting for the rows of `file`, which could not be read: the table stays without
    /// rows (the error is the app's to say).
    pub fn give_up(&mut self, file: &str) {
        for t in &mut self.tables {
            if t.pending.as_deref() == Some(file) {
                t.pending = None;
            }
        }
    }

    /// Drops the rows of every table that can be read again (those of a manifest read lazily),
    /// keeping their columns; returns the bytes of memory freed.
    pub fn unload(&mut self) -> usize {
        let Some(manifest) = &self.manifest else {
            return 0;
        };
        let mut freed = 0;
        for table in &mut self.tables {
            if table.pending.is_some() {
                continue;
            }
            let Some(record) = manifest.tables.iter().find(|r| r.name == table.name) else {
                continue;
            };
            if record.schema().is_none() {
                continue;
            }
            freed += table.batch.get_array_memory_size();
            table.batch = RecordBatch::new_empty(table.batch.schema());
            table.pending = Some(record.file.clone());
        }
        freed
    }

    /// The memory the tables' rows take.
    pub fn memory_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| t.batch.get_array_memory_size())
            .sum()
    }

    /// The index of each large trace the manifest lists; its tiles are read when a view needs
    /// them.
    fn traces_of(
        origin: &str,
        manifest: &Manifest,
        read: &mut impl FnMut(&str) -> Result<Vec<u8>, String>,
    ) -> Result<Vec<crate::trace_store::LoadedTrace>, String> {
        let mut traces = Vec::with_capacity(manifest.traces.len());
        for t in &manifest.traces {
            let file = format!("{}/index.json", t.dir);
            let index = yosoku_traces::pyramid::PyramidIndex::from_json(&read(&file)?)
                .map_err(|e| format!("{origin}/{file}: {e}"))?;
            traces.push(crate::trace_store::LoadedTrace::new(
                &t.name,
                index,
                &format!("{origin}/{}", t.dir),
            ));
        }
        Ok(traces)
    }

    /// Decodes loose `.arrow` files (dropped without their manifest). The table name is the
    /// file name without `.arrow`; the kind is guessed from its last dot-separated part.
    ///
    /// A dropped `.zip` is read as a zipped bundle instead (see [`LoadedBundle::from_zip`]); it
    /// must then be the only file dropped.
    pub fn from_files(origin: &str, files: &[(String, Vec<u8>)]) -> Result<Self, String> {
        if let [(name, bytes)] = files
            && name.to_ascii_lowercase().ends_with(".zip")
        {
            return Self::from_zip(name, bytes);
        }
        let mut tables = Vec::new();
        for (name, bytes) in files {
            if name.to_ascii_lowercase().ends_with(".zip") {
                return Err(format!(
                    "{name}: drop a zipped bundle on its own, not with other files"
                ));
            }
            if !bytes.starts_with(b"ARROW1") {
                return Err(not_a_table(name, bytes));
            }
            let batch = ipc::decode(bytes).map_err(|e| format!("{name}: {e}"))?;
            let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
            let table = base.strip_suffix(".arrow").unwrap_or(base).to_owned();
            let kind = table.rsplit('.').next().map(str::to_owned);
            tables.push(LoadedTable::loaded(table, kind, batch));
        }
        Ok(Self {
            origin: origin.to_owned(),
            alias: None,
            manifest: None,
            tables,
            traces: Vec::new(),
        })
    }

    /// Reads a bundle directory (through `yosoku_bundle::fs`, as the CLI does).
    /// Decodes a zipped bundle: the archive holds `manifest.json` and the files it names,
    /// at its root or under one directory (as `zip -r x.zip results/x` writes). An archive
    /// without a manifest is read as loose `.arrow` files.
    pub fn from_zip(name: &str, bytes: &[u8]) -> Result<Self, String> {
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| format!("{name}: not a zip archive: {e}"))?;
        let mut files: std::collections::HashMap<String, Vec<u8>> =
            std::collections::HashMap::new();
        for i in 0..archive.len() {
            let mut entry = archive
                .by_index(i)
                .map_err(|e| format!("{name}: entry {i}: {e}"))?;
            if entry.is_dir() {
                continue;
            }
            let path = entry
                .name()
                .map_err(|e| format!("{name}: entry {i}: {e}"))?
                .replace('\\', "/");
            let mut data = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
            std::io::Read::read_to_end(&mut entry, &mut data)
                .map_err(|e| format!("{name}: {path}: {e}"))?;
            files.insert(path, data);
        }
        let origin = name.strip_suffix(".zip").unwrap_or(name);
        // The shallowest manifest is the bundle's.
        let manifest = files
            .keys()
            .filter(|p| *p == "manifest.json" || p.ends_with("/manifest.json"))
            .min_by_key(|p| (p.matches('/').count(), p.len()))
            .cloned();
        let Some(manifest) = manifest else {
            let mut loose: Vec<(String, Vec<u8>)> = files
                .into_iter()
                .filter(|(p, _)| p.ends_with(".arrow"))
                .map(|(p, b)| (format!("{name}/{p}"), b))
                .collect();
            if loose.is_empty() {
                return Err(format!(
                    "{name}: expected a zipped bundle (manifest.json and its tables) or .arrow \
                     files, found neither"
                ));
            }
            loose.sort_by(|a, b| a.0.cmp(&b.0));
            return Self::from_files(origin, &loose);
        };
        let prefix = &manifest[..manifest.len() - "manifest.json".len()];
        let text = String::from_utf8(files.remove(&manifest).unwrap_or_default())
            .map_err(|_| format!("{name}: {manifest}: not UTF-8"))?;
        let shown = format!("{name}/{}", prefix.trim_end_matches('/'));
        Self::from_manifest(shown.trim_end_matches('/'), &text, |f| {
            files.remove(&format!("{prefix}{f}")).ok_or_else(|| {
                format!("{name}: {prefix}{f}: named by the manifest, not in the archive")
            })
        })
    }

    /// Reads a bundle directory or a zipped bundle (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_path(path: &std::path::Path) -> Result<Self, String> {
        if path.is_file() {
            let bytes = crate::platform::read_file(path)?;
            return Self::from_files(
                &path.display().to_string(),
                &[(path.display().to_string(), bytes)],
            );
        }
        Self::from_dir(path)
    }

    /// Reads a bundle directory (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_dir(dir: &std::path::Path) -> Result<Self, String> {
        let bundle = crate::platform::read_bundle_dir(dir)?;
        let tables = bundle
            .tables
            .into_iter()
            .map(|(name, batch)| {
                let kind = bundle
                    .manifest
                    .tables
                    .iter()
                    .find(|t| t.name == name)
                    .and_then(|t| t.kind.clone());
                LoadedTable::loaded(name, kind, batch)
            })
            .collect();
        let mut traces = Vec::new();
        for t in &bundle.manifest.traces {
            let path = dir.join(&t.dir).join("index.json");
            let bytes = crate::platform::read_file(&path)?;
            let index = yosoku_traces::pyramid::PyramidIndex::from_json(&bytes)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            traces.push(crate::trace_store::LoadedTrace::new(
                &t.name,
                index,
                &dir.join(&t.dir).display().to_string(),
            ));
        }
        Ok(Self {
            origin: dir.display().to_string(),
            alias: None,
            manifest: Some(bundle.manifest),
            tables,
            traces,
        })
    }

    pub fn table(&self, name: &str) -> Option<&LoadedTable> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The steps the pipeline's headline results come from, in order: its scoreboard's, then
    /// those with a headline figure (none without a manifest).
    pub fn headline_steps(&self) -> Vec<String> {
        let Some(m) = &self.manifest else {
            return Vec::new();
        };
        let mut steps: Vec<String> = Vec::new();
        let scored = m.scoreboard.iter().map(|r| r.step.as_str());
        let headline = m.figures().filter(|(_, f)| f.headline).map(|(s, _)| s);
        for step in scored.chain(headline) {
            if !steps.iter().any(|s| s == step) {
                steps.push(step.to_owned());
            }
        }
        steps
    }

    /// The tables step `step` read, as its manifest record lists them.
    pub fn step_inputs(&self, step: &str) -> Vec<String> {
        self.manifest
            .iter()
            .flat_map(|m| m.stages.iter().flat_map(|s| s.steps.iter()))
            .filter(|s| s.id == step)
            .flat_map(|s| s.inputs.iter().cloned())
            .collect()
    }

    /// The tables step `step` wrote (`<step>.<table>`).
    pub fn step_tables<'a>(&'a self, step: &'a str) -> impl Iterator<Item = &'a LoadedTable> + 'a {
        self.tables.iter().filter(move |t| {
            t.name
                .strip_prefix(step)
                .is_some_and(|rest| rest.starts_with('.'))
        })
    }

    /// The tables that have every column in `columns`.
    pub fn tables_with<'a>(
        &'a self,
        columns: &'a [&'a str],
    ) -> impl Iterator<Item = &'a LoadedTable> + 'a {
        self.tables
            .iter()
            .filter(move |t| has_columns(&t.batch, columns))
    }
}

/// A bundle of `records` synthetic Gantt records (`gantt::synthetic`, 64 lanes) for measuring
/// the Gantt's frame time where no large trace is at hand (the web page's `#synthetic=<n>`).
/// Named `synthetic-<n>-records`: not a measurement of anything.
pub fn synthetic_gantt(records: usize) -> LoadedBundle {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int32Array, StringArray};
    use arrow_schema::{Field, Schema};
    let (lane, start, end, kind) = crate::gantt::synthetic(records, 64);
    let lane: Int32Array = lane.iter().map(|l| l.parse::<i32>().ok()).collect();
    let kind = StringArray::from_iter_values(kind);
    let schema = Arc::new(Schema::new(vec![
        Field::new("rank", DataType::Int32, true),
        Field::new("kind", DataType::Utf8, false),
        Field::new("start_secs", DataType::Float64, false),
        Field::new("end_secs", DataType::Float64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(lane),
            Arc::new(kind),
            Arc::new(Float64Array::from(start)),
            Arc::new(Float64Array::from(end)),
        ],
    )
    .expect("columns of equal length");
    LoadedBundle {
        origin: format!("synthetic-{records}-records"),
        alias: None,
        manifest: None,
        tables: vec![LoadedTable::loaded("synthetic.gantt_records", None, batch)],
        traces: Vec::new(),
    }
}

pub fn has_columns(batch: &RecordBatch, columns: &[&str]) -> bool {
    columns.iter().all(|c| batch.schema().index_of(c).is_ok())
}

/// A column's values as numbers (integers and floats), `None` for nulls and other types.
pub fn numbers(batch: &RecordBatch, column: &str) -> Option<Vec<Option<f64>>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Float32Type, Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type,
    };
    let array = batch.column_by_name(column)?;
    let n = array.len();
    let get = |f: &dyn Fn(usize) -> f64| -> Vec<Option<f64>> {
        (0..n).map(|i| (!array.is_null(i)).then(|| f(i))).collect()
    };
    Some(match array.data_type() {
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            get(&|i| a.value(i))
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            get(&|i| f64::from(a.value(i)))
        }
        DataType::Int64 => {
            let a = array.as_primitive::<Int64Type>();
            get(&|i| a.value(i) as f64)
        }
        DataType::Int32 => {
            let a = array.as_primitive::<Int32Type>();
            get(&|i| f64::from(a.value(i)))
        }
        DataType::UInt64 => {
            let a = array.as_primitive::<UInt64Type>();
            get(&|i| a.value(i) as f64)
        }
        DataType::UInt32 => {
            let a = array.as_primitive::<UInt32Type>();
            get(&|i| f64::from(a.value(i)))
        }
        _ => return None,
    })
}

/// A column's values as text, whatever its type (empty for null).
pub fn texts(batch: &RecordBatch, column: &str) -> Option<Vec<String>> {
    let index = batch.schema().index_of(column).ok()?;
    let array = batch.column(index);
    Some(
        (0..array.len())
            .map(|i| cell_text(array.as_ref(), i))
            .collect(),
    )
}

/// A column's text as codes into its distinct values (in the order rows first show them), read
/// without a string per row: a dictionary column through its keys, a plain one interned. For a
/// view that groups a million rows by a text column ([`texts`] makes a string of every cell).
pub fn text_codes(batch: &RecordBatch, column: &str) -> Option<(Vec<String>, Vec<u32>)> {
    use arrow_array::cast::AsArray;
    let array = batch.column_by_name(column)?;
    let n = array.len();
    let mut index: std::collections::HashMap<String, u32> = Default::default();
    let mut values: Vec<String> = Vec::new();
    let mut code = |text: &str| -> u32 {
        if let Some(&c) = index.get(text) {
            return c;
        }
        let c = values.len() as u32;
        values.push(text.to_owned());
        index.insert(text.to_owned(), c);
        c
    };
    let codes: Vec<u32> = if let Some(dict) = array.as_any_dictionary_opt() {
        let dictionary = dict.values();
        let of_value: Vec<u32> = (0..dictionary.len())
            .map(|v| code(&cell_text(dictionary.as_ref(), v)))
            .collect();
        let keys = dict.normalized_keys();
        (0..n)
            .map(|i| {
                if array.is_null(i) {
                    code("")
                } else {
                    of_value[keys[i]]
                }
            })
            .collect()
    } else {
        match array.data_type() {
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                (0..n)
                    .map(|i| code(if a.is_null(i) { "" } else { a.value(i) }))
                    .collect()
            }
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                (0..n)
                    .map(|i| code(if a.is_null(i) { "" } else { a.value(i) }))
                    .collect()
            }
            _ => (0..n)
                .map(|i| code(&cell_text(array.as_ref(), i)))
                .collect(),
        }
    };
    // Renumbered in the order the rows first show the values (a dictionary's own order may
    // differ, and a value it holds no row uses is left out).
    let mut renumber: Vec<Option<u32>> = vec![None; values.len()];
    let mut shown: Vec<String> = Vec::new();
    let codes = codes
        .into_iter()
        .map(|c| {
            *renumber[c as usize].get_or_insert_with(|| {
                shown.push(values[c as usize].clone());
                (shown.len() - 1) as u32
            })
        })
        .collect();
    Some((shown, codes))
}

pub fn is_numeric(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Float64
            | DataType::Float32
            | DataType::Int64
            | DataType::Int32
            | DataType::UInt64
            | DataType::UInt32
    )
}

/// One cell as text: numbers as `format::number` writes them, null as empty.
pub fn cell_text(array: &dyn Array, row: usize) -> String {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Float32Type, Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type,
    };
    if array.is_null(row) {
        return String::new();
    }
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row).to_owned(),
        DataType::Dictionary(_, _) => match yosoku_tables::text::dictionary_row(array, row) {
            Some((values, index)) => cell_text(values.as_ref(), index),
            None => format!("<{}>", array.data_type()),
        },
        DataType::LargeUtf8 => array.as_string::<i64>().value(row).to_owned(),
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        DataType::Float64 => crate::format::number(array.as_primitive::<Float64Type>().value(row)),
        DataType::Float32 => {
            crate::format::number(f64::from(array.as_primitive::<Float32Type>().value(row)))
        }
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(row).to_string(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(row).to_string(),
        other => format!("<{other}>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes give each row its value as [`texts`] does, in the order rows first show the values,
    /// for a dictionary column (values in another order, one unused, a null row) and a plain one.
    #[test]
    fn text_codes_agree_with_texts() {
        use std::sync::Arc;

        use arrow_array::types::Int8Type;
        use arrow_array::{DictionaryArray, Int8Array, StringArray};
        use arrow_schema::{Field, Schema};
        let dictionary = DictionaryArray::<Int8Type>::try_new(
            Int8Array::from(vec![Some(2), Some(0), None, Some(2), Some(0)]),
            Arc::new(StringArray::from(vec!["b", "unused", "a"])),
        )
        .unwrap();
        let plain = StringArray::from(vec![Some("x"), Some("y"), Some("x"), None, Some("y")]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("d", dictionary.data_type().clone(), true),
            Field::new("p", DataType::Utf8, true),
        ]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(dictionary), Arc::new(plain)]).unwrap();
        for (column, values) in [("d", vec!["a", "b", ""]), ("p", vec!["x", "y", ""])] {
            let (got, codes) = text_codes(&batch, column).unwrap();
            assert_eq!(got, values, "{column}");
            let rows: Vec<String> = codes.iter().map(|c| got[*c as usize].clone()).collect();
            assert_eq!(rows, texts(&batch, column).unwrap(), "{column}");
        }
        assert!(text_codes(&batch, "missing").is_none());
    }

    #[test]
    fn broken_bundles_are_errors_that_name_the_file() {
        let dir = std::env::temp_dir().join(format!("yosoku-viewer-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), "{ not json").unwrap();
        let e = LoadedBundle::from_dir(&dir).unwrap_err();
        assert!(e.contains("manifest.json"), "{e}");
        let e = LoadedBundle::from_dir(&dir.join("missing")).unwrap_err();
        assert!(e.contains("missing"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
        let e = LoadedBundle::from_files("drop", &[("x.runs.arrow".into(), b"garbage".to_vec())])
            .unwrap_err();
        assert!(e.starts_with("x.runs.arrow: "), "{e}");
        // A CSV dropped as users do: named for what it is, and where it goes instead (it was
        // arrow-ipc's "Arrow file does not contain correct footer").
        let e = LoadedBundle::from_files(
            "drop",
            &[(
                "runs.csv".into(),
                b"device,program,time_ms\ngpu,a,1.5\n".to_vec(),
            )],
        )
        .unwrap_err();
        assert!(
            e.starts_with("runs.csv: a text file")
                && e.contains("yosoku run")
                && !e.contains("footer"),
            "{e}"
        );
        let e = LoadedBundle::from_files("drop", &[("t.parquet".into(), b"PAR1....".to_vec())])
            .unwrap_err();
        assert!(e.starts_with("t.parquet: a Parquet file"), "{e}");
    }

    /// Zips `dir` in memory with the entries under `prefix`.
    fn zip_dir(dir: &std::path::Path, prefix: &str) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let relative = path.strip_prefix(dir).unwrap().to_string_lossy();
                zip.start_file(format!("{prefix}{relative}"), options)
                    .unwrap();
                std::io::Write::write_all(&mut zip, &std::fs::read(&path).unwrap()).unwrap();
            }
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn a_zipped_bundle_reads_as_its_directory_does() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bundles/csx600-montecarlo");
        let from_dir = LoadedBundle::from_dir(&dir).unwrap();
        for prefix in ["", "results/csx600-montecarlo/"] {
            let bytes = zip_dir(&dir, prefix);
            let files = [("csx600-montecarlo.zip".to_owned(), bytes)];
            let zipped = LoadedBundle::from_files("drop", &files).unwrap();
            assert_eq!(zipped.name(), from_dir.name());
            assert_eq!(zipped.tables.len(), from_dir.tables.len());
            for (a, b) in zipped.tables.iter().zip(&from_dir.tables) {
                assert_eq!((&a.name, &a.kind, &a.batch), (&b.name, &b.kind, &b.batch));
            }
        }
        let e = LoadedBundle::from_files("drop", &[("x.zip".into(), b"PK garbage".to_vec())])
            .unwrap_err();
        assert!(e.starts_with("x.zip: not a zip archive"), "{e}");
        let empty = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()))
            .finish()
            .unwrap()
            .into_inner();
        let e = LoadedBundle::from_files("drop", &[("e.zip".into(), empty)]).unwrap_err();
        assert!(e.contains("found neither"), "{e}");
    }

    #[test]
    fn the_synthetic_gantt_bundle_has_what_the_gantt_needs() {
        let b = synthetic_gantt(1000);
        assert_eq!(b.name(), "synthetic-1000-records");
        let t = &b.tables[0];
        assert_eq!(t.batch.num_rows(), 1000);
        assert!(crate::views::gantt::table::time_columns(&t.batch).is_some());
        // 16 records a lane (1000 / 64, rounded up): the last is in lane 62.
        assert_eq!(texts(&t.batch, "rank").unwrap()[999], "62");
    }

    /// A manifest read alone gives every table's columns exactly as its file has them (names
    /// and types, dictionaries included), so views choose tables before any is read; each file
    /// then fills its table. A manifest without columns (an older bundle) has its tables read at
    /// once; a file whose columns are not the manifest's is refused, naming it.
    #[test]
    fn a_manifest_alone_gives_the_columns_the_files_have() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles");
        for name in ["k40-bpnn", "csx600-montecarlo", "extrap-two-parameter"] {
            let dir = dir.join(name);
            let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
            let read = |f: &str| crate::platform::read_file(&dir.join(f));
            let mut lazy =
                LoadedBundle::from_manifest_lazily(name, &text, |f| panic!("{f} read")).unwrap();
            assert!(!lazy.is_loaded());
            for file in lazy.pending_files() {
                let batch = decode_table(name, &file, &read(&file).unwrap()).unwrap();
                lazy.fill(&file, batch).unwrap();
            }
            let eager = LoadedBundle::from_manifest(name, &text, read).unwrap();
            assert!(lazy.is_loaded());
            for (a, b) in lazy.tables.iter().zip(&eager.tables) {
                assert_eq!((&a.name, &a.batch), (&b.name, &b.batch));
            }
            // Dropped and read again.
            assert!(lazy.unload() > 0);
            assert_eq!(lazy.pending_files().len(), eager.tables.len());

            let mut old: Manifest = Manifest::from_json(&text).unwrap();
            for t in &mut old.tables {
                t.columns.clear();
            }
            let first = LoadedBundle::files_read_first(&old);
            assert_eq!(first.len(), old.tables.len());
            let older = LoadedBundle::from_manifest_lazily(name, &old.to_json(), read).unwrap();
            assert!(older.is_loaded());
        }
        let text = std::fs::read_to_string(dir.join("k40-bpnn/manifest.json")).unwrap();
        let mut lazy = LoadedBundle::from_manifest_lazily("b", &text, |f| panic!("{f}")).unwrap();
        let [first, second, ..] = &lazy.pending_files()[..] else {
            panic!("two tables")
        };
        let (first, second) = (first.clone(), second.clone());
        let bytes = crate::platform::read_file(&dir.join("k40-bpnn").join(&second)).unwrap();
        let other = decode_table("b", &second, &bytes).unwrap();
        let e = lazy.fill(&first, other).unwrap_err();
        assert!(
            e.starts_with(&format!("b/{first}: its columns are "))
                && e.contains("the manifest gives"),
            "{e}"
        );
    }
}
