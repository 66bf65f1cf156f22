//! The C ABI between the yosoku host and its plugins.
//!
//! This crate is the Rust mirror of `include/yosoku_plugin.h`; `docs/plugin-abi.md` is the spec of
//! record. Only C types cross the boundary: integers, NUL-terminated UTF-8 strings, function
//! pointers, and the Arrow C stream interface for tables. No Rust type with an unstable layout and
//! no Arrow crate type appears here, so a plugin built with another Rust or Arrow version (or in C)
//! interoperates.
//!
//! Plugin authors do not use this crate directly: `yosoku-plugin-sdk` wraps it in a safe trait and
//! an export macro; `yosoku-plugin-host` loads and calls plugins through it.
//!
//! The ABI is at version 2. Versions only append fields: the crate records each struct's size in
//! each version, so a plugin fills (and a host reads) only the struct of the version negotiated.
//! The JSON descriptor ([`descriptor`]) lists a plugin's collectors with their configuration keys
//! and tables, with its rules, its whole-descriptor check and what a host ignores of a newer one.
//! No Arrow, no I/O.

#![allow(non_camel_case_types)]

pub mod descriptor;

use std::ffi::{c_char, c_int, c_void};

/// The newest ABI version this crate describes.
pub const YOSOKU_ABI_VERSION: u32 = 2;

/// Every ABI version this crate describes, newest first: what a host offers and what a plugin
/// built with this crate accepts.
pub const YOSOKU_ABI_VERSIONS: &[u32] = &[2, 1];

/// The size of [`YosokuPlugin`] in ABI version `version` (`YOSOKU_PLUGIN_SIZE_<N>` in the
/// header): a plugin initialised for `version` fills exactly this many bytes.
pub const fn plugin_struct_size(version: u32) -> Option<usize> {
    match version {
        1 => Some(std::mem::offset_of!(YosokuPlugin, validate)),
        2 => Some(std::mem::size_of::<YosokuPlugin>()),
        _ => None,
    }
}

/// The size of [`YosokuTableSink`] in ABI version `version` (`YOSOKU_TABLE_SINK_SIZE_<N>`): a
/// plugin initialised for `version` reads no field past it.
pub const fn table_sink_size(version: u32) -> Option<usize> {
    match version {
        1 => Some(std::mem::offset_of!(YosokuTableSink, input_read)),
        2 => Some(std::mem::size_of::<YosokuTableSink>()),
        _ => None,
    }
}

/// The symbol every plugin exports (see [`YosokuPluginInitFn`]).
pub const YOSOKU_PLUGIN_INIT_SYMBOL: &str = "yosoku_plugin_init";

/// Result of every ABI call.
pub type YosokuStatus = i32;
/// The call succeeded.
pub const YOSOKU_OK: YosokuStatus = 0;
/// The call failed; the `YosokuError` says why.
pub const YOSOKU_ERROR: YosokuStatus = 1;
/// `yosoku_plugin_init` only: the plugin does not implement the ABI version asked for.
pub const YOSOKU_VERSION_UNSUPPORTED: YosokuStatus = 2;
/// The plugin panicked (or hit a fatal internal error) during this call. It is now poisoned.
pub const YOSOKU_PANICKED: YosokuStatus = 3;
/// A previous call panicked; the plugin refuses every further call.
pub const YOSOKU_POISONED: YosokuStatus = 4;

/// An error message owned by whoever filled it in.
///
/// The caller allocates the struct zeroed and passes a pointer. On failure the callee sets
/// `message` (NUL-terminated UTF-8) and `release`. The caller copies the message, then calls
/// `release(error)`, which frees the message and sets `message` and `release` to null.
#[repr(C)]
#[derive(Debug)]
pub struct YosokuError {
    pub message: *mut c_char,
    pub release: Option<unsafe extern "C" fn(error: *mut YosokuError)>,
    pub private_data: *mut c_void,
}

impl YosokuError {
    /// A zeroed error: no message, no release.
    pub const fn empty() -> Self {
        Self {
            message: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }

    /// Fills `*error` with `message` (NUL bytes replaced) and a release that frees it with this
    /// library's allocator. Used by whichever side reports the error, host or plugin.
    ///
    /// # Safety
    /// `error` is null (then nothing happens) or points to a writable `YosokuError`.
    pub unsafe fn fill(error: *mut YosokuError, message: &str) {
        if error.is_null() {
            return;
        }
        let message = std::ffi::CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: non-null and writable per the contract.
        unsafe {
            error.write(YosokuError {
                message: message.into_raw(),
                release: Some(release_filled_error),
                private_data: std::ptr::null_mut(),
            });
        }
    }

    /// Copies the message out of an error the other side filled (or left zeroed) and releases it
    /// through the other side's own `release`.
    ///
    /// # Safety
    /// `self` was zeroed before the call and filled, if at all, as the ABI specifies.
    pub unsafe fn take_message(&mut self) -> Option<String> {
        let message = (!self.message.is_null()).then(|| {
            // SAFETY: a non-null message is NUL-terminated per the ABI.
            unsafe { std::ffi::CStr::from_ptr(self.message) }
                .to_string_lossy()
                .into_owned()
        });
        if let Some(release) = self.release {
            // SAFETY: per the ABI the filler's release frees its own message.
            unsafe { release(self) };
        }
        message
    }
}

/// The release of errors filled by [`YosokuError::fill`].
unsafe extern "C" fn release_filled_error(error: *mut YosokuError) {
    if error.is_null() {
        return;
    }
    // SAFETY: `message` was made by `CString::into_raw` in `fill` and is released once.
    unsafe {
        let error = &mut *error;
        if !error.message.is_null() {
            drop(std::ffi::CString::from_raw(error.message));
        }
        error.message = std::ptr::null_mut();
        error.release = None;
    }
}

/// `struct ArrowArrayStream` of the Arrow C stream interface
/// (<https://arrow.apache.org/docs/format/CStreamInterface.html>).
///
/// `ArrowSchema` and `ArrowArray` are left opaque (`c_void`) here: the host and the SDK convert this
/// struct to their Arrow library's own FFI type, which has the same layout.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    pub get_schema:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut c_void) -> c_int>,
    pub get_next:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut c_void) -> c_int>,
    pub get_last_error:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream) -> *const c_char>,
    pub release: Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream)>,
    pub private_data: *mut c_void,
}

/// Where a collector puts its tables and reports progress. Owned by the host, valid only during
/// the `collect` call it is passed to.
#[repr(C)]
#[derive(Debug)]
pub struct YosokuTableSink {
    /// Hands one named table to the host. The host moves the stream out of `*stream` (copies the
    /// struct and sets `stream->release` to null) when it returns `YOSOKU_OK`; on failure the stream
    /// still belongs to the plugin and `error` says why (e.g. a table name given twice).
    pub push: unsafe extern "C" fn(
        sink: *mut YosokuTableSink,
        name: *const c_char,
        stream: *mut ArrowArrayStream,
        error: *mut YosokuError,
    ) -> YosokuStatus,
    /// Reports progress of a long collection: `done` of `total` units (`total` 0 when unknown),
    /// with a short message (may be null). Never fails.
    pub progress: unsafe extern "C" fn(
        sink: *mut YosokuTableSink,
        done: u64,
        total: u64,
        message: *const c_char,
    ),
    pub private_data: *mut c_void,
    /// Version 2. Reports a file the collector read completely: its path as the configuration
    /// gave it, its size and its SHA-256 (64 lowercase hex digits, NUL-terminated), so that the
    /// host records it without reading it again. May be null; a plugin initialised for version
    /// 1 never reads it.
    pub input_read: Option<
        unsafe extern "C" fn(
            sink: *mut YosokuTableSink,
            path: *const c_char,
            size_bytes: u64,
            sha256_hex: *const c_char,
        ),
    >,
}

/// The plugin's function table. The host allocates it zeroed and `yosoku_plugin_init` fills its
/// first [`plugin_struct_size`]`(version)` bytes. New versions of the ABI only ever append
/// fields.
#[repr(C)]
#[derive(Debug)]
pub struct YosokuPlugin {
    /// Set by the plugin: the ABI version it filled the struct for (the one the host asked for).
    pub abi_version: u32,
    /// The plugin's own state; the host never touches it.
    pub private_data: *mut c_void,
    /// Describes the plugin as a JSON document (see docs/plugin-abi.md, "Descriptor"). On success
    /// `*json_out` points to NUL-terminated UTF-8 owned by the plugin and valid for the life of the
    /// process.
    pub describe: Option<
        unsafe extern "C" fn(
            plugin: *mut YosokuPlugin,
            json_out: *mut *const c_char,
            error: *mut YosokuError,
        ) -> YosokuStatus,
    >,
    /// Runs the collector `collector` with the configuration `config_json` (a JSON object keyed by
    /// the collector's declared config keys; relative paths already resolved by the host) and
    /// pushes its tables into `sink`.
    pub collect: Option<
        unsafe extern "C" fn(
            plugin: *mut YosokuPlugin,
            collector: *const c_char,
            config_json: *const c_char,
            sink: *mut YosokuTableSink,
            error: *mut YosokuError,
        ) -> YosokuStatus,
    >,
    /// Version 2. Checks the configuration `config_json` of the collector `collector` as
    /// `collect` would, without collecting: values, not only types (a rank count of 0, an
    /// unknown format). May be null: nothing more to check.
    pub validate: Option<
        unsafe extern "C" fn(
            plugin: *mut YosokuPlugin,
            collector: *const c_char,
            config_json: *const c_char,
            error: *mut YosokuError,
        ) -> YosokuStatus,
    >,
}

impl YosokuPlugin {
    /// A zeroed function table, as the host passes it to `yosoku_plugin_init`.
    pub const fn empty() -> Self {
        Self {
            abi_version: 0,
            private_data: std::ptr::null_mut(),
            describe: None,
            collect: None,
            validate: None,
        }
    }
}

/// `YosokuStatus yosoku_plugin_init(uint32_t abi_version, YosokuPlugin* out, YosokuError* error)`:
/// the one symbol a plugin exports. Returns `YOSOKU_VERSION_UNSUPPORTED` for a version it does not
/// implement, so that the host can retry with an older one.
pub type YosokuPluginInitFn = unsafe extern "C" fn(
    abi_version: u32,
    out: *mut YosokuPlugin,
    error: *mut YosokuError,
) -> YosokuStatus;

/// The text of `include/yosoku_plugin.h`, the C declaration of this ABI.
pub const C_HEADER: &str = include_str!("../include/yosoku_plugin.h");

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of};

    #[test]
    fn layouts_match_the_c_header_on_this_platform() {
        let ptr = size_of::<*const c_void>();
        assert_eq!(size_of::<YosokuError>(), 3 * ptr);
        assert_eq!(size_of::<ArrowArrayStream>(), 5 * ptr);
        assert_eq!(size_of::<YosokuTableSink>(), 4 * ptr);
        // u32 then pointers: the u32 is padded to pointer alignment.
        assert_eq!(size_of::<YosokuPlugin>(), 5 * ptr);
        assert_eq!(align_of::<YosokuPlugin>(), ptr);
        // Field offsets: checked against the C compiler's in the next test.
        // Version 1 ends where version 2 began.
        assert_eq!(plugin_struct_size(1), Some(4 * ptr));
        assert_eq!(table_sink_size(1), Some(3 * ptr));
        for v in YOSOKU_ABI_VERSIONS {
            assert!(plugin_struct_size(*v).is_some() && table_sink_size(*v).is_some());
        }
        assert_eq!(
            plugin_struct_size(YOSOKU_ABI_VERSION),
            Some(size_of::<YosokuPlugin>())
        );
        assert_eq!(plugin_struct_size(3), None);
    }

    /// The offsets and sizes as a C compiler lays out `include/yosoku_plugin.h`: the Rust mirror
    /// and the header cannot drift apart.
    #[test]
    fn offsets_and_version_sizes_equal_the_c_compilers() {
        use std::mem::offset_of;
        let dir = std::env::temp_dir().join(format!("yosoku-abi-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("layout.c");
        std::fs::write(
            &source,
            r#"#include <stdio.h>
#include "yosoku_plugin.h"
#define P(x) printf("%zu\n", (size_t)(x))
int main(void) {
  P(sizeof(YosokuError)); P(offsetof(YosokuError, release)); P(offsetof(YosokuError, private_data));
  P(sizeof(YosokuTableSink)); P(offsetof(YosokuTableSink, progress));
  P(offsetof(YosokuTableSink, private_data)); P(offsetof(YosokuTableSink, input_read));
  P(sizeof(YosokuPlugin)); P(offsetof(YosokuPlugin, private_data)); P(offsetof(YosokuPlugin, describe));
  P(offsetof(YosokuPlugin, collect)); P(offsetof(YosokuPlugin, validate));
  P(YOSOKU_PLUGIN_SIZE_1); P(YOSOKU_PLUGIN_SIZE_2); P(YOSOKU_TABLE_SINK_SIZE_1); P(YOSOKU_TABLE_SINK_SIZE_2);
  P(sizeof(struct ArrowArrayStream)); P(offsetof(struct ArrowArrayStream, release));
  return 0;
}
"#,
        )
        .unwrap();
        let binary = dir.join("layout");
        let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
        let status = std::process::Command::new("cc")
            .args(["-Wall", "-Werror", "-I", include, "-o"])
            .arg(&binary)
            .arg(&source)
            .status()
            .expect("a C compiler (`cc`) is needed to check the header");
        assert!(status.success());
        let out = std::process::Command::new(&binary).output().unwrap();
        let c: Vec<usize> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let rust = [
            size_of::<YosokuError>(),
            offset_of!(YosokuError, release),
            offset_of!(YosokuError, private_data),
            size_of::<YosokuTableSink>(),
            offset_of!(YosokuTableSink, progress),
            offset_of!(YosokuTableSink, private_data),
            offset_of!(YosokuTableSink, input_read),
            size_of::<YosokuPlugin>(),
            offset_of!(YosokuPlugin, private_data),
            offset_of!(YosokuPlugin, describe),
            offset_of!(YosokuPlugin, collect),
            offset_of!(YosokuPlugin, validate),
            plugin_struct_size(1).unwrap(),
            plugin_struct_size(2).unwrap(),
            table_sink_size(1).unwrap(),
            table_sink_size(2).unwrap(),
            size_of::<ArrowArrayStream>(),
            offset_of!(ArrowArrayStream, release),
        ];
        assert_eq!(c, rust);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_filled_error_gives_its_message_once_and_releases_it() {
        let mut error = YosokuError::empty();
        // SAFETY: a valid, zeroed error.
        unsafe { YosokuError::fill(&mut error, "bad\0thing") };
        assert!(error.release.is_some());
        // SAFETY: filled by `fill`.
        assert_eq!(
            unsafe { error.take_message() }.as_deref(),
            Some("bad thing")
        );
        assert!(error.message.is_null() && error.release.is_none());
        // SAFETY: released, so zeroed again.
        assert_eq!(unsafe { error.take_message() }, None);
    }

    #[test]
    fn the_header_declares_every_status_with_its_value() {
        for (name, value) in [
            ("YOSOKU_OK", YOSOKU_OK),
            ("YOSOKU_ERROR", YOSOKU_ERROR),
            ("YOSOKU_VERSION_UNSUPPORTED", YOSOKU_VERSION_UNSUPPORTED),
            ("YOSOKU_PANICKED", YOSOKU_PANICKED),
            ("YOSOKU_POISONED", YOSOKU_POISONED),
        ] {
            let line = format!("#define {name} {value}");
            assert!(C_HEADER.contains(&line), "header lacks `{line}`");
        }
        assert!(C_HEADER.contains(&format!("#define YOSOKU_ABI_VERSION {YOSOKU_ABI_VERSION}")));
        assert!(C_HEADER.contains(YOSOKU_PLUGIN_INIT_SYMBOL));
    }
}
