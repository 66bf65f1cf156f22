//! `cargo xtask demo` and `cargo xtask bench-pipelines`: build what running pipelines needs, run
//! every pipeline in pipelines/ (as many at a time as there are cores), and print one screen:
//! what ran, then the scoreboard of the results reproduced from papers.

use std::io::{BufRead as _, BufReader, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{cargo, pipelines, repo_root, target_dir, yosoku_binary};

/// Builds the CLI and every plugin (a plugin added with `new-plugin` included), not the viewer,
/// xtask or the ABI's example plugin (`dummy`, which only tests load): a cold build of the viewer
/// alone takes longer than everything else the demo needs. Built without incremental state or
/// debug info for the workspace's crates (below).
/// Cargo's lines are summed up in one progress line on a terminal; they are printed in full only
/// when the build fails.
pub fn build_cli_and_plugins() -> Result<f64> {
    let started = Instant::now();
    let mut cmd = cargo();
    cmd.args([
        "build",
        "--workspace",
        "--exclude",
        "yosoku-viewer",
        "--exclude",
        "xtask",
        "--exclude",
        "yosoku-plugin-dummy",
    ]);
    // A first build reuses no incremental state and shows no backtrace: without them the
    // workspace's crates take 135 CPU-seconds instead of 178 (a cold build of what the demo runs,
    // 172 s against 194 s on two cores; BENCHMARKS.md, "the demo's first result"). Dependencies
    // build as before (they carry no debug info and are never incremental), so the tests' build
    // reuses them; it rebuilds only the workspace's crates, which it builds for tests anyway.
    cmd.env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "false");
    cmd.stderr(Stdio::piped()).stdout(Stdio::null());
    let mut child = cmd.spawn().context("cannot run cargo")?;
    let stderr = child.stderr.take().context("cargo's stderr")?;
    let tty = std::io::stderr().is_terminal();
    let mut log = Vec::new();
    let mut compiled = 0usize;
    for line in BufReader::new(stderr).lines() {
        let line = line.context("reading cargo's output")?;
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("Compiling ") {
            compiled += 1;
            if tty {
                let krate = rest.split_whitespace().next().unwrap_or("");
                eprint!(
                    "\r\x1b[K  building the CLI and the plugins: {compiled} crates compiled ({krate}) [{:.0} s]",
                    started.elapsed().as_secs_f64()
                );
                let _ = std::io::stderr().flush();
            }
        }
        log.push(line);
    }
    let status = child.wait().context("waiting for cargo")?;
    if tty {
        eprint!("\r\x1b[K");
    }
    if !status.success() {
        for line in &log {
            eprintln!("{line}");
        }
        bail!("building the CLI and the plugins failed ({status})");
    }
    Ok(started.elapsed().as_secs_f64())
}

/// One pipeline run by [`run_pipelines`].
#[derive(Debug)]
pub struct PipelineRun {
    pub name: String,
    pub wall_secs: f64,
    /// Peak resident memory of the `yosoku run` process.
    pub peak_rss_bytes: u64,
    /// What it printed (its stdout, then its stderr).
    pub output: String,
}

/// Runs every pipeline in pipelines/ with the debug CLI, `jobs` at a time, into `out/<name>`
/// when `out` is given (else where each pipeline says, results/<name>). `extra` goes to every
/// `yosoku run` (`--verbose`, `--quiet`). Fails, with the failing pipelines' output, when any
/// fails; the others still run.
pub fn run_pipelines(out: Option<&Path>, jobs: usize, extra: &[&str]) -> Result<Vec<PipelineRun>> {
    run_pipelines_with(&yosoku_binary(), out, jobs, extra)
}

/// [`run_pipelines`] with the `yosoku` at `binary` (another build's, to compare).
fn run_pipelines_with(
    binary: &Path,
    out: Option<&Path>,
    jobs: usize,
    extra: &[&str],
) -> Result<Vec<PipelineRun>> {
    let files = pipelines()?;
    let logs = target_dir().join("demo-logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<PipelineRun>)>> = Mutex::new(Vec::new());
    let tty = std::io::stderr().is_terminal();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(file) = files.get(i) else { break };
                    let result = run_one(binary, file, out, &logs, extra);
                    let finished = done.fetch_add(1, Ordering::SeqCst) + 1;
                    if tty {
                        eprint!(
                            "\r\x1b[K  running the pipelines: {finished}/{} [{:.1} s]",
                            files.len(),
                            started.elapsed().as_secs_f64()
                        );
                        let _ = std::io::stderr().flush();
                    }
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, result));
                }
            });
        }
    });
    if tty {
        eprint!("\r\x1b[K");
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let mut runs = Vec::new();
    let mut failures = Vec::new();
    for (_, r) in results {
        match r {
            Ok(run) => runs.push(run),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} of {} pipelines failed:\n\n{}",
            failures.len(),
            files.len(),
            failures.join("\n\n")
        );
    }
    Ok(runs)
}

fn run_one(
    binary: &Path,
    file: &Path,
    out: Option<&Path>,
    logs: &Path,
    extra: &[&str],
) -> Result<PipelineRun> {
    let relative = file.strip_prefix(repo_root()).unwrap_or(file);
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stdout_path = logs.join(format!("{name}.stdout"));
    let stderr_path = logs.join(format!("{name}.stderr"));
    let open = |p: &Path| {
        std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))
    };
    let mut cmd = Command::new(binary);
    cmd.current_dir(repo_root()).arg("run").arg(relative);
    cmd.args(extra);
    if let Some(out) = out {
        cmd.arg("-o").arg(out.join(&name));
    }
    cmd.stdin(Stdio::null())
        .stdout(open(&stdout_path)?)
        .stderr(open(&stderr_path)?);
    let started = Instant::now();
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    let (status, peak_rss_bytes) = wait_with_peak_rss(child)?;
    let wall_secs = started.elapsed().as_secs_f64();
    let output = format!(
        "{}{}",
        std::fs::read_to_string(&stdout_path).unwrap_or_default(),
        std::fs::read_to_string(&stderr_path).unwrap_or_default()
    );
    if !status {
        bail!("== {} failed:\n{}", relative.display(), output.trim_end());
    }
    Ok(PipelineRun {
        name,
        wall_secs,
        peak_rss_bytes,
        output,
    })
}

/// Waits for a child and returns whether it succeeded and its peak resident memory (wait4's
/// `ru_maxrss`, which is per child, unlike getrusage's RUSAGE_CHILDREN).
fn wait_with_peak_rss(child: std::process::Child) -> Result<(bool, u64)> {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own child, not yet reaped (std's Child never waited on it);
        // `status` and `usage` are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).context("waiting for yosoku run");
        }
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // Linux reports ru_maxrss in KiB.
    Ok((ok, (usage.ru_maxrss.max(0) as u64) * 1024))
}

fn jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

pub fn demo(args: &[String]) -> Result<()> {
    let mut verbose = false;
    for a in args {
        match a.as_str() {
            "--verbose" | "-v" => verbose = true,
            other => bail!("unknown option `{other}`; usage: cargo xtask demo [--verbose]"),
        }
    }
    let started = Instant::now();
    let build_secs = build_cli_and_plugins()?;
    println!("Built the yosoku CLI and its plugins in {build_secs:.0} s.");
    let jobs = jobs();
    let run_started = Instant::now();
    let runs = run_pipelines(None, jobs, if verbose { &["--verbose"] } else { &[] })?;
    let run_secs = run_started.elapsed().as_secs_f64();
    if verbose {
        for run in &runs {
            println!(
                "\n== pipelines/{}.toml\n{}",
                run.name,
                run.output.trim_end()
            );
        }
        println!();
    }
    println!(
        "Ran {} pipelines in {run_secs:.1} s ({jobs} at a time); their bundles are in results/.",
        runs.len()
    );
    // One timeline as Chrome trace JSON: the heterogeneous MPI run, measured and predicted.
    if runs.iter().any(|r| r.name == "mpi-heterogeneous") {
        let trace = repo_root().join("results/mpi-heterogeneous.trace.json");
        let out = Command::new(yosoku_binary())
            .current_dir(repo_root())
            .args(["trace", "export", "results/mpi-heterogeneous", "-o"])
            .arg(&trace)
            .output()
            .context("cannot run yosoku trace export")?;
        if !out.status.success() {
            bail!(
                "yosoku trace export failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        println!(
            "The MPI run measured and predicted as a Chrome trace (ui.perfetto.dev, chrome://tracing):\n  results/mpi-heterogeneous.trace.json"
        );
    }
    println!(
        "\nThe headline results, reproduced from the papers (docs/methods.md) or beyond them:\n"
    );
    // The CLI prints the scoreboard itself (colours only on a terminal, NO_COLOR respected):
    // the headline rows and the count of all, so that the demo ends on one screen.
    let mut scoreboard = Command::new(yosoku_binary());
    scoreboard
        .current_dir(repo_root())
        .args(["scoreboard", "--headline"]);
    for run in &runs {
        scoreboard.arg(PathBuf::from("results").join(&run.name));
    }
    let status = scoreboard
        .status()
        .context("cannot run yosoku scoreboard")?;
    if !status.success() {
        bail!("yosoku scoreboard failed ({status})");
    }
    let first_secs = started.elapsed().as_secs_f64();
    println!(
        "First result after {first_secs:.0} s.\n\
         One bundle's tables:  target/debug/yosoku report results/<name>\n\
         The MPI intervals and the scaling models beside Extra-P:  cargo xtask mpi-intervals, cargo xtask scaling-headline\n\
         Every result with its command:  docs/results.md\n\
         The viewer:  cargo xtask serve (browser)  or  cargo run --release -p yosoku-viewer (desktop)",
    );
    Ok(())
}

/// The fields of one CSV line as `yosoku export --format csv` writes them (quoted where a field
/// holds a comma or a quote).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// A CSV file of the export as rows of (column name, value).
fn csv_rows(path: &Path) -> Result<Vec<Vec<(String, String)>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap_or(""));
    Ok(lines
        .map(|l| header.iter().cloned().zip(csv_fields(l)).collect())
        .collect())
}

fn field<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    row.iter()
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

/// `yosoku export BUNDLE --format csv -o DIR`.
fn export_csv(bundle: &Path, dir: &Path) -> Result<String> {
    yosoku(&[
        "export".as_ref(),
        bundle.as_os_str(),
        "--format".as_ref(),
        "csv".as_ref(),
        "-o".as_ref(),
        dir.as_os_str(),
    ])
}

fn yosoku(args: &[&std::ffi::OsStr]) -> Result<String> {
    let out = Command::new(yosoku_binary())
        .current_dir(repo_root())
        .args(args)
        .output()
        .context("cannot run yosoku")?;
    if !out.status.success() {
        bail!("yosoku failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The real-application MPI sets and the steps of the method on them (one reduced run each;
/// ablations and baselines left out).
const MPI_SETS: &[(&str, &[&str])] = &[
    ("mpi-homogeneous", &["simplified"]),
    ("mpi-heterogeneous", &["simplified"]),
    (
        "mpi-meep",
        &["repeat_1", "repeat_2", "repeat_3", "repeat_4", "repeat_5"],
    ),
    (
        "mpi-cp2k",
        &["repeat_1", "repeat_2", "repeat_3", "repeat_4", "repeat_5"],
    ),
    (
        "mpi-qe",
        &["repeat_1", "repeat_2", "repeat_3", "repeat_4", "repeat_5"],
    ),
];

/// The sets with five repeats: one reduced run (the default run-to-run prior), and three and
/// five together (issue 41, item 2).
const MPI_COMBINED: &[&str] = &["mpi-meep", "mpi-cp2k", "mpi-qe"];

/// How well the MPI predictions' 95 % intervals cover the full runs' mean (issue 41, item 1):
/// per set, the predictions, how many intervals hold the measured mean, the median half-width
/// and the median |error|, from the demo's bundles.
pub(crate) fn mpi_intervals() -> Result<()> {
    let tmp = target_dir().join("demo-mpi-intervals");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    let (mut all_in, mut all_n, mut all_half) = (0, 0, Vec::new());
    let (mut lines, mut combined) = (Vec::new(), Vec::new());
    for (set, steps) in MPI_SETS {
        let bundle = repo_root().join("results").join(set);
        if !bundle.join("manifest.json").is_file() {
            continue;
        }
        let csv = tmp.join(set);
        export_csv(&bundle, &csv)?;
        // (predicted, measured, interval) of a step's run row.
        let run_of = |step: &str| -> Result<(f64, f64, f64, f64)> {
            let rows = csv_rows(&csv.join(format!("{step}.predictions.csv")))?;
            let run = rows
                .iter()
                .find(|r| field(r, "variant") == "run")
                .with_context(|| format!("{set}: no run prediction in step {step}"))?;
            let num = |k: &str| field(run, k).parse::<f64>().unwrap_or(f64::NAN);
            Ok((
                num("predicted_secs"),
                num("measured_secs"),
                num("interval_low_secs"),
                num("interval_high_secs"),
            ))
        };
        let (mut inside, mut halves, mut errors) = (0, Vec::new(), Vec::new());
        for step in *steps {
            let (p, m, lo, hi) = run_of(step)?;
            if (lo..=hi).contains(&m) {
                inside += 1;
            }
            halves.push(100.0 * (hi - lo) / 2.0 / p);
            errors.push((100.0 * (p - m) / m).abs());
        }
        if MPI_COMBINED.contains(set) {
            for (label, step) in [
                ("k = 1, no repeats (default +-5 %)", "one_run"),
                ("k = 3 combined", "combined_3"),
                ("k = 5 combined", "combined_5"),
            ] {
                let (p, m, lo, hi) = run_of(step)?;
                combined.push(format!(
                    "  {set:<18} {label:<34} error {:+.1} %, half-width {:.1} %, {}",
                    100.0 * (p - m) / m,
                    100.0 * (hi - lo) / 2.0 / p,
                    if (lo..=hi).contains(&m) {
                        "holds the mean"
                    } else {
                        "misses the mean"
                    }
                ));
            }
        }
        lines.push(format!(
            "  {set:<18} {inside} of {} intervals hold the full runs' mean; median half-width {:.1} %, median |error| {:.1} %",
            steps.len(),
            median(halves.clone()),
            median(errors)
        ));
        all_in += inside;
        all_n += steps.len();
        all_half.extend(halves);
    }
    if all_n > 0 {
        println!(
            "\nMPI predictions of real applications (docs/methods.md section 3): {all_in} of {all_n} 95 % intervals ({:.0} %) hold the full runs' mean, median half-width {:.1} % of the prediction",
            100.0 * all_in as f64 / all_n as f64,
            median(all_half)
        );
        for l in lines {
            println!("{l}");
        }
        println!("  from several reduced runs (pipelines' one_run, combined_3, combined_5):");
        for l in combined {
            println!("{l}");
        }
    }
    Ok(())
}

/// The scaling pipeline's headline: the solver's main call path (the one that takes most of
/// the time), its model, its prediction of the held-out largest configuration beside the
/// measured runs, and how many of the bundle's models Extra-P (installed into target/ when
/// missing) gives the same terms, from the same runs exported.
pub(crate) fn scaling_headline() -> Result<()> {
    let tmp = target_dir().join("demo-scaling");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    let bundle = repo_root().join("results/mpi-scaling");
    let csv = tmp.join("csv");
    export_csv(&bundle, &csv)?;
    // The solver's runs on 16 cores, one rank per core (those of the 2-core VM share cores on 4
    // ranks: pipelines/data/mpi-scaling/SOURCES.md).
    let models = csv_rows(&csv.join("himeno_16_cores.scaling_models.csv"))?;
    let predictions = csv_rows(&csv.join("himeno_16_cores.predictions.csv"))?;
    // Call paths come largest first, after the whole run.
    let main = models
        .iter()
        .find(|r| field(r, "variant") != "whole run")
        .context("no call path modelled")?;
    let path = field(main, "variant");
    let p = predictions
        .iter()
        .find(|r| field(r, "variant") == path)
        .context("no prediction of the main call path")?;
    let num = |r: &[(String, String)], k: &str| field(r, k).parse::<f64>().unwrap_or(f64::NAN);
    println!(
        "\nHow the solver scales (pipelines/mpi-scaling.toml, docs/methods.md section 7): its main call path\n  {path} ({}), over {}\n  model:     {}\n  {} (held out of the fit): predicted {:.3} s (95 % interval {:.3} to {:.3} s), measured {:.3} s (mean of its runs): {:+.1} %\n  (runs on 16 cores, one rank per core: pipelines/data/mpi-scaling/SOURCES.md)",
        field(main, "phase"),
        field(main, "parameters"),
        field(main, "formula"),
        field(p, "held_out"),
        num(p, "predicted_secs"),
        num(p, "interval_low_secs"),
        num(p, "interval_high_secs"),
        num(p, "measured_secs"),
        num(p, "error_pct"),
    );
    let python = crate::python::ensure_extrap_python()?;
    let json = tmp.join("mpi-scaling.json");
    yosoku(&[
        "export".as_ref(),
        bundle.as_os_str(),
        "--format".as_ref(),
        "extrap".as_ref(),
        "-o".as_ref(),
        json.as_os_str(),
    ])?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tmp)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    // Negative exponents allowed in both, as the pipeline models ranks.
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "scaling".as_ref(),
        "--json".as_ref(),
        "--negative-exponents".as_ref(),
    ];
    args.extend(files.iter().map(|f| f.as_os_str()));
    let ours = yosoku(&args)?;
    let out = Command::new(&python)
        .arg(repo_root().join("tools/extrap/models.py"))
        .arg("--negative-exponents")
        .args(&files)
        .output()
        .context("cannot run Extra-P")?;
    if !out.status.success() {
        bail!("Extra-P failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
    let terms = |text: &str| -> Vec<(String, serde_json::Value)> {
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v.get("terms").is_some())
            .map(|v| {
                let key = format!("{} {} {}", v["file"], v["callpath"], v["metric"]);
                let shape: Vec<serde_json::Value> = v["terms"]
                    .as_array()
                    .map(|t| t.iter().map(|t| t["factors"].clone()).collect())
                    .unwrap_or_default();
                (key, serde_json::Value::Array(shape))
            })
            .collect()
    };
    let refused = ours.lines().filter(|l| l.contains("\"error\"")).count();
    let (ours, theirs) = (terms(&ours), terms(&theirs));
    let same = ours
        .iter()
        .filter(|(k, shape)| {
            theirs.iter().any(|(k2, s2)| {
                let mut a = shape.as_array().cloned().unwrap_or_default();
                let mut b = s2.as_array().cloned().unwrap_or_default();
                a.sort_by_key(ToString::to_string);
                b.sort_by_key(ToString::to_string);
                k == k2 && a == b
            })
        })
        .count();
    println!(
        "  Extra-P 4.2.5 on all the runs (yosoku export --format extrap: {} files; yosoku scaling beside it): {same} of {} models with yosoku's terms{}",
        files.len(),
        ours.len(),
        if refused > 0 {
            format!(
                "; {refused} call paths with fewer than 3 values of a parameter yosoku refuses and Extra-P fits"
            )
        } else {
            String::new()
        }
    );
    extrap_held_out(&python, &files)
}

/// Extra-P's own prediction of each experiment's largest point from the others (what each
/// `scaling_model` step holds out), per call path: beside the held-out errors `yosoku report`
/// gives for the pipeline's steps.
fn extrap_held_out(python: &Path, files: &[PathBuf]) -> Result<()> {
    let out = Command::new(python)
        .arg(repo_root().join("tools/extrap/models.py"))
        .args(["--negative-exponents", "--hold-out-largest"])
        .args(files)
        .output()
        .context("cannot run Extra-P")?;
    if !out.status.success() {
        bail!("Extra-P failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    println!(
        "  Extra-P's prediction of each experiment's largest point from the others (yosoku report results/mpi-scaling has yosoku's):"
    );
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let held = &v["held_out"];
        if let (Some(predicted), Some(measured), Some(error)) = (
            held["predicted"].as_f64(),
            held["measured"].as_f64(),
            held["error_pct"].as_f64(),
        ) {
            println!(
                "    {:<100} {:>9.4} s  measured {:>9.4} s  {error:+6.1} %",
                format!(
                    "{} ({})",
                    v["callpath"].as_str().unwrap_or(""),
                    v["metric"].as_str().unwrap_or("")
                ),
                predicted,
                measured,
            );
        }
    }
    Ok(())
}

/// `cargo xtask bench-pipelines [--rounds N]`: every bundled pipeline as the demo runs them (the
/// debug CLI, as many at a time as there are cores), N rounds; each pipeline's median time and
/// peak memory, and the median wall time of a whole round.
pub fn bench(args: &[String]) -> Result<()> {
    let mut rounds = 5usize;
    let mut against: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rounds" => {
                let v = it.next().context("--rounds needs a number")?;
                rounds = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .with_context(|| format!("--rounds {v}: expected a positive number"))?;
            }
            "--against" => {
                let dir = PathBuf::from(it.next().context("--against needs a target directory")?);
                let other = dir
                    .join("debug")
                    .join(format!("yosoku{}", std::env::consts::EXE_SUFFIX));
                if !other.is_file() {
                    bail!("--against {}: no debug/yosoku there", dir.display());
                }
                against = Some(other);
            }
            other => {
                bail!(
                    "unknown option `{other}`; usage: cargo xtask bench-pipelines [--rounds N] [--against TARGET_DIR]"
                )
            }
        }
    }
    build_cli_and_plugins()?;
    let out = target_dir().join("bench-pipelines");
    let jobs = jobs();
    // This build's runs, and the other build's interleaved with them round by round, so that
    // both meet the machine in the same state.
    let mut builds = vec![(yosoku_binary(), Measured::default())];
    if let Some(other) = against {
        builds.push((other, Measured::default()));
    }
    for round in 0..rounds {
        for (binary, measured) in &mut builds {
            let started = Instant::now();
            let runs = run_pipelines_with(binary, Some(&out), jobs, &["--quiet"])?;
            let wall = started.elapsed().as_secs_f64();
            eprintln!("round {}, {}: {wall:.2} s", round + 1, binary.display());
            measured.add(wall, runs);
        }
    }
    for (binary, measured) in &builds {
        println!("{}:", binary.display());
        measured.print(jobs, rounds);
    }
    Ok(())
}

/// One build's rounds of [`bench`]: each round's wall time, and per pipeline its times and peak
/// memory.
#[derive(Default)]
struct Measured {
    walls: Vec<f64>,
    per: std::collections::BTreeMap<String, (Vec<f64>, u64)>,
}

impl Measured {
    fn add(&mut self, wall: f64, runs: Vec<PipelineRun>) {
        self.walls.push(wall);
        for r in runs {
            let e = self.per.entry(r.name).or_default();
            e.0.push(r.wall_secs);
            e.1 = e.1.max(r.peak_rss_bytes);
        }
    }

    fn print(&self, jobs: usize, rounds: usize) {
        println!(
            "{:<28} {:>12} {:>14}",
            "pipeline", "median s", "peak RSS MiB"
        );
        let mut sum = 0.0;
        for (name, (times, rss)) in &self.per {
            let m = median(times.clone());
            sum += m;
            println!(
                "{name:<28} {m:>12.3} {:>14.1}",
                *rss as f64 / (1024.0 * 1024.0)
            );
        }
        println!(
            "all {} pipelines, {jobs} at a time: median {:.2} s per round over {rounds} rounds (sum of medians {sum:.2} s)",
            self.per.len(),
            median(self.walls.clone())
        );
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}
