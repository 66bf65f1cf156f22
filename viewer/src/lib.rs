//! The yosoku viewer: one egui app for the desktop (eframe, glow) and the browser
//! (WebAssembly, WebGL2), showing result bundles. It reads the files bundles are made of, never
//! the plugin host.

pub mod app;
pub mod data;
pub mod format;
pub mod gantt;
#[cfg(not(target_arch = "wasm32"))]
pub mod open_dialog;
pub mod trace_store;
pub mod views;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use app::{Tab, ViewState, ViewerApp};
pub use data::LoadedBundle;

/// The eframe storage key of the view state.
pub const STATE_KEY: &str = "yosoku-viewer-state";

/// The eframe host: the app plus loading from drops (and, on the desktop, paths).
#[derive(Debug)]
pub struct EframeApp {
    pub app: ViewerApp,
}

impl EframeApp {
    pub fn new(cc: &eframe::CreationContext<'_>, bundles: Vec<LoadedBundle>) -> Self {
        let mut state: ViewState = cc
            .storage
            .and_then(|s| s.get_string(STATE_KEY))
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        if cc.storage.is_none() || state == ViewState::default() {
            state.dark = cc.egui_ctx.global_style().visuals.dark_mode;
        }
        Self {
            app: ViewerApp::new(bundles, state),
        }
    }

    fn take_drops(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        if dropped.is_empty() {
            return;
        }
        #[cfg(target_arch = "wasm32")]
        web::read_drops(dropped);
        #[cfg(not(target_arch = "wasm32"))]
        {
            // A dropped directory is a bundle; dropped files are .arrow tables.
            let mut loose: Vec<(String, Vec<u8>)> = Vec::new();
            for f in dropped {
                let path = f.path();
                if path.is_dir() {
                    self.app.open_requests.push(path.display().to_string());
                    continue;
                }
                match f.bytes() {
                    Ok(bytes) => loose.push((path.display().to_string(), bytes)),
                    Err(e) => self.app.errors.push(format!("{}: {e}", path.display())),
                }
            }
            if !loose.is_empty() {
                match LoadedBundle::from_files("dropped files", &loose) {
                    Ok(b) => self.app.add_bundle(b),
                    Err(e) => self.app.errors.push(e),
                }
            }
        }
    }
}

impl eframe::App for EframeApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.app.frame_cpu_secs = frame.info().cpu_usage;
        self.take_drops(ui.ctx());
        #[cfg(not(target_arch = "wasm32"))]
        for path in std::mem::take(&mut self.app.open_requests) {
            match LoadedBundle::from_path(std::path::Path::new(&path)) {
                Ok(b) => self.app.add_bundle(b),
                Err(e) => self.app.errors.push(e),
            }
        }
        self.app.ui(ui);
        #[cfg(target_arch = "wasm32")]
        web::after_frame(&mut self.app);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if let Ok(text) = serde_json::to_string(&self.app.state) {
            storage.set_string(STATE_KEY, text);
        }
    }
}
