//! `filter`: the rows of any table whose text column equals a value.

use serde::Deserialize;
use yosoku_tables::Figure;

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    table_part,
};

pub(crate) const FILTER: StepKind = StepKind::new::<Filter>(
    "filter",
    Stage::Normalize,
    "the rows of a table whose text column equals a value",
);

/// `filter`: the rows of a table whose text column equals a value. Produces `<id>.<table>`,
/// named like its input's table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    pub input: TableRef,
    pub column: String,
    pub equals: String,
}

impl StepParams for Filter {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.column.is_empty() {
            return Err(ParamError::new(
                "column",
                "`column` is empty: name a text column",
            ));
        }
        Ok(self)
    }
}

impl Step for Filter {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        vec![table_part(&self.input)]
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let kept = yosoku_models::filter_eq(cx.input(&self.input)?, &self.column, &self.equals)?;
        let figures = vec![Figure::new("rows kept", kept.num_rows() as f64, "")];
        Ok(StepOutput::new()
            .named_table(table_part(&self.input), kept)
            .figures(figures))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::RecordBatch;

    use crate::steps::testing::{run_error, run_steps, s};

    fn table() -> RecordBatch {
        RecordBatch::try_from_iter([
            ("device", s(&["a", "b", "a"])),
            ("program", s(&["x", "y", "z"])),
        ])
        .unwrap()
    }

    #[test]
    fn keeps_the_matching_rows_under_the_input_table_name() {
        let set = run_steps(
            "[[normalize]]\nstep = \"filter\"\nid = \"only_a\"\ninput = \"src.anything\"\ncolumn = \"device\"\nequals = \"a\"",
            vec![("anything", table())],
        )
        .unwrap();
        assert_eq!(set.get("only_a.anything").unwrap().num_rows(), 2);
    }

    #[test]
    fn a_column_the_table_lacks_is_named() {
        let e = run_error(
            "[[normalize]]\nstep = \"filter\"\nid = \"f\"\ninput = \"src.anything\"\ncolumn = \"gpu\"\nequals = \"a\"",
            vec![("anything", table())],
        );
        assert!(
            e.contains("step `f` (filter): input `filter`: missing column `gpu`"),
            "{e}"
        );
    }
}
