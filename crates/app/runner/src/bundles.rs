//! The commands that read result bundles: `yosoku report` (a bundle's steps, report tables and
//! scoreboard), `yosoku scoreboard` (the results reproduced from papers, over bundles) and
//! `yosoku inspect` (a bundle's manifest and tables, or one table file). Each returns what it
//! read as plain values; the CLI prints them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arrow_array::RecordBatch;
pub use yosoku_bundle::Manifest;
use yosoku_tables::ScoreRow;
use yosoku_tables::report::{ReportCell, read_report};

/// A scoreboard row and the name of the bundle it is from (its directory's name).
pub type BundleScore = (String, ScoreRow);

/// What `yosoku report` shows of one bundle.
#[derive(Debug, Clone)]
pub struct Report {
    pub manifest: Manifest,
    /// Every `report` table of the bundle, by table name, in manifest order.
    pub reports: Vec<(String, Vec<ReportCell>)>,
    pub scoreboard: Vec<BundleScore>,
}

/// The scoreboard rows of one bundle (in `dir`, with `manifest`), each with the bundle's name.
pub fn scoreboard_rows(dir: &Path, manifest: &Manifest) -> Vec<BundleScore> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| manifest.pipeline.name.clone());
    manifest
        .scoreboard
        .iter()
        .map(|r| (name.clone(), r.clone()))
        .collect()
}

/// Reads the bundle in `dir` for `yosoku report`.
pub fn report(dir: &Path) -> Result<Report> {
    let bundle = yosoku_bundle::fs::read_bundle(dir)?;
    let mut reports = Vec::new();
    for (name, batch) in &bundle.tables {
        // A step's `report` table, whatever the step (`<step>.report`).
        let is_report = name
            .split_once('.')
            .is_some_and(|(_, t)| t == yosoku_tables::REPORT.name);
        if is_report {
            let cells =
                read_report(batch).with_context(|| format!("{}: table `{name}`", dir.display()))?;
            reports.push((name.clone(), cells));
        }
    }
    let scoreboard = scoreboard_rows(dir, &bundle.manifest);
    Ok(Report {
        manifest: bundle.manifest,
        reports,
        scoreboard,
    })
}

/// What `yosoku scoreboard` read: every row of every bundle, how many bundles, and the
/// directories they are in (for the line that names them all).
#[derive(Debug, Clone)]
pub struct Scoreboard {
    pub rows: Vec<BundleScore>,
    pub bundles: usize,
    /// The directories given, or the one holding each bundle given, once each.
    pub directories: Vec<String>,
}

/// The bundles of `path`: itself, where it is one, or the bundles directly in it.
fn bundles_in(path: &Path) -> Result<Vec<PathBuf>> {
    if yosoku_bundle::fs::is_bundle(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| {
            format!(
                "{}: neither a bundle nor a directory of bundles",
                path.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| yosoku_bundle::fs::is_bundle(p))
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        bail!(
            "{}: no bundle in it (no */{})",
            path.display(),
            yosoku_bundle::MANIFEST_FILE
        );
    }
    Ok(dirs)
}

/// Reads the scoreboards of the bundles of `paths` (bundles, or directories of bundles; the
/// results directory when none is given).
pub fn scoreboard(paths: &[PathBuf]) -> Result<Scoreboard> {
    let default = [PathBuf::from(crate::DEFAULT_RESULTS_DIR)];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut rows = Vec::new();
    let mut bundles = 0;
    let mut directories: Vec<String> = Vec::new();
    for path in paths {
        for dir in bundles_in(path)? {
            let manifest = yosoku_bundle::fs::read_manifest(&dir)?;
            rows.extend(scoreboard_rows(&dir, &manifest));
            bundles += 1;
        }
        let holding = if yosoku_bundle::fs::is_bundle(path) {
            path.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(path)
        } else {
            path
        };
        let shown = holding.display().to_string();
        if !directories.contains(&shown) {
            directories.push(shown);
        }
    }
    Ok(Scoreboard {
        rows,
        bundles,
        directories,
    })
}

/// What `yosoku inspect` read.
#[derive(Debug, Clone)]
pub enum Inspected {
    /// A bundle: its manifest and its tables (the one asked for, or all).
    Bundle {
        manifest: Box<Manifest>,
        tables: Vec<(String, RecordBatch)>,
    },
    /// One Arrow IPC file, by its file name.
    File { name: String, batch: RecordBatch },
}

/// Reads `path` for `yosoku inspect`: a bundle directory (only its table `table` when given), or
/// one table file.
pub fn inspect(path: &Path, table: Option<&str>) -> Result<Inspected> {
    if path.is_dir() {
        let bundle = yosoku_bundle::fs::read_bundle(path)?;
        let tables: Vec<(String, RecordBatch)> = bundle
            .tables
            .iter()
            .filter(|(name, _)| table.is_none_or(|t| t == name))
            .cloned()
            .collect();
        if let Some(t) = table
            && tables.is_empty()
        {
            let names: Vec<&str> = bundle.tables.iter().map(|(n, _)| n.as_str()).collect();
            bail!(
                "{} has no table `{t}`; it has: {}",
                path.display(),
                names.join(", ")
            );
        }
        return Ok(Inspected::Bundle {
            manifest: Box::new(bundle.manifest),
            tables,
        });
    }
    if table.is_some() {
        bail!(
            "--table applies to bundle directories; {} is a file",
            path.display()
        );
    }
    let batch = yosoku_bundle::fs::read_table_file(path)
        .with_context(|| format!("cannot inspect {}", path.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Inspected::File { name, batch })
}
