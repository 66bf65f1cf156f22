//! Variants beside a baseline: the overhead of instrumenting a kernel, R = 100 (T2 - T1) / T1
//! (docs/methods.md, section 2), and the same comparison of any feature (an instruction count:
//! does the instrumented kernel still execute the original's instructions?).
//!
//! Per group (device and program), each variant's median beside the baseline's gives the ratio
//! and R. When the runs were made in rounds, each round running every variant once (as
//! tools/cuda-trace does, so that a drift of the clocks falls on all alike), the k-th row of a
//! variant pairs with the k-th row of the baseline: the mean of the paired R and its 95 %
//! confidence interval (Student's t) say how sure the figure is.

use std::sync::Arc;

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_tables::report::ReportCell;
use yosoku_tables::{Figure, OVERHEADS, col};

use super::report::{Published, add_published};
use super::{Observations, group_rows};
use crate::{ModelError, median};

/// What to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct OverheadSpec {
    /// The feature compared; `None`: the measured time.
    pub value: Option<String>,
    /// The variant every other is compared with.
    pub baseline: String,
    /// Text columns whose values form the groups (`device`, `program`).
    pub group_by: Vec<String>,
    /// Whether to name each group's lowest overhead (a headline figure).
    pub lowest: bool,
    /// Variants eligible as a group's lowest overhead: those starting with one of these
    /// (empty: every variant). A variant that deletes the work it should measure is no candidate.
    pub lowest_among: Vec<String>,
    /// `(a, b)`: a figure of R(b) - R(a) in percentage points per group (replacement against
    /// two-stage).
    pub differences: Vec<(String, String)>,
    pub published: Vec<Published>,
}

/// The comparison: the `overheads` table, report cells and figures.
#[derive(Debug)]
pub struct Overheads {
    pub table: RecordBatch,
    pub report: Vec<ReportCell>,
    pub figures: Vec<Figure>,
}

/// Mean of the paired overheads 100 (v_k / b_k - 1) and its 95 % confidence interval.
fn paired(variant: &[f64], baseline: &[f64]) -> Option<(f64, f64, f64)> {
    if variant.len() != baseline.len() || variant.len() < 2 {
        return None;
    }
    let r: Vec<f64> = variant
        .iter()
        .zip(baseline)
        .map(|(v, b)| 100.0 * (v / b - 1.0))
        .collect();
    let n = r.len() as f64;
    let mean = r.iter().sum::<f64>() / n;
    let var = r.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    let t = yosoku_regression::t_quantile(n - 1.0, 0.975)?;
    let half = t * (var / n).sqrt();
    Some((mean, mean - half, mean + half))
}

struct Row {
    variant: String,
    values: Vec<f64>,
    median: f64,
}

pub fn overhead(
    step: &str,
    observations: &RecordBatch,
    spec: &OverheadSpec,
) -> Result<Overheads, ModelError> {
    let obs = Observations::new("observations", observations)?;
    let (values, value_name, unit) = match &spec.value {
        None => (obs.measured, col::MEASURED_SECS.to_owned(), "s".to_owned()),
        Some(name) => {
            let unit = obs
                .features()
                .into_iter()
                .find(|f| &f.name == name)
                .and_then(|f| f.unit)
                .unwrap_or_default();
            (obs.feature(name)?, name.clone(), unit)
        }
    };
    let groups = group_rows(&obs, &spec.group_by)?;
    let mut out = Comparison {
        spec,
        title: format!(
            "{step}: {value_name} of each variant beside `{}`",
            spec.baseline
        ),
        unit,
        table: Table::default(),
        report: Vec::new(),
        figures: Vec::new(),
    };
    for group in &groups {
        let label = if group.values.is_empty() {
            "all".to_owned()
        } else {
            group.values.join(" ")
        };
        let rows = variant_rows(&obs, values, &group.rows, &value_name)?;
        let Some(base) = rows.iter().find(|r| r.variant == spec.baseline) else {
            return Err(ModelError::invalid(format!(
                "group {}: no row of the baseline variant `{}`; its variants: {}",
                group.key,
                spec.baseline,
                variant_names(&rows)
            )));
        };
        if base.median <= 0.0 {
            return Err(ModelError::invalid(format!(
                "group {}: the baseline's median `{value_name}` is {}: nothing to compare with",
                group.key, base.median
            )));
        }
        out.group(&group.key, &label, &rows, base)?;
    }
    add_published(&mut out.report, &spec.published)?;
    let table = out.table.batch(&spec.baseline, &value_name, &out.unit)?;
    Ok(Overheads {
        table,
        report: out.report,
        figures: out.figures,
    })
}

/// The values of each variant among `rows` of the observations, with their median, variants in
/// order of first row.
fn variant_rows(
    obs: &Observations<'_>,
    values: &Float64Array,
    rows: &[usize],
    value_name: &str,
) -> Result<Vec<Row>, ModelError> {
    let mut out: Vec<Row> = Vec::new();
    for &i in rows {
        if values.is_null(i) {
            return Err(ModelError::invalid(format!(
                "{}: no value of `{value_name}`",
                obs.describe(i)
            )));
        }
        let v = values.value(i);
        let name = obs.variant.value(i);
        match out.iter_mut().find(|r| r.variant == name) {
            Some(r) => r.values.push(v),
            None => out.push(Row {
                variant: name.to_owned(),
                values: vec![v],
                median: 0.0,
            }),
        }
    }
    for r in &mut out {
        let mut sorted = r.values.clone();
        r.median = median(&mut sorted);
    }
    Ok(out)
}

/// The variants of `rows`, for an error.
fn variant_names(rows: &[Row]) -> String {
    rows.iter()
        .map(|r| r.variant.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The comparison being written: the table's columns, the report cells and the figures.
struct Comparison<'a> {
    spec: &'a OverheadSpec,
    title: String,
    unit: String,
    table: Table,
    report: Vec<ReportCell>,
    figures: Vec<Figure>,
}

impl Comparison<'_> {
    /// One group's variants beside its baseline `base`: a row of the table and report cells
    /// each, their figures, the group's lowest overhead and the differences asked for.
    fn group(
        &mut self,
        key: &str,
        label: &str,
        rows: &[Row],
        base: &Row,
    ) -> Result<(), ModelError> {
        let spec = self.spec;
        let eligible = |v: &str| {
            spec.lowest
                && v != spec.baseline
                && (spec.lowest_among.is_empty()
                    || spec.lowest_among.iter().any(|p| v.starts_with(p.as_str())))
        };
        let overhead_of = |r: &Row| 100.0 * (r.median / base.median - 1.0);
        let lowest = rows
            .iter()
            .filter(|r| eligible(&r.variant))
            .min_by(|a, b| overhead_of(a).total_cmp(&overhead_of(b)))
            .map(|r| r.variant.clone());
        for r in rows {
            self.variant(
                key,
                label,
                r,
                base,
                lowest.as_deref() == Some(r.variant.as_str()),
            );
        }
        if let Some(v) = &lowest {
            let r = rows.iter().find(|r| &r.variant == v).expect("a row's name");
            self.figures
                .push(Figure::new(format!("{label}: lowest R"), overhead_of(r), "%").headline());
            self.report
                .push(ReportCell::text(&self.title, label, "lowest R", v.clone()));
        }
        for (a, b) in &spec.differences {
            let find = |name: &str| {
                rows.iter().find(|r| r.variant == name).ok_or_else(|| {
                    ModelError::invalid(format!(
                        "group {key}: `differences` names variant `{name}`, which has no rows; its variants: {}",
                        variant_names(rows)
                    ))
                })
            };
            let d = overhead_of(find(b)?) - overhead_of(find(a)?);
            self.figures.push(Figure::new(
                format!("{label}: R({b}) - R({a})"),
                d,
                "points",
            ));
        }
        Ok(())
    }

    /// Variant `r` beside the baseline `base`: its row, report cells and figures.
    fn variant(&mut self, key: &str, label: &str, r: &Row, base: &Row, lowest: bool) {
        let spec = self.spec;
        let ratio = r.median / base.median;
        let pct = 100.0 * (r.median / base.median - 1.0);
        let pair = if r.variant == spec.baseline {
            None
        } else {
            paired(&r.values, &base.values)
        };
        let t = &mut self.table;
        t.group.push(key.to_owned());
        t.variant.push(r.variant.clone());
        t.baseline_runs.push(base.values.len() as i64);
        t.runs.push(r.values.len() as i64);
        t.baseline_median.push(base.median);
        t.median.push(r.median);
        t.ratio.push(ratio);
        t.pct.push(pct);
        t.paired.push(pair.map(|p| p.0));
        t.low.push(pair.map(|p| p.1));
        t.high.push(pair.map(|p| p.2));
        t.lowest.push(lowest);
        let (title, row) = (&self.title, format!("{label} {}", r.variant));
        self.report.push(ReportCell::number(
            title, &row, "median", r.median, &self.unit,
        ));
        self.report
            .push(ReportCell::number(title, &row, "ratio", ratio, "ratio"));
        self.report
            .push(ReportCell::number(title, &row, "R", pct, "%"));
        if let Some((_, lo, hi)) = pair {
            self.report.push(ReportCell::text(
                title,
                &row,
                "95 % CI of paired R",
                format!("{lo:.2} .. {hi:.2} %"),
            ));
        }
        if r.variant != spec.baseline {
            self.figures
                .push(Figure::new(format!("{label}: {} R", r.variant), pct, "%"));
            if spec.value.is_some() {
                self.figures.push(Figure::new(
                    format!("{label}: {} ratio", r.variant),
                    ratio,
                    "ratio",
                ));
            }
        }
    }
}

#[derive(Default)]
struct Table {
    group: Vec<String>,
    variant: Vec<String>,
    baseline_runs: Vec<i64>,
    runs: Vec<i64>,
    baseline_median: Vec<f64>,
    median: Vec<f64>,
    ratio: Vec<f64>,
    pct: Vec<f64>,
    paired: Vec<Option<f64>>,
    low: Vec<Option<f64>>,
    high: Vec<Option<f64>>,
    lowest: Vec<bool>,
}

impl Table {
    /// The `overheads` table of the rows written, against variant `baseline`.
    fn batch(
        self,
        baseline: &str,
        value_name: &str,
        unit: &str,
    ) -> Result<RecordBatch, ModelError> {
        let n = self.group.len();
        OVERHEADS
            .batch(vec![
                Arc::new(StringArray::from(self.group)),
                Arc::new(StringArray::from(self.variant)),
                Arc::new(StringArray::from(vec![baseline.to_owned(); n])),
                Arc::new(StringArray::from(vec![value_name.to_owned(); n])),
                Arc::new(StringArray::from(vec![unit.to_owned(); n])),
                Arc::new(Int64Array::from(self.baseline_runs)),
                Arc::new(Int64Array::from(self.runs)),
                Arc::new(Float64Array::from(self.baseline_median)),
                Arc::new(Float64Array::from(self.median)),
                Arc::new(Float64Array::from(self.ratio)),
                Arc::new(Float64Array::from(self.pct)),
                Arc::new(Float64Array::from(self.paired)),
                Arc::new(Float64Array::from(self.low)),
                Arc::new(Float64Array::from(self.high)),
                Arc::new(BooleanArray::from(self.lowest)),
            ])
            .map_err(ModelError::built)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{FeatureColumn, with_features};
    use yosoku_tables::OBSERVATIONS;

    /// (program, variant, seconds, instructions) of one row.
    type R<'a> = (&'a str, &'a str, f64, f64);

    fn observations(rows: &[R<'_>]) -> RecordBatch {
        let s = |f: &dyn Fn(&R<'_>) -> String| -> Arc<dyn arrow_array::Array> {
            Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
        };
        let base = RecordBatch::try_new(
            OBSERVATIONS.schema(),
            vec![
                Arc::new(StringArray::from_iter_values(
                    (0..rows.len()).map(|i| format!("r{i}")),
                )),
                s(&|_| "gpu".to_owned()),
                s(&|r| r.0.to_owned()),
                s(&|r| r.1.to_owned()),
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.2))),
            ],
        )
        .unwrap();
        with_features(
            &base,
            vec![(
                FeatureColumn {
                    name: "inst_executed".into(),
                    kind: Some("count".into()),
                    unit: Some("count".into()),
                },
                rows.iter().map(|r| Some(r.3)).collect(),
            )],
        )
        .unwrap()
    }

    fn spec() -> OverheadSpec {
        OverheadSpec {
            value: None,
            baseline: "original".into(),
            group_by: vec!["device".into(), "program".into()],
            lowest: true,
            lowest_among: vec!["shared".into(), "replace/".into()],
            differences: vec![("shared".into(), "replace/x".into())],
            published: vec![],
        }
    }

    fn column<'a>(t: &'a RecordBatch, name: &str) -> &'a Float64Array {
        t.column_by_name(name)
            .unwrap()
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap()
    }

    #[test]
    fn overhead_from_medians_and_a_paired_interval() {
        // Three rounds of three variants; `unguarded` is fastest but not eligible as lowest.
        let obs = observations(&[
            ("k", "original", 1.0, 100.0),
            ("k", "shared", 1.10, 130.0),
            ("k", "replace/x", 1.05, 130.0),
            ("k", "unguarded", 0.5, 40.0),
            ("k", "original", 1.2, 100.0),
            ("k", "shared", 1.32, 130.0),
            ("k", "replace/x", 1.23, 130.0),
            ("k", "unguarded", 0.5, 40.0),
            ("k", "original", 1.1, 100.0),
            ("k", "shared", 1.21, 130.0),
            ("k", "replace/x", 1.155, 130.0),
            ("k", "unguarded", 0.5, 40.0),
        ]);
        let o = overhead("ovh", &obs, &spec()).unwrap();
        let pct = column(&o.table, col::OVERHEAD_PCT);
        // Medians 1.1 and 1.21: R = 10 %; every pair is exactly 10 %: the interval is a point.
        assert!((pct.value(1) - 10.0).abs() < 1e-9, "{}", pct.value(1));
        let paired = column(&o.table, col::PAIRED_MEAN_PCT);
        let (lo, hi) = (
            column(&o.table, col::CI_LOW_PCT),
            column(&o.table, col::CI_HIGH_PCT),
        );
        assert!((paired.value(1) - 10.0).abs() < 1e-9);
        assert!((hi.value(1) - lo.value(1)).abs() < 1e-9);
        // replace/x: pairs 5 %, 2.5 %, 5 %: mean 4.17, a real interval around it.
        assert!((paired.value(2) - 12.5 / 3.0).abs() < 1e-9);
        assert!(lo.value(2) < paired.value(2) && paired.value(2) < hi.value(2));
        let lowest = o
            .table
            .column_by_name(col::LOWEST)
            .unwrap()
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap();
        let flagged: Vec<bool> = (0..4).map(|i| lowest.value(i)).collect();
        assert_eq!(
            flagged,
            [false, false, true, false],
            "unguarded is not eligible"
        );
        let fig = |name: &str| {
            o.figures
                .iter()
                .find(|f| f.name == name)
                .unwrap_or_else(|| panic!("{name}: {:?}", o.figures))
                .value
        };
        assert!((fig("gpu k: lowest R") - 5.0).abs() < 1e-9);
        assert!((fig("gpu k: R(replace/x) - R(shared)") + 5.0).abs() < 1e-9);
        assert!((fig("gpu k: unguarded R") - 100.0 * (0.5 / 1.1 - 1.0)).abs() < 1e-9);
    }

    #[test]
    fn a_feature_gives_ratios() {
        let obs = observations(&[
            ("k", "original", 1.0, 90.0),
            ("k", "unguarded", 0.5, 30.0),
            ("k", "original", 1.0, 90.0),
        ]);
        let mut s = spec();
        s.value = Some("inst_executed".into());
        s.differences.clear();
        s.lowest = false;
        let o = overhead("ovh", &obs, &s).unwrap();
        let ratio = column(&o.table, col::RATIO);
        assert!((ratio.value(1) - 1.0 / 3.0).abs() < 1e-12);
        // Unequal counts: no pairs, no interval.
        assert!(arrow_array::Array::is_null(
            column(&o.table, col::PAIRED_MEAN_PCT),
            1
        ));
        assert!(o.figures.iter().any(|f| f.name == "gpu k: unguarded ratio"));
        assert!(!o.figures.iter().any(|f| f.name.contains("lowest")));
    }

    #[test]
    fn a_group_without_the_baseline_is_named() {
        let obs = observations(&[("k", "shared", 1.0, 1.0), ("m", "original", 1.0, 1.0)]);
        let e = overhead("ovh", &obs, &spec()).unwrap_err().to_string();
        assert!(
            e.contains("device=gpu, program=k: no row of the baseline variant `original`")
                && e.contains("its variants: shared"),
            "{e}"
        );
        let obs = observations(&[("k", "original", 1.0, 1.0), ("k", "shared", 1.0, 1.0)]);
        let e = overhead("ovh", &obs, &spec()).unwrap_err().to_string();
        assert!(e.contains("`differences` names variant `replace/x`"), "{e}");
    }
}
