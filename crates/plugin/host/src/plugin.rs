//! One loaded plugin library.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi_and_data_type};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Schema};
use serde_json::{Map, Value};
use yosoku_plugin_abi::descriptor::{
    CollectorInfo, ConfigType, PluginInfo, check_config, unknown_fields,
};
use yosoku_plugin_abi::{
    YOSOKU_OK, YOSOKU_PANICKED, YOSOKU_PLUGIN_INIT_SYMBOL, YOSOKU_POISONED,
    YOSOKU_VERSION_UNSUPPORTED, YosokuError, YosokuPlugin, YosokuPluginInitFn, plugin_struct_size,
};

use crate::HostError;
use crate::sink::{InputRead, Progress};
use crate::sink::{PushedTable, Sink};

/// What one collector call produced: its tables, each read completely and checked, and the
/// input files it reported reading.
#[derive(Debug)]
pub struct Collection {
    pub tables: Vec<(String, RecordBatch)>,
    pub inputs_read: Vec<InputRead>,
}

/// A collector's configuration, checked against its declared keys. Only
/// [`LoadedPlugin::check_config`] makes one, so a configuration is checked once and then
/// collected; path values may still be rewritten (made absolute, patterns expanded), which keeps
/// them strings.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedConfig {
    collector: String,
    values: Map<String, Value>,
    path_keys: Vec<(String, bool)>,
}

impl CheckedConfig {
    pub fn collector(&self) -> &str {
        &self.collector
    }

    pub fn values(&self) -> &Map<String, Value> {
        &self.values
    }

    /// The path-typed keys that are set, with their values as written: one for a `path` key,
    /// each item of a `path_list`. The flag says whether the key takes a list.
    pub fn paths(&self) -> Vec<(String, bool, Vec<String>)> {
        self.path_keys
            .iter()
            .filter_map(|(key, list)| {
                let values = match self.values.get(key)? {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(items) => items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect(),
                    _ => return None,
                };
                Some((key.clone(), *list, values))
            })
            .collect()
    }

    /// Replaces the paths of a path-typed key: exactly one for a `path` key, any number for a
    /// `path_list`. Returns false (and changes nothing) for any other key or count.
    pub fn set_paths(&mut self, key: &str, paths: Vec<String>) -> bool {
        let Some((_, list)) = self.path_keys.iter().find(|(k, _)| k == key) else {
            return false;
        };
        let value = if *list {
            Value::Array(paths.into_iter().map(Value::String).collect())
        } else {
            match <[String; 1]>::try_from(paths) {
                Ok([one]) => Value::String(one),
                Err(_) => return false,
            }
        };
        self.values.insert(key.to_owned(), value);
        true
    }
}

/// A plugin library, loaded and initialised. Calls into it are serialised.
#[derive(Debug)]
pub struct LoadedPlugin {
    path: PathBuf,
    info: PluginInfo,
    abi_version: u32,
    /// Descriptor fields this host does not know (from a newer plugin), ignored.
    ignored_fields: Vec<String>,
    /// The function table and the poison message, behind one lock: the host never calls one
    /// plugin concurrently.
    state: Mutex<PluginState>,
    /// The lock every instance of this library takes for a call ([`library_lock`]).
    library: Arc<Mutex<()>>,
}

/// The lock shared by every [`LoadedPlugin`] of the library at `path`. Loading one file twice
/// gives one library instance whose statics (the SDK's record of the files a collection read,
/// its poison flag) both loads share, so calls through either must not overlap: two concurrent
/// collections once took each other's input records.
fn library_lock(path: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mut locks = LOCKS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    Arc::clone(locks.entry(key).or_default())
}

/// A call into a plugin: its instance's state, and its library's lock held while the call and
/// the reading of what it returned last.
struct Call<'a> {
    state: MutexGuard<'a, PluginState>,
    _library: MutexGuard<'a, ()>,
}

impl std::ops::Deref for Call<'_> {
    type Target = PluginState;

    fn deref(&self) -> &PluginState {
        &self.state
    }
}

impl std::ops::DerefMut for Call<'_> {
    fn deref_mut(&mut self) -> &mut PluginState {
        &mut self.state
    }
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
            // SAFETY: both pointers are valid for the call; the struct is at least as large as
            // every version's (this host knows no version newer than its struct).
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
        // A plugin initialised for an older version must leave the newer fields alone: a real
        // older host's struct ends there.
        let filled = plugin_struct_size(abi_version).unwrap_or(0);
        // SAFETY: the struct is `size_of::<YosokuPlugin>()` initialised bytes (pointers and an
        // integer, zeroed before the call).
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&raw const *vtable).cast::<u8>(),
                std::mem::size_of::<YosokuPlugin>(),
            )
        };
        if bytes[filled..].iter().any(|b| *b != 0) {
            return Err(descriptor_error(format!(
                "initialised for ABI version {abi_version}, the plugin wrote past that version's {filled}-byte struct"
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
        let document: Value =
            serde_json::from_str(&text).map_err(|e| descriptor_error(format!("{e} in {text}")))?;
        let ignored_fields = unknown_fields(&document);
        let info: PluginInfo = serde_json::from_value(document)
            .map_err(|e| descriptor_error(format!("{e} in {text}")))?;
        let problems = info.problems();
        if !problems.is_empty() {
            return Err(descriptor_error(problems.join("; ")));
        }
        Ok(Self {
            path: path.to_owned(),
            info,
            abi_version,
            ignored_fields,
            state: Mutex::new(PluginState {
                vtable,
                poisoned: None,
            }),
            library: library_lock(path),
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

    /// Descriptor fields this host does not know (the plugin was built for a newer yosoku), as
    /// paths like `collectors[0].streaming`. They were ignored.
    pub fn ignored_fields(&self) -> &[String] {
        &self.ignored_fields
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

    /// Checks `config` against the keys the collector `collector` declares (types, unknown and
    /// missing keys), and that this host can run the collector at all.
    pub fn check_config(
        &self,
        collector: &str,
        config: &Map<String, Value>,
    ) -> Result<CheckedConfig, HostError> {
        let info = self.collector(collector)?;
        let problems = check_config(info, config);
        if !problems.is_empty() {
            return Err(HostError::Config {
                plugin: self.info.name.clone(),
                collector: collector.to_owned(),
                problems,
            });
        }
        Ok(CheckedConfig {
            collector: collector.to_owned(),
            values: config.clone(),
            path_keys: info
                .config
                .iter()
                .filter(|k| k.ty.is_path())
                .map(|k| (k.key.clone(), k.ty == ConfigType::PathList))
                .collect(),
        })
    }

    fn fail(&self, collector: &str, message: String) -> HostError {
        HostError::Collect {
            plugin: self.info.name.clone(),
            collector: collector.to_owned(),
            message,
        }
    }

    /// Turns a failed call's status and message into an error, poisoning on a panic.
    fn call_error(
        &self,
        state: &mut PluginState,
        collector: &str,
        status: i32,
        message: String,
        validating: bool,
    ) -> HostError {
        match status {
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
            _ if validating => HostError::Validate {
                plugin: self.info.name.clone(),
                collector: collector.to_owned(),
                message,
            },
            _ => self.fail(collector, message),
        }
    }

    /// The C strings of a call, and the state, unless the plugin is poisoned.
    fn prepare(&self, config: &CheckedConfig) -> Result<(Call<'_>, CString, CString), HostError> {
        let library = self.library.lock().unwrap_or_else(|e| e.into_inner());
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(message) = &state.poisoned {
            return Err(HostError::Poisoned {
                plugin: self.info.name.clone(),
                message: message.clone(),
            });
        }
        let collector = &config.collector;
        let c_collector =
            CString::new(collector.as_str()).map_err(|e| self.fail(collector, e.to_string()))?;
        let c_config = CString::new(Value::Object(config.values.clone()).to_string())
            .map_err(|e| self.fail(collector, e.to_string()))?;
        Ok((
            Call {
                state,
                _library: library,
            },
            c_collector,
            c_config,
        ))
    }

    /// Asks the plugin to check `config`'s values without collecting (ABI version 2; a plugin
    /// initialised for version 1 has nothing more to check). Errors name the plugin and
    /// collector.
    pub fn validate(&self, config: &CheckedConfig) -> Result<(), HostError> {
        let (mut state, c_collector, c_config) = self.prepare(config)?;
        let Some(validate_fn) = state.vtable.validate.filter(|_| self.abi_version >= 2) else {
            return Ok(());
        };
        let mut error = YosokuError::empty();
        // SAFETY: every pointer is valid for the duration of the call, per the ABI.
        let status = unsafe {
            validate_fn(
                &raw mut *state.vtable,
                c_collector.as_ptr(),
                c_config.as_ptr(),
                &raw mut error,
            )
        };
        if status == YOSOKU_OK {
            return Ok(());
        }
        // SAFETY: filled by the plugin.
        let message = unsafe { take_message(&mut error) };
        Err(self.call_error(&mut state, &config.collector, status, message, true))
    }

    /// Runs a collector and returns its tables, each read completely and, when its name is a
    /// canonical table, checked against the definition, with the input files it reported
    /// reading. `progress` receives the collector's progress reports.
    pub fn collect(
        &self,
        config: &CheckedConfig,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Collection, HostError> {
        let collector = config.collector.as_str();
        let info = self.collector(collector)?;
        let (mut state, c_collector, c_config) = self.prepare(config)?;
        let mut sink = Sink::new(&info.tables, progress, self.abi_version);
        let mut error = YosokuError::empty();
        let collect_fn = state
            .vtable
            .collect
            .ok_or_else(|| self.fail(collector, "no collect".into()))?;
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
            return Err(self.call_error(&mut state, collector, status, message, false));
        }
        let (pushed, inputs_read) = sink.into_parts();
        let mut tables = Vec::with_capacity(pushed.len());
        for PushedTable { name, stream } in pushed {
            let batch = read_stream(stream).map_err(|message| HostError::Table {
                plugin: self.info.name.clone(),
                collector: collector.to_owned(),
                table: name.clone(),
                message,
            })?;
            self.check_table(collector, &name, &batch)?;
            tables.push((name, batch));
        }
        Ok(Collection {
            tables,
            inputs_read,
        })
    }

    /// A pushed table checked against its definition, when its name is a canonical table.
    pub(crate) fn check_table(
        &self,
        collector: &str,
        name: &str,
        batch: &RecordBatch,
    ) -> Result<(), HostError> {
        match yosoku_tables::table(name) {
            Some(def) => def.check(batch).map_err(|e| HostError::Table {
                plugin: self.info.name.clone(),
                collector: collector.to_owned(),
                table: name.to_owned(),
                message: e.to_string(),
            }),
            None => Ok(()),
        }
    }
}

/// Reads a whole Arrow C stream into one batch. Arrow's C Data Interface imports arrays as their
/// producer describes them, unchecked; every batch is validated against the stream's schema
/// before it becomes a typed array, so a stream whose schema lies about its arrays is an error
/// here, not a panic or an out-of-bounds read later.
fn read_stream(mut stream: FFI_ArrowArrayStream) -> Result<RecordBatch, String> {
    let (Some(get_schema), Some(get_next)) = (stream.get_schema(), stream.get_next()) else {
        return Err("invalid Arrow stream: it lacks its get_schema or get_next callback".into());
    };
    let mut ffi_schema = FFI_ArrowSchema::empty();
    // SAFETY: the stream is a valid C stream (the sink checked it is not released); the
    // callback fills `ffi_schema`.
    let status = unsafe { get_schema(&raw mut stream, &raw mut ffi_schema) };
    if status != 0 {
        return Err(format!(
            "invalid Arrow stream: {}",
            producer_error(&mut stream, status)
        ));
    }
    let schema =
        Arc::new(Schema::try_from(&ffi_schema).map_err(|e| format!("invalid Arrow stream: {e}"))?);
    let as_struct = DataType::Struct(schema.fields().clone());
    let mut batches = Vec::new();
    loop {
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: as above; the callback fills `array`, released when it ends the stream.
        let status = unsafe { get_next(&raw mut stream, &raw mut array) };
        if status != 0 {
            return Err(format!(
                "reading the Arrow stream failed: {}",
                producer_error(&mut stream, status)
            ));
        }
        if array.is_released() {
            break;
        }
        // SAFETY: `array` is a valid C array, typed by the stream's schema; what is built from
        // it is validated before anything reads it as typed data.
        let data = unsafe { from_ffi_and_data_type(array, as_struct.clone()) }
            .map_err(|e| format!("reading the Arrow stream failed: {e}"))?;
        data.validate_full().map_err(|e| {
            format!(
                "the stream's arrays do not match its schema: {}",
                describe(&schema, &data, e)
            )
        })?;
        let columns = StructArray::from(data).into_parts().1;
        let batch = RecordBatch::try_new(schema.clone(), columns)
            .map_err(|e| format!("the stream's arrays do not match its schema: {e}"))?;
        batches.push(batch);
    }
    arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| format!("the stream's batches do not fit together: {e}"))
}

/// A validation error, naming the column whose array is at fault.
fn describe(schema: &Schema, data: &ArrayData, error: ArrowError) -> String {
    for (field, child) in schema.fields().iter().zip(data.child_data()) {
        if let Err(e) = child.validate_full() {
            return format!("column `{}` ({}): {e}", field.name(), field.data_type());
        }
    }
    error.to_string()
}

/// The error a stream's producer reports after a failed call.
fn producer_error(stream: &mut FFI_ArrowArrayStream, status: i32) -> String {
    let message = stream.get_last_error().and_then(|get_last_error| {
        // SAFETY: valid right after a failed call, per the C stream interface; the string is
        // owned by the stream and copied here.
        let text = unsafe { get_last_error(stream) };
        (!text.is_null()).then(|| {
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        })
    });
    match message {
        Some(message) => format!("{message} (error code {status})"),
        None => format!("error code {status}, no message"),
    }
}
