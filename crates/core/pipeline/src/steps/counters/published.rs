//! The `published` key of the counter family's steps: figures of a paper printed beside the
//! computed ones.

use serde::Deserialize;
use yosoku_models::counters::report::Published;

use crate::steps::step::ParamError;

/// A published figure printed beside the computed ones.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSpec {
    pub row: String,
    /// A column of the step's first report table; without it, a `published` column.
    pub column: Option<String>,
    pub value: Option<f64>,
    pub text: Option<String>,
}

/// The published figures of a step's `published` key, each with exactly one of value and text.
pub(crate) fn published(specs: Vec<PublishedSpec>) -> Result<Vec<Published>, ParamError> {
    let mut published = Vec::with_capacity(specs.len());
    for p in specs {
        if p.value.is_none() == p.text.is_none() {
            return Err(ParamError::new(
                "published",
                format!(
                    "published figure `{}`: give exactly one of `value` and `text`",
                    p.row
                ),
            ));
        }
        published.push(Published {
            row: p.row,
            column: p.column,
            value: p.value,
            text: p.text,
        });
    }
    Ok(published)
}
