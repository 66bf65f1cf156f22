//! The scaling family as one model object ([`PmnfScaling`]): every call path's PMNF model of a
//! `runs` table, fitted on all its configurations by `scaling_fit`, saved in the bundle with
//! named fields, and asked for a call path's time at a configuration from what was saved.

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};
use yosoku_regression::pmnf::PmnfModel;
use yosoku_regression::pmnf::calibrate::CalibratedIntervals;

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
    /// Its intervals under its program's calibration, as the step reported them; absent from
    /// bundles written before the intervals were calibrated, which answer with the fit's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<CalibratedIntervals>,
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
                .map(|(key, model, intervals)| CallPathModel {
                    device: key[0].clone(),
                    program: key[1].clone(),
                    variant: key[2].clone(),
                    phase: key[3].clone(),
                    formula: model.to_extrap(&parameter_names),
                    model: model.clone(),
                    intervals: Some(intervals.clone()),
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
            interval_secs: match &path.intervals {
                Some(intervals) => intervals.interval(&path.model, &x),
                None => path.model.interval(&x, self.level),
            },
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
        let ns: Vec<f64> = (1..=6).map(f64::from).collect();
        runs_of(
            &["a", "b"],
            &ns,
            &[0.99, 1.01],
            |program, n, noise| match program {
                "a" => 2.0 + 3.0 * n,
                _ => (1.0 + n * n / 100.0) * noise,
            },
        )
    }

    /// Runs of call paths `programs` at every `n` of `ns`, one for each of `noises`, their
    /// times `secs(program, n, noise)`.
    fn runs_of(
        programs: &[&str],
        ns: &[f64],
        noises: &[f64],
        secs: impl Fn(&str, f64, f64) -> f64,
    ) -> RecordBatch {
        let (mut params, mut names, mut times) = (Vec::new(), Vec::new(), Vec::new());
        for &n in ns {
            for &noise in noises {
                for &program in programs {
                    params.push(format!("n={n}"));
                    names.push(program.to_owned());
                    times.push(secs(program, n, noise));
                }
            }
        }
        let rows = times.len();
        let text = |v: Vec<String>| -> ArrayRef { Arc::new(StringArray::from(v)) };
        let same = |v: &str| text(vec![v.to_owned(); rows]);
        RUNS.batch(vec![
            text((0..rows).map(|i| format!("r{i}")).collect()),
            same("dev"),
            text(names),
            same(""),
            text(params),
            same("kernel"),
            Arc::new(Int64Array::from(vec![1; rows])),
            Arc::new(Float64Array::from(times)),
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

    /// Twenty call paths, each `a n` with 2 % of noise between its repetitions, whose time
    /// jumps 1.8x from n = 256 on (a cache left, communication taking over): the fit's own
    /// intervals at the held-out n = 512 carry the noise, not the jump; the step's checks (each
    /// call path's largest fitted point, n = 256, predicted from n = 8 ... 128) see it, and its
    /// intervals, widened by what they saw, hold the held-out times. What is held out plays no
    /// part: multiplied by 100, the intervals stay as they were.
    #[test]
    fn a_step_s_intervals_are_calibrated_on_its_fitted_points_alone() {
        let programs: Vec<String> = (0..20).map(|k| format!("p{k}")).collect();
        let names: Vec<&str> = programs.iter().map(String::as_str).collect();
        let ns = [8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
        let law = |held_out_scale: f64| {
            move |program: &str, n: f64, noise: f64| {
                let k: f64 = program[1..].parse().unwrap();
                let knee = if n >= 256.0 { 1.8 } else { 1.0 };
                let held = if n == 512.0 { held_out_scale } else { 1.0 };
                (1.0 + 0.1 * k) * 1e-3 * n * knee * (1.0 + 2.0 * (noise - 1.0)) * held
            }
        };
        let spec = ScalingSpec {
            hold_out_largest: true,
            ..options()
        };
        let scaled = scaling_models(&runs_of(&names, &ns, &[0.99, 1.01], law(1.0)), &spec).unwrap();
        let inside = |held: fn(&crate::scaling::Scaling, usize) -> Option<(f64, f64)>| {
            scaled
                .predictions
                .iter()
                .enumerate()
                .filter(|(i, p)| {
                    held(&scaled, *i)
                        .is_some_and(|(lo, hi)| (lo..=hi).contains(&p.measured_secs.unwrap()))
                })
                .count()
        };
        let calibrated = inside(|s, i| s.predictions[i].interval_secs);
        let own = inside(|s, i| {
            let x = [512.0];
            s.fits[i].1.interval(&x, 0.95)
        });
        assert!(
            calibrated >= 19 && own <= 10,
            "calibrated {calibrated}, own {own} of 20"
        );
        let described = |s: &crate::scaling::Scaling| {
            s.report
                .iter()
                .find(|c| c.column == "intervals")
                .and_then(|c| c.text.clone())
                .unwrap()
        };
        assert!(
            described(&scaled).contains("calibrated on 20 held-out points"),
            "{}",
            described(&scaled)
        );
        let moved =
            scaling_models(&runs_of(&names, &ns, &[0.99, 1.01], law(100.0)), &spec).unwrap();
        assert_eq!(described(&moved), described(&scaled));
        for (a, b) in scaled.predictions.iter().zip(&moved.predictions) {
            assert_eq!(a.interval_secs, b.interval_secs);
            assert_ne!(a.measured_secs, b.measured_secs);
        }
    }

    /// A bundle written before the intervals were calibrated (its call paths without
    /// `intervals`) still loads, and answers with the fit's own interval; a saved model now
    /// answers with the calibrated one its step reported.
    #[test]
    fn a_saved_model_without_calibrated_intervals_answers_with_the_fit_s_own() {
        let fitted = PmnfScaling::fit(&runs(), &options()).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&fitted.to_json().unwrap()).unwrap();
        for path in json["call_paths"].as_array_mut().unwrap() {
            assert!(path.get("intervals").is_some(), "{path}");
            path.as_object_mut().unwrap().remove("intervals");
        }
        let older = PmnfScaling::from_json(&json.to_string()).unwrap();
        let at = [("n".to_owned(), 12.0)];
        let question = ScalingQuestion {
            call_path: ["dev", "b", "", "kernel"],
            at: &at,
        };
        let path = &fitted.call_paths[1];
        let intervals = path.intervals.as_ref().unwrap();
        assert_eq!(
            fitted.predict(question).unwrap().interval_secs,
            intervals.interval(&path.model, &[12.0])
        );
        assert_eq!(
            older.predict(question).unwrap().interval_secs,
            path.model.interval(&[12.0], 0.95)
        );
    }

    /// Without repetitions and with four sizes fitted, the robust search's checks (each
    /// keeping three sizes, from which it chooses only a constant) cannot be made: its
    /// intervals are borrowed, each the Extra-P-compatible search's calibrated interval of the
    /// same call path stretched to hold the robust prediction.
    #[test]
    fn a_robust_step_that_cannot_check_its_intervals_borrows_extrap_s() {
        let programs: Vec<String> = (0..6).map(|k| format!("p{k}")).collect();
        let names: Vec<&str> = programs.iter().map(String::as_str).collect();
        let runs = runs_of(&names, &[2.0, 4.0, 8.0, 16.0, 32.0], &[1.0], |p, n, _| {
            let k: f64 = p[1..].parse().unwrap();
            // Each call path a little off its law at a different size.
            let wobble = if (n.log2() as usize + k as usize).is_multiple_of(3) {
                1.04
            } else {
                0.98
            };
            (1.0 + k) * (0.5 + n.powf(1.5)) * wobble
        });
        let spec = |search| ScalingSpec {
            hold_out_largest: true,
            search,
            ..options()
        };
        let robust = scaling_models(&runs, &spec(Search::Robust)).unwrap();
        let extrap = scaling_models(&runs, &spec(Search::Extrap)).unwrap();
        let said = robust
            .report
            .iter()
            .find(|c| c.column == "intervals")
            .and_then(|c| c.text.clone())
            .unwrap();
        assert!(said.contains("intervals borrowed"), "{said}");
        assert_eq!(robust.predictions.len(), 6);
        for (r, e) in robust.predictions.iter().zip(&extrap.predictions) {
            let (lo, hi) = e.interval_secs.unwrap();
            let y = r.predicted_secs;
            assert_eq!(
                r.interval_secs,
                Some((lo.min(y).max(0.0), hi.max(y))),
                "{}",
                r.program
            );
        }
    }
}
