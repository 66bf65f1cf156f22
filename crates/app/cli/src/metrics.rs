//! `yosoku metrics`: the canonical metric names the importers map to (the built-in
//! `metrics.toml` and the user's files of `YOSOKU_METRICS`), and the names a bundle's imports
//! left unmapped.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use arrow_array::cast::AsArray;
use yosoku_profiler_import::metrics::{self, MetricInfo};
use yosoku_tables::col;
use yosoku_tables::text::Text;

/// What to list.
#[derive(Debug, Default)]
pub struct Filter {
    /// Only metrics with an alias of this tool.
    pub tool: Option<String>,
    /// Only metrics of this kind.
    pub kind: Option<String>,
    /// Only metrics whose canonical name or an alias contains this text.
    pub name: Option<String>,
}

fn mapping() -> Result<&'static metrics::Mapping> {
    if let Some(e) = metrics::user_file_error() {
        bail!("the user's metric mapping {e}");
    }
    Ok(metrics::mapping())
}

fn check_filter(filter: &Filter) -> Result<()> {
    if let Some(tool) = &filter.tool
        && !metrics::TOOLS.contains(&tool.as_str())
    {
        bail!(
            "--tool {tool}: expected one of {}",
            metrics::TOOLS.join(", ")
        );
    }
    if let Some(kind) = &filter.kind
        && !yosoku_tables::METRIC_KINDS.contains(&kind.as_str())
    {
        bail!(
            "--kind {kind}: expected one of {}",
            yosoku_tables::METRIC_KINDS.join(", ")
        );
    }
    Ok(())
}

fn wanted(m: &MetricInfo, filter: &Filter) -> bool {
    filter.kind.as_deref().is_none_or(|k| k == m.kind)
        && filter
            .tool
            .as_deref()
            .is_none_or(|t| m.aliases.iter().any(|(tool, _)| tool == t))
        && filter.name.as_deref().is_none_or(|n| {
            m.name.contains(n) || m.aliases.iter().any(|(_, alias)| alias.contains(n))
        })
}

/// The listing: one block per canonical metric (name, kind, where defined, what it is, the
/// names each tool writes for it), then the naming rules.
pub fn list(filter: &Filter) -> Result<String> {
    check_filter(filter)?;
    let mapping = mapping()?;
    let mut out = String::new();
    let shown: Vec<&MetricInfo> = mapping
        .metrics()
        .iter()
        .filter(|m| wanted(m, filter))
        .collect();
    for m in &shown {
        let _ = writeln!(out, "{}  ({}; {})", m.name, m.kind, m.source);
        if !m.doc.is_empty() {
            let _ = writeln!(out, "    {}", m.doc);
        }
        for tool in metrics::TOOLS {
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
    let rules: Vec<_> = mapping
        .rules()
        .iter()
        .filter(|r| filter.tool.as_deref().is_none_or(|t| t == r.tool))
        .filter(|r| filter.kind.is_none() || filter.kind.as_deref() == r.kind)
        .collect();
    if filter.name.is_none() && !rules.is_empty() {
        let _ = writeln!(
            out,
            "\nnaming rules (a name no alias lists gets the first matching rule's kind and keeps its name):"
        );
        for r in rules {
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
        shown.len(),
        mapping.metrics().len(),
        metrics::USER_METRICS_VAR
    );
    Ok(out)
}

/// The raw names of a bundle's imports that no alias maps, per table: tool, raw name, the kind a
/// naming rule gave it (or `-`), and how many values it had.
pub fn unmapped(bundle: &Path) -> Result<String> {
    let manifest = yosoku_bundle::fs::read_manifest(bundle)
        .with_context(|| format!("cannot read the bundle {}", bundle.display()))?;
    let mut out = String::new();
    let mut tables = 0;
    let (mut total, mut unmapped, mut kindless) = (0usize, 0usize, 0usize);
    for t in manifest
        .tables
        .iter()
        .filter(|t| t.name.ends_with(".metric_names"))
    {
        tables += 1;
        let batch = yosoku_bundle::fs::read_table_file(&bundle.join(&t.file))?;
        let text = |c: &str| -> Result<Text<'_>> {
            let column = batch
                .column_by_name(c)
                .with_context(|| format!("{}: no column `{c}`", t.name))?;
            Text::new(column.as_ref()).with_context(|| format!("{}: `{c}` is not text", t.name))
        };
        let (tool, raw, kind) = (text(col::TOOL)?, text(col::RAW_NAME)?, text(col::KIND)?);
        let mapped = batch
            .column_by_name(col::MAPPED)
            .with_context(|| format!("{}: no column `{}`", t.name, col::MAPPED))?
            .as_boolean_opt()
            .with_context(|| format!("{}: `{}` is not boolean", t.name, col::MAPPED))?;
        let occurrences = batch
            .column_by_name(col::OCCURRENCES)
            .and_then(|c| c.as_primitive_opt::<arrow_array::types::Int64Type>());
        total += batch.num_rows();
        let rows: Vec<usize> = (0..batch.num_rows())
            .filter(|&i| !mapped.value(i))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "{}: {} of {} names unmapped",
            t.name,
            rows.len(),
            batch.num_rows()
        );
        for i in rows {
            unmapped += 1;
            let k = if kind.is_null(i) {
                kindless += 1;
                "-"
            } else {
                kind.value(i)
            };
            let n = occurrences.map_or(0, |o| o.value(i));
            let _ = writeln!(
                out,
                "    {:<10} {:<60} {:<7} {n}",
                tool.value(i),
                raw.value(i),
                k
            );
        }
    }
    if tables == 0 {
        bail!(
            "{}: no imported table has a `metric_names` table (the profiler importers write one)",
            bundle.display()
        );
    }
    let _ = writeln!(
        out,
        "{unmapped} of {total} names have no canonical name ({kindless} no kind either: a fit that \
         chooses features by kind leaves those out); map them in a file named by {}",
        metrics::USER_METRICS_VAR
    );
    Ok(out)
}
