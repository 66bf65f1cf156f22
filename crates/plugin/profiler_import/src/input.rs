//! Reading profiler files: plain or gzip-compressed text, CSV records with their line numbers.

use std::path::Path;

use yosoku_plugin_sdk::PluginError;

/// Reads a text file, decompressing it when it is gzip (by its magic bytes, whatever its name),
/// without a byte-order mark at its start.
pub fn read_text(path: &Path) -> Result<String, PluginError> {
    text_of(path, read_bytes(path)?)
}

/// Reads a file's bytes, hashed as they are on disk, decompressed when they are gzip: for a
/// reader that tells a binary format from text by its first bytes ([`text_of`] then).
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, PluginError> {
    // Hashed while read: the host records the file without reading it again.
    let bytes = yosoku_plugin_sdk::read_input(path)?;
    yosoku_plugin_sdk::inflate_if_gzip(path, bytes)
}

/// The text of `bytes` read from `path` ([`read_bytes`]), without a byte-order mark.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, PluginError> {
    let mut text = String::from_utf8(bytes).map_err(|e| not_utf8(path, e.utf8_error()))?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    Ok(text)
}

/// The UTF-8 byte-order mark some tools (Windows ones) write first: not part of the text.
const BOM: char = '\u{feff}';

fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// [`read_text`] for large files: `use_text` reads the text while another thread hashes the
/// file (yosoku_plugin_sdk::with_input).
pub fn with_text<T>(
    path: &Path,
    use_text: impl FnOnce(&str) -> Result<T, PluginError>,
) -> Result<T, PluginError> {
    yosoku_plugin_sdk::with_input(path, |bytes| {
        if yosoku_plugin_sdk::is_gzip(bytes) {
            let text = yosoku_plugin_sdk::inflate(path, bytes)?;
            use_text(without_bom(utf8_in_pieces(path, &text)?))
        } else {
            use_text(without_bom(utf8_in_pieces(path, bytes)?))
        }
    })
}

/// `bytes` as text, checked on all cores when large (the check is a serial pass over the whole
/// input before any reader thread can start). Errors name the file and the byte offset.
fn utf8_in_pieces<'b>(path: &Path, bytes: &'b [u8]) -> Result<&'b str, PluginError> {
    let parts = pieces_for(bytes.len());
    if parts <= 1 {
        return std::str::from_utf8(bytes).map_err(|e| not_utf8(path, e));
    }
    // Cut where a character starts (not at a continuation byte, 0b10xx_xxxx): the whole is
    // UTF-8 exactly when every piece is.
    let mut bounds = vec![0];
    for k in 1..parts {
        let mut cut = bytes.len() * k / parts;
        while cut < bytes.len() && bytes[cut] & 0xC0 == 0x80 {
            cut += 1;
        }
        bounds.push(cut);
    }
    bounds.push(bytes.len());
    let checks: Vec<Option<Result<(), (usize, std::str::Utf8Error)>>> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = bounds
                .windows(2)
                .map(|w| {
                    let (from, to) = (w[0], w[1]);
                    scope.spawn(move || {
                        std::str::from_utf8(&bytes[from..to])
                            .map(|_| ())
                            .map_err(|e| (from, e))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().ok()).collect()
        });
    if checks.iter().any(Option::is_none) {
        // A checking thread died (it cannot short of memory): check on this one.
        return std::str::from_utf8(bytes).map_err(|e| not_utf8(path, e));
    }
    if let Some(Some(Err((from, e)))) = checks.into_iter().find(|c| matches!(c, Some(Err(_)))) {
        return Err(PluginError::new(format!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            from + e.valid_up_to()
        )));
    }
    // SAFETY: every piece is UTF-8 and each starts at a character boundary, so the whole is.
    Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
}

fn not_utf8(path: &Path, e: std::str::Utf8Error) -> PluginError {
    PluginError::new(format!(
        "{}: not UTF-8 text (invalid byte at offset {})",
        path.display(),
        e.valid_up_to()
    ))
}

/// Texts smaller than this are read on one thread (starting threads costs more than it saves).
pub const PARALLEL_MIN_BYTES: usize = 1 << 20;

/// How many pieces to read `len` bytes of records in: one per core (at most 8) from
/// [`PARALLEL_MIN_BYTES`] on, else one.
pub fn pieces_for(len: usize) -> usize {
    if len >= PARALLEL_MIN_BYTES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    } else {
        1
    }
}

/// Where to cut `rows` into at most `parts` pieces of whole records: at a line break outside any
/// quoted field (an even number of quotes before it: RFC 4180 quotes fields whole and doubles
/// quotes inside them, as ncu does).
pub fn record_pieces(rows: &str, parts: usize) -> Vec<usize> {
    let bytes = rows.as_bytes();
    let mut bounds = vec![0];
    let mut scanned = 0;
    let mut quotes_odd = false;
    for k in 1..parts {
        let target = bytes.len() * k / parts;
        if target <= scanned {
            continue;
        }
        quotes_odd ^= odd_quotes(&bytes[scanned..target]);
        scanned = target;
        while let Some(&b) = bytes.get(scanned) {
            scanned += 1;
            match b {
                b'"' => quotes_odd = !quotes_odd,
                b'\n' if !quotes_odd => break,
                _ => {}
            }
        }
        if scanned < bytes.len() {
            bounds.push(scanned);
        }
    }
    bounds.push(bytes.len());
    bounds.dedup();
    bounds
}

/// Fails when the last piece of `rows` (from `bounds`, [`record_pieces`]) holds an odd number of
/// quotes: the text ends inside a quoted field (cut short), which a CSV reader would take as
/// that field's value. `line_of` numbers a byte offset of `rows` as a line of the file.
pub fn check_quotes_closed(
    path: &Path,
    rows: &str,
    bounds: &[usize],
    line_of: impl Fn(usize) -> usize,
) -> Result<(), PluginError> {
    let start = bounds.len().checked_sub(2).map_or(0, |i| bounds[i]);
    match rows.as_bytes().get(start..) {
        Some(last) if odd_quotes(last) => Err(PluginError::at_line(
            path,
            line_of(start),
            "the file ends inside a quoted field that opens in this piece of it (from this line): cut short?",
        )),
        _ => Ok(()),
    }
}

/// Whether `bytes` hold an odd number of quotes: the parity alone, XORed in 64 lanes (a shape
/// the compiler turns into vector compares; a byte-at-a-time fold was 5 % of a 100 MB ncu import).
fn odd_quotes(bytes: &[u8]) -> bool {
    let mut lanes = [0u8; 64];
    let mut chunks = bytes.chunks_exact(64);
    for chunk in &mut chunks {
        for (lane, &b) in lanes.iter_mut().zip(chunk) {
            *lane ^= u8::from(b == b'"');
        }
    }
    let tail = chunks
        .remainder()
        .iter()
        .fold(0u8, |acc, &b| acc ^ u8::from(b == b'"'));
    lanes.iter().fold(tail, |acc, &l| acc ^ l) == 1
}

/// Reads pieces `0..count` of `path` with `read`, one thread each (the first on this one), and
/// gives their results in piece order.
pub fn read_pieces<T: Send>(
    path: &Path,
    count: usize,
    read: impl Fn(usize) -> Result<T, PluginError> + Sync,
) -> Vec<Result<T, PluginError>> {
    if count <= 1 {
        return (0..count).map(read).collect();
    }
    std::thread::scope(|scope| {
        let read = &read;
        let others: Vec<_> = (1..count).map(|k| scope.spawn(move || read(k))).collect();
        let mut pieces = vec![read(0)];
        for handle in others {
            pieces.push(handle.join().unwrap_or_else(|_| {
                Err(PluginError::new(format!(
                    "{}: reading a piece of the file failed",
                    path.display()
                )))
            }));
        }
        pieces
    })
}

/// The lines at the end of `rows` (a profiler's table, from its header on) that are not rows of
/// it: the profiler's own (`==...`), blank lines, and lines without a comma. Every row of a table
/// of several columns has a comma, so such a line is the output of the profiled program, printed
/// after the table; a row with a damaged field still has its commas and is left to the reader,
/// which refuses it. Returns their length in bytes and how many were the program's (neither the
/// profiler's nor blank).
pub fn lines_after_table(rows: &str) -> (usize, usize) {
    let (mut bytes, mut program_lines) = (0, 0);
    let mut end = rows.len();
    while end > 0 {
        let start = rows[..end.saturating_sub(1)]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let line = rows[start..end].trim_end_matches(['\n', '\r']);
        let banner = line.starts_with("==");
        if !banner && line.contains(',') {
            break;
        }
        if !banner && !line.trim().is_empty() {
            program_lines += 1;
        }
        bytes += end - start;
        end = start;
    }
    (bytes, program_lines)
}

/// The error for a text whose last record, starting at byte `start` on line `line`, holds an odd
/// number of quotes: a quoted field that the file ends inside (the CSV readers take what they
/// have as the field's value), so the file was cut short.
fn unclosed_quote(path: &Path, text: &[u8], start: usize, line: usize) -> Option<PluginError> {
    let quotes = text.get(start..)?.iter().filter(|&&b| b == b'"').count();
    (quotes % 2 == 1).then(|| {
        PluginError::at_line(
            path,
            line,
            "the file ends inside a quoted field that opens in this record: cut short?",
        )
    })
}

/// CSV records of `text` (RFC 4180 quoting, rows of any length), each with its 1-based line;
/// a text that ends inside a quoted field ends with an error.
pub fn csv_records(
    path: &Path,
    text: &str,
) -> impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>> {
    let path = path.to_owned();
    let mut records = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .into_records()
        .peekable();
    let bytes = text.as_bytes();
    let mut lines = LineCount::default();
    let mut last: Option<(usize, usize)> = None;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        match records.next() {
            Some(Ok(record)) => {
                let byte = record.position().map_or(0, |p| p.byte() as usize);
                let line = lines.line_at(bytes, byte);
                last = Some((byte, line));
                // The last record is checked before it is handed out: a reader would otherwise
                // see its cut field (`"` and a line end) before the error.
                if records.peek().is_none()
                    && let Some(e) = unclosed_quote(&path, bytes, byte, line)
                {
                    done = true;
                    return Some(Err(e));
                }
                Some(Ok((line, record)))
            }
            Some(Err(e)) => {
                let line = e
                    .position()
                    .map_or(0, |p| lines.line_at(bytes, p.byte() as usize));
                done = true;
                Some(Err(PluginError::at_line(
                    &path,
                    line,
                    format!("malformed CSV: {e}"),
                )))
            }
            None => {
                done = true;
                let (byte, line) = last?;
                unclosed_quote(&path, bytes, byte, line).map(Err)
            }
        }
    })
}

/// The 1-based line of a byte offset, counted forward from the last offset asked (offsets are
/// asked in increasing order). The CSV reader's own line numbers count a CRLF file's lines
/// short (`a\r\nb\r\nc` gives lines 1, 1, 2), and its record offsets may point at the line
/// end before the record: lines are counted here from the newlines before the record's first
/// byte that is not a line end.
#[derive(Debug, Clone, Copy, Default)]
struct LineCount {
    byte: usize,
    newlines: usize,
}

impl LineCount {
    fn line_at(&mut self, text: &[u8], byte: usize) -> usize {
        // With CRLF ends the reader can place a record's start on the `\n` of the line before.
        let mut byte = byte.min(text.len());
        while byte < text.len() && matches!(text[byte], b'\r' | b'\n') {
            byte += 1;
        }
        if byte >= self.byte {
            self.newlines += text[self.byte..byte]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
        } else {
            self.newlines = text[..byte].iter().filter(|&&b| b == b'\n').count();
        }
        self.byte = byte;
        self.newlines + 1
    }
}

/// CSV records of `text` read into one record reused from row to row ([`csv_records`] allocates
/// a record per row, which is most of the time of a large file's rows).
pub struct RecordReader<'a> {
    path: &'a Path,
    reader: csv::Reader<&'a [u8]>,
    record: csv::StringRecord,
    /// Lines of the file before `text` (a piece of it).
    lines_before: usize,
    text: &'a [u8],
    /// Where the last record read starts: (byte, line).
    last: Option<(usize, usize)>,
    lines: LineCount,
}

impl std::fmt::Debug for RecordReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordReader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl<'a> RecordReader<'a> {
    pub fn new(path: &'a Path, text: &'a str) -> Self {
        Self::after_lines(path, text, 0)
    }

    /// The records of `text`, a piece of a file that starts after its first `lines_before`
    /// lines (errors and lines are numbered as in the file).
    pub fn after_lines(path: &'a Path, text: &'a str, lines_before: usize) -> Self {
        Self {
            path,
            reader: csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(text.as_bytes()),
            record: csv::StringRecord::new(),
            lines_before,
            text: text.as_bytes(),
            last: None,
            lines: LineCount::default(),
        }
    }

    /// Where the next record starts: its byte offset in the text and the number of lines
    /// before it.
    pub fn next_start(&self) -> (usize, usize) {
        let byte = self.reader.position().byte() as usize;
        let mut lines = self.lines;
        (byte, self.lines_before + lines.line_at(self.text, byte) - 1)
    }

    /// Reads the next record; its 1-based line, or `None` at the end.
    pub fn read_next(&mut self) -> Result<Option<usize>, PluginError> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => match self.last {
                // The end: unless the last record ends inside a quoted field.
                Some((byte, line)) => match unclosed_quote(self.path, self.text, byte, line) {
                    Some(e) => Err(e),
                    None => Ok(None),
                },
                None => Ok(None),
            },
            Ok(true) => {
                let byte = self.record.position().map_or(0, |p| p.byte() as usize);
                let line = self.lines_before + self.lines.line_at(self.text, byte);
                self.last = Some((byte, line));
                Ok(Some(line))
            }
            Err(e) => {
                let line = self.lines_before
                    + e.position()
                        .map_or(0, |p| self.lines.line_at(self.text, p.byte() as usize));
                Err(PluginError::at_line(
                    self.path,
                    line,
                    format!("malformed CSV: {e}"),
                ))
            }
        }
    }

    /// The record [`RecordReader::read_next`] read.
    pub fn record(&self) -> &csv::StringRecord {
        &self.record
    }
}

/// Column positions of a header row, by name.
#[derive(Debug, Clone)]
pub struct Header {
    pub names: Vec<String>,
}

impl Header {
    pub fn new(record: &csv::StringRecord) -> Self {
        Self {
            names: record.iter().map(|s| s.trim().to_owned()).collect(),
        }
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The column of the first of `names` the header has, without regard to case: the tools
    /// spell one column differently by version (`Dispatch_ID`, `Dispatch_Id`; `Input.Size`).
    pub fn find_any(&self, names: &[&str]) -> Option<usize> {
        names
            .iter()
            .find_map(|n| self.names.iter().position(|h| h.eq_ignore_ascii_case(n)))
    }

    /// Checks that a record has as many fields as the header: a row cut short or with a stray
    /// separator is an error naming its line, never a value read from the wrong column.
    pub fn check_width(
        &self,
        path: &Path,
        line: usize,
        record: &csv::StringRecord,
    ) -> Result<(), PluginError> {
        if record.len() == self.names.len() {
            return Ok(());
        }
        Err(PluginError::at_line(
            path,
            line,
            format!(
                "expected {} fields as in the header, found {}",
                self.names.len(),
                record.len()
            ),
        ))
    }

    /// The position of a column the format requires.
    pub fn require(
        &self,
        path: &Path,
        line: usize,
        name: &str,
        format: &str,
    ) -> Result<usize, PluginError> {
        self.find(name).ok_or_else(|| {
            PluginError::at_line(
                path,
                line,
                format!(
                    "not {format}: the header has no column `{name}` (it has: {})",
                    self.names.join(", ")
                ),
            )
        })
    }
}

/// The field at `index` of a record, or an error naming the line and the column.
pub fn field<'r>(
    path: &Path,
    line: usize,
    record: &'r csv::StringRecord,
    index: usize,
    header: &Header,
) -> Result<&'r str, PluginError> {
    record.get(index).ok_or_else(|| {
        PluginError::at_line(
            path,
            line,
            format!(
                "expected {} fields as in the header, found {} (no column `{}`)",
                header.names.len(),
                record.len(),
                header.names.get(index).map_or("?", String::as_str)
            ),
        )
    })
}

/// The field at `index` of a record, which must hold text: empty, it is an error naming the line
/// and the column (a name or a device the tool always writes, lost to a cut: `"7",` then a line
/// end for `"7","[CUDA memcpy HtoD]"`).
pub fn text_field<'r>(
    path: &Path,
    line: usize,
    record: &'r csv::StringRecord,
    index: usize,
    header: &Header,
) -> Result<&'r str, PluginError> {
    let text = field(path, line, record, index, header)?;
    if text.trim().is_empty() {
        return Err(PluginError::at(
            path,
            line,
            index + 1,
            format!(
                "column `{}` is empty; the tool writes it in every row: cut short?",
                header.names.get(index).map_or("?", String::as_str)
            ),
        ));
    }
    Ok(text)
}

/// A CSV file's name without `.csv` and `.gz` (`kernel-GTX-680.csv.gz` -> `kernel-GTX-680`): the
/// run ids of dataset files begin with it.
pub fn csv_stem(path: &Path) -> String {
    path.file_name()
        .map(|n| {
            n.to_string_lossy()
                .trim_end_matches(".gz")
                .trim_end_matches(".csv")
                .to_owned()
        })
        .unwrap_or_default()
}

/// The program name of a kernel signature: `matmul_tiled(const float *, ...)` -> `matmul_tiled`,
/// `void k<1024>(float*)` -> `k<1024>`.
pub fn kernel_program(kernel: &str) -> String {
    let head = kernel.split('(').next().unwrap_or(kernel).trim();
    head.strip_prefix("void ").unwrap_or(head).trim().to_owned()
}

#[cfg(test)]
mod tests {
    /// A CRLF file's records are on the lines an LF file's are (the CSV reader alone counts
    /// `a\r\nb\r\nc` as lines 1, 1, 2).
    #[test]
    fn crlf_records_are_numbered_by_their_lines() {
        for text in ["a,b\r\nc,d\r\n\r\ne,f\r\n", "a,b\nc,d\n\ne,f\n"] {
            let lines: Vec<usize> = csv_records(Path::new("p"), text)
                .map(|r| r.unwrap().0)
                .collect();
            assert_eq!(lines, [1, 2, 4], "{text:?}");
            let mut r = RecordReader::after_lines(Path::new("p"), text, 10);
            let mut read = Vec::new();
            while let Some(l) = r.read_next().unwrap() {
                read.push(l);
            }
            assert_eq!(read, [11, 12, 14], "{text:?}");
        }
    }

    use super::*;

    #[test]
    fn a_text_that_ends_inside_a_quoted_field_is_an_error_from_both_readers() {
        let path = Path::new("t.csv");
        for (text, bad) in [
            ("a,b\n1,2\n", false),
            ("a,b\n\"x\ny\",2\n", false),
            ("a,b\n\"x\ny,2\n", true),
            ("a,b\n1,\"2\n", true),
            ("a,b\n1,\"say \"\"hi\"\"\"\n", false),
        ] {
            let all: Result<Vec<_>, _> = csv_records(path, text).collect();
            let mut reader = RecordReader::new(path, text);
            let read = loop {
                match reader.read_next() {
                    Ok(Some(_)) => continue,
                    other => break other,
                }
            };
            assert_eq!(all.is_err(), bad, "{text:?}: {all:?}");
            assert_eq!(read.is_err(), bad, "{text:?}: {read:?}");
            if bad {
                let e = all.unwrap_err().to_string();
                assert!(
                    e.contains("t.csv:2: the file ends inside a quoted field"),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn large_text_is_checked_in_pieces_as_a_whole() {
        // Characters of 1 to 4 bytes, so that some straddle every cut.
        let text = "aé€😀".repeat(PARALLEL_MIN_BYTES / 5);
        assert!(text.len() >= PARALLEL_MIN_BYTES);
        let path = Path::new("big.csv");
        assert_eq!(utf8_in_pieces(path, text.as_bytes()).unwrap(), text);
        for bad_at in [3, text.len() / 2 + 1, text.len() - 2] {
            let mut bytes = text.clone().into_bytes();
            bytes[bad_at] = 0xff;
            let expected = std::str::from_utf8(&bytes).unwrap_err().valid_up_to();
            let e = utf8_in_pieces(path, &bytes).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("big.csv: not UTF-8 text (invalid byte at offset {expected})")
            );
        }
    }

    #[test]
    fn quote_parity_equals_a_count() {
        // Quotes at irregular places, across several 64-byte lanes and a remainder.
        let text: String = (0..1000u32)
            .map(|i| if i * 7919 % 13 < 3 { '"' } else { 'x' })
            .collect();
        let bytes = text.as_bytes();
        for end in 0..=bytes.len() {
            let count = bytes[..end].iter().filter(|&&b| b == b'"').count();
            assert_eq!(
                odd_quotes(&bytes[..end]),
                count % 2 == 1,
                "first {end} bytes"
            );
        }
    }

    #[test]
    fn records_are_cut_outside_quoted_line_breaks() {
        let rows = "\"a\",1\n\"two\nlines\",2\n\"c\"\"\",3\n".repeat(50);
        for parts in 1..20 {
            let bounds = record_pieces(&rows, parts);
            assert_eq!((bounds[0], *bounds.last().unwrap()), (0, rows.len()));
            for &b in &bounds[1..bounds.len() - 1] {
                assert!(
                    rows[..b].ends_with(",1\n")
                        || rows[..b].ends_with(",2\n")
                        || rows[..b].ends_with(",3\n"),
                    "cut at {b}"
                );
            }
        }
    }

    #[test]
    fn kernel_names_become_programs() {
        assert_eq!(
            kernel_program("matmul_tiled(const float *, const float *, float *, int)"),
            "matmul_tiled"
        );
        assert_eq!(
            kernel_program("void better_reduce_kernel<unsigned int=1024>(float*, float*)"),
            "better_reduce_kernel<unsigned int=1024>"
        );
        assert_eq!(
            kernel_program("bpnn_layerforward_CUDA"),
            "bpnn_layerforward_CUDA"
        );
    }

    #[test]
    fn gzip_is_read_by_its_magic_bytes() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"a,b\n1,2\n").unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        assert_eq!(read_text(&path).unwrap(), "a,b\n1,2\n");
        std::fs::write(&path, [0x1f, 0x8b, 0, 1, 2]).unwrap();
        assert!(
            read_text(&path)
                .unwrap_err()
                .to_string()
                .contains("not a valid gzip file")
        );
    }

    #[test]
    fn the_program_s_lines_after_a_table_are_found_and_rows_are_not() {
        let table = "\"ID\",\"x\"\n\"0\",\"1\"\n";
        assert_eq!(lines_after_table(table), (0, 0));
        let after = "done\n\n==PROF== Disconnected\nPASSED\n";
        assert_eq!(
            lines_after_table(&format!("{table}{after}")),
            (after.len(), 2)
        );
        // A damaged last row keeps its commas: it stays in the table, for the reader to refuse.
        assert_eq!(lines_after_table("\"ID\",\"x\"\nsoon,1\n"), (0, 0));
    }
}
