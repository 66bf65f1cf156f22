//! Running a measured program from a runner collector: both output streams drained on threads
//! (a chatty program cannot block on a full pipe), a timeout that kills it, and the last lines of
//! its output for an error message.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A program that ran to its end (successfully or not).
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
}

/// Why a program did not run to its end.
#[derive(Debug)]
pub enum RunError {
    /// It could not be started (`NotFound`: no such program).
    Start(std::io::Error),
    /// It ran past the timeout and was killed; what it wrote until then.
    Timeout { stdout: String, stderr: String },
    /// Waiting for it failed.
    Wait(std::io::Error),
}

/// Runs `cmd` with stdin closed and both outputs captured, killing it after `timeout` — it and
/// every process it started (a profiler's or launcher's children would otherwise keep running,
/// and keep the output pipes open).
pub fn run(cmd: &mut Command, timeout: Duration) -> Result<Finished, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(RunError::Start)?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > timeout => {
                // The whole process group: the program's children too.
                #[cfg(unix)]
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Timeout {
                    stdout: stdout.join().unwrap_or_default(),
                    stderr: stderr.join().unwrap_or_default(),
                });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                return Err(RunError::Wait(e));
            }
        }
    };
    Ok(Finished {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        wall: started.elapsed(),
    })
}

/// The last `n` non-blank lines of `text`, indented, for an error message.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("\n  {l}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_status_and_timeout() {
        let done = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(done.status.code(), Some(3));
        assert_eq!(
            (done.stdout.as_str(), done.stderr.as_str()),
            ("out\n", "err\n")
        );
        let slow = run(
            Command::new("sh").args(["-c", "echo started; sleep 30 & sleep 30"]),
            Duration::from_millis(300),
        );
        match slow {
            Err(RunError::Timeout { stdout, .. }) => assert_eq!(stdout, "started\n"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            run(&mut Command::new("/no/such/program"), Duration::from_secs(1)),
            Err(RunError::Start(e)) if e.kind() == std::io::ErrorKind::NotFound
        ));
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "\n  b\n  c");
    }
}
