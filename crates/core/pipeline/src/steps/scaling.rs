//! `scaling_model`: each call path's time over the numeric parameters of its runs, in Extra-P's
//! performance model normal form, its largest configuration held out and predicted
//! (docs/methods.md, section 7).

use serde::Deserialize;
use yosoku_models::ModelError;
use yosoku_models::scaling::{ScalingSpec, Search, scaling_models};
use yosoku_regression::pmnf::Aggregate;
use yosoku_tables::{PREDICTIONS, REPORT, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use super::step::{
    ParamError, Stage, Step, StepContext, StepError, StepKind, StepOutput, StepParams, TableRef,
    TrainingTable, names,
};

pub(crate) const SCALING_MODEL: StepKind = StepKind::new::<ScalingParams>(
    "scaling_model",
    Stage::Validate,
    "each call path's time over its runs' numeric parameters (Extra-P's PMNF search), the largest configuration held out and predicted",
);

pub(crate) fn default_level() -> f64 {
    0.95
}

pub(crate) fn default_aggregate() -> String {
    "mean".to_owned()
}

fn default_hold_out() -> String {
    "largest".to_owned()
}

/// `scaling_model` over one `runs` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScalingParams {
    pub runs: TableRef,
    /// The parameters to model over; every numeric one that varies when absent.
    #[serde(default)]
    pub parameters: Vec<String>,
    /// How repetitions of a point are reduced: `mean` or `median`.
    #[serde(default = "default_aggregate")]
    pub aggregate: String,
    /// `largest` (each call path's largest configuration left out of the fit and predicted) or
    /// `none`.
    #[serde(default = "default_hold_out")]
    pub hold_out: String,
    /// Coverage of the prediction intervals.
    #[serde(default = "default_level")]
    pub level: f64,
    /// Also try negative exponents (Extra-P's `allow_negative_exponents`): times that fall as a
    /// parameter grows, as a rank count under strong scaling.
    #[serde(default)]
    pub negative_exponents: bool,
    /// What each parameter is, in words (`n = "grid points per side"`): written into the
    /// report, where `yosoku report` and the viewer's Scaling view show it beside the models.
    #[serde(default)]
    pub meanings: std::collections::BTreeMap<String, String>,
    /// `extrap` (default: Extra-P's search, the same terms as Extra-P) or `robust` (the
    /// noise-resilient search: weighted by the repetitions' noise, negative exponents always,
    /// sums and products over parameters).
    #[serde(default = "default_search")]
    pub search: String,
}

fn default_search() -> String {
    "extrap".to_owned()
}

#[derive(Debug)]
pub struct ScalingModel {
    runs: TableRef,
    spec: ScalingSpec,
    meanings: std::collections::BTreeMap<String, String>,
}

impl StepParams for ScalingParams {
    type Step = ScalingModel;
    fn into_step(self) -> Result<ScalingModel, ParamError> {
        let hold_out_largest = match self.hold_out.as_str() {
            "largest" => true,
            "none" => false,
            other => {
                return Err(ParamError::new(
                    "hold_out",
                    format!("`hold_out = \"{other}\"`: expected `largest` or `none`"),
                ));
            }
        };
        let spec = scaling_spec(
            self.parameters,
            &self.aggregate,
            self.level,
            self.negative_exponents,
            &self.meanings,
        )?;
        let search = match self.search.as_str() {
            "extrap" => Search::Extrap,
            "robust" => Search::Robust,
            other => {
                return Err(ParamError::new(
                    "search",
                    format!(
                        "`search = \"{other}\"`: expected `extrap` (Extra-P's search) or `robust`"
                    ),
                ));
            }
        };
        Ok(ScalingModel {
            meanings: self.meanings,
            runs: self.runs,
            spec: ScalingSpec {
                hold_out_largest,
                search,
                ..spec
            },
        })
    }
}

/// What every step that fits scaling models writes: the models, the points and curves the
/// Scaling view plots, the predictions and the report.
pub(crate) const SCALING_TABLES: [&yosoku_tables::TableDef; 5] = [
    &SCALING_MODELS,
    &SCALING_POINTS,
    &SCALING_CURVES,
    &PREDICTIONS,
    &REPORT,
];

/// The PMNF search's keys checked (`aggregate`, `level`, `meanings` naming parameters
/// modelled): every step that fits scaling models has them.
pub(crate) fn scaling_spec(
    parameters: Vec<String>,
    aggregate: &str,
    level: f64,
    negative_exponents: bool,
    meanings: &std::collections::BTreeMap<String, String>,
) -> Result<ScalingSpec, ParamError> {
    let aggregate = match aggregate {
        "mean" => Aggregate::Mean,
        "median" => Aggregate::Median,
        other => {
            return Err(ParamError::new(
                "aggregate",
                format!("`aggregate = \"{other}\"`: expected `mean` or `median`"),
            ));
        }
    };
    if !(0.5..1.0).contains(&level) {
        return Err(ParamError::new(
            "level",
            format!("level {level}: expected a number in [0.5, 1)"),
        ));
    }
    if let Some(unknown) = meanings
        .keys()
        .find(|k| !parameters.is_empty() && !parameters.contains(k))
    {
        return Err(ParamError::new(
            "meanings",
            format!(
                "`{unknown}` is not one of the parameters modelled ({})",
                parameters.join(", ")
            ),
        ));
    }
    Ok(ScalingSpec {
        parameters,
        aggregate,
        hold_out_largest: false,
        level,
        allow_negative_exponents: negative_exponents,
        search: Search::Extrap,
    })
}

/// The report's cells of what each parameter is, in words (`meanings`).
pub(crate) fn meaning_cells(
    meanings: &std::collections::BTreeMap<String, String>,
) -> impl Iterator<Item = yosoku_tables::report::ReportCell> + '_ {
    meanings.iter().map(|(name, meaning)| {
        yosoku_tables::report::ReportCell::text(
            yosoku_tables::report::PARAMETER_MEANINGS_TITLE,
            name,
            "meaning",
            meaning,
        )
    })
}

impl Step for ScalingModel {
    fn inputs(&self) -> Vec<&TableRef> {
        vec![&self.runs]
    }

    fn outputs(&self) -> Vec<&str> {
        names(&SCALING_TABLES)
    }

    fn run(&self, cx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let batch = cx.input(&self.runs)?;
        let s = scaling_models(batch, &self.spec)?;
        let predictions =
            yosoku_tables::rows::predictions_batch(&s.predictions).map_err(ModelError::from)?;
        let mut cells = s.report;
        cells.extend(meaning_cells(&self.meanings));
        let report = yosoku_tables::report::report_batch(&cells).map_err(ModelError::from)?;
        Ok(StepOutput::new()
            .table(&SCALING_MODELS, s.models)
            .table(&SCALING_POINTS, s.points)
            .table(&SCALING_CURVES, s.curves)
            .table(&PREDICTIONS, predictions)
            .table(&REPORT, report)
            .figures(s.figures)
            .saved_model(
                yosoku_models::scaling::MODEL_KIND,
                TrainingTable::Input(self.runs.get_ref().clone()),
                &[&SCALING_MODELS],
            ))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::RecordBatch;
    use yosoku_tables::RUNS;
    use yosoku_tables::access::{float64, utf8};

    use crate::steps::testing::{
        f, i64s, opt_s, parse_error, run_error, run_steps_with_figures, s,
    };

    /// Runs of two kernels over n (and one run without a number for it).
    fn runs(params: &[Option<&str>], secs: &[f64]) -> RecordBatch {
        let n = params.len();
        let ids: Vec<String> = (0..n).map(|i| format!("r{i}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let program: Vec<&str> = (0..n).map(|i| if i % 2 == 0 { "a" } else { "b" }).collect();
        RUNS.batch(vec![
            s(&ids),
            s(&vec!["dev"; n]),
            s(&program),
            s(&vec![""; n]),
            opt_s(params),
            s(&vec!["kernel"; n]),
            i64s(&vec![Some(1); n]),
            f(secs),
        ])
        .unwrap()
    }

    const BODY: &str = "step = \"scaling_model\"\nid = \"s\"\nruns = \"src.runs\"\n";
    const STEP: &str = "[[validate]]\nstep = \"scaling_model\"\nid = \"s\"\nruns = \"src.runs\"\n";

    #[test]
    fn each_call_path_is_modelled_and_its_largest_size_predicted() {
        // a: 2 + 3 n; b: 1 + n^2 / 100, at n = 1..6, twice each; n = 6 held out.
        let (mut params, mut secs) = (Vec::new(), Vec::new());
        let texts: Vec<String> = (1..=6).map(|n| format!("n={n};label=x")).collect();
        for (i, t) in texts.iter().enumerate() {
            let n = (i + 1) as f64;
            for _ in 0..2 {
                params.extend([Some(t.as_str()), Some(t.as_str())]);
                secs.extend([2.0 + 3.0 * n, 1.0 + n * n / 100.0]);
            }
        }
        let step = format!("{STEP}meanings = {{ n = \"the problem's size\" }}\n");
        let (set, figures) =
            run_steps_with_figures(&step, vec![("runs", runs(&params, &secs))]).unwrap();
        // The meaning given is in the report, where the viewer and `yosoku report` show it.
        let report = set.get("s.report").unwrap();
        let titles = utf8(report, "title").unwrap();
        let last = report.num_rows() - 1;
        assert_eq!(
            titles.value(last),
            yosoku_tables::report::PARAMETER_MEANINGS_TITLE
        );
        assert_eq!(utf8(report, "row_label").unwrap().value(last), "n");
        assert_eq!(
            utf8(report, "text").unwrap().value(last),
            "the problem's size"
        );
        let models = set.get("s.scaling_models").unwrap();
        let formula = utf8(models, "formula").unwrap();
        assert!(
            formula.value(0).ends_with("* n^(1)"),
            "{}",
            formula.value(0)
        );
        assert!(
            formula.value(1).ends_with("* n^(2)"),
            "{}",
            formula.value(1)
        );
        assert_eq!(utf8(models, "held_out").unwrap().value(0), "n=6");
        let p = set.get("s.predictions").unwrap();
        let predicted = float64(p, "predicted_secs").unwrap();
        assert!(
            (predicted.value(0) - 20.0).abs() < 1e-9 && (predicted.value(1) - 1.36).abs() < 1e-9
        );
        let fig = &figures[0].1;
        assert!(
            fig.iter().any(
                |f| f.name == "largest configuration held out: median |error|" && f.value < 1e-6
            )
        );
    }

    /// `search = "robust"`: a time that falls as n grows (1 + 8 / n, three repetitions 1 % apart)
    /// is found with its negative exponent, which Extra-P's search tries only when asked; the
    /// report names the search.
    #[test]
    fn the_robust_search_is_a_choice_of_the_step() {
        let (mut params, mut secs) = (Vec::new(), Vec::new());
        let texts: Vec<String> = (1..=6).map(|n| format!("n={}", 1 << n)).collect();
        for (i, t) in texts.iter().enumerate() {
            let n = f64::from(1 << (i + 1));
            for noise in [0.99, 1.0, 1.01] {
                params.extend([Some(t.as_str()), Some(t.as_str())]);
                secs.extend([(1.0 + 8.0 / n) * noise, (2.0 + n) * noise]);
            }
        }
        let formulas = |search: &str| {
            let step = format!("{STEP}hold_out = \"none\"\nsearch = \"{search}\"\n");
            let (set, _) =
                run_steps_with_figures(&step, vec![("runs", runs(&params, &secs))]).unwrap();
            let title = utf8(set.get("s.report").unwrap(), "title")
                .unwrap()
                .value(0)
                .to_owned();
            let models = set.get("s.scaling_models").unwrap();
            let formula = utf8(models, "formula").unwrap();
            (
                title,
                formula.value(0).to_owned(),
                formula.value(1).to_owned(),
            )
        };
        let (title, falling, rising) = formulas("robust");
        assert!(title.contains("(the robust PMNF search)"), "{title}");
        assert!(falling.ends_with("* n^(-1)"), "{falling}");
        assert!(rising.ends_with("* n^(1)"), "{rising}");
        let (title, falling, _) = formulas("extrap");
        assert!(title.contains("(Extra-P's PMNF search)"), "{title}");
        assert!(!falling.contains("^(-"), "{falling}");
    }

    #[test]
    fn bad_parameters_and_runs_without_a_numeric_parameter_are_refused() {
        let e = parse_error("validate", &format!("{BODY}search = \"bayes\""));
        assert!(
            e.contains("key `search`: `search = \"bayes\"`: expected `extrap`"),
            "{e}"
        );
        let e = parse_error("validate", &format!("{BODY}aggregate = \"max\""));
        assert!(e.contains("expected `mean` or `median`"), "{e}");
        let e = parse_error("validate", &format!("{BODY}hold_out = \"smallest\""));
        assert!(e.contains("expected `largest` or `none`"), "{e}");
        let e = parse_error("validate", &format!("{BODY}level = 1.5"));
        assert!(e.contains("level 1.5"), "{e}");
        let e = parse_error(
            "validate",
            &format!("{BODY}parameters = [\"n\"]\nmeanings = {{ p = \"ranks\" }}"),
        );
        assert!(
            e.contains("`p` is not one of the parameters modelled (n)"),
            "{e}"
        );
        let e = run_error(
            STEP,
            vec![("runs", runs(&[Some("size=big"), None], &[1.0, 2.0]))],
        );
        assert!(e.contains("no parameter is a number in every run"), "{e}");
        let named = format!("{STEP}parameters = [\"n\"]");
        let e = run_error(
            &named,
            vec![("runs", runs(&[Some("n=1"), Some("m=2")], &[1.0, 2.0]))],
        );
        assert!(
            e.contains("parameter `n`: the run of dev / b /  / kernel has no number"),
            "{e}"
        );
    }
}
