//! `cargo xtask`: the project's commands (see `cargo xtask help`).
//!
//! - `demo` builds only the CLI and the plugins, runs the bundled pipelines as many at a time as
//!   there are cores, and prints one screen ending in the scoreboard; `bench-pipelines` times them.
//! - `test` is everything CI runs: the format check; one build of every target of the workspace
//!   with clippy's driver (one build lints and tests); one wasm32 build (`web-test` profile) of the
//!   web viewer and the I/O-free crates; Open MPI's tools, POCL and the Python interop packages
//!   (installed when missing); the tests (every fuzz target's seeds and regressions replayed among
//!   them); the PTX check of the trace header; the
//!   `new-plugin` scaffold check; the headless-Chromium test of the web viewer and the desktop
//!   viewer's screenshot tour under Xvfb. It ends with each stage's wall time.
//! - `web`, `serve` (127.0.0.1 only), `browser-test`, `bench-web`: the web build (wasm-bindgen
//!   through the pinned `wasm-bindgen-cli-support`), its server, its tests and the Gantt's frame
//!   time in the browser.
//! - `fuzz`: the libFuzzer targets of `fuzz/`; `mpi-tools`, `mpi-experiment`, `bench-mpi`,
//!   `opencl-experiment`, `bench-opencl`: re-measuring the MPI and OpenCL pipelines' data;
//!   `new-plugin`: the scaffold of a device plugin; `bless`: rewriting golden files.
//!
//! The web tooling, the HTTP server and the trace writer sit behind the `full` feature: the commands
//! that need them rerun xtask with it (`test` runs on in the xtask its own workspace build makes), so
//! the demo's first build is only what it runs. Its tests keep ARCHITECTURE.md true
//! ([`architecture`]).

// Without the `full` feature the commands that need it rerun xtask with it, so the helpers only
// they call (the scaffold check, the synthetic trace bundle, ...) go unused in that build.
#![cfg_attr(not(feature = "full"), allow(dead_code))]

mod architecture;
#[cfg(feature = "full")]
mod browser;
mod cuda_trace;
mod demo;
#[cfg(feature = "full")]
mod fuzz;
#[cfg(feature = "full")]
mod install;
mod mpi;
mod mpi_apps;
mod mpi_drift;
mod mpi_logs_bench;
mod mpi_multinode;
mod mpi_scaling;
mod mpi_steps_ranks;
mod opencl;
mod predict_bench;
mod python;
mod scaffold;
mod scaling_bench;
#[cfg(test)]
mod source_rules;
mod system;
#[cfg(feature = "full")]
mod trace;
#[cfg(feature = "full")]
mod web;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const HELP: &str = "\
cargo xtask <command>

  demo [--verbose]     build the CLI and the plugins, run every pipeline in pipelines/ (as many
                       at a time as there are cores), write results/, print the scoreboard of
                       the results reproduced from the papers (--verbose: every step's tables)
  bench-pipelines [--rounds N] [--against TARGET_DIR]
                       all bundled pipelines as the demo runs them, N rounds (default 5): each
                       one's median time and peak memory, and a whole round's; --against runs
                       another build's yosoku (TARGET_DIR/debug/yosoku) in the same rounds,
                       interleaved, to compare two builds' settings
  web                  build the web viewer (WebAssembly) into dist/
  serve [DIR] [--port N]
                       build the web viewer and serve it with the bundles in DIR (default
                       results/) on http://127.0.0.1:N/ (default 8080; 0 picks a free port)
  install [--prefix DIR] [--profile release|dev]
                       install yosoku outside the repository (default prefix ~/.local): the CLI
                       into bin/, the plugins into lib/yosoku/plugins (found by the CLI relative
                       to itself), the web viewer into share/yosoku/web (`yosoku serve`), the
                       bundled pipelines and their data into share/yosoku/pipelines
  install-check        install into a temporary prefix, run a pipeline and `yosoku serve` from
                       outside the repository (part of test)
  bench-web [--trace-only]
                       frame time of the web viewer's Gantt in headless Chromium (1 M, 10 M
                       synthetic records in memory), and a 100 M-record synthetic kernel trace
                       opened from its pyramid: page load to first frame, frame times while
                       panning and zooming down to single records, the tab's memory
  bench-trace [--records N]
                       write a synthetic kernel trace of N records (default 100 M) and import it
                       with `yosoku trace import` (passes, GB/s, peak memory)
  test                 everything CI runs: fmt check, clippy -D warnings, wasm32 build of the
                       web viewer and the I/O-free crates, all tests (a real OpenCL run on POCL
                       among them, every fuzz target's seeds and regressions replayed), the new-plugin
                       scaffold check, the trace header compiled to PTX (cuda-trace-check), and
                       the viewer as a person sees it (browser-test below); ends with the wall
                       time of each stage
                       (installs Open MPI, the OpenCL ICD loader and POCL, clang, chromium, xvfb
                       and npm packages if missing)
  browser-test         the web viewer in headless Chromium and the desktop app under Xvfb, a
                       screenshot of every view of each into target/browser-test/ (part of test)
  fuzz [--target T]... [--seconds N] [--jobs N] [--asan] | fuzz --brief
                       coverage-guided fuzzing of every reader of user files (fuzz/, libFuzzer),
                       seeded with the repository's real files: N seconds a target (default 60),
                       N targets at a time (default: one per core); --asan adds AddressSanitizer
                       (nightly); a crash leaves its input in target/fuzz/artifacts/<target>/;
                       --brief: 10,000 inputs a target from a fixed seed (before changing a
                       reader; `test` replays the seeds and regressions without instrumentation)
  mpi-tools            build the MPI timer interposer and himeno_mpi with mpicc into
                       target/mpi/ (installs Open MPI if missing)
  mpi-experiment [--into DIR]
                       re-measure the MPI pipelines' runs on this machine (reduced, full and
                       communication-only himeno_mpi runs through the mpi_timer plugin), then
                       run the MPI pipelines on them; logs go to DIR (default
                       target/mpi-experiment/data/mpi)
  mpi-experiment apps [--repeats N] [--into DIR] [--only meep|cp2k|qe]
                       the same on real applications from Debian (meep-openmpi, cp2k,
                       quantum-espresso; installed if missing): reduced and full runs, N times
                       each (default 3), logs
                       gzipped into DIR (default target/mpi-experiment/apps/data/mpi-apps), then
                       their pipelines (pipelines/mpi-meep.toml, mpi-cp2k.toml, mpi-qe.toml)
  mpi-experiment scaling [--repeats N] [--into DIR] [--only himeno|meep]
                       the scaling models' data: himeno_mpi and meep over five sizes x 1, 2, 4
                       ranks (oversubscribed past the cores), N times each (default 3), logs
                       gzipped into DIR (default target/mpi-experiment/scaling/data/mpi-scaling),
                       then pipelines/mpi-scaling.toml on them
  mpi-experiment drift [--repeats N] [--into DIR] [--only drift|gerris]
                       programs whose cost per step drifts on 2 ranks (ours, tools/mpi-drift, and
                       Gerris from Debian on tools/mpi-apps/cylinder.gfs): reduced runs of 100
                       and 200 steps and full runs of 1,000, N times each (default 3), logs
                       gzipped into DIR/mpi-drift and DIR/mpi-drift-gerris (default DIR
                       target/mpi-experiment/drift/data), then pipelines/mpi-drift.toml and
                       tools/mpi-apps/mpi-drift-gerris.toml on them
  mpi-experiment steps-ranks [--repeats N] [--into DIR] [--only himeno|meep] [--ranks 1,2,4,8]
                       [--target-ranks 16]
                       one MPI run over steps and ranks, never oversubscribed: short runs over five
                       sizes on each rank count (default: one rank per core) and the run to predict
                       (a larger size, 10-20x the steps, --target-ranks), N times each (default 3),
                       logs gzipped into DIR, then pipelines/mpi-steps-and-ranks.toml on them
  mpi-experiment scaling|steps-ranks ... --prebuilt
                       the same with the tools in target/mpi and target/debug/yosoku as they are,
                       building and installing nothing (tools/gpu-machine/session.sh)
  mpi-intervals        how often the MPI predictions' 95 % intervals hold the full runs' mean, per
                       real-application set, from the bundles in results/ (cargo xtask demo first)
  scaling-headline     mpi-scaling's main call path: its model, its held-out prediction, and how many
                       of the bundle's models Extra-P gives the same terms (cargo xtask demo first)
  mpi-multinode        himeno_mpi on 2 hosts x 2 ranks through the mpi_timer plugin's run collector:
                       two network namespaces joined by a veth pair, Open MPI reaching the second
                       through a launch agent (as ssh on a cluster); then a hostfile naming an
                       unreachable host must fail with no bundle. Needs root (test runs it where
                       it can make namespaces)
  bench-predict [--launches N] [--runs N]
                       `yosoku predict` (release) on a real ncu raw page's launches repeated to N
                       (default 10,000): the whole command's wall time and peak memory per run
  bench-scaling [--laws N] [--seed S] [--repetitions N] [--suggest-laws N] [--advisor-laws N]
                [--design grid|scattered|latin]
                       scaling models under noise: synthetic laws (default 300, seed 56) modelled by
                       Extra-P (default options; negative exponents) and by yosoku's Extra-P search
                       and robust search (each point's first N repetitions: 1 as users' files
                       without repetitions); terms recovered, held-out error, interval coverage; then
                       the next run to measure (--suggest) on the first 120 against a full grid,
                       and on the first 12 beside Extra-P's measurement point advisor (GPR).
                       --design scattered: the laws of two parameters measured off any grid (runs
                       drawn between the grid's values; latin: at a Latin hypercube, no two runs
                       sharing a value), without the next-run stage
  bench-intervals      the scaling models' 95 % intervals on real files (Extra-P's experiments, the
                       MPI scaling runs; as they are and thinned): each file's largest point held
                       out, predicted by Extra-P and by both searches, intervals as given and
                       calibrated on the rest
  bench-mpi-logs [--steps N] [--runs N]
                       MPI logs of millions of calls: our message-rate program (tools/mpi-message-rate)
                       on 2 ranks under the interposer (72,000 steps: 1 GB of logs), imported and
                       predicted by a release yosoku; wall time and peak memory per run
  bench-mpi            the MPI timer interposer's cost per call and on a whole himeno_mpi run
  opencl-experiment [--name NAME] [--into DIR]
                       measure the OpenCL kernel suite (standard sizes) on every OpenCL device of
                       this machine (installs the ICD loader and POCL if missing), keep the record
                       as DIR/NAME.json (default target/opencl-experiment/data/opencl/<hostname>.json),
                       then run the OpenCL pipelines on it and the committed records
  bench-opencl         the OpenCL array copy against a plain Rust copy loop, side by side, and
                       the runner's own cost per launch
  cuda-trace-check     compile the in-kernel trace header and tools/cuda-trace's programs to PTX
                       with clang (no CUDA toolkit or GPU needed; installs clang if missing);
                       part of test. The GPU run itself: tools/cuda-trace/README.md
  new-plugin <name>    add a plugin crate plugins/<name> (compiles, has a passing test)
  bless                rewrite golden files (docs/tables.md, pipelines/golden/) from the code
  help                 this text
";

#[cfg(feature = "full")]
/// Crates that must compile to wasm32 (no file I/O, no native-only dependencies).
const WASM_CRATES: &[&str] = &[
    "yosoku-tables",
    "yosoku-regression",
    "yosoku-models",
    "yosoku-pipeline",
    "yosoku-bundle",
    "yosoku-traces",
];
#[cfg(feature = "full")]
const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn main() {
    if let Err(e) = run() {
        eprintln!("xtask: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("demo") => demo::demo(&args[1..]),
        Some("bench-pipelines") => demo::bench(&args[1..]),
        #[cfg(not(feature = "full"))]
        Some("test") => test_in_workspace_build(&args),
        #[cfg(not(feature = "full"))]
        Some(
            "web" | "serve" | "install" | "install-check" | "bench-web" | "bench-trace" | "fuzz"
            | "browser-test",
        ) => rerun_with_full(&args),
        #[cfg(feature = "full")]
        Some("web") => web::build(web::WebBuild::Release).map(|_| ()),
        #[cfg(feature = "full")]
        Some("serve") => serve_cmd(&args[1..]),
        #[cfg(feature = "full")]
        Some("install") => install::command(&args[1..]),
        #[cfg(feature = "full")]
        Some("install-check") => install::check(&web::build(web::WebBuild::Test)?, true),
        #[cfg(feature = "full")]
        Some("bench-web") => browser::bench(&args[1..]),
        #[cfg(feature = "full")]
        Some("test") => test(),
        #[cfg(feature = "full")]
        Some("browser-test") => browser::test(),
        #[cfg(feature = "full")]
        Some("fuzz") => fuzz::command(&args[1..]),
        Some("mpi-tools") => mpi::build_tools().map(|dir| println!("{}", dir.display())),
        Some("mpi-experiment") if args.get(1).is_some_and(|a| a == "apps") => {
            mpi_apps::experiment(&args[2..])
        }
        Some("mpi-experiment") if args.get(1).is_some_and(|a| a == "drift") => {
            mpi_drift::experiment(&args[2..])
        }
        Some("mpi-experiment") if args.get(1).is_some_and(|a| a == "scaling") => {
            mpi_scaling::experiment(&args[2..])
        }
        Some("mpi-experiment") if args.get(1).is_some_and(|a| a == "steps-ranks") => {
            mpi_steps_ranks::experiment(&args[2..])
        }
        Some("mpi-experiment") => mpi::experiment(&args[1..]),
        Some("mpi-multinode") => mpi_multinode::run(&args[1..]),
        Some("mpi-intervals") => demo::mpi_intervals(),
        Some("scaling-headline") => demo::scaling_headline(),
        Some("bench-mpi") => mpi::bench(),
        Some("bench-mpi-logs") => mpi_logs_bench::run(&args[1..]),
        Some("bench-predict") => predict_bench::run(&args[1..]),
        Some("bench-scaling") => scaling_bench::run(&args[1..]),
        Some("bench-intervals") => scaling_bench::intervals(&args[1..]),
        Some("opencl-experiment") => opencl::experiment(&args[1..]),
        Some("cuda-trace-check") => cuda_trace::check(),
        Some("bench-opencl") => opencl::bench(),
        #[cfg(feature = "full")]
        Some("bench-trace") => trace::bench(&args[1..]),
        Some("new-plugin") => match args.get(1) {
            Some(name) => {
                let dir = scaffold::new_plugin(&repo_root(), name)?;
                println!(
                    "created {} -- build it with `cargo build -p {}`",
                    dir.display(),
                    scaffold::crate_name(name)
                );
                Ok(())
            }
            None => bail!("usage: cargo xtask new-plugin <name>"),
        },
        Some("bless") => bless(),
        Some("help" | "--help" | "-h") | None => {
            print!("{HELP}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{HELP}"),
    }
}

/// `cargo xtask test` from the default build: the format check and the workspace's linted build
/// (which builds xtask with the `full` feature too, as a workspace member), then the rest of the
/// run in that xtask. Rerunning through `cargo run -p xtask --features full` instead built
/// xtask's 108 dependencies a second time, with the features a build of xtask alone unifies
/// (arrow's among them): 5 min 20 s of a fresh clone's run on a 2-vCPU VM (BENCHMARKS.md).
#[cfg(not(feature = "full"))]
fn test_in_workspace_build(args: &[String]) -> Result<()> {
    let started = std::time::Instant::now();
    let xtask = build_for_tests()?.xtask;
    let status = Command::new(&xtask)
        .args(args)
        .env(BUILD_SECS_ENV, started.elapsed().as_secs_f64().to_string())
        .status()
        .with_context(|| format!("cannot run {}", xtask.display()))?;
    std::process::exit(status.code().unwrap_or(1));
}

/// What the workspace's test build made that the later stages run.
struct TestBuild {
    /// The `xtask` binary (not its test harness): what the default build runs the rest in.
    #[cfg_attr(feature = "full", allow(dead_code))]
    xtask: PathBuf,
    /// The workspace's shared libraries (the plugins), in target/debug/deps: a test build leaves
    /// them there, where a plain `cargo build` would also put them into target/debug.
    plugins: Vec<PathBuf>,
    /// The test harnesses (unit, integration and bench targets built as tests): read only by
    /// the stage that runs the tests.
    #[cfg_attr(not(feature = "full"), allow(dead_code))]
    test_executables: Vec<PathBuf>,
}

/// The first stages of `cargo xtask test`: tools, the format check, and every target of the
/// workspace (benches and examples too) built and linted before anything slower runs, xtask's own
/// web and trace code included. A second call (the full xtask's own, after the default one's)
/// finds everything fresh: seconds.
fn build_for_tests() -> Result<TestBuild> {
    report_free_disk(&target_dir());
    ensure_rustup_component("rustfmt")?;
    ensure_rustup_component("clippy")?;
    run_cmd(cargo().args(["fmt", "--all", "--", "--check"]))?;
    lint_while_building()?;
    let mut build = cargo();
    build.args([
        "test",
        "--workspace",
        "--all-targets",
        "--features",
        "xtask/full",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    let messages = run_for_stdout(&mut build)?;
    let artifacts: Vec<serde_json::Value> = messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["profile"]["test"] == false)
        .collect();
    let xtask = artifacts
        .iter()
        .find(|m| m["target"]["name"] == "xtask" && m["target"]["kind"][0] == "bin")
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .context("the workspace build reported no xtask binary")?;
    let plugins = artifacts
        .iter()
        .filter(|m| {
            m["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "cdylib"))
        })
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .filter(|f| {
            f.extension()
                .is_some_and(|e| e == std::env::consts::DLL_EXTENSION)
        })
        .collect();
    let test_executables = messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["profile"]["test"] == true)
        .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
        .collect();
    Ok(TestBuild {
        xtask,
        plugins,
        test_executables,
    })
}

/// Copies the plugins of the test build into target/debug, beside the `yosoku` binary, where the
/// CLI looks for them and where `cargo build` would have put them (each written to a temporary
/// name, then renamed over the old one).
fn place_plugins(plugins: &[PathBuf]) -> Result<()> {
    let debug = target_dir().join("debug");
    for library in plugins {
        let name = library
            .file_name()
            .with_context(|| format!("{}: no file name", library.display()))?;
        let to = debug.join(name);
        if to == *library {
            continue;
        }
        let tmp = debug.join(format!(".{}.tmp", name.to_string_lossy()));
        std::fs::copy(library, &tmp)
            .with_context(|| format!("cannot copy {} to {}", library.display(), tmp.display()))?;
        std::fs::rename(&tmp, &to)
            .with_context(|| format!("cannot move {} to {}", tmp.display(), to.display()))?;
    }
    Ok(())
}

/// Runs this command again in an xtask built with the `full` feature (the wasm-bindgen library,
/// the HTTP server, the trace writer), which the default build leaves out so that
/// `cargo xtask demo` starts sooner.
#[cfg(not(feature = "full"))]
fn rerun_with_full(args: &[String]) -> Result<()> {
    let status = cargo()
        .args([
            "run",
            "--quiet",
            "--package",
            "xtask",
            "--features",
            "full",
            "--",
        ])
        .args(args)
        .status()
        .context("cannot run cargo to build xtask with the `full` feature")?;
    std::process::exit(status.code().unwrap_or(1));
}

/// The workspace root (the parent of xtask/).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// Set by `cargo xtask test`: the clippy driver every cargo command of the run compiles the
/// workspace's own crates with (see `lint_while_building`).
static CLIPPY_DRIVER: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(repo_root());
    if let Some(driver) = CLIPPY_DRIVER.get() {
        // What `cargo clippy` sets for `cargo check`, here for builds that also generate code:
        // clippy's driver is rustc with its lints added, for the workspace's crates only (the
        // wrapper's path is part of their artifacts' names, so they never mix with plain
        // builds); `-D warnings` reaches it the way cargo-clippy passes arguments.
        cmd.env("RUSTC_WORKSPACE_WRAPPER", driver).env(
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
        );
    }
    // On CI nothing is rebuilt incrementally: the incremental caches are a second copy of every
    // workspace crate's build (1.2 GB of a 9 GB cold target) on a disk shared with other jobs.
    if on_ci() && std::env::var_os("CARGO_INCREMENTAL").is_none() {
        cmd.env("CARGO_INCREMENTAL", "0");
    }
    cmd
}

fn on_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// A cold `cargo xtask test`'s most on disk under target/ at once, in GB, where it keeps what
/// it builds: the test build, the wasm32 build, the Python environments and the instrumented
/// fuzz build, 5.9 GB measured on a fresh clone (BENCHMARKS.md, "`cargo xtask test` on a fresh
/// clone"); on CI, which removes each when no later stage reads it ([`remove_on_ci`]), less.
const TEST_RUN_PEAK_GB: f64 = 6.0;

/// The free space on the disk of `path`, in GiB, as `df` reports it.
fn free_disk_gib(path: &Path) -> Option<f64> {
    let out = Command::new("df").args(["-Pk"]).arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let kib = text
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<u64>().ok())?;
    Some(kib as f64 / (1024.0 * 1024.0))
}

/// Says how much room the target directory's disk has, so that a build that runs out of it is
/// recognised as such from the log.
fn report_free_disk(target: &Path) {
    let _ = std::fs::create_dir_all(target);
    if let Some(gib) = free_disk_gib(target) {
        eprintln!(
            "xtask: {gib:.1} GiB free on the disk of {}",
            target.display()
        );
        if gib < TEST_RUN_PEAK_GB {
            eprintln!(
                "xtask: warning: a cold `cargo xtask test` holds up to about {TEST_RUN_PEAK_GB} GB \
                 under target/ at once; it may run out of disk"
            );
        }
    }
}

/// On CI, removes what no later stage of `cargo xtask test` reads, so that the run's files on
/// disk peak during the tests rather than growing to the end (a CI machine's disk can be small:
/// a run once failed there with no space left, in the fuzz build). Elsewhere everything stays,
/// for the next run to reuse.
fn remove_on_ci(what: &str, paths: &[PathBuf]) -> Result<()> {
    if !on_ci() {
        return Ok(());
    }
    remove_paths(paths)?;
    eprintln!(
        "xtask: CI: removed {what} ({} paths), read by no later stage",
        paths.len()
    );
    Ok(())
}

/// Removes each file or directory tree; one already gone is no error.
fn remove_paths(paths: &[PathBuf]) -> Result<()> {
    for path in paths {
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove {}", path.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Runs a command, failing with its command line when it fails.
/// A benchmark's `--name N` options, each a positive number, in place of their defaults in
/// `values` (name, value); anything else is an error printing `usage`.
fn positive_options(args: &[String], usage: &str, values: &mut [(&str, u64)]) -> Result<()> {
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().context(usage.to_owned())?;
        let slot = values
            .iter_mut()
            .find(|(name, _)| flag.strip_prefix("--") == Some(name))
            .with_context(|| usage.to_owned())?;
        slot.1 = value
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .with_context(|| format!("{flag} {value}: expected a positive number; {usage}"))?;
    }
    Ok(())
}

fn run_cmd(cmd: &mut Command) -> Result<()> {
    let line = command_line(cmd);
    eprintln!("xtask: $ {line}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot run `{line}`"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// Runs a command, returning its stdout (its stderr goes to ours); fails as [`run_cmd`] does.
fn run_for_stdout(cmd: &mut Command) -> Result<String> {
    let line = command_line(cmd);
    eprintln!("xtask: $ {line}");
    let out = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run `{line}`"))?;
    if !out.status.success() {
        bail!("`{line}` failed ({})", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn command_line(cmd: &Command) -> String {
    format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(OsStr::to_string_lossy)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                repo_root().join(p)
            }
        })
        .unwrap_or_else(|| repo_root().join("target"))
}

/// The debug build of the `yosoku` CLI.
fn yosoku_binary() -> PathBuf {
    target_dir()
        .join("debug")
        .join(format!("yosoku{}", std::env::consts::EXE_SUFFIX))
}

fn pipelines() -> Result<Vec<PathBuf>> {
    let dir = repo_root().join("pipelines");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(feature = "full")]
fn serve_cmd(args: &[String]) -> Result<()> {
    let mut dir = repo_root().join("results");
    let mut port = 8080;
    let mut args = args.iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--port" => {
                let value = args.next().context("--port needs a number")?;
                port = value
                    .parse()
                    .with_context(|| format!("--port {value}: expected a port number"))?;
            }
            other if other.starts_with('-') => {
                bail!("unknown option `{other}`; usage: cargo xtask serve [DIR] [--port N]")
            }
            other => dir = PathBuf::from(other),
        }
    }
    if !dir.is_dir() {
        bail!(
            "{}: no bundle directory; run `cargo xtask demo` first or name one",
            dir.display()
        );
    }
    let dist = web::build(web::WebBuild::Release)?;
    let server = yosoku_serve::Server::start(&dist, &dir, port)?;
    println!(
        "Serving the yosoku viewer and the bundles in {} on 127.0.0.1 only.\nOpen {} in a browser; Ctrl-C stops.",
        dir.display(),
        server.url()
    );
    server.wait();
    Ok(())
}

fn ensure_rustup_component(component: &str) -> Result<()> {
    let installed = Command::new("rustup")
        .args(["component", "list", "--installed"])
        .output();
    if let Ok(out) = installed
        && String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.starts_with(component))
    {
        return Ok(());
    }
    run_cmd(Command::new("rustup").args(["component", "add", component]))
}

#[cfg(feature = "full")]
fn ensure_wasm_target() -> Result<()> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    if let Ok(out) = installed
        && String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.trim() == WASM_TARGET)
    {
        return Ok(());
    }
    run_cmd(Command::new("rustup").args(["target", "add", WASM_TARGET]))
}

#[cfg(feature = "full")]
fn test() -> Result<()> {
    let mut stages = Stages::from_env();
    let result = test_stages(&mut stages);
    eprint!("{}", stages.table());
    result?;
    eprintln!("xtask: all checks passed");
    Ok(())
}

#[cfg(feature = "full")]
fn test_stages(stages: &mut Stages) -> Result<()> {
    let built = stages.run("the workspace build, checked fresh", build_for_tests)?;
    // Early, so a crate that no longer compiles to wasm32 fails the run in minutes.
    let dist = stages.run(
        "wasm32 build of the web viewer and the I/O-free crates",
        || web::build(web::WebBuild::Test),
    )?;
    // The later stages read only the viewer's files (`dist`), not the build behind them.
    remove_on_ci(
        "the wasm32 build",
        &[
            target_dir().join(WASM_TARGET),
            target_dir().join("web-test"),
        ],
    )?;
    // The real MPI test (crates/app/runner/tests/mpi_timer.rs) runs the tools built here.
    // The real OpenCL tests (crates/app/runner/tests/opencl.rs) run on POCL, installed here; with
    // YOSOKU_REQUIRE_OPENCL they fail rather than skip when there is no device.
    // pyarrow and polars read the bundle's and the Parquet export's files
    // (crates/app/cli/tests/interop.rs).
    // Extra-P models the experiments yosoku models (crates/core/regression/tests/extrap.rs,
    // crates/app/cli/tests/extrap_export.rs).
    let (tools, python, extrap) = stages.run("Open MPI and the MPI tools, POCL, Python", || {
        let tools = mpi::build_tools()?;
        opencl::ensure_opencl()?;
        Ok((
            tools,
            python::ensure_interop_python()?,
            python::ensure_extrap_python()?,
        ))
    })?;
    stages.run("the workspace's tests", || {
        run_cmd(
            mpi::mpi_env(&mut cargo())
                .args(["test", "--workspace", "--features", "xtask/full"])
                .env("YOSOKU_MPI_TOOLS", &tools)
                .env("YOSOKU_REQUIRE_OPENCL", "1")
                .env("YOSOKU_PYTHON", &python)
                .env("YOSOKU_EXTRAP_PYTHON", &extrap)
                .env("YOSOKU_REQUIRE_INTEROP", "1"),
        )
    })?;
    let venvs: Vec<PathBuf> = [&python, &extrap]
        .iter()
        .filter_map(|p| p.ancestors().nth(2).map(Path::to_path_buf))
        .collect();
    remove_on_ci("the test executables", &built.test_executables)?;
    // The bundled pipelines' bundles the pipeline tests shared (crates/app/runner/tests/pipelines.rs):
    // the browser test reads them.
    let tested_bundles = target_dir().join("tmp").join("bundled-pipelines");
    remove_on_ci("the Python environments", &venvs)?;
    // The run collector across two hosts (network namespaces), where this machine allows them;
    // the CLI finds the plugins the build made beside itself.
    stages.run("MPI across two hosts (network namespaces)", || {
        place_plugins(&built.plugins)?;
        mpi_multinode::check()
    })?;
    // The fuzz targets' seeds and regressions were replayed by the workspace's tests
    // (crates/app/runner/tests/fuzz_replay_*.rs and opencl.rs); mutating them needs libFuzzer's
    // instrumented build of its own, minutes on CI, and is `cargo xtask fuzz` (RELIABILITY.md).
    // The in-kernel trace header and its programs, compiled to PTX (no GPU here).
    stages.run("PTX check", cuda_trace::check)?;
    // The CLI the workspace tests above ran (cargo builds a package's binaries for its tests).
    let yosoku = target_dir()
        .join("debug")
        .join(format!("yosoku{}", std::env::consts::EXE_SUFFIX));
    stages.run("new-plugin scaffold check", || {
        scaffold::check(&repo_root(), &target_dir(), &yosoku)
    })?;
    stages.run("browser test and desktop tour", || {
        place_plugins(&built.plugins)?;
        browser::test_built(&dist, Some(&tested_bundles))
    })?;
    remove_on_ci("the pipeline tests' bundles", &[tested_bundles])?;
    stages.run(
        "install into a temporary prefix, run and serve outside the repository",
        || install::check(&dist, false),
    )
}

/// Set by the default build's `cargo xtask test` for the full xtask it runs on in: the seconds
/// its format check and linted workspace build took.
const BUILD_SECS_ENV: &str = "YOSOKU_TEST_BUILD_SECS";

/// The wall time of each stage of `cargo xtask test` and the free disk after it, printed as each
/// one ends and as a table when the run ends, passed or failed: a log (CI's too) shows where a
/// run's time went, and whether it ran short of disk.
struct Stages {
    done: Vec<Stage>,
}

struct Stage {
    name: &'static str,
    took: std::time::Duration,
    passed: bool,
    /// GiB free on the target directory's disk when the stage ended; unknown for the stage the
    /// default build's xtask ran.
    free_gib: Option<f64>,
}

impl Stages {
    /// Starts with the stage the default build's xtask ran before this process, when it did.
    fn from_env() -> Self {
        let earlier = std::env::var(BUILD_SECS_ENV)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0);
        Self {
            done: earlier
                .map(|secs| Stage {
                    name: "format check, the workspace built and linted",
                    took: std::time::Duration::from_secs_f64(secs),
                    passed: true,
                    free_gib: None,
                })
                .into_iter()
                .collect(),
        }
    }

    fn run<T>(&mut self, name: &'static str, stage: impl FnOnce() -> Result<T>) -> Result<T> {
        let started = std::time::Instant::now();
        let result = stage();
        let took = started.elapsed();
        let free_gib = free_disk_gib(&target_dir());
        eprintln!(
            "xtask: {name}: {}{}{}",
            minutes_secs(took),
            if result.is_ok() { "" } else { " (failed)" },
            free_gib.map_or(String::new(), |g| format!(", {g:.1} GiB free on disk"))
        );
        self.done.push(Stage {
            name,
            took,
            passed: result.is_ok(),
            free_gib,
        });
        result
    }

    fn table(&self) -> String {
        let width = self.done.iter().map(|s| s.name.len()).max().unwrap_or(0);
        let mut out = format!(
            "xtask: where the time went\n  {:<width$}  {:>9}  {:>9}\n",
            "stage", "took", "GiB free"
        );
        for stage in &self.done {
            let mark = if stage.passed { "" } else { "  failed" };
            let free = stage.free_gib.map_or("".into(), |g| format!("{g:.1}"));
            out += &format!(
                "  {:<width$}  {:>9}  {free:>9}{mark}\n",
                stage.name,
                minutes_secs(stage.took)
            );
        }
        let total: std::time::Duration = self.done.iter().map(|s| s.took).sum();
        out += &format!("  {:<width$}  {:>9}\n", "total", minutes_secs(total));
        out
    }
}

/// `12 min 05 s`, or `7.3 s` under a minute.
fn minutes_secs(d: std::time::Duration) -> String {
    let secs = d.as_secs_f64();
    // Not `60.0 s`: what rounds to a minute is written in minutes.
    if secs < 59.95 {
        format!("{secs:.1} s")
    } else {
        let whole = secs.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// Makes every later cargo command of this run build the workspace's crates with clippy's driver,
/// so one build both lints (`-D warnings`, as `cargo clippy --all-targets` did) and produces what
/// the tests run. A separate `cargo clippy` checked every dependency a second time, in check mode:
/// 3 min 26 s of a cold `cargo xtask test` on a 2-vCPU VM.
fn lint_while_building() -> Result<()> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .context("cannot run rustc --print sysroot")?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let driver = Path::new(&sysroot)
        .join("bin")
        .join(format!("clippy-driver{}", std::env::consts::EXE_SUFFIX));
    if !out.status.success() || !driver.is_file() {
        bail!(
            "no clippy driver at {} (install it with `rustup component add clippy`)",
            driver.display()
        );
    }
    let _ = CLIPPY_DRIVER.set(driver);
    Ok(())
}

fn bless() -> Result<()> {
    run_cmd(
        cargo()
            .args(["test", "--workspace"])
            .env("YOSOKU_BLESS", "1"),
    )?;
    eprintln!("xtask: golden files rewritten; review them with `git diff`");
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn stage_times_read_as_minutes_and_seconds() {
        assert_eq!(minutes_secs(Duration::from_millis(7_340)), "7.3 s");
        assert_eq!(minutes_secs(Duration::from_secs(725)), "12 min 05 s");
        assert_eq!(minutes_secs(Duration::from_millis(59_960)), "1 min 00 s");
    }

    #[test]
    fn the_stage_table_names_each_stage_its_failure_and_the_total() {
        let mut stages = Stages { done: Vec::new() };
        stages.run("fast", || Ok(())).unwrap();
        assert!(stages.run::<()>("broken", || bail!("no")).is_err());
        let table = stages.table();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 5, "{table}");
        assert!(lines[1].trim_start().starts_with("stage") && lines[1].ends_with("GiB free"));
        assert!(lines[2].trim_start().starts_with("fast") && !lines[2].contains("failed"));
        assert!(lines[3].trim_start().starts_with("broken") && lines[3].ends_with("failed"));
        assert!(lines[4].trim_start().starts_with("total"));
        // The free disk after each stage, from df, in the column under its header.
        let free = lines[2].split_whitespace().last().unwrap();
        assert!(free.parse::<f64>().is_ok_and(|g| g >= 0.0), "{table}");
    }

    #[test]
    fn removing_takes_files_and_trees_and_passes_over_what_is_gone() {
        let dir = std::env::temp_dir().join(format!("xtask-remove-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("tree/inner")).unwrap();
        std::fs::write(dir.join("tree/inner/a"), b"a").unwrap();
        std::fs::write(dir.join("file"), b"b").unwrap();
        std::fs::write(dir.join("kept"), b"c").unwrap();
        let paths = [dir.join("tree"), dir.join("file"), dir.join("never-made")];
        remove_paths(&paths).unwrap();
        assert!(paths.iter().all(|p| !p.exists()));
        assert!(dir.join("kept").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
