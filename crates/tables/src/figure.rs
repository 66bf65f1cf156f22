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
