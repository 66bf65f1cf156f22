//! `mpi_call_paths`: MPI runs as `runs` rows per call path (each block's time over the ranks,
//! with the run's parameters and rank count), what `scaling_fit` models.

use serde::Deserialize;
use yosoku_models::mpi::call_paths::{CallPathSpec, OverRanks, call_path_runs};
use yosoku_tables::{Figure, RUNS};

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const MPI_CALL_PATHS: StepKind = StepKind::new::<CallPathParams>(
    "mpi_call_paths",
    Stage::Normalize,
    "MPI runs as `runs` rows per call path (each block's time over the ranks, with the run's parameters and rank count), for scaling_fit",
);

fn default_over_ranks() -> String {
    "max".to_owned()
}

/// `mpi_call_paths` over one source's `mpi_blocks` and `mpi_ranks`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallPathParams {
    pub blocks: TableRef,
    pub ranks: TableRef,
    /// How a run's per-rank times of a call path become one: `max` (the slowest rank), `mean`
    /// or `sum` (CPU time, as Score-P sums over locations).
    #[serde(default = "default_over_ranks")]
    pub over_ranks: String,
    /// Leave out call paths under this share of all runs' time, in percent.
    #[serde(default)]
    pub min_share_pct: f64,
}

#[derive(Debug)]
pub struct CallPaths {
    blocks: TableRef,
    ranks: TableRef,
    spec: CallPathSpec,
}

impl StepParams for CallPathParams {
    type Step = CallPaths;
    fn into_step(self) -> Result<CallPaths, ParamError> {
        let over_ranks = OverRanks::parse(&self.over_ranks).ok_or_else(|| {
            ParamError::new(
                "over_ranks",
                format!(
                    "`over_ranks = \"{}\"`: expected `max`, `mean` or `sum`",
                    self.over_ranks
                ),
            )
        })?;
        if !(0.0..100.0).contains(&self.min_share_pct) {
            return Err(ParamError::new(
                "min_share_pct",
                format!(
                    "min_share_pct {}: expected a percentage in [0, 100)",
                    self.min_share_pct
                ),
            ));
        }
        Ok(CallPaths {
            blocks: self.blocks,
            ranks: self.ranks,
            spec: CallPathSpec {
                over_ranks,
                min_share: self.min_share_pct / 100.0,
            },
        })
    }
}

impl Step for CallPaths {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.blocks, &self.ranks]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&RUNS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let runs = call_path_runs(cx.input(&self.blocks)?, cx.input(&self.ranks)?, &self.spec)?;
        let figures = vec![Figure::new("call path rows", runs.num_rows() as f64, "")];
        Ok(StepOutput::new().table(&RUNS, runs).figures(figures))
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::testing::parse_error;

    #[test]
    fn bad_parameters_are_refused_at_their_key() {
        let paths = "step = \"mpi_call_paths\"\nid = \"p\"\nblocks = \"src.mpi_blocks\"\nranks = \"src.mpi_ranks\"\n";
        let e = parse_error("normalize", &format!("{paths}over_ranks = \"median\""));
        assert!(e.contains("expected `max`, `mean` or `sum`"), "{e}");
        let e = parse_error("normalize", &format!("{paths}min_share_pct = 100"));
        assert!(
            e.contains("min_share_pct 100: expected a percentage"),
            "{e}"
        );
    }
}
