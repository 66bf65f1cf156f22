//! The browser's entry point: fetch the bundles the server lists, start the app on the canvas,
//! keep the view in the URL fragment, mirror a status line into the DOM for tests.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsCast as _;
use wasm_bindgen::prelude::*;

use crate::platform::fetch;
use crate::{EframeApp, LoadedBundle, ViewerApp};

fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

/// Writes `text` into the `#status` element the page and its tests read.
pub fn set_status(text: &str) {
    if let Some(el) = document().and_then(|d| d.get_element_by_id("status")) {
        el.set_text_content(Some(text));
    }
}

/// The bundles the server lists, as their manifests arrive: filled by the fetches, taken by the
/// app at each frame.
#[derive(Default)]
struct Arrivals {
    /// The names `bundles/index.json` lists, once it has arrived.
    listed: Option<Vec<String>>,
    /// How many of them have arrived or failed.
    done: usize,
    bundles: Vec<LoadedBundle>,
    errors: Vec<String>,
    /// Told to draw a frame when something arrives.
    repaint: Option<egui::Context>,
}

type Shared = Rc<RefCell<Arrivals>>;

fn arrived(shared: &Shared, result: Result<Option<LoadedBundle>, String>) {
    let mut a = shared.borrow_mut();
    match result {
        Ok(Some(b)) => a.bundles.push(b),
        Ok(None) => {}
        Err(e) => a.errors.push(e),
    }
    a.done += 1;
    if let Some(ctx) = &a.repaint {
        ctx.request_repaint();
    }
}

/// Reads `bundles/index.json` (a JSON list of directory names), then each bundle's manifest at
/// once (and the few files a manifest alone does not describe); tables are read when a view
/// needs them.
async fn fetch_index(shared: Shared) {
    let names = match fetch("bundles/index.json").await.and_then(|index| {
        serde_json::from_slice::<Vec<String>>(&index)
            .map_err(|e| format!("bundles/index.json: {e}"))
    }) {
        Ok(names) => names,
        Err(e) => {
            let mut a = shared.borrow_mut();
            a.errors.push(e);
            a.listed = Some(Vec::new());
            return;
        }
    };
    shared.borrow_mut().listed = Some(names.clone());
    for name in names {
        let shared = shared.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let result = fetch_manifest(&format!("bundles/{name}")).await;
            arrived(&shared, result.map(Some));
        });
    }
}

/// One bundle, of which only the manifest is read.
async fn fetch_manifest(base: &str) -> Result<LoadedBundle, String> {
    let bytes = fetch(&format!("{base}/manifest.json")).await?;
    let manifest = String::from_utf8_lossy(&bytes).into_owned();
    let parsed = yosoku_bundle::Manifest::from_json(&manifest)
        .map_err(|e| format!("{base}/manifest.json: {e}"))?;
    let mut files = std::collections::HashMap::new();
    for file in LoadedBundle::files_read_first(&parsed) {
        let bytes = fetch(&format!("{base}/{file}")).await?;
        files.insert(file, bytes);
    }
    LoadedBundle::from_manifest_lazily(base, &manifest, |f| {
        files
            .remove(f)
            .ok_or_else(|| format!("{base}/{f}: missing"))
    })
}

/// Milliseconds since the page began to load (the Performance API's origin).
fn page_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Starts the app on the `#yosoku_canvas` canvas at once; the bundles join it as their
/// manifests arrive.
pub fn start() {
    console_panic_hook();
    wasm_bindgen_futures::spawn_local(async {
        set_status("loading bundles");
        let shared = Shared::default();
        let fragment = web_sys::window()
            .and_then(|w| w.location().hash().ok())
            .unwrap_or_default();
        // `#synthetic=<n>`: add n synthetic Gantt records (the web frame-time measurement).
        if let Some(n) = fragment
            .trim_start_matches('#')
            .split('&')
            .find_map(|p| p.strip_prefix("synthetic="))
            .and_then(|n| n.parse::<usize>().ok())
        {
            set_status(&format!("building {n} synthetic records"));
            shared
                .borrow_mut()
                .bundles
                .push(crate::data::synthetic_gantt(n));
        }
        wasm_bindgen_futures::spawn_local(fetch_index(shared.clone()));
        let Some(canvas) = document()
            .and_then(|d| d.get_element_by_id("yosoku_canvas"))
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            set_status("failed: no canvas #yosoku_canvas");
            return;
        };
        let result = eframe::WebRunner::new()
            .start(
                canvas,
                eframe::WebOptions::default(),
                Box::new(move |cc| {
                    shared.borrow_mut().repaint = Some(cc.egui_ctx.clone());
                    let mut app = EframeApp::new(cc, Vec::new());
                    if !fragment.is_empty() {
                        app.app.state.apply_fragment(&fragment);
                    }
                    app.app.arriving = Some((0, 0));
                    Ok(Box::new(WebApp {
                        app,
                        arrivals: shared,
                        published: Published::default(),
                    }))
                }),
            )
            .await;
        if let Err(e) = result {
            set_status(&format!("failed: {e:?}"));
        }
    });
}

fn console_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        set_status(&format!("failed: panic: {info}"));
        web_sys::console::error_1(&JsValue::from_str(&info.to_string()));
    }));
}

/// The app in the page: the eframe host, and what the page was last told of it.
struct WebApp {
    app: EframeApp,
    arrivals: Shared,
    published: Published,
}

impl WebApp {
    /// Adds the bundles that arrived since the last frame, in the server's order.
    fn take_arrivals(&mut self) {
        let mut a = self.arrivals.borrow_mut();
        let listed = a.listed.clone().unwrap_or_default();
        for bundle in std::mem::take(&mut a.bundles) {
            self.app.app.insert_listed(bundle, &listed);
        }
        self.app.app.errors.append(&mut a.errors);
        let before = self.app.app.arriving;
        self.app.app.arriving = match &a.listed {
            Some(names) if a.done >= names.len() => None,
            Some(names) => Some((a.done, names.len())),
            None => Some((0, 0)),
        };
        if before.is_some() && self.app.app.arriving.is_none() {
            set_timing("data-bundles-ms");
        }
    }
}

/// Writes the milliseconds since the page began to load into `#status[name]` (the browser test
/// and `cargo xtask bench-web` read them).
fn set_timing(name: &str) {
    if let Some(el) = document().and_then(|d| d.get_element_by_id("status")) {
        let _ = el.set_attribute(name, &format!("{:.0}", page_ms()));
    }
}

/// The URL fragment, the status line and the hitboxes as the page last showed them.
#[derive(Default)]
struct Published {
    fragment: String,
    status: String,
    hitboxes: String,
}

impl eframe::App for WebApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.take_arrivals();
        eframe::App::ui(&mut self.app, ui, frame);
        if self.published.status.is_empty() {
            set_timing("data-first-frame-ms");
        }
        publish(&self.app.app, &mut self.published);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::App::save(&mut self.app, storage);
    }
}

/// After every frame: the URL fragment, the DOM status and the hitboxes follow the app (written
/// only when they changed).
fn publish(app: &ViewerApp, last: &mut Published) {
    let fragment = app.state.fragment();
    if last.fragment != fragment {
        if let Some(w) = web_sys::window() {
            let _ = w.location().set_hash(&fragment);
        }
        last.fragment = fragment;
    }
    let status = app.status_line();
    if last.status != status {
        set_status(&status);
        last.status = status;
    }
    let hitboxes = hitbox_json(&app.hitboxes);
    if last.hitboxes != hitboxes {
        if let Some(el) = document().and_then(|d| d.get_element_by_id("status")) {
            let _ = el.set_attribute("data-hitboxes", &hitboxes);
        }
        last.hitboxes = hitboxes;
    }
}

/// `{"tab:gantt": [x, y, width, height], ...}` in CSS pixels (egui points).
fn hitbox_json(hitboxes: &[(String, egui::Rect)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> = hitboxes
        .iter()
        .map(|(k, r)| {
            (
                k.clone(),
                serde_json::json!([r.min.x, r.min.y, r.width(), r.height()]),
            )
        })
        .collect();
    serde_json::Value::Object(map).to_string()
}
