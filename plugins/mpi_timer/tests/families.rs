//! The interposer on real MPI runs of programs that call every function it wraps: each call is
//! in the log once per call made (none hidden inside another, none lost), with the bytes it
//! moved, from C and from Fortran (`use mpi` and `use mpi_f08`, whose bindings bypass the C
//! wrappers). The programs are in `tests/programs/`; `cargo xtask test` builds them with the
//! interposer (`cargo xtask mpi-tools`) and sets YOSOKU_MPI_TOOLS. Without it these tests are
//! skipped with a note.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use yosoku_plugin_mpi_timer::log::{EventKind, RankLog, parse};

fn tools() -> Option<PathBuf> {
    match std::env::var_os("YOSOKU_MPI_TOOLS") {
        Some(dir) => Some(dir.into()),
        None => {
            eprintln!("skipped: YOSOKU_MPI_TOOLS is not set (run `cargo xtask test`)");
            None
        }
    }
}

/// Runs `program` on 2 ranks under the interposer and parses both ranks' logs.
fn run(tools: &Path, program: &str) -> Vec<RankLog> {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let out = Command::new("mpirun")
        .args(["-np", "2", "--oversubscribe", "--bind-to", "none"])
        // Open MPI 4.1.4's defaults fail this program without any interposer: its one-sided
        // `rdma` component crashes in MPI_Compare_and_swap over shared memory, and `ompio`
        // hangs in an MPI_File_iread past the end of the file. The other components run it.
        .args(["--mca", "osc", "pt2pt", "--mca", "io", "romio321"])
        .arg("-x")
        .arg(format!(
            "LD_PRELOAD={}",
            tools.join("libyosoku_mpi_timer.so").display()
        ))
        .arg("-x")
        .arg(format!("YOSOKU_MPI_LOG_DIR={}", logs.display()))
        .arg(tools.join(program))
        .arg(dir.path())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // Each launch its own Open MPI session directory: launches started at once (this file's
        // tests run in parallel) raced to create the shared /tmp/ompi.<host>.<uid> and one
        // failed with "mkdir ... File exists" (Open MPI 4.1.4).
        .env("TMPDIR", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (0..2)
        .map(|r| {
            let path = logs.join(format!("rank-{r}.tsv"));
            parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap()
        })
        .collect()
}

/// Every call of both ranks: name -> (bytes of each call on rank 0, on rank 1).
fn calls(logs: &[RankLog]) -> BTreeMap<String, [Vec<i64>; 2]> {
    let mut out: BTreeMap<String, [Vec<i64>; 2]> = BTreeMap::new();
    for (r, log) in logs.iter().enumerate() {
        assert_eq!(log.end.as_deref(), Some("complete"), "rank {r}");
        for e in log.events.iter().filter(|e| e.kind == EventKind::Call) {
            out.entry(e.name.to_string()).or_default()[r].push(e.bytes);
        }
    }
    out
}

/// The names in the interposer's list of wrapped calls (`YOSOKU_MPI_CALLS`).
fn wrapped_calls() -> BTreeSet<String> {
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("interposer/yosoku_mpi_timer.c"),
    )
    .unwrap();
    let list = source
        .split_once("#define YOSOKU_MPI_CALLS(X)")
        .unwrap()
        .1
        .split_once("\n\n")
        .unwrap()
        .0;
    list.split("X(")
        .skip(1)
        .map(|s| format!("MPI_{}", s.split_once(')').unwrap().0))
        .collect()
}

#[test]
fn every_wrapped_c_call_is_logged_once_per_call_with_its_bytes() {
    let Some(tools) = tools() else { return };
    let logs = run(&tools, "families");
    // The command line as started (the program overwrites its argument before MPI_Finalize):
    // the program, then the scratch directory.
    for log in &logs {
        let words: Vec<&str> = log.command.split(' ').collect();
        assert!(words[0].ends_with("/families"), "{}", log.command);
        assert!(
            words.len() == 2 && words[1].contains('/') && !words[1].starts_with("xxx"),
            "{}",
            log.command
        );
    }
    let calls = calls(&logs);
    let seen: BTreeSet<String> = calls.keys().cloned().collect();
    let wrapped = wrapped_calls();
    assert!(wrapped.len() > 100, "{}", wrapped.len());
    // The program calls each wrapped function; nothing else is logged (the collectives ROMIO
    // makes inside MPI_File_* calls are part of those calls).
    assert_eq!(
        wrapped.difference(&seen).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "wrapped but not logged"
    );
    assert_eq!(
        seen.difference(&wrapped).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "logged but not in the list"
    );
    let bytes = |name: &str, rank: usize| calls[name][rank].clone();
    let doubles = |n: i64| 8 * n;
    // Point-to-point: what is sent or received.
    assert_eq!(bytes("MPI_Send", 0), [doubles(1000); 5]);
    assert_eq!(bytes("MPI_Rsend", 0), [doubles(1000)]);
    assert_eq!(bytes("MPI_Recv", 1).len(), 5);
    assert_eq!(bytes("MPI_Sendrecv", 1), [doubles(2000)]);
    // Collectives: this rank's side; v forms summed over the ranks; in place: the other side.
    assert_eq!(bytes("MPI_Bcast", 1), [doubles(1000)]);
    assert_eq!(bytes("MPI_Alltoall", 0), [doubles(2000)]);
    assert_eq!(bytes("MPI_Alltoallv", 0), [doubles(2000)]);
    assert_eq!(bytes("MPI_Alltoallw", 1), [doubles(2000)]);
    assert_eq!(bytes("MPI_Reduce_scatter", 0), [doubles(2000)]);
    assert_eq!(bytes("MPI_Reduce_scatter_block", 0), [doubles(2000)]);
    assert_eq!(bytes("MPI_Allgather", 1), [doubles(1000), doubles(1000)]);
    assert_eq!(bytes("MPI_Scatterv", 1), [doubles(1000)]);
    assert_eq!(bytes("MPI_Ialltoallv", 1), [doubles(2000)]);
    // Neighbourhood: a periodic ring of 2 has two neighbours.
    assert_eq!(bytes("MPI_Neighbor_alltoall", 0), [doubles(2000)]);
    assert_eq!(bytes("MPI_Ineighbor_alltoallw", 1), [doubles(2000)]);
    // One-sided and MPI-IO.
    assert_eq!(bytes("MPI_Put", 0), [doubles(1000), doubles(1000)]);
    assert_eq!(bytes("MPI_Get_accumulate", 0), [doubles(2000)]);
    assert_eq!(bytes("MPI_Fetch_and_op", 0), [8]);
    assert_eq!(bytes("MPI_File_write_at", 1), [doubles(1000)]);
    assert_eq!(bytes("MPI_File_open", 0), [0]);
    // The peer of a one-sided call is its target.
    let put = logs[0]
        .events
        .iter()
        .find(|e| &*e.name == "MPI_Put")
        .unwrap();
    assert_eq!(put.peer, 1);
}

#[test]
fn fortran_calls_are_logged_at_the_programs_own_call_sites() {
    let Some(tools) = tools() else { return };
    let logs = run(&tools, "families_f");
    let calls = calls(&logs);
    for name in [
        // point-to-point, persistent, probe
        "MPI_Send",
        "MPI_Ssend",
        "MPI_Recv",
        "MPI_Sendrecv",
        "MPI_Isend",
        "MPI_Irecv",
        "MPI_Waitall",
        "MPI_Send_init",
        "MPI_Recv_init",
        "MPI_Startall",
        "MPI_Probe",
        // collectives, v forms, scans, non-blocking
        "MPI_Bcast",
        "MPI_Allreduce",
        "MPI_Gatherv",
        "MPI_Scatterv",
        "MPI_Allgatherv",
        "MPI_Alltoallv",
        "MPI_Reduce_scatter",
        "MPI_Scan",
        "MPI_Exscan",
        "MPI_Iallreduce",
        "MPI_Wait",
        "MPI_Barrier",
        // neighbourhood, one-sided, MPI-IO
        "MPI_Neighbor_allgather",
        "MPI_Win_fence",
        "MPI_Put",
        "MPI_Get",
        "MPI_File_open",
        "MPI_File_write_at",
        "MPI_File_read_at_all",
        "MPI_File_close",
    ] {
        assert!(calls.contains_key(name), "{name} not logged: {calls:?}");
    }
    assert_eq!(calls["MPI_Send"][0], [8000, 8000]);
    assert_eq!(calls["MPI_Allreduce"][1], [8000]);
    assert_eq!(calls["MPI_File_write_at"][0], [8000]);
    // Each call is the program's (the return address is in `families_f`), so blocks are keyed
    // by the Fortran source's call sites.
    for log in &logs {
        assert!(
            log.sites.iter().all(|s| s.starts_with("families_f+0x")),
            "{:?}",
            log.sites
        );
        // Every rank's log was written at MPI_FINALIZE (the Fortran one).
        assert!(log.finalize_start_ns.is_some());
    }
}

#[test]
fn fortran_2008_calls_are_logged_too() {
    let Some(tools) = tools() else { return };
    let logs = run(&tools, "families_f08");
    let calls = calls(&logs);
    let names: Vec<&str> = calls.keys().map(String::as_str).collect();
    assert_eq!(names, ["MPI_Allreduce", "MPI_Barrier", "MPI_Sendrecv"]);
    assert_eq!(calls["MPI_Allreduce"][0], [8000]);
    assert_eq!(calls["MPI_Sendrecv"][1], [16000]);
}
