//! Collector `run`: launches an MPI program under `mpirun` with the interposer preloaded, then
//! imports the logs it wrote.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use yosoku_plugin_sdk::PluginError;
use yosoku_plugin_sdk::process::{self, RunError};

/// What to launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub mpirun: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub ranks: u32,
    /// `--bind-to` (`core`, `core:overload-allowed`, `none`, ...).
    pub binding: String,
    /// The run's input parameters, written into every rank's log (`YOSOKU_MPI_PARAMETERS`).
    pub parameters: Option<String>,
    pub oversubscribe: bool,
    pub interposer: PathBuf,
    pub mpirun_args: Vec<String>,
    pub timeout: Duration,
}

impl Launch {
    /// The `mpirun` command line that writes the logs to `log_dir`.
    pub fn command(&self, log_dir: &Path) -> Command {
        let mut cmd = Command::new(&self.mpirun);
        cmd.arg("-np").arg(self.ranks.to_string());
        cmd.arg("--bind-to").arg(&self.binding);
        if self.oversubscribe {
            cmd.arg("--oversubscribe");
        }
        cmd.arg("-x")
            .arg(format!("LD_PRELOAD={}", self.interposer.display()));
        cmd.arg("-x")
            .arg(format!("YOSOKU_MPI_LOG_DIR={}", log_dir.display()));
        cmd.arg("-x")
            .arg(format!("YOSOKU_MPI_BINDING={}", self.binding));
        if let Some(parameters) = &self.parameters {
            cmd.arg("-x")
                .arg(format!("YOSOKU_MPI_PARAMETERS={parameters}"));
        }
        // Each line a rank writes comes prefixed with its rank and stream, so a failure can show
        // what each rank said, apart from the launcher's own banner.
        cmd.arg("--tag-output");
        cmd.args(&self.mpirun_args);
        cmd.arg(&self.program).args(&self.args);
        cmd
    }

    /// Runs the program; the logs are in `log_dir` when it returns `Ok`.
    pub fn run(&self, log_dir: &Path) -> Result<(), PluginError> {
        let shown = format!(
            "{} -np {} --bind-to {}{} {} {}",
            self.mpirun,
            self.ranks,
            self.binding,
            if self.oversubscribe {
                " --oversubscribe"
            } else {
                ""
            },
            self.program.display(),
            self.args.join(" ")
        );
        let finished = process::run(&mut self.command(log_dir), self.timeout).map_err(|e| match e {
            RunError::Start(e) if e.kind() == std::io::ErrorKind::NotFound => PluginError::new(format!(
                "mpirun: `{}` not found; install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev) or set the `mpirun` key",
                self.mpirun
            )),
            RunError::Start(e) => {
                PluginError::new(format!("mpirun: cannot start `{}`: {e}", self.mpirun))
            }
            RunError::Timeout { .. } => PluginError::new(format!(
                "mpirun: `{shown}` ran longer than timeout_secs = {} and was killed",
                self.timeout.as_secs()
            )),
            RunError::Wait(e) => PluginError::new(format!("mpirun: waiting for `{shown}`: {e}")),
        })?;
        let (status, stdout, stderr) = (finished.status, finished.stdout, finished.stderr);
        if !status.success() {
            return Err(PluginError::new(format!(
                "mpirun: `{shown}` failed ({status}){}",
                output_tail(&stdout, &stderr)
            )));
        }
        Ok(())
    }
}

/// Lines of a rank's output shown when a run fails, and of the launcher's.
const RANK_LINES: usize = 8;
const LAUNCHER_LINES: usize = 12;
/// Lines of the launcher's last help message (between lines of dashes) shown.
const BANNER_LINES: usize = 8;
/// Groups of ranks with different output shown (ranks that wrote the same are one group).
const RANK_GROUPS: usize = 4;

/// A line `mpirun --tag-output` wrote for a rank: `[job,rank]<stdout>:text`.
fn tagged(line: &str) -> Option<(u32, &'static str, &str)> {
    let (ids, rest) = line.strip_prefix('[')?.split_once(']')?;
    let rank = ids.split_once(',')?.1.parse().ok()?;
    if let Some(text) = rest.strip_prefix("<stdout>:") {
        Some((rank, "stdout", text))
    } else {
        rest.strip_prefix("<stderr>:")
            .map(|text| (rank, "stderr", text))
    }
}

/// What the program's ranks wrote last (per rank, both streams, in order) ahead of what the
/// launcher wrote last: a program that reports its error on standard output and then aborts
/// would otherwise show only Open MPI's abort banner.
fn output_tail(stdout: &str, stderr: &str) -> String {
    use std::collections::{BTreeMap, VecDeque};
    let keep = |tail: &mut VecDeque<String>, line: String, n: usize| {
        if tail.len() == n {
            tail.pop_front();
        }
        tail.push_back(line);
    };
    let mut ranks: BTreeMap<u32, VecDeque<String>> = BTreeMap::new();
    let mut launcher: VecDeque<String> = VecDeque::new();
    let mut untagged_stdout: VecDeque<String> = VecDeque::new();
    // Open MPI's help messages come between lines of dashes, and a long one would push out
    // what came before it (the launch agent's "ssh: connect to host ... No route to host"):
    // lines outside them are kept apart, and the last message's first lines.
    let mut in_banner = false;
    let mut banner: Vec<String> = Vec::new();
    for (text, stream) in [(stdout, "stdout"), (stderr, "stderr")] {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if tagged(line).is_none() && line.trim_start().starts_with("-----") {
                if !in_banner {
                    banner.clear();
                }
                in_banner = !in_banner;
                continue;
            }
            if in_banner && tagged(line).is_none() {
                if banner.len() < BANNER_LINES {
                    banner.push(line.to_owned());
                }
                continue;
            }
            match tagged(line) {
                Some((rank, stream, text)) => keep(
                    ranks.entry(rank).or_default(),
                    format!("{stream}: {text}"),
                    RANK_LINES,
                ),
                // A launcher that does not tag (not Open MPI): its standard output is the
                // program's.
                None if stream == "stdout" => {
                    keep(&mut untagged_stdout, line.to_owned(), RANK_LINES)
                }
                None => keep(&mut launcher, line.to_owned(), LAUNCHER_LINES),
            }
        }
    }
    // Ranks that wrote the same lines are shown once.
    let mut groups: Vec<(Vec<u32>, VecDeque<String>)> = Vec::new();
    for (rank, lines) in ranks {
        match groups.iter_mut().find(|(_, l)| *l == lines) {
            Some((members, _)) => members.push(rank),
            None => groups.push((vec![rank], lines)),
        }
    }
    let mut out = String::new();
    let total = groups.len();
    for (members, lines) in groups.into_iter().take(RANK_GROUPS) {
        let who = match members.as_slice() {
            [one] => format!("rank {one}"),
            many => format!(
                "ranks {}",
                many.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push_str(&format!("\n{who} wrote last:"));
        for line in lines {
            out.push_str(&format!("\n  {line}"));
        }
    }
    if total > RANK_GROUPS {
        out.push_str(&format!(
            "\n({} more ranks wrote other lines)",
            total - RANK_GROUPS
        ));
    }
    if !untagged_stdout.is_empty() {
        out.push_str("\nits standard output ended with:");
        for line in untagged_stdout {
            out.push_str(&format!("\n  {line}"));
        }
    }
    if !launcher.is_empty() {
        out.push_str("\nmpirun's last error lines:");
        for line in launcher {
            out.push_str(&format!("\n  {line}"));
        }
    }
    if !banner.is_empty() {
        out.push_str("\nmpirun's last message began:");
        for line in banner {
            out.push_str(&format!("\n  {line}"));
        }
    }
    if out.is_empty() {
        out.push_str("; it wrote nothing");
    }
    out
}

/// Whether `dir` can take one run's logs: absent or empty.
pub fn check_log_dir(dir: &Path) -> Result<(), PluginError> {
    if dir.exists() {
        let entries = std::fs::read_dir(dir).map_err(|e| PluginError::io(dir, &e))?;
        if entries.flatten().next().is_some() {
            return Err(PluginError::new(format!(
                "log_dir: {} is not empty; the logs of one run go to a fresh directory (remove it or name another)",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// A fresh, empty directory for one run's logs: `wanted` (created; it must not hold logs
/// already), or a new directory under the system's temporary directory.
pub fn log_dir(wanted: Option<&Path>) -> Result<(PathBuf, bool), PluginError> {
    match wanted {
        Some(dir) => {
            check_log_dir(dir)?;
            std::fs::create_dir_all(dir).map_err(|e| PluginError::io(dir, &e))?;
            Ok((dir.to_path_buf(), false))
        }
        None => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let dir =
                std::env::temp_dir().join(format!("yosoku-mpi-{}-{stamp}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| PluginError::io(&dir, &e))?;
            Ok((dir, true))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn launch(mpirun: &Path, timeout_secs: u64) -> Launch {
        Launch {
            mpirun: mpirun.display().to_string(),
            program: "prog".into(),
            args: vec![],
            ranks: 2,
            binding: "core".into(),
            parameters: None,
            oversubscribe: false,
            interposer: "lib.so".into(),
            mpirun_args: vec![],
            timeout: Duration::from_secs(timeout_secs),
        }
    }

    fn script(dir: &Path, body: &str) -> PathBuf {
        let path = dir.join("fake-mpirun");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_log_dir_with_files_in_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("rank-0.tsv"), "old").unwrap();
        let e = log_dir(Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("is not empty"), "{e}");
        // A fresh one is created.
        let fresh = dir.path().join("new");
        assert_eq!(log_dir(Some(&fresh)).unwrap(), (fresh.clone(), false));
        assert!(fresh.is_dir());
    }

    #[test]
    fn a_run_past_its_timeout_is_killed_and_a_failing_one_shows_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let slow = script(dir.path(), "sleep 30");
        let e = launch(&slow, 1).run(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("ran longer than timeout_secs = 1 and was killed"),
            "{e}"
        );
        let failing = script(dir.path(), "echo 'rank 1: no such file' >&2; exit 3");
        let e = launch(&failing, 10)
            .run(dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("failed (exit status: 3)"), "{e}");
        assert!(e.ends_with("  rank 1: no such file"), "{e}");
    }

    /// A host the launch agent cannot reach: the agent's words come before Open MPI's long
    /// message about daemons that did not start, which must not push them out.
    #[test]
    fn an_unreachable_hosts_error_is_kept_beside_the_launchers_long_message() {
        let dir = tempfile::tempdir().unwrap();
        let dashes = "echo '--------------------------------------------------' >&2";
        let long: String = (0..30)
            .map(|k| format!("echo '  * reason {k}' >&2\n"))
            .collect();
        let failing = script(
            dir.path(),
            &format!(
                "echo 'ssh: connect to host 10.77.0.9 port 22: No route to host' >&2\n{dashes}\necho 'ORTE was unable to reliably start one or more daemons.' >&2\n{long}{dashes}\nexit 255"
            ),
        );
        let e = launch(&failing, 10)
            .run(dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mpirun's last error lines:\n  ssh: connect to host 10.77.0.9 port 22"),
            "{e}"
        );
        assert!(
            e.contains("mpirun's last message began:\n  ORTE was unable to reliably start"),
            "{e}"
        );
        assert!(!e.contains("reason 29"), "{e}");
    }

    #[test]
    fn a_failure_shows_each_ranks_last_words_ahead_of_the_launchers_banner() {
        let dir = tempfile::tempdir().unwrap();
        // What `mpirun --tag-output` prints when rank 0 reports a missing input on stdout and
        // aborts: the banner on stderr, untagged.
        let failing = script(
            dir.path(),
            "echo '[1,0]<stdout>:Reading input in.md'\n\
             echo '[1,1]<stdout>:Reading input in.md'\n\
             echo '[1,0]<stdout>:ERROR: Cannot open file in.md: No such file or directory'\n\
             echo '[1,1]<stderr>:rank 1 waiting'\n\
             echo '--------------------------------------------------' >&2\n\
             echo 'MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD' >&2\n\
             exit 1",
        );
        let e = launch(&failing, 10)
            .run(dir.path())
            .unwrap_err()
            .to_string();
        let program = e.find("ERROR: Cannot open file in.md").expect(&e);
        let banner = e.find("MPI_ABORT was invoked").expect(&e);
        assert!(program < banner, "{e}");
        assert!(
            e.contains("rank 0 wrote last:\n  stdout: Reading input in.md\n  stdout: ERROR"),
            "{e}"
        );
        assert!(
            e.contains(
                "rank 1 wrote last:\n  stdout: Reading input in.md\n  stderr: rank 1 waiting"
            ),
            "{e}"
        );
        assert!(
            e.contains("mpirun's last message began:\n  MPI_ABORT was invoked"),
            "{e}"
        );
        // Many ranks saying the same thing are one group.
        let same = script(
            dir.path(),
            "for r in 0 1 2 3; do echo \"[1,$r]<stdout>:bad input\"; done\nexit 1",
        );
        let e = launch(&same, 10).run(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("ranks 0, 1, 2, 3 wrote last:\n  stdout: bad input"),
            "{e}"
        );
    }
}
