//! Where the viewer runs: bytes from a file (desktop) or a URL (browser), a bundle directory
//! (desktop), files dropped on the window, the page's memory and the local time zone. The data
//! layer (`data`, `trace_store`) and the views read through here and know nothing else of the
//! platform; the two entry points, `main.rs` and `web`, sit above everything.

use std::sync::{Arc, Mutex};

/// Reads the bytes at `location` — a file path on the desktop, a URL in the browser — and hands
/// them to `done`: at once on the desktop, when they arrive in the browser. Errors name the
/// location.
pub fn read(location: &str, done: impl FnOnce(Result<Vec<u8>, String>) + 'static) {
    #[cfg(not(target_arch = "wasm32"))]
    done(read_file(std::path::Path::new(location)));
    #[cfg(target_arch = "wasm32")]
    {
        let url = location.to_owned();
        wasm_bindgen_futures::spawn_local(async move { done(fetch(&url).await) });
    }
}

/// A file's bytes (desktop); errors name the file.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Fetches in flight at once, at most: the page asks for every manifest, and a view for every
/// table of its bundle, at once. More at once opened new connections in bursts, and the server
/// `yosoku serve` uses (tiny_http 0.12) can leave a connection of such a burst unread while the
/// browser keeps its others alive: 2 of 26 manifests never came, in 3 page loads of 6 on a
/// loaded 2-core machine. Four at a time mostly reuse the connections the page loaded through
/// (0 stalls in 8 loads there).
#[cfg(target_arch = "wasm32")]
const FETCHES_IN_FLIGHT: usize = 4;

#[cfg(target_arch = "wasm32")]
thread_local! {
    /// Fetches in flight, and the fetches waiting for one to end (each a promise's resolve).
    static IN_FLIGHT: std::cell::RefCell<(usize, std::collections::VecDeque<js_sys::Function>)> =
        const { std::cell::RefCell::new((0, std::collections::VecDeque::new())) };
}

/// Waits until fewer than [`FETCHES_IN_FLIGHT`] fetches are in flight, and counts this one.
#[cfg(target_arch = "wasm32")]
async fn start_fetch() {
    let started = IN_FLIGHT.with(|f| {
        let mut f = f.borrow_mut();
        let free = f.0 < FETCHES_IN_FLIGHT;
        if free {
            f.0 += 1;
        }
        free
    });
    if !started {
        // [`end_fetch`] hands its place over by resolving this.
        let turn = js_sys::Promise::new(&mut |resolve, _| {
            IN_FLIGHT.with(|f| f.borrow_mut().1.push_back(resolve));
        });
        let _ = wasm_bindgen_futures::JsFuture::from(turn).await;
    }
}

/// Ends a fetch: its place goes to the one waiting longest, if any.
#[cfg(target_arch = "wasm32")]
fn end_fetch() {
    let next = IN_FLIGHT.with(|f| {
        let mut f = f.borrow_mut();
        let next = f.1.pop_front();
        if next.is_none() {
            f.0 = f.0.saturating_sub(1);
        }
        next
    });
    if let Some(resolve) = next {
        let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
    }
}

/// The bytes at `url`, relative to the page (browser); errors name the URL and the HTTP status.
/// At most [`FETCHES_IN_FLIGHT`] are in flight at once; the others wait their turn.
#[cfg(target_arch = "wasm32")]
pub async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    start_fetch().await;
    let bytes = fetch_now(url).await;
    end_fetch();
    bytes
}

#[cfg(target_arch = "wasm32")]
async fn fetch_now(url: &str) -> Result<Vec<u8>, String> {
    use wasm_bindgen::JsCast as _;
    let window = web_sys::window().ok_or("no window")?;
    let response = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {e:?}"))?;
    let response: web_sys::Response = response
        .dyn_into()
        .map_err(|_| format!("{url}: not a response"))?;
    if !response.ok() {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let buffer = wasm_bindgen_futures::JsFuture::from(
        response
            .array_buffer()
            .map_err(|e| format!("{url}: {e:?}"))?,
    )
    .await
    .map_err(|e| format!("{url}: {e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// This machine's (or browser's) offset from UTC at `unix_secs`, in seconds.
pub fn local_offset_secs(unix_secs: u64) -> i32 {
    #[cfg(target_arch = "wasm32")]
    {
        // getTimezoneOffset is UTC minus local, in minutes.
        let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_secs as f64 * 1e3));
        (-date.get_timezone_offset() * 60.0) as i32
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use chrono::{Local, Offset, TimeZone};
        i64::try_from(unix_secs)
            .ok()
            .and_then(|s| Local.timestamp_opt(s, 0).single())
            .map_or(0, |t| t.offset().fix().local_minus_utc())
    }
}

/// What a directory entry is, for the desktop's open dialog.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// A directory holding a `manifest.json`.
    Bundle,
    Directory,
    File,
}

/// The entries of `dir` (desktop): name, path and what each is; the error names the directory.
#[cfg(not(target_arch = "wasm32"))]
pub fn list_directory(
    dir: &std::path::Path,
) -> Result<Vec<(String, std::path::PathBuf, Listed)>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(read
        .filter_map(Result::ok)
        .map(|entry| {
            let path = entry.path();
            let kind = if yosoku_bundle::fs::is_bundle(&path) {
                Listed::Bundle
            } else if path.is_dir() {
                Listed::Directory
            } else {
                Listed::File
            };
            (entry.file_name().to_string_lossy().into_owned(), path, kind)
        })
        .collect())
}

/// A bundle directory read whole (desktop): its manifest and every table, checked.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_bundle_dir(dir: &std::path::Path) -> Result<yosoku_bundle::fs::Bundle, String> {
    yosoku_bundle::fs::read_bundle(dir).map_err(|e| e.to_string())
}

/// What a drop on the window brought, once read.
#[derive(Debug)]
pub enum Dropped {
    /// A directory (desktop): a bundle to open by its path.
    Directory(String),
    /// Files with their bytes: `.arrow` tables, or a zipped bundle.
    Files(Vec<(String, Vec<u8>)>),
    /// What could not be read, and why.
    Error(String),
}

/// Where dropped files arrive once read — within the frame on the desktop, later in the browser;
/// the host takes them every frame.
#[derive(Debug, Clone, Default)]
pub struct Inbox(Arc<Mutex<Vec<Dropped>>>);

impl Inbox {
    /// What arrived since the last call.
    pub fn take(&self) -> Vec<Dropped> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn put(&self, dropped: Dropped) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(dropped);
    }
}

/// Reads the files dropped on the window into `inbox`. On the desktop a dropped directory
/// arrives as itself and each file that cannot be read as its own error; in the browser the
/// files are read asynchronously, and one that cannot be read fails the drop.
pub fn read_dropped(files: Vec<egui::DroppedFileHandle>, inbox: &Inbox) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut loose = Vec::new();
        for f in files {
            let path = f.path();
            if path.is_dir() {
                inbox.put(Dropped::Directory(path.display().to_string()));
                continue;
            }
            match f.bytes() {
                Ok(bytes) => loose.push((path.display().to_string(), bytes)),
                Err(e) => inbox.put(Dropped::Error(format!("{}: {e}", path.display()))),
            }
        }
        if !loose.is_empty() {
            inbox.put(Dropped::Files(loose));
        }
    }
    #[cfg(target_arch = "wasm32")]
    {
        let inbox = inbox.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let mut loose = Vec::new();
            let mut failed = None;
            for f in &files {
                let name = f.path().display().to_string();
                match f.bytes_async().await {
                    Ok(bytes) => loose.push((name, bytes)),
                    Err(e) => failed = Some(format!("{name}: cannot read the dropped file: {e}")),
                }
            }
            inbox.put(match failed {
                Some(e) => Dropped::Error(e),
                None => Dropped::Files(loose),
            });
        });
    }
}

/// Shows the browser's file picker (several files may be chosen: a zipped bundle, or a bundle's
/// `.arrow` files); what the user chooses arrives in `inbox` as a drop would. Nothing on the
/// desktop, which has its own field and directory browser.
pub fn pick_files(inbox: &Inbox, ctx: &egui::Context) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast as _;
        use wasm_bindgen::closure::Closure;
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let Ok(input) = document
            .create_element("input")
            .map(|e| e.unchecked_into::<web_sys::HtmlInputElement>())
        else {
            return;
        };
        input.set_type("file");
        input.set_multiple(true);
        input.set_accept(".zip,.arrow,.csv,.parquet");
        let chosen = input.clone();
        let inbox = inbox.clone();
        let ctx = ctx.clone();
        let on_change = Closure::once_into_js(move || {
            let Some(list) = chosen.files() else {
                return;
            };
            let files: Vec<web_sys::File> =
                (0..list.length()).filter_map(|i| list.get(i)).collect();
            wasm_bindgen_futures::spawn_local(async move {
                let mut read = Vec::new();
                for f in files {
                    let name = f.name();
                    match wasm_bindgen_futures::JsFuture::from(f.array_buffer()).await {
                        Ok(buffer) => read.push((name, js_sys::Uint8Array::new(&buffer).to_vec())),
                        Err(e) => {
                            inbox.put(Dropped::Error(format!(
                                "{name}: cannot read the file: {e:?}"
                            )));
                            return;
                        }
                    }
                }
                if !read.is_empty() {
                    inbox.put(Dropped::Files(read));
                }
                ctx.request_repaint();
            });
        });
        input.set_onchange(Some(on_change.unchecked_ref()));
        input.click();
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (inbox, ctx);
}

/// The WebAssembly memory of the page, in MiB (0 on the desktop).
pub fn wasm_memory_mb() -> usize {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) * 65536 / 1048576
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}
