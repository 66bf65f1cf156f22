//! The fuzz targets of the `cuda_profiler` plugin's readers: every seed and regression replayed through the
//! target's checks (`fuzz_replay/mod.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code and the fuzz checks

#[path = "../../../../fuzz/src/lib.rs"]
#[allow(dead_code)] // the targets use some of the helpers
mod yosoku_fuzz;

#[path = "../../../../fuzz/src/targets/cuda.rs"]
mod targets;

mod fuzz_replay;

#[test]
fn every_seed_and_regression_passes_its_targets_checks() {
    let replayed = fuzz_replay::replay(targets::TARGETS);
    assert!(replayed >= targets::TARGETS.len(), "{replayed} inputs");
}

/// The seed of `saved_transfer_model` is the model the transfer family fits on the target's own
/// training launches, saved as a bundle saves it (so the campaign starts from a model that reads
/// back and answers); `YOSOKU_BLESS=1` (`cargo xtask bless`) writes it again after a change to
/// the model's saved form.
#[test]
fn the_saved_transfer_models_seed_is_the_model_fitted_on_its_training_launches() {
    use yosoku_models::Model;
    use yosoku_models::transfer::predict::GpuTransfer;
    let fixture = targets::transfer_fixture();
    let fitted = GpuTransfer::fit_measurements(&fixture.training, false).unwrap();
    let json = fitted.to_json().unwrap();
    let path = fuzz_replay::repo().join("fuzz/seeds/transfer/bpnn-four-gpus.json");
    if std::env::var_os("YOSOKU_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &json).unwrap();
    }
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(
        saved.len() <= yosoku_fuzz::seeds::SEED_MAX_BYTES,
        "the seed is {} bytes: a seed is cut at {}",
        saved.len(),
        yosoku_fuzz::seeds::SEED_MAX_BYTES
    );
    assert_eq!(
        GpuTransfer::from_json(&saved).unwrap(),
        fitted,
        "{} is not the model fitted on the fixture: `cargo xtask bless` writes it again",
        path.display()
    );
    // It answers the target's question.
    let answered = fitted
        .predict(yosoku_models::transfer::predict::TransferQuestion {
            training: &fixture.training,
            profile: &fixture.profile,
            target: &fixture.target,
            level: 0.95,
            trained_target: yosoku_models::transfer::predict::TrainedTarget::Refuse,
        })
        .unwrap();
    assert!(!answered.answers.is_empty(), "{answered:?}");
}
