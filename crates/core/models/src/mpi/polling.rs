//! Flags a repeating unit that looks like a polling loop (millions of iterations of a few
//! microseconds), which simplified execution cannot extrapolate.

use std::collections::BTreeMap;

use super::rank::RankPrediction;

/// The run row's flag when the repeating unit looks like a polling loop.
pub const POLLING_FLAG: &str = "polling_loop?";

/// Iterations shorter than this, repeated more than [`POLLING_MIN_ITERATIONS`] times, are a
/// polling or wait loop's (`MPI_Test` until a message arrives), not a program step's.
pub(super) const POLLING_MAX_ITERATION_SECS: f64 = 10e-6;
pub(super) const POLLING_MIN_ITERATIONS: usize = 100_000;

/// Why the repeating unit the iterations were cut at looks like a polling loop rather than a
/// step of the program, if it does: the ranks ran different numbers of it (a step loop runs as
/// many on every rank; a loop that waits for a message runs as long as the wait), or it is a
/// few microseconds long and repeated hundreds of thousands of times. The hint: give `steps`
/// or mark the iterations.
pub(super) fn polling_loop(ranks: &BTreeMap<i32, RankPrediction>) -> Option<String> {
    let counts: Vec<(i32, usize)> = ranks.iter().map(|(r, p)| (*r, p.iterations)).collect();
    let lo = counts.iter().map(|c| c.1).min()?;
    let hi = counts.iter().map(|c| c.1).max()?;
    let hint = "give `steps` (the program's own steps) to the collector and the step, or mark each step with yosoku_iteration() (plugins/mpi_timer/README.md)";
    if hi > lo + 2.max(lo / 100) {
        let shown: Vec<String> = counts
            .iter()
            .take(4)
            .map(|(r, k)| format!("{k} on rank {r}"))
            .collect();
        return Some(format!(
            "the ranks ran different numbers of the repeating unit ({}{}): a loop that runs as long as a rank waits (polling with MPI_Test or MPI_Iprobe) rather than a step of the program; {hint}",
            shown.join(", "),
            if counts.len() > 4 { ", ..." } else { "" }
        ));
    }
    let short = ranks.values().find(|p| {
        p.iterations > POLLING_MIN_ITERATIONS
            && p.reduced_secs / (p.iterations as f64) < POLLING_MAX_ITERATION_SECS
    })?;
    Some(format!(
        "the repeating unit ran {} times at {:.1} us each: a polling or wait loop rather than a step of the program; {hint}",
        short.iterations,
        1e6 * short.reduced_secs / short.iterations as f64
    ))
}
