//! Import throughput (BENCHMARKS.md): the largest file of the gpuperfpredict dataset (gzip), and
//! an `ncu --csv` details page of more than 100 MB made by repeating the launches of a real one.
//!
//! `cargo bench -p yosoku-plugin-cuda-profiler --bench import`. Both files are written to
//! target/bench-data (the ncu one generated on first use); the peer runs on the same files
//! (tools/bench/peers.py).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::io::Write;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use yosoku_plugin_cuda_profiler::{ncu, read_gpuperfpredict, read_ncu};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bench_dir() -> PathBuf {
    let dir = repo().join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A details page of at least 100 MB: the real H100 file's rows for one launch, repeated with
/// new launch IDs.
fn big_ncu_details() -> PathBuf {
    let path = bench_dir().join("ncu_details_repeated_100mb.csv");
    if path.exists() {
        return path;
    }
    let source = std::fs::read_to_string(
        repo().join("plugins/cuda_profiler/tests/data/ncu/ncu_details_matmul_tiled_h100.csv"),
    )
    .unwrap();
    let mut lines = source.lines().filter(|l| !l.starts_with("=="));
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let tmp = path.with_extension("tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
    writeln!(out, "{header}").unwrap();
    let mut written = 0usize;
    let mut launch = 0usize;
    while written < 100 * 1024 * 1024 {
        for row in &rows {
            // Every row starts with the launch ID: "0",...
            let rest = row.split_once(',').unwrap().1;
            let line = format!("\"{launch}\",{rest}\n");
            written += line.len();
            out.write_all(line.as_bytes()).unwrap();
        }
        launch += 1;
    }
    out.flush().unwrap();
    drop(out);
    std::fs::rename(&tmp, &path).unwrap();
    path
}

fn gpuperfpredict_largest(c: &mut Criterion) {
    let path = repo().join("pipelines/data/gpuperfpredict/full/kernel-GTX-680.csv.gz");
    let text_bytes = yosoku_plugin_cuda_profiler::input::read_text(&path)
        .unwrap()
        .len() as u64;
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(text_bytes));
    group.bench_function("gpuperfpredict_kernel_gtx680_gz", |b| {
        b.iter(|| read_gpuperfpredict(&[&path]).unwrap())
    });
    group.finish();
}

fn ncu_100mb(c: &mut Criterion) {
    let path = big_ncu_details();
    let bytes = std::fs::metadata(&path).unwrap().len();
    let mut group = c.benchmark_group("import");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("ncu_details_100mb", |b| {
        b.iter(|| {
            read_ncu(
                &path,
                &ncu::Labels {
                    device: Some("H100".into()),
                    ..Default::default()
                },
            )
            .unwrap()
        })
    });
    group.finish();
}

/// The nsys SQLite export (CloverLeaf on A100s: 1,591 launches and copies, 3,048 CUDA calls)
/// beside the nsys CSV reader on a `cuda_gpu_trace` of as many rows (the repository's real
/// trace's rows repeated), both per row read; Python's sqlite3 on the same tables is
/// tools/bench/nsys_sqlite_peer.py.
fn nsys_sqlite_and_csv(c: &mut Criterion) {
    let sqlite = repo().join("pipelines/data/nsys-sqlite/pipit_cloverleaf_a100_nsys.sqlite.gz");
    let labels = yosoku_plugin_cuda_profiler::nsys::Labels::default();
    let rows = 1312 + 279 + 3048;
    let trace = bench_dir().join("nsys_cuda_gpu_trace_repeated.csv");
    let source = std::fs::read_to_string(
        repo().join("plugins/cuda_profiler/tests/data/nsys/run_cuda_gpu_trace.csv"),
    )
    .unwrap();
    let mut lines = source.lines();
    let header = lines.next().unwrap();
    let body: Vec<&str> = lines.collect();
    let mut text = format!("{header}\n");
    for i in 0..rows {
        // A later start for every copy of a row, its other fields as they are.
        let row = body[i % body.len()];
        let (_, rest) = row.split_once(',').unwrap();
        text.push_str(&format!("{},{rest}\n", 1_000_000 + i * 10_000_000));
    }
    std::fs::write(&trace, text).unwrap();
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Elements(rows as u64));
    group.bench_function("nsys_sqlite_export_rows", |b| {
        b.iter(|| {
            yosoku_plugin_cuda_profiler::read_nsys(std::slice::from_ref(&sqlite), &labels).unwrap()
        })
    });
    // The same export as nsys writes it, not compressed.
    let plain = bench_dir().join("pipit_cloverleaf_a100_nsys.sqlite");
    let bytes = yosoku_plugin_cuda_profiler::input::read_bytes(&sqlite).unwrap();
    std::fs::write(&plain, bytes).unwrap();
    group.bench_function("nsys_sqlite_export_rows_uncompressed", |b| {
        b.iter(|| {
            yosoku_plugin_cuda_profiler::read_nsys(std::slice::from_ref(&plain), &labels).unwrap()
        })
    });
    group.bench_function("nsys_csv_gpu_trace_rows", |b| {
        b.iter(|| {
            yosoku_plugin_cuda_profiler::read_nsys(std::slice::from_ref(&trace), &labels).unwrap()
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    gpuperfpredict_largest,
    ncu_100mb,
    nsys_sqlite_and_csv
);
criterion_main!(benches);
