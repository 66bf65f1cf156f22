//! The canonical metric mapping (`metrics.toml`): which name each tool writes for a quantity,
//! the quantity's canonical name and kind.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The mapping file, compiled in.
pub const METRICS_TOML: &str = include_str!("../metrics.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    metric: Vec<MetricDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricDef {
    name: String,
    kind: String,
    #[allow(dead_code)]
    doc: String,
    aliases: Vec<AliasDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AliasDef {
    tool: String,
    name: String,
    unit: Option<String>,
}

/// What a tool's raw name maps to.
#[derive(Debug, Clone, PartialEq)]
pub struct Canonical {
    pub name: String,
    pub kind: &'static str,
    /// The unit the tool's values are in when the file does not say (the R export).
    pub unit: Option<String>,
}

/// Tool names the mapping uses.
pub const TOOLS: &[&str] = &[
    "ncu",
    "nvprof",
    "legacy",
    "gpuperfpredict",
    "rocprof",
    "computed",
];

#[derive(Debug)]
pub struct Mapping {
    by_alias: HashMap<(String, String), Canonical>,
}

impl Mapping {
    fn parse(text: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut by_alias = HashMap::new();
        for m in file.metric {
            let Some(kind) = yosoku_tables::METRIC_KINDS.iter().find(|k| **k == m.kind) else {
                return Err(format!("metric `{}`: unknown kind `{}`", m.name, m.kind));
            };
            for a in m.aliases {
                if !TOOLS.contains(&a.tool.as_str()) {
                    return Err(format!("metric `{}`: unknown tool `{}`", m.name, a.tool));
                }
                let canonical = Canonical {
                    name: m.name.clone(),
                    kind,
                    unit: a.unit,
                };
                if let Some(other) = by_alias.insert((a.tool.clone(), a.name.clone()), canonical) {
                    return Err(format!(
                        "{} name `{}` maps to both `{}` and `{}`",
                        a.tool, a.name, other.name, m.name
                    ));
                }
            }
        }
        Ok(Self { by_alias })
    }

    /// The canonical metric of `raw` as `tool` writes it.
    pub fn lookup(&self, tool: &str, raw: &str) -> Option<&Canonical> {
        self.by_alias.get(&(tool.to_owned(), raw.to_owned()))
    }
}

/// The mapping of `metrics.toml`, parsed once. The file is checked by a test, so a parse error
/// here is a bug in this crate; it degrades to an empty mapping (every name unmapped) rather than
/// a panic.
pub fn mapping() -> &'static Mapping {
    static MAPPING: OnceLock<Mapping> = OnceLock::new();
    MAPPING.get_or_init(|| {
        Mapping::parse(METRICS_TOML).unwrap_or(Mapping {
            by_alias: HashMap::new(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn canonical_names_are_snake_case() {
        let file: File = toml::from_str(METRICS_TOML).unwrap();
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
            "ncu name `x` maps to both `a` and `b`"
        );
    }
}
