//! The `mpi_timer` plugin through the real plugin host: a pipeline that imports real interposer
//! logs (plugins/mpi_timer/tests/data) writes `mpi_blocks` and `mpi_ranks`; a run with a rank's
//! log missing fails with the plugin, the rank and the file named, and writes no bundle.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;

use yosoku_runner::{Quiet, RunOptions, run_pipeline};

fn pipeline(dir: &Path, logs: &Path) -> std::path::PathBuf {
    let text = format!(
        "[pipeline]\nname = \"mpi-logs\"\n\n[sources.run]\nplugin = \"mpi_timer\"\n\
         collector = \"logs\"\nconfig = {{ dir = \"{}\", binding = \"core\" }}\n",
        logs.display()
    );
    let path = dir.join("p.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn table<'a>(bundle: &'a yosoku_bundle::fs::Bundle, name: &str) -> &'a arrow_array::RecordBatch {
    bundle
        .table(name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

/// Runs a pipeline of `sources` that must fail; checks that it wrote no bundle and returns the
/// error.
fn failing_run(dir: &Path, sources: &str) -> String {
    let p = dir.join("p.toml");
    std::fs::write(&p, format!("[pipeline]\nname = \"mpi-logs\"\n\n{sources}")).unwrap();
    let e = run_pipeline(&p, &options(dir), &mut Quiet)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(!dir.join("results/mpi-logs").exists());
    e
}

fn options(dir: &Path) -> RunOptions {
    RunOptions {
        bundle_dir: Some(dir.join("results/mpi-logs")),
        plugin_path: vec![],
        ..RunOptions::default()
    }
}

#[test]
fn real_logs_import_through_the_plugin_host() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../plugins/mpi_timer/tests/data/himeno-3ranks-2cores");
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline(dir.path(), &data);
    run_pipeline(&p, &options(dir.path()), &mut Quiet).unwrap();
    let bundle = yosoku_bundle::fs::read_bundle(&dir.path().join("results/mpi-logs")).unwrap();
    let rows = |name: &str| table(&bundle, name).num_rows();
    assert_eq!(rows("run.mpi_ranks"), 3);
    // Per rank: 62 calls (barrier, 20 x (2 sendrecv + allreduce), reduce) and the 63 gaps around them.
    assert_eq!(rows("run.mpi_blocks"), 3 * (62 + 63));
    // The directory input is recorded file by file, each with its hash.
    let inputs: Vec<&str> = bundle
        .manifest
        .inputs
        .iter()
        .map(|i| i.path.rsplit('/').next().unwrap_or(""))
        .collect();
    assert_eq!(inputs, ["rank-0.tsv", "rank-1.tsv", "rank-2.tsv"]);
    assert!(bundle.manifest.inputs.iter().all(|i| i.sha256.len() == 64));
}

#[test]
fn a_missing_rank_fails_naming_plugin_rank_and_file() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../plugins/mpi_timer/tests/data/himeno-3ranks-2cores");
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for r in [0, 2] {
        let f = format!("rank-{r}.tsv");
        std::fs::copy(data.join(&f), logs.join(&f)).unwrap();
    }
    let p = pipeline(dir.path(), &logs);
    let e = run_pipeline(&p, &options(dir.path()), &mut Quiet)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("plugin `mpi_timer`, collector `logs` failed"),
        "{e}"
    );
    assert!(e.contains("rank 1 of 3 has no log"), "{e}");
    assert!(e.contains("rank-1.tsv"), "{e}");
    assert!(!dir.path().join("results/mpi-logs").exists());
}

/// The tools `cargo xtask test` builds with mpicc (`cargo xtask mpi-tools`): the interposer and
/// himeno_mpi. Without YOSOKU_MPI_TOOLS (a bare `cargo test`) the real MPI tests are skipped
/// with a note; `cargo xtask test` always sets it.
/// Held by each test that launches mpirun: two launches at once can race to create Open MPI's
/// shared session directory (`mkdir /tmp/ompi.<host>.<uid>: File exists`, Open MPI 4.1.4; seen
/// in plugins/mpi_timer/tests/families.rs, which gives each launch its own TMPDIR; here the
/// collector launches mpirun, so the tests take turns).
static MPIRUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn mpi_tools() -> Option<std::path::PathBuf> {
    match std::env::var_os("YOSOKU_MPI_TOOLS") {
        Some(dir) => Some(dir.into()),
        None => {
            eprintln!("skipped: YOSOKU_MPI_TOOLS is not set (run `cargo xtask test`)");
            None
        }
    }
}

fn run_source(tools: &Path, args: &str, extra: &str) -> String {
    format!(
        "[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\n\
         config = {{ program = \"{}\", args = [{args}], ranks = 2, binding = \"core\", oversubscribe = true, interposer = \"{}\"{extra} }}\n",
        tools.join("himeno_mpi").display(),
        tools.join("libyosoku_mpi_timer.so").display(),
    )
}

#[test]
fn a_real_two_rank_run_through_the_runner_collector_is_predicted() {
    let Some(tools) = mpi_tools() else { return };
    let _turn = MPIRUN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("kept-logs");
    // 12 iterations measured; the prediction of 24 is checked for shape, not accuracy (CI
    // machines are noisy): every rank has compute, communication and total, all positive.
    let text = format!(
        "[pipeline]\nname = \"mpi-run\"\n\n{}\n\
         [[fit]]\nstep = \"mpi_simplified\"\nid = \"predict\"\nreduced = \"run.mpi_blocks\"\nfull_iterations = 24\n",
        run_source(
            &tools,
            "\"33\", \"17\", \"17\", \"12\"",
            &format!(", log_dir = \"{}\", run_id = \"ci\"", logs.display())
        )
    );
    let p = dir.path().join("p.toml");
    std::fs::write(&p, text).unwrap();
    let opts = RunOptions {
        bundle_dir: Some(dir.path().join("results/mpi-run")),
        plugin_path: vec![],
        ..RunOptions::default()
    };
    run_pipeline(&p, &opts, &mut Quiet).unwrap();
    let bundle = yosoku_bundle::fs::read_bundle(&dir.path().join("results/mpi-run")).unwrap();
    let table = |name: &str| table(&bundle, name).clone();
    let ranks = table("run.mpi_ranks");
    assert_eq!(ranks.num_rows(), 2);
    let ends = yosoku_tables::access::utf8(&ranks, "log_end").unwrap();
    assert!(ends.iter().all(|e| e == Some("complete")));
    let binding = yosoku_tables::access::utf8(&ranks, "binding").unwrap();
    assert_eq!(binding.value(0), "core");
    // The loop was found: 12 iterations on each rank, 3 MPI calls and 3 compute gaps each but the
    // last (after its allreduce the loop is over).
    let blocks = table("run.mpi_blocks");
    let iteration = yosoku_tables::access::int64(&blocks, "iteration").unwrap();
    assert_eq!(iteration.iter().flatten().max(), Some(11));
    assert_eq!(iteration.iter().flatten().count(), 2 * (12 * 6 - 1));
    // The logs were kept where asked.
    assert!(logs.join("rank-0.tsv").is_file() && logs.join("rank-1.tsv").is_file());
    let predictions = table("predict.predictions");
    assert_eq!(predictions.num_rows(), 2 * 3 + 2);
    let predicted = yosoku_tables::access::float64(&predictions, "predicted_secs").unwrap();
    assert!(predicted.iter().flatten().all(|v| v > 0.0));
}

/// Our message-rate program (tools/mpi-message-rate, the generator of the large-log benchmark,
/// `cargo xtask bench-mpi-logs`) briefly, through the runner collector: the calls the program
/// counted itself are the calls imported, every call is a block with a compute gap before it
/// (and one after the last), and the loop found is one send-receive pair, 64 per step.
#[test]
fn a_short_message_rate_run_imports_every_call_it_made() {
    let Some(tools) = mpi_tools() else { return };
    let _turn = MPIRUN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let steps = 200;
    let text = format!(
        "[pipeline]\nname = \"mpi-run\"\n\n[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\n\
         config = {{ program = \"{}\", args = [\"{steps}\"], ranks = 2, binding = \"core\", oversubscribe = true, interposer = \"{}\" }}\n\n\
         [[fit]]\nstep = \"mpi_simplified\"\nid = \"predict\"\nreduced = \"run.mpi_blocks\"\nreduced_steps = {steps}\nfull_steps = {}\n",
        tools.join("message_rate").display(),
        tools.join("libyosoku_mpi_timer.so").display(),
        10 * steps
    );
    let p = dir.path().join("p.toml");
    std::fs::write(&p, text).unwrap();
    run_pipeline(&p, &options(dir.path()), &mut Quiet).unwrap();
    let bundle = yosoku_bundle::fs::read_bundle(&dir.path().join("results/mpi-logs")).unwrap();
    let ranks = table(&bundle, "run.mpi_ranks");
    // Per step 4 x (2 x 16 + 1) + 1 calls, a barrier every 64th step; MPI_Init and
    // MPI_Finalize are the log's bounds, not calls in it.
    let per_rank = steps * (4 * 33 + 1) + steps / 64;
    let calls = yosoku_tables::access::int64(ranks, "mpi_calls").unwrap();
    assert!(calls.iter().all(|c| c == Some(per_rank)), "{calls:?}");
    let iterations = yosoku_tables::access::int64(ranks, "iterations").unwrap();
    assert!(
        iterations.iter().all(|k| k == Some(64 * steps)),
        "{iterations:?}"
    );
    assert_eq!(
        table(&bundle, "run.mpi_blocks").num_rows() as i64,
        2 * (2 * per_rank + 1)
    );
    let predictions =
        yosoku_tables::rows::read_predictions("p", table(&bundle, "predict.predictions")).unwrap();
    let run = predictions.iter().find(|p| &*p.variant == "run").unwrap();
    assert_eq!(run.repetitions, 64 * 10 * steps);
}

#[test]
fn a_failing_or_missing_mpirun_is_named_and_writes_nothing() {
    let Some(tools) = mpi_tools() else { return };
    let _turn = MPIRUN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let run = |source: String| failing_run(dir.path(), &source);
    // himeno_mpi rejects a grid of 0 points and exits 2.
    let e = run(run_source(&tools, "\"0\", \"17\", \"17\", \"12\"", ""));
    assert!(e.contains("collector `run` failed"), "{e}");
    assert!(
        e.contains("mpirun: `mpirun -np 2 --bind-to core --oversubscribe"),
        "{e}"
    );
    assert!(e.contains("failed (exit status"), "{e}");
    assert!(e.contains("NX: expected a positive integer"), "{e}");
    // A program that reports its error on standard output and then aborts (the Fortran family
    // program without its argument): its words come first, Open MPI's abort banner after them.
    let source = format!(
        "[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\n\
         config = {{ program = \"{}\", ranks = 2, binding = \"none\", oversubscribe = true, interposer = \"{}\" }}\n",
        tools.join("families_f").display(),
        tools.join("libyosoku_mpi_timer.so").display(),
    );
    let e = run(source);
    let words = e
        .find("stdout:  usage: mpirun -np 2 families_f SCRATCH_DIR")
        .unwrap_or_else(|| panic!("{e}"));
    // Open MPI prints its abort banner on most runs, not all (both ranks abort at once); when it
    // does, the program's words come first whatever order the lines arrived in.
    if let Some(banner) = e.find("MPI_ABORT was invoked") {
        assert!(words < banner, "{e}");
    }
    let e = run(run_source(
        &tools,
        "\"33\", \"17\", \"17\", \"12\"",
        ", mpirun = \"/nonexistent/mpirun\"",
    ));
    assert!(
        e.contains("`/nonexistent/mpirun` not found; install Open MPI"),
        "{e}"
    );
}

#[test]
fn bad_collector_settings_are_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fail = |source: String| failing_run(dir.path(), &source);
    // Zero ranks: refused before mpirun is looked for (any existing file stands in for the
    // program and the interposer).
    let file = dir.path().join("stand-in");
    std::fs::write(&file, "").unwrap();
    let e = fail(format!(
        "[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\n\
         config = {{ program = \"{0}\", ranks = 0, interposer = \"{0}\" }}\n",
        file.display()
    ));
    assert!(
        e.contains(
            "collector `run` refused its configuration: ranks: expected a positive integer, found 0"
        ),
        "{e}"
    );
    // A log directory that holds files already: refused by the plugin's `validate`, before
    // anything runs.
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    std::fs::write(logs.join("rank-0.tsv"), "old").unwrap();
    let e = fail(format!(
        "[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\n\
         config = {{ program = \"{0}\", ranks = 2, interposer = \"{0}\", log_dir = \"{1}\" }}\n",
        file.display(),
        logs.display()
    ));
    assert!(
        e.contains("collector `run` refused its configuration: log_dir: ")
            && e.contains("is not empty"),
        "{e}"
    );
    // One run id for a directory of two runs.
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../plugins/mpi_timer/tests/data");
    let e = fail(format!(
        "[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"logs\"\n\
         config = {{ dir = \"{}\", run_id = \"one\" }}\n",
        runs.display()
    ));
    assert!(e.contains("holds 2 runs (one per subdirectory)"), "{e}");
}

#[test]
fn a_run_without_an_interposer_looks_for_the_installed_one_and_says_where() {
    // This test's executable is no installed yosoku: nothing is beside it, and the error says
    // where it looked and how to get one.
    let dir = tempfile::tempdir().unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "[pipeline]\nname = \"p\"\n\n[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\n\
         config = { program = \"/bin/true\", ranks = 2 }\n",
    )
    .unwrap();
    let options = RunOptions {
        bundle_dir: Some(dir.path().join("out")),
        ..RunOptions::default()
    };
    let e = run_pipeline(&pipeline, &options, &mut Quiet)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("interposer: none given and none installed")
            && e.contains("lib/yosoku/libyosoku_mpi_timer.so")
            && e.contains("cargo xtask install"),
        "{e}"
    );
    assert!(!dir.path().join("out").exists());
}
