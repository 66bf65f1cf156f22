//! Collectors run in a child process (`isolate = true` on a source, `yosoku run --isolate`): a
//! segfault, an `abort()` or an endless loop in a plugin or the vendor library under it (an
//! OpenCL driver, an MPI runtime) costs the run, not the host; a time limit and a memory limit
//! (the child's address space, `RLIMIT_AS`) are enforced from outside.
//!
//! The child is the `yosoku` executable itself, started as `yosoku __collect <library>
//! <collector> [--memory-limit-bytes N]` with the configuration (JSON) on stdin
//! ([`serve`]). It loads the library like any host, runs the collector, and answers on its
//! standard output in frames — a tag byte, a little-endian u64 length, the payload:
//!
//! | tag | payload |
//! |---|---|
//! | `P` | progress, JSON `{"done", "total", "message"}` |
//! | `I` | an input file read, JSON `{"path", "size_bytes", "sha256_hex"}` |
//! | `T` | a table: u32 name length, the name, the batch as an Arrow IPC stream |
//! | `E` | the collection failed: the error's text |
//! | `D` | the collection is complete |
//!
//! Anything the plugin itself prints to its standard output goes to the child's standard error
//! (file descriptor 1 is moved aside before the library is loaded), which the host passes
//! through; the last lines are quoted when the child dies.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::{CheckedConfig, Collection, HostError, InputRead, LoadedPlugin, PluginHost, Progress};

/// The subcommand of the `yosoku` executable that serves an isolated collection.
pub const SUBCOMMAND: &str = "__collect";

/// How to run a collector in a child process.
#[derive(Debug, Clone)]
pub struct Isolation {
    /// The executable to start (the `yosoku` binary, which has the [`SUBCOMMAND`]).
    pub program: PathBuf,
    /// The child is killed when the collection takes longer.
    pub timeout: Option<Duration>,
    /// The child's address space limit (`RLIMIT_AS`): reservations count, not only memory
    /// touched.
    pub memory_limit_bytes: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct ProgressFrame {
    done: u64,
    total: u64,
    message: String,
}

#[derive(Serialize, Deserialize)]
struct InputFrame {
    path: PathBuf,
    size_bytes: u64,
    sha256_hex: String,
}

/// What the host reads from the child.
enum Frame {
    Progress(Progress),
    Input(InputRead),
    Table(String, RecordBatch),
    Error(String),
    Done,
}

/// The host's view of how the child's answer ended.
enum Ended {
    Frame(Frame),
    /// The child closed its output (exited, or died) without a final frame.
    Closed,
    /// Its output could not be read as frames.
    Garbled(String),
}

const MAX_FRAME_BYTES: u64 = 1 << 40;

fn write_frame(out: &mut impl Write, tag: u8, payload: &[u8]) -> std::io::Result<()> {
    out.write_all(&[tag])?;
    out.write_all(&(payload.len() as u64).to_le_bytes())?;
    out.write_all(payload)?;
    out.flush()
}

fn read_frame(input: &mut impl Read) -> Ended {
    let mut tag = [0u8; 1];
    match input.read_exact(&mut tag) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ended::Closed,
        Err(e) => return Ended::Garbled(e.to_string()),
    }
    let mut len = [0u8; 8];
    if input.read_exact(&mut len).is_err() {
        return Ended::Closed;
    }
    let len = u64::from_le_bytes(len);
    if len > MAX_FRAME_BYTES {
        return Ended::Garbled(format!("a frame of {len} bytes"));
    }
    let mut payload = Vec::new();
    if input
        .take(len)
        .read_to_end(&mut payload)
        .map_or(true, |n| n as u64 != len)
    {
        return Ended::Closed;
    }
    match decode_frame(tag[0], &payload) {
        Ok(frame) => Ended::Frame(frame),
        Err(why) => Ended::Garbled(why),
    }
}

fn decode_frame(tag: u8, payload: &[u8]) -> Result<Frame, String> {
    Ok(match tag {
        b'P' => {
            let p: ProgressFrame = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
            Frame::Progress(Progress {
                done: p.done,
                total: p.total,
                message: p.message,
            })
        }
        b'I' => {
            let i: InputFrame = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
            Frame::Input(InputRead {
                path: i.path,
                size_bytes: i.size_bytes,
                sha256_hex: i.sha256_hex,
            })
        }
        b'T' => {
            let name_len = payload
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
                .ok_or("a table frame without its name")?;
            let name = payload
                .get(4..4 + name_len)
                .and_then(|b| std::str::from_utf8(b).ok())
                .ok_or("a table frame whose name is cut or not UTF-8")?;
            let ipc = &payload[4 + name_len..];
            let reader = arrow_ipc::reader::StreamReader::try_new(ipc, None)
                .map_err(|e| format!("table `{name}`: {e}"))?;
            let schema = reader.schema();
            let batches = reader
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("table `{name}`: {e}"))?;
            let batch = arrow_select::concat::concat_batches(&schema, &batches)
                .map_err(|e| format!("table `{name}`: {e}"))?;
            Frame::Table(name.to_owned(), batch)
        }
        b'E' => Frame::Error(String::from_utf8_lossy(payload).into_owned()),
        b'D' => Frame::Done,
        other => return Err(format!("an unknown frame tag {other:#04x}")),
    })
}

fn table_payload(name: &str, batch: &RecordBatch) -> Result<Vec<u8>, String> {
    let mut payload = Vec::new();
    payload.extend_from_slice(&(name.len() as u32).to_le_bytes());
    payload.extend_from_slice(name.as_bytes());
    let mut writer = arrow_ipc::writer::StreamWriter::try_new(&mut payload, &batch.schema())
        .map_err(|e| e.to_string())?;
    writer.write(batch).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    drop(writer);
    Ok(payload)
}

impl LoadedPlugin {
    /// [`LoadedPlugin::collect`] in a child process started as `isolation` says: the same
    /// tables, checks and errors, and an error (never a crash of this process) when the child
    /// dies, exceeds its time, or its memory.
    pub fn collect_isolated(
        &self,
        config: &CheckedConfig,
        isolation: &Isolation,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Collection, HostError> {
        let collector = config.collector().to_owned();
        let isolated = |message: String| HostError::Isolated {
            plugin: self.info().name.clone(),
            collector: collector.clone(),
            message,
        };
        let mut command = Command::new(&isolation.program);
        command
            .arg(SUBCOMMAND)
            .arg(self.path())
            .arg(&collector)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(limit) = isolation.memory_limit_bytes {
            command.arg("--memory-limit-bytes").arg(limit.to_string());
        }
        let mut child = command.spawn().map_err(|e| {
            isolated(format!(
                "cannot start {} to run it in a process of its own: {e}",
                isolation.program.display()
            ))
        })?;
        let config_json =
            serde_json::to_vec(config.values()).map_err(|e| isolated(e.to_string()))?;
        // The child reads its configuration whole before it loads anything; a child that died
        // first is reported below, from its exit status.
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(&config_json);
        }
        let mut last_words = pass_through_stderr(&mut child);
        let (frames, receive) = mpsc::channel();
        let Some(mut stdout) = child.stdout.take() else {
            return Err(isolated("the child has no standard output".into()));
        };
        let reader = std::thread::spawn(move || {
            let mut stdout = std::io::BufReader::with_capacity(1 << 16, &mut stdout);
            loop {
                let ended = read_frame(&mut stdout);
                let last = !matches!(
                    ended,
                    Ended::Frame(Frame::Progress(_) | Frame::Input(_) | Frame::Table(..))
                );
                if frames.send(ended).is_err() || last {
                    break;
                }
            }
        });
        let deadline = isolation.timeout.map(|t| Instant::now() + t);
        let mut tables = Vec::new();
        let mut inputs_read = Vec::new();
        let outcome = loop {
            let next = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match receive.recv_timeout(left) {
                        Ok(ended) => ended,
                        Err(mpsc::RecvTimeoutError::Timeout) => {
                            let _ = child.kill();
                            let _ = child.wait();
                            let secs = isolation.timeout.unwrap_or_default().as_secs_f64();
                            break Err(isolated(format!(
                                "did not finish within {secs} s (`timeout_secs`); its process was stopped"
                            )));
                        }
                        Err(mpsc::RecvTimeoutError::Disconnected) => Ended::Closed,
                    }
                }
                None => receive.recv().unwrap_or(Ended::Closed),
            };
            match next {
                Ended::Frame(Frame::Progress(p)) => progress(p),
                Ended::Frame(Frame::Input(i)) => inputs_read.push(i),
                Ended::Frame(Frame::Table(name, batch)) => tables.push((name, batch)),
                Ended::Frame(Frame::Done) => break Ok(()),
                Ended::Frame(Frame::Error(text)) => break Err(HostError::Child { message: text }),
                Ended::Closed | Ended::Garbled(_) => {
                    let garbled = match next {
                        Ended::Garbled(why) => format!(" (its output was garbled: {why})"),
                        _ => String::new(),
                    };
                    let _ = child.kill();
                    let status = child.wait();
                    let words = last_words.join();
                    break Err(isolated(format!(
                        "{}{garbled}{}",
                        death(status.ok(), isolation.memory_limit_bytes, &words),
                        quote(&words)
                    )));
                }
            }
        };
        let _ = child.wait();
        let _ = reader.join();
        outcome?;
        // The host's checks, as for a collection in this process.
        for (name, batch) in &tables {
            self.check_table(&collector, name, batch)?;
        }
        Ok(Collection {
            tables,
            inputs_read,
        })
    }
}

/// The child's standard error, passed through to ours line by line; its last lines kept.
struct LastWords(Option<std::thread::JoinHandle<Vec<String>>>);

impl LastWords {
    /// The last lines, once the child has closed its standard error.
    fn join(&mut self) -> Vec<String> {
        self.0
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

fn pass_through_stderr(child: &mut Child) -> LastWords {
    let Some(stderr) = child.stderr.take() else {
        return LastWords(None);
    };
    LastWords(Some(std::thread::spawn(move || {
        let mut last = std::collections::VecDeque::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("{line}");
            if last.len() == 3 {
                last.pop_front();
            }
            last.push_back(line);
        }
        last.into()
    })))
}

/// What a child that ended without its final frame died of.
fn death(
    status: Option<std::process::ExitStatus>,
    memory_limit_bytes: Option<u64>,
    last_words: &[String],
) -> String {
    #[cfg(unix)]
    if let Some(signal) = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)) {
        // Rust's allocator says this before it aborts.
        let out_of_memory = last_words
            .iter()
            .any(|w| w.contains("memory allocation of"));
        if let (true, Some(limit)) = (out_of_memory, memory_limit_bytes) {
            return format!(
                "ran out of its memory limit of {} MiB (`memory_limit_mb`) and was aborted",
                limit >> 20
            );
        }
        let what = match signal {
            4 => " (SIGILL, an illegal instruction)",
            6 => " (SIGABRT, an abort)",
            7 => " (SIGBUS, a bus error)",
            8 => " (SIGFPE, an arithmetic fault)",
            9 => " (SIGKILL: killed, by the kernel's out-of-memory killer or a person)",
            11 => " (SIGSEGV, a segmentation fault)",
            _ => "",
        };
        return format!(
            "its process died of signal {signal}{what}; this process is unharmed, the run stops here"
        );
    }
    let _ = (memory_limit_bytes, last_words);
    match status.and_then(|s| s.code()) {
        Some(code) => format!("its process exited with code {code} before it finished"),
        None => "its process ended before it finished".into(),
    }
}

/// The child's last lines, for an error message.
fn quote(last_words: &[String]) -> String {
    if last_words.is_empty() {
        String::new()
    } else {
        format!("; its last output: {:?}", last_words.join(" / "))
    }
}

/// The child's side of an isolated collection (the `yosoku __collect` subcommand): reads the
/// configuration (JSON) from standard input, runs `collector` of the plugin library at
/// `library`, and answers in frames on standard output. Returns the exit code: 0 when it could
/// answer (a failed collection is an `E` frame), 2 when it could not even do that.
pub fn serve(library: &Path, collector: &str, memory_limit_bytes: Option<u64>) -> i32 {
    let mut out = match protocol_output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("yosoku {SUBCOMMAND}: cannot set up its output: {e}");
            return 2;
        }
    };
    if let Some(limit) = memory_limit_bytes
        && let Err(e) = limit_memory(limit)
    {
        let _ = write_frame(
            &mut out,
            b'E',
            format!("cannot limit the collector's memory to {limit} bytes: {e}").as_bytes(),
        );
        return 0;
    }
    let mut config = String::new();
    let collected = std::io::stdin()
        .read_to_string(&mut config)
        .map_err(|e| format!("cannot read the configuration: {e}"))
        .and_then(|_| {
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&config)
                .map_err(|e| format!("the configuration is not a JSON object: {e}"))
        })
        .and_then(|values| {
            let plugin = PluginHost::new(Vec::new())
                .load(library)
                .map_err(|e| e.to_string())?;
            let checked = plugin
                .check_config(collector, &values)
                .map_err(|e| e.to_string())?;
            plugin
                .collect(&checked, &mut |p| {
                    let frame = ProgressFrame {
                        done: p.done,
                        total: p.total,
                        message: p.message,
                    };
                    if let Ok(json) = serde_json::to_vec(&frame) {
                        let _ = write_frame(&mut out, b'P', &json);
                    }
                })
                .map_err(|e| e.to_string())
        });
    let written = match collected {
        Ok(collection) => answer(&mut out, &collection),
        Err(message) => write_frame(&mut out, b'E', message.as_bytes()),
    };
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("yosoku {SUBCOMMAND}: cannot answer the host: {e}");
            2
        }
    }
}

fn answer(out: &mut impl Write, collection: &Collection) -> std::io::Result<()> {
    for input in &collection.inputs_read {
        let frame = InputFrame {
            path: input.path.clone(),
            size_bytes: input.size_bytes,
            sha256_hex: input.sha256_hex.clone(),
        };
        let json = serde_json::to_vec(&frame).map_err(std::io::Error::other)?;
        write_frame(out, b'I', &json)?;
    }
    for (name, batch) in &collection.tables {
        match table_payload(name, batch) {
            Ok(payload) => write_frame(out, b'T', &payload)?,
            Err(e) => {
                return write_frame(out, b'E', format!("table `{name}`: {e}").as_bytes());
            }
        }
    }
    write_frame(out, b'D', &[])
}

/// The process's standard output for the frames, with file descriptor 1 pointed at standard
/// error from now on, so that a plugin's own prints cannot garble them.
#[cfg(unix)]
fn protocol_output() -> std::io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    let frames = rustix::io::dup(std::io::stdout().as_fd())?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(std::fs::File::from(frames))
}

#[cfg(not(unix))]
fn protocol_output() -> std::io::Result<std::io::Stdout> {
    Ok(std::io::stdout())
}

#[cfg(unix)]
fn limit_memory(bytes: u64) -> std::io::Result<()> {
    use rustix::process::{Resource, Rlimit, setrlimit};
    setrlimit(
        Resource::As,
        Rlimit {
            current: Some(bytes),
            maximum: Some(bytes),
        },
    )?;
    Ok(())
}

#[cfg(not(unix))]
fn limit_memory(_bytes: u64) -> std::io::Result<()> {
    Err(std::io::Error::other(
        "memory limits are enforced on Unix only",
    ))
}
