//! OpenCL on this machine (the ICD loader and POCL, installed when missing) and
//! `cargo xtask opencl-experiment`, which re-measures the OpenCL pipelines' data.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::system::apt_install;
use crate::{repo_root, run_cmd, target_dir};

/// What a machine needs for the OpenCL tests: the ICD loader, a CPU driver, and `clinfo` to see
/// what is there.
const PACKAGES: &[&str] = &["ocl-icd-libopencl1", "pocl-opencl-icd", "clinfo"];

/// The number of OpenCL platforms `clinfo` sees (None: no clinfo).
fn platforms() -> Option<u32> {
    let out = Command::new("clinfo").arg("--list").output().ok()?;
    if !out.status.success() {
        return Some(0);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().filter(|l| l.starts_with("Platform #")).count() as u32)
}

/// Installs the ICD loader, POCL and clinfo from Debian when no OpenCL platform is found.
pub fn ensure_opencl() -> Result<()> {
    if platforms().is_some_and(|n| n > 0) {
        return Ok(());
    }
    apt_install(PACKAGES)?;
    match platforms() {
        Some(n) if n > 0 => Ok(()),
        _ => bail!(
            "after installing {}, clinfo still lists no OpenCL platform",
            PACKAGES.join(" ")
        ),
    }
}

/// The OpenCL pipelines and the data file pattern they read.
const PIPELINES: &[&str] = &["opencl-vector-width.toml", "opencl-local-memory.toml"];

/// `cargo xtask opencl-experiment [--name NAME] [--into DIR]`: measures the standard suite on
/// every OpenCL device of this machine through the `opencl` plugin's `run` collector, keeps the
/// record as DIR/NAME.json (default target/opencl-experiment/data/opencl/<hostname>.json), then
/// runs the OpenCL pipelines on the committed records and the new one.
pub fn experiment(args: &[String]) -> Result<()> {
    let mut name = hostname();
    let mut into: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--name" => name = it.next().context("--name needs a value")?.clone(),
            "--into" => {
                into = Some(PathBuf::from(
                    it.next().context("--into needs a directory")?,
                ))
            }
            other => bail!(
                "unknown argument `{other}`; usage: cargo xtask opencl-experiment [--name NAME] [--into DIR]"
            ),
        }
    }
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        bail!("--name `{name}`: expected a file name");
    }
    ensure_opencl()?;
    run_cmd(crate::cargo().args(["build", "-p", "yosoku-cli", "-p", "yosoku-plugin-opencl"]))?;
    let work = target_dir().join("opencl-experiment");
    let data = into.unwrap_or_else(|| work.join("data/opencl"));
    let data = if data.is_absolute() {
        data
    } else {
        std::env::current_dir()?.join(data)
    };
    std::fs::create_dir_all(&data)?;
    let logs = work.join("log");
    if logs.exists() {
        std::fs::remove_dir_all(&logs)
            .with_context(|| format!("cannot remove {}", logs.display()))?;
    }
    let pipeline = format!(
        "[pipeline]\nname = \"opencl-measure\"\n\n[sources.run]\nplugin = \"opencl\"\ncollector = \"run\"\n\
         config = {{ preset = \"standard\", warmup_launches = 3, max_launches = 100, max_secs_per_config = 3.0, run_id = {name:?}, log_dir = {:?} }}\n",
        logs.display().to_string()
    );
    std::fs::create_dir_all(&work)?;
    let file = work.join("measure.toml");
    std::fs::write(&file, pipeline)?;
    let yosoku = crate::yosoku_binary();
    // POCL's worker threads pinned to cores: without it, launches on a 2-core VM take one of
    // two times (CV 30 %); with it, 4-9 % (BENCHMARKS.md). Other drivers ignore it.
    run_cmd(
        Command::new(&yosoku)
            .arg("run")
            .arg(&file)
            .arg("-o")
            .arg(work.join("measure-bundle"))
            .env("POCL_AFFINITY", "1"),
    )?;
    let record = data.join(format!("{name}.json"));
    std::fs::rename(logs.join("opencl-run.json"), &record)
        .with_context(|| format!("cannot move the record to {}", record.display()))?;
    println!("\nrecord: {}", record.display());
    // The pipelines on the committed records and the new one.
    let committed = repo_root().join("pipelines/data/opencl");
    for entry in std::fs::read_dir(&committed)? {
        let path = entry?.path();
        let target = data.join(path.file_name().unwrap_or_default());
        if path.extension().is_some_and(|e| e == "json") && !target.exists() {
            std::fs::copy(&path, &target)?;
        }
    }
    for pipeline in PIPELINES {
        let text = std::fs::read_to_string(repo_root().join("pipelines").join(pipeline))?;
        let text = text.replace("\"data/opencl/", &format!("\"{}/", data.display()));
        let file = work.join(pipeline);
        std::fs::write(&file, text)?;
        println!("\n== {pipeline} on {}", data.display());
        run_cmd(
            Command::new(&yosoku).arg("run").arg(&file).arg("-o").arg(
                work.join("results")
                    .join(Path::new(pipeline).with_extension("")),
            ),
        )?;
    }
    Ok(())
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "this-machine".to_owned())
}

/// `cargo xtask bench-opencl`: the OpenCL copy against a plain Rust copy loop and the runner's
/// cost per launch (plugins/opencl/benches/copy_bandwidth.rs), POCL's threads pinned.
pub fn bench() -> Result<()> {
    ensure_opencl()?;
    run_cmd(
        crate::cargo()
            .args([
                "bench",
                "-p",
                "yosoku-plugin-opencl",
                "--bench",
                "copy_bandwidth",
            ])
            .env("POCL_AFFINITY", "1"),
    )
}
