//! `cargo xtask cuda-trace-check` (part of `cargo xtask test`): the in-kernel trace header
//! (plugins/cuda_profiler/include/yosoku_trace.cuh) and the programs of tools/cuda-trace compiled
//! with clang on a machine with no CUDA toolkit and no GPU. The device code is compiled to PTX
//! for real (`--cuda-device-only -nocudainc -nocudalib`), and the PTX must read the timers and
//! the SM id; the host code is type-checked against the runtime declarations of
//! tools/cuda-trace/clang-check/cuda_runtime.h. What only a GPU can show (the results, the
//! timings) is tools/cuda-trace/run.sh's, on a lent machine. Installs clang when missing.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::mpi_apps::on_path;
use crate::system::apt_install;
use crate::{repo_root, run_cmd, target_dir};

/// The programs, and the extra defines of each build (run.sh builds the same).
const BUILDS: &[(&str, &str, &[&str])] = &[
    ("selftest", "selftest.cu", &[]),
    ("matmul", "matmul.cu", &[]),
    ("fwt", "fwt.cu", &[]),
    ("srad", "srad.cu", &[]),
    ("srad_bounded", "srad.cu", &["-DSRAD_MIN_BLOCKS=6"]),
];

/// What every program's PTX must do: read the two timers and the SM id.
const PTX_MUST_READ: &[&str] = &["%globaltimer", "%clock64", "%smid"];

fn clang() -> Result<String> {
    let names = [
        "clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14",
    ];
    if let Some(found) = names.iter().find(|n| on_path(n)) {
        return Ok((*found).to_owned());
    }
    apt_install(&["clang"])?;
    if on_path("clang") {
        Ok("clang".to_owned())
    } else {
        bail!("no clang after installing Debian's `clang`")
    }
}

pub fn check() -> Result<()> {
    let clang = clang()?;
    let root = repo_root();
    let tools = root.join("tools/cuda-trace");
    let out = target_dir().join("cuda-trace-check");
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    for (name, source, defines) in BUILDS {
        let ptx = out.join(format!("{name}.ptx"));
        run_cmd(
            common(&clang, &root, &tools.join(source), defines)
                .args(["-O3", "--cuda-device-only", "-S", "-o"])
                .arg(&ptx),
        )?;
        run_cmd(
            common(&clang, &root, &tools.join(source), defines)
                .args(["--cuda-host-only", "-fsyntax-only"]),
        )?;
        let text = std::fs::read_to_string(&ptx)
            .with_context(|| format!("cannot read {}", ptx.display()))?;
        for register in PTX_MUST_READ {
            if !text.contains(register) {
                bail!(
                    "{}: the PTX of {source} never reads {register}",
                    ptx.display()
                );
            }
        }
    }
    eprintln!(
        "xtask: the trace header and {} builds of tools/cuda-trace compile to PTX with {clang} ({})",
        BUILDS.len(),
        out.display()
    );
    Ok(())
}

fn common(clang: &str, root: &Path, source: &Path, defines: &[&str]) -> Command {
    let shim = root.join("tools/cuda-trace/clang-check");
    let mut cmd = Command::new(clang);
    cmd.args([
        "-x",
        "cuda",
        "-nocudainc",
        "-nocudalib",
        "--cuda-gpu-arch=sm_80",
    ])
    .args([
        "-std=c++17",
        "-Wall",
        "-Werror",
        "-Wno-unknown-cuda-version",
    ])
    .arg("-include")
    .arg(shim.join("cuda_runtime.h"))
    .arg("-I")
    .arg(&shim)
    .arg("-I")
    .arg(root.join("plugins/cuda_profiler/include"))
    .args(defines)
    .arg(source);
    cmd
}
