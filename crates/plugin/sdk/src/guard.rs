//! The panic guards every call into plugin code runs under: a panic is caught where it happens,
//! its message and location kept for the host's error, and the plugin poisoned so that every
//! later call is refused (ARCHITECTURE.md, invariant 3).

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

/// Set by the first panic anywhere in the plugin; from then on every call is refused. One per
/// shared library, since each plugin library links its own copy of the SDK.
static POISON: Mutex<Option<String>> = Mutex::new(None);

/// Marks the plugin poisoned (keeps the first message).
pub(crate) fn poison(message: &str) {
    let mut poison = POISON.lock().unwrap_or_else(|e| e.into_inner());
    poison.get_or_insert_with(|| message.to_owned());
}

pub(crate) fn poisoned() -> Option<String> {
    POISON.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

thread_local! {
    /// Where the last panic on this thread happened, recorded by the plugin's panic hook.
    static PANIC_LOCATION: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// How many SDK guards are running on this thread (a guard may call into the host, which
    /// may call the plugin again).
    static GUARDS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `body` under `catch_unwind`, telling the panic hook that a panic here is the guard's to
/// report.
pub(crate) fn catch<R>(body: impl FnOnce() -> R) -> std::thread::Result<R> {
    GUARDS.with(|g| g.set(g.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(body));
    GUARDS.with(|g| g.set(g.get().saturating_sub(1)));
    result
}

/// Installs this plugin library's panic hook (each library has its own), chained to the one
/// that was there: a panic inside an SDK guard is recorded (where it happened) for the error the
/// host reports, instead of being printed to the host's stderr; any other panic (in a thread
/// the plugin started itself) goes to the previous hook, as if the SDK were not there.
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDS.with(std::cell::Cell::get) == 0 {
                previous(info);
                return;
            }
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
