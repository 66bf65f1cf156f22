//! What `ols` and `stepwise` share: the fit step over an `observations` table, one model per
//! group, its model checked and defined, and its figures.

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::counters::FeatureChoice;
use yosoku_models::counters::fit::{self, GroupFit, Method, ModelSpec, R2_BELOW_FLAG};
use yosoku_models::counters::model::{CounterRegression, fit_and_save};
use yosoku_models::counters::report::Matrix;
use yosoku_tables::report::report_batch;
use yosoku_tables::{
    Figure, MODEL_COEFFICIENTS, MODEL_SUMMARY, PREDICTIONS, REPORT, SELECTION_PATH,
};

use crate::steps::step::{
    DefinedModel, KeyGroup, ModelDefinition, ParamError, Step, StepContext, StepError, StepOutput,
    TableRef, TrainingTable, names,
};

/// The keys every counter fit step (`ols`, `stepwise`) has, read once as a group beside each
/// kind's own (`StepKind::grouped`): the table, which features (docs/pipelines.md, "Which
/// features a fit uses"), the groups, the logarithms and the matrix report. Each is refused at
/// its line and column when its value is not one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitKeys {
    pub observations: TableRef,
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub log_target: bool,
    #[serde(default)]
    pub log_features: bool,
    pub matrix: Option<MatrixSpec>,
}

impl KeyGroup for FitKeys {
    const KEYS: &'static [&'static str] = &[
        "observations",
        "features",
        "kinds",
        "exclude",
        "group_by",
        "log_target",
        "log_features",
        "matrix",
    ];
}

impl FitKeys {
    /// The fit step of these keys fitting by `method`.
    pub(super) fn into_fit(self, method: Method) -> Result<Fit, ParamError> {
        let spec = ModelSpec {
            choice: FeatureChoice {
                features: self.features,
                kinds: self.kinds,
                exclude: self.exclude,
            },
            group_by: self.group_by,
            log_target: self.log_target,
            log_features: self.log_features,
            method,
        };
        Fit::new(self.observations, spec, self.matrix.as_ref())
    }
}

/// Rows and columns of a matrix report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    pub rows: String,
    pub columns: String,
}

impl MatrixSpec {
    pub(super) fn matrix(&self) -> Matrix {
        Matrix {
            rows: self.rows.clone(),
            columns: self.columns.clone(),
        }
    }
}

/// A matrix lays out statistics over two of the model's `group_by` columns.
pub(super) fn check_matrix(matrix: Option<&Matrix>, group_by: &[String]) -> Result<(), ParamError> {
    match matrix {
        Some(m) => m
            .positions(group_by)
            .map(|_| ())
            .map_err(|e| ParamError::new("matrix", e.to_string())),
        None => Ok(()),
    }
}

/// The counter model `model` defines, or what it is instead.
pub(super) fn counter_model(model: &ModelDefinition) -> Result<&ModelSpec, String> {
    model.counters().ok_or_else(|| {
        format!(
            "names {}; cross-validation refits an `ols` or `stepwise` fit step",
            model.family()
        )
    })
}

/// A fit step, `ols` or `stepwise`, with its model checked.
#[derive(Debug)]
pub struct Fit {
    observations: TableRef,
    spec: ModelSpec,
    matrix: Option<Matrix>,
}

impl Fit {
    pub(super) fn new(
        observations: TableRef,
        spec: ModelSpec,
        matrix: Option<&MatrixSpec>,
    ) -> Result<Self, ParamError> {
        let matrix = matrix.map(MatrixSpec::matrix);
        check_matrix(matrix.as_ref(), &spec.group_by)?;
        Ok(Self {
            observations,
            spec,
            matrix,
        })
    }

    fn definition(&self) -> ModelDefinition {
        ModelDefinition {
            observations: self.observations.get_ref().clone(),
            model: DefinedModel::Counters(self.spec.clone()),
        }
    }
}

impl Step for Fit {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        match self.spec.method {
            Method::Ols { .. } => {
                names(&[&MODEL_COEFFICIENTS, &MODEL_SUMMARY, &PREDICTIONS, &REPORT])
            }
            Method::Stepwise(_) => names(&[
                &MODEL_COEFFICIENTS,
                &MODEL_SUMMARY,
                &SELECTION_PATH,
                &PREDICTIONS,
                &REPORT,
            ]),
        }
    }

    fn model_definition(&self) -> Option<ModelDefinition> {
        Some(self.definition())
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (
            fit::Fitted {
                groups: fits,
                predictions,
            },
            model,
        ) = fit_and_save(cx.id, cx.input(&self.observations)?, &self.spec)?;
        let report = fit::fit_report(cx.id, &self.spec, &fits, self.matrix.as_ref())?;
        let mut out = StepOutput::new()
            .table(&MODEL_COEFFICIENTS, fit::coefficients_batch(cx.id, &fits)?)
            .table(
                &MODEL_SUMMARY,
                fit::summary_batch(cx.id, &self.spec, &fits)?,
            );
        if matches!(self.spec.method, Method::Stepwise(_)) {
            out = out.table(&SELECTION_PATH, fit::path_batch(cx.id, &fits)?);
        }
        Ok(out
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report_batch(&report)?)
            .figures(fit_figures(&fits))
            .model(self.definition())
            .saved_model(
                CounterRegression::KIND,
                TrainingTable::Input(self.observations.get_ref().clone()),
                &[&MODEL_COEFFICIENTS, &MODEL_SUMMARY],
            )
            .saved_parameters(
                CounterRegression::options_record(&self.spec)?,
                model.to_json()?,
            ))
    }
}

/// Per model R^2 and adjusted R^2 (not headline), and how many models fall below 0.8.
pub(super) fn fit_figures(fits: &[GroupFit]) -> Vec<Figure> {
    let mut figures = vec![Figure::new("models fitted", fits.len() as f64, "").headline()];
    let weak = fits
        .iter()
        .filter(|f| f.flags.iter().any(|x| x == R2_BELOW_FLAG))
        .count();
    figures.push(Figure::new("models with adjusted R² < 0.8", weak as f64, "").headline());
    for f in fits {
        let who = if f.group.is_empty() {
            "model"
        } else {
            &f.group
        };
        figures.push(Figure::new(format!("{who}: R²"), f.r2, ""));
        figures.push(Figure::new(format!("{who}: adjusted R²"), f.adj_r2, ""));
    }
    figures
}
