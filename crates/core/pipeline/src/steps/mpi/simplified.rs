//! `mpi_simplified`: per-rank prediction of a full MPI run from a reduced run (Chida et al.).

use serde::Deserialize;
use yosoku_models::model::Model;
use yosoku_models::mpi::{self, MpiSimplified, MpiSimplifiedRepeats, RunToRun};
use yosoku_tables::MPI_BLOCKS;

use super::shared::{PREDICTION_TABLES, SettingKeys, Settings, prediction_output};
use crate::steps::step::{
    GroupedParams, ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, TableRef,
    TrainingTable, names,
};

pub(crate) const SIMPLIFIED: StepKind = StepKind::grouped::<SimplifiedParams>(
    "mpi_simplified",
    Stage::Fit,
    "per-rank prediction of a full MPI run from a reduced run (Chida et al.)",
);

/// `mpi_simplified`: per-rank prediction of a full MPI run from a reduced run's blocks, compute
/// and communication from the same run (Chida et al.).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimplifiedParams {
    /// `mpi_blocks` of the reduced run.
    pub reduced: Option<TableRef>,
    /// `mpi_blocks` of the full run, to compare with.
    pub measured: Option<TableRef>,
    /// `mpi_blocks` of repeats of the reduced run (this one among them, or not; the older
    /// spelling `warmup_from` is read too): the warm-up of each rank is chosen once on their
    /// pooled per-iteration times, the same for every repeat, and the spread of their
    /// predictions is the interval's run-to-run variation.
    #[serde(default, alias = "warmup_from")]
    pub repeats: Vec<TableRef>,
    /// The interval's run-to-run variation as a 95 % half-width in percent of the prediction:
    /// without `repeats`, instead of the default (DEFAULT_RUN_TO_RUN_PCT); with them, a floor.
    pub run_to_run_pct: Option<f64>,
    /// Predict from all `repeats` together (every block's time averaged over them) instead of
    /// from `reduced` alone.
    #[serde(default)]
    pub combine_repeats: bool,
    /// Two lengths: `mpi_blocks` of a shorter reduced run of the same configuration. The cost
    /// per iteration is a line through every steady iteration of both, extrapolated with its
    /// uncertainty where it is better supported than `reduced` (the longer) alone.
    pub shorter: Option<TableRef>,
    /// Two lengths with repeats: `mpi_blocks` of shorter runs paired one by one with `repeats`
    /// (the same order), each repeat predicted from two lengths with its own shorter run: their
    /// predictions' spread is the run-to-run variation, the shorter runs' noise included.
    #[serde(default)]
    pub shorter_repeats: Vec<TableRef>,
}

/// An `mpi_simplified` step.
#[derive(Debug)]
pub struct Simplified {
    /// None when the repeats are combined.
    reduced: Option<TableRef>,
    measured: Option<TableRef>,
    repeats: Vec<TableRef>,
    run_to_run_pct: Option<f64>,
    shorter: Option<TableRef>,
    shorter_repeats: Vec<TableRef>,
    settings: Settings,
}

impl GroupedParams for SimplifiedParams {
    type Group = SettingKeys;
    type Step = Simplified;
    fn into_step(self, keys: SettingKeys) -> Result<Simplified, ParamError> {
        if !self.repeats.is_empty()
            && (keys.warmup_iterations.is_some() || keys.warmup_tolerance.is_some())
        {
            return Err(ParamError::new(
                "repeats",
                "give `repeats` (the warm-up chosen on repeats) or `warmup_iterations` / `warmup_tolerance`, not both",
            ));
        }
        if self.repeats.len() == 1 {
            return Err(ParamError::new(
                "repeats",
                "`repeats` names one run: repeats are two or more runs of the reduced input",
            ));
        }
        if let Some(p) = self.run_to_run_pct
            && !(p.is_finite() && p >= 0.0)
        {
            return Err(ParamError::new(
                "run_to_run_pct",
                format!("run_to_run_pct = {p}: expected a percentage >= 0"),
            ));
        }
        if self.shorter.is_some() && self.combine_repeats {
            return Err(ParamError::new(
                "shorter",
                "`shorter` pairs with the one `reduced` run (two lengths), not with `combine_repeats`",
            ));
        }
        if !self.shorter_repeats.is_empty() {
            if self.shorter.is_none() || self.combine_repeats {
                return Err(ParamError::new(
                    "shorter_repeats",
                    "`shorter_repeats` pairs shorter runs with `repeats` in two lengths: give `shorter` (the reduced run's own) too, not `combine_repeats`",
                ));
            }
            if self.shorter_repeats.len() != self.repeats.len() {
                return Err(ParamError::new(
                    "shorter_repeats",
                    format!(
                        "`shorter_repeats` names {} runs, `repeats` {}: pair each repeat with one shorter run, in the same order",
                        self.shorter_repeats.len(),
                        self.repeats.len()
                    ),
                ));
            }
        }
        let reduced = match (self.combine_repeats, self.reduced) {
            (true, _) if self.repeats.is_empty() => {
                return Err(ParamError::new(
                    "combine_repeats",
                    "`combine_repeats` combines the runs of `repeats`: name two or more",
                ));
            }
            (true, Some(_)) => {
                return Err(ParamError::new(
                    "reduced",
                    "with `combine_repeats`, the prediction is from every run of `repeats`: leave `reduced` out",
                ));
            }
            (true, None) => None,
            (false, Some(r)) => Some(r),
            (false, None) => {
                return Err(ParamError::new(
                    "reduced",
                    "missing `reduced`: the `mpi_blocks` of the reduced run to predict from (or `combine_repeats = true` with `repeats`)",
                ));
            }
        };
        Ok(Simplified {
            repeats: self.repeats,
            run_to_run_pct: self.run_to_run_pct,
            shorter: self.shorter,
            shorter_repeats: self.shorter_repeats,
            settings: Settings::new(keys)?,
            reduced,
            measured: self.measured,
        })
    }
}

impl Step for Simplified {
    fn inputs(&self) -> Vec<&TableRef> {
        [
            self.reduced.as_ref(),
            self.measured.as_ref(),
            self.shorter.as_ref(),
        ]
        .into_iter()
        .flatten()
        .chain(&self.repeats)
        .chain(&self.shorter_repeats)
        .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        let mut out = names(&PREDICTION_TABLES);
        if self.reduced.is_none() {
            // The repeats' blocks together: the combined model's training table.
            out.push(MPI_BLOCKS.name);
        }
        out
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let mut spec = self.settings.spec(cx.id);
        if let Some(shorter) = &self.shorter {
            spec.shorter = mpi::shorter_run_times(cx.input(shorter)?)?;
        }
        let repeats = self
            .repeats
            .iter()
            .map(|t| cx.input(t))
            .collect::<Result<Vec<_>, _>>()?;
        if !repeats.is_empty() {
            spec.pooled_warmup = mpi::pooled_warmups(&repeats)?;
            let shorters = self
                .shorter_repeats
                .iter()
                .map(|t| Ok(mpi::shorter_run_times(cx.input(t)?)?))
                .collect::<Result<Vec<_>, StepError>>()?;
            let totals = mpi::paired_repeat_totals(&spec, &repeats, &shorters)?;
            spec.run_to_run = mpi::run_to_run_of(&totals, self.run_to_run_pct);
        } else if let Some(pct) = self.run_to_run_pct {
            spec.run_to_run = RunToRun::Floor { pct, user: true };
        }
        let measured = cx.optional_input(self.measured.as_ref())?;
        match &self.reduced {
            // The model fitted on the reduced run is saved: read back, it predicts runs of
            // other lengths.
            Some(reduced) => {
                let (p, model) = mpi::simplified_model(&spec, cx.input(reduced)?, measured)?;
                Ok(prediction_output(p)?
                    .saved_model(
                        MpiSimplified::KIND,
                        TrainingTable::Input(reduced.get_ref().clone()),
                        &PREDICTION_TABLES,
                    )
                    .saved_parameters(
                        MpiSimplified::options_record(&model.options)?,
                        model.to_json()?,
                    ))
            }
            // The model of the repeats combined is saved with their blocks together as its
            // training table (one table, hashed like any other).
            None => {
                let (p, model) = mpi::combined_model(&spec, &repeats, measured)?;
                let fail = |e: arrow_schema::ArrowError| {
                    StepError::Invalid(format!(
                        "the repeats' mpi_blocks could not be put together: {e}"
                    ))
                };
                // Their texts in one encoding, with keys wide enough for all of them.
                let owned: Vec<arrow_array::RecordBatch> =
                    repeats.iter().map(|b| (*b).clone()).collect();
                let unified = yosoku_tables::text::unify(&owned).map_err(fail)?;
                let blocks = arrow_select::concat::concat_batches(&unified[0].schema(), &unified)
                    .map_err(fail)?;
                Ok(prediction_output(p)?
                    .table(&MPI_BLOCKS, blocks)
                    .saved_model(
                        MpiSimplifiedRepeats::KIND,
                        TrainingTable::Own(MPI_BLOCKS.name.to_owned()),
                        &PREDICTION_TABLES,
                    )
                    .saved_parameters(
                        MpiSimplifiedRepeats::options_record(&model.repeats[0].options)?,
                        model.to_json()?,
                    ))
            }
        }
    }
}
