//! The canonical metric mapping (`metrics.toml`): which name each tool writes for a quantity,
//! the quantity's canonical name and kind.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use yosoku_plugin_sdk::{Config, ConfigKey, ConfigType, PluginError};

use serde::Deserialize;
use toml::Spanned;

/// The mapping file, compiled in.
pub const METRICS_TOML: &str = include_str!("../metrics.toml");

/// The variable naming a user's own mapping files (`:`-separated), read once per process: the
/// same format as `metrics.toml`; their names and rules come before the built-in ones.
pub const USER_METRICS_VAR: &str = "YOSOKU_METRICS";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    metric: Vec<MetricDef>,
    #[serde(default)]
    rule: Vec<RuleDef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricDef {
    name: String,
    kind: Spanned<String>,
    #[serde(default)]
    doc: String,
    aliases: Vec<AliasDef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AliasDef {
    tool: Spanned<String>,
    name: Spanned<String>,
    unit: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleDef {
    tool: Spanned<String>,
    pattern: String,
    kind: Spanned<String>,
    #[serde(default)]
    doc: String,
}

/// What a tool's raw name maps to.
#[derive(Debug, Clone, PartialEq)]
pub struct Canonical {
    pub name: String,
    pub kind: &'static str,
    /// The unit the tool's values are in when the file does not say (the R export).
    pub unit: Option<String>,
}

/// One canonical metric as the mapping lists it (`yosoku metrics`).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricInfo {
    pub name: String,
    pub kind: &'static str,
    pub doc: String,
    /// `(tool, name the tool writes)`.
    pub aliases: Vec<(String, String)>,
    /// The file that defined it (`metrics.toml` for the built-in ones).
    pub source: String,
}

/// A naming rule: a raw name no alias lists, matched by `pattern` (`*` matches any text), gets
/// `kind` and keeps its own name.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub tool: String,
    pub pattern: String,
    /// `None`: not a quantity of the kernel (`kind = "none"` in the file).
    pub kind: Option<&'static str>,
    pub doc: String,
    pub source: String,
}

impl Rule {
    fn matches(&self, raw: &str) -> bool {
        if CASE_INSENSITIVE.contains(&self.tool.as_str()) {
            glob_matches(
                &self.pattern.to_ascii_lowercase(),
                &raw.to_ascii_lowercase(),
            )
        } else {
            glob_matches(&self.pattern, raw)
        }
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Tool names the mapping uses.
pub const TOOLS: &[&str] = &[
    "ncu",
    "nvprof",
    "legacy",
    "gpuperfpredict",
    "rocprof",
    "computed",
    "neusight",
    "nsys",
];

/// Tools whose names are matched without regard to case (AMD's tools write `VGPR_Count`,
/// `vgpr` and `Arch_VGPR` for the same thing, differently by version).
const CASE_INSENSITIVE: &[&str] = &["rocprof"];

fn key(tool: &str, raw: &str) -> (String, String) {
    let raw = if tool == "gpuperfpredict" {
        // The dataset's R exports spell one nvprof metric `l2_throughput_.reads.` (Rodinia
        // files) and `L2.Throughput..Reads.` (Apps-Gpus files): R's dots and the case differ.
        raw.to_ascii_lowercase().replace('.', "_")
    } else if CASE_INSENSITIVE.contains(&tool) {
        raw.to_ascii_lowercase()
    } else {
        raw.to_owned()
    };
    (tool.to_owned(), raw)
}

#[derive(Debug, Default, Clone)]
pub struct Mapping {
    by_alias: HashMap<(String, String), Canonical>,
    rules: Vec<Rule>,
    metrics: Vec<MetricInfo>,
}

fn kind_of(kind: &str, what: &str) -> Result<&'static str, String> {
    yosoku_tables::METRIC_KINDS
        .iter()
        .find(|k| **k == kind)
        .copied()
        .ok_or_else(|| {
            format!(
                "{what}: unknown kind `{kind}`; expected one of {}",
                yosoku_tables::METRIC_KINDS.join(", ")
            )
        })
}

fn known_tool(tool: &str, what: &str) -> Result<(), String> {
    if TOOLS.contains(&tool) {
        Ok(())
    } else {
        Err(format!(
            "{what}: unknown tool `{tool}`; expected one of {}",
            TOOLS.join(", ")
        ))
    }
}

impl Mapping {
    fn parse(text: &str) -> Result<Self, String> {
        let mut mapping = Self::default();
        mapping.add(text, "metrics.toml")?;
        Ok(mapping)
    }

    /// Adds the names and rules of one file; an alias already defined by an earlier file is
    /// taken over (a user's file refines the built-in mapping), one defined twice in this file
    /// to different metrics is an error. Errors start with `source:line:column:` of the value
    /// that is wrong.
    fn add(&mut self, text: &str, source: &str) -> Result<(), String> {
        let at = |value: std::ops::Range<usize>, message: String| {
            PluginError::at_offset(Path::new(source), text, value.start, message).to_string()
        };
        let file: File = toml::from_str(text)
            .map_err(|e| at(e.span().unwrap_or(0..0), e.message().trim().to_owned()))?;
        let mut seen: HashMap<(String, String), String> = HashMap::new();
        for m in file.metric {
            let what = format!("metric `{}`", m.name);
            let kind = kind_of(m.kind.get_ref(), &what).map_err(|e| at(m.kind.span(), e))?;
            let mut aliases = Vec::new();
            for a in m.aliases {
                known_tool(a.tool.get_ref(), &what).map_err(|e| at(a.tool.span(), e))?;
                let (tool, name) = (a.tool.into_inner(), a.name);
                let k = key(&tool, name.get_ref());
                if let Some(other) = seen.insert(k.clone(), m.name.clone())
                    && other != m.name
                {
                    return Err(at(
                        name.span(),
                        format!(
                            "{tool} name `{}` maps to both `{other}` and `{}`",
                            name.get_ref(),
                            m.name
                        ),
                    ));
                }
                aliases.push((tool, name.into_inner()));
                let canonical = Canonical {
                    name: m.name.clone(),
                    kind,
                    unit: a.unit,
                };
                self.by_alias.insert(k, canonical);
            }
            self.metrics.push(MetricInfo {
                name: m.name,
                kind,
                doc: m.doc,
                aliases,
                source: source.to_owned(),
            });
        }
        let mut rules = Vec::new();
        for r in file.rule {
            let what = format!("rule `{}`", r.pattern);
            known_tool(r.tool.get_ref(), &what).map_err(|e| at(r.tool.span(), e))?;
            rules.push(Rule {
                kind: match r.kind.get_ref().as_str() {
                    "none" => None,
                    kind => Some(kind_of(kind, &what).map_err(|e| at(r.kind.span(), e))?),
                },
                tool: r.tool.into_inner(),
                pattern: r.pattern,
                doc: r.doc,
                source: source.to_owned(),
            });
        }
        // A later file's rules are tried first.
        rules.append(&mut self.rules);
        self.rules = rules;
        Ok(())
    }

    /// This mapping with one more file over it, as [`USER_METRICS_VAR`] and a collector's
    /// [`CONFIG_KEY`] add them: its names take over, its rules are tried first. An error starts
    /// with `source:line:column:`.
    pub fn with_file(&self, text: &str, source: &str) -> Result<Mapping, String> {
        let mut mapping = self.clone();
        mapping.add(text, source)?;
        Ok(mapping)
    }

    /// The canonical metric of `raw` as `tool` writes it.
    pub fn lookup(&self, tool: &str, raw: &str) -> Option<&Canonical> {
        self.by_alias.get(&key(tool, raw))
    }

    /// The canonical metric of `raw`: its alias, or, for an Nsight Compute name
    /// `<counter>.<roll-up>` whose `<counter>.sum` has one, that metric's `<name>_<roll-up>`
    /// (`dram__bytes_read.avg` -> `dram_read_bytes_avg`; `lts__d_sectors.avg.pct_of_peak_sustained_elapsed`
    /// -> `l2_d_sectors_avg_pct_of_peak_sustained_elapsed`) with the kind the rules give the
    /// roll-up (a percentage of a count is a ratio), else the counter's.
    pub fn resolve(&self, tool: &str, raw: &str) -> Option<Canonical> {
        if let Some(c) = self.lookup(tool, raw) {
            return Some(c.clone());
        }
        if tool != "ncu" {
            return None;
        }
        let (counter, rollup) = raw.split_once('.')?;
        if rollup == "sum" || !counter.contains("__") {
            return None;
        }
        let base = self.lookup(tool, &format!("{counter}.sum"))?;
        Some(Canonical {
            name: format!("{}_{}", base.name, rollup.replace('.', "_")),
            kind: self.rule_kind(tool, raw).unwrap_or(base.kind),
            unit: None,
        })
    }

    /// The kind a naming rule gives `raw`, for a name no alias lists.
    pub fn rule_kind(&self, tool: &str, raw: &str) -> Option<&'static str> {
        self.rules
            .iter()
            .find(|r| r.tool == tool && r.matches(raw))
            .and_then(|r| r.kind)
    }

    /// Every canonical metric, in file order (the user's files after the built-in one).
    pub fn metrics(&self) -> &[MetricInfo] {
        &self.metrics
    }

    /// The naming rules, in the order they are tried.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }
}

/// The built-in mapping and the user's files of [`USER_METRICS_VAR`], or what is wrong with
/// one of them (path: message).
fn load() -> (Mapping, Option<String>) {
    // The file is checked by a test, so a parse error here is a bug in this crate; it degrades
    // to an empty mapping (every name unmapped) rather than a panic.
    let mut mapping = Mapping::parse(METRICS_TOML).unwrap_or_default();
    let Some(paths) = std::env::var_os(USER_METRICS_VAR) else {
        return (mapping, None);
    };
    for path in std::env::split_paths(&paths).filter(|p| !p.as_os_str().is_empty()) {
        let shown = path.display().to_string();
        let result = std::fs::read_to_string(&path)
            .map_err(|e| format!("{shown}: cannot read it: {e}"))
            .and_then(|text| mapping.add(&text, &shown));
        if let Err(e) = result {
            return (
                mapping,
                Some(format!(
                    "{e} (a metric mapping named by {USER_METRICS_VAR})"
                )),
            );
        }
    }
    (mapping, None)
}

fn loaded() -> &'static (Mapping, Option<String>) {
    static MAPPING: OnceLock<(Mapping, Option<String>)> = OnceLock::new();
    MAPPING.get_or_init(load)
}

/// The mapping: `metrics.toml` with the user's files of [`USER_METRICS_VAR`] over it, read once.
pub fn mapping() -> &'static Mapping {
    &loaded().0
}

thread_local! {
    /// The mapping of the collector running on this thread, when its configuration names files
    /// ([`scope`]).
    static SCOPED: RefCell<Option<Arc<Mapping>>> = const { RefCell::new(None) };
}

/// The mapping in force on this thread: a collector's own files over [`mapping`] while it runs
/// ([`scope`]), else [`mapping`].
pub fn current() -> Option<Arc<Mapping>> {
    SCOPED.with(|s| s.borrow().clone())
}

/// While it lives, the collector's own mapping files are in force on this thread ([`scope`]);
/// dropped, also when the collector unwinds, the built-in mapping is again.
#[derive(Debug)]
#[must_use = "the files are in force only while the scope lives"]
pub struct Scope(());

impl Drop for Scope {
    fn drop(&mut self) {
        SCOPED.with(|s| *s.borrow_mut() = None);
    }
}

/// The config key a profiler importer offers for a user's own mapping files.
pub const CONFIG_KEY: &str = "metrics";

/// The [`CONFIG_KEY`] key, for a collector's description.
pub fn config_key() -> ConfigKey {
    ConfigKey::optional(
        CONFIG_KEY,
        ConfigType::PathList,
        None,
        "Your own metric mapping files (the format of metrics.toml): their names and rules over the built-in ones",
    )
}

/// Puts the files a collector's configuration names in [`CONFIG_KEY`] (mapping files in the
/// format of `metrics.toml`) over the mapping until the returned [`Scope`] is dropped: their
/// names take over the built-in ones and their rules are tried first. A file that cannot be
/// read or does not parse is an error naming it, before anything is read.
pub fn scope(config: &Config) -> Result<Scope, PluginError> {
    let files = match config.get(CONFIG_KEY) {
        Some(v) if !v.is_null() => config.path_list(CONFIG_KEY)?,
        _ => Vec::new(),
    };
    scope_files(&files)
}

/// [`scope`] with the files given.
pub fn scope_files(files: &[PathBuf]) -> Result<Scope, PluginError> {
    if files.is_empty() {
        return Ok(Scope(()));
    }
    let mut m = mapping().clone();
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|e| PluginError::io(path, &e))?;
        m.add(&text, &path.display().to_string()).map_err(|e| {
            PluginError::new(format!(
                "{e} (a metric mapping named by config key `{CONFIG_KEY}`)"
            ))
        })?;
    }
    SCOPED.with(|s| *s.borrow_mut() = Some(Arc::new(m)));
    Ok(Scope(()))
}

/// What is wrong with a user's mapping file, if anything: importers refuse to run with one
/// (`Tables::finish`), so a typo in it is an error, not silently unmapped names.
pub fn user_file_error() -> Option<&'static str> {
    loaded().1.as_deref()
}

/// How a mapping file's `[[metric]]`s and the canonical registry (`yosoku_tables::metrics`)
/// differ: a metric the registry lacks or gives another kind, a registry name the file lacks.
/// The built-in `metrics.toml` and the registry must not differ (a test); a user's file may
/// add names of its own.
pub fn registry_differences(text: &str) -> Result<Vec<String>, String> {
    let file = Mapping::parse(text)?;
    let mut out = Vec::new();
    for m in &file.metrics {
        match yosoku_tables::metrics::find(&m.name) {
            None => out.push(format!(
                "metric `{}` ({}) is not in the registry (yosoku_tables::metrics::ALL)",
                m.name, m.kind
            )),
            Some(r) if r.kind != m.kind => out.push(format!(
                "metric `{}`: kind `{}` here, `{}` in the registry",
                m.name, m.kind, r.kind
            )),
            Some(_) => {}
        }
    }
    for r in yosoku_tables::metrics::ALL {
        if !file.metrics.iter().any(|m| m.name == r.name) {
            out.push(format!(
                "the registry's metric `{}` has no [[metric]] here",
                r.name
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nsight Compute says a metric's unit in its name (its documentation's "Metrics Structure":
    /// `.pct` a percentage, `.ratio` one value over another, `.per_second` and `.per_cycle_*`
    /// rates) and in the unit row of every file, which the importer converts (`%` divided by
    /// 100). So every ncu name the mapping calls a `ratio` (a fraction, 0-1) must be a percentage
    /// by its name, a details-page name (`Section / Metric`, its unit in the page's unit
    /// column), or carry the unit that makes it a fraction (`thread/warp`); and no `.ratio`,
    /// `per_request` or `per_warp` name may be a fraction without one (sectors per request are
    /// 1-32: the defect of a threads-per-instruction ratio read as an efficiency). Every alias
    /// and every rule is checked.
    #[test]
    fn every_ncu_name_called_a_fraction_is_a_percentage_or_converted() {
        let map = mapping();
        let percentage = |name: &str| {
            name.ends_with(".pct") || name.ends_with("_pct") || name.contains(".pct_of_peak_")
        };
        let mut wrong = Vec::new();
        let mut checked = 0;
        for metric in map.metrics() {
            for (tool, name) in &metric.aliases {
                if tool != "ncu" {
                    continue;
                }
                checked += 1;
                let canonical = map.lookup(tool, name).unwrap();
                let unit = canonical.unit.as_deref();
                let fraction_by_unit = unit.is_some_and(|u| {
                    crate::units::conversion(u, crate::units::Prefixes::Decimal).unit == "ratio"
                });
                let details_page = name.contains(" / ");
                if canonical.kind == "ratio"
                    && !(percentage(name) || details_page || fraction_by_unit)
                {
                    wrong.push(format!(
                        "{name} -> {} (ratio) is no percentage",
                        metric.name
                    ));
                }
                let not_a_fraction_by_name = name.ends_with(".ratio")
                    || name.contains("per_request")
                    || name.contains("per_warp_instruction");
                if canonical.kind == "ratio" && not_a_fraction_by_name && !fraction_by_unit {
                    wrong.push(format!(
                        "{name} -> {} (ratio) is unbounded by its name",
                        metric.name
                    ));
                }
            }
        }
        for rule in map.rules().iter().filter(|r| r.tool == "ncu") {
            checked += 1;
            let pattern = rule.pattern.as_str();
            if rule.kind == Some("ratio") && !percentage(pattern.trim_end_matches('*')) {
                wrong.push(format!("rule `{pattern}` (ratio) is no percentage"));
            }
            if pattern.ends_with(".ratio") && rule.kind == Some("ratio") {
                wrong.push(format!("rule `{pattern}` calls every `.ratio` a fraction"));
            }
        }
        assert!(checked > 150, "{checked} ncu names and rules checked");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        // The documented values behind the rule: a percentage in `%` (ncu's unit row) becomes a
        // fraction, threads per warp instruction (0-32) an efficiency, and sectors per request
        // (an `average`, as nvprof's transactions per request) stay as written.
        let ratio = |raw: &str| map.resolve("ncu", raw).unwrap();
        assert_eq!(ratio("lts__t_sector_hit_rate.pct").kind, "ratio");
        assert_eq!(
            crate::units::normalise(87.5, "%", crate::units::Prefixes::Decimal).value,
            0.875
        );
        let efficiency = ratio("smsp__thread_inst_executed_per_inst_executed.ratio");
        let unit = efficiency.unit.unwrap();
        assert_eq!(
            crate::units::normalise(32.0, &unit, crate::units::Prefixes::Decimal).value,
            1.0
        );
        let sectors = ratio("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio");
        assert_eq!(
            (sectors.name.as_str(), sectors.kind),
            ("gld_transactions_per_request", "average")
        );
        assert_eq!(
            map.rule_kind(
                "ncu",
                "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_atom.ratio"
            ),
            Some("average")
        );
    }

    /// What nvprof's metric reference (`nvprof --query-metrics`, CUPTI's metric descriptions)
    /// says each of its names is, and how nvprof writes it: efficiencies, hit rates, stall
    /// reasons, `issue_slot_utilization` and `local_memory_overhead` are percentages written
    /// with `%` ("... expressed as percentage"); the other `*_utilization` names are levels on a
    /// scale of 0 to 10 (`Mid (5)`); throughputs are bytes per second in 1024-based units
    /// (`190.7GB/s`); IPC and eligible warps per cycle are per-cycle rates; transactions per
    /// request, instructions per warp and replay overheads are averages of one count per another
    /// (`1.53`, unbounded); `achieved_occupancy` is a fraction written without a unit; the trace
    /// columns carry their unit in the file's unit row. Returns the kind, a documented value as
    /// nvprof writes it, and that value in the canonical unit.
    fn nvprof_documented(name: &str) -> (&'static str, &'static str, f64) {
        const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
        let percentage = name.ends_with("_efficiency")
            || name.contains("hit_rate")
            || name.starts_with("stall_")
            || name == "issue_slot_utilization"
            || name == "local_memory_overhead";
        let per_cycle = [
            "ipc",
            "issued_ipc",
            "executed_ipc",
            "eligible_warps_per_cycle",
        ];
        let average = name.contains("per_request")
            || name == "inst_per_warp"
            || name.ends_with("_replay_overhead");
        let cycles = ["active_cycles", "elapsed_cycles_sm", "active_warps"];
        match name {
            _ if percentage => ("ratio", "87.50%", 0.875),
            _ if name.ends_with("_utilization") => ("level", "Mid (5)", 5.0),
            _ if name.ends_with("_throughput") || name == "Throughput" => {
                ("rate", "190.5GB/s", 190.5 * GIB)
            }
            _ if per_cycle.contains(&name) => ("rate", "1.234567", 1.234567),
            _ if average => ("average", "1.530000", 1.53),
            "achieved_occupancy" => ("ratio", "0.481234", 0.481234),
            _ if cycles.contains(&name) => ("time", "123456", 123456.0),
            // In the unit row: `B` or `KB` (the R export, without it, is read per file by
            // the cuda_profiler plugin: `written_in_kib`).
            "Static SMem" | "Dynamic SMem" => ("config", "1088B", 1088.0),
            _ if name.starts_with("Grid ")
                || name.starts_with("Block ")
                || name == "Registers Per Thread" =>
            {
                ("config", "256", 256.0)
            }
            "Size" => ("count", "1.500MB", 1.5 * 1024.0 * 1024.0),
            _ => ("count", "1048576", 1_048_576.0),
        }
    }

    fn in_kind_range(kind: &str, value: f64) -> bool {
        match kind {
            "ratio" => (0.0..=1.0).contains(&value),
            "level" => (0.0..=10.0).contains(&value),
            _ => value >= 0.0,
        }
    }

    /// Every nvprof name of the mapping has the kind nvprof's reference gives it, and a value as
    /// nvprof writes it (its unit in the value, 1024-based) becomes the documented value in the
    /// canonical unit, inside its kind's range: a percentage read as a fraction, a level read as
    /// a ratio or GB/s read in 1000-based units fails here, for names no corpus file holds too.
    /// The R export of gpuperfpredict writes the same metrics without units, so each of its
    /// names must carry the unit nvprof's value had (`%` for a percentage, GB/s for a
    /// throughput) and give the same canonical value from the bare number.
    #[test]
    fn every_nvprof_name_has_the_kind_and_scale_nvprofs_reference_gives() {
        use crate::units::{Prefixes, normalise, split_inline_unit};
        let map = mapping();
        let mut wrong = Vec::new();
        let mut checked = 0;
        let mut documented_of_canonical = HashMap::new();
        for metric in map.metrics() {
            for (tool, name) in metric.aliases.iter().filter(|(t, _)| t == "nvprof") {
                checked += 1;
                let (kind, written, expected) = nvprof_documented(name);
                documented_of_canonical.insert(metric.name.clone(), (kind, written, expected));
                let canonical = map.lookup(tool, name).unwrap();
                if canonical.kind != kind {
                    wrong.push(format!(
                        "nvprof {name}: {} where nvprof documents {kind}",
                        canonical.kind
                    ));
                }
                let (value, unit) = split_inline_unit(written).unwrap();
                let unit = if unit.is_empty() {
                    canonical.unit.clone().unwrap_or_default()
                } else {
                    unit
                };
                let unit = if unit == "level" { String::new() } else { unit };
                let got = normalise(value, &unit, Prefixes::Binary).value;
                if (got - expected).abs() > 1e-9 * expected.abs() || !in_kind_range(kind, got) {
                    wrong.push(format!(
                        "nvprof {name}: `{written}` reads {got}, documented {expected}"
                    ));
                }
            }
        }
        for metric in map.metrics() {
            for (tool, name) in metric.aliases.iter().filter(|(t, _)| t == "gpuperfpredict") {
                let Some(&(kind, written, expected)) = documented_of_canonical.get(&metric.name)
                else {
                    continue;
                };
                checked += 1;
                let canonical = map.lookup(tool, name).unwrap();
                let (value, _) = split_inline_unit(written).unwrap();
                let unit = canonical.unit.clone().unwrap_or_default();
                let got = normalise(value, &unit, Prefixes::Binary).value;
                let kind_ok = canonical.kind == kind;
                if !kind_ok || (got - expected).abs() > 1e-9 * expected.abs() {
                    wrong.push(format!(
                        "gpuperfpredict {name} (unit {unit:?}, {}): {value} reads {got}, nvprof's {written} is {expected} ({kind})",
                        canonical.kind
                    ));
                }
            }
        }
        assert!(
            checked > 230,
            "{checked} nvprof and gpuperfpredict names checked"
        );
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// What AMD's counter references say each rocprof name is (rocprof's `derived_counters`
    /// and rocprofv3's counter list, the kernel-trace columns of rocprof and rocprofv3): cycle
    /// counters (`*CYCLES*`, `GRBM_*`) are times; `FETCH_SIZE` and `WRITE_SIZE` are "the total
    /// kilobytes" fetched and written, computed as transactions x 32 or 64 bytes / 1024; the
    /// dispatch's workgroup, grid, registers, LDS and scratch sizes are its configuration, the
    /// sizes in bytes; every other hardware counter is a count. The CUDA_PROFILE logs of the
    /// legacy profiler write times in microseconds and occupancy as a fraction (0-1).
    fn amd_and_legacy_documented(tool: &str, name: &str) -> (&'static str, f64, f64) {
        let upper = name.to_ascii_uppercase();
        let config = [
            "WORKGROUP_SIZE",
            "WGR",
            "GRID_SIZE",
            "GRD",
            "WAVE_SIZE",
            "VGPR",
            "SGPR",
            "LDS",
            "SCRATCH",
            "SCR",
            "GROUP_SEGMENT_SIZE",
            "PRIVATE_SEGMENT_SIZE",
        ];
        match (tool, upper.as_str()) {
            ("legacy", "GPUTIME" | "CPUTIME") => ("time", 12.5, 12.5e-6),
            ("legacy", "OCCUPANCY") => ("ratio", 0.75, 0.75),
            ("legacy", _) => ("count", 1024.0, 1024.0),
            (_, "FETCH_SIZE" | "WRITE_SIZE") => ("count", 2.0, 2048.0),
            (_, u) if u.contains("GPR") || config.iter().any(|c| u.starts_with(c)) => {
                ("config", 64.0, 64.0)
            }
            (_, u) if u.contains("CYCLES") || u.starts_with("GRBM_") => ("time", 5e5, 5e5),
            _ => ("count", 1024.0, 1024.0),
        }
    }

    /// Every rocprof and legacy-profiler name of the mapping has the kind its tool's reference
    /// gives it, and a documented value in the unit the tool writes (rocprof's 1024-based KB,
    /// the legacy log's microseconds) becomes the canonical value: `FETCH_SIZE` read as bytes,
    /// or as 1000-based KB, fails here.
    #[test]
    fn every_rocprof_and_legacy_name_has_the_kind_and_scale_its_reference_gives() {
        use crate::units::{Prefixes, normalise};
        let map = mapping();
        let mut wrong = Vec::new();
        let mut checked = 0;
        for metric in map.metrics() {
            for (tool, name) in &metric.aliases {
                let prefixes = match tool.as_str() {
                    "rocprof" => Prefixes::Binary,
                    "legacy" => Prefixes::Decimal,
                    _ => continue,
                };
                checked += 1;
                let (kind, written, expected) = amd_and_legacy_documented(tool, name);
                let canonical = map.lookup(tool, name).unwrap();
                let unit = canonical.unit.clone().unwrap_or_default();
                let got = normalise(written, &unit, prefixes).value;
                if canonical.kind != kind || (got - expected).abs() > 1e-12 * expected.abs() {
                    wrong.push(format!(
                        "{tool} {name} ({}, unit {unit:?}): {written} reads {got}; documented: {kind}, {expected}",
                        canonical.kind
                    ));
                }
            }
        }
        assert!(checked >= 75, "{checked} rocprof and legacy names checked");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// The canonical names and kinds of `metrics.toml` are the registry's, one for one; a file
    /// that changes a kind, adds a name or drops one differs, and says where.
    #[test]
    fn the_mapping_file_and_the_registry_agree() {
        assert_eq!(
            registry_differences(METRICS_TOML).unwrap(),
            Vec::<String>::new()
        );
        let changed = METRICS_TOML
            .replacen(
                "[[metric]]\nname = \"duration\"\nkind = \"time\"",
                "[[metric]]\nname = \"duration\"\nkind = \"count\"",
                1,
            )
            .replacen("name = \"cpu_time\"", "name = \"host_time\"", 1);
        assert_ne!(changed, METRICS_TOML);
        assert_eq!(
            registry_differences(&changed).unwrap(),
            [
                "metric `duration`: kind `count` here, `time` in the registry",
                "metric `host_time` (time) is not in the registry (yosoku_tables::metrics::ALL)",
                "the registry's metric `cpu_time` has no [[metric]] here",
            ]
        );
    }

    #[test]
    fn the_mapping_file_is_valid() {
        let m = Mapping::parse(METRICS_TOML).unwrap();
        assert!(m.by_alias.len() > 150, "{}", m.by_alias.len());
        let c = m
            .lookup("gpuperfpredict", "device_memory_read_throughput")
            .unwrap();
        assert_eq!(
            (c.name.as_str(), c.kind, c.unit.as_deref()),
            ("dram_read_throughput", "rate", Some("GB/s"))
        );
        assert_eq!(
            m.lookup("ncu", "smsp__inst_executed.sum").unwrap().name,
            "inst_executed"
        );
        assert_eq!(m.lookup("legacy", "gld32b").unwrap().name, "gld_32b");
        assert!(m.lookup("nvprof", "no_such_metric").is_none());
    }

    #[test]
    fn globs_match_prefixes_suffixes_and_middles() {
        assert!(glob_matches("launch__*", "launch__grid_size"));
        assert!(glob_matches("*.pct", "l1tex__t_sector_hit_rate.pct"));
        assert!(!glob_matches("*.pct", "x.pct_of_peak_sustained_elapsed"));
        assert!(glob_matches(
            "*cycles_elapsed.*.per_second",
            "dram__cycles_elapsed.avg.per_second"
        ));
        assert!(!glob_matches(
            "*cycles_elapsed.*.per_second",
            "dram__cycles_elapsed.avg"
        ));
        assert!(glob_matches("a*a", "aa"));
        assert!(!glob_matches("ab*ba", "aba"));
        assert!(glob_matches("exact", "exact") && !glob_matches("exact", "exactly"));
    }

    #[test]
    fn names_no_alias_lists_get_their_kind_from_the_first_matching_rule() {
        let m = Mapping::parse(METRICS_TOML).unwrap();
        let kind = |raw| m.rule_kind("ncu", raw);
        assert_eq!(kind("lts__t_sectors_srcunit_ltcfabric.sum"), Some("count"));
        assert_eq!(
            kind("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            Some("ratio")
        );
        assert_eq!(kind("gpc__cycles_elapsed.max.per_second"), Some("clock"));
        assert_eq!(kind("dram__bytes.sum.per_second"), Some("rate"));
        assert_eq!(kind("sm__cycles_active.avg"), Some("time"));
        assert_eq!(kind("launch__uses_green_context"), Some("config"));
        // Bookkeeping has no kind, and the rule stops the search (`.avg` would say count).
        assert_eq!(kind("profiler__replayer_bytes_mem_accessible.avg"), None);
        // An alias wins over the rules: `lookup` is asked first.
        assert_eq!(
            m.lookup("ncu", "dram__bytes_read.sum").unwrap().name,
            "dram_read_bytes"
        );
        assert_eq!(m.rule_kind("nvprof", "sm__cycles_active.avg"), None);
        // The physics model reads `active_cycles` as a sum over the SMs: ncu's "SM Active
        // Cycles" is the average over them (fractional, near the elapsed cycles) and goes to a
        // name of its own.
        let name = |raw| m.lookup("ncu", raw).map(|c| c.name.clone());
        assert_eq!(
            name("sm__cycles_active.sum").as_deref(),
            Some("active_cycles")
        );
        for avg in [
            "sm__cycles_active.avg",
            "GPU Speed Of Light Throughput / SM Active Cycles",
            "GPU and Memory Workload Distribution / Average SM Active Cycles",
        ] {
            assert_eq!(name(avg).as_deref(), Some("active_cycles_avg"), "{avg}");
        }
    }

    #[test]
    fn every_roll_up_of_a_mapped_counter_is_mapped_with_the_roll_ups_kind() {
        let m = Mapping::parse(METRICS_TOML).unwrap();
        let r = |raw| m.resolve("ncu", raw).map(|c| (c.name, c.kind));
        assert_eq!(
            r("dram__bytes_read.avg"),
            Some(("dram_read_bytes_avg".to_owned(), "count"))
        );
        assert_eq!(
            r("lts__d_sectors.max.pct_of_peak_sustained_elapsed"),
            Some((
                "l2_d_sectors_max_pct_of_peak_sustained_elapsed".to_owned(),
                "ratio"
            ))
        );
        assert_eq!(
            r("lts__cycles_active.avg"),
            Some(("l2_cycles_active_avg".to_owned(), "time"))
        );
        // An alias of its own wins over the derived name.
        assert_eq!(
            r("smsp__inst_executed.avg.per_cycle_active").unwrap().0,
            "ipc"
        );
        // A counter whose .sum nothing maps stays unmapped; other tools are not derived.
        assert_eq!(r("lts__throughput.max.pct_of_peak_sustained_elapsed"), None);
        assert!(m.resolve("nvprof", "dram__bytes_read.avg").is_none());
    }

    #[test]
    fn amd_names_match_without_regard_to_case() {
        let m = Mapping::parse(METRICS_TOML).unwrap();
        for raw in ["LDS_Block_Size", "lds_block_size", "LDS_BLOCK_SIZE"] {
            assert!(m.lookup("rocprof", raw).is_some(), "{raw}");
        }
        assert_eq!(
            m.rule_kind("rocprof", "TCP_TOTAL_CACHE_ACCESSES_sum"),
            Some("count")
        );
        assert_eq!(m.rule_kind("rocprof", "grbm_gui_active"), Some("time"));
        // NVIDIA's names keep their case: two different metrics may differ only by it.
        assert!(m.lookup("ncu", "DRAM__BYTES_READ.SUM").is_none());
    }

    #[test]
    fn a_users_file_adds_names_and_takes_over_built_in_ones() {
        let mut m = Mapping::parse(METRICS_TOML).unwrap();
        let user = r#"
[[metric]]
name = "dram_read_bytes_mine"
kind = "count"
aliases = [{ tool = "ncu", name = "dram__bytes_read.sum" }]

[[metric]]
name = "tensor_ops"
kind = "count"
doc = "HMMA instructions"
aliases = [{ tool = "ncu", name = "sm__inst_executed_pipe_tensor.sum" }]

[[rule]]
tool = "ncu"
pattern = "sm__inst_executed_pipe_*"
kind = "none"
"#;
        m.add(user, "mine.toml").unwrap();
        assert_eq!(
            m.lookup("ncu", "dram__bytes_read.sum").unwrap().name,
            "dram_read_bytes_mine"
        );
        assert_eq!(
            m.lookup("ncu", "sm__inst_executed_pipe_tensor.sum")
                .unwrap()
                .kind,
            "count"
        );
        // The user's rules are tried before the built-in ones.
        assert_eq!(m.rule_kind("ncu", "sm__inst_executed_pipe_alu.sum"), None);
        let listed = m.metrics().iter().find(|i| i.name == "tensor_ops").unwrap();
        assert_eq!(listed.source, "mine.toml");
        // Errors say what is wrong, and where: the file, line and column of the value.
        let bad = "[[metric]]\nname = \"x\"\nkind = \"speed\"\naliases = []\n";
        let e = m.add(bad, "bad.toml").unwrap_err();
        assert!(
            e.starts_with("bad.toml:3:8: metric `x`: unknown kind `speed`"),
            "{e}"
        );
        let bad = "[[rule]]\ntool = \"vtune\"\npattern = \"*\"\nkind = \"count\"\n";
        let e = m.add(bad, "bad.toml").unwrap_err();
        assert!(
            e.starts_with("bad.toml:2:8: rule `*`: unknown tool `vtune`"),
            "{e}"
        );
        let bad = "[[metric]]\nname = \"x\"\n";
        let e = m.add(bad, "bad.toml").unwrap_err();
        assert!(e.starts_with("bad.toml:1:1: missing field `kind`"), "{e}");
    }

    #[test]
    fn canonical_names_are_snake_case() {
        let file: File = toml::from_str(METRICS_TOML).unwrap();
        assert!(!file.rule.is_empty());
        for m in file.metric {
            assert!(
                m.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn one_name_mapped_twice_is_refused() {
        let text = r#"
[[metric]]
name = "a"
kind = "count"
doc = ""
aliases = [{ tool = "ncu", name = "x" }]
[[metric]]
name = "b"
kind = "count"
doc = ""
aliases = [{ tool = "ncu", name = "x" }]
"#;
        assert_eq!(
            Mapping::parse(text).unwrap_err(),
            "metrics.toml:11:35: ncu name `x` maps to both `a` and `b`"
        );
    }
}
