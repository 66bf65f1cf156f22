//! Write a yosoku plugin in safe Rust.
//!
//! A plugin is a type implementing [`Plugin`] (and `Default`), whose collectors implement
//! [`Collector`]; `export_plugin!(MyPlugin)` generates the one C entry point of the ABI
//! (docs/plugin-abi.md). No `extern "C"` is written by hand, every call is guarded against panics
//! (a panic becomes an error and poisons the plugin), and tables leave through the Arrow C stream
//! interface.
//!
//! ```ignore
//! use yosoku_plugin_sdk::{export_plugin, Collector, CollectorInfo, Config, ConfigKey, ConfigType,
//!     Output, Plugin, PluginError};
//!
//! #[derive(Default)]
//! struct MyDevice;
//!
//! impl Plugin for MyDevice {
//!     fn name(&self) -> &'static str { "my_device" }
//!     fn description(&self) -> &'static str { "Timings from my device's tool" }
//!     fn collectors(&self) -> Vec<Box<dyn Collector>> { vec![Box::new(Timings)] }
//! }
//!
//! struct Timings;
//! impl Collector for Timings {
//!     fn info(&self) -> CollectorInfo {
//!         CollectorInfo::importer("timings", "Reads timings.csv")
//!             .key(ConfigKey::required("path", ConfigType::Path, "the file"))
//!             .tables(&["runs"])
//!     }
//!     fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
//!         let path = config.path("path")?;
//!         // ... read it, build a `runs` batch with yosoku_tables::RUNS.batch(...)
//!         # let batch = todo!();
//!         out.push_batch("runs", batch)
//!     }
//! }
//!
//! export_plugin!(MyDevice);
//! ```
//!
//! A reader of a format of lines calls [`check_whole_lines`] on the text it reads (a file cut
//! inside its last value is refused, not read), and its tests can cut real files with [`testing::cut_copies`]:
//! every cut copy must be refused or import rows of the whole file unchanged.
//!
//! `export_plugin!` answers every ABI version the SDK knows, filling only the struct of the one the
//! host asked for. `read_input` hashes an input file while reading it, for the bundle's manifest;
//! `with_input` maps a large file rather than copying it and hashes it on another thread while the
//! reader parses it.

mod config;
pub mod formats;
mod guard;
mod input;
mod output;
pub mod process;
#[doc(hidden)]
pub mod runtime;
pub mod testing;

use std::path::Path;

pub use config::Config;
pub use input::{
    InputReader, check_whole_lines, inflate, inflate_if_gzip, is_gzip, open_input, read_input,
    read_input_to_string, with_input,
};
pub use output::Output;
pub use yosoku_plugin_abi as abi;
pub use yosoku_plugin_abi::descriptor::{
    CollectorInfo, CollectorKind, ConfigKey, ConfigType, PluginInfo,
};

/// A plugin: a name, a description and its collectors. Implement it with `Default` and pass the
/// type to [`export_plugin!`]. The plugin's version is its crate version.
pub trait Plugin: Send + Sync + 'static {
    /// Unique name: lowercase ASCII letters, digits and `_`.
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn collectors(&self) -> Vec<Box<dyn Collector>>;
}

/// One way the plugin produces tables: an importer (reads files a tool wrote) or a runner (runs
/// something and measures it). The host validates the configuration against [`Collector::info`]
/// before calling [`Collector::collect`].
pub trait Collector: Send + Sync {
    fn info(&self) -> CollectorInfo;

    /// Checks a configuration without collecting: what the types of [`Collector::info`] cannot
    /// say (a count of 0, an unknown format name). The host calls it for every source before
    /// any collector runs, so a mistake in the last source of a pipeline is found before the
    /// first runs for an hour. The default accepts every well-typed configuration.
    fn validate(&self, _config: &Config) -> Result<(), PluginError> {
        Ok(())
    }

    /// Collects: reads files (with [`read_input`], which hashes them on the way) or runs
    /// something, and pushes its tables into `out`.
    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError>;
}

/// An error a plugin reports. Its message should say which file, line and column or key, and
/// what was expected; the host prefixes the plugin and collector names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PluginError {
    message: String,
}

impl PluginError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// An error at a line (1-based) of a file: `path:line: message`.
    pub fn at_line(path: &Path, line: usize, message: impl std::fmt::Display) -> Self {
        Self::new(format!("{}:{line}: {message}", path.display()))
    }

    /// An error at a line and column (both 1-based) of a file: `path:line:column: message`.
    pub fn at(path: &Path, line: usize, column: usize, message: impl std::fmt::Display) -> Self {
        Self::new(format!("{}:{line}:{column}: {message}", path.display()))
    }

    /// An error at byte `offset` of `text`, the contents of the file at `path` (a TOML or JSON
    /// reader's span): `path:line:column: message`, both 1-based, the column in bytes.
    pub fn at_offset(
        path: &Path,
        text: &str,
        offset: usize,
        message: impl std::fmt::Display,
    ) -> Self {
        let before = &text.as_bytes()[..offset.min(text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.len()
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |n| n + 1);
        Self::at(path, line, column + 1, message)
    }

    /// A file that could not be read or written.
    pub fn io(path: &Path, error: &std::io::Error) -> Self {
        Self::new(format!("{}: {error}", path.display()))
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl From<yosoku_tables::TableMismatch> for PluginError {
    fn from(e: yosoku_tables::TableMismatch) -> Self {
        Self::new(e.to_string())
    }
}

/// Exports `$plugin` (a type implementing [`Plugin`] and `Default`) as a yosoku plugin: generates
/// the C entry point `yosoku_plugin_init`. Use it once, in the plugin's `lib.rs`; the crate must be
/// a `cdylib`.
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        /// The yosoku plugin ABI entry point, generated by `yosoku_plugin_sdk::export_plugin!`.
        ///
        /// # Safety
        /// Called by the yosoku host as docs/plugin-abi.md specifies.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn yosoku_plugin_init(
            abi_version: u32,
            out: *mut $crate::abi::YosokuPlugin,
            error: *mut $crate::abi::YosokuError,
        ) -> $crate::abi::YosokuStatus {
            static RUNTIME: ::std::sync::OnceLock<$crate::runtime::Runtime> =
                ::std::sync::OnceLock::new();
            // SAFETY: the host upholds the ABI contract for `out` and `error`.
            unsafe {
                $crate::runtime::init(abi_version, out, error, &RUNTIME, || {
                    $crate::runtime::Runtime::new(
                        ::std::boxed::Box::new(<$plugin as ::core::default::Default>::default()),
                        env!("CARGO_PKG_VERSION"),
                    )
                })
            }
        }
    };
}

/// Hands memory the plugin has freed back to the operating system: glibc's allocator keeps freed
/// blocks of its heap for reuse (a large `Vec` shrunk as it is consumed stays resident), and
/// `malloc_trim` returns their pages. A plugin that lets go of hundreds of MB while it builds its
/// tables (the MPI timer's parsed calls and blocks) calls this so that what it no longer holds
/// does not count against the run's memory. Does nothing where the C library is not glibc.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: `malloc_trim` only returns free memory of the allocator's arenas; it takes no
        // pointers and is safe to call from any thread at any time.
        unsafe {
            malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader's span names the line and column of its first byte, past every line end before
    /// it; an offset beyond the text names its end.
    #[test]
    fn an_offset_is_named_by_its_line_and_column() {
        let path = Path::new("mine.toml");
        let text = "[[metric]]\nname = \"x\"\nkind = \"speed\"\n";
        let e = PluginError::at_offset(path, text, text.find("\"speed").unwrap(), "unknown kind");
        assert_eq!(e.to_string(), "mine.toml:3:8: unknown kind");
        assert_eq!(
            PluginError::at_offset(path, text, 0, "here").to_string(),
            "mine.toml:1:1: here"
        );
        assert_eq!(
            PluginError::at_offset(path, text, 10_000, "end").to_string(),
            "mine.toml:4:1: end"
        );
    }
}
