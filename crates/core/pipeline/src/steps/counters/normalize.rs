//! The normalize steps of counter models: long counters to `observations`, merged alternative
//! counters, standardised features, derived ratios, means over repeats, and one device's
//! features beside another's time (docs/methods.md, sections 1 and 4).

use arrow_array::RecordBatch;
use serde::Deserialize;
use yosoku_models::counters::normalize;
use yosoku_tables::{Figure, METRIC_KINDS, OBSERVATIONS};

use crate::steps::step::{
    ParamError, Stage, Standardization, Step, StepContext, StepError, StepKind, StepOutput,
    StepParams, TableRef, names,
};

pub(crate) const PIVOT_COUNTERS: StepKind = StepKind::new::<PivotCounters>(
    "pivot_counters",
    Stage::Normalize,
    "long `counters` and `runs` to `observations`, one column per metric",
);
pub(crate) const MERGE_COUNTERS: StepKind = StepKind::new::<MergeCounters>(
    "merge_counters",
    Stage::Normalize,
    "alternative counters summed into one (gst = gst32b + gst64b + gst128b)",
);
pub(crate) const ZSCORE: StepKind = StepKind::new::<ZScore>(
    "zscore",
    Stage::Normalize,
    "features to mean 0, variance 1 within each group",
);
pub(crate) const DERIVE: StepKind = StepKind::new::<Derive>(
    "derive",
    Stage::Normalize,
    "new features scale x numerator / denominator",
);
pub(crate) const AGGREGATE: StepKind = StepKind::new::<Aggregate>(
    "aggregate",
    Stage::Normalize,
    "means over the rows that agree on `by`",
);
pub(crate) const CROSS_DEVICE: StepKind = StepKind::new::<CrossDevice>(
    "cross_device",
    Stage::Normalize,
    "the features of one device beside the time of another",
);

/// Every one of these steps produces `<id>.observations`.
fn observations_output(batch: RecordBatch, mut figures: Vec<Figure>) -> StepOutput {
    // The number columns beyond the canonical ones (a text column such as `feature_device`
    // labels rows; it is not a feature).
    let features = batch.schema().fields()[OBSERVATIONS.columns.len().min(batch.num_columns())..]
        .iter()
        .filter(|f| f.data_type() == &arrow_schema::DataType::Float64)
        .count();
    figures.insert(0, Figure::new("rows", batch.num_rows() as f64, ""));
    figures.insert(1, Figure::new("feature columns", features as f64, ""));
    StepOutput::new()
        .table(&OBSERVATIONS, batch)
        .figures(figures)
}

/// `pivot_counters`: long `counters` and `runs` to `observations` (one column per metric).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PivotCounters {
    pub runs: TableRef,
    pub counters: TableRef,
    /// Only these metrics (default: all).
    pub metrics: Option<Vec<String>>,
}

impl StepParams for PivotCounters {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.metrics.as_ref().is_some_and(Vec::is_empty) {
            return Err(ParamError::new(
                "metrics",
                "`metrics` is empty: leave it out to keep every metric",
            ));
        }
        Ok(self)
    }
}

impl Step for PivotCounters {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.runs, &self.counters]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = normalize::pivot_counters(
            cx.input(&self.runs)?,
            cx.input(&self.counters)?,
            self.metrics.as_deref(),
        )?;
        Ok(observations_output(batch, vec![]))
    }
}

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

fn default_ratio_scale() -> f64 {
    1.0
}

fn default_ratio_kind() -> String {
    "ratio".to_owned()
}

/// One derived ratio of [`Derive`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioSpec {
    pub name: String,
    pub numerator: String,
    pub denominator: String,
    #[serde(default = "default_ratio_scale")]
    pub scale: f64,
    #[serde(default = "default_ratio_kind")]
    pub kind: String,
}

/// `derive`: new feature columns `scale x numerator / denominator` (per-1000-instruction rates).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Derive {
    pub input: TableRef,
    pub ratios: Vec<RatioSpec>,
}

impl StepParams for Derive {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        for r in &self.ratios {
            if !r.scale.is_finite() {
                return Err(ParamError::new(
                    "ratios",
                    format!("ratio `{}`: `scale` must be a finite number", r.name),
                ));
            }
            if !METRIC_KINDS.contains(&r.kind.as_str()) {
                return Err(ParamError::new(
                    "ratios",
                    format!(
                        "ratio `{}`: kind `{}` is not one of: {}",
                        r.name,
                        r.kind,
                        METRIC_KINDS.join(", ")
                    ),
                ));
            }
        }
        Ok(self)
    }
}

impl Step for Derive {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let ratios: Vec<normalize::Ratio> = self
            .ratios
            .iter()
            .map(|r| normalize::Ratio {
                name: r.name.clone(),
                numerator: r.numerator.clone(),
                denominator: r.denominator.clone(),
                scale: r.scale,
                kind: r.kind.clone(),
            })
            .collect();
        let (batch, undefined) = normalize::derive_ratios(cx.input(&self.input)?, &ratios)?;
        let figures = undefined
            .into_iter()
            .map(|(name, rows)| {
                Figure::new(format!("{name}: rows without a value"), rows as f64, "")
            })
            .collect();
        Ok(observations_output(batch, figures))
    }
}

/// `aggregate`: means over rows that agree on `by`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Aggregate {
    pub input: TableRef,
    pub by: Vec<String>,
}

impl StepParams for Aggregate {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.by.is_empty() {
            return Err(ParamError::new(
                "by",
                "`by` is empty: name the columns whose equal values are averaged together",
            ));
        }
        Ok(self)
    }
}

impl Step for Aggregate {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.input]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let input = cx.input(&self.input)?;
        let batch = normalize::aggregate(input, &self.by)?;
        let figures = vec![Figure::new("rows before", input.num_rows() as f64, "")];
        Ok(observations_output(batch, figures))
    }
}

fn default_join_on() -> Vec<String> {
    vec!["program".to_owned(), "variant".to_owned()]
}

/// `cross_device`: features of one device beside the time of another. Adds a `feature_device`
/// column.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrossDevice {
    pub features: TableRef,
    pub target: TableRef,
    #[serde(default)]
    pub feature_devices: Vec<String>,
    #[serde(default)]
    pub target_devices: Vec<String>,
    #[serde(default = "default_join_on")]
    pub on: Vec<String>,
    #[serde(default)]
    pub include_same: bool,
    pub reference_time_feature: Option<String>,
    /// Only these feature columns of the feature device (default: all).
    pub metrics: Option<Vec<String>>,
}

impl StepParams for CrossDevice {
    type Step = Self;
    fn into_step(self) -> Result<Self, ParamError> {
        if self.on.is_empty() {
            return Err(ParamError::new(
                "on",
                "`on` is empty: name the columns that match a run on one device with the same work on another",
            ));
        }
        if self.metrics.as_ref().is_some_and(Vec::is_empty) {
            return Err(ParamError::new(
                "metrics",
                "`metrics` is empty: leave it out to keep every feature column",
            ));
        }
        Ok(self)
    }
}

impl Step for CrossDevice {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.features, &self.target]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&[&OBSERVATIONS])
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let options = normalize::CrossDevice {
            feature_devices: self.feature_devices.clone(),
            target_devices: self.target_devices.clone(),
            on: self.on.clone(),
            include_same: self.include_same,
            reference_time_feature: self.reference_time_feature.clone(),
            metrics: self.metrics.clone(),
        };
        let joined =
            normalize::cross_device(cx.input(&self.features)?, cx.input(&self.target)?, &options)?;
        let unpaired: usize = joined.pairs.iter().map(|p| p.3).sum();
        let figures = vec![
            Figure::new("device pairs", joined.pairs.len() as f64, "").headline(),
            Figure::new("target rows without a partner", unpaired as f64, "").headline(),
        ];
        Ok(observations_output(joined.observations, figures))
    }
}

#[cfg(test)]
mod tests {
    use crate::steps::testing::{observations, parse_error, run_steps};

    #[test]
    fn merged_and_standardised_features_come_out_as_observations() {
        let obs = observations(
            &["gpu", "gpu", "gpu", "gpu"],
            &[1.0, 2.0, 3.0, 4.0],
            &[
                ("gst32b", &[1.0, 0.0, 3.0, 0.0]),
                ("gst64b", &[0.0, 2.0, 0.0, 4.0]),
                ("inst", &[10.0, 20.0, 30.0, 40.0]),
            ],
        );
        let set = run_steps(
            "[[normalize]]\nstep = \"merge_counters\"\nid = \"m\"\ninput = \"src.observations\"\nmerges = [{ into = \"gst\", from = [\"gst32b\", \"gst64b\"] }]\n\
             [[normalize]]\nstep = \"zscore\"\nid = \"z\"\ninput = \"m.observations\"",
            vec![("observations", obs)],
        )
        .unwrap();
        let z = set.get("z.observations").unwrap();
        let gst = yosoku_tables::access::float64(z, "gst").unwrap();
        let mean: f64 = gst.values().iter().sum::<f64>() / 4.0;
        assert!(mean.abs() < 1e-12, "{mean}");
        assert!(z.column_by_name("gst32b").is_none());
    }

    #[test]
    fn cross_device_with_an_empty_metrics_list_fails_when_parsed() {
        let e = parse_error(
            "normalize",
            "step = \"cross_device\"\nid = \"x\"\nfeatures = \"src.observations\"\ntarget = \"src.observations\"\nmetrics = []",
        );
        assert!(
            e.contains("key `metrics`") && e.contains("`metrics` is empty"),
            "{e}"
        );
    }

    #[test]
    fn a_derived_ratio_of_an_unknown_kind_fails_when_parsed() {
        let e = parse_error(
            "normalize",
            "step = \"derive\"\nid = \"d\"\ninput = \"src.observations\"\nratios = [{ name = \"r\", numerator = \"a\", denominator = \"b\", kind = \"speed\" }]",
        );
        assert!(
            e.starts_with(
                "p.toml:8:10: key `ratios`: ratio `r`: kind `speed` is not one of: count,"
            ),
            "{e}"
        );
    }
}
