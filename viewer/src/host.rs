//! The eframe host of the app, on the desktop and in the browser: the saved state, files dropped
//! on the window and (desktop) bundles opened by path.

use crate::app::{ViewState, ViewerApp};
use crate::data::LoadedBundle;
use crate::platform::{self, Dropped, Inbox};

/// The eframe storage key of the view state.
pub const STATE_KEY: &str = "yosoku-viewer-state";

/// The eframe host: the app plus loading from drops (and, on the desktop, paths).
#[derive(Debug)]
pub struct EframeApp {
    pub app: ViewerApp,
    /// Dropped files, once read.
    dropped: Inbox,
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
            dropped: Inbox::default(),
        }
    }

    /// Reads what was dropped on the window this frame, and adds what arrived since the last
    /// frame: a directory is a bundle to open by path (desktop), files are `.arrow` tables or a
    /// zipped bundle.
    fn take_drops(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        if !dropped.is_empty() {
            platform::read_dropped(dropped, &self.dropped);
        }
        for arrived in self.dropped.take() {
            match arrived {
                Dropped::Directory(path) => self.app.open_requests.push(path),
                Dropped::Files(files) => match LoadedBundle::from_files("dropped files", &files) {
                    Ok(b) => self.app.add_bundle(b),
                    Err(e) => self.app.errors.push(e),
                },
                Dropped::Error(e) => self.app.errors.push(e),
            }
        }
    }
}

impl eframe::App for EframeApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        self.app.frame_cpu_secs = frame.info().cpu_usage;
        if std::mem::take(&mut self.app.pick_files) {
            platform::pick_files(&self.dropped, ui.ctx());
        }
        self.take_drops(ui.ctx());
        #[cfg(not(target_arch = "wasm32"))]
        for path in std::mem::take(&mut self.app.open_requests) {
            match LoadedBundle::from_path(std::path::Path::new(&path)) {
                Ok(b) => self.app.add_bundle(b),
                Err(e) => self.app.errors.push(e),
            }
        }
        self.app.ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if let Ok(text) = serde_json::to_string(&self.app.saved_state()) {
            storage.set_string(STATE_KEY, text);
        }
    }
}
