//! The kernel-trace binary format (docs/kernel-trace.md is the spec of record): a header, then
//! fixed-size little-endian records of (block, thread, SM, point, timestamp).
//!
//! [`Reader`] decodes a file fed in chunks of any size (a file larger than memory is read in
//! pieces; what it keeps is the decoded columns, 24 bytes a record), [`write`] writes one, and
//! [`KernelTrace::tables`] turns the records into `trace_records`, `trace_alignment` and spans.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use yosoku_tables::{TRACE_ALIGNMENT, TRACE_RECORDS};

use crate::TraceError;
use crate::spans::{Span, SpansBuilder, Timeline};

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"YKTRACE\0";
/// The version this crate writes and the newest it reads.
pub const VERSION: u16 = 1;
/// Bytes of the fixed part of the header, before the device name.
pub const FIXED_HEADER_BYTES: usize = 40;
/// Bytes of one record of layout 0.
pub const RECORD_BYTES: usize = 24;

/// The timer the timestamps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    /// `clock64()`: cycles of the SM's own counter; counters of different SMs are not synchronised.
    Clock64,
    /// `%globaltimer`: nanoseconds of one clock shared by all SMs.
    GlobalTimer,
}

impl Timer {
    pub fn code(self) -> u8 {
        match self {
            Timer::Clock64 => 0,
            Timer::GlobalTimer => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Timer::Clock64 => "clock64",
            Timer::GlobalTimer => "globaltimer",
        }
    }
}

/// The header of a kernel-trace file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    /// Bytes before the first record.
    pub header_bytes: usize,
    pub timer: Timer,
    pub sm_count: u32,
    /// The SM clock the cycles are converted with (kHz, as `cudaDeviceProp::clockRate`).
    pub clock_khz: u32,
    pub record_count: u64,
    /// Threads per block (0: not recorded).
    pub threads_per_block: u32,
    /// The records were generated (to measure yosoku itself), not measured (flags bit 0).
    pub synthetic: bool,
    pub device: String,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

impl Header {
    /// A header for `record_count` records, its size rounded up to 8 bytes.
    pub fn new(
        device: &str,
        timer: Timer,
        sm_count: u32,
        clock_khz: u32,
        record_count: u64,
    ) -> Self {
        let header_bytes = (FIXED_HEADER_BYTES + device.len()).div_ceil(8) * 8;
        Header {
            version: VERSION,
            header_bytes,
            timer,
            sm_count,
            clock_khz,
            record_count,
            threads_per_block: 0,
            synthetic: false,
            device: device.to_owned(),
        }
    }

    /// Reads a header from the start of a file. `bytes` may be longer than the header; when it is
    /// shorter, the error says how many bytes are needed.
    pub fn parse(bytes: &[u8]) -> Result<Header, TraceError> {
        let need = |n: usize, what: &str| {
            TraceError::format(
                format!("byte {}", bytes.len()),
                format!(
                    "truncated header: {what} needs {n} bytes, the file has {}",
                    bytes.len()
                ),
            )
        };
        if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
            return Err(TraceError::format(
                "byte 0",
                format!(
                    "not a kernel trace: the file starts with {:?}, expected the magic {:?} (docs/kernel-trace.md)",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(8)]),
                    String::from_utf8_lossy(&MAGIC[..7])
                ),
            ));
        }
        if bytes.len() < FIXED_HEADER_BYTES {
            return Err(need(FIXED_HEADER_BYTES, "the fixed header"));
        }
        let version = u16_at(bytes, 8);
        if version == 0 || version > VERSION {
            return Err(TraceError::format(
                "byte 8",
                format!(
                    "kernel-trace version {version}; this yosoku reads versions 1 to {VERSION} (a newer yosoku wrote it?)"
                ),
            ));
        }
        let header_bytes = usize::from(u16_at(bytes, 10));
        let record_bytes = usize::from(u16_at(bytes, 12));
        let timer = match bytes[14] {
            0 => Timer::Clock64,
            1 => Timer::GlobalTimer,
            t => {
                return Err(TraceError::format(
                    "byte 14",
                    format!("timer {t}: expected 0 (clock64) or 1 (globaltimer)"),
                ));
            }
        };
        let layout = bytes[15];
        if layout != 0 || record_bytes != RECORD_BYTES {
            return Err(TraceError::format(
                "byte 12",
                format!(
                    "record layout {layout} of {record_bytes} bytes; version {VERSION} defines layout 0 of {RECORD_BYTES} bytes"
                ),
            ));
        }
        let sm_count = u32_at(bytes, 16);
        let clock_khz = u32_at(bytes, 20);
        if timer == Timer::Clock64 && clock_khz == 0 {
            return Err(TraceError::format(
                "byte 20",
                "clock rate 0 kHz with the clock64 timer: cycles cannot be converted to time",
            ));
        }
        let record_count = u64_at(bytes, 24);
        let threads_per_block = u32_at(bytes, 32);
        let name_len = usize::from(u16_at(bytes, 36));
        let flags = u16_at(bytes, 38);
        if flags & !1 != 0 {
            return Err(TraceError::format(
                "byte 38",
                format!("flags {flags:#06x}: version {VERSION} defines bit 0 (synthetic) only"),
            ));
        }
        if header_bytes < FIXED_HEADER_BYTES + name_len {
            return Err(TraceError::format(
                "byte 10",
                format!(
                    "header size {header_bytes} is smaller than its {FIXED_HEADER_BYTES} fixed bytes and {name_len}-byte device name"
                ),
            ));
        }
        if bytes.len() < FIXED_HEADER_BYTES + name_len {
            return Err(need(FIXED_HEADER_BYTES + name_len, "the device name"));
        }
        let device = std::str::from_utf8(&bytes[FIXED_HEADER_BYTES..FIXED_HEADER_BYTES + name_len])
            .map_err(|e| {
                TraceError::format(
                    format!("byte {}", FIXED_HEADER_BYTES + e.valid_up_to()),
                    "the device name is not UTF-8",
                )
            })?
            .to_owned();
        Ok(Header {
            version,
            header_bytes,
            timer,
            sm_count,
            clock_khz,
            record_count,
            threads_per_block,
            synthetic: flags & 1 == 1,
            device,
        })
    }

    /// The header's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![
            0u8;
            self.header_bytes
                .max(FIXED_HEADER_BYTES + self.device.len())
        ];
        b[..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.version.to_le_bytes());
        let header_bytes = u16::try_from(b.len()).unwrap_or(u16::MAX);
        b[10..12].copy_from_slice(&header_bytes.to_le_bytes());
        b[12..14].copy_from_slice(&(RECORD_BYTES as u16).to_le_bytes());
        b[14] = self.timer.code();
        b[15] = 0;
        b[16..20].copy_from_slice(&self.sm_count.to_le_bytes());
        b[20..24].copy_from_slice(&self.clock_khz.to_le_bytes());
        b[24..32].copy_from_slice(&self.record_count.to_le_bytes());
        b[32..36].copy_from_slice(&self.threads_per_block.to_le_bytes());
        let name_len = u16::try_from(self.device.len()).unwrap_or(u16::MAX);
        b[36..38].copy_from_slice(&name_len.to_le_bytes());
        b[38..40].copy_from_slice(&u16::from(self.synthetic).to_le_bytes());
        b[FIXED_HEADER_BYTES..FIXED_HEADER_BYTES + self.device.len()]
            .copy_from_slice(self.device.as_bytes());
        b
    }
}

/// One record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub block: u32,
    pub thread: u32,
    pub sm: u32,
    pub point: u32,
    pub timestamp: u64,
}

/// Writes a kernel-trace file: the header (its record count set to the records given), then the
/// records.
pub fn write(header: &Header, records: &[Record], out: &mut impl Write) -> std::io::Result<()> {
    let header = Header {
        record_count: records.len() as u64,
        ..header.clone()
    };
    out.write_all(&header.to_bytes())?;
    write_records(records, out)
}

/// Writes records without a header (a writer streaming a trace too large to hold writes the
/// header, with the final count, first).
pub fn write_records(records: &[Record], out: &mut impl Write) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(RECORD_BYTES * 4096);
    for chunk in records.chunks(4096) {
        buf.clear();
        for r in chunk {
            buf.extend_from_slice(&r.block.to_le_bytes());
            buf.extend_from_slice(&r.thread.to_le_bytes());
            buf.extend_from_slice(&r.sm.to_le_bytes());
            buf.extend_from_slice(&r.point.to_le_bytes());
            buf.extend_from_slice(&r.timestamp.to_le_bytes());
        }
        out.write_all(&buf)?;
    }
    Ok(())
}

/// Decoded records, one column each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Columns {
    pub block: Vec<u32>,
    pub thread: Vec<u32>,
    pub sm: Vec<u32>,
    pub point: Vec<u32>,
    pub timestamp: Vec<u64>,
}

impl Columns {
    pub fn len(&self) -> usize {
        self.timestamp.len()
    }

    pub fn is_empty(&self) -> bool {
        self.timestamp.is_empty()
    }

    fn reserve(&mut self, n: usize) {
        self.block.reserve(n);
        self.thread.reserve(n);
        self.sm.reserve(n);
        self.point.reserve(n);
        self.timestamp.reserve(n);
    }

    fn decode(&mut self, bytes: &[u8]) {
        debug_assert!(bytes.len().is_multiple_of(RECORD_BYTES));
        self.reserve(bytes.len() / RECORD_BYTES);
        for r in bytes.chunks_exact(RECORD_BYTES) {
            self.block.push(u32_at(r, 0));
            self.thread.push(u32_at(r, 4));
            self.sm.push(u32_at(r, 8));
            self.point.push(u32_at(r, 12));
            self.timestamp.push(u64_at(r, 16));
        }
    }
}

/// A kernel trace read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelTrace {
    pub header: Header,
    pub records: Columns,
}

/// Decodes a kernel-trace file fed in chunks of any size.
#[derive(Debug, Default)]
pub struct Reader {
    /// Bytes of the header read so far (until it is complete), then of a partial record.
    pending: Vec<u8>,
    header: Option<Header>,
    records: Columns,
    /// Records decoded so far (taken or not).
    decoded: u64,
    /// Bytes consumed so far.
    offset: u64,
}

impl Reader {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next bytes of the file.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), TraceError> {
        if self.header.is_none() {
            // The fixed part first, then the device name it announces.
            loop {
                let want = self.header_bytes_wanted();
                let take = want.saturating_sub(self.pending.len()).min(chunk.len());
                self.pending.extend_from_slice(&chunk[..take]);
                self.offset += take as u64;
                chunk = &chunk[take..];
                if self.pending.len() < want {
                    if self.pending.len() >= MAGIC.len() && self.pending[..MAGIC.len()] != MAGIC {
                        // A wrong magic is reported at once, not at the end of a long file.
                        Header::parse(&self.pending)?;
                    }
                    return Ok(());
                }
                if want == self.header_bytes_wanted() {
                    break;
                }
            }
            let header = Header::parse(&self.pending)?;
            if self.pending.len() < header.header_bytes {
                // The padding is not all here yet.
                let take = (header.header_bytes - self.pending.len()).min(chunk.len());
                self.pending.extend_from_slice(&chunk[..take]);
                self.offset += take as u64;
                chunk = &chunk[take..];
                if self.pending.len() < header.header_bytes {
                    return Ok(());
                }
            }
            // Reserve no more than the file can hold: a corrupt count must not allocate.
            self.records
                .reserve(usize::try_from(header.record_count.min(1 << 24)).unwrap_or(0));
            self.pending.clear();
            self.header = Some(header);
        }
        let Some(header) = &self.header else {
            return Ok(());
        };
        let expected_end = (header.header_bytes as u64)
            .saturating_add(header.record_count.saturating_mul(RECORD_BYTES as u64));
        if self.offset + chunk.len() as u64 > expected_end {
            return Err(TraceError::format(
                format!("byte {expected_end}"),
                format!(
                    "data after the {} records the header announces (record {} would start here): a corrupt record count, or two traces concatenated",
                    header.record_count, header.record_count
                ),
            ));
        }
        self.offset += chunk.len() as u64;
        if !self.pending.is_empty() {
            let take = (RECORD_BYTES - self.pending.len()).min(chunk.len());
            self.pending.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.pending.len() == RECORD_BYTES {
                let record = std::mem::take(&mut self.pending);
                self.records.decode(&record);
                self.decoded += 1;
            }
        }
        let whole = chunk.len() / RECORD_BYTES * RECORD_BYTES;
        self.records.decode(&chunk[..whole]);
        self.decoded += (whole / RECORD_BYTES) as u64;
        self.pending.extend_from_slice(&chunk[whole..]);
        Ok(())
    }

    fn header_bytes_wanted(&self) -> usize {
        if self.pending.len() >= FIXED_HEADER_BYTES {
            FIXED_HEADER_BYTES + usize::from(u16_at(&self.pending, 36))
        } else {
            FIXED_HEADER_BYTES
        }
    }

    /// The header, once its bytes were fed.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The records decoded since the last call (a reader of a file larger than memory takes
    /// them after every [`Reader::feed`]; the reader then keeps only a partial record).
    pub fn take_records(&mut self) -> Columns {
        std::mem::take(&mut self.records)
    }

    /// Checks that the whole file was fed: the header and every record it announces.
    pub fn finish_streamed(self) -> Result<Header, TraceError> {
        self.finish().map(|t| t.header)
    }

    /// The trace, once the whole file was fed.
    pub fn finish(self) -> Result<KernelTrace, TraceError> {
        let Some(header) = self.header else {
            if self.pending.len() >= MAGIC.len() || self.pending.is_empty() {
                Header::parse(&self.pending)?;
            }
            return Err(TraceError::format(
                format!("byte {}", self.offset),
                format!(
                    "truncated header: the file ends after {} bytes",
                    self.offset
                ),
            ));
        };
        let read = self.decoded;
        if read < header.record_count {
            let end = (header.header_bytes as u64)
                .saturating_add(header.record_count.saturating_mul(RECORD_BYTES as u64));
            return Err(TraceError::format(
                format!("byte {}", self.offset),
                format!(
                    "truncated: the header announces {} records ({end} bytes) but the file ends after {read} whole records{}",
                    header.record_count,
                    if self.pending.is_empty() {
                        String::new()
                    } else {
                        format!(" and {} bytes of the next", self.pending.len())
                    }
                ),
            ));
        }
        Ok(KernelTrace {
            header,
            records: self.records,
        })
    }
}

/// Reads a whole kernel trace from `input` in chunks of `chunk_bytes`.
pub fn read(mut input: impl Read, chunk_bytes: usize) -> Result<KernelTrace, TraceError> {
    let mut reader = Reader::new();
    let mut buf = vec![0u8; chunk_bytes.max(RECORD_BYTES)];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        reader.feed(&buf[..n])?;
    }
    reader.finish()
}

/// A block's lane, named by its SM first: sorted by name (the viewer sorts lanes naturally), the
/// blocks of one SM are neighbours, and a label says where the block ran.
fn block_lane(sm: u32, block: u32) -> String {
    format!("SM {sm} / block {block}")
}

/// What a lane of the spans of a kernel trace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneBy {
    Sm,
    Block,
    Thread,
}

impl LaneBy {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "sm" => LaneBy::Sm,
            "block" => LaneBy::Block,
            "thread" => LaneBy::Thread,
            _ => return None,
        })
    }

    pub fn kind(self) -> &'static str {
        match self {
            LaneBy::Sm => "sm",
            LaneBy::Block => "block",
            LaneBy::Thread => "thread",
        }
    }
}

/// The tables of one kernel trace.
#[derive(Debug, Clone)]
pub struct TraceTables {
    pub records: RecordBatch,
    pub alignment: RecordBatch,
    pub spans: RecordBatch,
    /// Records whose timestamp is earlier than their thread's previous one.
    pub backwards: usize,
}

/// Pass one over a trace's records: each SM's first and last timestamp, and whether the records
/// come grouped by thread (sorted by block, then thread), as the host library writes them.
#[derive(Debug, Clone)]
pub struct AlignmentScan {
    timer: Timer,
    clock_khz: u32,
    sms: BTreeMap<u32, (u64, u64, u64)>,
    /// Each block and the SM of its first record (a block runs on one SM).
    blocks: BTreeMap<u32, u32>,
    last_key: Option<u64>,
    grouped: bool,
    records: u64,
}

impl AlignmentScan {
    pub fn new(header: &Header) -> Self {
        AlignmentScan {
            timer: header.timer,
            clock_khz: header.clock_khz,
            sms: BTreeMap::new(),
            blocks: BTreeMap::new(),
            last_key: None,
            grouped: true,
            records: 0,
        }
    }

    pub fn add(&mut self, r: &Columns) {
        self.records += r.len() as u64;
        let mut last_sm = u32::MAX;
        let mut entry = (u64::MAX, 0, 0);
        for i in 0..r.len() {
            let (sm, ts) = (r.sm[i], r.timestamp[i]);
            if sm != last_sm {
                if last_sm != u32::MAX {
                    self.merge(last_sm, entry);
                }
                last_sm = sm;
                entry = (u64::MAX, 0, 0);
            }
            entry.0 = entry.0.min(ts);
            entry.1 = entry.1.max(ts);
            entry.2 += 1;
            let key = (u64::from(r.block[i]) << 32) | u64::from(r.thread[i]);
            if self.last_key.is_some_and(|k| key < k) {
                self.grouped = false;
            }
            if self.last_key != Some(key) {
                self.blocks.entry(r.block[i]).or_insert(sm);
            }
            self.last_key = Some(key);
        }
        if last_sm != u32::MAX {
            self.merge(last_sm, entry);
        }
    }

    fn merge(&mut self, sm: u32, (lo, hi, n): (u64, u64, u64)) {
        let e = self.sms.entry(sm).or_insert((u64::MAX, 0, 0));
        e.0 = e.0.min(lo);
        e.1 = e.1.max(hi);
        e.2 += n;
    }

    pub fn finish(self) -> Alignment {
        let global = self.sms.values().map(|e| e.0).min().unwrap_or(0);
        let scale = match self.timer {
            Timer::GlobalTimer => 1.0,
            Timer::Clock64 => 1.0e6 / f64::from(self.clock_khz.max(1)),
        };
        // Indexed by SM id where the ids are those of a GPU; `%smid` values need not be dense,
        // and a damaged file can hold any u32, which must not size a vector.
        let max_sm = self.sms.keys().next_back().copied().unwrap_or(0) as usize;
        let dense = max_sm < DENSE_SM_IDS;
        let mut offsets = vec![0u64; if dense { max_sm + 1 } else { 0 }];
        let mut sparse = BTreeMap::new();
        let mut sms = BTreeMap::new();
        for (&sm, &(lo, hi, n)) in &self.sms {
            let offset = match self.timer {
                Timer::GlobalTimer => global,
                Timer::Clock64 => lo,
            };
            if dense {
                offsets[sm as usize] = offset;
            } else {
                sparse.insert(sm, offset);
            }
            sms.insert(
                sm,
                SmAlignment {
                    records: n,
                    offset_ticks: offset,
                    first_ns: ticks_to_ns(lo.wrapping_sub(offset), scale),
                    last_ns: ticks_to_ns(hi.wrapping_sub(offset), scale),
                },
            );
        }
        let t_min_ns = sms.values().map(|a| a.first_ns).min().unwrap_or(0);
        let t_max_ns = sms.values().map(|a| a.last_ns).max().unwrap_or(0);
        Alignment {
            timer: self.timer,
            scale,
            offsets,
            sparse,
            sms,
            blocks: self.blocks.keys().copied().collect(),
            block_sms: self.blocks.into_values().collect(),
            grouped: self.grouped,
            records: self.records,
            t_min_ns,
            t_max_ns,
        }
    }
}

fn ticks_to_ns(ticks: u64, scale: f64) -> i64 {
    let ticks = ticks as i64;
    if scale == 1.0 {
        ticks
    } else {
        (ticks as f64 * scale).round() as i64
    }
}

/// SM ids below this are looked up in a vector (GPUs have a few hundred at most).
const DENSE_SM_IDS: usize = 1 << 16;

/// How a trace's SM clocks map onto one time base (from [`AlignmentScan`]).
#[derive(Debug, Clone)]
pub struct Alignment {
    pub timer: Timer,
    /// ns per tick.
    pub scale: f64,
    /// Each SM's offset by id when the ids are below [`DENSE_SM_IDS`], else in `sparse`.
    offsets: Vec<u64>,
    sparse: BTreeMap<u32, u64>,
    pub sms: BTreeMap<u32, SmAlignment>,
    /// Block ids, sorted.
    pub blocks: Vec<u32>,
    /// The SM each block of `blocks` ran on (its first record's).
    pub block_sms: Vec<u32>,
    pub grouped: bool,
    pub records: u64,
    pub t_min_ns: i64,
    pub t_max_ns: i64,
}

impl Alignment {
    /// A timestamp of `sm` on the common time base.
    pub fn ns(&self, sm: u32, ts: u64) -> i64 {
        let offset = match self.offsets.get(sm as usize) {
            Some(&o) => o,
            None => self.sparse.get(&sm).copied().unwrap_or(0),
        };
        ticks_to_ns(ts.wrapping_sub(offset), self.scale)
    }
}

/// Pass two (and three) over a trace's records in file order: each thread's consecutive points
/// as records of a [`crate::pyramid::PyramidBuilder`], on lanes by SM or block. A file grouped
/// by thread needs only the previous record; otherwise the last record of every thread is kept.
#[derive(Debug)]
pub struct SpanStream<'a> {
    align: &'a Alignment,
    lanes: LaneBy,
    /// Lane of each SM or block id (dense: ids are small).
    lane_of: Vec<u32>,
    /// The lanes' names, in lane order.
    lane_names: Vec<String>,
    /// The previous record of the current thread (files grouped by thread)...
    previous: Option<(u64, Prev)>,
    /// ... or of every thread.
    last: FastMap<u64, Prev>,
    /// Kind of each point pair: dense for points below [`DENSE_POINTS`], else hashed.
    dense_kinds: Vec<u16>,
    kinds: FastMap<(u32, u32), u16>,
    kind_names: Vec<String>,
    row: u64,
    /// Steps whose timestamp went backwards (drawn with length 0).
    pub backwards: u64,
}

/// Maps looked up once or twice per record (millions in a large trace), keyed by ids from the
/// file: a fast hash, seeded per process (none of them is iterated, so nothing depends on it).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A thread's previous record: time, point, SM, row.
type Prev = (i64, u32, u32, u64);

const DENSE_POINTS: u32 = 256;

impl<'a> SpanStream<'a> {
    /// Lanes by SM or by block; a lane per thread would give a pyramid millions of lanes tall.
    pub fn new(align: &'a Alignment, lanes: LaneBy) -> Result<Self, TraceError> {
        // Blocks ordered by the SM they ran on, then by id: one SM's blocks are neighbours.
        let (ids, names): (Vec<u32>, Vec<String>) = match lanes {
            LaneBy::Sm => align.sms.keys().map(|&s| (s, format!("SM {s}"))).unzip(),
            LaneBy::Block => {
                let mut pairs: Vec<(u32, u32)> = align
                    .block_sms
                    .iter()
                    .copied()
                    .zip(align.blocks.iter().copied())
                    .collect();
                pairs.sort_unstable();
                pairs
                    .into_iter()
                    .map(|(sm, b)| (b, block_lane(sm, b)))
                    .unzip()
            }
            LaneBy::Thread => {
                return Err(TraceError::format(
                    "lanes",
                    "a large trace is drawn with lanes by SM or by block (one lane per thread would be millions of lanes)",
                ));
            }
        };
        let mut lane_of = vec![0u32; ids.iter().max().map_or(0, |&m| m as usize + 1)];
        for (i, &id) in ids.iter().enumerate() {
            lane_of[id as usize] = i as u32;
        }
        Ok(SpanStream {
            align,
            lanes,
            lane_of,
            lane_names: names,
            previous: None,
            last: FastMap::default(),
            dense_kinds: vec![u16::MAX; (DENSE_POINTS * DENSE_POINTS) as usize],
            kinds: FastMap::default(),
            kind_names: Vec::new(),
            row: 0,
            backwards: 0,
        })
    }

    /// The lane names, in lane order.
    pub fn lane_names(&self) -> Vec<String> {
        self.lane_names.clone()
    }

    /// The kinds (point pairs), in order of first appearance (the same in every pass).
    pub fn kind_names(&self) -> &[String] {
        &self.kind_names
    }

    fn kind(&mut self, from: u32, to: u32) -> u16 {
        let dense = from < DENSE_POINTS && to < DENSE_POINTS;
        let slot = (from * DENSE_POINTS + to) as usize;
        if dense && self.dense_kinds[slot] != u16::MAX {
            return self.dense_kinds[slot];
        }
        let next = u16::try_from(self.kind_names.len()).unwrap_or(u16::MAX - 1);
        let names = &mut self.kind_names;
        let k = *self.kinds.entry((from, to)).or_insert_with(|| {
            names.push(format!("point {from} -> {to}"));
            next
        });
        if dense {
            self.dense_kinds[slot] = k;
        }
        k
    }

    pub fn add(&mut self, r: &Columns, out: &mut impl FnMut(&crate::pyramid::PyramidRecord)) {
        for i in 0..r.len() {
            let row = self.row;
            self.row += 1;
            let key = (u64::from(r.block[i]) << 32) | u64::from(r.thread[i]);
            let t = self.align.ns(r.sm[i], r.timestamp[i]);
            let current = (t, r.point[i], r.sm[i], row);
            let prev = if self.align.grouped {
                // Grouped by thread: only the previous record can be of the same thread.
                match self.previous.replace((key, current)) {
                    Some((k, p)) if k == key => Some(p),
                    _ => None,
                }
            } else {
                self.last.insert(key, current)
            };
            let Some((t0, p0, sm0, row0)) = prev else {
                continue;
            };
            let kind = self.kind(p0, r.point[i]);
            let lane_key = match self.lanes {
                LaneBy::Sm => sm0,
                _ => r.block[i],
            };
            if t < t0 {
                self.backwards += 1;
            }
            out(&crate::pyramid::PyramidRecord {
                lane: self.lane_of.get(lane_key as usize).copied().unwrap_or(0),
                kind,
                start_ns: t0,
                duration_ns: (t - t0).max(0),
                source_row: row0 as i64,
            });
        }
    }
}

impl KernelTrace {
    /// Each record's time on the trace's common base, in ns, and each SM's offset in ticks.
    pub fn aligned_ns(&self) -> (Vec<i64>, BTreeMap<u32, SmAlignment>) {
        let mut scan = AlignmentScan::new(&self.header);
        scan.add(&self.records);
        let align = scan.finish();
        let r = &self.records;
        let ns =
            r.sm.iter()
                .zip(&r.timestamp)
                .map(|(&sm, &ts)| align.ns(sm, ts))
                .collect();
        (ns, align.sms)
    }

    /// Record indices grouped by thread (block, then thread), in file order within a thread.
    fn thread_order(&self) -> Vec<u32> {
        let r = &self.records;
        let key = |i: usize| (u64::from(r.block[i]) << 32) | u64::from(r.thread[i]);
        let n = r.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        let grouped = (1..n).all(|i| key(i - 1) <= key(i));
        if !grouped {
            // Stable: the records of one thread keep their order.
            order.sort_by_key(|&i| key(i as usize));
        }
        order
    }

    /// The canonical tables of the trace: `trace_records` (with times aligned and backwards
    /// steps flagged), `trace_alignment` (one row per SM) and `spans` (consecutive points of one
    /// thread, on lanes by SM, block or thread).
    pub fn tables(&self, run_id: &str, lanes: LaneBy) -> Result<TraceTables, TraceError> {
        let r = &self.records;
        let n = r.len();
        let (ns, sms) = self.aligned_ns();
        let order = self.thread_order();
        let mut backwards_flag = vec![false; n];
        let mut backwards = 0;
        let mut spans = SpansBuilder::new();
        // Lane and span names, made once each: a trace has few SMs and point pairs and many
        // records. The record's block, thread and SM are in `trace_records`, at `source_row`.
        let mut lane_names: FastMap<u64, String> = FastMap::default();
        let mut span_names: FastMap<(u32, u32), String> = FastMap::default();
        for w in order.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if r.block[a] != r.block[b] || r.thread[a] != r.thread[b] {
                continue;
            }
            let back = ns[b] < ns[a];
            if back {
                backwards_flag[b] = true;
                backwards += 1;
            }
            let lane_key = match lanes {
                LaneBy::Sm => u64::from(r.sm[a]),
                LaneBy::Block => u64::from(r.block[a]),
                LaneBy::Thread => (u64::from(r.block[a]) << 32) | u64::from(r.thread[a]),
            };
            let lane = lane_names.entry(lane_key).or_insert_with(|| match lanes {
                LaneBy::Sm => format!("SM {}", r.sm[a]),
                LaneBy::Block => block_lane(r.sm[a], r.block[a]),
                LaneBy::Thread => format!(
                    "{} / thread {}",
                    block_lane(r.sm[a], r.block[a]),
                    r.thread[a]
                ),
            });
            let name = span_names
                .entry((r.point[a], r.point[b]))
                .or_insert_with(|| format!("point {} -> {}", r.point[a], r.point[b]));
            spans.push(&Span {
                source_row: Some(a as i64),
                flag: back.then_some("backwards"),
                ..Span::interval(
                    run_id,
                    Timeline::Measured,
                    lane,
                    lanes.kind(),
                    name,
                    "kernel_trace",
                    ns[a],
                    // Saturating: a damaged file's clocks can be anything.
                    ns[b].saturating_sub(ns[a]),
                )
            });
        }
        let run: ArrayRef = yosoku_tables::text::repeated(run_id, n);
        let mut flag = StringBuilder::with_capacity(n, backwards * 9);
        for &b in &backwards_flag {
            flag.append_option(b.then_some("backwards"));
        }
        let records = TRACE_RECORDS.batch(vec![
            run,
            Arc::new(Int64Array::from_iter_values(
                r.block.iter().map(|&x| i64::from(x)),
            )),
            Arc::new(Int64Array::from_iter_values(
                r.thread.iter().map(|&x| i64::from(x)),
            )),
            Arc::new(Int32Array::from_iter_values(r.sm.iter().map(|&x| x as i32))),
            Arc::new(Int32Array::from_iter_values(
                r.point.iter().map(|&x| x as i32),
            )),
            Arc::new(Int64Array::from_iter_values(
                r.timestamp.iter().map(|&x| x as i64),
            )),
            Arc::new(Int64Array::from(ns)),
            Arc::new(flag.finish()),
        ])?;
        let alignment = alignment_batch(run_id, &sms, self.header.timer)?;
        Ok(TraceTables {
            records,
            alignment,
            spans: spans.finish()?,
            backwards,
        })
    }
}

/// The `trace_alignment` rows of a trace's SMs.
pub fn alignment_batch(
    run_id: &str,
    sms: &BTreeMap<u32, SmAlignment>,
    timer: Timer,
) -> Result<RecordBatch, TraceError> {
    let method = match timer {
        Timer::Clock64 => "first_record",
        Timer::GlobalTimer => "global_timer",
    };
    Ok(TRACE_ALIGNMENT.batch(vec![
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            run_id,
            sms.len(),
        ))),
        Arc::new(Int32Array::from_iter_values(sms.keys().map(|&s| s as i32))),
        Arc::new(Int64Array::from_iter_values(
            sms.values().map(|a| a.records as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            sms.values().map(|a| a.offset_ticks as i64),
        )),
        Arc::new(Int64Array::from_iter_values(
            sms.values().map(|a| a.first_ns),
        )),
        Arc::new(Int64Array::from_iter_values(
            sms.values().map(|a| a.last_ns),
        )),
        Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            method,
            sms.len(),
        ))),
    ])?)
}

/// How one SM's records were put on the common time base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmAlignment {
    pub records: u64,
    pub offset_ticks: u64,
    pub first_ns: i64,
    pub last_ns: i64,
}
