//! Where a collector puts its tables.

use std::ffi::CString;
use std::marker::PhantomData;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use yosoku_plugin_abi::{ArrowArrayStream, YOSOKU_OK, YosokuError, YosokuTableSink};

use crate::PluginError;
use crate::guard::{catch, panic_message, poison, poisoned};
use crate::input::InputRecord;

/// The host's sink for one `collect` call: push named tables, report progress.
#[derive(Debug)]
pub struct Output<'a> {
    sink: *mut YosokuTableSink,
    /// The ABI version the host initialised the plugin for: which sink fields it has.
    abi_version: u32,
    _call: PhantomData<&'a mut YosokuTableSink>,
}

const _: () =
    assert!(std::mem::size_of::<FFI_ArrowArrayStream>() == std::mem::size_of::<ArrowArrayStream>());

impl Output<'_> {
    /// # Safety
    /// `sink` must be the valid sink of the current `collect` call, of at least
    /// `table_sink_size(abi_version)` bytes.
    pub(crate) unsafe fn new(sink: *mut YosokuTableSink, abi_version: u32) -> Self {
        Self {
            sink,
            abi_version,
            _call: PhantomData,
        }
    }

    /// Tells the host which input files the collector read completely, with their sizes and
    /// hashes (ABI version 2; a version-1 host's sink has no such field, and is not touched).
    pub(crate) fn report_inputs(&mut self, records: Vec<InputRecord>) {
        if self.abi_version < 2 || records.is_empty() {
            return;
        }
        // SAFETY: a version-2 sink has `input_read`; the sink is valid during the call.
        let Some(input_read) = (unsafe { (*self.sink).input_read }) else {
            return;
        };
        for r in records {
            let (Ok(path), Ok(sha)) = (
                CString::new(r.path.to_string_lossy().into_owned()),
                CString::new(r.sha256_hex),
            ) else {
                continue;
            };
            // SAFETY: valid, NUL-terminated strings for the duration of the call.
            unsafe { input_read(self.sink, path.as_ptr(), r.size_bytes, sha.as_ptr()) };
        }
    }

    /// Pushes a table held in one batch.
    pub fn push_batch(&mut self, name: &str, batch: RecordBatch) -> Result<(), PluginError> {
        let schema = batch.schema();
        self.push_batches(name, schema, vec![batch])
    }

    /// Pushes a table held in several batches of one schema.
    pub fn push_batches(
        &mut self,
        name: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<(), PluginError> {
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        self.push_reader(name, Box::new(reader))
    }

    /// Pushes a table that the host reads batch by batch, after `collect` returns. A panic in the
    /// reader becomes a stream error and poisons the plugin; a batch whose schema differs from the
    /// reader's is refused.
    pub fn push_reader(
        &mut self,
        name: &str,
        reader: Box<dyn RecordBatchReader + Send>,
    ) -> Result<(), PluginError> {
        let guarded = GuardedReader {
            schema: reader.schema(),
            inner: Some(reader),
            table: name.to_owned(),
        };
        self.push_raw_stream(name, FFI_ArrowArrayStream::new(Box::new(guarded)))
    }

    /// Pushes an Arrow C stream as it is, with no guard. For producers that already hold a C
    /// stream (and for the dummy plugin's malformed-stream tests); prefer [`Output::push_reader`].
    pub fn push_raw_stream(
        &mut self,
        name: &str,
        mut stream: FFI_ArrowArrayStream,
    ) -> Result<(), PluginError> {
        let c_name = CString::new(name)
            .map_err(|_| PluginError::new(format!("table name {name:?} contains a NUL byte")))?;
        let mut error = YosokuError::empty();
        // SAFETY: `self.sink` is valid during the call; `FFI_ArrowArrayStream` has the layout of
        // the C `struct ArrowArrayStream` (asserted above). On success the host moved the stream
        // out and nulled its `release`, so dropping `stream` below is a no-op.
        let status = unsafe {
            ((*self.sink).push)(
                self.sink,
                c_name.as_ptr(),
                (&raw mut stream).cast::<ArrowArrayStream>(),
                &raw mut error,
            )
        };
        if status == YOSOKU_OK {
            Ok(())
        } else {
            // SAFETY: the host filled `error` as the ABI specifies.
            let message = unsafe { error.take_message() };
            Err(PluginError::new(format!(
                "the host refused table `{name}`: {}",
                message.unwrap_or_else(|| "no message".to_owned())
            )))
        }
    }

    /// Reports progress: `done` of `total` units (`total` 0 when unknown).
    pub fn progress(&mut self, done: u64, total: u64, message: &str) {
        let c_message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: `self.sink` is valid during the call.
        unsafe { ((*self.sink).progress)(self.sink, done, total, c_message.as_ptr()) }
    }
}

/// A reader that turns panics into errors (and poisons the plugin), refuses batches whose
/// schema is not the stream's (the host imports every batch with the stream's schema), and
/// stops once the plugin is poisoned. Arrow's C callbacks call into it: `get_next` through
/// [`Iterator::next`], `get_schema` through [`RecordBatchReader::schema`] (a stored copy, which
/// cannot panic) and `release` through `Drop`, where dropping the plugin's reader is guarded too.
struct GuardedReader {
    inner: Option<Box<dyn RecordBatchReader + Send>>,
    schema: SchemaRef,
    table: String,
}

impl Iterator for GuardedReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(message) = poisoned() {
            return Some(Err(ArrowError::ExternalError(
                format!(
                    "table `{}`: the plugin is poisoned by an earlier panic and produces no more batches: {message}",
                    self.table
                )
                .into(),
            )));
        }
        let inner = self.inner.as_mut()?;
        match catch(|| inner.next()) {
            Ok(Some(Ok(batch))) if batch.schema().fields() != self.schema.fields() => {
                Some(Err(ArrowError::SchemaError(format!(
                    "table `{}`: a batch's schema differs from the stream's schema",
                    self.table
                ))))
            }
            Ok(item) => item,
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                poison(&message);
                Some(Err(ArrowError::ExternalError(
                    format!(
                        "table `{}`: the plugin panicked while producing a batch: {message}",
                        self.table
                    )
                    .into(),
                )))
            }
        }
    }
}

impl RecordBatchReader for GuardedReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Drop for GuardedReader {
    /// Runs when the host releases the stream: the plugin's reader is dropped inside a guard, so
    /// a panic in its `Drop` poisons the plugin instead of aborting the host.
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take()
            && let Err(payload) = catch(move || drop(inner))
        {
            poison(&panic_message(payload.as_ref()));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatchIterator};

    use super::*;

    /// Once the plugin is poisoned, its readers stop: the host gets an error, not another call
    /// into code that panicked.
    #[test]
    fn a_reader_of_a_poisoned_plugin_stops() {
        let batch = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Int64Array::from(vec![1, 2])) as arrow_array::ArrayRef,
        )])
        .unwrap();
        let schema = batch.schema();
        let mut reader = GuardedReader {
            inner: Some(Box::new(RecordBatchIterator::new(
                vec![Ok(batch.clone()), Ok(batch)],
                schema.clone(),
            ))),
            schema,
            table: "t".into(),
        };
        assert!(reader.next().is_some_and(|b| b.is_ok()));
        poison("an earlier panic");
        let e = reader.next().unwrap().unwrap_err().to_string();
        assert!(
            e.contains("table `t`: the plugin is poisoned by an earlier panic and produces no more batches: an earlier panic"),
            "{e}"
        );
    }
}
