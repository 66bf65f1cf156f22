//! `yosoku trace`: spans tables out of bundles as Chrome trace JSON, and the format check.

use std::path::Path;

use anyhow::Result;
use yosoku_runner::trace_import::LaneBy;

/// Writes the `spans` tables of a bundle (all of them, or those named) as one Chrome trace.
pub fn export(bundle: &Path, tables: &[String], output: &Path) -> Result<String> {
    let exported = yosoku_runner::export::chrome_trace(bundle, tables, output)?;
    Ok(crate::export::said(&exported))
}

/// Checks a Chrome trace JSON file against the format's rules.
pub fn check(path: &Path) -> Result<String> {
    let s = yosoku_runner::export::check_trace(path)?;
    Ok(format!(
        "{}: a valid trace: {} events ({} complete, {} instants, {} counter samples, {} flow ends, {} metadata) on {} threads",
        path.display(),
        s.events,
        s.complete,
        s.instants,
        s.counters,
        s.flows,
        s.metadata,
        s.threads
    ))
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
