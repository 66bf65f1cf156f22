//! `zscore`: features to mean 0, variance 1 within each group.

use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::{Figure, OBSERVATIONS};

use crate::steps::step::{
    ParamError, Stage, Standardization, Step, StepContext, StepError, StepKind, StepOutput,
    StepParams, TableRef, names,
};

use super::shared::observations_output;

pub(crate) const ZSCORE: StepKind = StepKind::new::<ZScore>(
    "zscore",
    Stage::Normalize,
    "features to mean 0, variance 1 within each group",
);

/// `zscore`: features to mean 0, variance 1 within each group; constant columns are dropped
/// and reported.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZScore {
    pub input: TableRef,
    /// Only these columns (default: every feature).
    #[serde(default)]
    pub columns: Vec<String>,
    #[serde(default)]
    pub group_by: Vec<String>,
}

impl StepParams for ZScore {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        Ok(self)
    }
}

impl Step for ZScore {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let z = normalize::zscore(cx.input(&self.input)?, &self.columns, &self.group_by)?;
        let mut figures = vec![
            Figure::new(
                "columns dropped for zero variance",
                z.zero_variance.len() as f64,
                "",
            )
            .headline(),
        ];
        // One figure per group listing what it lost.
        let mut by_group: Vec<(String, Vec<String>)> = Vec::new();
        for (group, column) in &z.zero_variance {
            match by_group.iter_mut().find(|(g, _)| g == group) {
                Some((_, c)) => c.push(column.clone()),
                None => by_group.push((group.clone(), vec![column.clone()])),
            }
        }
        for (group, columns) in by_group {
            let who = if group.is_empty() {
                "all rows".to_owned()
            } else {
                group
            };
            figures.push(Figure::new(
                format!("zero variance in {who}: {}", columns.join(", ")),
                columns.len() as f64,
                "",
            ));
        }
        Ok(
            observations_output(z.observations, figures).standardization(Standardization {
                input: self.input.get_ref().clone(),
                columns: self.columns.clone(),
                group_by: self.group_by.clone(),
            }),
        )
    }
}
