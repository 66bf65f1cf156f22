//! Summary figures: the few numbers a stage reports about its result, stored in the bundle's
//! manifest and printed by `cargo xtask demo`.

use serde::{Deserialize, Serialize};

/// One summary figure, e.g. `montecarlo d=2 compute: error` = 3.68 `%`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    /// `s`, `%`, `ops`, ... (empty for a plain number).
    pub unit: String,
    /// The published value this figure reproduces, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
    /// Whether the figure is one of the pipeline's headline results.
    #[serde(default)]
    pub headline: bool,
}

impl Figure {
    pub fn new(name: impl Into<String>, value: f64, unit: &str) -> Self {
        Self {
            name: name.into(),
            value,
            unit: unit.to_owned(),
            reference: None,
            headline: false,
        }
    }

    pub fn headline(mut self) -> Self {
        self.headline = true;
        self
    }

    pub fn with_reference(mut self, reference: f64) -> Self {
        self.reference = Some(reference);
        self
    }
}

/// Whether a scoreboard row's figure meets its pipeline's criterion for reproducing the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Reproduced,
    Missed,
}

/// One row of a bundle's scoreboard: a result the pipeline reproduces from a paper (its
/// `[[scoreboard]]` entries), yosoku's figure beside the paper's, and whether it meets the
/// pipeline's criterion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreRow {
    /// The method and what is measured, in a few words (`counter regression per GPU, LOO error`).
    pub method: String,
    /// The step whose figure this is.
    pub step: String,
    /// The figure's name in that step.
    pub figure: String,
    pub value: f64,
    pub unit: String,
    /// The paper's figure as the pipeline writes it (`4.6-38.9 %`), or the figure's published
    /// value with its unit.
    pub paper: String,
    /// The published value, when the paper has one number for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<f64>,
    /// What counts as reproducing (`within 4.6..38.9 %`, `within 1 % of 3.775 s`); empty when
    /// the pipeline sets no criterion (then there is no verdict).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub criterion: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// One of the pipeline's headline results, which `yosoku scoreboard --headline` (the demo's
    /// last screen) shows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headline: bool,
}
