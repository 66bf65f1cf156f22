//! `cargo xtask web`: the viewer compiled to WebAssembly, bound to JavaScript by the
//! `wasm-bindgen-cli-support` library pinned to the wasm-bindgen version in Cargo.lock (no
//! global CLI to install or to drift), beside the hand-written `viewer/web/index.html`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::{WASM_TARGET, cargo, ensure_wasm_target, repo_root, run_cmd, target_dir};

/// The JavaScript module and wasm names `index.html` loads.
const OUT_NAME: &str = "yosoku_viewer";

/// Builds the release wasm and writes `dist/`: `index.html`, `yosoku_viewer.js`,
/// `yosoku_viewer_bg.wasm`. The old `dist/` is replaced only once the new one is complete.
pub fn build() -> Result<PathBuf> {
    ensure_wasm_target()?;
    run_cmd(cargo().args([
        "build",
        "-p",
        "yosoku-viewer",
        "--bin",
        "yosoku-viewer",
        "--release",
        "--target",
        WASM_TARGET,
    ]))?;
    let wasm = target_dir()
        .join(WASM_TARGET)
        .join("release")
        .join("yosoku-viewer.wasm");
    let dist = repo_root().join("dist");
    let tmp = repo_root().join(".dist.tmp");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)
            .with_context(|| format!("cannot remove {}", tmp.display()))?;
    }
    std::fs::create_dir_all(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    bindgen(&wasm, &tmp)?;
    let index = repo_root().join("viewer/web/index.html");
    std::fs::copy(&index, tmp.join("index.html"))
        .with_context(|| format!("cannot copy {}", index.display()))?;
    if dist.exists() {
        std::fs::remove_dir_all(&dist)
            .with_context(|| format!("cannot remove the old {}", dist.display()))?;
    }
    std::fs::rename(&tmp, &dist)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), dist.display()))?;
    let size = std::fs::metadata(dist.join(format!("{OUT_NAME}_bg.wasm")))
        .map(|m| m.len())
        .unwrap_or(0);
    eprintln!(
        "xtask: web viewer in {} ({:.1} MiB of wasm)",
        dist.display(),
        size as f64 / (1024.0 * 1024.0)
    );
    Ok(dist)
}

fn bindgen(wasm: &Path, out_dir: &Path) -> Result<()> {
    if !wasm.is_file() {
        bail!("{}: the wasm build left no module here", wasm.display());
    }
    eprintln!(
        "xtask: wasm-bindgen {} -> {}",
        wasm.display(),
        out_dir.display()
    );
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(wasm)
        .out_name(OUT_NAME)
        .web(true)?
        .typescript(false)
        .omit_default_module_path(false)
        .generate(out_dir)
        .with_context(|| format!("wasm-bindgen on {}", wasm.display()))
}
