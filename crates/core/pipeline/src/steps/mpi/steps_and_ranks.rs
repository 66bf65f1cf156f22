//! `mpi_steps_and_ranks`: one MPI run predicted at a configuration (rank count, input size) and
//! a length beyond every one measured, from short runs over the configurations: simplified
//! execution splits each short run's call paths into a cost per step and a cost once, Extra-P's
//! PMNF models both over the configurations (docs/methods.md, section 3).

use std::collections::BTreeMap;

use serde::Deserialize;
use yosoku_models::ModelError;
use yosoku_models::mpi::{StepsAndRanksSpec, steps_and_ranks};
use yosoku_tables::{PREDICTIONS, REPORT, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use super::shared::{SettingKeys, Settings, mpi_figures};
use crate::steps::scaling::{
    SCALING_TABLES, default_aggregate, default_level, meaning_cells, scaling_spec,
};
use crate::steps::step::{
    GroupedParams, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, TableRef,
    TrainingTable, names,
};

pub(crate) const STEPS_AND_RANKS: StepKind = StepKind::grouped::<StepsAndRanksParams>(
    "mpi_steps_and_ranks",
    Stage::Validate,
    "one MPI run at more ranks, a larger input and more steps than measured: short runs split per call path into a cost per step and once (simplified execution), both modelled over the configurations (PMNF)",
);

fn default_min_share_pct() -> f64 {
    1.0
}

/// `mpi_steps_and_ranks` over the short runs of one source.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepsAndRanksParams {
    /// `mpi_blocks` of the short runs (several configurations, repeats welcome).
    pub blocks: TableRef,
    /// Their `mpi_ranks` (the parameters, the rank count, each rank's wall time).
    pub ranks: TableRef,
    /// `mpi_blocks` and `mpi_ranks` of runs of the target, to compare with (their mean).
    pub measured_blocks: Option<TableRef>,
    pub measured_ranks: Option<TableRef>,
    /// The configuration to predict: a value for every parameter modelled
    /// (`target = { n = 129, ranks = 2 }`).
    pub target: BTreeMap<String, f64>,
    /// The parameters to model over; every numeric one that varies when absent.
    #[serde(default)]
    pub parameters: Vec<String>,
    #[serde(default = "default_aggregate")]
    pub aggregate: String,
    #[serde(default = "default_level")]
    pub level: f64,
    #[serde(default)]
    pub negative_exponents: bool,
    /// Leave out call paths under this share of the predicted time, in percent.
    #[serde(default = "default_min_share_pct")]
    pub min_share_pct: f64,
    #[serde(default)]
    pub meanings: BTreeMap<String, String>,
}

#[derive(Debug)]
pub struct StepsAndRanks {
    blocks: TableRef,
    ranks: TableRef,
    measured: Option<(TableRef, TableRef)>,
    settings: Settings,
    spec: StepsAndRanksSpec,
    meanings: BTreeMap<String, String>,
}

impl GroupedParams for StepsAndRanksParams {
    type Group = SettingKeys;
    type Step = StepsAndRanks;
    fn into_step(self, keys: SettingKeys) -> Result<StepsAndRanks, ParamError> {
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
        if !(0.0..100.0).contains(&self.min_share_pct) {
            return Err(ParamError::new(
                "min_share_pct",
                format!(
                    "min_share_pct = {}: expected a percentage in [0, 100)",
                    self.min_share_pct
                ),
            ));
        }
        if keys.published.is_some() {
            return Err(ParamError::new(
                "published",
                "`mpi_steps_and_ranks` takes no `published` figure (its scoreboard rows name the paper's)",
            ));
        }
        let settings = Settings::new(keys)?;
        let scaling = scaling_spec(
            self.parameters,
            &self.aggregate,
            self.level,
            self.negative_exponents,
            &self.meanings,
        )?;
        let spec = StepsAndRanksSpec {
            mpi: settings.spec(""),
            scaling,
            target: self.target.into_iter().collect(),
            min_share: self.min_share_pct / 100.0,
        };
        Ok(StepsAndRanks {
            blocks: self.blocks,
            ranks: self.ranks,
            measured,
            settings,
            spec,
            meanings: self.meanings,
        })
    }
}

impl Step for StepsAndRanks {
    fn inputs(&self) -> Vec<&TableRef> {
        let mut inputs = vec![&self.blocks, &self.ranks];
        if let Some((b, r)) = &self.measured {
            inputs.extend([b, r]);
        }
        inputs
    }

    fn outputs(&self) -> Vec<&str> {
        names(&SCALING_TABLES)
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let spec = StepsAndRanksSpec {
            mpi: self.settings.spec(cx.id),
            ..self.spec.clone()
        };
        let measured = match &self.measured {
            Some((b, r)) => Some((cx.input(b)?, cx.input(r)?)),
            None => None,
        };
        let out = steps_and_ranks(
            &spec,
            cx.input(&self.blocks)?,
            cx.input(&self.ranks)?,
            measured,
        )?;
        let predictions =
            yosoku_tables::rows::predictions_batch(&out.predictions).map_err(ModelError::from)?;
        let mut figures = mpi_figures(&predictions).map_err(ModelError::from)?;
        figures.extend(out.scaling.figures);
        let mut cells = out.report;
        cells.extend(out.scaling.report);
        cells.extend(meaning_cells(&self.meanings));
        let report = yosoku_tables::report::report_batch(&cells).map_err(ModelError::from)?;
        Ok(StepOutput::new()
            .table(&SCALING_MODELS, out.scaling.models)
            .table(&SCALING_POINTS, out.scaling.points)
            .table(&SCALING_CURVES, out.scaling.curves)
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report)
            .figures(figures)
            .saved_model(
                yosoku_models::mpi::STEPS_AND_RANKS_KIND,
                TrainingTable::Input(self.blocks.get_ref().clone()),
                &[&SCALING_MODELS],
            ))
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::testing::parse_error;

    const BODY: &str = "step = \"mpi_steps_and_ranks\"\nid = \"p\"\nblocks = \"src.mpi_blocks\"\nranks = \"src.mpi_ranks\"\n";

    fn error(extra: &str) -> String {
        parse_error("validate", &format!("{BODY}{extra}"))
    }

    /// Every key's broken value is named when the file is parsed, before any run.
    #[test]
    fn its_keys_are_checked_when_the_file_is_parsed() {
        let sized = "reduced_steps = 20\nfull_steps = 400\n";
        let e = error(sized);
        assert!(e.contains("missing field `target`"), "{e}");
        let e = error(&format!("{sized}target = {{}}"));
        assert!(e.contains("key `target`: `target` is empty"), "{e}");
        let e = error(&format!("{sized}target = {{ n = nan }}"));
        assert!(
            e.contains("target `n` = NaN: expected a finite number"),
            "{e}"
        );
        let e = error("target = { n = 129 }");
        assert!(
            e.contains("the size of the run to predict is missing"),
            "{e}"
        );
        let target = "target = { n = 129 }\n";
        let e = error(&format!(
            "{sized}{target}measured_blocks = \"t.mpi_blocks\""
        ));
        assert!(
            e.contains("`measured_blocks` needs `measured_ranks`"),
            "{e}"
        );
        let e = error(&format!("{sized}{target}measured_ranks = \"t.mpi_ranks\""));
        assert!(
            e.contains("`measured_ranks` needs `measured_blocks`"),
            "{e}"
        );
        let e = error(&format!("{sized}{target}min_share_pct = 100"));
        assert!(
            e.contains("min_share_pct = 100: expected a percentage in [0, 100)"),
            "{e}"
        );
        let e = error(&format!("{sized}{target}level = 1.5"));
        assert!(e.contains("key `level`: level 1.5"), "{e}");
        let e = error(&format!(
            "{sized}{target}parameters = [\"n\"]\nmeanings = {{ p = \"x\" }}"
        ));
        assert!(
            e.contains("`p` is not one of the parameters modelled (n)"),
            "{e}"
        );
        let e = error(&format!("{sized}{target}aggregate = \"max\""));
        assert!(e.contains("expected `mean` or `median`"), "{e}");
    }
}
