//! Out-of-sample predictions of a [`ModelSpec`]: in sample, exact leave-one-out, k-fold, and
//! leave one value of a column out (program, device, input size), with error metrics per model
//! and per program and flags on the predictions that should not be trusted.
//!
//! Least-squares models are refitted on every training set (leave-one-out exactly, from the hat
//! matrix). A stepwise model is selected again on every training set, leave-one-out included
//! (one selection per row): nothing fitted, the selection, its spline knots or a
//! standardisation, sees a held-out row.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use faer::Mat;
use yosoku_tables::VALIDATION_SUMMARY;

use super::feature_values;
use super::fit::{GroupData, Method, ModelSpec, Trained, check_sizes, group_data, train};
use super::{Observations, row_key};
use yosoku_tables::report::ReportCell;

use super::report::{Matrix, Published, add_published};
use crate::ModelError;
use yosoku_regression::validate::{
    Held, Scheme, fold_labels, is_outside, metrics, training_ranges, validate, validate_fitted,
    validate_standardized_ridge,
};
use yosoku_regression::{OlsOptions, RegressionError};
use yosoku_tables::rows::{Prediction, PredictionsBuilder};

/// A hold-out written wrongly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HoldoutError {
    #[error("`{0}`: the number of folds must be an integer >= 2")]
    Folds(String),
    #[error("`{0}`: name the column(s), e.g. leave_one_out(program)")]
    NoColumns(String),
    #[error("unknown validation `{0}`; expected fit, loo, kfold(<k>) or leave_one_out(<column>)")]
    Unknown(String),
}

/// How rows are held out.
#[derive(Debug, Clone, PartialEq)]
pub enum Holdout {
    /// In sample: the fitted values.
    Fit,
    LeaveOneOut,
    KFold {
        folds: usize,
        seed: u64,
    },
    /// Each distinct value (combination of values) of text columns held out in turn: leave one
    /// program out, one device out, one input size of one program out (`program, variant`).
    LeaveOneValueOut {
        columns: Vec<String>,
    },
}

impl Holdout {
    /// Parses `fit`, `loo`, `kfold(<k>)` or `leave_one_out(<column>, ...)`; k-fold uses `seed`.
    pub fn parse(text: &str, seed: u64) -> Result<Self, HoldoutError> {
        let text = text.trim();
        let inner = |prefix: &str| {
            text.strip_prefix(prefix)
                .and_then(|r| r.strip_prefix('('))
                .and_then(|r| r.strip_suffix(')'))
                .map(str::trim)
        };
        if text == "fit" {
            Ok(Holdout::Fit)
        } else if text == "loo" {
            Ok(Holdout::LeaveOneOut)
        } else if let Some(k) = inner("kfold") {
            match k.parse::<usize>() {
                Ok(folds) if folds >= 2 => Ok(Holdout::KFold { folds, seed }),
                _ => Err(HoldoutError::Folds(text.to_owned())),
            }
        } else if let Some(columns) = inner("leave_one_out") {
            let columns: Vec<String> = columns
                .split(',')
                .map(|c| c.trim().to_owned())
                .filter(|c| !c.is_empty())
                .collect();
            if columns.is_empty() {
                Err(HoldoutError::NoColumns(text.to_owned()))
            } else {
                Ok(Holdout::LeaveOneValueOut { columns })
            }
        } else {
            Err(HoldoutError::Unknown(text.to_owned()))
        }
    }

    /// The name in the output tables.
    pub fn name(&self, method: &Method) -> String {
        match (self, method) {
            (Holdout::Fit, _) => "fit".to_owned(),
            (Holdout::LeaveOneOut, _) => "loo".to_owned(),
            (Holdout::KFold { folds, .. }, _) => format!("kfold({folds})"),
            (Holdout::LeaveOneValueOut { columns }, _) => {
                format!("leave_one_out({})", columns.join(", "))
            }
        }
    }
}

/// The model's features were standardised (z-scored) over all rows before it was fitted. A
/// hold-out must see nothing of its held-out rows, so validation fits the standardisation again
/// inside every training set, from the values before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Standardized {
    /// The `observations` before standardisation: the same rows, in the same order.
    pub raw: RecordBatch,
    /// The columns standardised (empty: every feature).
    pub columns: Vec<String>,
    /// Standardised within each group of these columns.
    pub group_by: Vec<String>,
}

/// What to validate and how to report it.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossValidation {
    pub holdouts: Vec<Holdout>,
    /// A row is flagged `tiny_counters` when the median, over its counters, of counter / the
    /// counter's mean is below this (Shimada et al.'s failures had counters 1/25000 of the mean).
    pub tiny_threshold: f64,
    pub matrix: Option<Matrix>,
    pub published: Vec<Published>,
    /// When the model's rows were standardised upstream: how, and the values before.
    pub standardized: Option<Standardized>,
}

/// One row of `validation_summary`.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub group: String,
    pub group_values: Vec<String>,
    pub validation: String,
    /// `None`: all programs.
    pub program: Option<String>,
    pub n: usize,
    pub mean_abs_pct: f64,
    pub median_abs_pct: f64,
    pub max_abs_pct: f64,
    pub mean_ratio: f64,
    pub r2: f64,
    pub adj_r2: Option<f64>,
    pub rmse_secs: f64,
    pub negative: usize,
    pub extrapolated: usize,
    pub tiny: usize,
}

/// The result of [`cross_validate`].
#[derive(Debug, Clone)]
pub struct Validated {
    /// A `predictions` table: every row of every group, once per hold-out.
    pub predictions: RecordBatch,
    pub summary: Vec<SummaryRow>,
    pub report: Vec<ReportCell>,
}

fn group_error(g: &GroupData, e: impl std::fmt::Display) -> ModelError {
    if g.group.key.is_empty() {
        ModelError::invalid(e.to_string())
    } else {
        ModelError::invalid(format!("model of {}: {e}", g.group.key))
    }
}

/// Predicts every row of every group out of sample by each of `cv.holdouts`.
pub fn cross_validate(
    model: &str,
    observations: &RecordBatch,
    spec: &ModelSpec,
    cv: &CrossValidation,
) -> Result<Validated, ModelError> {
    let obs = Observations::new("observations", observations)?;
    let groups = group_data(&obs, spec)?;
    check_sizes(spec, &groups)?;
    let raw_groups = match &cv.standardized {
        Some(st) => Some(unstandardized(&obs, spec, st, &groups)?),
        None => None,
    };
    let rows: usize = groups.iter().map(|g| g.group.rows.len()).sum();
    let mut predictions = PredictionsBuilder::with_capacity(rows * cv.holdouts.len());
    let mut summary = Vec::new();
    let flag_texts = FlagTexts::default();
    for (k, g) in groups.iter().enumerate() {
        // Out of sample, a standardised model is validated on the values before
        // standardisation, which every training set standardises for itself.
        let raw = raw_groups.as_ref().map(|r| &r[k]);
        let tiny = raw.unwrap_or(g).tiny(cv.tiny_threshold);
        // Training on all rows is shared by the in-sample and leave-one-out schemes.
        let mut full: Option<Trained> = None;
        let model_group = (!g.group.key.is_empty()).then_some(g.group.key.as_str());
        for holdout in &cv.holdouts {
            let name = holdout.name(&spec.method);
            let held = match raw {
                Some(raw) if *holdout != Holdout::Fit => {
                    held_out_standardized(&obs, spec, raw, holdout)?
                }
                _ => held_out(&obs, spec, g, holdout, &mut full)?,
            };
            let columns_in_model = full.as_ref().map(|t| t.fit.kept.len());
            let scored: Vec<Scored> = held
                .iter()
                .map(|h| Scored::new(&obs, spec, g, h, tiny[h.row]))
                .collect();
            summary.extend(summarise(
                &obs,
                g,
                &name,
                &scored,
                (*holdout == Holdout::Fit)
                    .then_some(columns_in_model)
                    .flatten(),
            ));
            let shared = predictions.shared(model, "kernel", model_group, Some(&name));
            for (s, h) in scored.iter().zip(&held) {
                // model, phase, model_group and validation: `shared`.
                predictions.append_sharing(
                    shared,
                    &Prediction {
                        model,
                        device: obs.device.value(s.obs_row),
                        program: obs.program.value(s.obs_row),
                        variant: obs.variant.value(s.obs_row),
                        phase: "kernel",
                        repetitions: 1,
                        predicted_secs: s.predicted_secs,
                        measured_secs: Some(s.measured_secs),
                        error_pct: Some(yosoku_tables::rows::error_pct(
                            s.predicted_secs,
                            s.measured_secs,
                        )),
                        flags: flag_texts.get(s.flags),
                        run_id: Some(obs.run_id.value(s.obs_row)),
                        model_group,
                        validation: Some(&name),
                        held_out: (&*h.fold != "all").then_some(&*h.fold),
                        interval_secs: h
                            .interval
                            .map(|(lo, hi)| (spec.seconds(lo), spec.seconds(hi))),
                    },
                );
            }
        }
    }
    let predictions = predictions.finish()?;
    let mut report = validation_report(model, spec, cv, &summary)?;
    add_published(&mut report, &cv.published)?;
    Ok(Validated {
        predictions,
        summary,
        report,
    })
}

/// The groups of a standardised model with the values before standardisation, after checking
/// that validation can refit the standardisation per training set: it standardised within the
/// model's own groups, every feature of a ridge model, and the model is least squares.
fn unstandardized(
    obs: &Observations<'_>,
    spec: &ModelSpec,
    st: &Standardized,
    groups: &[GroupData],
) -> Result<Vec<GroupData>, ModelError> {
    let mut ours = spec.group_by.clone();
    let mut theirs = st.group_by.clone();
    ours.sort();
    theirs.sort();
    if ours != theirs {
        return Err(ModelError::invalid(format!(
            "the model's rows were standardised within groups of ({}) but the model groups by ({}): validation refits the standardisation inside every training set only when they are the same columns; standardise with the model's `group_by`",
            st.group_by.join(", "),
            spec.group_by.join(", ")
        )));
    }
    let ridge = match spec.method {
        Method::Ols { ridge } => ridge,
        Method::Stepwise(_) => {
            return Err(ModelError::invalid(
                "a stepwise model fitted on standardised rows cannot be validated honestly (its splines and interactions would need the standardisation refitted inside every training set): fit it on the observations before the `zscore` step",
            ));
        }
    };
    if spec.log_features {
        return Err(ModelError::invalid(
            "`log_features` on standardised rows: take the logarithm before standardising, or fit on the observations before the `zscore` step",
        ));
    }
    let raw = Observations::new("observations before zscore", &st.raw)?;
    if raw.rows() != obs.rows() {
        return Err(ModelError::invalid(format!(
            "the observations before standardisation have {} rows, the standardised ones {}",
            raw.rows(),
            obs.rows()
        )));
    }
    let features = spec.choice.resolve(obs)?;
    if ridge > 0.0
        && !st.columns.is_empty()
        && let Some(f) = features.iter().find(|f| !st.columns.contains(f))
    {
        return Err(ModelError::invalid(format!(
            "feature `{f}` of this ridge model was not standardised with the others (`columns` of the zscore step): the penalty would weigh it on another scale"
        )));
    }
    groups
        .iter()
        .map(|g| {
            let values = features
                .iter()
                .map(|f| feature_values(&raw, f, &g.group.rows, false))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(GroupData {
                group: g.group.clone(),
                names: g.names.clone(),
                raw: values.clone(),
                values,
                target: g.target.clone(),
                secs: g.secs.clone(),
            })
        })
        .collect()
}

/// Out-of-sample predictions of a model fitted on standardised rows, from the values before
/// standardisation (`raw`): every training set is standardised by its own rows. Least squares
/// predicts the same whatever the scale of its columns, so it is validated on the raw values as
/// they are; ridge is solved per training set on columns standardised by that set.
fn held_out_standardized(
    obs: &Observations<'_>,
    spec: &ModelSpec,
    raw: &GroupData,
    holdout: &Holdout,
) -> Result<Vec<Held>, ModelError> {
    let ridge = match spec.method {
        Method::Ols { ridge } => ridge,
        Method::Stepwise(_) => 0.0,
    };
    let scheme = scheme_of(obs, raw, holdout)?;
    let n = raw.secs.len();
    let x = Mat::from_fn(n, raw.values.len(), |i, j| raw.values[j][i]);
    if ridge > 0.0 {
        validate_standardized_ridge(x.as_ref(), &raw.target, ridge, &scheme)
            .map_err(|e| group_error(raw, e))
    } else {
        let options = OlsOptions::default();
        validate(x.as_ref(), &raw.target, &options, &scheme).map_err(|e| group_error(raw, e))
    }
}

/// The regression's scheme for a hold-out of one group's rows.
fn scheme_of(
    obs: &Observations<'_>,
    g: &GroupData,
    holdout: &Holdout,
) -> Result<Scheme, ModelError> {
    let n = g.secs.len();
    Ok(match holdout {
        Holdout::Fit => Scheme::Fit,
        Holdout::LeaveOneOut => Scheme::LeaveOneOut,
        Holdout::KFold { folds, seed } => {
            if *folds > n {
                return Err(group_error(
                    g,
                    format!("{folds} folds for {n} rows: need at most one fold per row"),
                ));
            }
            Scheme::Grouped {
                labels: fold_labels(n, *folds, *seed),
            }
        }
        Holdout::LeaveOneValueOut { columns } => Scheme::Grouped {
            labels: group_labels(obs, g, columns)?,
        },
    })
}

/// Each row's values of `columns`, joined: the label a leave-one-value-out holds out by.
fn group_labels(
    obs: &Observations<'_>,
    g: &GroupData,
    columns: &[String],
) -> Result<Vec<String>, ModelError> {
    let arrays = columns
        .iter()
        .map(|c| obs.label(c))
        .collect::<Result<Vec<_>, _>>()?;
    // Rows come in runs of one label (a program's sizes, a size's repetitions): a row with the
    // texts of the row before takes its label.
    let mut labels: Vec<String> = Vec::with_capacity(g.group.rows.len());
    let mut previous: Option<usize> = None;
    for &r in &g.group.rows {
        let label = match (previous, labels.last()) {
            (Some(p), Some(last)) if arrays.iter().all(|a| a.same(p, r)) => last.clone(),
            _ => row_key(&arrays, r).join("/"),
        };
        labels.push(label);
        previous = Some(r);
    }
    Ok(labels)
}

/// The out-of-sample predictions of one group by one scheme, on the modelled scale.
fn held_out(
    obs: &Observations<'_>,
    spec: &ModelSpec,
    g: &GroupData,
    holdout: &Holdout,
    full: &mut Option<Trained>,
) -> Result<Vec<Held>, ModelError> {
    let columns = g.columns();
    let options = OlsOptions {
        ridge: match spec.method {
            Method::Ols { ridge } => ridge,
            Method::Stepwise(_) => 0.0,
        },
        ..OlsOptions::default()
    };
    if full.is_none() {
        // With leverages: the least-squares schemes below start from this fit of all rows.
        *full =
            Some(train(spec, &g.names, &columns, &g.target, true).map_err(|e| group_error(g, e))?);
    }
    let trained = full.as_ref().expect("trained above");
    let scheme = scheme_of(obs, g, holdout)?;
    match (&spec.method, &scheme) {
        // Least squares, and stepwise in sample: the design is known, the regression module
        // refits.
        (Method::Ols { .. }, _) | (Method::Stepwise(_), Scheme::Fit) => {
            let x = trained.design(&columns);
            let fit = matches!(spec.method, Method::Ols { .. }).then_some(&trained.fit);
            validate_fitted(x.as_ref(), &g.target, &options, &scheme, fit)
                .map_err(|e| group_error(g, e))
        }
        // Stepwise, leave-one-out: select again without each row (a selection made on all rows
        // would have seen the row it predicts).
        (Method::Stepwise(_), Scheme::LeaveOneOut) => {
            let labels: Vec<String> = (0..g.secs.len()).map(|i| format!("row {i}")).collect();
            let mut held = reselect_by(spec, g, &labels).map_err(|e| group_error(g, e))?;
            let loo: std::sync::Arc<str> = std::sync::Arc::from("loo");
            for h in &mut held {
                h.fold = std::sync::Arc::clone(&loo);
            }
            Ok(held)
        }
        // Stepwise with hold-out sets: select again on every training set.
        (Method::Stepwise(_), Scheme::Grouped { labels }) => {
            reselect_by(spec, g, labels).map_err(|e| group_error(g, e))
        }
        (Method::Stepwise(_), Scheme::KFold { .. }) => unreachable!("k-fold is grouped above"),
    }
}

/// Stepwise selection and fit without each label's rows, predicting them.
fn reselect_by(
    spec: &ModelSpec,
    g: &GroupData,
    labels: &[String],
) -> Result<Vec<Held>, RegressionError> {
    let n = g.secs.len();
    let mut distinct: Vec<&String> = Vec::new();
    for l in labels {
        if !distinct.contains(&l) {
            distinct.push(l);
        }
    }
    if distinct.len() < 2 {
        return Err(RegressionError::Shape(format!(
            "only one group ({}): nothing to hold out",
            distinct.first().map_or("none", |s| s.as_str())
        )));
    }
    let raw = Mat::from_fn(n, g.values.len(), |i, j| g.values[j][i]);
    let mut out = Vec::with_capacity(n);
    for label in distinct {
        let train_rows: Vec<usize> = (0..n).filter(|&i| &labels[i] != label).collect();
        let test_rows: Vec<usize> = (0..n).filter(|&i| &labels[i] == label).collect();
        let pick = |rows: &[usize]| -> Vec<Vec<f64>> {
            g.values
                .iter()
                .map(|v| rows.iter().map(|&i| v[i]).collect())
                .collect()
        };
        let train_values = pick(&train_rows);
        let train_columns: Vec<&[f64]> = train_values.iter().map(Vec::as_slice).collect();
        let target: Vec<f64> = train_rows.iter().map(|&i| g.target[i]).collect();
        let trained = train(spec, &g.names, &train_columns, &target, false).map_err(|e| {
            RegressionError::Shape(format!(
                "fitting without `{label}` ({} rows): {e}",
                train_rows.len()
            ))
        })?;
        let test_values = pick(&test_rows);
        let test_columns: Vec<&[f64]> = test_values.iter().map(Vec::as_slice).collect();
        let x = trained.design(&test_columns);
        let ranges = training_ranges(raw.as_ref(), &train_rows);
        let used = trained.used_features(g.values.len());
        let fold: std::sync::Arc<str> = std::sync::Arc::from(label.as_str());
        for (k, &i) in test_rows.iter().enumerate() {
            let row: Vec<f64> = (0..x.ncols()).map(|j| x[(k, j)]).collect();
            out.push(Held {
                row: i,
                predicted: trained.fit.predict(&row),
                fold: std::sync::Arc::clone(&fold),
                interval: trained.fit.prediction_interval(&row, 0.95),
                extrapolated: is_outside(raw.as_ref(), i, &ranges, &used),
            });
        }
    }
    out.sort_by_key(|h| h.row);
    Ok(out)
}

/// The flags of a prediction, one bit each, in the order they are written.
const FLAG_NAMES: [&str; 4] = ["negative", "overflow", "extrapolated", "tiny_counters"];
const NEGATIVE: u8 = 1;
const OVERFLOW: u8 = 2;
const EXTRAPOLATED: u8 = 4;
const TINY: u8 = 8;

/// The `flags` text of every combination of [`FLAG_NAMES`], joined with `;` once.
struct FlagTexts(Vec<String>);

impl Default for FlagTexts {
    fn default() -> Self {
        Self(
            (0..1u8 << FLAG_NAMES.len())
                .map(|bits| {
                    let names: Vec<&str> = FLAG_NAMES
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| bits & (1 << i) != 0)
                        .map(|(_, n)| *n)
                        .collect();
                    names.join(";")
                })
                .collect(),
        )
    }
}

impl FlagTexts {
    fn get(&self, bits: u8) -> Option<&str> {
        (bits != 0).then(|| self.0[usize::from(bits)].as_str())
    }
}

/// One held-out row, scored: what the summary and the `predictions` table need of it.
struct Scored {
    /// The row of the observations table.
    obs_row: usize,
    predicted_secs: f64,
    measured_secs: f64,
    flags: u8,
}

impl Scored {
    fn new(obs: &Observations<'_>, spec: &ModelSpec, g: &GroupData, h: &Held, tiny: bool) -> Self {
        let obs_row = g.group.rows[h.row];
        let predicted_secs = spec.seconds(h.predicted);
        let mut flags = 0;
        for (set, bit) in [
            (predicted_secs < 0.0, NEGATIVE),
            (predicted_secs.is_infinite(), OVERFLOW),
            (h.extrapolated, EXTRAPOLATED),
            (tiny, TINY),
        ] {
            if set {
                flags |= bit;
            }
        }
        Self {
            obs_row,
            predicted_secs,
            measured_secs: obs.measured.value(obs_row),
            flags,
        }
    }
}

/// Summary rows of one group and scheme: all rows, then each program.
fn summarise(
    obs: &Observations<'_>,
    g: &GroupData,
    validation: &str,
    rows: &[Scored],
    columns_in_model: Option<usize>,
) -> Vec<SummaryRow> {
    // Each row's program as its index in `programs` (order of first appearance).
    let mut programs: Vec<&str> = Vec::new();
    let program_of: Vec<usize> = rows
        .iter()
        .map(|r| {
            let program = obs.program.value(r.obs_row);
            match programs.iter().position(|p| *p == program) {
                Some(k) => k,
                None => {
                    programs.push(program);
                    programs.len() - 1
                }
            }
        })
        .collect();
    let one = |program: Option<usize>| -> SummaryRow {
        let chosen: Vec<&Scored> = rows
            .iter()
            .zip(&program_of)
            .filter(|(_, k)| program.is_none_or(|p| **k == p))
            .map(|(r, _)| r)
            .collect();
        let actual: Vec<f64> = chosen.iter().map(|r| r.measured_secs).collect();
        let predicted: Vec<f64> = chosen.iter().map(|r| r.predicted_secs).collect();
        let m = metrics(&actual, &predicted);
        let flagged = |flag: u8| chosen.iter().filter(|r| r.flags & flag != 0).count();
        let adj_r2 = columns_in_model
            .filter(|_| program.is_none())
            .and_then(|k| {
                let n = m.n as f64;
                let df = n - k as f64 - 1.0;
                (df > 0.0).then(|| 1.0 - (1.0 - m.r2) * (n - 1.0) / df)
            });
        SummaryRow {
            group: g.group.key.clone(),
            group_values: g.group.values.clone(),
            validation: validation.to_owned(),
            program: program.map(|k| programs[k].to_owned()),
            n: m.n,
            mean_abs_pct: m.mean_abs_pct,
            median_abs_pct: m.median_abs_pct,
            max_abs_pct: m.max_abs_pct,
            mean_ratio: m.mean_ratio,
            r2: m.r2,
            adj_r2,
            rmse_secs: m.rmse,
            negative: flagged(NEGATIVE),
            extrapolated: flagged(EXTRAPOLATED),
            tiny: flagged(TINY),
        }
    };
    let mut out = vec![one(None)];
    if programs.len() > 1 {
        out.extend((0..programs.len()).map(|k| one(Some(k))));
    }
    out
}

/// The report of a validation: per model (rows) the mean and median error of each scheme, or
/// with `matrix` one matrix of mean errors per scheme.
fn validation_report(
    model: &str,
    spec: &ModelSpec,
    cv: &CrossValidation,
    summary: &[SummaryRow],
) -> Result<Vec<ReportCell>, ModelError> {
    let overall = summary.iter().filter(|s| s.program.is_none());
    let mut cells = Vec::new();
    match &cv.matrix {
        Some(m) => {
            let (ri, ci) = m.positions(&spec.group_by)?;
            for s in overall {
                cells.push(ReportCell::number(
                    format!(
                        "{model}: mean |error| %, {} (rows: {}, columns: {})",
                        s.validation, m.rows, m.columns
                    ),
                    &s.group_values[ri],
                    &s.group_values[ci],
                    s.mean_abs_pct,
                    "%",
                ));
            }
        }
        None => {
            // One table per scheme, in the order the schemes were given.
            let mut order: Vec<&str> = Vec::new();
            let overall: Vec<&SummaryRow> = overall.collect();
            for s in &overall {
                if !order.contains(&s.validation.as_str()) {
                    order.push(&s.validation);
                }
            }
            for validation in order {
                let title = format!("{model}, {validation}: |predicted - measured| / measured");
                for s in overall.iter().filter(|s| s.validation == validation) {
                    let row = if s.group.is_empty() { "all" } else { &s.group };
                    let mut number = |column: &str, value: f64, unit: &str| {
                        cells.push(ReportCell::number(&title, row, column, value, unit));
                    };
                    number("n", s.n as f64, "");
                    number("mean %", s.mean_abs_pct, "%");
                    number("median %", s.median_abs_pct, "%");
                    number("max %", s.max_abs_pct, "%");
                    number("negative", s.negative as f64, "");
                    number("extrapolated", s.extrapolated as f64, "");
                    number("tiny counters", s.tiny as f64, "");
                }
            }
        }
    }
    Ok(cells)
}

/// `validation_summary` from its rows.
pub fn summary_batch(model: &str, rows: &[SummaryRow]) -> Result<RecordBatch, ModelError> {
    let text = |f: &dyn Fn(&SummaryRow) -> &str| -> Arc<dyn Array> {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    let float = |f: &dyn Fn(&SummaryRow) -> f64| -> Arc<dyn Array> {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f)))
    };
    let count = |f: &dyn Fn(&SummaryRow) -> usize| -> Arc<dyn Array> {
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| f(r) as i64),
        ))
    };
    VALIDATION_SUMMARY
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| model))),
            text(&|r| &r.group),
            text(&|r| &r.validation),
            Arc::new(
                rows.iter()
                    .map(|r| r.program.as_deref())
                    .collect::<StringArray>(),
            ),
            count(&|r| r.n),
            float(&|r| r.mean_abs_pct),
            float(&|r| r.median_abs_pct),
            float(&|r| r.max_abs_pct),
            float(&|r| r.mean_ratio),
            Arc::new(
                rows.iter()
                    .map(|r| r.r2.is_finite().then_some(r.r2))
                    .collect::<Float64Array>(),
            ),
            Arc::new(rows.iter().map(|r| r.adj_r2).collect::<Float64Array>()),
            float(&|r| r.rmse_secs),
            count(&|r| r.negative),
            count(&|r| r.extrapolated),
            count(&|r| r.tiny),
        ])
        .map_err(ModelError::built)
}

/// Mean over models of each scheme's mean error, with the smallest and largest (headline figures).
pub fn scheme_ranges(summary: &[SummaryRow]) -> Vec<(String, f64, f64, f64)> {
    let mut by: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for s in summary.iter().filter(|s| s.program.is_none()) {
        if !order.contains(&s.validation.as_str()) {
            order.push(&s.validation);
        }
        by.entry(&s.validation).or_default().push(s.mean_abs_pct);
    }
    order
        .into_iter()
        .map(|v| {
            let values = &by[v];
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (v.to_owned(), mean, lo, hi)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::FeatureChoice;
    use super::super::testing::observations;
    use super::*;
    use yosoku_regression::stepwise::StepwiseOptions;
    use yosoku_tables::rows::{PredictionRow, read_predictions};

    impl Validated {
        fn rows(&self) -> Vec<PredictionRow> {
            read_predictions("predictions", &self.predictions).unwrap()
        }
    }

    fn data() -> RecordBatch {
        let mut ids = Vec::new();
        let (mut secs, mut x, mut z) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..30 {
            let program = ["p", "q", "r"][i % 3];
            let a = 10.0 + i as f64 * 3.0;
            let b = ((i * 7) % 11) as f64 + 1.0;
            ids.push(("g", program, "v"));
            secs.push(0.01 + 0.002 * a + 0.001 * b + 0.0001 * ((i * 13 % 7) as f64 - 3.0));
            x.push(a);
            z.push(b);
        }
        observations(&ids, &secs, &[("x", "count", x), ("z", "count", z)])
    }

    fn spec(method: Method) -> ModelSpec {
        ModelSpec {
            choice: FeatureChoice::default(),
            group_by: vec![],
            log_target: false,
            log_features: false,
            method,
        }
    }

    fn cv(holdouts: Vec<Holdout>) -> CrossValidation {
        CrossValidation {
            holdouts,
            tiny_threshold: 1e-3,
            matrix: None,
            published: vec![],
            standardized: None,
        }
    }

    /// `data()` with the features of every row of program `r` but row 2 changed.
    fn data_with_r_changed() -> RecordBatch {
        let mut ids = Vec::new();
        let (mut secs, mut x, mut z) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..30 {
            let program = ["p", "q", "r"][i % 3];
            let mut a = 10.0 + i as f64 * 3.0;
            let mut b = ((i * 7) % 11) as f64 + 1.0;
            ids.push(("g", program, "v"));
            secs.push(0.01 + 0.002 * a + 0.001 * b + 0.0001 * ((i * 13 % 7) as f64 - 3.0));
            if program == "r" && i != 2 {
                a = a * 40.0 + 500.0;
                b *= 9.0;
            }
            x.push(a);
            z.push(b);
        }
        observations(&ids, &secs, &[("x", "count", x), ("z", "count", z)])
    }

    /// The prediction of held-out row 2 (program `r`) when `r` is held out, the model a ridge
    /// fit on z-scored features, with the z-scores fitted `honestly` (per training set) or not.
    fn held_out_prediction(batch: &RecordBatch, honest: bool) -> f64 {
        let z = super::super::normalize::zscore(batch, &[], &[]).unwrap();
        let mut cv = cv(vec![Holdout::LeaveOneValueOut {
            columns: vec!["program".into()],
        }]);
        if honest {
            cv.standardized = Some(Standardized {
                raw: batch.clone(),
                columns: vec![],
                group_by: vec![],
            });
        }
        let v =
            cross_validate("m", &z.observations, &spec(Method::Ols { ridge: 2.0 }), &cv).unwrap();
        v.rows()[2].predicted_secs
    }

    /// A z-score fitted on all rows leaks the held-out rows into a ridge model (its penalty
    /// depends on the scale); fitted per training set, nothing of them reaches the prediction.
    #[test]
    fn standardisation_is_refitted_inside_every_training_set() {
        let (before, after) = (data(), data_with_r_changed());
        let honest = (
            held_out_prediction(&before, true),
            held_out_prediction(&after, true),
        );
        assert!(
            (honest.0 - honest.1).abs() <= 1e-10 * honest.0.abs(),
            "{honest:?}"
        );
        let leaky = (
            held_out_prediction(&before, false),
            held_out_prediction(&after, false),
        );
        assert!(
            (leaky.0 - leaky.1).abs() > 1e-3 * leaky.0.abs(),
            "{leaky:?}"
        );
        // In sample, nothing is held out: the standardised fit is the model's own.
        let z = super::super::normalize::zscore(&before, &[], &[]).unwrap();
        let mut fit_cv = cv(vec![Holdout::Fit]);
        fit_cv.standardized = Some(Standardized {
            raw: before.clone(),
            columns: vec![],
            group_by: vec![],
        });
        let with = cross_validate(
            "m",
            &z.observations,
            &spec(Method::Ols { ridge: 2.0 }),
            &fit_cv,
        )
        .unwrap();
        let without = cross_validate(
            "m",
            &z.observations,
            &spec(Method::Ols { ridge: 2.0 }),
            &cv(vec![Holdout::Fit]),
        )
        .unwrap();
        let predicted =
            |v: &Validated| -> Vec<f64> { v.rows().iter().map(|p| p.predicted_secs).collect() };
        assert_eq!(predicted(&with), predicted(&without));
    }

    #[test]
    fn standardisation_that_cannot_be_refitted_is_refused() {
        let batch = data();
        let z = super::super::normalize::zscore(&batch, &[], &["device".into()]).unwrap();
        let mut cv = cv(vec![Holdout::LeaveOneOut]);
        cv.standardized = Some(Standardized {
            raw: batch,
            columns: vec![],
            group_by: vec!["device".into()],
        });
        let e = cross_validate("m", &z.observations, &spec(Method::Ols { ridge: 1.0 }), &cv)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("standardised within groups of (device) but the model groups by ()"),
            "{e}"
        );
    }

    #[test]
    fn leave_one_out_equals_refitting_without_each_row() {
        let batch = data();
        let s = spec(Method::Ols { ridge: 0.0 });
        let loo = cross_validate("m", &batch, &s, &cv(vec![Holdout::LeaveOneOut])).unwrap();
        let n = batch.num_rows();
        let labels: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
        // Holding out each run id is leave-one-out by brute force.
        let brute = cross_validate(
            "m",
            &batch,
            &s,
            &cv(vec![Holdout::LeaveOneValueOut {
                columns: vec!["run_id".into()],
            }]),
        )
        .unwrap();
        assert_eq!(labels.len(), brute.predictions.num_rows());
        for (a, b) in loo.rows().iter().zip(&brute.rows()) {
            assert_eq!(a.run_id, b.run_id);
            let rel = (a.predicted_secs - b.predicted_secs).abs() / b.predicted_secs;
            assert!(rel < 1e-10, "{} vs {}", a.predicted_secs, b.predicted_secs);
        }
        let all = &loo.summary[0];
        assert_eq!((all.program.as_deref(), all.n), (None, 30));
        assert_eq!(loo.summary.len(), 4, "all rows, then three programs");
        assert!(all.mean_abs_pct < 1.0);
    }

    #[test]
    fn stepwise_reselects_on_every_fold() {
        let batch = data();
        let s = spec(Method::Stepwise(StepwiseOptions {
            spline_knots: None,
            interactions: false,
            ..StepwiseOptions::default()
        }));
        let out = cross_validate(
            "m",
            &batch,
            &s,
            &cv(vec![
                Holdout::LeaveOneOut,
                Holdout::KFold { folds: 5, seed: 1 },
                Holdout::LeaveOneValueOut {
                    columns: vec!["program".into()],
                },
            ]),
        )
        .unwrap();
        let names: Vec<&str> = out
            .summary
            .iter()
            .filter(|s| s.program.is_none())
            .map(|s| s.validation.as_str())
            .collect();
        assert_eq!(names, ["loo", "kfold(5)", "leave_one_out(program)"]);
        assert_eq!(out.predictions.num_rows(), 90);
        // Leave-one-out selects again without each row: as k-fold with one row per fold does.
        let one_per_fold = cross_validate(
            "m",
            &batch,
            &s,
            &cv(vec![Holdout::KFold { folds: 30, seed: 1 }]),
        )
        .unwrap();
        let by_row = |v: &Validated, scheme: &str| -> Vec<(String, f64)> {
            let mut rows: Vec<(String, f64)> = v
                .rows()
                .iter()
                .filter(|p| p.validation.as_deref() == Some(scheme))
                .map(|p| {
                    (
                        p.run_id.as_deref().unwrap_or_default().to_owned(),
                        p.predicted_secs,
                    )
                })
                .collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            rows
        };
        let (loo, kfold) = (by_row(&out, "loo"), by_row(&one_per_fold, "kfold(30)"));
        assert_eq!(loo.len(), 30);
        for ((a, p), (b, q)) in loo.iter().zip(&kfold) {
            assert_eq!(a, b);
            assert!(
                (p - q).abs() <= 1e-12 * p.abs().max(1e-12),
                "{a}: {p} vs {q}"
            );
        }
        let folds: std::collections::BTreeSet<_> = out
            .rows()
            .iter()
            .filter(|p| p.validation.as_deref() == Some("kfold(5)"))
            .filter_map(|p| p.held_out.clone())
            .collect();
        assert_eq!(folds.len(), 5);
    }

    #[test]
    fn flags_mark_extrapolation_and_tiny_counters() {
        let ids = [("g", "a", ""); 6];
        let secs = [1.0, 2.0, 3.0, 4.0, 5.0, 1e-4];
        let x = vec![100.0, 200.0, 300.0, 400.0, 500.0, 0.01];
        let batch = observations(&ids, &secs, &[("x", "count", x)]);
        let out = cross_validate(
            "m",
            &batch,
            &spec(Method::Ols { ridge: 0.0 }),
            &cv(vec![Holdout::LeaveOneOut]),
        )
        .unwrap();
        let rows = out.rows();
        let last = rows.last().unwrap();
        assert_eq!(last.flags.as_deref(), Some("extrapolated;tiny_counters"));
        assert_eq!(out.summary[0].tiny, 1);
    }

    #[test]
    fn holdouts_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!(
            Holdout::parse("kfold(10)", 7),
            Ok(Holdout::KFold { folds: 10, seed: 7 })
        );
        assert_eq!(
            Holdout::parse("leave_one_out(program, variant)", 0),
            Ok(Holdout::LeaveOneValueOut {
                columns: vec!["program".into(), "variant".into()]
            })
        );
        assert_eq!(
            Holdout::parse("kfold(1)", 0),
            Err(HoldoutError::Folds("kfold(1)".into()))
        );
        assert!(
            Holdout::parse("lopo", 0)
                .unwrap_err()
                .to_string()
                .contains("expected fit, loo")
        );
    }
}
