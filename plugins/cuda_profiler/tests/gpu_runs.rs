//! The committed GPU runs of tools/cuda-trace (pipelines/data/cuda-trace/SOURCES.md) hold what
//! the pipelines rely on: every run's checks passed — each variant's result against the CPU
//! reference, the replaced kernels' untouched outputs, and the trace header's self-test of bad
//! input on the GPU (a buffer too small, too many points, an unwritable path).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

fn runs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/data/cuda-trace");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert_eq!(dirs.len(), 5, "{dirs:?}");
    dirs
}

#[test]
fn the_header_self_test_passed_on_every_gpu() {
    for dir in runs() {
        let text = std::fs::read_to_string(dir.join("selftest.txt")).unwrap();
        assert!(
            text.trim_end().ends_with("selftest: 0 failure(s)"),
            "{dir:?}"
        );
        assert!(!text.contains("FAILED"), "{dir:?}");
        // Each bad input was met and reported, by mode.
        for (what, lines) in [
            ("too many points -> 'yosoku_trace: a thread passed more", 4),
            ("buffer too small -> 'yosoku_trace: the buffer of", 4),
            ("guard past it untouched: yes, no file", 4),
            ("an unwritable path -> 'yosoku_trace: writing", 1),
        ] {
            assert_eq!(
                text.lines().filter(|l| l.contains(what)).count(),
                lines,
                "{dir:?}: {what}"
            );
        }
    }
}

#[test]
fn every_variant_matched_the_cpu_reference() {
    for dir in runs() {
        let mut programs = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some(program) = name.strip_suffix("_checks.csv") else {
                continue;
            };
            programs += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            let mut lines = text.lines();
            assert_eq!(
                lines.next(),
                Some("program,variant,run,relative_error,outcome")
            );
            let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
            // 13 variants store their result (the original; direct, two-stage and replacement
            // in both scopes with both timers), the 4 replaced ones a second time without it.
            assert_eq!(rows.len(), 13 + 4, "{path:?}");
            for r in &rows {
                assert_eq!(r[0], program, "{path:?}");
                assert_eq!(r[4], "ok", "{path:?}: {r:?}");
                if r[2] == "keep_alive" {
                    let e: f64 = r[3].parse().unwrap();
                    assert!(e < 1e-5, "{path:?}: {r:?}");
                }
            }
            let log = std::fs::read_to_string(dir.join(format!("{program}.txt"))).unwrap();
            assert!(log.contains(&format!("{program}: 0 failure(s)")), "{dir:?}");
        }
        assert!(programs >= 3, "{dir:?}");
    }
}
