use std::path::PathBuf;

use yosoku_plugin_abi::descriptor::ConfigProblem;

/// Everything that can go wrong finding, loading or calling a plugin. Every message names the
/// library file or the plugin (and collector, and table) it is about.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot load plugin library {}: {message}", path.display())]
    Load { path: PathBuf, message: String },

    #[error(
        "{} is not a yosoku plugin: it does not export `yosoku_plugin_init` ({message})",
        path.display()
    )]
    NoEntryPoint { path: PathBuf, message: String },

    #[error(
        "plugin library {} speaks none of the ABI versions this host offers ({offered:?}): {message}",
        path.display()
    )]
    VersionMismatch {
        path: PathBuf,
        offered: Vec<u32>,
        message: String,
    },

    #[error("plugin library {}: {message}", path.display())]
    Init { path: PathBuf, message: String },

    #[error("plugin library {}: invalid descriptor: {message}", path.display())]
    Descriptor { path: PathBuf, message: String },

    #[error(
        "two plugin libraries are called `{name}`: using {} and ignoring {}",
        kept.display(),
        ignored.display()
    )]
    DuplicateName {
        name: String,
        kept: PathBuf,
        ignored: PathBuf,
    },

    #[error("{}", unknown_plugin(name, known, searched, problems))]
    UnknownPlugin {
        name: String,
        known: Vec<String>,
        searched: Vec<PathBuf>,
        problems: Vec<String>,
    },

    #[error("plugin `{plugin}` has no collector `{collector}`; it has: {}", known.join(", "))]
    UnknownCollector {
        plugin: String,
        collector: String,
        known: Vec<String>,
    },

    #[error("plugin `{plugin}`, collector `{collector}`: {}", join(problems))]
    Config {
        plugin: String,
        collector: String,
        problems: Vec<ConfigProblem>,
    },

    #[error("plugin `{plugin}`, collector `{collector}` refused its configuration: {message}")]
    Validate {
        plugin: String,
        collector: String,
        message: String,
    },

    #[error("plugin `{plugin}`, collector `{collector}` failed: {message}")]
    Collect {
        plugin: String,
        collector: String,
        message: String,
    },

    #[error(
        "plugin `{plugin}`, collector `{collector}` panicked and the plugin is now poisoned: {message}"
    )]
    Panicked {
        plugin: String,
        collector: String,
        message: String,
    },

    #[error("plugin `{plugin}` is poisoned by an earlier panic and refuses calls: {message}")]
    Poisoned { plugin: String, message: String },

    /// A collector run in a process of its own (`isolate = true`) that could not finish: its
    /// process died, ran out of time or of its memory limit, or could not be started.
    #[error("plugin `{plugin}`, collector `{collector}` (run in a process of its own) {message}")]
    Isolated {
        plugin: String,
        collector: String,
        message: String,
    },

    /// An error of a collection in a child process, as the child reported it (the text of one of
    /// the other variants).
    #[error("{message}")]
    Child { message: String },

    #[error("plugin `{plugin}`, collector `{collector}`, table `{table}`: {message}")]
    Table {
        plugin: String,
        collector: String,
        table: String,
        message: String,
    },
}

fn join(problems: &[ConfigProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn unknown_plugin(
    name: &str,
    known: &[String],
    searched: &[PathBuf],
    problems: &[String],
) -> String {
    let mut text = format!("no plugin called `{name}`");
    if known.is_empty() {
        text.push_str("; no plugins were found");
    } else {
        text.push_str(&format!("; found: {}", known.join(", ")));
    }
    let dirs: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
    text.push_str(&format!(
        " (searched: {}; add a directory with YOSOKU_PLUGIN_PATH, or build the plugins with `cargo build --workspace`)",
        dirs.join(", ")
    ));
    for p in problems {
        text.push_str(&format!("\n  also: {p}"));
    }
    text
}
