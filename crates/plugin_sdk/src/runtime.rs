//! The machinery behind `export_plugin!`: the C functions of the ABI, each guarded against panics.
//! Not part of the SDK's API; public only for the macro.

use std::any::Any;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock};

use yosoku_plugin_abi::descriptor::{PluginInfo, check_config, is_valid_name};
use yosoku_plugin_abi::{
    YOSOKU_ABI_VERSION, YOSOKU_ERROR, YOSOKU_OK, YOSOKU_PANICKED, YOSOKU_POISONED,
    YOSOKU_VERSION_UNSUPPORTED, YosokuError, YosokuPlugin, YosokuStatus, YosokuTableSink,
};

use crate::{Collector, Config, Output, Plugin};

/// Set by the first panic anywhere in the plugin; from then on every call is refused. One per
/// shared library, since each plugin library links its own copy of the SDK.
static POISON: Mutex<Option<String>> = Mutex::new(None);

/// Marks the plugin poisoned (keeps the first message).
pub(crate) fn poison(message: &str) {
    let mut poison = POISON.lock().unwrap_or_else(|e| e.into_inner());
    poison.get_or_insert_with(|| message.to_owned());
}

fn poisoned() -> Option<String> {
    POISON.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

thread_local! {
    /// Where the last panic on this thread happened, recorded by the plugin's panic hook.
    static PANIC_LOCATION: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Replaces the default panic hook of this plugin library (each library has its own): instead of
/// printing a backtrace to the host's stderr, it records where the panic happened, and the
/// guard puts that into the error the host reports.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            PANIC_LOCATION.with(|cell| *cell.borrow_mut() = location);
        }));
    });
}

/// The panic's message, with the location the hook recorded.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    };
    match PANIC_LOCATION.with(|cell| cell.borrow_mut().take()) {
        Some(location) => format!("{message} (at {location})"),
        None => message,
    }
}

/// A plugin instance, its descriptor and collectors; lives for the process.
pub struct Runtime {
    _plugin: Box<dyn Plugin>,
    collectors: Vec<Box<dyn Collector>>,
    info: PluginInfo,
    info_json: CString,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    pub fn new(plugin: Box<dyn Plugin>, version: &str) -> Self {
        let collectors = plugin.collectors();
        let info = PluginInfo {
            name: plugin.name().to_owned(),
            version: version.to_owned(),
            description: plugin.description().to_owned(),
            collectors: collectors.iter().map(|c| c.info()).collect(),
        };
        let info_json =
            CString::new(serde_json::to_string(&info).unwrap_or_default()).unwrap_or_default();
        Self {
            _plugin: plugin,
            collectors,
            info,
            info_json,
        }
    }

    fn check(&self) -> Result<(), Failure> {
        let mut bad: Vec<&str> = Vec::new();
        if !is_valid_name(&self.info.name) {
            bad.push(&self.info.name);
        }
        bad.extend(
            self.info
                .collectors
                .iter()
                .map(|c| c.name.as_str())
                .filter(|n| !is_valid_name(n)),
        );
        if bad.is_empty() {
            Ok(())
        } else {
            Err(Failure::Error(format!(
                "invalid plugin or collector name(s) {bad:?}: use lowercase ASCII letters, digits and `_`"
            )))
        }
    }
}

enum Failure {
    Error(String),
    Unsupported(String),
}

/// Fills `error` with `message` for the host.
///
/// # Safety
/// `error` is null or points to a writable `YosokuError`.
unsafe fn set_error(error: *mut YosokuError, message: &str) {
    // SAFETY: forwarded contract.
    unsafe { YosokuError::fill(error, message) }
}

/// Runs `body` with the poison check and a panic guard, and maps the outcome to a status.
///
/// # Safety
/// `error` is null or points to a writable `YosokuError`.
unsafe fn guard(
    error: *mut YosokuError,
    body: impl FnOnce() -> Result<(), Failure>,
) -> YosokuStatus {
    if let Some(message) = poisoned() {
        let text = format!("the plugin is poisoned: an earlier call panicked: {message}");
        // SAFETY: forwarded contract.
        unsafe { set_error(error, &text) };
        return YOSOKU_POISONED;
    }
    let (status, message) = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return YOSOKU_OK,
        Ok(Err(Failure::Error(m))) => (YOSOKU_ERROR, m),
        Ok(Err(Failure::Unsupported(m))) => (YOSOKU_VERSION_UNSUPPORTED, m),
        Err(payload) => {
            let message = panic_message(payload.as_ref());
            poison(&message);
            (YOSOKU_PANICKED, format!("the plugin panicked: {message}"))
        }
    };
    // SAFETY: forwarded contract.
    unsafe { set_error(error, &message) };
    status
}

/// The body of the generated `yosoku_plugin_init`.
///
/// # Safety
/// `out` points to a writable `YosokuPlugin`; `error` is null or points to a writable
/// `YosokuError`.
pub unsafe fn init(
    abi_version: u32,
    out: *mut YosokuPlugin,
    error: *mut YosokuError,
    cell: &'static OnceLock<Runtime>,
    make: impl FnOnce() -> Runtime,
) -> YosokuStatus {
    install_panic_hook();
    // SAFETY: forwarded contract.
    unsafe {
        guard(error, || {
            if abi_version != YOSOKU_ABI_VERSION {
                return Err(Failure::Unsupported(format!(
                    "the plugin implements ABI version {YOSOKU_ABI_VERSION}, not {abi_version}"
                )));
            }
            if out.is_null() {
                return Err(Failure::Error("yosoku_plugin_init: `out` is null".into()));
            }
            let runtime = cell.get_or_init(make);
            runtime.check()?;
            out.write(YosokuPlugin {
                abi_version: YOSOKU_ABI_VERSION,
                private_data: std::ptr::from_ref(runtime).cast_mut().cast::<c_void>(),
                describe: Some(describe),
                collect: Some(collect),
            });
            Ok(())
        })
    }
}

/// # Safety
/// `plugin` was filled by [`init`].
unsafe fn runtime<'a>(plugin: *mut YosokuPlugin) -> Result<&'a Runtime, Failure> {
    if plugin.is_null() {
        return Err(Failure::Error("the plugin pointer is null".into()));
    }
    // SAFETY: `private_data` points to the `'static` runtime set in `init`.
    let data = unsafe { (*plugin).private_data };
    if data.is_null() {
        return Err(Failure::Error("the plugin was not initialised".into()));
    }
    // SAFETY: see above.
    Ok(unsafe { &*data.cast::<Runtime>() })
}

unsafe extern "C" fn describe(
    plugin: *mut YosokuPlugin,
    json_out: *mut *const c_char,
    error: *mut YosokuError,
) -> YosokuStatus {
    // SAFETY: the host upholds the ABI contract.
    unsafe {
        guard(error, || {
            let runtime = runtime(plugin)?;
            if json_out.is_null() {
                return Err(Failure::Error("describe: `json_out` is null".into()));
            }
            json_out.write(runtime.info_json.as_ptr());
            Ok(())
        })
    }
}

/// # Safety
/// `text` is null or NUL-terminated.
unsafe fn c_str<'a>(text: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if text.is_null() {
        return Err(Failure::Error(format!("{what} is null")));
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    unsafe { CStr::from_ptr(text) }
        .to_str()
        .map_err(|_| Failure::Error(format!("{what} is not UTF-8")))
}

unsafe extern "C" fn collect(
    plugin: *mut YosokuPlugin,
    collector: *const c_char,
    config_json: *const c_char,
    sink: *mut YosokuTableSink,
    error: *mut YosokuError,
) -> YosokuStatus {
    // SAFETY: the host upholds the ABI contract.
    unsafe {
        guard(error, || {
            let runtime = runtime(plugin)?;
            let name = c_str(collector, "the collector name")?;
            let config_text = c_str(config_json, "the configuration")?;
            if sink.is_null() {
                return Err(Failure::Error("the table sink is null".into()));
            }
            let Some(index) = runtime.info.collectors.iter().position(|c| c.name == name) else {
                let known: Vec<&str> = runtime
                    .info
                    .collectors
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect();
                return Err(Failure::Error(format!(
                    "no collector `{name}`; this plugin has: {}",
                    known.join(", ")
                )));
            };
            let info = &runtime.info.collectors[index];
            let values = match serde_json::from_str::<serde_json::Value>(config_text) {
                Ok(serde_json::Value::Object(map)) => map,
                Ok(_) => {
                    return Err(Failure::Error(
                        "the configuration is not a JSON object".into(),
                    ));
                }
                Err(e) => {
                    return Err(Failure::Error(format!(
                        "the configuration is not valid JSON: {e}"
                    )));
                }
            };
            let problems = check_config(info, &values);
            if !problems.is_empty() {
                let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
                return Err(Failure::Error(text.join("; ")));
            }
            let config = Config::new(values, info.clone());
            let mut output = Output::new(sink);
            runtime.collectors[index]
                .collect(&config, &mut output)
                .map_err(|e| Failure::Error(e.to_string()))
        })
    }
}
