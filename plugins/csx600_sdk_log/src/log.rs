//! The `csx600-sdk-log` text format, syntax only (see README.md for the full description):
//!
//! ```text
//! # comment
//! @format csx600-sdk-log 1
//! @device CSX600 (ClearSpeed Advance board, 210 MHz)
//!
//! [op_throughput]
//! exec_unit  vector  dtype   op   dtype_to  gops   executions
//! poly       yes     double  add  -         6.936  256
//! ```
//!
//! Lines are directives (`@name value`), section headers (`[name]`), the column header line that
//! follows a section header, rows, comments (first non-blank character `#`) or blank. Fields are
//! separated by whitespace; a field with spaces is written in double quotes (`\"` and `\\` escape).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yosoku_plugin_sdk::PluginError;

pub const FORMAT_NAME: &str = "csx600-sdk-log";
pub const FORMAT_VERSION: &str = "1";

/// One field of a row, with the column (1-based, in characters) where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub text: String,
    pub column: usize,
}

#[derive(Debug, Clone)]
pub struct Directive {
    pub value: String,
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct Row {
    pub line: usize,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone)]
pub struct Section {
    pub name: String,
    pub line: usize,
    pub header_line: usize,
    pub columns: Vec<Field>,
    pub rows: Vec<Row>,
}

/// A parsed log: its directives and sections, with positions for error messages.
#[derive(Debug, Clone)]
pub struct Log {
    pub path: PathBuf,
    pub directives: BTreeMap<String, Directive>,
    pub sections: Vec<Section>,
}

/// Why the first line that is not a comment is not the `@format` line.
enum FormatLine {
    /// Not this format at all: the refusal that lists what reads what.
    Refused(PluginError),
    /// A log of this format with a bad first line: what is wrong.
    Other(String),
}

/// Checks the first line that is not a comment: `@format csx600-sdk-log <version>`.
fn check_format_line(
    path: &Path,
    text: &str,
    line: usize,
    trimmed: &str,
) -> Result<(), FormatLine> {
    let expected = format!("@format {FORMAT_NAME} {FORMAT_VERSION}");
    if trimmed.split_whitespace().collect::<Vec<_>>().join(" ") == expected {
        return Ok(());
    }
    if !trimmed.starts_with(['@', '[']) {
        return Err(FormatLine::Refused(yosoku_plugin_sdk::formats::refusal(
            path,
            Some(line),
            text,
            ("csx600_sdk_log", "microbench, profile"),
            &format!("expected `{expected}` as the first line that is not a comment"),
        )));
    }
    Err(FormatLine::Other(format!(
        "expected `{expected}` as the first line that is not a comment, found `{trimmed}`"
    )))
}

impl Log {
    pub fn read(path: &Path) -> Result<Self, PluginError> {
        let text = yosoku_plugin_sdk::read_input_to_string(path)?;
        Self::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Self, PluginError> {
        yosoku_plugin_sdk::check_whole_lines(path, text)?;
        let mut log = Log {
            path: path.to_owned(),
            directives: BTreeMap::new(),
            sections: Vec::new(),
        };
        let mut saw_format = false;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indent = raw.len() - raw.trim_start().len();
            let err = |column: usize, message: String| PluginError::at(path, line, column, message);
            if !saw_format {
                check_format_line(path, text, line, trimmed).map_err(|m| match m {
                    FormatLine::Refused(e) => e,
                    FormatLine::Other(message) => err(indent + 1, message),
                })?;
                saw_format = true;
            } else if let Some(rest) = trimmed.strip_prefix('@') {
                log.directive_line(rest, line)
                    .map_err(|message| err(indent + 1, message))?;
            } else if let Some(rest) = trimmed.strip_prefix('[') {
                log.section_line(rest, line)
                    .map_err(|message| err(indent + 1, message))?;
            } else {
                let fields = split_fields(raw).map_err(|(column, message)| err(column, message))?;
                log.row_line(fields, line)
                    .map_err(|message| err(indent + 1, message))?;
            }
        }
        if !saw_format {
            return Err(PluginError::new(format!(
                "{}: empty log: expected `@format {FORMAT_NAME} {FORMAT_VERSION}`",
                path.display()
            )));
        }
        if let Some(s) = log.sections.iter().find(|s| s.header_line == 0) {
            return Err(PluginError::at_line(
                path,
                s.line,
                format!("section [{}] has no column header line", s.name),
            ));
        }
        Ok(log)
    }

    /// A `@name value` line (`rest` without its `@`); the error says what is wrong with it.
    fn directive_line(&mut self, rest: &str, line: usize) -> Result<(), String> {
        let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            return Err(format!(
                "malformed directive `@{}`: expected `@name value`",
                rest.trim()
            ));
        }
        if name == "format" {
            return Err("a second `@format` directive".into());
        }
        if let Some(first) = self.directives.get(name) {
            return Err(format!(
                "directive `@{name}` is given twice (first on line {})",
                first.line
            ));
        }
        self.directives.insert(
            name.to_owned(),
            Directive {
                value: value.trim().to_owned(),
                line,
            },
        );
        Ok(())
    }

    /// A `[name]` line (`rest` without its `[`), which starts a section.
    fn section_line(&mut self, rest: &str, line: usize) -> Result<(), String> {
        let Some(name) = rest.strip_suffix(']') else {
            return Err(format!(
                "malformed section header `[{rest}`: expected `[name]`"
            ));
        };
        let name = name.trim();
        if let Some(first) = self.sections.iter().find(|s| s.name == name) {
            return Err(format!(
                "section [{name}] appears twice (first on line {})",
                first.line
            ));
        }
        self.sections.push(Section {
            name: name.to_owned(),
            line,
            header_line: 0,
            columns: Vec::new(),
            rows: Vec::new(),
        });
        Ok(())
    }

    /// A line of fields: the current section's column header, or one of its rows.
    fn row_line(&mut self, fields: Vec<Field>, line: usize) -> Result<(), String> {
        let Some(section) = self.sections.last_mut() else {
            return Err("a row before any `[section]` header".into());
        };
        if section.header_line == 0 {
            section.header_line = line;
            section.columns = fields;
        } else if fields.len() != section.columns.len() {
            let names: Vec<&str> = section.columns.iter().map(|c| c.text.as_str()).collect();
            return Err(format!(
                "expected {} fields ({}) as in the header of [{}] on line {}, found {}",
                names.len(),
                names.join(" "),
                section.name,
                section.header_line,
                fields.len()
            ));
        } else {
            section.rows.push(Row { line, fields });
        }
        Ok(())
    }

    pub fn directive(&self, name: &str) -> Option<&Directive> {
        self.directives.get(name)
    }

    /// The value of a directive that must be present.
    pub fn required_directive(&self, name: &str, why: &str) -> Result<&str, PluginError> {
        self.directive(name)
            .map(|d| d.value.as_str())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                PluginError::new(format!(
                    "{}: missing directive `@{name}` ({why})",
                    self.path.display()
                ))
            })
    }
}

/// Splits a row into fields, honouring double quotes. Errors carry the 1-based column.
fn split_fields(line: &str) -> Result<Vec<Field>, (usize, String)> {
    let chars: Vec<char> = line.chars().collect();
    let mut fields = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let mut text = String::new();
        if chars[i] == '"' {
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err((start + 1, "unterminated quoted field".into())),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') => match chars.get(i + 1) {
                        Some(c @ ('"' | '\\')) => {
                            text.push(*c);
                            i += 2;
                        }
                        _ => {
                            return Err((
                                i + 1,
                                "expected `\\\"` or `\\\\` after a backslash".into(),
                            ));
                        }
                    },
                    Some(c) => {
                        text.push(*c);
                        i += 1;
                    }
                }
            }
            if chars.get(i).is_some_and(|c| !c.is_whitespace()) {
                return Err((i + 1, "expected whitespace after a quoted field".into()));
            }
        } else {
            while i < chars.len() && !chars[i].is_whitespace() {
                text.push(chars[i]);
                i += 1;
            }
        }
        fields.push(Field {
            text,
            column: start + 1,
        });
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Log, String> {
        Log::parse(Path::new("t.log"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn fields_split_on_whitespace_and_quotes() {
        let fields = split_fields(r#"  d=2  "poly scalar double add"  "a \"q\" b" 1e6"#).unwrap();
        let texts: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, ["d=2", "poly scalar double add", "a \"q\" b", "1e6"]);
        assert_eq!(fields[1].column, 8);
        assert_eq!(
            split_fields(r#"a "open"#).unwrap_err(),
            (3, "unterminated quoted field".into())
        );
    }

    #[test]
    fn a_log_has_directives_sections_and_rows() {
        let log =
            parse("# c\n@format csx600-sdk-log 1\n@device X Y\n\n[s]\na b\n1 2\n3 4\n").unwrap();
        assert_eq!(log.directive("device").unwrap().value, "X Y");
        assert_eq!(log.sections.len(), 1);
        assert_eq!(log.sections[0].rows.len(), 2);
        assert_eq!(log.sections[0].rows[1].line, 8);
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        for (text, expected) in [
            (
                "[s]\n",
                "t.log:1:1: expected `@format csx600-sdk-log 1` as the first line",
            ),
            ("", "t.log: empty log"),
            (
                "@format csx600-sdk-log 1\n1 2\n",
                "t.log:2:1: a row before any `[section]` header",
            ),
            (
                "@format csx600-sdk-log 1\n[s]\na b\n1 2 3\n",
                "t.log:4:1: expected 2 fields (a b) as in the header of [s] on line 3, found 3",
            ),
            (
                "@format csx600-sdk-log 1\n[s]\n",
                "t.log:2: section [s] has no column header line",
            ),
            (
                "@format csx600-sdk-log 1\n@d 1\n@d 2\n",
                "t.log:3:1: directive `@d` is given twice (first on line 2)",
            ),
            (
                "@format csx600-sdk-log 1\n[s]\na\n[s]\n",
                "t.log:4:1: section [s] appears twice (first on line 2)",
            ),
            (
                "@format csx600-sdk-log 1\n[s\n",
                "t.log:2:1: malformed section header `[s`",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(
                err.starts_with(expected),
                "{text:?}\n got: {err}\nwant: {expected}"
            );
        }
    }
}
