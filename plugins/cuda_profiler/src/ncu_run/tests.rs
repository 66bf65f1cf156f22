//! Without a GPU: the command lines built, where the tools are looked for, ncu's verdicts, and
//! the whole run with a stand-in `ncu` (a shell script) that writes the committed report of a
//! real ncu run (tests/data/ncu, an H100) to its log file and runs the program — what `ncu_run`
//! does after the launch is what it does on a GPU.

use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::nsys::read_gpu_trace;

fn committed_report() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ncu/ncu_raw_sweep_copy_float_h100.csv")
}

fn config(program: &Path) -> NcuRun {
    NcuRun {
        ncu: PathBuf::from("/opt/cuda/bin/ncu"),
        nsys: None,
        program: program.to_path_buf(),
        args: vec!["1024".into(), "a b".into()],
        metrics: vec![
            "gpu__time_duration.sum".into(),
            "dram__bytes_read.sum".into(),
        ],
        kernel_name: Some("regex:copy_.*".into()),
        launch_skip: Some(2),
        launch_count: Some(5),
        clock_control: Some("none".into()),
        timeout: Duration::from_secs(60),
        log_dir: None,
    }
}

fn finished(code: i32, stdout: &str) -> Finished {
    process::run(
        Command::new("sh").args(["-c", &format!("printf '%s' \"$0\"; exit {code}"), stdout]),
        Duration::from_secs(30),
    )
    .unwrap()
}

#[test]
fn the_command_lines() {
    let run = config(Path::new("/work/app"));
    let args = run.ncu_args(Path::new("/tmp/r/ncu.csv"));
    assert_eq!(
        shown(&run.ncu, &args),
        "/opt/cuda/bin/ncu --csv --page raw --metrics gpu__time_duration.sum,dram__bytes_read.sum --kernel-name 'regex:copy_.*' --launch-skip 2 --launch-count 5 --clock-control none --log-file /tmp/r/ncu.csv /work/app 1024 'a b'"
    );
    let (profile, stats) = run.nsys_args(Path::new("/tmp/r"));
    assert_eq!(
        shown(Path::new("nsys"), &profile),
        "nsys profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true --output /tmp/r/nsys-trace /work/app 1024 'a b'"
    );
    assert_eq!(
        shown(Path::new("nsys"), &stats),
        "nsys stats --report cuda_gpu_trace --format csv --force-export=true --output /tmp/r/nsys-trace /tmp/r/nsys-trace.nsys-rep"
    );
    let plain = NcuRun {
        kernel_name: None,
        launch_skip: None,
        launch_count: None,
        clock_control: None,
        args: vec![],
        ..run
    };
    assert_eq!(
        shown(&plain.ncu, &plain.ncu_args(Path::new("l.csv"))),
        "/opt/cuda/bin/ncu --csv --page raw --metrics gpu__time_duration.sum,dram__bytes_read.sum --log-file l.csv /work/app"
    );
}

#[test]
fn tools_are_found_on_path_then_in_the_newest_cuda() {
    let root = tempfile::tempdir().unwrap();
    let exe = |dir: &Path, name: &str| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), "#!/bin/sh\n").unwrap();
    };
    let local = root.path().join("usr-local");
    exe(&local.join("cuda-12.4/bin"), "ncu");
    exe(&local.join("cuda-13.0/bin"), "ncu");
    exe(&local.join("cuda-13.0/bin"), "nsys");
    std::fs::create_dir_all(local.join("lib")).unwrap();
    let on_path = root.path().join("bin");
    exe(&on_path, "nsys");
    let dirs = tool_dirs(Some(on_path.clone().into_os_string()), &local);
    assert_eq!(find_in("ncu", &dirs), Some(local.join("cuda-13.0/bin/ncu")));
    assert_eq!(find_in("nsys", &dirs), Some(on_path.join("nsys")));
    assert_eq!(find_in("rocprof", &dirs), None);
    let e = find_tool("ncu", Some("/no/such/ncu"), "ncu").unwrap_err();
    assert_eq!(e.to_string(), "ncu: /no/such/ncu is not a file");
    let e = find_tool("ncu", Some("ncu-not-installed-here"), "ncu").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "ncu: `ncu-not-installed-here` not found on PATH or under /usr/local/cuda*/bin; install Nsight Compute"
        ),
        "{e}"
    );
}

#[test]
fn ncu_verdicts() {
    let report = std::fs::read_to_string(committed_report()).unwrap();
    let cmd = "ncu ... ./app";
    check_ncu(&finished(0, "app output\n"), &report, cmd, "no filter").unwrap();

    // NVIDIA's message when profiling is restricted to administrators.
    let refused = "==PROF== Connected to process 12 (/work/app)\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0.\n";
    let e = check_ncu(&finished(0, ""), refused, cmd, "no filter")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("(ERR_NVGPUCTRPERM)") && e.contains("NVreg_RestrictProfilingToAdminUsers=0"),
        "{e}"
    );

    let e = check_ncu(
        &finished(3, "step 1\nstep 2\nCUDA error: out of memory\n"),
        "==PROF== Connected to process 12 (/work/app)\n==ERROR== The application returned an error code (3).\n",
        cmd,
        "no filter",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("ncu: `ncu ... ./app` failed (exit status: 3); the program's last lines:\n  step 1\n  step 2\n  CUDA error: out of memory\nncu said:\n  ==ERROR== The application returned an error code (3)."), "{e}");

    let e = check_ncu(
        &finished(0, "done\n"),
        "==PROF== Connected to process 12 (/work/app)\n==PROF== Disconnected from process 12\n==WARNING== No kernels were profiled.\n",
        cmd,
        "kernel_name = \"lud_diagonal\"",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "ncu: `ncu ... ./app` profiled no kernel launch (kernel_name = \"lud_diagonal\"): the program launched no kernel that matches"
    );
}

/// A stand-in for ncu: writes the committed report to `--log-file`, then runs the program with
/// its arguments (as ncu does), and exits with the program's status.
fn fake_ncu(dir: &Path) -> PathBuf {
    let path = dir.join("ncu");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nwhile [ \"$1\" != \"--log-file\" ]; do shift; done\ncp {} \"$2\"\nshift 2\nexec \"$@\"\n",
            committed_report().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_run_keeps_the_report_the_output_and_the_command_apart_and_imports() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("app");
    std::fs::write(
        &program,
        "#!/bin/sh\necho \"the program says $1\"\necho warning >&2\n",
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let run = NcuRun {
        ncu: fake_ncu(dir.path()),
        ..config(&program)
    };
    let ran = run.run(&out).unwrap();
    assert_eq!(ran.report, out.join(NCU_LOG));
    assert_eq!(
        std::fs::read_to_string(out.join(PROGRAM_OUTPUT)).unwrap(),
        "the program says 1024\nwarning\n"
    );
    let command = std::fs::read_to_string(out.join(COMMAND_FILE)).unwrap();
    assert!(
        command.contains("--launch-count 5 --clock-control none --log-file"),
        "{command}"
    );
    assert_eq!(ran.commands.len(), 1);
    let tables = crate::read_ncu(&ran.report, &crate::ncu::Labels::default()).unwrap();
    let runs = &tables.iter().find(|(n, _)| n == "runs").unwrap().1;
    assert_eq!(runs.num_rows(), 6, "one launch per size of the sweep");

    // The program failing under ncu: its last lines in the error.
    std::fs::write(
        &program,
        "#!/bin/sh\necho 'bad input: n must be even' >&2\nexit 2\n",
    )
    .unwrap();
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    let e = run.run(&again).unwrap_err().to_string();
    assert!(
        e.contains("failed (exit status: 2)") && e.contains("bad input: n must be even"),
        "{e}"
    );

    // Past its timeout: killed, with what it said until then.
    std::fs::write(&program, "#!/bin/sh\necho started\nsleep 30\n").unwrap();
    let slow = NcuRun {
        timeout: Duration::from_millis(500),
        ..run
    };
    let e = slow.run(&again).unwrap_err().to_string();
    assert!(
        e.contains("ran longer than timeout_secs = 0.5 and was killed; its last lines:\n  started"),
        "{e}"
    );
}

/// Each default ncu metric maps back to the canonical counter it is collected for.
#[test]
fn every_default_metric_maps_to_its_canonical_counter() {
    let mapping = yosoku_profiler_import::metrics::mapping();
    for (canonical, ncu) in DEFAULT_COUNTERS {
        assert_eq!(
            mapping.resolve("ncu", ncu).map(|c| c.name),
            Some((*canonical).to_owned()),
            "{ncu}"
        );
        assert!(
            yosoku_tables::metrics::find(canonical).is_some(),
            "{canonical}"
        );
    }
}

/// `nsys stats --report cuda_gpu_trace --format csv`, in the columns nsys 2024-2026 write,
/// after its notices: a memcpy, a kernel whose quoted name holds commas, a memset.
#[test]
fn the_nsys_kernel_trace_becomes_spans() {
    let text = "\nNOTICE: Existing SQLite export found: nsys-trace.sqlite\n\nProcessing [nsys-trace.sqlite] with [cuda_gpu_trace.py]... \n\
Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n\
1000,5000,10,,,,,,,,,,4.194,838.800,Pageable,Device,NVIDIA H100 80GB HBM3 (0),1,,7,[CUDA memcpy Host-to-Device]\n\
7000,2500,12,512,1,1,256,1,1,16,0.000,0.000,,,,,NVIDIA H100 80GB HBM3 (0),1,,7,\"void saxpy<float>(int, float, const float *, float *)\"\n\
9800,300,14,,,,,,,,,,4.194,,,Device,NVIDIA H100 80GB HBM3 (0),1,,8,[CUDA memset]\n";
    let batch = read_gpu_trace(Path::new("t.csv"), text, "app").unwrap();
    assert_eq!(batch.num_rows(), 3);
    let col = |name: &str| {
        let a = batch.column_by_name(name).unwrap();
        let t = yosoku_tables::text::Text::new(a.as_ref()).unwrap();
        (0..3).map(|i| t.value(i).to_owned()).collect::<Vec<_>>()
    };
    assert_eq!(col("category"), ["memcpy", "kernel", "memset"]);
    assert_eq!(
        col("name")[1],
        "void saxpy<float>(int, float, const float *, float *)"
    );
    assert_eq!(col("lane")[2], "NVIDIA H100 80GB HBM3 (0) / stream 8");
    let start = batch
        .column_by_name("start_ns")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::Int64Array>()
        .unwrap();
    assert_eq!(start.values(), &[1000, 7000, 9800]);
    let e = read_gpu_trace(
        Path::new("t.csv"),
        "Start (ns),Duration (ns),Name\nx,1,k\n",
        "app",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "t.csv:2:1: column `Start (ns)`: expected whole nanoseconds, found `x`"
    );
    let e = read_gpu_trace(Path::new("t.csv"), "Time,Name\n", "app")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no nsys stats table"), "{e}");
}
