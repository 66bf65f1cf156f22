//! `cargo xtask bench-predict [--launches N] [--runs N]`: `yosoku predict` on a profile of many
//! launches (issue 53, item 7: 10,000 launches answered in at most 1 s, release build;
//! BENCHMARKS.md, "GPU transfer").
//!
//! The profile is a real Nsight Compute raw page (the matmul sweep on an H100 of
//! plugins/cuda_profiler/tests/data/ncu, 11 launches) with its launch rows repeated until it
//! holds `--launches` of them (default 10,000), each with its own ID: the same work as a long
//! profile of one application. The model is the release build's run of
//! pipelines/gpu-transfer.toml. The whole command (import, fit, calibration, answers, printing)
//! runs `--runs` times (default 5); each run's wall time and peak memory are printed, with the
//! median.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::mpi::median;
use crate::mpi_logs_bench::measured;
use crate::{cargo, repo_root, run_cmd, target_dir};

/// The real profile the benchmark's is made of.
const PROFILE: &str = "plugins/cuda_profiler/tests/data/ncu/ncu_raw_sweep_matmul_tiled_h100.csv";

/// The raw page with its launch rows repeated to `launches` rows, each with its own ID.
fn long_profile(text: &str, launches: usize) -> Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    // `==PROF==` lines, the header, the units row, then one row per launch.
    let header = lines
        .iter()
        .position(|l| l.starts_with("\"ID\""))
        .context("the profile has no header row")?;
    let (head, rows) = lines.split_at(header + 2);
    if rows.is_empty() {
        bail!("the profile has no launch rows");
    }
    let mut out = String::new();
    for l in head {
        let _ = writeln!(out, "{l}");
    }
    for i in 0..launches {
        let row = rows[i % rows.len()];
        let (_, rest) = row.split_once(',').context("a launch row without fields")?;
        let _ = writeln!(out, "\"{i}\",{rest}");
    }
    Ok(out)
}

pub fn run(args: &[String]) -> Result<()> {
    let usage = "usage: cargo xtask bench-predict [--launches N] [--runs N]";
    let mut values = [("launches", 10_000u64), ("runs", 5)];
    crate::positive_options(args, usage, &mut values)?;
    let [(_, launches), (_, runs)] = values.map(|(n, v)| (n, v as usize));
    run_cmd(cargo().args([
        "build",
        "--release",
        "-p",
        "yosoku-cli",
        "-p",
        "yosoku-plugin-cuda-profiler",
    ]))?;
    let work = target_dir().join("bench-predict");
    std::fs::create_dir_all(&work)?;
    let yosoku = target_dir().join("release/yosoku");
    let model = work.join("gpu-transfer");
    run_cmd(
        Command::new(&yosoku)
            .current_dir(repo_root())
            .args(["run", "-q", "pipelines/gpu-transfer.toml", "-o"])
            .arg(&model),
    )?;
    let text = std::fs::read_to_string(repo_root().join(PROFILE))
        .with_context(|| format!("cannot read {PROFILE}"))?;
    let profile = work.join(format!("matmul-{launches}.csv"));
    std::fs::write(&profile, long_profile(&text, launches)?)?;
    let (mut walls, mut peaks) = (Vec::new(), Vec::new());
    for i in 1..=runs {
        let (wall, peak_kib) = measured(
            Command::new(&yosoku)
                .args(["predict", "--on", "Tesla V100", "--profile"])
                .arg(&profile)
                .arg("--model")
                .arg(&model)
                .stdout(Stdio::null()),
        )?;
        println!(
            "run {i}: {launches} launches predicted in {wall:.3} s, peak RSS {:.0} MiB",
            peak_kib as f64 / 1024.0
        );
        walls.push(wall);
        peaks.push(peak_kib as f64);
    }
    println!(
        "yosoku predict, {launches} launches (release): median {:.3} s over {runs} runs, peak RSS {:.0} MiB",
        median(walls),
        median(peaks) / 1024.0
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_profile_repeats_the_launch_rows_with_new_ids() {
        let text = std::fs::read_to_string(repo_root().join(PROFILE)).unwrap();
        let long = long_profile(&text, 25).unwrap();
        let lines: Vec<&str> = long.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("\"ID\"")).unwrap();
        assert_eq!(lines.len(), header + 2 + 25);
        assert!(lines[header + 2].starts_with("\"0\","));
        assert!(lines.last().unwrap().starts_with("\"24\","));
    }
}
