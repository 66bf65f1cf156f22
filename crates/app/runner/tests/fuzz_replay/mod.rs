//! What the `fuzz_replay_*` tests share: every seed and regression of a fuzz target, replayed
//! through the target's own function and its checks (no panic; a read that succeeds gives
//! canonical tables that pass their check; an error names the file and a place in it). These are
//! the inputs a fuzz campaign starts from and the ones that once failed, checked in every
//! `cargo xtask test` with the workspace's own build; mutating them (libFuzzer's instrumented
//! build) is `cargo xtask fuzz` (RELIABILITY.md). One test file per plugin: each plugin exports
//! the same C entry point, so one binary links one plugin.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::yosoku_fuzz::seeds;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

pub fn files_under(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, suffix, out);
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
}

/// A seed as `cargo xtask fuzz` writes it: the file's start (decompressed), cut, with the
/// target's picking byte before it.
fn seed(path: &Path, pick: Option<fn(&Path) -> u8>) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap();
    let limit = seeds::SEED_MAX_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(file)
            .take(limit)
            .read_to_end(&mut bytes)
            .unwrap();
    } else {
        file.take(limit).read_to_end(&mut bytes).unwrap();
    }
    seeds::cut(&mut bytes);
    if let Some(pick) = pick {
        bytes.insert(0, pick(path));
    }
    bytes
}

/// A target's inputs: its regressions (`fuzz/regressions/<target>/`), then its seeds.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = repo();
    let mut files = Vec::new();
    files_under(&root.join("fuzz/regressions").join(target), "", &mut files);
    files.sort();
    let mut out: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|f| (f.display().to_string(), std::fs::read(f).unwrap()))
        .collect();
    let listed = seeds::of(target)
        .unwrap_or_else(|| panic!("fuzz/src/seeds.rs lists no seeds for `{target}`"));
    for (dir, suffix) in listed.files {
        let mut found = Vec::new();
        files_under(&root.join(dir), suffix, &mut found);
        assert!(
            !found.is_empty(),
            "`{target}`: no `{suffix}` file under {dir}"
        );
        found.sort();
        out.extend(
            found
                .iter()
                .map(|f| (f.display().to_string(), seed(f, listed.pick))),
        );
    }
    out
}

/// Replays every input of each of `targets` through its function; fails naming each input that
/// fails its target's checks. Returns how many inputs were replayed.
pub fn replay(targets: &[crate::yosoku_fuzz::Target]) -> usize {
    let mut failed = Vec::new();
    let mut replayed = 0;
    for (target, run) in targets {
        assert!(
            repo()
                .join("fuzz/fuzz_targets")
                .join(format!("{target}.rs"))
                .is_file(),
            "`{target}` has no fuzz_targets/{target}.rs"
        );
        let inputs = inputs(target);
        // `kernel_trace` and `pyramid_chunk` are seeded with synthetic files xtask writes;
        // both have regressions here.
        assert!(
            !inputs.is_empty(),
            "`{target}` has no seed and no regression"
        );
        for (file, bytes) in inputs {
            replayed += 1;
            if std::panic::catch_unwind(|| run(&bytes)).is_err() {
                failed.push(format!("{target}: {file}"));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "inputs that fail their target's checks: {failed:#?}"
    );
    replayed
}
