//! Profilers' SQLite files (Nsight Systems' exports, rocprof-compute's analysis databases),
//! opened from the bytes an importer read and hashed, with their tables and columns checked by
//! name: a table or column a reader needs and the file lacks is named with the columns it has and
//! the file's format and schema.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use yosoku_plugin_sdk::PluginError;

/// The first bytes of every SQLite database file.
pub const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether `bytes` are an SQLite database.
pub fn is_sqlite(bytes: &[u8]) -> bool {
    bytes.starts_with(SQLITE_MAGIC)
}

/// An open database and what its messages say it is.
pub struct Database {
    pub path: PathBuf,
    pub db: Connection,
    /// What the file is, for messages (`an Nsight Systems SQLite export, schema 3.13.2`).
    pub what: String,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("path", &self.path)
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

impl Database {
    /// Opens the database in `bytes` (the contents of the file at `path`), read-only in memory.
    pub fn open(path: &Path, bytes: &[u8], what: &str) -> Result<Self, PluginError> {
        let fail = |e: rusqlite::Error| {
            PluginError::new(format!(
                "{}: not a readable SQLite database ({e})",
                path.display()
            ))
        };
        let mut db = Connection::open_in_memory().map_err(fail)?;
        db.deserialize_read_exact(rusqlite::MAIN_DB, bytes, bytes.len(), true)
            .map_err(fail)?;
        Ok(Database {
            path: path.to_path_buf(),
            db,
            what: what.to_owned(),
        })
    }

    /// An error about this file, saying what it is.
    pub fn error(&self, what: impl std::fmt::Display) -> PluginError {
        PluginError::new(format!("{}: {what} ({})", self.path.display(), self.what))
    }

    /// SQLite's error `e` while reading `table` (a value of another type than the column's, a
    /// damaged page), naming the table: where in the file it is.
    pub fn table_error(&self, table: &str, e: impl std::fmt::Display) -> PluginError {
        self.error(format!("table `{table}`: {e}"))
    }

    pub fn has_table(&self, table: &str) -> Result<bool, PluginError> {
        self.db
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
            .map_err(|e| self.table_error(table, e))
    }

    /// The columns of `table`, by name.
    pub fn columns(&self, table: &str) -> Result<Vec<String>, PluginError> {
        let mut statement = self
            .db
            .prepare(&format!("PRAGMA table_info(\"{table}\")"))
            .map_err(|e| self.table_error(table, e))?;
        statement
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(|e| self.table_error(table, e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.table_error(table, e))
    }

    /// Refuses `table` without every one of `columns`, naming the first it lacks beside the
    /// columns it has and `known` (the schemas the reader knows).
    pub fn require_columns(
        &self,
        table: &str,
        columns: &[&str],
        known: &str,
    ) -> Result<(), PluginError> {
        let present = self.columns(table)?;
        match columns.iter().find(|c| !present.iter().any(|p| p == *c)) {
            Some(missing) if present.is_empty() => Err(self.error(format!(
                "no table `{table}` (with its column `{missing}`), which yosoku reads; {known}"
            ))),
            Some(missing) => Err(self.error(format!(
                "table `{table}` has no column `{missing}`, which yosoku reads (it has {}); {known}",
                present.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// Every row `sql` selects from `table`, in order, given to `each`; an error of SQLite
    /// (preparing, stepping or reading a value) names the table.
    pub fn each_row(
        &self,
        table: &str,
        sql: &str,
        mut each: impl FnMut(&TableRow<'_, '_>) -> Result<(), PluginError>,
    ) -> Result<(), PluginError> {
        let fail = |e| self.table_error(table, e);
        let mut statement = self.db.prepare(sql).map_err(fail)?;
        let mut rows = statement.query([]).map_err(fail)?;
        while let Some(row) = rows.next().map_err(fail)? {
            each(&TableRow {
                row,
                db: self,
                table,
            })?;
        }
        Ok(())
    }

    /// The single text value `sql` (a query of `table`) selects, `None` where it selects no row.
    pub fn optional_text(&self, table: &str, sql: &str) -> Result<Option<String>, PluginError> {
        self.db
            .query_row(sql, [], |r| r.get(0))
            .optional()
            .map_err(|e| self.table_error(table, e))
    }
}

/// A row of one of a database's tables ([`Database::each_row`]), its values read with SQLite's
/// errors naming the table.
pub struct TableRow<'a, 'r> {
    row: &'a rusqlite::Row<'r>,
    db: &'a Database,
    table: &'a str,
}

impl std::fmt::Debug for TableRow<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableRow")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl TableRow<'_, '_> {
    /// Column `i` as an integer (NULL: `None`).
    pub fn int(&self, i: usize) -> Result<Option<i64>, PluginError> {
        self.row
            .get(i)
            .map_err(|e| self.db.table_error(self.table, e))
    }

    /// Column `i` as text (NULL: `None`).
    pub fn text(&self, i: usize) -> Result<Option<String>, PluginError> {
        self.row
            .get(i)
            .map_err(|e| self.db.table_error(self.table, e))
    }
}
