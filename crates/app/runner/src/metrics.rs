//! `yosoku metrics`: the canonical metric names the importers map to (the built-in
//! `metrics.toml` and the user's files of `YOSOKU_METRICS`), and the names a bundle's imports
//! left unmapped. Both return what they found as plain values; the CLI prints them.

use std::path::Path;

use anyhow::{Context, Result, bail};
use arrow_array::cast::AsArray;
use yosoku_profiler_import::metrics;
pub use yosoku_profiler_import::metrics::{MetricInfo, Rule, TOOLS, USER_METRICS_VAR};
use yosoku_tables::col;
use yosoku_tables::text::Text;

/// What to list.
#[derive(Debug, Default, Clone)]
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
        bail!("{e}");
    }
    Ok(metrics::mapping())
}

fn check_filter(filter: &Filter) -> Result<()> {
    if let Some(tool) = &filter.tool
        && !TOOLS.contains(&tool.as_str())
    {
        bail!("--tool {tool}: expected one of {}", TOOLS.join(", "));
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

/// The canonical metrics and naming rules a filter selects.
#[derive(Debug, Clone)]
pub struct Listing {
    pub metrics: Vec<MetricInfo>,
    /// The naming rules of the tool and kind asked (none when a name is asked).
    pub rules: Vec<Rule>,
    /// How many canonical metrics the mapping has in all.
    pub total: usize,
}

/// The metrics (and naming rules) `filter` selects.
pub fn list(filter: &Filter) -> Result<Listing> {
    check_filter(filter)?;
    let mapping = mapping()?;
    let rules = if filter.name.is_some() {
        Vec::new()
    } else {
        mapping
            .rules()
            .iter()
            .filter(|r| filter.tool.as_deref().is_none_or(|t| t == r.tool))
            .filter(|r| filter.kind.is_none() || filter.kind.as_deref() == r.kind)
            .cloned()
            .collect()
    };
    Ok(Listing {
        metrics: mapping
            .metrics()
            .iter()
            .filter(|m| wanted(m, filter))
            .cloned()
            .collect(),
        rules,
        total: mapping.metrics().len(),
    })
}

/// A raw name no alias maps: the tool that wrote it, the name, the kind a naming rule gave it
/// (none), and how many values it had.
#[derive(Debug, Clone, PartialEq)]
pub struct UnmappedName {
    pub tool: String,
    pub raw_name: String,
    pub kind: Option<String>,
    pub occurrences: i64,
}

/// One `metric_names` table's unmapped names.
#[derive(Debug, Clone, PartialEq)]
pub struct UnmappedTable {
    pub table: String,
    /// Names in the table, mapped or not.
    pub names: usize,
    pub unmapped: Vec<UnmappedName>,
}

/// The raw names a bundle's imports left unmapped, per `metric_names` table that has any, and
/// how many names its tables hold in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmapped {
    pub tables: Vec<UnmappedTable>,
    pub total_names: usize,
}

/// The raw names of the bundle's imports (its `metric_names` tables) that no alias maps.
pub fn unmapped(bundle: &Path) -> Result<Unmapped> {
    let manifest = yosoku_bundle::fs::read_manifest(bundle)
        .with_context(|| format!("cannot read the bundle {}", bundle.display()))?;
    let mut out = Unmapped {
        tables: Vec::new(),
        total_names: 0,
    };
    let mut tables = 0;
    for t in manifest
        .tables
        .iter()
        .filter(|t| t.kind.as_deref() == Some(yosoku_tables::METRIC_NAMES.name))
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
        out.total_names += batch.num_rows();
        let unmapped: Vec<UnmappedName> = (0..batch.num_rows())
            .filter(|&i| !mapped.value(i))
            .map(|i| UnmappedName {
                tool: tool.value(i).to_owned(),
                raw_name: raw.value(i).to_owned(),
                kind: (!kind.is_null(i)).then(|| kind.value(i).to_owned()),
                occurrences: occurrences.map_or(0, |o| o.value(i)),
            })
            .collect();
        if !unmapped.is_empty() {
            out.tables.push(UnmappedTable {
                table: t.name.clone(),
                names: batch.num_rows(),
                unmapped,
            });
        }
    }
    if tables == 0 {
        bail!(
            "{}: no imported table has a `metric_names` table (the profiler importers write one)",
            bundle.display()
        );
    }
    Ok(out)
}
