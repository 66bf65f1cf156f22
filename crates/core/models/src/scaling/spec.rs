//! What a scaling model is asked: the parameters, the aggregate of repetitions, the hold-out,
//! the interval level and the search that chooses the terms.

use serde::{Deserialize, Serialize};
use yosoku_regression::pmnf::Aggregate;

/// What a scaling model is fitted with (`scaling_fit`'s keys; the options its saved form
/// records), and whether the largest configuration is held out (`scaling_model`'s validation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalingSpec {
    /// The parameters to model over; empty: every parameter that is a number in every run and
    /// varies within some call path.
    pub parameters: Vec<String>,
    pub aggregate: Aggregate,
    /// Hold each call path's largest configuration (the last in parameter order) out of the fit
    /// and predict it.
    pub hold_out_largest: bool,
    /// Coverage of the prediction intervals.
    pub level: f64,
    /// Also try negative exponents (Extra-P's `allow_negative_exponents`).
    pub allow_negative_exponents: bool,
    /// Which search chooses the terms.
    pub search: Search,
}

/// The search that chooses each call path's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Search {
    /// Extra-P's (the default): its hypotheses, its selection; the same terms as Extra-P 4.2.5.
    #[default]
    Extrap,
    /// The robust search (`yosoku_regression::pmnf::robust`, docs/methods.md, section 7): the
    /// repetitions' noise weighs the fit and the choice, negative exponents always, sums and
    /// products over parameters; its interval carries the choice's own doubt.
    Robust,
}
