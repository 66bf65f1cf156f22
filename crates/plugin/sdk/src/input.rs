//! Reading a collector's input files: hashed (SHA-256) while they are read, and reported to the
//! host (ABI version 2), which records them in the bundle's manifest without reading them again.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::PluginError;

/// A file a collector read completely.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InputRecord {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub sha256_hex: String,
}

/// The files read during the current `collect` call. The host never calls one plugin
/// concurrently, and a collector may read on threads of its own, hence one list per library.
static RECORDED: Mutex<Vec<InputRecord>> = Mutex::new(Vec::new());

fn recorded() -> std::sync::MutexGuard<'static, Vec<InputRecord>> {
    RECORDED.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn start_recording() {
    recorded().clear();
}

pub(crate) fn take_recorded() -> Vec<InputRecord> {
    std::mem::take(&mut *recorded())
}

/// Reads the whole file at `path` (as the configuration gave it), hashing it on the way.
/// Errors name the file.
pub fn read_input(path: &Path) -> Result<Vec<u8>, PluginError> {
    let bytes = read_whole(path)?;
    record(path, &bytes, sha256_hex(&bytes));
    Ok(bytes)
}

/// Reads the whole file at `path` and gives it to `use_bytes` while another thread hashes it:
/// for large inputs, where hashing before parsing would add its time to the parse's (SHA-256
/// runs at about 2 GB/s; a parser on the other core need not wait for it). The file is recorded
/// as read once both are done.
///
/// Files of [`MAP_MIN_BYTES`] or more are mapped into memory rather than copied: a 100 MB file
/// maps in ~8 ms where reading it into a new buffer takes ~60 ms (page faults and the copy out
/// of the page cache; BENCHMARKS.md, "Import"). A mapped file must not be truncated by another
/// process while it is read (the read would fault); profiler outputs are finished files.
pub fn with_input<T>(
    path: &Path,
    use_bytes: impl FnOnce(&[u8]) -> Result<T, PluginError>,
) -> Result<T, PluginError> {
    let contents = Contents::open(path)?;
    let bytes = contents.bytes();
    let (result, hash) = std::thread::scope(|scope| {
        let hasher = scope.spawn(|| sha256_hex(bytes));
        let result = use_bytes(bytes);
        // A hashing thread cannot panic short of running out of memory; hash here if it did.
        let hash = hasher.join().unwrap_or_else(|_| sha256_hex(bytes));
        (result, hash)
    });
    let value = result?;
    record(path, bytes, hash);
    Ok(value)
}

/// Files this large are mapped by [`with_input`], smaller ones read.
pub const MAP_MIN_BYTES: u64 = 16 << 20;

/// A file's contents: read into memory, or mapped when large.
enum Contents {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Contents {
    fn open(path: &Path) -> Result<Self, PluginError> {
        let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
        let meta = file.metadata().map_err(|e| PluginError::io(path, &e))?;
        if meta.is_file() && meta.len() >= MAP_MIN_BYTES {
            // SAFETY: the map is read-only and private to this call; its bytes change only if
            // another process writes the file while it is read (see `with_input`).
            // Some filesystems cannot map; those are read.
            if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
                return Ok(Self::Mapped(map));
            }
        }
        read_whole(path).map(Self::Read)
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::Read(bytes) => bytes,
            Self::Mapped(map) => map,
        }
    }
}

/// The file's bytes, read into a buffer of its size (no growing copies).
fn read_whole(path: &Path) -> Result<Vec<u8>, PluginError> {
    let mut file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let size = file.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.read_to_end(&mut bytes)
        .map_err(|e| PluginError::io(path, &e))?;
    Ok(bytes)
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn record(path: &Path, bytes: &[u8], sha256_hex: String) {
    recorded().push(InputRecord {
        path: path.to_path_buf(),
        size_bytes: bytes.len() as u64,
        sha256_hex,
    });
}

/// A file read as a stream (a file larger than memory), hashed on the way. It is recorded as an
/// input when [`InputReader::finish`] is called after the last byte was read.
#[derive(Debug)]
pub struct InputReader {
    path: PathBuf,
    file: std::io::BufReader<std::fs::File>,
    hasher: Sha256,
    size_bytes: u64,
}

/// Opens the file at `path` for reading as a stream; see [`InputReader`].
pub fn open_input(path: &Path) -> Result<InputReader, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    Ok(InputReader {
        path: path.to_path_buf(),
        file: std::io::BufReader::with_capacity(1 << 20, file),
        hasher: Sha256::new(),
        size_bytes: 0,
    })
}

impl InputReader {
    /// Whether the file begins as a gzip stream does ([`is_gzip`]), looked at without
    /// consuming anything.
    pub fn is_gzip(&mut self) -> bool {
        use std::io::BufRead as _;
        self.file.fill_buf().is_ok_and(is_gzip)
    }

    /// The file's size on disk (for progress), if it can be read.
    pub fn len_on_disk(&self) -> Option<u64> {
        self.file.get_ref().metadata().ok().map(|m| m.len())
    }

    /// Records the file as read, with the hash of the bytes read.
    pub fn finish(self) {
        let sha256_hex = self
            .hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        recorded().push(InputRecord {
            path: self.path,
            size_bytes: self.size_bytes,
            sha256_hex,
        });
    }
}

impl Read for InputReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.size_bytes += n as u64;
        Ok(n)
    }
}

/// Whether `bytes` begin as a gzip stream does (its magic bytes `1f 8b`).
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// `bytes` inflated when they are a gzip stream (one or several members, as `gzip` and
/// `cat a.gz b.gz` write), else as they are; `path` names the file in an error. Files are
/// told by their first bytes, not by their names: `trace.json.gz` renamed `trace.json` reads.
pub fn inflate_if_gzip(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, PluginError> {
    if is_gzip(&bytes) {
        inflate(path, &bytes)
    } else {
        Ok(bytes)
    }
}

/// The gzip stream `bytes` inflated (all its members); `path` names the file in an error.
pub fn inflate(path: &Path, bytes: &[u8]) -> Result<Vec<u8>, PluginError> {
    // The last member's trailer gives its size mod 2^32 (the whole, for the usual one member):
    // the output is allocated once.
    let trailer = bytes
        .len()
        .checked_sub(4)
        .and_then(|at| bytes[at..].try_into().ok())
        .map_or(0, |b: [u8; 4]| u32::from_le_bytes(b) as usize);
    let capacity = trailer.max(bytes.len().saturating_mul(4)).min(1 << 32);
    let mut out = Vec::with_capacity(capacity);
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .map_err(|e| PluginError::new(format!("{}: not a valid gzip file: {e}", path.display())))?;
    Ok(out)
}

/// Reads the whole file at `path` as UTF-8 text, hashing it on the way (the bytes as they are
/// on disk), inflated first when it is gzip-compressed ([`inflate_if_gzip`]). A byte sequence
/// that is not UTF-8 is an error naming the file and the byte offset. A UTF-8 byte-order mark
/// at its start (Windows tools write one) is not part of the text.
pub fn read_input_to_string(path: &Path) -> Result<String, PluginError> {
    let mut text = String::from_utf8(inflate_if_gzip(path, read_input(path)?)?).map_err(|e| {
        PluginError::new(format!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Checks that `text`, the contents of `path` in a format of lines, does not end inside a value.
/// Every tool ends its last line with a newline; a last line without one was either cut short
/// while the file was written or copied, its last value possibly cut with it (`190.706924GB/s`
/// read as `19`), or written whole by a tool that leaves the newline out (rocprofv3's
/// `counter_collection.csv`, for one). A last line that ends in a plain number or a closing
/// quote is whole in form (its reader then checks that its fields are the header's and parse):
/// no reader tells it from a line the tool wrote, as none does with a newline after it. Any
/// other end (a unit cut off, a separator, a letter) is refused rather than read. An empty text
/// passes (its reader says what it lacks).
pub fn check_whole_lines(path: &Path, text: impl AsRef<[u8]>) -> Result<(), PluginError> {
    let text = text.as_ref();
    let whole_in_form = |b: &u8| b.is_ascii_digit() || *b == b'"';
    match text.last() {
        None | Some(b'\n') => Ok(()),
        Some(b) if whole_in_form(b) => Ok(()),
        Some(_) => {
            let line = text.iter().filter(|&&b| b == b'\n').count() + 1;
            Err(PluginError::at_line(
                path,
                line,
                "the file ends inside this line, with no newline after it: cut short? (a \
                 complete file ends its last line with a newline, or with a whole number or \
                 quoted field)",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_file_is_recorded_with_its_size_and_hash() {
        let dir = std::env::temp_dir().join(format!("yosoku-sdk-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("abc.txt");
        std::fs::write(&path, "abc").unwrap();
        start_recording();
        assert_eq!(read_input_to_string(&path).unwrap(), "abc");
        let records = take_recorded();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].size_bytes, 3);
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            records[0].sha256_hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::write(&path, [0x61, 0xff, 0x62]).unwrap();
        let e = read_input_to_string(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("abc.txt: not UTF-8 text (invalid byte at offset 1)"),
            "{e}"
        );
        // A byte-order mark is not text; the hash is of the bytes as they are.
        std::fs::write(&path, "\u{feff}abc").unwrap();
        assert_eq!(read_input_to_string(&path).unwrap(), "abc");
        let e = read_input(&dir.join("missing")).unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");

        // Hashed on another thread while used: the same record; a failed use records nothing.
        std::fs::write(&path, "abc").unwrap();
        start_recording();
        let len = with_input(&path, |bytes| Ok(bytes.len())).unwrap();
        assert_eq!(len, 3);
        let records = take_recorded();
        assert_eq!(records.len(), 1);
        assert_eq!(
            records[0].sha256_hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let e = with_input(&path, |_| Err::<(), _>(PluginError::new("bad"))).unwrap_err();
        assert_eq!(e.to_string(), "bad");
        assert!(take_recorded().is_empty());

        // A file large enough to be mapped: the same bytes and hash as read.
        let big = dir.join("big.bin");
        let contents: Vec<u8> = (0..MAP_MIN_BYTES + 3).map(|i| (i % 251) as u8).collect();
        std::fs::write(&big, &contents).unwrap();
        start_recording();
        assert!(with_input(&big, |bytes| Ok(bytes == contents.as_slice())).unwrap());
        let records = take_recorded();
        assert_eq!(records[0].size_bytes, MAP_MIN_BYTES + 3);
        assert_eq!(records[0].sha256_hex, sha256_hex(&contents));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_text_cut_inside_its_last_value_is_refused_with_the_line() {
        let path = Path::new("m.csv");
        assert!(check_whole_lines(path, "").is_ok());
        assert!(check_whole_lines(path, "a,b\n1,2\n").is_ok());
        assert!(check_whole_lines(path, "a,b\r\n1,2\r\n").is_ok());
        // Whole in form without the newline: a plain number or a closing quote last.
        assert!(check_whole_lines(path, "a,b\n1,19").is_ok());
        assert!(check_whole_lines(path, "a,b\n1,\"x\"").is_ok());
        for cut in ["a,b\n1,19GB", "a,b\n1,", "a,b\n1,\"x", "a,b\n1,1.5e"] {
            assert!(check_whole_lines(path, cut).is_err(), "{cut}");
        }
        let e = check_whole_lines(path, "a,b\n1,19%")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("m.csv:2: the file ends inside this line"),
            "{e}"
        );
    }
}
