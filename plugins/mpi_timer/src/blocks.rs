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
use std::hash::BuildHasher;

use crate::log::{EventKind, RankLog};

/// A block's key or call site: an index into [`RankBlocks::names`].
pub type NameId = u32;

/// One block: 32 bytes, so that a rank of tens of millions of calls holds its blocks beside
/// the table they become.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    /// The block's key (`MPI_Send@a.out+0x10`, `MPI_A@... -> MPI_B@...`), the same for every
    /// execution of the block.
    pub block: NameId,
    pub compute: bool,
    /// Where in the program: `MPI_Send at a.out+0x10`, or the calls around a compute block.
    pub call_site: NameId,
    /// The main-loop iteration, [`NO_ITERATION`] outside the loop ([`Block::iteration`]).
    iteration: u32,
    /// From the end of MPI_Init.
    pub start_ns: u64,
    pub duration_ns: u64,
}

/// [`Block`]'s iteration outside the main loop.
const NO_ITERATION: u32 = u32::MAX;

const _: () = assert!(std::mem::size_of::<Block>() == 32);

impl Block {
    /// The main-loop iteration, `None` outside the loop.
    pub fn iteration(&self) -> Option<i64> {
        (self.iteration != NO_ITERATION).then_some(i64::from(self.iteration))
    }
}

/// One rank's blocks in time order and the texts their keys and call sites name: a real run has
/// a million blocks and a few hundred distinct texts, each made and stored once (the blocks
/// compare and look them up by id, without hashing or comparing text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankBlocks {
    pub blocks: Vec<Block>,
    /// Distinct texts; [`NameId`]s index it.
    pub names: Vec<String>,
}

impl RankBlocks {
    /// The text of a key or call site.
    pub fn name(&self, id: NameId) -> &str {
        &self.names[id as usize]
    }

    /// The key of `block`.
    pub fn key(&self, block: &Block) -> &str {
        self.name(block.block)
    }
}

impl std::ops::Deref for RankBlocks {
    type Target = [Block];

    fn deref(&self) -> &[Block] {
        &self.blocks
    }
}

/// How the iterations were found.
#[derive(Debug, Clone, PartialEq)]
pub enum Iterations {
    Markers(usize),
    /// The program's repeating unit: `iterations` of it, each `sub_iterations` executions of
    /// `anchor` long (2 when the call that starts it runs twice per iteration).
    Repeating {
        iterations: usize,
        sub_iterations: usize,
        anchor: String,
    },
    /// The unit that repeats once per step of the program (the `steps` the user gave).
    PerStep {
        iterations: usize,
        anchor: String,
    },
    None,
}

impl Iterations {
    /// (iterations, sub-iterations, how they were found, the block that starts each) for
    /// `mpi_ranks`.
    pub fn shape(&self) -> (Option<i64>, Option<i32>, &'static str, Option<&str>) {
        match self {
            Iterations::Markers(n) => (Some(*n as i64), None, "markers", None),
            Iterations::Repeating {
                iterations,
                sub_iterations,
                anchor,
            } => (
                Some(*iterations as i64),
                Some(*sub_iterations as i32),
                "repeating_unit",
                Some(anchor),
            ),
            Iterations::PerStep { iterations, anchor } => {
                (Some(*iterations as i64), None, "steps", Some(anchor))
            }
            Iterations::None => (None, None, "none", None),
        }
    }
}

/// The blocks of one rank, in time order, and how its iterations were found.
pub fn blocks(log: &RankLog) -> (RankBlocks, Iterations) {
    timed(log).iterations()
}

/// A rank's blocks before their iterations are found: all that is needed of its log, which
/// can be let go before the iterations are looked for (a rank of ten million calls parsed is
/// as large as its blocks).
#[derive(Debug)]
pub struct Timed {
    out: RankBlocks,
    marker_starts: Vec<usize>,
}

/// The blocks of `log`, their iterations not yet found.
pub fn timed(log: &RankLog) -> Timed {
    let (out, marker_starts) = timed_blocks(log, (log.events.len(), log.events.iter().cloned()));
    Timed { out, marker_starts }
}

/// [`timed`], taking the events out of `log` and letting them go as they become blocks: the
/// rank's calls and its blocks (each about as large) are never held together in full.
pub fn timed_taking(log: &mut RankLog) -> Timed {
    let events = std::mem::take(&mut log.events);
    let count = events.len();
    let (out, marker_starts) = timed_blocks(log, (count, releasing(events)));
    Timed { out, marker_starts }
}

/// The items of `items` in order, their memory handed back as they are taken (a million at a
/// time): a list of tens of millions consumed into another is not held beside it in full.
pub(crate) fn releasing<T>(mut items: Vec<T>) -> impl Iterator<Item = T> {
    /// Items taken between two releases of their memory.
    const RELEASE_EVERY: usize = 1 << 20;
    // Taken from the end of the reversed list, which can then be shortened.
    items.reverse();
    std::iter::from_fn(move || {
        let item = items.pop()?;
        if items.len().is_multiple_of(RELEASE_EVERY)
            && items.capacity() - items.len() >= RELEASE_EVERY
        {
            items.shrink_to_fit();
            yosoku_plugin_sdk::release_free_memory();
        }
        Some(item)
    })
}

impl Timed {
    /// The blocks with their iterations, as [`blocks`] finds them.
    pub fn iterations(self) -> (RankBlocks, Iterations) {
        let Timed {
            mut out,
            marker_starts,
        } = self;
        let how = assign_iterations(&mut out, marker_starts, None);
        (out, how)
    }

    /// The blocks with their iterations, as [`blocks_per_step`] finds them.
    pub fn iterations_per_step(
        self,
        steps: usize,
    ) -> Result<(RankBlocks, Iterations), NoUnitPerStep> {
        let Timed {
            mut out,
            marker_starts,
        } = self;
        if !marker_starts.is_empty() {
            let how = assign_iterations(&mut out, marker_starts, None);
            return Ok((out, how));
        }
        let unit = unit_per_step(&out, steps)?;
        let how = match assign_iterations(&mut out, Vec::new(), Some(unit)) {
            Iterations::Repeating {
                iterations, anchor, ..
            } => Iterations::PerStep { iterations, anchor },
            other => other,
        };
        Ok((out, how))
    }
}

/// The blocks of one rank whose run made `steps` steps (the program's own units: time steps,
/// MD steps): the iteration is the unit that runs once per step, whatever runs inside it (an
/// SCF or solver loop of varying length makes the finer repeating unit of [`blocks`] a
/// sub-iteration). Of the calls executed `steps` to `steps + 3` times and more (a step's call
/// may also run in setup or teardown, up to as often again as in the loop or 16 times: pw.x's
/// once-per-step barrier runs 10 more times while it sets up), each is tried as the first call
/// of a step; leading and
/// trailing units that lack some call every other unit makes are setup and teardown, and the
/// candidate whose unit count is nearest `steps` (at most 2 more: an initial force evaluation
/// makes one) wins, then the most regular, then the one that starts earliest. Markers, when the
/// program made them, are used as they are.
pub fn blocks_per_step(
    log: &RankLog,
    steps: usize,
) -> Result<(RankBlocks, Iterations), NoUnitPerStep> {
    timed(log).iterations_per_step(steps)
}

/// The blocks of a rank in time order, and the index of the first block of each marked
/// iteration.
fn timed_blocks(
    log: &RankLog,
    (count, events): (usize, impl Iterator<Item = crate::log::Event>),
) -> (RankBlocks, Vec<usize>) {
    let mut out = Vec::with_capacity(2 * count + 1);
    let mut iteration_starts = Vec::new();
    let mut names = Interner::default();
    let mut previous_end = log.init_end_ns;
    let mut previous_call = names.id("MPI_Init".to_owned());
    // The mark's name, interned.
    let mut mark: Option<NameId> = None;
    // The key and call site of each compute block (by the calls around it, or its mark) and of
    // each call (by name and site), made once.
    let mut compute_names: ComputeNames = FastMap::default();
    let mut call_names: CallNames = FastMap::default();
    let iteration = names.id("iteration".to_owned());
    let finalize = names.id("MPI_Finalize".to_owned());
    for e in events {
        match e.kind {
            EventKind::Mark => mark = Some(names.id(e.name.to_string())),
            EventKind::Iteration => {
                // The marker splits the compute block it falls in.
                let t = e.start_ns.max(previous_end);
                push_compute(
                    (&mut compute_names, &mut names),
                    &mut out,
                    log.init_end_ns,
                    (previous_end, t),
                    (previous_call, iteration),
                    mark.take(),
                );
                iteration_starts.push(out.len());
                previous_end = t;
                previous_call = iteration;
            }
            EventKind::Call => {
                // The log interns its names: one address per name (equal texts at two
                // addresses would only be made twice into the same ids).
                let address = e.name.as_ptr() as usize;
                let (key, call_site) = *call_names.entry((address, e.site)).or_insert_with(|| {
                    let site = e
                        .site
                        .map(|s| log.sites[s as usize].as_str())
                        .unwrap_or("?");
                    (
                        names.id(format!("{}@{site}", e.name)),
                        names.id(format!("{} at {site}", e.name)),
                    )
                });
                let start = e.start_ns.max(previous_end);
                push_compute(
                    (&mut compute_names, &mut names),
                    &mut out,
                    log.init_end_ns,
                    (previous_end, start),
                    (previous_call, key),
                    mark.take(),
                );
                out.push(Block {
                    call_site,
                    block: key,
                    compute: false,
                    iteration: NO_ITERATION,
                    start_ns: start - log.init_end_ns,
                    // A call that ends inside the one before it (overlapping calls: a damaged
                    // or multi-threaded log) keeps no time of its own, not a wrapped one.
                    duration_ns: e.end_ns.saturating_sub(start),
                });
                previous_end = e.end_ns;
                previous_call = key;
            }
        }
    }
    let end = log.end_ns().max(previous_end);
    push_compute(
        (&mut compute_names, &mut names),
        &mut out,
        log.init_end_ns,
        (previous_end, end),
        (previous_call, finalize),
        mark.take(),
    );
    (
        RankBlocks {
            blocks: out,
            names: names.names,
        },
        iteration_starts,
    )
}

/// The distinct texts of a rank's keys and call sites, each given an id once.
#[derive(Default)]
struct Interner {
    names: Vec<String>,
    ids: FastMap<String, NameId>,
}

impl Interner {
    fn id(&mut self, text: String) -> NameId {
        if let Some(&id) = self.ids.get(&text) {
            return id;
        }
        let id = NameId::try_from(self.names.len()).expect("fewer than 2^32 distinct block keys");
        self.names.push(text.clone());
        self.ids.insert(text, id);
        id
    }

    fn text(&self, id: NameId) -> &str {
        &self.names[id as usize]
    }
}

/// The key and call site of each call, by the address of its (interned) name and its site.
type CallNames = FastMap<(usize, Option<u32>), (NameId, NameId)>;

/// The maps looked up once or twice per logged call (a million in a real run).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The key and call site of each compute block, by the blocks around it and its mark.
type ComputeNames = FastMap<(NameId, NameId, Option<NameId>), (NameId, NameId)>;

/// Appends the compute block from `from` to `to` between the blocks `after` and `before`
/// (named by `mark` when the program marked it), its key and call site made once per kind.
fn push_compute(
    (compute_names, names): (&mut ComputeNames, &mut Interner),
    out: &mut Vec<Block>,
    init_end_ns: u64,
    (from, to): (u64, u64),
    (after, before): (NameId, NameId),
    mark: Option<NameId>,
) {
    let (key, call_site) = *compute_names
        .entry((after, before, mark))
        .or_insert_with(|| {
            let (a, b) = (names.text(after), names.text(before));
            let key = match mark {
                Some(name) => format!("compute {}", names.text(name)),
                None => format!("{a} -> {b}"),
            };
            let call_site = format!("between {a} and {b}");
            (names.id(key), names.id(call_site))
        });
    out.push(Block {
        call_site,
        block: key,
        compute: true,
        iteration: NO_ITERATION,
        start_ns: from - init_end_ns,
        duration_ns: to.saturating_sub(from),
    });
}

/// `marker_starts`: the index of the first block of each marked iteration.
/// `unit`: the unit to use (found per step); `None`: the repeating unit.
fn assign_iterations(
    rank: &mut RankBlocks,
    marker_starts: Vec<usize>,
    unit: Option<Unit>,
) -> Iterations {
    // Iteration starts as indices into `out`.
    let mut end = None;
    let (starts, how): (Vec<usize>, Iterations) = if !marker_starts.is_empty() {
        let n = marker_starts.len();
        (marker_starts, Iterations::Markers(n))
    } else {
        match unit.or_else(|| repeating_unit(rank)) {
            Some(unit) => {
                let how = Iterations::Repeating {
                    iterations: unit.starts.len(),
                    sub_iterations: unit.sub_iterations,
                    anchor: rank.key(&rank.blocks[unit.starts[0]]).to_owned(),
                };
                end = unit.end;
                (unit.starts, how)
            }
            None => return Iterations::None,
        }
    };
    let Some(&first) = starts.first() else {
        return how;
    };
    // The loop's blocks: those of the first iteration (up to the second start, or all after the
    // first when there is one iteration).
    let out = &mut rank.blocks;
    let first_end = starts.get(1).copied().unwrap_or(out.len());
    let loop_keys: Vec<NameId> = out[first..first_end]
        .iter()
        .filter(|b| !b.compute)
        .map(|b| b.block)
        .collect();
    let last_start = *starts.last().unwrap_or(&first);
    // The loop ends after the last execution of a loop block in the last iteration.
    let limit = end.unwrap_or(out.len());
    let loop_end = out[last_start..limit]
        .iter()
        .rposition(|b| !b.compute && loop_keys.contains(&b.block))
        .map_or(limit, |i| last_start + i + 1);
    // Iterations number units of at least one block each, so fewer than the blocks: a rank of
    // 2^32 iterations would need more than 128 GB of blocks.
    let mut next = 0u32;
    for (i, b) in out.iter_mut().enumerate().take(loop_end).skip(first) {
        while (next as usize) < starts.len() && starts[next as usize] <= i {
            next += 1;
        }
        b.iteration = next.saturating_sub(1).min(NO_ITERATION - 1);
    }
    how
}

/// The main loop found from the calls alone.
#[derive(Debug, Clone, PartialEq)]
struct Unit {
    /// Index into the blocks of the block that starts each iteration.
    starts: Vec<usize>,
    sub_iterations: usize,
    /// Where the loop ends when a partial last unit follows it (the block that starts that).
    end: Option<usize>,
}

/// The hash of a segment's shape: fixed, so that a run's iterations never depend on the process.
const SHAPE_HASH: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0);

/// Iterations whose shape must repeat for a candidate to be the loop: the share of segments
/// equal to the one `q` later. A block every k iterations (a rebuild, an output step) costs
/// about 2/k of it, so events every 8 iterations or rarer leave the unit one iteration long.
const MIN_REGULARITY: f64 = 0.75;
/// Longest repeating unit looked for, in executions of its first call.
const MAX_SUB_ITERATIONS: usize = 64;
/// Candidate first calls tried (the most executed ones).
const MAX_CANDIDATES: usize = 24;

/// The program's repeating unit: the shortest repeating sequence of call sites that covers the
/// main loop. Each call executed twice or more is tried as the unit's first call: the
/// segments between its executions get a shape (the calls in them, repeats of one call
/// collapsed, so an inner loop of varying length keeps its shape), and the unit is the
/// shortest run of `q` segments after which the shapes repeat (in at least
/// [`MIN_REGULARITY`] of the segments; blocks every k iterations break the rest). The candidate
/// with the most iterations wins (ties: the more regular, then the shorter unit): a call made
/// twice per iteration yields the same iterations as one made once, in units of two segments,
/// and a call in a periodic event yields fewer. Among the `q` possible phases, the one whose
/// iterations end where the loop ends (no partial unit left over) is chosen, so a setup step
/// that makes the loop's calls once is not an iteration.
fn repeating_unit(out: &RankBlocks) -> Option<Unit> {
    let (calls, counts) = call_ids(out);
    let mut candidates: Vec<usize> = (0..counts.len()).filter(|&id| counts[id] >= 2).collect();
    // Most executed first; ties: the one executed first.
    candidates.sort_by_key(|&id| std::cmp::Reverse(counts[id]));
    candidates.truncate(MAX_CANDIDATES);
    // The most iterations; then the unit that starts earliest (the loop's first call rather
    // than one in the middle of it); then the more regular; then the shorter.
    let rank = |u: &Unit| (u.starts.len(), std::cmp::Reverse(u.starts[0]));
    let mut best: Option<(Unit, f64)> = None;
    for anchor in candidates {
        let Some((unit, regularity)) = unit_from(&calls, anchor) else {
            continue;
        };
        let better = match &best {
            None => true,
            Some((b, r)) => {
                let (new, old) = (rank(&unit), rank(b));
                new > old
                    || (new == old && regularity > *r + 1e-9)
                    || (new == old
                        && (regularity - *r).abs() <= 1e-9
                        && unit.sub_iterations < b.sub_iterations)
            }
        };
        if better {
            best = Some((unit, regularity));
        }
    }
    best.map(|(unit, _)| unit)
}

/// The unit that starts at `anchor`'s executions, and how regular its iterations are.
fn unit_from(calls: &[(usize, usize)], anchor: usize) -> Option<(Unit, f64)> {
    let positions = executions(calls, anchor);
    // Segment shapes: the calls from one execution of the anchor to the next (the last one to
    // the end), consecutive repeats collapsed, as a hash.
    let shapes: Vec<u64> = positions
        .iter()
        .enumerate()
        .map(|(k, &from)| {
            let to = positions.get(k + 1).copied().unwrap_or(calls.len());
            let mut hasher = SHAPE_HASH.build_hasher();
            let mut previous = usize::MAX;
            for &(_, id) in &calls[from..to] {
                if id != previous {
                    std::hash::Hash::hash(&id, &mut hasher);
                    previous = id;
                }
            }
            std::hash::Hasher::finish(&hasher)
        })
        .collect();
    let m = shapes.len();
    // The last segment runs to the end of the run (teardown included): shapes are compared
    // over the others.
    let body = &shapes[..m.saturating_sub(1)];
    let regularity = |q: usize| {
        let pairs = body.len().saturating_sub(q);
        if pairs == 0 {
            return 0.0;
        }
        let same = (0..pairs).filter(|&i| body[i] == body[i + q]).count();
        same as f64 / pairs as f64
    };
    let (q, r) = if body.len() < 2 {
        // Two executions: one iteration between them, nothing to compare.
        (1, 1.0)
    } else {
        (1..=MAX_SUB_ITERATIONS.min(body.len() / 2).max(1))
            .map(|q| (q, regularity(q)))
            .find(|&(_, r)| r >= MIN_REGULARITY)?
    };
    // The phase: iterations that end where the loop ends; ties: the earliest.
    let phase = (0..q).min_by_key(|&p| ((m - p.min(m)) % q, p)).unwrap_or(0);
    // Iterations as ranges of `calls`.
    let mut bounds: Vec<usize> = positions[phase.min(m)..]
        .iter()
        .step_by(q)
        .copied()
        .collect();
    if bounds.is_empty() {
        return None;
    }
    bounds.push(calls.len());
    // Leading units that lack some call every other unit makes are setup that happens to make
    // the loop's calls (a first force computation), trailing ones a partial last unit: neither
    // is an iteration.
    let (first, last, _) = whole_units(calls, &bounds, Dominant::MostSegments)?;
    let starts: Vec<usize> = bounds[first..=last].iter().map(|&p| calls[p].0).collect();
    let end = (last + 2 < bounds.len()).then(|| calls[bounds[last + 1]].0);
    Some((
        Unit {
            starts,
            sub_iterations: q,
            end,
        },
        r,
    ))
}

/// Where in `calls` the call `id` was made.
fn executions(calls: &[(usize, usize)], id: usize) -> Vec<usize> {
    calls
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| *c == id)
        .map(|(p, _)| p)
        .collect()
}

/// The communication blocks of `out` in time order: (block index, call id), call ids numbered
/// in order of first execution; and how often each call id was executed.
fn call_ids(out: &RankBlocks) -> (Vec<(usize, usize)>, Vec<usize>) {
    // Call id of each key, by the key's id.
    let mut ids: Vec<Option<usize>> = vec![None; out.names.len()];
    let mut counts: Vec<usize> = Vec::new();
    let mut calls: Vec<(usize, usize)> = Vec::new();
    for (i, b) in out.iter().enumerate().filter(|(_, b)| !b.compute) {
        let id = *ids[b.block as usize].get_or_insert_with(|| {
            counts.push(0);
            counts.len() - 1
        });
        counts[id] += 1;
        calls.push((i, id));
    }
    (calls, counts)
}

/// The most executions per step a step's first call may make (a call that serves the forward
/// and the reverse exchange runs twice a step).
const MAX_PER_STEP: usize = 8;

/// The executions of a step's first call outside the loop (setup, teardown) allowed however few
/// the steps (pw.x's once-per-step barrier runs 10 times while it sets up).
const OUTSIDE_EXECUTIONS: usize = 16;

/// See [`blocks_per_step`]. A call that runs `m` times per step starts a unit at every `m`-th
/// execution (`sub_iterations = m`); calls made once per step are preferred, then the unit
/// count nearest `steps`, the most regular units, the earliest start.
fn unit_per_step(out: &RankBlocks, steps: usize) -> Result<Unit, NoUnitPerStep> {
    let (calls, counts) = call_ids(out);
    // (executions per step, units beyond the steps, regularity, first start), the unit.
    let mut best: Option<(usize, usize, f64, usize, Unit)> = None;
    let mut seen: Vec<usize> = Vec::new();
    for m in 1..=MAX_PER_STEP {
        // Executions outside the loop (setup, teardown) are allowed up to as many again as
        // the loop's, or OUTSIDE_EXECUTIONS: the units they start are not whole and are left
        // out below.
        let range = m * steps..=m * (steps + 3) + (m * steps).max(OUTSIDE_EXECUTIONS);
        for anchor in (0..counts.len()).filter(|&id| range.contains(&counts[id])) {
            let all = executions(&calls, anchor);
            for phase in 0..m {
                let mut bounds: Vec<usize> = all.iter().copied().skip(phase).step_by(m).collect();
                bounds.push(calls.len());
                let Some((first, last, regularity)) =
                    whole_units(&calls, &bounds, Dominant::MostCalls)
                else {
                    continue;
                };
                let n = last - first + 1;
                seen.push(n);
                if !(steps..=steps + 2).contains(&n) {
                    continue;
                }
                let starts: Vec<usize> = bounds[first..=last].iter().map(|&p| calls[p].0).collect();
                let end = (last + 2 < bounds.len()).then(|| calls[bounds[last + 1]].0);
                let key = (m, n - steps, regularity, starts[0]);
                let better = best.as_ref().is_none_or(|(bm, d, r, s, _)| {
                    (key.0, key.1) < (*bm, *d)
                        || ((key.0, key.1) == (*bm, *d) && key.2 > *r + 1e-9)
                        || ((key.0, key.1) == (*bm, *d) && (key.2 - *r).abs() <= 1e-9 && key.3 < *s)
                });
                if better {
                    best = Some((
                        key.0,
                        key.1,
                        key.2,
                        key.3,
                        Unit {
                            starts,
                            sub_iterations: m,
                            end,
                        },
                    ));
                }
            }
        }
        if best.is_some() {
            break;
        }
    }
    best.map(|(_, _, _, _, unit)| unit).ok_or_else(|| {
        seen.sort_unstable();
        seen.dedup();
        NoUnitPerStep { steps, seen }
    })
}

/// No call of a rank's log starts a unit that repeats once per step (`steps` given): the unit
/// counts the candidates gave.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "steps = {steps}, but no MPI call starts a unit that repeats once per step (calls made 1 to {MAX_PER_STEP} times per step give {}); check `steps`, or leave it out to use the finest repeating unit",
    units_found(seen)
)]
pub struct NoUnitPerStep {
    pub steps: usize,
    /// The unit counts the candidate calls gave, ascending.
    pub seen: Vec<usize>,
}

fn units_found(seen: &[usize]) -> String {
    if seen.is_empty() {
        "none".to_owned()
    } else {
        format!(
            "{} units",
            seen.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Which segments' set of calls is the unit's, in [`whole_units`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dominant {
    /// The set most segments make (fewest calls on a tie): the finest repeating unit.
    MostSegments,
    /// The set whose segments hold the most calls: a step, where the step's first call also
    /// runs more often than there are steps in setup (units of that call alone).
    MostCalls,
}

/// The whole units among the segments `bounds` cut `calls` into: the first and last segment
/// that make every call the dominant segments make (a periodic event adds calls; setup and
/// a partial last unit lack some), and the share of segments that make exactly those.
///
/// Each distinct set of calls is stored once and each segment holds its number: a loop of a
/// million segments has a handful of sets, and a set per segment left the allocator holding a
/// quarter of the logs' size in freed small blocks after a rank of ten million calls.
fn whole_units(
    calls: &[(usize, usize)],
    bounds: &[usize],
    by: Dominant,
) -> Option<(usize, usize, f64)> {
    let mut numbers: HashMap<Vec<usize>, usize> = HashMap::new();
    // Per distinct set: (segments, calls in them).
    let mut frequency: Vec<(usize, usize)> = Vec::new();
    let mut set_of: Vec<usize> = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut set: Vec<usize> = Vec::new();
    for w in bounds.windows(2) {
        set.clear();
        set.extend(calls[w[0]..w[1]].iter().map(|&(_, id)| id));
        set.sort_unstable();
        set.dedup();
        let number = match numbers.get(&set) {
            Some(&n) => n,
            None => {
                numbers.insert(set.clone(), frequency.len());
                frequency.push((0, 0));
                frequency.len() - 1
            }
        };
        frequency[number].0 += 1;
        frequency[number].1 += w[1] - w[0];
        set_of.push(number);
    }
    let mut sets: Vec<&[usize]> = vec![&[]; frequency.len()];
    for (set, &n) in &numbers {
        sets[n] = set;
    }
    // The most frequent set; ties: the smaller, then the one seen first.
    let dominant = (0..sets.len()).rev().max_by_key(|&n| {
        let (segments, held) = frequency[n];
        match by {
            Dominant::MostSegments => (segments, 0, std::cmp::Reverse(sets[n].len())),
            Dominant::MostCalls => (held, segments, std::cmp::Reverse(sets[n].len())),
        }
    })?;
    let whole: Vec<bool> = sets
        .iter()
        .map(|set| {
            sets[dominant]
                .iter()
                .all(|id| set.binary_search(id).is_ok())
        })
        .collect();
    let first = set_of.iter().position(|&n| whole[n])?;
    let last = set_of.iter().rposition(|&n| whole[n])?;
    Some((
        first,
        last,
        frequency[dominant].0 as f64 / set_of.len() as f64,
    ))
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
            .map(|x| (b.key(x), x.compute, x.start_ns, x.duration_ns))
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
        assert_eq!(
            how,
            Iterations::Repeating {
                iterations: 3,
                sub_iterations: 1,
                anchor: "MPI_Sendrecv@a+0x2".into()
            }
        );
        let it: Vec<(&str, Option<i64>)> = b.iter().map(|x| (b.key(x), x.iteration())).collect();
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
        let it: Vec<(&str, Option<i64>)> = b.iter().map(|x| (b.key(x), x.iteration())).collect();
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

    /// A log of `calls` (name, site) one after another, 100 ns apart.
    fn sequence(calls: &[(&str, usize)]) -> RankLog {
        let events: String = calls
            .iter()
            .enumerate()
            .map(|(i, (name, site))| {
                let t = 1100 + 100 * i as u64;
                call(name, *site, t, t + 10)
            })
            .collect();
        let sites = (0..8)
            .map(|s| format!("# site {s} a+0x{s:x}\n"))
            .collect::<String>();
        let text = format!(
            "# yosoku-mpi-timer 1\n# rank 0\n# size 1\n# init_end_ns 1000\n{sites}\
             event\tname\tsite\tstart_ns\tend_ns\tbytes\tpeer\n{events}\
             # finalize_start_ns {}\n# end complete\n",
            1200 + 100 * calls.len() as u64
        );
        parse(Path::new("rank-0.tsv"), &text).unwrap()
    }

    /// Iteration of each communication block, in order.
    fn call_iterations(log: &RankLog) -> Vec<Option<i64>> {
        blocks(log)
            .0
            .iter()
            .filter(|b| !b.compute)
            .map(|b| b.iteration())
            .collect()
    }

    #[test]
    fn a_call_made_twice_per_timestep_does_not_halve_the_iteration() {
        // A molecular-dynamics step: the same receive site (0) serves the forward and the
        // reverse exchange; setup computes forces once (the reverse half) before the loop.
        let reverse = [("MPI_Irecv", 0), ("MPI_Send", 2), ("MPI_Wait", 3)];
        let forward = [("MPI_Irecv", 0), ("MPI_Send", 1), ("MPI_Wait", 3)];
        let mut calls = vec![("MPI_Bcast", 5)];
        calls.extend(reverse);
        for _ in 0..10 {
            calls.extend(forward);
            calls.extend(reverse);
            calls.push(("MPI_Allreduce", 4));
        }
        calls.push(("MPI_Reduce", 6));
        let log = sequence(&calls);
        let (_, how) = blocks(&log);
        let Iterations::Repeating {
            iterations,
            sub_iterations,
            ..
        } = how
        else {
            panic!("{how:?}")
        };
        assert_eq!(iterations, 10);
        assert_eq!(sub_iterations, 2);
        let it = call_iterations(&log);
        // Setup (the broadcast and the first reverse exchange) and teardown have none.
        assert_eq!(it[..4], [None; 4]);
        assert_eq!(it[4..11], [Some(0); 7]);
        assert_eq!(it[it.len() - 2], Some(9));
        assert_eq!(it[it.len() - 1], None);
    }

    #[test]
    fn a_block_every_few_steps_does_not_change_the_iteration() {
        // 40 steps of a halo exchange and a reduction; every 10th a neighbour-list rebuild
        // (its own calls) and, at step 0, an output step.
        let mut calls = Vec::new();
        for step in 0..40 {
            calls.extend([("MPI_Sendrecv", 0), ("MPI_Sendrecv", 1)]);
            if step % 10 == 3 {
                calls.extend([("MPI_Alltoall", 2), ("MPI_Allgather", 3)]);
            }
            if step == 0 {
                calls.push(("MPI_Gather", 5));
            }
            calls.push(("MPI_Allreduce", 4));
        }
        let log = sequence(&calls);
        let (_, how) = blocks(&log);
        assert!(
            matches!(
                how,
                Iterations::Repeating {
                    iterations: 40,
                    sub_iterations: 1,
                    ..
                }
            ),
            "{how:?}"
        );
        let it = call_iterations(&log);
        assert_eq!(it.iter().flatten().max(), Some(&39));
        assert!(it.iter().all(Option::is_some), "{it:?}");
    }

    #[test]
    fn an_inner_loop_of_varying_length_keeps_the_outer_iteration() {
        // A solver: per step a halo exchange, then 3 to 7 reductions until it converges.
        let mut calls = Vec::new();
        for step in 0..30 {
            calls.extend([("MPI_Sendrecv", 0), ("MPI_Sendrecv", 1)]);
            for _ in 0..3 + (step * 7) % 5 {
                calls.push(("MPI_Allreduce", 2));
            }
        }
        let (_, how) = blocks(&sequence(&calls));
        assert!(
            matches!(
                how,
                Iterations::Repeating {
                    iterations: 30,
                    sub_iterations: 1,
                    ..
                }
            ),
            "{how:?}"
        );
    }

    /// Every call of a step made twice (the two halves of a velocity-Verlet step, the same call
    /// sites): with `steps`, one iteration per step, each two executions of its first call.
    #[test]
    fn with_steps_a_step_whose_calls_all_run_twice_is_one_iteration() {
        let mut calls = vec![("MPI_Bcast", 5)];
        for _ in 0..10 {
            calls.extend([
                ("MPI_Sendrecv", 0),
                ("MPI_Allreduce", 1),
                ("MPI_Sendrecv", 0),
                ("MPI_Allreduce", 1),
            ]);
        }
        calls.push(("MPI_Reduce", 6));
        let log = sequence(&calls);
        // Without steps the finest unit is half a step.
        let (_, how) = blocks(&log);
        assert!(
            matches!(how, Iterations::Repeating { iterations: 20, .. }),
            "{how:?}"
        );
        let (b, how) = blocks_per_step(&log, 10).unwrap();
        assert!(
            matches!(how, Iterations::PerStep { iterations: 10, .. }),
            "{how:?}"
        );
        let its: Vec<i64> = b
            .iter()
            .filter(|b| !b.compute)
            .filter_map(|b| b.iteration())
            .collect();
        assert_eq!(its.len(), 40);
        assert_eq!(its[..4], [0; 4]);
        assert_eq!(its.iter().max(), Some(&9));
        // More steps than any call was made: still an error.
        let e = blocks_per_step(&log, 30).unwrap_err().to_string();
        assert!(e.contains("steps = 30, but no MPI call"), "{e}");
    }

    #[test]
    fn with_steps_the_iteration_is_the_step_around_an_inner_loop_of_any_length() {
        // An MD code: an initial force evaluation, then 6 steps, each a force evaluation whose
        // SCF loop takes 9, 7, 6, 7, 6, 8 iterations (3 calls each), then output.
        let mut calls = vec![("MPI_Bcast", 0)];
        let force = |calls: &mut Vec<(&'static str, usize)>, scf: usize| {
            calls.push(("MPI_Allgather", 1));
            for _ in 0..scf {
                calls.extend([
                    ("MPI_Alltoallv", 2),
                    ("MPI_Allreduce", 3),
                    ("MPI_Waitall", 4),
                ]);
            }
            calls.push(("MPI_Reduce", 5));
        };
        force(&mut calls, 12);
        for scf in [9, 7, 6, 7, 6, 8] {
            force(&mut calls, scf);
        }
        calls.push(("MPI_Gather", 6));
        let log = sequence(&calls);
        // Without steps: the SCF iteration is the finest repeating unit.
        let (_, how) = blocks(&log);
        assert!(
            matches!(how, Iterations::Repeating { iterations, .. } if iterations > 40),
            "{how:?}"
        );
        // With them: one iteration per step. Of the units that repeat once per force
        // evaluation, the one with exactly 6 wins: it starts at the end of the initial
        // evaluation (setup, run once), each iteration ends with the step's own evaluation.
        let (b, how) = blocks_per_step(&log, 6).unwrap();
        assert!(
            matches!(how, Iterations::PerStep { iterations: 6, .. }),
            "{how:?}"
        );
        let its: Vec<i64> = b.iter().filter_map(|b| b.iteration()).collect();
        assert_eq!(its.iter().max(), Some(&5));
        let setup = b
            .iter()
            .take_while(|b| b.iteration().is_none())
            .filter(|b| !b.compute)
            .count();
        // The broadcast and the initial evaluation but its last call (2 + 12 x 3).
        assert_eq!(setup, 38);
        // A wrong count is an error that says what was found.
        let e = blocks_per_step(&log, 30).unwrap_err();
        assert_eq!(e.steps, 30);
        assert!(e.to_string().contains("steps = 30, but no MPI call"), "{e}");
    }

    #[test]
    fn with_steps_a_step_call_also_made_in_setup_is_counted_once_per_step() {
        // pw.x: its once-per-step barrier also runs 10 times while it sets up, so it is made
        // steps + 10 times (15 for 5 steps, 60 for 50); each step is an SCF of 3-8 iterations,
        // then the barrier; an initial SCF of 12 comes first.
        let scf = |calls: &mut Vec<(&'static str, usize)>, n: usize| {
            for _ in 0..n {
                calls.extend([("MPI_Alltoall", 2), ("MPI_Allreduce", 3)]);
            }
            calls.push(("MPI_Barrier", 1));
        };
        for steps in [5, 10, 50] {
            let mut calls = vec![("MPI_Bcast", 0)];
            calls.extend(std::iter::repeat_n(("MPI_Barrier", 1), 10));
            scf(&mut calls, 12);
            for n in (0..steps - 1).map(|i| 3 + (i * 7) % 6) {
                scf(&mut calls, n);
            }
            calls.push(("MPI_Gather", 4));
            let log = sequence(&calls);
            let (b, how) = blocks_per_step(&log, steps).unwrap();
            assert!(
                matches!(how, Iterations::PerStep { iterations, ref anchor } if iterations == steps && anchor.starts_with("MPI_Barrier")),
                "{steps} steps: {how:?}"
            );
            // The setup's barriers are in no iteration.
            let setup_barriers = b
                .iter()
                .filter(|x| {
                    !x.compute && x.iteration().is_none() && b.key(x).starts_with("MPI_Barrier")
                })
                .count();
            assert_eq!(setup_barriers, 10, "{steps} steps");
        }
    }
}
