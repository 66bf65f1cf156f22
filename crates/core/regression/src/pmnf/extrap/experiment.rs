//! What a reader of Extra-P's files gives ([`Experiment`]) or refuses with ([`InputError`]), and
//! the lines its errors name: shared by every format's reader.

use super::super::Point;

/// One experiment: its parameters and, per (call path, metric), its points in the order read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Experiment {
    pub parameters: Vec<String>,
    pub series: Vec<Series>,
    /// What the reader left out and why, each at its `line N:` (a repetition that is not a
    /// number, a region without measurements): said, never dropped in silence.
    pub notes: Vec<String>,
}

/// The measurements of one call path and metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub callpath: String,
    pub metric: String,
    pub points: Vec<Point>,
    /// Of a Cube set with a weak scaling, Extra-P's value of each point where the runs' own
    /// values (`points`' values, the repetitions) do not give it: read for medians, each point's
    /// median over every location of every run there; read for means, where a point's runs
    /// averaged over different numbers of locations (threads that ran the call path in one
    /// repetition and not in another), its mean over every location of every run there. `None`
    /// elsewhere: the mean of the runs' values is Extra-P's.
    pub point_values: Option<Vec<f64>>,
}

impl Series {
    /// The points Extra-P's search fits: its own, or, of a Cube set, one value a point, Extra-P's
    /// value of it where the runs' own do not give it ([`Series::point_values`]). The robust
    /// search fits the runs' own values, the repetitions.
    pub fn extrap_points(&self) -> std::borrow::Cow<'_, [Point]> {
        match &self.point_values {
            Some(values) => std::borrow::Cow::Owned(
                (self.points.iter().zip(values))
                    .map(|(p, m)| Point {
                        coordinate: p.coordinate.clone(),
                        values: vec![*m],
                    })
                    .collect(),
            ),
            None => std::borrow::Cow::Borrowed(&self.points),
        }
    }
}

/// Why a file was refused: its line (1-based) and what was wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct InputError {
    pub line: usize,
    pub message: String,
}

/// The last line of `text` (1 for an empty file): where an error about something missing points.
pub(super) fn end_line(text: &str) -> usize {
    text.lines().count().max(1)
}

/// The line of the first occurrence of `needle` in `text` (1-based), else the last line.
pub(super) fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map_or_else(
        || end_line(text),
        |at| text[..at].lines().count().max(1) + usize::from(text[..at].ends_with('\n')),
    )
}

pub(super) fn error(line: usize, message: impl Into<String>) -> InputError {
    InputError {
        line,
        message: message.into(),
    }
}

impl Experiment {
    pub(super) fn series_mut(&mut self, callpath: &str, metric: &str) -> &mut Series {
        let i = match self
            .series
            .iter()
            .position(|s| s.callpath == callpath && s.metric == metric)
        {
            Some(i) => i,
            None => {
                self.series.push(Series {
                    callpath: callpath.to_owned(),
                    metric: metric.to_owned(),
                    points: Vec::new(),
                    point_values: None,
                });
                self.series.len() - 1
            }
        };
        &mut self.series[i]
    }
}
