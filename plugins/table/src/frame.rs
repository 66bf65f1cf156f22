//! A file's columns, read from CSV, Parquet or Arrow IPC, with where each row came from (the
//! CSV line, the Parquet/IPC row) for errors.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray as _;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use yosoku_plugin_sdk::{PluginError, read_input};

/// A file format the plugin reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Tsv,
    Parquet,
    Ipc,
}

impl Format {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Some(Self::Csv),
            "tsv" => Some(Self::Tsv),
            "parquet" => Some(Self::Parquet),
            "ipc" | "arrow" | "feather" => Some(Self::Ipc),
            _ => None,
        }
    }

    /// From the file's extension (a `.gz` after it is looked through).
    pub fn of_path(path: &Path) -> Option<Self> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        let ext = name.rsplit_once('.')?.1;
        match ext {
            "csv" => Some(Self::Csv),
            "tsv" | "tab" => Some(Self::Tsv),
            "parquet" | "pq" => Some(Self::Parquet),
            "arrow" | "feather" | "ipc" | "arrows" => Some(Self::Ipc),
            _ => None,
        }
    }
}

/// The file's name without its extensions (`runs.csv.gz` -> `runs`).
pub fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.rsplit_once('.').map_or(name, |(s, _)| s).to_owned()
}

/// One column: text as written (CSV cells, Arrow strings), numbers (Arrow numeric types), or a
/// type the plugin does not read (only an error when a mapping names it).
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Text(Vec<Option<String>>),
    Number(Vec<Option<f64>>),
    Other(String),
}

#[derive(Debug)]
pub struct Frame {
    pub path: PathBuf,
    pub names: Vec<String>,
    pub columns: Vec<Column>,
    pub rows: usize,
    /// CSV: the line each row starts on (rows are then named by line).
    lines: Option<Vec<u64>>,
}

impl Frame {
    pub fn read(path: &Path, format: Option<Format>) -> Result<Self, PluginError> {
        let format = format.or_else(|| Format::of_path(path)).ok_or_else(|| {
            PluginError::new(format!(
                "{}: cannot tell the format from the name: use .csv, .tsv, .parquet or .arrow, or set `format`",
                path.display()
            ))
        })?;
        // Gzip-compressed files are told by their first bytes, whatever their names.
        let bytes = yosoku_plugin_sdk::inflate_if_gzip(path, read_input(path)?)?;
        Self::from_bytes(path, format, bytes)
    }

    /// A file's contents (decompressed) in `format`; `path` names it in errors.
    pub fn from_bytes(path: &Path, format: Format, bytes: Vec<u8>) -> Result<Self, PluginError> {
        match format {
            Format::Csv => Self::csv(path, &bytes, b','),
            Format::Tsv => Self::csv(path, &bytes, b'\t'),
            Format::Parquet => Self::parquet(path, bytes),
            Format::Ipc => Self::ipc(path, bytes),
        }
    }

    fn csv(path: &Path, bytes: &[u8], delimiter: u8) -> Result<Self, PluginError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(PluginError::new(format!(
                "{}: empty file ({} bytes); expected a header line naming the columns, then a row per run",
                path.display(),
                bytes.len()
            )));
        }
        yosoku_plugin_sdk::check_whole_lines(path, bytes)?;
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .trim(csv::Trim::All)
            .comment(Some(b'#'))
            .from_reader(bytes);
        let located = |e: csv::Error| {
            let at = e
                .position()
                .map(|p| format!(" line {}:", p.line()))
                .unwrap_or_default();
            let message = match e.kind() {
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => format!("{len} fields where the header has {expected_len}"),
                csv::ErrorKind::Utf8 { .. } => "not UTF-8 text".to_owned(),
                _ => e.to_string(),
            };
            PluginError::new(format!("{}:{at} {message}", path.display()))
        };
        let header = reader.headers().map_err(located)?.clone();
        if header.is_empty() || (header.len() == 1 && header[0].is_empty()) {
            return Err(PluginError::new(format!(
                "{}: no header line (the first line names the columns)",
                path.display()
            )));
        }
        let names: Vec<String> = header.iter().map(str::to_owned).collect();
        check_names(path, &names)?;
        let mut cells: Vec<Vec<Option<String>>> = vec![Vec::new(); names.len()];
        let mut lines = Vec::new();
        let mut record = csv::StringRecord::new();
        while reader.read_record(&mut record).map_err(located)? {
            lines.push(record.position().map_or(0, |p| p.line()));
            for (c, cell) in record.iter().enumerate() {
                cells[c].push((!cell.is_empty()).then(|| cell.to_owned()));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            names,
            columns: cells.into_iter().map(Column::Text).collect(),
            rows: lines.len(),
            lines: Some(lines),
        })
    }

    fn parquet(path: &Path, bytes: Vec<u8>) -> Result<Self, PluginError> {
        let err = |e: &dyn std::fmt::Display| {
            PluginError::new(format!(
                "{}: not a readable Parquet file: {e}",
                path.display()
            ))
        };
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            bytes::Bytes::from(bytes),
        )
        .map_err(|e| err(&e))?
        .build()
        .map_err(|e| err(&e))?;
        let batches = reader.collect::<Result<Vec<_>, _>>().map_err(|e| err(&e))?;
        Self::from_batches(path, &batches)
    }

    fn ipc(path: &Path, bytes: Vec<u8>) -> Result<Self, PluginError> {
        let err = |e: &dyn std::fmt::Display| {
            PluginError::new(format!(
                "{}: not a readable Arrow IPC file or stream: {e}",
                path.display()
            ))
        };
        // The file format (magic `ARROW1`), else the stream format.
        // What arrow-ipc would trust (a block or body claimed past the end of the bytes,
        // allocated before it is read) is refused first.
        let batches = if bytes.starts_with(b"ARROW1") {
            yosoku_bundle::ipc::check_file(&bytes).map_err(|e| err(&e))?;
            arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
                .map_err(|e| err(&e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| err(&e))?
        } else {
            yosoku_bundle::ipc::check_stream(&bytes).map_err(|e| err(&e))?;
            arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
                .map_err(|e| err(&e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| err(&e))?
        };
        Self::from_batches(path, &batches)
    }

    fn from_batches(path: &Path, batches: &[RecordBatch]) -> Result<Self, PluginError> {
        let Some(first) = batches.first() else {
            return Err(PluginError::new(format!(
                "{}: no rows (no record batch)",
                path.display()
            )));
        };
        let schema = first.schema();
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        check_names(path, &names)?;
        let mut columns = Vec::with_capacity(names.len());
        for c in 0..names.len() {
            let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            columns.push(column_of(&parts));
        }
        Ok(Self {
            path: path.to_path_buf(),
            names,
            columns,
            rows: batches.iter().map(RecordBatch::num_rows).sum(),
            lines: None,
        })
    }

    /// Where row `r` is: `line 14` (CSV) or `row 13` (1-based).
    pub fn row_name(&self, r: usize) -> String {
        match &self.lines {
            Some(lines) => format!("{}", lines[r]),
            None => format!("{}", r + 1),
        }
    }

    fn row_place(&self, r: usize) -> String {
        match &self.lines {
            Some(lines) => format!("line {}", lines[r]),
            None => format!("row {}", r + 1),
        }
    }

    /// An error about the value of column `c` in row `r`.
    pub fn error_at(&self, r: usize, c: usize, what: &str) -> PluginError {
        PluginError::new(format!(
            "{}: {}, column `{}` ({}): the value {what}",
            self.path.display(),
            self.row_place(r),
            self.names[c],
            ordinal(c + 1)
        ))
    }

    /// The column named `name` (case as written); `what` says which config key named it.
    pub fn index(&self, name: &str, what: &str) -> Result<usize, PluginError> {
        self.names
            .iter()
            .position(|n| n == name)
            .or_else(|| self.names.iter().position(|n| n.eq_ignore_ascii_case(name)))
            .ok_or_else(|| {
                PluginError::new(format!(
                    "{}: {what} names column `{name}`, which the file does not have; its columns are: {}",
                    self.path.display(),
                    self.names.join(", ")
                ))
            })
    }

    /// Whether every value of column `c` is a number (empty cells aside) and one is there.
    pub fn is_numeric(&self, c: usize) -> bool {
        match &self.columns[c] {
            Column::Number(v) => v.iter().any(Option::is_some),
            Column::Text(v) => {
                v.iter().any(Option::is_some)
                    && v.iter().flatten().all(|s| parse_number(s).is_some())
            }
            Column::Other(_) => false,
        }
    }

    /// Column `c` as numbers; a cell that is not one is an error naming its line and column.
    pub fn numbers(&self, c: usize) -> Result<Vec<Option<f64>>, PluginError> {
        match &self.columns[c] {
            Column::Number(v) => Ok(v.clone()),
            Column::Text(v) => v
                .iter()
                .enumerate()
                .map(|(r, s)| match s {
                    None => Ok(None),
                    Some(s) => parse_number(s)
                        .map(Some)
                        .ok_or_else(|| self.error_at(r, c, &format!("{s:?} is not a number"))),
                })
                .collect(),
            Column::Other(t) => Err(PluginError::new(format!(
                "{}: column `{}` is of type {t}, not a number",
                self.path.display(),
                self.names[c]
            ))),
        }
    }

    /// Column `c` as numbers times 10^`exp10`, each in one correctly rounded step: the
    /// decimal exponent is moved in the number's text (as written, or as the shortest text
    /// that reads back as the stored double), so `0.832` us is the double nearest 8.32e-7 s,
    /// not 0.832 rounded and then divided by 10^6 (8.319999999999999e-7).
    pub fn numbers_scaled(&self, c: usize, exp10: i32) -> Result<Vec<Option<f64>>, PluginError> {
        let numbers = self.numbers(c)?;
        if exp10 == 0 {
            return Ok(numbers);
        }
        Ok(match &self.columns[c] {
            Column::Text(v) => v
                .iter()
                .zip(numbers)
                .map(|(s, n)| {
                    let exact = s.as_deref().and_then(|s| shift_decimal(s, exp10));
                    exact.or(n.map(|n| n * 10f64.powi(exp10)))
                })
                .collect(),
            _ => numbers
                .into_iter()
                .map(|n| n.map(|n| shift_decimal(&format!("{n:e}"), exp10).unwrap_or(n)))
                .collect(),
        })
    }

    /// Column `c` as text (numbers as Rust writes them; an empty cell is an empty string).
    pub fn texts(&self, c: usize) -> Result<Vec<String>, PluginError> {
        match &self.columns[c] {
            Column::Text(v) => Ok(v.iter().map(|s| s.clone().unwrap_or_default()).collect()),
            Column::Number(v) => Ok(v
                .iter()
                .map(|x| x.map(|x| format!("{x}")).unwrap_or_default())
                .collect()),
            Column::Other(t) => Err(PluginError::new(format!(
                "{}: column `{}` is of type {t}, which the table plugin does not read as text",
                self.path.display(),
                self.names[c]
            ))),
        }
    }
}

fn check_names(path: &Path, names: &[String]) -> Result<(), PluginError> {
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(PluginError::new(format!(
                "{}: the {} column has no name",
                path.display(),
                ordinal(i + 1)
            )));
        }
        if let Some(j) = names[..i].iter().position(|m| m == n) {
            return Err(PluginError::new(format!(
                "{}: duplicate column name `{n}` (the {} and {} columns): column names must be unique",
                path.display(),
                ordinal(j + 1),
                ordinal(i + 1)
            )));
        }
    }
    Ok(())
}

/// A number as people write them in CSV files: `12`, `-3.5e-4`, `nan` is not one.
fn parse_number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The number `s` (a decimal, with or without an exponent) times 10^`exp10`, parsed once: the
/// exponent is added to the text's (Rust's parser rounds correctly).
pub fn shift_decimal(s: &str, exp10: i32) -> Option<f64> {
    let s = s.trim();
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    parse_number(&format!("{mantissa}e{}", exponent.checked_add(exp10)?))
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The pieces of one column over the batches, as one [`Column`].
fn column_of(parts: &[&dyn Array]) -> Column {
    let data_type = parts.first().map(|a| a.data_type().clone());
    macro_rules! numbers {
        ($t:ty) => {
            Column::Number(
                parts
                    .iter()
                    .flat_map(|a| a.as_primitive::<$t>().iter().map(|v| v.map(|v| v as f64)))
                    .collect(),
            )
        };
    }
    match data_type {
        Some(DataType::Float64) => numbers!(Float64Type),
        Some(DataType::Float32) => numbers!(Float32Type),
        Some(DataType::Int64) => numbers!(Int64Type),
        Some(DataType::Int32) => numbers!(Int32Type),
        Some(DataType::Int16) => numbers!(Int16Type),
        Some(DataType::Int8) => numbers!(Int8Type),
        Some(DataType::UInt64) => numbers!(UInt64Type),
        Some(DataType::UInt32) => numbers!(UInt32Type),
        Some(DataType::UInt16) => numbers!(UInt16Type),
        Some(DataType::UInt8) => numbers!(UInt8Type),
        Some(DataType::Utf8) => Column::Text(
            parts
                .iter()
                .flat_map(|a| a.as_string::<i32>().iter().map(|v| v.map(str::to_owned)))
                .collect(),
        ),
        Some(DataType::LargeUtf8) => Column::Text(
            parts
                .iter()
                .flat_map(|a| a.as_string::<i64>().iter().map(|v| v.map(str::to_owned)))
                .collect(),
        ),
        Some(DataType::Utf8View) => Column::Text(
            parts
                .iter()
                .flat_map(|a| a.as_string_view().iter().map(|v| v.map(str::to_owned)))
                .collect(),
        ),
        Some(DataType::Dictionary(key, value)) => {
            // Categorical strings (polars writes them): the values through the keys.
            if *value != DataType::Utf8 && *value != DataType::LargeUtf8 {
                return Column::Other(format!("Dictionary({key}, {value})"));
            }
            let mut out = Vec::new();
            for a in parts {
                let Some(d) = a.as_any_dictionary_opt() else {
                    return Column::Other(format!("{:?}", a.data_type()));
                };
                let values = d.values();
                let keys = d.normalized_keys();
                for (i, k) in keys.iter().enumerate() {
                    if a.is_null(i) {
                        out.push(None);
                    } else if let Some(s) = values.as_string_opt::<i32>() {
                        out.push(Some(s.value(*k).to_owned()));
                    } else if let Some(s) = values.as_string_opt::<i64>() {
                        out.push(Some(s.value(*k).to_owned()));
                    } else {
                        out.push(None);
                    }
                }
            }
            Column::Text(out)
        }
        Some(other) => Column::Other(other.to_string()),
        None => Column::Number(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_stems_come_from_names() {
        assert_eq!(
            Format::of_path(Path::new("a/runs.csv.gz")),
            Some(Format::Csv)
        );
        assert_eq!(
            Format::of_path(Path::new("x.PARQUET")),
            Some(Format::Parquet)
        );
        assert_eq!(Format::of_path(Path::new("x.feather")), Some(Format::Ipc));
        assert_eq!(Format::of_path(Path::new("x.txt")), None);
        assert_eq!(stem(Path::new("d/runs.v2.csv.gz")), "runs.v2");
        assert_eq!(ordinal(1), "1st");
        assert_eq!(ordinal(12), "12th");
        assert_eq!(ordinal(23), "23rd");
    }
}
