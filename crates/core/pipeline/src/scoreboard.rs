//! The scoreboard: a pipeline's `[[scoreboard]]` entries resolved against the figures of its run.

use yosoku_tables::{Figure, ScoreRow, Verdict};

use crate::spec::{PipelineSpec, SpecError};

/// One scoreboard row per `[[scoreboard]]` entry of `spec`, from the run's figures (`(step or
/// source id, figure)`). An entry whose figure the run did not produce is an error at the entry
/// (the names the step did produce are listed).
pub fn score(spec: &PipelineSpec, figures: &[(&str, &Figure)]) -> Result<Vec<ScoreRow>, SpecError> {
    spec.scoreboard
        .iter()
        .map(|entry| {
            let Some((_, figure)) = figures
                .iter()
                .find(|(step, f)| *step == entry.step && f.name == entry.figure)
            else {
                let names: Vec<&str> = figures
                    .iter()
                    .filter(|(step, _)| *step == entry.step)
                    .map(|(_, f)| f.name.as_str())
                    .collect();
                return Err(spec.error(
                    entry.figure_location,
                    format!(
                        "scoreboard figure `{}.{}`: step `{}` reported no such figure; it reported: {}",
                        entry.step,
                        entry.figure,
                        entry.step,
                        if names.is_empty() { "none".to_owned() } else { names.join(", ") }
                    ),
                ));
            };
            let with_unit = |v: f64| {
                if figure.unit.is_empty() {
                    format!("{v}")
                } else {
                    format!("{v} {}", figure.unit)
                }
            };
            let paper = match (&entry.paper, figure.reference) {
                (Some(p), _) => p.clone(),
                (None, Some(r)) => with_unit(r),
                (None, None) => String::new(),
            };
            let (criterion, verdict) = match (entry.within, entry.tolerance_pct, figure.reference) {
                (Some((low, high)), _, _) => (
                    format!("within {}..{}", low, with_unit(high)),
                    Some(low <= figure.value && figure.value <= high),
                ),
                (None, Some(tol), Some(r)) => (
                    format!("within {tol} % of {}", with_unit(r)),
                    Some((figure.value - r).abs() <= tol / 100.0 * r.abs()),
                ),
                (None, Some(_), None) => {
                    return Err(spec.error(
                        entry.location,
                        format!(
                            "scoreboard figure `{}.{}`: `tolerance_pct` needs a published value, and this figure has none; use `within = [low, high]`",
                            entry.step, entry.figure
                        ),
                    ));
                }
                (None, None, _) => (String::new(), None),
            };
            Ok(ScoreRow {
                method: entry.method.clone(),
                step: entry.step.clone(),
                figure: entry.figure.clone(),
                value: figure.value,
                unit: figure.unit.clone(),
                paper,
                reference: figure.reference,
                criterion,
                verdict: verdict.map(|ok| if ok { Verdict::Reproduced } else { Verdict::Missed }),
                headline: entry.headline,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const PIPELINE: &str = r#"
[pipeline]
name = "p"
[sources.s]
plugin = "x"
collector = "y"
[[fit]]
step = "ols"
id = "m"
observations = "s.observations"
[[scoreboard]]
method = "range"
figure = "m.mean |error|"
paper = "4.6-38.9 %"
within = [4.6, 38.9]
[[scoreboard]]
method = "tolerance"
figure = "m.d=2: total"
tolerance_pct = 1.0
[[scoreboard]]
method = "no criterion"
figure = "s.rows"
"#;

    fn spec(text: &str) -> PipelineSpec {
        PipelineSpec::parse("p.toml", text).unwrap()
    }

    #[test]
    fn rows_carry_the_figure_the_paper_and_a_verdict() {
        let spec = spec(PIPELINE);
        let error = Figure::new("mean |error|", 40.2, "%");
        let total = Figure::new("d=2: total", 3.777, "s").with_reference(3.775);
        let rows = Figure::new("rows", 20.0, "");
        let rows = score(&spec, &[("m", &error), ("m", &total), ("s", &rows)]).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].paper, "4.6-38.9 %");
        assert_eq!(rows[0].criterion, "within 4.6..38.9 %");
        assert_eq!(rows[0].verdict, Some(Verdict::Missed));
        assert_eq!(rows[1].paper, "3.775 s");
        assert_eq!(rows[1].verdict, Some(Verdict::Reproduced));
        assert_eq!(rows[1].criterion, "within 1 % of 3.775 s");
        assert_eq!(rows[2].verdict, None);
        assert_eq!(rows[2].value, 20.0);
    }

    #[test]
    fn a_figure_the_run_did_not_report_is_an_error_at_the_entry() {
        let spec = spec(PIPELINE);
        let other = Figure::new("something else", 1.0, "");
        let e = score(&spec, &[("m", &other)]).unwrap_err().to_string();
        assert!(e.contains("p.toml:13:10"), "{e}");
        assert!(
            e.contains("reported no such figure; it reported: something else"),
            "{e}"
        );
    }

    #[test]
    fn bad_entries_are_errors_where_they_are() {
        let cases = [
            ("figure = \"nodot\"", "expected `<step id>.<figure name>`"),
            (
                "figure = \"zz.a\"",
                "no source or step `zz`; there are: s, m",
            ),
            (
                "figure = \"m.a\"\nwithin = [3.0, 1.0]",
                "expected [low, high] with low <= high",
            ),
            (
                "figure = \"m.a\"\ntolerance_pct = -1.0",
                "expected a percentage >= 0",
            ),
            ("figure = \"m.a\"\ncolour = 1", "unknown field `colour`"),
        ];
        let head = PIPELINE.split("[[scoreboard]]").next().unwrap();
        for (entry, expected) in cases {
            let text = format!("{head}[[scoreboard]]\nmethod = \"x\"\n{entry}\n");
            let e = PipelineSpec::parse("p.toml", &text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(expected), "{entry}: {e}");
            assert!(e.starts_with("p.toml:"), "{entry}: {e}");
        }
    }
}
