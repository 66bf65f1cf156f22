//! The bundled pipelines, run through the real plugin host on the real plugins (built by cargo as
//! dev-dependencies, beside this test binary), checked against the paper and against golden
//! files (`pipelines/golden/`, rewritten by `cargo xtask bless`).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::{Array, RecordBatch};
use yosoku_bundle::fs::{Bundle, read_bundle};
use yosoku_runner::{Quiet, RunOptions, RunOutcome, run_pipeline};
use yosoku_tables::access::{float64, int64, utf8};
use yosoku_tables::col;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Where a bundled pipeline's run wrote: its bundle is `path()/bundle`.
#[derive(Clone)]
struct RunDir(PathBuf);

impl RunDir {
    fn path(&self) -> &Path {
        &self.0
    }
}

/// One bundled pipeline's run, shared by every test of this binary that asks for it: each
/// pipeline runs once per test run (`every_pipeline_in_the_repo_runs` runs them all; a test of
/// one pipeline reads the same bundle, or runs it first and leaves it for the others). Run
/// twice, the pipelines took 58 s more of this binary's CPU, a tenth of a cold
/// `cargo xtask test` on two cores. The bundles lie in this binary's `CARGO_TARGET_TMPDIR`,
/// emptied when its first pipeline runs; tests only read them.
fn run(pipeline: &str) -> (RunDir, Arc<Bundle>) {
    type Runs = Mutex<HashMap<String, Arc<OnceLock<(RunDir, Arc<Bundle>)>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    let root = ROOT.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bundled-pipelines");
        if root.exists() {
            std::fs::remove_dir_all(&root).unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        root
    });
    let once = RUNS
        .get_or_init(Runs::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(pipeline.to_owned())
        .or_default()
        .clone();
    once.get_or_init(|| {
        let out = RunDir(root.join(pipeline.trim_end_matches(".toml")));
        let options = RunOptions {
            bundle_dir: Some(out.path().join("bundle")),
            plugin_path: vec![],
            ..RunOptions::default()
        };
        let outcome = run_pipeline(
            &repo().join("pipelines").join(pipeline),
            &options,
            &mut Quiet,
        )
        .unwrap_or_else(|e| panic!("{pipeline}: {e}"));
        let bundle = read_bundle(&outcome.bundle_dir).unwrap();
        (out, Arc::new(bundle))
    })
    .clone()
}

fn table<'a>(bundle: &'a Bundle, name: &str) -> &'a RecordBatch {
    bundle
        .table(name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

/// (program variant label column) -> (computed, reference) of a reference comparison.
fn comparisons(batch: &RecordBatch) -> Vec<(String, Option<f64>, f64)> {
    let variant = utf8(batch, col::VARIANT).unwrap();
    let label = utf8(batch, col::LABEL).unwrap();
    let column = utf8(batch, col::COLUMN_NAME).unwrap();
    let computed = float64(batch, col::COMPUTED).unwrap();
    let reference = float64(batch, col::REFERENCE).unwrap();
    (0..batch.num_rows())
        .map(|i| {
            (
                format!(
                    "{} {} {}",
                    variant.value(i),
                    label.value(i),
                    column.value(i)
                ),
                yosoku_tables::access::opt_f64(computed, i),
                reference.value(i),
            )
        })
        .collect()
}

/// Tables up to this many rows are rendered whole; longer ones by their first rows and column
/// sums.
const GOLDEN_FULL_ROWS: usize = 60;
const GOLDEN_HEAD_ROWS: usize = 8;

/// `v` to 10 significant digits: golden files pin results, not the last bits of a sum whose order
/// a BLAS may choose.
fn round(v: f64) -> f64 {
    if v.is_finite() {
        format!("{v:.9e}").parse().unwrap_or(v)
    } else {
        v
    }
}

/// The batch with every Float64 value rounded by [`round`].
fn rounded(batch: &RecordBatch) -> RecordBatch {
    use arrow_array::{Array, Float64Array};
    let columns = batch
        .columns()
        .iter()
        .map(|c| match c.as_any().downcast_ref::<Float64Array>() {
            Some(f) => {
                std::sync::Arc::new(f.iter().map(|v| v.map(round)).collect::<Float64Array>())
                    as std::sync::Arc<dyn Array>
            }
            None => c.clone(),
        })
        .collect();
    RecordBatch::try_new(batch.schema(), columns).unwrap()
}

/// Sums of the numeric columns and distinct counts of the text columns of a long table.
fn column_digest(batch: &RecordBatch) -> String {
    use arrow_array::{Array, Float64Array, Int64Array};
    use yosoku_tables::text::Text;
    let mut parts = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let any = column.as_any();
        let text = if let Some(f) = any.downcast_ref::<Float64Array>() {
            let finite: Vec<f64> = f.iter().flatten().filter(|v| v.is_finite()).collect();
            format!(
                "sum {} ({} null, {} not finite)",
                round(finite.iter().sum::<f64>()),
                f.null_count(),
                f.len() - f.null_count() - finite.len()
            )
        } else if let Some(i) = any.downcast_ref::<Int64Array>() {
            format!("sum {}", i.iter().flatten().map(i128::from).sum::<i128>())
        } else if let Some(s) = Text::new(column.as_ref()) {
            let distinct: std::collections::BTreeSet<&str> = s.iter().flatten().collect();
            format!("{} distinct, {} null", distinct.len(), s.null_count())
        } else {
            continue;
        };
        parts.push(format!("  {}: {text}", field.name()));
    }
    parts.join("\n")
}

/// Renders every table of a bundle, and its figures without timings, for a golden file.
fn render(bundle: &Bundle) -> String {
    let mut out = format!(
        "# golden output of pipeline {}\n",
        bundle.manifest.pipeline.name
    );
    out.push_str("# regenerate with `cargo xtask bless` and review the diff\n");
    for (id, f) in bundle.manifest.figures() {
        let reference = f
            .reference
            .map(|r| format!(" (published {r})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "figure {id}: {} = {} {}{reference}\n",
            f.name,
            round(f.value),
            f.unit
        ));
    }
    for (name, batch) in &bundle.tables {
        let rows = batch.num_rows();
        let shown = if rows > GOLDEN_FULL_ROWS {
            batch.slice(0, GOLDEN_HEAD_ROWS)
        } else {
            batch.clone()
        };
        out.push_str(&format!("\n{name} ({rows} rows)\n"));
        out.push_str(&yosoku_tables::display::pretty(&rounded(&shown)));
        out.push('\n');
        if rows > GOLDEN_FULL_ROWS {
            out.push_str(&format!(
                "... {} more rows; all {rows} rows:\n{}\n",
                rows - GOLDEN_HEAD_ROWS,
                column_digest(batch)
            ));
        }
    }
    out
}

/// Relative difference up to which two numbers in a golden file are the same: an ill-conditioned
/// regression (condition numbers up to 3.5e5 in counters-per-gpu's paper model) moves in its
/// seventh digit when a summation order changes, e.g. with another SIMD width.
const GOLDEN_RELATIVE: f64 = 1e-5;

/// Relative tolerance of the column sums that summarise long tables.
const GOLDEN_DIGEST_RELATIVE: f64 = 1e-3;

/// Lines equal, or equal but for numbers within [`GOLDEN_RELATIVE`].
fn same_line(golden: &str, run: &str) -> bool {
    if golden == run {
        return true;
    }
    // Table borders: their widths follow the widest number of a column.
    let border = |s: &str| !s.is_empty() && s.chars().all(|c| c == '+' || c == '-');
    if border(golden) && border(run) {
        return true;
    }
    let split = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || c == '|' || c == ',')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let (a, b) = (split(golden), split(run));
    // The column sums of a long table add thousands of predictions; one fold's stepwise choice
    // between two near-equal candidates moves them in the fifth digit.
    let relative = if golden.contains(": sum ") {
        GOLDEN_DIGEST_RELATIVE
    } else {
        GOLDEN_RELATIVE
    };
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            if x == y {
                return true;
            }
            let number = |t: &str| {
                t.trim_matches(|c: char| matches!(c, '(' | ')' | '%' | '[' | ']' | ':'))
                    .parse::<f64>()
                    .ok()
            };
            match (number(x), number(y)) {
                (Some(p), Some(q)) => (p - q).abs() <= relative * p.abs().max(q.abs()) + 1e-12,
                _ => false,
            }
        })
}

fn check_golden(bundle: &Bundle) {
    let path = repo()
        .join("pipelines/golden")
        .join(format!("{}.txt", bundle.manifest.pipeline.name));
    let rendered = render(bundle);
    if std::env::var_os("YOSOKU_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &rendered).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    let same = golden.lines().count() == rendered.lines().count()
        && golden
            .lines()
            .zip(rendered.lines())
            .all(|(a, b)| same_line(a, b));
    if !same {
        let first = golden
            .lines()
            .zip(rendered.lines())
            .position(|(a, b)| !same_line(a, b))
            .unwrap_or(golden.lines().count().min(rendered.lines().count()));
        panic!(
            "{} differs from the run at line {} (run `cargo xtask bless` if the change is intended)\n golden: {:?}\n    run: {:?}",
            path.display(),
            first + 1,
            golden.lines().nth(first),
            rendered.lines().nth(first)
        );
    }
}

#[test]
fn montecarlo_reproduces_tables_3_and_4() {
    let (_dir, bundle) = run("csx600-montecarlo.toml");

    // Table 3: the normalize step's operation counts are the paper's exactly.
    // Table 4: every per-operation time within 1 ms of the paper's (it prints milliseconds).
    let rows = comparisons(table(&bundle, "paper_rows.reference_comparison"));
    assert_eq!(rows.len(), 32);
    for (what, computed, reference) in &rows {
        let computed = computed.unwrap_or_else(|| panic!("{what}: not computed"));
        if what.ends_with(" work") {
            assert_eq!(computed, *reference, "Table 3, {what}");
        } else {
            assert!(
                (computed - reference).abs() <= 0.001,
                "Table 4, {what}: {computed} vs {reference}"
            );
        }
    }

    let totals = comparisons(table(&bundle, "paper_totals.reference_comparison"));
    let get = |key: &str| {
        totals
            .iter()
            .find(|(w, _, _)| w == key)
            .map(|(_, c, r)| (c.unwrap(), *r))
            .unwrap_or_else(|| panic!("no comparison {key}"))
    };
    // d = 3: total 5.262 s as printed.
    let (d3, paper_d3) = get("d=3 compute predicted_secs");
    assert!((d3 - 5.262).abs() < 0.0005 && paper_d3 == 5.262, "{d3}");
    // d = 2: the exact sum of the paper's own inputs is 3.777 s; the paper prints 3.775 s, the
    // sum of its rows rounded to milliseconds. The difference is the paper's rounding, and the
    // comparison shows it rather than hiding it.
    let (d2, paper_d2) = get("d=2 compute predicted_secs");
    assert!((d2 - 3.7771).abs() < 0.0001, "{d2}");
    assert_eq!(paper_d2, 3.775);
    let printed_rows_d2: f64 = [0.689, 1.064, 1.049, 0.692, 0.108, 0.043, 0.087, 0.043]
        .iter()
        .sum();
    assert!(
        (printed_rows_d2 - paper_d2).abs() < 1e-9,
        "3.775 is the sum of the printed rows"
    );
    // Errors against the measured times: the paper's 3.62 % and 1.60 % come from its rounded
    // totals; from the exact totals they are 3.68 % and 1.61 %.
    let (e2, _) = get("d=2 compute error_pct");
    let (e3, _) = get("d=3 compute error_pct");
    assert!(
        (e2 - 100.0 * (d2 - 3.643) / 3.643).abs() < 1e-9 && (e2 - 3.68).abs() < 0.005,
        "{e2}"
    );
    assert!((e3 - 1.61).abs() < 0.005, "{e3}");
    assert!(
        (100.0_f64 * (3.775 - 3.643) / 3.643 - 3.62).abs() < 0.005,
        "the paper's 3.62 % is from 3.775 s"
    );

    check_golden(&bundle);
}

#[test]
fn himeno_applies_the_transfer_model_and_says_the_curve_is_illustrative() {
    let (_dir, bundle) = run("csx600-himeno-transfer.toml");
    let predictions = table(&bundle, "measured.predictions");
    let flags = utf8(predictions, col::FLAGS).unwrap();
    let measured = float64(predictions, col::MEASURED_SECS).unwrap();
    assert_eq!(predictions.num_rows(), 2);
    for i in 0..2 {
        assert_eq!(flags.value(i), "illustrative_curve");
    }
    // The paper's measured transfer times of 100 iterations, beside the prediction.
    assert_eq!(measured.values().to_vec(), [2.379, 18.17]);
    let reps = yosoku_tables::access::int64(predictions, col::REPETITIONS).unwrap();
    assert_eq!(reps.values().to_vec(), [100, 100]);
    // Per-loop transfer time = sum over Table 5 rows of count x t(d); check one row by hand:
    // S swazzle, 15624 transfers of 8 bytes at the curve's 19.61 MB/s.
    let costs = table(&bundle, "transfer.cost_breakdown");
    let component = utf8(costs, col::COMPONENT).unwrap();
    let secs = float64(costs, col::PREDICTED_SECS).unwrap();
    let i = (0..costs.num_rows())
        .find(|&i| component.value(i) == "swazzle 8 B")
        .unwrap();
    assert!((secs.value(i) - 15624.0 * 8.0 / 19.61e6).abs() < 1e-12);
    check_golden(&bundle);
}

#[test]
fn every_pipeline_in_the_repo_runs() {
    let mut names: Vec<PathBuf> = std::fs::read_dir(repo().join("pipelines"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 2);
    // Two at a time, as the demo runs them: the other tests read these bundles, and wait for
    // the ones they need.
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(path) =
                    names.get(next.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
                {
                    let (_dir, bundle) = run(path.file_name().unwrap().to_str().unwrap());
                    assert!(!bundle.tables.is_empty());
                    // `cargo xtask demo` finds a pipeline's bundle at results/<file stem>.
                    assert_eq!(
                        bundle.manifest.pipeline.name,
                        path.file_stem().unwrap().to_str().unwrap()
                    );
                    assert!(bundle.manifest.inputs.iter().all(|i| i.sha256.len() == 64));
                }
            });
        }
    });
}

/// The pipelines kept beside the experiments whose logs are too large for the repository
/// (tools/mpi-apps/: run by `cargo xtask mpi-experiment` on new measurements) stay valid files,
/// named as their file.
#[test]
fn the_pipelines_of_uncommitted_measurements_parse() {
    let dir = repo().join("tools/mpi-apps");
    let mut checked = 0;
    for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let spec = yosoku_pipeline::spec::PipelineSpec::parse(&path.display().to_string(), &text)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.name, path.file_stem().unwrap().to_str().unwrap());
        checked += 1;
    }
    assert!(checked >= 1);
}

/// Rows of `validation_summary` over all programs: (model_group, validation) -> mean |error| %.
fn mean_errors(batch: &RecordBatch) -> Vec<(String, String, f64)> {
    let group = utf8(batch, col::MODEL_GROUP).unwrap();
    let validation = utf8(batch, col::VALIDATION).unwrap();
    let program = utf8(batch, col::PROGRAM).unwrap();
    let mean = float64(batch, col::MEAN_ABS_ERROR_PCT).unwrap();
    (0..batch.num_rows())
        .filter(|&i| program.get(i).is_none())
        .map(|i| {
            (
                group.value(i).to_owned(),
                validation.value(i).to_owned(),
                mean.value(i),
            )
        })
        .collect()
}

#[test]
fn counters_per_gpu_validates_nine_models_three_ways() {
    let (dir, bundle) = run("counters-per-gpu.toml");
    // The fit step's model is recorded with the options it was fitted with, by name, and the
    // cross-validation's summary as its scores.
    let record = bundle
        .manifest
        .model("paper")
        .expect("the `paper` model is recorded");
    assert_eq!(record.kind, yosoku_models::counters::MODEL_KIND);
    assert_eq!(record.options["group_by"], serde_json::json!(["device"]));
    assert_eq!(
        record.options["method"],
        serde_json::json!({ "ols": { "ridge": 0.0 } })
    );
    assert_eq!(
        record.options["choice"]["features"][0],
        serde_json::json!("gld_request")
    );
    assert_eq!(record.scores, ["paper_cv.validation_summary"]);
    saved_counter_model_answers_as_fitted(&dir, &bundle, record);
    let errors = mean_errors(table(&bundle, "paper_cv.validation_summary"));
    assert_eq!(errors.len(), 27, "9 GPUs x 3 hold-outs");
    for gpu in [
        "GTX-680",
        "GTX-970",
        "GTX-980",
        "Quadro",
        "Tesla-K20",
        "Tesla-K40",
        "Tesla-P100",
        "Titan",
        "TitanX",
    ] {
        let get = |v: &str| {
            errors
                .iter()
                .find(|(g, val, _)| g == &format!("device={gpu}") && val == v)
                .unwrap_or_else(|| panic!("{gpu} {v}"))
                .2
        };
        let (loo, size, program) = (
            get("loo"),
            get("leave_one_out(program, variant)"),
            get("leave_one_out(program)"),
        );
        // Holding out more is harder, and a kernel never seen is far harder (the failure the
        // pipeline documents).
        assert!(loo > 1.0 && loo < 100.0, "{gpu}: {loo}");
        assert!(loo <= size, "{gpu}: {loo} > {size}");
        assert!(program > 10.0 * size, "{gpu}: {program} vs {size}");
    }

    // The leave-one-out predictions are those of refitting without each row (checked on a
    // sample of rows of one GPU, against a fit of the regression module on the other rows).
    let z = table(&bundle, "z.observations");
    let device = utf8(z, col::DEVICE).unwrap();
    let rows: Vec<usize> = (0..z.num_rows())
        .filter(|&i| device.value(i) == "Tesla-P100")
        .collect();
    let features = [
        "gld_request",
        "gst_request",
        "cf_executed",
        "inst_issued1",
        "shared_load",
        "l2_read_transactions",
    ];
    let x = faer::Mat::from_fn(rows.len(), features.len(), |i, j| {
        float64(z, features[j]).unwrap().value(rows[i])
    });
    let secs = float64(z, col::MEASURED_SECS).unwrap();
    let y: Vec<f64> = rows.iter().map(|&r| secs.value(r)).collect();
    let predictions = table(&bundle, "paper_cv.predictions");
    let p_run = utf8(predictions, col::RUN_ID).unwrap();
    let p_validation = utf8(predictions, col::VALIDATION).unwrap();
    let p_secs = float64(predictions, col::PREDICTED_SECS).unwrap();
    let run_id = utf8(z, col::RUN_ID).unwrap();
    for k in (0..rows.len()).step_by(263) {
        let keep: Vec<usize> = (0..rows.len()).filter(|&i| i != k).collect();
        let xt = faer::Mat::from_fn(keep.len(), features.len(), |i, j| x[(keep[i], j)]);
        let yt: Vec<f64> = keep.iter().map(|&i| y[i]).collect();
        let fit =
            yosoku_regression::ols(xt.as_ref(), &yt, &yosoku_regression::OlsOptions::default())
                .unwrap();
        let row: Vec<f64> = (0..features.len()).map(|j| x[(k, j)]).collect();
        let expected = fit.predict(&row);
        let id = run_id.value(rows[k]);
        let got = (0..predictions.num_rows())
            .find(|&i| p_run.value(i) == id && p_validation.value(i) == "loo")
            .map(|i| p_secs.value(i))
            .unwrap();
        assert!(
            (got - expected).abs() <= 1e-9 * expected.abs().max(1e-6),
            "run {id}: {got} vs refit {expected}"
        );
    }

    // The paper's figures are printed beside ours.
    let report = yosoku_tables::report::read_report(table(&bundle, "paper_cv.report")).unwrap();
    assert!(
        report
            .iter()
            .any(|c| c.row == "Shimada et al.: GTX 480, unoptimised" && c.value == Some(4.6))
    );

    // One model for all GPUs, one GPU held out: its predictions are those of the log-log model
    // refitted on the other eight GPUs' 21,032 launches (block deletion of 2,629 rows).
    let pooled = mean_errors(table(&bundle, "pooled_loglog_cv.validation_summary"));
    let get = |v: &str| pooled.iter().find(|(_, val, _)| val == v).unwrap().2;
    assert!(get("leave_one_out(device)") > get("loo"), "{pooled:?}");
    let raw = table(&bundle, "gpp.observations");
    let raw_device = utf8(raw, col::DEVICE).unwrap();
    let (held, kept): (Vec<usize>, Vec<usize>) =
        (0..raw.num_rows()).partition(|&i| raw_device.value(i) == "Tesla-P100");
    let ln_x = |r: usize, j: usize| float64(raw, features[j]).unwrap().value(r).ln_1p();
    let raw_secs = float64(raw, col::MEASURED_SECS).unwrap();
    let xt = faer::Mat::from_fn(kept.len(), features.len(), |i, j| ln_x(kept[i], j));
    let yt: Vec<f64> = kept.iter().map(|&r| raw_secs.value(r).ln()).collect();
    let fit = yosoku_regression::ols(xt.as_ref(), &yt, &yosoku_regression::OlsOptions::default())
        .unwrap();
    let predictions = table(&bundle, "pooled_loglog_cv.predictions");
    let p_run = utf8(predictions, col::RUN_ID).unwrap();
    let p_validation = utf8(predictions, col::VALIDATION).unwrap();
    let p_secs = float64(predictions, col::PREDICTED_SECS).unwrap();
    let raw_run = utf8(raw, col::RUN_ID).unwrap();
    for &r in held.iter().step_by(401) {
        let row: Vec<f64> = (0..features.len()).map(|j| ln_x(r, j)).collect();
        let expected = fit.predict(&row).exp();
        let got = (0..predictions.num_rows())
            .find(|&i| {
                p_run.value(i) == raw_run.value(r)
                    && p_validation.value(i) == "leave_one_out(device)"
            })
            .map(|i| p_secs.value(i))
            .unwrap();
        assert!(
            (got - expected).abs() <= 1e-8 * expected,
            "run {}: {got} vs refit without the GPU {expected}",
            raw_run.value(r)
        );
    }
    check_golden(&bundle);
}

/// A user's own CSV (the GTX 680 rows of the gpuperfpredict dataset, time in ms, columns named
/// as a user would) through the `table` plugin gives the model and the validation that the
/// dataset's own importer gives: the same leave-one-out and leave-one-size-out errors.
#[test]
fn a_users_own_csv_fits_and_validates_like_the_dataset_it_was_made_from() {
    let (_dir, own) = run("own-table.toml");
    check_golden(&own);
    let (_dir2, dataset) = run("counters-per-gpu.toml");
    let ours = mean_errors(table(&own, "cv.validation_summary"));
    let theirs = mean_errors(table(&dataset, "paper_cv.validation_summary"));
    for validation in ["loo", "leave_one_out(program, variant)"] {
        let a = ours.iter().find(|(_, v, _)| v == validation).unwrap().2;
        let b = theirs
            .iter()
            .find(|(g, v, _)| g == "device=GTX-680" && v == validation)
            .unwrap()
            .2;
        assert!((a - b).abs() <= 1e-9 * b.abs(), "{validation}: {a} vs {b}");
    }
    let runs = table(&own, "mine.runs");
    assert_eq!(runs.num_rows(), 2629);
    let secs = float64(runs, "measured_secs").unwrap();
    // The first row's 0.046208 ms, read by its column name as milliseconds.
    assert!((secs.value(0) - 0.046208e-3).abs() < 1e-15);
}

/// The four-line pipeline of docs/your-own-data.md, exactly as printed there, on a CSV of the
/// shape it shows (a test fixture: times made up from a formula, not measurements).
#[test]
fn the_four_line_pipeline_of_the_docs_runs_on_a_csv() {
    let doc = std::fs::read_to_string(repo().join("docs/your-own-data.md")).unwrap();
    let section = doc.split("## Four lines").nth(1).unwrap();
    let toml = section
        .split("```toml\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    assert_eq!(toml.lines().count(), 4, "{toml}");
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("kernel,n,threads,elapsed_ms\n");
    for (k, kernel) in ["stream", "stencil", "gemm"].iter().enumerate() {
        for n in [1u32, 2, 4, 8] {
            for threads in [1u32, 2, 4] {
                let ms = (k as f64 + 1.0) * f64::from(n) / f64::from(threads)
                    + 0.1 * f64::from(n)
                    + 0.01 * f64::from((n * 7 + threads * 3) % 5);
                csv.push_str(&format!("{kernel},{},{threads},{ms}\n", n * 1_000_000));
            }
        }
    }
    std::fs::write(dir.path().join("runs.csv"), csv).unwrap();
    std::fs::write(dir.path().join("mine.toml"), toml).unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("results/mine")),
        plugin_path: vec![],
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&dir.path().join("mine.toml"), &options, &mut Quiet)
        .unwrap_or_else(|e| panic!("{e}"));
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    let coefficients = table(&bundle, "model.model_coefficients");
    let terms = utf8(coefficients, "term").unwrap();
    let terms: Vec<&str> = terms.iter().flatten().collect();
    assert!(
        terms.contains(&"n") && terms.contains(&"threads"),
        "{terms:?}"
    );
    assert_eq!(table(&bundle, "cv.predictions").num_rows(), 2 * 36);
}

#[test]
fn counters_cross_gpu_fills_a_nine_by_nine_matrix() {
    let (_dir, bundle) = run("counters-cross-gpu.toml");
    let pairs = table(&bundle, "pairs.observations");
    assert_eq!(
        pairs.num_rows(),
        72 * 2629,
        "every launch of every ordered pair"
    );
    let errors = mean_errors(table(&bundle, "counters_cv.validation_summary"));
    assert_eq!(
        errors.len(),
        72 * 2,
        "leave-one-out and leave one program out per pair"
    );
    assert!(errors.iter().all(|(_, _, e)| e.is_finite() && *e > 0.0));
    // Another GPU's counters predict a kernel seen in training far better than an unseen one.
    let mean_of = |scheme: &str| {
        let v: Vec<f64> = errors
            .iter()
            .filter(|(_, s, _)| s == scheme)
            .map(|(_, _, e)| *e)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(mean_of("leave_one_out(program)") > 10.0 * mean_of("loo"));
    let report = yosoku_tables::report::read_report(table(&bundle, "counters_cv.report")).unwrap();
    let cells: Vec<_> = report
        .iter()
        .filter(|c| c.column != yosoku_models::counters::report::PUBLISHED_COLUMN)
        .collect();
    assert_eq!(
        cells.len(),
        72 * 2,
        "a 9 x 9 matrix (diagonal empty) per hold-out"
    );
    assert!(
        cells.iter().all(|c| c.row != c.column),
        "no GPU predicts itself"
    );
    check_golden(&bundle);
}

#[test]
fn cross_platform_selects_counters_per_kernel_and_target() {
    let (_dir, bundle) = run("cross-platform.toml");
    let summary = table(&bundle, "stepwise.model_summary");
    assert_eq!(summary.num_rows(), 5 * 8, "5 kernels x 8 target GPUs");
    let group = utf8(summary, col::MODEL_GROUP).unwrap();
    let flags = utf8(summary, col::FLAGS).unwrap();
    let adjusted = float64(summary, col::ADJUSTED_R2).unwrap();
    for i in 0..summary.num_rows() {
        // Every model either explains the target (adjusted R^2 >= 0.8) or says it does not.
        let weak = flags
            .get(i)
            .is_some_and(|f| f.contains(yosoku_models::counters::fit::R2_BELOW_FLAG));
        assert_eq!(weak, adjusted.value(i) < 0.8, "{}", group.value(i));
        assert!(group.value(i).starts_with("program="), "{}", group.value(i));
    }
    // The selection path of every model starts from the intercept and adds terms in order of
    // decreasing gain: adjusted R^2 increases at every step.
    let path = table(&bundle, "stepwise.selection_path");
    let p_group = utf8(path, col::MODEL_GROUP).unwrap();
    let step = yosoku_tables::access::int64(path, col::STEP).unwrap();
    let adj = float64(path, col::ADJUSTED_R2).unwrap();
    for i in 1..path.num_rows() {
        if p_group.value(i) == p_group.value(i - 1) {
            assert_eq!(step.value(i), step.value(i - 1) + 1);
            assert!(adj.value(i) > adj.value(i - 1), "{}", p_group.value(i));
        } else {
            assert_eq!(step.value(i), 0);
        }
    }
    check_golden(&bundle);
}

/// The long-form path: a real Nsight Compute sweep (H100, `tools/ncu-capture`) through
/// `pivot_counters` into a model.
#[test]
fn an_ncu_sweep_pivots_into_observations_and_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let csv =
        repo().join("plugins/cuda_profiler/tests/data/ncu/ncu_raw_sweep_matmul_tiled_h100.csv");
    let sizes: Vec<String> = [128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024]
        .iter()
        .map(|n| format!("\"n={n}\""))
        .collect();
    let pipeline = format!(
        r#"[pipeline]
name = "ncu-sweep"

[sources.h100]
plugin = "cuda_profiler"
collector = "ncu"
config = {{ path = "{}", device = "H100", variants = [{}] }}

[[normalize]]
step = "pivot_counters"
id = "wide"
runs = "h100.runs"
counters = "h100.counters"
metrics = ["inst_executed", "dram_read_bytes"]

[[fit]]
step = "ols"
id = "fit"
observations = "wide.observations"
log_target = true
log_features = true

[[validate]]
step = "cross_validate"
id = "cv"
model = "fit"
holdouts = ["loo"]
"#,
        csv.display(),
        sizes.join(", ")
    );
    std::fs::write(dir.path().join("p.toml"), pipeline).unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("bundle")),
        plugin_path: vec![],
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&dir.path().join("p.toml"), &options, &mut Quiet).unwrap();
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    let wide = table(&bundle, "wide.observations");
    assert_eq!(wide.num_rows(), 11, "one row per launch");
    let inst = float64(wide, "inst_executed").unwrap();
    assert_eq!(
        inst.value(0),
        272_384.0,
        "the value the counters table holds"
    );
    assert_eq!(
        wide.schema()
            .field_with_name("dram_read_bytes")
            .unwrap()
            .metadata()[yosoku_tables::UNIT_METADATA_KEY],
        "bytes"
    );
    // Both features are work counts (kind `count`), so the default kinds would choose them too.
    assert_eq!(
        wide.schema()
            .field_with_name("inst_executed")
            .unwrap()
            .metadata()[yosoku_tables::KIND_METADATA_KEY],
        "count"
    );
    let loo = table(&bundle, "cv.predictions");
    assert_eq!(loo.num_rows(), 11);
    let summary = table(&bundle, "fit.model_summary");
    let r2 = float64(summary, col::R2).unwrap().value(0);
    // ln(time) of a tiled matrix multiply over orders 128-1024 from its instructions and DRAM
    // reads: 0.948 (the smallest sizes are bound by launch latency, not by work).
    assert!(r2 > 0.9, "R^2 {r2}");
}

/// (model, variant, phase) -> (predicted, error %) of a `predictions` table.
fn mpi_predictions(batch: &RecordBatch) -> Vec<(String, String, String, f64, Option<f64>)> {
    let model = utf8(batch, col::MODEL).unwrap();
    let variant = utf8(batch, col::VARIANT).unwrap();
    let phase = utf8(batch, col::PHASE).unwrap();
    let predicted = float64(batch, col::PREDICTED_SECS).unwrap();
    let error = float64(batch, col::ERROR_PCT).unwrap();
    (0..batch.num_rows())
        .map(|i| {
            (
                model.value(i).to_owned(),
                variant.value(i).to_owned(),
                phase.value(i).to_owned(),
                predicted.value(i),
                yosoku_tables::access::opt_f64(error, i),
            )
        })
        .collect()
}

fn run_error(rows: &[(String, String, String, f64, Option<f64>)], variant: &str) -> f64 {
    rows.iter()
        .find(|r| r.1 == variant && r.2 == "total")
        .and_then(|r| r.4)
        .unwrap_or_else(|| panic!("no measured {variant} total"))
}

/// The `mpi_simplified` model the step `simplified` recorded: found by its kind, fitted on its
/// reduced run's `mpi_blocks`, and its saved form, read back, predicting every rank's total as
/// the step's `predictions` give it.
fn saved_simplified_model_answers_as_the_step(
    dir: &Path,
    bundle: &Bundle,
    predictions: &[(String, String, String, f64, Option<f64>)],
) {
    use yosoku_models::Model;
    use yosoku_models::mpi::MpiSimplified;
    use yosoku_models::mpi::loops::RunSize;
    let record = bundle
        .manifest
        .models_of(MpiSimplified::KIND)
        .find(|r| r.name == "simplified")
        .expect("the simplified model is recorded");
    assert!(
        record
            .training
            .as_ref()
            .unwrap()
            .table
            .ends_with(".mpi_blocks")
    );
    let files = yosoku_bundle::fs::read_model(dir, &bundle.manifest, record).unwrap();
    let model = MpiSimplified::from_json(files.fitted_json.as_deref().unwrap()).unwrap();
    let full = predictions
        .iter()
        .find(|r| r.1 == "run" && r.2 == "total")
        .map(|r| r.3)
        .unwrap();
    let ranks = predictions
        .iter()
        .filter(|r| r.1.starts_with("rank ") && r.2 == "total")
        .count();
    assert_eq!(ranks, model.ranks.len());
    let answers = model
        .predict(RunSize::Iterations(bundle_full_iterations(
            bundle,
            "simplified",
        )))
        .unwrap();
    for a in &answers {
        let step = predictions
            .iter()
            .find(|r| r.1 == format!("rank {}", a.rank) && r.2 == "total")
            .unwrap()
            .3;
        assert!(
            (a.total_secs() - step).abs() <= 1e-12 * step,
            "{a:?} {step}"
        );
    }
    let slowest = answers.iter().map(|a| a.total_secs()).fold(0.0, f64::max);
    assert!((slowest - full).abs() <= 1e-12 * full);
}

/// The full run's iterations of MPI step `id`, from its predictions' `repetitions` column.
fn bundle_full_iterations(bundle: &Bundle, id: &str) -> u64 {
    let batch = table(bundle, &format!("{id}.predictions"));
    int64(batch, col::REPETITIONS).unwrap().value(0) as u64
}

#[test]
fn mpi_predictions_of_real_runs_are_within_one_percent_and_the_earlier_method_misses_waiting() {
    for (pipeline, ranks) in [("mpi-homogeneous.toml", 2), ("mpi-heterogeneous.toml", 3)] {
        let (dir, bundle) = run(pipeline);
        check_golden(&bundle);
        let simplified = mpi_predictions(table(&bundle, "simplified.predictions"));
        saved_simplified_model_answers_as_the_step(
            &dir.path().join("bundle"),
            &bundle,
            &simplified,
        );
        // Per rank compute, communication, total; the run; the naive scaling beside it.
        assert_eq!(simplified.len(), 3 * ranks + 2, "{pipeline}");
        // The issue's goal, on the committed measurements (data/mpi/README.md).
        for r in 0..ranks {
            let e = run_error(&simplified, &format!("rank {r}"));
            assert!(e.abs() < 1.0, "{pipeline} rank {r}: {e} %");
        }
        assert!(run_error(&simplified, "run").abs() < 1.0, "{pipeline}");
        // Better than scaling the reduced run's time by the iterations.
        assert!(
            run_error(&simplified, "run").abs()
                < run_error(&simplified, "run (naive scaling)").abs(),
            "{pipeline}"
        );
        // Block by block, the prediction adds up to the rank totals.
        let blocks = table(&bundle, "simplified.mpi_block_predictions");
        let sum: f64 = float64(blocks, col::PREDICTED_SECS)
            .unwrap()
            .values()
            .iter()
            .sum();
        let totals: f64 = simplified
            .iter()
            .filter(|r| r.1.starts_with("rank ") && r.2 == "total")
            .map(|r| r.3)
            .sum();
        assert!((sum - totals).abs() < 1e-9 * totals, "{pipeline}");
    }
    // Heterogeneous: rank 1 has a core of its own and waits for ranks 0 and 2, which share one.
    // Timed alone, communication has no waiting in it: the earlier method misses most of rank
    // 1's time, the paper's method does not.
    let (_dir, bundle) = run("mpi-heterogeneous.toml");
    let separate = mpi_predictions(table(&bundle, "separate_runs.predictions"));
    assert!(run_error(&separate, "rank 1") < -20.0);
    assert!(run_error(&separate, "run") < -2.6);

    // The timeline: each rank's predicted spans add up to its predicted total, and the full run
    // is there as measured; exported, it is a trace the format's rules accept.
    let spans = table(&bundle, "timeline.spans");
    let simplified = mpi_predictions(table(&bundle, "simplified.predictions"));
    let (timeline, lane) = (
        utf8(spans, col::TIMELINE).unwrap(),
        utf8(spans, col::LANE).unwrap(),
    );
    let duration = int64(spans, col::DURATION_NS).unwrap();
    for r in 0..3 {
        let predicted_ns: i64 = (0..spans.num_rows())
            .filter(|&i| timeline.value(i) == "predicted" && lane.value(i) == format!("rank {r}"))
            .map(|i| duration.value(i))
            .sum();
        let total = simplified
            .iter()
            .find(|p| p.1 == format!("rank {r}") && p.2 == "total")
            .unwrap()
            .3;
        assert!(
            (predicted_ns as f64 / 1e9 - total).abs() < 1e-6 * total,
            "rank {r}: spans {predicted_ns} ns, prediction {total} s"
        );
    }
    let blocks = table(&bundle, "full.mpi_blocks");
    let measured = (0..spans.num_rows())
        .filter(|&i| timeline.value(i) == "measured")
        .count();
    assert_eq!(measured, blocks.num_rows());
    let mut json = Vec::new();
    let summary = yosoku_traces::chrome::export(&[spans], &mut json).unwrap();
    assert_eq!((summary.processes, summary.threads), (2, 6));
    let checked = yosoku_traces::chrome::check(&json).unwrap_or_else(|p| panic!("{p:#?}"));
    assert_eq!(checked.complete, spans.num_rows());
}

#[test]
fn a_kineto_trace_imports_as_spans_through_the_plugin_host() {
    let (_dir, bundle) = run("kineto-trace.toml");
    check_golden(&bundle);
    let spans = table(&bundle, "kineto.spans");
    assert_eq!(spans.num_rows(), 320);
}

/// The nsys SQLite export through the plugin host, as `yosoku run` reads it: its launches as
/// runs and its streams and CUDA calls as spans (the plugin's tests check the values).
#[test]
fn an_nsys_sqlite_export_imports_as_runs_and_spans_through_the_plugin_host() {
    let (_dir, bundle) = run("nsys-sqlite.toml");
    check_golden(&bundle);
    assert_eq!(table(&bundle, "cloverleaf.runs").num_rows(), 1312 + 279);
    assert_eq!(
        table(&bundle, "cloverleaf.spans").num_rows(),
        1312 + 279 + 3048
    );
}

#[test]
fn the_best_configuration_search_ranks_candidates_as_the_full_runs_do() {
    let (_dir, bundle) = run("mpi-best-configuration.toml");
    check_golden(&bundle);
    let report = table(&bundle, "search.report");
    let row = utf8(report, col::ROW_LABEL).unwrap();
    let column = utf8(report, col::COLUMN_LABEL).unwrap();
    let value = float64(report, col::VALUE).unwrap();
    let ranks = |which: &str| -> Vec<(String, f64)> {
        (0..report.num_rows())
            .filter(|i| column.value(*i) == which)
            .map(|i| (row.value(i).to_owned(), value.value(i)))
            .collect()
    };
    let predicted = ranks("predicted rank");
    assert_eq!(predicted.len(), 4);
    assert_eq!(predicted, ranks("measured rank"));
    assert_eq!(predicted[0].0, "2 ranks, bind core");
}

#[test]
fn tau_profiles_import_through_the_plugin_host() {
    let (_dir, bundle) = run("mpi-tau-cpi.toml");
    check_golden(&bundle);
    let ranks = table(&bundle, "tau.mpi_ranks");
    assert_eq!(ranks.num_rows(), 4);
    // Rank 1's `.TAU application` inclusive time, 55329 us.
    let wall = float64(ranks, col::WALL_SECS).unwrap();
    assert!((wall.value(1) - 0.055329).abs() < 1e-12);
}

/// The best of each group in a `throughputs` table: group -> candidate.
fn best_candidates(batch: &RecordBatch) -> Vec<(String, String)> {
    let group = utf8(batch, col::GROUP).unwrap();
    let candidate = utf8(batch, col::CANDIDATE).unwrap();
    let best = batch
        .column_by_name(col::BEST)
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::BooleanArray>()
        .unwrap();
    (0..batch.num_rows())
        .filter(|&i| best.value(i))
        .map(|i| (group.value(i).to_owned(), candidate.value(i).to_owned()))
        .collect()
}

#[test]
fn opencl_vector_width_names_the_best_width_per_device_beside_the_paper() {
    let (_dir, bundle) = run("opencl-vector-width.toml");
    check_golden(&bundle);
    let t = table(&bundle, "width.throughputs");
    // The committed records: three devices (POCL on the CPU, an H100, an H200), five widths.
    assert_eq!(t.num_rows(), 3 * 5);
    let best = best_candidates(t);
    assert_eq!(
        best.iter()
            .map(|(g, c)| (g.as_str(), c.as_str()))
            .collect::<Vec<_>>(),
        [
            ("device=NVIDIA H100 80GB HBM3, program=copy", "float8"),
            ("device=NVIDIA H200, program=copy", "float4"),
            (
                "device=pthread-skylake-avx512-Intel(R) Xeon(R) Processor, program=copy",
                "float16"
            ),
        ],
        "{best:?}"
    );
    // The rates are the bytes the copy moves over its median time: tens of GB/s on this CPU,
    // terabytes per second on the GPUs.
    let rate = float64(t, col::RATE).unwrap();
    assert!(rate.values().iter().all(|r| (1e9..1e13).contains(r)));
    // The paper's devices are printed beside.
    let report = table(&bundle, "width.report");
    let rows = utf8(report, col::ROW_LABEL).unwrap();
    assert!((0..report.num_rows()).any(|i| rows.value(i) == "Shimada et al.: Radeon HD 5870"));
}

#[test]
fn opencl_local_memory_models_validate_both_variants_two_ways() {
    let (_dir, bundle) = run("opencl-local-memory.toml");
    check_golden(&bundle);
    for model in ["unoptimised_cv", "optimised_cv"] {
        let summary = table(&bundle, &format!("{model}.validation_summary"));
        let schemes: Vec<String> = mean_errors(summary)
            .into_iter()
            .map(|(_, v, _)| v)
            .collect();
        // One model per device (POCL, H100, H200), each validated two ways.
        assert_eq!(
            schemes,
            ["loo", "leave_one_out(program)"].repeat(3),
            "{model}"
        );
        // Every row of the variant predicted out of sample: 3 devices x 5 programs x 6 sizes,
        // twice.
        assert_eq!(
            table(&bundle, &format!("{model}.predictions")).num_rows(),
            2 * 3 * 30
        );
    }
    // Across devices: every ordered pair of the three, each of the 90 configurations paired.
    let pairs = table(&bundle, "pairs.observations");
    assert_eq!(pairs.num_rows(), 6 * 90);
    let gpu_to_gpu = step_figure(&bundle, "cross_device_cv", "loo: mean |error|, best model");
    assert!(gpu_to_gpu < 10.0, "{gpu_to_gpu}");
}

#[test]
fn rocprof_amd_gpus_reads_four_gpus_of_two_tool_generations_into_one_table() {
    let (_dir, bundle) = run("rocprof-amd-gpus.toml");
    check_golden(&bundle);
    let obs = table(&bundle, "per_gpu.observations");
    assert_eq!(
        utf8(obs, col::DEVICE)
            .unwrap()
            .iter()
            .flatten()
            .collect::<Vec<_>>(),
        ["MI100", "MI200", "MI300X_A1", "MI350"]
    );
    // The same kernel and size on all four: the MI300X's mean of 16.16, 13.68 and 14.16 us; the
    // MI350's (rocprof-compute 3.0, its passes' mean timestamps with decimals) of 21.762, 16.9198
    // and 16.864 us.
    let secs = float64(obs, col::MEASURED_SECS).unwrap();
    assert!((secs.value(2) - (16_160e-9 + 13_680e-9 + 14_160e-9) / 3.0).abs() < 1e-15);
    assert!((secs.value(3) - (21_762e-9 + 16_919.8e-9 + 16_864e-9) / 3.0).abs() < 1e-15);
    let best = best_candidates(table(&bundle, "speed.throughputs"));
    assert_eq!(
        best,
        [("program=vecCopy".to_owned(), "MI300X_A1".to_owned())]
    );
    assert!(table(&bundle, "amd.devices").num_rows() == 4);
}

/// The report's numbers of one row: column label -> value.
fn report_row(report: &RecordBatch, row_label: &str) -> Vec<(String, f64)> {
    let row = utf8(report, col::ROW_LABEL).unwrap();
    let column = utf8(report, col::COLUMN_LABEL).unwrap();
    let value = float64(report, col::VALUE).unwrap();
    (0..report.num_rows())
        .filter(|i| row.value(*i) == row_label && arrow_array::Array::is_valid(value, *i))
        .map(|i| (column.value(i).to_owned(), value.value(i)))
        .collect()
}

#[test]
fn real_applications_are_predicted_better_than_naive_scaling_with_stable_warmups() {
    // Real MPI programs from Debian that none of us wrote (data/mpi-apps/SOURCES.md): meep (FDTD,
    // C++), CP2K and pw.x (Fortran, an SCF of varying length in every MD step); five reduced runs
    // each predict the full run, measured five times. The largest |error| kept to, and whether
    // setup is most of a short run (then the naive scaling is far off; pw.x sets up in a
    // fraction of a second, and its reduced run is nearly all loop).
    for (pipeline, max_error, setup_heavy) in [
        ("mpi-meep.toml", 15.0, true),
        ("mpi-cp2k.toml", 15.0, true),
        ("mpi-qe.toml", 20.0, false),
    ] {
        let (_dir, bundle) = run(pipeline);
        check_golden(&bundle);
        let mut warmups = Vec::new();
        for repeat in 1..=5 {
            let step = format!("repeat_{repeat}");
            let rows = mpi_predictions(table(&bundle, &format!("{step}.predictions")));
            let error = run_error(&rows, "run");
            let naive = run_error(&rows, "run (naive scaling)");
            // Scaling the reduced run's time is far off where setup is most of a short run; the
            // prediction is within the full runs' spread of their mean.
            assert!(error.abs() < max_error, "{pipeline} {step}: {error} %");
            assert!(
                !setup_heavy || naive > 100.0,
                "{pipeline} {step}: naive {naive} %"
            );
            let run = report_row(
                table(&bundle, &format!("{step}.report")),
                "run (slowest rank)",
            );
            let get = |name: &str| run.iter().find(|(c, _)| c == name).map(|(_, v)| *v);
            assert_eq!(get("measured repeats"), Some(5.0), "{pipeline}");
            assert!(get("spread %").is_some_and(|s| s > 0.0), "{pipeline}");
            // The interval carries the repeats' run-to-run spread: it holds the full runs' mean.
            let (predicted, measured) = (get("predicted s").unwrap(), get("measured s").unwrap());
            let half = get("+- s (95 %)").unwrap();
            assert!(
                (measured - predicted).abs() <= half,
                "{pipeline} {step}: {predicted} +- {half} s, measured {measured} s"
            );
            // The same warm-up on every repeat of the reduced run.
            for rank in ["rank 0", "rank 1"] {
                let rank_row = report_row(table(&bundle, &format!("{step}.report")), rank);
                let w = rank_row
                    .iter()
                    .find(|(c, _)| c == "warm-up excluded")
                    .map(|(_, v)| *v);
                warmups.push((rank, w));
            }
        }
        for (rank, w) in &warmups {
            let first = warmups.iter().find(|(r, _)| r == rank).unwrap().1;
            assert_eq!(*w, first, "{pipeline} {rank}: {warmups:?}");
        }
        // Five repeats together: their mean, with a narrower interval than one repeat's.
        let width = |step: &str| {
            let batch = table(&bundle, &format!("{step}.predictions"));
            let rows = yosoku_tables::rows::read_predictions("p", batch).unwrap();
            let run = rows.iter().find(|p| &*p.variant == "run").unwrap();
            let (lo, hi) = run.interval_secs.unwrap();
            (hi - lo) / run.predicted_secs
        };
        assert!(width("combined_5") < width("repeat_1"), "{pipeline}");
    }
}

/// Issue 56, item 5: a program whose cost per step drifts (tools/mpi-drift, measured by `cargo
/// xtask mpi-experiment drift`). From one reduced length the report's first word on the run is
/// the warning that no steady state is shown, and the flags say how far it may drift; two lengths
/// extrapolate the line through both runs' steps, nearer the measured run than the naive scaling
/// of the longer reduced run in most repeats (the measured figures are in docs/results.md).
#[test]
fn a_drifting_run_is_warned_of_and_two_lengths_extrapolate_the_drift() {
    let (_dir, bundle) = run("mpi-drift.toml");
    check_golden(&bundle);
    let words = |step: &str| {
        let report = table(&bundle, &format!("{step}.report"));
        let row = utf8(report, col::ROW_LABEL).unwrap();
        let column = utf8(report, col::COLUMN_LABEL).unwrap();
        let text = utf8(report, col::TEXT).unwrap();
        (0..report.num_rows())
            .find(|&i| row.value(i) == "run (slowest rank)" && column.value(i) == "steady state")
            .map(|i| text.value(i).to_owned())
            .unwrap_or_default()
    };
    for step in ["from_100", "from_200"] {
        let w = words(step);
        assert!(w.starts_with("WARNING: not shown."), "{step}: {w}");
        let batch = table(&bundle, &format!("{step}.predictions"));
        let rows = yosoku_tables::rows::read_predictions("p", batch).unwrap();
        let run = rows.iter().find(|p| &*p.variant == "run").unwrap();
        assert!(
            run.flags
                .as_deref()
                .is_some_and(|f| f.contains("unsteady=+-")),
            "{step}: {run:?}"
        );
    }
    let mut nearer = 0;
    for repeat in 1..=3 {
        let step = format!("two_lengths_{repeat}");
        assert!(words(&step).contains("two lengths"), "{step}");
        let rows = mpi_predictions(table(&bundle, &format!("{step}.predictions")));
        let error = run_error(&rows, "run");
        let naive = run_error(&rows, "run (naive scaling)");
        nearer += usize::from(error.abs() < naive.abs());
    }
    assert!(
        nearer >= 2,
        "two lengths nearer than naive scaling in {nearer} of 3"
    );
}

/// The figure `name` of step `id`.
fn step_figure(bundle: &Bundle, id: &str, name: &str) -> f64 {
    bundle
        .manifest
        .figures()
        .find(|(i, f)| *i == id && f.name == name)
        .unwrap_or_else(|| panic!("no figure {id}.{name}"))
        .1
        .value
}

#[test]
fn in_kernel_tracing_overhead_and_the_instruction_check_on_the_h100() {
    let (_dir, bundle) = run("cuda-trace-overhead.toml");
    check_golden(&bundle);
    let t = table(&bundle, "r.overheads");
    // Two GPUs twice (the second runs after the launch moved into harness.cuh), four programs
    // (SRAD twice: as is and with its registers capped), 17 variants.
    assert_eq!(t.num_rows(), 2 * 2 * 4 * 17);
    let runs = t
        .column_by_name(col::VARIANT_RUNS)
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::Int64Array>()
        .unwrap();
    assert!(runs.values().iter().all(|&n| n == 50), "50 rounds each");
    let h100 = "NVIDIA H100 80GB HBM3";
    let r = |program: &str, variant: &str| {
        step_figure(&bundle, "r", &format!("{h100} {program}: {variant} R"))
    };
    // Per-thread records cost far more than per-warp ones, and direct global writes most.
    for p in ["matmul", "fwt", "srad"] {
        assert!(
            r(p, "global/thread/globaltimer") > r(p, "shared/thread/globaltimer"),
            "{p}"
        );
        assert!(
            r(p, "shared/thread/globaltimer") > r(p, "shared/warp/globaltimer"),
            "{p}"
        );
    }
    // The lowest overhead of each program: at most 5 % on the matrix multiply and FWT; SRAD's
    // floor on the H100 is just above (data/cuda-trace/SOURCES.md).
    let lowest = |p: &str| step_figure(&bundle, "r", &format!("{h100} {p}: lowest R"));
    assert!(lowest("matmul") <= 5.0 && lowest("fwt") <= 5.0);
    assert!((5.0..6.0).contains(&lowest("srad")), "{}", lowest("srad"));
    // Replacement: a clear gain on FWT (its result writes are a large share of its traffic),
    // none on the matrix multiply.
    let gain = |p: &str| {
        step_figure(
            &bundle,
            "r",
            &format!("{h100} {p}: R(replace/warp/globaltimer) - R(shared/warp/globaltimer)"),
        )
    };
    assert!(gain("fwt") < -2.0, "{}", gain("fwt"));
    assert!(gain("matmul").abs() < 1.0, "{}", gain("matmul"));
    // Without the dummy branch the compiler deletes the matrix multiply's arithmetic: about 40 %
    // of its instructions remain (the paper: about a third); with it, all and the log's.
    let ratio = |v: &str| step_figure(&bundle, "inst", &format!("{h100} matmul: {v} ratio"));
    assert!((0.3..0.5).contains(&ratio("replace_unguarded/warp/globaltimer")));
    assert!(ratio("replace/warp/globaltimer") >= 1.0);
    assert_eq!(bundle.manifest.scoreboard.len(), 15);
}

#[test]
fn a_measured_kernel_trace_draws_per_sm_and_per_block() {
    let (_dir, bundle) = run("cuda-trace-gantt.toml");
    check_golden(&bundle);
    let lanes = |name: &str| {
        let spans = table(&bundle, name);
        let lane = utf8(spans, col::LANE).unwrap();
        (0..spans.num_rows())
            .map(|i| lane.value(i).to_owned())
            .collect::<std::collections::BTreeSet<String>>()
    };
    // SMs 0-5 of the per-warp trace, and the 744 blocks they ran; blocks 0-23 of the per-thread
    // trace.
    assert_eq!(lanes("per_sm.spans").len(), 6);
    assert_eq!(lanes("per_block.spans").len(), 744);
    assert_eq!(lanes("per_thread.spans").len(), 24);
    // Each block's lane names the SM it ran on first (`SM 3 / block 17`), one of the six: the
    // viewer, sorting lanes by name, shows one SM's blocks together.
    let sms = lanes("per_sm.spans");
    for lane in lanes("per_block.spans") {
        let sm = lane.split(" / ").next().unwrap_or_default();
        assert!(sms.contains(sm), "{lane}");
    }
    assert_eq!(
        table(&bundle, "per_thread.trace_records").num_rows(),
        24 * 256 * 32
    );
}

/// What a collector notes about its inputs (here: a program's output skipped around an ncu
/// table) is kept in the bundle's manifest, on its source's step.
#[test]
fn a_collector_s_notes_are_kept_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let clean = std::fs::read_to_string(
        repo().join("plugins/cuda_profiler/tests/data/ncu/ncu_raw_copy_float4_h100.csv"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("out.csv"),
        format!("hello from the program\n{clean}done\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("notes.toml"),
        r#"[pipeline]
name = "notes"
description = "An ncu capture with the program's output in it"

[sources.capture]
plugin = "cuda_profiler"
collector = "ncu"
config = { path = "out.csv" }
"#,
    )
    .unwrap();
    let outcome = run_pipeline(
        &dir.path().join("notes.toml"),
        &RunOptions {
            bundle_dir: Some(dir.path().join("bundle")),
            ..RunOptions::default()
        },
        &mut Quiet,
    )
    .unwrap();
    let source = &outcome.manifest.stages[0].steps[0];
    assert_eq!(source.id, "capture");
    assert_eq!(source.notes.len(), 2, "{:?}", source.notes);
    assert!(
        source.notes[0].ends_with("out.csv: skipped 1 line(s) of program output before the table"),
        "{:?}",
        source.notes
    );
    assert!(
        source.notes[1].ends_with("out.csv: skipped 1 line(s) of program output after the table"),
        "{:?}",
        source.notes
    );
    // And in the bundle as written.
    let written = read_bundle(&outcome.bundle_dir).unwrap();
    assert_eq!(written.manifest.stages[0].steps[0].notes, source.notes);
}

/// `ncu_run` through the real plugin host, without a GPU: a stand-in `ncu` (a shell script)
/// writes the committed report of a real H100 run to its log file and runs the program, as ncu
/// does. The tables are the report's, the command line is in the manifest, and a missing ncu is
/// one error naming where it looked.
#[test]
fn ncu_run_runs_the_program_and_records_its_command() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let report =
        repo().join("plugins/cuda_profiler/tests/data/ncu/ncu_raw_sweep_matmul_tiled_h100.csv");
    let ncu = dir.path().join("ncu");
    std::fs::write(
        &ncu,
        format!(
            "#!/bin/sh\nwhile [ \"$1\" != \"--log-file\" ]; do shift; done\ncp {} \"$2\"\nshift 2\nexec \"$@\"\n",
            report.display()
        ),
    )
    .unwrap();
    let program = dir.path().join("matmul");
    std::fs::write(&program, "#!/bin/sh\necho \"multiplying $*\"\n").unwrap();
    for p in [&ncu, &program] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let pipeline = |ncu: &str| {
        format!(
            "[pipeline]\nname = \"ncu-run\"\n\n[sources.prof]\nplugin = \"cuda_profiler\"\ncollector = \"ncu_run\"\n\
             config = {{ program = {:?}, args = [\"128\", \"1024\"], ncu = {ncu:?}, nsys_trace = \"no\", kernel_name = \"matmul_tiled\", log_dir = {:?} }}\n",
            program.display().to_string(),
            dir.path().join("kept").display().to_string()
        )
    };
    std::fs::write(
        dir.path().join("p.toml"),
        pipeline(&ncu.display().to_string()),
    )
    .unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("bundle")),
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&dir.path().join("p.toml"), &options, &mut Quiet).unwrap();
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    assert_eq!(
        table(&bundle, "prof.runs").num_rows(),
        11,
        "one launch per matrix order"
    );
    assert!(table(&bundle, "prof.counters").num_rows() > 11 * 5);
    let notes = &outcome.manifest.stages[0].steps[0].notes;
    assert!(
        notes.iter().any(|n| n.starts_with("command: ")
            && n.contains(" --csv --page raw --metrics gpu__time_duration.sum,")
            && n.contains("--kernel-name matmul_tiled")
            && n.ends_with(" 128 1024")),
        "{notes:?}"
    );
    let kept = dir.path().join("kept");
    assert_eq!(
        std::fs::read_to_string(kept.join("program-output.txt")).unwrap(),
        "multiplying 128 1024\n"
    );
    assert!(kept.join("ncu.csv").is_file() && kept.join("command.txt").is_file());

    // No ncu where it was said to be: one error at validation, no bundle.
    std::fs::write(dir.path().join("p.toml"), pipeline("/opt/nowhere/ncu")).unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("bundle2")),
        ..RunOptions::default()
    };
    let e = run_pipeline(&dir.path().join("p.toml"), &options, &mut Quiet)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains("ncu: /opt/nowhere/ncu is not a file"), "{e}");
    assert!(!dir.path().join("bundle2").exists());
    // Keys with values ncu cannot take: one error each at validation, no bundle.
    for (extra, said) in [
        (
            ", ncu_metrics = [\"dram__bytes_read.sum,dram__bytes_write.sum\"]",
            "ncu_metrics: expected ncu metric names, one per entry",
        ),
        (", launch_count = 0", "launch_count: expected 1 or more"),
        (", launch_skip = -1", "launch_skip: expected 0 or more"),
        (", timeout_secs = 0.0", "timeout_secs: expected seconds > 0"),
        (
            ", clock_control = \"boost\"",
            "clock_control: `boost`, expected base",
        ),
        (
            "sometimes",
            "nsys_trace: `sometimes`, expected auto, yes or no",
        ),
    ] {
        let text = if extra.starts_with(", ") {
            pipeline(&ncu.display().to_string()).replace(" }\n", &format!("{extra} }}\n"))
        } else {
            pipeline(&ncu.display().to_string())
                .replace("nsys_trace = \"no\"", &format!("nsys_trace = {extra:?}"))
        };
        let text = text.replace(
            &format!(
                "log_dir = {:?}",
                dir.path().join("kept").display().to_string()
            ),
            &format!(
                "log_dir = {:?}",
                dir.path().join("other").display().to_string()
            ),
        );
        std::fs::write(dir.path().join("p.toml"), text).unwrap();
        let e = run_pipeline(&dir.path().join("p.toml"), &options, &mut Quiet)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains(said), "{extra}: {e}");
        assert!(!dir.path().join("bundle2").exists());
    }
}

#[test]
fn an_ncu_source_reads_one_report_or_the_reports_of_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = repo().join("pipelines/data/gpu-measured/h200/lud_diagonal");
    let one = sweep.join("512/ncu.csv.gz").display().to_string();
    let all = sweep.join("*/ncu.csv.gz").display().to_string();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("bundle")),
        ..RunOptions::default()
    };
    let run = |config: &str| {
        let text = format!(
            "[pipeline]\nname = \"sweep\"\n\n[sources.lud]\nplugin = \"cuda_profiler\"\ncollector = \"ncu\"\nconfig = {{ {config} }}\n"
        );
        std::fs::write(dir.path().join("p.toml"), text).unwrap();
        run_pipeline(&dir.path().join("p.toml"), &options, &mut Quiet)
    };
    // A pattern in a directory: every size's report, each size its directory's name.
    let outcome = run(&format!(
        "paths = [{all:?}], variant_from_path = \"{{parent}}\""
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    let runs = table(&bundle, "lud.runs");
    let variant = utf8(runs, col::VARIANT).unwrap();
    let mut sizes: Vec<&str> = (0..runs.num_rows()).map(|i| variant.value(i)).collect();
    sizes.dedup();
    assert_eq!(sizes.len(), 32, "{sizes:?}");
    assert!(sizes.contains(&"8192") && runs.num_rows() == 32 * 5);
    std::fs::remove_dir_all(dir.path().join("bundle")).unwrap();
    // Either key, never both or neither, each with its own way of naming variants.
    for (config, said) in [
        (
            format!("path = {one:?}, paths = [{one:?}]"),
            "path, paths: expected one of them",
        ),
        (
            "device = \"H200\"".to_owned(),
            "path, paths: expected one of them",
        ),
        (
            format!("paths = [{one:?}], variants = [\"512\"]"),
            "variants: give it with `path`",
        ),
        (
            format!("path = {one:?}, variant_from_path = \"{{parent}}\""),
            "variant_from_path: give it with `paths`",
        ),
    ] {
        let e = run(&config).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(said), "{config}: {e}");
        assert!(!dir.path().join("bundle").exists());
    }
}

/// The forecast committed before the H200 ran the Rodinia kernels, scored against what it then
/// measured (pipelines/data/gpu-measured): whatever the error, it is reported; the golden file
/// pins it. What must hold whatever the values: every measured size is scored, heartwall (not
/// measured) is flagged, the forecast's times pass through unchanged, per-kernel figures exist.
#[test]
fn gpu_forecast_scores_the_forecast_made_before_the_h200_was_measured() {
    let (_dir, bundle) = run("gpu-forecast.toml");
    check_golden(&bundle);
    let transfer = "transfer_ridge (across architectures)";
    for (step, measured) in [("h200", 166.0), ("first_run", 66.0), ("h100", 66.0)] {
        for model in [transfer, "wave_scaling"] {
            let f = |name: &str| step_figure(&bundle, step, &format!("{model}: {name}"));
            assert_eq!(f("kernel sizes forecast"), 251.0);
            assert_eq!(f("kernel sizes measured"), measured);
            assert_eq!(f("measured kernel sizes with an interval"), measured);
            let kernel =
                |k: &str, name: &str| step_figure(&bundle, step, &format!("{model} / {k}: {name}"));
            assert_eq!(kernel("kernel", "kernel sizes measured"), 0.0);
            assert_eq!(
                kernel("lud_diagonal", "kernel sizes measured"),
                if step == "h200" { 32.0 } else { 16.0 }
            );
        }
    }
    // What `yosoku report` prints: per model, every kernel, its two bands of measured
    // durations (under 10 us, 10 to 100 us) and each kernel, four columns.
    assert_eq!(
        table(&bundle, "h200.report").num_rows(),
        2 * (1 + 2 + 5) * 4
    );
    let scored = table(&bundle, "h200.predictions");
    let (program, flags) = (
        utf8(scored, col::PROGRAM).unwrap(),
        utf8(scored, col::FLAGS).unwrap(),
    );
    for i in 0..scored.num_rows() {
        if program.value(i) == "kernel" {
            assert!(!flags.is_null(i) && flags.value(i).contains("unmeasured"));
        }
    }
    // The forecast's medians, unchanged: one hotspot size recomputed from the committed rows.
    let forecast = table(&bundle, "forecast.predictions");
    let (f_model, f_program, f_variant, f_secs) = (
        utf8(forecast, col::MODEL).unwrap(),
        utf8(forecast, col::PROGRAM).unwrap(),
        utf8(forecast, col::VARIANT).unwrap(),
        float64(forecast, col::PREDICTED_SECS).unwrap(),
    );
    let mut launches: Vec<f64> = (0..forecast.num_rows())
        .filter(|&i| {
            f_model.value(i) == "wave_scaling"
                && f_program.value(i) == "calculate_temp"
                && f_variant.value(i) == "512x512"
        })
        .map(|i| f_secs.value(i))
        .collect();
    launches.sort_by(f64::total_cmp);
    let n = launches.len();
    let median = if n % 2 == 1 {
        launches[n / 2]
    } else {
        (launches[n / 2 - 1] + launches[n / 2]) / 2.0
    };
    let (model, variant, predicted) = (
        utf8(scored, col::MODEL).unwrap(),
        utf8(scored, col::VARIANT).unwrap(),
        float64(scored, col::PREDICTED_SECS).unwrap(),
    );
    let row = (0..scored.num_rows())
        .find(|&i| {
            model.value(i) == "wave_scaling"
                && program.value(i) == "calculate_temp"
                && variant.value(i) == "512x512"
        })
        .unwrap();
    assert!(n > 0 && predicted.value(row) == median, "{n} launches");
}

/// The second forecast (issue 53, item 6): every described launch on both Hopper GPUs by both
/// methods, no measured time, the latency-aware model never below the target's latency plus the
/// roofline; the committed bundle reads back whole, with the same launches.
#[test]
fn the_second_forecast_is_made_from_the_work_alone_and_its_committed_bundle_reads_back() {
    let (_dir, bundle) = run("gpu-forecast-second.toml");
    check_golden(&bundle);
    let rows = |batch: &RecordBatch| {
        let (model, device, program, variant) = (
            utf8(batch, col::MODEL).unwrap(),
            utf8(batch, col::DEVICE).unwrap(),
            utf8(batch, col::PROGRAM).unwrap(),
            utf8(batch, col::VARIANT).unwrap(),
        );
        let (secs, measured) = (
            float64(batch, col::PREDICTED_SECS).unwrap(),
            float64(batch, col::MEASURED_SECS).unwrap(),
        );
        (0..batch.num_rows())
            .map(|i| {
                assert!(measured.is_null(i), "a forecast has no measured time");
                (
                    model.value(i).to_owned(),
                    device.value(i).to_owned(),
                    format!("{} {}", program.value(i), variant.value(i)),
                    secs.value(i),
                )
            })
            .collect::<Vec<_>>()
    };
    let made = rows(table(&bundle, "second.predictions"));
    // 21 launches (6 kernels at 3-4 sizes) x 2 GPUs x 4 methods: the latency-aware model and
    // the roofline, as committed, and since then the physics model and floor plus bytes beside.
    assert_eq!(made.len(), 21 * 2 * 4);
    for physics in ["physics", "floor_plus_bytes"] {
        assert_eq!(made.iter().filter(|r| r.0 == physics).count(), 21 * 2);
    }
    for (model, device, launch, secs) in &made {
        if model == "utilisation" {
            let roofline = made
                .iter()
                .find(|r| r.0 == "roofline" && r.1 == *device && r.2 == *launch)
                .unwrap();
            assert!(
                *secs > roofline.3 && *secs >= 2.4e-6,
                "{launch} on {device}: {secs}"
            );
        }
    }
    let committed = read_bundle(&repo().join("pipelines/data/gpu-forecast/second")).unwrap();
    let kept = rows(table(&committed, "second.predictions"));
    let launches = |r: &[(String, String, String, f64)]| {
        let mut v: Vec<String> = r
            .iter()
            .filter(|x| x.0 == "utilisation" || x.0 == "roofline")
            .map(|x| format!("{} {} {}", x.0, x.1, x.2))
            .collect();
        v.sort();
        v
    };
    assert_eq!(launches(&kept).len(), kept.len());
    assert_eq!(launches(&kept), launches(&made));
    // The committed forecast scored against the H200's two measurements: each of its 21
    // launches on the H200 by both methods, every one measured, the H100's left out; the two
    // measurements' medians within 15 % of each other for every launch.
    let measured = |id: &str| {
        let batch = table(&bundle, &format!("{id}.predictions"));
        let rows = yosoku_tables::rows::read_predictions("p", batch).unwrap();
        assert_eq!(rows.len(), 21 * 2, "{id}");
        rows.iter()
            .map(|r| {
                assert_eq!(&*r.device, "NVIDIA H200", "{id}");
                assert!(r.flags.as_deref() != Some("unmeasured"), "{id}: {r:?}");
                (
                    format!("{} {} {}", r.model, r.program, r.variant),
                    r.measured_secs.unwrap(),
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let (first, again) = (measured("h200"), measured("h200_again"));
    for (launch, secs) in &first {
        let ratio = again[launch] / secs;
        assert!((0.85..1.15).contains(&ratio), "{launch}: {ratio}");
    }
}

/// `transfer_scores` rows: (scheme, method) -> (median, mean, coverage) in %.
fn transfer_scores(batch: &RecordBatch) -> Vec<(String, String, f64, f64, f64)> {
    let scheme = utf8(batch, col::VALIDATION).unwrap();
    let method = utf8(batch, col::MODEL).unwrap();
    let median = float64(batch, col::MEDIAN_ABS_ERROR_PCT).unwrap();
    let mean = float64(batch, col::MEAN_ABS_ERROR_PCT).unwrap();
    let coverage = float64(batch, col::INTERVAL_COVERAGE_PCT).unwrap();
    (0..batch.num_rows())
        .map(|i| {
            (
                scheme.value(i).to_owned(),
                method.value(i).to_owned(),
                median.value(i),
                mean.value(i),
                coverage.value(i),
            )
        })
        .collect()
}

#[test]
fn gpu_transfer_predicts_held_out_gpus_and_kernels_better_than_the_baselines() {
    let (_dir, bundle) = run("gpu-transfer.toml");
    // Issue 69's floor on gpuperfpredict's data, every scheme of both steps: the physics model
    // (from the launch's profiles, nothing fitted) no worse than the floor plus bytes.
    for step in ["apps", "all"] {
        for scheme in [
            "leave_one_gpu_out",
            "leave_one_gpu_out_other_architectures",
            "leave_one_architecture_out",
            "leave_one_kernel_out",
            "leave_one_kernel_and_gpu_out",
        ] {
            let f = |method: &str| {
                step_figure(&bundle, step, &format!("{scheme}.{method}: median |error|"))
            };
            let (physics, baseline) = (f("physics"), f("floor_plus_bytes"));
            assert!(
                physics <= baseline + 1.0,
                "{step}, {scheme}: physics {physics} against floor + bytes {baseline}"
            );
        }
    }
    check_golden(&bundle);
    for step in ["apps", "all"] {
        let scores = transfer_scores(table(&bundle, &format!("{step}.transfer_scores")));
        assert_eq!(
            scores.len(),
            // Each scheme's methods, physics, its scaling of measured times and floor_plus_bytes
            // among them, and on the GPU schemes the ridge over its chosen base and the
            // combination of three scalings, and the choice among them by the training GPUs.
            (8 + 3) + (7 + 3) + (8 + 3) + (7 + 3) + (3 + 2),
            "{step}: every scheme's methods"
        );
        let get = |scheme: &str, method: &str| {
            scores
                .iter()
                .find(|s| s.0 == scheme && s.1 == method)
                .unwrap_or_else(|| panic!("{step}: no {scheme} / {method}"))
                .clone()
        };
        // A GPU never timed: the learned model beats cores x clock scaling from the GPUs of
        // the same architecture, and Habitat's wave scaling, on the mean.
        let learned = get("leave_one_gpu_out", "transfer_ridge");
        for baseline in [
            "cores_clock_same_architecture",
            "wave_scaling",
            "cores_clock_all_gpus",
            "physics_scaled",
        ] {
            let b = get("leave_one_gpu_out", baseline);
            assert!(learned.3 < b.3, "{step}: {learned:?} vs {b:?}");
        }
        // A kernel never timed: pricing its counters beats the instruction count.
        let costs = get("leave_one_kernel_out", "counter_costs");
        let count = get("leave_one_kernel_out", "instruction_count");
        assert!(costs.2 < count.2, "{step}: {costs:?} vs {count:?}");
        // A kernel the model never saw, measured on other GPUs (`yosoku predict` of one's own
        // kernel): the learned model beats both scalings from those GPUs, on the mean. The
        // physics-scaled times (nothing fitted, from the GPUs of the target's architecture)
        // it beats on the Apps-Gpus kernels and not with the Rodinia kernels: there the
        // physics is the better answer, and the learned model has not earned its place.
        let unseen = get("leave_one_kernel_out", "transfer_ridge");
        for baseline in ["wave_scaling", "cores_clock_all_gpus"] {
            let b = get("leave_one_kernel_out", baseline);
            assert!(unseen.3 < b.3, "{step}: {unseen:?} vs {b:?}");
        }
        let physics = get("leave_one_kernel_out", "physics_scaled");
        assert_eq!(
            (unseen.2 < physics.2, unseen.3 < physics.3),
            if step == "apps" {
                (true, true)
            } else {
                (false, false)
            },
            "{step}: {unseen:?} vs {physics:?}"
        );
        // Intervals calibrated on held-out GPUs cover most held-out rows of a new GPU.
        assert!(learned.4 > 85.0, "{step}: {learned:?}");
        // With the target's architecture left out, the training GPUs are of one architecture:
        // nothing checks the model across architectures, which keeps learning the times.
        let (plain, chosen) = (
            get("leave_one_gpu_out_other_architectures", "transfer_ridge"),
            get(
                "leave_one_gpu_out_other_architectures",
                "transfer_ridge_chosen_base",
            ),
        );
        assert_eq!(plain.2, chosen.2, "{step}");
        // An architecture left out of training, each of its GPUs predicted from its mates (an
        // H100's profile asked on an H200): every source is of the target's architecture, so
        // cores x clock from all GPUs is cores x clock within it; the ridge's intervals,
        // calibrated on GPUs whose architecture stayed in training, still cover most rows.
        let (within, all) = (
            get(
                "leave_one_architecture_out",
                "cores_clock_same_architecture",
            ),
            get("leave_one_architecture_out", "cores_clock_all_gpus"),
        );
        assert_eq!((within.2, within.3), (all.2, all.3), "{step}");
        let untrained = get("leave_one_architecture_out", "transfer_ridge");
        assert!(untrained.4 > 85.0, "{step}: {untrained:?}");
    }
    // Apps-Gpus, a GPU never timed: over the base its training GPUs chose, the ridge is below
    // cores x clock from the GPUs of the target's architecture on the median (docs/results.md).
    let scores = transfer_scores(table(&bundle, "apps.transfer_scores"));
    let median_of = |method: &str| {
        scores
            .iter()
            .find(|s| s.0 == "leave_one_gpu_out" && s.1 == method)
            .map(|s| s.2)
            .unwrap_or_else(|| panic!("apps: no {method}"))
    };
    assert!(
        median_of("transfer_ridge_chosen_base") < median_of("cores_clock_same_architecture"),
        "apps: {} against {}",
        median_of("transfer_ridge_chosen_base"),
        median_of("cores_clock_same_architecture")
    );
    // The Rodinia files' P100 is not in the catalogue: left out, and said so.
    let report = yosoku_tables::report::read_report(table(&bundle, "all.report")).unwrap();
    assert!(
        report
            .iter()
            .any(|c| c.text.as_deref().is_some_and(|t| t.contains("Tesla-P100"))),
        "the report says the P100 was left out"
    );
    // Every prediction is a positive time inside its interval.
    let p = table(&bundle, "all.predictions");
    let predicted = float64(p, col::PREDICTED_SECS).unwrap();
    let low = float64(p, col::INTERVAL_LOW_SECS).unwrap();
    let high = float64(p, col::INTERVAL_HIGH_SECS).unwrap();
    for i in 0..p.num_rows() {
        let v = predicted.value(i);
        assert!(v > 0.0 && low.value(i) <= v && v <= high.value(i));
    }
}

/// A `gpu_transfer` run over the dotProd files with `device_files` over the built-in catalogue:
/// the predictions of the held-out GTX 980 (predicted, interval low), or the run's error.
fn gpu_transfer_with_devices(
    dir: &Path,
    device_files: Vec<PathBuf>,
) -> Result<Vec<(f64, f64)>, String> {
    let data = repo().join("pipelines/data/gpuperfpredict/apps");
    let pipeline = dir.join("transfer.toml");
    std::fs::write(
        &pipeline,
        format!(
            r#"[pipeline]
name = "transfer-devices"

[sources.apps]
plugin = "cuda_profiler"
collector = "gpuperfpredict"
config = {{ paths = ["{}/dotProd-*.csv.gz"] }}

[[fit]]
step = "gpu_transfer_fit"
id = "m"
observations = "apps.observations"

[[validate]]
step = "gpu_transfer"
id = "t"
model = "m"
schemes = ["leave_one_gpu_out"]
predictions = "all"
"#,
            data.display()
        ),
    )
    .unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.join("bundle")),
        device_files,
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&pipeline, &options, &mut Quiet).map_err(|e| e.to_string())?;
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    let p = table(&bundle, "t.predictions");
    let (model, device) = (utf8(p, col::MODEL).unwrap(), utf8(p, col::DEVICE).unwrap());
    let predicted = float64(p, col::PREDICTED_SECS).unwrap();
    let low = float64(p, col::INTERVAL_LOW_SECS).unwrap();
    Ok((0..p.num_rows())
        .filter(|&i| model.value(i) == "wave_scaling" && device.value(i) == "GTX-980")
        .map(|i| (predicted.value(i), low.value(i)))
        .collect())
}

#[test]
fn gpu_transfer_reads_the_users_device_files_and_refuses_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let built_in = gpu_transfer_with_devices(dir.path(), vec![]).unwrap();
    assert!(!built_in.is_empty());
    // The user's GTX 980 with twice the bandwidth replaces the built-in one: dotProd is memory
    // bound, so wave scaling predicts it faster.
    let text = include_str!("../../../core/devices/catalogue/nvidia-gtx-980.toml").replace(
        "dram_bandwidth_gb_per_sec = { value = 224,",
        "dram_bandwidth_gb_per_sec = { value = 448,",
    );
    let mine = dir.path().join("gtx-980.toml");
    std::fs::write(&mine, text).unwrap();
    let replaced = gpu_transfer_with_devices(dir.path(), vec![mine]).unwrap();
    assert_eq!(replaced.len(), built_in.len());
    let faster = replaced
        .iter()
        .zip(&built_in)
        .filter(|(r, b)| r.0 < 0.95 * b.0)
        .count();
    assert!(
        faster * 2 > built_in.len(),
        "{faster} of {}",
        built_in.len()
    );
    // A negative bandwidth: the run stops at the file's line, and the last bundle stays.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        include_str!("../../../core/devices/catalogue/nvidia-gtx-980.toml").replace(
            "dram_bandwidth_gb_per_sec = { value = 224,",
            "dram_bandwidth_gb_per_sec = { value = -224,",
        ),
    )
    .unwrap();
    let e = gpu_transfer_with_devices(dir.path(), vec![bad]).unwrap_err();
    assert!(
        e.contains("device catalogue") && e.contains("bad.toml:16:"),
        "{e}"
    );
    assert!(read_bundle(&dir.path().join("bundle")).is_ok());
}

#[test]
fn opencl_scaling_models_every_kernel_and_predicts_its_largest_size() {
    let (_dir, bundle) = run("opencl-scaling.toml");
    check_golden(&bundle);
    let models = table(&bundle, "scaling.scaling_models");
    let predictions = table(&bundle, "scaling.predictions");
    // Three devices, 15 kernel variants each, every one modelled over n and its largest size
    // predicted with an interval.
    assert_eq!(models.num_rows(), 45);
    assert_eq!(predictions.num_rows(), 45);
    let low = float64(predictions, col::INTERVAL_LOW_SECS).unwrap();
    let high = float64(predictions, col::INTERVAL_HIGH_SECS).unwrap();
    let predicted = float64(predictions, col::PREDICTED_SECS).unwrap();
    for i in 0..predictions.num_rows() {
        assert!(low.value(i) <= predicted.value(i) && predicted.value(i) <= high.value(i));
    }
    let held = utf8(models, col::HELD_OUT).unwrap();
    assert!((0..45).all(|i| held.value(i).starts_with("n=")));
}

/// MPI runs over input size and rank count, measured with the interposer (himeno_mpi and meep,
/// three runs a configuration): every call path over 1 % of the time modelled over both
/// parameters, the largest configuration (largest size on 4 ranks) held out and predicted.
#[test]
fn mpi_scaling_models_every_call_path_over_size_and_ranks_and_predicts_the_largest() {
    let (_dir, bundle) = run("mpi-scaling.toml");
    check_golden(&bundle);
    for (step, held_out, paths) in [
        ("himeno_scaling", "n=97;ranks=4", "himeno_paths"),
        ("himeno_16_cores", "n=97;ranks=4", "himeno16_paths"),
        ("meep_scaling", "res=60;ranks=4", "meep_paths"),
        ("meep_16_cores", "res=60;ranks=4", "meep16_paths"),
    ] {
        let models = table(&bundle, &format!("{step}.scaling_models"));
        let predictions = table(&bundle, &format!("{step}.predictions"));
        assert!(
            models.num_rows() >= 4,
            "{step}: {} models",
            models.num_rows()
        );
        let variant = utf8(models, col::VARIANT).unwrap();
        assert_eq!(variant.value(0), "whole run", "{step}: the whole run first");
        let held = utf8(models, col::HELD_OUT).unwrap();
        assert!((0..models.num_rows()).all(|i| held.value(i) == held_out));
        assert_eq!(predictions.num_rows(), models.num_rows());
        // The held-out point's measured time is the mean of its three runs.
        let runs = table(&bundle, &format!("{paths}.runs"));
        let params = utf8(runs, col::PARAMETERS).unwrap();
        let runs_variant = utf8(runs, col::VARIANT).unwrap();
        let secs = float64(runs, col::MEASURED_SECS).unwrap();
        let whole: Vec<f64> = (0..runs.num_rows())
            .filter(|&i| params.value(i) == held_out && runs_variant.value(i) == "whole run")
            .map(|i| secs.value(i))
            .collect();
        assert_eq!(whole.len(), 3, "{step}");
        let measured = float64(predictions, col::MEASURED_SECS).unwrap().value(0);
        assert!((measured - whole.iter().sum::<f64>() / 3.0).abs() < 1e-12);
    }
    // Exported for Extra-P, himeno's two experiments (2 and 16 cores) stay apart: the call
    // paths both measure are named after their tables, each point with its own three runs.
    let runs: Vec<(&str, &RecordBatch)> = ["himeno_paths.runs", "himeno16_paths.runs"]
        .into_iter()
        .map(|n| (n, table(&bundle, n)))
        .collect();
    let export = yosoku_models::scaling::extrap::experiments(&runs).unwrap();
    let paths: Vec<&String> = export
        .experiments
        .iter()
        .flat_map(|e| &e.callpaths)
        .collect();
    for namespace in ["himeno_paths", "himeno16_paths"] {
        assert!(
            paths
                .iter()
                .any(|p| p.as_str() == format!("{namespace}->himeno_mpi->whole run")),
            "{paths:?}"
        );
    }
    assert!(paths.iter().all(|p| p.starts_with("himeno")), "{paths:?}");
    let json: serde_json::Value = serde_json::from_str(&export.experiments[0].json).unwrap();
    for (_, metrics) in json["measurements"].as_object().unwrap() {
        for (_, points) in metrics.as_object().unwrap() {
            for point in points.as_array().unwrap() {
                assert_eq!(point["values"].as_array().unwrap().len(), 3, "{point}");
            }
        }
    }
}

/// Runs, in `dir`, a pipeline that imports `path` (an Extra-P file or a Cube set) with the
/// `table` plugin's `extrap` collector as `x` and fits its runs with `scaling_fit` as `m`; the
/// outcome and the bundle it wrote.
fn extrap_imported_and_fitted(dir: &Path, path: &Path) -> (RunOutcome, Bundle) {
    let pipeline = dir.join("extrap.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[pipeline]\nname = \"extrap-file\"\n\n[sources.x]\nplugin = \"table\"\ncollector = \"extrap\"\nconfig = {{ paths = [\"{}\"] }}\n\n[[fit]]\nstep = \"scaling_fit\"\nid = \"m\"\nruns = \"x.runs\"\n",
            path.display()
        ),
    )
    .unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.join("bundle")),
        ..RunOptions::default()
    };
    let outcome = run_pipeline(&pipeline, &options, &mut Quiet).unwrap();
    let bundle = read_bundle(&outcome.bundle_dir).unwrap();
    (outcome, bundle)
}

/// One of Extra-P's own test experiments imported by the `table` plugin's `extrap` collector
/// and fitted by the `scaling_fit` step: Extra-P 4.2.5's model of the same file (its terms
/// and coefficients, from `tools/extrap/models.py`), to the 7 digits the formula shows. The
/// bundle records it as a `scaling` model whose saved form answers as the fitted one.
#[test]
fn an_extrap_file_imported_and_modelled_gives_extrap_s_model() {
    let dir = tempfile::tempdir().unwrap();
    let file = repo().join("crates/core/regression/tests/data/extrap/text/two_parameter_1.txt");
    let (outcome, bundle) = extrap_imported_and_fitted(dir.path(), &file);
    let models = table(&bundle, "m.scaling_models");
    assert_eq!(models.num_rows(), 1);
    assert_eq!(utf8(models, col::PARAMETERS).unwrap().value(0), "x,y");
    let formula = utf8(models, col::FORMULA).unwrap().value(0).to_owned();
    // Extra-P: 1.374208312529971 + 6.698080399962684 * log2(y) + 0.043841655290305426 *
    // x^(3/2) * log2(x)^2 * log2(y).
    assert!(formula.starts_with("1.374208e0 + "), "{formula}");
    assert!(formula.contains("6.698080e0 * log2(y)^(1)"), "{formula}");
    assert!(
        formula.contains("4.384166e-2 * x^(3/2) * log2(x)^(2) * log2(y)^(1)"),
        "{formula}"
    );
    saved_scaling_model_answers_as_fitted(&outcome.bundle_dir, &bundle);
}

/// One meaning of a scaling interval: an Extra-P file fitted by a `scaling_fit` step, its saved
/// model asked at `target`, gives every call path the interval `yosoku scaling --target` gives
/// it on the same file, calibrated on the same checks; how many call paths were compared, and
/// how many intervals the calibration widened beyond the fit's own.
fn saved_and_command_intervals(file: &Path, target: &[(String, f64)]) -> (usize, usize) {
    use yosoku_models::Model;
    use yosoku_models::scaling::{PmnfScaling, ScalingQuestion};
    use yosoku_runner::scaling::{CubeReading, PmnfOptions, model_files};
    let dir = tempfile::tempdir().unwrap();
    let (outcome, bundle) = extrap_imported_and_fitted(dir.path(), file);
    let record = bundle.manifest.models_of(PmnfScaling::KIND).next().unwrap();
    let files =
        yosoku_bundle::fs::read_model(&outcome.bundle_dir, &bundle.manifest, record).unwrap();
    let saved = PmnfScaling::from_json(files.fitted_json.as_deref().unwrap()).unwrap();
    let command = model_files(
        &[file.to_path_buf()],
        &PmnfOptions::default(),
        CubeReading::default(),
        false,
        Some(target),
    )
    .pop()
    .unwrap()
    .unwrap();
    let x: Vec<f64> = saved
        .parameters
        .iter()
        .map(|p| target.iter().find(|(n, _)| n == p).unwrap().1)
        .collect();
    let (mut compared, mut widened) = (0, 0);
    for path in &saved.call_paths {
        let asked = saved
            .predict(ScalingQuestion {
                call_path: [&path.device, &path.program, &path.variant, &path.phase],
                at: target,
            })
            .unwrap();
        let theirs = command
            .models
            .iter()
            .find(|m| m.callpath == path.program)
            .and_then(|m| m.prediction)
            .unwrap_or_else(|| panic!("the command predicts no {}", path.program));
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        assert!(near(asked.predicted_secs, theirs.value), "{}", path.program);
        let ((lo, hi), (a, b)) = (asked.interval_secs.unwrap(), theirs.interval.unwrap());
        assert!(
            near(lo, a) && near(hi, b),
            "{}: {lo}-{hi} against {a}-{b}",
            path.program
        );
        compared += 1;
        widened += usize::from(path.model.interval(&x, 0.95) != asked.interval_secs);
    }
    (compared, widened)
}

/// [`saved_and_command_intervals`] on one of Extra-P's test experiments (4 call paths over p),
/// whose checks widen an interval, and on RELeARN's real measurements (14 call paths over p and
/// n, one measured 0 everywhere: a phase that never ran, which the importer leaves out).
#[test]
fn a_saved_scaling_model_s_intervals_are_the_command_s() {
    let data = repo().join("crates/core/regression/tests/data");
    let (compared, widened) = saved_and_command_intervals(
        &data.join("extrap/input/experiment2.txt"),
        &[("p".to_owned(), 1000.0)],
    );
    assert_eq!(compared, 4);
    assert!(
        widened > 0,
        "no interval was calibrated beyond the fit's own"
    );
    let (compared, _) = saved_and_command_intervals(
        &data.join("relearn/relearn_theta0.2.txt"),
        &[("p".to_owned(), 1024.0), ("n".to_owned(), 10000.0)],
    );
    assert_eq!(compared, 13);
}

/// A directory of Score-P's Cube profiles (Extra-P's threaded example, f = 1 to 5) imported by
/// the `extrap` collector and fitted by `scaling_fit`: Extra-P 4.2.5's models of the set
/// (`extrap --cube`), one per call path with a positive time at every run.
#[test]
fn a_cube_set_imported_and_modelled_gives_extrap_s_models() {
    let dir = tempfile::tempdir().unwrap();
    let set = repo().join("crates/core/regression/tests/data/cube/simple_threaded");
    let (_, bundle) = extrap_imported_and_fitted(dir.path(), &set);
    let models = table(&bundle, "m.scaling_models");
    assert_eq!(models.num_rows(), 4);
    let formulas: Vec<&str> = (0..4)
        .map(|r| utf8(models, col::FORMULA).unwrap().value(r))
        .collect();
    // Extra-P: main->foo 2.4750000000000005 * f, main->omp parallel 3.3000000000000003 * f.
    for slope in [
        "2.475000e0 * f^(1)",
        "3.300000e0 * f^(1)",
        "7.000000e-1 * f^(1)",
    ] {
        assert!(formulas.iter().any(|f| f.contains(slope)), "{formulas:?}");
    }
}

/// The counter model `record`'s saved form, read back from the bundle and asked for the rows of
/// its training table, gives the fit step's in-sample predictions.
fn saved_counter_model_answers_as_fitted(
    dir: &RunDir,
    bundle: &Bundle,
    record: &yosoku_bundle::ModelRecord,
) {
    use yosoku_models::Model;
    use yosoku_models::counters::model::CounterRegression;
    let files = yosoku_bundle::fs::read_model(&dir.path().join("bundle"), &bundle.manifest, record)
        .unwrap();
    let model = CounterRegression::from_json(files.fitted_json.as_deref().unwrap()).unwrap();
    assert_eq!(model.groups.len(), 9, "one model per GPU");
    let training = table(bundle, &record.training.as_ref().unwrap().table);
    let answered = model.predict(training).unwrap();
    let fitted = table(bundle, &format!("{}.predictions", record.name));
    let in_sample = fitted
        .column_by_name(col::PREDICTED_SECS)
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::Float64Array>()
        .unwrap();
    let run_ids = utf8(fitted, col::RUN_ID).unwrap();
    let training_ids = utf8(training, col::RUN_ID).unwrap();
    assert_eq!(answered.len(), training.num_rows());
    for r in 0..fitted.num_rows() {
        let row = (0..training.num_rows())
            .find(|&t| training_ids.value(t) == run_ids.value(r))
            .unwrap();
        let (p, q) = (answered[row], in_sample.value(r));
        assert!(
            (p - q).abs() <= 1e-9 * q.abs(),
            "{}: {p} against {q}",
            run_ids.value(r)
        );
    }
}

/// The `scaling` model recorded by the fit step `m`: found by its kind, fitted on `x.runs`, and
/// its saved form answering with Extra-P's model (1.374208312529971 + 6.698080399962684 *
/// log2(y) + 0.043841655290305426 * x^(3/2) * log2(x)^2 * log2(y), at x = 4, y = 8).
fn saved_scaling_model_answers_as_fitted(dir: &Path, bundle: &Bundle) {
    use yosoku_models::Model;
    use yosoku_models::scaling::{PmnfScaling, ScalingQuestion};
    let mut records = bundle.manifest.models_of(PmnfScaling::KIND);
    let record = records.next().expect("a scaling model is recorded");
    assert!(records.next().is_none());
    assert_eq!(record.name, "m");
    assert_eq!(record.training.as_ref().unwrap().table, "x.runs");
    let files = yosoku_bundle::fs::read_model(dir, &bundle.manifest, record).unwrap();
    let model = PmnfScaling::from_json(files.fitted_json.as_deref().unwrap()).unwrap();
    assert_eq!(model.parameters, ["x", "y"]);
    let path = &model.call_paths[0];
    let call_path = [
        path.device.as_str(),
        path.program.as_str(),
        path.variant.as_str(),
        path.phase.as_str(),
    ];
    let at = [("y".to_owned(), 8.0), ("x".to_owned(), 4.0)];
    let answer = model
        .predict(ScalingQuestion { call_path, at: &at })
        .unwrap();
    let extrap =
        1.374208312529971 + 6.698080399962684 * 3.0 + 0.043841655290305426 * 8.0 * 4.0 * 3.0;
    assert!(
        (answer.predicted_secs - extrap).abs() < 1e-9 * extrap,
        "{} against Extra-P's {extrap}",
        answer.predicted_secs
    );
    let e = model
        .predict(ScalingQuestion {
            call_path,
            at: &at[..1],
        })
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no value for parameter `x` (the model is over x, y)"),
        "{e}"
    );
}

/// NeuSight's split: the three unseen GPUs' launches, every method on the rows it answers, and
/// the scalings from the training GPUs nearer than keeping the time.
#[test]
fn neusight_split_scores_the_unseen_gpus_by_group_and_duration() {
    let (_dir, bundle) = run("neusight-split.toml");
    check_golden(&bundle);
    physics_never_worse_than_floor_plus_bytes(&bundle);
    let figure = |name: &str| step_figure(&bundle, "split", name);
    for group in ["FC", "BMM", "EW", "Softmax", "LN", "every launch"] {
        let at = |method: &str| figure(&format!("{group}, any duration, {method}: mean |error|"));
        let (unchanged, wave) = (at("time_unchanged"), at("wave_scaling"));
        assert!(wave < unchanged, "{group}: {wave} vs {unchanged}");
        assert!(at("roofline").is_finite(), "{group}");
    }
    // The data's shortest unseen-GPU launches take over 20 us: no band under 10 us.
    assert!(
        !bundle
            .manifest
            .figures()
            .any(|(_, f)| f.name.contains("under 10 us")),
        "no launch under 10 us in NeuSight's data"
    );
    let report = yosoku_tables::report::read_report(table(&bundle, "split.report")).unwrap();
    // The 1,040 linear shapes on each of the three unseen GPUs, every one with a roofline.
    assert!(
        report.iter().any(|c| c.row == "roofline"
            && c.column == "FC (any duration)"
            && c.text
                .as_deref()
                .is_some_and(|t| t.contains("(3120 of 3120; "))),
        "{report:?}"
    );
    // The latency-aware model answers every launch, from its dimensions and grid alone, each
    // with an interval.
    assert!(
        report.iter().any(|c| {
            c.row == "utilisation"
                && c.column == "FC (any duration)"
                && c.text.as_deref().is_some_and(|t| {
                    t.contains("(3120 of 3120; ") && t.contains(" % in the intervals")
                })
        }),
        "{report:?}"
    );
    // Each of the eight left out in turn: the 974 linear shapes all eight measured, 7,792 rows.
    let eight = yosoku_tables::report::read_report(table(&bundle, "eight.report")).unwrap();
    assert!(
        eight.iter().any(|c| c.row == "wave_scaling"
            && c.column == "FC (any duration)"
            && c.text
                .as_deref()
                .is_some_and(|t| t.contains("(7792 of 7792; "))),
        "{eight:?}"
    );
    // Which GPU the errors come from: each one's 974 launches on its own, the eight together
    // the 7,792; the split's three unseen GPUs likewise.
    let per_gpu: Vec<&str> = eight
        .iter()
        .filter(|c| c.row == "utilisation" && c.column.starts_with("every launch on "))
        .filter_map(|c| c.text.as_deref())
        .collect();
    assert_eq!(per_gpu.len(), 8, "{eight:?}");
    assert!(
        per_gpu.iter().all(|t| t.contains("(974 of 974; ")),
        "{per_gpu:?}"
    );
    for gpu in [
        "NVIDIA H100 80GB HBM3",
        "NVIDIA L4",
        "NVIDIA A100 80GB PCIe",
    ] {
        let name = format!("every launch on {gpu}, any duration, utilisation: median |error|");
        assert!(figure(&name).is_finite(), "{name}");
    }
    // What limits a GPU left out (issue 69's 12 % target for the eight): one number per GPU.
    // The latency-aware model errs on each by a factor of its own (signed, more than 25 % on
    // the P4, the T4, the V100 and the L4), and with each GPU's factor divided out what is left
    // is under the target: the launches' shape across a GPU is right, its level is not.
    let eight_figure = |name: &str| step_figure(&bundle, "eight", name);
    let left = eight_figure(
        "every launch, any duration, utilisation: median |error| with one factor removed",
    );
    let whole = eight_figure("every launch, any duration, utilisation: median |error|");
    assert!(left < 12.0 && left < whole / 2.0, "{left} of {whole}");
    let biased = ["Tesla P4", "Tesla T4", "Tesla V100-PCIE-32GB", "NVIDIA L4"];
    for gpu in biased {
        let name = format!("every launch on {gpu}, any duration, utilisation: median signed error");
        assert!(eight_figure(&name).abs() > 25.0, "{name}");
    }
}

/// A split naming a GPU the input lacks, one GPU on both sides, a profile's GPU that is not a
/// training GPU, or a GPU its model was not fitted on stops the run naming it; so does a model
/// set against measured peaks where a GPU has none.
#[test]
fn a_split_naming_a_missing_or_doubled_gpu_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo().join("pipelines/data/neusight/test/ln.csv.gz");
    for (fit, split, expected) in [
        (
            "",
            "train = [\"Tesla T4\"]\ntest = [\"NVIDIA H200\"]",
            "test GPU `NVIDIA H200` has no launch in the input",
        ),
        (
            "",
            "train = [\"Tesla T4\"]\ntest = [\"T4\"]",
            "GPU `Tesla T4` is both a training and a test GPU",
        ),
        (
            "",
            "train = [\"Tesla T4\"]\ntest = [\"L4\"]\nprofile_from = \"Tesla P4\"",
            "the profile's GPU `Tesla P4` is not a training GPU",
        ),
        (
            "train = [\"Tesla T4\", \"Tesla P4\"]",
            "train = [\"Tesla T4\"]\ntest = [\"L4\"]",
            "GPU `NVIDIA L4` is not one of the training GPUs of model `m` (Tesla T4, Tesla P4)",
        ),
        (
            "peaks = \"measured\"",
            "train = [\"Tesla T4\"]\ntest = [\"L4\"]",
            "has no measured FP32 rate and bandwidth in the catalogue (`yosoku calibrate` on it writes them)",
        ),
    ] {
        let pipeline = dir.path().join("split.toml");
        std::fs::write(
            &pipeline,
            format!(
                "[pipeline]\nname = \"split\"\n\n[sources.k]\nplugin = \"cuda_profiler\"\ncollector = \"neusight\"\nconfig = {{ paths = [{:?}] }}\n\n[[normalize]]\nstep = \"pivot_counters\"\nid = \"obs\"\nruns = \"k.runs\"\ncounters = \"k.counters\"\n\n[[fit]]\nstep = \"work_model_fit\"\nid = \"m\"\nobservations = \"obs.observations\"\n{fit}\n\n[[validate]]\nstep = \"gpu_split\"\nid = \"s\"\nmodel = \"m\"\n{split}\n",
                data.display().to_string()
            ),
        )
        .unwrap();
        let options = RunOptions {
            bundle_dir: Some(dir.path().join("bundle")),
            ..RunOptions::default()
        };
        let e = run_pipeline(&pipeline, &options, &mut Quiet)
            .err()
            .unwrap_or_else(|| panic!("{split}: ran"))
            .to_string();
        assert!(e.contains(expected), "{e}");
        assert!(!dir.path().join("bundle").exists(), "nothing written");
    }
}

/// The OpenCL suite's GPUs predicted from each other with the datasheet's peaks and with the
/// measured ones: the calibration moves the latency-aware model closer on both; POCL, which has
/// no datasheet, is predicted only with its calibration.
#[test]
fn a_calibration_moves_the_latency_aware_model_closer_on_both_gpus() {
    let (_dir, bundle) = run("opencl-calibration.toml");
    check_golden(&bundle);
    // Issue 69's floor, scheme by scheme: over every launch of each held-out GPU, the physics
    // model is no worse than the floor plus bytes. Not group by group, as on NeuSight's schemes
    // (`physics_never_worse_than_floor_plus_bytes`): two of the suite's kernels fail there (the
    // H200's matmul from the H100, datasheet peaks: 69.3 against 67.9 %; from the calibrated
    // rates 94.2 against 67.0 %; nbody 158 against 91 %), and one training GPU leaves the
    // learned correction no GPU to be chosen on (docs/results.md).
    for scheme in [
        "h200_datasheet",
        "h200_calibrated",
        "h100_datasheet",
        "h100_calibrated",
        "pocl_calibrated",
    ] {
        let f = |method: &str| {
            step_figure(
                &bundle,
                scheme,
                &format!("every launch, any duration, {method}: median |error|"),
            )
        };
        let (physics, baseline) = (f("physics"), f("floor_plus_bytes"));
        assert!(
            physics <= baseline + 1.0,
            "{scheme}: physics {physics} against floor + bytes {baseline}"
        );
    }
    let figure = |id: &str| {
        bundle
            .manifest
            .figures()
            .find(|(step, f)| {
                *step == id
                    && f.name == "every launch, any duration, utilisation_scaled: median |error|"
            })
            .map(|(_, f)| f.value)
            .unwrap_or_else(|| panic!("{id}: no figure"))
    };
    for gpu in ["h200", "h100"] {
        let (datasheet, calibrated) = (
            figure(&format!("{gpu}_datasheet")),
            figure(&format!("{gpu}_calibrated")),
        );
        assert!(calibrated < datasheet, "{gpu}: {calibrated} vs {datasheet}");
    }
    // Without a calibration POCL's CPU has no peak to predict from.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("pipelines/opencl-calibration.toml"))
        .unwrap()
        .replace(
            "data/opencl",
            &repo().join("pipelines/data/opencl").display().to_string(),
        );
    let cut = text.find("[[validate]]").unwrap();
    let pipeline = format!(
        "{}[[fit]]\nstep = \"work_model_fit\"\nid = \"m\"\nobservations = \"all_obs.observations\"\n\n[[validate]]\nstep = \"gpu_split\"\nid = \"pocl\"\nmodel = \"m\"\ntrain = [\"H100\"]\ntest = [\"POCL Xeon 2 vCPU\"]\n",
        &text[..cut]
    );
    std::fs::write(dir.path().join("p.toml"), pipeline).unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("bundle")),
        ..RunOptions::default()
    };
    let e = run_pipeline(&dir.path().join("p.toml"), &options, &mut Quiet)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("the catalogue has no `fp32_peak_gflops`"), "{e}");
}

/// The parts' models of `mpi-steps-and-ranks`: each fitted by its fit step (kind
/// `mpi_steps_and_ranks`, trained on the short runs' blocks), scored by the step that asks it at
/// its target, and saved in a scaling model's form that holds every part the fit's table lists.
fn parts_models_are_saved_by_the_fit_steps(dir: &Path, bundle: &Bundle) {
    use yosoku_models::Model;
    use yosoku_models::scaling::PmnfScaling;
    let records: Vec<_> = bundle
        .manifest
        .models_of(yosoku_models::mpi::STEPS_AND_RANKS_KIND)
        .collect();
    assert_eq!(records.len(), 3);
    for record in records {
        let step = record.name.strip_suffix("_fit").unwrap();
        let short = if step == "himeno_16_cores" {
            "himeno16"
        } else {
            step.split('_').next().unwrap()
        };
        assert_eq!(
            record.training.as_ref().unwrap().table,
            format!("{short}_short.mpi_blocks")
        );
        assert_eq!(record.scores, [format!("{step}.predictions")]);
        let files = yosoku_bundle::fs::read_model(dir, &bundle.manifest, record).unwrap();
        let saved = PmnfScaling::from_json(files.fitted_json.as_deref().unwrap()).unwrap();
        let fitted = table(bundle, &format!("{}.scaling_models", record.name));
        let variants = utf8(fitted, col::VARIANT).unwrap();
        let formulas = utf8(fitted, col::FORMULA).unwrap();
        assert_eq!(saved.call_paths.len(), fitted.num_rows());
        for (i, path) in saved.call_paths.iter().enumerate() {
            assert_eq!(path.variant, variants.value(i));
            assert_eq!(path.formula, formulas.value(i));
        }
        // Nothing of the short runs is held out: the step that asks the model fits the same.
        let asked = utf8(
            table(bundle, &format!("{step}.scaling_models")),
            col::FORMULA,
        )
        .unwrap();
        assert_eq!(asked.len(), formulas.len());
        for i in 0..asked.len() {
            assert_eq!(asked.value(i), formulas.value(i));
        }
    }
}

/// Issue 56, item 4: one MPI run predicted at a larger input and 10-20x the steps of any run
/// measured, from short runs over five sizes (`cargo xtask mpi-experiment steps-ranks`, 2 ranks
/// on 2 cores: never oversubscribed). Each prediction is of the mean of three measured target
/// runs, its interval carrying both models' uncertainty and the drift the short runs cannot
/// exclude; its parts' models are the step's scaling models (what the Scaling view shows).
#[test]
fn a_run_at_a_larger_input_and_more_steps_is_predicted_from_short_runs() {
    let (dir, bundle) = run("mpi-steps-and-ranks.toml");
    check_golden(&bundle);
    parts_models_are_saved_by_the_fit_steps(&dir.path().join("bundle"), &bundle);
    for (step, target, parameter) in [
        ("himeno_forecast", "n=129;ranks=2;steps=400", "n"),
        ("meep_forecast", "ranks=2;res=80;steps=500", "res"),
    ] {
        let batch = table(&bundle, &format!("{step}.predictions"));
        let rows = yosoku_tables::rows::read_predictions("p", batch).unwrap();
        let whole = rows.iter().find(|p| &*p.variant == "whole run").unwrap();
        assert_eq!(whole.held_out.as_deref(), Some(target), "{step}");
        assert_eq!(
            whole.repetitions, 3,
            "{step}: the mean of three measured runs"
        );
        let error = whole.error_pct.unwrap();
        assert!(error.abs() < 25.0, "{step}: {whole:?}");
        // (Whether the interval holds the measured mean is in docs/results.md: himeno's does,
        // meep's misses by 0.5 % of the run.)
        let (lo, hi) = whole.interval_secs.unwrap();
        assert!(
            lo < whole.predicted_secs && whole.predicted_secs < hi,
            "{step}"
        );
        // The baseline beside it, the short runs' whole time modelled and scaled by the steps,
        // counts their setup once per short run's worth of steps: further off.
        let naive = rows.iter().find(|p| p.variant.contains("naive")).unwrap();
        assert!(
            naive.error_pct.unwrap().abs() > error.abs(),
            "{step}: {naive:?}"
        );
        // The parts: the whole run's cost per step and once, modelled over the size alone.
        let models = table(&bundle, &format!("{step}.scaling_models"));
        let variants = utf8(models, col::VARIANT).unwrap();
        for part in ["whole run, per step", "whole run, once"] {
            assert!(
                (0..models.num_rows()).any(|i| variants.value(i) == part),
                "{step}: no model of {part}"
            );
        }
        // The report says how, over which parameter, and warns first where the short runs
        // show no steady state for a run this long (the flag on every prediction).
        let report = table(&bundle, &format!("{step}.report"));
        let (title, row) = (
            utf8(report, col::TITLE).unwrap(),
            utf8(report, col::ROW_LABEL).unwrap(),
        );
        let text = utf8(report, col::TEXT).unwrap();
        let how = (0..report.num_rows())
            .find(|&i| row.value(i) == "how")
            .unwrap_or_else(|| panic!("{step}: no `how`"));
        assert!(
            title
                .value(how)
                .ends_with(&format!("from short runs over {parameter}"))
        );
        let unsteady = whole.flags.as_deref() == Some("unsteady");
        assert_eq!(text.value(how).starts_with("Warning:"), unsteady, "{step}");
    }
    // On 16 cores (the GPU machine's CPUs): short runs on 1, 2, 4 and 8 ranks predict 16 ranks,
    // the rank axis modelled too. Its error is in docs/results.md; here, that it beats the
    // naive scaling and that its interval holds the measured mean.
    let batch = table(&bundle, "himeno_16_cores.predictions");
    let rows = yosoku_tables::rows::read_predictions("p", batch).unwrap();
    let whole = rows.iter().find(|p| &*p.variant == "whole run").unwrap();
    assert_eq!(whole.held_out.as_deref(), Some("n=129;ranks=16;steps=400"));
    let (lo, hi) = whole.interval_secs.unwrap();
    let measured = whole.measured_secs.unwrap();
    assert!(lo < measured && measured < hi, "{whole:?}");
    let naive = rows.iter().find(|p| p.variant.contains("naive")).unwrap();
    assert!(naive.error_pct.unwrap().abs() > whole.error_pct.unwrap().abs());
    let models = table(&bundle, "himeno_16_cores.scaling_models");
    let formulas = utf8(models, col::FORMULA).unwrap();
    assert!((0..models.num_rows()).any(|i| formulas.value(i).contains("ranks")));
}

#[test]
fn the_physics_model_times_the_second_forecast_from_the_h200_calibration() {
    let (_dir, bundle) = run("gpu-physics.toml");
    check_golden(&bundle);
    // Every one of the three H200 measurements: the physics model within the issue's 25 %, and
    // better than the launch floor plus bytes over bandwidth and the roofline on the same
    // launches.
    for step in ["h200", "h200_again", "h200_counters"] {
        let f = |model: &str| step_figure(&bundle, step, &format!("{model}: median |error|"));
        let physics = f("physics");
        assert!(physics <= 25.0, "{step}: {physics}");
        assert!(physics < f("floor_plus_bytes"), "{step}");
        assert!(physics < f("roofline"), "{step}");
        let short = step_figure(
            &bundle,
            step,
            "physics, measured under 10 us: median |error|",
        );
        assert!(short <= 25.0, "{step}: under 10 us {short}");
    }
    // The fields read off the code are worth something: without them the same model is worse.
    assert!(
        step_figure(&bundle, "h200", "physics: median |error|")
            < step_figure(&bundle, "h200_work_alone", "physics: median |error|")
    );
    // What each launch's time is made of: gaussian's Fan2 at n = 4096 (a million blocks of 16
    // threads) is bound by the rate the GPU starts blocks, as the calibration measured it.
    let report = table(&bundle, "physics.report");
    let (row, column, text) = (
        utf8(report, col::ROW_LABEL).unwrap(),
        utf8(report, col::COLUMN_LABEL).unwrap(),
        utf8(report, col::TEXT).unwrap(),
    );
    let bound = (0..report.num_rows())
        .find(|&i| row.value(i) == "Fan2 4096" && column.value(i) == "bound by")
        .map(|i| text.value(i))
        .unwrap();
    assert_eq!(bound, "block starts");
}

/// Issue 69's floor: on every held-out scheme of a bundle's `gpu_split` steps (each group, any
/// duration), the physics model's median |error|, with and without its learned correction, is no
/// worse than the launch floor plus the bytes over the bandwidth, beyond a point of noise.
fn physics_never_worse_than_floor_plus_bytes(bundle: &Bundle) {
    let mut compared = 0;
    for (step, f) in bundle.manifest.figures() {
        let Some((group, method)) = ["physics", "physics_corrected"].iter().find_map(|m| {
            f.name
                .strip_suffix(&format!(", any duration, {m}: median |error|"))
                .map(|g| (g, m))
        }) else {
            continue;
        };
        let baseline = step_figure(
            bundle,
            step,
            &format!("{group}, any duration, floor_plus_bytes: median |error|"),
        );
        assert!(
            f.value <= baseline + 1.0,
            "{step}, {group}: {method} {} against floor + bytes {baseline}",
            f.value
        );
        compared += 1;
    }
    assert!(compared > 0, "no physics figure in the bundle");
}
