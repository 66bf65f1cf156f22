//! Counter models over `observations` tables (docs/methods.md, sections 1 and 4): the normalize
//! operations that shape the features ([`normalize`]), fitting one linear or stepwise model per
//! group of rows ([`fit`]), predicting out of sample ([`crossval`]) and the tables that lay the
//! results out ([`report`]). Beside them, two measurements read from the same tables: the
//! throughput of kernels over their work counters ([`throughput`], the vector-width question)
//! and the overhead of in-kernel tracing ([`overhead`]).
//!
//! An `observations` table holds a run's identity and measured time and one Float64 column per
//! feature; a feature's unit and kind (count, config, time, rate, ...) travel in its field
//! metadata. Text columns beyond the canonical ones (such as `feature_device` from a
//! cross-device join) label rows and can group them.

pub mod crossval;
pub mod fit;
pub mod model;
pub mod normalize;
pub mod overhead;
pub mod report;
pub mod throughput;

use std::collections::HashMap;
use std::sync::Arc;
use yosoku_tables::access::Text;

use arrow_array::{Array, Float64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use yosoku_tables::{KIND_METADATA_KEY, METRIC_KINDS, OBSERVATIONS, UNIT_METADATA_KEY, col};

use crate::{Input, ModelError};

/// The kind of model a counter fit (`ols`, `stepwise`) records in its bundle: its coefficients
/// and summary per group, and its saved form ([`model::CounterRegression`]).
pub const MODEL_KIND: &str = "counter_regression";

/// The kind of a feature column without kind metadata (an unmapped counter).
pub const UNKNOWN_KIND: &str = "unknown";

/// The kinds a model uses when a step names none: work done and launch configuration. `time`
/// and `rate` metrics are functions of the run time itself (target leakage), `ratio`, `level`
/// and `clock` metrics describe how, not how much.
pub const DEFAULT_KINDS: &[&str] = &["count", "config"];

/// One feature column of an `observations` table.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureColumn {
    pub name: String,
    pub kind: Option<String>,
    pub unit: Option<String>,
}

impl FeatureColumn {
    pub fn kind_or_unknown(&self) -> &str {
        self.kind.as_deref().unwrap_or(UNKNOWN_KIND)
    }
}

/// An `observations` table, checked, with its identity columns.
#[derive(Debug)]
pub struct Observations<'a> {
    pub batch: &'a RecordBatch,
    pub role: &'static str,
    pub run_id: Text<'a>,
    pub device: Text<'a>,
    pub program: Text<'a>,
    pub variant: Text<'a>,
    pub measured: &'a Float64Array,
}

impl<'a> Observations<'a> {
    pub fn new(role: &'static str, batch: &'a RecordBatch) -> Result<Self, ModelError> {
        let input = Input::new(role, &OBSERVATIONS, batch)?;
        Ok(Self {
            batch,
            role,
            run_id: input.utf8(col::RUN_ID)?,
            device: input.utf8(col::DEVICE)?,
            program: input.utf8(col::PROGRAM)?,
            variant: input.utf8(col::VARIANT)?,
            measured: input.float64(col::MEASURED_SECS)?,
        })
    }

    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The feature columns: every Float64 column beyond the canonical ones, in table order.
    pub fn features(&self) -> Vec<FeatureColumn> {
        self.batch
            .schema()
            .fields()
            .iter()
            .filter(|f| f.data_type() == &DataType::Float64 && !is_canonical(f.name()))
            .map(|f| FeatureColumn {
                name: f.name().clone(),
                kind: f.metadata().get(KIND_METADATA_KEY).cloned(),
                unit: f.metadata().get(UNIT_METADATA_KEY).cloned(),
            })
            .collect()
    }

    /// The values of feature `name`; an error names the column and the first null row.
    pub fn feature(&self, name: &str) -> Result<&'a Float64Array, ModelError> {
        let array = self
            .batch
            .column_by_name(name)
            .filter(|a| a.data_type() == &DataType::Float64 && !is_canonical(name))
            .ok_or_else(|| {
                ModelError::invalid(format!(
                    "input `{}` has no feature column `{name}`{}",
                    self.role,
                    suggest(name, self.features().iter().map(|f| f.name.as_str()))
                ))
            })?;
        Ok(array
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("checked Float64"))
    }

    /// A text column used to label or group rows (`device`, `program`, `variant`,
    /// `feature_device`, ...).
    pub fn label(&self, name: &str) -> Result<Text<'a>, ModelError> {
        let array = self.batch.column_by_name(name).ok_or_else(|| {
            let labels: Vec<String> = self
                .batch
                .schema()
                .fields()
                .iter()
                .filter(|f| yosoku_tables::text::is_text_type(f.data_type()))
                .map(|f| f.name().clone())
                .collect();
            ModelError::invalid(format!(
                "input `{}` has no column `{name}` to group or hold out by; its text columns: {}",
                self.role,
                labels.join(", ")
            ))
        })?;
        Text::new(array.as_ref()).ok_or_else(|| {
            ModelError::invalid(format!(
                "input `{}`: column `{name}` has type {}, expected text to group by",
                self.role,
                array.data_type()
            ))
        })
    }

    /// "program variant (run_id)" of a row, for messages.
    pub fn describe(&self, row: usize) -> String {
        format!(
            "row {row} ({} {} on {}, run {})",
            self.program.value(row),
            self.variant.value(row),
            self.device.value(row),
            self.run_id.value(row)
        )
    }
}

fn is_canonical(name: &str) -> bool {
    OBSERVATIONS.columns.iter().any(|c| c.name == name)
}

/// `; did you mean x?` for the closest of `names` to `name`, or the list of names.
pub(crate) fn suggest<'n>(name: &str, names: impl Iterator<Item = &'n str>) -> String {
    let names: Vec<&str> = names.collect();
    let lower = name.to_ascii_lowercase();
    let close: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| {
            let l = n.to_ascii_lowercase();
            l.contains(&lower) || lower.contains(&l)
        })
        .take(5)
        .collect();
    if !close.is_empty() {
        format!("; did you mean {}?", close.join(", "))
    } else if names.len() <= 12 {
        format!("; it has: {}", names.join(", "))
    } else {
        format!("; it has {} feature columns", names.len())
    }
}

/// Which feature columns a model uses.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FeatureChoice {
    /// Exactly these columns, in this order (when given, `kinds` is ignored).
    pub features: Option<Vec<String>>,
    /// Otherwise every feature column of these kinds ([`DEFAULT_KINDS`] when empty;
    /// [`UNKNOWN_KIND`] selects columns without a kind).
    pub kinds: Vec<String>,
    /// Never these columns.
    pub exclude: Vec<String>,
}

impl FeatureChoice {
    /// The chosen feature names, in table order (or the order given).
    pub fn resolve(&self, observations: &Observations<'_>) -> Result<Vec<String>, ModelError> {
        let available = observations.features();
        for name in &self.exclude {
            if !available.iter().any(|f| &f.name == name) {
                return Err(ModelError::invalid(format!(
                    "`exclude` names `{name}`, which is not a feature column of input `{}`{}",
                    observations.role,
                    suggest(name, available.iter().map(|f| f.name.as_str()))
                )));
            }
        }
        let chosen: Vec<String> = match &self.features {
            Some(names) => {
                for name in names {
                    observations.feature(name)?;
                }
                names
                    .iter()
                    .filter(|n| !self.exclude.contains(n))
                    .cloned()
                    .collect()
            }
            None => {
                let kinds: Vec<&str> = if self.kinds.is_empty() {
                    DEFAULT_KINDS.to_vec()
                } else {
                    self.kinds.iter().map(String::as_str).collect()
                };
                for k in &kinds {
                    if *k != UNKNOWN_KIND && !METRIC_KINDS.contains(k) {
                        return Err(ModelError::invalid(format!(
                            "unknown feature kind `{k}`; expected one of: {}, {UNKNOWN_KIND}",
                            METRIC_KINDS.join(", ")
                        )));
                    }
                }
                available
                    .iter()
                    .filter(|f| kinds.contains(&f.kind_or_unknown()))
                    .map(|f| f.name.clone())
                    .filter(|n| !self.exclude.contains(n))
                    .collect()
            }
        };
        if chosen.is_empty() {
            return Err(ModelError::invalid(format!(
                "no feature columns chosen from input `{}` ({} feature columns, kinds present: {})",
                observations.role,
                available.len(),
                kinds_present(&available)
            )));
        }
        Ok(chosen)
    }
}

fn kinds_present(features: &[FeatureColumn]) -> String {
    let mut kinds: Vec<&str> = features.iter().map(|f| f.kind_or_unknown()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    if kinds.is_empty() {
        "none".to_owned()
    } else {
        kinds.join(", ")
    }
}

/// Rows grouped by the values of some text columns, groups in order of first appearance.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// `column=value` pairs joined by `, `; empty for the one group of no columns.
    pub key: String,
    /// The value of each grouping column.
    pub values: Vec<String>,
    pub rows: Vec<usize>,
}

/// The key of `row`: its value in each of `arrays`, a null counted as the empty text.
pub(crate) fn row_key<'a>(arrays: &[Text<'a>], row: usize) -> Vec<&'a str> {
    arrays
        .iter()
        .map(|a| if a.is_null(row) { "" } else { a.value(row) })
        .collect()
}

/// The number of the key of `row` ([`row_key`]), numbered in order of first appearance in
/// `ids`.
pub(crate) fn key_id<'a>(
    ids: &mut HashMap<Vec<&'a str>, usize>,
    arrays: &[Text<'a>],
    row: usize,
) -> usize {
    let next = ids.len();
    *ids.entry(row_key(arrays, row)).or_insert(next)
}

/// Groups the rows of `observations` by `columns`.
pub fn group_rows(
    observations: &Observations<'_>,
    columns: &[String],
) -> Result<Vec<Group>, ModelError> {
    let arrays: Vec<Text<'_>> = columns
        .iter()
        .map(|c| observations.label(c))
        .collect::<Result<_, _>>()?;
    let mut groups: Vec<Group> = Vec::new();
    let mut ids: HashMap<Vec<&str>, usize> = HashMap::new();
    // The group of the row before: rows of a group mostly come together, and comparing a row's
    // texts with its predecessor's costs less than a key built and hashed per row.
    let mut previous: Option<(usize, usize)> = None;
    // (Nulls read as the empty text, as in `row_key`.)
    let same_key = |a: usize, b: usize| arrays.iter().all(|t| t.same(a, b));
    for row in 0..observations.rows() {
        let g = match previous {
            Some((prev_row, g)) if same_key(prev_row, row) => g,
            _ => key_id(&mut ids, &arrays, row),
        };
        previous = Some((row, g));
        if g < groups.len() {
            groups[g].rows.push(row);
            continue;
        }
        let values: Vec<String> = row_key(&arrays, row)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let key = columns
            .iter()
            .zip(&values)
            .map(|(c, v)| format!("{c}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        groups.push(Group {
            key,
            values,
            rows: vec![row],
        });
    }
    Ok(groups)
}

/// The values of feature `name` at `rows`, transformed by ln(1 + x) when `log`; nulls and values
/// the transform cannot take are errors naming the row.
pub(crate) fn feature_values(
    observations: &Observations<'_>,
    name: &str,
    rows: &[usize],
    log: bool,
) -> Result<Vec<f64>, ModelError> {
    let array = observations.feature(name)?;
    rows.iter()
        .map(|&r| {
            if array.is_null(r) {
                return Err(ModelError::invalid(format!(
                    "feature `{name}` is missing (null) at {}; drop such rows or leave the feature out",
                    observations.describe(r)
                )));
            }
            let v = array.value(r);
            if !v.is_finite() {
                return Err(ModelError::invalid(format!(
                    "feature `{name}` is {v} at {}",
                    observations.describe(r)
                )));
            }
            if log {
                if v < 0.0 {
                    return Err(ModelError::invalid(format!(
                        "`log_features`: feature `{name}` is negative ({v}) at {}; ln(1 + x) needs x >= 0",
                        observations.describe(r)
                    )));
                }
                Ok(v.ln_1p())
            } else {
                Ok(v)
            }
        })
        .collect()
}

/// A new `observations` batch: `base` with its feature columns replaced by `features` (name,
/// kind, unit, values), canonical and text columns kept.
pub(crate) fn with_features(
    base: &RecordBatch,
    features: Vec<FeatureValues>,
) -> Result<RecordBatch, ModelError> {
    let schema = base.schema();
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<Arc<dyn Array>> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if f.data_type() == &DataType::Float64 && !is_canonical(f.name()) {
            continue;
        }
        fields.push(f.as_ref().clone());
        columns.push(base.column(i).clone());
    }
    for (feature, values) in features {
        fields.push(feature_field(&feature));
        columns.push(Arc::new(Float64Array::from(values)));
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| ModelError::invalid(format!("building `observations`: {e}")))?;
    OBSERVATIONS
        .check(&batch)
        .map_err(|e| ModelError::invalid(format!("internal error: {e}")))?;
    Ok(batch)
}

/// The Arrow field of a feature column of `observations`: Float64, nullable, its kind and unit in
/// the metadata.
pub fn feature_field(feature: &FeatureColumn) -> Field {
    let mut metadata = HashMap::new();
    if let Some(k) = &feature.kind {
        metadata.insert(KIND_METADATA_KEY.to_owned(), k.clone());
    }
    if let Some(u) = &feature.unit {
        metadata.insert(UNIT_METADATA_KEY.to_owned(), u.clone());
    }
    Field::new(&feature.name, DataType::Float64, true).with_metadata(metadata)
}

/// A feature column and its values (None where null).
pub(crate) type FeatureValues = (FeatureColumn, Vec<Option<f64>>);

/// The feature columns of `observations` with their values (nulls kept).
pub(crate) fn all_features(
    observations: &Observations<'_>,
) -> Result<Vec<FeatureValues>, ModelError> {
    observations
        .features()
        .into_iter()
        .map(|f| {
            let values = observations.feature(&f.name)?.iter().collect();
            Ok((f, values))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod testing {
    //! Small `observations` tables for the tests of this module.

    use super::*;

    /// An observations batch: identity columns from `ids` (device, program, variant), times,
    /// and features (name, kind, values).
    pub fn observations(
        ids: &[(&str, &str, &str)],
        secs: &[f64],
        features: &[(&str, &str, Vec<f64>)],
    ) -> RecordBatch {
        let n = ids.len();
        let mut fields: Vec<Field> = OBSERVATIONS.fields();
        let mut columns: Vec<Arc<dyn Array>> = vec![
            Arc::new(arrow_array::StringArray::from_iter_values(
                (0..n).map(|i| format!("r{i}")),
            )),
            Arc::new(arrow_array::StringArray::from_iter_values(
                ids.iter().map(|t| t.0),
            )),
            Arc::new(arrow_array::StringArray::from_iter_values(
                ids.iter().map(|t| t.1),
            )),
            Arc::new(arrow_array::StringArray::from_iter_values(
                ids.iter().map(|t| t.2),
            )),
            Arc::new(Float64Array::from(secs.to_vec())),
        ];
        for (name, kind, values) in features {
            fields.push(feature_field(&FeatureColumn {
                name: (*name).to_owned(),
                kind: (!kind.is_empty()).then(|| (*kind).to_owned()),
                unit: None,
            }));
            columns.push(Arc::new(Float64Array::from(values.clone())));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::observations;
    use super::*;

    #[test]
    fn kinds_choose_features_and_time_is_left_out_by_default() {
        let batch = observations(
            &[("g", "a", "1"), ("g", "b", "2")],
            &[1.0, 2.0],
            &[
                ("inst", "count", vec![1.0, 2.0]),
                ("cycles", "time", vec![3.0, 4.0]),
                ("block", "config", vec![32.0, 64.0]),
                ("odd", "", vec![0.0, 1.0]),
            ],
        );
        let obs = Observations::new("o", &batch).unwrap();
        let default = FeatureChoice::default().resolve(&obs).unwrap();
        assert_eq!(default, ["inst", "block"]);
        let unknown = FeatureChoice {
            kinds: vec!["unknown".into()],
            ..Default::default()
        };
        assert_eq!(unknown.resolve(&obs).unwrap(), ["odd"]);
        let bad = FeatureChoice {
            exclude: vec!["inst_executed".into()],
            ..Default::default()
        };
        let e = bad.resolve(&obs).unwrap_err().to_string();
        assert!(
            e.contains("`inst_executed`") && e.contains("did you mean inst"),
            "{e}"
        );
    }

    #[test]
    fn groups_keep_the_order_rows_first_appear_in() {
        let batch = observations(
            &[("k40", "a", "1"), ("p100", "a", "1"), ("k40", "b", "2")],
            &[1.0, 2.0, 3.0],
            &[("x", "count", vec![1.0, 2.0, 3.0])],
        );
        let obs = Observations::new("o", &batch).unwrap();
        let groups = group_rows(&obs, &["device".into()]).unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].key, "device=k40");
        assert_eq!(groups[0].rows, [0, 2]);
        let e = group_rows(&obs, &["gpu".into()]).err().unwrap().to_string();
        assert!(e.contains("no column `gpu`") && e.contains("device"), "{e}");
    }
}
