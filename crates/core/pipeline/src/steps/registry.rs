//! The registry of step kinds: [`STEP_KINDS`], the one place a kind is named, and the look-ups
//! the parser makes in it.

use super::step::{Stage, StepKind};
use super::{compare, counters, csx600, mpi, scaling, tables, transfer};

/// Every step kind, in the order docs/pipelines.md lists them. The one place a kind is named.
pub static STEP_KINDS: &[StepKind] = &[
    // normalize
    csx600::SCALE_COUNTS,
    tables::FILTER,
    tables::CONCAT,
    counters::PIVOT_COUNTERS,
    counters::MERGE_COUNTERS,
    counters::ZSCORE,
    counters::DERIVE,
    counters::AGGREGATE,
    counters::CROSS_DEVICE,
    mpi::MPI_CALL_PATHS,
    // fit
    csx600::OP_COUNT,
    csx600::TRANSFER,
    csx600::DOUBLE_BUFFER,
    counters::OLS,
    counters::STEPWISE,
    mpi::SIMPLIFIED,
    mpi::SEPARATE_RUNS,
    mpi::BEST_CONFIGURATION,
    mpi::STEPS_AND_RANKS_FIT,
    transfer::WORK_MODEL_FIT,
    // validate
    compare::COMPARE_MEASURED,
    transfer::FORECAST_SCORE,
    compare::COMPARE_REFERENCE,
    counters::CROSS_VALIDATE,
    counters::THROUGHPUT,
    counters::OVERHEAD,
    mpi::SPANS_STEP,
    transfer::GPU_TRANSFER_FIT,
    transfer::GPU_TRANSFER,
    transfer::GPU_SPLIT,
    transfer::WORK_FORECAST,
    transfer::PHYSICS_FORECAST,
    scaling::SCALING_FIT,
    scaling::SCALING_MODEL,
    mpi::STEPS_AND_RANKS,
];

impl Stage {
    /// The names of the step kinds the stage accepts, in registry order.
    pub fn step_kinds(self) -> Vec<&'static str> {
        STEP_KINDS
            .iter()
            .filter(|k| k.stage == self)
            .map(|k| k.name)
            .collect()
    }
}

/// The step kind called `name` in `stage`.
pub fn step_kind(stage: Stage, name: &str) -> Option<&'static StepKind> {
    STEP_KINDS
        .iter()
        .find(|k| k.stage == stage && k.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_unique_and_valid_names() {
        let mut seen = std::collections::BTreeSet::new();
        for kind in STEP_KINDS {
            assert!(seen.insert(kind.name), "{} is registered twice", kind.name);
            assert!(yosoku_tables::is_valid_name(kind.name), "{}", kind.name);
            assert!(!kind.summary.is_empty(), "{} has no summary", kind.name);
        }
    }

    /// docs/pipelines.md documents every registered kind in its stage's table, and nothing else,
    /// and gives each a section of its own below (`### \`name\``).
    #[test]
    fn docs_pipelines_md_lists_every_step_kind() {
        let doc = include_str!("../../../../../docs/pipelines.md");
        let mut documented: Vec<(Stage, String)> = Vec::new();
        let mut stage = None;
        for line in doc.lines() {
            if let Some(heading) = line.strip_prefix("### ") {
                stage = Stage::ALL.into_iter().find(|s| s.name() == heading.trim());
            } else if let (Some(s), Some(rest)) = (
                stage,
                line.strip_prefix("| [`")
                    .or_else(|| line.strip_prefix("| `")),
            ) && let Some((name, _)) = rest.split_once('`')
            {
                documented.push((s, name.to_owned()));
            }
        }
        let registered: Vec<(Stage, String)> = STEP_KINDS
            .iter()
            .map(|k| (k.stage, k.name.to_owned()))
            .collect();
        for r in &registered {
            assert!(documented.contains(r), "docs/pipelines.md lacks {r:?}");
        }
        for d in &documented {
            assert!(
                registered.contains(d),
                "docs/pipelines.md documents {d:?}, which is not registered"
            );
        }
        for (_, name) in &registered {
            assert!(
                doc.contains(&format!("\n### `{name}`\n")),
                "docs/pipelines.md has no section `### `{name}``"
            );
        }
    }
}
