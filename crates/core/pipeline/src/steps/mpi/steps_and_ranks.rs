//! `mpi_steps_and_ranks`: one MPI run predicted at a configuration (rank count, input size) and
//! a length beyond every one measured, by the model an `mpi_steps_and_ranks_fit` step defines
//! (each short run's call paths split into a cost per step and a cost once, both modelled over
//! the configurations in PMNF; docs/methods.md, section 3), compared with measured runs of the
//! target where there are some.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;
use yosoku_models::ModelError;
use yosoku_models::mpi::{MpiSpec, StepsAndRanksSpec, steps_and_ranks};
use yosoku_tables::{PREDICTIONS, REPORT, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use super::shared::mpi_figures;
use crate::steps::scaling::{SCALING_TABLES, meaning_cells};
use crate::steps::step::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, names,
};

pub(crate) const STEPS_AND_RANKS: StepKind = StepKind::new::<StepsAndRanksParams>(
    "mpi_steps_and_ranks",
    Stage::Validate,
    "one MPI run at more ranks, a larger input and more steps than measured, by an mpi_steps_and_ranks_fit step's model: once + steps x per step per call path, measured runs of the target beside",
);

/// `mpi_steps_and_ranks`: the model it asks, the target, and measured runs of the target.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepsAndRanksParams {
    /// The `mpi_steps_and_ranks_fit` step whose model is asked.
    pub model: Spanned<String>,
    /// `mpi_blocks` and `mpi_ranks` of runs of the target, to compare with (their mean).
    pub measured_blocks: Option<TableRef>,
    pub measured_ranks: Option<TableRef>,
    /// The configuration to predict: a value for every parameter modelled
    /// (`target = { n = 129, ranks = 2 }`).
    pub target: BTreeMap<String, f64>,
}

#[derive(Debug)]
pub struct StepsAndRanks {
    model: Spanned<String>,
    measured: Option<(TableRef, TableRef)>,
    target: Vec<(String, f64)>,
}

impl StepParams for StepsAndRanksParams {
    type Step = StepsAndRanks;
    fn into_step(self) -> Result<StepsAndRanks, ParamError> {
        let measured = match (self.measured_blocks, self.measured_ranks) {
            (Some(b), Some(r)) => Some((b, r)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(ParamError::new(
                    "measured_ranks",
                    "`measured_blocks` needs `measured_ranks`: the mpi_ranks of the same runs (their parameters and wall times)",
                ));
            }
            (None, Some(_)) => {
                return Err(ParamError::new(
                    "measured_blocks",
                    "`measured_ranks` needs `measured_blocks`: the mpi_blocks of the same runs",
                ));
            }
        };
        if self.target.is_empty() {
            return Err(ParamError::new(
                "target",
                "`target` is empty: give the configuration to predict, a value for every parameter modelled (`target = { n = 129, ranks = 64 }`)",
            ));
        }
        if let Some((k, v)) = self.target.iter().find(|(_, v)| !v.is_finite()) {
            return Err(ParamError::new(
                "target",
                format!("target `{k}` = {v}: expected a finite number"),
            ));
        }
        Ok(StepsAndRanks {
            model: self.model,
            measured,
            target: self.target.into_iter().collect(),
        })
    }
}

/// What the model `model` defines (the spec, the short runs' `mpi_ranks`, the meanings), or
/// what it is instead.
type Defined<'a> = (&'a StepsAndRanksSpec, &'a str, &'a BTreeMap<String, String>);

fn steps_and_ranks_model(model: &ModelDefinition) -> Result<Defined<'_>, String> {
    match &model.model {
        DefinedModel::StepsAndRanks {
            spec,
            ranks,
            meanings,
        } => Ok((spec, ranks, meanings)),
        DefinedModel::Counters(_)
        | DefinedModel::Transfer { .. }
        | DefinedModel::Scaling { .. }
        | DefinedModel::Work { .. } => Err(format!(
            "names {}; `mpi_steps_and_ranks` asks an `mpi_steps_and_ranks_fit` step",
            model.family()
        )),
    }
}

impl Step for StepsAndRanks {
    fn inputs(&self) -> Vec<&TableRef> {
        // The short runs are checked through the model reference.
        match &self.measured {
            Some((b, r)) => vec![b, r],
            None => Vec::new(),
        }
    }

    fn outputs(&self) -> Vec<&str> {
        names(&SCALING_TABLES)
    }

    fn model_input(&self) -> Option<&Spanned<String>> {
        Some(&self.model)
    }

    fn check_model(&self, model: &ModelDefinition) -> Result<(), ParamError> {
        steps_and_ranks_model(model)
            .map(|_| ())
            .map_err(|e| ParamError::new("model", e))
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let (model, blocks) = cx.model_observations(&self.model)?;
        let (spec, ranks, meanings) = steps_and_ranks_model(model).map_err(StepError::Invalid)?;
        let ranks = cx.tables.get(ranks).ok_or_else(|| {
            StepError::Invalid(format!(
                "the short runs' ranks of model `{}` (`{ranks}`) are gone",
                self.model.get_ref()
            ))
        })?;
        // The model refitted as its fit step fitted it (nothing of the short runs is held out:
        // the run it is asked for is beyond every one of them), asked at the target.
        let spec = StepsAndRanksSpec {
            mpi: MpiSpec {
                model: cx.id.to_owned(),
                ..spec.mpi.clone()
            },
            target: self.target.clone(),
            ..spec.clone()
        };
        let measured = match &self.measured {
            Some((b, r)) => Some((cx.input(b)?, cx.input(r)?)),
            None => None,
        };
        let out = steps_and_ranks(&spec, blocks, ranks, measured)?;
        let predictions =
            yosoku_tables::rows::predictions_batch(&out.predictions).map_err(ModelError::from)?;
        let mut figures = mpi_figures(&predictions).map_err(ModelError::from)?;
        figures.extend(out.scaling.figures);
        let mut cells = out.report;
        cells.extend(out.scaling.report);
        cells.extend(meaning_cells(meanings));
        let report = yosoku_tables::report::report_batch(&cells).map_err(ModelError::from)?;
        Ok(StepOutput::new()
            .table(&SCALING_MODELS, out.scaling.models)
            .table(&SCALING_POINTS, out.scaling.points)
            .table(&SCALING_CURVES, out.scaling.curves)
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report)
            .figures(figures)
            .scores(&PREDICTIONS))
    }
}
