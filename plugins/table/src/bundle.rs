//! `bundle`: one table of a yosoku result bundle as a source (a forecast `yosoku predict --save`
//! wrote, an earlier run's predictions or runs), so that a pipeline can score it against
//! measurements taken later or combine it with new ones. The manifest and the table file are
//! read as inputs (their hashes go into the new bundle's manifest).

use std::path::Path;

use yosoku_bundle::{MANIFEST_FILE, Manifest};
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, PluginError,
};

/// The kinds of table this source gives: the part of the bundle table's name after its last `.`.
pub const BUNDLE_TABLE_KINDS: &[&str] = &["predictions", "runs", "observations", "counters"];

pub struct BundleCollector;

impl Collector for BundleCollector {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer(
            "bundle",
            "One table of a yosoku result bundle (a forecast of `yosoku predict --save`, an earlier run's predictions or runs), to score or combine in a pipeline",
        )
        .key(ConfigKey::required(
            "dir",
            ConfigType::Path,
            "The bundle's directory (its manifest.json and tables/)",
        ))
        .key(ConfigKey::required(
            "table",
            ConfigType::String,
            "The table's name in the bundle (`forecast.predictions`); the source gives it under its kind, the part after the last `.` (predictions, runs, observations or counters)",
        ))
        .tables(BUNDLE_TABLE_KINDS)
    }

    fn validate(&self, config: &Config) -> Result<(), PluginError> {
        kind_of(&config.string("table")?).map(|_| ())
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let table = config.string("table")?;
        let kind = kind_of(&table)?;
        let batch = read_bundle_table(&config.path("dir")?, &table)?;
        out.push_batch(kind, batch)
    }
}

/// The kind of the bundle table `name` (`<step>.<kind>`), one this source gives.
fn kind_of(name: &str) -> Result<&str, PluginError> {
    let kind = name.rsplit('.').next().unwrap_or(name);
    if name.contains('.') && BUNDLE_TABLE_KINDS.contains(&kind) {
        Ok(kind)
    } else {
        Err(PluginError::new(format!(
            "table = {name:?}: expected a bundle table's name `<step>.<kind>` of kind {}",
            BUNDLE_TABLE_KINDS.join(", ")
        )))
    }
}

/// The table `name` of the bundle in `dir`, read through its manifest.
pub fn read_bundle_table(dir: &Path, name: &str) -> Result<arrow_array::RecordBatch, PluginError> {
    let manifest_path = dir.join(MANIFEST_FILE);
    let text = String::from_utf8(yosoku_plugin_sdk::read_input(&manifest_path)?)
        .map_err(|e| PluginError::new(format!("{}: {e}", manifest_path.display())))?;
    let manifest = Manifest::from_json(&text)
        .map_err(|e| PluginError::new(format!("{}: {e}", manifest_path.display())))?;
    let Some(entry) = manifest.tables.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = manifest.tables.iter().map(|t| t.name.as_str()).collect();
        return Err(PluginError::new(format!(
            "{}: the bundle has no table `{name}`; it has {}",
            dir.display(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        )));
    };
    let path = dir.join(&entry.file);
    let bytes = yosoku_plugin_sdk::read_input(&path)?;
    yosoku_bundle::ipc::decode(&bytes)
        .map_err(|e| PluginError::new(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forecast_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../pipelines/data/gpu-forecast/forecast-h100")
    }

    /// The committed forecast's predictions read back; a name the bundle lacks, a kind this
    /// source does not give and a directory that is no bundle are errors that say so.
    #[test]
    fn a_bundle_table_is_read_by_its_name_and_bad_names_are_refused() {
        let batch = read_bundle_table(&forecast_dir(), "forecast.predictions").unwrap();
        assert_eq!(batch.num_rows(), 2 * 2629);
        let e = read_bundle_table(&forecast_dir(), "forecast.runs")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("has no table `forecast.runs`; it has forecast.predictions"),
            "{e}"
        );
        let e = read_bundle_table(Path::new("/nonexistent/bundle"), "a.runs")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/bundle/manifest.json"), "{e}");
        assert_eq!(kind_of("forecast.predictions").unwrap(), "predictions");
        for bad in ["predictions", "forecast.spans", ""] {
            let e = kind_of(bad).unwrap_err().to_string();
            assert!(e.contains("expected a bundle table's name"), "{bad}: {e}");
        }
    }
}
