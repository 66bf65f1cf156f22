//! `yosoku`: run pipelines, list plugins, inspect result bundles.
//!
//! - `run`: runs a pipeline, prints its headline figures and scoreboard (`--verbose`: its report
//!   tables);
//! - `report`: a bundle's headline figures, report tables and scoreboard;
//! - `scoreboard`: the results reproduced from papers, over bundles (colours only on a terminal,
//!   and not under `NO_COLOR`);
//! - `export`: Parquet, CSV, Chrome trace, Extra-P JSON, written atomically;
//! - `plugins`, `inspect`, and `trace export` / `check` / `import`.
//!
//! glibc's allocator is told to keep freed memory for reuse (`mallopt`): the importers allocate and
//! free large buffers piece by piece.

mod calibrate;
mod devices;
mod export;
mod format;
mod metrics;
mod predict;
mod scaling;
mod trace;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use yosoku_runner::bundles::Inspected;
use yosoku_runner::plugins::Progress;
use yosoku_runner::{Observer, RunOptions, run_pipeline};

/// Predict how long a program runs on another device or configuration, and why.
#[derive(Debug, Parser)]
#[command(name = "yosoku", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a pipeline: collect its sources, normalize, fit, validate, and write a result bundle.
    Run {
        /// The pipeline file (TOML; see docs/pipelines.md).
        pipeline: PathBuf,
        /// Bundle directory to write (replaced atomically) [default: results/<pipeline name>].
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<PathBuf>,
        /// Extra plugin directory or library, searched first (repeatable). YOSOKU_PLUGIN_PATH too.
        #[arg(long = "plugin-path", value_name = "PATH")]
        plugin_path: Vec<PathBuf>,
        /// Also print the steps' detailed tables (what `yosoku report <bundle>` prints).
        #[arg(short, long)]
        verbose: bool,
        /// Print nothing but errors.
        #[arg(short, long, conflicts_with = "verbose")]
        quiet: bool,
        /// Run every source's collector in a process of its own: a crash in a plugin or in the
        /// driver under it ends the run with an error, not yosoku (a source's `isolate` key
        /// does this for one source, with a time and a memory limit).
        #[arg(long)]
        isolate: bool,
        /// Device catalogue file or directory over the built-in devices, for steps that read
        /// the catalogue (`gpu_transfer`) (repeatable). YOSOKU_DEVICES too.
        #[arg(long = "devices", value_name = "PATH")]
        devices: Vec<PathBuf>,
    },
    /// Print a bundle's results: its headline figures, its scoreboard and every step's detailed
    /// tables.
    Report {
        /// A bundle directory.
        bundle: PathBuf,
    },
    /// One table of the results reproduced from papers, over bundles: yosoku's figure beside
    /// the paper's, marked where it meets the pipeline's criterion.
    Scoreboard {
        /// Bundle directories, or directories of bundles [default: results].
        paths: Vec<PathBuf>,
        /// Only the headline results (those the pipelines mark `headline`, else each bundle's
        /// first), with the count of every result reproduced and missed: one screen.
        #[arg(long)]
        headline: bool,
    },
    /// Write a bundle's tables for other tools: Parquet or CSV (one file per table, into a
    /// directory), Chrome trace JSON (its spans), Extra-P's JSON input (its measured runs over
    /// their parameters), or a bundle of some of its tables (to commit or share a result
    /// without its inputs).
    Export {
        /// A bundle directory.
        bundle: PathBuf,
        #[arg(long, value_parser = export::format_parser())]
        format: yosoku_runner::export::ExportFormat,
        /// Only this table (`<namespace>.<table>`; repeatable) [default: every one the format
        /// takes].
        #[arg(long)]
        table: Vec<String>,
        /// The directory (parquet, csv, bundle) or file (chrome-trace, extrap) to write;
        /// written whole or not at all. A bundle keeps the run's manifest, its table list cut to
        /// the tables written, and no trace pyramid. Extra-P wants the call paths of one experiment measured at the same
        /// points: where they differ, `extrap` writes `<stem>-1.json`, `<stem>-2.json`, ...
        #[arg(short = 'o', long = "output", value_name = "PATH")]
        output: PathBuf,
    },
    /// List the plugins found, their collectors and each collector's config keys.
    Plugins {
        /// Extra plugin directory or library, searched first (repeatable). YOSOKU_PLUGIN_PATH too.
        #[arg(long = "plugin-path", value_name = "PATH")]
        plugin_path: Vec<PathBuf>,
    },
    /// Show a result bundle (manifest, tables) or one Arrow IPC file: schema and first rows.
    Inspect {
        /// A bundle directory or a `.arrow` file.
        path: PathBuf,
        /// Only this table (`<namespace>.<table>`) of a bundle.
        #[arg(long)]
        table: Option<String>,
        /// How many rows of each table to show.
        #[arg(long, default_value_t = 10)]
        rows: usize,
    },
    /// The device catalogue: each device's specification (SMs, clocks, peak FLOP/s, DRAM
    /// bandwidth, caches, memory) with the source of every value, and what yosoku measured on
    /// it. A TOML file per device adds one (YOSOKU_DEVICES, --devices).
    Devices {
        /// Show everything about this device (its name or an alias).
        name: Option<String>,
        /// A catalogue file or a directory of them, over the built-in ones (repeatable).
        #[arg(long = "devices", value_name = "PATH")]
        devices: Vec<PathBuf>,
    },
    /// A profile of kernels on one GPU (an ncu, nvprof, gpuperfpredict or rocprof file): their times on
    /// another GPU of the device catalogue, with an interval, the validation figures of the
    /// model and why (the roofline on both GPUs, the nearest training kernels).
    Predict(predict::Args),
    /// A short microbenchmark sweep on an OpenCL device you can reach (copy bandwidth, a matrix
    /// multiply, an empty kernel's launch latency, a sweep over work-groups), written as a
    /// device file with what it measured, for `--devices` (well under a minute).
    Calibrate(calibrate::Args),
    /// Extra-P's experiment files (text, JSON Lines, JSON) modelled by yosoku's PMNF search, as
    /// `extrap` models them: each call path's model with its SMAPE, adjusted R^2 and RSS
    /// (--json: one JSON line per model, to compare with Extra-P's).
    Scaling(scaling::Request),
    /// The canonical metric names profiler imports map to (each with its kind and the names
    /// each tool writes for it) and the naming rules; or, with --unmapped, the names a bundle's
    /// imports did not map. A TOML file of the same format named by YOSOKU_METRICS adds names.
    Metrics {
        /// Only metrics with a name of this tool (ncu, nvprof, legacy, gpuperfpredict, rocprof,
        /// computed, neusight).
        #[arg(long)]
        tool: Option<String>,
        /// Only metrics of this kind (count, config, time, rate, ratio, average, clock, level).
        #[arg(long)]
        kind: Option<String>,
        /// List the names a bundle's imports left unmapped instead.
        #[arg(long, value_name = "BUNDLE")]
        unmapped: Option<PathBuf>,
        /// Only metrics whose canonical name or a tool's name contains this text.
        name: Option<String>,
    },
    /// Serve the web viewer and a directory of result bundles on 127.0.0.1, to browse them in a
    /// browser (from another machine: `ssh -L PORT:127.0.0.1:PORT` to this one).
    Serve {
        /// A directory of bundles [default: results].
        dir: Option<PathBuf>,
        /// The port (0: any free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// The web viewer's files [default: share/yosoku/web of the installed tree, or the
        /// repository's dist/].
        #[arg(long, value_name = "DIR")]
        web: Option<PathBuf>,
    },
    /// Timelines: export a bundle's spans as Chrome trace JSON (Perfetto, chrome://tracing), check
    /// a trace file.
    Trace {
        #[command(subcommand)]
        action: TraceCommand,
    },
    /// Runs one collector for a host in another process (`isolate`): the configuration on
    /// standard input, the tables in frames on standard output. Not for people.
    #[command(name = "__collect", hide = true)]
    Collect {
        library: PathBuf,
        collector: String,
        #[arg(long)]
        memory_limit_bytes: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
enum TraceCommand {
    /// Write the spans tables of a bundle (all, or those named) as one Chrome trace JSON file.
    Export {
        /// A bundle directory.
        bundle: PathBuf,
        /// A spans table (`<namespace>.spans`) to export (repeatable) [default: every one].
        #[arg(long)]
        table: Vec<String>,
        /// The JSON file to write (written whole or not at all).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
    },
    /// Import a kernel-trace file of any size (docs/kernel-trace.md) as a bundle a viewer opens
    /// by reading only what is on screen: a level-of-detail pyramid and chunked records.
    Import {
        /// The kernel-trace file (.yktrace).
        file: PathBuf,
        /// Bundle directory to write (replaced atomically).
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: PathBuf,
        /// Lanes: `sm` or `block`.
        #[arg(long, default_value = "sm")]
        lanes: String,
    },
    /// Check a Chrome trace JSON file against the format's rules.
    Check {
        /// The trace file.
        file: PathBuf,
    },
}

/// Has glibc's allocator keep freed memory for reuse instead of giving it back to the system at
/// once: a run allocates and frees blocks of tens of MB step after step (a rank's blocks, a
/// table's column while it is encoded), and each one mapped afresh is faulted in page by page
/// again. Allocations up to 32 MiB (glibc's largest threshold) come from the heap, and the heap
/// is trimmed only past 1 GiB free; a run is one process, whose memory goes back when it ends.
/// (mpi-cp2k: 0.58 -> 0.48 s, 121 -> 144 MiB peak; BENCHMARKS.md.)
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            pipeline,
            output,
            plugin_path,
            verbose,
            quiet,
            isolate,
            devices,
        } => run(
            pipeline,
            output,
            plugin_path,
            verbose,
            quiet,
            isolate,
            devices,
        ),
        Command::Collect {
            library,
            collector,
            memory_limit_bytes,
        } => {
            let code = yosoku_runner::plugins::serve_isolated_collection(
                &library,
                &collector,
                memory_limit_bytes,
            );
            return ExitCode::from(u8::try_from(code).unwrap_or(2));
        }
        Command::Report { bundle } => report(&bundle),
        Command::Scoreboard { paths, headline } => scoreboard(paths, headline),
        Command::Export {
            bundle,
            format,
            table,
            output,
        } => export::export(&bundle, format, &table, &output).and_then(|m| emit(&format!("{m}\n"))),
        Command::Plugins { plugin_path } => plugins(plugin_path),
        Command::Inspect { path, table, rows } => inspect(path, table, rows),
        Command::Predict(question) => predict::run(&question).and_then(|text| emit(&text)),
        Command::Calibrate(args) => calibrate::run(&args).and_then(|text| emit(&text)),
        Command::Scaling(request) => scaling::print(&request, emit),
        Command::Devices { name, devices } => {
            devices::list(name.as_deref(), &devices).and_then(|text| emit(&text))
        }
        Command::Serve { dir, port, web } => serve(dir, port, web),
        Command::Metrics {
            tool,
            kind,
            unmapped,
            name,
        } => match unmapped {
            Some(bundle) => metrics::unmapped(&bundle),
            None => metrics::list(&yosoku_runner::metrics::Filter { tool, kind, name }),
        }
        .and_then(|text| emit(&text)),
        Command::Trace { action } => match action {
            TraceCommand::Export {
                bundle,
                table,
                output,
            } => trace::export(&bundle, &table, &output).and_then(|m| emit(&format!("{m}\n"))),
            TraceCommand::Import {
                file,
                output,
                lanes,
            } => match yosoku_runner::trace_import::LaneBy::parse(&lanes) {
                Some(l) => trace::import(&file, &output, l).and_then(|m| emit(&format!("{m}\n"))),
                None => Err(anyhow::anyhow!("--lanes {lanes}: expected `sm` or `block`")),
            },
            TraceCommand::Check { file } => {
                trace::check(&file).and_then(|m| emit(&format!("{m}\n")))
            }
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`yosoku inspect ... | head`): not an error.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// Where the web viewer's files are: `--web`, else the installed tree's `share/yosoku/web`
/// beside the binary, else the repository's `dist/` (`cargo xtask web`).
fn web_files(web: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(dir) = web {
        if dir.join("index.html").is_file() {
            return Ok(dir);
        }
        anyhow::bail!("--web {}: no index.html there", dir.display());
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let candidates = [
        exe_dir.join("../share/yosoku/web"),
        exe_dir.join("../../dist"),
    ];
    candidates
        .iter()
        .find(|d| d.join("index.html").is_file())
        .cloned()
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the web viewer's files are not here (looked in {}): install yosoku with `cargo xtask install`, build them with `cargo xtask web` in its repository, or name them with --web",
                candidates
                    .iter()
                    .map(|c| c.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// `yosoku serve`: the viewer and the bundles until the process is stopped.
fn serve(dir: Option<PathBuf>, port: u16, web: Option<PathBuf>) -> Result<()> {
    let dir = dir.unwrap_or_else(|| PathBuf::from("results"));
    if !dir.is_dir() {
        anyhow::bail!(
            "{}: no such directory of bundles (`yosoku run` writes them under results/)",
            dir.display()
        );
    }
    let web = web_files(web)?;
    let server = yosoku_serve::Server::start(&web, &dir, port)?;
    let port = server.addr.port();
    emit(&format!(
        "Serving the yosoku viewer and the bundles in {} on 127.0.0.1 only: {}
From another machine: ssh -L {port}:127.0.0.1:{port} <this host>, then open http://127.0.0.1:{port}/. Ctrl-C stops.
",
        dir.display(),
        server.url()
    ))?;
    server.wait();
    Ok(())
}

/// `e` and its causes, each once: an error whose text already holds its cause's (thiserror's
/// `{source}` in a message) does not repeat it.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Writes to stdout, returning an error (never panicking) when stdout is closed.
fn emit(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A spinner per source and step, on stderr; indicatif hides it when stderr is not a terminal.
/// The last one is cleared when the step ends, and when the bars are dropped (a failed run).
struct Bars {
    current: Option<ProgressBar>,
}

impl Bars {
    fn finish(&mut self) {
        if let Some(bar) = self.current.take() {
            bar.finish_and_clear();
        }
    }

    fn start(&mut self, message: String) {
        self.finish();
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {pos}/{len} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(120));
        self.current = Some(bar);
    }
}

impl Observer for Bars {
    fn source_started(&mut self, source: &str, plugin: &str, collector: &str) {
        self.start(format!("collect {source} ({plugin}/{collector})"));
    }

    fn source_progress(&mut self, _source: &str, progress: &Progress) {
        if let Some(bar) = &self.current {
            if progress.total > 0 {
                bar.set_length(progress.total);
            }
            bar.set_position(progress.done);
        }
    }

    fn step_started(&mut self, stage: &str, id: &str, kind: &str) {
        self.start(format!("{stage} {id} ({kind})"));
    }

    fn step_finished(&mut self, _stage: &str, _id: &str, _wall_secs: f64) {
        self.finish();
    }

    fn warning(&mut self, message: &str) {
        match &self.current {
            Some(bar) => bar.suspend(|| eprintln!("warning: {message}")),
            None => eprintln!("warning: {message}"),
        }
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.finish();
    }
}

fn run(
    pipeline: PathBuf,
    output: Option<PathBuf>,
    plugin_path: Vec<PathBuf>,
    verbose: bool,
    quiet: bool,
    isolate_all: bool,
    device_files: Vec<PathBuf>,
) -> Result<()> {
    let options = RunOptions {
        bundle_dir: output,
        plugin_path,
        // This executable serves isolated collections (`__collect`).
        collector_program: std::env::current_exe().ok(),
        isolate_all,
        device_files,
    };
    let outcome = run_pipeline(&pipeline, &options, &mut Bars { current: None })?;
    if quiet {
        return Ok(());
    }
    let m = &outcome.manifest;
    emit(&format!(
        "{}: wrote {} ({} tables, {:.3} s)\n",
        m.pipeline.name,
        outcome.bundle_dir.display(),
        m.tables.len(),
        m.total_wall_secs
    ))?;
    emit(&format::notes(m))?;
    emit(&format::headline_table(m))?;
    if verbose {
        // The tables the steps laid out for printing (`<step>.report`).
        for (_, cells) in &outcome.reports {
            emit(&format::report(cells))?;
        }
    }
    let rows = yosoku_runner::bundles::scoreboard_rows(&outcome.bundle_dir, m);
    if !rows.is_empty() {
        emit("\n")?;
        emit(&format::scoreboard(&rows, format::Style::for_stdout()))?;
    }
    if !verbose && !outcome.reports.is_empty() {
        emit(&format!(
            "\nThe steps' detailed tables: yosoku report {}\n",
            outcome.bundle_dir.display()
        ))?;
    }
    Ok(())
}

fn report(dir: &std::path::Path) -> Result<()> {
    let report = yosoku_runner::bundles::report(dir)?;
    let m = &report.manifest;
    emit(&format!(
        "{} ({}): {}\n",
        m.pipeline.name,
        dir.display(),
        m.pipeline.description
    ))?;
    emit(&format::notes(m))?;
    emit(&format::headline_table(m))?;
    for (_, cells) in &report.reports {
        emit(&format::report(cells))?;
    }
    if !report.scoreboard.is_empty() {
        emit("\n")?;
        emit(&format::scoreboard(
            &report.scoreboard,
            format::Style::for_stdout(),
        ))?;
    }
    Ok(())
}

fn scoreboard(paths: Vec<PathBuf>, headline: bool) -> Result<()> {
    let board = yosoku_runner::bundles::scoreboard(&paths)?;
    let rows = &board.rows;
    if rows.is_empty() {
        emit(&format!(
            "no scoreboard rows in {} bundle(s): their pipelines have no [[scoreboard]] entries\n",
            board.bundles
        ))?;
        return Ok(());
    }
    let style = format::Style::for_stdout();
    if headline {
        emit(&format::scoreboard(&format::headline_rows(rows), style))?;
        emit(&format!(
            "\n{}\nall of them: yosoku scoreboard {}\n",
            format::tally(rows, style),
            board.directories.join(" ")
        ))
    } else {
        emit(&format::scoreboard(rows, style))?;
        emit(&format!("\n{}\n", format::tally(rows, style)))
    }
}

fn plugins(plugin_path: Vec<PathBuf>) -> Result<()> {
    let listing = yosoku_runner::plugins::list(&plugin_path);
    let discovery = &listing.discovery;
    if discovery.plugins.is_empty() {
        emit("no plugins found\n")?;
    }
    for plugin in discovery.plugins.values() {
        emit(&format::plugin_listing(plugin))?;
    }
    emit(&format::gzip_readers(discovery))?;
    let dirs: Vec<String> = listing
        .search_path
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    emit(&format!("searched: {}\n", dirs.join(", ")))?;
    for problem in &discovery.problems {
        eprintln!("warning: {problem}");
    }
    Ok(())
}

fn inspect(path: PathBuf, table: Option<String>, rows: usize) -> Result<()> {
    match yosoku_runner::bundles::inspect(&path, table.as_deref())? {
        Inspected::Bundle { manifest, tables } => {
            if table.is_none() {
                emit(&format::manifest_summary(&manifest))?;
            }
            for (name, batch) in &tables {
                emit(&format::table(name, batch, rows)?)?;
            }
            Ok(())
        }
        Inspected::File { name, batch } => emit(&format::table(&name, &batch, rows)?),
    }
}
