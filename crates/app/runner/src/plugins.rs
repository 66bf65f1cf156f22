//! `yosoku plugins`: the plugins found on the search path, and the entry point of a collector
//! run in a process of its own (`yosoku __collect`, what `isolate` starts).

use std::path::{Path, PathBuf};

use yosoku_plugin_host::PluginHost;
pub use yosoku_plugin_host::{Discovery, GZIP_READERS, LoadedPlugin, Progress};

/// The plugins found, with the problems met, and the directories searched, in order.
#[derive(Debug)]
pub struct PluginListing {
    pub discovery: Discovery,
    pub search_path: Vec<PathBuf>,
}

/// Finds the plugins of `plugin_path` (searched first) and of the default locations.
pub fn list(plugin_path: &[PathBuf]) -> PluginListing {
    let host = PluginHost::new(PluginHost::default_search_path(plugin_path));
    PluginListing {
        discovery: host.discover(),
        search_path: host.search_path().to_vec(),
    }
}

/// Runs the collector `collector` of the plugin `library` in this process for a parent that
/// started it isolated, and returns the process's exit code.
pub fn serve_isolated_collection(
    library: &Path,
    collector: &str,
    memory_limit_bytes: Option<u64>,
) -> i32 {
    yosoku_plugin_host::isolated::serve(library, collector, memory_limit_bytes)
}
