//! The host side of `YosokuTableSink`: receives the streams a collector pushes.

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use yosoku_plugin_abi::{
    ArrowArrayStream, YOSOKU_ERROR, YOSOKU_OK, YosokuError, YosokuStatus, YosokuTableSink,
};

use std::path::PathBuf;

/// A file a collector reported it read completely (ABI version 2), with its size and SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputRead {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub sha256_hex: String,
}

/// Progress a collector reported: `done` of `total` (0 when unknown), with a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub message: String,
}

const _: () =
    assert!(std::mem::size_of::<FFI_ArrowArrayStream>() == std::mem::size_of::<ArrowArrayStream>());

pub(crate) struct PushedTable {
    pub name: String,
    pub stream: FFI_ArrowArrayStream,
}

struct SinkState<'a> {
    declared: &'a [String],
    tables: Vec<PushedTable>,
    inputs: Vec<InputRead>,
    progress: &'a mut dyn FnMut(Progress),
}

/// A sink for one `collect` call. The ABI struct points at the state, which is owned through a raw
/// pointer (not a `Box` that moves) while the plugin may hold it.
pub(crate) struct Sink<'a> {
    abi: Box<YosokuTableSink>,
    state: *mut SinkState<'a>,
}

impl<'a> Sink<'a> {
    /// A sink for a plugin initialised for `abi_version`: the fields of later versions stay
    /// null, as a host of that version would not have them.
    pub fn new(
        declared: &'a [String],
        progress: &'a mut dyn FnMut(Progress),
        abi_version: u32,
    ) -> Self {
        let state = Box::into_raw(Box::new(SinkState {
            declared,
            tables: Vec::new(),
            inputs: Vec::new(),
            progress,
        }));
        let abi = Box::new(YosokuTableSink {
            push,
            progress: report_progress,
            private_data: state.cast::<c_void>(),
            input_read: (abi_version >= 2).then_some(input_read),
        });
        Self { abi, state }
    }

    pub fn as_abi(&mut self) -> *mut YosokuTableSink {
        &raw mut *self.abi
    }

    /// The pushed tables and the reported inputs.
    pub fn into_parts(self) -> (Vec<PushedTable>, Vec<InputRead>) {
        // SAFETY: `state` is valid until `Drop` frees it; the plugin no longer holds the sink.
        let state = unsafe { &mut *self.state };
        (
            std::mem::take(&mut state.tables),
            std::mem::take(&mut state.inputs),
        )
    }
}

impl Drop for Sink<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `Box::into_raw` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.state) });
    }
}

/// # Safety
/// `error` is null or writable.
unsafe fn fail(error: *mut YosokuError, message: &str) -> YosokuStatus {
    // SAFETY: forwarded contract.
    unsafe { YosokuError::fill(error, message) };
    YOSOKU_ERROR
}

unsafe extern "C" fn push(
    sink: *mut YosokuTableSink,
    name: *const c_char,
    stream: *mut ArrowArrayStream,
    error: *mut YosokuError,
) -> YosokuStatus {
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        if sink.is_null() || name.is_null() || stream.is_null() {
            return Err("push: null sink, name or stream".into());
        }
        // SAFETY: the sink's private data is the `SinkState` of the current call.
        let state = unsafe { &mut *(*sink).private_data.cast::<SinkState<'_>>() };
        // SAFETY: NUL-terminated per the ABI.
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| "the table name is not UTF-8".to_owned())?;
        if !state.declared.iter().any(|d| d == name) {
            return Err(format!(
                "table `{name}` is not one the collector declares ({})",
                state.declared.join(", ")
            ));
        }
        if state.tables.iter().any(|t| t.name == name) {
            return Err(format!("table `{name}` was pushed twice"));
        }
        // SAFETY: `stream` points to a C stream struct, which has the layout of
        // `FFI_ArrowArrayStream`.
        if unsafe { (*stream).release.is_none() } {
            return Err(format!(
                "table `{name}`: the Arrow stream is already released (its `release` callback is null)"
            ));
        }
        // SAFETY: as above; `from_raw` moves the stream out and nulls the source's `release`.
        let stream =
            unsafe { FFI_ArrowArrayStream::from_raw(stream.cast::<FFI_ArrowArrayStream>()) };
        state.tables.push(PushedTable {
            name: name.to_owned(),
            stream,
        });
        Ok(())
    }));
    match outcome {
        Ok(Ok(())) => YOSOKU_OK,
        // SAFETY: `error` is null or writable per the ABI.
        Ok(Err(message)) => unsafe { fail(error, &message) },
        Err(_) => unsafe { fail(error, "the host panicked while accepting the table") },
    }
}

unsafe extern "C" fn report_progress(
    sink: *mut YosokuTableSink,
    done: u64,
    total: u64,
    message: *const c_char,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if sink.is_null() {
            return;
        }
        // SAFETY: the sink's private data is the `SinkState` of the current call.
        let state = unsafe { &mut *(*sink).private_data.cast::<SinkState<'_>>() };
        let message = if message.is_null() {
            String::new()
        } else {
            // SAFETY: NUL-terminated per the ABI.
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        (state.progress)(Progress {
            done,
            total,
            message,
        });
    }));
}

unsafe extern "C" fn input_read(
    sink: *mut YosokuTableSink,
    path: *const c_char,
    size_bytes: u64,
    sha256_hex: *const c_char,
) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if sink.is_null() || path.is_null() || sha256_hex.is_null() {
            return;
        }
        // SAFETY: the sink's private data is the `SinkState` of the current call.
        let state = unsafe { &mut *(*sink).private_data.cast::<SinkState<'_>>() };
        // SAFETY: NUL-terminated per the ABI.
        let (path, sha) = unsafe { (CStr::from_ptr(path), CStr::from_ptr(sha256_hex)) };
        let (Ok(path), Ok(sha)) = (path.to_str(), sha.to_str()) else {
            return;
        };
        // A malformed hash is not recorded: the host hashes the file itself then.
        if sha.len() == 64
            && sha
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            state.inputs.push(InputRead {
                path: path.into(),
                size_bytes,
                sha256_hex: sha.to_owned(),
            });
        }
    }));
}
