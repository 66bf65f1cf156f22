//! `spans`: MPI runs measured and predicted as one `spans` table (docs/tables.md), the timeline
//! the Gantt view draws and `yosoku trace export` writes as Chrome trace JSON.

use serde::Deserialize;
use yosoku_tables::{Figure, SPANS};
use yosoku_traces::mpi;
use yosoku_traces::spans::extents;

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names, table_part,
};

pub(crate) const SPANS_STEP: StepKind = StepKind::new::<SpansParams>(
    "spans",
    Stage::Validate,
    "MPI runs measured (mpi_blocks) and predicted (mpi_block_predictions) as one timeline of spans",
);

/// `spans`: the blocks of `measured` runs, and the run `predicted` predicts from `reduced`, as
/// spans on one lane per rank.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpansParams {
    /// `mpi_blocks` tables of measured runs.
    #[serde(default)]
    pub measured: Vec<TableRef>,
    /// An `mpi_block_predictions` table.
    pub predicted: Option<TableRef>,
    /// The `mpi_blocks` of the reduced run the prediction was made from.
    pub reduced: Option<TableRef>,
}

impl StepParams for SpansParams {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.measured.is_empty() && self.predicted.is_none() {
            return Err(ParamError::new(
                "measured",
                "nothing to lay out: name `measured` runs (`mpi_blocks`) or a `predicted` run (`mpi_block_predictions` with its `reduced` run)",
            ));
        }
        if let Some(t) = self.measured.iter().find(|t| table_part(t) != "mpi_blocks") {
            return Err(ParamError::new(
                "measured",
                format!("`{}` is not an `mpi_blocks` table", t.get_ref()),
            ));
        }
        match (&self.predicted, &self.reduced) {
            (Some(p), _) if table_part(p) != "mpi_block_predictions" => Err(ParamError::new(
                "predicted",
                format!("`{}` is not an `mpi_block_predictions` table", p.get_ref()),
            )),
            (Some(_), None) => Err(ParamError::new(
                "predicted",
                "a `predicted` run needs `reduced`: the `mpi_blocks` the prediction was made from (its timeline is the reduced run's, extended)",
            )),
            (None, Some(_)) => Err(ParamError::new(
                "reduced",
                "`reduced` without `predicted`: name the `mpi_block_predictions` to lay out, or list the run under `measured`",
            )),
            (_, Some(r)) if table_part(r) != "mpi_blocks" => Err(ParamError::new(
                "reduced",
                format!("`{}` is not an `mpi_blocks` table", r.get_ref()),
            )),
            _ => Ok(self),
        }
    }
}

impl Step for SpansParams {
    fn inputs(&self) -> Vec<&TableRef> {
        self.measured
            .iter()
            .chain(self.predicted.as_ref())
            .chain(self.reduced.as_ref())
            .collect()
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&SPANS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let invalid = |e: yosoku_traces::TraceError| StepError::Invalid(e.to_string());
        let mut measured = Vec::new();
        for t in &self.measured {
            measured.push(cx.input(t)?);
        }
        let predicted = match (&self.predicted, &self.reduced) {
            (Some(p), Some(r)) => Some((cx.input(r)?, cx.input(p)?)),
            _ => None,
        };
        let spans = mpi::timeline(&measured, predicted).map_err(invalid)?;
        // How long each timeline lasts: the predicted one's length is the predicted run time.
        let figures = extents(&spans)
            .map_err(|e| StepError::Invalid(e.to_string()))?
            .into_iter()
            .map(|e| {
                Figure::new(
                    format!("{} ({}): timeline length", e.run_id, e.timeline),
                    (e.end_ns - e.start_ns) as f64 / 1e9,
                    "s",
                )
            })
            .collect();
        Ok(StepOutput::new().table(&SPANS, spans).figures(figures))
    }
}
