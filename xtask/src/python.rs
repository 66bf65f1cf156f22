//! The Pythons of the tests that run peer tools on yosoku's files, each a virtual environment
//! under target/ made with pip on first use:
//! - pyarrow and polars reading yosoku's Parquet and Arrow IPC files
//!   (crates/app/cli/tests/interop.rs);
//! - Extra-P 4.2.5 modelling the experiments yosoku models (crates/core/regression/tests/extrap.rs,
//!   crates/app/cli/tests/extrap_export.rs). A venv of its own: Extra-P wants NumPy 1, today's
//!   pyarrow NumPy 2.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};

use crate::{run_cmd, target_dir};

/// The packages the interop test imports.
const INTEROP_PACKAGES: &[&str] = &["pyarrow", "polars"];

/// Extra-P's dependencies at the versions its 4.2.5 release resolves to, without its GUI
/// (PySide6: half a gigabyte the modelling never imports).
const EXTRAP_DEPENDENCIES: &[&str] = &[
    "numpy==1.26.4",
    "scipy==1.17.1",
    "marshmallow==3.26.2",
    "matplotlib==3.11.2",
    "scikit-learn==1.9.1",
    "pycubexr==2.1.1",
    "tqdm==4.70.1",
    "packaging",
];

/// Extra-P itself, installed without its declared dependencies (above, less the GUI).
const EXTRAP: &str = "extrap==4.2.5";

/// The python of the venv `name` under target/, made when missing, and whether it imports
/// `imports`.
fn venv(name: &str, imports: &str) -> Result<(PathBuf, PathBuf, bool)> {
    let venv = target_dir().join(name);
    let python = venv.join("bin").join("python");
    let has = Command::new(&python)
        .args(["-c", imports])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has && !python.exists() {
        run_cmd(Command::new("python3").args(["-m", "venv"]).arg(&venv)).context(
            "cannot make a Python virtual environment (Debian: apt-get install python3-venv)",
        )?;
    }
    Ok((python, venv.join("bin").join("pip"), has))
}

fn pip(pip: &PathBuf) -> Command {
    let mut c = Command::new(pip);
    c.args(["install", "--quiet", "--disable-pip-version-check"]);
    c
}

/// The venv's python with pyarrow and polars installed (pip installs them when missing).
pub fn ensure_interop_python() -> Result<PathBuf> {
    let (python, pip_path, has) = venv("python", "import pyarrow, polars")?;
    if !has {
        run_cmd(pip(&pip_path).args(INTEROP_PACKAGES))
            .context("cannot install pyarrow and polars with pip")?;
    }
    Ok(python)
}

/// The venv's python with Extra-P installed (pip installs it when missing).
pub fn ensure_extrap_python() -> Result<PathBuf> {
    let (python, pip_path, has) = venv("python-extrap", "import extrap.modelers.model_generator")?;
    if !has {
        run_cmd(pip(&pip_path).args(EXTRAP_DEPENDENCIES))
            .context("cannot install Extra-P's dependencies with pip")?;
        run_cmd(pip(&pip_path).args(["--no-deps", EXTRAP]))
            .context("cannot install Extra-P with pip")?;
    }
    Ok(python)
}
