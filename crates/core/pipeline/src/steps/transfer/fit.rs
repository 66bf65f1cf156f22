//! `gpu_transfer_fit`: the transfer models fitted on every launch of an `observations` table,
//! saved as the family's model (`GpuTransfer`) for the validation steps and `yosoku predict`.

use serde::Deserialize;
use yosoku_models::Model;
use yosoku_models::transfer::data::counter;
use yosoku_models::transfer::predict::{GpuTransfer, TransferOptions, TransferTraining};
use yosoku_models::transfer::report::coefficients_batch;
use yosoku_tables::{OBSERVATIONS, TRANSFER_COEFFICIENTS};

use super::super::step::{
    DefinedModel, ModelDefinition, ParamError, Stage, Step, StepContext, StepError, StepKind,
    StepOutput, StepParams, TableRef, TrainingTable, names,
};

pub(crate) const GPU_TRANSFER_FIT: StepKind = StepKind::new::<TransferFitParams>(
    "gpu_transfer_fit",
    Stage::Fit,
    "the transfer models fitted on every launch: how a launch's time changes between GPUs with their catalogue rows",
);

/// `gpu_transfer_fit`: the transfer models fitted on one `observations` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferFitParams {
    pub observations: TableRef,
    /// Leave out (and say so) the rows of devices the catalogue lacks, instead of failing.
    #[serde(default)]
    pub skip_unknown_devices: bool,
    /// Fit each ridge of the transfer model over the base a nested cross-validation on the
    /// training GPUs chooses (the log time, a correction to the physics ratio, or the ratio
    /// alone), as `gpu_transfer`'s `transfer_ridge_chosen_base`; `yosoku predict` answers from
    /// it. Default: the log time.
    #[serde(default)]
    pub choose_base: bool,
}

#[derive(Debug)]
pub struct TransferFit {
    observations: TableRef,
    skip_unknown_devices: bool,
    choose_base: bool,
}

impl StepParams for TransferFitParams {
    type Step = TransferFit;
    fn into_step(self) -> Result<TransferFit, ParamError> {
        Ok(TransferFit {
            observations: self.observations,
            skip_unknown_devices: self.skip_unknown_devices,
            choose_base: self.choose_base,
        })
    }
}

impl TransferFit {
    fn definition(&self) -> ModelDefinition {
        ModelDefinition {
            observations: self.observations.get_ref().clone(),
            model: DefinedModel::Transfer {
                skip_unknown_devices: self.skip_unknown_devices,
                choose_base: self.choose_base,
            },
        }
    }
}

impl Step for TransferFit {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS, &TRANSFER_COEFFICIENTS])
    }

    fn model_definition(&self) -> Option<ModelDefinition> {
        Some(self.definition())
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = cx.input(&self.observations)?;
        let options = TransferOptions {
            skip_unknown_devices: self.skip_unknown_devices,
            choose_base: self.choose_base,
        };
        let m = GpuTransfer::training_measurements(
            TransferTraining {
                observations: batch,
                devices: cx.devices,
            },
            &options,
        )?;
        let model = GpuTransfer::fit_measurements(&m, self.choose_base)?;
        // The training launches, with only the columns the models read: what `yosoku predict`
        // fits on, a few MB where the input has hundreds of counters.
        let schema = batch.schema();
        let keep: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| {
                let name = schema.field(i).name().as_str();
                OBSERVATIONS.fields().iter().any(|f| f.name() == name)
                    || counter::ALL.contains(&name)
            })
            .collect();
        let training = batch
            .project(&keep)
            .map_err(|e| StepError::Invalid(format!("the training launches: {e}")))?;
        Ok(StepOutput::new()
            .table(&OBSERVATIONS, training)
            .table(&TRANSFER_COEFFICIENTS, coefficients_batch(&model.transfer)?)
            .model(self.definition())
            .saved_model(
                GpuTransfer::KIND,
                TrainingTable::Own(OBSERVATIONS.name.to_owned()),
                &[&TRANSFER_COEFFICIENTS],
            )
            .saved_parameters(GpuTransfer::options_record(&options)?, model.to_json()?))
    }
}
