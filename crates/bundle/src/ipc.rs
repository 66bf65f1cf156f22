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
    let reader = FileReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>()?;
    arrow_select::concat::concat_batches(&schema, &batches)
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

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(b"not arrow").is_err());
        assert!(decode(&[]).is_err());
    }
}
