//! The `mpi_timer` plugin through the real plugin host: a pipeline that imports real interposer
//! logs (plugins/mpi_timer/tests/data) writes `mpi_blocks` and `mpi_ranks`; a run with a rank's
//! log missing fails with the plugin, the rank and the file named, and writes no bundle.

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

fn options(dir: &Path) -> RunOptions {
    RunOptions {
        bundle_dir: Some(dir.join("results/mpi-logs")),
        plugin_path: vec![],
    }
}

#[test]
fn real_logs_import_through_the_plugin_host() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugins/mpi_timer/tests/data/himeno-3ranks-2cores");
    let dir = tempfile::tempdir().unwrap();
    let p = pipeline(dir.path(), &data);
    run_pipeline(&p, &options(dir.path()), &mut Quiet).unwrap();
    let bundle = yosoku_bundle::fs::read_bundle(&dir.path().join("results/mpi-logs")).unwrap();
    let rows = |name: &str| {
        bundle
            .tables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.num_rows())
            .unwrap_or_else(|| panic!("no table {name}"))
    };
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
        .join("../../plugins/mpi_timer/tests/data/himeno-3ranks-2cores");
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
