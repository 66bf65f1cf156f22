//! `cargo xtask mpi-experiment scaling`: the data of the scaling models (docs/methods.md,
//! section 7) measured on this machine. Our Himeno-style solver and one real application from
//! Debian (meep, FDTD) run under the MPI timer interposer through the `mpi_timer` plugin's
//! `run` collector over five input sizes × 1, 2 and 4 ranks, each configuration several times;
//! every run's parameters (`n` or `res`) go into its logs (`# parameters`), its rank count is
//! the logs' own. Runs of more ranks than the machine has cores are oversubscribed
//! (`--oversubscribe`, `--bind-to core:overload-allowed`), as SOURCES.md says. The logs are
//! kept gzip-compressed in DIR/<program>/<size>-<ranks>ranks-<repeat>/, then
//! pipelines/mpi-scaling.toml runs on them.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::mpi::{HIMENO, INTERPOSER, build_tools, run_measurement};
use crate::mpi_apps::{ExperimentArgs, gzip_logs, on_path, which};
use crate::system::apt_install;
use crate::{repo_root, run_cmd, target_dir};

/// One program of the experiment.
pub(crate) struct Program {
    /// Its directory under the data directory.
    pub(crate) name: &'static str,
    /// The Debian package that installs it (none: built by `cargo xtask mpi-tools`).
    pub(crate) package: Option<&'static str>,
    /// The size parameter's name and its values, smallest first.
    pub(crate) parameter: &'static str,
    pub(crate) sizes: &'static [u32],
    /// Its main-loop iterations or time steps in this experiment.
    pub(crate) steps: u32,
    /// The program's arguments for a run of `size` and `steps` (`input`: tools/mpi-apps/).
    pub(crate) args: fn(size: u32, steps: u32) -> Vec<String>,
}

/// Rank counts of every size.
const RANKS: [u32; 3] = [1, 2, 4];
/// Iterations of every himeno_mpi run, and time steps of every meep run: fixed, so that only the
/// size and the rank count change.
const HIMENO_ITERATIONS: u32 = 60;
const MEEP_STEPS: u32 = 300;

pub(crate) const PROGRAMS: &[Program] = &[
    Program {
        name: "himeno",
        package: None,
        // The grid is (2n - 1) x n x n, Himeno's shape (S: n = 33, M: n = 65).
        parameter: "n",
        sizes: &[33, 49, 65, 81, 97],
        steps: HIMENO_ITERATIONS,
        args: |n, iterations| {
            vec![
                (2 * n - 1).to_string(),
                n.to_string(),
                n.to_string(),
                iterations.to_string(),
            ]
        },
    },
    Program {
        name: "meep",
        package: Some("meep-openmpi"),
        // Pixels per unit length of the 16 x 16 cell: res^2 grid points.
        parameter: "res",
        sizes: &[20, 30, 40, 50, 60],
        steps: MEEP_STEPS,
        args: |res, steps| {
            vec![
                format!("res={res}"),
                format!("steps={steps}"),
                repo_root()
                    .join("tools/mpi-apps/waveguide.ctl")
                    .display()
                    .to_string(),
            ]
        },
    },
];

/// `cargo xtask mpi-experiment scaling [--repeats N] [--into DIR] [--only himeno|meep]`.
pub fn experiment(args: &[String]) -> Result<()> {
    let usage = "usage: cargo xtask mpi-experiment scaling [--repeats N] [--into DIR] [--only himeno|meep] [--prebuilt]";
    let ExperimentArgs {
        repeats,
        into,
        only,
        prebuilt,
    } = ExperimentArgs::parse(args, usage)?;
    let programs = crate::mpi_apps::chosen(PROGRAMS, |p| p.name, only.as_deref(), usage)?;
    let tools = prepare(&programs, prebuilt)?;
    let work = target_dir().join("mpi-experiment/scaling");
    let data = into.unwrap_or_else(|| work.join("data/mpi-scaling"));
    let data = if data.is_absolute() {
        data
    } else {
        std::env::current_dir()?.join(data)
    };
    for p in &programs {
        let dir = data.join(p.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot remove {}", dir.display()))?;
        }
        let program = program_path(p, &tools)?;
        // Repeat by repeat, every configuration once in each, so that a drift of the machine
        // over the experiment touches all of them alike.
        for repeat in 1..=repeats {
            for &size in p.sizes {
                for ranks in RANKS {
                    let logs = dir.join(format!("{}{size}-{ranks}ranks-{repeat}", p.parameter));
                    let run = Run {
                        size,
                        steps: p.steps,
                        ranks,
                        repeat,
                    };
                    measure(&work, &tools, (p, &program), &run, &logs)?;
                }
            }
        }
        write_environment(&dir, p, repeats)?;
    }
    crate::mpi_apps::run_on_new_data("mpi-scaling.toml", "data/mpi-scaling/", &data, &work)?;
    println!("\nlogs: {}", data.display());
    Ok(())
}

/// What `p` is: its Debian package's version, or how ours was built.
pub(crate) fn program_version(p: &Program) -> String {
    match p.package {
        Some(package) => format!(
            "{package} {}",
            crate::mpi_apps::command_output("dpkg-query", &["-W", "-f", "${Version}", package])
        ),
        None => "tools/himeno-mpi/himeno_mpi.c, mpicc -O3".to_owned(),
    }
}

/// Where `p` is: ours in `tools`, a Debian package's on the path.
pub(crate) fn program_path(p: &Program, tools: &Path) -> Result<String> {
    match p.package {
        None => Ok(tools.join(HIMENO).display().to_string()),
        Some(_) => which(p.name),
    }
}

/// Installs what `programs` need from Debian and builds the CLI and the MPI timer plugin; with
/// `prebuilt`, checks that they are there instead.
pub(crate) fn prepare(programs: &[&Program], prebuilt: bool) -> Result<std::path::PathBuf> {
    if prebuilt {
        return prebuilt_tools(programs);
    }
    let tools = build_tools()?;
    let missing: Vec<&str> = programs
        .iter()
        .filter_map(|p| p.package.filter(|_| !on_path(p.name)))
        .collect();
    if !missing.is_empty() {
        apt_install(&missing)?;
    }
    run_cmd(crate::cargo().args(["build", "-p", "yosoku-cli", "-p", "yosoku-plugin-mpi-timer"]))?;
    Ok(tools)
}

/// [`prepare`] on a machine where nothing is built: the tools, the CLI and its MPI timer plugin,
/// `mpirun` and the programs must be there already.
fn prebuilt_tools(programs: &[&Program]) -> Result<std::path::PathBuf> {
    let tools = crate::mpi::tools_dir();
    check_prebuilt(&tools, &crate::yosoku_binary())?;
    for program in ["mpirun"].into_iter().chain(
        programs
            .iter()
            .filter(|p| p.package.is_some())
            .map(|p| p.name),
    ) {
        which(program).context("--prebuilt installs nothing")?;
    }
    Ok(tools)
}

/// The interposer and himeno_mpi in `tools`, and `cli` with its MPI timer plugin beside it; an
/// error naming each one missing and how to build it.
fn check_prebuilt(tools: &Path, cli: &Path) -> Result<()> {
    let plugin = cli.with_file_name(format!(
        "{}yosoku_plugin_mpi_timer{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let needed = [
        tools.join(INTERPOSER),
        tools.join(HIMENO),
        cli.to_owned(),
        plugin,
    ];
    let absent: Vec<String> = needed
        .iter()
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    if !absent.is_empty() {
        bail!(
            "--prebuilt: {} missing (build them with `cargo xtask mpi-tools` and `cargo build -p yosoku-cli -p yosoku-plugin-mpi-timer`)",
            absent.join(", ")
        );
    }
    Ok(())
}

/// One run of a program.
pub(crate) struct Run {
    pub(crate) size: u32,
    pub(crate) steps: u32,
    pub(crate) ranks: u32,
    pub(crate) repeat: u32,
}

/// One run of `p` (the program's path beside it), its logs gzipped into `logs`.
pub(crate) fn measure(
    work: &Path,
    tools: &Path,
    (p, program): (&Program, &str),
    run: &Run,
    logs: &Path,
) -> Result<()> {
    let Run {
        size,
        steps,
        ranks,
        repeat,
    } = *run;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let binding = if ranks > cores {
        "core:overload-allowed"
    } else {
        "core"
    };
    println!(
        "\n== {} {}={size}, {steps} steps on {ranks} ranks (--bind-to {binding}), repeat {repeat}",
        p.name, p.parameter
    );
    run_measurement(
        work,
        &format!(
            "program = {program:?}, args = {:?}, ranks = {ranks}, binding = {binding:?}, oversubscribe = true, interposer = {:?}, log_dir = {:?}, parameters = \"{}={size}\", mpirun_args = [\"-x\", \"OMP_NUM_THREADS=1\"], timeout_secs = 900",
            (p.args)(size, steps),
            tools.join(INTERPOSER).display().to_string(),
            logs.display().to_string(),
            p.parameter,
        ),
    )?;
    gzip_logs(logs)
}

/// `environment.txt` beside a program's logs: what ran, where, when.
fn write_environment(dir: &Path, p: &Program, repeats: u32) -> Result<()> {
    let output = crate::mpi_apps::command_output;
    let cpu = crate::mpi_apps::cpu_model();
    let version = program_version(p);
    let sizes: Vec<String> = p.sizes.iter().map(u32::to_string).collect();
    let text = format!(
        "program: {} ({version})\nopen mpi: {}\nparameters: {} = {}; ranks = 1, 2, 4 (runs of more ranks than the {} cores: --oversubscribe, --bind-to core:overload-allowed); OMP_NUM_THREADS=1\nrepeats: {repeats} of each configuration, repeat by repeat\nfixed: himeno_mpi {HIMENO_ITERATIONS} iterations, meep {MEEP_STEPS} time steps\nmachine: {} vCPUs, {}\nmeasured: {}\ncommand: cargo xtask {}\n",
        p.name,
        crate::mpi_apps::open_mpi_version(),
        p.parameter,
        sizes.join(", "),
        output("nproc", &[]),
        output("nproc", &[]),
        cpu.trim(),
        output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]),
        crate::mpi_apps::xtask_command(),
    );
    std::fs::write(dir.join("environment.txt"), text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--prebuilt` builds nothing: what is missing is named, with how to build it; all there,
    /// it passes.
    #[test]
    fn prebuilt_names_what_is_missing() {
        let dir = std::env::temp_dir().join(format!("yosoku-prebuilt-{}", std::process::id()));
        let (tools, bin) = (dir.join("mpi"), dir.join("debug"));
        std::fs::create_dir_all(&tools).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(tools.join(INTERPOSER), "").unwrap();
        let cli = bin.join("yosoku");
        let e = check_prebuilt(&tools, &cli).unwrap_err().to_string();
        assert!(e.starts_with("--prebuilt: "), "{e}");
        assert!(
            e.contains(HIMENO) && e.contains("yosoku_plugin_mpi_timer"),
            "{e}"
        );
        assert!(!e.contains(INTERPOSER), "{e}");
        assert!(e.contains("cargo xtask mpi-tools"), "{e}");
        std::fs::write(tools.join(HIMENO), "").unwrap();
        std::fs::write(&cli, "").unwrap();
        std::fs::write(
            bin.join(format!(
                "{}yosoku_plugin_mpi_timer{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            )),
            "",
        )
        .unwrap();
        check_prebuilt(&tools, &cli).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
