//! `cargo xtask mpi-experiment drift [--repeats N] [--into DIR] [--only drift|gerris]`: the
//! stationarity test and the two-length prediction on programs whose cost per step drifts
//! (issue 56, item 5; issue 70, item 5). Our particle code (tools/mpi-drift/drift_md.c: its
//! particles gather, so the pairs within the cutoff, and the time of a step, grow step after
//! step) and Gerris, a real adaptive-mesh flow solver from Debian (tools/mpi-apps/cylinder.gfs:
//! the wake of a cylinder refines the mesh step after step), each run under the MPI timer
//! interposer through the `mpi_timer` plugin's `run` collector on 2 ranks, one per core: reduced
//! runs of 100 and of 200 steps and full runs of 1,000, alternating, `--repeats` times each
//! (default 3). The logs are kept gzip-compressed in
//! DIR/<data>/{reduced-100,reduced-200,full}/<kind>-<n>/ (`<data>` mpi-drift and
//! mpi-drift-gerris), then the program's pipeline runs on them (pipelines/mpi-drift.toml, whose
//! logs are committed; tools/mpi-apps/mpi-drift-gerris.toml, whose 50 MB of logs are not).

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::mpi::{DRIFT, INTERPOSER, build_tools, run_measurement};
use crate::mpi_apps::{
    ExperimentArgs, command_output, cpu_model, gzip_logs, on_path, run_on_new_data_in, which,
};
use crate::system::apt_install;
use crate::{repo_root, run_cmd, target_dir};

const RANKS: u32 = 2;

/// The runs of one repeat, in the order they are measured: (directory, steps).
const RUNS: [(&str, u32); 3] = [("reduced-100", 100), ("reduced-200", 200), ("full", 1000)];

/// A program of the experiment.
struct Program {
    /// Its name for `--only`.
    name: &'static str,
    /// Its data directory under DIR, and its pipeline's name (`<data>.toml`).
    data: &'static str,
    /// Whether its logs are committed (pipelines/data/<data>) and its pipeline bundled
    /// (pipelines/), or too large for the repository (the pipeline in tools/mpi-apps/).
    bundled: bool,
    /// What `environment.txt` says ran.
    describe: fn() -> String,
}

const PROGRAMS: &[Program] = &[
    Program {
        name: "drift",
        data: "mpi-drift",
        bundled: true,
        describe: || "tools/mpi-drift/drift_md.c (mpicc -O2)".to_owned(),
    },
    Program {
        name: "gerris",
        data: "mpi-drift-gerris",
        bundled: false,
        describe: || {
            format!(
                "gerris2D from Debian's gerris {} on tools/mpi-apps/cylinder.gfs",
                command_output("dpkg-query", &["-W", "-f=${Version}", "gerris"])
            )
        },
    },
];

impl Program {
    fn pipeline(&self) -> std::path::PathBuf {
        let dir = if self.bundled {
            "pipelines"
        } else {
            "tools/mpi-apps"
        };
        repo_root().join(dir).join(format!("{}.toml", self.data))
    }
}

pub fn experiment(args: &[String]) -> Result<()> {
    let usage =
        "usage: cargo xtask mpi-experiment drift [--repeats N] [--into DIR] [--only drift|gerris]";
    let ExperimentArgs {
        repeats,
        into,
        only,
        prebuilt,
    } = ExperimentArgs::parse(args, usage)?;
    if prebuilt {
        bail!("--prebuilt: only `scaling` and `steps-ranks` run prebuilt");
    }
    let programs = crate::mpi_apps::chosen(PROGRAMS, |p| p.name, only.as_deref(), usage)?;
    let tools = build_tools()?;
    if programs.iter().any(|p| p.name == "gerris") && !on_path("gerris2D") {
        apt_install(&["gerris"])?;
    }
    run_cmd(crate::cargo().args(["build", "-p", "yosoku-cli", "-p", "yosoku-plugin-mpi-timer"]))?;
    let work = target_dir().join("mpi-experiment/drift");
    let root = into.unwrap_or_else(|| work.join("data"));
    let root = if root.is_absolute() {
        root
    } else {
        std::env::current_dir()?.join(root)
    };
    for program in programs {
        let data = root.join(program.data);
        for (kind, _) in RUNS {
            let dir = data.join(kind);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("cannot remove {}", dir.display()))?;
            }
        }
        // Alternating the lengths, so that a drift of the machine over the experiment touches
        // all.
        for repeat in 1..=repeats {
            for (kind, steps) in RUNS {
                let logs = data.join(kind).join(format!("{kind}-{repeat}"));
                println!(
                    "\n== {} {kind} {repeat}/{repeats}: {steps} steps on {RANKS} ranks",
                    program.name
                );
                let (executable, arguments) = if program.name == "gerris" {
                    (which("gerris2D")?, vec![gerris_input(&work, steps)?])
                } else {
                    (
                        tools.join(DRIFT).display().to_string(),
                        vec![steps.to_string()],
                    )
                };
                run_measurement(
                    &work,
                    &format!(
                        "program = {executable:?}, args = {arguments:?}, ranks = {RANKS}, binding = \"core\", interposer = {:?}, log_dir = {:?}, steps = {steps}, timeout_secs = 900",
                        tools.join(INTERPOSER).display().to_string(),
                        logs.display().to_string(),
                    ),
                )?;
                gzip_logs(&logs)?;
            }
        }
        write_environment(&data, repeats, &(program.describe)())?;
        run_on_new_data_in(
            &program.pipeline(),
            &format!("data/{}/", program.data),
            &data,
            &work,
        )?;
        println!("\nlogs: {}", data.display());
    }
    Ok(())
}

/// tools/mpi-apps/cylinder.gfs with `steps` time steps, written to the work directory; its path.
fn gerris_input(work: &Path, steps: u32) -> Result<String> {
    let template = std::fs::read_to_string(repo_root().join("tools/mpi-apps/cylinder.gfs"))?;
    let path = work.join(format!("cylinder-{steps}.gfs"));
    std::fs::create_dir_all(work)?;
    std::fs::write(&path, template.replace("{steps}", &steps.to_string()))?;
    Ok(path.display().to_string())
}

/// `environment.txt` beside the logs: what ran, where, when.
fn write_environment(dir: &Path, repeats: u32, program: &str) -> Result<()> {
    let text = format!(
        "program: {program}\nopen mpi: {}\nranks: {RANKS}, --bind-to core\nsteps: reduced 100 and 200, full 1000; {repeats} repeats of each, alternating\nmachine: {} vCPUs, {}\nmeasured: {}\ncommand: cargo xtask {}\n",
        crate::mpi_apps::open_mpi_version(),
        command_output("nproc", &[]),
        cpu_model(),
        command_output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]),
        crate::mpi_apps::xtask_command(),
    );
    std::fs::write(dir.join("environment.txt"), text)?;
    Ok(())
}
