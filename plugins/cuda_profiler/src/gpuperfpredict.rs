//! The gpuperfpredict dataset (Amaris et al.): nvprof metrics and events, launch configuration
//! and the measured `duration` (seconds) of one kernel on one GPU, one row per launch, exported
//! from R: the first column an unnamed row index, column names with `.` for punctuation, `NA` for
//! a missing value. Read directly from the `.csv.gz` files.
//!
//! The dataset is wide (a column per counter), and so is what a model needs: it becomes the
//! canonical `observations` table directly, one row per launch and one Float64 column per
//! counter, named by its canonical metric with the unit and kind in the field metadata, plus
//! `runs` (the durations) and `metric_names`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use yosoku_plugin_sdk::PluginError;
use yosoku_tables::{KIND_METADATA_KEY, OBSERVATIONS, UNIT_METADATA_KEY};

use crate::builder::{RunKey, Tables};
use crate::input::{Header, RecordReader, field};
use crate::units::{Prefixes, Scale, parse_number};

/// Columns that identify a launch rather than measure it.
const IDENTITY: &[&str] = &[
    "",
    "input.size.1",
    "input.size.2",
    "duration",
    "device",
    "name",
    "kernel",
    "gpu_name",
];

/// Accumulates dataset files into one wide table.
#[derive(Debug)]
pub struct Dataset {
    tables: Tables,
    /// Per run: its handle and duration.
    rows: Vec<(u32, f64)>,
    /// Counter columns by name handle: values per row so far (None where missing).
    columns: Vec<(u32, Vec<Option<f64>>)>,
    column_of: HashMap<u32, usize>,
}

impl Default for Dataset {
    fn default() -> Self {
        Self::new()
    }
}

impl Dataset {
    pub fn new() -> Self {
        Self {
            tables: Tables::wide("gpuperfpredict", Prefixes::Binary),
            rows: Vec::new(),
            columns: Vec::new(),
            column_of: HashMap::new(),
        }
    }

    fn column(&mut self, name: u32) -> usize {
        if let Some(&c) = self.column_of.get(&name) {
            return c;
        }
        // A column first seen in a later file: missing in the rows before it.
        self.columns.push((name, vec![None; self.rows.len()]));
        self.column_of.insert(name, self.columns.len() - 1);
        self.columns.len() - 1
    }

    /// Adds one file of the dataset.
    pub fn read(&mut self, path: &Path, text: &str) -> Result<(), PluginError> {
        // One record reused from row to row (a record allocated per row was a third of the
        // time of reading the dataset's largest file).
        let mut records = RecordReader::new(path, text);
        let Some(header_line) = records.read_next()? else {
            return Err(PluginError::new(format!("{}: empty file", path.display())));
        };
        let header = Header::new(records.record());
        let format = "a gpuperfpredict dataset file";
        let index = header.require(path, header_line, "", format)?;
        let size1 = header.require(path, header_line, "input.size.1", format)?;
        let size2 = header.find("input.size.2");
        let duration = header.require(path, header_line, "duration", format)?;
        let name = header.require(path, header_line, "name", format)?;
        let gpu = header.require(path, header_line, "gpu_name", format)?;
        // Each counter column's name, place and unit conversion, resolved once per file.
        let counters: Vec<(usize, u32, usize, Scale)> = (0..header.names.len())
            .filter(|&i| !IDENTITY.contains(&header.names[i].as_str()))
            .map(|i| {
                let handle = self.tables.name(&header.names[i]);
                let scale = self.tables.scale(handle, "");
                (i, handle, self.column(handle), scale)
            })
            .collect();
        let stem = path
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .trim_end_matches(".gz")
                    .trim_end_matches(".csv")
                    .to_owned()
            })
            .unwrap_or_default();
        while let Some(line) = records.read_next()? {
            let r = records.record();
            header.check_width(path, line, r)?;
            let number = |column: usize| -> Result<Option<f64>, PluginError> {
                let text = field(path, line, r, column, &header)?;
                if text == "NA" || text.is_empty() {
                    return Ok(None);
                }
                parse_number(text).map(Some).ok_or_else(|| {
                    PluginError::at_line(
                        path,
                        line,
                        format!(
                            "column `{}`: expected a number or NA, found `{text}`",
                            header.names[column]
                        ),
                    )
                })
            };
            let s1 = field(path, line, r, size1, &header)?;
            let s2 = size2
                .map(|c| field(path, line, r, c, &header))
                .transpose()?
                .unwrap_or("0");
            let variant = if s2 == "0" {
                s1.to_owned()
            } else {
                format!("{s1}x{s2}")
            };
            let seconds = number(duration)?.filter(|s| *s > 0.0).ok_or_else(|| {
                PluginError::at_line(path, line, "column `duration`: expected a time > 0")
            })?;
            let run = self.tables.key(RunKey {
                run_id: format!("{stem}:{}", field(path, line, r, index, &header)?),
                device: field(path, line, r, gpu, &header)?.to_owned(),
                program: field(path, line, r, name, &header)?.to_owned(),
                variant,
                kernel: None,
            });
            let parameters = format!("input.size.1={s1};input.size.2={s2}");
            self.tables
                .add_run(run, Some(&parameters), "kernel", seconds);
            self.rows.push((run, seconds));
            for &(c, handle, column, scale) in &counters {
                let value = match number(c)? {
                    Some(v) => {
                        self.tables.count_value(handle);
                        Some(scale.apply(v))
                    }
                    None => None,
                };
                self.columns[column].1.push(value);
            }
            // Columns this file lacks are missing in its rows.
            let rows = self.rows.len();
            for (_, values) in &mut self.columns {
                values.resize(rows, None);
            }
        }
        Ok(())
    }

    /// `runs`, `observations` and `metric_names`.
    pub fn finish(self) -> Result<Vec<(String, RecordBatch)>, PluginError> {
        let n = self.rows.len();
        let key = |f: &dyn Fn(&RunKey) -> &str| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(
                self.rows
                    .iter()
                    .map(|(run, _)| f(self.tables.run_key(*run))),
            ))
        };
        let mut columns: Vec<ArrayRef> = vec![
            key(&|k| &k.run_id),
            key(&|k| &k.device),
            key(&|k| &k.program),
            key(&|k| &k.variant),
            Arc::new(Float64Array::from_iter_values(
                self.rows.iter().map(|r| r.1),
            )),
        ];
        let mut fields: Vec<Field> = OBSERVATIONS.fields();
        let mut used: Vec<String> = fields.iter().map(|f| f.name().clone()).collect();
        for (handle, values) in &self.columns {
            let (metric, kind) = self.tables.metric(*handle);
            // Two raw names of one metric keep the second's raw name.
            let name = if used.iter().any(|u| u == metric) {
                format!("{metric}:{handle}")
            } else {
                metric.to_owned()
            };
            used.push(name.clone());
            let mut metadata = HashMap::new();
            if let Some(unit) = self.tables.canonical_unit(*handle) {
                metadata.insert(UNIT_METADATA_KEY.to_owned(), unit.to_owned());
            }
            if let Some(kind) = kind {
                metadata.insert(KIND_METADATA_KEY.to_owned(), kind.to_owned());
            }
            fields.push(Field::new(name, DataType::Float64, true).with_metadata(metadata));
            debug_assert_eq!(values.len(), n);
            columns.push(Arc::new(Float64Array::from(values.clone())));
        }
        let observations = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| PluginError::new(format!("building `observations`: {e}")))?;
        OBSERVATIONS.check(&observations)?;
        let mut out = self.tables.finish()?;
        out.insert(1, ("observations".to_owned(), observations));
        Ok(out)
    }
}
