//! `concat`: several tables of one kind as one (the runs of two sources, the counters of two
//! tools), so that the steps after it see them together.

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_tables::Figure;

use crate::steps::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    table_part,
};

pub(crate) const CONCAT: StepKind = StepKind::new::<Concat>(
    "concat",
    Stage::Normalize,
    "the rows of several tables of one kind, in order, as one table",
);

/// `concat`: the rows of `tables`, in the order given, as one table named like their table part
/// (`a.runs` and `b.runs` make `<id>.runs`). The tables must have the same columns, in the same
/// order and of the same types.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Concat {
    pub tables: Vec<TableRef>,
}

impl StepParams for Concat {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        let Some(first) = self.tables.first() else {
            return Err(ParamError::new(
                "tables",
                "`tables` is empty: name at least two",
            ));
        };
        if self.tables.len() < 2 {
            return Err(ParamError::new(
                "tables",
                "`tables` names one table: name at least two",
            ));
        }
        let name = table_part(first);
        if let Some(other) = self.tables.iter().find(|t| table_part(t) != name) {
            return Err(ParamError::new(
                "tables",
                format!(
                    "`{}` is not a `{name}` table like `{}`: concat joins tables of one kind",
                    other.get_ref(),
                    first.get_ref()
                ),
            ));
        }
        Ok(self)
    }
}

impl Step for Concat {
    fn inputs(&self) -> Vec<&TableRef> {
        self.tables.iter().collect()
    }

    fn outputs(&self) -> Vec<&str> {
        self.tables.first().map(table_part).into_iter().collect()
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batches = self
            .tables
            .iter()
            .map(|r| cx.input(r))
            .collect::<Result<Vec<_>, _>>()?;
        // Text columns stored differently (plain, or keys of different widths) are one
        // encoding from here on.
        let batches: Vec<RecordBatch> = batches.iter().map(|b| (*b).clone()).collect();
        let batches = yosoku_tables::text::unify(&batches)
            .map_err(|e| StepError::Invalid(format!("joining the tables: {e}")))?;
        let (Some(first), Some(first_ref)) = (batches.first(), self.tables.first()) else {
            return Err(StepError::Invalid("no tables to join".into()));
        };
        let want = first.schema();
        for (batch, reference) in batches.iter().zip(&self.tables).skip(1) {
            let got = batch.schema();
            if want.fields() == got.fields() {
                continue;
            }
            let difference = match want.fields().iter().zip(got.fields()).find(|(a, b)| a != b) {
                Some((a, b)) => format!(
                    "column `{}` ({}) where `{}` has `{}` ({})",
                    b.name(),
                    b.data_type(),
                    first_ref.get_ref(),
                    a.name(),
                    a.data_type()
                ),
                None => format!(
                    "{} columns where `{}` has {}",
                    got.fields().len(),
                    first_ref.get_ref(),
                    want.fields().len()
                ),
            };
            return Err(StepError::Invalid(format!(
                "`{}` has {difference}: concat joins tables with the same columns",
                reference.get_ref()
            )));
        }
        let joined = arrow_select::concat::concat_batches(&want, &batches)
            .map_err(|e| StepError::Invalid(format!("joining the tables: {e}")))?;
        let mut figures: Vec<Figure> = batches
            .iter()
            .zip(&self.tables)
            .map(|(b, r)| Figure::new(format!("{}: rows", r.get_ref()), b.num_rows() as f64, ""))
            .collect();
        figures.push(Figure::new("rows", joined.num_rows() as f64, ""));
        Ok(StepOutput::new()
            .named_table(table_part(first_ref), joined)
            .figures(figures))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::RecordBatch;

    use crate::steps::testing::{f, parse_error, run_error, run_steps, s};

    fn runs(device: &str, secs: &[f64]) -> RecordBatch {
        let n = secs.len();
        RecordBatch::try_from_iter([("device", s(&vec![device; n])), ("measured_secs", f(secs))])
            .unwrap()
    }

    const CONCAT: &str =
        "[[normalize]]\nstep = \"concat\"\nid = \"all\"\ntables = [\"src2.runs\", \"src.runs\"]";

    #[test]
    fn tables_of_one_kind_become_one_in_the_order_given() {
        let set = run_steps(
            CONCAT,
            vec![
                ("runs", runs("a", &[1.0, 2.0])),
                ("src2.runs", runs("b", &[3.0])),
            ],
        )
        .unwrap();
        let all = set.get("all.runs").unwrap();
        let secs = yosoku_tables::access::float64(all, "measured_secs").unwrap();
        assert_eq!(secs.values().to_vec(), [3.0, 1.0, 2.0]);
    }

    #[test]
    fn text_columns_stored_differently_are_joined() {
        // One table's devices as 8-bit dictionary keys, another's with more devices than 8 bits
        // hold, a third's plain: all are texts, joined as plain texts.
        let keyed = |devices: &[String]| {
            let mut b = yosoku_tables::text::DictTextBuilder::default();
            for d in devices {
                b.append_value(d);
            }
            let secs = vec![1.0; devices.len()];
            RecordBatch::try_from_iter([("device", b.finish()), ("measured_secs", f(&secs))])
                .unwrap()
        };
        let few: Vec<String> = vec!["a".into(), "b".into()];
        let many: Vec<String> = (0..300).map(|i| format!("gpu{i}")).collect();
        let two = "[[normalize]]\nstep = \"concat\"\nid = \"all\"\ntables = [\"src.runs\", \"src2.runs\"]";
        let set = run_steps(
            two,
            vec![("runs", keyed(&few)), ("src2.runs", keyed(&many))],
        )
        .unwrap();
        let all = set.get("all.runs").unwrap();
        let text = yosoku_tables::text::Text::new(all.column(0).as_ref()).unwrap();
        assert_eq!(text.len(), 302);
        assert_eq!((text.value(1), text.value(301)), ("b", "gpu299"));
        let set = run_steps(
            two,
            vec![("runs", keyed(&few)), ("src2.runs", runs("c", &[2.0]))],
        )
        .unwrap();
        let all = set.get("all.runs").unwrap();
        assert_eq!(all.column(0).data_type(), &arrow_schema::DataType::Utf8);
        let devices = yosoku_tables::text::Text::new(all.column(0).as_ref()).unwrap();
        assert_eq!(
            devices.iter().collect::<Vec<_>>(),
            [Some("a"), Some("b"), Some("c")]
        );
    }

    #[test]
    fn tables_of_other_kinds_or_columns_are_refused() {
        let e = parse_error(
            "normalize",
            "step = \"concat\"\nid = \"c\"\ntables = [\"src.runs\", \"src.counters\"]",
        );
        assert_eq!(
            e,
            "p.toml:7:10: key `tables`: `src.counters` is not a `runs` table like `src.runs`: concat joins tables of one kind"
        );
        let e = parse_error(
            "normalize",
            "step = \"concat\"\nid = \"c\"\ntables = [\"src.runs\"]",
        );
        assert!(
            e.ends_with("`tables` names one table: name at least two"),
            "{e}"
        );
        let other = RecordBatch::try_from_iter([("device", s(&["x"]))]).unwrap();
        let e = run_error(
            CONCAT,
            vec![("runs", runs("a", &[1.0])), ("src2.runs", other)],
        );
        assert!(
            e.contains("step `all` (concat): `src.runs` has 2 columns where `src2.runs` has 1: concat joins tables with the same columns"),
            "{e}"
        );
    }
}
