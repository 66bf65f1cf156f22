//! The plugin descriptor: the JSON document `describe` returns, and the rules a collector's
//! configuration must follow. Host and SDK both check configurations with [`check_config`], so a
//! pipeline file and a plugin agree on what is valid, and both check a descriptor with
//! [`PluginInfo::problems`].
//!
//! The descriptor evolves like the ABI: a later version only adds fields. A host reads a
//! descriptor of any version: fields it does not know are ignored (and listed by
//! [`unknown_fields`], for `yosoku plugins`), a collector kind it does not know is shown as
//! written, and a config key of a type it does not know makes only that collector unusable
//! when the key is required or set.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The descriptor format this crate writes. Version 1 had no `descriptor_version` field.
pub const DESCRIPTOR_VERSION: u32 = 1;

fn first_version() -> u32 {
    1
}

/// What a plugin says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// The descriptor format (absent: 1).
    #[serde(default = "first_version")]
    pub descriptor_version: u32,
    /// Unique plugin name: lowercase ASCII letters, digits and `_`.
    pub name: String,
    /// The plugin's own version (its crate version).
    pub version: String,
    pub description: String,
    pub collectors: Vec<CollectorInfo>,
}

/// One way a plugin can produce tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectorKind {
    Importer,
    Runner,
    /// A kind from a newer descriptor, kept as written.
    Other(String),
}

impl CollectorKind {
    pub fn name(&self) -> &str {
        match self {
            CollectorKind::Importer => "importer",
            CollectorKind::Runner => "runner",
            CollectorKind::Other(name) => name,
        }
    }
}

impl fmt::Display for CollectorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for CollectorKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for CollectorKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "importer" => CollectorKind::Importer,
            "runner" => CollectorKind::Runner,
            other => CollectorKind::Other(other.to_owned()),
        })
    }
}

/// One configuration key of a collector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigType {
    String,
    Path,
    Integer,
    Float,
    Boolean,
    StringList,
    PathList,
    /// A type from a newer descriptor, which this host cannot check or pass on.
    Other(String),
}

impl ConfigType {
    /// Whether `value` is of this type (an integer is a valid float). Nothing is of a type this
    /// host does not know.
    pub fn accepts(&self, value: &Value) -> bool {
        match self {
            ConfigType::String | ConfigType::Path => value.is_string(),
            ConfigType::Integer => value.is_i64() || value.is_u64(),
            ConfigType::Float => value.is_number(),
            ConfigType::Boolean => value.is_boolean(),
            ConfigType::StringList | ConfigType::PathList => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
            ConfigType::Other(_) => false,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            ConfigType::String => "string",
            ConfigType::Path => "path",
            ConfigType::Integer => "integer",
            ConfigType::Float => "float",
            ConfigType::Boolean => "boolean",
            ConfigType::StringList => "string_list",
            ConfigType::PathList => "path_list",
            ConfigType::Other(name) => name,
        }
    }

    pub fn is_path(&self) -> bool {
        matches!(self, ConfigType::Path | ConfigType::PathList)
    }
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for ConfigType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ConfigType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match String::deserialize(d)?.as_str() {
            "string" => ConfigType::String,
            "path" => ConfigType::Path,
            "integer" => ConfigType::Integer,
            "float" => ConfigType::Float,
            "boolean" => ConfigType::Boolean,
            "string_list" => ConfigType::StringList,
            "path_list" => ConfigType::PathList,
            other => ConfigType::Other(other.to_owned()),
        })
    }
}

/// The fields of a descriptor this crate does not know (from a newer descriptor version), as
/// paths (`collectors[2].streaming`). They are ignored; `yosoku plugins` lists them.
pub fn unknown_fields(descriptor: &Value) -> Vec<String> {
    const PLUGIN: &[&str] = &[
        "descriptor_version",
        "name",
        "version",
        "description",
        "collectors",
    ];
    const COLLECTOR: &[&str] = &["name", "kind", "description", "config", "tables"];
    const KEY: &[&str] = &["key", "type", "required", "default", "help"];
    fn extra(object: &Value, known: &[&str], at: &str, out: &mut Vec<String>) {
        if let Some(map) = object.as_object() {
            out.extend(
                map.keys()
                    .filter(|k| !known.contains(&k.as_str()))
                    .map(|k| format!("{at}{k}")),
            );
        }
    }
    let mut out = Vec::new();
    extra(descriptor, PLUGIN, "", &mut out);
    for (c, collector) in descriptor["collectors"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        extra(collector, COLLECTOR, &format!("collectors[{c}]."), &mut out);
        for (k, key) in collector["config"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            extra(key, KEY, &format!("collectors[{c}].config[{k}]."), &mut out);
        }
    }
    out
}

impl PluginInfo {
    /// Everything wrong with the descriptor, each naming the collector and key: invalid or
    /// duplicate names, duplicate keys and tables, defaults of the wrong type or on required
    /// keys. Types and kinds this crate does not know are not problems here (see
    /// [`CollectorInfo::unusable`]).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let name_rule = "use lowercase ASCII letters, digits and `_`";
        if !is_valid_name(&self.name) {
            problems.push(format!("plugin name {:?}: {name_rule}", self.name));
        }
        if self.collectors.is_empty() {
            problems.push("the plugin has no collectors".to_owned());
        }
        for (i, c) in self.collectors.iter().enumerate() {
            let at = format!("collector `{}`", c.name);
            if !is_valid_name(&c.name) {
                problems.push(format!("collector name {:?}: {name_rule}", c.name));
            }
            if self.collectors[..i].iter().any(|o| o.name == c.name) {
                problems.push(format!("{at} is declared twice"));
            }
            for (k, key) in c.config.iter().enumerate() {
                if key.key.is_empty() {
                    problems.push(format!("{at}: a config key has an empty name"));
                }
                if c.config[..k].iter().any(|o| o.key == key.key) {
                    problems.push(format!("{at}: config key `{}` is declared twice", key.key));
                }
                match &key.default {
                    Some(_) if key.required => problems.push(format!(
                        "{at}: config key `{}` is required and has a default; a default is for optional keys",
                        key.key
                    )),
                    Some(d) if !matches!(key.ty, ConfigType::Other(_)) && !key.ty.accepts(d) => {
                        problems.push(format!(
                            "{at}: config key `{}` ({}) has a default of type {}",
                            key.key,
                            key.ty,
                            json_type_name(d)
                        ))
                    }
                    _ => {}
                }
            }
            if c.tables.is_empty() {
                problems.push(format!("{at} declares no tables"));
            }
            for (t, table) in c.tables.iter().enumerate() {
                if !is_valid_name(table) {
                    problems.push(format!("{at}: table name {table:?}: {name_rule}"));
                }
                if c.tables[..t].contains(table) {
                    problems.push(format!("{at}: table `{table}` is declared twice"));
                }
            }
        }
        problems
    }
}

impl CollectorInfo {
    /// Why this host cannot run the collector, if it cannot: a required config key of a type it
    /// does not know (it could neither check nor pass on a value).
    pub fn unusable(&self) -> Option<String> {
        let unknown: Vec<String> = self
            .config
            .iter()
            .filter(|k| k.required && matches!(k.ty, ConfigType::Other(_)))
            .map(|k| format!("`{}` ({})", k.key, k.ty))
            .collect();
        (!unknown.is_empty()).then(|| {
            format!(
                "collector `{}` needs config key(s) {} of a type this yosoku does not know; the plugin was built for a newer yosoku",
                self.name,
                unknown.join(", ")
            )
        })
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
    /// A key of a type this host does not know (from a newer plugin).
    UnknownType {
        key: String,
        ty: String,
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
            | ConfigProblem::UnknownType { key, .. }
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
            ConfigProblem::UnknownType { key, ty } => write!(
                f,
                "config key `{key}` has type `{ty}`, which this yosoku does not know (the plugin was built for a newer one)"
            ),
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
        let value = config.get(&declared.key);
        if let ConfigType::Other(ty) = &declared.ty {
            if value.is_some() || declared.required {
                problems.push(ConfigProblem::UnknownType {
                    key: declared.key.clone(),
                    ty: ty.clone(),
                });
            }
            continue;
        }
        match value {
            None if declared.required => problems.push(ConfigProblem::MissingKey {
                key: declared.key.clone(),
                ty: declared.ty.clone(),
            }),
            None => {}
            Some(value) if !declared.ty.accepts(value) => problems.push(ConfigProblem::WrongType {
                key: declared.key.clone(),
                expected: declared.ty.clone(),
                found: json_type_name(value).to_owned(),
            }),
            Some(_) => {}
        }
    }
    problems
}

/// Whether `name` is a valid name of a plugin, collector or table, and (in a pipeline file) of
/// a source or step: lowercase ASCII letters, digits and `_`. No dots: table references are
/// `<namespace>.<table>`.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl CollectorInfo {
    fn with_kind(name: &str, kind: CollectorKind, description: &str) -> Self {
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
        Self::with_kind(name, CollectorKind::Importer, description)
    }

    /// A collector that runs something and measures it.
    pub fn runner(name: &str, description: &str) -> Self {
        Self::with_kind(name, CollectorKind::Runner, description)
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
            descriptor_version: DESCRIPTOR_VERSION,
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

    #[test]
    fn a_newer_descriptor_is_read_and_its_extras_are_listed() {
        let text = r#"{"descriptor_version": 3, "name": "next", "version": "9.0.0",
            "description": "from the future", "homepage": "https://example.invalid",
            "collectors": [
              {"name": "old", "kind": "importer", "description": "d", "tables": ["runs"],
               "config": [{"key": "path", "type": "path", "required": true, "help": "h", "glob": true}]},
              {"name": "stream", "kind": "streamer", "description": "d", "tables": ["runs"], "live": true,
               "config": [{"key": "window", "type": "duration", "required": true, "help": "h"}]},
              {"name": "tuned", "kind": "runner", "description": "d", "tables": ["runs"],
               "config": [{"key": "window", "type": "duration", "required": false, "help": "h"}]}
            ]}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let info: PluginInfo = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(info.descriptor_version, 3);
        assert_eq!(
            info.collectors[1].kind,
            CollectorKind::Other("streamer".into())
        );
        assert_eq!(
            unknown_fields(&value),
            [
                "homepage",
                "collectors[0].config[0].glob",
                "collectors[1].live"
            ]
        );
        assert!(info.problems().is_empty(), "{:?}", info.problems());
        assert_eq!(info.collectors[0].unusable(), None);
        assert!(
            info.collectors[1]
                .unusable()
                .unwrap()
                .contains("`window` (duration) of a type this yosoku does not know"),
        );
        // An optional key of an unknown type: usable, as long as the pipeline does not set it.
        let tuned = &info.collectors[2];
        assert_eq!(tuned.unusable(), None);
        assert!(check_config(tuned, &Map::new()).is_empty());
        let set = json!({"window": "5s"});
        assert_eq!(
            check_config(tuned, set.as_object().unwrap())[0].to_string(),
            "config key `window` has type `duration`, which this yosoku does not know (the plugin was built for a newer one)"
        );
    }

    #[test]
    fn every_problem_of_a_descriptor_is_named() {
        let mut info = PluginInfo {
            descriptor_version: DESCRIPTOR_VERSION,
            name: "Bad".into(),
            version: "1".into(),
            description: "d".into(),
            collectors: vec![collector(), collector()],
        };
        info.collectors[1]
            .config
            .push(ConfigKey::required("path", ConfigType::Path, "again"));
        info.collectors[1].config.push(ConfigKey::optional(
            "bins",
            ConfigType::Integer,
            Some(json!("ten")),
            "b",
        ));
        info.collectors[1].tables.push("runs".into());
        assert_eq!(
            info.problems(),
            [
                "plugin name \"Bad\": use lowercase ASCII letters, digits and `_`",
                "collector `log` is declared twice",
                "collector `log`: config key `path` is declared twice",
                "collector `log`: config key `bins` (integer) has a default of type string",
                "collector `log`: table `runs` is declared twice",
            ]
        );
    }
}
