//! The importer on real logs of the Himeno-style program (tests/data/README.md), and on broken
//! copies of them.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use arrow_array::{Array, Float64Array, Int32Array, Int64Array, StringArray};
use yosoku_plugin_mpi_timer::blocks::{Iterations, blocks};
use yosoku_plugin_mpi_timer::{Run, read_run, read_runs, tables};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn column<'a, T: 'static>(batch: &'a arrow_array::RecordBatch, name: &str) -> &'a T {
    batch
        .column_by_name(name)
        .unwrap()
        .as_any()
        .downcast_ref::<T>()
        .unwrap()
}

#[test]
fn real_logs_become_gap_free_blocks_with_twenty_iterations() {
    for (dir, size) in [("himeno-2ranks", 2), ("himeno-3ranks-2cores", 3)] {
        let ranks = read_run(&data(dir), false).unwrap();
        assert_eq!(ranks.len(), size);
        for log in &ranks {
            let (b, how) = blocks(log);
            // The loop: two halo exchanges and the residual's allreduce, 20 times.
            let Iterations::Repeating {
                iterations: 20,
                sub_iterations: 1,
                anchor,
            } = &how
            else {
                panic!("{dir} rank {}: {how:?}", log.rank);
            };
            assert!(anchor.starts_with("MPI_Sendrecv@himeno_mpi+0x"), "{anchor}");
            let iterations: Vec<i64> = b.iter().filter_map(|b| b.iteration()).collect();
            assert_eq!(iterations.first(), Some(&0));
            assert_eq!(iterations.last(), Some(&19));
            for key in ["MPI_Sendrecv@", "MPI_Allreduce@"] {
                let in_loop = b
                    .iter()
                    .filter(|x| !x.compute && b.key(x).starts_with(key) && x.iteration().is_some())
                    .count();
                assert_eq!(in_loop, if key == "MPI_Sendrecv@" { 40 } else { 20 });
            }
            // Setup (the barrier) and teardown (the timing reduce) run once, outside the loop.
            assert!(
                b.iter()
                    .any(|x| b.key(x).starts_with("MPI_Barrier@") && x.iteration().is_none())
            );
            assert!(
                b.iter()
                    .any(|x| b.key(x).starts_with("MPI_Reduce@") && x.iteration().is_none())
            );
            // Blocks tile the rank's time from MPI_Init to MPI_Finalize.
            let total: u64 = b.iter().map(|b| b.duration_ns).sum();
            assert_eq!(
                total,
                log.end_ns() - log.init_end_ns,
                "{dir} rank {}",
                log.rank
            );
            for pair in b.windows(2) {
                assert_eq!(pair[0].start_ns + pair[0].duration_ns, pair[1].start_ns);
            }
        }
        // The tables, checked against their canonical definitions by the batch builders.
        let mut run = Run {
            run_id: dir.into(),
            binding: Some("core".into()),
            parameters: None,
            ranks,
        };
        let (blocks, ranks) = tables(std::slice::from_mut(&mut run), None).unwrap();
        assert_eq!(ranks.num_rows(), size);
        // The loop's shape: 20 iterations of one unit, found from the repeating call sites.
        assert!(
            column::<Int64Array>(&ranks, "iterations")
                .values()
                .iter()
                .all(|n| *n == 20)
        );
        assert!(
            column::<Int32Array>(&ranks, "sub_iterations")
                .values()
                .iter()
                .all(|n| *n == 1)
        );
        let by = column::<StringArray>(&ranks, "iterations_by");
        assert!(by.iter().all(|b| b == Some("repeating_unit")));
        let start = column::<StringArray>(&ranks, "iteration_start");
        assert!(
            start
                .iter()
                .all(|s| s.is_some_and(|s| s.starts_with("MPI_Sendrecv@")))
        );
        let calls: i64 = column::<Int64Array>(&ranks, "mpi_calls")
            .values()
            .iter()
            .sum();
        let kind = yosoku_tables::access::utf8(&blocks, "kind").unwrap();
        let communication = (0..kind.len())
            .filter(|&i| kind.value(i) == "communication")
            .count();
        assert_eq!(communication as i64, calls);
        // Each rank's block durations add up to its wall time.
        let rank = column::<Int32Array>(&blocks, "rank");
        let duration = column::<Float64Array>(&blocks, "duration_secs");
        let wall = column::<Float64Array>(&ranks, "wall_secs");
        for r in 0..size {
            let sum: f64 = (0..rank.len())
                .filter(|&i| rank.value(i) == r as i32)
                .map(|i| duration.value(i))
                .sum();
            assert!(
                (sum - wall.value(r)).abs() < 1e-9,
                "rank {r}: {sum} vs {}",
                wall.value(r)
            );
        }
        assert_eq!(
            column::<StringArray>(&ranks, "log_end").value(0),
            "complete"
        );
    }
}

/// A copy of the 3-rank logs, changed by `edit`, in a fresh directory.
fn broken(name: &str, edit: impl FnOnce(&Path)) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpi-timer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for r in 0..3 {
        let file = format!("rank-{r}.tsv");
        std::fs::copy(data("himeno-3ranks-2cores").join(&file), dir.join(&file)).unwrap();
    }
    edit(&dir);
    dir
}

#[test]
fn broken_runs_are_errors_naming_the_rank_and_file() {
    let error = |dir: &Path| read_run(dir, false).unwrap_err().to_string();

    // Cut at a line's end, and in the middle of a line.
    let dir = broken("truncated", |d| {
        let text = std::fs::read_to_string(d.join("rank-1.tsv")).unwrap();
        let cut = text[..text.len() / 2].rfind('\n').unwrap() + 1;
        std::fs::write(d.join("rank-1.tsv"), &text[..cut]).unwrap();
    });
    let e = error(&dir);
    assert!(
        e.contains("rank-1.tsv: rank 1's log stops before its `# end` line (truncated)"),
        "{e}"
    );
    let dir = broken("cut", |d| {
        let text = std::fs::read_to_string(d.join("rank-1.tsv")).unwrap();
        std::fs::write(d.join("rank-1.tsv"), &text[..text.len() / 2]).unwrap();
    });
    let e = error(&dir);
    assert!(
        e.contains("rank-1.tsv:42: rank 1's log stops in the middle of a line (truncated)"),
        "{e}"
    );

    let dir = broken("missing", |d| {
        std::fs::remove_file(d.join("rank-2.tsv")).unwrap()
    });
    let e = error(&dir);
    assert!(e.contains("rank 2 of 3 has no log"), "{e}");

    let dir = broken("disagree", |d| {
        let text = std::fs::read_to_string(d.join("rank-0.tsv")).unwrap();
        std::fs::write(d.join("rank-0.tsv"), text.replace("# size 3", "# size 4")).unwrap();
    });
    let e = error(&dir);
    assert!(e.contains("not logs of one run"), "{e}");

    let dir = broken("aborted", |d| {
        let text = std::fs::read_to_string(d.join("rank-2.tsv")).unwrap();
        std::fs::write(
            d.join("rank-2.tsv"),
            text.replace("# end complete", "# end abort"),
        )
        .unwrap();
    });
    let e = error(&dir);
    assert!(
        e.contains("rank-2.tsv: rank 2's log ends with `abort`, not MPI_Finalize"),
        "{e}"
    );
    // Accepted when asked for.
    assert_eq!(read_run(&dir, true).unwrap().len(), 3);

    // A rank that exited without MPI_Finalize: its wall time runs to its last call's end (the
    // import lets its calls go once they are blocks, and still knows where they ended).
    let exited = broken("exited", |d| {
        let text = std::fs::read_to_string(d.join("rank-2.tsv")).unwrap();
        let text: String = text
            .lines()
            .filter(|l| !l.starts_with("# finalize_start_ns"))
            .map(|l| {
                if l == "# end complete" {
                    "# end exit\n".to_owned()
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        std::fs::write(d.join("rank-2.tsv"), text).unwrap();
    });
    let read = read_run(&exited, true).unwrap();
    let last_end = read[2].events.iter().map(|e| e.end_ns).max().unwrap();
    let wall_secs = (last_end - read[2].init_end_ns) as f64 * 1e-9;
    let mut runs = read_runs(&exited, true).unwrap();
    let (_, ranks) = tables(&mut runs, None).unwrap();
    let walls = ranks
        .column_by_name("wall_secs")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert!(wall_secs > 0.0);
    assert_eq!(walls.value(2), wall_secs);

    let empty = broken("empty", |d| {
        for r in 0..3 {
            std::fs::remove_file(d.join(format!("rank-{r}.tsv"))).unwrap();
        }
    });
    assert!(error(&empty).contains("no rank-<r>.tsv logs"));
    for name in [
        "truncated",
        "cut",
        "missing",
        "disagree",
        "aborted",
        "exited",
        "empty",
    ] {
        let _ = std::fs::remove_dir_all(
            std::env::temp_dir().join(format!("mpi-timer-{name}-{}", std::process::id())),
        );
    }
}

#[test]
fn a_directory_of_run_directories_is_one_run_each() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut runs = read_runs(&root, false).unwrap();
    let ids: Vec<(&str, usize)> = runs
        .iter()
        .map(|r| (r.run_id.as_str(), r.ranks.len()))
        .collect();
    assert_eq!(ids, [("himeno-2ranks", 2), ("himeno-3ranks-2cores", 3)]);
    let (_, ranks) = tables(&mut runs, None).unwrap();
    assert_eq!(ranks.num_rows(), 5);
    // An empty directory says where the logs were looked for.
    let empty = tempfile::tempdir().unwrap();
    let e = read_runs(empty.path(), false).unwrap_err().to_string();
    assert!(e.contains("neither in it nor in its subdirectories"), "{e}");
}

/// TAU text profiles of a real 4-rank run (LLNL/hatchet test data, pipelines/data/tau-cpi-mpi):
/// per-rank MPI and compute time in the same tables as the interposer's, and the cross-check
/// that per rank the exclusive times add up to the top-level inclusive time.
#[test]
fn tau_profiles_give_per_rank_mpi_time() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/tau-cpi-mpi");
    let profiles = yosoku_plugin_mpi_timer::tau::read_dir(&dir).unwrap();
    assert_eq!(profiles.len(), 4);
    let (blocks, ranks) = yosoku_plugin_mpi_timer::tau_batches("cpi", &profiles).unwrap();
    let rank = column::<Int32Array>(&blocks, "rank");
    let kind = yosoku_tables::access::utf8(&blocks, "kind").unwrap();
    let duration = column::<Float64Array>(&blocks, "duration_secs");
    let wall = column::<Float64Array>(&ranks, "wall_secs");
    // Computed independently from the files: sum of Excl of the GROUP="MPI" functions (us).
    let mpi_usecs = [51332.0, 54910.0, 53600.0, 52499.0];
    for r in 0..4 {
        let sum = |k: &str| -> f64 {
            (0..blocks.num_rows())
                .filter(|i| rank.value(*i) == r && kind.value(*i) == k)
                .map(|i| duration.value(i))
                .sum()
        };
        let (mpi, compute) = (sum("communication"), sum("compute"));
        assert!(
            (mpi - mpi_usecs[r as usize] * 1e-6).abs() < 1e-9,
            "rank {r}: {mpi}"
        );
        assert!(
            ((mpi + compute) - wall.value(r as usize)).abs() < 1e-9,
            "rank {r}"
        );
    }
    assert_eq!(
        column::<Int64Array>(&ranks, "mpi_calls").values(),
        &[11, 11, 11, 11]
    );
    assert_eq!(column::<StringArray>(&ranks, "device").value(0), "nid01045");
    assert_eq!(
        column::<StringArray>(&ranks, "log_end").value(3),
        "complete"
    );
    // A rank missing is named.
    let partial = tempfile::tempdir().unwrap();
    for r in [0, 1, 3] {
        let f = format!("profile.{r}.0.0");
        std::fs::copy(dir.join(&f), partial.path().join(&f)).unwrap();
    }
    let e = yosoku_plugin_mpi_timer::tau::read_dir(partial.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("rank 2 has no profile"), "{e}");
}

#[test]
fn gzip_compressed_logs_read_as_the_plain_ones_and_a_broken_one_is_named() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let plain = data("himeno-2ranks");
    for rank in 0..2 {
        let text = std::fs::read(plain.join(format!("rank-{rank}.tsv"))).unwrap();
        let file = std::fs::File::create(dir.path().join(format!("rank-{rank}.tsv.gz"))).unwrap();
        let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
        gz.write_all(&text).unwrap();
        gz.finish().unwrap();
    }
    let compressed = read_run(dir.path(), false).unwrap();
    let original = read_run(&plain, false).unwrap();
    assert_eq!(compressed.len(), 2);
    for (a, b) in compressed.iter().zip(&original) {
        assert_eq!(a.events, b.events);
        assert_eq!(a.sites, b.sites);
    }
    // A log both plain and compressed is ambiguous.
    std::fs::copy(plain.join("rank-1.tsv"), dir.path().join("rank-1.tsv")).unwrap();
    let e = read_run(dir.path(), false).unwrap_err().to_string();
    assert!(e.contains("rank 1 has two logs"), "{e}");
    std::fs::remove_file(dir.path().join("rank-1.tsv")).unwrap();
    // A cut gzip stream is an error that names the file.
    let path = dir.path().join("rank-1.tsv.gz");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_run(dir.path(), false).unwrap_err().to_string();
    assert!(
        e.contains("rank-1.tsv.gz: not a gzip-compressed UTF-8 log"),
        "{e}"
    );
}
