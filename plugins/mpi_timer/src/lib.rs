//! `mpi_timer`: per-rank compute and communication blocks of real MPI runs, from the logs of the
//! PMPI interposer in `interposer/` (README.md), for the simplified-execution prediction of Chida
//! et al. (docs/methods.md, section 3).
//!
//! Collector `logs` imports a directory of `rank-<r>.tsv` logs into `mpi_blocks` (one row per
//! execution of a block, with its iteration) and `mpi_ranks` (one row per rank); collector `run`
//! launches a program under `mpirun` with the interposer preloaded and imports what it wrote;
//! collector `tau_profile` reads TAU text profiles into the same tables (per-rank totals).
//!
//! A rank's block keys and call sites are ids into one table of texts.

pub mod blocks;
pub mod launch;
pub mod log;
pub mod tau;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin,
};
use yosoku_tables::text::{DictTextBuilder, TextKey};
use yosoku_tables::{MPI_BLOCKS, MPI_RANKS};

use crate::log::RankLog;

#[derive(Debug, Default)]
pub struct MpiTimer;

impl Plugin for MpiTimer {
    fn name(&self) -> &'static str {
        "mpi_timer"
    }

    fn description(&self) -> &'static str {
        "Per-rank compute and communication blocks of MPI runs, from the yosoku PMPI interposer's logs"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(Logs), Box::new(RunMpi), Box::new(TauProfiles)]
    }
}

export_plugin!(MpiTimer);

/// One run's logs, every rank read and checked against the others.
#[derive(Debug)]
pub struct Run {
    pub run_id: String,
    pub binding: Option<String>,
    /// The run's input parameters (`key=value;...`), as its logs or its collector's
    /// configuration say.
    pub parameters: Option<String>,
    pub ranks: Vec<RankLog>,
}

/// The `rank-<r>.tsv` files directly in `dir` (or `rank-<r>.tsv.gz`, gzip-compressed: long runs'
/// logs kept in a repository), by rank.
fn rank_files(dir: &Path) -> Result<Vec<(i32, PathBuf)>, PluginError> {
    let entries = std::fs::read_dir(dir).map_err(|e| PluginError::io(dir, &e))?;
    let mut files: Vec<(i32, PathBuf)> = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| PluginError::io(dir, &e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(rank) = name
            .strip_prefix("rank-")
            .and_then(|n| n.strip_suffix(".tsv").or_else(|| n.strip_suffix(".tsv.gz")))
            .and_then(|n| n.parse::<i32>().ok())
        {
            if let Some((_, other)) = files.iter().find(|(r, _)| *r == rank) {
                return Err(PluginError::new(format!(
                    "{}: rank {rank} has two logs, {} and {}; keep one",
                    dir.display(),
                    other.display(),
                    path.display()
                )));
            }
            files.push((rank, path));
        }
    }
    files.sort();
    Ok(files)
}

/// A rank's log, parsed as it is read (inflated first when gzip-compressed, told by its first
/// bytes), hashed on the way either way: its text is never held whole.
fn read_log(path: &Path) -> Result<RankLog, PluginError> {
    let mut input = yosoku_plugin_sdk::open_input(path)?;
    let log = if input.is_gzip() {
        let not_gzip = |e: std::io::Error| {
            PluginError::new(format!(
                "{}: not a gzip-compressed UTF-8 log ({e})",
                path.display()
            ))
        };
        log::parse_from(
            path,
            &mut flate2::read::MultiGzDecoder::new(&mut input),
            &not_gzip,
        )?
    } else {
        log::parse_from(path, &mut input, &|e| PluginError::io(path, &e))?
    };
    input.finish();
    Ok(log)
}

/// What is done with each rank's log as soon as it is read and checked, before the next is
/// read ([`Import::rank`]: its blocks made, its parsed calls let go).
pub type OnRank<'a> = &'a mut dyn FnMut(&mut RankLog) -> Result<(), PluginError>;

/// The runs under `dir`: `dir` itself when it holds rank logs (run id: its name), else every
/// subdirectory that does (run id: the subdirectory's name), in name order.
pub fn read_runs(dir: &Path, allow_incomplete: bool) -> Result<Vec<Run>, PluginError> {
    read_runs_with(dir, allow_incomplete, &mut |_| Ok(()))
}

/// [`read_runs`], each rank's log passed to `on_rank` once read.
pub fn read_runs_with(
    dir: &Path,
    allow_incomplete: bool,
    on_rank: OnRank<'_>,
) -> Result<Vec<Run>, PluginError> {
    let name_of = |d: &Path| {
        d.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| d.display().to_string())
    };
    if !rank_files(dir)?.is_empty() {
        return Ok(vec![Run::read_with(
            name_of(dir),
            dir,
            allow_incomplete,
            on_rank,
        )?]);
    }
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| PluginError::io(dir, &e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    let mut runs = Vec::new();
    for sub in subdirs {
        if !rank_files(&sub)?.is_empty() {
            runs.push(Run::read_with(
                name_of(&sub),
                &sub,
                allow_incomplete,
                on_rank,
            )?);
        }
    }
    if runs.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no rank-<r>.tsv logs, neither in it nor in its subdirectories; run the program with the MPI timer interposer preloaded (plugins/mpi_timer/interposer/README.md)",
            dir.display()
        )));
    }
    Ok(runs)
}

impl Run {
    /// One run's logs from `dir`, each rank's log passed to `on_rank` once read; the binding is
    /// the one the logs recorded, if any.
    pub fn read_with(
        run_id: String,
        dir: &Path,
        allow_incomplete: bool,
        on_rank: OnRank<'_>,
    ) -> Result<Run, PluginError> {
        let ranks = read_run_with(dir, allow_incomplete, on_rank)?;
        // What every rank of one run records alike (the launcher set it for all of them).
        let agreed = |what: &str, field: fn(&RankLog) -> &Option<String>| {
            let first = field(&ranks[0]);
            match ranks.iter().find(|l| field(l) != first) {
                Some(other) => Err(PluginError::new(format!(
                    "{}: rank {} records {what} {:?} but rank {} records {:?}: not logs of one run",
                    other.path.display(),
                    other.rank,
                    field(other),
                    ranks[0].rank,
                    first
                ))),
                None => Ok(first.clone()),
            }
        };
        let binding = agreed("binding", |l| &l.binding)?;
        let parameters = agreed("parameters", |l| &l.parameters)?;
        Ok(Run {
            run_id,
            binding,
            parameters,
            ranks,
        })
    }
}

/// Reads `dir/rank-<r>.tsv` for every rank of the run. Every rank must be there, agree on the
/// run's size and command, and have finished its log (unless `allow_incomplete`).
pub fn read_run(dir: &Path, allow_incomplete: bool) -> Result<Vec<RankLog>, PluginError> {
    read_run_with(dir, allow_incomplete, &mut |_| Ok(()))
}

/// [`read_run`], each rank's log passed to `on_rank` once read and checked by itself (the
/// checks across ranks come after the last).
pub fn read_run_with(
    dir: &Path,
    allow_incomplete: bool,
    on_rank: OnRank<'_>,
) -> Result<Vec<RankLog>, PluginError> {
    let files = rank_files(dir)?;
    if files.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no rank-<r>.tsv logs; run the program with the MPI timer interposer preloaded (plugins/mpi_timer/interposer/README.md)",
            dir.display()
        )));
    }
    let mut ranks = Vec::with_capacity(files.len());
    for (rank, path) in &files {
        let mut log = read_log(path)?;
        if log.rank != *rank {
            return Err(PluginError::new(format!(
                "{}: the file is named for rank {rank} but its log says `# rank {}`",
                path.display(),
                log.rank
            )));
        }
        match log.end.as_deref() {
            Some("complete") => {}
            end if !allow_incomplete => {
                return Err(PluginError::new(format!(
                    "{}: rank {rank}'s log {}; the run did not finish (set allow_incomplete = true to import it anyway)",
                    path.display(),
                    match end {
                        None => "stops before its `# end` line (truncated)".to_owned(),
                        Some(e) => format!("ends with `{e}`, not MPI_Finalize"),
                    }
                )));
            }
            _ => {}
        }
        on_rank(&mut log)?;
        ranks.push(log);
    }
    let first = &ranks[0];
    for log in &ranks[1..] {
        if log.size != first.size || log.command != first.command {
            return Err(PluginError::new(format!(
                "{}: rank {} ran `{}` in a run of {} ranks, but rank {} ({}) ran `{}` in a run of {}: not logs of one run",
                log.path.display(),
                log.rank,
                log.command,
                log.size,
                first.rank,
                first.path.display(),
                first.command,
                first.size
            )));
        }
    }
    if let Some(missing) = (0..first.size).find(|r| !ranks.iter().any(|l| l.rank == *r)) {
        return Err(PluginError::new(format!(
            "{}: rank {missing} of {} has no log (expected {})",
            dir.display(),
            first.size,
            dir.join(format!("rank-{missing}.tsv")).display()
        )));
    }
    Ok(ranks)
}

fn text(values: impl Iterator<Item = impl AsRef<str>>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

/// The blocks of every rank of `runs`, and how each rank's iterations were found.
///
/// `steps`: the steps (time steps, MD steps) the runs made, in the program's own units, when the
/// user gives them: the iteration is then the repeating unit that runs once per step (see
/// [`blocks::blocks_per_step`]).
pub fn analyse(
    runs: &[Run],
    steps: Option<usize>,
) -> Result<Vec<(blocks::RankBlocks, blocks::Iterations)>, PluginError> {
    runs.iter()
        .flat_map(|run| &run.ranks)
        .map(|log| analyse_rank(log, steps))
        .collect()
}

/// One rank's blocks (see [`analyse`]).
fn analyse_rank(
    log: &RankLog,
    steps: Option<usize>,
) -> Result<(blocks::RankBlocks, blocks::Iterations), PluginError> {
    iterations_of(log, blocks::timed(log), steps)
}

/// The iterations of `timed`, the blocks of `log` (which may have let its events go).
fn iterations_of(
    log: &RankLog,
    timed: blocks::Timed,
    steps: Option<usize>,
) -> Result<(blocks::RankBlocks, blocks::Iterations), PluginError> {
    match steps {
        None => Ok(timed.iterations()),
        Some(n) => timed.iterations_per_step(n).map_err(|e| {
            PluginError::new(format!("{}: rank {}: {e}", log.path.display(), log.rank))
        }),
    }
}

/// `mpi_blocks` and `mpi_ranks` of runs already read (see [`analyse`] for `steps`), through
/// [`Import`]. The runs' ranks keep everything but their `events`.
pub fn tables(
    runs: &mut [Run],
    steps: Option<usize>,
) -> Result<(RecordBatch, RecordBatch), PluginError> {
    let mut import = Import::new(steps);
    for log in runs.iter_mut().flat_map(|run| &mut run.ranks) {
        import.rank(log)?;
    }
    import.finish(runs)
}

/// `mpi_blocks` and `mpi_ranks` built rank by rank as the logs are read ([`read_runs_with`]):
/// a rank's blocks are made and appended to the columns and its parsed calls let go before the
/// next rank's log is read, so that a run of millions of calls holds the columns, one rank's
/// calls and one rank's blocks, never every rank's (RELIABILITY.md, "Memory on large inputs").
/// The run ids are set at [`Import::finish`]: a collector may rename runs after reading them.
#[derive(Debug)]
pub struct Import {
    steps: Option<usize>,
    columns: BlockColumns,
    /// `mpi_blocks` rows of each rank, in the order the ranks came.
    rows: Vec<usize>,
    how: Vec<blocks::Iterations>,
    calls: Vec<i64>,
}

impl Import {
    /// An import that finds iterations as [`analyse`] does with `steps`.
    pub fn new(steps: Option<usize>) -> Self {
        Self {
            steps,
            columns: BlockColumns::default(),
            rows: Vec::new(),
            how: Vec::new(),
            calls: Vec::new(),
        }
    }

    /// Makes the blocks of `log`, appends them, and lets its parsed calls go.
    pub fn rank(&mut self, log: &mut RankLog) -> Result<(), PluginError> {
        self.calls.push(
            log.events
                .iter()
                .filter(|e| e.kind == log::EventKind::Call)
                .count() as i64,
        );
        let timed = blocks::timed_taking(log);
        let (blocks, iterations) = iterations_of(log, timed, self.steps)?;
        self.rows.push(blocks.len());
        self.columns.append(log, blocks);
        self.how.push(iterations);
        Ok(())
    }

    /// The tables of `runs`, whose ranks are the ones given to [`Import::rank`], in that order.
    pub fn finish(self, runs: &[Run]) -> Result<(RecordBatch, RecordBatch), PluginError> {
        let logs: Vec<(&Run, &RankLog)> = runs
            .iter()
            .flat_map(|run| run.ranks.iter().map(move |l| (run, l)))
            .collect();
        if logs.len() != self.rows.len() {
            return Err(PluginError::new(format!(
                "{} ranks read but {} imported: every rank of the runs goes through the import once",
                logs.len(),
                self.rows.len()
            )));
        }
        let mut run_id = DictTextBuilder::with_capacity(self.rows.iter().sum());
        for ((run, _), &rows) in logs.iter().zip(&self.rows) {
            let key = run_id.key(&run.run_id);
            for _ in 0..rows {
                run_id.append_key(key);
            }
        }
        Ok((
            self.columns.finish(run_id.finish())?,
            ranks_batch(&logs, &self.how, &self.calls)?,
        ))
    }
}

/// The columns of `mpi_blocks`, rank after rank. The texts are dictionary-encoded: a full run's
/// million blocks repeat a few hundred block names and call sites, one run and a few hosts.
#[derive(Debug, Default)]
struct BlockColumns {
    host: DictTextBuilder,
    // The numbers in `Vec`s, not Arrow builders: a `Vec` grows in place (`realloc`), where a
    // builder's 64-byte-aligned buffer is copied into one twice its size each time it grows,
    // the two held together (a rank's table appended to another's is hundreds of MB). An Arrow
    // array takes a `Vec`'s memory as it is.
    rank: Vec<i32>,
    block: DictTextBuilder,
    kind: DictTextBuilder,
    call_site: DictTextBuilder,
    iteration: Vec<i64>,
    in_loop: Vec<bool>,
    start_secs: Vec<f64>,
    duration_secs: Vec<f64>,
}

impl BlockColumns {
    /// Appends the rows of `blocks`, letting the blocks go as they are appended: the last rank's
    /// blocks and the whole table are never held together in full (at 32 bytes a block, a rank of
    /// ten million calls has 0.6 GB of them).
    fn append(&mut self, log: &RankLog, mut blocks: blocks::RankBlocks) {
        let secs = |ns: u64| ns as f64 * 1e-9;
        // Every text looked up once per rank: the rank's, and each key's and call site's by
        // its id.
        let host = self.host.key(&log.host);
        let (compute, communication) = (self.kind.key("compute"), self.kind.key("communication"));
        let mut block_keys: Vec<Option<TextKey>> = vec![None; blocks.names.len()];
        let mut site_keys: Vec<Option<TextKey>> = vec![None; blocks.names.len()];
        for b in blocks::releasing(std::mem::take(&mut blocks.blocks)) {
            self.host.append_key(host);
            self.rank.push(log.rank);
            let block = *block_keys[b.block as usize]
                .get_or_insert_with(|| self.block.key(blocks.name(b.block)));
            self.block.append_key(block);
            self.kind
                .append_key(if b.compute { compute } else { communication });
            let site = *site_keys[b.call_site as usize]
                .get_or_insert_with(|| self.call_site.key(blocks.name(b.call_site)));
            self.call_site.append_key(site);
            self.iteration.push(b.iteration().unwrap_or(0));
            self.in_loop.push(b.iteration().is_some());
            self.start_secs.push(secs(b.start_ns));
            self.duration_secs.push(secs(b.duration_ns));
        }
    }

    /// The table, with its `run_id` column.
    fn finish(mut self, run_id: ArrayRef) -> Result<RecordBatch, PluginError> {
        MPI_BLOCKS
            .batch(vec![
                run_id,
                self.host.finish(),
                Arc::new(Int32Array::from(std::mem::take(&mut self.rank))),
                self.block.finish(),
                self.kind.finish(),
                self.call_site.finish(),
                Arc::new(Int64Array::new(
                    std::mem::take(&mut self.iteration).into(),
                    Some(std::mem::take(&mut self.in_loop).into()),
                )),
                Arc::new(Float64Array::from(std::mem::take(&mut self.start_secs))),
                Arc::new(Float64Array::from(std::mem::take(&mut self.duration_secs))),
            ])
            .map_err(|e| PluginError::new(format!("mpi_blocks: {e}")))
    }
}

/// `mpi_ranks` of the ranks `logs`, with the shape of their loops (`how`, in the same order).
fn ranks_batch(
    logs: &[(&Run, &RankLog)],
    how: &[blocks::Iterations],
    calls: &[i64],
) -> Result<RecordBatch, PluginError> {
    let r: Vec<&RankLog> = logs.iter().map(|(_, l)| *l).collect();
    let shapes: Vec<_> = how.iter().map(blocks::Iterations::shape).collect();
    MPI_RANKS
        .batch(vec![
            text(logs.iter().map(|(run, _)| run.run_id.as_str())),
            text(r.iter().map(|l| l.host.as_str())),
            Arc::new(Int32Array::from_iter_values(r.iter().map(|l| l.rank))),
            Arc::new(Int32Array::from_iter_values(r.iter().map(|l| l.size))),
            text(r.iter().map(|l| l.command.as_str())),
            Arc::new(
                logs.iter()
                    .map(|(run, _)| run.binding.as_deref())
                    .collect::<StringArray>(),
            ),
            Arc::new(
                logs.iter()
                    .map(|(run, _)| run.parameters.as_deref())
                    .collect::<StringArray>(),
            ),
            Arc::new(Float64Array::from_iter_values(
                r.iter().map(|l| (l.end_ns() - l.init_end_ns) as f64 * 1e-9),
            )),
            Arc::new(Int64Array::from_iter_values(calls.iter().copied())),
            text(r.iter().map(|l| l.end.as_deref().unwrap_or("exit"))),
            Arc::new(shapes.iter().map(|s| s.0).collect::<Int64Array>()),
            Arc::new(shapes.iter().map(|s| s.1).collect::<Int32Array>()),
            Arc::new(shapes.iter().map(|s| Some(s.2)).collect::<StringArray>()),
            Arc::new(shapes.iter().map(|s| s.3).collect::<StringArray>()),
        ])
        .map_err(|e| PluginError::new(format!("mpi_ranks: {e}")))
}

/// Importer of one run's logs.
struct Logs;

impl Collector for Logs {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "logs",
            "A directory of rank-<r>.tsv logs written by the MPI timer interposer (one run), or a directory of such directories (one run each)",
        )
        .key(ConfigKey::required(
            "dir",
            ConfigType::Path,
            "The directory the run wrote its logs to (YOSOKU_MPI_LOG_DIR)",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "The run's identifier (default: the directory's name; each run's subdirectory name when `dir` holds several)",
        ))
        .key(ConfigKey::optional(
            "binding",
            ConfigType::String,
            None,
            "The CPU binding the run was launched with, recorded in mpi_ranks (default: the `# binding` the logs recorded)",
        ))
        .key(ConfigKey::optional(
            "parameters",
            ConfigType::String,
            None,
            "The run's input parameters, `key=value` pairs separated by `;` (`n=65;iterations=100`), recorded in mpi_ranks for scaling models (default: the `# parameters` the logs recorded)",
        ))
        .key(ConfigKey::optional(
            "allow_incomplete",
            ConfigType::Boolean,
            Some(false.into()),
            "Import logs of ranks that aborted or exited without MPI_Finalize",
        ))
        .key(ConfigKey::optional(
            "steps",
            ConfigType::Integer,
            None,
            "The steps the run made in the program's own units (time steps, MD steps): the iteration is then the repeating unit that runs once per step, with an inner loop of any length (SCF iterations, solver sweeps) inside it, started by a call made once (or, where every call runs several times a step, m times) per step",
        ))
        .tables(&["mpi_blocks", "mpi_ranks"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let dir = config.path("dir")?;
        let mut import = Import::new(steps(config)?);
        let mut runs = read_runs_with(&dir, config.boolean("allow_incomplete")?, &mut |log| {
            import.rank(log)
        })?;
        if let Some(id) = config.opt_string("run_id")? {
            if runs.len() > 1 {
                return Err(PluginError::new(format!(
                    "run_id: {} holds {} runs (one per subdirectory), each named by its directory; drop `run_id`",
                    dir.display(),
                    runs.len()
                )));
            }
            runs[0].run_id = id;
        }
        if let Some(binding) = config.opt_string("binding")? {
            for run in &mut runs {
                run.binding = Some(binding.clone());
            }
        }
        if let Some(parameters) = parameters_of(config)? {
            if runs.len() > 1 {
                return Err(PluginError::new(format!(
                    "parameters: {} holds {} runs (one per subdirectory); give each run's parameters in its logs (YOSOKU_MPI_PARAMETERS when it ran) or import the runs one by one",
                    dir.display(),
                    runs.len()
                )));
            }
            runs[0].parameters = Some(parameters);
        }
        let (blocks, ranks) = import.finish(&runs)?;
        out.push_batch(MPI_BLOCKS.name, blocks)?;
        out.push_batch(MPI_RANKS.name, ranks)
    }
}

/// The `steps` key: at least 1.
fn steps(config: &Config) -> Result<Option<usize>, PluginError> {
    match config.opt_integer("steps")? {
        Some(n) if n < 1 => Err(PluginError::new(format!(
            "steps = {n}: expected the number of steps the run made (>= 1), in the program's own units"
        ))),
        n => Ok(n.map(|n| n as usize)),
    }
}

/// The `parameters` key, checked.
fn parameters_of(config: &Config) -> Result<Option<String>, PluginError> {
    let Some(text) = config.opt_string("parameters")? else {
        return Ok(None);
    };
    log::check_parameters(&text).map_err(|e| PluginError::new(format!("parameters: {e}")))?;
    Ok(Some(text))
}

/// The interposer's file name.
pub const INTERPOSER: &str = "libyosoku_mpi_timer.so";

/// Where the interposer is looked for when `interposer` is not given, relative to the running
/// `yosoku`: where `cargo xtask install` puts it (`<prefix>/bin/yosoku`,
/// `<prefix>/lib/yosoku/libyosoku_mpi_timer.so`), then where `cargo xtask mpi-tools` builds it
/// in a cargo target directory (`target/debug/yosoku`, `target/mpi/`).
pub fn interposer_candidates(executable: &Path) -> Vec<PathBuf> {
    let Some(bin) = executable.parent() else {
        return Vec::new();
    };
    let Some(above) = bin.parent() else {
        return Vec::new();
    };
    vec![
        above.join("lib/yosoku").join(INTERPOSER),
        above.join("mpi").join(INTERPOSER),
    ]
}

/// The installed interposer ([`interposer_candidates`] of the running executable), or an error
/// naming where it was looked for and how to get one.
fn default_interposer() -> Result<PathBuf, PluginError> {
    let exe = std::env::current_exe().map_err(|e| {
        PluginError::new(format!(
            "interposer: cannot tell where yosoku runs from: {e}"
        ))
    })?;
    let candidates = interposer_candidates(&exe);
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        PluginError::new(format!(
            "interposer: none given and none installed (looked for {}): install yosoku with `cargo xtask install` where an MPI C compiler (mpicc) is present, build it with `cargo xtask mpi-tools`, or set `interposer`",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// The launch a `run` collector's configuration asks for, its counts checked.
fn launch_of(config: &Config) -> Result<launch::Launch, PluginError> {
    let positive = |key: &str| -> Result<u64, PluginError> {
        let v = config.integer(key)?;
        u64::try_from(v).ok().filter(|v| *v > 0).ok_or_else(|| {
            PluginError::new(format!("{key}: expected a positive integer, found {v}"))
        })
    };
    let ranks = positive("ranks")?;
    Ok(launch::Launch {
        mpirun: config.string("mpirun")?,
        program: config.path("program")?,
        args: config.string_list("args")?,
        ranks: u32::try_from(ranks)
            .map_err(|_| PluginError::new(format!("ranks: {ranks} is too many")))?,
        binding: config.string("binding")?,
        parameters: parameters_of(config)?,
        oversubscribe: config.boolean("oversubscribe")?,
        interposer: match config.opt_path("interposer")? {
            Some(path) => path,
            None => default_interposer()?,
        },
        mpirun_args: config.string_list("mpirun_args")?,
        timeout: std::time::Duration::from_secs(positive("timeout_secs")?),
    })
}

/// Runner: launches the program under `mpirun` with the interposer, then imports its logs.
struct RunMpi;

impl Collector for RunMpi {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::runner(
            "run",
            "Runs an MPI program under mpirun with the MPI timer interposer preloaded and imports its per-rank logs",
        )
        .key(ConfigKey::required(
            "program",
            ConfigType::Path,
            "The MPI program (an executable; not modified)",
        ))
        .key(ConfigKey::optional(
            "args",
            ConfigType::StringList,
            Some(Vec::<String>::new().into()),
            "Its arguments",
        ))
        .key(ConfigKey::required(
            "ranks",
            ConfigType::Integer,
            "Ranks to start (mpirun -np)",
        ))
        .key(ConfigKey::optional(
            "binding",
            ConfigType::String,
            Some("core".into()),
            "CPU binding (mpirun --bind-to): core, core:overload-allowed (ranks may share a core), socket, none, ...",
        ))
        .key(ConfigKey::optional(
            "parameters",
            ConfigType::String,
            None,
            "The run's input parameters, `key=value` pairs separated by `;` (`n=65;iterations=100`): written into every rank's log (YOSOKU_MPI_PARAMETERS) and recorded in mpi_ranks, for scaling models over several runs",
        ))
        .key(ConfigKey::optional(
            "oversubscribe",
            ConfigType::Boolean,
            Some(false.into()),
            "Allow more ranks than cores (mpirun --oversubscribe)",
        ))
        .key(ConfigKey::optional(
            "interposer",
            ConfigType::Path,
            None,
            "libyosoku_mpi_timer.so, built from plugins/mpi_timer/interposer. Default: the one installed beside yosoku (`cargo xtask install`: <prefix>/lib/yosoku/), else the one `cargo xtask mpi-tools` built in yosoku's cargo target directory (target/mpi/)",
        ))
        .key(ConfigKey::optional(
            "mpirun",
            ConfigType::String,
            Some("mpirun".into()),
            "The launcher",
        ))
        .key(ConfigKey::optional(
            "mpirun_args",
            ConfigType::StringList,
            Some(Vec::<String>::new().into()),
            "More mpirun options, before the program",
        ))
        .key(ConfigKey::optional(
            "log_dir",
            ConfigType::String,
            None,
            "Keep the logs in this directory (created; must be empty). Default: a temporary directory, removed after import",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "The run's identifier (default: <program>-<ranks>ranks)",
        ))
        .key(ConfigKey::optional(
            "timeout_secs",
            ConfigType::Integer,
            Some(600.into()),
            "Kill the run after this many seconds",
        ))
        .key(ConfigKey::optional(
            "steps",
            ConfigType::Integer,
            None,
            "The steps the run made in the program's own units (time steps, MD steps): the iteration is then the repeating unit that runs once per step, with an inner loop of any length (SCF iterations, solver sweeps) inside it, started by a call made once (or, where every call runs several times a step, m times) per step",
        ))
        .tables(&["mpi_blocks", "mpi_ranks"])
    }

    /// The launch settings, so that a pipeline with 0 ranks fails before any collector runs,
    /// and an existing non-empty `log_dir` before an hour of other runs.
    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        launch_of(config)?;
        steps(config)?;
        if let Some(dir) = config.opt_string("log_dir")? {
            launch::check_log_dir(Path::new(&dir))?;
        }
        Ok(())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let launch = launch_of(config)?;
        let wanted = config.opt_string("log_dir")?.map(PathBuf::from);
        let (dir, temporary) = launch::log_dir(wanted.as_deref())?;
        let mut import = Import::new(steps(config)?);
        let result = launch
            .run(&dir)
            .and_then(|()| Run::read_with(String::new(), &dir, false, &mut |log| import.rank(log)));
        if temporary {
            let _ = std::fs::remove_dir_all(&dir);
        }
        let mut run = result?;
        if run.ranks.len() != launch.ranks as usize {
            return Err(PluginError::new(format!(
                "{}: mpirun started {} ranks but {} logs were written",
                dir.display(),
                launch.ranks,
                run.ranks.len()
            )));
        }
        run.run_id = match config.opt_string("run_id")? {
            Some(id) => id,
            None => format!(
                "{}-{}ranks",
                launch
                    .program
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                launch.ranks
            ),
        };
        let (blocks, ranks) = import.finish(&[run])?;
        out.push_batch(MPI_BLOCKS.name, blocks)?;
        out.push_batch(MPI_RANKS.name, ranks)
    }
}

/// `mpi_blocks` and `mpi_ranks` of TAU profiles: one row per function and rank, all its calls
/// together.
pub fn tau_batches(
    run_id: &str,
    profiles: &[tau::Profile],
) -> Result<(RecordBatch, RecordBatch), PluginError> {
    let rows: Vec<(&tau::Profile, &tau::Function)> = profiles
        .iter()
        .flat_map(|p| p.functions.iter().map(move |f| (p, f)))
        .collect();
    let blocks = MPI_BLOCKS
        .batch(vec![
            text(rows.iter().map(|_| run_id)),
            text(rows.iter().map(|(p, _)| p.host.as_str())),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(p, _)| p.rank),
            )),
            text(rows.iter().map(|(_, f)| f.name.as_str())),
            text(
                rows.iter()
                    .map(|(_, f)| if f.mpi { "communication" } else { "compute" }),
            ),
            text(
                rows.iter()
                    .map(|(_, f)| format!("TAU: {} calls, exclusive time", f.calls)),
            ),
            Arc::new(Int64Array::from(vec![None::<i64>; rows.len()])),
            Arc::new(Float64Array::from(vec![None::<f64>; rows.len()])),
            Arc::new(Float64Array::from_iter_values(
                rows.iter().map(|(_, f)| f.exclusive_usecs * 1e-6),
            )),
        ])
        .map_err(|e| PluginError::new(format!("mpi_blocks: {e}")))?;
    let ranks = MPI_RANKS
        .batch(vec![
            text(profiles.iter().map(|_| run_id)),
            text(profiles.iter().map(|p| p.host.as_str())),
            Arc::new(Int32Array::from_iter_values(
                profiles.iter().map(|p| p.rank),
            )),
            Arc::new(Int32Array::from_iter_values(
                profiles.iter().map(|_| profiles.len() as i32),
            )),
            text(profiles.iter().map(|p| p.command.as_str())),
            Arc::new(StringArray::from(vec![None::<&str>; profiles.len()])),
            Arc::new(StringArray::from(vec![None::<&str>; profiles.len()])),
            Arc::new(Float64Array::from_iter_values(
                profiles.iter().map(|p| p.wall_usecs() * 1e-6),
            )),
            Arc::new(Int64Array::from_iter_values(profiles.iter().map(|p| {
                p.functions
                    .iter()
                    .filter(|f| f.mpi)
                    .map(|f| i64::try_from(f.calls).unwrap_or(i64::MAX))
                    .fold(0i64, i64::saturating_add)
            }))),
            text(profiles.iter().map(|p| {
                if p.functions
                    .iter()
                    .any(|f| f.name.starts_with("MPI_Finalize"))
                {
                    "complete"
                } else {
                    "exit"
                }
            })),
            Arc::new(Int64Array::from(vec![None::<i64>; profiles.len()])),
            Arc::new(Int32Array::from(vec![None::<i32>; profiles.len()])),
            Arc::new(StringArray::from(vec![None::<&str>; profiles.len()])),
            Arc::new(StringArray::from(vec![None::<&str>; profiles.len()])),
        ])
        .map_err(|e| PluginError::new(format!("mpi_ranks: {e}")))?;
    Ok((blocks, ranks))
}

/// Importer of TAU text profiles.
struct TauProfiles;

impl Collector for TauProfiles {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "tau_profile",
            "TAU text profiles of one MPI run (profile.<rank>.0.0): per-rank MPI and compute time, one row per function",
        )
        .key(ConfigKey::required(
            "dir",
            ConfigType::Path,
            "The directory holding profile.<rank>.0.0 of every rank",
        ))
        .key(ConfigKey::optional(
            "run_id",
            ConfigType::String,
            None,
            "The run's identifier (default: the directory's name)",
        ))
        .tables(&["mpi_blocks", "mpi_ranks"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let dir = config.path("dir")?;
        let run_id = config.opt_string("run_id")?.unwrap_or_else(|| {
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let (blocks, ranks) = tau_batches(&run_id, &tau::read_dir(&dir)?)?;
        out.push_batch(MPI_BLOCKS.name, blocks)?;
        out.push_batch(MPI_RANKS.name, ranks)
    }
}
