//! The fuzz targets of the `cuda_profiler` plugin's readers: what each runs on one input, and
//! asserts beyond "no panic". One file per plugin, so that a binary links one plugin: each
//! plugin exports the same C entry point. Included by the targets' binaries
//! (`fuzz_targets/`) and by the replay test (`crates/app/runner/tests/fuzz_replay_cuda.rs`),
//! each of which has the helpers of `fuzz/src/lib.rs` as `crate::yosoku_fuzz`.
//!
//! `saved_transfer_model` is here too: the training launches its fuzzed models answer with are
//! the plugin's reading of real gpuperfpredict files.

use std::path::Path;
use std::sync::OnceLock;

use yosoku_devices::Catalogue;
use yosoku_models::Model;
use yosoku_models::transfer::predict::{GpuTransfer, TrainedTarget, TransferQuestion};
use yosoku_models::transfer::{GpuSpec, Measurements};
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
    ("saved_transfer_model", saved_transfer_model),
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

/// The question a fuzzed transfer model answers: the training launches it says it was fitted on
/// and a profile, both read from real files of the gpuperfpredict data set (Rodinia's two
/// back-propagation kernels: pipelines/data/gpuperfpredict/SOURCES.md), and a target among none
/// of them.
pub struct TransferFixture {
    pub training: Measurements,
    pub profile: Measurements,
    pub target: GpuSpec,
}

/// The real files the fixture reads, embedded: Rodinia's two back-propagation kernels on four
/// training GPUs and on the profile's GPU.
macro_rules! bpnn_files {
    ($($gpu:literal),*) => {
        &[$(
            (
                concat!("bpnn_adjust_weights_cuda-", $gpu, ".csv.gz"),
                include_bytes!(concat!(
                    "../../../pipelines/data/gpuperfpredict/bpnn_adjust_weights_cuda-",
                    $gpu,
                    ".csv.gz"
                )).as_slice(),
            ),
            (
                concat!("bpnn_layerforward_CUDA-", $gpu, ".csv.gz"),
                include_bytes!(concat!(
                    "../../../pipelines/data/gpuperfpredict/bpnn_layerforward_CUDA-",
                    $gpu,
                    ".csv.gz"
                )).as_slice(),
            ),
        )*]
    };
}
const TRAINING_FILES: &[(&str, &[u8])] = bpnn_files!("GTX-680", "GTX-980", "Tesla-K40", "Titan");
const PROFILE_FILES: &[(&str, &[u8])] = bpnn_files!("GTX-970");
/// The launches read from each file (its smallest sizes): 9 give each relation of GPUs the 99
/// held-out errors an interval at 99 % needs (108), and a saved model under a seed's 16 KiB.
const LAUNCHES_A_FILE: usize = 9;
/// The target: a GPU neither the training launches nor the profile were measured on.
const TARGET_GPU: &str = "GTX TITAN X";

/// The `observations` table of gpuperfpredict `files`, as the plugin reads them.
fn observations(files: &[(&str, &[u8])]) -> arrow_array::RecordBatch {
    let mut dataset = Dataset::new();
    for (name, bytes) in files {
        let path = Path::new(name);
        let bytes = yosoku_plugin_sdk::inflate(path, bytes).expect("a gzip file");
        let text = String::from_utf8(bytes).expect("UTF-8");
        // The header and the first launches: the saved model holds its held-out errors, one a
        // pair of training GPUs and launch.
        let head: String = text
            .split_inclusive('\n')
            .take(1 + LAUNCHES_A_FILE)
            .collect();
        dataset
            .read(path, &head)
            .expect("a gpuperfpredict file reads");
    }
    let tables = dataset.finish().expect("its tables");
    tables
        .into_iter()
        .find(|(name, _)| name == "observations")
        .expect("an observations table")
        .1
}

/// [`TransferFixture`], read once.
pub fn transfer_fixture() -> &'static TransferFixture {
    static FIXTURE: OnceLock<TransferFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let catalogue = Catalogue::built_in().expect("the built-in catalogue");
        TransferFixture {
            training: Measurements::from_observations(
                &observations(TRAINING_FILES),
                &catalogue,
                false,
            )
            .expect("training launches"),
            profile: Measurements::from_profile(&observations(PROFILE_FILES), &catalogue)
                .expect("a profile"),
            target: GpuSpec::from_device(catalogue.find(TARGET_GPU).expect("the target"))
                .expect("the target's spec"),
        }
    })
}

/// A model bundle's fitted parameters as `yosoku predict --model` reads them back (the bundle's
/// hashes say only that the file is the one saved, not that it is sound): no panic; a file that
/// is not a model is refused at its line and column or key; a model read back answers the
/// question, or refuses it, and every time it gives is a positive number inside its interval.
pub fn saved_transfer_model(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let model = match GpuTransfer::from_json(text) {
        Ok(model) => model,
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains("(line ") || message.contains("key `"),
                "a saved model refused without a place: {message}"
            );
            return;
        }
    };
    let fixture = transfer_fixture();
    let Ok(prediction) = model.predict(TransferQuestion {
        training: &fixture.training,
        profile: &fixture.profile,
        target: &fixture.target,
        level: 0.95,
        trained_target: TrainedTarget::Refuse,
    }) else {
        return;
    };
    for a in &prediction.answers {
        let (low, high) = a.interval_secs;
        assert!(
            a.predicted_secs.is_finite() && a.predicted_secs > 0.0,
            "a predicted time of {} s",
            a.predicted_secs
        );
        assert!(
            low <= a.predicted_secs && a.predicted_secs <= high,
            "{} s outside its interval {low}..{high} s",
            a.predicted_secs
        );
    }
}
