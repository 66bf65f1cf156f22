//! The counter family's model object ([`CounterRegression`]): one linear model of run time per
//! group of `observations` rows, over the features a step chose (least squares or a stepwise
//! selection with spline terms and interactions), saved with every column's recipe so that it
//! answers for rows it has not seen without refitting.
//!
//! The features it reads are those of the table it was fitted on, named as there: a table
//! standardised by a `zscore` step before the fit is asked in the same standardised units.

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};
use yosoku_regression::pmnf::saved::number;
use yosoku_regression::stepwise::ColumnSource;

use super::fit::{self, Columns, Fitted, GroupData, ModelSpec, Trained};
use super::{MODEL_KIND, Observations, feature_values, group_rows};
use crate::{Model, ModelError};

/// A fitted counter model: its options, the features it reads and one model per group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterRegression {
    pub options: ModelSpec,
    /// The features every column is made from, by their names in `observations`, in the order
    /// the columns' `source`s index them.
    pub features: Vec<String>,
    pub groups: Vec<GroupModel>,
}

/// One group's fitted model: modelled value = intercept + the sum of each column's coefficient
/// times its value; seconds as the options say (`exp` of it with `log_target`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupModel {
    /// `column=value` pairs joined by `, ` (empty for the one group without `group_by`).
    pub key: String,
    /// The value of each `group_by` column.
    pub values: Vec<String>,
    /// Training rows.
    pub rows: usize,
    #[serde(with = "number")]
    pub intercept: f64,
    /// The columns kept by the fit (those dropped as constant or collinear have no term).
    pub terms: Vec<SavedTerm>,
}

/// One column of a group's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedTerm {
    /// Its name in `model_coefficients`.
    pub name: String,
    #[serde(with = "number")]
    pub coefficient: f64,
    /// How it is computed from the features (after `log_features`' ln(1 + x)).
    pub source: ColumnSource,
}

impl GroupModel {
    /// The modelled value of each row of `features` (one slice per feature, all of one length).
    fn modelled(&self, features: &[&[f64]], rows: usize) -> Vec<f64> {
        let mut out = vec![self.intercept; rows];
        for term in &self.terms {
            for (o, v) in out.iter_mut().zip(term.source.evaluate(features)) {
                *o += term.coefficient * v;
            }
        }
        out
    }
}

/// Fits `spec` to every group of `observations` ([`fit::fit`], its tables named `model`), and
/// the model object saved from the same fit.
pub fn fit_and_save(
    model: &str,
    observations: &RecordBatch,
    spec: &ModelSpec,
) -> Result<(Fitted, CounterRegression), ModelError> {
    let (fitted, trainings) = fit::fit_trained(model, observations, spec)?;
    let saved = CounterRegression {
        options: spec.clone(),
        features: trainings.features,
        groups: trainings
            .groups
            .iter()
            .map(|(g, trained)| saved_group(g, trained))
            .collect(),
    };
    Ok((fitted, saved))
}

/// One group's model as [`CounterRegression`] saves it: the kept columns with their recipes.
fn saved_group(g: &GroupData, trained: &Trained) -> GroupModel {
    let fit = &trained.fit;
    let source = |j: usize| match &trained.columns {
        Columns::Features => ColumnSource::Feature {
            feature: j,
            knots: Vec::new(),
            index: 0,
        },
        Columns::Selected(s) => s.sources[j].clone(),
    };
    GroupModel {
        key: g.group.key.clone(),
        values: g.group.values.clone(),
        rows: g.secs.len(),
        intercept: fit.intercept,
        terms: fit
            .kept
            .iter()
            .zip(&fit.coefficients)
            .map(|(&j, &coefficient)| SavedTerm {
                name: trained.column_names[j].clone(),
                coefficient,
                source: source(j),
            })
            .collect(),
    }
}

impl Model for CounterRegression {
    const KIND: &'static str = MODEL_KIND;
    type Options = ModelSpec;
    type Training<'a> = &'a RecordBatch;
    /// An `observations` table of the rows to answer for (its measured times are not read).
    type Question<'a> = &'a RecordBatch;
    /// Predicted seconds, one per row of the question.
    type Answer = Vec<f64>;

    fn fit(observations: &RecordBatch, options: &ModelSpec) -> Result<Self, ModelError> {
        Ok(fit_and_save(MODEL_KIND, observations, options)?.1)
    }

    fn predict(&self, question: &RecordBatch) -> Result<Vec<f64>, ModelError> {
        let obs = Observations::new("observations", question)?;
        let mut out = vec![f64::NAN; obs.rows()];
        for group in group_rows(&obs, &self.options.group_by)? {
            let model = self
                .groups
                .iter()
                .find(|g| g.values == group.values)
                .ok_or_else(|| {
                    ModelError::invalid(format!(
                        "no model of {} (first at {}): the model was fitted on {}",
                        group.key,
                        obs.describe(group.rows[0]),
                        self.groups
                            .iter()
                            .map(|g| g.key.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ))
                })?;
            let values = self
                .features
                .iter()
                .map(|f| feature_values(&obs, f, &group.rows, self.options.log_features))
                .collect::<Result<Vec<_>, _>>()?;
            let columns: Vec<&[f64]> = values.iter().map(Vec::as_slice).collect();
            for (&r, v) in group
                .rows
                .iter()
                .zip(model.modelled(&columns, group.rows.len()))
            {
                out[r] = self.options.seconds(v);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use yosoku_regression::stepwise::StepwiseOptions;

    use super::super::FeatureChoice;
    use super::super::fit::Method;
    use super::super::testing::observations;
    use super::*;
    use crate::fixtures::floats;

    /// time = (1e-3 + 2e-6 a + 5e-7 b + 1e-9 a b) on device x, twice that on device y.
    fn data(values: &[(f64, f64)]) -> RecordBatch {
        let mut ids = Vec::new();
        let (mut secs, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for (device, factor) in [("x", 1.0), ("y", 2.0)] {
            for &(va, vb) in values {
                ids.push((device, "p", "v"));
                secs.push(factor * (1e-3 + 2e-6 * va + 5e-7 * vb + 1e-9 * va * vb));
                a.push(va);
                b.push(vb);
            }
        }
        observations(&ids, &secs, &[("a", "count", a), ("b", "count", b)])
    }

    fn training() -> RecordBatch {
        let values: Vec<(f64, f64)> = (0..30)
            .map(|i| (100.0 * (i + 1) as f64, ((i * 7) % 11) as f64 * 250.0))
            .collect();
        data(&values)
    }

    fn spec(method: Method, log: bool) -> ModelSpec {
        ModelSpec {
            choice: FeatureChoice::default(),
            group_by: vec!["device".into()],
            log_target: log,
            log_features: log,
            method,
        }
    }

    fn methods() -> Vec<(Method, bool)> {
        let stepwise = StepwiseOptions {
            spline_knots: Some(4),
            interactions: true,
            ..StepwiseOptions::default()
        };
        vec![
            (Method::Ols { ridge: 0.0 }, false),
            (Method::Ols { ridge: 1e-3 }, true),
            (Method::Stepwise(stepwise.clone()), false),
            (Method::Stepwise(stepwise), true),
        ]
    }

    #[test]
    fn the_saved_model_answers_as_the_fit_did_for_every_method() {
        let batch = training();
        for (method, log) in methods() {
            let spec = spec(method, log);
            let (fitted, model) = fit_and_save("m", &batch, &spec).unwrap();
            let saved = CounterRegression::from_json(&model.to_json().unwrap()).unwrap();
            assert_eq!(saved, model, "{spec:?}");
            if matches!(spec.method, Method::Stepwise(_)) {
                // The selection's own columns, not only the features, are what is saved.
                let terms = saved.groups.iter().flat_map(|g| &g.terms);
                assert!(
                    terms
                        .into_iter()
                        .any(|t| !matches!(t.source, ColumnSource::Feature { index: 0, .. })),
                    "{saved:?}"
                );
            }
            let in_sample = floats(&fitted.predictions, "predicted_secs");
            let answered = saved.predict(&batch).unwrap();
            assert_eq!(answered.len(), in_sample.len());
            for (p, q) in answered.iter().zip(&in_sample) {
                assert!((p - q).abs() <= 1e-9 * q.abs(), "{spec:?}: {p} against {q}");
            }
        }
    }

    #[test]
    fn rows_it_has_not_seen_are_answered_from_the_coefficients() {
        // Least squares on a, b and their product recovers the law; new rows lie outside the
        // training range.
        let mut batch = training();
        let product: Vec<f64> = floats(&batch, "a")
            .iter()
            .zip(floats(&batch, "b"))
            .map(|(a, b)| a * b)
            .collect();
        batch = with_product(&batch, product);
        let model =
            CounterRegression::fit(&batch, &spec(Method::Ols { ridge: 0.0 }, false)).unwrap();
        let new = data(&[(5000.0, 100.0), (7.0, 9000.0)]);
        let product: Vec<f64> = floats(&new, "a")
            .iter()
            .zip(floats(&new, "b"))
            .map(|(a, b)| a * b)
            .collect();
        let new = with_product(&new, product);
        let answered = model.predict(&new).unwrap();
        for (p, m) in answered.iter().zip(floats(&new, "measured_secs")) {
            assert!((p - m).abs() < 1e-9 * m, "{p} against {m}");
        }
    }

    fn with_product(batch: &RecordBatch, product: Vec<f64>) -> RecordBatch {
        let features = ["a", "b"]
            .iter()
            .map(|f| (*f, "count", floats(batch, f)))
            .chain([("ab", "count", product)])
            .collect::<Vec<_>>();
        let ids: Vec<(String, String, String)> = (0..batch.num_rows())
            .map(|r| {
                let s = |c: &str| crate::fixtures::strings(batch, c)[r].clone();
                (s("device"), s("program"), s("variant"))
            })
            .collect();
        let ids: Vec<(&str, &str, &str)> = ids
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        observations(&ids, &floats(batch, "measured_secs"), &features)
    }

    #[test]
    fn a_group_or_feature_the_model_lacks_is_named() {
        let model =
            CounterRegression::fit(&training(), &spec(Method::Ols { ridge: 0.0 }, false)).unwrap();
        let other = observations(
            &[("z", "p", "v")],
            &[1.0],
            &[("a", "count", vec![1.0]), ("b", "count", vec![2.0])],
        );
        let e = model.predict(&other).unwrap_err().to_string();
        assert!(
            e.starts_with("no model of device=z (first at row 0")
                && e.ends_with("the model was fitted on device=x; device=y"),
            "{e}"
        );
        let lacking = observations(&[("x", "p", "v")], &[1.0], &[("a", "count", vec![1.0])]);
        let e = model.predict(&lacking).unwrap_err().to_string();
        assert!(e.contains("`b`"), "{e}");
    }
}
