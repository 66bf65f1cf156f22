//! Where each fuzz target's seeds are: real files of the repository, each cut to its first
//! [`SEED_MAX_BYTES`] (at a line end where there is one). Shared, as a file with no dependencies,
//! by `cargo xtask fuzz` (which writes them into libFuzzer's seed directories) and by the
//! workspace test that replays every seed and regression through the targets' checks
//! (`crates/app/runner/tests/fuzz_replay.rs`, part of `cargo xtask test`).

use std::path::Path;

/// Seeds are cut to this many bytes (at a line end where there is one): libFuzzer mutates small
/// inputs many times faster, and the readers' paths are all reached within a few lines.
pub const SEED_MAX_BYTES: usize = 16 * 1024;

/// One target's seed files: (directory, file-name suffix), searched recursively, and for a
/// target whose input's first byte picks what the rest is, that byte for a seed file.
pub struct SeedFiles {
    pub target: &'static str,
    pub files: &'static [(&'static str, &'static str)],
    pub pick: Option<fn(&Path) -> u8>,
}

/// Every target's seed files, in the order `cargo xtask fuzz` lists the targets. `kernel_trace`
/// and `pyramid_chunk` are seeded with small synthetic files xtask writes.
pub const SEEDS: &[SeedFiles] = &[
    SeedFiles {
        target: "ncu",
        files: &[
            ("plugins/cuda_profiler/tests/data/ncu", ".csv"),
            (
                "plugins/cuda_profiler/tests/data/public",
                "_details_cc75.csv",
            ),
        ],
        pick: None,
    },
    SeedFiles {
        target: "nvprof",
        files: &[("plugins/cuda_profiler/tests/data/formats", ".csv")],
        pick: None,
    },
    SeedFiles {
        target: "cuda_legacy",
        files: &[("plugins/cuda_profiler/tests/data/formats", ".log")],
        pick: None,
    },
    SeedFiles {
        target: "gpuperfpredict",
        files: &[
            ("plugins/cuda_profiler/tests/data/public", ".csv"),
            ("plugins/cuda_profiler/tests/data/public", ".csv.gz"),
            ("pipelines/data/gpuperfpredict", "GTX-680.csv.gz"),
        ],
        pick: None,
    },
    SeedFiles {
        target: "nsys_sqlite",
        files: &[("fuzz/seeds/sqlite", ".sqlite")],
        pick: None,
    },
    SeedFiles {
        target: "saved_transfer_model",
        files: &[("fuzz/seeds/transfer", ".json")],
        pick: None,
    },
    SeedFiles {
        target: "rocprof",
        files: &[
            ("pipelines/data/rocprof", ".csv"),
            ("pipelines/data/rocprof", ".json"),
            ("plugins/rocm_profiler/tests/data", ".csv"),
        ],
        pick: None,
    },
    SeedFiles {
        target: "rocprof_compute_db",
        files: &[("fuzz/seeds/sqlite", ".db")],
        pick: None,
    },
    SeedFiles {
        target: "csx600_log",
        files: &[("pipelines/data/csx600", ".log")],
        pick: None,
    },
    SeedFiles {
        target: "opencl_record",
        files: &[("fuzz/seeds/opencl", ".json")],
        pick: None,
    },
    SeedFiles {
        target: "opencl_kernel_file",
        files: &[("plugins/opencl/kernel-files", ".toml")],
        pick: None,
    },
    SeedFiles {
        target: "opencl_kernel_source",
        files: &[
            ("plugins/opencl/kernels", ".cl"),
            ("plugins/opencl/kernel-files", ".cl"),
        ],
        pick: None,
    },
    SeedFiles {
        target: "mpi_timer_log",
        files: &[("pipelines/data/mpi/reduced", ".tsv")],
        pick: None,
    },
    SeedFiles {
        target: "tau_profile",
        files: &[("pipelines/data/tau-cpi-mpi", ".0")],
        pick: None,
    },
    SeedFiles {
        target: "chrome_trace",
        files: &[("pipelines/data/chrome-trace", ".json")],
        pick: None,
    },
    SeedFiles {
        target: "kernel_trace",
        files: &[],
        pick: None,
    },
    SeedFiles {
        target: "extrap_file",
        files: &[
            ("crates/core/regression/tests/data/extrap/text", ".txt"),
            ("crates/core/regression/tests/data/extrap/input", ".txt"),
            (
                "crates/core/regression/tests/data/extrap/jsonlines",
                ".jsonl",
            ),
            ("crates/core/regression/tests/data/extrap/talpas", ".txt"),
            ("crates/core/regression/tests/data/extrap/json", ".JSON"),
            ("crates/core/regression/tests/data/extrap/saved", ".extra-p"),
            (
                "crates/core/regression/tests/data/extrap/extrap3",
                "experiment_3",
            ),
        ],
        // The first byte picks the format: 0 text, 1 JSON Lines, 2 Talpas, 3 JSON, 5 told by
        // the bytes (a saved experiment's zip, an Extra-P 3 experiment); 96 adds to it that both searches model the
        // first call paths.
        pick: Some(|path| {
            let within = |dir: &str| path.parent().is_some_and(|p| p.ends_with(dir));
            96 + if within("jsonlines") {
                1
            } else if within("talpas") {
                2
            } else if within("json") {
                3
            } else if within("saved") || within("extrap3") {
                5
            } else {
                0
            }
        }),
    },
    SeedFiles {
        target: "cube_profile",
        files: &[
            (
                "crates/core/regression/tests/data/cube/simple_threaded",
                ".cubex",
            ),
            (
                "crates/core/regression/tests/data/cube/single_parameter",
                ".cubex",
            ),
            ("fuzz/seeds/cube_members", ".bin"),
        ],
        // Even: a profile's bytes; odd: its members, laid out as the target reads them.
        pick: Some(|path| u8::from(path.extension().is_some_and(|e| e == "bin"))),
    },
    SeedFiles {
        target: "pipeline_spec",
        files: &[("pipelines", ".toml")],
        pick: None,
    },
    SeedFiles {
        target: "bundle_manifest",
        files: &[("viewer/tests/fixtures/bundles", "manifest.json")],
        pick: None,
    },
    SeedFiles {
        target: "bundle_ipc",
        files: &[("viewer/tests/fixtures/bundles", ".arrow")],
        pick: None,
    },
    SeedFiles {
        target: "table_file",
        files: &[
            ("pipelines/data/own-table", ".csv"),
            ("viewer/tests/fixtures/bundles/k40-bpnn", "runs.arrow"),
        ],
        // The format: 0 CSV, 1 TSV, 2 Parquet, 3 Arrow IPC.
        pick: Some(|path| match path.extension().and_then(|e| e.to_str()) {
            Some("tsv") => 1,
            Some("parquet") => 2,
            Some("arrow") => 3,
            _ => 0,
        }),
    },
    SeedFiles {
        target: "pyramid_chunk",
        files: &[],
        pick: None,
    },
    SeedFiles {
        target: "device_file",
        files: &[("crates/core/devices/catalogue", ".toml")],
        pick: None,
    },
    SeedFiles {
        target: "metrics_file",
        files: &[
            ("crates/plugin/profiler_import", "metrics.toml"),
            ("fuzz/seeds/metrics", ".toml"),
        ],
        pick: None,
    },
];

/// The seed files of `target` (none for a target not listed).
pub fn of(target: &str) -> Option<&'static SeedFiles> {
    SEEDS.iter().find(|s| s.target == target)
}

/// `bytes` (a file's start, at most one byte over [`SEED_MAX_BYTES`]) cut to a seed: to
/// [`SEED_MAX_BYTES`], at its last line end where there is one.
pub fn cut(bytes: &mut Vec<u8>) {
    if bytes.len() > SEED_MAX_BYTES {
        bytes.truncate(SEED_MAX_BYTES);
        if let Some(end) = bytes.iter().rposition(|&b| b == b'\n') {
            bytes.truncate(end + 1);
        }
    }
}
