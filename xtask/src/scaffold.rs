//! `cargo xtask new-plugin`: the way a user adds a device. Writes a plugin crate under plugins/
//! (a workspace member through the `plugins/*` glob) with a working example importer and a test.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::run_cmd;

/// The cargo package name of plugin `name`.
pub fn crate_name(name: &str) -> String {
    format!("yosoku-plugin-{}", name.replace('_', "-"))
}

fn type_name(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

pub fn validate_name(name: &str) -> Result<()> {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.ends_with('_');
    if !ok {
        bail!(
            "plugin name `{name}`: use lowercase ASCII letters, digits and `_`, starting with a letter"
        );
    }
    Ok(())
}

fn render(template: &str, name: &str) -> String {
    template
        .replace("{{name}}", name)
        .replace("{{crate}}", &crate_name(name))
        .replace("{{Type}}", &type_name(name))
}

/// Creates plugins/<name> in the workspace at `root`.
pub fn new_plugin(root: &Path, name: &str) -> Result<PathBuf> {
    validate_name(name)?;
    let dir = root.join("plugins").join(name);
    if dir.exists() {
        bail!("{} exists already", dir.display());
    }
    let files = [
        ("Cargo.toml", CARGO_TOML),
        ("README.md", README),
        ("src/lib.rs", LIB_RS),
    ];
    for (file, template) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap_or(&dir))
            .with_context(|| format!("cannot create {}", path.display()))?;
        std::fs::write(&path, render(template, name))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    add_architecture_row(root, name)?;
    Ok(dir)
}

/// Adds the new crate's row to ARCHITECTURE.md's crate table, after the last plugin's (the
/// table is in layer order), with the dependencies the crate is generated with; a test keeps the
/// table in step with the crate directories and their dependencies.
fn add_architecture_row(root: &Path, name: &str) -> Result<()> {
    let path = root.join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let row = format!(
        "| `{}` | `plugins/{name}` | Plugin `{name}`: describe what it collects. | plugin-sdk, tables | — |\n",
        crate_name(name)
    );
    let last_plugin = text
        .match_indices("| `plugins/")
        .last()
        .and_then(|(at, _)| text[at..].find('\n').map(|end| at + end + 1));
    let Some(at) = last_plugin else {
        bail!(
            "{}: no plugin's row in the crate table to add the new plugin's row after",
            path.display()
        );
    };
    let updated = format!("{}{row}{}", &text[..at], &text[at..]);
    std::fs::write(&path, updated).with_context(|| format!("cannot write {}", path.display()))
}

/// Copies the workspace (without build output, results or git data) to `to`.
fn copy_workspace(from: &Path, to: &Path) -> Result<()> {
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))?
    {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if matches!(name.as_ref(), "target" | "results" | "dist" | ".git") {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&dst)?;
            copy_workspace(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).with_context(|| format!("cannot copy {}", src.display()))?;
        }
    }
    Ok(())
}

/// Proves the scaffold on a copy of the workspace: `new-plugin` writes the crate and its
/// ARCHITECTURE.md row, the new crate's tests pass, its library builds where the host looks, and
/// `yosoku` (this checkout's, at `yosoku`) lists it. The copy's sources are never this checkout's.
///
/// The copy builds into this checkout's target directory `target`: cargo names a workspace
/// crate's artifacts after its path relative to the workspace root, so the copy's dependencies
/// (identical sources) are the ones the test run built and only the new crate and two crates
/// with the new crate's feature set compile (a target directory of its own built arrow, parquet
/// and faer again: 3 min 40 s of a cold `cargo xtask test` on a 2-vCPU VM). Nothing in the copy
/// that embeds its own path (xtask) is built there; the new library is removed from the shared
/// output directory when the check ends.
pub fn check(root: &Path, target: &Path, yosoku: &Path) -> Result<()> {
    let copy = target.join("scaffold-check/workspace");
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy)?;
    copy_workspace(root, &copy)?;
    let name = "scaffold_probe";
    new_plugin(&copy, name)?;
    crate::architecture::check_crate_table(&copy)?;
    let text = std::fs::read_to_string(copy.join("ARCHITECTURE.md"))?;
    let problems = crate::architecture::check_dependencies(
        &text,
        &crate::architecture::workspace_packages(&copy)?,
    )?;
    if !problems.is_empty() {
        bail!("the new plugin's row breaks the dependency rules: {problems:#?}");
    }
    // `crate::cargo()`'s environment: in `cargo xtask test`, clippy's driver as the workspace
    // wrapper (the new crate is linted, and its dependencies are the test build's artifacts).
    let cargo = || {
        let mut cmd = crate::cargo();
        cmd.current_dir(&copy).env("CARGO_TARGET_DIR", target);
        cmd
    };
    let library = target.join("debug").join(format!(
        "{}yosoku_plugin_{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let listed = (|| {
        run_cmd(cargo().args(["test", "-p", &crate_name(name)]))?;
        run_cmd(cargo().args(["build", "-p", &crate_name(name)]))?;
        let out = Command::new(yosoku)
            .arg("plugins")
            .env_remove("YOSOKU_PLUGIN_PATH")
            .output()
            .with_context(|| format!("cannot run {}", yosoku.display()))?;
        let listing = String::from_utf8_lossy(&out.stdout);
        if !out.status.success()
            || !listing.contains(&format!("{name} 0.1.0"))
            || !listing.contains("timings [importer]")
        {
            bail!(
                "`yosoku plugins` does not list the new plugin:\n{listing}{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    })();
    // The probe must not stay where every later `yosoku` run of this checkout looks for plugins
    // (its library, its Rust library and their dependency files).
    for extension in [std::env::consts::DLL_EXTENSION, "rlib", "d"] {
        let _ = std::fs::remove_file(library.with_extension(extension));
    }
    let _ = std::fs::remove_dir_all(&copy);
    listed?;
    eprintln!("xtask: new-plugin scaffold: builds, its test passes, `yosoku plugins` lists it");
    Ok(())
}

const CARGO_TOML: &str = r#"[package]
name = "{{crate}}"
description = "yosoku plugin `{{name}}`"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
publish.workspace = true

[lib]
# cdylib: the library the yosoku host loads; rlib: for this crate's own tests.
crate-type = ["cdylib", "rlib"]

[dependencies]
yosoku-plugin-sdk.workspace = true
yosoku-tables.workspace = true
arrow-array.workspace = true

[lints]
workspace = true
"#;

const README: &str = r#"# Plugin `{{name}}`

Generated by `cargo xtask new-plugin {{name}}`. It builds into `lib yosoku_plugin_{{name}}` (the
platform's shared-library name), which `yosoku` finds beside its own executable or in a directory
named by `YOSOKU_PLUGIN_PATH`.

It starts with one example importer, `timings`, that reads a CSV file of measured run times:

```text
program,variant,seconds
matmul,n=1024,0.125
```

and returns it as the canonical `runs` table (docs/tables.md). Replace it with collectors for
what your device's tools write (importers) or for running and measuring something (runners); the
plugin ABI is described in docs/plugin-abi.md. Use it from a pipeline:

```toml
[sources.mine]
plugin = "{{name}}"
collector = "timings"
config = { path = "data/my-timings.csv" }
```

Check it: `cargo test -p {{crate}}`, then `cargo build -p {{crate}}` and `yosoku plugins`.
"#;

const LIB_RS: &str = r#"//! `{{name}}`: a yosoku plugin, generated by `cargo xtask new-plugin {{name}}`.
//!
//! Replace the example importer with collectors for your device's tools.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_sdk::{
    Collector, CollectorInfo, Config, ConfigKey, ConfigType, Output, Plugin, PluginError,
    export_plugin, read_input_to_string,
};
use yosoku_tables::RUNS;

#[derive(Debug, Default)]
pub struct {{Type}};

impl Plugin for {{Type}} {
    fn name(&self) -> &'static str {
        "{{name}}"
    }

    fn description(&self) -> &'static str {
        "Run times from a CSV file (the example importer of a new plugin)"
    }

    fn collectors(&self) -> Vec<Box<dyn Collector>> {
        vec![Box::new(Timings)]
    }
}

export_plugin!({{Type}});

/// Example importer: a CSV file with the header `program,variant,seconds`.
struct Timings;

impl Collector for Timings {
    fn info(&self) -> CollectorInfo {
        CollectorInfo::importer("timings", "Run times from a `program,variant,seconds` CSV file")
            .key(ConfigKey::required("path", ConfigType::Path, "The CSV file"))
            .key(ConfigKey::optional(
                "device",
                ConfigType::String,
                Some("{{name}}".into()),
                "Device name written into every row",
            ))
            .tables(&["runs"])
    }

    fn collect(&self, config: &Config, out: &mut Output<'_>) -> Result<(), PluginError> {
        let path = config.path("path")?;
        // Read with the SDK: the file is hashed on the way, and the host records it in the
        // bundle's manifest without reading it again.
        let text = read_input_to_string(&path)?;
        out.push_batch("runs", parse_timings(&path, &text, &config.string("device")?)?)
    }
}

/// Parses the CSV text of `path` into a `runs` table. Errors name the line and column; a file
/// cut short (no newline after its last line) is refused, not read.
pub fn parse_timings(path: &Path, text: &str, device: &str) -> Result<RecordBatch, PluginError> {
    yosoku_plugin_sdk::check_whole_lines(path, text)?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    match lines.next() {
        Some((_, header)) if header.trim() == "program,variant,seconds" => {}
        Some((i, header)) => {
            return Err(PluginError::at(path, i + 1, 1, format!("expected the header `program,variant,seconds`, found `{header}`")));
        }
        None => return Err(PluginError::new(format!("{}: empty file", path.display()))),
    }
    let (mut programs, mut variants, mut seconds) = (Vec::new(), Vec::new(), Vec::new());
    for (i, line) in lines {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != 3 {
            return Err(PluginError::at(path, i + 1, 1, format!("expected 3 fields, found {}", fields.len())));
        }
        let column = fields[0].len() + fields[1].len() + 3;
        let value: f64 = fields[2].trim().parse().map_err(|_| {
            PluginError::at(path, i + 1, column, format!("column `seconds`: expected a number, found `{}`", fields[2]))
        })?;
        if !(value.is_finite() && value > 0.0) {
            return Err(PluginError::at(path, i + 1, column, format!("column `seconds`: expected a number > 0, found {value}")));
        }
        programs.push(fields[0].trim().to_owned());
        variants.push(fields[1].trim().to_owned());
        seconds.push(value);
    }
    let n = programs.len();
    let ids: Vec<String> = programs.iter().zip(&variants).map(|(p, v)| format!("{p}/{v}")).collect();
    Ok(RUNS.batch(vec![
        Arc::new(StringArray::from(ids)),
        Arc::new(StringArray::from(vec![device; n])),
        Arc::new(StringArray::from(programs)),
        Arc::new(StringArray::from(variants)),
        Arc::new(StringArray::from(vec![None::<&str>; n])),
        Arc::new(StringArray::from(vec!["total"; n])),
        Arc::new(Int64Array::from(vec![1; n])),
        Arc::new(Float64Array::from(seconds)),
    ])?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_timings_and_names_bad_values() {
        let path = Path::new("t.csv");
        let runs = parse_timings(path, "program,variant,seconds\nmatmul,n=1024,0.125\n", "gpu").unwrap();
        assert_eq!(runs.num_rows(), 1);
        let err = parse_timings(path, "program,variant,seconds\nmatmul,n=1024,fast\n", "gpu").unwrap_err();
        assert_eq!(err.to_string(), "t.csv:2:15: column `seconds`: expected a number, found `fast`");
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_crate_and_type_names() {
        assert_eq!(crate_name("open_cl"), "yosoku-plugin-open-cl");
        assert_eq!(type_name("open_cl2"), "OpenCl2");
        assert!(validate_name("cuda_profiler").is_ok());
        for bad in ["", "Cuda", "2cuda", "cu-da", "cuda_"] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
