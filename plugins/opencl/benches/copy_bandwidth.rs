//! The OpenCL array copy against a plain Rust copy loop, side by side in one process, and the
//! runner's own cost per launch (`cargo xtask bench-opencl`; results in BENCHMARKS.md).
//!
//! Bandwidth counts what the copy kernel's work counters count: the bytes read plus the bytes
//! written (2 x 4 bytes per float). The Rust loops copy the same 32 MiB array, on one thread
//! (`copy_from_slice`) and on as many threads as the OpenCL device has compute units (each a
//! contiguous part), medians of 50 copies. Rounds alternate Rust and OpenCL, five of each.

#![allow(clippy::unwrap_used)] // a benchmark: a failed unwrap is a failed run

use std::time::{Duration, Instant};

use yosoku_plugin_opencl::device::{Selector, choose};
use yosoku_plugin_opencl::measure::Settings;
use yosoku_plugin_opencl::record::statistics;
use yosoku_plugin_opencl::suite::{self, SuiteKernel};
use yosoku_plugin_opencl::{Job, RunConfig, run};

const FLOATS: usize = 1 << 23;
const ROUNDS: usize = 5;

fn median(v: Vec<f64>) -> f64 {
    statistics(&v).0
}

/// Median seconds of `copies` copies of `src` into `dst` on `threads` threads.
fn rust_copy(src: &[f32], dst: &mut [f32], threads: usize, copies: usize) -> f64 {
    let mut times = Vec::with_capacity(copies);
    let chunk = src.len().div_ceil(threads);
    for _ in 0..copies {
        let start = Instant::now();
        if threads == 1 {
            dst.copy_from_slice(src);
        } else {
            std::thread::scope(|s| {
                for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                    s.spawn(move || d.copy_from_slice(c));
                }
            });
        }
        times.push(start.elapsed().as_secs_f64());
        std::hint::black_box(&dst);
    }
    median(times)
}

fn config(jobs: Vec<Job>) -> RunConfig {
    RunConfig {
        platform: Selector::Index(0),
        device: Selector::Index(0),
        device_type: opencl3::device::CL_DEVICE_TYPE_ALL,
        jobs,
        declared: Vec::new(),
        settings: Settings {
            warmup: 3,
            min_launches: 50,
            max_launches: 50,
            target_cv: 0.0,
            max_secs_per_config: 30.0,
            group: 256,
        },
        timeout: Duration::from_secs(600),
        log_dir: None,
        run_id: "bench".into(),
        kernel_dir: None,
        given: Default::default(),
    }
}

fn main() {
    let device = choose(
        &Selector::Index(0),
        &Selector::Index(0),
        opencl3::device::CL_DEVICE_TYPE_ALL,
    )
    .expect("an OpenCL device (cargo xtask bench-opencl installs POCL)");
    let info = &device[0].info;
    let threads = info.compute_units.max(1) as usize;
    println!(
        "device: {} ({} compute units, {})",
        info.label, info.compute_units, info.platform_version
    );
    println!(
        "environment: POCL_AFFINITY={}",
        std::env::var("POCL_AFFINITY").unwrap_or_default()
    );
    let copy: &'static dyn SuiteKernel = suite::find("copy").unwrap();
    let bytes = 2.0 * 4.0 * FLOATS as f64;
    let src: Vec<f32> = (0..FLOATS).map(|i| i as f32).collect();
    let mut dst = vec![0.0f32; FLOATS];

    let mut rust1 = Vec::new();
    let mut rustn = Vec::new();
    let mut widths: Vec<(String, Vec<f64>)> = copy
        .variants()
        .iter()
        .map(|v| ((*v).to_owned(), Vec::new()))
        .collect();
    let mut overhead = Vec::new();
    let mut submit = Vec::new();
    let mut small_host = Vec::new();
    let mut small_device = Vec::new();
    for round in 0..ROUNDS {
        rust1.push(rust_copy(&src, &mut dst, 1, 50));
        rustn.push(rust_copy(&src, &mut dst, threads, 50));
        let jobs: Vec<Job> = copy
            .variants()
            .iter()
            .map(|v| Job {
                kernel: copy,
                variant: v,
                size: FLOATS as u64,
            })
            .chain(std::iter::once(Job {
                kernel: copy,
                variant: "float",
                size: 4096,
            }))
            .collect();
        let record = run(&config(jobs), &mut |_, _, _| {}).unwrap();
        for m in &record.measurements {
            let device_secs: Vec<f64> = m
                .launches
                .iter()
                .map(|l| l.device_ns as f64 / 1e9)
                .collect();
            if m.size as usize == FLOATS {
                let w = widths.iter_mut().find(|(v, _)| *v == m.variant).unwrap();
                w.1.push(statistics(&device_secs).0);
                for l in &m.launches {
                    overhead.push((l.host_ns as f64 - l.device_ns as f64) / 1e3);
                    if let Some(s) = l.submit_to_start_ns {
                        submit.push(s as f64 / 1e3);
                    }
                }
            } else {
                small_device.push(statistics(&device_secs).0 * 1e6);
                small_host.push(median(
                    m.launches.iter().map(|l| l.host_ns as f64 / 1e3).collect(),
                ));
            }
        }
        eprintln!("round {} of {ROUNDS} done", round + 1);
    }
    let gbs = |secs: f64| bytes / secs / 1e9;
    println!(
        "\narray of {FLOATS} floats (32 MiB) copied; bandwidth = (read + written bytes) / median time; median over {ROUNDS} rounds"
    );
    println!("| copy | median time (ms) | bandwidth (GB/s) |");
    println!("|---|---|---|");
    let r1 = median(rust1);
    let rn = median(rustn);
    println!(
        "| Rust `copy_from_slice`, 1 thread | {:.3} | {:.1} |",
        r1 * 1e3,
        gbs(r1)
    );
    println!(
        "| Rust `copy_from_slice`, {threads} threads | {:.3} | {:.1} |",
        rn * 1e3,
        gbs(rn)
    );
    let mut best = (String::new(), f64::INFINITY);
    for (w, t) in widths {
        let t = median(t);
        if t < best.1 {
            best = (w.clone(), t);
        }
        println!("| OpenCL copy, `{w}` | {:.3} | {:.1} |", t * 1e3, gbs(t));
    }
    let reference = r1.min(rn);
    println!(
        "\nbest width {}: {:.1} GB/s = {:.0} % of the faster Rust copy ({:.1} GB/s); target >= 50 %",
        best.0,
        gbs(best.1),
        100.0 * reference / best.1,
        gbs(reference)
    );
    println!(
        "runner overhead per launch (host wall time - device time, 32 MiB copies): median {:.1} us; submit to start: median {:.1} us",
        median(overhead),
        median(submit)
    );
    println!(
        "a 4096-float copy: device {:.1} us, host (enqueue to completion seen) {:.1} us (medians)",
        median(small_device),
        median(small_host)
    );
}
