//! Keeps ARCHITECTURE.md true, and its rules kept:
//!
//! - the crate table: every crate directory has a row and every row a crate, each row's job is
//!   one line of under 25 words ([`check_crate_table`]);
//! - the dependency rules: each crate's dependencies on the workspace's crates, as `cargo
//!   metadata` reports them, are exactly its row's `uses` and `tests also use` cells, and every
//!   crate it uses is in a layer its own layer may use ([`check_dependencies`]).
//!
//! The rules of the code itself (no circle among the viewer's modules, no function over 150
//! lines) are `source_rules`' tests.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// Most words a crate's job may take in its row.
const MAX_JOB_WORDS: usize = 25;

/// What a `uses` cell says for "no crate".
const NONE: &str = "—";

/// What a cell says to allow any crate under `plugins/` (the runner's tests load whichever
/// plugins they need; a new plugin needs no edit of the runner's row).
const ANY_PLUGIN: &str = "any plugin";

/// One row of the crate table.
#[derive(Debug, Clone)]
struct CrateRow {
    name: String,
    dir: String,
    job: String,
    uses: String,
    tests_use: String,
}

/// One row of the layer table.
#[derive(Debug, Clone)]
struct LayerRow {
    layer: String,
    /// `crates/core/*` (every crate directory directly inside) or `viewer` (that directory).
    dirs: Vec<String>,
    may_use: BTreeSet<String>,
}

/// A workspace crate as `cargo metadata` describes it: its directory relative to the workspace
/// root, and the workspace crates it depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    pub name: String,
    pub dir: String,
    /// Normal and build dependencies.
    pub uses: BTreeSet<String>,
    /// Dev-dependencies that are not also normal ones.
    pub tests_use: BTreeSet<String>,
}

/// The cells of the rows of the Markdown table whose header row is `header` (exactly).
fn table_rows(text: &str, header: &str) -> Result<Vec<Vec<String>>> {
    let mut lines = text.lines().skip_while(|l| l.trim() != header);
    if lines.next().is_none() {
        bail!("no table with the header `{header}`");
    }
    Ok(lines
        .skip(1) // |---|---|
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect())
}

fn crate_rows(text: &str) -> Result<Vec<CrateRow>> {
    table_rows(
        text,
        "| crate | directory | what it is for | uses | tests also use |",
    )?
    .into_iter()
    .map(|cells| match cells.as_slice() {
        [name, dir, job, uses, tests_use] => Ok(CrateRow {
            name: name.trim_matches('`').to_owned(),
            dir: dir.trim_matches('`').to_owned(),
            job: job.clone(),
            uses: uses.clone(),
            tests_use: tests_use.clone(),
        }),
        _ => bail!("a crate row has {} cells, not 5: {cells:?}", cells.len()),
    })
    .collect()
}

fn layer_rows(text: &str) -> Result<Vec<LayerRow>> {
    table_rows(text, "| layer | directories | may use |")?
        .into_iter()
        .map(|cells| match cells.as_slice() {
            [layer, dirs, may_use] => Ok(LayerRow {
                layer: layer.clone(),
                dirs: dirs
                    .split(',')
                    .map(|d| d.trim().trim_matches('`').to_owned())
                    .collect(),
                may_use: may_use.split(',').map(|l| l.trim().to_owned()).collect(),
            }),
            _ => bail!("a layer row has {} cells, not 3: {cells:?}", cells.len()),
        })
        .collect()
}

/// The layer whose directories hold crate directory `dir`.
fn layer_of<'a>(layers: &'a [LayerRow], dir: &str) -> Option<&'a LayerRow> {
    layers.iter().find(|l| {
        l.dirs
            .iter()
            .any(|pattern| match pattern.strip_suffix("/*") {
                Some(parent) => dir
                    .strip_prefix(parent)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .is_some_and(|rest| !rest.is_empty() && !rest.contains('/')),
                None => dir == pattern,
            })
    })
}

/// The crate directories of the workspace at `root`: those with a Cargo.toml directly inside
/// `crates/<layer>/`, `plugins/`, and `viewer` and `xtask`.
fn crate_dirs(root: &Path) -> Result<BTreeSet<String>> {
    let mut dirs = BTreeSet::new();
    let mut parents = vec!["plugins".to_owned()];
    let crates = root.join("crates");
    for entry in
        std::fs::read_dir(&crates).with_context(|| format!("cannot list {}", crates.display()))?
    {
        let path = entry?.path();
        if path.is_dir() {
            parents.push(format!(
                "crates/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
        }
    }
    for parent in parents {
        let listing = root.join(&parent);
        for entry in std::fs::read_dir(&listing)
            .with_context(|| format!("cannot list {}", listing.display()))?
        {
            let path = entry?.path();
            if path.join("Cargo.toml").is_file() {
                dirs.insert(format!(
                    "{parent}/{}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    for top in ["viewer", "xtask"] {
        if root.join(top).join("Cargo.toml").is_file() {
            dirs.insert(top.to_owned());
        }
    }
    Ok(dirs)
}

/// Fails, naming them, where a crate directory of the workspace at `root` has no row in
/// ARCHITECTURE.md's crate table, a row names no crate directory, or a row's job is not one short
/// line.
pub fn check_crate_table(root: &Path) -> Result<()> {
    let path = root.join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let rows = crate_rows(&text).with_context(|| path.display().to_string())?;
    let listed: BTreeSet<String> = rows.iter().map(|r| r.dir.clone()).collect();
    let dirs = crate_dirs(root)?;
    let missing: Vec<_> = dirs.difference(&listed).collect();
    let stale: Vec<_> = listed.difference(&dirs).collect();
    if !missing.is_empty() || !stale.is_empty() {
        bail!(
            "{}: crates without a row: {missing:?}; rows without a crate: {stale:?}",
            path.display()
        );
    }
    let long: Vec<String> = rows
        .iter()
        .filter(|r| r.job.split_whitespace().count() >= MAX_JOB_WORDS)
        .map(|r| format!("{} ({} words)", r.name, r.job.split_whitespace().count()))
        .collect();
    if !long.is_empty() {
        bail!(
            "{}: a crate's job takes fewer than {MAX_JOB_WORDS} words (the rest belongs in its \
             `//!` docs): {long:?}",
            path.display()
        );
    }
    Ok(())
}

/// The workspace's crates as `cargo metadata` reports them.
pub fn workspace_packages(root: &Path) -> Result<Vec<Package>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root)
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("cargo metadata wrote no JSON")?;
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata lists no packages")?;
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut out = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        let manifest = Path::new(p["manifest_path"].as_str().unwrap_or_default());
        let dir = manifest
            .parent()
            .and_then(|d| d.strip_prefix(&root).ok())
            .with_context(|| format!("{name}: its manifest is not inside {}", root.display()))?
            .to_string_lossy()
            .into_owned();
        let (mut uses, mut dev) = (BTreeSet::new(), BTreeSet::new());
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let Some(dep) = d["name"].as_str().filter(|n| members.contains(n)) else {
                continue;
            };
            match d["kind"].as_str() {
                Some("dev") => dev.insert(dep.to_owned()),
                _ => uses.insert(dep.to_owned()),
            };
        }
        let tests_use = dev.difference(&uses).cloned().collect();
        out.push(Package {
            name,
            dir,
            uses,
            tests_use,
        });
    }
    Ok(out)
}

/// What a `uses` cell lists: crate names (`tables, plugin-sdk` for `yosoku-tables`,
/// `yosoku-plugin-sdk`; `—` for none), and whether it allows any plugin.
struct Cell {
    names: BTreeSet<String>,
    any_plugin: bool,
}

fn cell_names(cell: &str, packages: &[Package]) -> Result<Cell> {
    let mut names = BTreeSet::new();
    let mut any_plugin = false;
    for item in cell.split(',').map(str::trim) {
        if item == NONE || item.is_empty() {
            continue;
        }
        if item == ANY_PLUGIN {
            any_plugin = true;
            continue;
        }
        let Some(p) = packages
            .iter()
            .find(|p| p.name == item || p.name.strip_prefix("yosoku-") == Some(item))
        else {
            bail!("`{item}` is no crate of the workspace");
        };
        names.insert(p.name.clone());
    }
    Ok(Cell { names, any_plugin })
}

/// Every way the workspace's `packages` break the rules of `architecture` (ARCHITECTURE.md's
/// text): a dependency its row does not list or a listed one it lacks, and a crate it uses in a
/// layer its own may not use.
pub fn check_dependencies(architecture: &str, packages: &[Package]) -> Result<Vec<String>> {
    let rows = crate_rows(architecture)?;
    let layers = layer_rows(architecture)?;
    let mut problems = Vec::new();
    let short = |names: &BTreeSet<String>| -> String {
        let list: Vec<&str> = names
            .iter()
            .map(|n| n.strip_prefix("yosoku-").unwrap_or(n))
            .collect();
        list.join(", ")
    };
    for p in packages {
        let Some(row) = rows.iter().find(|r| r.dir == p.dir) else {
            problems.push(format!("{} ({}): no row in the crate table", p.name, p.dir));
            continue;
        };
        if row.name != p.name {
            problems.push(format!(
                "{}: its row names it `{}`, its Cargo.toml `{}`",
                p.dir, row.name, p.name
            ));
        }
        let Some(layer) = layer_of(&layers, &p.dir) else {
            problems.push(format!("{} ({}): in no layer's directories", p.name, p.dir));
            continue;
        };
        for (cell, actual, what) in [
            (&row.uses, &p.uses, "uses"),
            (&row.tests_use, &p.tests_use, "tests also use"),
        ] {
            let listed = cell_names(cell, packages).with_context(|| format!("{}'s row", p.name))?;
            let is_plugin = |name: &String| {
                packages
                    .iter()
                    .any(|q| q.name == *name && q.dir.starts_with("plugins/"))
            };
            let unlisted: BTreeSet<String> = actual
                .difference(&listed.names)
                .filter(|n| !(listed.any_plugin && is_plugin(n)))
                .cloned()
                .collect();
            let unused: BTreeSet<String> = listed.names.difference(actual).cloned().collect();
            if !unlisted.is_empty() {
                problems.push(format!(
                    "{} depends on {} ({what}), which its row does not list",
                    p.name,
                    short(&unlisted)
                ));
            }
            if !unused.is_empty() {
                problems.push(format!(
                    "{}'s row lists {} under `{what}`, which it does not depend on",
                    p.name,
                    short(&unused)
                ));
            }
        }
        for used in &p.uses {
            let Some(dep) = packages.iter().find(|d| d.name == *used) else {
                continue;
            };
            let dep_layer = layer_of(&layers, &dep.dir).map_or("none", |l| l.layer.as_str());
            if !layer.may_use.contains(dep_layer) {
                problems.push(format!(
                    "{} (layer {}) uses {} (layer {dep_layer}): layer {} may use {}",
                    p.name,
                    layer.layer,
                    used,
                    layer.layer,
                    layer.may_use.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    for row in &rows {
        if !packages.iter().any(|p| p.dir == row.dir) {
            problems.push(format!(
                "the row of {} names no crate ({})",
                row.name, row.dir
            ));
        }
    }
    Ok(problems)
}

/// The modules of a crate's `dir` (relative to `root`): each `.rs` file's stem and each
/// directory's name, without `lib` and `mod`.
#[cfg(test)]
fn modules_in(root: &Path, dir: &str) -> Result<BTreeSet<String>> {
    let path = root.join(dir);
    let mut out = BTreeSet::new();
    for entry in
        std::fs::read_dir(&path).with_context(|| format!("cannot list {}", path.display()))?
    {
        let p = entry?.path();
        let name = p.file_stem().map(|s| s.to_string_lossy().into_owned());
        match name {
            Some(n)
                if (p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
                    && n != "lib"
                    && n != "mod" =>
            {
                out.insert(n);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// What no model family is: modules of the step and table families that shape tables without
/// a model, or are helpers, each with why.
#[cfg(test)]
pub const NOT_FAMILIES: &[(&str, &str)] = &[
    (
        "tables",
        "steps that shape tables without a model (filter, concat)",
    ),
    ("figures", "helpers of the steps' summary figures"),
    ("testing", "the steps' test helpers"),
    (
        "measurements",
        "the tables sources produce, before any model",
    ),
    (
        "traces",
        "timelines, which the viewer draws for every family",
    ),
    ("fixtures", "the models' test fixtures"),
    (
        "curve",
        "a measured bandwidth curve, which the CSX600 and GPU physics models both read",
    ),
    (
        "model",
        "what a model is in every family: the `Model` trait",
    ),
    (
        "step",
        "what a step is: the `Step` trait and what a step sees and hands on",
    ),
    (
        "registry",
        "the registry of step kinds, which names every family",
    ),
    ("columns", "the columns several families' tables share"),
];

/// The model families line up: the modules of `yosoku-models`, of the pipeline's `steps/` and of
/// `yosoku-tables`' `defs/` are one set of families (besides [`NOT_FAMILIES`]), and the models
/// crate's `FAMILIES` lists it. Returns what does not match.
#[cfg(test)]
pub fn check_families(root: &Path) -> Result<Vec<String>> {
    let not: BTreeSet<&str> = NOT_FAMILIES.iter().map(|(m, _)| *m).collect();
    let families = |dir: &str| -> Result<BTreeSet<String>> {
        Ok(modules_in(root, dir)?
            .into_iter()
            .filter(|m| !not.contains(m.as_str()))
            .collect())
    };
    let models = families("crates/core/models/src")?;
    let lib = std::fs::read_to_string(root.join("crates/core/models/src/lib.rs"))?;
    let listed: BTreeSet<String> = lib
        .split_once("pub const FAMILIES: &[&str] = &[")
        .and_then(|(_, rest)| rest.split_once("];"))
        .map(|(list, _)| {
            list.split(',')
                .map(|f| f.trim().trim_matches('"').to_owned())
                .filter(|f| !f.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut problems = Vec::new();
    for (what, dir) in [
        (
            "the pipeline's step modules",
            "crates/core/pipeline/src/steps",
        ),
        ("the table definitions", "crates/core/tables/src/defs"),
    ] {
        let theirs = families(dir)?;
        if theirs != models {
            problems.push(format!(
                "{what} ({dir}) are {theirs:?}; the models' families are {models:?}"
            ));
        }
    }
    if listed != models {
        problems.push(format!(
            "yosoku_models::FAMILIES lists {listed:?}; the crate's modules are {models:?}"
        ));
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
    }

    fn architecture() -> String {
        std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap()
    }

    /// `models/`, `steps/` and `defs/` list the same families, and a module of one the others
    /// lack is named.
    #[test]
    fn the_models_steps_and_tables_list_the_same_families() {
        let problems = check_families(root()).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
        let models = modules_in(root(), "crates/core/models/src").unwrap();
        assert!(
            models.contains("transfer") && models.contains("mpi"),
            "{models:?}"
        );
    }

    #[test]
    fn every_crate_has_a_row_and_every_row_a_crate() {
        check_crate_table(root()).unwrap();
    }

    /// The dependency rules of ARCHITECTURE.md hold for the workspace as cargo sees it.
    #[test]
    fn every_crate_uses_what_its_row_says_and_its_layer_allows() {
        let packages = workspace_packages(root()).unwrap();
        assert!(packages.len() >= 20, "{packages:#?}");
        let problems = check_dependencies(&architecture(), &packages).unwrap();
        assert!(problems.is_empty(), "{problems:#?}");
    }

    /// The check fails when a rule is broken: the viewer depending on the runner is caught as a
    /// dependency its row does not list, and again, once the row lists it, as a crate of a layer
    /// the viewer's may not use; a core crate using the plugin host likewise.
    #[test]
    fn a_broken_dependency_rule_is_named() {
        let mut packages = workspace_packages(root()).unwrap();
        let viewer = packages
            .iter_mut()
            .find(|p| p.name == "yosoku-viewer")
            .unwrap();
        viewer.uses.insert("yosoku-runner".into());
        let text = architecture();
        let problems = check_dependencies(&text, &packages).unwrap();
        assert_eq!(
            problems,
            [
                "yosoku-viewer depends on runner (uses), which its row does not list",
                "yosoku-viewer (layer viewer) uses yosoku-runner (layer app): layer viewer may use core",
            ],
        );
        let listed = text.replace(
            "| bundle, tables, traces | runner |",
            "| bundle, runner, tables, traces | runner |",
        );
        assert_ne!(listed, text, "the viewer's row changed shape");
        let problems = check_dependencies(&listed, &packages).unwrap();
        assert_eq!(
            problems,
            [
                "yosoku-viewer (layer viewer) uses yosoku-runner (layer app): layer viewer may use core"
            ],
        );
        let mut packages = workspace_packages(root()).unwrap();
        let models = packages
            .iter_mut()
            .find(|p| p.name == "yosoku-models")
            .unwrap();
        models.uses.insert("yosoku-plugin-host".into());
        let problems = check_dependencies(&text, &packages).unwrap();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(
            problems[1].contains("layer core may use core"),
            "{problems:#?}"
        );
    }

    /// The repository stands on its own: nothing in it cites the notes that live beside it on
    /// the developers' machines (the directory `shared` next to the checkout), which a reader of
    /// the repository does not have. The methods are in docs/methods.md.
    #[test]
    fn nothing_cites_files_outside_the_repository() {
        let root = root();
        // Assembled here, so that this file does not hold the citations it looks for.
        let needles: Vec<String> = [
            ["..", "/shared"],
            ["METHODS", ".md"],
            ["TOOLCHAIN", ".md"],
            ["STYLE", ".md"],
        ]
        .iter()
        .map(|parts| parts.concat())
        .collect();
        let mut stack = vec![root.to_path_buf()];
        let mut found = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    if !matches!(
                        name.as_str(),
                        "target" | ".git" | "node_modules" | "results" | "dist"
                    ) {
                        stack.push(path);
                    }
                    continue;
                }
                // Text only: source, docs, pipelines, scripts.
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                for needle in &needles {
                    if text.contains(needle.as_str()) {
                        found.push(format!(
                            "{}: {needle}",
                            path.strip_prefix(root).unwrap().display()
                        ));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "citations of files outside the repository: {found:#?}"
        );
    }
}
