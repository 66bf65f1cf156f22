//! `yosoku metrics`, printed: the canonical metric names the importers map to, and the names a
//! bundle's imports left unmapped (the runner's `metrics` finds both).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use yosoku_runner::metrics::{self, Filter, TOOLS, USER_METRICS_VAR};

/// The listing: one block per canonical metric (name, kind, where defined, what it is, the
/// names each tool writes for it), then the naming rules.
pub fn list(filter: &Filter) -> Result<String> {
    let listing = metrics::list(filter)?;
    let mut out = String::new();
    for m in &listing.metrics {
        let _ = writeln!(out, "{}  ({}; {})", m.name, m.kind, m.source);
        if !m.doc.is_empty() {
            let _ = writeln!(out, "    {}", m.doc);
        }
        for tool in TOOLS {
            if filter.tool.as_deref().is_some_and(|t| t != *tool) {
                continue;
            }
            let names: Vec<&str> = m
                .aliases
                .iter()
                .filter(|(t, _)| t == tool)
                .map(|(_, n)| n.as_str())
                .collect();
            if !names.is_empty() {
                let _ = writeln!(out, "    {tool:<15} {}", names.join(", "));
            }
        }
    }
    if !listing.rules.is_empty() {
        let _ = writeln!(
            out,
            "\nnaming rules (a name no alias lists gets the first matching rule's kind and keeps its name):"
        );
        for r in &listing.rules {
            let _ = writeln!(
                out,
                "    {:<8} {:<40} {:<7} {}",
                r.tool,
                r.pattern,
                r.kind.unwrap_or("none"),
                r.doc
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{} canonical metrics shown of {}; add or override names with a TOML file of the same \
         format named by {} (docs: plugins/cuda_profiler/README.md, \"Metric names\")",
        listing.metrics.len(),
        listing.total,
        USER_METRICS_VAR
    );
    Ok(out)
}

/// The raw names of a bundle's imports that no alias maps, per table: tool, raw name, the kind a
/// naming rule gave it (or `-`), and how many values it had.
pub fn unmapped(bundle: &Path) -> Result<String> {
    let found = metrics::unmapped(bundle)?;
    let mut out = String::new();
    let (mut unmapped, mut kindless) = (0usize, 0usize);
    for t in &found.tables {
        let _ = writeln!(
            out,
            "{}: {} of {} names unmapped",
            t.table,
            t.unmapped.len(),
            t.names
        );
        for n in &t.unmapped {
            unmapped += 1;
            if n.kind.is_none() {
                kindless += 1;
            }
            let _ = writeln!(
                out,
                "    {:<10} {:<60} {:<7} {}",
                n.tool,
                n.raw_name,
                n.kind.as_deref().unwrap_or("-"),
                n.occurrences
            );
        }
    }
    let _ = writeln!(
        out,
        "{unmapped} of {} names have no canonical name ({kindless} no kind either: a fit that \
         chooses features by kind leaves those out); map them in a file named by {}",
        found.total_names, USER_METRICS_VAR
    );
    Ok(out)
}
