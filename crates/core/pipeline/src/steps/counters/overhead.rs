//! `overhead`: each variant beside a baseline, R = 100 (T2 - T1) / T1 (docs/methods.md,
//! section 2: what instrumenting a kernel costs), or the ratio of a feature (an instruction
//! count: the instrumented kernel still executes the original's instructions).

use serde::Deserialize;
use yosoku_models::counters::overhead::{OverheadSpec, overhead};
use yosoku_tables::{OVERHEADS, REPORT};

use super::published::{PublishedSpec, published};
use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const OVERHEAD: StepKind = StepKind::new::<OverheadParams>(
    "overhead",
    Stage::Validate,
    "each variant beside a baseline variant: the overhead R in percent, with a paired confidence interval",
);

fn default_baseline() -> String {
    "original".to_owned()
}

fn yes() -> bool {
    true
}

fn default_group_by() -> Vec<String> {
    vec!["device".to_owned(), "program".to_owned()]
}

/// `overhead`: the variants of each group (`group_by`) beside `baseline`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverheadParams {
    pub observations: TableRef,
    /// A feature to compare instead of the measured time (`inst_executed`).
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default = "default_baseline")]
    pub baseline: String,
    #[serde(default = "default_group_by")]
    pub group_by: Vec<String>,
    /// Whether to name each group's lowest overhead (a headline figure).
    #[serde(default = "yes")]
    pub lowest: bool,
    /// Prefixes of the variants eligible as a group's lowest overhead (empty: all).
    #[serde(default)]
    pub lowest_among: Vec<String>,
    /// Pairs `[a, b]`: a figure R(b) - R(a) in percentage points per group.
    #[serde(default)]
    pub differences: Vec<[String; 2]>,
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

#[derive(Debug)]
pub struct Overhead {
    observations: TableRef,
    spec: OverheadSpec,
}

impl StepParams for OverheadParams {
    type Step = Overhead;
    fn into_step(self) -> Result<Overhead, ParamError> {
        if self.group_by.iter().any(|c| c == "variant") {
            return Err(ParamError::new(
                "group_by",
                "`group_by` holds `variant`: the variants are what is compared within a group",
            ));
        }
        if let Some([a, _]) = self.differences.iter().find(|[a, b]| a == b) {
            return Err(ParamError::new(
                "differences",
                format!("`differences` compares `{a}` with itself"),
            ));
        }
        Ok(Overhead {
            observations: self.observations,
            spec: OverheadSpec {
                value: self.value,
                baseline: self.baseline,
                group_by: self.group_by,
                lowest: self.lowest,
                lowest_among: self.lowest_among,
                differences: self.differences.into_iter().map(|[a, b]| (a, b)).collect(),
                published: published(self.published)?,
            },
        })
    }
}

impl Step for Overhead {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OVERHEADS, &REPORT])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let o = overhead(cx.id, cx.input(&self.observations)?, &self.spec)?;
        let report = yosoku_tables::report::report_batch(&o.report)?;
        Ok(StepOutput::new()
            .table(&OVERHEADS, o.table)
            .table(&REPORT, report)
            .figures(o.figures))
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::testing::run_error;

    #[test]
    fn variant_may_not_be_a_grouping_column() {
        let e = run_error(
            "[[validate]]\nstep = \"overhead\"\nid = \"o\"\nobservations = \"src.observations\"\ngroup_by = [\"program\", \"variant\"]",
            vec![],
        );
        assert!(e.contains("`group_by` holds `variant`"), "{e}");
        let e = run_error(
            "[[validate]]\nstep = \"overhead\"\nid = \"o\"\nobservations = \"src.observations\"\ndifferences = [[\"a\", \"a\"]]",
            vec![],
        );
        assert!(e.contains("compares `a` with itself"), "{e}");
    }
}
