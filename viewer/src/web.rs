//! The browser's entry point: fetch the bundles the server lists, start the app on the canvas,
//! keep the view in the URL fragment, mirror a status line into the DOM for tests.

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

/// Every bundle named in `bundles/index.json` (a JSON list of directory names).
async fn fetch_bundles() -> (Vec<LoadedBundle>, Vec<String>) {
    let mut errors = Vec::new();
    let index = match fetch("bundles/index.json").await {
        Ok(b) => b,
        Err(e) => return (Vec::new(), vec![e]),
    };
    let names: Vec<String> = match serde_json::from_slice(&index) {
        Ok(n) => n,
        Err(e) => return (Vec::new(), vec![format!("bundles/index.json: {e}")]),
    };
    let mut bundles = Vec::new();
    for name in names {
        let base = format!("bundles/{name}");
        let manifest = match fetch(&format!("{base}/manifest.json")).await {
            Ok(m) => String::from_utf8_lossy(&m).into_owned(),
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let Ok(parsed) = yosoku_bundle::Manifest::from_json(&manifest) else {
            errors.push(format!(
                "{base}/manifest.json: not a yosoku bundle manifest"
            ));
            continue;
        };
        let mut files = std::collections::HashMap::new();
        let mut failed = None;
        for t in &parsed.tables {
            match fetch(&format!("{base}/{}", t.file)).await {
                Ok(b) => {
                    files.insert(t.file.clone(), b);
                }
                Err(e) => failed = Some(e),
            }
        }
        // A large trace's index; its tiles and chunks are fetched when a view needs them.
        for t in &parsed.traces {
            let file = format!("{}/index.json", t.dir);
            match fetch(&format!("{base}/{file}")).await {
                Ok(b) => {
                    files.insert(file, b);
                }
                Err(e) => failed = Some(e),
            }
        }
        if let Some(e) = failed {
            errors.push(e);
            continue;
        }
        match LoadedBundle::from_manifest(&base, &manifest, |f| {
            files
                .remove(f)
                .ok_or_else(|| format!("{base}/{f}: missing"))
        }) {
            Ok(b) => bundles.push(b),
            Err(e) => errors.push(e),
        }
    }
    (bundles, errors)
}

/// Starts the app on the `#yosoku_canvas` canvas.
pub fn start() {
    console_panic_hook();
    wasm_bindgen_futures::spawn_local(async {
        set_status("loading bundles");
        let (mut bundles, errors) = fetch_bundles().await;
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
            bundles.push(crate::data::synthetic_gantt(n));
        }
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
                    let mut app = EframeApp::new(cc, bundles);
                    if !fragment.is_empty() {
                        app.app.state.apply_fragment(&fragment);
                    }
                    app.app.errors = errors;
                    Ok(Box::new(WebApp {
                        app,
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
    published: Published,
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
        eframe::App::ui(&mut self.app, ui, frame);
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
