//! The application: the open bundles, the tab shown, and the state that survives a reload.

use serde::{Deserialize, Serialize};

use crate::data::LoadedBundle;
use crate::views;

/// The views, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Tab {
    #[default]
    Home,
    Bundles,
    Tables,
    Model,
    Validation,
    CostBreakdown,
    Gantt,
    RankBars,
    Throughput,
}

impl Tab {
    pub const ALL: [Tab; 9] = [
        Tab::Home,
        Tab::Bundles,
        Tab::Tables,
        Tab::Model,
        Tab::Validation,
        Tab::CostBreakdown,
        Tab::Gantt,
        Tab::RankBars,
        Tab::Throughput,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tab::Home => "Home",
            Tab::Bundles => "Bundles",
            Tab::Tables => "Tables",
            Tab::Model => "Model",
            Tab::Validation => "Validation",
            Tab::CostBreakdown => "Cost breakdown",
            Tab::Gantt => "Gantt",
            Tab::RankBars => "Per-rank bars",
            Tab::Throughput => "Throughput",
        }
    }

    /// The URL fragment name.
    pub fn slug(self) -> &'static str {
        match self {
            Tab::Home => "home",
            Tab::Bundles => "bundles",
            Tab::Tables => "tables",
            Tab::Model => "model",
            Tab::Validation => "validation",
            Tab::CostBreakdown => "cost",
            Tab::Gantt => "gantt",
            Tab::RankBars => "ranks",
            Tab::Throughput => "throughput",
        }
    }

    pub fn from_slug(slug: &str) -> Option<Tab> {
        Tab::ALL.into_iter().find(|t| t.slug() == slug)
    }
}

/// What survives a reload: which bundle, which tab, what is selected in each view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewState {
    pub bundle: Option<String>,
    pub tab: Tab,
    pub dark: bool,
    pub tables: views::tables::State,
    pub model: views::model::State,
    pub validation: views::validation::State,
    pub cost: views::cost::State,
    pub gantt: views::gantt::State,
    pub ranks: views::ranks::State,
    pub throughput: views::throughput::State,
}

impl ViewState {
    /// `#bundle=<name>&tab=<slug>`: what a URL fragment keeps.
    pub fn fragment(&self) -> String {
        let mut s = format!("tab={}", self.tab.slug());
        if let Some(b) = &self.bundle {
            s = format!("bundle={}&{s}", encode(b));
        }
        s
    }

    pub fn apply_fragment(&mut self, fragment: &str) {
        for pair in fragment.trim_start_matches('#').split('&') {
            match pair.split_once('=') {
                Some(("bundle", v)) => self.bundle = Some(decode(v)),
                Some(("tab", v)) => {
                    if let Some(t) = Tab::from_slug(v) {
                        self.tab = t;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Percent-encodes everything but ASCII letters and digits (a fragment value).
fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The WebAssembly memory of the page, in MiB (0 on the desktop).
fn wasm_memory_mb() -> usize {
    #[cfg(target_arch = "wasm32")]
    {
        core::arch::wasm32::memory_size(0) * 65536 / 1048576
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0
    }
}

/// The viewer.
#[derive(Debug, Default)]
pub struct ViewerApp {
    pub bundles: Vec<LoadedBundle>,
    pub state: ViewState,
    /// Errors of loading, newest last, shown until dismissed.
    pub errors: Vec<String>,
    /// A one-line status the web page mirrors into the DOM (`started`, `loaded 5 bundles`, ...).
    pub status: String,
    /// Paths the desktop app should open (from the file field or a drop), handled by the host.
    pub open_requests: Vec<String>,
    /// The text of the "open" field (desktop).
    pub open_path: String,
    /// Where the tab and bundle buttons were drawn this frame (`tab:<slug>`, `bundle:<name>`),
    /// in points: egui widgets are not DOM nodes, so the web page publishes these for the
    /// browser test to click.
    pub hitboxes: Vec<(String, egui::Rect)>,
    /// The CPU time of the previous frame as the host measured it (eframe; none in tests).
    pub frame_cpu_secs: Option<f32>,
    /// The desktop's directory browser.
    #[cfg(not(target_arch = "wasm32"))]
    pub open_dialog: crate::open_dialog::OpenDialog,
    pub(crate) caches: views::Caches,
}

impl ViewerApp {
    pub fn new(bundles: Vec<LoadedBundle>, state: ViewState) -> Self {
        let mut app = Self {
            bundles,
            state,
            ..Self::default()
        };
        app.status = format!("loaded {} bundles", app.bundles.len());
        app
    }

    pub fn add_bundle(&mut self, bundle: LoadedBundle) {
        let name = bundle.name();
        self.bundles.retain(|b| b.name() != name);
        self.state.bundle = Some(name);
        self.bundles.push(bundle);
        self.caches = views::Caches::default();
        self.status = format!("loaded {} bundles", self.bundles.len());
    }

    pub fn current(&self) -> Option<&LoadedBundle> {
        let name = self.state.bundle.as_deref();
        self.bundles
            .iter()
            .find(|b| Some(b.name().as_str()) == name)
            .or(self.bundles.first())
    }

    /// Draws the whole app into `ui`.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.ctx().set_theme(if self.state.dark {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
        self.hitboxes.clear();
        egui::Panel::top("tabs").show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.strong("yosoku");
                ui.separator();
                for tab in Tab::ALL {
                    let r = ui.selectable_value(&mut self.state.tab, tab, tab.label());
                    self.hitboxes.push((format!("tab:{}", tab.slug()), r.rect));
                }
                ui.separator();
                let theme = if self.state.dark {
                    "Light theme"
                } else {
                    "Dark theme"
                };
                if ui.button(theme).clicked() {
                    self.state.dark = !self.state.dark;
                }
            });
        });
        egui::Panel::left("bundles").show(ui, |ui| self.bundle_list(ui));
        egui::CentralPanel::default().show(ui, |ui| {
            if !self.errors.is_empty() {
                let mut dismiss = false;
                ui.horizontal_wrapped(|ui| {
                    ui.colored_label(ui.visuals().error_fg_color, self.errors.join("\n"));
                    dismiss = ui.button("Dismiss").clicked();
                });
                if dismiss {
                    self.errors.clear();
                }
                ui.separator();
            }
            let Some(index) = self.current_index() else {
                ui.heading("No bundle open");
                ui.label(
                    "Run `cargo xtask demo`, then open a directory under results/ (desktop: \
                     a path argument, the field on the left, or drop it on the window; web: \
                     the bundles the server lists, or drop .arrow files or a zipped bundle).",
                );
                return;
            };
            if self.state.tab == Tab::Home {
                if let Some(jump) = views::home::ui(ui, &self.bundles, &mut self.hitboxes) {
                    self.follow(jump);
                }
                return;
            }
            let bundle = &self.bundles[index];
            let caches = &mut self.caches;
            match self.state.tab {
                Tab::Home => {}
                Tab::Bundles => views::provenance::ui(ui, bundle),
                Tab::Tables => views::tables::ui(ui, bundle, &mut self.state.tables, caches),
                Tab::Model => views::model::ui(ui, bundle, &mut self.state.model),
                Tab::Validation => {
                    views::validation::ui(ui, bundle, &mut self.state.validation, caches);
                }
                Tab::CostBreakdown => views::cost::ui(ui, bundle, &mut self.state.cost),
                Tab::Gantt => views::gantt::ui(ui, bundle, &mut self.state.gantt, caches),
                Tab::RankBars => views::ranks::ui(ui, bundle, &mut self.state.ranks),
                Tab::Throughput => {
                    views::throughput::ui(ui, bundle, &mut self.state.throughput);
                }
            }
        });
    }

    /// Shows `tab` on the bundle named `bundle` (what a click on both would do).
    pub fn open(&mut self, bundle: String, tab: Tab) {
        if self.state.bundle.as_deref() != Some(bundle.as_str()) {
            self.caches = views::Caches::default();
        }
        self.state.bundle = Some(bundle);
        self.state.tab = tab;
    }

    /// Opens the view a home row's link leads to, on its bundle and table.
    pub fn follow(&mut self, jump: views::home::Jump) {
        self.open(jump.bundle, jump.tab);
        let Some(table) = jump.table else {
            return;
        };
        match jump.tab {
            Tab::Validation => self.state.validation.table = table,
            Tab::CostBreakdown => self.state.cost.table = table,
            Tab::RankBars => self.state.ranks.table = table,
            Tab::Throughput => self.state.throughput.table = table,
            Tab::Gantt => self.state.gantt.table = table,
            Tab::Tables => self.state.tables.table = table,
            Tab::Home | Tab::Bundles | Tab::Model => {}
        }
    }

    /// One line for the page's status element and the browser test: the bundle count, the
    /// bundle and tab shown, and what the view holds.
    pub fn status_line(&self) -> String {
        let mut s = format!(
            "started; bundles={}; bundle={}; tab={}",
            self.bundles.len(),
            self.current().map(LoadedBundle::name).unwrap_or_default(),
            self.state.tab.slug()
        );
        match self.state.tab {
            Tab::Home => {
                let (rows, reproduced, missed) = views::home::tally(&self.bundles);
                s.push_str(&format!(
                    "; home_rows={rows}; reproduced={reproduced}; missed={missed}"
                ));
            }
            Tab::Validation => {
                if let Some(c) = &self.caches.validation {
                    s.push_str(&format!(
                        "; points={}; {}={}",
                        c.point_count(),
                        self.state.validation.by,
                        c.groups.len()
                    ));
                }
            }
            Tab::Gantt => {
                if let Some(f) = &self.caches.trace_frame {
                    s.push_str(&format!(
                        "; trace={}; trace_mode={}; trace_level={}; trace_wanted_level={}; records_drawn={}; lanes={}; view_ns={:.0}; trace_loaded_mb={:.1}; trace_loads={}; trace_pending={}; wasm_mb={}",
                        f.trace,
                        f.mode,
                        f.level,
                        f.wanted_level.map_or("records".to_owned(), |l| l.to_string()),
                        f.records_drawn,
                        f.lanes_shown,
                        f.view_ns.1 - f.view_ns.0,
                        f.loaded_bytes as f64 / 1048576.0,
                        f.loads,
                        f.pending,
                        wasm_memory_mb()
                    ));
                    if let Some(secs) = self.frame_cpu_secs {
                        s.push_str(&format!("; frame_ms={:.2}", secs * 1e3));
                    }
                } else if let Some(c) = &self.caches.gantt {
                    s.push_str(&format!(
                        "; records={}; lanes={}; shown={}",
                        c.data.len,
                        c.data.lanes.len(),
                        c.shown_lanes
                    ));
                    if let Some(secs) = self.frame_cpu_secs {
                        s.push_str(&format!("; frame_ms={:.2}", secs * 1e3));
                    }
                }
            }
            _ => {}
        }
        if !self.errors.is_empty() {
            s.push_str(&format!("; errors={}", self.errors.len()));
        }
        s
    }

    /// Rows the table browser shows after its filter (tests).
    pub fn caches_rows(&self) -> Option<usize> {
        self.caches.tables.as_ref().map(|c| c.rows.len())
    }

    fn current_index(&self) -> Option<usize> {
        let name = self.state.bundle.as_deref();
        self.bundles
            .iter()
            .position(|b| Some(b.name().as_str()) == name)
            .or((!self.bundles.is_empty()).then_some(0))
    }

    fn bundle_list(&mut self, ui: &mut egui::Ui) {
        ui.heading("Bundles");
        let current = self.current().map(LoadedBundle::name);
        for b in &self.bundles {
            let name = b.name();
            let r = ui
                .selectable_label(current.as_deref() == Some(name.as_str()), &name)
                .on_hover_text(&b.origin);
            self.hitboxes.push((format!("bundle:{name}"), r.rect));
            if r.clicked() {
                self.state.bundle = Some(name);
                self.caches = views::Caches::default();
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            ui.separator();
            let label = ui.label("Open a bundle directory or .zip:");
            let edit = ui
                .text_edit_singleline(&mut self.open_path)
                .labelled_by(label.id);
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            ui.horizontal(|ui| {
                if (ui.button("Open").clicked() || enter) && !self.open_path.trim().is_empty() {
                    self.open_requests.push(self.open_path.trim().to_owned());
                }
                if ui.button("Browse...").clicked() {
                    let start = match self.open_path.trim() {
                        "" if std::path::Path::new("results").is_dir() => "results",
                        "" => ".",
                        typed => typed,
                    };
                    self.open_dialog.open_at(std::path::Path::new(start));
                }
            });
            if let Some(chosen) = self.open_dialog.show(ui.ctx()) {
                self.open_requests.push(chosen.display().to_string());
            }
        }
        ui.separator();
        ui.small("Drop a bundle directory, .arrow files or a zipped bundle here.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fragment_round_trips() {
        let state = ViewState {
            bundle: Some("counters per/gpu".into()),
            tab: Tab::Validation,
            ..ViewState::default()
        };
        let mut back = ViewState::default();
        back.apply_fragment(&format!("#{}", state.fragment()));
        assert_eq!((back.bundle, back.tab), (state.bundle, state.tab));
    }
}
