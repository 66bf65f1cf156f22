//! The xtask binary as `cargo xtask` runs it. (This test also makes cargo build that binary in
//! the workspace's test build, which `cargo xtask test` then runs the rest of the suite in.)

use std::process::Command;

fn xtask(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("the xtask binary runs")
}

#[test]
fn help_lists_every_command_it_dispatches() {
    let out = xtask(&["help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for command in [
        "demo",
        "test",
        "web",
        "fuzz",
        "new-plugin",
        "cuda-trace-check",
        "install",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(command)),
            "`cargo xtask help` does not list `{command}`:\n{help}"
        );
    }
}

#[test]
fn an_unknown_command_fails_and_says_so() {
    let out = xtask(&["no-such-command"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown command `no-such-command`"),
        "stderr: {err}"
    );
}

#[test]
#[cfg(feature = "full")]
fn install_refuses_an_unknown_argument_before_building_anything() {
    let out = xtask(&["install", "--prefx", "/tmp/x"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown argument `--prefx`; usage: cargo xtask install [--prefix DIR]"),
        "stderr: {err}"
    );
    let out = xtask(&["install", "--prefix"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--prefix needs a directory"));
}
