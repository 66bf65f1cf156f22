//! Shaping the features of `observations` before a fit: from the long `counters` form to
//! columns, merging alternative counters, z-scores, derived per-instruction rates, means over
//! repeated runs, and the cross-device join (docs/methods.md, sections 1 and 4).

use std::collections::HashMap;
use std::sync::Arc;
use yosoku_tables::access::Text;

use arrow_array::{Array, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use yosoku_tables::{COUNTERS, OBSERVATIONS, RUNS, col};

use super::{
    FeatureColumn, FeatureValues, Observations, all_features, feature_field, group_rows, key_id,
    suggest, with_features,
};
use crate::{Input, ModelError};

/// `counters` (long form) and `runs` to `observations`: one row per run, one column per metric.
/// `metrics` limits the columns (all metrics when `None`). A run without a value for a metric
/// gets a null there; the second value of one metric for one run is an error.
pub fn pivot_counters(
    runs: &RecordBatch,
    counters: &RecordBatch,
    metrics: Option<&[String]>,
) -> Result<RecordBatch, ModelError> {
    let r = Input::new("runs", &RUNS, runs)?;
    let c = Input::new("counters", &COUNTERS, counters)?;
    let run_id = r.utf8(col::RUN_ID)?;
    let mut row_of: HashMap<&str, usize> = HashMap::with_capacity(r.rows());
    for i in 0..r.rows() {
        if let Some(first) = row_of.insert(run_id.value(i), i) {
            return Err(ModelError::invalid(format!(
                "input `runs`: run `{}` appears at rows {first} and {i}; pivoting needs one time per run (filter one phase first)",
                run_id.value(i)
            )));
        }
    }
    let c_run = c.utf8(col::RUN_ID)?;
    let c_metric = c.utf8(col::METRIC)?;
    let c_value = c.float64(col::VALUE)?;
    let c_unit = c.utf8(col::UNIT)?;
    let c_kind = c.utf8(col::KIND)?;
    let mut columns: Vec<FeatureValues> = Vec::new();
    let mut column_of: HashMap<&str, usize> = HashMap::new();
    if let Some(wanted) = metrics {
        for m in wanted {
            column_of.insert(m.as_str(), columns.len());
            columns.push((
                FeatureColumn {
                    name: m.clone(),
                    kind: None,
                    unit: None,
                },
                vec![None; r.rows()],
            ));
        }
    }
    let mut seen: Vec<bool> = vec![false; columns.len()];
    let mut unmatched = 0usize;
    for i in 0..c.rows() {
        let metric = c_metric.value(i);
        let column = match column_of.get(metric) {
            Some(&k) => k,
            None if metrics.is_none() => {
                column_of.insert(metric, columns.len());
                columns.push((
                    FeatureColumn {
                        name: metric.to_owned(),
                        kind: None,
                        unit: None,
                    },
                    vec![None; r.rows()],
                ));
                seen.push(false);
                columns.len() - 1
            }
            None => continue,
        };
        let Some(&row) = row_of.get(c_run.value(i)) else {
            unmatched += 1;
            continue;
        };
        let (feature, values) = &mut columns[column];
        if !seen[column] {
            seen[column] = true;
            feature.kind = c_kind.get(i).map(str::to_owned);
            feature.unit = Some(c_unit.value(i).to_owned());
        }
        if values[row].is_some() {
            return Err(ModelError::invalid(format!(
                "input `counters`, row {i}: a second value of `{metric}` for run `{}`",
                c_run.value(i)
            )));
        }
        values[row] = Some(c_value.value(i));
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(ModelError::invalid(format!(
            "input `counters` has no metric `{}`{}",
            columns[k].0.name,
            suggest(&columns[k].0.name, distinct_metrics(c_metric).into_iter())
        )));
    }
    if unmatched == c.rows() && c.rows() > 0 {
        return Err(ModelError::invalid(
            "no `run_id` of input `counters` is in input `runs`: are they from the same source?",
        ));
    }
    // Identity and time from `runs`.
    let pick = |name: &str| -> Result<Arc<dyn Array>, ModelError> {
        r.utf8(name)?;
        Ok(runs.column_by_name(name).expect("read above").clone())
    };
    let base_columns = vec![
        pick(col::RUN_ID)?,
        pick(col::DEVICE)?,
        pick(col::PROGRAM)?,
        pick(col::VARIANT)?,
        Arc::new(r.float64(col::MEASURED_SECS)?.clone()),
    ];
    let base = RecordBatch::try_new(
        Arc::new(Schema::new(OBSERVATIONS.fields_for(&base_columns))),
        base_columns,
    )
    .map_err(|e| ModelError::invalid(format!("building `observations`: {e}")))?;
    with_features(&base, columns)
}

fn distinct_metrics(metric: Text<'_>) -> Vec<&str> {
    let mut names: Vec<&str> = metric.iter().flatten().collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// One merge: `into` = the sum of `from` (docs/methods.md, section 1: `gst = gst32b + gst64b +
/// gst128b`). A part missing (null) in a row counts as zero there; all parts missing gives null.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    pub into: String,
    pub from: Vec<String>,
}

/// Applies `merges` in order; the parts are replaced by their sum unless `keep_parts`.
pub fn merge_counters(
    observations: &RecordBatch,
    merges: &[Merge],
    keep_parts: bool,
) -> Result<RecordBatch, ModelError> {
    let obs = Observations::new("observations", observations)?;
    let mut features = all_features(&obs)?;
    for merge in merges {
        if merge.from.is_empty() {
            return Err(ModelError::invalid(format!(
                "merge into `{}` lists no columns to add",
                merge.into
            )));
        }
        let mut parts = Vec::new();
        for name in &merge.from {
            let Some(k) = features.iter().position(|(f, _)| &f.name == name) else {
                return Err(ModelError::invalid(format!(
                    "merge into `{}`: no feature column `{name}`{}",
                    merge.into,
                    suggest(name, features.iter().map(|(f, _)| f.name.as_str()))
                )));
            };
            parts.push(k);
        }
        let units: Vec<Option<&String>> =
            parts.iter().map(|&k| features[k].0.unit.as_ref()).collect();
        if units.windows(2).any(|w| w[0] != w[1]) {
            return Err(ModelError::invalid(format!(
                "merge into `{}`: the columns have different units ({}); only quantities of one unit add up",
                merge.into,
                parts
                    .iter()
                    .map(|&k| format!(
                        "{} [{}]",
                        features[k].0.name,
                        features[k].0.unit.as_deref().unwrap_or("?")
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let n = obs.rows();
        let sum: Vec<Option<f64>> = (0..n)
            .map(|i| {
                parts
                    .iter()
                    .filter_map(|&k| features[k].1[i])
                    .fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v))
            })
            .collect();
        let kind = features[parts[0]].0.kind.clone();
        let unit = features[parts[0]].0.unit.clone();
        if !keep_parts {
            let mut sorted = parts.clone();
            sorted.sort_unstable();
            for k in sorted.into_iter().rev() {
                features.remove(k);
            }
        }
        if features.iter().any(|(f, _)| f.name == merge.into) {
            return Err(ModelError::invalid(format!(
                "merge into `{}`: a column of that name exists already",
                merge.into
            )));
        }
        features.push((
            FeatureColumn {
                name: merge.into.clone(),
                kind,
                unit,
            },
            sum,
        ));
    }
    with_features(observations, features)
}

/// A z-scored table and the columns that could not be scored.
#[derive(Debug, Clone)]
pub struct ZScored {
    pub observations: RecordBatch,
    /// (group key, column) of columns with zero variance in a group: left out of the result.
    pub zero_variance: Vec<(String, String)>,
}

/// Standardises `columns` (every feature when empty) to mean 0 and variance 1 (population) within
/// each group of `group_by`. A column constant within some group carries no information there:
/// it is removed from the table and reported. Nulls stay null.
pub fn zscore(
    observations: &RecordBatch,
    columns: &[String],
    group_by: &[String],
) -> Result<ZScored, ModelError> {
    let obs = Observations::new("observations", observations)?;
    let groups = group_rows(&obs, group_by)?;
    let mut features = all_features(&obs)?;
    for c in columns {
        if !features.iter().any(|(f, _)| &f.name == c) {
            return Err(ModelError::invalid(format!(
                "zscore: no feature column `{c}`{}",
                suggest(c, features.iter().map(|(f, _)| f.name.as_str()))
            )));
        }
    }
    let mut zero_variance = Vec::new();
    let mut drop = vec![false; features.len()];
    for (k, (feature, values)) in features.iter_mut().enumerate() {
        if !columns.is_empty() && !columns.contains(&feature.name) {
            continue;
        }
        for g in &groups {
            let present: Vec<f64> = g.rows.iter().filter_map(|&r| values[r]).collect();
            if present.is_empty() {
                continue;
            }
            let n = present.len() as f64;
            let mean = present.iter().sum::<f64>() / n;
            let var = present.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            let scale = present.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            if var.sqrt() <= 1e-12 * scale.max(f64::MIN_POSITIVE) || var == 0.0 {
                zero_variance.push((g.key.clone(), feature.name.clone()));
                drop[k] = true;
                continue;
            }
            let sd = var.sqrt();
            for &r in &g.rows {
                values[r] = values[r].map(|v| (v - mean) / sd);
            }
        }
        feature.unit = Some("z".to_owned());
    }
    let kept: Vec<_> = features
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(f, _)| f)
        .collect();
    Ok(ZScored {
        observations: with_features(observations, kept)?,
        zero_variance,
    })
}

/// A derived feature: `scale` x `numerator` / `denominator` (per-1000-instruction rates, bytes
/// per request, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    pub name: String,
    pub numerator: String,
    pub denominator: String,
    pub scale: f64,
    /// Kind of the new column (default `ratio`).
    pub kind: String,
}

/// Adds derived ratio columns. A zero or null denominator gives null (reported by count).
pub fn derive_ratios(
    observations: &RecordBatch,
    ratios: &[Ratio],
) -> Result<(RecordBatch, Vec<(String, usize)>), ModelError> {
    let obs = Observations::new("observations", observations)?;
    let mut features = all_features(&obs)?;
    let mut undefined = Vec::new();
    for ratio in ratios {
        let find = |name: &str| -> Result<usize, ModelError> {
            features
                .iter()
                .position(|(f, _)| f.name == name)
                .ok_or_else(|| {
                    ModelError::invalid(format!(
                        "derived `{}`: no feature column `{name}`{}",
                        ratio.name,
                        suggest(name, features.iter().map(|(f, _)| f.name.as_str()))
                    ))
                })
        };
        let (a, b) = (find(&ratio.numerator)?, find(&ratio.denominator)?);
        if features.iter().any(|(f, _)| f.name == ratio.name) {
            return Err(ModelError::invalid(format!(
                "derived `{}`: a column of that name exists already",
                ratio.name
            )));
        }
        let mut missing = 0usize;
        let values: Vec<Option<f64>> = features[a]
            .1
            .iter()
            .zip(&features[b].1)
            .map(|(x, y)| match (x, y) {
                (Some(x), Some(y)) if *y != 0.0 => Some(ratio.scale * x / y),
                _ => {
                    missing += 1;
                    None
                }
            })
            .collect();
        undefined.push((ratio.name.clone(), missing));
        let unit = match (&features[a].0.unit, &features[b].0.unit) {
            (Some(u), Some(v)) if u == v => "ratio".to_owned(),
            (Some(u), Some(v)) => format!("{u}/{v}"),
            _ => "ratio".to_owned(),
        };
        features.push((
            FeatureColumn {
                name: ratio.name.clone(),
                kind: Some(ratio.kind.clone()),
                unit: Some(unit),
            },
            values,
        ));
    }
    Ok((with_features(observations, features)?, undefined))
}

/// Means over the rows that share `by` (e.g. device, program, variant: repeated launches of one
/// configuration): the time and every feature are averaged, nulls ignored. The run id of a group
/// is its first run's, suffixed with `+<count - 1>`.
pub fn aggregate(observations: &RecordBatch, by: &[String]) -> Result<RecordBatch, ModelError> {
    let obs = Observations::new("observations", observations)?;
    if by.is_empty() {
        return Err(ModelError::invalid(
            "aggregate: name the columns whose equal values make one group (`by`)",
        ));
    }
    let groups = group_rows(&obs, by)?;
    let first: Vec<usize> = groups.iter().map(|g| g.rows[0]).collect();
    // Text columns: each group's first row (run ids marked with how many runs were averaged).
    let schema = observations.schema();
    let mut fields = Vec::new();
    let mut columns: Vec<Arc<dyn Array>> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if f.data_type() == &DataType::Float64 {
            continue;
        }
        let taken = arrow_select::take::take(
            observations.column(i),
            &arrow_array::UInt32Array::from_iter_values(first.iter().map(|&r| r as u32)),
            None,
        )
        .map_err(|e| ModelError::invalid(format!("aggregate: {e}")))?;
        let taken = if f.name() == col::RUN_ID {
            let ids = Text::new(taken.as_ref()).expect("run_id is text");
            Arc::new(StringArray::from_iter_values(
                groups.iter().enumerate().map(|(g, group)| {
                    if group.rows.len() == 1 {
                        ids.value(g).to_owned()
                    } else {
                        format!("{}+{}", ids.value(g), group.rows.len() - 1)
                    }
                }),
            )) as Arc<dyn Array>
        } else {
            taken
        };
        fields.push(f.as_ref().clone());
        columns.push(taken);
    }
    let mean = |values: &dyn Fn(usize) -> Option<f64>, rows: &[usize]| -> Option<f64> {
        let present: Vec<f64> = rows.iter().filter_map(|&r| values(r)).collect();
        (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
    };
    let measured = obs.measured;
    fields.push(
        OBSERVATIONS
            .schema()
            .field_with_name(col::MEASURED_SECS)
            .expect("canonical")
            .clone(),
    );
    columns.push(Arc::new(Float64Array::from_iter_values(groups.iter().map(
        |g| mean(&|r| Some(measured.value(r)), &g.rows).unwrap_or(f64::NAN),
    ))));
    for (feature, values) in all_features(&obs)? {
        fields.push(feature_field(&feature));
        columns.push(Arc::new(
            groups
                .iter()
                .map(|g| mean(&|r| values[r], &g.rows))
                .collect::<Float64Array>(),
        ));
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| ModelError::invalid(format!("aggregate: {e}")))?;
    OBSERVATIONS
        .check(&batch)
        .map_err(|e| ModelError::invalid(format!("internal error: {e}")))?;
    Ok(batch)
}

/// The cross-device join of docs/methods.md, section 1: features measured on one device, the time
/// measured on another.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossDevice {
    /// Devices whose features are used (every device of the features table when empty).
    pub feature_devices: Vec<String>,
    /// Devices whose times are the target (every device of the target table when empty).
    pub target_devices: Vec<String>,
    /// Columns that identify the same work on both devices (besides the device).
    pub on: Vec<String>,
    /// Pair a feature device with itself too.
    pub include_same: bool,
    /// Add the feature device's measured time as a feature of this name (the paper's
    /// "GTX285time"), kind `time`.
    pub reference_time_feature: Option<String>,
    /// Only these feature columns of the feature device, in this order (every one when `None`).
    pub metrics: Option<Vec<String>>,
}

/// What the join made and how many rows found no partner.
#[derive(Debug, Clone)]
pub struct Joined {
    pub observations: RecordBatch,
    /// (feature device, target device, rows paired, target rows without a partner).
    pub pairs: Vec<(String, String, usize, usize)>,
}

/// The rows of each device, in order.
fn rows_by_device<'a>(obs: &Observations<'a>) -> HashMap<&'a str, Vec<usize>> {
    let mut map: HashMap<&str, Vec<usize>> = HashMap::new();
    for row in 0..obs.rows() {
        map.entry(obs.device.value(row)).or_default().push(row);
    }
    map
}

/// Joins `features` rows of each feature device A with `target` rows of each target device B that
/// agree on `on`. Rows repeated under one key (several launches of one configuration) pair in
/// order: the k-th on A with the k-th on B. The result has B's identity and time, A's features and
/// a `feature_device` column naming A.
pub fn cross_device(
    features: &RecordBatch,
    target: &RecordBatch,
    options: &CrossDevice,
) -> Result<Joined, ModelError> {
    let f = Observations::new("features", features)?;
    let t = Observations::new("target", target)?;
    if options.on.is_empty() {
        return Err(ModelError::invalid(
            "cross_device: name the columns that identify the same work on both devices (`on`)",
        ));
    }
    let keys = SharedKeys::of(&f, &t, &options.on)?;
    let a_devices = pick_devices(&options.feature_devices, &f, "feature")?;
    let b_devices = pick_devices(&options.target_devices, &t, "target")?;
    let pairing = pair_rows(&f, &t, &keys, (&a_devices, &b_devices), options)?;
    let observations = joined_batch(target, &f, &pairing, options)?;
    Ok(Joined {
        observations,
        pairs: pairing.pairs,
    })
}

/// Each row's key over the `on` columns (a null counts as the empty text), as a number shared
/// by the feature and target tables.
struct SharedKeys {
    f_key: Vec<usize>,
    t_key: Vec<usize>,
    /// How many distinct keys there are.
    keys: usize,
}

impl SharedKeys {
    fn of(f: &Observations<'_>, t: &Observations<'_>, on: &[String]) -> Result<Self, ModelError> {
        let f_keys: Vec<Text<'_>> = on.iter().map(|c| f.label(c)).collect::<Result<_, _>>()?;
        let t_keys: Vec<Text<'_>> = on.iter().map(|c| t.label(c)).collect::<Result<_, _>>()?;
        let mut key_ids: HashMap<Vec<&str>, usize> = HashMap::new();
        let f_key: Vec<usize> = (0..f.rows())
            .map(|r| key_id(&mut key_ids, &f_keys, r))
            .collect();
        let t_key: Vec<usize> = (0..t.rows())
            .map(|r| key_id(&mut key_ids, &t_keys, r))
            .collect();
        Ok(Self {
            f_key,
            t_key,
            keys: key_ids.len(),
        })
    }
}

/// The devices `wanted` (each must have rows), or every device of the table when none is named.
fn pick_devices(
    wanted: &[String],
    obs: &Observations<'_>,
    role: &str,
) -> Result<Vec<String>, ModelError> {
    let present = crate::distinct(obs.device);
    if wanted.is_empty() {
        return Ok(present);
    }
    for w in wanted {
        if !present.contains(w) {
            return Err(ModelError::invalid(format!(
                "cross_device: no {role} rows for device `{w}`; devices there: {}",
                present.join(", ")
            )));
        }
    }
    Ok(wanted.to_vec())
}

/// Which feature row each target row pairs with.
struct Pairing<'a> {
    a_rows: Vec<usize>,
    b_rows: Vec<usize>,
    /// The feature device of each pair.
    a_names: Vec<&'a str>,
    /// (feature device, target device, rows paired, target rows without a partner).
    pairs: Vec<(String, String, usize, usize)>,
}

/// Pairs the rows of every feature device A with those of every target device B on their
/// shared key, the k-th row of a key on A with the k-th on B; a pair of devices with no row in
/// common is an error.
fn pair_rows<'a>(
    f: &Observations<'_>,
    t: &Observations<'_>,
    keys: &SharedKeys,
    (a_devices, b_devices): (&'a [String], &'a [String]),
    options: &CrossDevice,
) -> Result<Pairing<'a>, ModelError> {
    // Per device: key -> its rows in order.
    let (f_by_device, t_by_device) = (rows_by_device(f), rows_by_device(t));
    let f_index: HashMap<&str, HashMap<usize, Vec<usize>>> = f_by_device
        .iter()
        .map(|(device, rows)| {
            let mut by_key: HashMap<usize, Vec<usize>> = HashMap::new();
            for &r in rows {
                by_key.entry(keys.f_key[r]).or_default().push(r);
            }
            (*device, by_key)
        })
        .collect();
    let mut out = Pairing {
        a_rows: Vec::new(),
        b_rows: Vec::new(),
        a_names: Vec::new(),
        pairs: Vec::new(),
    };
    let mut taken = vec![0usize; keys.keys];
    for a in a_devices {
        let a_index = f_index.get(a.as_str());
        for b in b_devices {
            if a == b && !options.include_same {
                continue;
            }
            let (mut paired, mut alone) = (0usize, 0usize);
            taken.fill(0);
            for &row in t_by_device.get(b.as_str()).map_or(&[][..], Vec::as_slice) {
                let key = keys.t_key[row];
                let k = &mut taken[key];
                match a_index
                    .and_then(|by_key| by_key.get(&key))
                    .and_then(|rows| rows.get(*k))
                {
                    Some(&r) => {
                        out.a_rows.push(r);
                        out.b_rows.push(row);
                        out.a_names.push(a);
                        paired += 1;
                    }
                    None => alone += 1,
                }
                *k += 1;
            }
            if paired == 0 {
                return Err(ModelError::invalid(format!(
                    "cross_device: no row of `{b}` matches a row of `{a}` on {}",
                    options.on.join(", ")
                )));
            }
            out.pairs.push((a.clone(), b.clone(), paired, alone));
        }
    }
    Ok(out)
}

/// The joined observations: B's identity and time, a `feature_device` column, A's features
/// (those `metrics` names, or all) and, when asked for, A's time as a feature.
fn joined_batch(
    target: &RecordBatch,
    f: &Observations<'_>,
    pairing: &Pairing<'_>,
    options: &CrossDevice,
) -> Result<RecordBatch, ModelError> {
    let b_indices =
        arrow_array::UInt32Array::from_iter_values(pairing.b_rows.iter().map(|&r| r as u32));
    let a_indices =
        arrow_array::UInt32Array::from_iter_values(pairing.a_rows.iter().map(|&r| r as u32));
    let take = |array: &dyn Array, indices: &arrow_array::UInt32Array| -> Arc<dyn Array> {
        arrow_select::take::take(array, indices, None).expect("indices in range")
    };
    let take_t = |name: &str| -> Arc<dyn Array> {
        take(
            target.column_by_name(name).expect("checked").as_ref(),
            &b_indices,
        )
    };
    let mut columns: Vec<Arc<dyn Array>> = OBSERVATIONS
        .columns
        .iter()
        .map(|c| take_t(c.name))
        .collect();
    let mut fields: Vec<Field> = OBSERVATIONS.fields_for(&columns);
    fields.push(Field::new(col::FEATURE_DEVICE, DataType::Utf8, false));
    columns.push(Arc::new(StringArray::from_iter_values(
        pairing.a_names.iter().copied(),
    )));
    let mut add = |feature: &FeatureColumn, values: Arc<dyn Array>| {
        fields.push(feature_field(feature));
        columns.push(values);
    };
    let feature_columns = f.features();
    let kept: Vec<&FeatureColumn> = match &options.metrics {
        None => feature_columns.iter().collect(),
        Some(wanted) => wanted
            .iter()
            .map(|name| {
                feature_columns
                    .iter()
                    .find(|c| &c.name == name)
                    .ok_or_else(|| {
                        ModelError::invalid(format!(
                            "cross_device: `metrics` names `{name}`, which is not a feature column of the features table; its feature columns: {}",
                            feature_columns
                                .iter()
                                .map(|c| c.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })
            })
            .collect::<Result<_, _>>()?,
    };
    for feature in kept {
        add(feature, take(f.feature(&feature.name)?, &a_indices));
    }
    if let Some(name) = &options.reference_time_feature {
        if feature_columns.iter().any(|c| &c.name == name) {
            return Err(ModelError::invalid(format!(
                "cross_device: `reference_time_feature` `{name}` is already a feature column"
            )));
        }
        add(
            &FeatureColumn {
                name: name.clone(),
                kind: Some("time".to_owned()),
                unit: Some("s".to_owned()),
            },
            take(f.measured, &a_indices),
        );
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| ModelError::invalid(format!("cross_device: {e}")))
}

#[cfg(test)]
mod tests {
    use super::super::testing::observations;
    use super::*;

    fn values(batch: &RecordBatch, name: &str) -> Vec<Option<f64>> {
        batch
            .column_by_name(name)
            .unwrap()
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap()
            .iter()
            .collect()
    }

    #[test]
    fn merging_adds_the_parts_and_a_missing_part_counts_as_zero() {
        let batch = observations(
            &[("g", "a", ""), ("g", "b", ""), ("g", "c", "")],
            &[1.0, 2.0, 3.0],
            &[
                ("gst32b", "count", vec![1.0, 0.0, 5.0]),
                ("gst64b", "count", vec![0.0, 2.0, 5.0]),
                ("inst", "count", vec![9.0, 9.0, 9.0]),
            ],
        );
        let merged = merge_counters(
            &batch,
            &[Merge {
                into: "gst".into(),
                from: vec!["gst32b".into(), "gst64b".into()],
            }],
            false,
        )
        .unwrap();
        assert_eq!(values(&merged, "gst"), [Some(1.0), Some(2.0), Some(10.0)]);
        assert!(merged.column_by_name("gst32b").is_none());
        let e = merge_counters(
            &batch,
            &[Merge {
                into: "gld".into(),
                from: vec!["gld32b".into()],
            }],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no feature column `gld32b`"), "{e}");
    }

    #[test]
    fn zscores_are_per_group_and_constant_columns_are_reported() {
        let batch = observations(
            &[
                ("a", "p", ""),
                ("a", "q", ""),
                ("b", "p", ""),
                ("b", "q", ""),
            ],
            &[1.0, 2.0, 3.0, 4.0],
            &[
                ("x", "count", vec![1.0, 3.0, 10.0, 30.0]),
                ("c", "config", vec![7.0, 7.0, 7.0, 7.0]),
            ],
        );
        let z = zscore(&batch, &[], &["device".into()]).unwrap();
        assert_eq!(
            values(&z.observations, "x"),
            [Some(-1.0), Some(1.0), Some(-1.0), Some(1.0)]
        );
        assert!(z.observations.column_by_name("c").is_none());
        assert_eq!(
            z.zero_variance,
            [
                ("device=a".to_owned(), "c".to_owned()),
                ("device=b".to_owned(), "c".to_owned())
            ]
        );
    }

    #[test]
    fn ratios_are_scaled_and_a_zero_denominator_gives_null() {
        let batch = observations(
            &[("g", "a", ""), ("g", "b", "")],
            &[1.0, 2.0],
            &[
                ("l2_miss", "count", vec![5.0, 1.0]),
                ("inst", "count", vec![1000.0, 0.0]),
            ],
        );
        let (derived, undefined) = derive_ratios(
            &batch,
            &[Ratio {
                name: "l2_miss_per_kinst".into(),
                numerator: "l2_miss".into(),
                denominator: "inst".into(),
                scale: 1000.0,
                kind: "ratio".into(),
            }],
        )
        .unwrap();
        assert_eq!(values(&derived, "l2_miss_per_kinst"), [Some(5.0), None]);
        assert_eq!(undefined, [("l2_miss_per_kinst".to_owned(), 1)]);
    }

    #[test]
    fn aggregation_averages_repeated_runs() {
        let batch = observations(
            &[("g", "a", "1"), ("g", "a", "1"), ("g", "a", "2")],
            &[1.0, 3.0, 5.0],
            &[("x", "count", vec![10.0, 20.0, 40.0])],
        );
        let mean = aggregate(
            &batch,
            &["device".into(), "program".into(), "variant".into()],
        )
        .unwrap();
        assert_eq!(mean.num_rows(), 2);
        assert_eq!(values(&mean, col::MEASURED_SECS), [Some(2.0), Some(5.0)]);
        assert_eq!(values(&mean, "x"), [Some(15.0), Some(40.0)]);
        let ids = mean
            .column_by_name(col::RUN_ID)
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(ids.value(0), "r0+1");
    }

    #[test]
    fn cross_device_pairs_repeated_keys_in_order() {
        let batch = observations(
            &[
                ("a", "k", "1"),
                ("a", "k", "1"),
                ("a", "k", "2"),
                ("b", "k", "1"),
                ("b", "k", "1"),
                ("b", "k", "3"),
            ],
            &[1.0, 2.0, 3.0, 10.0, 20.0, 30.0],
            &[("x", "count", vec![100.0, 200.0, 300.0, 1.0, 2.0, 3.0])],
        );
        let joined = cross_device(
            &batch,
            &batch,
            &CrossDevice {
                feature_devices: vec!["a".into()],
                target_devices: vec!["b".into()],
                on: vec!["program".into(), "variant".into()],
                include_same: false,
                reference_time_feature: Some("a_secs".into()),
                metrics: None,
            },
        )
        .unwrap();
        let o = &joined.observations;
        assert_eq!(o.num_rows(), 2);
        assert_eq!(values(o, col::MEASURED_SECS), [Some(10.0), Some(20.0)]);
        assert_eq!(values(o, "x"), [Some(100.0), Some(200.0)]);
        assert_eq!(values(o, "a_secs"), [Some(1.0), Some(2.0)]);
        assert_eq!(joined.pairs, [("a".into(), "b".into(), 2, 1)]);
    }

    #[test]
    fn cross_device_keeps_only_the_metrics_named() {
        let batch = observations(
            &[("a", "k", "1"), ("b", "k", "1")],
            &[1.0, 10.0],
            &[
                ("x", "count", vec![100.0, 1.0]),
                ("y", "count", vec![7.0, 8.0]),
                ("z", "count", vec![5.0, 6.0]),
            ],
        );
        let options = |metrics: &[&str]| CrossDevice {
            feature_devices: vec!["a".into()],
            target_devices: vec!["b".into()],
            on: vec!["program".into(), "variant".into()],
            include_same: false,
            reference_time_feature: None,
            metrics: Some(metrics.iter().map(|m| m.to_string()).collect()),
        };
        let joined = cross_device(&batch, &batch, &options(&["z", "x"])).unwrap();
        let o = &joined.observations;
        let schema = o.schema();
        let features: Vec<&str> = schema.fields()[OBSERVATIONS.columns.len() + 1..]
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(features, ["z", "x"]);
        assert_eq!(values(o, "z"), [Some(5.0)]);
        let err = cross_device(&batch, &batch, &options(&["x", "w"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`w`") && err.contains("x, y, z"), "{err}");
    }
}
