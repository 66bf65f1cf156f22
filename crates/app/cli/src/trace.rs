//! `yosoku trace`: spans tables out of bundles as Chrome trace JSON, and the format check.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
use yosoku_traces::chrome;
use yosoku_traces::kernel_trace::LaneBy;

/// Writes the `spans` tables of a bundle (all of them, or those named) as one Chrome trace.
pub fn export(bundle: &Path, tables: &[String], output: &Path) -> Result<String> {
    let read = yosoku_bundle::fs::read_bundle(bundle)?;
    let spans: Vec<&(String, RecordBatch)> = read
        .tables
        .iter()
        .filter(|(name, _)| {
            if tables.is_empty() {
                name.ends_with(".spans")
            } else {
                tables.contains(name)
            }
        })
        .collect();
    for t in tables {
        if !spans.iter().any(|(name, _)| name == t) {
            let names: Vec<&str> = read
                .tables
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| n.ends_with(".spans"))
                .collect();
            bail!(
                "{} has no spans table `{t}`; its spans tables: {}",
                bundle.display(),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    if spans.is_empty() {
        bail!(
            "{} has no spans table (`<step>.spans`): a pipeline makes one with a `spans` step or the `traces` plugin",
            bundle.display()
        );
    }
    let batches: Vec<&RecordBatch> = spans.iter().map(|(_, b)| b).collect();
    let summary = write_atomically(output, |w| {
        chrome::export(&batches, w).map_err(anyhow::Error::from)
    })?;
    let names: Vec<&str> = spans.iter().map(|(n, _)| n.as_str()).collect();
    Ok(format!(
        "wrote {} events of {} ({} processes, {} lanes) to {}\nopen it in https://ui.perfetto.dev (\"Open trace file\") or chrome://tracing (\"Load\")",
        summary.events,
        names.join(", "),
        summary.processes,
        summary.threads,
        output.display()
    ))
}

/// Checks a Chrome trace JSON file against the format's rules.
pub fn check(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    match chrome::check(&bytes) {
        Ok(s) => Ok(format!(
            "{}: a valid trace: {} events ({} complete, {} instants, {} counter samples, {} flow ends, {} metadata) on {} threads",
            path.display(),
            s.events,
            s.complete,
            s.instants,
            s.counters,
            s.flows,
            s.metadata,
            s.threads
        )),
        Err(problems) => {
            let shown: Vec<&String> = problems.iter().take(20).collect();
            let more = problems.len().saturating_sub(shown.len());
            bail!(
                "{}: {} problems:\n  {}{}",
                path.display(),
                problems.len(),
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n  "),
                if more > 0 {
                    format!("\n  ... and {more} more")
                } else {
                    String::new()
                }
            )
        }
    }
}

/// Writes `output` through a temporary file beside it, renamed into place when complete: a
/// failed export leaves an earlier file as it was.
fn write_atomically<T>(
    output: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<T>,
) -> Result<T> {
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = tempfile::NamedTempFile::new_in(&dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    let mut w = std::io::BufWriter::new(
        tmp.reopen()
            .with_context(|| format!("cannot write in {}", dir.display()))?,
    );
    let value = write(&mut w)?;
    w.flush()
        .with_context(|| format!("cannot write {}", output.display()))?;
    // A temporary file is private (0600); the export is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(output)
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok(value)
}

/// `yosoku trace import`: see `yosoku_runner::trace_import`.
pub fn import(input: &Path, output: &Path, lanes: LaneBy) -> Result<String> {
    let r = yosoku_runner::trace_import::import_kernel_trace(input, output, lanes)?;
    Ok(format!(
        "{}: {} {} records ({:.2} GB) -> {} spans on {} lanes, {} pyramid levels, {} chunks, {} backwards steps\n\
         wrote {} in {:.1} s (alignment pass {:.1} s = {:.2} GB/s with SHA-256, pyramid pass {:.1} s, chunk pass {:.1} s)",
        input.display(),
        r.records,
        r.provenance,
        r.file_bytes as f64 / 1e9,
        r.spans,
        r.lanes,
        r.levels,
        r.chunks,
        r.backwards,
        output.display(),
        r.total_secs,
        r.alignment_pass_secs,
        r.file_bytes as f64 / 1e9 / r.alignment_pass_secs.max(1e-9),
        r.pyramid_pass_secs,
        r.chunk_pass_secs,
    ))
}
