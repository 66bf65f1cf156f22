use yosoku_devices::Catalogue;

use super::data::{Measurements, Work};
use super::learned::{CostModel, cost_events, nonnegative_least_squares};
use super::schemes::{Method, Scheme, conformal_half_width, validate};
use super::*;
use crate::counters::testing::observations;

fn gpu(name: &str, architecture: &str, sms: f64, clock: f64, gflops: f64, bw: f64) -> GpuSpec {
    GpuSpec {
        name: name.to_owned(),
        architecture: architecture.to_owned(),
        sm_count: sms,
        clock_mhz: clock,
        fp32_peak_gflops: gflops,
        dram_bandwidth_gb_per_sec: bw,
        l2_bytes: Some(2.0 * 1024.0 * 1024.0),
        occupancy: Some(OccupancyLimits {
            max_threads_per_sm: 2048.0,
            max_blocks_per_sm: 32.0,
            registers_per_sm: 65536.0,
            shared_memory_per_sm_bytes: 98304.0,
        }),
        launch_latency_secs: None,
    }
}

pub(super) fn work(flops: f64, bytes: f64, blocks: f64) -> Work {
    Work {
        warp_instructions: flops / 32.0,
        flops,
        dram_bytes: bytes,
        blocks,
        threads_per_block: 256.0,
        registers_per_thread: 32.0,
        shared_bytes_per_block: 0.0,
        l2_transactions: 0.0,
        shared_transactions: 0.0,
        global_loads: 0.0,
        global_stores: 0.0,
        active_cycles: 0.0,
        occupancy_share: 0.0,
        seed: [f64::NAN; 6],
    }
}

#[test]
fn habitat_gamma_is_one_without_flops_zero_without_bytes_and_a_half_at_the_ridge() {
    let b = gpu("b", "x", 16.0, 1000.0, 4000.0, 200.0);
    assert_eq!(habitat_gamma(&work(0.0, 1e6, 100.0), &b), 1.0);
    assert_eq!(habitat_gamma(&work(1e6, 0.0, 100.0), &b), 0.0);
    // Ridge: 4000 / 200 = 20 flops per byte.
    assert!((habitat_gamma(&work(20e6, 1e6, 100.0), &b) - 0.5).abs() < 1e-12);
    assert!((habitat_gamma(&work(40e6, 1e6, 100.0), &b) - 0.25).abs() < 1e-12);
    assert!((habitat_gamma(&work(10e6, 1e6, 100.0), &b) - 0.75).abs() < 1e-12);
}

#[test]
fn occupancy_takes_the_tightest_limit() {
    let b = gpu("b", "x", 16.0, 1000.0, 4000.0, 200.0);
    let mut w = work(1.0, 1.0, 1000.0);
    // 256 threads: 8 blocks by threads; 32 registers: 8 warps x 1,024 registers = 8 blocks.
    assert_eq!(b.blocks_per_sm(&w), Some(8.0));
    w.registers_per_thread = 64.0; // 8 warps x 2,048 = 16,384 registers a block: 4 blocks.
    assert_eq!(b.blocks_per_sm(&w), Some(4.0));
    w.shared_bytes_per_block = 40_000.0; // 98,304 / 40,192 bytes: 2 blocks.
    assert_eq!(b.blocks_per_sm(&w), Some(2.0));
    assert_eq!(b.wave_size(&w), 32.0);
    assert_eq!(b.waves(&w), 32.0); // 1,000 blocks / 32 a wave, rounded up.
}

#[test]
fn wave_scaling_of_a_memory_bound_kernel_is_the_bandwidth_ratio() {
    let a = gpu("a", "x", 16.0, 1000.0, 4000.0, 200.0);
    let b = gpu("b", "x", 24.0, 1000.0, 6000.0, 400.0);
    let w = work(0.0, 1e9, 10_000.0);
    assert!((wave_scaling(1.0, &w, &a, &b) - 0.5).abs() < 1e-12);
    // Compute-bound (gamma small): close to the peak ratio, 4000 / 6000.
    let w = work(1e13, 1e6, 24.0 * 8.0 * 100.0);
    let t = wave_scaling(1.0, &w, &a, &b);
    assert!((t - 4000.0 / 6000.0).abs() < 0.01, "{t}");
    assert!((peak_scaling(3.0, &a, &b) - 2.0).abs() < 1e-12);
}

#[test]
fn nonnegative_least_squares_clamps_what_would_be_negative() {
    // Unconstrained solution of [[2, 1], [1, 2]] x = [1, -1] is (1, -1): clamped, x = (0.5, 0).
    let x = nonnegative_least_squares(&[2.0, 1.0, 1.0, 2.0], &[1.0, -1.0]);
    assert!((x[0] - 0.5).abs() < 1e-9 && x[1] == 0.0, "{x:?}");
    let x = nonnegative_least_squares(&[2.0, 0.0, 0.0, 4.0], &[2.0, 2.0]);
    assert!(
        (x[0] - 1.0).abs() < 1e-9 && (x[1] - 0.5).abs() < 1e-9,
        "{x:?}"
    );
}

#[test]
fn the_conformal_width_is_the_right_order_statistic_or_none() {
    let r: Vec<f64> = (1..=19).map(f64::from).collect();
    assert_eq!(conformal_half_width(r.clone(), 0.95), Some(19.0));
    assert_eq!(conformal_half_width(r.clone(), 0.5), Some(10.0));
    assert_eq!(conformal_half_width(r[..10].to_vec(), 0.95), None);
    assert_eq!(conformal_half_width(Vec::new(), 0.95), None);
}

/// Launches of `kernels` kernels on the first `gpus` built-in GeForce/Tesla GPUs, timed by a
/// known law: compute time + memory time at efficiencies that depend on the kernel, plus 5 us.
fn synthetic(gpus: &[&str], kernels: usize) -> arrow_array::RecordBatch {
    synthetic_counted(gpus, kernels, "inst_executed")
}

/// [`synthetic`] with its work counted as `count`: `inst_executed` (warp instructions) or
/// `flop_count_sp` (the same work as FLOPs, 32 a warp instruction: no instruction count).
fn synthetic_counted(gpus: &[&str], kernels: usize, count: &str) -> arrow_array::RecordBatch {
    let catalogue = Catalogue::built_in().unwrap();
    let mut ids = Vec::new();
    let (mut secs, mut inst, mut reads, mut gx, mut bx) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let programs: Vec<String> = (0..kernels).map(|k| format!("k{k}")).collect();
    let variants: Vec<String> = (0..12).map(|s| format!("{}", 1 << (s + 10))).collect();
    for name in gpus {
        // A device the catalogue lacks is timed as a GTX 680.
        let device = catalogue.find(name).or(catalogue.find("GTX-680")).unwrap();
        let spec = GpuSpec::from_device(device).unwrap();
        for (k, program) in programs.iter().enumerate() {
            for (s, variant) in variants.iter().enumerate() {
                let size = (1u64 << (s + 10)) as f64;
                let warps = size * (1.0 + k as f64) / 8.0;
                let transactions = size * (3.0 - k as f64 * 0.3) / 4.0;
                let w = work(warps * 32.0, transactions * 32.0, (size / 256.0).ceil());
                let compute = warps * 32.0 / spec.instruction_rate() / 0.6;
                let memory = w.dram_bytes / spec.bandwidth_bytes_per_sec() / 0.8;
                ids.push((*name, program.as_str(), variant.as_str()));
                secs.push(compute + memory + 5e-6);
                inst.push(warps);
                reads.push(transactions);
                gx.push(w.blocks);
                bx.push(256.0);
            }
        }
    }
    let ids: Vec<(&str, &str, &str)> = ids;
    observations(
        &ids,
        &secs,
        &[
            (
                count,
                "count",
                if count == "flop_count_sp" {
                    inst.iter().map(|w| w * 32.0).collect()
                } else {
                    inst
                },
            ),
            ("dram_read_transactions", "count", reads),
            ("grid_x", "config", gx),
            ("block_x", "config", bx),
        ],
    )
}

/// A method's score in a validation (of one scheme).
fn score_of(v: &super::schemes::Validation, method: Method) -> super::schemes::Score {
    v.scores
        .iter()
        .find(|s| s.method == method)
        .unwrap_or_else(|| panic!("no score of {method:?}"))
        .clone()
}

const GPUS: [&str; 5] = ["GTX-680", "GTX-970", "GTX-980", "Tesla-K40", "TitanX"];

#[test]
fn a_gpu_never_timed_is_predicted_from_the_others_within_a_few_percent() {
    let batch = synthetic(&GPUS, 4);
    let catalogue = Catalogue::built_in().unwrap();
    let m = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    assert_eq!(
        (m.gpus.len(), m.kernels.len(), m.launches.len()),
        (5, 4, 48)
    );
    assert!(m.by_launch.iter().all(|cells| cells.len() == 5));
    let v = validate(&m, &[Scheme::LeaveOneGpuOut], 0.95, true).unwrap();
    let score = |method| score_of(&v, method);
    let forest = score(Method::TransferForest);
    assert_eq!(forest.predicted, forest.rows);
    let learned = score(Method::Transfer);
    assert_eq!(learned.predicted, learned.rows);
    assert!(learned.median_abs_error_pct < 5.0, "{learned:?}");
    // The time is not the peak ratio: the learned model must beat cores x clock scaling.
    let peak = score(Method::PeakAllGpus);
    assert!(
        learned.mean_abs_error_pct < peak.mean_abs_error_pct,
        "{learned:?} {peak:?}"
    );
    assert!(learned.coverage_pct >= 80.0, "{learned:?}");
}

/// The synthetic launches of [`GPUS`], each GPU running each kernel at the physics model's time
/// over its catalogue rates times a factor of the kernel's own (its efficiency, the same on
/// every GPU).
fn at_physics_times_a_kernels_factor() -> Measurements {
    use super::physics::{GpuRates, KernelWork, physics_time};
    let batch = synthetic(&GPUS, 4);
    let catalogue = Catalogue::built_in().unwrap();
    let mut m = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    for c in &mut m.cells {
        let physics = physics_time(
            &KernelWork::from_work(&c.work),
            &GpuRates::from_spec(&m.gpus[c.gpu]),
        );
        c.secs = physics.secs * (1.0 + 0.7 * c.kernel as f64);
    }
    m
}

/// Where every GPU runs each kernel at the physics model's time times a factor of the kernel's
/// own (its efficiency, the same on every GPU), scaling a measured time by the physics of both
/// GPUs gives the held-out GPU's time exactly; one ratio for every kernel (cores x clock) does
/// not.
#[test]
fn physics_scaled_times_carry_the_physics_ratio_between_two_gpus() {
    let m = at_physics_times_a_kernels_factor();
    let v = validate(&m, &[Scheme::LeaveOneGpuOut], 0.95, false).unwrap();
    let score = |method| score_of(&v, method);
    let scaled = score(Method::PhysicsScaled);
    assert_eq!(scaled.predicted, scaled.rows);
    assert!(scaled.median_abs_error_pct < 1e-9, "{scaled:?}");
    let peak = score(Method::PeakAllGpus);
    assert!(peak.median_abs_error_pct > 1.0, "{peak:?}");
}

/// Where the physics-scaled times are exact (every GPU runs each kernel at the physics model's
/// time times the kernel's own factor), the training GPUs left out in turn say so, and the
/// choice among the scalings answers a held-out GPU with them; with the architecture held out
/// too, it never chooses cores x clock within the architecture, which has no source there.
#[test]
fn the_training_gpus_choose_the_scaling_that_predicts_them() {
    use super::schemes::combined_secs;
    let m = at_physics_times_a_kernels_factor();
    let schemes = [
        Scheme::LeaveOneGpuOut,
        Scheme::LeaveOneGpuOutOtherArchitectures,
    ];
    let v = validate(&m, &schemes, 0.95, false).unwrap();
    let score = |scheme: Scheme, method: Method| {
        v.scores
            .iter()
            .find(|s| s.scheme == scheme && s.method == method)
            .unwrap_or_else(|| panic!("no score of {method:?} under {scheme:?}"))
            .clone()
    };
    let chosen = score(Scheme::LeaveOneGpuOut, Method::ChosenByTrainingGpus);
    assert_eq!(chosen.predicted, chosen.rows);
    assert!(chosen.median_abs_error_pct < 1e-9, "{chosen:?}");
    let combined = score(Scheme::LeaveOneGpuOut, Method::Combined);
    assert!(combined.median_abs_error_pct > 1e-6, "{combined:?}");
    let other = Scheme::LeaveOneGpuOutOtherArchitectures;
    let (chosen, scaled) = (
        score(other, Method::ChosenByTrainingGpus),
        score(other, Method::PhysicsScaled),
    );
    assert_eq!(chosen.predicted, scaled.predicted, "{chosen:?}");
    // The combination is the geometric mean of the parts that answer.
    assert_eq!(combined_secs([2.0, 8.0, f64::NAN, -1.0]), Some(4.0));
    assert_eq!(combined_secs([0.0, f64::INFINITY]), None);
}

/// The physics methods read the profiles of a held-out GPU's architecture where any was
/// measured (instruction and cycle counts are an architecture's), else every measured GPU's.
#[test]
fn the_physics_reads_the_profiles_of_the_targets_architecture_where_there_are_any() {
    use super::schemes::{outer_folds, profiled_sources};
    let batch = synthetic(&GPUS, 2);
    let catalogue = Catalogue::built_in().unwrap();
    let m = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    let names = |cells: &[&super::data::Cell]| -> Vec<String> {
        let mut a: Vec<String> = cells.iter().map(|c| m.gpus[c.gpu].name.clone()).collect();
        a.sort();
        a
    };
    let gtx_680 = m.gpu_labels.iter().position(|g| g == "GTX-680").unwrap();
    for (scheme, expected) in [
        // The Kepler GTX 680 held out: the Tesla K40's profiles alone.
        (Scheme::LeaveOneGpuOut, 1),
        // With Kepler left out, the three Maxwell GPUs'.
        (Scheme::LeaveOneGpuOutOtherArchitectures, 3),
        // Kepler left out of training, the GTX 680 predicted from its architecture mate alone.
        (Scheme::LeaveOneArchitectureOut, 1),
    ] {
        let fold = outer_folds(&m, scheme)
            .into_iter()
            .find(|f| m.cells[f.targets[0]].gpu == gtx_680)
            .unwrap();
        let target = &m.cells[fold.targets[0]];
        let sources = profiled_sources(&m, &fold, target);
        assert_eq!(sources.len(), expected, "{scheme:?}: {:?}", names(&sources));
        let kepler = sources
            .iter()
            .all(|s| m.gpus[s.gpu].architecture == m.gpus[gtx_680].architecture);
        assert_eq!(
            kepler,
            scheme != Scheme::LeaveOneGpuOutOtherArchitectures,
            "{scheme:?}"
        );
        // Every Kepler GPU out of training where the scheme holds the architecture out.
        let kepler_trained = (0..m.gpus.len())
            .any(|g| m.gpus[g].architecture == m.gpus[gtx_680].architecture && !fold.held_gpu[g]);
        assert_eq!(
            kepler_trained,
            scheme == Scheme::LeaveOneGpuOut,
            "{scheme:?}"
        );
    }
}

#[test]
fn the_cost_model_prices_a_kernel_it_never_saw() {
    let batch = synthetic(&GPUS, 5);
    let catalogue = Catalogue::built_in().unwrap();
    let m = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    let model = CostModel::fit(&m, &|c| c.kernel != 2);
    let held: Vec<_> = m.cells.iter().filter(|c| c.kernel == 2).collect();
    for c in &held {
        let p = model.predict(&c.work, c.gpu).unwrap();
        assert!((p / c.secs - 1.0).abs() < 0.05, "{p} vs {}", c.secs);
    }
    assert_eq!(cost_events(&held[0].work)[0], 1.0);
}

#[test]
fn an_unknown_device_is_an_error_naming_the_closest_or_is_left_out_when_asked() {
    let batch = synthetic(&["GTX-680", "GTX-970", "GTX 9800"], 1);
    let catalogue = Catalogue::built_in().unwrap();
    let e = Measurements::from_observations(&batch, &catalogue, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("device `GTX 9800` is not in the device catalogue"),
        "{e}"
    );
    assert!(e.contains("closest:"), "{e}");
    let m = Measurements::from_observations(&batch, &catalogue, true).unwrap();
    assert_eq!(m.gpus.len(), 2);
    assert!(
        m.left_out.iter().any(|l| l.contains("GTX 9800")),
        "{:?}",
        m.left_out
    );
}

#[test]
fn a_table_without_the_instruction_count_is_refused() {
    let batch = observations(
        &[("GTX-680", "k", "1"), ("GTX-970", "k", "1")],
        &[1.0, 2.0],
        &[("grid_x", "config", vec![1.0, 1.0])],
    );
    let catalogue = Catalogue::built_in().unwrap();
    let e = Measurements::from_observations(&batch, &catalogue, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("inst_executed"), "{e}");
}

#[test]
fn predict_says_when_a_launch_is_unlike_the_training_ones_and_widens_its_interval() {
    let catalogue = Catalogue::built_in().unwrap();
    let training =
        Measurements::from_observations(&synthetic(&GPUS[1..], 4), &catalogue, false).unwrap();
    let profile_batch = synthetic(&["GTX-680"], 1);
    let mut profile = Measurements::from_observations(&profile_batch, &catalogue, false).unwrap();
    let target = GpuSpec::from_device(catalogue.find("Tesla V100").unwrap()).unwrap();
    let p = super::predict::predict(
        &training,
        &profile,
        &target,
        0.95,
        super::predict::TrainedTarget::Refuse,
    )
    .unwrap();
    assert_eq!(p.answers.len(), 12);
    assert!(p.notes.iter().any(|n| n.contains("Volta")), "{:?}", p.notes);
    let usual = &p.answers[5];
    assert!(usual.warnings.is_empty(), "{:?}", usual.warnings);
    // The same launches in blocks of 96 threads: no training launch used that size.
    for c in &mut profile.cells {
        c.work.threads_per_block = 96.0;
    }
    let q = super::predict::predict(
        &training,
        &profile,
        &target,
        0.95,
        super::predict::TrainedTarget::Refuse,
    )
    .unwrap();
    let odd = &q.answers[5];
    assert!(
        odd.warnings[0].contains("a block of 96 threads"),
        "{:?}",
        odd.warnings
    );
    let width = |a: &super::predict::Answer| a.interval_secs.1 / a.interval_secs.0;
    assert!(width(odd) > width(usual), "{} {}", width(odd), width(usual));
    // A target the model was trained on is refused, unless refitted without it.
    let trained = GpuSpec::from_device(catalogue.find("GTX-980").unwrap()).unwrap();
    let e = super::predict::predict(
        &training,
        &profile,
        &trained,
        0.95,
        super::predict::TrainedTarget::Refuse,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("is one of the model's training GPUs"),
        "{e}"
    );
    let r = super::predict::predict(
        &training,
        &profile,
        &trained,
        0.95,
        super::predict::TrainedTarget::LeaveOut,
    )
    .unwrap();
    assert!(!r.training_gpus.contains(&"GeForce GTX 980".to_owned()));
}

#[test]
fn the_utilisation_model_predicts_a_gpu_it_never_saw_and_never_beats_the_roofline() {
    use super::utilisation::{UtilisationModel, latency_secs, waves_roofline};
    let batch = synthetic(&GPUS, 4);
    let catalogue = Catalogue::built_in().unwrap();
    let m = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    let held = 2;
    let model = UtilisationModel::fit(&m, &|c| c.gpu != held, &|_| "all".to_owned()).unwrap();
    let mut errors = Vec::new();
    let mut unchanged = Vec::new();
    for t in m.cells.iter().filter(|c| c.gpu == held) {
        let gpu = &m.gpus[t.gpu];
        let p = model.secs(&t.work, gpu, "all").unwrap();
        let (roof, _) = waves_roofline(&t.work, gpu).unwrap();
        assert!(p >= latency_secs(gpu) + roof, "{p} below the roofline");
        errors.push((p / t.secs - 1.0).abs());
        let source = m.by_launch[t.launch]
            .iter()
            .map(|&c| &m.cells[c])
            .find(|c| c.gpu != held)
            .unwrap();
        unchanged.push((source.secs / t.secs - 1.0).abs());
        let scaled = model
            .scaled(source.secs, &source.work, &m.gpus[source.gpu], gpu, "all")
            .unwrap();
        assert!(scaled > latency_secs(gpu));
    }
    let (e, u) = (crate::median(&mut errors), crate::median(&mut unchanged));
    assert!(
        e < 0.15 && e < u,
        "median |error| {e} against time unchanged {u}"
    );
    // A time not above the source's latency says nothing of the work: no answer.
    let c = &m.cells[0];
    assert_eq!(
        model.scaled(1e-6, &c.work, &m.gpus[c.gpu], &m.gpus[held], "all"),
        None
    );
}

#[test]
fn a_measured_launch_latency_comes_before_the_published_one() {
    let catalogue = Catalogue::built_in().unwrap();
    let mut h200 = catalogue.find("H200").unwrap().clone();
    let published = GpuSpec::from_device(&h200).unwrap().launch_latency_secs;
    assert!((published.unwrap() - 2.4e-6).abs() < 1e-12);
    h200.measured.insert(
        "launch_latency_us".to_owned(),
        yosoku_devices::Sourced {
            value: 3.1,
            source: "calibration".to_owned(),
        },
    );
    let measured = GpuSpec::from_device(&h200).unwrap().launch_latency_secs;
    assert!((measured.unwrap() - 3.1e-6).abs() < 1e-12);
}

/// Kernels of a law the model has seen, described by their work alone, forecast on a GPU it was
/// not fitted on: near their times, mostly inside their intervals, the roofline below them; a
/// training GPU as the target and too few groups are refused.
#[test]
fn a_kernel_described_by_its_work_alone_is_forecast_on_a_gpu_never_fitted() {
    use super::work_forecast::{
        WORK_METHODS, WorkLaunch, WorkModel, WorkModelOptions, WorkQuestion, WorkTraining,
    };
    use crate::model::Model;
    // Training launches counted as the forecast's are described: FLOPs, no instructions.
    let batch = synthetic_counted(&GPUS, 4, "flop_count_sp");
    let catalogue = Catalogue::built_in().unwrap();
    let m = Measurements::from_profile(&batch, &catalogue).unwrap();
    let held = 4;
    let train: Vec<usize> = (0..m.gpus.len()).filter(|g| *g != held).collect();
    // Each kernel its own group.
    let options = WorkModelOptions {
        groups: Default::default(),
        other_group: None,
        level: 0.95,
        peaks: Default::default(),
    };
    let training = WorkTraining {
        measurements: &m,
        train: &train,
    };
    // Every launch of the held-out GPU, as its work describes it.
    let cells: Vec<_> = m.cells.iter().filter(|c| c.gpu == held).collect();
    let launches: Vec<WorkLaunch> = cells
        .iter()
        .map(|c| WorkLaunch {
            program: m.kernels[c.kernel].clone(),
            variant: m.launches[c.launch].1.clone(),
            blocks: c.work.blocks,
            threads_per_block: c.work.threads_per_block,
            flops: c.work.flops,
            dram_bytes: c.work.dram_bytes,
            moved_bytes: None,
            dependent_steps: None,
            dram_round_trips: None,
        })
        .collect();
    let target = m.gpus[held].clone();
    let model = WorkModel::fit(training, &options).unwrap();
    let question = WorkQuestion {
        targets: std::slice::from_ref(&target),
        launches: &launches,
    };
    let forecasts = model.predict(question).unwrap();
    assert_eq!(forecasts.len(), WORK_METHODS.len() * launches.len());
    assert_eq!(model.groups.len(), 4);
    // Its saved form reads back as the same model, answering the same.
    let saved = WorkModel::from_json(&model.to_json().unwrap()).unwrap();
    assert_eq!(saved.predict(question).unwrap(), forecasts);
    let (mut errors, mut inside) = (Vec::new(), 0);
    for x in &forecasts {
        let measured = cells[x.launch].secs;
        if x.method == "roofline" {
            assert!(
                x.secs < measured,
                "roofline {} above the time {measured}",
                x.secs
            );
            continue;
        }
        errors.push((x.secs / measured - 1.0).abs());
        let (lo, hi) = x.interval_secs.unwrap();
        inside += usize::from(lo <= measured && measured <= hi);
    }
    let e = crate::median(&mut errors);
    assert!(e < 0.1, "median |error| {e}");
    assert!(
        inside * 10 >= launches.len() * 9,
        "{inside} of {} inside",
        launches.len()
    );
    assert!(model.stated[0].median_abs_error_pct.is_finite() && model.stated[0].launches > 0);
    // A training GPU is no target.
    let e = model
        .predict(WorkQuestion {
            targets: &[m.gpus[0].clone()],
            launches: &launches,
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a training GPU"), "{e}");
    // One group cannot be left out with another kept: the model states nothing of itself, and
    // a forecast refuses it.
    let one_group = WorkModelOptions {
        other_group: Some("all".to_owned()),
        ..options
    };
    let e = WorkModel::fit(training, &one_group)
        .unwrap()
        .predict(question)
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least two of each"), "{e}");
}

/// The transfer family's model saved and read back answers exactly as the model fitted; a
/// target among its training GPUs is refused, or answered by a model fitted without it as the
/// call that fits and answers at once does.
#[test]
fn a_saved_transfer_model_answers_as_the_fitted_one() {
    use super::predict::{
        GpuTransfer, TrainedTarget, TransferOptions, TransferQuestion, TransferTraining,
    };
    use crate::model::Model;
    let catalogue = Catalogue::built_in().unwrap();
    let batch = synthetic(&GPUS[1..], 4);
    let options = TransferOptions::default();
    let fitted = GpuTransfer::fit(
        TransferTraining {
            observations: &batch,
            devices: &catalogue,
        },
        &options,
    )
    .unwrap();
    let json = fitted.to_json().unwrap();
    let saved = GpuTransfer::from_json(&json).unwrap();
    assert_eq!(saved, fitted);
    let record = GpuTransfer::options_record(&options).unwrap();
    assert_eq!(
        record["skip_unknown_devices"],
        serde_json::Value::Bool(false)
    );
    assert_eq!(GpuTransfer::options_from_record(&record).unwrap(), options);
    // Every calibration list is sorted and finite, for both relations.
    for errors in [
        &saved.transfer_errors,
        &saved.wave_scaling_errors,
        &saved.utilisation_errors,
    ] {
        for list in [errors.of(true), errors.of(false)] {
            assert!(list.windows(2).all(|w| w[0] <= w[1]) && list.iter().all(|r| r.is_finite()));
        }
    }

    let training = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    let profile =
        Measurements::from_observations(&synthetic(&["GTX-680"], 1), &catalogue, false).unwrap();
    for (target, trained_target) in [
        ("Tesla V100", TrainedTarget::Refuse),
        ("GTX-980", TrainedTarget::LeaveOut),
    ] {
        let target = GpuSpec::from_device(catalogue.find(target).unwrap()).unwrap();
        let question = TransferQuestion {
            training: &training,
            profile: &profile,
            target: &target,
            level: 0.9,
            trained_target,
        };
        let at_once =
            super::predict::predict(&training, &profile, &target, 0.9, trained_target).unwrap();
        assert_eq!(saved.predict(question).unwrap(), at_once);
    }
    let trained = GpuSpec::from_device(catalogue.find("GTX-980").unwrap()).unwrap();
    let e = saved
        .predict(TransferQuestion {
            training: &training,
            profile: &profile,
            target: &trained,
            level: 0.9,
            trained_target: TrainedTarget::Refuse,
        })
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("is one of the model's training GPUs"),
        "{e}"
    );
    let e = GpuTransfer::from_json("{\"training_gpus\": []}").unwrap_err();
    assert!(
        e.to_string().contains("the saved gpu_transfer model"),
        "{e}"
    );
    // A file changed after the fit (its hash with it) is refused at the key it breaks.
    let changed = |key: &[&str], value: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut at = &mut v;
        for k in key {
            at = match k.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*k],
            };
        }
        *at = value;
        GpuTransfer::from_json(&v.to_string())
            .unwrap_err()
            .to_string()
    };
    let e = changed(
        &["transfer", "across_architectures", "scale"],
        serde_json::json!([1.0]),
    );
    assert!(
        e.contains("key `transfer.across_architectures.scale`: 1 values, expected 11"),
        "{e}"
    );
    let e = changed(
        &["transfer", "across_architectures", "scale", "3"],
        serde_json::json!(0.0),
    );
    assert!(
        e.contains("key `transfer.across_architectures.scale`: value 4 is 0"),
        "{e}"
    );
    let e = changed(
        &["transfer_errors", "same_architecture", "0"],
        serde_json::json!(1e9),
    );
    assert!(
        e.contains("key `transfer_errors.same_architecture`: value 2 is below the one before it"),
        "{e}"
    );
    let e = changed(
        &["wave_scaling_errors", "across_architectures", "0"],
        serde_json::json!(-1.0),
    );
    assert!(
        e.contains("key `wave_scaling_errors.across_architectures`: value 1 is -1"),
        "{e}"
    );
    let e = changed(&["utilisation", "all", "mean"], serde_json::json!([]));
    assert!(
        e.contains("key `utilisation.all.mean`: 0 values, expected 9"),
        "{e}"
    );
}

/// The transfer model over the base its nested cross-validation chooses: where times follow
/// the physics model up to a kernel's own factor, a physics base, which reproduces a held-out
/// GPU; where they follow the clock alone (a law the device features hold and the physics
/// model's ratio does not), not the physics ratio alone, and about as well as the ridge of the
/// times themselves.
#[test]
fn the_transfer_model_learns_over_the_physics_where_the_training_gpus_say_it_helps() {
    use super::learned::{TransferBase, TransferModel};
    use super::physics::{GpuRates, KernelWork, physics_time};
    let batch = synthetic(&GPUS, 4);
    let catalogue = Catalogue::built_in().unwrap();
    let mut physical = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    let mut clocked = physical.clone();
    for c in &mut physical.cells {
        let physics = physics_time(
            &KernelWork::from_work(&c.work),
            &GpuRates::from_spec(&physical.gpus[c.gpu]),
        );
        c.secs = physics.secs * (1.0 + 0.7 * c.kernel as f64);
    }
    for c in &mut clocked.cells {
        c.secs = c.work.warp_instructions / (clocked.gpus[c.gpu].clock_mhz * 1e6)
            * (1.0 + 0.7 * c.kernel as f64);
    }
    let model = TransferModel::fit_choosing_base(&physical, &|_| true).unwrap();
    assert_ne!(model.within_base, TransferBase::Time, "{model:?}");
    assert_ne!(model.across_base, TransferBase::Time, "{model:?}");
    let v = validate(&physical, &[Scheme::LeaveOneGpuOut], 0.95, false).unwrap();
    let chosen = score_of(&v, Method::TransferChosenBase);
    assert_eq!(chosen.predicted, chosen.rows);
    assert!(chosen.median_abs_error_pct < 0.01, "{chosen:?}");
    // The plain fit keeps learning the times themselves.
    let plain = TransferModel::fit(&physical, &|_| true).unwrap();
    assert_eq!(
        (plain.within_base, plain.across_base),
        (TransferBase::Time, TransferBase::Time)
    );
    // The family's model with the option (`gpu_transfer_fit`'s `choose_base`, what `yosoku
    // predict` answers from) chooses the same, and its saved form keeps the bases and the option.
    {
        use super::predict::GpuTransfer;
        use crate::model::Model;
        let fitted = GpuTransfer::fit_measurements(&physical, true).unwrap();
        assert!(fitted.choose_base);
        assert_eq!(fitted.transfer, model);
        let saved = GpuTransfer::from_json(&fitted.to_json().unwrap()).unwrap();
        assert_eq!(saved, fitted);
        let plain = GpuTransfer::fit_measurements(&physical, false).unwrap();
        assert_eq!(plain.transfer.within_base, TransferBase::Time);
    }

    let model = TransferModel::fit_choosing_base(&clocked, &|_| true).unwrap();
    assert_ne!(model.within_base, TransferBase::PhysicsOnly, "{model:?}");
    assert_ne!(model.across_base, TransferBase::PhysicsOnly, "{model:?}");
    let v = validate(&clocked, &[Scheme::LeaveOneGpuOut], 0.95, false).unwrap();
    let chosen = score_of(&v, Method::TransferChosenBase);
    let time = score_of(&v, Method::Transfer);
    assert!(
        chosen.median_abs_error_pct < time.median_abs_error_pct + 1.0,
        "{chosen:?} {time:?}"
    );
    let physics = score_of(&v, Method::PhysicsScaled);
    assert!(
        chosen.median_abs_error_pct < physics.median_abs_error_pct / 2.0,
        "{chosen:?} {physics:?}"
    );
}

/// The ridge from a design's sums is the ridge of the design: the same standardised
/// coefficients and predictions, a column of zeros given no weight.
#[test]
fn a_ridge_from_the_designs_sums_is_the_ridge_of_the_design() {
    use super::learned::Ridge;
    let (n, p) = (40, 3);
    let x: Vec<f64> = (0..n * p)
        .map(|i| {
            let (row, col) = ((i / p) as f64, i % p);
            match col {
                0 => (row * 0.37).sin(),
                1 => (row * 0.11).cos() * 3.0,
                _ => 0.0,
            }
        })
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| 2.0 * x[i * p] - 0.5 * x[i * p + 1] + 0.01 * (i as f64 * 1.7).sin())
        .collect();
    let direct = Ridge::fit_penalised(&x, p, &y, false, 1.0).unwrap();
    let mut gram = vec![0.0; p * p];
    let mut xty = vec![0.0; p];
    for i in 0..n {
        for a in 0..p {
            xty[a] += x[i * p + a] * y[i];
            for b in 0..p {
                gram[a * p + b] += x[i * p + a] * x[i * p + b];
            }
        }
    }
    let summed = Ridge::from_sums(&gram, &xty, n, 1.0).unwrap();
    for ((a, sa), (b, sb)) in direct.coefficients().zip(summed.coefficients()) {
        assert!((a - b).abs() < 1e-9 && (sa - sb).abs() < 1e-9, "{a} {b}");
    }
    let row = [0.3, -1.2, 5.0];
    assert!((direct.predict(&row) - summed.predict(&row)).abs() < 1e-9);
    assert!(Ridge::from_sums(&gram, &xty, p + 1, 1.0).is_none());
}

#[test]
fn a_profiles_sm_cycles_are_read_as_a_sum_and_its_occupancy_as_a_share_of_the_possible() {
    let catalogue = Catalogue::built_in().unwrap();
    // One launch of 16 blocks of 256 threads on a GTX 980 (16 SMs, 2,048 threads an SM: 8
    // blocks of 8 warps possible, but the grid has 1 block an SM): its SMs active 1,000 cycles
    // on average (ncu's "SM Active Cycles"), or 16,000 summed (nvprof's `active_cycles`).
    let ids = [("GTX-980", "k", "v"), ("GTX-980", "k", "w")];
    let config = |name: &'static str, v: f64| (name, "config", vec![v, v]);
    let count = |name: &'static str, v: f64| (name, "count", vec![v, v]);
    let batch = observations(
        &ids,
        &[1e-5, 1e-5],
        &[
            count("inst_executed", 1e4),
            count("dram_read_transactions", 1e3),
            config("grid_x", 16.0),
            config("block_x", 256.0),
            ("active_cycles", "time", vec![16_000.0, f64::NAN]),
            ("active_cycles_avg", "time", vec![f64::NAN, 1_000.0]),
            // 4 of the SM's 64 warps: half the 8 the grid allows.
            ("achieved_occupancy", "ratio", vec![4.0 / 64.0, 4.0 / 64.0]),
        ],
    );
    let m = Measurements::from_observations(&batch, &catalogue, false).unwrap();
    for cell in &m.cells {
        assert_eq!(cell.work.active_cycles, 16_000.0);
        assert!((cell.work.occupancy_share - 0.5).abs() < 1e-12);
    }
}
