//! `merge_counters`: alternative counters summed into one.

use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::OBSERVATIONS;

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

use super::shared::observations_output;

pub(crate) const MERGE_COUNTERS: StepKind = StepKind::new::<MergeCounters>(
    "merge_counters",
    Stage::Normalize,
    "alternative counters summed into one (gst = gst32b + gst64b + gst128b)",
);

/// One merge of [`MergeCounters`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeSpec {
    pub into: String,
    pub from: Vec<String>,
}

/// `merge_counters`: alternative counters summed into one (`gst = gst32b + gst64b + gst128b`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeCounters {
    pub input: TableRef,
    pub merges: Vec<MergeSpec>,
    #[serde(default)]
    pub keep_parts: bool,
}

impl StepParams for MergeCounters {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.merges.is_empty() {
            return Err(ParamError::new(
                "merges",
                "`merges` is empty: give at least one { into, from }",
            ));
        }
        for m in &self.merges {
            if m.into.is_empty() || m.from.is_empty() {
                return Err(ParamError::new(
                    "merges",
                    format!(
                        "merge into `{}`: name the merged column (`into`) and at least one part (`from`)",
                        m.into
                    ),
                ));
            }
        }
        Ok(self)
    }
}

impl Step for MergeCounters {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let merges: Vec<normalize::Merge> = self
            .merges
            .iter()
            .map(|m| normalize::Merge {
                into: m.into.clone(),
                from: m.from.clone(),
            })
            .collect();
        let batch = normalize::merge_counters(cx.input(&self.input)?, &merges, self.keep_parts)?;
        Ok(observations_output(batch, vec![]))
    }
}
