//! What the CLI's test files share.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root.
#[allow(dead_code)] // not every test file reads the repository's files
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// Runs the `yosoku` binary under test with the test plugins and no user catalogue.
#[allow(dead_code)] // not every test file runs it this way
pub fn yosoku(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_yosoku"))
        .args(args)
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .env_remove("YOSOKU_DEVICES")
        .output()
        .unwrap_or_else(|e| panic!("running yosoku: {e}"))
}

/// A process's output as text.
#[allow(dead_code)] // not every test file reads output
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Where cargo put the plugins built as this crate's dev-dependencies (`YOSOKU_PLUGIN_PATH` for
/// the `yosoku` binary under test).
pub fn plugin_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_else(|| panic!("the test binary has no directory"))
}

/// Every file under `dir` (a bundle), by its path relative to `dir`, for byte comparisons.
#[allow(dead_code)] // not every test file compares bundles
pub fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, into: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, into);
            } else if let (Ok(bytes), Ok(relative)) =
                (std::fs::read(&path), path.strip_prefix(root))
            {
                into.insert(relative.to_path_buf(), bytes);
            }
        }
    }
    let mut into = BTreeMap::new();
    walk(dir, dir, &mut into);
    into
}
