//! The plugin descriptor: the JSON document `describe` returns, and the rules a collector's
//! configuration must follow. Host and SDK both check configurations with [`check_config`], so a
//! pipeline file and a plugin agree on what is valid.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a plugin says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginInfo {
    /// Unique plugin name: lowercase ASCII letters, digits and `_`.
    pub name: String,
    /// The plugin's own version (its crate version).
    pub version: String,
    pub description: String,
    pub collectors: Vec<CollectorInfo>,
}

/// One way a plugin can produce tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectorInfo {
    pub name: String,
    pub kind: CollectorKind,
    pub description: String,
    pub config: Vec<ConfigKey>,
    /// The tables the collector may push (a subset on any one call). Names of canonical tables
    /// (docs/tables.md) are checked against their definition by the host.
    pub tables: Vec<String>,
}

/// Whether a collector reads files a tool wrote or runs something and measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectorKind {
    Importer,
    Runner,
}

impl fmt::Display for CollectorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CollectorKind::Importer => "importer",
            CollectorKind::Runner => "runner",
        })
    }
}

/// One configuration key of a collector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigKey {
    pub key: String,
    #[serde(rename = "type")]
    pub ty: ConfigType,
    pub required: bool,
    /// Value used when the key is absent (optional keys only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    pub help: String,
}

/// Type of a configuration value. `path` and `path_list` values are file paths that the host
/// resolves relative to the pipeline file and records (with their SHA-256) in the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfigType {
    String,
    Path,
    Integer,
    Float,
    Boolean,
    StringList,
    PathList,
}

impl ConfigType {
    /// Whether `value` is of this type (an integer is a valid float).
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            ConfigType::String | ConfigType::Path => value.is_string(),
            ConfigType::Integer => value.is_i64() || value.is_u64(),
            ConfigType::Float => value.is_number(),
            ConfigType::Boolean => value.is_boolean(),
            ConfigType::StringList | ConfigType::PathList => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ConfigType::String => "string",
            ConfigType::Path => "path",
            ConfigType::Integer => "integer",
            ConfigType::Float => "float",
            ConfigType::Boolean => "boolean",
            ConfigType::StringList => "string_list",
            ConfigType::PathList => "path_list",
        }
    }

    pub fn is_path(self) -> bool {
        matches!(self, ConfigType::Path | ConfigType::PathList)
    }
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with one configuration key.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigProblem {
    UnknownKey {
        key: String,
        known: Vec<String>,
    },
    MissingKey {
        key: String,
        ty: ConfigType,
    },
    WrongType {
        key: String,
        expected: ConfigType,
        found: String,
    },
}

impl ConfigProblem {
    /// The key the problem is about.
    pub fn key(&self) -> &str {
        match self {
            ConfigProblem::UnknownKey { key, .. }
            | ConfigProblem::MissingKey { key, .. }
            | ConfigProblem::WrongType { key, .. } => key,
        }
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigProblem::UnknownKey { key, known } => {
                write!(f, "unknown config key `{key}`; expected one of: ")?;
                if known.is_empty() {
                    write!(f, "(none)")
                } else {
                    write!(f, "{}", known.join(", "))
                }
            }
            ConfigProblem::MissingKey { key, ty } => {
                write!(f, "missing required config key `{key}` ({ty})")
            }
            ConfigProblem::WrongType {
                key,
                expected,
                found,
            } => write!(f, "config key `{key}`: expected {expected}, found {found}"),
        }
    }
}

/// A short description of a JSON value's type, for error messages.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "table",
    }
}

/// Every problem of `config` against the keys `collector` declares.
pub fn check_config(collector: &CollectorInfo, config: &Map<String, Value>) -> Vec<ConfigProblem> {
    let mut problems = Vec::new();
    for key in config.keys() {
        if !collector.config.iter().any(|k| &k.key == key) {
            problems.push(ConfigProblem::UnknownKey {
                key: key.clone(),
                known: collector.config.iter().map(|k| k.key.clone()).collect(),
            });
        }
    }
    for declared in &collector.config {
        match config.get(&declared.key) {
            None if declared.required => problems.push(ConfigProblem::MissingKey {
                key: declared.key.clone(),
                ty: declared.ty,
            }),
            None => {}
            Some(value) if !declared.ty.accepts(value) => problems.push(ConfigProblem::WrongType {
                key: declared.key.clone(),
                expected: declared.ty,
                found: json_type_name(value).to_owned(),
            }),
            Some(_) => {}
        }
    }
    problems
}

/// Whether `name` is a valid plugin or collector name.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl CollectorInfo {
    fn new(name: &str, kind: CollectorKind, description: &str) -> Self {
        Self {
            name: name.to_owned(),
            kind,
            description: description.to_owned(),
            config: Vec::new(),
            tables: Vec::new(),
        }
    }

    /// A collector that reads files another tool wrote.
    pub fn importer(name: &str, description: &str) -> Self {
        Self::new(name, CollectorKind::Importer, description)
    }

    /// A collector that runs something and measures it.
    pub fn runner(name: &str, description: &str) -> Self {
        Self::new(name, CollectorKind::Runner, description)
    }

    pub fn key(mut self, key: ConfigKey) -> Self {
        self.config.push(key);
        self
    }

    pub fn tables(mut self, tables: &[&str]) -> Self {
        self.tables.extend(tables.iter().map(|t| (*t).to_owned()));
        self
    }
}

impl ConfigKey {
    /// A required key.
    pub fn required(key: &str, ty: ConfigType, help: &str) -> Self {
        Self {
            key: key.to_owned(),
            ty,
            required: true,
            default: None,
            help: help.to_owned(),
        }
    }

    /// An optional key, with the value used when it is absent.
    pub fn optional(key: &str, ty: ConfigType, default: Option<Value>, help: &str) -> Self {
        Self {
            key: key.to_owned(),
            ty,
            required: false,
            default,
            help: help.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn collector() -> CollectorInfo {
        CollectorInfo::importer("log", "reads a log")
            .key(ConfigKey::required("path", ConfigType::Path, "the log"))
            .key(ConfigKey::optional(
                "scale",
                ConfigType::Float,
                Some(json!(1.0)),
                "multiplier",
            ))
            .tables(&["runs"])
    }

    #[test]
    fn every_problem_is_reported_with_its_key() {
        let config = json!({"pth": "x", "scale": "two"});
        let problems = check_config(&collector(), config.as_object().unwrap());
        let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "unknown config key `pth`; expected one of: path, scale",
                "missing required config key `path` (path)",
                "config key `scale`: expected float, found string",
            ]
        );
    }

    #[test]
    fn integers_are_floats_but_not_the_reverse() {
        assert!(ConfigType::Float.accepts(&json!(3)));
        assert!(!ConfigType::Integer.accepts(&json!(3.5)));
        assert!(ConfigType::PathList.accepts(&json!(["a", "b"])));
        assert!(!ConfigType::PathList.accepts(&json!(["a", 1])));
    }

    #[test]
    fn the_descriptor_round_trips_through_json() {
        let info = PluginInfo {
            name: "demo".into(),
            version: "1.2.3".into(),
            description: "d".into(),
            collectors: vec![collector()],
        };
        let text = serde_json::to_string(&info).unwrap();
        assert!(text.contains(r#""kind":"importer""#), "{text}");
        assert!(text.contains(r#""type":"path""#), "{text}");
        let back: PluginInfo = serde_json::from_str(&text).unwrap();
        assert_eq!(back, info);
    }
}
