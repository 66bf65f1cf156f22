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

/// A parameter with one value at every run ([`Experiment::take_fixed_parameters`]).
#[derive(Debug, Clone, PartialEq)]
pub struct FixedParameter {
    /// Its place among the file's parameters.
    pub position: usize,
    pub name: String,
    pub value: f64,
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
    /// Takes out the parameters that have one value at every point of every call path (a
    /// study run at one size, written with the size as a parameter) and returns each with its
    /// value. A time cannot be modelled over a parameter it was measured at one value of, so
    /// the models are over the others, as Extra-P's are (its search gives such a parameter no
    /// term). Nothing is taken out where no parameter varies (a single configuration: the
    /// searches say so).
    pub fn take_fixed_parameters(&mut self) -> Vec<FixedParameter> {
        let mut coordinates = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.coordinate.as_slice()));
        let Some(first) = coordinates.next() else {
            return Vec::new();
        };
        let mut fixed: Vec<bool> = vec![true; first.len()];
        for x in coordinates {
            for (f, (a, b)) in fixed.iter_mut().zip(x.iter().zip(first)) {
                *f &= a == b;
            }
        }
        if fixed.iter().all(|&f| f) || !fixed.iter().any(|&f| f) {
            return Vec::new();
        }
        let taken: Vec<FixedParameter> = (fixed.iter().zip(self.parameters.iter().zip(first)))
            .enumerate()
            .filter(|(_, (f, _))| **f)
            .map(|(position, (_, (name, value)))| FixedParameter {
                position,
                name: name.clone(),
                value: *value,
            })
            .collect();
        let keep = |values: &[f64]| -> Vec<f64> {
            (values.iter().zip(&fixed))
                .filter(|(_, f)| !**f)
                .map(|(v, _)| *v)
                .collect()
        };
        for s in &mut self.series {
            for p in &mut s.points {
                p.coordinate = keep(&p.coordinate);
            }
        }
        self.parameters = (self.parameters.iter().zip(&fixed))
            .filter(|(_, f)| !**f)
            .map(|(name, _)| name.clone())
            .collect();
        taken
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: &[&[f64]]) -> Series {
        Series {
            callpath: "main".to_owned(),
            metric: "time".to_owned(),
            points: points
                .iter()
                .map(|x| Point {
                    coordinate: x.to_vec(),
                    values: vec![1.0],
                })
                .collect(),
            point_values: None,
        }
    }

    /// A parameter with one value at every point of every call path is taken out, with its
    /// place and value; one that varies in any call path stays; with none varying, none goes.
    #[test]
    fn the_parameters_fixed_at_every_run_are_taken_out() {
        let mut e = Experiment {
            parameters: vec!["n".to_owned(), "p".to_owned(), "t".to_owned()],
            series: vec![
                series(&[&[100.0, 2.0, 4.0], &[100.0, 4.0, 4.0]]),
                series(&[&[100.0, 8.0, 4.0], &[100.0, 8.0, 8.0]]),
            ],
            notes: Vec::new(),
        };
        let fixed = e.take_fixed_parameters();
        assert_eq!(
            fixed,
            vec![FixedParameter {
                position: 0,
                name: "n".to_owned(),
                value: 100.0
            }]
        );
        assert_eq!(e.parameters, ["p", "t"]);
        assert_eq!(e.series[1].points[1].coordinate, [8.0, 8.0]);
        let mut one_run = Experiment {
            parameters: vec!["p".to_owned()],
            series: vec![series(&[&[2.0], &[2.0]])],
            notes: Vec::new(),
        };
        assert!(one_run.take_fixed_parameters().is_empty());
        assert_eq!(one_run.parameters, ["p"]);
    }
}
