//! What the steps that fit scaling models share (`scaling_fit`, and `mpi_steps_and_ranks` for
//! its parts): the PMNF search's keys checked, the tables they write, the report's meanings.

use yosoku_models::scaling::{ScalingSpec, Search};
use yosoku_regression::pmnf::Aggregate;
use yosoku_tables::{PREDICTIONS, REPORT, SCALING_CURVES, SCALING_MODELS, SCALING_POINTS};

use crate::steps::step::ParamError;

pub(crate) fn default_level() -> f64 {
    0.95
}

pub(crate) fn default_aggregate() -> String {
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

/// `search`: which search chooses the terms.
pub(crate) fn search(search: &str) -> Result<Search, ParamError> {
    match search {
        "extrap" => Ok(Search::Extrap),
        "robust" => Ok(Search::Robust),
        other => Err(ParamError::new(
            "search",
            format!("`search = \"{other}\"`: expected `extrap` (Extra-P's search) or `robust`"),
        )),
    }
}

pub(crate) fn default_search() -> String {
    "extrap".to_owned()
}
