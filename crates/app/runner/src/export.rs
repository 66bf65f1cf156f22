//! `yosoku export` and `yosoku trace export` / `check`: a bundle's tables for other tools —
//! Parquet and CSV (every table), Chrome trace JSON (its `spans`), Extra-P's JSON input (its
//! measured runs over their parameters, `yosoku_models::scaling::extrap`) — or some of them as a
//! bundle of their own (to commit or share a run's result without its inputs), each written
//! whole or not at all: beside its place first, then renamed into it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use yosoku_bundle::fs::Bundle;
use yosoku_models::scaling::extrap::ExtrapExperiment;
use yosoku_traces::chrome;

/// Marks a directory `yosoku export` wrote, so that a second export may replace it.
const MARKER: &str = ".yosoku-export";

/// What an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// A directory of one Parquet file per table (snappy).
    Parquet,
    /// A directory of one CSV file per table.
    Csv,
    /// One Chrome trace JSON file of the bundle's `spans` tables.
    ChromeTrace,
    /// Extra-P's JSON input, one file per experiment.
    Extrap,
    /// A bundle of the tables chosen, under the bundle's manifest (its table list cut to them).
    Bundle,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 5] = [
        ExportFormat::Parquet,
        ExportFormat::Csv,
        ExportFormat::ChromeTrace,
        ExportFormat::Extrap,
        ExportFormat::Bundle,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "parquet",
            ExportFormat::Csv => "csv",
            ExportFormat::ChromeTrace => "chrome-trace",
            ExportFormat::Extrap => "extrap",
            ExportFormat::Bundle => "bundle",
        }
    }

    /// The names `--format` takes, in [`ExportFormat::ALL`]'s order.
    pub fn names() -> [&'static str; 5] {
        Self::ALL.map(Self::name)
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("expected one of {}", Self::names().join(", ")))
    }
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq)]
pub enum Exported {
    /// `count` tables as `extension` files into the directory `dir`.
    Tables {
        extension: &'static str,
        count: usize,
        dir: PathBuf,
    },
    /// A Chrome trace of the `tables` named.
    ChromeTrace {
        file: PathBuf,
        tables: Vec<String>,
        summary: chrome::ExportSummary,
    },
    /// Extra-P experiments, each file with its call paths, and the call paths left out.
    Extrap {
        files: Vec<(PathBuf, Vec<String>)>,
        left_out: Vec<String>,
    },
    /// A bundle of the `tables` named into `dir`; `traces` trace pyramids not kept.
    Bundle {
        dir: PathBuf,
        tables: Vec<String>,
        traces: usize,
    },
}

/// Exports the tables of `bundle` named in `tables` (else every one the format takes) to
/// `output`: a directory of one file per table (Parquet, CSV) or files (Chrome trace, Extra-P).
pub fn export(
    bundle: &Path,
    format: ExportFormat,
    tables: &[String],
    output: &Path,
) -> Result<Exported> {
    match format {
        ExportFormat::ChromeTrace => chrome_trace(bundle, tables, output),
        ExportFormat::Bundle => {
            let read = yosoku_bundle::fs::read_bundle(bundle)?;
            let kept: Vec<String> = chosen(&read, tables, |_| true)
                .with_context(|| bundle.display().to_string())?
                .iter()
                .map(|(n, _)| n.clone())
                .collect();
            if output.canonicalize().ok() == bundle.canonicalize().ok() {
                bail!(
                    "{} is the bundle read; name another directory",
                    output.display()
                );
            }
            let written = yosoku_bundle::fs::write_kept(output, &read, &kept)
                .with_context(|| format!("writing {}", output.display()))?;
            Ok(Exported::Bundle {
                dir: output.to_owned(),
                tables: written.tables.iter().map(|t| t.name.clone()).collect(),
                traces: read.manifest.traces.len(),
            })
        }
        ExportFormat::Extrap => {
            let read = yosoku_bundle::fs::read_bundle(bundle)?;
            if output.is_dir() {
                bail!("{} is a directory; name a file", output.display());
            }
            let runs = chosen(&read, tables, |n| n.rsplit('.').next() == Some("runs"))
                .with_context(|| format!("{}: no Extra-P input", bundle.display()))?;
            if runs.is_empty() {
                bail!(
                    "{}: no Extra-P input: no `runs` table: Extra-P models measured runs over their parameters",
                    bundle.display()
                );
            }
            let runs: Vec<(&str, &RecordBatch)> =
                runs.iter().map(|(n, b)| (n.as_str(), b)).collect();
            let export = yosoku_models::scaling::extrap::experiments(&runs)
                .with_context(|| format!("{}: no Extra-P input", bundle.display()))?;
            let files = write_experiments(output, &export.experiments)?;
            Ok(Exported::Extrap {
                files,
                left_out: export.left_out,
            })
        }
        ExportFormat::Parquet | ExportFormat::Csv => {
            let read = yosoku_bundle::fs::read_bundle(bundle)?;
            let chosen =
                chosen(&read, tables, |_| true).with_context(|| bundle.display().to_string())?;
            let extension = if format == ExportFormat::Parquet {
                "parquet"
            } else {
                "csv"
            };
            write_dir_atomically(output, |dir| {
                for (name, batch) in &chosen {
                    let path = dir.join(format!("{name}.{extension}"));
                    let file = std::fs::File::create(&path)
                        .with_context(|| format!("cannot create {}", path.display()))?;
                    if format == ExportFormat::Parquet {
                        write_parquet(file, batch)
                    } else {
                        write_csv(file, batch)
                    }
                    .with_context(|| format!("writing {}", path.display()))?;
                }
                Ok(())
            })?;
            Ok(Exported::Tables {
                extension,
                count: chosen.len(),
                dir: output.to_owned(),
            })
        }
    }
}

/// The tables of `bundle` named in `names` (each must be there), else those `default` takes.
fn chosen<'a>(
    bundle: &'a Bundle,
    names: &[String],
    default: impl Fn(&str) -> bool,
) -> Result<Vec<&'a (String, RecordBatch)>> {
    for t in names {
        if bundle.table(t).is_none() {
            let have: Vec<&str> = bundle.tables.iter().map(|(n, _)| n.as_str()).collect();
            bail!("no table `{t}`; the bundle has: {}", have.join(", "));
        }
    }
    Ok(bundle
        .tables
        .iter()
        .filter(|(n, _)| {
            if names.is_empty() {
                default(n)
            } else {
                names.contains(n)
            }
        })
        .collect())
}

fn write_parquet(file: std::fs::File, batch: &RecordBatch) -> Result<()> {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))?;
    writer.write(batch)?;
    writer.close()?;
    Ok(())
}

/// CSV with a header; numbers as the shortest text that reads back as the same value, nulls as
/// empty cells.
fn write_csv(file: std::fs::File, batch: &RecordBatch) -> Result<()> {
    let mut out = csv::Writer::from_writer(std::io::BufWriter::new(file));
    let schema = batch.schema();
    out.write_record(schema.fields().iter().map(|f| f.name().as_str()))?;
    let mut row = Vec::with_capacity(batch.num_columns());
    for r in 0..batch.num_rows() {
        row.clear();
        for c in batch.columns() {
            row.push(yosoku_tables::display::cell(c.as_ref(), r, ""));
        }
        out.write_record(&row)?;
    }
    out.flush()?;
    Ok(())
}

/// Where experiment `k` (from 1) of `count` goes: `output` itself for one, else
/// `<stem>-<k>.<extension>` beside it.
fn numbered(output: &Path, k: usize, count: usize) -> PathBuf {
    if count == 1 {
        return output.to_owned();
    }
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "extrap".to_owned());
    let ext = output
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    output.with_file_name(format!("{stem}-{k}{ext}"))
}

/// Writes the experiments, all or none, and returns each file with its call paths.
fn write_experiments(
    output: &Path,
    experiments: &[ExtrapExperiment],
) -> Result<Vec<(PathBuf, Vec<String>)>> {
    let n = experiments.len();
    let files: Vec<(PathBuf, &[u8])> = experiments
        .iter()
        .enumerate()
        .map(|(i, e)| (numbered(output, i + 1, n), e.json.as_bytes()))
        .collect();
    write_files_atomically(&files)?;
    Ok(files
        .into_iter()
        .zip(experiments)
        .map(|((path, _), e)| (path, e.callpaths.clone()))
        .collect())
}

/// The directory a file goes into, made if it is missing.
fn parent_made(output: &Path) -> Result<PathBuf> {
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    Ok(dir)
}

/// A new temporary file beside `output`, filled by `write`, synced: renamed into place by
/// [`persist`].
fn temp_filled(
    output: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<()>,
) -> Result<tempfile::NamedTempFile> {
    let dir = parent_made(output)?;
    let tmp = tempfile::NamedTempFile::new_in(&dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let mut w = std::io::BufWriter::new(
        tmp.reopen()
            .with_context(|| format!("cannot write in {}", dir.display()))?,
    );
    write(&mut w)?;
    w.flush()
        .and_then(|()| w.get_ref().sync_all())
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok(tmp)
}

/// Puts a finished temporary file at `output`, as an ordinary file (a temporary one is 0600).
fn persist(tmp: tempfile::NamedTempFile, output: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(output)
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok(())
}

/// Writes every file, all or none: each to a temporary file beside it first (a failure removes
/// them all), then each renamed into place.
fn write_files_atomically(files: &[(PathBuf, &[u8])]) -> Result<()> {
    let mut written = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        written.push(temp_filled(path, |w| Ok(w.write_all(bytes)?))?);
    }
    for (tmp, (path, _)) in written.into_iter().zip(files) {
        persist(tmp, path)?;
    }
    Ok(())
}

/// Fills a new directory with `fill` and puts it at `path`, replacing an earlier export there
/// (never a directory `yosoku export` did not write).
fn write_dir_atomically(path: &Path, fill: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if path.exists() && !path.join(MARKER).is_file() {
        let empty = path.is_dir()
            && std::fs::read_dir(path)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
        if !empty {
            bail!(
                "refusing to replace {}: it exists and is not a `yosoku export` directory",
                path.display()
            );
        }
    }
    let parent = parent_made(path)?;
    let tmp = tempfile::Builder::new()
        .prefix(".yosoku-export-")
        .tempdir_in(&parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    fill(tmp.path())?;
    std::fs::write(tmp.path().join(MARKER), "written by `yosoku export`\n")
        .with_context(|| format!("cannot write {}", tmp.path().join(MARKER).display()))?;
    let tmp = tmp.keep();
    let moved = if path.exists() {
        let old = tempfile::Builder::new()
            .prefix(".yosoku-export-old-")
            .tempdir_in(&parent)
            .with_context(|| format!("cannot write in {}", parent.display()))?
            .keep();
        std::fs::rename(path, old.join("export"))
            .with_context(|| format!("cannot move {} aside", path.display()))
            .and_then(|()| {
                std::fs::rename(&tmp, path).with_context(|| {
                    format!("cannot rename {} to {}", tmp.display(), path.display())
                })
            })
            .map(|()| {
                let _ = std::fs::remove_dir_all(&old);
            })
    } else {
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
    };
    if moved.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    moved
}

/// Writes the `spans` tables of a bundle (all of them, or those named) as one Chrome trace.
pub fn chrome_trace(bundle: &Path, tables: &[String], output: &Path) -> Result<Exported> {
    let read = yosoku_bundle::fs::read_bundle(bundle)?;
    let spans = chosen(&read, tables, |n| n.ends_with(".spans")).with_context(|| {
        let names: Vec<&str> = read
            .tables
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| n.ends_with(".spans"))
            .collect();
        format!(
            "{}: its spans tables: {}",
            bundle.display(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )
    })?;
    if spans.is_empty() {
        bail!(
            "{} has no spans table (`<step>.spans`): a pipeline makes one with a `spans` step or the `traces` plugin",
            bundle.display()
        );
    }
    let batches: Vec<&RecordBatch> = spans.iter().map(|(_, b)| b).collect();
    let mut summary = None;
    let tmp = temp_filled(output, |w| {
        summary = Some(chrome::export(&batches, w)?);
        Ok(())
    })?;
    persist(tmp, output)?;
    Ok(Exported::ChromeTrace {
        file: output.to_owned(),
        tables: spans.iter().map(|(n, _)| n.clone()).collect(),
        summary: summary.unwrap_or_default(),
    })
}

/// Checks a Chrome trace JSON file against the format's rules: its counts, or every problem.
pub fn check_trace(path: &Path) -> Result<chrome::CheckSummary> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    chrome::check(&bytes).map_err(|problems| {
        let shown: Vec<&str> = problems.iter().take(20).map(String::as_str).collect();
        let more = problems.len().saturating_sub(shown.len());
        anyhow::anyhow!(
            "{}: {} problems:\n  {}{}",
            path.display(),
            problems.len(),
            shown.join("\n  "),
            if more > 0 {
                format!("\n  ... and {more} more")
            } else {
                String::new()
            }
        )
    })
}
