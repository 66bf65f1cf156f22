//! What the transfer family's step kinds share: their `published` figures, the default
//! interval level and the grouping of operators.

use super::super::counters::PublishedSpec;
use super::super::step::ParamError;

/// The `published` figures of a step scored by mean |error|: (row, value), each with its value.
pub(super) fn mean_error_anchors(
    published: &[PublishedSpec],
) -> Result<Vec<(String, f64)>, ParamError> {
    published
        .iter()
        .map(|p| {
            p.value.map(|v| (p.row.clone(), v)).ok_or_else(|| {
                ParamError::new(
                    "published",
                    format!(
                        "published figure `{}`: give its `value` (mean |error| in %)",
                        p.row
                    ),
                )
            })
        })
        .collect()
}

pub(super) fn default_level() -> f64 {
    0.95
}

/// Operator (program) -> its group: the one `groups` names, else `other_group`, else its own.
pub(super) fn group_function<'a>(
    groups: &'a std::collections::BTreeMap<String, String>,
    other_group: Option<&'a String>,
) -> impl Fn(&str) -> String + 'a {
    move |program: &str| {
        groups
            .get(program)
            .or(other_group)
            .cloned()
            .unwrap_or_else(|| program.to_owned())
    }
}
