//! Throughput of candidates side by side: work per second of each vector width (or device, or
//! variant) of one program, and which is fastest — Shimada et al.'s question "which vector width
//! does this device like?" (docs/methods.md, section 1), asked of measured runs.
//!
//! A row's work is the sum of the chosen features (bytes loaded and stored, work-items); its rate
//! is work / measured time. Candidates are compared at the largest work every candidate of the
//! group was measured at (the memory-bound end of a size sweep, where caches no longer flatter),
//! and their peak over all sizes is reported beside.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_tables::report::ReportCell;
use yosoku_tables::{Figure, THROUGHPUTS};

use super::report::{Published, add_published};
use super::{Observations, group_rows};
use crate::ModelError;

/// What to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputSpec {
    /// Features summed into a row's work; they must share a unit.
    pub work: Vec<String>,
    /// The text column whose values are the candidates (`variant`, `device`).
    pub compare: String,
    /// Columns whose values form the groups compared within (`device`, `program`).
    pub group_by: Vec<String>,
    pub published: Vec<Published>,
}

/// The comparison: the `throughputs` table, report cells and headline figures.
#[derive(Debug)]
pub struct Throughputs {
    pub table: RecordBatch,
    pub report: Vec<ReportCell>,
    pub figures: Vec<Figure>,
}

/// Display scale of a rate: GB/s for bytes, G/s for counts.
fn display(unit: &str) -> (f64, String) {
    match unit {
        "bytes" => (1e9, "GB/s".to_owned()),
        "count" | "" => (1e9, "G/s".to_owned()),
        u => (1.0, format!("{u}/s")),
    }
}

struct Candidate {
    name: String,
    /// (work, rate) of each row, sorted by work.
    points: Vec<(f64, f64)>,
}

pub fn throughput(
    step: &str,
    observations: &RecordBatch,
    spec: &ThroughputSpec,
) -> Result<Throughputs, ModelError> {
    let obs = Observations::new("observations", observations)?;
    if spec.work.is_empty() {
        return Err(ModelError::invalid("`work` names no feature"));
    }
    let (work_columns, unit) = work_columns(&obs, &spec.work)?;
    let candidates_of = obs.label(&spec.compare)?;
    let groups = group_rows(&obs, &spec.group_by)?;
    let (scale, display_unit) = display(&unit);
    let title = format!("{step}: throughput by {} ({display_unit})", spec.compare);
    let mut table = Table::default();
    let mut report = Vec::new();
    let mut figures = Vec::new();
    for group in &groups {
        let mut candidates: Vec<Candidate> = Vec::new();
        for &row in &group.rows {
            let mut work = 0.0;
            for (name, column) in spec.work.iter().zip(&work_columns) {
                if column.is_null(row) {
                    return Err(ModelError::invalid(format!(
                        "{}: no value of `{name}`",
                        obs.describe(row)
                    )));
                }
                work += column.value(row);
            }
            let secs = obs.measured.value(row);
            let name = candidates_of.value(row).to_owned();
            let point = (work, work / secs);
            match candidates.iter_mut().find(|c| c.name == name) {
                Some(c) => c.points.push(point),
                None => candidates.push(Candidate {
                    name,
                    points: vec![point],
                }),
            }
        }
        for c in &mut candidates {
            c.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let (at, rates) = compared_rates(&candidates, &group.key)?;
        let best = rates
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(i, _)| i);
        let label = if group.values.is_empty() {
            "all".to_owned()
        } else {
            group.values.join(" ")
        };
        for (i, c) in candidates.iter().enumerate() {
            let peak = c.points.iter().map(|p| p.1).fold(f64::NAN, f64::max);
            table.group.push(group.key.clone());
            table.candidate.push(c.name.clone());
            table.sizes.push(c.points.len() as i64);
            table.work.push(at);
            table.rate.push(rates[i]);
            table.peak.push(peak);
            table.relative.push(rates[i] / rates[best]);
            table.best.push(i == best);
            report.push(ReportCell::number(
                &title,
                &label,
                &c.name,
                rates[i] / scale,
                &display_unit,
            ));
        }
        report.push(ReportCell::text(
            &title,
            &label,
            "best",
            &candidates[best].name,
        ));
        report.push(ReportCell::number(
            &title,
            &label,
            format!("at {unit}"),
            at,
            &unit,
        ));
        figures.push(
            Figure::new(
                format!("{label}: best {} {}", spec.compare, candidates[best].name),
                rates[best] / scale,
                &display_unit,
            )
            .headline(),
        );
    }
    add_published(&mut report, &spec.published)?;
    Ok(Throughputs {
        table: table.batch(&unit)?,
        report,
        figures,
    })
}

/// The features summed into a row's work, and their shared unit.
fn work_columns<'a>(
    obs: &Observations<'a>,
    work: &[String],
) -> Result<(Vec<&'a Float64Array>, String), ModelError> {
    let features = obs.features();
    let mut unit: Option<String> = None;
    let mut columns = Vec::new();
    for name in work {
        let values = obs.feature(name)?;
        let u = features
            .iter()
            .find(|f| &f.name == name)
            .and_then(|f| f.unit.clone())
            .unwrap_or_default();
        match &unit {
            Some(first) if *first != u => {
                return Err(ModelError::invalid(format!(
                    "`work` adds `{}` ({first}) and `{name}` ({u}): the features must share a unit",
                    work[0]
                )));
            }
            _ => unit = Some(u),
        }
        columns.push(values);
    }
    Ok((columns, unit.unwrap_or_default()))
}

/// The largest work every candidate was measured at, and each candidate's mean rate there (over
/// repeats of that size).
fn compared_rates(candidates: &[Candidate], group: &str) -> Result<(f64, Vec<f64>), ModelError> {
    let common = candidates
        .iter()
        .map(|c| c.points.iter().map(|p| p.0).collect::<Vec<f64>>())
        .reduce(|a, b| a.into_iter().filter(|w| b.contains(w)).collect())
        .unwrap_or_default();
    let Some(at) = common.iter().copied().reduce(f64::max) else {
        return Err(ModelError::invalid(format!(
            "group {group}: the candidates ({}) share no work size to be compared at",
            candidates
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let rate_at = |c: &Candidate| {
        let at_size: Vec<f64> = c.points.iter().filter(|p| p.0 == at).map(|p| p.1).collect();
        at_size.iter().sum::<f64>() / at_size.len() as f64
    };
    Ok((at, candidates.iter().map(rate_at).collect()))
}

/// The columns of the `throughputs` table, as the rows are written.
#[derive(Default)]
struct Table {
    group: Vec<String>,
    candidate: Vec<String>,
    sizes: Vec<i64>,
    work: Vec<f64>,
    rate: Vec<f64>,
    peak: Vec<f64>,
    relative: Vec<f64>,
    best: Vec<bool>,
}

impl Table {
    /// The table, with work in `unit` and rates in `unit`/s.
    fn batch(self, unit: &str) -> Result<RecordBatch, ModelError> {
        let n = self.rate.len();
        THROUGHPUTS
            .batch(vec![
                Arc::new(StringArray::from(self.group)),
                Arc::new(StringArray::from(self.candidate)),
                Arc::new(Int64Array::from(self.sizes)),
                Arc::new(Float64Array::from(self.work)),
                Arc::new(StringArray::from(vec![unit.to_owned(); n])),
                Arc::new(Float64Array::from(self.rate)),
                Arc::new(Float64Array::from(self.peak)),
                Arc::new(StringArray::from(vec![format!("{unit}/s"); n])),
                Arc::new(Float64Array::from(self.relative)),
                Arc::new(BooleanArray::from(self.best)),
            ])
            .map_err(ModelError::built)
    }
}

/// Candidates per group, for tests and messages.
pub fn best_by_group(t: &Throughputs) -> BTreeMap<String, String> {
    let group = yosoku_tables::access::utf8(&t.table, yosoku_tables::col::GROUP).ok();
    let cand = yosoku_tables::access::utf8(&t.table, yosoku_tables::col::CANDIDATE).ok();
    let best = t
        .table
        .column_by_name(yosoku_tables::col::BEST)
        .and_then(|c| c.as_any().downcast_ref::<BooleanArray>().cloned());
    let mut out = BTreeMap::new();
    if let (Some(g), Some(c), Some(b)) = (group, cand, best) {
        for i in 0..t.table.num_rows() {
            if b.value(i) {
                out.insert(g.value(i).to_owned(), c.value(i).to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::{FeatureColumn, with_features};
    use yosoku_tables::OBSERVATIONS;

    /// (device, variant, bytes, seconds) of one row.
    type Row<'a> = (&'a str, &'a str, f64, f64);

    fn observations(rows: &[Row<'_>]) -> RecordBatch {
        let s = |f: &dyn Fn(&Row<'_>) -> String| -> Arc<dyn arrow_array::Array> {
            Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
        };
        let base = RecordBatch::try_new(
            OBSERVATIONS.schema(),
            vec![
                s(&|r| format!("{}-{}-{}", r.0, r.1, r.2)),
                s(&|r| r.0.to_owned()),
                s(&|_| "copy".to_owned()),
                s(&|r| r.1.to_owned()),
                Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.3))),
            ],
        )
        .unwrap();
        with_features(
            &base,
            vec![(
                FeatureColumn {
                    name: "gld_bytes".into(),
                    kind: Some("count".into()),
                    unit: Some("bytes".into()),
                },
                rows.iter().map(|r| Some(r.2)).collect(),
            )],
        )
        .unwrap()
    }

    #[test]
    fn the_best_candidate_at_the_largest_common_size() {
        // float4 wins at the largest size both have; float is faster on a small (cached) size.
        let obs = observations(&[
            ("gpu", "float", 1e6, 1e-4),
            ("gpu", "float", 1e8, 1e-1),
            ("gpu", "float4", 1e6, 2e-4),
            ("gpu", "float4", 1e8, 5e-2),
            ("gpu", "float4", 1e9, 4e-1),
            ("cpu", "float", 1e8, 2e-2),
            ("cpu", "float4", 1e8, 4e-2),
        ]);
        let spec = ThroughputSpec {
            work: vec!["gld_bytes".into()],
            compare: "variant".into(),
            group_by: vec!["device".into()],
            published: vec![],
        };
        let t = throughput("w", &obs, &spec).unwrap();
        let best = best_by_group(&t);
        assert_eq!(best["device=gpu"], "float4");
        assert_eq!(best["device=cpu"], "float");
        let rate = t.table.column_by_name("rate").unwrap();
        let rate = rate.as_any().downcast_ref::<Float64Array>().unwrap();
        // gpu float at 1e8 bytes: 1e9 B/s; its peak (1e10 at 1e6) is reported apart.
        assert_eq!(rate.value(0), 1e9);
        let peak = t.table.column_by_name("peak_rate").unwrap();
        let peak = peak.as_any().downcast_ref::<Float64Array>().unwrap();
        assert_eq!(peak.value(0), 1e10);
        assert!(t.figures[0].name.contains("best variant float4"));
    }

    #[test]
    fn candidates_without_a_common_size_are_refused() {
        let obs = observations(&[("gpu", "float", 1e6, 1e-4), ("gpu", "float4", 1e8, 1e-2)]);
        let spec = ThroughputSpec {
            work: vec!["gld_bytes".into()],
            compare: "variant".into(),
            group_by: vec!["device".into()],
            published: vec![],
        };
        let e = throughput("w", &obs, &spec).unwrap_err().to_string();
        assert!(e.contains("share no work size"), "{e}");
    }
}
