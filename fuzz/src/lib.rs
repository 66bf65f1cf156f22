//! What every fuzz target asserts beyond "no panic": a read that succeeds returns canonical
//! tables that pass their check; a read that fails says which file and where in it (a line, a
//! line and column, a byte offset or a record).

pub mod seeds;

use std::fmt::Display;
use std::path::Path;

use arrow_array::RecordBatch;

/// A fuzz target: its name and what it runs on one input.
pub type Target = (&'static str, fn(&[u8]));

/// The name every target gives its input; an error must name it.
pub const INPUT: &str = "fuzz-input";

pub fn input() -> &'static Path {
    Path::new(INPUT)
}

/// The input as text. Text readers are given only what `read_text` passes them: invalid UTF-8 is
/// refused before any reader runs, with the byte offset of the first bad byte.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Every table of a successful read is a canonical table and passes its check.
pub fn check_tables<'a>(tables: impl IntoIterator<Item = (&'a str, &'a RecordBatch)>) {
    for (name, batch) in tables {
        let Some(def) = yosoku_tables::table(name) else {
            panic!("a successful read returned `{name}`, which is not a canonical table");
        };
        if let Err(e) = def.check(batch) {
            panic!("`{name}` of a successful read fails the canonical check: {e}");
        }
    }
}

/// A read's tables pass their checks, or its error is located.
pub fn tables_or_located(result: Result<Vec<(String, RecordBatch)>, impl Display>) {
    match result {
        Ok(tables) => check_tables(tables.iter().map(|(n, b)| (n.as_str(), b))),
        Err(e) => check_located(&e.to_string()),
    }
}

/// The error names the input and a place in it: `fuzz-input:LINE[:COLUMN]: …`, or
/// `fuzz-input: …` followed by a line, byte, offset, record, row or (JSON) key.
pub fn check_located(message: &str) {
    let Some(rest) = message.strip_prefix(INPUT) else {
        panic!("the error does not start with the file's name: {message}");
    };
    if let Some(after) = rest.strip_prefix(':')
        && after.starts_with(|c: char| c.is_ascii_digit())
    {
        return;
    }
    // A key is the place in a JSON document whose structure is fine but a value is not.
    // A column (by name or position) is a place in a table file, as a line is in a text.
    let places = [
        "line ", "byte ", "offset ", "record ", "row ", "key `", "column",
    ];
    if !places.iter().any(|p| rest.contains(p)) && !is_whole_file(rest) {
        panic!("the error names no line, column, byte offset or record: {message}");
    }
}

/// The error of a database reader (an SQLite file) names the input and a place in it: a table,
/// column or row, named in backticks (``dispatch 3 of `compute_dispatch` ``), or the file as a
/// whole (not a database, a table missing).
pub fn check_located_in_database(message: &str) {
    let Some(rest) = message.strip_prefix(INPUT) else {
        panic!("the error does not start with the file's name: {message}");
    };
    if !rest.contains('`') && !is_whole_file(rest) {
        panic!("the error names no table, column or row: {message}");
    }
}

/// Errors about the file as a whole, which have no place in it to name: nothing in it, not the
/// format at all (no header line, no format line), a version of the format yosoku does not
/// read, or something required that is absent ("no …", "missing …").
fn is_whole_file(message: &str) -> bool {
    let message = message.trim_start_matches([':', ' ']);
    message.starts_with("no ")
        || message.starts_with("missing ")
        || [
            "empty",
            "not a ",
            "not an ",
            "expected `@format",
            "which yosoku does not read",
        ]
        .iter()
        .any(|w| message.contains(w))
}
