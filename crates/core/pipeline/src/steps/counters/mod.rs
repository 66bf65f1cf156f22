//! Counter models: least squares and stepwise selection of run time on counters, one model per
//! group, and their out-of-sample validation (docs/methods.md, sections 1 and 4).

mod normalize;
mod overhead;
mod throughput;

pub(crate) use normalize::{
    AGGREGATE, CROSS_DEVICE, DERIVE, MERGE_COUNTERS, PIVOT_COUNTERS, ZSCORE,
};
pub(crate) use overhead::OVERHEAD;
pub(crate) use throughput::THROUGHPUT;

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::counters::fit::{self, GroupFit, Method, ModelSpec, R2_BELOW_FLAG};
use yosoku_models::counters::report::{Matrix, Published};
use yosoku_models::counters::{FeatureChoice, crossval};
use yosoku_regression::stepwise::{Direction, StepwiseOptions};
use yosoku_tables::report::report_batch;
use yosoku_tables::{
    Figure, MODEL_COEFFICIENTS, MODEL_SUMMARY, PREDICTIONS, REPORT, SELECTION_PATH,
    VALIDATION_SUMMARY,
};

use crate::steps::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, TrainingTable, names, non_negative,
};

pub(crate) const OLS: StepKind = StepKind::new::<OlsParams>(
    "ols",
    Stage::Fit,
    "least squares of time on the chosen features, one model per group",
);
pub(crate) const STEPWISE: StepKind = StepKind::new::<StepwiseParams>(
    "stepwise",
    Stage::Fit,
    "forward or backward selection by adjusted R^2 with spline terms and interactions",
);
pub(crate) const CROSS_VALIDATE: StepKind = StepKind::new::<CrossValidateParams>(
    "cross_validate",
    Stage::Validate,
    "out-of-sample predictions of a fitted model",
);

/// Above this mean |error| when a program is held out, a model is reported as unable to
/// predict programs it was not fitted on: its predictions are off by more than half.
const GENERALISES_BELOW_PCT: f64 = 50.0;

/// Rows and columns of a matrix report.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSpec {
    pub rows: String,
    pub columns: String,
}

impl MatrixSpec {
    fn matrix(&self) -> Matrix {
        Matrix {
            rows: self.rows.clone(),
            columns: self.columns.clone(),
        }
    }
}

/// A matrix lays out statistics over two of the model's `group_by` columns.
fn check_matrix(matrix: Option<&Matrix>, group_by: &[String]) -> Result<(), ParamError> {
    match matrix {
        Some(m) => m
            .positions(group_by)
            .map(|_| ())
            .map_err(|e| ParamError::new("matrix", e.to_string())),
        None => Ok(()),
    }
}

/// The counter model `model` defines, or what it is instead.
fn counter_model(model: &ModelDefinition) -> Result<&ModelSpec, String> {
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
    fn new(
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
        let fit::Fitted {
            groups: fits,
            predictions,
        } = fit::fit(cx.id, cx.input(&self.observations)?, &self.spec)?;
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
                yosoku_models::counters::MODEL_KIND,
                TrainingTable::Input(self.observations.get_ref().clone()),
                &[&MODEL_COEFFICIENTS, &MODEL_SUMMARY],
            ))
    }
}

/// Per model R^2 and adjusted R^2 (not headline), and how many models fall below 0.8.
fn fit_figures(fits: &[GroupFit]) -> Vec<Figure> {
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

/// `ols`: least squares of time on the chosen features, one model per group. Produces
/// `model_coefficients`, `model_summary`, `predictions` (in sample) and `report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OlsParams {
    pub observations: TableRef,
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub ridge: f64,
    #[serde(default)]
    pub log_target: bool,
    #[serde(default)]
    pub log_features: bool,
    pub matrix: Option<MatrixSpec>,
}

impl StepParams for OlsParams {
    type Step = Fit;
    fn into_step(self) -> Result<Fit, ParamError> {
        non_negative("ridge", self.ridge)?;
        let spec = ModelSpec {
            choice: FeatureChoice {
                features: self.features,
                kinds: self.kinds,
                exclude: self.exclude,
            },
            group_by: self.group_by,
            log_target: self.log_target,
            log_features: self.log_features,
            method: Method::Ols { ridge: self.ridge },
        };
        Fit::new(self.observations, spec, self.matrix.as_ref())
    }
}

/// The direction of a stepwise selection, as written.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirectionParam {
    #[default]
    Forward,
    Backward,
}

fn default_knots() -> usize {
    4
}

fn default_true() -> bool {
    true
}

fn default_max_interactions() -> usize {
    45
}

/// `stepwise`: forward (or backward) selection by adjusted R^2 with spline terms and
/// interactions, one model per group. Produces what `ols` does and `selection_path`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepwiseParams {
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
    #[serde(default)]
    pub direction: DirectionParam,
    /// Knots of each counter's natural cubic spline; below 3 for linear terms.
    #[serde(default = "default_knots")]
    pub spline_knots: usize,
    #[serde(default = "default_true")]
    pub interactions: bool,
    #[serde(default = "default_max_interactions")]
    pub max_interactions: usize,
    pub max_terms: Option<usize>,
    pub matrix: Option<MatrixSpec>,
}

impl StepParams for StepwiseParams {
    type Step = Fit;
    fn into_step(self) -> Result<Fit, ParamError> {
        if self.max_terms == Some(0) {
            return Err(ParamError::new(
                "max_terms",
                "`max_terms` must be at least 1 (leave it out for no cap)",
            ));
        }
        let spec = ModelSpec {
            choice: FeatureChoice {
                features: self.features,
                kinds: self.kinds,
                exclude: self.exclude,
            },
            group_by: self.group_by,
            log_target: self.log_target,
            log_features: self.log_features,
            method: Method::Stepwise(StepwiseOptions {
                direction: match self.direction {
                    DirectionParam::Forward => Direction::Forward,
                    DirectionParam::Backward => Direction::Backward,
                },
                spline_knots: (self.spline_knots >= 3).then_some(self.spline_knots),
                interactions: self.interactions,
                max_interactions: self.max_interactions,
                max_terms: self.max_terms,
                full_path: false,
            }),
        };
        Fit::new(self.observations, spec, self.matrix.as_ref())
    }
}

/// A published figure printed beside the computed ones.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSpec {
    pub row: String,
    /// A column of the step's first report table; without it, a `published` column.
    pub column: Option<String>,
    pub value: Option<f64>,
    pub text: Option<String>,
}

/// The published figures of a step's `published` key, each with exactly one of value and text.
pub(crate) fn published(specs: Vec<PublishedSpec>) -> Result<Vec<Published>, ParamError> {
    let mut published = Vec::with_capacity(specs.len());
    for p in specs {
        if p.value.is_none() == p.text.is_none() {
            return Err(ParamError::new(
                "published",
                format!(
                    "published figure `{}`: give exactly one of `value` and `text`",
                    p.row
                ),
            ));
        }
        published.push(Published {
            row: p.row,
            column: p.column,
            value: p.value,
            text: p.text,
        });
    }
    Ok(published)
}

fn default_holdouts() -> Vec<String> {
    vec!["loo".to_owned()]
}

fn default_tiny_threshold() -> f64 {
    1e-3
}

/// `cross_validate`: out-of-sample predictions of a fitted model (`model` = the fit step's id).
/// Produces `predictions`, `validation_summary` and `report`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossValidateParams {
    pub model: Spanned<String>,
    /// `fit`, `loo`, `kfold(<k>)`, `leave_one_out(<column>)`.
    #[serde(default = "default_holdouts")]
    pub holdouts: Vec<String>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_tiny_threshold")]
    pub tiny_threshold: f64,
    pub matrix: Option<MatrixSpec>,
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

/// A `cross_validate` step, its validation settings parsed.
#[derive(Debug)]
pub struct CrossValidate {
    model: Spanned<String>,
    cv: crossval::CrossValidation,
}

impl StepParams for CrossValidateParams {
    type Step = CrossValidate;
    fn into_step(self) -> Result<CrossValidate, ParamError> {
        let holdouts = self
            .holdouts
            .iter()
            .map(|h| crossval::Holdout::parse(h, self.seed))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|m| ParamError::new("holdouts", format!("`holdouts`: {m}")))?;
        if holdouts.is_empty() {
            return Err(ParamError::new(
                "holdouts",
                "`holdouts` is empty: name at least one, e.g. [\"loo\"]",
            ));
        }
        non_negative("tiny_threshold", self.tiny_threshold)?;
        let published = published(self.published)?;
        Ok(CrossValidate {
            model: self.model,
            cv: crossval::CrossValidation {
                holdouts,
                tiny_threshold: self.tiny_threshold,
                matrix: self.matrix.as_ref().map(MatrixSpec::matrix),
                published,
                standardized: None,
            },
        })
    }
}

impl Step for CrossValidate {
    fn inputs(&self) -> Vec<&TableRef> {
        // The model's table is checked through the model reference.
        vec![]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&PREDICTIONS, &VALIDATION_SUMMARY, &REPORT])
    }

    fn model_input(&self) -> Option<&Spanned<String>> {
        Some(&self.model)
    }

    fn check_model(&self, model: &ModelDefinition) -> Result<(), ParamError> {
        let spec = counter_model(model).map_err(|e| ParamError::new("model", e))?;
        check_matrix(self.cv.matrix.as_ref(), &spec.group_by)
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (model, observations) = cx.model_observations(&self.model)?;
        let mut cv = self.cv.clone();
        cv.standardized = standardized(cx, &model.observations)?;
        let spec = counter_model(model).map_err(StepError::Invalid)?;
        let validated = crossval::cross_validate(cx.id, observations, spec, &cv)?;
        let mut figures = Vec::new();
        let ranges = crossval::scheme_ranges(&validated.summary);
        // The question users ask most: does the model predict a program it has never seen?
        // Said in words, beside the numbers, whenever a program was held out.
        if let Some((scheme, mean, _, _)) = ranges
            .iter()
            .find(|(scheme, ..)| scheme == "leave_one_out(program)")
        {
            let verdict = if *mean > GENERALISES_BELOW_PCT {
                format!("cannot predict unseen programs ({scheme} > {GENERALISES_BELOW_PCT} %)")
            } else {
                format!("predicts unseen programs ({scheme} <= {GENERALISES_BELOW_PCT} %)")
            };
            figures.push(Figure::new(verdict, *mean, "%").headline());
        }
        for (scheme, mean, lo, hi) in ranges {
            figures.push(
                Figure::new(
                    format!("{scheme}: mean |error|, mean over models"),
                    mean,
                    "%",
                )
                .headline(),
            );
            figures.push(
                Figure::new(format!("{scheme}: mean |error|, best model"), lo, "%").headline(),
            );
            figures.push(
                Figure::new(format!("{scheme}: mean |error|, worst model"), hi, "%").headline(),
            );
        }
        let negative: usize = validated
            .summary
            .iter()
            .filter(|r| r.program.is_none())
            .map(|r| r.negative)
            .sum();
        figures.push(Figure::new("negative predictions", negative as f64, "").headline());
        Ok(StepOutput::new()
            .table(&PREDICTIONS, validated.predictions)
            .table(
                &VALIDATION_SUMMARY,
                crossval::summary_batch(cx.id, &validated.summary)?,
            )
            .table(&REPORT, report_batch(&validated.report)?)
            .figures(figures))
    }
}

/// How the model's table was standardised, when a `zscore` step made it: validation refits the
/// standardisation inside every training set, from the table before. A standardisation further
/// upstream (a `zscore` followed by other steps) cannot be refitted per training set, and is
/// refused rather than validated with the held-out rows in its scaling.
fn standardized(
    cx: &StepContext<'_>,
    table: &str,
) -> Result<Option<crossval::Standardized>, StepError> {
    if let Some(s) = cx.tables.standardization(table) {
        let raw = cx.tables.get(&s.input).ok_or_else(|| {
            StepError::Invalid(format!(
                "the table `{}` that `{table}` standardises is gone",
                s.input
            ))
        })?;
        return Ok(Some(crossval::Standardized {
            raw: raw.clone(),
            columns: s.columns.clone(),
            group_by: s.group_by.clone(),
        }));
    }
    match cx
        .tables
        .ancestors(table)
        .into_iter()
        .find(|a| cx.tables.standardization(a).is_some())
    {
        Some(upstream) => Err(StepError::Invalid(format!(
            "the model's observations `{table}` are made from `{upstream}`, which a `zscore` step standardised over all rows, held-out rows included; validation refits the standardisation inside every training set only when the `zscore` step feeds the fit directly: move it just before the fit"
        ))),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::testing::{
        observations, observations_of, parse_error, run_error, run_steps, run_steps_with_figures,
    };

    /// time = 1 + 2 x inst on two devices, with a second counter of noise.
    fn data() -> arrow_array::RecordBatch {
        observations(
            &["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"],
            &[3.0, 5.1, 6.9, 9.0, 11.05, 3.0, 5.0, 7.1, 8.9, 11.0],
            &[
                ("inst", &[1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
                ("gld", &[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0]),
            ],
        )
    }

    const FIT: &str = "[[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"src.observations\"\nfeatures = [\"inst\"]\ngroup_by = [\"device\"]\n";

    #[test]
    fn validation_refits_the_model_the_fit_step_defined() {
        let set = run_steps(
            &format!("{FIT}[[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nholdouts = [\"loo\", \"kfold(5)\"]"),
            vec![("observations", data())],
        )
        .unwrap();
        let definition = set.model("fit").unwrap();
        assert_eq!(definition.observations, "src.observations");
        assert_eq!(definition.counters().unwrap().group_by, ["device"]);
        // Two models (devices) x two hold-out schemes, each over all its rows.
        let predictions = set.get("cv.predictions").unwrap();
        assert_eq!(predictions.num_rows(), 2 * 2 * 5);
        assert!(set.get("cv.validation_summary").is_some());
    }

    #[test]
    fn validation_settings_are_checked_when_the_file_is_parsed() {
        let cases = [
            (
                "holdouts = [\"lopo\"]",
                "p.toml:8:12: key `holdouts`: `holdouts`: unknown validation `lopo`; expected fit, loo, kfold(<k>) or leave_one_out(<column>)",
            ),
            (
                "holdouts = []",
                "p.toml:8:12: key `holdouts`: `holdouts` is empty",
            ),
            (
                "tiny_threshold = -1",
                "p.toml:8:18: key `tiny_threshold`: `tiny_threshold` must be a number >= 0, found -1",
            ),
            (
                "published = [{ row = \"paper\", value = 1.0, text = \"x\" }]",
                "p.toml:8:13: key `published`: published figure `paper`: give exactly one of `value` and `text`",
            ),
        ];
        for (line, want) in cases {
            let e = parse_error(
                "validate",
                &format!("step = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\n{line}"),
            );
            assert!(e.starts_with(want), "\n got: {e}\nwant: {want}");
        }
        let e = parse_error(
            "fit",
            "step = \"stepwise\"\nid = \"s\"\nobservations = \"src.observations\"\ndirection = \"sideways\"",
        );
        assert!(
            e.starts_with("p.toml:8:13: key `direction`: unknown variant `sideways`, expected `forward` or `backward`"),
            "{e}"
        );
        let e = parse_error(
            "fit",
            "step = \"ols\"\nid = \"o\"\nobservations = \"src.observations\"\nridge = -0.5",
        );
        assert!(
            e.starts_with("p.toml:8:9: key `ridge`: `ridge` must be a number >= 0, found -0.5"),
            "{e}"
        );
    }

    #[test]
    fn a_validation_matrix_must_use_the_models_groups() {
        let text = crate::steps::testing::pipeline(&format!(
            "{FIT}[[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nmatrix = {{ rows = \"device\", columns = \"program\" }}"
        ));
        let e = crate::PipelineSpec::parse("p.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("key `matrix`: matrix: `program` is not one of the model's `group_by` columns (device)"),
            "{e}"
        );
    }

    #[test]
    fn a_feature_the_table_lacks_fails_when_the_fit_runs() {
        let e = run_error(
            "[[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"src.observations\"\nfeatures = [\"inst_exec\"]",
            vec![("observations", data())],
        );
        assert!(
            e.contains("step `fit` (ols): input `observations` has no feature column `inst_exec`; did you mean inst?"),
            "{e}"
        );
    }

    /// Three programs; the rows of program `c` but the first changed when `change` is set.
    fn programs(change: bool) -> arrow_array::RecordBatch {
        let mut rows = Vec::new();
        let (mut secs, mut inst, mut gld) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..24 {
            let program = ["a", "b", "c"][i % 3];
            let (mut x, mut y) = (1.0 + i as f64, ((i * 5) % 7) as f64 + 1.0);
            secs.push(0.5 + 0.2 * x + 0.05 * y + 0.01 * ((i * 11 % 5) as f64));
            if change && program == "c" && i != 2 {
                x = x * 30.0 + 400.0;
                y *= 8.0;
            }
            rows.push(("gpu", program));
            inst.push(x);
            gld.push(y);
        }
        observations_of(&rows, &secs, &[("inst", &inst), ("gld", &gld)])
    }

    const HONEST: &str = "[[normalize]]\nstep = \"zscore\"\nid = \"z\"\ninput = \"src.observations\"\n\
        [[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"z.observations\"\nridge = 1.0\n\
        [[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nholdouts = [\"leave_one_out(program)\"]";

    /// The prediction of row 2 (program `c`) with `c` held out.
    fn row_2(batch: arrow_array::RecordBatch) -> f64 {
        let set = run_steps(HONEST, vec![("observations", batch)]).unwrap();
        let p =
            yosoku_tables::rows::read_predictions("p", set.get("cv.predictions").unwrap()).unwrap();
        p[2].predicted_secs
    }

    /// A `zscore` step feeding a ridge fit: validation standardises each training set by itself,
    /// so a held-out row's prediction is unchanged when the other held-out rows change.
    #[test]
    fn a_zscore_is_refitted_inside_every_training_set() {
        let (before, after) = (row_2(programs(false)), row_2(programs(true)));
        assert!(
            (before - after).abs() <= 1e-10 * before.abs(),
            "{before} vs {after}"
        );
        // A standardisation further upstream cannot be refitted per training set: refused.
        let e = run_error(
            &HONEST.replace(
                "observations = \"z.observations\"",
                "observations = \"d.observations\"",
            )
            .replace(
                "[[fit]]",
                "[[normalize]]\nstep = \"derive\"\nid = \"d\"\ninput = \"z.observations\"\nratios = [{ name = \"r\", numerator = \"inst\", denominator = \"gld\" }]\n[[fit]]",
            ),
            vec![("observations", programs(false))],
        );
        assert!(
            e.contains(
                "made from `z.observations`, which a `zscore` step standardised over all rows"
            ),
            "{e}"
        );
    }

    /// Whether a model predicts a program it was never fitted on is said in words: here the
    /// three programs follow one law (it does), then one follows another (it cannot).
    #[test]
    fn the_summary_says_whether_unseen_programs_are_predicted() {
        let steps = "[[fit]]\nstep = \"ols\"\nid = \"fit\"\nobservations = \"src.observations\"\n\
            [[validate]]\nstep = \"cross_validate\"\nid = \"cv\"\nmodel = \"fit\"\nholdouts = [\"loo\", \"leave_one_out(program)\"]";
        let verdict = |batch| -> String {
            let (_, figures) =
                run_steps_with_figures(steps, vec![("observations", batch)]).unwrap();
            let cv = &figures.iter().find(|(id, _)| id == "cv").unwrap().1;
            cv.iter()
                .find(|f| f.name.contains("unseen programs"))
                .map(|f| f.name.clone())
                .unwrap()
        };
        assert!(verdict(programs(false)).starts_with("predicts unseen programs"));
        // Program `c` takes 40 times longer for the same counters.
        let mut rows = Vec::new();
        let (mut secs, mut inst, mut gld) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..24 {
            let program = ["a", "b", "c"][i % 3];
            let (x, y) = (1.0 + i as f64, ((i * 5) % 7) as f64 + 1.0);
            let t = 0.5 + 0.2 * x + 0.05 * y;
            secs.push(if program == "c" { 40.0 * t } else { t });
            rows.push(("gpu", program));
            inst.push(x);
            gld.push(y);
        }
        let unlike = observations_of(&rows, &secs, &[("inst", &inst), ("gld", &gld)]);
        assert!(verdict(unlike).starts_with("cannot predict unseen programs"));
    }
}
