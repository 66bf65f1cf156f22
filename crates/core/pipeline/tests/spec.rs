//! The pipeline file: every kind of mistake is refused with file, line, column and key.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test
#![allow(clippy::disallowed_methods)] // a test reads its fixtures; the crate itself does no I/O

use yosoku_pipeline::{PipelineSpec, Stage};

const GOOD: &str = r#"
[pipeline]
name = "t"
description = "a test pipeline"

[sources.bench]
plugin = "csx600_sdk_log"
collector = "microbench"
config = { path = "x.log", repeat = 3, scale = 0.5, flags = ["a", "b"] }

[[validate]]
step = "compare_measured"
id = "measured"
predictions = "opcount.predictions"
measured = "bench.runs"

[[fit]]
step = "csx600_op_count"
id = "opcount"
throughputs = "bench.csx600_op_throughputs"
counts = "bench.csx600_op_counts"
"#;

#[test]
fn a_valid_file_parses_with_stages_in_their_order() {
    let spec = PipelineSpec::parse("p.toml", GOOD).unwrap();
    assert_eq!(spec.name, "t");
    assert_eq!(spec.sources.len(), 1);
    let source = &spec.sources[0];
    assert_eq!(source.plugin.value, "csx600_sdk_log");
    assert_eq!(source.config["repeat"], 3);
    assert_eq!(source.config["scale"], 0.5);
    assert_eq!(source.config["flags"], serde_json::json!(["a", "b"]));
    assert_eq!(source.config_locations["repeat"].line, 9);
    // [[fit]] runs before [[validate]] although the file lists it after.
    let order: Vec<(Stage, &str)> = spec
        .steps
        .iter()
        .map(|s| (s.value.stage(), s.value.id()))
        .collect();
    assert_eq!(
        order,
        [(Stage::Fit, "opcount"), (Stage::Validate, "measured")]
    );
    assert_eq!(spec.steps[0].value.kind(), "csx600_op_count");
    assert_eq!(
        (spec.steps[0].location.line, spec.steps[0].location.column),
        (18, 8)
    );
}

fn error(from: &str, to: &str) -> String {
    let text = GOOD.replacen(from, to, 1);
    assert_ne!(text, GOOD, "{from:?} is not in the test pipeline");
    PipelineSpec::parse("p.toml", &text)
        .unwrap_err()
        .to_string()
}

#[test]
fn mistakes_are_named_by_file_line_column_and_key() {
    let cases = [
        // unknown keys
        (
            "id = \"opcount\"",
            "id = \"opcount\"\nthruput = 3",
            "p.toml:20:1: unknown field `thruput`, expected one of `step`, `id`, `throughputs`, `counts`, `device`",
        ),
        (
            "name = \"t\"",
            "name = \"t\"\nfoo = 1",
            "p.toml:4:1: unknown field `foo`, expected one of `name`, `description`, `plugin_path`",
        ),
        (
            "plugin = \"csx600_sdk_log\"",
            "plugin = \"csx600_sdk_log\"\nplugn = 1",
            "p.toml:8:1: source `bench`: unknown key `plugn`; expected plugin, collector, config, allow_empty",
        ),
        (
            "[pipeline]",
            "[pipline]",
            "p.toml:2:2: unknown top-level key `pipline`; expected pipeline, sources, normalize, fit, validate",
        ),
        // wrong types
        (
            "counts = \"bench.csx600_op_counts\"",
            "counts = 3",
            "p.toml:21:10: key `counts`: invalid type: integer `3`, expected a string",
        ),
        (
            "name = \"t\"",
            "name = 3",
            "p.toml:3:8: key `name`: invalid type: integer `3`, expected a string",
        ),
        (
            "collector = \"microbench\"",
            "collector = true",
            "p.toml:8:13: source `bench`, key `collector`: expected a string, found boolean",
        ),
        // steps and references
        (
            "step = \"csx600_op_count\"",
            "step = \"csx600_op_cont\"",
            "p.toml:18:8: unknown [[fit]] step `csx600_op_cont`; expected one of: csx600_op_count, csx600_transfer, csx600_double_buffer",
        ),
        (
            "step = \"compare_measured\"",
            "step = \"csx600_op_count\"",
            "p.toml:12:8: unknown [[validate]] step `csx600_op_count`; expected one of: compare_measured, forecast_score, compare_reference",
        ),
        (
            "predictions = \"opcount.predictions\"",
            "predictions = \"opcount.prediction\"",
            "p.toml:14:15: step `measured`: step `opcount` produces no table `prediction`; it produces: cost_breakdown, predictions",
        ),
        (
            "predictions = \"opcount.predictions\"",
            "predictions = \"nope.predictions\"",
            "p.toml:14:15: step `measured`: `nope` in `nope.predictions` is neither a source nor an earlier step; known: bench, opcount",
        ),
        (
            "predictions = \"opcount.predictions\"",
            "predictions = \"predictions\"",
            "p.toml:14:15: step `measured`: table reference `predictions` should be `<source or step>.<table>`",
        ),
        (
            "id = \"measured\"",
            "id = \"opcount\"",
            "p.toml:12:8: step id `opcount` is already used (line 18)",
        ),
        (
            "id = \"measured\"",
            "id = \"Measured.1\"",
            "p.toml:12:8: step id `Measured.1`: use lowercase ASCII letters, digits and `_`",
        ),
        ("id = \"opcount\"\n", "", "p.toml:17:1: missing field `id`"),
        // structure
        (
            "[[fit]]",
            "[[fit]\n",
            "p.toml:17:7: unclosed array table, expected `]`",
        ),
        (
            "[pipeline]\nname = \"t\"\ndescription = \"a test pipeline\"",
            "",
            "p.toml:1:1: missing [pipeline] table",
        ),
        (
            "[pipeline]\nname = \"t\"",
            "",
            "p.toml:3:1: unknown top-level key `description`",
        ),
        (
            "config = {",
            "config = 3 #",
            "p.toml:9:10: source `bench`, key `config`: expected a table, found integer",
        ),
    ];
    for (from, to, expected) in cases {
        let got = error(from, to);
        assert!(
            got.starts_with(expected),
            "replacing {from:?} by {to:?}\n got: {got}\nwant: {expected}"
        );
    }
}

#[test]
fn a_file_that_is_not_toml_is_refused() {
    let err = PipelineSpec::parse("p.toml", "this is = = not toml")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("p.toml:1:"), "{err}");
}
