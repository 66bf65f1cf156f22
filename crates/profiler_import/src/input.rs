//! Reading profiler files: plain or gzip-compressed text, CSV records with their line numbers.

use std::io::Read;
use std::path::Path;

use yosoku_plugin_sdk::PluginError;

/// Reads a text file, decompressing it when it is gzip (by its magic bytes, whatever its name).
pub fn read_text(path: &Path) -> Result<String, PluginError> {
    // Hashed while read: the host records the file without reading it again.
    let bytes = yosoku_plugin_sdk::read_input(path)?;
    let bytes = if is_gzip(&bytes) {
        gunzip(path, &bytes)?
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|e| not_utf8(path, e.utf8_error()))
}

/// [`read_text`] for large files: `use_text` reads the text while another thread hashes the
/// file (yosoku_plugin_sdk::with_input).
pub fn with_text<T>(
    path: &Path,
    use_text: impl FnOnce(&str) -> Result<T, PluginError>,
) -> Result<T, PluginError> {
    yosoku_plugin_sdk::with_input(path, |bytes| {
        if is_gzip(bytes) {
            let text = gunzip(path, bytes)?;
            use_text(std::str::from_utf8(&text).map_err(|e| not_utf8(path, e))?)
        } else {
            use_text(std::str::from_utf8(bytes).map_err(|e| not_utf8(path, e))?)
        }
    })
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

fn gunzip(path: &Path, bytes: &[u8]) -> Result<Vec<u8>, PluginError> {
    let mut out = Vec::with_capacity(bytes.len() * 6);
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .map_err(|e| PluginError::new(format!("{}: not a valid gzip file: {e}", path.display())))?;
    Ok(out)
}

fn not_utf8(path: &Path, e: std::str::Utf8Error) -> PluginError {
    PluginError::new(format!(
        "{}: not UTF-8 text (invalid byte at offset {})",
        path.display(),
        e.valid_up_to()
    ))
}

/// CSV records of `text` (RFC 4180 quoting, rows of any length), each with its 1-based line.
pub fn csv_records(
    path: &Path,
    text: &str,
) -> impl Iterator<Item = Result<(usize, csv::StringRecord), PluginError>> {
    let path = path.to_owned();
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .into_records()
        .map(move |r| {
            r.map(|record| {
                let line = record.position().map_or(0, |p| p.line() as usize);
                (line, record)
            })
            .map_err(|e| {
                let line = e.position().map_or(0, |p| p.line() as usize);
                PluginError::at_line(&path, line, format!("malformed CSV: {e}"))
            })
        })
}

/// CSV records of `text` read into one record reused from row to row ([`csv_records`] allocates
/// a record per row, which is most of the time of a large file's rows).
pub struct RecordReader<'a> {
    path: &'a Path,
    reader: csv::Reader<&'a [u8]>,
    record: csv::StringRecord,
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
        Self {
            path,
            reader: csv::ReaderBuilder::new()
                .has_headers(false)
                .flexible(true)
                .from_reader(text.as_bytes()),
            record: csv::StringRecord::new(),
        }
    }

    /// Reads the next record; its 1-based line, or `None` at the end.
    pub fn read_next(&mut self) -> Result<Option<usize>, PluginError> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => Ok(None),
            Ok(true) => Ok(Some(
                self.record.position().map_or(0, |p| p.line() as usize),
            )),
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
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

/// The program name of a kernel signature: `matmul_tiled(const float *, ...)` -> `matmul_tiled`,
/// `void k<1024>(float*)` -> `k<1024>`.
pub fn kernel_program(kernel: &str) -> String {
    let head = kernel.split('(').next().unwrap_or(kernel).trim();
    head.strip_prefix("void ").unwrap_or(head).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
