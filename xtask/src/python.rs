//! A Python with pyarrow and polars for the test that reads yosoku's Parquet and Arrow IPC
//! files with them (crates/app/cli/tests/interop.rs): a virtual environment under target/, made
//! with pip on first use.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

use crate::{run_cmd, target_dir};

/// The packages the interop test imports.
const PACKAGES: &[&str] = &["pyarrow", "polars"];

/// The venv's python, with pyarrow and polars installed (pip installs them when missing).
pub fn ensure_interop_python() -> Result<PathBuf> {
    let venv = target_dir().join("python");
    let python = venv.join("bin").join("python");
    let has = |python: &PathBuf| {
        Command::new(python)
            .args(["-c", "import pyarrow, polars"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has(&python) {
        return Ok(python);
    }
    if !python.exists() {
        run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv)).context(
            "cannot make a Python virtual environment (Debian: apt-get install python3-venv)",
        )?;
    }
    run_cmd(
        Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(PACKAGES),
    )
    .context("cannot install pyarrow and polars with pip")?;
    Ok(python)
}
