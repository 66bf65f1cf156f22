//! `cargo xtask`: the project's commands (see `cargo xtask help`).

mod architecture;
mod scaffold;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const HELP: &str = "\
cargo xtask <command>

  demo                 build the workspace, run every pipeline in pipelines/, write results/
  test                 everything CI runs: fmt check, clippy -D warnings, wasm32 check of the
                       I/O-free crates, all tests, and the new-plugin scaffold check
  new-plugin <name>    add a plugin crate plugins/<name> (compiles, has a passing test)
  bless                rewrite golden files (docs/tables.md, pipelines/golden/) from the code
  help                 this text
";

/// Crates that must compile to wasm32 (no file I/O, no native-only dependencies).
const WASM_CRATES: &[&str] = &[
    "yosoku-tables",
    "yosoku-models",
    "yosoku-pipeline",
    "yosoku-bundle",
];
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
        Some("demo") => demo(),
        Some("test") => test(),
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

/// The workspace root (the parent of xtask/).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(repo_root());
    cmd
}

/// Runs a command, failing with its command line when it fails.
fn run_cmd(cmd: &mut Command) -> Result<()> {
    let line = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(OsStr::to_string_lossy)
            .collect::<Vec<_>>()
            .join(" ")
    );
    eprintln!("xtask: $ {line}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot run `{line}`"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
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

fn demo() -> Result<()> {
    run_cmd(cargo().args(["build", "--workspace"]))?;
    let yosoku = target_dir()
        .join("debug")
        .join(format!("yosoku{}", std::env::consts::EXE_SUFFIX));
    let files = pipelines()?;
    let mut bundles = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(repo_root()).unwrap_or(file);
        println!("\n== {}", relative.display());
        run_cmd(
            Command::new(&yosoku)
                .current_dir(repo_root())
                .arg("run")
                .arg(relative),
        )?;
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        bundles.push(name);
    }
    println!("\n{} pipelines ran; bundles are in results/:", files.len());
    for b in &bundles {
        println!("  results/{b}");
    }
    println!(
        "\nLook inside one: {} inspect results/<name>",
        yosoku
            .strip_prefix(repo_root())
            .unwrap_or(&yosoku)
            .display()
    );
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

fn test() -> Result<()> {
    ensure_rustup_component("rustfmt")?;
    ensure_rustup_component("clippy")?;
    run_cmd(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run_cmd(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    ensure_wasm_target()?;
    let mut wasm = cargo();
    wasm.args(["check", "--target", WASM_TARGET]);
    for c in WASM_CRATES {
        wasm.args(["-p", c]);
    }
    run_cmd(&mut wasm)?;
    run_cmd(cargo().args(["test", "--workspace"]))?;
    scaffold::check(&repo_root(), &target_dir())?;
    eprintln!("xtask: all checks passed");
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
