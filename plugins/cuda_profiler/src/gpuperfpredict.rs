//! The gpuperfpredict dataset (Amaris et al.): nvprof metrics and events, launch configuration
//! and the measured `duration` (seconds) of one kernel on one GPU, one row per launch, exported
//! from R: the first column an unnamed row index, column names with `.` for punctuation, `NA` for
//! a missing value. Read directly from the `.csv.gz` files.
//!
//! The dataset is wide (a column per counter), and so is what a model needs: it becomes the
//! canonical `observations` table directly, one row per launch and one Float64 column per
//! counter, named by its canonical metric with the unit and kind in the field metadata, plus
//! `runs` (the durations) and `metric_names`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use yosoku_plugin_sdk::formats::refusal;

use arrow_array::builder::{ArrayBuilder, Float64Builder};
use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use yosoku_plugin_sdk::PluginError;
use yosoku_tables::{KIND_METADATA_KEY, OBSERVATIONS, UNIT_METADATA_KEY};

use crate::builder::{RunKey, Tables, is_null_cell};
use crate::input::{
    Header, RecordReader, check_quotes_closed, csv_stem, pieces_for, read_pieces, record_pieces,
};
use crate::units::{Prefixes, Scale, parse_number};

/// Columns that identify a launch rather than measure it (compared without regard to case): the
/// Rodinia files' and the Apps-Gpus files' (`AppName`, `Input.Size`, nvprof's `Start`), and the
/// description of the GPU the Apps-Gpus files repeat in every row (clock, cores, L2, bus,
/// bandwidth), which is the device's, not the launch's: specifications come from the device
/// catalogue (the GTX-970 rows carry the TITAN X's 3,072 cores).
const IDENTITY: &[&str] = &[
    "",
    "input.size.1",
    "input.size.2",
    "duration",
    "device",
    "name",
    "kernel",
    "gpu_name",
    "appname",
    "appid",
    "input.size",
    "context",
    "stream",
    "start",
    "compute_version",
    "gpu_id",
    "l1_cache_used",
    "max_clock_rate",
    "num_of_cores",
    "l2",
    "bus",
    "memory_clock",
    "bandwith",
];

fn is_identity(name: &str) -> bool {
    IDENTITY.iter().any(|i| i.eq_ignore_ascii_case(name))
}

/// The launch's shared memory sizes, which the dataset's R export writes without the unit row
/// nvprof's trace had: bytes in most files, KiB in others (the GTX 980 and Tesla P100 files:
/// `1.0625` where the other GPUs' files of the same kernel write `1088`).
const SHARED_MEMORY_BYTES: [&str; 2] = ["static_shared_memory", "dynamic_shared_memory"];

/// Whether a file's shared-memory sizes are in KiB: some size is not a whole multiple of 4
/// bytes. Shared arrays of 4- and 8-byte elements, and the sizes nvprof wrote in bytes in every
/// file of the dataset (256 to 16,392), are multiples of 4; the KiB files hold 1, 3, 1.0625 and
/// 11.59375. (A file whose sizes in KiB are all multiples of 4 would be read as bytes: the
/// numbers alone cannot tell them apart.)
fn written_in_kib<'a>(mut sizes: impl Iterator<Item = &'a f64>) -> bool {
    sizes.any(|v| v % 4.0 != 0.0)
}

/// Accumulates dataset files into one wide table.
#[derive(Debug)]
pub struct Dataset {
    tables: Tables,
    /// Per run: its handle and duration.
    rows: Vec<(u32, f64)>,
    /// Counter columns by name handle: the values of each piece of a file that has the column,
    /// with the row the piece starts at (rows of files without it are missing). Put together
    /// once at the end, at their final size: grown file by file, the columns were copied and
    /// faulted in again at every doubling, an eighth of the import.
    /// Files whose raw names differ for one metric (the Rodinia layout's `grid.x`, the Apps
    /// layout's `Grid.X`) share its column.
    columns: Vec<(u32, Vec<ColumnPiece>)>,
    column_of: HashMap<String, usize>,
}

/// A counter's values in one piece of a file: the row the piece starts at, and one value per row
/// (None where missing).
type ColumnPiece = (usize, Vec<Option<f64>>);

/// The identity columns of a dataset file.
#[derive(Debug, Clone, Copy)]
struct FileColumns {
    index: usize,
    size1: usize,
    size2: Option<usize>,
    duration: usize,
    name: usize,
    gpu: usize,
    /// The Apps-Gpus files' launch configuration (`Block.X`, `Block.Y`): three per input size.
    block: Option<(usize, usize)>,
}

impl FileColumns {
    /// The identity columns of a file's header; a header without them is refused, naming
    /// the column.
    fn of(
        header: &Header,
        path: &Path,
        text: &str,
        header_line: usize,
    ) -> Result<Self, PluginError> {
        let format = "a gpuperfpredict dataset file";
        let required = |names: &[&str], name: &str| match header.find_any(names) {
            Some(c) => Ok(c),
            None => header.require(path, header_line, name, format),
        };
        Ok(Self {
            index: header.find("").ok_or_else(|| {
                refusal(
                    path,
                    Some(header_line),
                    text,
                    ("cuda_profiler", "gpuperfpredict"),
                    "the header has no unnamed index column (R's export)",
                )
            })?,
            size1: required(&["input.size.1", "Input.Size"], "input.size.1")?,
            size2: header.find("input.size.2"),
            duration: required(&["duration"], "duration")?,
            name: required(&["name", "AppName"], "name")?,
            gpu: header.require(path, header_line, "gpu_name", format)?,
            // Only the Apps-Gpus layout (its `Input.Size`) has several launch configurations
            // per size; a Rodinia file's launches of one size are told apart by their order.
            block: header
                .names
                .iter()
                .any(|h| h == "Input.Size")
                .then(|| {
                    header
                        .find_any(&["Block.X"])
                        .zip(header.find_any(&["Block.Y"]))
                })
                .flatten(),
        })
    }
}

/// Field `column` of a record as text.
fn cell<'r>(r: &'r simd_csv::ZeroCopyByteRecord<'_>, column: usize) -> Cow<'r, str> {
    match r.unescape(column).unwrap_or_default() {
        // SAFETY: the record is of a text checked as UTF-8, and a field cut from it at ASCII
        // separators and quotes is UTF-8 too.
        Cow::Borrowed(b) => Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(b) }),
        Cow::Owned(b) => Cow::Owned(String::from_utf8_lossy(&b).into_owned()),
    }
}

/// What a counter cell holds: a number, no value (`Some(None)`: `NA`, empty, `n/a`) or
/// nothing a counter holds (`None`). Most cells are numbers: parsed first, the words for no
/// value looked for after.
fn cell_number(text: &str) -> Option<Option<f64>> {
    if let Some(v) = parse_number(text) {
        return Some(Some(v));
    }
    if text == "NA" || is_null_cell(text) {
        return Some(None);
    }
    // nvprof's utilisation levels (`Low (3)`), as the Apps-Gpus files keep them: the level in
    // parentheses.
    let (word, rest) = text.split_once(" (")?;
    let n = rest.strip_suffix(')')?;
    (!word.is_empty() && word.chars().all(|c| c.is_ascii_alphabetic()))
        .then(|| parse_number(n).map(Some))
        .flatten()
}

/// One launch of a file, as read on a piece's thread.
#[derive(Debug)]
struct FileRow {
    key: RunKey,
    parameters: String,
    seconds: f64,
}

/// The rows of one piece of a file and, per counter column, their values (converted).
#[derive(Debug)]
struct FilePiece {
    rows: Vec<FileRow>,
    values: Vec<Vec<Option<f64>>>,
}

/// What reading any piece of one file needs.
#[derive(Debug, Clone, Copy)]
struct FileReader<'a> {
    path: &'a Path,
    header: &'a Header,
    columns: FileColumns,
    /// (column, name handle, dataset column, conversion) of each counter column.
    counters: &'a [(usize, u32, usize, Scale)],
    stem: &'a str,
}

impl FileReader<'_> {
    /// Reads the rows of `piece`, which starts after the file's first `lines_before` lines and
    /// has `lines` lines.
    fn read(
        &self,
        piece: &str,
        lines_before: usize,
        lines: usize,
    ) -> Result<FilePiece, PluginError> {
        let Self {
            path,
            header,
            columns: cols,
            counters,
            stem,
        } = *self;
        let bytes = piece.as_bytes();
        // A record's line, counted only for an error (counting every record's lines was 5 % of
        // the reading): the line breaks before its first byte that is not a line end (with CRLF
        // ends a record may be placed on the line end before it).
        let line_of = |offset: usize| {
            let mut at = offset.min(bytes.len());
            while at < bytes.len() && matches!(bytes[at], b'\r' | b'\n') {
                at += 1;
            }
            lines_before + 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count()
        };
        // Records split by `simd-csv` (SIMD search for separators, no record copied, fields
        // unescaped only when quoted); the piece is UTF-8 and fields are cut at ASCII bytes.
        let mut reader = simd_csv::ZeroCopyReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(128 << 10)
            .from_reader(bytes);
        let mut out = FilePiece {
            rows: Vec::with_capacity(lines),
            values: (0..counters.len())
                .map(|_| Vec::with_capacity(lines))
                .collect(),
        };
        loop {
            let offset = reader.position() as usize;
            let record = reader.read_byte_record().map_err(|e| {
                PluginError::at_line(path, line_of(offset), format!("malformed CSV: {e}"))
            })?;
            let Some(r) = record else { break };
            if r.len() == 1 && r.get(0).is_some_and(<[u8]>::is_empty) {
                continue;
            }
            if r.len() != header.names.len() {
                return Err(PluginError::at_line(
                    path,
                    line_of(offset),
                    format!(
                        "expected {} fields as in the header, found {}",
                        header.names.len(),
                        r.len()
                    ),
                ));
            }
            let text = |column: usize| cell(&r, column);
            let number = |column: usize| -> Result<Option<f64>, PluginError> {
                let text = text(column);
                cell_number(&text).ok_or_else(|| {
                    PluginError::at_line(
                        path,
                        line_of(offset),
                        format!(
                            "column `{}`: expected a number or NA, found `{text}`",
                            header.names[column]
                        ),
                    )
                })
            };
            let s1 = text(cols.size1);
            let s2 = cols.size2.map_or(Cow::Borrowed("0"), &text);
            let mut variant = if s2 == "0" {
                s1.clone().into_owned()
            } else {
                format!("{s1}x{s2}")
            };
            let mut parameters = format!("input.size.1={s1};input.size.2={s2}");
            if let Some((bx, by)) = cols.block {
                let (bx, by) = (text(bx), text(by));
                variant.push_str(&format!("/{bx}x{by}"));
                parameters.push_str(&format!(";block={bx}x{by}"));
            }
            let seconds = number(cols.duration)?.filter(|s| *s > 0.0).ok_or_else(|| {
                PluginError::at_line(
                    path,
                    line_of(offset),
                    "column `duration`: expected a time > 0",
                )
            })?;
            let device = text(cols.gpu);
            if device.trim().is_empty() {
                return Err(PluginError::at(
                    path,
                    line_of(offset),
                    cols.gpu + 1,
                    format!(
                        "column `{}` is empty; the tool writes it in every row: cut short?",
                        header.names[cols.gpu]
                    ),
                ));
            }
            out.rows.push(FileRow {
                key: RunKey {
                    run_id: format!("{stem}:{}", text(cols.index)),
                    device: device.into_owned(),
                    program: text(cols.name).into_owned(),
                    variant,
                    kernel: None,
                },
                parameters,
                seconds,
            });
            for (&(c, _, _, scale), values) in counters.iter().zip(&mut out.values) {
                values.push(number(c)?.map(|v| scale.apply(v)));
            }
        }
        Ok(out)
    }
}

impl Default for Dataset {
    fn default() -> Self {
        Self::new()
    }
}

impl Dataset {
    pub fn new() -> Self {
        Self {
            tables: Tables::wide("gpuperfpredict", Prefixes::Binary),
            rows: Vec::new(),
            columns: Vec::new(),
            column_of: HashMap::new(),
        }
    }

    /// The column of raw name `name`: its metric's, unless `taken` (a file's columns so far)
    /// holds that one already -- two raw names of one metric in one file keep two columns.
    fn column(&mut self, name: u32, taken: &[usize]) -> usize {
        let metric = self.tables.metric(name).0;
        let key = match self.column_of.get(metric) {
            Some(c) if taken.contains(c) => format!("{metric}\u{0}{name}"),
            _ => metric.to_owned(),
        };
        if let Some(&c) = self.column_of.get(&key) {
            return c;
        }
        self.columns.push((name, Vec::new()));
        self.column_of.insert(key, self.columns.len() - 1);
        self.columns.len() - 1
    }

    /// Adds one file of the dataset. Large files are read in pieces on all cores
    /// (`input::pieces_for`) and put together in file order.
    pub fn read(&mut self, path: &Path, text: &str) -> Result<(), PluginError> {
        yosoku_plugin_sdk::check_whole_lines(path, text)?;
        self.read_in_pieces(path, text, None)
    }

    fn read_in_pieces(
        &mut self,
        path: &Path,
        text: &str,
        pieces: Option<usize>,
    ) -> Result<(), PluginError> {
        let mut records = RecordReader::new(path, text);
        let Some(header_line) = records.read_next()? else {
            return Err(PluginError::new(format!("{}: empty file", path.display())));
        };
        let header = Header::new(records.record());
        let columns = FileColumns::of(&header, path, text, header_line)?;
        let counters = self.counter_columns(&header, path, header_line)?;
        let stem = csv_stem(path);
        let (rows_start, lines_before_rows) = records.next_start();
        let rows = &text[rows_start.min(text.len())..];
        let bounds = record_pieces(rows, pieces.unwrap_or_else(|| pieces_for(rows.len())));
        let file = FileReader {
            path,
            header: &header,
            columns,
            counters: &counters,
            stem: &stem,
        };
        // The lines before each piece, for its line numbers.
        let mut lines_before = Vec::with_capacity(bounds.len());
        let mut lines = lines_before_rows;
        for w in bounds.windows(2) {
            lines_before.push(lines);
            lines += rows.as_bytes()[w[0]..w[1]]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
        }
        lines_before.push(lines);
        // A file that ends inside a quoted field (a name cut short) is refused at the line the
        // field opens on, before any piece is read.
        check_quotes_closed(path, rows, &bounds, |offset| {
            let k = bounds.partition_point(|&b| b <= offset).saturating_sub(1);
            lines_before[k]
                + 1
                + rows.as_bytes()[bounds[k]..offset.min(rows.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
        })?;
        // (A piece has about as many rows as line breaks: room for them is made once.)
        let read_piece = |k: usize| {
            let piece = &rows[bounds[k]..bounds[k + 1]];
            file.read(
                piece,
                lines_before[k],
                lines_before[k + 1] - lines_before[k],
            )
        };
        let mut pieces = read_pieces(path, bounds.len() - 1, read_piece)
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        for (k, &(_, handle, _, _)) in counters.iter().enumerate() {
            let sizes = || pieces.iter().flat_map(|p| p.values[k].iter().flatten());
            if SHARED_MEMORY_BYTES.contains(&self.tables.metric(handle).0)
                && written_in_kib(sizes())
            {
                for v in pieces
                    .iter_mut()
                    .flat_map(|p| p.values[k].iter_mut().flatten())
                {
                    *v *= 1024.0;
                }
            }
        }
        for piece in pieces {
            let start = self.rows.len();
            for row in piece.rows {
                let run = self.tables.key(row.key);
                self.tables
                    .add_run(run, Some(&row.parameters), "kernel", row.seconds);
                self.rows.push((run, row.seconds));
            }
            for (&(_, handle, column, _), values) in counters.iter().zip(piece.values) {
                let present = values.iter().filter(|v| v.is_some()).count();
                self.tables.count_values(handle, present as i64);
                self.columns[column].1.push((start, values));
            }
        }
        Ok(())
    }

    /// Each counter column of a file's header: its place, its name's handle, the table column
    /// it fills and its unit conversion, resolved once per file. A name the header repeats
    /// would give a row two values of one counter: an error.
    fn counter_columns(
        &mut self,
        header: &Header,
        path: &Path,
        header_line: usize,
    ) -> Result<Vec<(usize, u32, usize, Scale)>, PluginError> {
        let mut counters: Vec<(usize, u32, usize, Scale)> = Vec::new();
        let mut taken = Vec::new();
        for i in (0..header.names.len()).filter(|&i| !is_identity(&header.names[i])) {
            let handle = self.tables.name(&header.names[i]);
            let scale = self.tables.scale(handle, "");
            let column = self.column(handle, &taken);
            taken.push(column);
            counters.push((i, handle, column, scale));
        }
        let mut seen: HashMap<u32, usize> = HashMap::new();
        for &(i, handle, _, _) in &counters {
            if let Some(first) = seen.insert(handle, i) {
                return Err(PluginError::at_line(
                    path,
                    header_line,
                    format!(
                        "column `{}` appears twice in the header (columns {} and {})",
                        header.names[i],
                        first + 1,
                        i + 1
                    ),
                ));
            }
        }
        Ok(counters)
    }

    /// `runs`, `observations` and `metric_names`.
    pub fn finish(self) -> Result<Vec<(String, RecordBatch)>, PluginError> {
        let n = self.rows.len();
        let key = |f: &dyn Fn(&RunKey) -> &str| -> ArrayRef {
            Arc::new(StringArray::from_iter_values(
                self.rows
                    .iter()
                    .map(|(run, _)| f(self.tables.run_key(*run))),
            ))
        };
        let mut columns: Vec<ArrayRef> = vec![
            key(&|k| &k.run_id),
            key(&|k| &k.device),
            key(&|k| &k.program),
            key(&|k| &k.variant),
            Arc::new(Float64Array::from_iter_values(
                self.rows.iter().map(|r| r.1),
            )),
        ];
        let mut fields: Vec<Field> = OBSERVATIONS.fields();
        let mut used: Vec<String> = fields.iter().map(|f| f.name().clone()).collect();
        for (handle, pieces) in self.columns {
            let (metric, kind) = self.tables.metric(handle);
            // Two raw names of one metric keep the second's raw name.
            let name = if used.iter().any(|u| u == metric) {
                format!("{metric}:{handle}")
            } else {
                metric.to_owned()
            };
            used.push(name.clone());
            let mut metadata = HashMap::new();
            if let Some(unit) = self.tables.canonical_unit(handle) {
                metadata.insert(UNIT_METADATA_KEY.to_owned(), unit.to_owned());
            }
            if let Some(kind) = kind {
                metadata.insert(KIND_METADATA_KEY.to_owned(), kind.to_owned());
            }
            fields.push(Field::new(name, DataType::Float64, true).with_metadata(metadata));
            // Rows of files without the column are missing.
            let mut values = Float64Builder::with_capacity(n);
            for (start, piece) in pieces {
                values.append_nulls(start - values.len());
                for v in piece {
                    values.append_option(v);
                }
            }
            values.append_nulls(n - values.len());
            columns.push(Arc::new(values.finish()));
        }
        let observations = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| PluginError::new(format!("building `observations`: {e}")))?;
        OBSERVATIONS.check(&observations)?;
        let mut out = self.tables.finish()?;
        out.insert(1, ("observations".to_owned(), observations));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real_file() -> (std::path::PathBuf, String) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/public/bpnn_layerforward_CUDA-Tesla-K40.csv.gz");
        let text = crate::input::read_text(&path).unwrap();
        (path, text)
    }

    fn read(
        path: &Path,
        text: &str,
        pieces: usize,
    ) -> Result<Vec<(String, RecordBatch)>, PluginError> {
        let mut dataset = Dataset::new();
        dataset.read_in_pieces(path, text, Some(pieces))?;
        dataset.finish()
    }

    #[test]
    fn a_file_read_in_pieces_gives_the_tables_of_one_reader() {
        let (path, text) = real_file();
        let one = read(&path, &text, 1).unwrap();
        assert_eq!(one[0].1.num_rows(), 57);
        for pieces in [2, 3, 7, 64] {
            assert_eq!(read(&path, &text, pieces).unwrap(), one, "{pieces} pieces");
        }
    }

    #[test]
    fn a_counter_named_twice_in_the_header_is_an_error() {
        let (path, text) = real_file();
        let (header, rows) = text.split_once('\n').unwrap();
        let renamed = header.replacen("\"gld_inst_32bit\"", "\"elapsed_cycles_sm\"", 1);
        assert_ne!(renamed, header);
        let e = read(&path, &format!("{renamed}\n{rows}"), 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                ":1: column `elapsed_cycles_sm` appears twice in the header (columns 14 and 15)"
            ),
            "{e}"
        );
    }

    #[test]
    fn an_error_in_a_later_piece_names_its_line() {
        let (path, text) = real_file();
        // A counter (column 14, `elapsed_cycles_sm`) made bad on the file's last line.
        let lines: Vec<&str> = text.lines().collect();
        let last_line = lines.len();
        let mut fields: Vec<&str> = lines[last_line - 1].split(',').collect();
        fields[13] = "many";
        let last = fields.join(",");
        let bad = format!("{}\n{last}\n", lines[..last_line - 1].join("\n"));
        for pieces in [1, 2, 5] {
            let e = read(&path, &bad, pieces).unwrap_err().to_string();
            assert!(
                e.contains(&format!(":{last_line}: column `")),
                "{pieces} pieces: {e}"
            );
            assert!(e.contains("found `many`"), "{e}");
        }
    }
}
