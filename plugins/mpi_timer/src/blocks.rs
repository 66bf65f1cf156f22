//! Compute and communication blocks of one rank, and the main-loop iteration of each.
//!
//! Every MPI call is a communication block keyed `MPI_Xxx@module+0xoffset` (the call and where
//! the program made it). The time between two calls is a compute block keyed by the calls that
//! bound it (`MPI_A@site -> MPI_B@site`), or by the name of a `yosoku_mark` made inside it; the
//! first starts when MPI_Init returns, the last ends when MPI_Finalize is called. Keys are the
//! same on every rank and in every run of the same binary, so a reduced run's blocks can be
//! matched to a full run's.
//!
//! Iterations: with `yosoku_iteration()` markers, iteration i starts at the i-th marker (which
//! splits the compute block it falls in, as the key `... -> iteration` shows). Without
//! them, the loop is found from the repeating call sites: the communication blocks executed most
//! often (k times, k >= 2) are the loop's, and iteration i starts at the i-th execution of the
//! first of them. Either way the loop ends with the last execution of a loop block; blocks before
//! the first iteration and after the loop's end have no iteration (they run once).

use std::collections::HashMap;

use crate::log::{EventKind, RankLog};

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub block: String,
    pub compute: bool,
    /// Where in the program: `MPI_Send at a.out+0x10`, or the calls around a compute block.
    pub call_site: String,
    pub iteration: Option<i64>,
    /// From the end of MPI_Init.
    pub start_ns: u64,
    pub duration_ns: u64,
}

/// How the iterations were found.
#[derive(Debug, Clone, PartialEq)]
pub enum Iterations {
    Markers(usize),
    /// (iterations, the block that starts each)
    Repeating(usize, String),
    None,
}

/// The blocks of one rank, in time order, and how its iterations were found.
pub fn blocks(log: &RankLog) -> (Vec<Block>, Iterations) {
    let mut out = Vec::with_capacity(2 * log.events.len() + 1);
    let mut iteration_starts = Vec::new();
    let mut previous_end = log.init_end_ns;
    let mut previous_call = "MPI_Init".to_owned();
    let mut mark: Option<&str> = None;
    let compute = |out: &mut Vec<Block>, from: u64, to: u64, after: &str, before: &str, mark| {
        let key = match mark {
            Some(name) => format!("compute {name}"),
            None => format!("{after} -> {before}"),
        };
        out.push(Block {
            call_site: format!("between {after} and {before}"),
            block: key,
            compute: true,
            iteration: None,
            start_ns: from - log.init_end_ns,
            duration_ns: to.saturating_sub(from),
        });
    };
    for e in &log.events {
        match e.kind {
            EventKind::Mark => mark = Some(&e.name),
            EventKind::Iteration => {
                // The marker splits the compute block it falls in.
                let t = e.start_ns.max(previous_end);
                compute(
                    &mut out,
                    previous_end,
                    t,
                    &previous_call,
                    "iteration",
                    mark.take(),
                );
                iteration_starts.push(out.len());
                previous_end = t;
                previous_call = "iteration".to_owned();
            }
            EventKind::Call => {
                let site = e.site.map(|s| log.sites[s].as_str()).unwrap_or("?");
                let key = format!("{}@{site}", e.name);
                let start = e.start_ns.max(previous_end);
                compute(
                    &mut out,
                    previous_end,
                    start,
                    &previous_call,
                    &key,
                    mark.take(),
                );
                out.push(Block {
                    call_site: format!("{} at {site}", e.name),
                    block: key.clone(),
                    compute: false,
                    iteration: None,
                    start_ns: start - log.init_end_ns,
                    duration_ns: e.end_ns - start,
                });
                previous_end = e.end_ns;
                previous_call = key;
            }
        }
    }
    let end = log.end_ns().max(previous_end);
    compute(
        &mut out,
        previous_end,
        end,
        &previous_call,
        "MPI_Finalize",
        mark.take(),
    );
    let how = assign_iterations(&mut out, iteration_starts);
    (out, how)
}

/// `marker_starts`: the index of the first block of each marked iteration.
fn assign_iterations(out: &mut [Block], marker_starts: Vec<usize>) -> Iterations {
    // Iteration starts as indices into `out`.
    let (starts, how): (Vec<usize>, Iterations) = if !marker_starts.is_empty() {
        let n = marker_starts.len();
        (marker_starts, Iterations::Markers(n))
    } else {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for b in out.iter().filter(|b| !b.compute) {
            *counts.entry(b.block.as_str()).or_default() += 1;
        }
        let k = counts.values().copied().max().unwrap_or(0);
        if k < 2 {
            return Iterations::None;
        }
        let Some(anchor) = out
            .iter()
            .find(|b| !b.compute && counts[b.block.as_str()] == k)
            .map(|b| b.block.clone())
        else {
            return Iterations::None;
        };
        let starts = out
            .iter()
            .enumerate()
            .filter(|(_, b)| b.block == anchor)
            .map(|(i, _)| i)
            .collect();
        (starts, Iterations::Repeating(k, anchor))
    };
    let Some(&first) = starts.first() else {
        return how;
    };
    // The loop's blocks: those of the first iteration (up to the second start, or all after the
    // first when there is one iteration).
    let first_end = starts.get(1).copied().unwrap_or(out.len());
    let loop_keys: Vec<String> = out[first..first_end]
        .iter()
        .filter(|b| !b.compute)
        .map(|b| b.block.clone())
        .collect();
    let last_start = *starts.last().unwrap_or(&first);
    // The loop ends after the last execution of a loop block in the last iteration.
    let loop_end = out[last_start..]
        .iter()
        .rposition(|b| !b.compute && loop_keys.contains(&b.block))
        .map_or(out.len(), |i| last_start + i + 1);
    let mut iteration = -1i64;
    let mut next = 0;
    for (i, b) in out.iter_mut().enumerate().take(loop_end).skip(first) {
        while next < starts.len() && starts[next] <= i {
            iteration += 1;
            next += 1;
        }
        b.iteration = Some(iteration);
    }
    how
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::log::parse;

    fn log(events: &str) -> RankLog {
        let text = format!(
            "# yosoku-mpi-timer 1\n# rank 0\n# size 1\n# init_end_ns 1000\n\
             # site 0 a+0x1\n# site 1 a+0x2\n# site 2 a+0x3\n\
             event\tname\tsite\tstart_ns\tend_ns\tbytes\tpeer\n{events}\
             # finalize_start_ns 9000\n# end complete\n"
        );
        parse(Path::new("rank-0.tsv"), &text).unwrap()
    }

    fn call(name: &str, site: usize, start: u64, end: u64) -> String {
        format!("call\t{name}\t{site}\t{start}\t{end}\t8\t-1\n")
    }

    #[test]
    fn calls_and_the_gaps_between_them_are_blocks() {
        let l = log(&(call("MPI_Barrier", 0, 1100, 1200) + &call("MPI_Allreduce", 1, 1500, 1600)));
        let (b, how) = blocks(&l);
        let keys: Vec<(&str, bool, u64, u64)> = b
            .iter()
            .map(|b| (b.block.as_str(), b.compute, b.start_ns, b.duration_ns))
            .collect();
        assert_eq!(
            keys,
            [
                ("MPI_Init -> MPI_Barrier@a+0x1", true, 0, 100),
                ("MPI_Barrier@a+0x1", false, 100, 100),
                ("MPI_Barrier@a+0x1 -> MPI_Allreduce@a+0x2", true, 200, 300),
                ("MPI_Allreduce@a+0x2", false, 500, 100),
                ("MPI_Allreduce@a+0x2 -> MPI_Finalize", true, 600, 7400),
            ]
        );
        assert_eq!(how, Iterations::None);
        // The whole run is covered, gap-free.
        assert_eq!(b.iter().map(|b| b.duration_ns).sum::<u64>(), 8000);
    }

    #[test]
    fn repeating_call_sites_are_iterations_and_setup_and_teardown_are_not() {
        // Barrier once, then three times (Sendrecv, Allreduce), then Reduce once.
        let mut events = call("MPI_Barrier", 0, 1100, 1200);
        for i in 0..3 {
            let t = 2000 + 1000 * i;
            events += &call("MPI_Sendrecv", 1, t, t + 100);
            events += &call("MPI_Allreduce", 2, t + 500, t + 600);
        }
        events += &call("MPI_Reduce", 0, 6000, 6100);
        let (b, how) = blocks(&log(&events));
        assert_eq!(how, Iterations::Repeating(3, "MPI_Sendrecv@a+0x2".into()));
        let it: Vec<(&str, Option<i64>)> =
            b.iter().map(|b| (b.block.as_str(), b.iteration)).collect();
        assert_eq!(it[0], ("MPI_Init -> MPI_Barrier@a+0x1", None));
        assert_eq!(it[2], ("MPI_Barrier@a+0x1 -> MPI_Sendrecv@a+0x2", None));
        assert_eq!(it[3], ("MPI_Sendrecv@a+0x2", Some(0)));
        assert_eq!(it[5], ("MPI_Allreduce@a+0x3", Some(0)));
        assert_eq!(
            it[6],
            ("MPI_Allreduce@a+0x3 -> MPI_Sendrecv@a+0x2", Some(0))
        );
        assert_eq!(it[7], ("MPI_Sendrecv@a+0x2", Some(1)));
        assert_eq!(it[13], ("MPI_Allreduce@a+0x3", Some(2)));
        assert_eq!(it[14], ("MPI_Allreduce@a+0x3 -> MPI_Reduce@a+0x1", None));
        assert_eq!(it[15].1, None);
    }

    #[test]
    fn markers_name_compute_blocks_and_start_iterations() {
        let mut events = String::new();
        for i in 0..2 {
            let t = 2000 + 1000 * i;
            events += &format!("iteration\t-\t-\t{t}\t{t}\t0\t-1\n");
            events += &format!("mark\tstencil\t-\t{}\t{}\t0\t-1\n", t + 10, t + 10);
            events += &call("MPI_Allreduce", 1, t + 500, t + 600);
        }
        let (b, how) = blocks(&log(&events));
        assert_eq!(how, Iterations::Markers(2));
        let it: Vec<(&str, Option<i64>)> =
            b.iter().map(|b| (b.block.as_str(), b.iteration)).collect();
        assert_eq!(
            it,
            [
                ("MPI_Init -> iteration", None),
                ("compute stencil", Some(0)),
                ("MPI_Allreduce@a+0x2", Some(0)),
                ("MPI_Allreduce@a+0x2 -> iteration", Some(0)),
                ("compute stencil", Some(1)),
                ("MPI_Allreduce@a+0x2", Some(1)),
                ("MPI_Allreduce@a+0x2 -> MPI_Finalize", None),
            ]
        );
        // The setup before the first marker is not part of iteration 0.
        assert_eq!((b[0].start_ns, b[0].duration_ns), (0, 1000));
        assert_eq!((b[1].start_ns, b[1].duration_ns), (1000, 500));
    }
}
