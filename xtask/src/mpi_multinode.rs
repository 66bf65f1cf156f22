//! `cargo xtask mpi-multinode`: an MPI run across two hosts on one machine, through the
//! `mpi_timer` plugin's `run` collector, as it would run on a cluster. Each "host" is a network
//! namespace with an address of its own (`yosoku-h1` 10.77.0.1, `yosoku-h2` 10.77.0.2), joined
//! by a veth pair, and a hostname of its own (a UTS namespace: `h1`, `h2`). `mpirun` starts in
//! the first; Open MPI reaches the second through a launch agent (`plm_rsh_agent`, what `ssh`
//! is on a cluster) that enters that host's namespaces and starts Open MPI's daemon there. The
//! hostfile names both hosts by address, two slots each; the solver runs on 2 hosts x 2 ranks,
//! and every rank writes its log into the run's directory (one file system, as a cluster's
//! shared one). Then a hostfile naming a host that answers nowhere must fail with the
//! launcher's words and leave no bundle.
//!
//! Needs root (namespaces, veth) and `ip` (iproute2) and `unshare` (util-linux): `cargo xtask
//! test` runs it where it can make namespaces and says so where it cannot. The namespaces are
//! removed at the end, whether the runs pass or fail.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::mpi::{HIMENO, INTERPOSER, build_tools, mpi_env};
use crate::system::is_root;
use crate::{run_cmd, target_dir};

/// The two hosts: namespace, hostname, address.
const HOSTS: [(&str, &str, &str); 2] = [
    ("yosoku-h1", "h1", "10.77.0.1"),
    ("yosoku-h2", "h2", "10.77.0.2"),
];

/// An address on the hosts' network that no host has.
const UNREACHABLE: &str = "10.77.0.9";

/// `ip args...`, failing with its stderr.
fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .context("cannot run `ip` (Debian: apt-get install iproute2)")?;
    if !out.status.success() {
        bail!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Removes the namespaces (and with them the veth pair); quiet when they are not there.
fn remove_hosts() {
    for (ns, _, _) in HOSTS {
        let _ = Command::new("ip").args(["netns", "del", ns]).output();
    }
}

/// Makes the two hosts and their link.
fn make_hosts() -> Result<()> {
    remove_hosts();
    for (ns, _, _) in HOSTS {
        ip(&["netns", "add", ns])?;
        ip(&["-n", ns, "link", "set", "lo", "up"])?;
    }
    ip(&[
        "link", "add", "ysk-v1", "netns", HOSTS[0].0, "type", "veth", "peer", "name", "ysk-v2",
        "netns", HOSTS[1].0,
    ])?;
    for ((ns, _, address), dev) in HOSTS.iter().zip(["ysk-v1", "ysk-v2"]) {
        ip(&[
            "-n",
            ns,
            "addr",
            "add",
            &format!("{address}/24"),
            "dev",
            dev,
        ])?;
        ip(&["-n", ns, "link", "set", dev, "up"])?;
    }
    Ok(())
}

/// Writes the launch agent, the `mpirun` of the first host and the hostfiles into `work`.
fn write_scripts(work: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let cases: String = HOSTS
        .iter()
        .map(|(ns, name, address)| format!("  {address}) ns={ns}; name={name} ;;\n"))
        .collect();
    // Open MPI calls the agent as `agent [options] <host> <command...>`, as it calls ssh.
    let agent = format!(
        "#!/bin/sh\n# yosoku's launch agent for two hosts in network namespaces (cargo xtask mpi-multinode):\n# what ssh is on a cluster.\nwhile [ \"${{1#-}}\" != \"$1\" ]; do shift; done\nhost=$1; shift\ncase $host in\n{cases}  *) echo \"agent: no host $host (ssh: connect to host $host port 22: No route to host)\" >&2; exit 255 ;;\nesac\nexec ip netns exec $ns unshare --uts sh -c 'hostname \"$0\"; exec sh -c \"$1\"' $name \"$*\"\n"
    );
    let (ns, name, _) = HOSTS[0];
    let mpirun = format!(
        "#!/bin/sh\n# mpirun on host {name} (namespace {ns}).\nexec ip netns exec {ns} unshare --uts sh -c 'hostname {name}; exec mpirun \"$@\"' mpirun \"$@\"\n"
    );
    for (file, text) in [("agent.sh", agent), ("mpirun-h1.sh", mpirun)] {
        let path = work.join(file);
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    let hostfile: String = HOSTS
        .iter()
        .map(|(_, _, address)| format!("{address} slots=2\n"))
        .collect();
    std::fs::write(work.join("hostfile"), hostfile)?;
    std::fs::write(
        work.join("hostfile-unreachable"),
        format!("{} slots=2\n{UNREACHABLE} slots=2\n", HOSTS[0].2),
    )?;
    Ok(())
}

/// The pipeline that runs the solver with `hostfile` through the `run` collector.
fn pipeline(work: &Path, tools: &Path, hostfile: &str, log_dir: &Path) -> String {
    let mpirun_args = [
        "--hostfile",
        &work.join(hostfile).display().to_string(),
        "--mca",
        "plm_rsh_agent",
        &work.join("agent.sh").display().to_string(),
        "--mca",
        "btl",
        "tcp,self",
        "--mca",
        "btl_tcp_if_include",
        "10.77.0.0/24",
        "--mca",
        "oob_tcp_if_include",
        "10.77.0.0/24",
        "-x",
        "OMPI_ALLOW_RUN_AS_ROOT",
        "-x",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
    ]
    .map(str::to_owned);
    format!(
        "[pipeline]\nname = \"mpi-multinode\"\ndescription = \"himeno_mpi on 2 hosts x 2 ranks (network namespaces), through the run collector\"\n\n[sources.run]\nplugin = \"mpi_timer\"\ncollector = \"run\"\nconfig = {{ program = {:?}, args = [\"129\", \"65\", \"65\", \"40\"], ranks = 4, binding = \"none\", oversubscribe = true, interposer = {:?}, mpirun = {:?}, mpirun_args = {mpirun_args:?}, log_dir = {:?}, parameters = \"n=65\", timeout_secs = 120 }}\n",
        tools.join(HIMENO).display().to_string(),
        tools.join(INTERPOSER).display().to_string(),
        work.join("mpirun-h1.sh").display().to_string(),
        log_dir.display().to_string(),
    )
}

/// What `cargo xtask test` runs: the same, where this machine lets it make namespaces (root,
/// iproute2, a kernel that allows it); elsewhere it says why it did not run.
pub fn check() -> Result<()> {
    let probe = "yosoku-probe";
    let can = is_root()
        && Command::new("ip")
            .args(["netns", "add", probe])
            .output()
            .is_ok_and(|o| o.status.success());
    if !can {
        println!(
            "xtask: MPI across two hosts not run: it needs root and network namespaces (`ip netns add`); run `cargo xtask mpi-multinode` where they are"
        );
        return Ok(());
    }
    let _ = Command::new("ip").args(["netns", "del", probe]).output();
    // The workspace's tests built the CLI and the plugins already.
    across_hosts(&build_tools()?)
}

/// `cargo xtask mpi-multinode`.
pub fn run(args: &[String]) -> Result<()> {
    if !args.is_empty() {
        bail!("usage: cargo xtask mpi-multinode");
    }
    if !is_root() {
        bail!("mpi-multinode makes network namespaces and a veth pair: run it as root");
    }
    let tools = build_tools()?;
    run_cmd(crate::cargo().args(["build", "-p", "yosoku-cli", "-p", "yosoku-plugin-mpi-timer"]))?;
    across_hosts(&tools)
}

/// The hosts made, the runs, the hosts removed.
fn across_hosts(tools: &Path) -> Result<()> {
    let work = target_dir().join("mpi-multinode");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    write_scripts(&work)?;
    make_hosts()?;
    let result = runs(&work, tools);
    remove_hosts();
    result
}

/// The two runs: across both hosts (imported, each rank's host shown), then with a host that
/// cannot be reached (an error, no bundle).
fn runs(work: &Path, tools: &Path) -> Result<()> {
    let yosoku = crate::yosoku_binary();
    let file = work.join("multinode.toml");
    std::fs::write(&file, pipeline(work, tools, "hostfile", &work.join("logs")))?;
    let bundle = work.join("bundle");
    println!("\n== himeno_mpi on 2 hosts x 2 ranks");
    run_cmd(
        mpi_env(&mut Command::new(&yosoku))
            .arg("run")
            .arg(&file)
            .arg("-o")
            .arg(&bundle),
    )?;
    let out = Command::new(&yosoku)
        .args(["inspect"])
        .arg(&bundle)
        .args(["--table", "run.mpi_ranks", "--rows", "4"])
        .output()?;
    let shown = String::from_utf8_lossy(&out.stdout);
    println!("{shown}");
    let hosts_seen: Vec<&str> = HOSTS
        .iter()
        .map(|(_, name, _)| *name)
        .filter(|name| shown.contains(&format!("| {name} ")))
        .collect();
    let logs = std::fs::read_dir(work.join("logs"))?.count();
    if hosts_seen.len() != 2 || logs != 4 {
        bail!(
            "expected 4 rank logs in {} from hosts h1 and h2; found {logs} logs, hosts {hosts_seen:?}",
            work.join("logs").display()
        );
    }
    println!(
        "4 ranks on hosts h1 and h2, every log in {}",
        work.join("logs").display()
    );

    println!("\n== a hostfile naming a host that cannot be reached ({UNREACHABLE})");
    let file = work.join("unreachable.toml");
    std::fs::write(
        &file,
        pipeline(
            work,
            tools,
            "hostfile-unreachable",
            &work.join("logs-unreachable"),
        ),
    )?;
    let bad_bundle = work.join("bundle-unreachable");
    let out = mpi_env(&mut Command::new(&yosoku))
        .arg("run")
        .arg(&file)
        .arg("-o")
        .arg(&bad_bundle)
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{}", stderr.trim_end());
    if out.status.success() || bad_bundle.exists() {
        bail!("the run with an unreachable host succeeded or left a bundle");
    }
    if !stderr.contains(UNREACHABLE) {
        bail!("the error does not name the unreachable host {UNREACHABLE}");
    }
    println!("\nrefused, the launcher's words shown, no bundle written");
    Ok(())
}
