//! `cargo xtask fuzz`: coverage-guided fuzzing of every reader of user files (`fuzz/`, one
//! libFuzzer target each), seeded with the real files in the repository. Built with libFuzzer's
//! coverage instrumentation on the stable toolchain (no sanitizer: the readers are safe Rust but
//! for a few audited `unsafe` blocks); `--asan` adds AddressSanitizer through nightly.
//! `--brief` runs the targets without open findings briefly (10,000 inputs from a fixed seed,
//! before changing a reader); campaigns are run by hand. `cargo xtask test` builds no fuzzer: it
//! replays every target's seeds and regressions in the workspace's own build.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};

use crate::{repo_root, target_dir};

/// Inputs per target in the brief run (a few seconds each on a 2-vCPU VM).
const BRIEF_RUNS: u64 = 10_000;

/// How long a target runs.
#[derive(Clone, Copy)]
enum Budget {
    Seconds(u64),
    /// This many inputs, mutated from libFuzzer's seed 1.
    Runs(u64),
}

// Where each target's seeds are, and how they are cut: shared with the replay test.
#[path = "../../fuzz/src/seeds.rs"]
mod seeds;

use seeds::SEED_MAX_BYTES;

/// A fuzz target (its seeds are in [`seeds::SEEDS`], by name).
struct Target {
    name: &'static str,
    /// Part of the brief run: the targets with no open finding (RELIABILITY.md
    /// lists the others' findings; each joins once they are fixed).
    brief: bool,
    /// libFuzzer's limit on one input: an input slower than this is a finding.
    timeout_secs: u32,
}

const TARGETS: &[Target] = &[
    Target {
        name: "ncu",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "nvprof",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "cuda_legacy",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "gpuperfpredict",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "nsys_sqlite",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "saved_transfer_model",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "rocprof",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "rocprof_compute_db",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "csx600_log",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "opencl_record",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "opencl_kernel_file",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "opencl_kernel_source",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "mpi_timer_log",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "tau_profile",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "chrome_trace",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "kernel_trace",
        brief: true,
        timeout_secs: 10,
        // A small synthetic trace is written into the seeds (see `seed_dir`).
    },
    Target {
        name: "pipeline_spec",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "bundle_manifest",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "bundle_ipc",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "table_file",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "pyramid_chunk",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "extrap_file",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "cube_profile",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "device_file",
        brief: true,
        timeout_secs: 10,
    },
    Target {
        name: "metrics_file",
        brief: true,
        timeout_secs: 10,
    },
];

/// `cargo xtask fuzz [--target T]... [--seconds N] [--jobs N] [--asan]`.
pub fn command(args: &[String]) -> Result<()> {
    let mut names = Vec::new();
    let mut seconds = 60;
    let mut jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut asan = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |what: &str| {
            it.next()
                .with_context(|| format!("{arg} needs {what}"))
                .cloned()
        };
        match arg.as_str() {
            "--target" => names.push(value("a target name")?),
            "--seconds" => seconds = value("a number")?.parse().context("--seconds")?,
            "--jobs" => jobs = value("a number")?.parse().context("--jobs")?,
            "--asan" => asan = true,
            "--brief" => return brief(),
            other => bail!(
                "unknown argument `{other}`; usage: cargo xtask fuzz [--target T]... [--seconds N] [--jobs N] [--asan] | --brief (targets: {})",
                TARGETS
                    .iter()
                    .map(|t| t.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    let targets: Vec<&Target> = if names.is_empty() {
        TARGETS.iter().collect()
    } else {
        names
            .iter()
            .map(|n| {
                TARGETS.iter().find(|t| t.name == n).with_context(|| {
                    format!(
                        "no fuzz target `{n}` (targets: {})",
                        TARGETS
                            .iter()
                            .map(|t| t.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect::<Result<_>>()?
    };
    run(&targets, Budget::Seconds(seconds), jobs.max(1), asan)
}

/// The brief targets, [`BRIEF_RUNS`] inputs each from a fixed seed (`cargo xtask fuzz --brief`:
/// the same inputs on every machine, so a red run is a regression, not luck).
pub fn brief() -> Result<()> {
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let targets: Vec<&Target> = TARGETS.iter().filter(|t| t.brief).collect();
    run(&targets, Budget::Runs(BRIEF_RUNS), jobs, false)
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("cannot run rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV names no host")
}

/// Builds every target with cargo's `profile` (`release` for campaigns, `brief` for the brief
/// run); returns the directory of the binaries.
fn build(asan: bool, profile: &str) -> Result<PathBuf> {
    // libfuzzer-sys compiles libFuzzer (C++) with the system's compiler.
    if Command::new("c++").arg("--version").output().is_err() {
        crate::system::apt_install(&["g++"])?;
    }
    let triple = host_triple()?;
    let dir = target_dir().join("fuzz");
    // libFuzzer's coverage instrumentation, as cargo-fuzz sets it; only for the target triple,
    // so build scripts and proc macros are built plainly.
    let mut flags = [
        "-Cpasses=sancov-module",
        "-Cllvm-args=-sanitizer-coverage-level=4",
        "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
        "-Cllvm-args=-sanitizer-coverage-pc-table",
        "-Cllvm-args=-sanitizer-coverage-trace-compares",
        "--cfg=fuzzing",
    ]
    .join(" ");
    let mut cmd = Command::new(if asan {
        "cargo".into()
    } else {
        std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
    });
    if asan {
        // rustup's proxies then pick nightly for cargo and every rustc it runs.
        cmd.env("RUSTUP_TOOLCHAIN", "nightly");
        flags.push_str(" -Zsanitizer=address");
    }
    cmd.current_dir(repo_root().join("fuzz"))
        .args([
            "build",
            "--profile",
            profile,
            "--bins",
            "--locked",
            "--target",
            &triple,
        ])
        .env("CARGO_TARGET_DIR", &dir)
        .env("RUSTFLAGS", flags)
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    let started = Instant::now();
    crate::run_cmd(&mut cmd)?;
    eprintln!(
        "xtask: fuzz targets built in {}",
        crate::minutes_secs(started.elapsed())
    );
    Ok(dir.join(triple).join(profile))
}

/// The seeds of `target`: the repository's real files, cut to [`SEED_MAX_BYTES`], gzip ones
/// inflated; and the regression inputs of crashes found before (`fuzz/regressions/<target>/`)
/// are passed whole beside them.
fn seed_dir(target: &Target) -> Result<PathBuf> {
    let dir = target_dir().join("fuzz/seeds").join(target.name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let root = repo_root();
    let mut n = 0;
    let listed =
        seeds::of(target.name).with_context(|| format!("no seeds listed for `{}`", target.name))?;
    for (sub, suffix) in listed.files {
        let mut files = Vec::new();
        find_files(&root.join(sub), suffix, &mut files)?;
        files.sort();
        for file in files {
            let mut bytes = read_seed(&file)?;
            if let Some(pick) = listed.pick {
                bytes.insert(0, pick(&file));
            }
            n += 1;
            std::fs::write(dir.join(format!("seed-{n:03}")), bytes)?;
        }
    }
    if target.name == "kernel_trace" {
        let trace = dir.join("synthetic.yktrace");
        crate::trace::write_synthetic(&trace, 8192, 4)?;
        let bytes = std::fs::read(&trace)?;
        std::fs::write(&trace, &bytes[..bytes.len().min(SEED_MAX_BYTES)])?;
        n += 1;
    }
    if target.name == "pyramid_chunk" {
        for (name, bytes) in pyramid_seeds()? {
            std::fs::write(dir.join(name), bytes)?;
            n += 1;
        }
    }
    if n == 0 {
        bail!("fuzz target `{}` has no seeds", target.name);
    }
    Ok(dir)
}

/// A chunk (first byte 0) and a tile of two lanes (first byte 1 + 2 x 2) of a small synthetic
/// pyramid, as `pyramid_chunk` reads them.
fn pyramid_seeds() -> Result<Vec<(&'static str, Vec<u8>)>> {
    use yosoku_traces::pyramid::{ChunkRows, PyramidBuilder, PyramidRecord};
    let records: Vec<PyramidRecord> = (0..64)
        .map(|i| PyramidRecord {
            lane: i % 2,
            kind: (i % 3) as u16,
            start_ns: i64::from(i) * 1000,
            duration_ns: 700,
            source_row: i64::from(i),
        })
        .collect();
    let mut chunk = ChunkRows::default();
    let mut pyramid = PyramidBuilder::new(2, 0, 64_000, records.len() as u64);
    for r in &records {
        chunk.push(r);
        pyramid.add(r);
    }
    let mut chunk_seed = vec![0u8];
    chunk_seed.extend(chunk.encode_sorted().map_err(|e| anyhow!(e))?);
    let (_, _, tile) = pyramid
        .tiles()
        .into_iter()
        .next()
        .ok_or_else(|| anyhow!("a pyramid without tiles"))?;
    let mut tile_seed = vec![1 + 2 * 2];
    tile_seed.extend(tile.encode().map_err(|e| anyhow!(e))?);
    Ok(vec![("chunk", chunk_seed), ("tile", tile_seed)])
}

fn find_files(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            find_files(&path, suffix, out)?;
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    Ok(())
}

fn read_seed(path: &Path) -> Result<Vec<u8>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut bytes = Vec::new();
    let limit = SEED_MAX_BYTES as u64 + 1;
    let read = if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(file)
            .take(limit)
            .read_to_end(&mut bytes)
    } else {
        file.take(limit).read_to_end(&mut bytes)
    };
    read.with_context(|| format!("cannot read {}", path.display()))?;
    seeds::cut(&mut bytes);
    Ok(bytes)
}

/// What one target's run did.
struct Outcome {
    name: &'static str,
    executions: u64,
    corpus: usize,
    secs: f64,
    failure: Option<String>,
}

fn run(targets: &[&Target], budget: Budget, jobs: usize, asan: bool) -> Result<()> {
    // The brief run's inputs need no optimised build: its profile (fuzz/Cargo.toml) builds at
    // opt-level 1, in about half the time (BENCHMARKS.md).
    let profile = match budget {
        Budget::Runs(_) => "brief",
        Budget::Seconds(_) => "release",
    };
    let bin = build(asan, profile)?;
    let seeds: Vec<PathBuf> = targets.iter().map(|t| seed_dir(t)).collect::<Result<_>>()?;
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(targets.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(target) = targets.get(i) else { break };
                    let outcome = run_target(&bin, target, &seeds[i], budget);
                    let mut all = outcomes.lock().unwrap_or_else(|e| e.into_inner());
                    all.push(outcome);
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    outcomes.sort_by_key(|o| o.name);
    let budget = match budget {
        Budget::Seconds(s) => format!("{s} s a target"),
        Budget::Runs(n) => format!("{n} inputs a target from seed 1"),
    };
    let sanitizer = if asan { ", AddressSanitizer" } else { "" };
    eprintln!("xtask: fuzz, {budget}{sanitizer}:");
    eprintln!(
        "  {:<16} {:>12} {:>10} {:>8}",
        "target", "executions", "per s", "corpus"
    );
    for o in &outcomes {
        eprintln!(
            "  {:<16} {:>12} {:>10.0} {:>8}{}",
            o.name,
            o.executions,
            o.executions as f64 / o.secs.max(1e-9),
            o.corpus,
            if o.failure.is_some() { "  FAILED" } else { "" }
        );
    }
    let failures: Vec<String> = outcomes.into_iter().filter_map(|o| o.failure).collect();
    if !failures.is_empty() {
        bail!("{}", failures.join("\n\n"));
    }
    Ok(())
}

fn run_target(bin: &Path, target: &Target, seeds: &Path, budget: Budget) -> Outcome {
    let started = Instant::now();
    let mut outcome = Outcome {
        name: target.name,
        executions: 0,
        corpus: 0,
        secs: 0.0,
        failure: None,
    };
    let result = (|| -> Result<()> {
        let corpus = target_dir().join("fuzz/corpus").join(target.name);
        let artifacts = target_dir().join("fuzz/artifacts").join(target.name);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let mut cmd = Command::new(bin.join(target.name));
        cmd.arg(&corpus).arg(seeds);
        let regressions = repo_root().join("fuzz/regressions").join(target.name);
        if regressions.is_dir() {
            cmd.arg(&regressions);
        }
        match budget {
            Budget::Seconds(s) => cmd.arg(format!("-max_total_time={s}")),
            Budget::Runs(n) => cmd.args([format!("-runs={n}"), "-seed=1".to_owned()]),
        };
        let out = cmd
            .arg(format!("-max_len={SEED_MAX_BYTES}"))
            .arg(format!("-timeout={}", target.timeout_secs))
            .arg("-rss_limit_mb=2048")
            .arg("-print_final_stats=1")
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .output()
            .with_context(|| format!("cannot run the fuzz target {}", target.name))?;
        let log = String::from_utf8_lossy(&out.stderr);
        outcome.executions = log
            .lines()
            .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        outcome.corpus = std::fs::read_dir(&corpus).map_or(0, |d| d.count());
        if !out.status.success() {
            // The panic's message (not its backtrace) and the line naming the saved input.
            let lines: Vec<&str> = log.lines().collect();
            let panic = lines
                .iter()
                .position(|l| l.contains("panicked at") || l.contains("ERROR: libFuzzer"))
                .map_or(&lines[lines.len().saturating_sub(20)..], |at| {
                    &lines[at..lines.len().min(at + 4)]
                });
            let saved = lines.iter().find(|l| l.contains("Test unit written to"));
            bail!(
                "fuzz target `{}` failed ({}):\n{}\n{}\n(once fixed, add the input to fuzz/regressions/{}/ and a test beside the reader)",
                target.name,
                out.status,
                panic.join("\n"),
                saved.map_or("", |l| l.trim()),
                target.name,
            );
        }
        Ok(())
    })();
    outcome.secs = started.elapsed().as_secs_f64();
    if let Err(e) = result {
        outcome.failure = Some(format!("{e:#}"));
    }
    outcome
}

#[cfg(test)]
mod seed_tests {
    use super::*;

    /// Every target xtask fuzzes has its seed list, and the list names no other target.
    #[test]
    fn every_target_has_its_seed_list() {
        for t in TARGETS {
            assert!(seeds::of(t.name).is_some(), "`{}` has no seed list", t.name);
        }
        assert_eq!(TARGETS.len(), seeds::SEEDS.len());
    }
}
