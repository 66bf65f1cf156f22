//! `cross_validate`: out-of-sample predictions of a fitted counter model.

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::counters::crossval;
use yosoku_tables::report::report_batch;
use yosoku_tables::{Figure, PREDICTIONS, REPORT, VALIDATION_SUMMARY};

use super::fit::{MatrixSpec, check_matrix, counter_model};
use super::published::{PublishedSpec, published};
use crate::steps::step::{
    ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput,
    StepParams, TableRef, names, non_negative,
};

pub(crate) const CROSS_VALIDATE: StepKind = StepKind::new::<CrossValidateParams>(
    "cross_validate",
    Stage::Validate,
    "out-of-sample predictions of a fitted model",
);

/// Above this mean |error| when a program is held out, a model is reported as unable to
/// predict programs it was not fitted on: its predictions are off by more than half.
const GENERALISES_BELOW_PCT: f64 = 50.0;

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
            .figures(figures)
            .scores(&VALIDATION_SUMMARY))
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
