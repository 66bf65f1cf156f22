//! `yosoku calibrate` on the real OpenCL CPU device (POCL): the sweep measured, the device file
//! written and read back by `yosoku devices`, and a bad question refused with nothing written.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
use common::{text, yosoku};

#[test]
fn a_calibration_on_pocl_writes_a_device_file_the_catalogue_reads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pocl.toml");
    let started = std::time::Instant::now();
    let out = yosoku(&[
        "calibrate",
        "--device-type",
        "cpu",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for line in [
        "  bandwidth ",
        "  FP32 ",
        "  launch latency ",
        "  wave sweep ",
        "wrote ",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    // Well under a minute, even on two vCPUs in a debug build (a check of the sweep's size,
    // not a benchmark).
    assert!(started.elapsed().as_secs() < 60, "{stdout}");
    let device =
        yosoku_devices::parse(&std::fs::read_to_string(&file).unwrap(), "pocl.toml").unwrap();
    for key in [
        "dram_bandwidth_gb_per_sec",
        "fp32_gflops",
        "launch_latency_us",
    ] {
        let v = &device.measured[key];
        assert!(v.value > 0.0 && v.source == "calibration", "{key}: {v:?}");
    }
    assert!(device.sources["calibration"].contains("yosoku calibrate"));
    // POCL names its device after the machine's CPU (`pthread-<architecture>-<model>`): on the
    // Intel VM the catalogue describes, the file is that entry with the calibration's
    // measurements; on another CPU (an AMD EPYC VM), a device of its own. Either way
    // `yosoku devices` reads it back under that name.
    assert!(device.name.starts_with("pthread-"), "{}", device.name);
    let shown = yosoku(&["devices", "--devices", file.to_str().unwrap(), &device.name]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(
        text(&shown.stdout).contains("calibration"),
        "{}",
        text(&shown.stdout)
    );
}

#[test]
fn a_calibration_of_no_device_or_an_unknown_name_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("d.toml");
    let out = yosoku(&[
        "calibrate",
        "--device-type",
        "accelerator",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("selects no device"), "{stderr}");
    assert!(!file.exists());
    let out = yosoku(&[
        "calibrate",
        "--device-type",
        "cpu",
        "--name",
        "GeForce GTX 9800",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no device `GeForce GTX 9800` in the catalogue; the closest:"),
        "{stderr}"
    );
    assert!(!file.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no temporary file left"
    );
    // A file that cannot be written (its directory does not exist) is an error naming it.
    let nowhere = dir.path().join("no/such/dir/d.toml");
    let out = yosoku(&[
        "calibrate",
        "--device-type",
        "cpu",
        "--out",
        nowhere.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no/such/dir"), "{stderr}");
    assert!(!dir.path().join("no").exists());
}

#[test]
fn a_cuda_calibration_without_a_driver_says_what_is_missing_and_writes_nothing() {
    // CI and the development machine have no NVIDIA driver; a machine with one calibrates for
    // real instead (tools/gpu-machine/cuda-campaign.sh), and there is nothing to refuse.
    if std::path::Path::new("/dev/nvidiactl").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpu.toml");
    let out = yosoku(&[
        "calibrate",
        "--backend",
        "cuda",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("plugin `cuda`, collector `calibrate` failed: no CUDA driver on this machine (libcuda.so.1 not found"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // A bad number of samples is refused before anything is loaded.
    let out = yosoku(&[
        "calibrate",
        "--backend",
        "cuda",
        "--repeats",
        "0",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("repeats: expected 1 to 1000, found 0"),
        "{stderr}"
    );
}

#[test]
fn the_h200_calibration_is_a_catalogue_file_with_every_cuda_measurement() {
    // The device file `yosoku calibrate --backend cuda` wrote on an H200
    // (pipelines/data/gpu-calibration/SOURCES.md).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../pipelines/data/gpu-calibration/h200-cuda/calibration.toml"
    );
    let device = yosoku_devices::parse(&std::fs::read_to_string(path).unwrap(), path).unwrap();
    assert_eq!(device.name, "NVIDIA H200");
    for key in [
        "dram_bandwidth_gb_per_sec",
        "dram_read_gb_per_sec",
        "dram_write_gb_per_sec",
        "block_bandwidth_gb_per_sec",
        "l2_bandwidth_gb_per_sec",
        "fp32_gflops",
        "launch_latency_us",
        "graph_launch_us",
        "kernel_floor_us",
        "empty_kernel_us",
        "wave_work_groups",
    ] {
        assert!(device.measured.contains_key(key), "{key}");
    }
    // One wave of 256-thread blocks: 8 an SM (2048 threads an SM) on 132 SMs.
    assert_eq!(device.measured["wave_work_groups"].value, 1056.0);
}

#[test]
fn a_pipeline_naming_a_missing_device_file_is_refused_with_its_path() {
    // `device_files` (a calibration the pipeline reads) resolved against the pipeline's folder;
    // a file that is not there is an error naming it, and no bundle is written.
    let dir = tempfile::tempdir().unwrap();
    let pipeline = dir.path().join("p.toml");
    std::fs::write(
        &pipeline,
        r#"[pipeline]
name = "p"
device_files = ["no-such-calibration.toml"]

[sources.d]
plugin = "dummy"
collector = "synthetic"
config = { device = "H200", programs = ["k"] }

[[validate]]
step = "physics_forecast"
id = "f"
on = ["H200"]
launches = [{ program = "k", variant = "1", blocks = 4, threads_per_block = 32, flops = 10, dram_bytes = 64 }]
"#,
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = yosoku(&[
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no-such-calibration.toml"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out_dir.exists());
}

/// The GPU machine's campaign (issue 69, item 4), dry: the CUDA calibration, then every kernel of
/// gpuperfpredict's Rodinia copy that the scripts build (all nine programs but heartwall, whose
/// video input no stored snapshot holds) under ncu with the DRAM, L2, instruction and cycle
/// counters, at several sizes each. Nothing is built or run: the scripts print what they would.
#[test]
fn the_gpu_machine_campaign_profiles_every_rodinia_kernel_with_counters_when_dry() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("bash")
        .arg("tools/gpu-machine/cuda-campaign.sh")
        .current_dir(common::repo())
        .env("DRY_RUN", "1")
        .env("OUT", dir.path())
        .env("TMPDIR", dir.path())
        .env("YOSOKU_BIN", dir.path())
        .output()
        .unwrap();
    let printed = text(&out.stdout);
    assert!(out.status.success(), "{printed}{}", text(&out.stderr));
    assert!(printed.contains("calibrate --backend cuda"), "{printed}");
    // Each pipeline: one kernel, its counters.
    let pipelines: Vec<&str> = printed.split("[pipeline]").skip(1).collect();
    for kernel in [
        "bpnn_layerforward_CUDA",
        "bpnn_adjust_weights_cuda",
        "calculate_temp",
        "lud_diagonal",
        "lud_perimeter",
        "lud_internal",
        "kernel_gpu_cuda",
        "Fan1",
        "Fan2",
        "needle_cuda_shared_1",
        "needle_cuda_shared_2",
        "dynproc_kernel",
        "hotspotOpt1",
    ] {
        let of: Vec<&&str> = pipelines
            .iter()
            .filter(|p| p.contains(&format!("kernel_name = \"{kernel}\"")))
            .collect();
        assert!(of.len() >= 3, "{kernel}: {} sizes", of.len());
        for metric in [
            "dram__bytes_read.sum",
            "lts__t_bytes.sum",
            "smsp__inst_executed.sum",
            "sm__cycles_active.avg",
        ] {
            assert!(of.iter().all(|p| p.contains(metric)), "{kernel}: {metric}");
        }
    }
}
