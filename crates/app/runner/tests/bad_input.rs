//! Bad input through the whole run: a clear error naming the file, line and key; no bundle
//! written; the previous bundle untouched. One test per kind of mistake.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use yosoku_runner::{Quiet, RunOptions, run_pipeline};

const PIPELINE: &str = r#"[pipeline]
name = "bad-input"

[sources.bench]
plugin = "csx600_sdk_log"
collector = "microbench"
config = { path = "bench.log" }

[sources.prog]
plugin = "csx600_sdk_log"
collector = "profile"
config = { path = "prog.log" }

[[normalize]]
step = "csx600_scale_counts"
id = "ops"
counts = "prog.csx600_op_counts"

[[fit]]
step = "csx600_op_count"
id = "opcount"
throughputs = "bench.csx600_op_throughputs"
counts = "ops.csx600_op_counts"
"#;

const BENCH: &str = "@format csx600-sdk-log 1
@device CSX600
[op_throughput]
exec_unit vector dtype op gops
poly no double add 1.393
poly yes double mul 6.936
";

const PROG: &str = "@format csx600-sdk-log 1
@program p
[op_count]
variant exec_unit vector dtype op count basis
a poly no double add 100 issued
a poly yes double mul 100 issued
";

const COUNTER_PIPELINE: &str = r#"[pipeline]
name = "bad-input"

[sources.gpp]
plugin = "cuda_profiler"
collector = "gpuperfpredict"
config = { paths = ["bpnn_*.csv.gz"] }

[[normalize]]
step = "zscore"
id = "z"
input = "gpp.observations"
group_by = ["device"]

[[fit]]
step = "ols"
id = "fit"
observations = "z.observations"
features = ["inst_executed", "gld_request"]
group_by = ["device"]

[[validate]]
step = "cross_validate"
id = "cv"
model = "fit"
holdouts = ["loo", "kfold(5)"]
"#;

/// A directory with the pipeline and its two logs, edited by `edit`, and a good bundle from a
/// first run of the unedited files.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.toml"), PIPELINE).unwrap();
        std::fs::write(dir.path().join("bench.log"), BENCH).unwrap();
        std::fs::write(dir.path().join("prog.log"), PROG).unwrap();
        let case = Self { dir };
        case.run().expect("the unedited pipeline runs");
        case
    }

    /// A counter-model pipeline over two real gpuperfpredict files (one kernel on two GPUs).
    fn counters() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.toml"), COUNTER_PIPELINE).unwrap();
        let data =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../pipelines/data/gpuperfpredict");
        for gpu in ["Tesla-K40", "GTX-980"] {
            let name = format!("bpnn_layerforward_CUDA-{gpu}.csv.gz");
            std::fs::copy(data.join(&name), dir.path().join(&name)).unwrap();
        }
        let case = Self { dir };
        case.run().expect("the unedited pipeline runs");
        case
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn bundle(&self) -> PathBuf {
        self.path("results/bad-input")
    }

    fn run(&self) -> Result<(), String> {
        let options = RunOptions {
            bundle_dir: Some(self.bundle()),
            plugin_path: vec![],
            ..RunOptions::default()
        };
        run_pipeline(&self.path("p.toml"), &options, &mut Quiet)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn edit(&self, file: &str, from: &str, to: &str) {
        let path = self.path(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{from:?} not in {file}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }

    /// Runs the edited pipeline, expects an error starting with `expected` (paths relative to the
    /// case directory), and checks the previous bundle is intact and nothing else was written.
    fn expect_error(&self, expected: &str) {
        let before = std::fs::read(self.bundle().join("manifest.json")).unwrap();
        let err = self
            .run()
            .expect_err("the edited pipeline must fail")
            .replace(&format!("{}/", self.dir.path().display()), "");
        assert!(err.starts_with(expected), "\n got: {err}\nwant: {expected}");
        assert_eq!(
            std::fs::read(self.bundle().join("manifest.json")).unwrap(),
            before
        );
        let entries: Vec<String> = std::fs::read_dir(self.path("results"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(entries, ["bad-input"], "stray files beside the bundle");
    }
}

#[test]
fn an_unknown_plugin() {
    let case = Case::new();
    case.edit(
        "p.toml",
        "plugin = \"csx600_sdk_log\"",
        "plugin = \"csx9000\"",
    );
    case.expect_error("p.toml:5:10: source `bench`: no plugin called `csx9000`; found: ");
}

#[test]
fn an_unknown_collector() {
    let case = Case::new();
    case.edit(
        "p.toml",
        "collector = \"profile\"",
        "collector = \"profiles\"",
    );
    case.expect_error(
        "p.toml:11:13: source `prog`: plugin `csx600_sdk_log` has no collector `profiles`; it has: microbench, profile",
    );
}

#[test]
fn bad_toml() {
    let case = Case::new();
    case.edit("p.toml", "[[fit]]", "[[fit]");
    case.expect_error("p.toml:19:7: unclosed array table, expected `]`");
}

#[test]
fn an_unknown_key_in_a_step() {
    let case = Case::new();
    case.edit(
        "p.toml",
        "id = \"opcount\"",
        "id = \"opcount\"\ndevise = \"x\"",
    );
    case.expect_error("p.toml:22:1: unknown field `devise`, expected one of `step`, `id`, `throughputs`, `counts`, `device`");
}

#[test]
fn a_wrong_type() {
    let case = Case::new();
    case.edit(
        "p.toml",
        "counts = \"prog.csx600_op_counts\"",
        "counts = \"prog.csx600_op_counts\"\npe_count = \"96\"",
    );
    case.expect_error("p.toml:18:12: key `pe_count`: invalid type: string \"96\", expected u32");
}

#[test]
fn an_unknown_config_key() {
    let case = Case::new();
    case.edit(
        "p.toml",
        "config = { path = \"bench.log\" }",
        "config = { path = \"bench.log\", bins = 3 }",
    );
    case.expect_error("p.toml:7:32: source `bench` (csx600_sdk_log / microbench): unknown config key `bins`; expected one of: path");
}

#[test]
fn an_unreadable_input_file() {
    let case = Case::new();
    std::fs::remove_file(case.path("prog.log")).unwrap();
    case.expect_error("p.toml:12:12: source `prog`, config key `path`: cannot read prog.log: No such file or directory");
}

#[test]
fn a_missing_pipeline_file() {
    let case = Case::new();
    std::fs::remove_file(case.path("p.toml")).unwrap();
    case.expect_error("cannot read pipeline file p.toml: No such file or directory");
}

#[test]
fn a_log_with_a_missing_column() {
    let case = Case::new();
    case.edit(
        "bench.log",
        "exec_unit vector dtype op gops",
        "exec_unit vector dtype op",
    );
    case.edit("bench.log", "add 1.393", "add");
    case.edit("bench.log", "mul 6.936", "mul");
    case.expect_error(
        "p.toml:4:10: source `bench`: plugin `csx600_sdk_log`, collector `microbench` failed: bench.log:4: [op_throughput] lacks column(s) `gops`",
    );
}

#[test]
fn a_log_with_a_non_numeric_value() {
    let case = Case::new();
    case.edit("bench.log", "1.393", "fast");
    case.expect_error("p.toml:4:10: source `bench`: plugin `csx600_sdk_log`, collector `microbench` failed: bench.log:5:20: column `gops`: expected a number, found `fast`");
}

#[test]
fn a_log_with_a_negative_or_zero_throughput() {
    let case = Case::new();
    case.edit("bench.log", "1.393", "-1.393");
    case.expect_error("p.toml:4:10: source `bench`: plugin `csx600_sdk_log`, collector `microbench` failed: bench.log:5:20: column `gops`: expected a finite number > 0, found -1.393");
    case.edit("bench.log", "-1.393", "0");
    case.expect_error("p.toml:4:10: source `bench`: plugin `csx600_sdk_log`, collector `microbench` failed: bench.log:5:20: column `gops`: expected a finite number > 0, found 0");
}

#[test]
fn a_log_with_duplicate_rows() {
    let case = Case::new();
    case.edit(
        "bench.log",
        "poly yes double mul 6.936",
        "poly yes double mul 6.936\npoly yes double mul 7.0",
    );
    case.expect_error("p.toml:4:10: source `bench`: plugin `csx600_sdk_log`, collector `microbench` failed: bench.log:7: duplicate row in [op_throughput]: poly vector double mul is already given on line 6");
}

#[test]
fn an_op_the_throughput_table_lacks() {
    let case = Case::new();
    case.edit(
        "prog.log",
        "a poly yes double mul 100 issued",
        "a poly yes double mul 100 issued\na poly no double div 5 issued",
    );
    case.expect_error(
        "p.toml:20:8: step `opcount` (csx600_op_count): no throughput for `poly scalar double div` (counted for p a) in input `throughputs`, which has 2 operations for CSX600",
    );
}

#[test]
fn a_table_reference_to_something_a_source_did_not_produce() {
    let case = Case::new();
    case.edit(
        "p.toml",
        "counts = \"ops.csx600_op_counts\"",
        "counts = \"bench.csx600_op_counts\"",
    );
    case.expect_error("p.toml:23:10: step `opcount`: no table `bench.csx600_op_counts`; `bench` produced: csx600_op_throughputs");
}

/// The relative-path helper in the other tests must not hide absolute paths in errors.
#[test]
fn paths_in_errors_are_the_ones_the_user_can_open() {
    let case = Case::new();
    std::fs::remove_file(case.path("bench.log")).unwrap();
    let err = case.run().unwrap_err();
    let expected: &Path = &case.path("bench.log");
    assert!(err.contains(&expected.display().to_string()), "{err}");
}

#[test]
fn a_validation_of_a_step_that_is_not_a_fit() {
    let case = Case::counters();
    case.edit("p.toml", "model = \"fit\"", "model = \"z\"");
    case.expect_error(
        "p.toml:25:9: step `cv`: `model = \"z\"` should name an earlier fit step; fit steps before it: fit",
    );
}

#[test]
fn an_unknown_hold_out() {
    let case = Case::counters();
    case.edit("p.toml", "\"kfold(5)\"", "\"lopo\"");
    case.expect_error(
        "p.toml:26:12: key `holdouts`: `holdouts`: unknown validation `lopo`; expected fit, loo, kfold(<k>) or leave_one_out(<column>)",
    );
}

#[test]
fn a_feature_the_table_lacks() {
    let case = Case::counters();
    case.edit("p.toml", "\"inst_executed\"", "\"inst_exec\"");
    case.expect_error(
        "p.toml:16:8: step `fit` (ols): input `observations` has no feature column `inst_exec`; did you mean inst_executed?",
    );
}

#[test]
fn a_hold_out_by_a_column_the_table_lacks() {
    let case = Case::counters();
    case.edit("p.toml", "\"kfold(5)\"", "\"leave_one_out(kernel)\"");
    case.expect_error(
        "p.toml:23:8: step `cv` (cross_validate): input `observations` has no column `kernel` to group or hold out by; its text columns: run_id, device, program, variant",
    );
}

#[test]
fn a_file_pattern_that_matches_nothing() {
    let case = Case::counters();
    case.edit("p.toml", "bpnn_*.csv.gz", "kernel_*.csv.gz");
    case.expect_error(
        "p.toml:7:12: source `gpp`, config key `paths`: no file matches `kernel_*.csv.gz` in ",
    );
}

/// Every step parameter is checked when the file is parsed: a bad one stops the run before any
/// collector runs. The source here is the dummy plugin's `fail` collector, which would end the
/// run with its own message if it were called.
#[test]
fn a_bad_step_parameter_fails_before_any_collector_runs() {
    let case = Case::new();
    let pipeline = r#"[pipeline]
name = "bad-input"

[sources.loud]
plugin = "dummy"
collector = "fail"
config = { message = "the collector ran" }

[[fit]]
step = "ols"
id = "fit"
observations = "loud.observations"
ridge = -1.0

[[validate]]
step = "cross_validate"
id = "cv"
model = "fit"
"#;
    std::fs::write(case.path("p.toml"), pipeline).unwrap();
    case.expect_error("p.toml:13:9: key `ridge`: `ridge` must be a number >= 0, found -1");
    // The same file with a good parameter does reach the collector.
    let good = pipeline.replace("-1.0", "1.0");
    std::fs::write(case.path("p.toml"), &good).unwrap();
    case.expect_error(
        "p.toml:4:10: source `loud`: plugin `dummy`, collector `fail` failed: the collector ran",
    );
    for (from, to, want) in [
        (
            "ridge = 1.0",
            "ridge = 1.0\nmatrix = { rows = \"device\", columns = \"program\" }",
            "p.toml:14:10: key `matrix`: matrix: `device` is not one of the model's `group_by` columns (none)",
        ),
        (
            "model = \"fit\"",
            "model = \"fit\"\nholdouts = [\"kfold(1)\"]",
            "p.toml:19:12: key `holdouts`: `holdouts`: `kfold(1)`: the number of folds must be an integer >= 2",
        ),
        (
            "model = \"fit\"",
            "model = \"fit\"\ntiny_threshold = -3",
            "p.toml:19:18: key `tiny_threshold`: `tiny_threshold` must be a number >= 0, found -3",
        ),
    ] {
        std::fs::write(case.path("p.toml"), good.replace(from, to)).unwrap();
        case.expect_error(want);
    }
}

/// Every source is checked, down to the values its plugin's `validate` judges, before any is
/// collected: the second source's mistake stops the run before the first source's collector
/// (which would fail loudly) runs.
#[test]
fn every_source_is_validated_before_any_collector_runs() {
    let case = Case::new();
    let pipeline = r#"[pipeline]
name = "bad-input"

[sources.loud]
plugin = "dummy"
collector = "fail"
config = { message = "the collector ran" }

[sources.timed]
plugin = "dummy"
collector = "time_command"
config = { command = ["true"], repetitions = 0 }
"#;
    std::fs::write(case.path("p.toml"), pipeline).unwrap();
    case.expect_error("p.toml:9:10: source `timed`: plugin `dummy`, collector `time_command` refused its configuration: config key `repetitions`: expected an integer >= 1, found 0");
}

/// The manifest records every input file with its size and SHA-256, whether the plugin reported
/// the hash while reading the file (csx600_sdk_log, through the SDK) or not.
#[test]
fn inputs_are_recorded_with_their_hashes() {
    use sha2::{Digest, Sha256};
    let case = Case::new();
    let bundle = yosoku_bundle::fs::read_bundle(&case.bundle()).unwrap();
    let inputs = &bundle.manifest.inputs;
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    for (input, text) in inputs.iter().zip([BENCH, PROG]) {
        let sha: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(input.sha256, sha, "{input:?}");
        assert_eq!(input.size_bytes, text.len() as u64);
    }
    assert_eq!(inputs[0].path, "bench.log");
}

/// A real gpuperfpredict file cut to its header: a failed export. Refused, unless the source
/// says none is expected; then the fit with no rows is refused, naming the step.
#[test]
fn an_input_with_a_header_and_no_rows() {
    use std::io::{Read, Write};
    let case = Case::counters();
    for gpu in ["Tesla-K40", "GTX-980"] {
        let path = case.path(&format!("bpnn_layerforward_CUDA-{gpu}.csv.gz"));
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        let header = text.lines().next().unwrap();
        let mut gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&path).unwrap(),
            flate2::Compression::default(),
        );
        writeln!(gz, "{header}").unwrap();
        gz.finish().unwrap();
    }
    case.expect_error(
        "p.toml:4:10: source `gpp` (cuda_profiler / gpuperfpredict) yielded no rows (tables: ",
    );
    case.edit(
        "p.toml",
        "config = { paths",
        "allow_empty = true\nconfig = { paths",
    );
    case.expect_error("p.toml:17:8: step `fit` (ols): input `observations` has no rows to fit");
}

/// A fit with too few rows is refused, naming the step and the group: here one row per GPU,
/// the kernel's launches averaged (`a_group_with_fewer_rows_than_parameters` in the models holds
/// the rows-against-parameters case).
#[test]
fn a_fit_with_too_few_rows() {
    let case = Case::counters();
    case.edit(
        "p.toml",
        "[[normalize]]",
        "[[normalize]]\nstep = \"aggregate\"\nid = \"few\"\ninput = \"gpp.observations\"\nby = [\"device\", \"program\"]\n\n[[normalize]]",
    );
    case.edit(
        "p.toml",
        "observations = \"z.observations\"",
        "observations = \"few.observations\"",
    );
    case.expect_error("p.toml:22:8: step `fit` (ols): the model of device=");
    let err = case.run().unwrap_err();
    assert!(err.contains("has 1 row(s): at least 2 are needed"), "{err}");
}
