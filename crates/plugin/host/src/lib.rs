//! Finds, loads and calls yosoku plugins.
//!
//! A plugin is a shared library exporting `yosoku_plugin_init` (docs/plugin-abi.md). The host
//! looks for libraries named `lib yosoku_plugin_*.so` (the platform's prefix and suffix) in its
//! search path, negotiates the ABI version (newest first), reads each plugin's descriptor, and
//! calls collectors, turning the Arrow C streams they push into record batches checked against
//! the canonical tables. Libraries are never unloaded: arrays they produced may outlive any call.
//!
//! What it checks: the plugin wrote nothing past the struct of the version negotiated; the
//! descriptor as a whole; a collector's configuration once (`CheckedConfig`), then by the plugin's
//! own `validate`; every batch a stream pushes against the stream's schema before it is read, and
//! against its canonical table after. [`isolated`] runs a collector in a child process (the
//! `yosoku __collect` subcommand), its tables back as Arrow IPC frames, under a time limit and an
//! address-space limit.

mod error;
pub mod isolated;
mod plugin;
mod sink;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use error::HostError;
pub use plugin::{CheckedConfig, Collection, LoadedPlugin};
pub use sink::{InputRead, Progress};
pub use yosoku_plugin_abi::descriptor::{
    CollectorInfo, CollectorKind, ConfigKey, ConfigProblem, ConfigType, PluginInfo, check_config,
};

/// The importers of the plugins shipped with yosoku, as (plugin, collector): each reads its
/// files gzip-compressed as well as plain, told by their first bytes whatever their names (the
/// SDK's `read_input_to_string` and `inflate_if_gzip`). `yosoku plugins` names them; the
/// corpus test (crates/app/runner/tests/corpus.rs) imports a real file of each both ways.
pub const GZIP_READERS: &[(&str, &str)] = &[
    ("csx600_sdk_log", "microbench"),
    ("csx600_sdk_log", "profile"),
    ("cuda_profiler", "gpuperfpredict"),
    ("cuda_profiler", "legacy"),
    ("cuda_profiler", "ncu"),
    ("cuda_profiler", "neusight"),
    ("cuda_profiler", "nsys"),
    ("cuda_profiler", "nvprof"),
    ("mpi_timer", "logs"),
    ("mpi_timer", "tau_profile"),
    ("opencl", "logs"),
    ("rocm_profiler", "rocprof"),
    ("table", "extrap"),
    ("table", "file"),
    ("traces", "chrome_trace"),
    ("traces", "kernel_trace"),
];

/// Environment variable holding extra plugin directories or library files (`:`-separated on
/// Unix, `;` on Windows), searched before the default locations.
pub const PLUGIN_PATH_ENV: &str = "YOSOKU_PLUGIN_PATH";

/// Loads plugins from a search path.
#[derive(Debug, Clone)]
pub struct PluginHost {
    search_path: Vec<PathBuf>,
    abi_versions: Vec<u32>,
}

/// What a scan of the search path found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Loaded plugins by name. When two libraries carry the same plugin name, the first in search
    /// order wins and the other is reported in `problems`.
    pub plugins: BTreeMap<String, Arc<LoadedPlugin>>,
    /// Libraries that could not be loaded, and name clashes.
    pub problems: Vec<HostError>,
}

impl PluginHost {
    /// A host searching `search_path` (directories, or library files) in order.
    pub fn new(search_path: Vec<PathBuf>) -> Self {
        Self {
            search_path,
            abi_versions: yosoku_plugin_abi::YOSOKU_ABI_VERSIONS.to_vec(),
        }
    }

    /// The ABI versions offered to plugins, newest first: [`YOSOKU_ABI_VERSIONS`] unless
    /// changed here (a host restricted to older versions is how the tests play an older host).
    ///
    /// [`YOSOKU_ABI_VERSIONS`]: yosoku_plugin_abi::YOSOKU_ABI_VERSIONS
    pub fn with_abi_versions(mut self, versions: Vec<u32>) -> Self {
        self.abi_versions = versions;
        self
    }

    pub fn search_path(&self) -> &[PathBuf] {
        &self.search_path
    }

    /// The default search path: the entries of `YOSOKU_PLUGIN_PATH`, then `extra` (e.g. from a
    /// pipeline file or a command-line flag), then an installed tree's `../lib/yosoku/plugins`
    /// beside the running executable, then the executable's own directory (where cargo puts the
    /// plugins of this workspace).
    pub fn default_search_path(extra: &[PathBuf]) -> Vec<PathBuf> {
        let mut path: Vec<PathBuf> = std::env::var_os(PLUGIN_PATH_ENV)
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        path.extend(extra.iter().cloned());
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
        {
            // An installed tree (`cargo xtask install`): <prefix>/bin/yosoku beside
            // <prefix>/lib/yosoku/plugins.
            if let Ok(installed) = dir.join("../lib/yosoku/plugins").canonicalize()
                && installed.is_dir()
            {
                path.push(installed);
            }
            path.push(dir);
        }
        path
    }

    /// The plugin library files in the search path, in search order, without duplicates.
    pub fn candidate_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in &self.search_path {
            if entry.is_file() {
                files.push(entry.clone());
            } else if let Ok(dir) = std::fs::read_dir(entry) {
                let mut found: Vec<PathBuf> = dir
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_file() && is_plugin_file_name(p))
                    .collect();
                found.sort();
                files.extend(found);
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        files.retain(|f| seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())));
        files
    }

    /// Loads every plugin in the search path.
    pub fn discover(&self) -> Discovery {
        let mut discovery = Discovery::default();
        for file in self.candidate_files() {
            match self.load(&file) {
                Ok(plugin) => {
                    let name = plugin.info().name.clone();
                    if let Some(first) = discovery.plugins.get(&name) {
                        discovery.problems.push(HostError::DuplicateName {
                            name,
                            kept: first.path().to_path_buf(),
                            ignored: file,
                        });
                    } else {
                        discovery.plugins.insert(name, Arc::new(plugin));
                    }
                }
                Err(e) => discovery.problems.push(e),
            }
        }
        discovery
    }

    /// Loads the plugin called `name` from the search path.
    pub fn find(&self, name: &str) -> Result<Arc<LoadedPlugin>, HostError> {
        let mut discovery = self.discover();
        discovery
            .plugins
            .remove(name)
            .ok_or_else(|| HostError::UnknownPlugin {
                name: name.to_owned(),
                known: discovery.plugins.keys().cloned().collect(),
                searched: self.search_path.clone(),
                problems: discovery.problems.iter().map(ToString::to_string).collect(),
            })
    }

    /// Loads one plugin library: opens it, negotiates the ABI version, reads its descriptor.
    pub fn load(&self, path: &Path) -> Result<LoadedPlugin, HostError> {
        LoadedPlugin::load(path, &self.abi_versions)
    }
}

/// Whether a file name looks like a yosoku plugin library on this platform.
pub fn is_plugin_file_name(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let prefix = format!("{}yosoku_plugin_", std::env::consts::DLL_PREFIX);
    name.starts_with(&prefix) && name.ends_with(std::env::consts::DLL_SUFFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_file_names_follow_the_platform() {
        let name = format!(
            "{}yosoku_plugin_dummy{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        assert!(is_plugin_file_name(Path::new(&name)));
        assert!(!is_plugin_file_name(Path::new(
            "libyosoku_plugin_dummy.rlib"
        )));
        assert!(!is_plugin_file_name(Path::new("libserde_derive-1234.so")));
    }

    /// A plugin's collector and table names become the namespaces and names of a pipeline's
    /// tables: the descriptor's rule (plugin ABI) and the tables' rule (which the pipeline file
    /// checks its source and step names by) are one rule, stated in two crates.
    #[test]
    fn the_abi_and_the_tables_agree_on_valid_names() {
        let mut names: Vec<String> = (0..=255u8).map(|b| char::from(b).to_string()).collect();
        names.extend(
            [
                "", "ncu", "ncu_2", "ncu.runs", "Ncu", "a-b", "_", "é", "a b",
            ]
            .map(str::to_owned),
        );
        for name in &names {
            assert_eq!(
                yosoku_plugin_abi::descriptor::is_valid_name(name),
                yosoku_tables::is_valid_name(name),
                "{name:?}"
            );
        }
    }
}
