//! For a plugin's own tests: that a file cut short never imports as changed values.
//!
//! A file copied or written only in part (a disk filled up, a job killed, a download stopped)
//! ends early, often inside a value: `190.706924GB/s` cut to `19`. An importer must then either
//! fail or import the rows it holds whole, each as the whole file has it. [`cut_copies`] cuts an
//! input at every byte offset of its last bytes, imports each cut copy (and each again with a
//! newline after the cut, as a tool that closes its output's last line leaves it), and
//! compares.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use crate::PluginError;

/// How the cut copies of an input imported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CutOutcome {
    /// Cut copies the importer refused (both copies of each cut: as cut, and with a newline
    /// after the cut).
    pub refused: usize,
    /// Cut copies it imported, each holding rows of the whole file's tables and nothing else.
    pub imported: usize,
}

/// Imports the input `files` (the files of one directory: name and contents) with `import`
/// (given the directory), then again with file `cut` cut at each of the last `tail` byte offsets
/// of its contents, each cut twice: as cut, and followed by a newline (a value cut short and
/// then a line end: `69.19` for `69.190984%`, `126` for `1266.048,1779.000`). A newline copy
/// that is the whole file again (a cut just before its last newline) is not imported, nor is
/// any newline copy of a binary file. Each cut
/// copy must be refused, or import with every row of every table named in `compared` a row of
/// the whole input's table (a row the cut left whole), unchanged. Other tables (totals over a
/// file, such as `metric_names`) are not compared.
///
/// One case is let through: a copy whose cut fell inside a plain number that ends its line
/// (`5109.0` cut to `51`, or to nothing and then a line end) may have one row of each table
/// changed. That line is whole in form, its number a number: no reader can tell it from a line
/// the tool wrote, with a newline after it or without (pandas and polars read it so too;
/// [`crate::check_whole_lines`]). A number with a unit after it (`%`, `GB/s`), a line missing
/// fields, or an unclosed quote is not let through.
///
/// Errors describe the first cut that imported a changed or an extra row.
pub fn cut_copies<N: AsRef<str>, C: AsRef<[u8]>>(
    files: &[(N, C)],
    cut: &str,
    tail: usize,
    compared: &[&str],
    import: impl Fn(&Path) -> Result<Vec<(String, RecordBatch)>, PluginError>,
) -> Result<CutOutcome, String> {
    let scratch = Scratch::new()?;
    let whole_dir = scratch.write("whole", files, None)?;
    let whole = import(&whole_dir).map_err(|e| format!("the whole input does not import: {e}"))?;
    let contents = files
        .iter()
        .find(|(name, _)| name.as_ref() == cut)
        .map(|(_, c)| c.as_ref())
        .ok_or_else(|| format!("no file `{cut}` among the input's"))?;
    let mut outcome = CutOutcome::default();
    // A newline after the cut is a text file's fault; a binary file (a NUL byte, or not UTF-8)
    // is cut only.
    let is_text = !contents.contains(&0) && std::str::from_utf8(contents).is_ok();
    let cuts = (contents.len().saturating_sub(tail)..contents.len())
        .flat_map(|at| [(at, false), (at, true)])
        .filter(|&(_, newline)| is_text || !newline);
    for (at, newline) in cuts {
        if newline && &contents[at..] == b"\n" {
            continue;
        }
        // Rows of each table that may differ from the whole file's.
        let let_through = usize::from(ends_inside_a_number(contents, at));
        let dir = scratch.write(
            &format!("cut-{at}-{newline}"),
            files,
            Some((cut, at, newline)),
        )?;
        match import(&dir) {
            Err(_) => outcome.refused += 1,
            Ok(tables) => {
                for name in compared {
                    let table_rows = |tables: &[(String, RecordBatch)]| -> Vec<String> {
                        tables
                            .iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, b)| rows(b))
                            .unwrap_or_default()
                    };
                    // Each row of the cut copy's table is one of the whole input's (as many
                    // times as it is there at most), in whatever order the importer writes
                    // them (column by column, say).
                    let mut whole_rows: HashMap<String, usize> = HashMap::new();
                    for row in table_rows(&whole) {
                        *whole_rows.entry(row).or_default() += 1;
                    }
                    let mut changed = 0;
                    for (i, row) in table_rows(&tables).into_iter().enumerate() {
                        match whole_rows.get_mut(&row) {
                            Some(n) if *n > 0 => *n -= 1,
                            _ if changed < let_through => changed += 1,
                            _ => {
                                return Err(format!(
                                    "{cut} cut after {at} of {} bytes{} imports row {i} of \
                                     `{name}` as {row:?}, which the whole file does not have",
                                    contents.len(),
                                    if newline { ", then a newline," } else { "" }
                                ));
                            }
                        }
                    }
                }
                outcome.imported += 1;
            }
        }
        let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(&dir));
    }
    Ok(outcome)
}

/// Whether cutting `contents` at `at` ends a line inside a plain number that ended it, or just
/// before it (its field left empty): digits (a point, an exponent, a sign) from the cut to the
/// line's end, and before the cut more of them or a field separator.
fn ends_inside_a_number(contents: &[u8], at: usize) -> bool {
    let is_number = |b: &u8| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-');
    let is_separator = |b: &u8| matches!(b, b',' | b'\t' | b';' | b' ');
    let line_end = contents[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(contents.len(), |p| at + p);
    let rest = contents[at..line_end]
        .strip_suffix(b"\r")
        .unwrap_or(&contents[at..line_end]);
    at > 0
        && (is_number(&contents[at - 1]) || is_separator(&contents[at - 1]))
        && !rest.is_empty()
        && rest.iter().all(is_number)
}

/// The files directly in `dir` (name and contents), by name: an input of several files for
/// [`cut_copies`].
pub fn files_in(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() {
            let contents = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            files.push((name, contents));
        }
    }
    files.sort();
    Ok(files)
}

/// Every row of `batch` as text, its cells joined by tabs.
fn rows(batch: &RecordBatch) -> Vec<String> {
    (0..batch.num_rows())
        .map(|r| {
            batch
                .columns()
                .iter()
                .map(|c| yosoku_tables::display::cell(c.as_ref(), r, "null"))
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect()
}

/// A directory of this process's own under the system's temporary directory, removed when
/// dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "yosoku-cut-copies-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Self(dir))
    }

    /// Writes `files` into a new directory `input` under `name`, `cut` (a file, a length and
    /// whether a newline follows the cut) cut short: every copy's directory has one name, which an importer may take into its
    /// rows (a workload is named after its directory).
    fn write<N: AsRef<str>, C: AsRef<[u8]>>(
        &self,
        name: &str,
        files: &[(N, C)],
        cut: Option<(&str, usize, bool)>,
    ) -> Result<PathBuf, String> {
        let dir = self.0.join(name).join("input");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (file, contents) in files {
            let (file, contents) = (file.as_ref(), contents.as_ref());
            let contents: std::borrow::Cow<'_, [u8]> = match cut {
                Some((c, at, false)) if c == file => contents[..at].into(),
                Some((c, at, true)) if c == file => [&contents[..at], b"\n"].concat().into(),
                _ => contents.into(),
            };
            let path = dir.join(file);
            std::fs::write(&path, &contents).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
