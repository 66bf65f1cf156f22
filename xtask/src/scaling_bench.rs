//! `cargo xtask bench-scaling [--laws N] [--seed S] [--repetitions N]`: the scaling models under
//! noise (issue 56,
//! item 1; BENCHMARKS.md, "Scaling models under noise"). The synthetic experiments of
//! `yosoku_regression::pmnf::synthetic` (default 300 laws, seed 56) are written as Extra-P text
//! files, modelled by Extra-P 4.2.5 twice (its default options, then with negative exponents:
//! tools/extrap/models.py, in the venv `ensure_extrap_python` installs) and scored beside
//! yosoku's Extra-P-compatible search and its robust search by the regression crate's
//! `scaling_noise` example, which prints the tables. Then the next run to measure (`yosoku
//! scaling --suggest`) on the first `--suggest-laws` of them (default 120): following the
//! suggestions from each law's first 3 values per parameter, against measuring its whole grid
//! and against adding its cheapest configurations first; and, on the first `--advisor-laws` of
//! them (default 12: 62 requests took 13.0 min on the 2-vCPU VM), against following Extra-P 4.2.5's own
//! measurement point advisor (its Gaussian-process strategy once its lines are complete;
//! tools/extrap/advise.py). `--repetitions 1` keeps each measured point's first repetition only,
//! as users' files without repetitions are (the held-out point keeps all: its mean is the truth a
//! prediction is judged by). `--design scattered` measures the laws of two parameters off any
//! grid instead (each run at values drawn between the grid's smallest and largest, as a
//! space-filling design measures; the laws of one parameter left out), `--design latin` at a
//! Latin hypercube (no two runs share a value of any parameter), and either skips the next run to
//! measure, which follows a grid.

use std::fs::File;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::{cargo, repo_root, run_cmd, target_dir};

pub fn run(args: &[String]) -> Result<()> {
    let usage = "usage: cargo xtask bench-scaling [--laws N] [--seed S] [--repetitions N] [--suggest-laws N] [--advisor-laws N] [--design grid|scattered|latin]";
    // `--design` takes a word; the other options take positive numbers.
    let mut off_grid: Option<&str> = None;
    let mut numeric: Vec<String> = Vec::new();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--design" {
            off_grid = match rest.next().map(String::as_str) {
                Some("grid") => None,
                Some("scattered") => Some("scattered"),
                Some("latin") => Some("latin"),
                _ => anyhow::bail!("--design: grid, scattered or latin; {usage}"),
            };
        } else {
            numeric.push(flag.clone());
            numeric.extend(rest.next().cloned());
        }
    }
    let args = numeric.as_slice();
    // `repetitions` 0: every repetition (the option itself takes a positive number).
    let mut values = [
        ("laws", 300u64),
        ("seed", 56),
        ("repetitions", 0),
        ("suggest-laws", 120),
        ("advisor-laws", 12),
    ];
    crate::positive_options(args, usage, &mut values)?;
    let [
        (_, laws),
        (_, seed),
        (_, repetitions),
        (_, suggest_laws),
        (_, advisor_laws),
    ] = values;
    let python = crate::python::ensure_extrap_python()?;
    let example = regression_example("scaling_noise")?;
    let dir = target_dir().join("bench-scaling");
    let laws_dir = dir.join("laws");
    if laws_dir.exists() {
        std::fs::remove_dir_all(&laws_dir)
            .with_context(|| format!("cannot empty {}", laws_dir.display()))?;
    }
    let (laws, seed, kept) = (laws.to_string(), seed.to_string(), repetitions.to_string());
    let mut options = vec!["--laws", laws.as_str(), "--seed", seed.as_str()];
    if repetitions > 0 {
        options.extend(["--repetitions", kept.as_str()]);
    }
    if let Some(design) = off_grid {
        options.extend(["--design", design]);
    }
    run_cmd(
        Command::new(&example)
            .arg("write")
            .arg(&laws_dir)
            .args(&options),
    )?;
    let mut files: Vec<_> = std::fs::read_dir(&laws_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    let mut extrap_runs = Vec::new();
    for (name, flags) in [
        ("extrap-default", &[][..]),
        ("extrap-negative-exponents", &["--negative-exponents"][..]),
    ] {
        let out = dir.join(format!("{name}.jsonl"));
        extrap_models(&python, flags, &files, &out)?;
        extrap_runs.push(out);
    }
    let mut score = Command::new(&example);
    score.arg("score").arg(&laws_dir).args(&options);
    for out in &extrap_runs {
        score.arg("--extrap").arg(out);
    }
    let started = Instant::now();
    run_cmd(&mut score)?;
    eprintln!(
        "xtask: yosoku modelled and scored them three ways in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if off_grid.is_some() {
        return Ok(());
    }
    let started = Instant::now();
    let suggest_laws = suggest_laws.to_string();
    run_cmd(
        Command::new(&example)
            .arg("suggest")
            .arg(&laws_dir)
            .args(["--laws", suggest_laws.as_str(), "--seed", seed.as_str()])
            .arg("--advisor")
            .arg(&python)
            .args(["--advisor-laws", advisor_laws.to_string().as_str()]),
    )?;
    eprintln!(
        "xtask: the next run to measure, four ways on {suggest_laws} laws, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask bench-intervals`: the scaling models' intervals on real files (issue 70, item
/// 1; BENCHMARKS.md, "Intervals on real files"). Extra-P's own experiments (the regression
/// crate's test data) and the repository's real MPI scaling runs (pipelines/mpi-scaling.toml,
/// run into the target directory and exported as Extra-P experiments), each as it is and
/// thinned (one repetition, 5 values a parameter), are written as Extra-P's JSON by the
/// regression crate's `scaling_intervals` example (and RELeARN's runs at four more thetas,
/// tests/data/relearn); Extra-P 4.2.5 predicts each file's largest
/// point from the rest (tools/extrap/models.py --hold-out-largest) and the example scores
/// yosoku's two searches on the same held-out points, their intervals as the search gives them
/// and calibrated on the rest alone.
pub fn intervals(args: &[String]) -> Result<()> {
    anyhow::ensure!(
        args.is_empty(),
        "usage: cargo xtask bench-intervals (no options)"
    );
    let python = crate::python::ensure_extrap_python()?;
    let example = regression_example("scaling_intervals")?;
    run_cmd(cargo().args(["build", "-p", "yosoku-cli"]))?;
    let dir = target_dir().join("bench-intervals");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    let exported = dir.join("exported");
    std::fs::create_dir_all(&exported)?;
    let bundle = dir.join("mpi-scaling-bundle");
    let yosoku = crate::yosoku_binary();
    run_cmd(
        Command::new(&yosoku)
            .current_dir(repo_root())
            .args(["run", "pipelines/mpi-scaling.toml", "--quiet", "-o"])
            .arg(&bundle),
    )?;
    run_cmd(
        Command::new(&yosoku)
            .arg("export")
            .arg(&bundle)
            .args(["--format", "extrap", "-o"])
            .arg(exported.join("mpi-scaling.json")),
    )?;
    let data = repo_root().join("crates/core/regression/tests/data/extrap");
    let mut inputs = Vec::new();
    for sub in ["comparison", "text", "text/mpa", "jsonlines", "input"] {
        inputs.extend(files_of(&data.join(sub))?);
    }
    // RELeARN at four more thetas (tests/data/relearn/SOURCES.md).
    let relearn = repo_root().join("crates/core/regression/tests/data/relearn");
    inputs.extend(
        files_of(&relearn)?
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "txt")),
    );
    inputs.extend(files_of(&exported)?);
    inputs.retain(|p| !p.to_string_lossy().contains("_neg"));
    let files = dir.join("files");
    run_cmd(
        Command::new(&example)
            .arg("write")
            .arg(&files)
            .args(&inputs),
    )?;
    let written = files_of(&files)?;
    let out = dir.join("extrap-held-out.jsonl");
    extrap_models(&python, &["--hold-out-largest"], &written, &out)?;
    run_cmd(
        Command::new(&example)
            .arg("score")
            .arg(&files)
            .arg("--extrap")
            .arg(&out),
    )
}

/// Extra-P's models of `files` (tools/extrap/models.py with `flags`), as JSON lines into `out`.
fn extrap_models(
    python: &std::path::Path,
    flags: &[&str],
    files: &[std::path::PathBuf],
    out: &std::path::Path,
) -> Result<()> {
    let started = Instant::now();
    let status = Command::new(python)
        .arg(repo_root().join("tools/extrap/models.py"))
        .args(flags)
        .args(files)
        .stdout(File::create(out).with_context(|| format!("cannot write {}", out.display()))?)
        // Extra-P warns on every 4-point parameter; its models are what counts.
        .stderr(Stdio::null())
        .status()
        .context("cannot run Extra-P")?;
    anyhow::ensure!(status.success(), "Extra-P {flags:?} failed: {status}");
    eprintln!(
        "xtask: Extra-P {flags:?} modelled {} files in {:.1} s",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The regression crate's example `name`, built (release), and its path.
fn regression_example(name: &str) -> Result<std::path::PathBuf> {
    run_cmd(cargo().args([
        "build",
        "--release",
        "-p",
        "yosoku-regression",
        "--example",
        name,
    ]))?;
    Ok(target_dir().join("release/examples").join(name))
}

/// The files directly in `dir`, sorted.
fn files_of(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}
