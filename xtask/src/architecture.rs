//! Keeps ARCHITECTURE.md's crate table true: every crate directory has a row, every row names an
//! existing crate directory.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// The crate directories of the workspace at `root` (`crates/x`, `plugins/x`, `viewer`, `xtask`).
fn crate_dirs(root: &Path) -> Result<BTreeSet<String>> {
    let mut dirs = BTreeSet::new();
    for parent in ["crates", "plugins"] {
        let listing = root.join(parent);
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
/// ARCHITECTURE.md's crate table or a row names no crate directory.
pub fn check_crate_table(root: &Path) -> Result<()> {
    let path = root.join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let rows: BTreeSet<String> = text
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('|').nth(2))
        .map(|cell| cell.trim().trim_matches('`').to_owned())
        .collect();
    let dirs = crate_dirs(root)?;
    let missing: Vec<_> = dirs.difference(&rows).collect();
    let stale: Vec<_> = rows.difference(&dirs).collect();
    if !missing.is_empty() || !stale.is_empty() {
        bail!(
            "{}: crates without a row: {missing:?}; rows without a crate: {stale:?}",
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn every_crate_has_a_row_and_every_row_a_crate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        super::check_crate_table(root).unwrap();
    }

    /// The repository stands on its own: nothing in it cites the notes that live beside it on
    /// the developers' machines (the directory `shared` next to the checkout), which a reader of
    /// the repository does not have. The methods are in docs/methods.md.
    #[test]
    fn nothing_cites_files_outside_the_repository() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
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
