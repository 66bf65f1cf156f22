//! `gpu_transfer`: a kernel's time on a GPU never timed, and of a kernel never timed, validated
//! out of sample scheme by scheme beside the analytical baselines (docs/methods.md, section 6).

use serde::Deserialize;
use yosoku_models::ModelError;
use yosoku_models::observations::Observations;
use yosoku_models::transfer::Measurements;
use yosoku_models::transfer::data::counter;
use yosoku_models::transfer::report::{predictions_batch, report, scores_batch};
use yosoku_models::transfer::schemes::{Scheme, validate};
use yosoku_tables::{OBSERVATIONS, PREDICTIONS, REPORT, TRANSFER_SCORES};

use super::counters::PublishedSpec;
use super::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const GPU_TRANSFER: StepKind = StepKind::new::<TransferParams>(
    "gpu_transfer",
    Stage::Validate,
    "held-out GPUs and kernels predicted from the device catalogue: learned transfer models beside wave scaling and cores x clock",
);

fn default_level() -> f64 {
    0.95
}

fn default_predictions() -> String {
    "learned".to_owned()
}

/// `gpu_transfer`: every scheme named over one `observations` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferParams {
    pub observations: TableRef,
    /// Scheme names; all four when absent.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// Coverage of the intervals.
    #[serde(default = "default_level")]
    pub level: f64,
    /// Leave out (and say so) the rows of devices the catalogue lacks, instead of failing.
    #[serde(default)]
    pub skip_unknown_devices: bool,
    /// Which methods' held-out rows go into `predictions`: `learned` or `all`.
    #[serde(default = "default_predictions")]
    pub predictions: String,
    /// Validate the tree ensemble too (minutes on the bundled data; BENCHMARKS.md).
    #[serde(default)]
    pub forest: bool,
    /// Published errors shown beside (each with a `value`, the mean |error| in %).
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

#[derive(Debug)]
pub struct Transfer {
    observations: TableRef,
    schemes: Vec<Scheme>,
    level: f64,
    skip_unknown_devices: bool,
    all_methods: bool,
    forest: bool,
    anchors: Vec<(String, f64)>,
}

impl StepParams for TransferParams {
    type Step = Transfer;
    fn into_step(self) -> Result<Transfer, ParamError> {
        let schemes = if self.schemes.is_empty() {
            Scheme::ALL.to_vec()
        } else {
            self.schemes
                .iter()
                .map(|s| {
                    Scheme::parse(s).ok_or_else(|| {
                        let known: Vec<&str> = Scheme::ALL.iter().map(|s| s.name()).collect();
                        ParamError::new(
                            "schemes",
                            format!("unknown scheme `{s}`; expected one of {}", known.join(", ")),
                        )
                    })
                })
                .collect::<Result<_, _>>()?
        };
        if !(0.5..1.0).contains(&self.level) {
            return Err(ParamError::new(
                "level",
                format!("level {}: expected a number in [0.5, 1)", self.level),
            ));
        }
        let all_methods = match self.predictions.as_str() {
            "learned" => false,
            "all" => true,
            other => {
                return Err(ParamError::new(
                    "predictions",
                    format!("`predictions = \"{other}\"`: expected `learned` or `all`"),
                ));
            }
        };
        let anchors = self
            .published
            .into_iter()
            .map(|p| {
                p.value.map(|v| (p.row.clone(), v)).ok_or_else(|| {
                    ParamError::new(
                        "published",
                        format!(
                            "published figure `{}`: give its `value` (mean |error| in %)",
                            p.row
                        ),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Transfer {
            observations: self.observations,
            schemes,
            level: self.level,
            skip_unknown_devices: self.skip_unknown_devices,
            all_methods,
            forest: self.forest,
            anchors,
        })
    }
}

impl Step for Transfer {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS, &PREDICTIONS, &TRANSFER_SCORES, &REPORT])
    }

    fn uses_devices(&self) -> bool {
        true
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = cx.input(&self.observations)?;
        let m = Measurements::from_observations(batch, cx.devices, self.skip_unknown_devices)?;
        let v = validate(&m, &self.schemes, self.level, self.forest)?;
        let observations = Observations::new("observations", batch)?;
        let predictions = predictions_batch(&m, &observations, &v, self.all_methods)?;
        let scores = scores_batch(&v)?;
        let (cells, figures) = report(&m, &v, &self.anchors);
        let report = yosoku_tables::report::report_batch(&cells).map_err(ModelError::from)?;
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
            .table(&PREDICTIONS, predictions)
            .table(&TRANSFER_SCORES, scores)
            .table(&REPORT, report)
            .figures(figures)
            .saved_model(
                yosoku_models::transfer::MODEL_KIND,
                &[&OBSERVATIONS, &TRANSFER_SCORES],
            ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{observations, parse_error, run_error};

    #[test]
    fn bad_parameters_are_refused_at_their_key() {
        let step = "step = \"gpu_transfer\"\nid = \"t\"\nobservations = \"src.observations\"";
        let e = parse_error(
            "validate",
            &format!("{step}\nschemes = [\"leave_one_out\"]"),
        );
        assert!(e.contains("p.toml:8:"), "{e}");
        assert!(
            e.contains("unknown scheme `leave_one_out`; expected one of leave_one_gpu_out"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{step}\nlevel = 1.5"));
        assert!(
            e.contains("level 1.5: expected a number in [0.5, 1)"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{step}\npredictions = \"some\""));
        assert!(e.contains("expected `learned` or `all`"), "{e}");
        let e = parse_error(
            "validate",
            &format!("{step}\npublished = [{{ row = \"Habitat\", text = \"11.8\" }}]"),
        );
        assert!(
            e.contains("published figure `Habitat`: give its `value`"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{step}\nlevels = 0.9"));
        assert!(e.contains("unknown field `levels`"), "{e}");
    }

    #[test]
    fn a_device_the_catalogue_lacks_or_missing_counters_stop_the_step() {
        let steps = "[[validate]]\nstep = \"gpu_transfer\"\nid = \"t\"\nobservations = \"src.observations\"";
        let counters: &[(&str, &[f64])] = &[
            ("inst_executed", &[1e6, 1e6]),
            ("dram_read_transactions", &[1e4, 1e4]),
            ("grid_x", &[64.0, 64.0]),
            ("block_x", &[256.0, 256.0]),
        ];
        let obs = observations(&["GTX-680", "GeForce GTX 9800"], &[1e-3, 2e-3], counters);
        let e = run_error(steps, vec![("observations", obs)]);
        assert!(e.contains("step `t` (gpu_transfer)"), "{e}");
        assert!(
            e.contains("device `GeForce GTX 9800` is not in the device catalogue (closest:"),
            "{e}"
        );
        assert!(e.contains("skip_unknown_devices = true"), "{e}");
        let obs = observations(&["GTX-680", "GTX-980"], &[1e-3, 2e-3], &counters[1..]);
        let e = run_error(steps, vec![("observations", obs)]);
        assert!(
            e.contains("the transfer models need counters the table lacks: warp instructions"),
            "{e}"
        );
    }
}
