//! One rank's log as the interposer writes it (`plugins/mpi_timer/interposer/yosoku_mpi_timer.c`, format
//! version 1): `#` metadata lines, interned call sites, a tab-separated header and one line per
//! call, mark or iteration marker.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use yosoku_plugin_sdk::PluginError;

/// The first line of every log.
pub const MAGIC: &str = "# yosoku-mpi-timer 1";
/// The header of the event lines.
pub const HEADER: &str = "event\tname\tsite\tstart_ns\tend_ns\tbytes\tpeer";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// An MPI call: a communication block.
    Call,
    /// `yosoku_mark(name)`: names the compute block that ends at the next call.
    Mark,
    /// `yosoku_iteration()`: a main-loop iteration starts.
    Iteration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The file line (1-based; a log has fewer than 2^32 lines: at 50 bytes a line, 200 GB).
    pub line: u32,
    pub kind: EventKind,
    /// The MPI function, or the mark's name: one string per distinct name in a log (a log of
    /// millions of calls names a few dozen functions).
    pub name: Arc<str>,
    /// Index into [`RankLog::sites`] (calls only).
    pub site: Option<u32>,
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes: i64,
    pub peer: i32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RankLog {
    pub path: PathBuf,
    pub rank: i32,
    pub size: i32,
    pub host: String,
    pub command: String,
    /// The CPU binding the launcher recorded (`# binding`, optional).
    pub binding: Option<String>,
    /// The run's input parameters as `key=value` pairs separated by `;` (`# parameters`,
    /// optional: what the launcher set in `YOSOKU_MPI_PARAMETERS`).
    pub parameters: Option<String>,
    /// The CPU the rank was on when it wrote its log (`# cpu`, optional).
    pub cpu: Option<i32>,
    pub init_end_ns: u64,
    pub finalize_start_ns: Option<u64>,
    /// `complete`, `abort` or `exit`; `None` when the log stops before its `# end` line.
    pub end: Option<String>,
    pub sites: Vec<String>,
    pub events: Vec<Event>,
    /// The latest end of the events, kept when the events are let go (the import makes them
    /// into blocks and drops them); `None` without events.
    pub events_end_ns: Option<u64>,
}

impl RankLog {
    /// Where the last record ends: MPI_Finalize's start, else the last event's end.
    pub fn end_ns(&self) -> u64 {
        self.finalize_start_ns
            .or(self.events_end_ns)
            .unwrap_or(self.init_end_ns)
    }
}

/// Checks a run's parameters, `key=value` pairs separated by `;` (`n=65;iterations=100`): each
/// key a name (letters, digits, `_`, not starting with a digit), each value non-empty, no key
/// twice. What the `parameters` column of `mpi_ranks` and `runs` holds.
pub fn check_parameters(text: &str) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for pair in text.split(';') {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!(
                "`{pair}` is not a `key=value` pair (expected pairs separated by `;`, as `n=65;iterations=100`)"
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        let name = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name {
            return Err(format!(
                "`{key}` is not a parameter name (letters, digits and `_`, not starting with a digit)"
            ));
        }
        if value.is_empty() {
            return Err(format!("parameter `{key}` has no value"));
        }
        if seen.contains(&key) {
            return Err(format!("parameter `{key}` is given twice"));
        }
        seen.push(key);
    }
    Ok(())
}

/// A field's integer: `T::from_str`, but for the common case of a field of at most 19 decimal
/// digits (a time in ns, a byte count, a site), read digit by digit first (three million fields
/// in a real run, where the general parser's checks cost four times the digits').
fn number<T: std::str::FromStr + TryFrom<u64>>(
    path: &Path,
    line: usize,
    column: usize,
    field: &str,
    what: &str,
) -> Result<T, PluginError> {
    let bytes = field.as_bytes();
    if (1..=19).contains(&bytes.len()) {
        // 19 digits never overflow a u64.
        let mut value = 0u64;
        let mut digits = true;
        for &b in bytes {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                digits = false;
                break;
            }
            value = value * 10 + u64::from(d);
        }
        if digits && let Ok(v) = T::try_from(value) {
            return Ok(v);
        }
    }
    field.parse().map_err(|_| {
        PluginError::at(
            path,
            line,
            column,
            format!("{what}: expected an integer, found `{field}`"),
        )
    })
}

/// Parses the text of one rank's log.
pub fn parse(path: &Path, text: &str) -> Result<RankLog, PluginError> {
    let mut parser = Parser::new(path);
    parser.lines(text, true)?;
    parser.finish()
}

/// [`parse`] of the log `input` holds, read a block at a time: the text is never held whole (a
/// rank's log of ten million calls is half a GB, held beside its parsed calls). `read_error`
/// says what a failed read means (a damaged gzip stream, an unreadable file).
pub fn parse_from(
    path: &Path,
    input: &mut dyn std::io::Read,
    read_error: &dyn Fn(std::io::Error) -> PluginError,
) -> Result<RankLog, PluginError> {
    /// Bytes read at a time.
    const BLOCK_BYTES: usize = 8 << 20;
    parse_blocks(path, input, read_error, BLOCK_BYTES)
}

/// [`parse_from`], reading `block_bytes` at a time.
fn parse_blocks(
    path: &Path,
    input: &mut dyn std::io::Read,
    read_error: &dyn Fn(std::io::Error) -> PluginError,
    block_bytes: usize,
) -> Result<RankLog, PluginError> {
    let mut parser = Parser::new(path);
    use std::io::Read;
    let mut buffer: Vec<u8> = Vec::new();
    // Bytes of the log before `buffer`'s first.
    let mut offset = 0usize;
    loop {
        // Appended as read (a small log takes a small buffer, and none is zeroed first).
        let read = input
            .take(block_bytes as u64)
            .read_to_end(&mut buffer)
            .map_err(read_error)?;
        let at_end = read < block_bytes;
        // Whole lines only, but for the last block.
        let whole = if at_end {
            buffer.len()
        } else {
            match buffer.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => continue,
            }
        };
        let text = std::str::from_utf8(&buffer[..whole]).map_err(|e| {
            PluginError::new(format!(
                "{}: not UTF-8 text (invalid byte at offset {})",
                path.display(),
                offset + e.valid_up_to()
            ))
        })?;
        parser.lines(text, at_end)?;
        if at_end {
            return parser.finish();
        }
        buffer.drain(..whole);
        offset += whole;
    }
}

/// A rank's log read line by line ([`parse`], [`parse_from`]).
struct Parser<'p> {
    path: &'p Path,
    log: RankLog,
    meta: Metadata,
    header_seen: bool,
    names: Names,
    /// Lines read so far.
    read: usize,
}

impl<'p> Parser<'p> {
    fn new(path: &'p Path) -> Self {
        Self {
            path,
            log: RankLog {
                path: path.to_path_buf(),
                rank: -1,
                size: 0,
                host: String::new(),
                command: String::new(),
                binding: None,
                parameters: None,
                cpu: None,
                init_end_ns: 0,
                finalize_start_ns: None,
                end: None,
                sites: Vec::new(),
                events: Vec::new(),
                events_end_ns: None,
            },
            meta: Metadata::default(),
            header_seen: false,
            names: Names::default(),
            read: 0,
        }
    }

    /// The lines of `text`, the next part of the log; `last`: the log ends with it.
    fn lines(&mut self, text: &str, last: bool) -> Result<(), PluginError> {
        let mut lines = lines(text).peekable();
        while let Some(line) = lines.next() {
            // A last line without its newline: the file was cut while being written, and
            // whatever the line holds may be cut with it.
            if last && self.read > 0 && lines.peek().is_none() && !text.ends_with('\n') {
                return Err(PluginError::at_line(
                    self.path,
                    self.read + 1,
                    format!(
                        "rank {}'s log stops in the middle of a line (truncated)",
                        self.meta.rank.map_or("?".to_owned(), |r| r.to_string())
                    ),
                ));
            }
            self.line(line)?;
        }
        Ok(())
    }

    fn line(&mut self, line: &str) -> Result<(), PluginError> {
        self.read += 1;
        let (path, n) = (self.path, self.read);
        if n == 1 {
            if line.trim_end() == MAGIC {
                return Ok(());
            }
            return Err(PluginError::at_line(
                path,
                1,
                format!(
                    "expected `{MAGIC}` (a log of yosoku's MPI timer interposer), found `{}`",
                    line.chars().take(60).collect::<String>()
                ),
            ));
        }
        if let Some(text) = line.strip_prefix("# ") {
            return self.meta.read(&mut self.log, path, n, line, text);
        }
        if !self.header_seen {
            if line != HEADER {
                return Err(PluginError::at_line(
                    path,
                    n,
                    format!("expected the header `{}`", HEADER.replace('\t', "<tab>")),
                ));
            }
            self.header_seen = true;
            return Ok(());
        }
        if self.log.end.is_some() {
            return Err(PluginError::at_line(
                path,
                n,
                "an event after the `# end` line",
            ));
        }
        let event = event(path, n, line, self.log.sites.len(), &mut self.names)?;
        self.log.events_end_ns = self.log.events_end_ns.max(Some(event.end_ns));
        self.log.events.push(event);
        Ok(())
    }

    fn finish(self) -> Result<RankLog, PluginError> {
        if self.read == 0 {
            return Err(PluginError::new(format!(
                "{}: empty log",
                self.path.display()
            )));
        }
        self.meta.complete(self.log)
    }
}

/// What a log's `# key value` lines say that its events are checked against.
#[derive(Debug, Default)]
struct Metadata {
    rank: Option<i32>,
    size: Option<i32>,
    init_end_ns: Option<u64>,
    /// The line of `# finalize_start_ns`.
    finalize_line: usize,
}

impl Metadata {
    /// A metadata line (`meta`: the text after `# `) at line `n`, into `log` or `self`. Keys this
    /// reader does not know are left alone (later versions may add some).
    fn read(
        &mut self,
        log: &mut RankLog,
        path: &Path,
        n: usize,
        line: &str,
        meta: &str,
    ) -> Result<(), PluginError> {
        let (key, value) = meta.split_once(' ').unwrap_or((meta, ""));
        let column = 3 + key.len() + 1;
        match key {
            "rank" => self.rank = Some(number::<i32>(path, n, column, value, "`# rank`")?),
            "size" => self.size = Some(number::<i32>(path, n, column, value, "`# size`")?),
            "host" => log.host = value.to_owned(),
            "pid" => {}
            "command" => log.command = value.to_owned(),
            "binding" => log.binding = Some(value.to_owned()),
            "parameters" => {
                check_parameters(value).map_err(|e| {
                    PluginError::at(path, n, column, format!("`# parameters`: {e}"))
                })?;
                log.parameters = Some(value.to_owned());
            }
            "cpu" => log.cpu = Some(number::<i32>(path, n, column, value, "`# cpu`")?),
            "init_end_ns" => {
                self.init_end_ns = Some(number::<u64>(path, n, column, value, "`# init_end_ns`")?);
            }
            "finalize_start_ns" => {
                self.finalize_line = n;
                log.finalize_start_ns = Some(number::<u64>(
                    path,
                    n,
                    column,
                    value,
                    "`# finalize_start_ns`",
                )?);
            }
            "site" => {
                let (index, name) = value.split_once(' ').unwrap_or((value, ""));
                let index: usize = number(path, n, column, index, "`# site` index")?;
                if index != log.sites.len() || name.is_empty() {
                    return Err(PluginError::at_line(
                        path,
                        n,
                        format!(
                            "expected `# site {} <module+offset>`, found `{line}`",
                            log.sites.len()
                        ),
                    ));
                }
                log.sites.push(name.to_owned());
            }
            "end" => {
                if !yosoku_tables::MPI_LOG_ENDS.contains(&value) {
                    return Err(PluginError::at(
                        path,
                        n,
                        column,
                        format!("`# end`: expected complete, abort or exit, found `{value}`"),
                    ));
                }
                log.end = Some(value.to_owned());
            }
            _ => {}
        }
        Ok(())
    }

    /// The log, once its rank, size and MPI_Init's end are known and its times fit them.
    fn complete(self, mut log: RankLog) -> Result<RankLog, PluginError> {
        let path = log.path.clone();
        let missing = |what: &str| {
            PluginError::new(format!(
                "{}: no `# {what}` line; the interposer writes it at MPI_Init",
                path.display()
            ))
        };
        log.rank = self.rank.ok_or_else(|| missing("rank"))?;
        log.size = self.size.ok_or_else(|| missing("size"))?;
        log.init_end_ns = self.init_end_ns.ok_or_else(|| missing("init_end_ns"))?;
        if let Some(f) = log.finalize_start_ns.filter(|&f| f < log.init_end_ns) {
            return Err(PluginError::at_line(
                &path,
                self.finalize_line,
                format!(
                    "MPI_Finalize starts at {f} ns, before MPI_Init ended (`# init_end_ns {}`)",
                    log.init_end_ns
                ),
            ));
        }
        // The interposer logs calls after MPI_Init returns; an earlier one is a damaged file
        // (and block times are measured from the end of MPI_Init).
        if let Some(e) = log.events.iter().find(|e| e.start_ns < log.init_end_ns) {
            return Err(PluginError::at_line(
                &path,
                e.line as usize,
                format!(
                    "start_ns {} is before MPI_Init ended (`# init_end_ns {}`)",
                    e.start_ns, log.init_end_ns
                ),
            ));
        }
        if log.rank < 0 || log.size <= 0 || log.rank >= log.size {
            return Err(PluginError::new(format!(
                "{}: rank {} of {} is not a rank of the run",
                path.display(),
                log.rank,
                log.size
            )));
        }
        Ok(log)
    }
}

/// The lines of `text` as `str::lines` gives them (without their `\n` or `\r\n`), found byte by
/// byte: the char searcher `lines` uses compared each line break it found through a `memcmp`
/// call, a tenth of the time of reading a log.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let line = match rest.bytes().position(|b| b == b'\n') {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

/// The names of the events, one shared string each (a log has millions of events and a few
/// dozen names).
type Names = HashSet<Arc<str>, foldhash::fast::RandomState>;

fn event(
    path: &Path,
    n: usize,
    line: &str,
    sites: usize,
    names: &mut Names,
) -> Result<Event, PluginError> {
    let mut fields = [""; 7];
    let mut count = 0;
    let mut start = 0;
    // Split at the tabs byte by byte (a tab is never part of a longer UTF-8 sequence).
    for (i, &b) in line.as_bytes().iter().enumerate() {
        if b == b'\t' {
            if let Some(slot) = fields.get_mut(count) {
                *slot = &line[start..i];
            }
            count += 1;
            start = i + 1;
        }
    }
    if let Some(slot) = fields.get_mut(count) {
        *slot = &line[start..];
    }
    count += 1;
    if count != 7 {
        return Err(PluginError::at_line(
            path,
            n,
            format!("expected 7 tab-separated fields, found {count}"),
        ));
    }
    // The 1-based column where field `i` starts.
    let column = |i: usize| 1 + fields[..i].iter().map(|f| f.len() + 1).sum::<usize>();
    let kind = match fields[0] {
        "call" => EventKind::Call,
        "mark" => EventKind::Mark,
        "iteration" => EventKind::Iteration,
        other => {
            return Err(PluginError::at(
                path,
                n,
                1,
                format!("expected call, mark or iteration, found `{other}`"),
            ));
        }
    };
    let site = if kind == EventKind::Call {
        let s: usize = number(path, n, column(2), fields[2], "site")?;
        if s >= sites {
            return Err(PluginError::at(
                path,
                n,
                column(2),
                format!("site {s} is not declared by a `# site` line above"),
            ));
        }
        Some(s as u32)
    } else {
        None
    };
    let start_ns: u64 = number(path, n, column(3), fields[3], "start_ns")?;
    let end_ns: u64 = number(path, n, column(4), fields[4], "end_ns")?;
    if end_ns < start_ns {
        return Err(PluginError::at(
            path,
            n,
            column(4),
            format!("end_ns {end_ns} is before start_ns {start_ns}"),
        ));
    }
    Ok(Event {
        line: u32::try_from(n).map_err(|_| {
            PluginError::at_line(path, n, "a log of more than 2^32 lines is not read")
        })?,
        kind,
        name: match names.get(fields[1]) {
            Some(name) => name.clone(),
            None => {
                let name: Arc<str> = Arc::from(fields[1]);
                names.insert(name.clone());
                name
            }
        },
        site,
        start_ns,
        end_ns,
        bytes: number(path, n, column(5), fields[5], "bytes")?,
        peer: number(path, n, column(6), fields[6], "peer")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const SMALL: &str = "# yosoku-mpi-timer 1\n# rank 1\n# size 2\n# host vm\n# pid 7\n\
# command ./a.out 10\n# init_end_ns 1000\n# site 0 a.out+0x10\n# site 1 a.out+0x20\n\
event\tname\tsite\tstart_ns\tend_ns\tbytes\tpeer\n\
call\tMPI_Send\t0\t1500\t1600\t8\t0\n\
mark\thalo\t-\t1700\t1700\t0\t-1\n\
call\tMPI_Allreduce\t1\t2000\t2100\t8\t-1\n\
# finalize_start_ns 2500\n# end complete\n";

    #[test]
    fn numbers_read_as_from_str_reads_them() {
        let p = Path::new("rank-0.tsv");
        for text in [
            "0",
            "7",
            "007",
            "+5",
            "-1",
            "",
            "12a",
            "2147483647",
            "2147483648",
            "999999999999999999",
            "1000000000000000000",
            "18446744073709551615",
            "18446744073709551616",
            "1773100000123456789",
        ] {
            let same = |a: Result<i32, PluginError>, b: Result<i32, _>| a.ok() == b.ok();
            assert!(
                same(number(p, 1, 1, text, "x"), text.parse()),
                "i32 {text:?}"
            );
            let a: Option<u64> = number(p, 1, 1, text, "x").ok();
            assert_eq!(a, text.parse().ok(), "u64 {text:?}");
            let a: Option<i64> = number(p, 1, 1, text, "x").ok();
            assert_eq!(a, text.parse().ok(), "i64 {text:?}");
            let a: Option<usize> = number(p, 1, 1, text, "x").ok();
            assert_eq!(a, text.parse().ok(), "usize {text:?}");
        }
    }

    #[test]
    fn a_log_read_a_block_at_a_time_parses_as_its_whole_text() {
        let p = Path::new("rank-1.tsv");
        let parse_in = |text: &[u8], block: usize| {
            parse_blocks(p, &mut &text[..], &|e| PluginError::io(p, &e), block)
                .map_err(|e| e.to_string())
        };
        let whole = parse(p, SMALL).unwrap();
        let cut = &SMALL[..SMALL.len() - 9];
        let crlf = SMALL.replace('\n', "\r\n");
        let mut bad = SMALL.as_bytes().to_vec();
        let at = SMALL.find("MPI_").unwrap();
        bad[at] = 0xff;
        // Blocks that end mid-line, at a line's end, and inside a \r\n pair.
        for block in [1, 2, 7, 64, 4096] {
            assert_eq!(parse_in(SMALL.as_bytes(), block).unwrap(), whole, "{block}");
            assert_eq!(
                parse_in(crlf.as_bytes(), block).unwrap(),
                parse(p, &crlf).unwrap()
            );
            assert_eq!(
                parse_in(cut.as_bytes(), block).unwrap_err(),
                parse(p, cut).unwrap_err().to_string(),
                "{block}"
            );
            assert_eq!(
                parse_in(&bad, block).unwrap_err(),
                format!("rank-1.tsv: not UTF-8 text (invalid byte at offset {at})")
            );
            assert!(parse_in(b"", block).unwrap_err().contains("empty log"));
        }
        let failing =
            |_: &mut [u8]| -> std::io::Result<usize> { Err(std::io::Error::other("gone")) };
        struct Failing<F>(F);
        impl<F: FnMut(&mut [u8]) -> std::io::Result<usize>> std::io::Read for Failing<F> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                (self.0)(buf)
            }
        }
        let e = parse_blocks(
            p,
            &mut Failing(failing),
            &|e| PluginError::new(format!("read: {e}")),
            16,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "read: gone");
    }

    #[test]
    fn lines_are_split_as_str_lines_splits_them() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\n\nb\n",
            "a\rb\r\n\r\n",
            "\r",
            "x\ty\u{e9}\n\u{3042}\r\n",
        ] {
            assert_eq!(
                lines(text).collect::<Vec<_>>(),
                text.lines().collect::<Vec<_>>(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_log_reads_with_its_metadata_sites_and_events() {
        let log = parse(Path::new("rank-1.tsv"), SMALL).unwrap();
        assert_eq!((log.rank, log.size, log.host.as_str()), (1, 2, "vm"));
        assert_eq!(log.command, "./a.out 10");
        assert_eq!(log.sites, ["a.out+0x10", "a.out+0x20"]);
        assert_eq!(log.events.len(), 3);
        assert_eq!(log.events[1].kind, EventKind::Mark);
        assert_eq!(log.events[2].site, Some(1));
        assert_eq!(log.end.as_deref(), Some("complete"));
        assert_eq!(log.end_ns(), 2500);
    }

    #[test]
    fn bad_lines_are_errors_with_line_and_column() {
        let p = Path::new("rank-1.tsv");
        let e = |text: &str| parse(p, text).unwrap_err().to_string();
        assert!(e("hello\n").starts_with("rank-1.tsv:1: expected `# yosoku-mpi-timer 1`"));
        let bad = SMALL.replace("call\tMPI_Send\t0\t1500", "call\tMPI_Send\t0\t15x0");
        assert_eq!(
            e(&bad),
            "rank-1.tsv:11:17: start_ns: expected an integer, found `15x0`"
        );
        let bad = SMALL.replace("call\tMPI_Send\t0\t", "call\tMPI_Send\t7\t");
        assert_eq!(
            e(&bad),
            "rank-1.tsv:11:15: site 7 is not declared by a `# site` line above"
        );
        // Block times are measured from the end of MPI_Init; the interposer logs no call
        // before it, so one is a damaged file (it was silently moved to MPI_Init's end).
        let bad = SMALL.replace("\t1500\t1600\t", "\t900\t1600\t");
        assert_eq!(
            e(&bad),
            "rank-1.tsv:11: start_ns 900 is before MPI_Init ended (`# init_end_ns 1000`)"
        );
        // Found by `cargo xtask fuzz --target mpi_timer_log`: the run's length (finalize minus
        // init) overflowed.
        let bad = SMALL.replace("# finalize_start_ns 2500", "# finalize_start_ns 900");
        assert_eq!(
            e(&bad),
            "rank-1.tsv:14: MPI_Finalize starts at 900 ns, before MPI_Init ended (`# init_end_ns 1000`)"
        );
        let bad = SMALL.replace("\t1600\t", "\t1400\t");
        assert!(
            e(&bad).contains("end_ns 1400 is before start_ns 1500"),
            "{}",
            e(&bad)
        );
        let bad = SMALL.replace("# rank 1\n", "# rank 5\n");
        assert!(e(&bad).contains("rank 5 of 2 is not a rank of the run"));
        let bad = SMALL.replace("\t8\t-1\n", "\t8\n");
        assert_eq!(
            e(&bad),
            "rank-1.tsv:13: expected 7 tab-separated fields, found 6"
        );
    }

    #[test]
    fn a_log_cut_short_has_no_end() {
        let cut = &SMALL[..SMALL.find("# finalize").unwrap()];
        let log = parse(Path::new("rank-1.tsv"), cut).unwrap();
        assert_eq!(log.end, None);
        assert_eq!(log.end_ns(), 2100);
    }

    #[test]
    fn a_runs_parameters_are_read_and_a_malformed_pair_is_placed() {
        let p = Path::new("rank-1.tsv");
        let with = SMALL.replace(
            "# init_end_ns",
            "# parameters n=65;steps=300\n# init_end_ns",
        );
        let log = parse(p, &with).unwrap();
        assert_eq!(log.parameters.as_deref(), Some("n=65;steps=300"));
        assert_eq!(parse(p, SMALL).unwrap().parameters, None);
        for (bad, message) in [
            ("n", "`n` is not a `key=value` pair"),
            ("n=65;n=97", "parameter `n` is given twice"),
            ("1n=65", "`1n` is not a parameter name"),
            ("n=", "parameter `n` has no value"),
        ] {
            let text = SMALL.replace(
                "# init_end_ns",
                &format!("# parameters {bad}\n# init_end_ns"),
            );
            let e = parse(p, &text).unwrap_err().to_string();
            assert!(e.starts_with("rank-1.tsv:7:14: `# parameters`: "), "{e}");
            assert!(e.contains(message), "{e}");
        }
    }
}
