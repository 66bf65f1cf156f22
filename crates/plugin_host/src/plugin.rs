//! One loaded plugin library.

use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use arrow_array::RecordBatch;
use arrow_array::ffi_stream::RecordBatchStreamReader;
use serde_json::{Map, Value};
use yosoku_plugin_abi::descriptor::{CollectorInfo, PluginInfo, check_config, is_valid_name};
use yosoku_plugin_abi::{
    YOSOKU_OK, YOSOKU_PANICKED, YOSOKU_PLUGIN_INIT_SYMBOL, YOSOKU_POISONED,
    YOSOKU_VERSION_UNSUPPORTED, YosokuError, YosokuPlugin, YosokuPluginInitFn,
};

use crate::HostError;
use crate::sink::{PushedTable, Sink};

/// Progress a collector reported: `done` of `total` (0 when unknown), with a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub message: String,
}

/// A plugin library, loaded and initialised. Calls into it are serialised.
#[derive(Debug)]
pub struct LoadedPlugin {
    path: PathBuf,
    info: PluginInfo,
    abi_version: u32,
    /// The function table and the poison message, behind one lock: the host never calls one
    /// plugin concurrently.
    state: Mutex<PluginState>,
}

#[derive(Debug)]
struct PluginState {
    vtable: Box<YosokuPlugin>,
    poisoned: Option<String>,
}

// SAFETY: the vtable's raw pointers are only used under the `state` lock, and the ABI allows a
// plugin to be called from any thread as long as calls do not overlap.
unsafe impl Send for PluginState {}

/// Copies the message out of an error the plugin filled, and releases it.
///
/// # Safety
/// `error` was zeroed before the call and filled (or not) as the ABI specifies.
unsafe fn take_message(error: &mut YosokuError) -> String {
    // SAFETY: forwarded contract.
    unsafe { error.take_message() }.unwrap_or_else(|| "the plugin gave no error message".to_owned())
}

impl LoadedPlugin {
    pub(crate) fn load(path: &Path, abi_versions: &[u32]) -> Result<Self, HostError> {
        // SAFETY: loading a library runs its initialisers; plugin libraries are trusted code the
        // user put in the search path.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| HostError::Load {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        // Never unloaded: tables the plugin produced may outlive any call into it.
        let library: &'static libloading::Library = Box::leak(Box::new(library));
        // SAFETY: the symbol has the signature the ABI specifies.
        let init: libloading::Symbol<'static, YosokuPluginInitFn> = unsafe {
            library.get(YOSOKU_PLUGIN_INIT_SYMBOL.as_bytes())
        }
        .map_err(|e| HostError::NoEntryPoint {
            path: path.to_owned(),
            message: e.to_string(),
        })?;

        let mut refusals = Vec::new();
        for &version in abi_versions {
            let mut vtable = Box::new(YosokuPlugin::empty());
            let mut error = YosokuError::empty();
            // SAFETY: both pointers are valid for the call; see the ABI.
            let status = unsafe { init(version, &raw mut *vtable, &raw mut error) };
            if status == YOSOKU_OK {
                return Self::from_vtable(path, vtable, version);
            }
            // SAFETY: `error` was zeroed and filled by the plugin.
            let message = unsafe { take_message(&mut error) };
            if status == YOSOKU_VERSION_UNSUPPORTED {
                refusals.push(message);
                continue;
            }
            return Err(HostError::Init {
                path: path.to_owned(),
                message: format!("yosoku_plugin_init failed (status {status}): {message}"),
            });
        }
        Err(HostError::VersionMismatch {
            path: path.to_owned(),
            offered: abi_versions.to_vec(),
            message: refusals.join("; "),
        })
    }

    fn from_vtable(
        path: &Path,
        mut vtable: Box<YosokuPlugin>,
        abi_version: u32,
    ) -> Result<Self, HostError> {
        let descriptor_error = |message: String| HostError::Descriptor {
            path: path.to_owned(),
            message,
        };
        if vtable.abi_version != abi_version {
            return Err(descriptor_error(format!(
                "asked for ABI version {abi_version}, the plugin filled version {}",
                vtable.abi_version
            )));
        }
        let (Some(describe), Some(_)) = (vtable.describe, vtable.collect) else {
            return Err(descriptor_error(
                "the function table lacks `describe` or `collect`".into(),
            ));
        };
        let mut json: *const c_char = std::ptr::null();
        let mut error = YosokuError::empty();
        // SAFETY: valid pointers per the ABI.
        let status = unsafe { describe(&raw mut *vtable, &raw mut json, &raw mut error) };
        if status != YOSOKU_OK {
            // SAFETY: filled by the plugin.
            let message = unsafe { take_message(&mut error) };
            return Err(descriptor_error(format!("describe failed: {message}")));
        }
        if json.is_null() {
            return Err(descriptor_error("describe returned no document".into()));
        }
        // SAFETY: NUL-terminated, owned by the plugin for the life of the process.
        let text = unsafe { CStr::from_ptr(json) }.to_string_lossy();
        let info: PluginInfo =
            serde_json::from_str(&text).map_err(|e| descriptor_error(format!("{e} in {text}")))?;
        if !is_valid_name(&info.name) {
            return Err(descriptor_error(format!(
                "plugin name {:?}: use lowercase ASCII letters, digits and `_`",
                info.name
            )));
        }
        Ok(Self {
            path: path.to_owned(),
            info,
            abi_version,
            state: Mutex::new(PluginState {
                vtable,
                poisoned: None,
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn info(&self) -> &PluginInfo {
        &self.info
    }

    pub fn abi_version(&self) -> u32 {
        self.abi_version
    }

    /// The descriptor of the collector `name`.
    pub fn collector(&self, name: &str) -> Result<&CollectorInfo, HostError> {
        self.info
            .collectors
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| HostError::UnknownCollector {
                plugin: self.info.name.clone(),
                collector: name.to_owned(),
                known: self
                    .info
                    .collectors
                    .iter()
                    .map(|c| c.name.clone())
                    .collect(),
            })
    }

    /// Whether an earlier call panicked.
    pub fn poisoned(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .poisoned
            .clone()
    }

    /// Runs a collector and returns its tables, each read completely and, when its name is a
    /// canonical table, checked against the definition. `progress` receives the collector's
    /// progress reports.
    pub fn collect(
        &self,
        collector: &str,
        config: &Map<String, Value>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Vec<(String, RecordBatch)>, HostError> {
        let info = self.collector(collector)?;
        let problems = check_config(info, config);
        if !problems.is_empty() {
            return Err(HostError::Config {
                plugin: self.info.name.clone(),
                collector: collector.to_owned(),
                problems,
            });
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(message) = &state.poisoned {
            return Err(HostError::Poisoned {
                plugin: self.info.name.clone(),
                message: message.clone(),
            });
        }
        let fail = |message: String| HostError::Collect {
            plugin: self.info.name.clone(),
            collector: collector.to_owned(),
            message,
        };
        let c_collector = CString::new(collector).map_err(|e| fail(e.to_string()))?;
        let c_config = CString::new(Value::Object(config.clone()).to_string())
            .map_err(|e| fail(e.to_string()))?;

        let mut sink = Sink::new(&info.tables, progress);
        let mut error = YosokuError::empty();
        let collect_fn = state
            .vtable
            .collect
            .ok_or_else(|| fail("no collect".into()))?;
        // SAFETY: every pointer is valid for the duration of the call, per the ABI.
        let status = unsafe {
            collect_fn(
                &raw mut *state.vtable,
                c_collector.as_ptr(),
                c_config.as_ptr(),
                sink.as_abi(),
                &raw mut error,
            )
        };
        if status != YOSOKU_OK {
            // SAFETY: filled by the plugin.
            let message = unsafe { take_message(&mut error) };
            return Err(match status {
                YOSOKU_PANICKED | YOSOKU_POISONED => {
                    state.poisoned = Some(message.clone());
                    if status == YOSOKU_PANICKED {
                        HostError::Panicked {
                            plugin: self.info.name.clone(),
                            collector: collector.to_owned(),
                            message,
                        }
                    } else {
                        HostError::Poisoned {
                            plugin: self.info.name.clone(),
                            message,
                        }
                    }
                }
                _ => fail(message),
            });
        }
        let pushed = sink.into_tables();
        let mut tables = Vec::with_capacity(pushed.len());
        for PushedTable { name, stream } in pushed {
            let table_error = |message: String| HostError::Table {
                plugin: self.info.name.clone(),
                collector: collector.to_owned(),
                table: name.clone(),
                message,
            };
            let batch = read_stream(stream).map_err(&table_error)?;
            if let Some(def) = yosoku_tables::table(&name) {
                def.check(&batch).map_err(|e| table_error(e.to_string()))?;
            }
            tables.push((name, batch));
        }
        Ok(tables)
    }
}

/// Reads a whole Arrow C stream into one batch.
fn read_stream(
    stream: arrow_array::ffi_stream::FFI_ArrowArrayStream,
) -> Result<RecordBatch, String> {
    let reader = RecordBatchStreamReader::try_new(stream)
        .map_err(|e| format!("invalid Arrow stream: {e}"))?;
    let schema = arrow_array::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader
        .collect::<Result<_, _>>()
        .map_err(|e| format!("reading the Arrow stream failed: {e}"))?;
    arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| format!("the stream's batches do not fit together: {e}"))
}
