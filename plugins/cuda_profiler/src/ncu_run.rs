//! Collector `ncu_run`: runs the user's CUDA program under Nsight Compute and imports what it
//! measured, as `ncu` or `rocprof` users expect of a profiler (README.md, "Profiling a program").
//!
//! `ncu --csv --page raw --metrics <set> --log-file <dir>/ncu.csv <program> <args>`: the metric
//! set is the one the counter models and the device-prediction models read ([`DEFAULT_COUNTERS`],
//! the `ncu_metrics` key changes it); `--kernel-name`, `--launch-skip`, `--launch-count` filter the
//! launches. ncu's report goes to its log file and the program's own output to
//! `program-output.txt`: they never mix. The command line is kept in `command.txt` and noted in
//! the bundle's manifest. With `nsys` there (or `nsys_trace = "yes"`), a second run under
//! `nsys profile --trace=cuda` gives the kernels' timeline (`nsys stats --report
//! cuda_gpu_trace`, read by [`crate::nsys::read_gpu_trace`]) as `spans`.
//!
//! Failures, each one error and no tables: ncu or nsys missing (where it looked), the program
//! failing (its last lines), no launch matching the filter, ncu refused the counters
//! (`ERR_NVGPUCTRPERM`: how to allow profiling), a timeout.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use yosoku_plugin_sdk::process::{self, Finished, RunError};
use yosoku_plugin_sdk::{Config, PluginError};
use yosoku_tables::metrics as m;

/// What the counter models (docs/methods.md, sections 2 and 3) and the device-prediction models
/// (section 6) read of a launch: each canonical counter of the registry
/// (`yosoku_tables::metrics`) with the raw ncu metric collected for it, which
/// crates/plugin/profiler_import/metrics.toml maps back to it (checked by a test).
pub const DEFAULT_COUNTERS: &[(&str, &str)] = &[
    (m::DURATION, "gpu__time_duration.sum"),
    (m::ELAPSED_CYCLES_SM, "sm__cycles_elapsed.sum"),
    (m::ACTIVE_CYCLES, "sm__cycles_active.sum"),
    (m::ACTIVE_WARPS, "sm__warps_active.sum"),
    // The physics model's achieved share of the possible warps (a percentage, read as 0-1).
    (
        m::ACHIEVED_OCCUPANCY,
        "sm__warps_active.avg.pct_of_peak_sustained_active",
    ),
    (m::INST_EXECUTED, "smsp__inst_executed.sum"),
    (m::INST_ISSUED, "smsp__inst_issued.sum"),
    (m::WARPS_LAUNCHED, "smsp__warps_launched.sum"),
    (
        m::FLOP_COUNT_SP_ADD,
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    ),
    (
        m::FLOP_COUNT_SP_MUL,
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    ),
    (
        m::FLOP_COUNT_SP_FMA,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    ),
    (
        m::FLOP_COUNT_DP_ADD,
        "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    ),
    (
        m::FLOP_COUNT_DP_MUL,
        "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    ),
    (m::DRAM_READ_BYTES, "dram__bytes_read.sum"),
    (m::DRAM_WRITE_BYTES, "dram__bytes_write.sum"),
    (m::L2_READ_TRANSACTIONS, "lts__t_sectors_op_read.sum"),
    (m::L2_WRITE_TRANSACTIONS, "lts__t_sectors_op_write.sum"),
    (m::GLD_BYTES, "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"),
    (m::GST_BYTES, "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"),
    (
        m::GLD_REQUEST,
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    ),
    (
        m::GST_REQUEST,
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    ),
    (m::SHARED_LOAD, "smsp__sass_inst_executed_op_shared_ld.sum"),
    (m::SHARED_STORE, "smsp__sass_inst_executed_op_shared_st.sum"),
    (m::BRANCH, "smsp__inst_executed_op_branch.sum"),
    (m::GRID_SIZE, "launch__grid_size"),
    (m::BLOCK_SIZE, "launch__block_size"),
    (m::GRID_X, "launch__grid_dim_x"),
    (m::GRID_Y, "launch__grid_dim_y"),
    (m::BLOCK_X, "launch__block_dim_x"),
    (m::BLOCK_Y, "launch__block_dim_y"),
    (m::REGISTERS_PER_THREAD, "launch__registers_per_thread"),
    (
        m::STATIC_SHARED_MEMORY,
        "launch__shared_mem_per_block_static",
    ),
];

/// The ncu metrics collected unless `ncu_metrics` says otherwise: those of [`DEFAULT_COUNTERS`].
pub fn default_metrics() -> Vec<String> {
    DEFAULT_COUNTERS
        .iter()
        .map(|(_, ncu)| (*ncu).to_owned())
        .collect()
}

/// ncu's report, beside the program's output.
pub const NCU_LOG: &str = "ncu.csv";
pub const PROGRAM_OUTPUT: &str = "program-output.txt";
pub const COMMAND_FILE: &str = "command.txt";
/// The nsys report and its kernel trace (`nsys stats` names the CSV after the report).
const NSYS_REPORT: &str = "nsys-trace";

/// Lines of a failed program's output shown in the error.
const TAIL_LINES: usize = 12;

/// Whether to take the nsys timeline too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NsysTrace {
    /// When nsys is found.
    Auto,
    Yes,
    No,
}

/// A checked `ncu_run` configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuRun {
    pub ncu: PathBuf,
    /// nsys, when the timeline is taken.
    pub nsys: Option<PathBuf>,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub metrics: Vec<String>,
    pub kernel_name: Option<String>,
    pub launch_skip: Option<u64>,
    pub launch_count: Option<u64>,
    /// ncu's `--clock-control` (`base`: clocks locked at base, ncu's own default; `none`: left
    /// as the driver runs them, boost included); not passed when not given.
    pub clock_control: Option<String>,
    pub timeout: Duration,
    /// Where the files go: a new or empty directory, kept; else a temporary one.
    pub log_dir: Option<PathBuf>,
}

/// Where a tool was looked for: each directory of `PATH`, then `/usr/local/cuda*/bin` (newest
/// name first).
pub fn tool_dirs(path_var: Option<OsString>, cuda_root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let mut cuda: Vec<PathBuf> = std::fs::read_dir(cuda_root)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("cuda"))
                .map(|e| e.path().join("bin"))
                .collect()
        })
        .unwrap_or_default();
    cuda.sort();
    cuda.reverse();
    dirs.extend(cuda);
    dirs
}

/// `name` in the first of `dirs` that has it.
pub fn find_in(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The tool: `given` (a path or a name to look up) or `name` looked up; an error says where it
/// looked and what to install.
pub fn find_tool(name: &str, given: Option<&str>, key: &str) -> Result<PathBuf, PluginError> {
    let dirs = tool_dirs(std::env::var_os("PATH"), Path::new("/usr/local"));
    match given {
        Some(g) if g.contains('/') => {
            let p = PathBuf::from(g);
            if p.is_file() {
                Ok(p)
            } else {
                Err(PluginError::new(format!("{key}: {g} is not a file")))
            }
        }
        _ => {
            let wanted = given.unwrap_or(name);
            find_in(wanted, &dirs).ok_or_else(|| {
                PluginError::new(format!(
                    "{key}: `{wanted}` not found on PATH or under /usr/local/cuda*/bin; install {} (part of the CUDA toolkit) or give its path in `{key}`",
                    if name == "ncu" { "Nsight Compute" } else { "Nsight Systems" }
                ))
            })
        }
    }
}

fn quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// A command line as a shell would take it.
pub fn shown(program: &Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn optional_count(config: &Config, key: &str) -> Result<Option<u64>, PluginError> {
    config
        .opt_integer(key)?
        .map(|v| {
            u64::try_from(v)
                .map_err(|_| PluginError::new(format!("{key}: expected 0 or more, found {v}")))
        })
        .transpose()
}

impl NcuRun {
    /// Checks a configuration; finds the tools.
    pub fn from(config: &Config) -> Result<Self, PluginError> {
        let program = config.path("program")?;
        if !program.is_file() {
            return Err(PluginError::new(format!(
                "program: {} is not a file",
                program.display()
            )));
        }
        let ncu = find_tool("ncu", config.opt_string("ncu")?.as_deref(), "ncu")?;
        let metrics = config.string_list("ncu_metrics")?;
        if metrics.is_empty()
            || metrics
                .iter()
                .any(|m| m.trim().is_empty() || m.contains(','))
        {
            return Err(PluginError::new(
                "ncu_metrics: expected ncu metric names, one per entry (none empty, no commas)",
            ));
        }
        let timeout = config.float("timeout_secs")?;
        if !(timeout > 0.0 && timeout.is_finite()) {
            return Err(PluginError::new(format!(
                "timeout_secs: expected seconds > 0, found {timeout}"
            )));
        }
        let launch_count = optional_count(config, "launch_count")?;
        if launch_count == Some(0) {
            return Err(PluginError::new("launch_count: expected 1 or more"));
        }
        let clock_control = config.opt_string("clock_control")?;
        if let Some(c) = &clock_control
            && c != "base"
            && c != "none"
        {
            return Err(PluginError::new(format!(
                "clock_control: `{c}`, expected base (ncu's default: clocks locked at base) or none (clocks as the driver runs them)"
            )));
        }
        let log_dir = config.opt_string("log_dir")?.map(PathBuf::from);
        if let Some(dir) = &log_dir
            && dir.exists()
            && std::fs::read_dir(dir)
                .map_err(|e| PluginError::io(dir, &e))?
                .next()
                .is_some()
        {
            return Err(PluginError::new(format!(
                "log_dir: {} is not empty; give a new or empty directory",
                dir.display()
            )));
        }
        let nsys_given = config.opt_string("nsys")?;
        let nsys = match config.string("nsys_trace")?.as_str() {
            "auto" => find_tool("nsys", nsys_given.as_deref(), "nsys").ok(),
            "yes" => Some(find_tool("nsys", nsys_given.as_deref(), "nsys")?),
            "no" => None,
            other => {
                return Err(PluginError::new(format!(
                    "nsys_trace: `{other}`, expected auto, yes or no"
                )));
            }
        };
        Ok(Self {
            ncu,
            nsys,
            program,
            args: config.string_list("args")?,
            metrics,
            kernel_name: config.opt_string("kernel_name")?,
            launch_skip: optional_count(config, "launch_skip")?,
            launch_count,
            clock_control,
            timeout: Duration::from_secs_f64(timeout),
            log_dir,
        })
    }

    /// ncu's arguments, writing its report to `log`.
    pub fn ncu_args(&self, log: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = ["--csv", "--page", "raw", "--metrics"]
            .into_iter()
            .map(OsString::from)
            .collect();
        a.push(self.metrics.join(",").into());
        if let Some(k) = &self.kernel_name {
            a.push("--kernel-name".into());
            a.push(k.into());
        }
        if let Some(n) = self.launch_skip {
            a.push("--launch-skip".into());
            a.push(n.to_string().into());
        }
        if let Some(n) = self.launch_count {
            a.push("--launch-count".into());
            a.push(n.to_string().into());
        }
        if let Some(c) = &self.clock_control {
            a.push("--clock-control".into());
            a.push(c.into());
        }
        a.push("--log-file".into());
        a.push(log.into());
        a.push(self.program.clone().into());
        a.extend(self.args.iter().map(OsString::from));
        a
    }

    /// `nsys profile` writing `<dir>/nsys-trace.nsys-rep`, then `nsys stats` writing its CUDA
    /// kernel trace beside it.
    pub fn nsys_args(&self, dir: &Path) -> (Vec<OsString>, Vec<OsString>) {
        let report = dir.join(NSYS_REPORT);
        let mut profile: Vec<OsString> = [
            "profile",
            "--trace=cuda",
            "--sample=none",
            "--cpuctxsw=none",
            "--force-overwrite=true",
            "--output",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        profile.push(report.clone().into());
        profile.push(self.program.clone().into());
        profile.extend(self.args.iter().map(OsString::from));
        let mut stats: Vec<OsString> = [
            "stats",
            "--report",
            "cuda_gpu_trace",
            "--format",
            "csv",
            "--force-export=true",
            "--output",
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        stats.push(report.clone().into());
        stats.push(report.with_extension("nsys-rep").into());
        (profile, stats)
    }

    /// What a filter of launches says, for the error when nothing matched.
    fn filter_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(k) = &self.kernel_name {
            parts.push(format!("kernel_name = {k:?}"));
        }
        if let Some(n) = self.launch_skip {
            parts.push(format!("launch_skip = {n}"));
        }
        if let Some(n) = self.launch_count {
            parts.push(format!("launch_count = {n}"));
        }
        if parts.is_empty() {
            "no filter".to_owned()
        } else {
            parts.join(", ")
        }
    }

    /// Runs the program under ncu (and nsys) in `dir`; the paths of ncu's report and of the
    /// kernel trace, and the notes for the manifest.
    pub fn run(&self, dir: &Path) -> Result<Ran, PluginError> {
        let log = dir.join(NCU_LOG);
        let args = self.ncu_args(&log);
        let command = shown(&self.ncu, &args);
        let mut commands = vec![command.clone()];
        let finished = run_tool(&self.ncu, &args, &command, self.timeout)?;
        let report = std::fs::read_to_string(&log).unwrap_or_default();
        write(
            &dir.join(PROGRAM_OUTPUT),
            &format!("{}{}", finished.stdout, finished.stderr),
        )?;
        check_ncu(&finished, &report, &command, &self.filter_text())?;
        let mut trace = None;
        if let Some(nsys) = &self.nsys {
            let (profile, stats) = self.nsys_args(dir);
            for args in [profile, stats] {
                let command = shown(nsys, &args);
                let finished = run_tool(nsys, &args, &command, self.timeout)?;
                if !finished.status.success() {
                    return Err(PluginError::new(format!(
                        "nsys: `{command}` failed ({}){}{}",
                        finished.status,
                        process::last_lines(&finished.stdout, TAIL_LINES),
                        process::last_lines(&finished.stderr, TAIL_LINES)
                    )));
                }
                commands.push(command);
            }
            trace = Some(trace_file(dir)?);
        }
        write(
            &dir.join(COMMAND_FILE),
            &format!("{}\n", commands.join("\n")),
        )?;
        Ok(Ran {
            report: log,
            trace,
            commands,
            wall: finished.wall,
        })
    }
}

/// What a run left.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub report: PathBuf,
    pub trace: Option<PathBuf>,
    /// The command lines, in order.
    pub commands: Vec<String>,
    pub wall: Duration,
}

fn write(path: &Path, text: &str) -> Result<(), PluginError> {
    std::fs::write(path, text).map_err(|e| PluginError::io(path, &e))
}

fn run_tool(
    tool: &Path,
    args: &[OsString],
    command: &str,
    timeout: Duration,
) -> Result<Finished, PluginError> {
    process::run(Command::new(tool).args(args), timeout).map_err(|e| match e {
        RunError::Start(e) => PluginError::new(format!("cannot start `{command}`: {e}")),
        RunError::Timeout { stdout, stderr } => PluginError::new(format!(
            "`{command}` ran longer than timeout_secs = {} and was killed; its last lines:{}{}",
            timeout.as_secs_f64(),
            process::last_lines(&stdout, TAIL_LINES),
            process::last_lines(&stderr, TAIL_LINES)
        )),
        RunError::Wait(e) => PluginError::new(format!("waiting for `{command}`: {e}")),
    })
}

/// ncu's verdict on a run, from its exit status, its report (the log file) and the program's
/// output: refused counters, a failed program, or no launch profiled are errors.
pub fn check_ncu(
    finished: &Finished,
    report: &str,
    command: &str,
    filter: &str,
) -> Result<(), PluginError> {
    let all = format!("{report}\n{}\n{}", finished.stdout, finished.stderr);
    if all.contains("ERR_NVGPUCTRPERM") {
        return Err(PluginError::new(format!(
            "ncu: no permission to read the GPU's performance counters (ERR_NVGPUCTRPERM) running `{command}`. Run as root (or with CAP_SYS_ADMIN), or allow every user: put `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file under /etc/modprobe.d/ and reload the nvidia module or reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM); in a container, start it with --cap-add=SYS_ADMIN"
        )));
    }
    let errors: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("==ERROR=="))
        .collect();
    if !finished.status.success() {
        return Err(PluginError::new(format!(
            "ncu: `{command}` failed ({}); the program's last lines:{}{}{}",
            finished.status,
            process::last_lines(
                &format!("{}{}", finished.stdout, finished.stderr),
                TAIL_LINES
            ),
            if errors.is_empty() { "" } else { "\nncu said:" },
            errors
                .iter()
                .map(|l| format!("\n  {l}"))
                .collect::<String>()
        )));
    }
    // The raw page: a header row starting `"ID"`, a units row, then a row per launch (`"0",...`).
    let mut after_header = report.lines().skip_while(|l| !l.starts_with("\"ID\""));
    let has_rows = after_header.next().is_some()
        && after_header.any(|l| {
            l.strip_prefix('"')
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        });
    if !has_rows || report.contains("No kernels were profiled") {
        return Err(PluginError::new(format!(
            "ncu: `{command}` profiled no kernel launch ({filter}): the program launched no kernel that matches{}",
            if errors.is_empty() {
                String::new()
            } else {
                format!(
                    "; ncu said:{}",
                    errors
                        .iter()
                        .map(|l| format!("\n  {l}"))
                        .collect::<String>()
                )
            }
        )));
    }
    Ok(())
}

/// The CSV `nsys stats` wrote for the report in `dir` (its name carries the report's).
fn trace_file(dir: &Path) -> Result<PathBuf, PluginError> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| PluginError::io(dir, &e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(NSYS_REPORT) && n.contains("cuda_gpu_trace") && n.ends_with(".csv")
            })
        })
        .collect();
    found.sort();
    found.pop().ok_or_else(|| {
        PluginError::new(format!(
            "nsys stats wrote no cuda_gpu_trace CSV in {}",
            dir.display()
        ))
    })
}

#[cfg(test)]
mod tests;
