//! Tables as Arrow IPC files, in memory (works in wasm32).

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_ipc::CompressionType;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::ArrowError;

/// Encodes a table as an Arrow IPC file, its buffers compressed with LZ4 frames (any Arrow reader
/// with LZ4 support reads it: pyarrow, polars, arrow-rs with the `lz4` feature).
pub fn encode(batch: &RecordBatch) -> Result<Vec<u8>, ArrowError> {
    let mut bytes = Vec::new();
    encode_to(&mut bytes, batch)?;
    Ok(bytes)
}

/// [`encode`] into `sink` (a bundle's table goes straight to its file: encoding a large table into
/// memory first grew a buffer by doubling and copied it once more). A table of more than
/// [`ROWS_PER_BATCH`] rows is written as several record batches, a slice of it each.
pub fn encode_to(sink: impl std::io::Write, batch: &RecordBatch) -> Result<(), ArrowError> {
    let options =
        IpcWriteOptions::default().try_with_compression(Some(CompressionType::LZ4_FRAME))?;
    let mut writer = FileWriter::try_new_with_options(sink, &batch.schema(), options)?;
    let rows = batch.num_rows();
    if rows == 0 {
        writer.write(batch)?;
    }
    let mut offset = 0;
    while offset < rows {
        let len = ROWS_PER_BATCH.min(rows - offset);
        writer.write(&batch.slice(offset, len))?;
        offset += len;
    }
    writer.finish()
}

/// Rows per record batch of a written table: arrow-ipc holds a batch's whole compressed body
/// before it writes it, which for the `mpi_blocks` of 1 GB of MPI logs was 0.46 GB beside the
/// table. (Dictionary columns' slices share their dictionary, written once.)
pub const ROWS_PER_BATCH: usize = 1 << 20;

/// Decodes an Arrow IPC file into one batch. Several batches are joined a column at a time,
/// each column's parts let go once joined: the table is held once and one column twice, not the
/// whole table twice.
pub fn decode(bytes: &[u8]) -> Result<RecordBatch, ArrowError> {
    check_file(bytes)?;
    let reader = FileReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let mut batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>()?;
    if batches.len() <= 1 {
        return Ok(batches
            .pop()
            .unwrap_or_else(|| RecordBatch::new_empty(schema)));
    }
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    let mut parts: Vec<Vec<ArrayRef>> =
        vec![Vec::with_capacity(batches.len()); schema.fields().len()];
    for batch in batches {
        for (part, column) in parts.iter_mut().zip(batch.columns()) {
            part.push(Arc::clone(column));
        }
    }
    let mut columns = Vec::with_capacity(parts.len());
    for part in parts {
        let arrays: Vec<&dyn Array> = part.iter().map(|a| a.as_ref()).collect();
        columns.push(arrow_select::concat::concat(&arrays)?);
    }
    RecordBatch::try_new_with_options(
        schema,
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows)),
    )
}

/// The most an LZ4 frame inflates: a match of up to 2^16 + 14 bytes costs at least one byte of
/// its sequence per 255 bytes of length, so ratios stay under 255:1; the slack covers headers.
const LZ4_MAX_RATIO: u64 = 255;
const LZ4_SLACK_BYTES: u64 = 1024;

fn damaged<T>(at: usize, what: String) -> Result<T, ArrowError> {
    Err(ArrowError::IpcError(format!(
        "byte {at}: {what} (a damaged file)"
    )))
}

/// Refuses, before arrow-ipc reads them, what an Arrow IPC **file** claims that arrow-ipc would
/// trust: a block that runs past the file (arrow-ipc allocates its claimed size first: a 2.6 KB
/// file cost 2 GB and 4.6 s), a buffer that lies outside its batch's body or the file
/// (arrow-ipc slices it unchecked and panics), and a compressed one whose declared uncompressed
/// length no LZ4 frame of its size can reach (arrow-ipc allocates that length before inflating,
/// so 20 bytes announcing 2 EB abort the process, the browser's viewer included). All three were
/// found by `cargo xtask fuzz --target bundle_ipc`. What this walk cannot parse is left to
/// arrow-ipc's reader, which reports it. Every reader of IPC files from outside calls this
/// first: bundle tables, trace pyramids, the `table` plugin.
pub fn check_file(bytes: &[u8]) -> Result<(), ArrowError> {
    let n = bytes.len();
    if n < 10 {
        return Ok(());
    }
    let footer_len = i32::from_le_bytes([bytes[n - 10], bytes[n - 9], bytes[n - 8], bytes[n - 7]]);
    let Some(footer_start) = usize::try_from(footer_len)
        .ok()
        .and_then(|l| (n - 10).checked_sub(l))
    else {
        return Ok(());
    };
    let Ok(footer) = arrow_ipc::root_as_footer(&bytes[footer_start..n - 10]) else {
        return Ok(());
    };
    if let Some(schema) = footer.schema() {
        check_schema(&schema)?;
    }
    let layouts = footer
        .schema()
        .map(|schema| Layouts::of(&schema))
        .unwrap_or_default();
    let blocks = footer
        .recordBatches()
        .into_iter()
        .chain(footer.dictionaries())
        .flatten();
    for (index, block) in blocks.enumerate() {
        let (Ok(offset), Ok(meta_len), Ok(body_len)) = (
            usize::try_from(block.offset()),
            usize::try_from(block.metaDataLength()),
            usize::try_from(block.bodyLength()),
        ) else {
            return damaged(
                footer_start,
                format!("the footer's block {index} has a negative offset or length"),
            );
        };
        // arrow-ipc allocates a block's metadata and body (zeroed) before reading them: a
        // block that claims more than the file holds would cost its claim in memory.
        if offset
            .checked_add(meta_len)
            .and_then(|end| end.checked_add(body_len))
            .is_none_or(|end| end > n)
        {
            return damaged(
                footer_start,
                format!(
                    "the footer's block {index} ({meta_len} + {body_len} bytes at {offset}) runs past the file's {n}"
                ),
            );
        }
        // A message starts with its length (after a continuation marker in newer files):
        // arrow-ipc slices those bytes unchecked.
        if meta_len < 8 {
            return damaged(
                offset,
                format!(
                    "the footer's block {index} has {meta_len} bytes of metadata, too few for a message"
                ),
            );
        }
        // The body follows the metadata in one buffer: metadata not padded to 8 bytes (as the
        // format requires) would misalign every buffer of the body.
        if meta_len % 8 != 0 {
            return damaged(
                offset,
                format!(
                    "the footer's block {index} has {meta_len} bytes of metadata, not a multiple of 8 as Arrow IPC requires"
                ),
            );
        }
        // The message as arrow-ipc parses it: from after the continuation marker (newer writers)
        // and the length to the end of the block, body included (a narrower slice could fail
        // the flatbuffer's checks where arrow-ipc's passes, and leave its buffers unchecked).
        let block_bytes = &bytes[offset..offset + meta_len + body_len];
        let flatbuffer = match block_bytes {
            [0xff, 0xff, 0xff, 0xff, _, _, _, _, rest @ ..] => rest,
            [_, _, _, _, rest @ ..] => rest,
            _ => continue,
        };
        if let Ok(message) = arrow_ipc::root_as_message(flatbuffer) {
            check_message(
                bytes,
                index,
                &message,
                offset + meta_len,
                body_len,
                &layouts,
            )?;
        }
    }
    Ok(())
}

/// [`check_file`] for the Arrow IPC **stream** format: every message's metadata and body must
/// fit in what is left of the bytes (arrow-ipc allocates a message's declared body before
/// reading it), and its buffers as in a file.
pub fn check_stream(bytes: &[u8]) -> Result<(), ArrowError> {
    let n = bytes.len();
    let mut at = 0usize;
    let word = |p: usize| {
        bytes
            .get(p..p + 4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut layouts = Layouts::default();
    for index in 0.. {
        // A continuation marker and a length, or (older writers) the length alone.
        let (meta_len, meta_start) = match word(at) {
            Some(-1) => (word(at + 4), at + 8),
            other => (other, at + 4),
        };
        let Some(meta_len) = meta_len else {
            return Ok(()); // the end, or cut: arrow-ipc reports a cut stream
        };
        if meta_len == 0 {
            return Ok(()); // the end-of-stream marker
        }
        let Some(meta_end) = usize::try_from(meta_len)
            .ok()
            .and_then(|l| meta_start.checked_add(l))
            .filter(|&end| end <= n)
        else {
            return damaged(
                at,
                format!(
                    "message {index} declares {meta_len} bytes of metadata; {} are left",
                    n.saturating_sub(meta_start)
                ),
            );
        };
        let Ok(message) = arrow_ipc::root_as_message(&bytes[meta_start..meta_end]) else {
            return Ok(()); // arrow-ipc reports what it cannot parse
        };
        let Some(body_end) = usize::try_from(message.bodyLength())
            .ok()
            .and_then(|l| meta_end.checked_add(l))
            .filter(|&end| end <= n)
        else {
            return damaged(
                meta_end,
                format!(
                    "message {index} declares a body of {} bytes; {} are left",
                    message.bodyLength(),
                    n - meta_end
                ),
            );
        };
        if let Some(schema) = message.header_as_schema() {
            check_schema(&schema)?;
            layouts = Layouts::of(&schema);
        }
        check_message(
            bytes,
            index,
            &message,
            meta_end,
            body_end - meta_end,
            &layouts,
        )?;
        at = body_end;
    }
    Ok(())
}

/// How many bytes an LZ4 frame inflates to, reading at most `most` (as arrow-ipc does); `None`
/// when it is not a valid frame (arrow-ipc reports that).
fn inflated_len(frame: &[u8], most: u64) -> Option<usize> {
    use std::io::Read;
    let mut decoder = lz4_flex::frame::FrameDecoder::new(frame).take(most);
    let mut chunk = [0u8; 8192];
    let mut total = 0usize;
    loop {
        match decoder.read(&mut chunk) {
            Ok(0) => return Some(total),
            Ok(n) => total += n,
            Err(_) => return None,
        }
    }
}

/// The length of the one standard LZ4 frame at the start of `bytes` (header, blocks up to the
/// end mark, checksum), walking its block headers without inflating anything; an error says what
/// is not an LZ4 frame as the format describes it. Arrow writers (arrow-rs, Arrow C++) compress
/// each buffer into one standard frame; lz4_flex's decoder also reads legacy frames and frames
/// one after another, and asserts (with debug assertions on) that a later frame's block size is
/// the earlier one's (a legacy frame followed by another, found by `cargo xtask fuzz --target
/// bundle_ipc`), so [`check_message`] accepts one standard frame and nothing after it.
fn lz4_frame_len(bytes: &[u8]) -> Result<usize, String> {
    const MAGIC: u32 = 0x184D_2204;
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    match u32_at(0) {
        Some(MAGIC) => {}
        Some(other) => {
            return Err(format!(
                "starts with {other:#010x}, not the LZ4 frame magic {MAGIC:#010x}"
            ));
        }
        None => {
            return Err(format!(
                "{} bytes are too few for an LZ4 frame",
                bytes.len()
            ));
        }
    }
    let (Some(&flags), Some(&descriptor)) = (bytes.get(4), bytes.get(5)) else {
        return Err("its frame header is cut short".into());
    };
    if flags >> 6 != 1 || flags & 0b10 != 0 || descriptor & 0b1000_1111 != 0 {
        return Err(format!(
            "its frame header (flags {flags:#04x}, block descriptor {descriptor:#04x}) is not LZ4 frame version 1"
        ));
    }
    let max_block_bytes: u32 = match (descriptor >> 4) & 0b111 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        other => return Err(format!("its block size code {other} is not one of 4 to 7")),
    };
    let block_checksums = flags & 0b1_0000 != 0;
    let content_checksum = flags & 0b100 != 0;
    // Magic, flags, descriptor, the content size and dictionary id where flagged, header checksum.
    let mut at =
        6 + if flags & 0b1000 != 0 { 8 } else { 0 } + if flags & 1 != 0 { 4 } else { 0 } + 1;
    loop {
        let Some(block) = u32_at(at) else {
            return Err(format!(
                "it ends at byte {} without its end mark",
                bytes.len()
            ));
        };
        at += 4;
        if block == 0 {
            break;
        }
        let block_len = block & 0x7FFF_FFFF;
        if block_len > max_block_bytes {
            return Err(format!(
                "its block at byte {} holds {block_len} bytes, more than the frame's {max_block_bytes}",
                at - 4
            ));
        }
        at += block_len as usize + if block_checksums { 4 } else { 0 };
    }
    at += if content_checksum { 4 } else { 0 };
    if at > bytes.len() {
        return Err(format!(
            "it runs to byte {at}, past its {} bytes",
            bytes.len()
        ));
    }
    Ok(at)
}

/// What arrow-ipc would trust in a schema: union columns (it slices their type ids and offsets
/// unchecked; no yosoku table has one) and negative fixed sizes (it builds arrays of them and
/// panics). Both found by `cargo xtask fuzz --target bundle_ipc`.
fn check_schema(schema: &arrow_ipc::Schema<'_>) -> Result<(), ArrowError> {
    fn walk(f: arrow_ipc::Field<'_>) -> Result<(), ArrowError> {
        let name = f.name().unwrap_or("?");
        if f.type_type() == arrow_ipc::Type::Union {
            return Err(ArrowError::IpcError(format!(
                "column `{name}` is a union, which yosoku does not read"
            )));
        }
        let size = f
            .type_as_fixed_size_binary()
            .map(|t| t.byteWidth())
            .or_else(|| f.type_as_fixed_size_list().map(|t| t.listSize()));
        if let Some(size) = size.filter(|&size| size < 0) {
            return Err(ArrowError::IpcError(format!(
                "column `{name}` has a fixed size of {size} (a damaged file)"
            )));
        }
        f.children().into_iter().flatten().try_for_each(walk)
    }
    schema.fields().into_iter().flatten().try_for_each(walk)
}

/// The offsets widths of the buffers of a schema's batches ([`field_widths`]): of its record
/// batches, and of each dictionary's batch (by dictionary id: one column of the values' type).
#[derive(Debug, Clone, Default)]
struct Layouts {
    batch: Option<Vec<u8>>,
    dictionaries: Vec<(i64, Vec<u8>)>,
}

impl Layouts {
    fn of(schema: &arrow_ipc::Schema<'_>) -> Self {
        let dictionaries = schema
            .fields()
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let id = f.dictionary()?.id();
                let mut out = Vec::new();
                field_widths(f, &mut out, true)?;
                Some((id, out))
            })
            .collect();
        Self {
            batch: offset_widths(schema),
            dictionaries,
        }
    }

    /// The widths of a record batch's buffers, or of dictionary `id`'s batch.
    fn of_message(&self, message: &arrow_ipc::Message<'_>) -> Option<&[u8]> {
        if message.header_as_record_batch().is_some() {
            return self.batch.as_deref();
        }
        let id = message.header_as_dictionary_batch()?.id();
        self.dictionaries
            .iter()
            .find(|(d, _)| *d == id)
            .map(|(_, w)| w.as_slice())
    }
}

/// Field `f`'s buffers' offsets widths (4 or 8 bytes, 0 for another buffer) appended to `out`,
/// its children's after its own; `None` for a type whose buffers this does not lay out (views,
/// run ends...). A dictionary-encoded field is, in a record batch, its indices (a validity
/// bitmap and integers: no offsets); `values` lays out its dictionary's values instead.
fn field_widths(f: arrow_ipc::Field<'_>, out: &mut Vec<u8>, values: bool) -> Option<()> {
    use arrow_ipc::Type;
    if f.dictionary().is_some() && !values {
        // Before 2026-12-06 a dictionary column ended the record batch's layout, so the string
        // columns after it went unchecked (`bundle_ipc` found a bundle's `run_id` of partial
        // offsets after dictionary columns: a panic in arrow-rs's validation).
        out.extend([0, 0]);
        return Some(());
    }
    let children = |out: &mut Vec<u8>| -> Option<()> {
        for child in f.children().into_iter().flatten() {
            field_widths(child, out, false)?;
        }
        Some(())
    };
    match f.type_type() {
        Type::Null => {}
        Type::Bool
        | Type::Int
        | Type::FloatingPoint
        | Type::Decimal
        | Type::Date
        | Type::Time
        | Type::Timestamp
        | Type::Interval
        | Type::Duration
        | Type::FixedSizeBinary => out.extend([0, 0]),
        Type::Utf8 | Type::Binary => out.extend([0, 4, 0]),
        Type::LargeUtf8 | Type::LargeBinary => out.extend([0, 8, 0]),
        Type::List | Type::Map => {
            out.extend([0, 4]);
            children(out)?;
        }
        Type::LargeList => {
            out.extend([0, 8]);
            children(out)?;
        }
        Type::Struct_ | Type::FixedSizeList => {
            out.push(0);
            children(out)?;
        }
        _ => return None,
    }
    Some(())
}

/// For each buffer of a record batch of `schema`, in order: the width of the offsets it holds
/// (4 or 8 bytes), or 0 for any other buffer, up to the first column of a type whose buffers
/// this does not lay out (views, run ends...): from there on arrow-ipc checks.
fn offset_widths(schema: &arrow_ipc::Schema<'_>) -> Option<Vec<u8>> {
    // arrow-ipc reads the columns in order: the buffers of the columns before the first one not
    // laid out here are still known.
    let mut out = Vec::new();
    for f in schema.fields().into_iter().flatten() {
        let known = out.len();
        if field_widths(f, &mut out, false).is_none() {
            out.truncate(known);
            break;
        }
    }
    Some(out)
}

/// The buffers of one record or dictionary batch, whose body of `body_len` bytes starts at
/// `body_start`; `layouts` the offsets widths of the schema's batches' buffers ([`Layouts`]).
fn check_message(
    bytes: &[u8],
    index: usize,
    message: &arrow_ipc::Message<'_>,
    body_start: usize,
    body_len: usize,
    layouts: &Layouts,
) -> Result<(), ArrowError> {
    let n = bytes.len();
    let Some(batch) = message
        .header_as_record_batch()
        .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()))
    else {
        return Ok(());
    };
    if body_start.checked_add(body_len).is_none_or(|end| end > n) {
        return damaged(
            body_start,
            format!("batch {index}'s body of {body_len} bytes runs past the file's {n}"),
        );
    }
    // Every row of a column takes at least a bit of its buffers (a byte of an index, a bit of
    // booleans), and an LZ4 buffer inflates at most 255-fold: more rows than the body can hold
    // are a damaged `length`. Columns of no bytes (none at all, or only nulls) would otherwise
    // carry any count: `bundle_ipc` found a table of no columns and 1.8e19 rows, which decoded
    // and then took every byte of memory to write again, a million rows a batch.
    let buffers = batch.buffers().map_or(0, |b| b.len()) as u64;
    let most_rows = 8 * (LZ4_MAX_RATIO * body_len as u64 + LZ4_SLACK_BYTES * (buffers + 1));
    // arrow-ipc takes the count as unsigned: a negative one is a count past 9.2e18.
    let rows = batch.length().cast_unsigned();
    if rows > most_rows {
        return damaged(
            body_start,
            format!(
                "batch {index} claims {rows} rows, more than its {body_len}-byte body can hold"
            ),
        );
    }
    let body = BatchBody {
        bytes,
        index,
        body_start,
        body_len,
        compressed: batch.compression().is_some(),
        lz4: batch
            .compression()
            .is_some_and(|c| c.codec() == arrow_ipc::CompressionType::LZ4_FRAME),
        // Offsets are read as typed slices of the whole buffer: arrow-rs asserts (panics) that
        // an offsets buffer holds whole offsets. Known for record batches of laid-out schemas
        // and for the batches of their dictionaries (a dictionary's offsets buffer of a part of
        // an offset was found by the fresh-clone CI's brief fuzz run, 2026-11-29).
        widths: layouts.of_message(message),
    };
    // arrow-ipc reads the buffers in the schema's order until a column finds none left: each
    // one it reaches is checked (buffers after the schema's are not read).
    for (i, buffer) in batch.buffers().into_iter().flatten().enumerate() {
        body.check_buffer(i, buffer.offset(), buffer.length())?;
    }
    Ok(())
}

/// One batch's body, as its buffers are checked against it.
struct BatchBody<'b> {
    bytes: &'b [u8],
    index: usize,
    body_start: usize,
    body_len: usize,
    compressed: bool,
    lz4: bool,
    widths: Option<&'b [u8]>,
}

impl BatchBody<'_> {
    /// Buffer `i`, `length` bytes at `offset` in the body: inside it, aligned, one LZ4 frame
    /// when compressed so, whole offsets, and no more inflated bytes than a frame can give.
    fn check_buffer(&self, i: usize, offset: i64, length: i64) -> Result<(), ArrowError> {
        let (index, body_start, body_len) = (self.index, self.body_start, self.body_len);
        let (Ok(at), Ok(len)) = (usize::try_from(offset), usize::try_from(length)) else {
            return damaged(
                body_start,
                format!("buffer {i} of batch {index} has a negative offset or length"),
            );
        };
        if at.checked_add(len).is_none_or(|end| end > body_len) {
            return damaged(
                body_start,
                format!(
                    "buffer {i} of batch {index} ({len} bytes at {at}) lies outside its {body_len}-byte body"
                ),
            );
        }
        // Arrow IPC pads buffers to 8 bytes; arrow-rs reads typed data in place and asserts the
        // alignment (a panic where validation meets a misaligned offsets buffer).
        if at % 8 != 0 {
            return damaged(
                body_start + at,
                format!(
                    "buffer {i} of batch {index} starts at byte {at} of its body, not at a multiple of 8 as Arrow IPC requires"
                ),
            );
        }
        if self.lz4 && len >= 8 {
            self.check_lz4_frame(i, at, len)?;
        }
        if let (Some(&width), Some(data_len)) = (
            self.widths.and_then(|w| w.get(i)),
            self.data_len(i, at, len),
        ) && width > 0
            && data_len % usize::from(width) != 0
        {
            return damaged(
                body_start + at,
                format!(
                    "buffer {i} of batch {index} holds {width}-byte offsets but is {data_len} bytes long"
                ),
            );
        }
        if self.compressed && len >= 8 {
            self.check_declared_length(i, at, len)?;
        }
        Ok(())
    }

    /// The length a compressed buffer declares in its first 8 bytes (-1: stored as it is).
    fn declared(&self, at: usize) -> i64 {
        let p = self.body_start + at;
        i64::from_le_bytes(self.bytes[p..p + 8].try_into().unwrap_or([0; 8]))
    }

    /// An LZ4 buffer holds one LZ4 frame and nothing after it (see `lz4_frame_len`): checked
    /// before anything inflates it, here or in arrow-ipc.
    fn check_lz4_frame(&self, i: usize, at: usize, len: usize) -> Result<(), ArrowError> {
        if self.declared(at) <= 0 {
            return Ok(());
        }
        let p = self.body_start + at;
        let frame = &self.bytes[p + 8..p + len];
        match lz4_frame_len(frame) {
            Ok(end) if end == frame.len() => Ok(()),
            Ok(end) => damaged(
                p + 8 + end,
                format!(
                    "buffer {i} of batch {} holds {} bytes after its LZ4 frame (Arrow writes one frame a buffer)",
                    self.index,
                    frame.len() - end
                ),
            ),
            Err(why) => damaged(
                p + 8,
                format!(
                    "buffer {i} of batch {} is not one LZ4 frame: {why}",
                    self.index
                ),
            ),
        }
    }

    /// The length of a buffer's data: as stored, or, compressed, what it inflates to (an
    /// offsets buffer's true length is what its frame inflates to: arrow-ipc accepts less than
    /// declared, and the declared length is bounded above); none for a buffer too short to be
    /// a compressed one (arrow-ipc reports it).
    fn data_len(&self, i: usize, at: usize, len: usize) -> Option<usize> {
        if !self.compressed || len == 0 {
            return Some(len);
        }
        if len < 8 {
            return None;
        }
        let p = self.body_start + at;
        match u64::try_from(self.declared(at)) {
            Err(_) => Some(len - 8),
            Ok(declared) if self.widths.and_then(|w| w.get(i)).is_some_and(|&w| w > 0) => {
                inflated_len(&self.bytes[p + 8..p + len], declared)
            }
            Ok(declared) => usize::try_from(declared).ok(),
        }
    }

    /// No compressed buffer declares more bytes than an LZ4 frame of its size inflates to.
    fn check_declared_length(&self, i: usize, at: usize, len: usize) -> Result<(), ArrowError> {
        let declared = self.declared(at);
        let most = (len as u64 - 8) * LZ4_MAX_RATIO + LZ4_SLACK_BYTES;
        if declared > 0 && declared as u64 > most {
            return damaged(
                self.body_start + at,
                format!(
                    "buffer {i} of batch {} declares {declared} bytes uncompressed from {} compressed; no LZ4 frame inflates that far",
                    self.index,
                    len - 8
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    #[test]
    fn a_long_table_is_written_in_slices_and_read_back_whole() {
        let rows = 2 * ROWS_PER_BATCH + 5;
        let mut names = yosoku_tables::text::DictTextBuilder::with_capacity(rows);
        for i in 0..rows {
            names.append_option((i % 7 != 0).then(|| ["a", "b", "c"][i % 3]));
        }
        let batch = RecordBatch::try_from_iter([
            ("name", names.finish()),
            (
                "secs",
                Arc::new(Float64Array::from_iter_values((0..rows).map(|i| i as f64))) as ArrayRef,
            ),
        ])
        .unwrap();
        let bytes = encode(&batch).unwrap();
        let reader = FileReader::try_new(Cursor::new(&bytes), None).unwrap();
        assert_eq!(reader.num_batches(), 3, "slices of ROWS_PER_BATCH rows");
        let back = decode(&bytes).unwrap();
        assert_eq!(back, batch);
        let empty = batch.slice(0, 0);
        assert_eq!(decode(&encode(&empty).unwrap()).unwrap(), empty);
    }

    #[test]
    fn a_table_survives_a_round_trip_with_its_metadata() {
        let field = Field::new("measured_secs", DataType::Float64, false)
            .with_metadata([("yosoku.unit".to_owned(), "s".to_owned())]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("device", DataType::Utf8, false),
            field,
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a", "b"])),
                Arc::new(Float64Array::from(vec![1.5, 2.5])),
            ],
        )
        .unwrap();
        let back = decode(&encode(&batch).unwrap()).unwrap();
        assert_eq!(back, batch);
        assert_eq!(back.schema().field(1).metadata()["yosoku.unit"], "s");
    }

    /// A compressed buffer whose length prefix announces more than LZ4 can inflate is refused
    /// before arrow-ipc allocates it (a fuzzed file announcing 2 EB aborted the process).
    #[test]
    fn an_impossible_uncompressed_length_is_an_error_not_an_abort() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
        let values = Float64Array::from(vec![1.0; 1000]);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(values)]).unwrap();
        let mut bytes = encode(&batch).unwrap();
        assert_eq!(decode(&bytes).unwrap(), batch);
        // The values buffer's prefix: its uncompressed length, 8000 bytes.
        let prefix = 8000i64.to_le_bytes();
        let at = bytes.windows(8).position(|w| w == prefix).unwrap();
        bytes[at..at + 8].copy_from_slice(&(1i64 << 61).to_le_bytes());
        let error = decode(&bytes).unwrap_err().to_string();
        assert!(error.contains(&format!("byte {at}")), "{error}");
        assert!(error.contains("no LZ4 frame inflates that far"), "{error}");
    }

    /// A file written by Arrow C++ (pyarrow) passes the LZ4 frame walk: its frames are read as
    /// another implementation writes them (a two-block offsets buffer among them).
    #[test]
    fn lz4_frames_written_by_pyarrow_pass_the_check() {
        let bytes = include_bytes!("../testdata/pyarrow-lz4.arrow");
        let table = decode(bytes).unwrap();
        assert_eq!(table.num_rows(), 20_000);
        let kernels = table
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(kernels.value(19_999), "sgemm");
        let secs = table
            .column(1)
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap();
        assert_eq!(secs.value(12_345), 5.0);
    }

    /// A buffer in LZ4's legacy frame format, which lz4_flex's decoder reads too and then
    /// asserted on (debug assertions on: a block size that is not the previous frame's), is refused
    /// before it reads it: the file `cargo xtask fuzz --target bundle_ipc` found; and the walk on a good frame cut short or doubled.
    #[test]
    fn a_buffer_of_two_lz4_frames_is_refused() {
        let found = include_bytes!("../../../../fuzz/regressions/bundle_ipc/legacy-lz4-frame");
        let error = decode(found).unwrap_err().to_string();
        assert!(
            error.contains("not one LZ4 frame") || error.contains("after its LZ4 frame"),
            "{error}"
        );

        // The walk itself: a frame cut short, and two frames back to back (it stops after the
        // first, so the check names the bytes that follow).
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(Float64Array::from(vec![2.0; 1000]))])
                .unwrap();
        let bytes = encode(&batch).unwrap();
        let magic = [0x04, 0x22, 0x4d, 0x18];
        let at = bytes.windows(4).position(|w| w == magic).unwrap();
        let frame_len = lz4_frame_len(&bytes[at..]).unwrap();
        assert!(
            lz4_frame_len(&bytes[at..at + frame_len - 1])
                .unwrap_err()
                .contains("without its end mark")
        );
        let one = &bytes[at..at + frame_len];
        let mut two = one.to_vec();
        two.extend_from_slice(one);
        assert_eq!(lz4_frame_len(&two).unwrap(), frame_len);
    }

    /// A buffer that lies outside its batch's body is refused before arrow-ipc slices it: the
    /// file `cargo xtask fuzz --target bundle_ipc` found (it panicked in arrow-buffer).
    #[test]
    fn a_buffer_outside_its_body_is_an_error_not_a_panic() {
        let bytes =
            include_bytes!("../../../../fuzz/regressions/bundle_ipc/buffer-outside-its-body");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(error.contains("lies outside its"), "{error}");
    }

    /// Found by the fresh-clone CI's `cargo xtask fuzz --brief` (2026-11-29): a dictionary
    /// batch whose string values' offsets buffer is not a whole number of offsets made arrow-rs's
    /// validation assert (a panic); the record batches' buffers were checked, the dictionaries'
    /// were not.
    #[test]
    fn a_dictionarys_offsets_of_partial_offsets_are_an_error_not_a_panic() {
        let bytes =
            include_bytes!("../../../../fuzz/regressions/bundle_ipc/dictionary-offsets-not-whole");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(
            error.contains("offsets but is") && error.contains("a damaged file"),
            "{error}"
        );
    }

    /// The 2.6 KB file `cargo xtask fuzz --target bundle_ipc` found whose footer claims a block
    /// beyond the file: arrow-ipc allocated the claim (2 GB, 4.6 s) before reading it.
    #[test]
    fn a_block_past_the_file_is_an_error_before_anything_is_allocated() {
        let bytes = include_bytes!("../../../../fuzz/regressions/bundle_ipc/block-past-the-file");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(error.contains("runs past the file's 2604"), "{error}");
    }

    #[test]
    fn a_stream_cut_inside_a_body_is_refused_before_it_is_read() {
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)])),
            vec![Arc::new(Float64Array::from(vec![1.0; 1000]))],
        )
        .unwrap();
        let mut stream = Vec::new();
        let mut writer =
            arrow_ipc::writer::StreamWriter::try_new(&mut stream, &batch.schema()).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        check_stream(&stream).unwrap();
        let cut = &stream[..stream.len() - 4000];
        let error = check_stream(cut).unwrap_err().to_string();
        assert!(error.contains("declares a body of 8000 bytes"), "{error}");
    }

    /// Found by `cargo xtask fuzz --target bundle_ipc`: a string column whose offsets buffer is
    /// not a whole number of offsets made arrow-rs's validation panic.
    #[test]
    fn an_offsets_buffer_of_partial_offsets_is_an_error_not_a_panic() {
        // The second: the footer's schema turned a string column into a struct, which moves
        // every later column's buffers (a 70-byte offsets buffer, stored uncompressed).
        for bytes in [
            &include_bytes!("../../../../fuzz/regressions/bundle_ipc/offsets-not-whole")[..],
            &include_bytes!(
                "../../../../fuzz/regressions/bundle_ipc/offsets-under-a-changed-schema"
            )[..],
        ] {
            let error = decode(bytes).unwrap_err().to_string();
            assert!(error.contains("a damaged file"), "{error}");
        }
    }

    /// Found by `cargo xtask fuzz --target bundle_ipc` (2026-12-06): a 4 KB file whose schema
    /// has no columns and whose batch claims 1.8e19 rows decoded, and writing it again (a million
    /// rows a batch) took all memory.
    #[test]
    fn a_batch_of_more_rows_than_its_body_holds_is_refused() {
        let bytes = include_bytes!("../../../../fuzz/regressions/bundle_ipc/rows-without-bytes");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(
            error.contains("claims 18232260141456031744 rows, more than its"),
            "{error}"
        );
    }

    /// Found by `cargo xtask fuzz --target bundle_ipc` (2026-12-06): a bundle's `validation`
    /// table whose `run_id` strings (after eight dictionary-encoded columns) have an offsets
    /// buffer of 53 bytes (stored as it is, after its 8-byte length) made arrow-rs's validation
    /// assert (a panic): the check stopped at the first dictionary column.
    #[test]
    fn offsets_after_a_dictionary_column_are_checked() {
        let bytes = include_bytes!(
            "../../../../fuzz/regressions/bundle_ipc/offsets-after-a-dictionary-column"
        );
        let error = decode(bytes).unwrap_err().to_string();
        assert!(
            error.contains("holds 4-byte offsets but is 53 bytes long"),
            "{error}"
        );
    }

    /// Found by `cargo xtask fuzz --target bundle_ipc`: a damaged schema made a column a union,
    /// whose type ids arrow-ipc sliced past an empty buffer (a panic).
    #[test]
    fn a_union_column_is_refused() {
        let bytes = include_bytes!("../../../../fuzz/regressions/bundle_ipc/a-union-column");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(
            error.contains("is a union, which yosoku does not read"),
            "{error}"
        );
    }

    /// Found by `cargo xtask fuzz --target bundle_ipc`: a fixed-size binary column of width -1
    /// (arrow-data panicked building an empty array of it).
    #[test]
    fn a_negative_fixed_size_is_refused() {
        let bytes = include_bytes!("../../../../fuzz/regressions/bundle_ipc/negative-fixed-size");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(error.contains("has a fixed size of -1"), "{error}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(b"not arrow").is_err());
        assert!(decode(&[]).is_err());
    }
}
