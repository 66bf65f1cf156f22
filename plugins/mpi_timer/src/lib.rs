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

use arrow_array::builder::{Float64Builder, Int32Builder, Int64Builder};
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

/// A rank's log as text: read as it is, or gunzipped (`.gz`), hashed on the way either way.
fn read_log_text(path: &Path) -> Result<String, PluginError> {
    if path.extension().is_some_and(|e| e == "gz") {
        use std::io::Read;
        let mut input = yosoku_plugin_sdk::open_input(path)?;
        // Logs inflate about sixfold: room for that up front, not a string grown by doubling.
        let room = input
            .len_on_disk()
            .map_or(0, |n| n.saturating_mul(8).min(1 << 30));
        let mut text = String::with_capacity(usize::try_from(room).unwrap_or(0));
        flate2::read::GzDecoder::new(&mut input)
            .read_to_string(&mut text)
            .map_err(|e| {
                PluginError::new(format!(
                    "{}: not a gzip-compressed UTF-8 log ({e})",
                    path.display()
                ))
            })?;
        input.finish();
        Ok(text)
    } else {
        yosoku_plugin_sdk::read_input_to_string(path)
    }
}

/// The runs under `dir`: `dir` itself when it holds rank logs (run id: its name), else every
/// subdirectory that does (run id: the subdirectory's name), in name order.
pub fn read_runs(dir: &Path, allow_incomplete: bool) -> Result<Vec<Run>, PluginError> {
    let name_of = |d: &Path| {
        d.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| d.display().to_string())
    };
    if !rank_files(dir)?.is_empty() {
        return Ok(vec![Run::read(name_of(dir), dir, allow_incomplete)?]);
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
            runs.push(Run::read(name_of(&sub), &sub, allow_incomplete)?);
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
    /// One run's logs from `dir`; the binding is the one the logs recorded, if any.
    pub fn read(run_id: String, dir: &Path, allow_incomplete: bool) -> Result<Run, PluginError> {
        let ranks = read_run(dir, allow_incomplete)?;
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
    let files = rank_files(dir)?;
    if files.is_empty() {
        return Err(PluginError::new(format!(
            "{}: no rank-<r>.tsv logs; run the program with the MPI timer interposer preloaded (plugins/mpi_timer/interposer/README.md)",
            dir.display()
        )));
    }
    let mut ranks = Vec::with_capacity(files.len());
    for (rank, path) in &files {
        let text = read_log_text(path)?;
        let log = log::parse(path, &text)?;
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
    match steps {
        None => Ok(blocks::blocks(log)),
        Some(n) => blocks::blocks_per_step(log, n).map_err(|e| {
            PluginError::new(format!("{}: rank {}: {e}", log.path.display(), log.rank))
        }),
    }
}

/// `mpi_blocks` and `mpi_ranks` of runs (see [`analyse`] for `steps`). One rank's blocks are
/// analysed at a time and appended to the columns, and its parsed calls are let go once its
/// blocks are made: a run of millions of calls holds one rank's blocks beside the columns, not
/// every rank's blocks and calls (RELIABILITY.md, "Memory on large inputs"). The runs' ranks
/// keep everything but their `events`.
pub fn tables(
    runs: &mut [Run],
    steps: Option<usize>,
) -> Result<(RecordBatch, RecordBatch), PluginError> {
    // At most one compute block before each call and one after the last.
    let rows_bound: usize = runs
        .iter()
        .flat_map(|run| &run.ranks)
        .map(|l| 2 * l.events.len() + 1)
        .sum();
    let mut columns: Option<BlockColumns> = None;
    let mut how = Vec::new();
    let mut calls = Vec::new();
    for run in runs.iter_mut() {
        for i in 0..run.ranks.len() {
            let (blocks, iterations) = analyse_rank(&run.ranks[i], steps)?;
            let log = &mut run.ranks[i];
            calls.push(
                log.events
                    .iter()
                    .filter(|e| e.kind == log::EventKind::Call)
                    .count() as i64,
            );
            log.events = Vec::new();
            columns
                .get_or_insert_with(|| BlockColumns::with_capacity(rows_bound))
                .append(run, &run.ranks[i], &blocks);
            how.push(iterations);
        }
    }
    let logs: Vec<(&Run, &RankLog)> = runs
        .iter()
        .flat_map(|run| run.ranks.iter().map(move |l| (run, l)))
        .collect();
    Ok((
        columns.unwrap_or_default().finish()?,
        ranks_batch(&logs, &how, &calls)?,
    ))
}

/// The columns of `mpi_blocks`, rank after rank. The texts are dictionary-encoded: a full run's
/// million blocks repeat a few hundred block names and call sites, one run and a few hosts.
#[derive(Default)]
struct BlockColumns {
    run_id: DictTextBuilder,
    host: DictTextBuilder,
    rank: Int32Builder,
    block: DictTextBuilder,
    kind: DictTextBuilder,
    call_site: DictTextBuilder,
    iteration: Int64Builder,
    start_secs: Float64Builder,
    duration_secs: Float64Builder,
}

impl BlockColumns {
    /// Columns with room for `rows` rows.
    fn with_capacity(rows: usize) -> Self {
        let text = || DictTextBuilder::with_capacity(rows);
        Self {
            run_id: text(),
            host: text(),
            rank: Int32Builder::with_capacity(rows),
            block: text(),
            kind: text(),
            call_site: text(),
            iteration: Int64Builder::with_capacity(rows),
            start_secs: Float64Builder::with_capacity(rows),
            duration_secs: Float64Builder::with_capacity(rows),
        }
    }

    fn append(&mut self, run: &Run, log: &RankLog, blocks: &blocks::RankBlocks) {
        let secs = |ns: u64| ns as f64 * 1e-9;
        // Every text looked up once per rank: the rank's, and each key's and call site's by
        // its id.
        let run_id = self.run_id.key(&run.run_id);
        let host = self.host.key(&log.host);
        let (compute, communication) = (self.kind.key("compute"), self.kind.key("communication"));
        let mut block_keys: Vec<Option<TextKey>> = vec![None; blocks.names.len()];
        let mut site_keys: Vec<Option<TextKey>> = vec![None; blocks.names.len()];
        for b in blocks.iter() {
            self.run_id.append_key(run_id);
            self.host.append_key(host);
            self.rank.append_value(log.rank);
            let block = *block_keys[b.block as usize]
                .get_or_insert_with(|| self.block.key(blocks.name(b.block)));
            self.block.append_key(block);
            self.kind
                .append_key(if b.compute { compute } else { communication });
            let site = *site_keys[b.call_site as usize]
                .get_or_insert_with(|| self.call_site.key(blocks.name(b.call_site)));
            self.call_site.append_key(site);
            self.iteration.append_option(b.iteration());
            self.start_secs.append_value(secs(b.start_ns));
            self.duration_secs.append_value(secs(b.duration_ns));
        }
    }

    fn finish(mut self) -> Result<RecordBatch, PluginError> {
        MPI_BLOCKS
            .batch(vec![
                self.run_id.finish(),
                self.host.finish(),
                Arc::new(self.rank.finish()),
                self.block.finish(),
                self.kind.finish(),
                self.call_site.finish(),
                Arc::new(self.iteration.finish()),
                Arc::new(self.start_secs.finish()),
                Arc::new(self.duration_secs.finish()),
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
        let mut runs = read_runs(&dir, config.boolean("allow_incomplete")?)?;
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
        let (blocks, ranks) = tables(&mut runs, steps(config)?)?;
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
        interposer: config.path("interposer")?,
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
        .key(ConfigKey::required(
            "interposer",
            ConfigType::Path,
            "libyosoku_mpi_timer.so, built from plugins/mpi_timer/interposer (cargo xtask mpi-tools)",
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
        let result = launch
            .run(&dir)
            .and_then(|()| Run::read(String::new(), &dir, false));
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
        let mut runs = [run];
        let (blocks, ranks) = tables(&mut runs, steps(config)?)?;
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
