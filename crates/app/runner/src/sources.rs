//! Sources' input files, for a pipeline's sources and a command's profile alike: `*` and `?`
//! patterns expanded, directories listed file by file, path-typed configuration values resolved
//! against a base directory, and every file hashed for the manifest ([`hashed_inputs`]).
//! [`import`] collects one source for a command (`yosoku predict --profile`) with the same checks
//! a pipeline's source has: the host's check of its configuration, the plugin's own `validate`,
//! its paths resolved and its files hashed.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use serde_json::{Map, Value};
use yosoku_bundle::{InputFile, PluginRecord};
use yosoku_plugin_host::{
    CheckedConfig, CollectorInfo, ConfigProblem, HostError, InputRead, LoadedPlugin, PluginHost,
};

pub(crate) fn is_pattern(path: &str) -> bool {
    path.contains('*') || path.contains('?')
}

/// Whether `name` matches `pattern` (`*`: any run of characters, `?`: one character).
fn matches_pattern(pattern: &[char], name: &[char]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some('*'), _) => {
            matches_pattern(&pattern[1..], name)
                || (!name.is_empty() && matches_pattern(pattern, &name[1..]))
        }
        (Some('?'), Some(_)) => matches_pattern(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => matches_pattern(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The files (as written: relative to `base` when the pattern is) that `written` matches, sorted
/// by path: `*` and `?` may stand in any component, a directory's (`runs/*/ncu.csv`: every run's
/// report) or the file's.
fn expand_pattern(base: &Path, written: &str) -> Result<Vec<String>, String> {
    let (dir, file) = match written.rsplit_once('/') {
        Some((d, f)) => (Some(d), f),
        None => (None, written),
    };
    // The directories the pattern's directory part names, as written.
    let mut dirs: Vec<Option<String>> = vec![None];
    for component in dir.into_iter().flat_map(|d| d.split('/')) {
        let mut next = Vec::new();
        for d in &dirs {
            let join = |name: &str| {
                Some(
                    d.as_ref()
                        .map_or_else(|| name.to_owned(), |d| format!("{d}/{name}")),
                )
            };
            if is_pattern(component) {
                next.extend(
                    matching(base, d.as_deref(), component, true)?
                        .iter()
                        .map(|n| join(n)),
                );
            } else {
                next.push(join(component));
            }
        }
        dirs = next;
    }
    let mut paths = Vec::new();
    for d in &dirs {
        let names = if dirs.len() > 1 && !base.join(d.as_deref().unwrap_or(".")).is_dir() {
            Vec::new()
        } else {
            matching(base, d.as_deref(), file, false)?
        };
        paths.extend(names.into_iter().map(|n| match d {
            Some(d) => format!("{d}/{n}"),
            None => n,
        }));
    }
    paths.sort();
    if paths.is_empty() {
        return Err(format!("no file matches `{written}` in {}", base.display()));
    }
    Ok(paths)
}

/// The names in `base`/`dir` of the directories (`directories`) or files that `pattern` (no
/// `/`) matches; a name without `*` or `?` stands for itself, if it is there. A pattern in the
/// last directory that matches nothing there is no error: others may match.
fn matching(
    base: &Path,
    dir: Option<&str>,
    pattern: &str,
    directories: bool,
) -> Result<Vec<String>, String> {
    let directory = base.join(dir.unwrap_or("."));
    if !is_pattern(pattern) {
        let there = directory.join(pattern);
        let kind = if directories {
            there.is_dir()
        } else {
            there.is_file()
        };
        return Ok(if kind {
            vec![pattern.to_owned()]
        } else {
            Vec::new()
        });
    }
    let entries = std::fs::read_dir(&directory)
        .map_err(|e| format!("cannot list {} for `{pattern}`: {e}", directory.display()))?;
    let pattern: Vec<char> = pattern.chars().collect();
    Ok(entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_type()
                .is_ok_and(|t| if directories { t.is_dir() } else { t.is_file() })
        })
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| matches_pattern(&pattern, &n.chars().collect::<Vec<_>>()))
        .collect())
}

/// The files a path input stands for: the file itself (shown as ""), or every file under a
/// directory in sorted order (shown relative to it).
fn files_of(path: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        return Ok(vec![(path.to_path_buf(), String::new())]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let shown = p
                    .strip_prefix(path)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                out.push((p, shown));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// What is wrong with the value of a path-typed configuration key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PathProblem {
    pub key: String,
    pub message: String,
}

/// An input file of a source, listed before it is collected and hashed after.
#[derive(Debug, Clone)]
pub(crate) struct PendingInput {
    /// The config key it is given by.
    pub key: String,
    /// The path as the manifest shows it (as written, or under the directory written).
    pub shown: String,
    /// The path the plugin is given.
    pub file: PathBuf,
}

/// Resolves the `path` and `path_list` values of a checked configuration against `base` (a `*`
/// or `?` stands for the files that match, in name order), checks that each can be read, and
/// lists the files they stand for (every file under a directory), to be hashed when the source
/// is collected.
pub(crate) fn resolve_paths(
    base: &Path,
    config: &mut CheckedConfig,
) -> Result<Vec<PendingInput>, PathProblem> {
    let mut inputs = Vec::new();
    for (key, is_list, written_items) in config.paths() {
        let at = |message: String| PathProblem {
            key: key.clone(),
            message,
        };
        let mut expanded: Vec<String> = Vec::new();
        for written in written_items {
            if !is_pattern(&written) {
                expanded.push(written);
                continue;
            }
            let matched = expand_pattern(base, &written).map_err(at)?;
            if !is_list && matched.len() > 1 {
                return Err(at(format!(
                    "takes one file; `{written}` matches {}",
                    matched.len()
                )));
            }
            expanded.extend(matched);
        }
        let mut resolved = Vec::with_capacity(expanded.len());
        for written in expanded {
            let path = base.join(&written);
            // A directory input (a run's logs) is every file in it.
            let files =
                files_of(&path).map_err(|e| at(format!("cannot read {}: {e}", path.display())))?;
            for (file, shown) in files {
                inputs.push(PendingInput {
                    key: key.clone(),
                    shown: if shown.is_empty() {
                        written.clone()
                    } else {
                        format!("{}/{shown}", written.trim_end_matches('/'))
                    },
                    file,
                });
            }
            resolved.push(path.display().to_string());
        }
        if !config.set_paths(&key, resolved) {
            return Err(at(
                "internal error: the path value could not be replaced".into()
            ));
        }
    }
    Ok(inputs)
}

/// The manifest's records of a source's input files: each with the hash the plugin reported
/// while reading it (`read`), or, for a file it did not report, one computed here reading it
/// once.
pub(crate) fn hashed_inputs(
    source: &str,
    pending: Vec<PendingInput>,
    read: &[InputRead],
) -> Result<Vec<InputFile>, PathProblem> {
    let mut inputs = Vec::with_capacity(pending.len());
    for p in pending {
        let input =
            match read.iter().find(|r| r.path == p.file) {
                Some(r) => InputFile {
                    source: source.to_owned(),
                    key: p.key,
                    path: p.shown,
                    sha256: r.sha256_hex.clone(),
                    size_bytes: r.size_bytes,
                },
                None => yosoku_bundle::fs::hashed_input(source, &p.key, p.shown, &p.file).map_err(
                    |e| PathProblem {
                        key: p.key.clone(),
                        message: format!("cannot read it: {e}"),
                    },
                )?,
            };
        inputs.push(input);
    }
    Ok(inputs)
}

/// The manifest's record of the plugin a source was collected by.
pub(crate) fn plugin_record(plugin: &LoadedPlugin) -> PluginRecord {
    PluginRecord {
        name: plugin.info().name.clone(),
        version: plugin.info().version.clone(),
        abi_version: plugin.abi_version(),
        library: plugin
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// Why a command's source could not be imported: each names the source and the plugin.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{what} ({plugin} / {collector}): {error}")]
    Plugin {
        what: String,
        plugin: String,
        collector: String,
        error: Box<HostError>,
    },
    #[error("{what} ({plugin} / {collector}): {}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Config {
        what: String,
        plugin: String,
        collector: String,
        problems: Vec<ConfigProblem>,
    },
    #[error("{what}, config key `{key}`: {message}")]
    Path {
        what: String,
        key: String,
        message: String,
    },
    /// The collector's configuration could not be made from what the command was given.
    #[error("{what} ({plugin} / {collector}): {message}")]
    Request {
        what: String,
        plugin: String,
        collector: String,
        message: String,
    },
}

/// A source to collect for a command, outside any pipeline file.
#[derive(Debug)]
pub struct SourceRequest<'a> {
    /// What the command calls it in messages (`profile a.csv`).
    pub what: String,
    /// The source's name in the manifest's inputs.
    pub name: &'a str,
    pub plugin: &'a str,
    pub collector: &'a str,
    /// Extra plugin directories or libraries, searched first.
    pub plugin_path: &'a [PathBuf],
}

/// What [`import`] collected: the tables, the input files hashed, the plugin.
#[derive(Debug)]
pub struct Imported {
    pub tables: Vec<(String, RecordBatch)>,
    pub inputs: Vec<InputFile>,
    pub plugin: PluginRecord,
}

/// Collects one source for a command: its plugin found on the search path, its configuration
/// (made by `config` from what the collector takes) checked by the host and by the plugin's own
/// `validate`, its paths resolved against the working directory, its files hashed.
pub fn import(
    request: &SourceRequest<'_>,
    config: impl FnOnce(&CollectorInfo) -> Result<Map<String, Value>, String>,
) -> Result<Imported, ImportError> {
    let plugin_error = |error: HostError| ImportError::Plugin {
        what: request.what.clone(),
        plugin: request.plugin.to_owned(),
        collector: request.collector.to_owned(),
        error: Box::new(error),
    };
    let host = PluginHost::new(PluginHost::default_search_path(request.plugin_path));
    let plugin = host.find(request.plugin).map_err(plugin_error)?;
    let info = plugin.collector(request.collector).map_err(plugin_error)?;
    let values = config(info).map_err(|message| ImportError::Request {
        what: request.what.clone(),
        plugin: request.plugin.to_owned(),
        collector: request.collector.to_owned(),
        message,
    })?;
    let mut checked = match plugin.check_config(request.collector, &values) {
        Ok(c) => c,
        Err(HostError::Config { problems, .. }) => {
            return Err(ImportError::Config {
                what: request.what.clone(),
                plugin: request.plugin.to_owned(),
                collector: request.collector.to_owned(),
                problems,
            });
        }
        Err(e) => return Err(plugin_error(e)),
    };
    let path_error = |p: PathProblem| ImportError::Path {
        what: request.what.clone(),
        key: p.key,
        message: p.message,
    };
    let pending = resolve_paths(Path::new("."), &mut checked).map_err(path_error)?;
    plugin.validate(&checked).map_err(plugin_error)?;
    let collection = plugin
        .collect(&checked, &mut |_| {})
        .map_err(plugin_error)?;
    let inputs =
        hashed_inputs(request.name, pending, &collection.inputs_read).map_err(path_error)?;
    Ok(Imported {
        tables: collection.tables,
        inputs,
        plugin: plugin_record(&plugin),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_file_names_and_expand_in_name_order() {
        let m = |p: &str, n: &str| {
            matches_pattern(
                &p.chars().collect::<Vec<_>>(),
                &n.chars().collect::<Vec<_>>(),
            )
        };
        assert!(m("*.csv.gz", "kernel-GTX-680.csv.gz"));
        assert!(m("kernel-*-K?0.csv.gz", "kernel-Tesla-K40.csv.gz"));
        assert!(!m("*.csv", "a.csv.gz"));
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.log", "a.log", "c.txt"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/z.log"), "x").unwrap();
        assert_eq!(
            expand_pattern(dir.path(), "*.log").unwrap(),
            ["a.log", "b.log"]
        );
        assert_eq!(
            expand_pattern(dir.path(), "sub/*.log").unwrap(),
            ["sub/z.log"]
        );
        assert!(
            expand_pattern(dir.path(), "*.csv")
                .unwrap_err()
                .contains("no file matches `*.csv`")
        );
        // A pattern in a directory: every matching directory's files, sorted by path.
        std::fs::create_dir(dir.path().join("sab")).unwrap();
        std::fs::write(dir.path().join("sab/z.log"), "x").unwrap();
        std::fs::write(dir.path().join("sab/y.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("other")).unwrap();
        assert_eq!(
            expand_pattern(dir.path(), "s*/z.log").unwrap(),
            ["sab/z.log", "sub/z.log"]
        );
        assert_eq!(
            expand_pattern(dir.path(), "*/*.txt").unwrap(),
            ["sab/y.txt"]
        );
        assert!(
            expand_pattern(dir.path(), "o*/z.log")
                .unwrap_err()
                .contains("no file matches `o*/z.log`")
        );
    }
}
