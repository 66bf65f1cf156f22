//! What the steps that fit scaling models share (`scaling_fit`, and `mpi_steps_and_ranks_fit`
//! for its parts): the PMNF search's keys as one group, the tables they write, the report's
//! meanings.

use std::collections::BTreeMap;

use serde::Deserialize;
use yosoku_models::scaling::{ScalingSpec, Search};
use yosoku_regression::pmnf::Aggregate;
use yosoku_tables::{PREDICTIONS, REPORT, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use crate::steps::step::{KeyGroup, ParamError};

fn default_level() -> f64 {
    0.95
}

fn default_aggregate() -> String {
    "mean".to_owned()
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

/// The PMNF search's keys: every step that fits scaling models (`scaling_fit`,
/// `mpi_steps_and_ranks_fit`) reads them once as this group beside its own keys
/// (`StepKind::grouped`), each refused at its line and column when its value is not one.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PmnfKeys {
    /// The parameters to model over; every numeric one that varies when absent.
    #[serde(default)]
    pub parameters: Vec<String>,
    /// How repetitions of a point are reduced: `mean` or `median`.
    #[serde(default = "default_aggregate")]
    pub aggregate: String,
    /// Coverage of the prediction intervals.
    #[serde(default = "default_level")]
    pub level: f64,
    /// Also try negative exponents (Extra-P's `allow_negative_exponents`): times that fall as a
    /// parameter grows, as a rank count under strong scaling.
    #[serde(default)]
    pub negative_exponents: bool,
    /// What each parameter is, in words (`n = "grid points per side"`): written into the
    /// reports of the validation steps, where `yosoku report` and the viewer's Scaling view show
    /// it beside the models.
    #[serde(default)]
    pub meanings: BTreeMap<String, String>,
    /// `extrap` (default: Extra-P's search, the same terms as Extra-P) or `robust` (the
    /// noise-resilient search: weighted by the repetitions' noise, negative exponents always,
    /// sums and products over parameters).
    #[serde(default = "default_search")]
    pub search: String,
}

impl KeyGroup for PmnfKeys {
    const KEYS: &'static [&'static str] = &[
        "parameters",
        "aggregate",
        "level",
        "negative_exponents",
        "meanings",
        "search",
    ];
}

impl PmnfKeys {
    /// The search these keys ask for, checked (`aggregate`, `level`, `search`, `meanings` naming
    /// parameters modelled); the meanings, for the reports.
    pub(crate) fn into_spec(self) -> Result<(ScalingSpec, BTreeMap<String, String>), ParamError> {
        let aggregate = match self.aggregate.as_str() {
            "mean" => Aggregate::Mean,
            "median" => Aggregate::Median,
            other => {
                return Err(ParamError::new(
                    "aggregate",
                    format!("`aggregate = \"{other}\"`: expected `mean` or `median`"),
                ));
            }
        };
        let level = self.level;
        if !(0.5..1.0).contains(&level) {
            return Err(ParamError::new(
                "level",
                format!("level {level}: expected a number in [0.5, 1)"),
            ));
        }
        if let Some(unknown) = self
            .meanings
            .keys()
            .find(|k| !self.parameters.is_empty() && !self.parameters.contains(k))
        {
            return Err(ParamError::new(
                "meanings",
                format!(
                    "`{unknown}` is not one of the parameters modelled ({})",
                    self.parameters.join(", ")
                ),
            ));
        }
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
        let spec = ScalingSpec {
            parameters: self.parameters,
            aggregate,
            hold_out_largest: false,
            level,
            allow_negative_exponents: self.negative_exponents,
            search,
        };
        Ok((spec, self.meanings))
    }
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

fn default_search() -> String {
    "extrap".to_owned()
}
