//! The machinery behind `export_plugin!`: the C functions of the ABI, each guarded against panics.
//! Not part of the SDK's API; public only for the macro.

use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::OnceLock;

use yosoku_plugin_abi::descriptor::{DESCRIPTOR_VERSION, PluginInfo, check_config};
use yosoku_plugin_abi::{
    YOSOKU_ABI_VERSIONS, YOSOKU_ERROR, YOSOKU_OK, YOSOKU_PANICKED, YOSOKU_POISONED,
    YOSOKU_VERSION_UNSUPPORTED, YosokuError, YosokuPlugin, YosokuStatus, YosokuTableSink,
    plugin_struct_size,
};

use crate::guard::{catch, install_panic_hook, panic_message, poison, poisoned};
use crate::{Collector, Config, Output, Plugin};
use yosoku_plugin_abi::descriptor::CollectorInfo;

/// A plugin instance, its descriptor and collectors; lives for the process.
pub struct Runtime {
    _plugin: Box<dyn Plugin>,
    collectors: Vec<Box<dyn Collector>>,
    info: PluginInfo,
    /// The descriptor as the host reads it, or why it could not be made.
    info_json: Result<CString, String>,
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
            descriptor_version: DESCRIPTOR_VERSION,
            name: plugin.name().to_owned(),
            version: version.to_owned(),
            description: plugin.description().to_owned(),
            collectors: collectors.iter().map(|c| c.info()).collect(),
        };
        // JSON escapes every control character, NUL included, so a help text with a NUL is
        // kept (as \u0000); should serialising fail anyway, init says so.
        let info_json = serde_json::to_string(&info)
            .map_err(|e| format!("the descriptor cannot be written as JSON: {e}"))
            .and_then(|text| {
                CString::new(text).map_err(|e| format!("the descriptor holds a NUL byte: {e}"))
            });
        Self {
            _plugin: plugin,
            collectors,
            info,
            info_json,
        }
    }

    /// The descriptor, checked as the host will check it, so that a plugin author meets the
    /// problem when the plugin is loaded rather than a vague refusal.
    fn check(&self) -> Result<(), Failure> {
        if let Err(e) = &self.info_json {
            return Err(Failure::Error(e.clone()));
        }
        let problems = self.info.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Failure::Error(format!(
                "invalid descriptor: {}",
                problems.join("; ")
            )))
        }
    }

    /// The collector called `name` and its descriptor.
    fn collector(&self, name: &str) -> Result<(&dyn Collector, &CollectorInfo), Failure> {
        match self.info.collectors.iter().position(|c| c.name == name) {
            Some(i) => Ok((self.collectors[i].as_ref(), &self.info.collectors[i])),
            None => {
                let known: Vec<&str> = self
                    .info
                    .collectors
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect();
                Err(Failure::Error(format!(
                    "no collector `{name}`; this plugin has: {}",
                    known.join(", ")
                )))
            }
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
    let (status, message) = match catch(body) {
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

/// The body of the generated `yosoku_plugin_init`: accepts every ABI version this SDK
/// implements ([`YOSOKU_ABI_VERSIONS`]) and fills only the part of `*out` that the version the
/// host asked for has, so a plugin built with this SDK serves a host that knows only an older
/// version without writing past its struct.
///
/// # Safety
/// `out` points to a writable `YosokuPlugin` of at least [`plugin_struct_size`]`(abi_version)`
/// bytes; `error` is null or points to a writable `YosokuError`.
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
            let Some(size) = plugin_struct_size(abi_version)
                .filter(|_| YOSOKU_ABI_VERSIONS.contains(&abi_version))
            else {
                return Err(Failure::Unsupported(format!(
                    "the plugin implements ABI versions {YOSOKU_ABI_VERSIONS:?}, not {abi_version}"
                )));
            };
            if out.is_null() {
                return Err(Failure::Error("yosoku_plugin_init: `out` is null".into()));
            }
            let runtime = cell.get_or_init(make);
            runtime.check()?;
            let full = YosokuPlugin {
                abi_version,
                private_data: std::ptr::from_ref(runtime).cast_mut().cast::<c_void>(),
                describe: Some(describe),
                collect: Some(collect),
                validate: Some(validate),
            };
            // The prefix of the version asked for, and not a byte more.
            std::ptr::copy_nonoverlapping((&raw const full).cast::<u8>(), out.cast::<u8>(), size);
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
            let json = runtime
                .info_json
                .as_ref()
                .map_err(|e| Failure::Error(e.clone()))?;
            json_out.write(json.as_ptr());
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

/// The collector and its checked configuration, from the C arguments of `collect` and
/// `validate`.
///
/// # Safety
/// `collector` and `config_json` are null or NUL-terminated.
unsafe fn configured(
    runtime: &Runtime,
    collector: *const c_char,
    config_json: *const c_char,
) -> Result<(&dyn Collector, Config), Failure> {
    // SAFETY: forwarded contract.
    let (name, config_text) = unsafe {
        (
            c_str(collector, "the collector name")?,
            c_str(config_json, "the configuration")?,
        )
    };
    let (collector, info) = runtime.collector(name)?;
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
    Ok((collector, Config::new(values, info.clone())))
}

unsafe extern "C" fn validate(
    plugin: *mut YosokuPlugin,
    collector: *const c_char,
    config_json: *const c_char,
    error: *mut YosokuError,
) -> YosokuStatus {
    // SAFETY: the host upholds the ABI contract.
    unsafe {
        guard(error, || {
            let runtime = runtime(plugin)?;
            let (collector, config) = configured(runtime, collector, config_json)?;
            collector
                .validate(&config)
                .map_err(|e| Failure::Error(e.to_string()))
        })
    }
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
            let (collector, config) = configured(runtime, collector, config_json)?;
            if sink.is_null() {
                return Err(Failure::Error("the table sink is null".into()));
            }
            // The version the host initialised us for tells which sink fields it has.
            let version = (*plugin).abi_version;
            crate::input::start_recording();
            let mut output = Output::new(sink, version);
            let result = collector
                .collect(&config, &mut output)
                .map_err(|e| Failure::Error(e.to_string()));
            output.report_inputs(crate::input::take_recorded());
            result
        })
    }
}
