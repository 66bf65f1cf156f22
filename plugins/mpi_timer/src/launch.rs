//! Collector `run`: launches an MPI program under `mpirun` with the interposer preloaded, then
//! imports the logs it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use yosoku_plugin_sdk::PluginError;

/// What to launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub mpirun: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub ranks: u32,
    /// `--bind-to` (`core`, `core:overload-allowed`, `none`, ...).
    pub binding: String,
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
        cmd.args(&self.mpirun_args);
        cmd.arg(&self.program).args(&self.args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs the program; the logs are in `log_dir` when it returns `Ok`. Returns the program's
    /// standard output.
    pub fn run(&self, log_dir: &Path) -> Result<String, PluginError> {
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
        let mut child = self.command(log_dir).spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                PluginError::new(format!(
                    "mpirun: `{}` not found; install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev) or set the `mpirun` key",
                    self.mpirun
                ))
            } else {
                PluginError::new(format!("mpirun: cannot start `{}`: {e}", self.mpirun))
            }
        })?;
        // Drain both pipes on threads so a chatty program cannot block on a full pipe.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_string(&mut text);
                }
                text
            })
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(PluginError::new(format!(
                        "mpirun: `{shown}` ran longer than timeout_secs = {} and was killed",
                        self.timeout.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    return Err(PluginError::new(format!(
                        "mpirun: waiting for `{shown}`: {e}"
                    )));
                }
            }
        };
        let stdout = stdout.join().unwrap_or_default();
        let stderr = stderr.join().unwrap_or_default();
        if !status.success() {
            let tail: Vec<&str> = stderr.lines().rev().take(12).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(PluginError::new(format!(
                "mpirun: `{shown}` failed ({status}); its last error lines:\n{}",
                tail.join("\n")
            )));
        }
        Ok(stdout)
    }
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
        assert!(e.ends_with("rank 1: no such file"), "{e}");
    }
}
