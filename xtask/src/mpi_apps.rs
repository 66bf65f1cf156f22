//! `cargo xtask mpi-experiment apps`: the simplified-execution prediction on real MPI
//! applications from Debian that none of us wrote: meep (FDTD, C++), CP2K and Quantum ESPRESSO's
//! pw.x (molecular dynamics, Fortran, an SCF loop of varying length in every step). Each is run, unmodified,
//! under the MPI timer interposer through the `mpi_timer` plugin's `run` collector, reduced
//! and full, several times each (the full runs' spread is the noise a prediction is judged
//! against), with our own small inputs (tools/mpi-apps/). The logs are kept gzip-compressed in
//! DIR/<app>/{reduced,full}/<repeat>/, then the apps' pipelines run on them.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::mpi::{INTERPOSER, build_tools, run_measurement};
use crate::system::apt_install;
use crate::{repo_root, run_cmd, target_dir};

/// One application of the experiment.
struct App {
    /// Its directory under the data directory, and its pipeline (`pipelines/mpi-<name>.toml`).
    name: &'static str,
    /// The Debian package, and the program it installs.
    package: &'static str,
    program: &'static str,
    /// Steps (the program's own units) of a reduced and of a full run.
    reduced_steps: u32,
    /// Whether the collector is told the steps, so that the iteration is the unit that repeats
    /// once per step (needed where an inner loop of varying length runs in each step).
    iteration_per_step: bool,
    full_steps: u32,
    /// The program's arguments for a run of `steps` steps, given the input prepared for it.
    args: fn(input: &Path, steps: u32) -> Vec<String>,
    /// Prepares the input of a run of `steps` steps in `work`; returns its path.
    input: fn(work: &Path, steps: u32) -> Result<PathBuf>,
}

const RANKS: u32 = 2;

const APPS: &[App] = &[
    App {
        name: "meep",
        package: "meep-openmpi",
        program: "meep",
        reduced_steps: 250,
        full_steps: 2500,
        // Three field exchanges per time step at the same call sites: the finest repeating
        // unit is a third of a step, no call runs once per step.
        iteration_per_step: false,
        args: |input, steps| vec![format!("steps={steps}"), input.display().to_string()],
        input: |_, _| Ok(repo_root().join("tools/mpi-apps/waveguide.ctl")),
    },
    App {
        name: "cp2k",
        package: "cp2k",
        program: "cp2k.psmp",
        reduced_steps: 5,
        full_steps: 50,
        iteration_per_step: true,
        args: |input, _| vec!["-i".into(), input.display().to_string()],
        input: |work, steps| {
            from_template(work, "water-xtb.inp", "cp2k", steps, "project", "water")
        },
    },
    App {
        name: "qe",
        package: "quantum-espresso",
        program: "pw.x",
        reduced_steps: 5,
        full_steps: 50,
        // An SCF of varying length in every MD step, and the once-per-step barrier also runs
        // 10 times while pw.x sets up.
        iteration_per_step: true,
        args: |input, _| vec!["-in".into(), input.display().to_string()],
        input: |work, steps| from_template(work, "si8-md.in", "qe", steps, "outdir", "out"),
    },
];

/// The input of a run of `steps` steps from the template `tools/mpi-apps/<file>`, written to
/// `work/<app>-<steps>-steps/<file>`: `{steps}` filled in, and `{<path_key>}` with the path of
/// `<path_name>` in that directory (where the program writes its own files).
fn from_template(
    work: &Path,
    file: &str,
    app: &str,
    steps: u32,
    path_key: &str,
    path_name: &str,
) -> Result<PathBuf> {
    let template = std::fs::read_to_string(repo_root().join("tools/mpi-apps").join(file))?;
    let dir = work.join(format!("{app}-{steps}-steps"));
    std::fs::create_dir_all(&dir)?;
    let text = template
        .replace(
            &format!("{{{path_key}}}"),
            &dir.join(path_name).display().to_string(),
        )
        .replace("{steps}", &steps.to_string());
    let path = dir.join(file);
    std::fs::write(&path, text)?;
    Ok(path)
}

/// The options of `mpi-experiment apps` and `mpi-experiment scaling`.
pub(crate) struct ExperimentArgs {
    /// Runs of each configuration (default 3).
    pub repeats: u32,
    /// Where the logs go.
    pub into: Option<PathBuf>,
    /// One program only.
    pub only: Option<String>,
    /// Use the MPI tools in target/mpi and the `yosoku` in target/debug as they are: build and
    /// install nothing (a machine with no cargo, compiler or package manager, such as the GPU
    /// machine: tools/gpu-machine/session.sh).
    pub prebuilt: bool,
}

impl ExperimentArgs {
    /// `[--repeats N] [--into DIR] [--only NAME] [--prebuilt]`; `usage` is the error for anything
    /// else.
    pub(crate) fn parse(args: &[String], usage: &str) -> Result<Self> {
        let mut parsed = Self {
            repeats: 3,
            into: None,
            only: None,
            prebuilt: false,
        };
        let mut rest = args.iter();
        while let Some(flag) = rest.next() {
            if flag == "--prebuilt" {
                parsed.prebuilt = true;
                continue;
            }
            let value = rest.next().with_context(|| usage.to_owned())?;
            match flag.as_str() {
                "--repeats" => {
                    parsed.repeats = value
                        .parse()
                        .ok()
                        .filter(|n| *n >= 1)
                        .with_context(|| format!("--repeats {value}: expected a count >= 1"))?;
                }
                "--into" => parsed.into = Some(PathBuf::from(value)),
                "--only" => parsed.only = Some(value.clone()),
                _ => bail!("{usage}"),
            }
        }
        Ok(parsed)
    }
}

/// The entries of `all` that `--only` names (every one without it), by `name`; an error with
/// `usage` where it names none.
pub(crate) fn chosen<'a, T>(
    all: &'a [T],
    name: fn(&T) -> &str,
    only: Option<&str>,
    usage: &str,
) -> Result<Vec<&'a T>> {
    let picked: Vec<&T> = all
        .iter()
        .filter(|p| only.is_none_or(|o| o == name(p)))
        .collect();
    if picked.is_empty() {
        bail!("--only: no program `{}`; {usage}", only.unwrap_or_default());
    }
    Ok(picked)
}

/// `cargo xtask mpi-experiment apps [--repeats N] [--into DIR] [--only APP]`.
pub fn experiment(args: &[String]) -> Result<()> {
    let usage =
        "usage: cargo xtask mpi-experiment apps [--repeats N] [--into DIR] [--only meep|cp2k|qe]";
    let ExperimentArgs {
        repeats,
        into,
        only,
        prebuilt,
    } = ExperimentArgs::parse(args, usage)?;
    if prebuilt {
        bail!(
            "--prebuilt: the applications come from Debian; only `scaling` and `steps-ranks` run prebuilt"
        );
    }
    let apps: Vec<&App> = APPS
        .iter()
        .filter(|a| only.as_deref().is_none_or(|o| o == a.name))
        .collect();
    if apps.is_empty() {
        bail!(
            "--only: no application `{}`; {usage}",
            only.unwrap_or_default()
        );
    }
    let tools = build_tools()?;
    let missing: Vec<&str> = apps
        .iter()
        .filter(|a| !on_path(a.program))
        .map(|a| a.package)
        .collect();
    if !missing.is_empty() {
        apt_install(&missing)?;
    }
    run_cmd(crate::cargo().args(["build", "-p", "yosoku-cli", "-p", "yosoku-plugin-mpi-timer"]))?;
    let work = target_dir().join("mpi-experiment/apps");
    let data = into.unwrap_or_else(|| work.join("data/mpi-apps"));
    let data = if data.is_absolute() {
        data
    } else {
        std::env::current_dir()?.join(data)
    };
    let yosoku = crate::yosoku_binary();
    for app in &apps {
        let dir = data.join(app.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .with_context(|| format!("cannot remove {}", dir.display()))?;
        }
        // Alternating reduced and full runs, so that a drift of the machine over the experiment
        // touches both alike.
        for repeat in 1..=repeats {
            for (kind, steps) in [("reduced", app.reduced_steps), ("full", app.full_steps)] {
                let logs = dir.join(kind).join(format!("{kind}-{repeat}"));
                let input = (app.input)(&work, steps)?;
                let steps_key = if app.iteration_per_step {
                    format!(", steps = {steps}")
                } else {
                    String::new()
                };
                println!(
                    "\n== {} {kind} {repeat}/{repeats}: {steps} steps on {RANKS} ranks",
                    app.name
                );
                run_measurement(
                    &work,
                    &format!(
                        "program = {:?}, args = {:?}, ranks = {RANKS}, binding = \"core\", interposer = {:?}, log_dir = {:?}{steps_key}, mpirun_args = [\"-x\", \"OMP_NUM_THREADS=1\"], timeout_secs = 900",
                        which(app.program)?,
                        (app.args)(&input, steps),
                        tools.join(INTERPOSER).display().to_string(),
                        logs.display().to_string(),
                    ),
                )?;
                gzip_logs(&logs)?;
            }
        }
        write_environment(&dir, app, repeats)?;
    }
    for app in &apps {
        let name = format!("mpi-{}.toml", app.name);
        let text = std::fs::read_to_string(repo_root().join("pipelines").join(&name))?;
        let text = text.replace("\"data/mpi-apps/", &format!("\"{}/", data.display()));
        let text = keep_repeats(&text, repeats);
        let file = work.join(&name);
        std::fs::write(&file, text)?;
        println!("\n== {name} on the new measurements");
        run_cmd(
            Command::new(&yosoku).arg("run").arg(&file).arg("-o").arg(
                work.join("results")
                    .join(Path::new(&name).with_extension("")),
            ),
        )?;
    }
    println!("\nlogs: {}", data.display());
    Ok(())
}

/// The pipeline's text without the sources and steps of reduced runs past the `repeats` measured
/// (the committed pipelines use five), and without the steps that combine more repeats than
/// were measured (all of them below two): blocks are separated by blank lines.
fn keep_repeats(text: &str, repeats: u32) -> String {
    let kept = text
        .split("\n\n")
        .filter(|block| {
            let unmeasured = (repeats + 1..=9).any(|k| {
                block.contains(&format!("[sources.reduced_{k}]"))
                    || block.contains(&format!("id = \"repeat_{k}\""))
                    || block.contains(&format!("id = \"combined_{k}\""))
            });
            let nothing_to_combine = repeats < 2 && block.contains("combine_repeats = true");
            !unmeasured && !nothing_to_combine
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    // The pooled warm-up's list of repeats, less those not measured (one left: no pooling).
    let mut out = kept;
    for k in repeats + 1..=9 {
        out = out.replace(&format!(", \"reduced_{k}.mpi_blocks\""), "");
    }
    if repeats < 2 {
        out = out
            .lines()
            .filter(|l| !l.starts_with("repeats = "))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
    }
    out
}

pub(crate) fn on_path(program: &str) -> bool {
    which(program).is_ok()
}

/// The absolute path of `program` on the PATH.
pub(crate) fn which(program: &str) -> Result<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
        .with_context(|| format!("`{program}` is not on the PATH"))
}

/// Replaces each `rank-<r>.tsv` in `dir` by `rank-<r>.tsv.gz` (the importer reads both).
pub(crate) fn gzip_logs(dir: &Path) -> Result<()> {
    use std::io::Write;
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "tsv") {
            let text = std::fs::read(&path)?;
            let gz = path.with_extension("tsv.gz");
            let mut out = flate2::write::GzEncoder::new(
                std::fs::File::create(&gz)?,
                flate2::Compression::best(),
            );
            out.write_all(&text)?;
            out.finish()?;
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// What `program args` printed, trimmed; empty where it could not run.
pub(crate) fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The Open MPI that runs the experiment: Debian's package version, else what `mpirun` says.
pub(crate) fn open_mpi_version() -> String {
    let output = command_output;
    let version = output("dpkg-query", &["-W", "-f", "${Version}", "openmpi-bin"]);
    if !version.is_empty() {
        return version;
    }
    output("mpirun", &["--version"])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The xtask command this process runs, as typed after `cargo xtask`.
pub(crate) fn xtask_command() -> String {
    std::env::args().skip(1).collect::<Vec<_>>().join(" ")
}

/// This machine's CPU model, as /proc/cpuinfo names it.
pub(crate) fn cpu_model() -> String {
    command_output(
        "sh",
        &["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
    )
    .trim()
    .to_owned()
}

/// Runs `pipelines/<name>` on new measurements: its `"<prefix>` data paths pointed into `data`
/// where `data` holds their directory, the others at the repository's committed data (an
/// experiment of one program, `--only`, beside the rest as committed), the bundle written to
/// `work/results/<name without .toml>`.
pub(crate) fn run_on_new_data(name: &str, prefix: &str, data: &Path, work: &Path) -> Result<()> {
    run_on_new_data_in(
        &repo_root().join("pipelines").join(name),
        prefix,
        data,
        work,
    )
}

/// [`run_on_new_data`] with the pipeline file `pipeline` (its name kept).
pub(crate) fn run_on_new_data_in(
    pipeline: &Path,
    prefix: &str,
    data: &Path,
    work: &Path,
) -> Result<()> {
    let text = std::fs::read_to_string(pipeline)?;
    let (text, committed) = point_data_at(&text, prefix, data, &repo_root().join("pipelines"));
    if !committed.is_empty() {
        println!(
            "(not measured here, read as committed: {})",
            committed.join(", ")
        );
    }
    let name = pipeline
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("pipeline.toml");
    let file = work.join(name);
    std::fs::write(&file, text)?;
    println!("\n== {name} on the new measurements");
    run_cmd(
        Command::new(crate::yosoku_binary())
            .arg("run")
            .arg(&file)
            .arg("-o")
            .arg(
                work.join("results")
                    .join(Path::new(name).with_extension("")),
            ),
    )
}

/// `text` (a pipeline file) with each `"<prefix><dir>...` path pointed into `data` where `data`
/// holds `<dir>`, else into `pipelines` (the committed data; the pipeline file moves, so both
/// absolute); and the directories left as committed.
fn point_data_at(text: &str, prefix: &str, data: &Path, pipelines: &Path) -> (String, Vec<String>) {
    let quoted = format!("\"{prefix}");
    let mut out = String::with_capacity(text.len());
    let mut committed = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&quoted) {
        out.push_str(&rest[..=at]);
        let path = &rest[at + quoted.len()..];
        let dir = path.split(['/', '"']).next().unwrap_or_default();
        if data.join(dir).exists() {
            out.push_str(&format!("{}/", data.display()));
        } else {
            out.push_str(&format!("{}/{prefix}", pipelines.display()));
            if !committed.iter().any(|c| c == dir) {
                committed.push(dir.to_owned());
            }
        }
        rest = path;
    }
    out.push_str(rest);
    (out, committed)
}

/// `environment.txt` beside an application's logs: what ran, where, when.
fn write_environment(dir: &Path, app: &App, repeats: u32) -> Result<()> {
    let output = crate::mpi_apps::command_output;
    let cpu = crate::mpi_apps::cpu_model();
    let text = format!(
        "application: {} ({} {})\nopen mpi: {}\nranks: {RANKS}, --bind-to core, OMP_NUM_THREADS=1\nsteps: reduced {}, full {}; {repeats} repeats of each, alternating\nmachine: {} vCPUs, {}\nmeasured: {}\ncommand: cargo xtask {}\n",
        app.program,
        app.package,
        output("dpkg-query", &["-W", "-f", "${Version}", app.package]),
        open_mpi_version(),
        app.reduced_steps,
        app.full_steps,
        output("nproc", &[]),
        cpu.trim(),
        output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]),
        xtask_command(),
    );
    std::fs::write(dir.join("environment.txt"), text)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--prebuilt` is a flag among the value options; the experiments that need what Debian
    /// installs, or tools it does not check, refuse it before doing anything.
    #[test]
    fn prebuilt_is_a_flag_and_only_two_experiments_take_it() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let parsed = ExperimentArgs::parse(
            &args(&["--prebuilt", "--repeats", "2", "--only", "meep"]),
            "u",
        )
        .unwrap();
        assert!(parsed.prebuilt);
        assert_eq!((parsed.repeats, parsed.only.as_deref()), (2, Some("meep")));
        assert!(!ExperimentArgs::parse(&[], "u").unwrap().prebuilt);
        let e = experiment(&args(&["--prebuilt"])).unwrap_err().to_string();
        assert!(
            e.contains("only `scaling` and `steps-ranks` run prebuilt"),
            "{e}"
        );
        let e = crate::mpi_drift::experiment(&args(&["--prebuilt"]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("only `scaling` and `steps-ranks` run prebuilt"),
            "{e}"
        );
    }

    /// The directories measured are read from the new data, the others as committed.
    #[test]
    fn new_data_replaces_only_what_was_measured() {
        let data = std::env::temp_dir().join(format!("yosoku-xtask-{}", std::process::id()));
        std::fs::create_dir_all(data.join("himeno")).unwrap();
        let text = "a = { dir = \"data/x/himeno/short\" }\nb = { dir = \"data/x/meep\" }\n";
        let (out, committed) = point_data_at(text, "data/x/", data.as_path(), Path::new("/repo/p"));
        assert_eq!(
            out,
            format!(
                "a = {{ dir = \"{}/himeno/short\" }}\nb = {{ dir = \"/repo/p/data/x/meep\" }}\n",
                data.as_path().display()
            )
        );
        assert_eq!(committed, ["meep"]);
        std::fs::remove_dir_all(&data).unwrap();
    }

    /// Fewer repeats measured than the committed pipelines read: their sources, steps and
    /// entries in the pooled warm-up's list go; with one repeat, the pooling goes.
    #[test]
    fn a_pipeline_keeps_the_repeats_measured() {
        let text = std::fs::read_to_string(repo_root().join("pipelines/mpi-meep.toml")).unwrap();
        let two = keep_repeats(&text, 2);
        assert!(!two.contains("reduced_3"), "{two}");
        assert!(two.contains("repeats = [\"reduced_1.mpi_blocks\", \"reduced_2.mpi_blocks\"]"));
        let one = keep_repeats(&text, 1);
        assert!(
            !one.contains("repeats = ") && !one.contains("reduced_2"),
            "{one}"
        );
        assert!(one.contains("id = \"repeat_1\"") && !one.contains("combine_repeats"));
        // Three measured: the combination of five goes, that of three stays.
        let three = keep_repeats(&text, 3);
        assert!(three.contains("id = \"combined_3\"") && !three.contains("combined_5"));
    }
}
