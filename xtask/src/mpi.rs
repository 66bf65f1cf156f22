//! Open MPI, the MPI tools (the timer interposer and himeno_mpi, built with `mpicc`) and
//! `cargo xtask mpi-experiment`, which re-measures the MPI pipelines' runs on this machine.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::system::{apt_install, is_root};
use crate::{repo_root, run_cmd, target_dir};

/// Where the tools are built.
pub fn tools_dir() -> PathBuf {
    target_dir().join("mpi")
}

/// The interposer library in [`tools_dir`].
pub const INTERPOSER: &str = "libyosoku_mpi_timer.so";
/// The benchmark program in [`tools_dir`].
pub const HIMENO: &str = "himeno_mpi";
/// The message-rate program of the large-log benchmark in [`tools_dir`].
pub const MESSAGE_RATE: &str = "message_rate";
/// The particle code whose cost per step drifts (tools/mpi-drift) in [`tools_dir`].
pub const DRIFT: &str = "drift_md";
/// The per-call overhead benchmark in [`tools_dir`].
const CALL_OVERHEAD: &str = "call_overhead";
/// The programs that call every wrapped MPI function (C) and each family of them (Fortran
/// through `use mpi` and `use mpi_f08`), for plugins/mpi_timer/tests/families.rs.
const FAMILY_PROGRAMS: [(&str, &str, &str); 3] = [
    ("mpicc", "families.c", "families"),
    ("mpifort", "families.f90", "families_f"),
    ("mpifort", "families_f08.f90", "families_f08"),
];

/// Installs Open MPI from Debian when `mpicc` is missing.
pub fn ensure_open_mpi() -> Result<()> {
    let missing = missing_mpi_packages(&probe_mpi());
    if missing.is_empty() {
        return Ok(());
    }
    apt_install(&missing)?;
    let still = missing_mpi_packages(&probe_mpi());
    if !still.is_empty() {
        anyhow::bail!(
            "after installing {}, the MPI tools still cannot be built: {} missing",
            missing.join(" "),
            still.join(" ")
        );
    }
    Ok(())
}

/// What the MPI tools need, as found on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MpiProbe {
    /// `mpicc` runs (Debian: openmpi-bin).
    mpicc: bool,
    /// `mpirun` runs (openmpi-bin).
    mpirun: bool,
    /// `mpicc` compiles a file that includes mpi.h (libopenmpi-dev): a machine where an MPI
    /// application was installed often has the runtime and the wrapper, not the header.
    header: bool,
    /// `mpifort` runs: Open MPI's wrapper is there, the Fortran compiler (gfortran) may not be.
    fortran: bool,
}

fn probe_mpi() -> MpiProbe {
    let runs = |program: &str| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mpicc = runs("mpicc");
    let header = mpicc && {
        let dir = std::env::temp_dir().join(format!("yosoku-mpi-probe-{}", std::process::id()));
        let source = dir.join("probe.c");
        let ok = std::fs::create_dir_all(&dir).is_ok()
            && std::fs::write(
                &source,
                "#include <mpi.h>\nint main(void) { return MPI_SUCCESS; }\n",
            )
            .is_ok()
            && Command::new("mpicc")
                .arg("-fsyntax-only")
                .arg(&source)
                .output()
                .is_ok_and(|o| o.status.success());
        let _ = std::fs::remove_dir_all(&dir);
        ok
    };
    MpiProbe {
        mpicc,
        mpirun: runs("mpirun"),
        header,
        fortran: runs("mpifort"),
    }
}

/// The Debian packages to install for what `probe` lacks.
fn missing_mpi_packages(probe: &MpiProbe) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if !probe.mpicc || !probe.mpirun {
        missing.push("openmpi-bin");
    }
    if !probe.header {
        missing.push("libopenmpi-dev");
    }
    if !probe.fortran {
        missing.push("gfortran");
    }
    missing
}

/// What Open MPI needs to run here: as root it refuses to start unless told twice.
pub fn mpi_env(cmd: &mut Command) -> &mut Command {
    if is_root() {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    cmd
}

/// Builds the interposer and himeno_mpi into [`tools_dir`] with `mpicc` and returns it.
pub fn build_tools() -> Result<PathBuf> {
    ensure_open_mpi()?;
    let out = tools_dir();
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let root = repo_root();
    run_cmd(
        Command::new("mpicc")
            .args(["-O2", "-Wall", "-shared", "-fPIC", "-o"])
            .arg(out.join(INTERPOSER))
            .arg(root.join("plugins/mpi_timer/interposer/yosoku_mpi_timer.c"))
            .arg("-ldl"),
    )?;
    run_cmd(
        Command::new("mpicc")
            .args(["-O3", "-Wall", "-o"])
            .arg(out.join(HIMENO))
            .arg(root.join("tools/himeno-mpi/himeno_mpi.c")),
    )?;
    run_cmd(
        Command::new("mpicc")
            .args(["-O2", "-Wall", "-o"])
            .arg(out.join(MESSAGE_RATE))
            .arg(root.join("tools/mpi-message-rate/message_rate.c")),
    )?;
    run_cmd(
        Command::new("mpicc")
            .args(["-O2", "-Wall", "-o"])
            .arg(out.join(DRIFT))
            .arg(root.join("tools/mpi-drift/drift_md.c"))
            .arg("-lm"),
    )?;
    run_cmd(
        Command::new("mpicc")
            .args(["-O2", "-Wall", "-o"])
            .arg(out.join(CALL_OVERHEAD))
            .arg(root.join("plugins/mpi_timer/interposer/call_overhead.c")),
    )?;
    let programs = root.join("plugins/mpi_timer/tests/programs");
    for (compiler, source, binary) in FAMILY_PROGRAMS {
        run_cmd(
            Command::new(compiler)
                .args(["-O1", "-Wall", "-o"])
                .arg(out.join(binary))
                .arg(programs.join(source)),
        )?;
    }
    Ok(out)
}

/// One measured run of the experiment.
struct Measure {
    /// Its directory under the data directory: `<setting>/<run>`.
    dir: &'static str,
    ranks: u32,
    binding: &'static str,
    iterations: u32,
    comm_only: bool,
}

/// The grid every run solves (NX NY NZ): about 16 ms an iteration on two cores of the
/// development VM, so full runs take seconds and reduced runs a fraction of one.
const GRID: [&str; 3] = ["193", "97", "97"];
/// Iterations of a full run and of a reduced run (10 %).
pub const FULL_ITERATIONS: u32 = 400;
const REDUCED_ITERATIONS: u32 = 40;

const fn measure(dir: &'static str, ranks: u32, binding: &'static str, iterations: u32) -> Measure {
    Measure {
        dir,
        ranks,
        binding,
        iterations,
        comm_only: false,
    }
}

/// The runs the MPI pipelines read (pipelines/data/mpi/README.md).
const MEASURES: &[Measure] = &[
    measure("reduced/2-ranks-core", 2, "core", REDUCED_ITERATIONS),
    measure("full/2-ranks-core", 2, "core", FULL_ITERATIONS),
    Measure {
        comm_only: true,
        ..measure("comm-only/2-ranks-core", 2, "core", REDUCED_ITERATIONS)
    },
    measure(
        "reduced/3-ranks-shared",
        3,
        "core:overload-allowed",
        REDUCED_ITERATIONS,
    ),
    measure(
        "full/3-ranks-shared",
        3,
        "core:overload-allowed",
        FULL_ITERATIONS,
    ),
    Measure {
        comm_only: true,
        ..measure(
            "comm-only/3-ranks-shared",
            3,
            "core:overload-allowed",
            REDUCED_ITERATIONS,
        )
    },
    measure("reduced/1-rank", 1, "core", REDUCED_ITERATIONS),
    measure("full/1-rank", 1, "core", FULL_ITERATIONS),
    measure(
        "reduced/4-ranks-shared",
        4,
        "core:overload-allowed",
        REDUCED_ITERATIONS,
    ),
    measure(
        "full/4-ranks-shared",
        4,
        "core:overload-allowed",
        FULL_ITERATIONS,
    ),
];

/// `cargo xtask mpi-experiment [--into DIR]`: runs every measurement of [`MEASURES`] through the
/// `mpi_timer` plugin's `run` collector, keeping the logs in DIR (default
/// target/mpi-experiment/data/mpi), then runs the MPI pipelines on them.
pub fn experiment(args: &[String]) -> Result<()> {
    let into = match args {
        [] => None,
        [flag, dir] if flag == "--into" => Some(PathBuf::from(dir)),
        _ => bail!("usage: cargo xtask mpi-experiment [--into DIR]"),
    };
    let tools = build_tools()?;
    run_cmd(crate::cargo().args(["build", "--workspace"]))?;
    let work = target_dir().join("mpi-experiment");
    let data = into.unwrap_or_else(|| work.join("data/mpi"));
    let data = if data.is_absolute() {
        data
    } else {
        std::env::current_dir()?.join(data)
    };
    if data.exists() {
        for m in MEASURES {
            let dir = data.join(m.dir);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("cannot remove {}", dir.display()))?;
            }
        }
    }
    let yosoku = crate::yosoku_binary();
    for m in MEASURES {
        let logs = data.join(m.dir);
        let mut args: Vec<String> = GRID.iter().map(|s| (*s).to_owned()).collect();
        args.push(m.iterations.to_string());
        if m.comm_only {
            args.push("comm-only".into());
        }
        println!(
            "\n== {} ({} ranks, --bind-to {}, {} iterations)",
            m.dir, m.ranks, m.binding, m.iterations
        );
        run_measurement(
            &work,
            &format!(
                "program = {:?}, args = {:?}, ranks = {}, binding = {:?}, oversubscribe = true, interposer = {:?}, log_dir = {:?}",
                tools.join(HIMENO).display().to_string(),
                args,
                m.ranks,
                m.binding,
                tools.join(INTERPOSER).display().to_string(),
                logs.display().to_string(),
            ),
        )?;
    }
    // The pipelines, reading the new logs instead of the committed ones.
    for name in MPI_PIPELINES {
        let text = std::fs::read_to_string(repo_root().join("pipelines").join(name))?;
        let text = text.replace("\"data/mpi/", &format!("\"{}/", data.display()));
        let file = work.join(name);
        std::fs::write(&file, text)?;
        println!("\n== {name} on the new measurements");
        run_cmd(
            Command::new(&yosoku).arg("run").arg(&file).arg("-o").arg(
                work.join("results")
                    .join(Path::new(name).with_extension("")),
            ),
        )?;
    }
    println!(
        "\nlogs: {}\nbundles: {}",
        data.display(),
        work.join("results").display()
    );
    Ok(())
}

/// Runs one measurement from `work`: a pipeline whose one source is the `mpi_timer` plugin's
/// `run` collector with `config` (the collector's settings, an inline table's inside).
pub fn run_measurement(work: &Path, config: &str) -> Result<()> {
    let pipeline = format!(
        "[pipeline]\nname = \"measure\"\n\n[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\nconfig = {{ {config} }}\n"
    );
    let file = work.join("measure.toml");
    std::fs::create_dir_all(work)?;
    std::fs::write(&file, pipeline)?;
    run_cmd(
        mpi_env(&mut Command::new(crate::yosoku_binary()))
            .current_dir(work)
            .arg("run")
            .arg(&file)
            .arg("-o")
            .arg(work.join("measure-bundle")),
    )
}

/// The pipelines that read data/mpi.
const MPI_PIPELINES: &[&str] = &[
    "mpi-homogeneous.toml",
    "mpi-heterogeneous.toml",
    "mpi-best-configuration.toml",
];

/// Runs `mpirun -np <ranks> --bind-to core [LD_PRELOAD=interposer] <program> <args>` and returns
/// the number the program prints after `key`.
fn timed_run(
    tools: &Path,
    ranks: &str,
    preload: bool,
    program: &str,
    args: &[&str],
    key: &str,
) -> Result<f64> {
    let logs = target_dir().join("mpi-bench-logs");
    let mut cmd = Command::new("mpirun");
    mpi_env(&mut cmd).args(["-np", ranks, "--bind-to", "core"]);
    if preload {
        cmd.arg("-x")
            .arg(format!("LD_PRELOAD={}", tools.join(INTERPOSER).display()))
            .arg("-x")
            .arg(format!("YOSOKU_MPI_LOG_DIR={}", logs.display()));
    }
    let out = cmd.arg(tools.join(program)).args(args).output()?;
    let _ = std::fs::remove_dir_all(&logs);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "{program} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.trim().parse().ok()))
        .with_context(|| format!("{program} printed no `{key}`: {stdout}"))
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// `cargo xtask bench-mpi`: the interposer's cost per MPI call (call_overhead, 2 M calls) and on
/// a whole himeno_mpi run (its own loop time), in alternating runs without and with it.
pub fn bench() -> Result<()> {
    let tools = build_tools()?;
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        without.push(timed_run(
            &tools,
            "1",
            false,
            CALL_OVERHEAD,
            &["2000000"],
            "allreduce_self_ns_per_call",
        )?);
        with.push(timed_run(
            &tools,
            "1",
            true,
            CALL_OVERHEAD,
            &["2000000"],
            "allreduce_self_ns_per_call",
        )?);
    }
    let (a, b) = (median(without), median(with));
    println!(
        "per call (5 alternating runs, median): {a:.1} ns without, {b:.1} ns with: {:.1} ns added",
        b - a
    );
    let args = ["129", "65", "65", "300"];
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        without.push(timed_run(&tools, "2", false, HIMENO, &args, "loop_secs")?);
        with.push(timed_run(&tools, "2", true, HIMENO, &args, "loop_secs")?);
    }
    let spread = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!("{lo:.4}-{hi:.4} s")
    };
    let (sw, sh) = (spread(&without), spread(&with));
    let (a, b) = (median(without), median(with));
    println!(
        "whole run, himeno_mpi {} on 2 ranks (11 alternating runs, median loop_secs): {a:.4} s without ({sw}), {b:.4} s with ({sh}): {:+.2} %",
        args.join(" "),
        100.0 * (b - a) / a
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mpicc` on the PATH is not enough: with the runtime and no headers (what an MPI
    /// application pulls in), the header's package is installed too.
    #[test]
    fn the_packages_installed_are_the_ones_missing() {
        let probe = |mpicc, mpirun, header| MpiProbe {
            mpicc,
            mpirun,
            header,
            fortran: true,
        };
        assert!(missing_mpi_packages(&probe(true, true, true)).is_empty());
        assert_eq!(
            missing_mpi_packages(&probe(true, true, false)),
            ["libopenmpi-dev"]
        );
        assert_eq!(
            missing_mpi_packages(&probe(false, false, false)),
            ["openmpi-bin", "libopenmpi-dev"]
        );
        assert_eq!(
            missing_mpi_packages(&probe(true, false, true)),
            ["openmpi-bin"]
        );
        let no_fortran = MpiProbe {
            fortran: false,
            ..probe(true, true, true)
        };
        assert_eq!(missing_mpi_packages(&no_fortran), ["gfortran"]);
    }
}
