//! The fuzz targets of the `cuda_profiler` plugin's readers: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_cuda.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.

use yosoku_plugin_cuda_profiler as cuda;
use yosoku_plugin_cuda_profiler::gpuperfpredict::Dataset;

use crate::yosoku_fuzz::{check_located_in_database, check_tables, input, tables_or_located, text};

/// The targets of this file, by name.
pub const TARGETS: &[crate::yosoku_fuzz::Target] = &[
    ("ncu", ncu),
    ("nvprof", nvprof),
    ("cuda_legacy", cuda_legacy),
    ("gpuperfpredict", gpuperfpredict),
    ("nsys_sqlite", nsys_sqlite),
];

pub fn ncu(data: &[u8]) {
    let Some(text) = text(data) else { return };
    tables_or_located(
        cuda::ncu::read(input(), text, &cuda::ncu::Labels::default()).and_then(|t| t.finish()),
    );
}

pub fn nvprof(data: &[u8]) {
    let Some(text) = text(data) else { return };
    tables_or_located(
        cuda::nvprof::read(input(), text, &cuda::nvprof::Labels::default())
            .and_then(|t| t.finish()),
    );
}

pub fn cuda_legacy(data: &[u8]) {
    let Some(text) = text(data) else { return };
    tables_or_located(
        cuda::legacy::read(input(), text, &cuda::legacy::Labels::default())
            .and_then(|t| t.finish()),
    );
}

pub fn gpuperfpredict(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let mut dataset = Dataset::new();
    tables_or_located(dataset.read(input(), text).and_then(|()| dataset.finish()));
}

/// Nsight Systems' SQLite export, read from the bytes as the plugin reads a file's.
pub fn nsys_sqlite(data: &[u8]) {
    match cuda::nsys_sqlite::read(input(), data, &cuda::nsys::Labels::default())
        .and_then(|t| t.finish())
    {
        Ok(tables) => check_tables(tables.iter().map(|(n, b)| (n.as_str(), b))),
        Err(e) => check_located_in_database(&e.to_string()),
    }
}
