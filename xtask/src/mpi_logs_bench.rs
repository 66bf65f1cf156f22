//! `cargo xtask bench-mpi-logs [--steps N] [--runs N]`: MPI logs of millions of calls imported and
//! predicted (issue 41, item 5; BENCHMARKS.md, "MPI logs of millions of calls").
//!
//! tools/mpi-message-rate/message_rate.c (ours: windows of non-blocking sends and receives of
//! four sizes, a Waitall each, an Allreduce per step, a Barrier every 64 steps) runs on 2 ranks
//! under the MPI timer interposer; at the default 72,000 steps each rank logs about 9.6 million
//! calls, 1 GB of logs in all. The logs are made once (kept in target/bench-mpi-logs/ with the
//! step count) and a release `yosoku` imports them and predicts a run ten times longer, `--runs`
//! times (default 3); each run's wall time and peak resident memory (its rusage) are printed,
//! with the median.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::mpi::{INTERPOSER, MESSAGE_RATE, build_tools, median, mpi_env};
use crate::{cargo, run_cmd, target_dir};

/// Wall seconds and peak resident KiB of one child run.
pub(crate) fn measured(cmd: &mut Command) -> Result<(f64, i64)> {
    let started = Instant::now();
    let child = cmd.spawn().context("cannot start yosoku")?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; `status` and `usage` outlive the call.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed().as_secs_f64();
    if r != pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        bail!("yosoku failed (wait status {status})");
    }
    Ok((wall, usage.ru_maxrss))
}

fn logs_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

pub fn run(args: &[String]) -> Result<()> {
    let usage = "usage: cargo xtask bench-mpi-logs [--steps N] [--runs N]";
    let mut values = [("steps", 72_000u64), ("runs", 3)];
    crate::positive_options(args, usage, &mut values)?;
    let [(_, steps), (_, runs)] = values;
    let runs = runs as usize;
    let tools = build_tools()?;
    run_cmd(cargo().args([
        "build",
        "--release",
        "-p",
        "yosoku-cli",
        "-p",
        "yosoku-plugin-mpi-timer",
    ]))?;
    let work = target_dir().join("bench-mpi-logs");
    let logs = work.join(format!("message-rate-{steps}"));
    if !logs.join("rank-1.tsv").is_file() {
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs)?;
        println!("== message_rate {steps} steps on 2 ranks under the interposer");
        let mut cmd = Command::new("mpirun");
        mpi_env(&mut cmd)
            .args(["-np", "2", "--bind-to", "core", "-x"])
            .arg(format!("LD_PRELOAD={}", tools.join(INTERPOSER).display()))
            .arg("-x")
            .arg(format!("YOSOKU_MPI_LOG_DIR={}", logs.display()))
            .arg(tools.join(MESSAGE_RATE))
            .arg(steps.to_string());
        run_cmd(&mut cmd)?;
    }
    let size = logs_size(&logs);
    let pipeline = work.join("message-rate.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[pipeline]\nname = \"message-rate\"\ndescription = \"MPI logs of millions of calls: import and predict\"\n\n\
             [sources.reduced]\nplugin = \"mpi_timer\"\ncollector = \"logs\"\nconfig = {{ dir = {:?} }}\n\n\
             [[fit]]\nstep = \"mpi_simplified\"\nid = \"predict\"\nreduced = \"reduced.mpi_blocks\"\nreduced_steps = {steps}\nfull_steps = {}\n",
            logs.display().to_string(),
            10 * steps
        ),
    )?;
    let yosoku = crate::repo_root().join("target/release/yosoku");
    let (mut walls, mut peaks) = (Vec::new(), Vec::new());
    for i in 1..=runs {
        let out = work.join("bundle");
        let (wall, peak_kib) = measured(
            Command::new(&yosoku)
                .args(["run", "-q"])
                .arg(&pipeline)
                .arg("-o")
                .arg(&out)
                .stdout(std::process::Stdio::null()),
        )?;
        println!(
            "run {i}: {wall:.2} s, peak resident {:.2} GiB",
            peak_kib as f64 / (1 << 20) as f64
        );
        walls.push(wall);
        peaks.push(peak_kib as f64 * 1024.0);
    }
    let (wall, peak) = (median(walls), median(peaks));
    println!(
        "{:.2} GB of logs (2 ranks): import and predict, median of {runs}: {wall:.2} s, peak resident {:.2} GiB ({:.1}x the logs)",
        size as f64 / 1e9,
        peak / (1u64 << 30) as f64,
        peak / size as f64
    );
    Ok(())
}
