//! `throughput`: candidates (vector widths, variants, devices) side by side in work per second,
//! and the fastest named (docs/methods.md, section 1: which vector width a device likes).

use serde::Deserialize;
use yosoku_models::counters::throughput::{ThroughputSpec, throughput};
use yosoku_tables::{REPORT, THROUGHPUTS};

use super::published::{PublishedSpec, published};
use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    names,
};

pub(crate) const THROUGHPUT: StepKind = StepKind::new::<ThroughputParams>(
    "throughput",
    Stage::Validate,
    "work per second of each candidate of a group, and the fastest",
);

fn default_compare() -> String {
    "variant".to_owned()
}

fn default_group_by() -> Vec<String> {
    vec!["device".to_owned(), "program".to_owned()]
}

/// `throughput`: work per second of each candidate (`compare`) within each group (`group_by`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThroughputParams {
    pub observations: TableRef,
    /// Features summed into a row's work (`["gld_bytes", "gst_bytes"]`).
    pub work: Vec<String>,
    #[serde(default = "default_compare")]
    pub compare: String,
    #[serde(default = "default_group_by")]
    pub group_by: Vec<String>,
    #[serde(default)]
    pub published: Vec<PublishedSpec>,
}

#[derive(Debug)]
pub struct Throughput {
    observations: TableRef,
    spec: ThroughputSpec,
}

impl StepParams for ThroughputParams {
    type Step = Throughput;
    fn into_step(self) -> Result<Throughput, ParamError> {
        if self.work.is_empty() {
            return Err(ParamError::new(
                "work",
                "`work` is empty: name the features that add up to a row's work, e.g. [\"gld_bytes\", \"gst_bytes\"]",
            ));
        }
        if self.group_by.contains(&self.compare) {
            return Err(ParamError::new(
                "compare",
                format!(
                    "`compare` = `{}` is also in `group_by`: each group would hold one candidate",
                    self.compare
                ),
            ));
        }
        Ok(Throughput {
            observations: self.observations,
            spec: ThroughputSpec {
                work: self.work,
                compare: self.compare,
                group_by: self.group_by,
                published: published(self.published)?,
            },
        })
    }
}

impl Step for Throughput {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.observations]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&THROUGHPUTS, &REPORT])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let t = throughput(cx.id, cx.input(&self.observations)?, &self.spec)?;
        let report = yosoku_tables::report::report_batch(&t.report)?;
        Ok(StepOutput::new()
            .table(&THROUGHPUTS, t.table)
            .table(&REPORT, report)
            .figures(t.figures))
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::testing::run_error;

    #[test]
    fn compare_may_not_be_a_grouping_column() {
        let e = run_error(
            "[[validate]]\nstep = \"throughput\"\nid = \"t\"\nobservations = \"src.observations\"\nwork = [\"gld_bytes\"]\ncompare = \"device\"",
            vec![],
        );
        assert!(
            e.contains("`compare` = `device` is also in `group_by`"),
            "{e}"
        );
    }
}
