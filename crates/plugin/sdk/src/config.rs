//! Typed access to a collector's configuration.

use std::path::PathBuf;

use serde_json::{Map, Value};
use yosoku_plugin_abi::descriptor::{CollectorInfo, json_type_name};

use crate::PluginError;

/// A collector's configuration: the JSON object the host passed, checked against the collector's
/// declared keys. Getters fall back to a key's declared default and name the key in every error.
#[derive(Debug, Clone)]
pub struct Config {
    values: Map<String, Value>,
    info: CollectorInfo,
}

impl Config {
    pub fn new(values: Map<String, Value>, info: CollectorInfo) -> Self {
        Self { values, info }
    }

    /// The value of `key`, or its declared default.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key).or_else(|| {
            self.info
                .config
                .iter()
                .find(|k| k.key == key)
                .and_then(|k| k.default.as_ref())
        })
    }

    fn required(&self, key: &str) -> Result<&Value, PluginError> {
        self.get(key).ok_or_else(|| {
            PluginError::new(format!(
                "collector `{}`: missing config key `{key}`",
                self.info.name
            ))
        })
    }

    fn wrong_type(&self, key: &str, expected: &str, found: &Value) -> PluginError {
        PluginError::new(format!(
            "collector `{}`: config key `{key}`: expected {expected}, found {}",
            self.info.name,
            json_type_name(found)
        ))
    }

    pub fn string(&self, key: &str) -> Result<String, PluginError> {
        let v = self.required(key)?;
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.wrong_type(key, "string", v))
    }

    pub fn opt_string(&self, key: &str) -> Result<Option<String>, PluginError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.string(key).map(Some),
        }
    }

    /// A path; the host has made it absolute.
    pub fn path(&self, key: &str) -> Result<PathBuf, PluginError> {
        self.string(key).map(PathBuf::from)
    }

    /// An optional path; the host has made it absolute.
    pub fn opt_path(&self, key: &str) -> Result<Option<PathBuf>, PluginError> {
        Ok(self.opt_string(key)?.map(PathBuf::from))
    }

    pub fn integer(&self, key: &str) -> Result<i64, PluginError> {
        let v = self.required(key)?;
        v.as_i64().ok_or_else(|| self.wrong_type(key, "integer", v))
    }

    pub fn opt_integer(&self, key: &str) -> Result<Option<i64>, PluginError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(_) => self.integer(key).map(Some),
        }
    }

    pub fn float(&self, key: &str) -> Result<f64, PluginError> {
        let v = self.required(key)?;
        v.as_f64().ok_or_else(|| self.wrong_type(key, "float", v))
    }

    pub fn boolean(&self, key: &str) -> Result<bool, PluginError> {
        let v = self.required(key)?;
        v.as_bool()
            .ok_or_else(|| self.wrong_type(key, "boolean", v))
    }

    pub fn string_list(&self, key: &str) -> Result<Vec<String>, PluginError> {
        let v = self.required(key)?;
        v.as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect()
            })
            .ok_or_else(|| self.wrong_type(key, "string_list", v))
    }

    pub fn path_list(&self, key: &str) -> Result<Vec<PathBuf>, PluginError> {
        Ok(self
            .string_list(key)?
            .into_iter()
            .map(PathBuf::from)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use yosoku_plugin_abi::descriptor::{ConfigKey, ConfigType};

    use super::*;

    #[test]
    fn defaults_apply_and_errors_name_the_key() {
        let info = CollectorInfo::runner("time", "t")
            .key(ConfigKey::required(
                "command",
                ConfigType::StringList,
                "argv",
            ))
            .key(ConfigKey::optional(
                "repetitions",
                ConfigType::Integer,
                Some(json!(3)),
                "n",
            ));
        let config = Config::new(json!({"command": "ls"}).as_object().unwrap().clone(), info);
        assert_eq!(config.integer("repetitions").unwrap(), 3);
        assert_eq!(
            config.string_list("command").unwrap_err().to_string(),
            "collector `time`: config key `command`: expected string_list, found string"
        );
    }
}
