//! `cargo xtask web`: the viewer compiled to WebAssembly, bound to JavaScript by the
//! `wasm-bindgen-cli-support` library pinned to the wasm-bindgen version in Cargo.lock (no
//! global CLI to install or to drift), beside the hand-written `viewer/web/index.html`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::{WASM_TARGET, cargo, ensure_wasm_target, repo_root, run_cmd, target_dir};

/// The JavaScript module and wasm names `index.html` loads.
const OUT_NAME: &str = "yosoku_viewer";

/// What a web build is for: the profile it compiles with, and where its `dist/` goes.
pub enum WebBuild {
    /// `cargo xtask web`, `serve`, `bench-web`: the release build, into the repository's `dist/`.
    Release,
    /// `cargo xtask test`'s browser test: the `web-test` profile (release at opt-level 1,
    /// Cargo.toml), into `target/browser-test/dist`; then the other crates that must stay
    /// wasm32-clean (`WASM_CRATES`) are checked (and linted) for wasm32 with the same profile.
    Test,
}

/// Builds the wasm and writes a `dist/`: `index.html`, `yosoku_viewer.js`,
/// `yosoku_viewer_bg.wasm`. The old `dist/` is replaced only once the new one is complete.
pub fn build(kind: WebBuild) -> Result<PathBuf> {
    let started = std::time::Instant::now();
    ensure_wasm_target()?;
    let (profile, dist) = match kind {
        WebBuild::Release => ("release", repo_root().join("dist")),
        WebBuild::Test => ("web-test", target_dir().join("browser-test/dist")),
    };
    let mut cargo = cargo();
    cargo.args([
        "build",
        "-p",
        "yosoku-viewer",
        "--bin",
        "yosoku-viewer",
        "--profile",
        profile,
        "--target",
        WASM_TARGET,
    ]);
    run_cmd(&mut cargo)?;
    if let WebBuild::Test = kind {
        // The other crates that must stay wasm32-clean are checked, not built: nothing runs
        // them in a browser, and generating their code (faer's kernels, the models) was 104 of
        // the stage's 488 CPU-seconds (BENCHMARKS.md, "the wasm32 stage").
        let mut check = crate::cargo();
        check.args([
            "check",
            "--lib",
            "--profile",
            profile,
            "--target",
            WASM_TARGET,
        ]);
        for c in crate::WASM_CRATES {
            check.args(["-p", c]);
        }
        run_cmd(&mut check)?;
    }
    let wasm = target_dir()
        .join(WASM_TARGET)
        .join(profile)
        .join("yosoku-viewer.wasm");
    let tmp = dist.with_file_name(".dist.tmp");
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
        "xtask: web viewer in {} ({:.1} MiB of wasm), built in {}",
        dist.display(),
        size as f64 / (1024.0 * 1024.0),
        crate::minutes_secs(started.elapsed())
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
