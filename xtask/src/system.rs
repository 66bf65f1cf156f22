//! The machine: root or not, and installing Debian packages the tests need.

use std::process::Command;

use anyhow::{Context, Result};

use crate::run_cmd;

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `apt-get install` as root (CI) or through passwordless sudo.
pub fn apt_install(packages: &[&str]) -> Result<()> {
    let (program, prefix): (&str, &[&str]) = if is_root() {
        ("apt-get", &[])
    } else {
        ("sudo", &["-n", "apt-get"])
    };
    // The package lists once per xtask run: `cargo xtask test` installs MPI, POCL and Chromium
    // in turn, and each `apt-get update` took 10-30 s of a CI run.
    static UPDATED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let update = if UPDATED.load(std::sync::atomic::Ordering::Relaxed) {
        Ok(())
    } else {
        run_cmd(
            Command::new(program)
                .args(prefix)
                .args(["update", "-q"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )
        .inspect(|()| UPDATED.store(true, std::sync::atomic::Ordering::Relaxed))
    };
    update
        .and_then(|()| {
            run_cmd(
                Command::new(program)
                    .args(prefix)
                    .args(["install", "-y", "-q", "--no-install-recommends"])
                    .args(packages)
                    .env("DEBIAN_FRONTEND", "noninteractive"),
            )
        })
        .with_context(|| {
            format!(
                "cannot install {} (needs root or passwordless sudo); install it by hand",
                packages.join(" ")
            )
        })
}
