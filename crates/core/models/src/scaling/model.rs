//! The scaling family as one model object ([`PmnfScaling`]): every call path's PMNF model of a
//! `runs` table, fitted on all its configurations by `scaling_fit`, saved in the bundle with
//! named fields, and asked for a call path's time at a configuration from what was saved.

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};
use yosoku_regression::pmnf::PmnfModel;

use super::fitting::{Scaling, scaling_models};
use super::spec::ScalingSpec;
use crate::{Model, ModelError};

/// The kind of model a `scaling_fit` step records in its bundle: each call path's PMNF model
/// ([`PmnfScaling`]).
pub const MODEL_KIND: &str = "scaling";

/// Every call path's fitted PMNF model, over `parameters` in that order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PmnfScaling {
    /// The parameters modelled over, in the order of every model's coordinates.
    pub parameters: Vec<String>,
    /// Coverage of the intervals it answers with (the fit's `level`).
    pub level: f64,
    pub call_paths: Vec<CallPathModel>,
}

/// One call path's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallPathModel {
    pub device: String,
    pub program: String,
    pub variant: String,
    pub phase: String,
    /// The model as Extra-P writes it.
    pub formula: String,
    pub model: PmnfModel,
}

/// A call path (device, program, variant, phase) and a value for every parameter modelled.
#[derive(Debug, Clone, Copy)]
pub struct ScalingQuestion<'a> {
    pub call_path: [&'a str; 4],
    pub at: &'a [(String, f64)],
}

/// A call path's modelled time, with its interval at the fit's level where it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingAnswer {
    pub predicted_secs: f64,
    pub interval_secs: Option<(f64, f64)>,
}

impl PmnfScaling {
    /// The model object of what [`scaling_models`] fitted (nothing held out) with `spec`.
    pub fn from_scaling(scaling: &Scaling, spec: &ScalingSpec) -> Self {
        let parameter_names: Vec<&str> = scaling.parameters.iter().map(String::as_str).collect();
        Self {
            parameters: scaling.parameters.clone(),
            level: spec.level,
            call_paths: scaling
                .fits
                .iter()
                .map(|(key, model)| CallPathModel {
                    device: key[0].clone(),
                    program: key[1].clone(),
                    variant: key[2].clone(),
                    phase: key[3].clone(),
                    formula: model.to_extrap(&parameter_names),
                    model: model.clone(),
                })
                .collect(),
        }
    }
}

impl Model for PmnfScaling {
    const KIND: &'static str = MODEL_KIND;
    type Options = ScalingSpec;
    type Training<'a> = &'a RecordBatch;
    type Question<'a> = ScalingQuestion<'a>;
    type Answer = ScalingAnswer;

    fn fit(runs: &RecordBatch, options: &ScalingSpec) -> Result<Self, ModelError> {
        let spec = ScalingSpec {
            hold_out_largest: false,
            ..options.clone()
        };
        Ok(Self::from_scaling(&scaling_models(runs, &spec)?, &spec))
    }

    fn predict(&self, question: ScalingQuestion<'_>) -> Result<ScalingAnswer, ModelError> {
        let [device, program, variant, phase] = question.call_path;
        let path = self
            .call_paths
            .iter()
            .find(|c| {
                c.device == device
                    && c.program == program
                    && c.variant == variant
                    && c.phase == phase
            })
            .ok_or_else(|| {
                ModelError::invalid(format!(
                    "no call path {device} / {program} / {variant} / {phase} in the scaling model"
                ))
            })?;
        let x = self
            .parameters
            .iter()
            .map(|name| {
                question
                    .at
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| {
                        ModelError::invalid(format!(
                            "no value for parameter `{name}` (the model is over {})",
                            self.parameters.join(", ")
                        ))
                    })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        Ok(ScalingAnswer {
            predicted_secs: path.model.evaluate(&x),
            interval_secs: path.model.interval(&x, self.level),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
    use yosoku_regression::pmnf::Aggregate;
    use yosoku_tables::RUNS;

    use super::*;
    use crate::scaling::Search;

    /// Runs of two call paths over n = 1..6, twice each: `a` = 2 + 3 n exactly (its interval's
    /// variance 0), `b` = 1 + n^2 / 100 with 1 % of noise.
    fn runs() -> RecordBatch {
        let (mut params, mut programs, mut secs) = (Vec::new(), Vec::new(), Vec::new());
        for n in 1..=6 {
            for noise in [0.99, 1.01] {
                let n = f64::from(n);
                params.extend([format!("n={n}"), format!("n={n}")]);
                programs.extend(["a", "b"]);
                secs.extend([2.0 + 3.0 * n, (1.0 + n * n / 100.0) * noise]);
            }
        }
        let rows = secs.len();
        let text = |v: Vec<String>| -> ArrayRef { Arc::new(StringArray::from(v)) };
        let same = |v: &str| text(vec![v.to_owned(); rows]);
        RUNS.batch(vec![
            text((0..rows).map(|i| format!("r{i}")).collect()),
            same("dev"),
            text(programs.iter().map(|p| (*p).to_owned()).collect()),
            same(""),
            text(params),
            same("kernel"),
            Arc::new(Int64Array::from(vec![1; rows])),
            Arc::new(Float64Array::from(secs)),
        ])
        .unwrap()
    }

    fn options() -> ScalingSpec {
        ScalingSpec {
            parameters: Vec::new(),
            aggregate: Aggregate::Mean,
            hold_out_largest: false,
            level: 0.95,
            allow_negative_exponents: false,
            search: Search::Extrap,
        }
    }

    /// The saved form reads back as the same model (every number bit for bit, a NaN as NaN) and
    /// answers as the fitted one; a call path or parameter it lacks is refused by name.
    #[test]
    fn a_saved_scaling_model_answers_as_the_fitted_one() {
        let fitted = PmnfScaling::fit(&runs(), &options()).unwrap();
        assert_eq!(fitted.parameters, ["n"]);
        let text = fitted.to_json().unwrap();
        let saved = PmnfScaling::from_json(&text).unwrap();
        assert_eq!(saved.to_json().unwrap(), text);
        let at = [("n".to_owned(), 12.0)];
        for (program, expected) in [("a", 2.0 + 3.0 * 12.0), ("b", 1.0 + 144.0 / 100.0)] {
            let question = ScalingQuestion {
                call_path: ["dev", program, "", "kernel"],
                at: &at,
            };
            let (a, b) = (
                fitted.predict(question).unwrap(),
                saved.predict(question).unwrap(),
            );
            assert_eq!(a.predicted_secs.to_bits(), b.predicted_secs.to_bits());
            assert_eq!(
                format!("{:?}", a.interval_secs),
                format!("{:?}", b.interval_secs)
            );
            assert!(
                (a.predicted_secs - expected).abs() < 0.02 * expected,
                "{program}: {} against {expected}",
                a.predicted_secs
            );
        }
        let e = saved
            .predict(ScalingQuestion {
                call_path: ["dev", "c", "", "kernel"],
                at: &at,
            })
            .unwrap_err();
        assert!(
            e.to_string().contains("no call path dev / c /  / kernel"),
            "{e}"
        );
        let e = saved
            .predict(ScalingQuestion {
                call_path: ["dev", "a", "", "kernel"],
                at: &[],
            })
            .unwrap_err();
        assert!(e.to_string().contains("no value for parameter `n`"), "{e}");
    }
}
