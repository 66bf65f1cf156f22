//! `cargo xtask mpi-experiment drift [--repeats N] [--into DIR]`: the stationarity test and the
//! two-length prediction on a program whose cost per step drifts (issue 56, item 5). Our particle
//! code (tools/mpi-drift/drift_md.c: its particles gather, so the pairs within the cutoff, and
//! the time of a step, grow step after step) runs under the MPI timer interposer through the
//! `mpi_timer` plugin's `run` collector on 2 ranks, one per core: reduced runs of 100 and of 200
//! steps and full runs of 1,000, alternating, `--repeats` times each (default 3). The logs are
//! kept gzip-compressed in DIR/{reduced-100,reduced-200,full}/<kind>-<n>/, then
//! pipelines/mpi-drift.toml runs on them.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::mpi::{DRIFT, INTERPOSER, build_tools, run_measurement};
use crate::mpi_apps::{ExperimentArgs, command_output, cpu_model, gzip_logs, run_on_new_data};
use crate::{run_cmd, target_dir};

const RANKS: u32 = 2;

/// The runs of one repeat, in the order they are measured: (directory, steps).
const RUNS: [(&str, u32); 3] = [("reduced-100", 100), ("reduced-200", 200), ("full", 1000)];

pub fn experiment(args: &[String]) -> Result<()> {
    let usage = "usage: cargo xtask mpi-experiment drift [--repeats N] [--into DIR]";
    let ExperimentArgs {
        repeats,
        into,
        prebuilt,
        ..
    } = ExperimentArgs::parse(args, usage)?;
    if prebuilt {
        bail!("--prebuilt: only `scaling` and `steps-ranks` run prebuilt");
    }
    let tools = build_tools()?;
    run_cmd(crate::cargo().args(["build", "-p", "yosoku-cli", "-p", "yosoku-plugin-mpi-timer"]))?;
    let work = target_dir().join("mpi-experiment/drift");
    let data = into.unwrap_or_else(|| work.join("data/mpi-drift"));
    let data = if data.is_absolute() {
        data
    } else {
        std::env::current_dir()?.join(data)
    };
    for (kind, _) in RUNS {
        let dir = data.join(kind);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot remove {}", dir.display()))?;
        }
    }
    // Alternating the lengths, so that a drift of the machine over the experiment touches all.
    for repeat in 1..=repeats {
        for (kind, steps) in RUNS {
            let logs = data.join(kind).join(format!("{kind}-{repeat}"));
            println!("\n== {kind} {repeat}/{repeats}: {steps} steps on {RANKS} ranks");
            run_measurement(
                &work,
                &format!(
                    "program = {:?}, args = [\"{steps}\"], ranks = {RANKS}, binding = \"core\", interposer = {:?}, log_dir = {:?}, steps = {steps}, timeout_secs = 600",
                    tools.join(DRIFT).display().to_string(),
                    tools.join(INTERPOSER).display().to_string(),
                    logs.display().to_string(),
                ),
            )?;
            gzip_logs(&logs)?;
        }
    }
    write_environment(&data, repeats)?;
    run_on_new_data("mpi-drift.toml", "data/mpi-drift/", &data, &work)?;
    println!("\nlogs: {}", data.display());
    Ok(())
}

/// `environment.txt` beside the logs: what ran, where, when.
fn write_environment(dir: &Path, repeats: u32) -> Result<()> {
    let text = format!(
        "program: tools/mpi-drift/drift_md.c (mpicc -O2)\nopen mpi: {}\nranks: {RANKS}, --bind-to core\nsteps: reduced 100 and 200, full 1000; {repeats} repeats of each, alternating\nmachine: {} vCPUs, {}\nmeasured: {}\ncommand: cargo xtask {}\n",
        crate::mpi_apps::open_mpi_version(),
        command_output("nproc", &[]),
        cpu_model(),
        command_output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]),
        crate::mpi_apps::xtask_command(),
    );
    std::fs::write(dir.join("environment.txt"), text)?;
    Ok(())
}
