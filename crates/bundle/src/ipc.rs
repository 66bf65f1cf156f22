//! Tables as Arrow IPC files, in memory (works in wasm32).

use std::io::Cursor;

use arrow_array::RecordBatch;
use arrow_ipc::CompressionType;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::ArrowError;

/// Encodes a table as an Arrow IPC file, its buffers compressed with LZ4 frames (any Arrow reader
/// with LZ4 support reads it: pyarrow, polars, arrow-rs with the `lz4` feature).
pub fn encode(batch: &RecordBatch) -> Result<Vec<u8>, ArrowError> {
    let mut bytes = Vec::new();
    {
        let options =
            IpcWriteOptions::default().try_with_compression(Some(CompressionType::LZ4_FRAME))?;
        let mut writer = FileWriter::try_new_with_options(&mut bytes, &batch.schema(), options)?;
        writer.write(batch)?;
        writer.finish()?;
    }
    Ok(bytes)
}

/// Decodes an Arrow IPC file into one batch (several batches are concatenated).
pub fn decode(bytes: &[u8]) -> Result<RecordBatch, ArrowError> {
    check_buffers(bytes)?;
    let reader = FileReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>()?;
    arrow_select::concat::concat_batches(&schema, &batches)
}

/// The most an LZ4 frame inflates: a match of up to 2^16 + 14 bytes costs at least one byte of
/// its sequence per 255 bytes of length, so ratios stay under 255:1; the slack covers headers.
const LZ4_MAX_RATIO: u64 = 255;
const LZ4_SLACK_BYTES: u64 = 1024;

/// Refuses, before arrow-ipc reads them, the buffers arrow-ipc would trust: one that lies outside
/// its batch's body or the file (arrow-ipc slices it unchecked and panics), and a compressed one
/// whose declared uncompressed length no LZ4 frame of its size can reach (arrow-ipc allocates
/// that length before inflating, so 20 bytes announcing 2 EB abort the process, the browser's
/// viewer included). Both were found by `cargo xtask fuzz --target bundle_ipc`. What this walk
/// cannot parse is left to arrow-ipc's reader, which reports it.
fn check_buffers(bytes: &[u8]) -> Result<(), ArrowError> {
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
    let blocks = footer
        .recordBatches()
        .into_iter()
        .chain(footer.dictionaries())
        .flatten();
    let damaged = |at: usize, what: String| {
        Err(ArrowError::IpcError(format!(
            "byte {at}: {what} (a damaged file)"
        )))
    };
    for (index, block) in blocks.enumerate() {
        let (Ok(offset), Ok(meta_len), Ok(body_len)) = (
            usize::try_from(block.offset()),
            usize::try_from(block.metaDataLength()),
            usize::try_from(block.bodyLength()),
        ) else {
            continue;
        };
        let Some(meta) = offset
            .checked_add(meta_len)
            .and_then(|end| bytes.get(offset..end))
        else {
            continue;
        };
        // Newer writers put a continuation marker before the length.
        let flatbuffer = match meta {
            [0xff, 0xff, 0xff, 0xff, _, _, _, _, rest @ ..] => rest,
            [_, _, _, _, rest @ ..] => rest,
            _ => continue,
        };
        let Ok(message) = arrow_ipc::root_as_message(flatbuffer) else {
            continue;
        };
        let Some(batch) = message
            .header_as_record_batch()
            .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()))
        else {
            continue;
        };
        let body_start = offset + meta_len;
        if body_start.checked_add(body_len).is_none_or(|end| end > n) {
            return damaged(
                body_start,
                format!("batch {index}'s body of {body_len} bytes runs past the file's {n}"),
            );
        }
        let compressed = batch.compression().is_some();
        for (i, buffer) in batch.buffers().into_iter().flatten().enumerate() {
            let (Ok(at), Ok(len)) = (
                usize::try_from(buffer.offset()),
                usize::try_from(buffer.length()),
            ) else {
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
            if !compressed || len < 8 {
                continue;
            }
            let p = body_start + at;
            let declared = i64::from_le_bytes(bytes[p..p + 8].try_into().unwrap_or([0; 8]));
            // -1: stored uncompressed.
            let most = (len as u64 - 8) * LZ4_MAX_RATIO + LZ4_SLACK_BYTES;
            if declared > 0 && declared as u64 > most {
                return damaged(
                    p,
                    format!(
                        "buffer {i} of batch {index} declares {declared} bytes uncompressed from {} compressed; no LZ4 frame inflates that far",
                        len - 8
                    ),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

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

    /// A buffer that lies outside its batch's body is refused before arrow-ipc slices it: the
    /// file `cargo xtask fuzz --target bundle_ipc` found (it panicked in arrow-buffer).
    #[test]
    fn a_buffer_outside_its_body_is_an_error_not_a_panic() {
        let bytes = include_bytes!("../../../fuzz/regressions/bundle_ipc/buffer-outside-its-body");
        let error = decode(bytes).unwrap_err().to_string();
        assert!(error.contains("lies outside its"), "{error}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(b"not arrow").is_err());
        assert!(decode(&[]).is_err());
    }
}
