//! Extra-P 3's experiments (the binary files its GUI saved; Extra-P 4's `--extra-p-3`), from
//! their bytes: a byte-order mark, `EXTRAP_EXPERIMENT` and a version, then a stream of objects,
//! each a name (`Parameter`, `Metric`, `Region`, `Callpath`, `Coordinate`, `ExperimentPoint`,
//! `Model`, a model generator, `ModelComment`) and its fields: lengths and ids as 64-bit
//! integers, values as doubles, texts led by their 32-bit length. Each point holds its
//! repetitions' mean and median (not the repetitions), which the experiment keeps as one value;
//! the models Extra-P 3 fitted are read past, not kept (yosoku models the points itself).

use std::collections::HashMap;

use super::super::Point;
use super::experiment::{Experiment, InputError, error};

/// A cursor over the file's bytes in its byte order; every error names the byte it is at.
struct Bytes<'a> {
    bytes: &'a [u8],
    at: usize,
    big: bool,
}

impl<'a> Bytes<'a> {
    fn error(&self, message: impl std::fmt::Display) -> InputError {
        error(0, format!("byte {}: {message}", self.at))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], InputError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        match end {
            Some(end) => {
                let out = &self.bytes[self.at..end];
                self.at = end;
                Ok(out)
            }
            None => Err(self.error(format!(
                "the file ends inside {what} ({n} bytes wanted, {} left)",
                self.bytes.len() - self.at
            ))),
        }
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], InputError> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N, what)?);
        if self.big {
            a.reverse();
        }
        Ok(a)
    }

    fn int(&mut self, what: &str) -> Result<i64, InputError> {
        self.array::<8>(what).map(i64::from_le_bytes)
    }

    /// A count of things that follow (each at least one byte): never more than the bytes left.
    fn count(&mut self, what: &str) -> Result<usize, InputError> {
        let n = self.int(what)?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.bytes.len() - self.at)
            .ok_or_else(|| self.error(format!("{what}: {n}, more than the file can hold")))
    }

    fn value(&mut self, what: &str) -> Result<f64, InputError> {
        self.array::<8>(what).map(f64::from_le_bytes)
    }

    fn text(&mut self, what: &str) -> Result<String, InputError> {
        let n = u32::from_le_bytes(self.array::<4>(what)?);
        let bytes = self.take(n as usize, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| self.error(format!("{what}: not UTF-8")))
    }

    /// The name of the next object, or `None` at the end of the file.
    fn next_object(&mut self) -> Result<Option<String>, InputError> {
        if self.at == self.bytes.len() {
            return Ok(None);
        }
        self.text("an object's name").map(Some)
    }
}

/// The ids the objects refer to one another by.
#[derive(Default)]
struct Ids {
    parameters: Vec<String>,
    metrics: Vec<String>,
    regions: HashMap<i64, String>,
    /// How often each region name was met, for Extra-P's renaming of a second region of one
    /// name (`name #1`).
    region_names: HashMap<String, usize>,
    callpaths: HashMap<i64, String>,
    coordinates: HashMap<i64, Vec<f64>>,
    /// Whether the generators carry the options of Extra-P 3's later versions (then every
    /// model has one value more).
    newer_options: bool,
}

/// Reads an Extra-P 3 experiment from its bytes: each point's mean, or its median with
/// `median`. Every error has line 0 and names its byte.
pub fn parse_extrap3(bytes: &[u8], median: bool) -> Result<Experiment, InputError> {
    let mut b = Bytes {
        bytes,
        at: 0,
        big: false,
    };
    let mark = b.take(2, "the byte-order mark")?;
    b.big = match (mark[0], mark[1]) {
        (1, 0) => false,
        (0, 1) => true,
        _ => return Err(b.error("no byte-order mark (the number 1): not an Extra-P 3 experiment")),
    };
    let qualifier = b.text("the file's kind")?;
    if qualifier != "EXTRAP_EXPERIMENT" {
        return Err(b.error(format!(
            "{qualifier:?} where an Extra-P 3 experiment says EXTRAP_EXPERIMENT"
        )));
    }
    b.text("the version")?;
    let mut ids = Ids::default();
    let mut e = Experiment::default();
    let mut models = 0;
    while let Some(name) = b.next_object()? {
        match name.as_str() {
            "Parameter" => {
                b.int("a parameter's id")?;
                let parameter = b.text("a parameter's name")?;
                e.parameters.push(parameter.clone());
                ids.parameters.push(parameter);
            }
            "Metric" => {
                b.int("a metric's id")?;
                let metric = b.text("a metric's name")?;
                b.text("a metric's unit")?;
                ids.metrics.push(metric);
            }
            "Region" => region(&mut b, &mut ids)?,
            "Callpath" => callpath(&mut b, &mut ids)?,
            "Coordinate" => coordinate(&mut b, &mut ids)?,
            "ModelComment" => {
                b.int("a comment's id")?;
                b.text("a comment")?;
            }
            "SingleParameterSimpleModelGenerator" => {
                generator(&mut b, &mut ids, true)?;
                let terms = b.count("a generator's count of terms")?;
                for _ in 0..terms {
                    expect(&mut b, "CompoundTerm")?;
                    compound_term(&mut b)?;
                }
                b.int("a generator's largest count of terms")?;
            }
            "SingleParameterRefiningModelGenerator" => generator(&mut b, &mut ids, true)?,
            "MultiParameterSimpleModelGenerator" | "MultiParameterSparseModelGenerator" => {
                generator(&mut b, &mut ids, false)?
            }
            "ExperimentPoint" => point(&mut b, &ids, &mut e, median)?,
            "Model" => {
                model(&mut b, &ids)?;
                models += 1;
            }
            other => {
                return Err(b.error(format!(
                    "an object {other:?}, which Extra-P 3 does not write"
                )));
            }
        }
    }
    if e.parameters.is_empty() || e.series.is_empty() {
        return Err(b.error("the experiment has no parameter or no measured point"));
    }
    let points = ids.coordinates.len();
    for s in &e.series {
        if s.points.len() < points {
            e.notes.push(format!(
                "call path `{}`, metric `{}`: measured at {} of the file's {points} points \
                 (Extra-P refuses such a file): modelled from those",
                s.callpath,
                s.metric,
                s.points.len()
            ));
        }
    }
    if models > 0 {
        e.notes.push(format!(
            "the {models} models Extra-P 3 saved in the file are not read: yosoku models the \
             points"
        ));
    }
    Ok(e)
}

fn expect(b: &mut Bytes<'_>, name: &str) -> Result<(), InputError> {
    let found = b.text(&format!("a {name}"))?;
    if found == name {
        Ok(())
    } else {
        Err(b.error(format!("{found:?} where a {name} belongs")))
    }
}

fn region(b: &mut Bytes<'_>, ids: &mut Ids) -> Result<(), InputError> {
    let id = b.int("a region's id")?;
    let mut name = b.text("a region's name")?;
    b.text("a region's source file")?;
    b.int("a region's first line")?;
    // Extra-P renames a second region of a name met before: `name #1`, `name #2`.
    let seen = ids.region_names.entry(name.clone()).or_insert(0);
    if !ids.regions.contains_key(&id) && *seen > 0 {
        name = format!("{name} #{seen}");
    }
    *seen += 1;
    ids.regions.insert(id, name);
    Ok(())
}

fn callpath(b: &mut Bytes<'_>, ids: &mut Ids) -> Result<(), InputError> {
    let id = b.int("a call path's id")?;
    let region = b.int("a call path's region")?;
    let parent = b.int("a call path's parent")?;
    let name = ids.regions.get(&region).ok_or_else(|| {
        b.error(format!(
            "a call path of region {region}, not defined before"
        ))
    })?;
    let path = match parent {
        -1 => name.clone(),
        parent => {
            let up = ids.callpaths.get(&parent).ok_or_else(|| {
                b.error(format!("a call path under {parent}, not defined before"))
            })?;
            format!("{up}->{name}")
        }
    };
    ids.callpaths.insert(id, path);
    Ok(())
}

fn coordinate(b: &mut Bytes<'_>, ids: &mut Ids) -> Result<(), InputError> {
    let id = b.int("a coordinate's id")?;
    let n = b.count("a coordinate's length")?;
    let mut values = vec![f64::NAN; ids.parameters.len()];
    for _ in 0..n {
        let parameter = b.text("a coordinate's parameter")?;
        let at = ids
            .parameters
            .iter()
            .position(|p| *p == parameter)
            .ok_or_else(|| {
                b.error(format!(
                    "a coordinate of parameter {parameter:?}, not defined"
                ))
            })?;
        values[at] = b.value("a coordinate's value")?;
    }
    if values.iter().any(|v| !v.is_finite()) {
        return Err(b.error(format!(
            "coordinate {id}: a parameter without a value, or a value that is not a number"
        )));
    }
    ids.coordinates.insert(id, values);
    Ok(())
}

/// A model generator's options (read past): its name, cross-validation and epsilon for a
/// single-parameter one, how it reduces repetitions, and, where Extra-P 3 wrote them, its
/// later options, which then make every model one value longer.
fn generator(b: &mut Bytes<'_>, ids: &mut Ids, single: bool) -> Result<(), InputError> {
    b.text("a generator's name")?;
    if single {
        b.text("a generator's cross-validation")?;
        b.value("a generator's epsilon")?;
    }
    b.text("a generator's reduction of repetitions")?;
    // The later options are there only if they read as such (Extra-P 4 tries, and rewinds).
    let start = b.at;
    let newer = (|| -> Result<bool, InputError> {
        b.int("")?;
        let single_strategy = b.text("")?;
        b.int("")?;
        b.int("")?;
        let multi_strategy = b.text("")?;
        Ok(
            ["FIRST_POINTS_FOUND", "MAX_NUMBER_POINTS", "CHEAPEST_POINTS"]
                .contains(&single_strategy.as_str())
                && ["INCREASING_COST", "DECREASING_COST"].contains(&multi_strategy.as_str()),
        )
    })()
    .unwrap_or(false);
    if newer {
        ids.newer_options = true;
    } else {
        b.at = start;
    }
    Ok(())
}

fn point(b: &mut Bytes<'_>, ids: &Ids, e: &mut Experiment, median: bool) -> Result<(), InputError> {
    let coordinate = b.int("a point's coordinate")?;
    b.int("a point's count of repetitions")?;
    let mut stats = [0.0; 9];
    for s in &mut stats {
        *s = b.value("a point's statistics")?;
    }
    let metric = b.int("a point's metric")?;
    let callpath = b.int("a point's call path")?;
    let coordinate = ids
        .coordinates
        .get(&coordinate)
        .ok_or_else(|| b.error(format!("a point at coordinate {coordinate}, not defined")))?;
    let metric = usize::try_from(metric)
        .ok()
        .and_then(|m| ids.metrics.get(m))
        .ok_or_else(|| b.error(format!("a point of metric {metric}, not defined")))?;
    let callpath = ids
        .callpaths
        .get(&callpath)
        .ok_or_else(|| b.error(format!("a point of call path {callpath}, not defined")))?;
    // mean, its interval (2), deviation, median, ...
    let value = if median { stats[4] } else { stats[0] };
    if !value.is_finite() {
        return Err(b.error(format!(
            "{callpath} / {metric} at {coordinate:?}: its {} is not a number",
            if median { "median" } else { "mean" }
        )));
    }
    let series = e.series_mut(callpath, metric);
    if series.points.iter().any(|p| p.coordinate == *coordinate) {
        return Err(b.error(format!(
            "{callpath} / {metric}: point {coordinate:?} given twice"
        )));
    }
    series.points.push(Point {
        coordinate: coordinate.clone(),
        values: vec![value],
    });
    Ok(())
}

/// A model (read past): its metric, call path and generator, its function and three intervals
/// (each two functions), its fit's statistics, comments and the parameters' intervals.
fn model(b: &mut Bytes<'_>, ids: &Ids) -> Result<(), InputError> {
    b.int("a model's metric")?;
    b.int("a model's call path")?;
    b.int("a model's generator")?;
    function(b)?;
    for _ in 0..6 {
        function(b)?;
    }
    let statistics = if ids.newer_options { 4 } else { 3 };
    for _ in 0..statistics {
        b.value("a model's statistics")?;
    }
    let comments = b.count("a model's count of comments")?;
    for _ in 0..comments {
        b.int("a model's comment")?;
    }
    let parameters = b.count("a model's count of parameter intervals")?;
    for _ in 0..parameters {
        b.text("an interval's parameter")?;
        let n = b.count("a parameter's count of intervals")?;
        for _ in 0..2 * n {
            b.value("an interval's end")?;
        }
    }
    Ok(())
}

/// A function of any kind Extra-P 3 writes, led by its kind's name (read past).
fn function(b: &mut Bytes<'_>) -> Result<(), InputError> {
    let kind = b.text("a function's kind")?;
    match kind.as_str() {
        "SingleParameterFunction" => {
            b.value("a function's constant")?;
            let n = b.count("a function's count of terms")?;
            for _ in 0..n {
                expect(b, "CompoundTerm")?;
                compound_term(b)?;
            }
        }
        "MultiParameterFunction" => {
            b.value("a function's constant")?;
            let n = b.count("a function's count of terms")?;
            for _ in 0..n {
                b.value("a term's coefficient")?;
                let factors = b.count("a term's count of factors")?;
                for _ in 0..factors {
                    b.text("a factor's parameter")?;
                    expect(b, "CompoundTerm")?;
                    compound_term(b)?;
                }
            }
        }
        "SimpleTerm" => simple_term(b)?,
        "CompoundTerm" => compound_term(b)?,
        "Function" => {}
        other => return Err(b.error(format!("a function of kind {other:?}"))),
    }
    Ok(())
}

fn compound_term(b: &mut Bytes<'_>) -> Result<(), InputError> {
    b.value("a term's coefficient")?;
    let n = b.count("a term's count of factors")?;
    for _ in 0..n {
        expect(b, "SimpleTerm")?;
        simple_term(b)?;
    }
    Ok(())
}

fn simple_term(b: &mut Bytes<'_>) -> Result<(), InputError> {
    b.text("a term's kind")?;
    b.value("a term's exponent")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extra-P's test experiment of Extra-P 3 (one parameter, 4 regions, models saved).
    const EXPERIMENT: &[u8] = include_bytes!("../../../tests/data/extrap/extrap3/experiment_3");

    #[test]
    fn an_extrap_3_experiment_gives_its_points_and_says_its_models_are_not_read() {
        let e = parse_extrap3(EXPERIMENT, false).unwrap();
        assert_eq!(e.parameters, ["p"]);
        let met1 = &e.series[0];
        assert_eq!(
            (met1.callpath.as_str(), met1.metric.as_str()),
            ("met1", "test")
        );
        assert_eq!(met1.points[0].coordinate, [1000.0]);
        assert_eq!(met1.points[0].values, [4.0200000000000005]);
        // A second region named `met1`, told apart as Extra-P tells it.
        assert!(e.series.iter().any(|s| s.callpath == "met1 #1"));
        assert!(
            e.notes.iter().any(|n| n.contains("models Extra-P 3 saved")),
            "{:?}",
            e.notes
        );
        let medians = parse_extrap3(EXPERIMENT, true).unwrap();
        assert_eq!(medians.series.len(), e.series.len());
    }

    #[test]
    fn every_cut_of_an_experiment_is_refused_at_its_byte_or_read_whole() {
        // Cut anywhere, the file is refused naming a byte, except where the cut falls between
        // two objects (the stream may end there): then what was read is checked as whole.
        for end in 0..EXPERIMENT.len() {
            match parse_extrap3(&EXPERIMENT[..end], false) {
                Ok(e) => assert!(!e.series.is_empty()),
                Err(e) => {
                    assert_eq!(e.line, 0);
                    assert!(e.message.starts_with("byte "), "{e}");
                }
            }
        }
    }

    #[test]
    fn broken_experiments_are_refused_saying_what_is_wrong() {
        let refused = |bytes: &[u8], wanted: &str| {
            let e = parse_extrap3(bytes, false).unwrap_err();
            assert!(e.message.contains(wanted), "{e} does not say {wanted:?}");
        };
        refused(b"\x02\x00", "no byte-order mark");
        let mut other = EXPERIMENT.to_vec();
        other[6..23].copy_from_slice(b"EXTRAP_SOMETHINGX");
        refused(
            &other,
            "where an Extra-P 3 experiment says EXTRAP_EXPERIMENT",
        );
        // The first region's id (bytes 0x67 on) made one no call path names.
        let mut undefined = EXPERIMENT.to_vec();
        undefined[0x67] = 9;
        refused(&undefined, "not defined before");
        // A count of terms far beyond the file.
        let header_only = &EXPERIMENT[..0x1e];
        let mut huge = header_only.to_vec();
        huge.extend_from_slice(&17u32.to_le_bytes());
        huge.extend_from_slice(b"ModelCommentX");
        refused(&huge, "the file ends inside");
        refused(header_only, "no parameter or no measured point");
    }
}
