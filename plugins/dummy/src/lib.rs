//! `dummy`: the executable example of the yosoku plugin ABI (docs/plugin-abi.md).
//!
//! It shows both kinds of collector, an importer-style one that returns several named tables
//! (`synthetic`), one that reads files and reports their hashes to the host (`checksum`), and a
//! runner that really runs and times a command (`time_command`, whose configuration the host
//! checks with `validate` before anything runs), plus one collector per failure the host must
//! survive: an error, a panic, a released stream, a stream that fails midway, a reader that
//! panics, a reader whose drop panics, a table that breaks its canonical schema, a table the
//! collector did not declare, and a stream whose schema lies about its arrays; and the faults only
//! a collector in a process of its own (`isolate`) survives: a stream that never ends, a collector
//! that never returns, one that allocates without bound, a segfault and an abort. The ABI tests
//! (`tests/abi.rs`) load this library through the real host; the CLI's `plugin_faults` tests run
//! the isolated ones.
//!
//! The host's tests also load it as a host of an older ABI version would.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray,
};
use arrow_schema::ArrowError;
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin, read_input,
};
use yosoku_tables::{COUNTERS, RUNS};

#[derive(Debug, Default)]
pub struct Dummy;

impl Plugin for Dummy {
    fn name(&self) -> &'static str {
        "dummy"
    }

    fn description(&self) -> &'static str {
        "The executable example of the plugin ABI: two working collectors and one per failure mode"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![
            Box::new(Synthetic),
            Box::new(Checksum),
            Box::new(TimeCommand),
            Box::new(Broken(Failure::Error)),
            Box::new(Broken(Failure::Panic)),
            Box::new(Broken(Failure::ReleasedStream)),
            Box::new(Broken(Failure::StreamError)),
            Box::new(Broken(Failure::ReaderPanic)),
            Box::new(Broken(Failure::DropPanic)),
            Box::new(Broken(Failure::WrongSchema)),
            Box::new(Broken(Failure::UndeclaredTable)),
            Box::new(Broken(Failure::LyingSchema)),
            Box::new(Broken(Failure::EndlessStream)),
            Box::new(Broken(Failure::Hang)),
            Box::new(Broken(Failure::UnboundedMemory)),
            Box::new(Broken(Failure::Segfault)),
            Box::new(Broken(Failure::Abort)),
        ]
    }
}

export_plugin!(Dummy);

/// One row of the `runs` tables the dummy makes.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: String,
    pub program: String,
    pub seconds: f64,
}

/// Builds a `runs` table of whole-program runs on `device`.
pub fn runs_batch(device: &str, rows: &[Run]) -> Result<RecordBatch, PluginError> {
    let n = rows.len();
    let texts = |f: fn(&Run) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f)))
    };
    Ok(RUNS.batch(vec![
        texts(|r| &r.id),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            device, n,
        ))),
        texts(|r| &r.program),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n("", n))),
        Arc::new(StringArray::from(vec![None::<&str>; n])),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            "total", n,
        ))),
        Arc::new(Int64Array::from(vec![1; n])),
        Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|r| r.seconds),
        )),
    ])?)
}

/// Makes `runs` and `counters` tables from its configuration. Nothing is measured: this collector
/// exists to show the ABI (several named tables, progress, config keys of several types).
struct Synthetic;

impl Collector for Synthetic {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "synthetic",
            "Makes `runs` and `counters` tables from its configuration (not a measurement)",
        )
        .key(ConfigKey::required(
            "device",
            ConfigType::String,
            "Device name written into every row",
        ))
        .key(ConfigKey::required(
            "programs",
            ConfigType::StringList,
            "One run per program",
        ))
        .key(ConfigKey::optional(
            "seconds",
            ConfigType::Float,
            Some(1.0.into()),
            "Time of the first run; run i takes (i + 1) x seconds",
        ))
        .tables(&["runs", "counters"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let device = config.string("device")?;
        let programs = config.string_list("programs")?;
        let seconds = config.float("seconds")?;
        let rows: Vec<Run> = programs
            .iter()
            .enumerate()
            .map(|(i, p)| Run {
                id: format!("run{i}"),
                program: p.clone(),
                seconds: seconds * (i + 1) as f64,
            })
            .collect();
        for (i, _) in rows.iter().enumerate() {
            out.progress(i as u64 + 1, rows.len() as u64, "making rows");
        }
        out.push_batch("runs", runs_batch(&device, &rows)?)?;
        let n = rows.len();
        let counters = COUNTERS.batch(vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.id.clone()),
            )),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                device.as_str(),
                n,
            ))),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.program.clone()),
            )),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n("", n))),
            Arc::new(StringArray::from(vec![None::<&str>; n])),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                "inst_executed",
                n,
            ))),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                "inst_executed",
                n,
            ))),
            Arc::new(Float64Array::from_iter_values(
                (0..n).map(|i| 1000.0 * (i + 1) as f64),
            )),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                "count", n,
            ))),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                "count", n,
            ))),
            // Made from the configuration, not read from a counter.
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                "computed", n,
            ))),
        ])?;
        out.push_batch("counters", counters)
    }
}

/// Reads files and lists their sizes: the files are hashed while read, and the host told.
struct Checksum;

impl Collector for Checksum {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "checksum",
            "Reads files and lists their sizes (a `files` table); the host learns their hashes",
        )
        .key(ConfigKey::required(
            "paths",
            ConfigType::PathList,
            "The files to read",
        ))
        .tables(&["files"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let paths = config.path_list("paths")?;
        let mut sizes = Vec::with_capacity(paths.len());
        for path in &paths {
            sizes.push(read_input(path)?.len() as i64);
        }
        let batch = RecordBatch::try_from_iter([
            (
                "path",
                Arc::new(StringArray::from_iter_values(
                    paths.iter().map(|p| p.display().to_string()),
                )) as ArrayRef,
            ),
            ("size_bytes", Arc::new(Int64Array::from(sizes)) as ArrayRef),
        ])
        .map_err(|e| PluginError::new(e.to_string()))?;
        out.push_batch("files", batch)
    }
}

/// A runner: runs a command `repetitions` times and records each run's wall time.
struct TimeCommand;

impl TimeCommand {
    /// The program, its arguments and the repetitions, checked.
    fn settings(config: &Config) -> Result<(Vec<String>, i64), PluginError> {
        let command = config.string_list("command")?;
        let repetitions = config.integer("repetitions")?;
        if command.is_empty() {
            return Err(PluginError::new("config key `command`: the list is empty"));
        }
        if repetitions < 1 {
            return Err(PluginError::new(format!(
                "config key `repetitions`: expected an integer >= 1, found {repetitions}"
            )));
        }
        Ok((command, repetitions))
    }
}

impl Collector for TimeCommand {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::runner(
            "time_command",
            "Runs a command several times and records the wall time of each run",
        )
        .key(ConfigKey::required(
            "command",
            ConfigType::StringList,
            "Program and arguments",
        ))
        .key(ConfigKey::optional(
            "repetitions",
            ConfigType::Integer,
            Some(3.into()),
            "How many times to run it",
        ))
        .key(ConfigKey::optional(
            "device",
            ConfigType::String,
            Some("localhost".into()),
            "Device name written into every row",
        ))
        .tables(&["runs"])
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        Self::settings(config).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        // Checked again: a host of ABI version 1 does not call `validate`.
        let (command, repetitions) = Self::settings(config)?;
        let device = config.string("device")?;
        let (program, args) = command
            .split_first()
            .ok_or_else(|| PluginError::new("config key `command`: the list is empty"))?;
        let mut rows = Vec::new();
        for i in 0..repetitions {
            out.progress(i as u64, repetitions as u64, program);
            let start = Instant::now();
            let status = Command::new(program)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| PluginError::new(format!("cannot run `{program}`: {e}")))?;
            let seconds = start.elapsed().as_secs_f64();
            if !status.success() {
                return Err(PluginError::new(format!(
                    "`{}` failed on repetition {}: {status}",
                    command.join(" "),
                    i + 1
                )));
            }
            rows.push(Run {
                id: format!("rep{i}"),
                program: program.clone(),
                seconds,
            });
        }
        out.push_batch("runs", runs_batch(&device, &rows)?)
    }
}

#[derive(Debug, Clone, Copy)]
enum Failure {
    Error,
    Panic,
    ReleasedStream,
    StreamError,
    ReaderPanic,
    DropPanic,
    WrongSchema,
    UndeclaredTable,
    LyingSchema,
    EndlessStream,
    Hang,
    UnboundedMemory,
    Segfault,
    Abort,
}

/// One collector per way a plugin can go wrong.
struct Broken(Failure);

impl Collector for Broken {
    fn info(&self) -> CollectorInfo {
        let (name, description) = match self.0 {
            Failure::Error => ("fail", "Returns an error carrying `message`"),
            Failure::Panic => (
                "panic",
                "Panics (the host must survive and poison the plugin)",
            ),
            Failure::ReleasedStream => (
                "released_stream",
                "Pushes an Arrow stream that is already released",
            ),
            Failure::StreamError => (
                "stream_error",
                "Pushes a stream whose second batch is an error",
            ),
            Failure::ReaderPanic => (
                "reader_panic",
                "Pushes a stream whose reader panics after the collect call returned",
            ),
            Failure::DropPanic => (
                "drop_panic",
                "Pushes a good stream whose reader panics when the host releases it",
            ),
            Failure::WrongSchema => (
                "wrong_schema",
                "Pushes a `runs` table whose `measured_secs` is text",
            ),
            Failure::UndeclaredTable => ("undeclared_table", "Pushes a table it did not declare"),
            Failure::LyingSchema => (
                "lying_schema",
                "Pushes a `runs` stream whose schema says text where its array holds numbers",
            ),
            Failure::EndlessStream => (
                "endless_stream",
                "Pushes a stream that never ends (only an isolated run's timeout stops it)",
            ),
            Failure::Hang => (
                "hang",
                "Never returns (only an isolated run's timeout stops it)",
            ),
            Failure::UnboundedMemory => (
                "unbounded_memory",
                "Allocates until allocation fails (run it isolated, with a memory limit)",
            ),
            Failure::Segfault => (
                "segfault",
                "Writes through a null pointer (run it isolated)",
            ),
            Failure::Abort => ("abort", "Calls abort() (run it isolated)"),
        };
        let info = CollectorInfo::importer(name, description).tables(&["runs"]);
        match self.0 {
            Failure::Error => info.key(ConfigKey::optional(
                "message",
                ConfigType::String,
                Some("nothing works".into()),
                "The error message",
            )),
            _ => info,
        }
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let good = || {
            let run = Run {
                id: "r".into(),
                program: "p".into(),
                seconds: 1.0,
            };
            runs_batch("cpu", &[run])
        };
        match self.0 {
            Failure::Error => Err(PluginError::new(config.string("message")?)),
            Failure::Panic => panic!("the dummy plugin panics on purpose"),
            Failure::ReleasedStream => out.push_raw_stream("runs", FFI_ArrowArrayStream::empty()),
            Failure::StreamError => {
                let batch = good()?;
                let schema = batch.schema();
                let items = vec![
                    Ok(batch),
                    Err(ArrowError::ComputeError("the device went away".into())),
                ];
                out.push_reader("runs", Box::new(RecordBatchIterator::new(items, schema)))
            }
            Failure::ReaderPanic => {
                let batch = good()?;
                let schema = batch.schema();
                let items = std::iter::once(Ok(batch)).chain(std::iter::from_fn(
                    || -> Option<Result<RecordBatch, ArrowError>> {
                        panic!("the dummy reader panics on purpose")
                    },
                ));
                out.push_reader("runs", Box::new(RecordBatchIterator::new(items, schema)))
            }
            Failure::DropPanic => {
                let batch = good()?;
                let schema = batch.schema();
                let items = vec![Ok(batch)].into_iter();
                let reader = PanicsOnDrop(RecordBatchIterator::new(items, schema));
                out.push_reader("runs", Box::new(reader))
            }
            Failure::WrongSchema => {
                let good = good()?;
                let mut columns = good.columns().to_vec();
                let mut fields: Vec<_> = good.schema().fields().iter().cloned().collect();
                let last = columns.len() - 1;
                columns[last] = Arc::new(StringArray::from(vec!["one second"]));
                fields[last] = Arc::new(arrow_schema::Field::new(
                    yosoku_tables::col::MEASURED_SECS,
                    arrow_schema::DataType::Utf8,
                    false,
                ));
                let schema = Arc::new(arrow_schema::Schema::new(fields));
                let batch = RecordBatch::try_new(schema, columns)
                    .map_err(|e| PluginError::new(e.to_string()))?;
                out.push_batch("runs", batch)
            }
            Failure::UndeclaredTable => out.push_batch("surprise", good()?),
            Failure::LyingSchema => {
                // The batch is right; the schema the stream announces says `measured_secs` is
                // text. Exported arrays carry no type: the host reads them by the schema.
                let batch = good()?;
                let fields: Vec<_> = batch
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| {
                        if f.name() == yosoku_tables::col::MEASURED_SECS {
                            Arc::new(arrow_schema::Field::new(
                                f.name(),
                                arrow_schema::DataType::Utf8,
                                false,
                            ))
                        } else {
                            f.clone()
                        }
                    })
                    .collect();
                let lie = Arc::new(arrow_schema::Schema::new(fields));
                // Exported as is: the SDK's `push_reader` would refuse the mismatch itself.
                let reader = RecordBatchIterator::new(vec![Ok(batch)], lie);
                out.push_raw_stream("runs", FFI_ArrowArrayStream::new(Box::new(reader)))
            }
            Failure::EndlessStream => {
                let batch = good()?;
                let schema = batch.schema();
                let items = std::iter::repeat_with(move || Ok(batch.clone()));
                out.push_reader("runs", Box::new(RecordBatchIterator::new(items, schema)))
            }
            Failure::Hang => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Failure::UnboundedMemory => {
                // 64 MiB at a time, every page touched, kept: until the allocator fails (and
                // Rust aborts the process).
                let mut kept: Vec<Vec<u8>> = Vec::new();
                loop {
                    kept.push(vec![1u8; 64 << 20]);
                    std::hint::black_box(&kept);
                }
            }
            Failure::Segfault => {
                // SAFETY: not safe at all; this collector exists to crash its process.
                unsafe { std::ptr::null_mut::<u8>().write_volatile(1) };
                Err(PluginError::new(
                    "still alive after writing through a null pointer",
                ))
            }
            Failure::Abort => std::process::abort(),
        }
    }
}

/// A reader whose `Drop` panics: the stream's `release`, called by the host, runs it.
struct PanicsOnDrop(RecordBatchIterator<std::vec::IntoIter<Result<RecordBatch, ArrowError>>>);

impl Iterator for PanicsOnDrop {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl arrow_array::RecordBatchReader for PanicsOnDrop {
    fn schema(&self) -> arrow_schema::SchemaRef {
        arrow_array::RecordBatchReader::schema(&self.0)
    }
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("the dummy reader panics on purpose when it is dropped");
    }
}
