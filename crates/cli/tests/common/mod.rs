//! What the CLI's test files share.

use std::path::PathBuf;

/// Where cargo put the plugins built as this crate's dev-dependencies (`YOSOKU_PLUGIN_PATH` for
/// the `yosoku` binary under test).
pub fn plugin_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_else(|| panic!("the test binary has no directory"))
}
