//! The real-browser test of the web viewer (part of `cargo xtask test`): build `dist/`, run
//! every pipeline into a scratch bundle directory (or take the bundles the pipeline tests just
//! wrote), serve both on 127.0.0.1, and drive Debian's
//! Chromium with `viewer/browser-test/check.mjs` (playwright-core from npm, pinned by its
//! package-lock.json). Installs Chromium and the npm packages when they are missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::mpi_apps::on_path;
use crate::system::apt_install;
use crate::{repo_root, run_cmd, target_dir, web};

/// The bundle whose validation view the test opens (a counter model with many programs).
const VALIDATION_BUNDLE: &str = "counters-per-gpu";
/// Records of the synthetic kernel trace the test opens from its pyramid.
const TRACE_RECORDS: u64 = 2_000_000;
/// Dropped on the page; the Gantt view shows its MPI blocks.
const DROPPED_ZIP: &str = "viewer/tests/fixtures/mpi-blocks-synthetic.zip";

/// `cargo xtask browser-test`: builds the CLI, the plugins and the web viewer (as `cargo xtask
/// test` does), then runs [`test_built`].
pub fn test() -> Result<()> {
    crate::demo::build_cli_and_plugins()?;
    let dist = web::build(web::WebBuild::Test)?;
    test_built(&dist, None)
}

/// The browser test and the desktop tour with the CLI, the plugins and the desktop viewer already
/// in target/debug: `cargo xtask test` has just built them, with every workspace crate, for the
/// workspace's tests, and copied the plugins there. Building them again here, for the CLI and
/// plugins alone, built their dependencies with other features, and so every crate above them
/// again: 8 minutes of a fresh clone's `cargo xtask test` on a 2-vCPU VM (BENCHMARKS.md).
/// `dist` is the web viewer's build. `tested`: where the workspace's pipeline tests left a bundle
/// of every pipeline (`<tested>/<name>/bundle`, crates/app/runner/tests/pipelines.rs), moved here
/// instead of running every pipeline a second time (about 25 s of a cold run on two cores); where
/// one is missing, every pipeline runs here as without it.
pub fn test_built(dist: &Path, tested: Option<&Path>) -> Result<()> {
    let out = target_dir().join("browser-test");
    let bundles = out.join("bundles");
    if bundles.exists() {
        std::fs::remove_dir_all(&bundles)
            .with_context(|| format!("cannot clear {}", bundles.display()))?;
    }
    let pipelines = match tested {
        Some(dir) => take_tested_bundles(dir, &bundles)?,
        None => None,
    };
    let pipelines = match pipelines {
        Some(count) => count,
        None => {
            let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
            crate::demo::run_pipelines(Some(&bundles), jobs, &["--quiet"])?.len()
        }
    };
    // A trace stored as a pyramid, opened by reading only what is on screen.
    let trace_file = out.join(format!("synthetic-{TRACE_RECORDS}.yktrace"));
    crate::trace::write_synthetic(&trace_file, TRACE_RECORDS, 16)?;
    crate::trace::import(
        &crate::yosoku_binary(),
        &trace_file,
        &bundles.join(format!("synthetic-{TRACE_RECORDS}")),
        false,
    )?;
    let args = [
        out.display().to_string(),
        repo_root().join(DROPPED_ZIP).display().to_string(),
        VALIDATION_BUNDLE.to_owned(),
        (pipelines + 1).to_string(),
        format!("trace-synthetic-{TRACE_RECORDS}"),
    ];
    run_script("check.mjs", dist, &bundles, &args).context(format!(
        "the browser test failed; screenshots and browser-test.json are in {}",
        out.display()
    ))?;
    desktop_screenshots(&bundles, &out)?;
    eprintln!(
        "xtask: screenshots of every view, for a reviewer: {0}/web-*.png (Chromium) and {0}/desktop-*.png (the desktop app under Xvfb)",
        out.display()
    );
    Ok(())
}

/// Moves the bundle of every pipeline in pipelines/ from `tested` (`<tested>/<name>/bundle`) to
/// `bundles/<name>` and returns their count; `None`, moving nothing, when a pipeline has no whole
/// bundle there (the tests ran filtered, or failed before it).
fn take_tested_bundles(tested: &Path, bundles: &Path) -> Result<Option<usize>> {
    let mut found = Vec::new();
    for file in crate::pipelines()? {
        let Some(name) = file.file_stem() else {
            continue;
        };
        let bundle = tested.join(name).join("bundle");
        if !yosoku_bundle::fs::is_bundle(&bundle) {
            eprintln!(
                "xtask: no bundle of {} from the pipeline tests at {}; running every pipeline",
                file.display(),
                bundle.display()
            );
            return Ok(None);
        }
        found.push((bundles.join(name), bundle));
    }
    std::fs::create_dir_all(bundles)
        .with_context(|| format!("cannot create {}", bundles.display()))?;
    for (to, from) in &found {
        std::fs::rename(from, to)
            .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
    }
    eprintln!(
        "xtask: the browser test reads the {} bundles the pipeline tests wrote ({})",
        found.len(),
        tested.display()
    );
    Ok(Some(found.len()))
}

/// Views the desktop tour saves, one PNG each (`yosoku-viewer --screenshots`): every view of
/// `viewer/src/views/mod.rs`.
const DESKTOP_VIEWS: usize = 11;

/// The desktop app under Xvfb (apt `xvfb` and `xauth`, installed when missing) on the same
/// bundles: every view in turn, on a bundle it has something to draw for, saved as
/// `desktop-<n>-<view>.png` in `out`. The app fails the tour on a flat window or a view no bundle
/// feeds; this checks that every picture is there.
fn desktop_screenshots(bundles: &Path, out: &Path) -> Result<()> {
    if !on_path("xvfb-run") || !on_path("xauth") {
        apt_install(&["xvfb", "xauth"])?;
    }
    let viewer = target_dir()
        .join("debug")
        .join(format!("yosoku-viewer{}", std::env::consts::EXE_SUFFIX));
    if !viewer.is_file() {
        run_cmd(crate::cargo().args(["build", "-p", "yosoku-viewer"]))?;
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(bundles)
        .with_context(|| format!("cannot list {}", bundles.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    dirs.sort();
    for entry in std::fs::read_dir(out)?.flatten() {
        if entry.file_name().to_string_lossy().starts_with("desktop-") {
            std::fs::remove_file(entry.path())?;
        }
    }
    // A hung X server or GL driver must not hang the test: `timeout` ends the tour.
    run_cmd(
        Command::new("timeout")
            .arg("300")
            .arg("xvfb-run")
            .args(["-a", "-s", "-screen 0 1400x900x24"])
            .arg(&viewer)
            .arg("--screenshots")
            .arg(out)
            .args(&dirs),
    )
    .context("the desktop viewer's screenshot tour under Xvfb failed")?;
    let saved = std::fs::read_dir(out)?
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("desktop-") && name.ends_with(".png")
        })
        .count();
    if saved != DESKTOP_VIEWS {
        bail!(
            "the desktop tour saved {saved} screenshots in {}, expected one for each of the {DESKTOP_VIEWS} views",
            out.display()
        );
    }
    Ok(())
}

/// `cargo xtask bench-web`: the Gantt's frame time in headless Chromium, 1 M and 10 M synthetic
/// records in memory (`viewer/browser-test/bench.mjs`), then a 100 M-record synthetic kernel
/// trace opened from its pyramid (`bench-trace.mjs`; the trace is written and imported first
/// when missing, as `cargo xtask bench-trace` does).
pub fn bench(args: &[String]) -> Result<()> {
    let trace_only = match args {
        [] => false,
        [a] if a == "--trace-only" => true,
        _ => bail!("usage: cargo xtask bench-web [--trace-only]"),
    };
    let dist = web::build(web::WebBuild::Release)?;
    if !trace_only {
        let empty = target_dir().join("browser-bench/bundles");
        std::fs::create_dir_all(&empty)
            .with_context(|| format!("cannot create {}", empty.display()))?;
        run_script(
            "bench.mjs",
            &dist,
            &empty,
            &["1000000".into(), "10000000".into()],
        )?;
    }
    let records: u64 = 100_000_000;
    let bundles = crate::trace::synthetic_bundle(records)?;
    run_script(
        "bench-trace.mjs",
        &dist,
        &bundles,
        &[format!("trace-synthetic-{records}")],
    )
}

/// Serves the web viewer's build `dist` with `bundles` on 127.0.0.1, and runs
/// `viewer/browser-test/<script> <url> <args...>` against it in Chromium (both installed first
/// when missing).
fn run_script(script: &str, dist: &Path, bundles: &Path, args: &[String]) -> Result<()> {
    let chromium = ensure_chromium()?;
    let script_dir = repo_root().join("viewer/browser-test");
    ensure_node_packages(&script_dir)?;
    let server = yosoku_serve::Server::start(dist, bundles, 0)?;
    eprintln!("xtask: serving {} at {}", bundles.display(), server.url());
    let result = run_cmd(
        Command::new("node")
            .current_dir(&script_dir)
            .env("YOSOKU_CHROMIUM", &chromium)
            .arg(script)
            .arg(server.url())
            .args(args),
    );
    drop(server);
    result
}

/// Debian's Chromium (`YOSOKU_CHROMIUM` names another binary).
fn ensure_chromium() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("YOSOKU_CHROMIUM") {
        return Ok(path.into());
    }
    let path = PathBuf::from("/usr/bin/chromium");
    if !path.exists() {
        apt_install(&["chromium"])?;
    }
    if !path.exists() {
        bail!(
            "{}: still missing after installing chromium",
            path.display()
        );
    }
    Ok(path)
}

fn ensure_node_packages(dir: &Path) -> Result<()> {
    if Command::new("node").arg("--version").output().is_err() {
        apt_install(&["nodejs", "npm"])?;
    }
    if dir
        .join("node_modules/playwright-core/package.json")
        .is_file()
        && dir.join("node_modules/pngjs/package.json").is_file()
    {
        return Ok(());
    }
    run_cmd(Command::new("npm").current_dir(dir).args([
        "ci",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
    ]))
}
