//! Fitting one model of run time per group of `observations` rows: least squares on the chosen
//! features (docs/methods.md, section 1) or forward/backward stepwise selection with spline terms and
//! interactions (section 4). Produces `model_coefficients`, `model_summary`, `selection_path`
//! and in-sample `predictions`.

use std::sync::Arc;

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use faer::Mat;
use yosoku_tables::{MODEL_COEFFICIENTS, MODEL_SUMMARY, SELECTION_PATH};

use yosoku_tables::report::ReportCell;

use super::report::Matrix;
use super::{FeatureChoice, Group, Observations, feature_values, group_rows};
use crate::ModelError;
use yosoku_regression::stepwise::{self, Action, Direction, Selection, StepwiseOptions};
use yosoku_regression::validate::tiny_rows_of_columns;
use yosoku_regression::{OlsFit, OlsOptions, RegressionError, ols};
use yosoku_tables::rows::{Prediction, PredictionsBuilder};

/// Adjusted R^2 below which a model is flagged (Oka et al. treat R^2 < 0.8 as insufficient).
pub const MIN_USEFUL_R2: f64 = 0.8;

/// The flag of a model whose adjusted R^2 is below [`MIN_USEFUL_R2`].
pub const R2_BELOW_FLAG: &str = "r2_below_0.8";

/// Condition number of the scaled design above which estimates are flagged as unstable.
pub const ILL_CONDITIONED: f64 = 1e3;

/// How the coefficients are found.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Least squares on every chosen feature (`ridge` > 0 adds lambda x sum beta^2).
    Ols { ridge: f64 },
    /// Stepwise selection among the chosen features, then least squares on what was selected.
    Stepwise(StepwiseOptions),
}

/// Everything that defines a model, shared by the fit and the validation that refits it; the
/// options a counter model's record holds, by name.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelSpec {
    pub choice: FeatureChoice,
    /// One model per distinct value of these text columns (e.g. `device`).
    pub group_by: Vec<String>,
    /// Regress ln(time) rather than time; predictions are exp of the fitted value (the median
    /// time, not the mean, under log-normal errors).
    pub log_target: bool,
    /// Use ln(1 + x) of every feature.
    pub log_features: bool,
    pub method: Method,
}

impl ModelSpec {
    pub fn target_name(&self) -> &'static str {
        if self.log_target {
            "ln(measured_secs)"
        } else {
            "measured_secs"
        }
    }

    fn term_name(&self, feature: &str) -> String {
        if self.log_features {
            format!("ln1p({feature})")
        } else {
            feature.to_owned()
        }
    }

    pub(crate) fn method_name(&self, fit: &OlsFit) -> String {
        let base = match &self.method {
            Method::Ols { ridge } if *ridge > 0.0 => format!("ridge({ridge})"),
            Method::Ols { .. } => "ols".to_owned(),
            Method::Stepwise(o) => match o.direction {
                Direction::Forward => "stepwise_forward".to_owned(),
                Direction::Backward => "stepwise_backward".to_owned(),
            },
        };
        format!("{base}, {}", fit.method.name())
    }

    /// The target on the modelled scale; an error names a row whose time a logarithm cannot take.
    fn target(&self, secs: &[f64]) -> Vec<f64> {
        if self.log_target {
            secs.iter().map(|s| s.ln()).collect()
        } else {
            secs.to_vec()
        }
    }

    /// A modelled value back in seconds.
    pub(crate) fn seconds(&self, value: f64) -> f64 {
        if self.log_target { value.exp() } else { value }
    }
}

/// The rows of one group, ready to fit: transformed features, target, and the times.
pub(crate) struct GroupData {
    pub group: Group,
    /// Term names of the features (transformed names).
    pub names: Vec<String>,

    /// Transformed feature values, one vector per feature over the group's rows.
    pub values: Vec<Vec<f64>>,
    /// Untransformed values, for the tiny-counter check.
    pub raw: Vec<Vec<f64>>,
    pub target: Vec<f64>,
    pub secs: Vec<f64>,
}

impl GroupData {
    pub fn columns(&self) -> Vec<&[f64]> {
        self.values.iter().map(Vec::as_slice).collect()
    }

    /// Rows whose counters are far below the group's (see [`yosoku_regression::validate::tiny_rows`]).
    pub fn tiny(&self, threshold: f64) -> Vec<bool> {
        let columns: Vec<&[f64]> = self.raw.iter().map(Vec::as_slice).collect();
        tiny_rows_of_columns(&columns, self.secs.len(), threshold)
    }
}

/// The groups of `observations` with their data.
pub(crate) fn group_data(
    obs: &Observations<'_>,
    spec: &ModelSpec,
) -> Result<Vec<GroupData>, ModelError> {
    let features = spec.choice.resolve(obs)?;
    let groups = group_rows(obs, &spec.group_by)?;
    groups
        .into_iter()
        .map(|group| {
            let values = features
                .iter()
                .map(|f| feature_values(obs, f, &group.rows, spec.log_features))
                .collect::<Result<Vec<_>, _>>()?;
            let raw = if spec.log_features {
                features
                    .iter()
                    .map(|f| feature_values(obs, f, &group.rows, false))
                    .collect::<Result<Vec<_>, _>>()?
            } else {
                values.clone()
            };
            let secs: Vec<f64> = group.rows.iter().map(|&r| obs.measured.value(r)).collect();
            Ok(GroupData {
                names: features.iter().map(|f| spec.term_name(f)).collect(),

                values,
                raw,
                target: spec.target(&secs),
                secs,
                group,
            })
        })
        .collect()
}

/// How the model's columns are made from the features.
#[derive(Debug, Clone)]
pub(crate) enum Columns {
    /// Every feature is a column.
    Features,
    /// The columns of a stepwise selection.
    Selected(Selection),
}

/// A model trained on some rows.
#[derive(Debug, Clone)]
pub(crate) struct Trained {
    pub columns: Columns,
    pub fit: OlsFit,
    /// Names of the design columns.
    pub column_names: Vec<String>,
}

impl Trained {
    /// The design matrix for rows of the features (one slice per feature).
    pub fn design(&self, features: &[&[f64]]) -> Mat<f64> {
        let n = features.first().map_or(0, |f| f.len());
        match &self.columns {
            Columns::Features => Mat::from_fn(n, features.len(), |i, j| features[j][i]),
            Columns::Selected(s) => {
                let columns = s.evaluate(features);
                Mat::from_fn(n, columns.len(), |i, j| columns[j][i])
            }
        }
    }

    /// Indices of the features the model depends on.
    pub fn used_features(&self, feature_count: usize) -> Vec<usize> {
        match &self.columns {
            Columns::Features => self
                .fit
                .kept
                .iter()
                .copied()
                .filter(|&j| j < feature_count)
                .collect(),
            Columns::Selected(s) => {
                let mut used: Vec<usize> = s
                    .sources
                    .iter()
                    .flat_map(|c| match c {
                        stepwise::ColumnSource::Feature { feature, .. } => vec![*feature],
                        stepwise::ColumnSource::Interaction { a, b, .. } => vec![*a, *b],
                    })
                    .collect();
                used.sort_unstable();
                used.dedup();
                used
            }
        }
    }
}

fn ols_options(spec: &ModelSpec, leverage: bool) -> OlsOptions {
    OlsOptions {
        ridge: match spec.method {
            Method::Ols { ridge } => ridge,
            Method::Stepwise(_) => 0.0,
        },
        leverage,
        ..OlsOptions::default()
    }
}

/// Trains the model on rows given as feature columns and a target.
pub(crate) fn train(
    spec: &ModelSpec,
    names: &[String],
    features: &[&[f64]],
    target: &[f64],
    leverage: bool,
) -> Result<Trained, RegressionError> {
    match &spec.method {
        Method::Ols { .. } => {
            let n = target.len();
            let x = Mat::from_fn(n, features.len(), |i, j| features[j][i]);
            let fit = ols(x.as_ref(), target, &ols_options(spec, leverage))?;
            Ok(Trained {
                columns: Columns::Features,
                fit,
                column_names: names.to_vec(),
            })
        }
        Method::Stepwise(options) => {
            let named: Vec<(String, Vec<f64>)> = names
                .iter()
                .cloned()
                .zip(features.iter().map(|f| f.to_vec()))
                .collect();
            let selection = stepwise::select(&named, target, options)?;
            let n = target.len();
            let x = Mat::from_fn(n, selection.columns.len(), |i, j| selection.columns[j][i]);
            let fit = ols(x.as_ref(), target, &ols_options(spec, leverage))?;
            Ok(Trained {
                column_names: selection.column_names.clone(),
                columns: Columns::Selected(selection),
                fit,
            })
        }
    }
}

/// One group's fitted model.
#[derive(Debug, Clone)]
pub struct GroupFit {
    pub group: String,
    pub group_values: Vec<String>,
    pub n: usize,
    pub method: String,
    pub r2: f64,
    pub adj_r2: f64,
    /// sqrt(SSE / n) of the fitted times, in seconds.
    pub rmse_secs: f64,
    /// sqrt(RSS / df_residual) on the modelled scale (statsmodels' sqrt(scale), R's sigma).
    pub residual_std_error: f64,
    pub condition_number: Option<f64>,
    /// (term, estimate or None when dropped, std error, t, p, status)
    pub coefficients: Vec<CoefficientRow>,
    pub dropped: Vec<String>,
    pub flags: Vec<String>,
    /// Stepwise: the path and the selected terms in order.
    pub path: Vec<stepwise::PathStep>,
    pub selected: Vec<String>,
}

/// The result of [`fit`]: each group's model, and the in-sample predictions of every row.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub groups: Vec<GroupFit>,
    /// A `predictions` table (validation `fit`).
    pub predictions: RecordBatch,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CoefficientRow {
    pub term: String,
    pub estimate: Option<f64>,
    /// estimate x sd(column) / sd(target) on the modelled scales.
    pub standardised: Option<f64>,
    pub std_error: Option<f64>,
    pub t_value: Option<f64>,
    pub p_value: Option<f64>,
    pub status: &'static str,
}

/// The sample standard deviation (n - 1).
fn std_dev(values: impl Iterator<Item = f64> + Clone) -> f64 {
    let (n, sum) = values
        .clone()
        .fold((0usize, 0.0), |(n, s), v| (n + 1, s + v));
    if n < 2 {
        return f64::NAN;
    }
    let mean = sum / n as f64;
    (values.map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Fits `spec` to every group of `observations`.
pub fn fit(
    model: &str,
    observations: &RecordBatch,
    spec: &ModelSpec,
) -> Result<Fitted, ModelError> {
    fit_trained(model, observations, spec).map(|(fitted, _)| fitted)
}

/// What [`fit`] trained: the features by name, and each group's data and model (what the saved
/// model is made from, `super::model`).
pub(crate) struct Trainings {
    pub features: Vec<String>,
    pub groups: Vec<(GroupData, Trained)>,
}

/// [`fit`], with what it trained.
pub(crate) fn fit_trained(
    model: &str,
    observations: &RecordBatch,
    spec: &ModelSpec,
) -> Result<(Fitted, Trainings), ModelError> {
    let obs = Observations::new("observations", observations)?;
    let groups = group_data(&obs, spec)?;
    check_sizes(spec, &groups)?;
    let mut out = Vec::with_capacity(groups.len());
    let mut trained_groups = Vec::with_capacity(groups.len());
    let mut predictions =
        PredictionsBuilder::with_capacity(groups.iter().map(|g| g.group.rows.len()).sum());
    for g in &groups {
        let trained = train(spec, &g.names, &g.columns(), &g.target, false).map_err(|e| {
            ModelError::invalid(format!(
                "fitting {}: {e}",
                if g.group.key.is_empty() {
                    "the model".to_owned()
                } else {
                    format!("the model of {}", g.group.key)
                }
            ))
        })?;
        out.push(group_fit(&mut predictions, model, &obs, spec, g, &trained));
        trained_groups.push(trained);
    }
    let fitted = Fitted {
        groups: out,
        predictions: predictions.finish()?,
    };
    let trainings = Trainings {
        features: spec.choice.resolve(&obs)?,
        groups: groups.into_iter().zip(trained_groups).collect(),
    };
    Ok((fitted, trainings))
}

/// Refuses what no fit can determine: no rows at all, a group of fewer than two rows, or a
/// least-squares model with fewer rows than parameters (its coefficients would be whatever the
/// pivoting left; a ridge penalty or a stepwise selection can do with fewer).
pub(crate) fn check_sizes(spec: &ModelSpec, groups: &[GroupData]) -> Result<(), ModelError> {
    if groups.is_empty() {
        return Err(ModelError::invalid(
            "input `observations` has no rows to fit",
        ));
    }
    for g in groups {
        let who = if g.group.key.is_empty() {
            "the model".to_owned()
        } else {
            format!("the model of {}", g.group.key)
        };
        let n = g.secs.len();
        let features = g.values.len();
        if n < 2 {
            return Err(ModelError::invalid(format!(
                "{who} has {n} row(s): at least 2 are needed to fit anything"
            )));
        }
        if matches!(spec.method, Method::Ols { ridge } if ridge == 0.0) && n < features + 1 {
            return Err(ModelError::invalid(format!(
                "{who} has {n} rows for {} parameters ({features} features and the intercept): too few to determine it; use fewer features, more rows, or a `ridge` penalty",
                features + 1
            )));
        }
    }
    Ok(())
}

/// One group's model; its in-sample predictions are appended to `predictions`.
fn group_fit(
    predictions: &mut PredictionsBuilder,
    model: &str,
    obs: &Observations<'_>,
    spec: &ModelSpec,
    g: &GroupData,
    trained: &Trained,
) -> GroupFit {
    let fit = &trained.fit;
    let design = trained.design(&g.columns());
    let sd_target = std_dev(g.target.iter().copied());
    let mut coefficients = vec![CoefficientRow {
        term: "(intercept)".to_owned(),
        estimate: Some(fit.intercept),
        standardised: None,
        std_error: finite(fit.intercept_std_error),
        t_value: finite(fit.intercept / fit.intercept_std_error),
        p_value: finite(fit.intercept_p_value),
        status: "kept",
    }];
    let mut dropped = Vec::new();
    for (j, name) in trained.column_names.iter().enumerate() {
        match fit.kept.iter().position(|&k| k == j) {
            Some(k) => coefficients.push(CoefficientRow {
                term: name.clone(),
                estimate: Some(fit.coefficients[k]),
                standardised: finite(
                    fit.coefficients[k] * std_dev((0..design.nrows()).map(|i| design[(i, j)]))
                        / sd_target,
                )
                .filter(|_| sd_target > 0.0),
                std_error: fit.std_errors.get(k).copied().and_then(finite),
                t_value: fit.t_values.get(k).copied().and_then(finite),
                p_value: fit.p_values.get(k).copied().and_then(finite),
                status: "kept",
            }),
            None => {
                let column: Vec<f64> = (0..design.nrows()).map(|i| design[(i, j)]).collect();
                let constant = column.iter().all(|v| *v == column[0]);
                dropped.push(name.clone());
                coefficients.push(CoefficientRow {
                    term: name.clone(),
                    estimate: None,
                    standardised: None,
                    std_error: None,
                    t_value: None,
                    p_value: None,
                    status: if constant { "constant" } else { "collinear" },
                });
            }
        }
    }
    let predicted: Vec<f64> = fit.fitted.iter().map(|v| spec.seconds(*v)).collect();
    let rmse_secs = (g
        .secs
        .iter()
        .zip(&predicted)
        .map(|(a, p)| (a - p).powi(2))
        .sum::<f64>()
        / g.secs.len() as f64)
        .sqrt();
    let mut flags = Vec::new();
    if fit.adj_r2.is_finite() && fit.adj_r2 < MIN_USEFUL_R2 {
        flags.push(R2_BELOW_FLAG.to_owned());
    }
    if fit.condition_number > ILL_CONDITIONED {
        flags.push("ill_conditioned".to_owned());
    }
    if coefficients.iter().any(|c| c.status == "collinear") {
        flags.push("rank_deficient".to_owned());
    }
    let (path, selected, condition_number) = match &trained.columns {
        Columns::Features => (Vec::new(), Vec::new(), Some(fit.condition_number)),
        Columns::Selected(s) => (s.path.clone(), s.terms.clone(), Some(fit.condition_number)),
    };
    let model_group = (!g.group.key.is_empty()).then_some(g.group.key.as_str());
    let shared = predictions.shared(model, "kernel", model_group, Some("fit"));
    for (&r, &p) in g.group.rows.iter().zip(&predicted) {
        let secs = obs.measured.value(r);
        // model, phase, model_group and validation: `shared`.
        predictions.append_sharing(
            shared,
            &Prediction {
                model,
                device: obs.device.value(r),
                program: obs.program.value(r),
                variant: obs.variant.value(r),
                phase: "kernel",
                repetitions: 1,
                predicted_secs: p,
                measured_secs: Some(secs),
                error_pct: Some(yosoku_tables::rows::error_pct(p, secs)),
                flags: if p < 0.0 {
                    Some("negative")
                } else if p.is_infinite() {
                    Some("overflow")
                } else {
                    None
                },
                run_id: Some(obs.run_id.value(r)),
                model_group,
                validation: Some("fit"),
                held_out: None,
                interval_secs: None,
            },
        );
    }
    GroupFit {
        group: g.group.key.clone(),
        group_values: g.group.values.clone(),
        n: g.secs.len(),
        method: spec.method_name(fit),
        r2: fit.r2,
        adj_r2: fit.adj_r2,
        rmse_secs,
        residual_std_error: fit.sigma,
        condition_number,
        coefficients,
        dropped,
        flags,
        path,
        selected,
    }
}

/// The report cells of a fit: with `matrix`, adjusted R^2 and (stepwise) the selected terms
/// as matrices over two grouping columns; otherwise one row per model.
pub fn fit_report(
    model: &str,
    spec: &ModelSpec,
    fits: &[GroupFit],
    matrix: Option<&Matrix>,
) -> Result<Vec<ReportCell>, ModelError> {
    let stepwise = matches!(spec.method, Method::Stepwise(_));
    let mut cells = Vec::new();
    match matrix {
        Some(m) => {
            let (ri, ci) = m.positions(&spec.group_by)?;
            for f in fits {
                let (row, column) = (&f.group_values[ri], &f.group_values[ci]);
                cells.push(ReportCell::number(
                    format!("{model}: adjusted R²"),
                    row,
                    column,
                    f.adj_r2,
                    "",
                ));
                if stepwise {
                    cells.push(ReportCell::text(
                        format!(
                            "{model}: first {SHOWN_TERMS} selected terms, in order of entry{}",
                            if spec.log_features {
                                " (each as ln(1 + x))"
                            } else {
                                ""
                            }
                        ),
                        row,
                        column,
                        shown_terms(spec, &f.selected),
                    ));
                }
            }
        }
        None => {
            let title = format!("{model}: fit of {}", spec.target_name());
            for f in fits {
                let row = if f.group.is_empty() { "all" } else { &f.group };
                cells.push(ReportCell::number(&title, row, "n", f.n as f64, ""));
                cells.push(ReportCell::number(&title, row, "R²", f.r2, ""));
                cells.push(ReportCell::number(&title, row, "adjusted R²", f.adj_r2, ""));
                if let Some(c) = f.condition_number {
                    cells.push(ReportCell::number(&title, row, "condition", c, ""));
                }
                cells.push(ReportCell::text(
                    &title,
                    row,
                    if stepwise { "selected" } else { "dropped" },
                    if stepwise {
                        shown_terms(spec, &f.selected)
                    } else {
                        f.dropped.join(", ")
                    },
                ));
            }
        }
    }
    Ok(cells)
}

/// Selected terms a report shows (the whole path is in `selection_path`).
const SHOWN_TERMS: usize = 4;

/// The first selected terms by their feature names, and how many more there are.
fn shown_terms(spec: &ModelSpec, selected: &[String]) -> String {
    let name = |t: &String| {
        if spec.log_features {
            t.split('*')
                .map(|part| {
                    part.strip_prefix("ln1p(")
                        .and_then(|p| p.strip_suffix(')'))
                        .unwrap_or(part)
                })
                .collect::<Vec<_>>()
                .join("*")
        } else {
            t.clone()
        }
    };
    let mut text: Vec<String> = selected.iter().take(SHOWN_TERMS).map(name).collect();
    if selected.len() > SHOWN_TERMS {
        text.push(format!("+{} more", selected.len() - SHOWN_TERMS));
    }
    if text.is_empty() {
        "(none)".to_owned()
    } else {
        text.join(", ")
    }
}

/// `model_coefficients` of fits.
pub fn coefficients_batch(model: &str, fits: &[GroupFit]) -> Result<RecordBatch, ModelError> {
    let rows: Vec<(&GroupFit, &CoefficientRow)> = fits
        .iter()
        .flat_map(|f| f.coefficients.iter().map(move |c| (f, c)))
        .collect();
    let opt = |f: &dyn Fn(&CoefficientRow) -> Option<f64>| -> Arc<dyn Array> {
        Arc::new(rows.iter().map(|(_, c)| f(c)).collect::<Float64Array>())
    };
    MODEL_COEFFICIENTS
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| model))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(f, _)| f.group.as_str()),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(_, c)| c.term.as_str()),
            )),
            opt(&|c| c.estimate),
            opt(&|c| c.standardised),
            opt(&|c| c.std_error),
            opt(&|c| c.t_value),
            opt(&|c| c.p_value),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(_, c)| c.status),
            )),
        ])
        .map_err(ModelError::built)
}

/// `model_summary` of fits.
pub fn summary_batch(
    model: &str,
    spec: &ModelSpec,
    fits: &[GroupFit],
) -> Result<RecordBatch, ModelError> {
    let text = |f: &dyn Fn(&GroupFit) -> String| -> Arc<dyn Array> {
        Arc::new(StringArray::from_iter_values(fits.iter().map(f)))
    };
    MODEL_SUMMARY
        .batch(vec![
            text(&|_| model.to_owned()),
            text(&|f| f.group.clone()),
            text(&|f| f.method.clone()),
            text(&|_| spec.target_name().to_owned()),
            Arc::new(Int64Array::from_iter_values(
                fits.iter().map(|f| f.n as i64),
            )),
            Arc::new(Int64Array::from_iter_values(fits.iter().map(|f| {
                f.coefficients.iter().filter(|c| c.status == "kept").count() as i64 - 1
            }))),
            Arc::new(fits.iter().map(|f| finite(f.r2)).collect::<Float64Array>()),
            Arc::new(
                fits.iter()
                    .map(|f| finite(f.adj_r2))
                    .collect::<Float64Array>(),
            ),
            Arc::new(Float64Array::from_iter_values(
                fits.iter().map(|f| f.rmse_secs),
            )),
            Arc::new(
                fits.iter()
                    .map(|f| finite(f.residual_std_error))
                    .collect::<Float64Array>(),
            ),
            Arc::new(
                fits.iter()
                    .map(|f| f.condition_number.and_then(finite))
                    .collect::<Float64Array>(),
            ),
            text(&|f| f.dropped.join(", ")),
            Arc::new(
                fits.iter()
                    .map(|f| crate::join_flags(&f.flags))
                    .collect::<StringArray>(),
            ),
        ])
        .map_err(ModelError::built)
}

/// `selection_path` of stepwise fits (empty for least squares).
pub fn path_batch(model: &str, fits: &[GroupFit]) -> Result<RecordBatch, ModelError> {
    let rows: Vec<(&GroupFit, &stepwise::PathStep)> = fits
        .iter()
        .flat_map(|f| f.path.iter().map(move |p| (f, p)))
        .collect();
    SELECTION_PATH
        .batch(vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|_| model))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(f, _)| f.group.as_str()),
            )),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|(_, p)| p.step as i64),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(_, p)| action_name(p.action)),
            )),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(_, p)| p.term.as_str()),
            )),
            Arc::new(Float64Array::from_iter_values(
                rows.iter().map(|(_, p)| p.r2),
            )),
            Arc::new(
                rows.iter()
                    .map(|(_, p)| finite(p.adj_r2))
                    .collect::<Float64Array>(),
            ),
            Arc::new(Int64Array::from_iter_values(
                rows.iter().map(|(_, p)| p.columns as i64),
            )),
        ])
        .map_err(ModelError::built)
}

fn action_name(action: Action) -> &'static str {
    match action {
        Action::Start => "start",
        Action::Add => "add",
        Action::Remove => "remove",
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::observations;
    use super::*;

    fn linear_data() -> RecordBatch {
        // time = 1e-3 + 2e-6 inst + 5e-7 gst on device a; times 2 on device b.
        let mut ids = Vec::new();
        let mut secs = Vec::new();
        let (mut inst, mut gst, mut same) = (Vec::new(), Vec::new(), Vec::new());
        for (d, factor) in [("a", 1.0), ("b", 2.0)] {
            for i in 0..12 {
                let x = 100.0 * (i + 1) as f64;
                let z = ((i * 7) % 5) as f64 * 300.0;
                ids.push((d, if i % 2 == 0 { "p" } else { "q" }, "v"));
                secs.push(factor * (1e-3 + 2e-6 * x + 5e-7 * z));
                inst.push(x);
                gst.push(z);
                same.push(2.0 * x);
            }
        }
        let ids: Vec<(&str, &str, &str)> = ids;
        observations(
            &ids,
            &secs,
            &[
                ("inst", "count", inst),
                ("gst", "count", gst),
                ("inst2", "count", same),
            ],
        )
    }

    /// Plain least squares, one model per device, every count feature.
    fn ols_per_device() -> ModelSpec {
        ModelSpec {
            choice: FeatureChoice::default(),
            group_by: vec!["device".into()],
            log_target: false,
            log_features: false,
            method: Method::Ols { ridge: 0.0 },
        }
    }

    #[test]
    fn a_group_with_fewer_rows_than_parameters() {
        let batch = observations(
            &[("a", "p", "1"), ("a", "p", "2"), ("a", "p", "3")],
            &[1.0, 2.0, 3.5],
            &[
                ("x", "count", vec![1.0, 2.0, 3.0]),
                ("y", "count", vec![3.0, 1.0, 2.0]),
                ("z", "count", vec![5.0, 5.5, 7.0]),
            ],
        );
        let spec = |ridge: f64| ModelSpec {
            choice: FeatureChoice::default(),
            group_by: vec!["device".into()],
            log_target: false,
            log_features: false,
            method: Method::Ols { ridge },
        };
        let e = fit("m", &batch, &spec(0.0)).unwrap_err().to_string();
        assert_eq!(
            e,
            "the model of device=a has 3 rows for 4 parameters (3 features and the intercept): too few to determine it; use fewer features, more rows, or a `ridge` penalty"
        );
        // A ridge penalty determines it.
        assert!(fit("m", &batch, &spec(1.0)).is_ok());
        let empty = batch.slice(0, 0);
        let e = fit("m", &empty, &spec(0.0)).unwrap_err().to_string();
        assert_eq!(e, "input `observations` has no rows to fit");
    }
    #[test]
    fn one_model_per_group_recovers_the_coefficients_and_reports_the_collinear_column() {
        let spec = ols_per_device();
        let fitted = fit("m", &linear_data(), &spec).unwrap();
        let fits = &fitted.groups;
        assert_eq!(fits.len(), 2);
        let b = &fits[1];
        assert_eq!(b.group, "device=b");
        let coef = |t: &str| b.coefficients.iter().find(|c| c.term == t).unwrap();
        assert!((coef("inst").estimate.unwrap() - 4e-6).abs() < 1e-15);
        assert!((coef("gst").estimate.unwrap() - 1e-6).abs() < 1e-15);
        assert_eq!(coef("inst2").status, "collinear");
        assert!(b.flags.contains(&"rank_deficient".to_owned()));
        assert!((b.r2 - 1.0).abs() < 1e-12);
        assert_eq!(fitted.predictions.num_rows(), 24);
    }

    #[test]
    fn standardised_estimates_are_beta_weights() {
        let spec = ols_per_device();
        let fits = fit("m", &linear_data(), &spec).unwrap().groups;
        let b = &fits[1];
        let coef = |t: &str| b.coefficients.iter().find(|c| c.term == t).unwrap();
        let (inst, gst): (Vec<f64>, Vec<f64>) = (0..12)
            .map(|i| (100.0 * (i + 1) as f64, ((i * 7) % 5) as f64 * 300.0))
            .unzip();
        let secs: Vec<f64> = inst
            .iter()
            .zip(&gst)
            .map(|(x, z)| 2.0 * (1e-3 + 2e-6 * x + 5e-7 * z))
            .collect();
        let sd = |v: &[f64]| std_dev(v.iter().copied());
        let expected = 4e-6 * sd(&inst) / sd(&secs);
        assert!((coef("inst").standardised.unwrap() - expected).abs() < 1e-12);
        let expected = 1e-6 * sd(&gst) / sd(&secs);
        assert!((coef("gst").standardised.unwrap() - expected).abs() < 1e-12);
        assert_eq!(coef("(intercept)").standardised, None);
        assert_eq!(coef("inst2").standardised, None);
        // With one feature, the beta weight is the correlation of feature and target.
        let spec = ModelSpec {
            choice: FeatureChoice {
                features: Some(vec!["inst".into()]),
                ..FeatureChoice::default()
            },
            ..spec
        };
        let one = &fit("m", &linear_data(), &spec).unwrap().groups[1];
        let n = inst.len() as f64;
        let (mx, my) = (inst.iter().sum::<f64>() / n, secs.iter().sum::<f64>() / n);
        let cov: f64 = inst
            .iter()
            .zip(&secs)
            .map(|(x, y)| (x - mx) * (y - my))
            .sum::<f64>()
            / (n - 1.0);
        let r = cov / (sd(&inst) * sd(&secs));
        let beta = one.coefficients.iter().find(|c| c.term == "inst").unwrap();
        assert!(
            (beta.standardised.unwrap() - r).abs() < 1e-12,
            "{beta:?} vs r = {r}"
        );
    }
}
