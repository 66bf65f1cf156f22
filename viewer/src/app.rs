//! The application: the open bundles, the view shown, and the state that survives a reload.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::data::LoadedBundle;
use crate::view::{Context, Jump, Slot, StatusContext, View, ViewSlot};
use crate::views::{self, VIEWS};

/// What survives a reload: which bundle, which view, the theme, what is selected in each view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewState {
    pub bundle: Option<String>,
    /// The view shown: its slug (`views::VIEWS`).
    pub tab: String,
    pub dark: bool,
    /// Each view's selections, by slug, as saved ([`ViewerApp::saved_state`]) or to restore
    /// ([`ViewerApp::new`]); while the app runs they live in the views.
    pub views: BTreeMap<String, serde_json::Value>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            bundle: None,
            tab: VIEWS[0].slug().to_owned(),
            dark: false,
            views: BTreeMap::new(),
        }
    }
}

impl ViewState {
    /// `#bundle=<name>&tab=<slug>`: what a URL fragment keeps.
    pub fn fragment(&self) -> String {
        let mut s = format!("tab={}", self.tab);
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
                    if let Some(view) = views::by_slug(v) {
                        self.tab = view.slug().to_owned();
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

/// The viewer.
#[derive(Debug)]
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
    /// Whether the "Open..." button asked for the browser's file picker this frame (the host
    /// shows it).
    pub pick_files: bool,
    /// Where the tab and bundle buttons were drawn this frame (`tab:<slug>`, `bundle:<name>`),
    /// in points: egui widgets are not DOM nodes, so the web page publishes these for the
    /// browser test to click.
    pub hitboxes: Vec<(String, egui::Rect)>,
    /// The CPU time of the previous frame as the host measured it (eframe; none in tests).
    pub frame_cpu_secs: Option<f32>,
    /// The desktop's directory browser.
    #[cfg(not(target_arch = "wasm32"))]
    pub open_dialog: crate::open_dialog::OpenDialog,
    /// Tables asked for because a view needs their rows, and those that arrived.
    pub loads: crate::loading::TableLoads,
    /// While the bundles a server lists are being read (web): how many have arrived, of how
    /// many listed (0 until the list itself has arrived); none once all have.
    pub arriving: Option<(usize, usize)>,
    /// The memory the rows of the bundles not shown may take
    /// ([`TABLE_MEMORY_BUDGET_BYTES`] unless changed).
    pub table_memory_budget_bytes: usize,
    /// What the view shown drew in the last frame (`view::count_drawn`).
    pub drawn: std::collections::BTreeMap<&'static str, usize>,
    /// Bundle names, the one shown most recently last: whose rows are dropped first when the
    /// rows of the bundles not shown exceed the budget.
    recently_shown: Vec<String>,
    /// Each view's state and cache, in the order of `views::VIEWS`.
    slots: Vec<Box<dyn ViewSlot>>,
}

/// The memory the rows of the bundles not shown may take before the least recently shown are
/// dropped (to be read again when shown again).
pub const TABLE_MEMORY_BUDGET_BYTES: usize = 64 << 20;

impl Default for ViewerApp {
    fn default() -> Self {
        Self::new(Vec::new(), ViewState::default())
    }
}

impl ViewerApp {
    /// The app on `bundles`, with the views' selections restored from `state`.
    pub fn new(bundles: Vec<LoadedBundle>, mut state: ViewState) -> Self {
        let saved = std::mem::take(&mut state.views);
        let slots = VIEWS
            .iter()
            .map(|view| {
                let mut slot = view.new_slot();
                if let Some(value) = saved.get(view.slug()) {
                    slot.restore(value);
                }
                slot
            })
            .collect();
        Self {
            status: format!("loaded {} bundles", bundles.len()),
            bundles,
            state,
            errors: Vec::new(),
            open_requests: Vec::new(),
            open_path: String::new(),
            pick_files: false,
            hitboxes: Vec::new(),
            frame_cpu_secs: None,
            #[cfg(not(target_arch = "wasm32"))]
            open_dialog: crate::open_dialog::OpenDialog::default(),
            loads: crate::loading::TableLoads::default(),
            arriving: None,
            table_memory_budget_bytes: TABLE_MEMORY_BUDGET_BYTES,
            drawn: std::collections::BTreeMap::new(),
            recently_shown: Vec::new(),
            slots,
        }
    }

    /// What the host saves: the view state with every view's selections.
    pub fn saved_state(&self) -> ViewState {
        ViewState {
            views: self
                .slots
                .iter()
                .map(|s| (s.slug().to_owned(), s.save()))
                .collect(),
            ..self.state.clone()
        }
    }

    /// Opens `bundle` and shows it. The same bundle opened again (its origin and name) replaces
    /// the one open; another of the same name (a zip dropped beside the served directory) is
    /// kept beside it as `<name> (2)`, said in the status line.
    pub fn add_bundle(&mut self, mut bundle: LoadedBundle) {
        let name = bundle.name();
        self.bundles
            .retain(|b| !(b.name() == name && b.origin == bundle.origin));
        if self.bundles.iter().any(|b| b.name() == name) {
            let taken = |n: &str| self.bundles.iter().any(|b| b.name() == n);
            let alias = (2..)
                .map(|k| format!("{name} ({k})"))
                .find(|n| !taken(n))
                .unwrap_or_default();
            self.errors.push(format!(
                "a bundle named `{name}` is open already: the one from {} is shown as `{alias}`",
                bundle.origin
            ));
            bundle.alias = Some(alias);
        }
        let name = bundle.name();
        self.bundles.push(bundle);
        self.select_bundle(name);
        self.forget_bundle();
        self.status = format!("loaded {} bundles", self.bundles.len());
    }

    /// Adds a bundle a server lists, without showing it: the bundles keep the order of `order`
    /// (the server's list), others after them.
    pub fn insert_listed(&mut self, bundle: LoadedBundle, order: &[String]) {
        self.bundles.push(bundle);
        let rank = |b: &LoadedBundle| {
            let name = b.name();
            order.iter().position(|n| *n == name).unwrap_or(order.len())
        };
        self.bundles.sort_by_key(rank);
    }

    /// Shows the bundle named `name`: each view keeps its selections on the bundle shown until
    /// now for when it comes back, and takes up those made on `name` before.
    pub fn select_bundle(&mut self, name: String) {
        let from = self.current().map(LoadedBundle::name);
        match from {
            Some(from) if from != name => {
                for slot in &mut self.slots {
                    slot.switch_bundle(&from, &name);
                }
            }
            Some(_) => {}
            None => self.forget_bundle(),
        }
        self.state.bundle = Some(name);
    }

    /// Hands the tables that arrived to their bundles, and keeps the rows of the bundles not
    /// shown within the budget.
    fn take_loaded(&mut self) {
        let shown = self.current().map(|b| b.origin.clone());
        let mut changed_shown = false;
        for arrived in self.loads.take() {
            let Some(bundle) = self.bundles.iter_mut().find(|b| b.origin == arrived.origin) else {
                continue;
            };
            let filled = arrived
                .batch
                .and_then(|batch| bundle.fill(&arrived.file, batch));
            if let Err(e) = filled {
                // Said once, and not asked for again: the view shows the table without rows.
                bundle.give_up(&arrived.file);
                self.errors.push(e);
            }
            changed_shown |= shown.as_deref() == Some(arrived.origin.as_str());
        }
        if changed_shown {
            self.forget_bundle();
        }
        let Some(shown) = self.current().map(LoadedBundle::name) else {
            return;
        };
        if self.recently_shown.last() != Some(&shown) {
            self.recently_shown.retain(|n| *n != shown);
            self.recently_shown.push(shown.clone());
        }
        let mut others: usize = self
            .bundles
            .iter()
            .filter(|b| b.name() != shown)
            .map(LoadedBundle::memory_bytes)
            .sum();
        for name in &self.recently_shown {
            if others <= self.table_memory_budget_bytes {
                break;
            }
            if let Some(b) = self
                .bundles
                .iter_mut()
                .find(|b| b.name() == *name && *name != shown)
            {
                others = others.saturating_sub(b.unload());
            }
        }
    }

    /// Whether the view shown waits for rows of the bundle shown, and asks for them.
    fn rows_awaited(&self) -> Option<usize> {
        let bundle = self.current()?;
        if !VIEWS[self.shown_slot()].reads_rows() || bundle.is_loaded() {
            return None;
        }
        self.loads.ask(&bundle.origin, &bundle.pending_files());
        Some(bundle.pending_files().len())
    }

    pub fn current(&self) -> Option<&LoadedBundle> {
        let name = self.state.bundle.as_deref();
        self.bundles
            .iter()
            .find(|b| Some(b.name().as_str()) == name)
            .or(self.bundles.first())
    }

    /// The selections of view `V` (none when `V` is not in `views::VIEWS`).
    pub fn view_state<V: View>(&self) -> Option<&V::State> {
        self.slot::<V>().map(|s| &s.state)
    }

    /// The selections of view `V`, to change (none when `V` is not in `views::VIEWS`).
    pub fn view_state_mut<V: View>(&mut self) -> Option<&mut V::State> {
        self.slots
            .iter_mut()
            .find_map(|s| s.as_any_mut().downcast_mut::<Slot<V>>())
            .map(|s| &mut s.state)
    }

    /// What view `V` keeps between frames (none when `V` is not in `views::VIEWS`).
    pub fn view_cache<V: View>(&self) -> Option<&V::Cache> {
        self.slot::<V>().map(|s| &s.cache)
    }

    fn slot<V: View>(&self) -> Option<&Slot<V>> {
        self.slots
            .iter()
            .find_map(|s| s.as_any().downcast_ref::<Slot<V>>())
    }

    /// The slot of the view shown (the first view when the slug names none).
    fn shown_slot(&self) -> usize {
        self.slots
            .iter()
            .position(|s| s.slug() == self.state.tab)
            .unwrap_or(0)
    }

    /// Drops what every view derived from the bundle shown.
    fn forget_bundle(&mut self) {
        for slot in &mut self.slots {
            slot.forget_bundle();
        }
    }

    /// Draws the whole app into `ui`.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        ui.ctx().set_theme(if self.state.dark {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
        self.hitboxes.clear();
        self.loads.wake(ui.ctx());
        self.take_loaded();
        egui::Panel::top("tabs").show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.strong("yosoku");
                ui.separator();
                for view in VIEWS {
                    let r = ui.selectable_value(
                        &mut self.state.tab,
                        view.slug().to_owned(),
                        view.label(),
                    );
                    self.hitboxes.push((format!("tab:{}", view.slug()), r.rect));
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
        let mut jump = None;
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
            if let Some((arrived, listed)) = self.arriving {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(if listed == 0 {
                        "Reading the list of bundles".to_owned()
                    } else {
                        format!("Reading the bundles' manifests: {arrived} of {listed}")
                    });
                });
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
            if let Some(waiting) = self.rows_awaited() {
                let bundle = &self.bundles[index];
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!(
                        "Reading the tables of {}: {} of {} to go",
                        bundle.name(),
                        waiting,
                        bundle.tables.len()
                    ));
                });
                return;
            }
            let shown = self.shown_slot();
            let mut cx = Context {
                bundle: &self.bundles[index],
                bundles: &self.bundles,
                views: VIEWS,
                hitboxes: &mut self.hitboxes,
                jump: None,
            };
            // Widgets' memory (a plot's zoom, a table's scroll) belongs to the bundle and view.
            let id = (cx.bundle.name(), self.state.tab.clone());
            ui.push_id(id, |ui| self.slots[shown].ui(ui, &mut cx));
            jump = cx.jump;
        });
        self.hitboxes
            .extend(crate::view::take_published_hitboxes(ui.ctx()));
        self.drawn = crate::view::take_drawn(ui.ctx());
        if let Some(jump) = jump {
            self.follow(jump);
        }
    }

    /// Shows the view `view` (a slug) on the bundle named `bundle` (what a click on both would
    /// do).
    pub fn open(&mut self, bundle: String, view: &str) {
        self.select_bundle(bundle);
        view.clone_into(&mut self.state.tab);
    }

    /// Opens the view a link leads to, on its bundle and table.
    pub fn follow(&mut self, jump: Jump) {
        self.open(jump.bundle, jump.view);
        if let Some(table) = jump.table {
            let shown = self.shown_slot();
            self.slots[shown].open_on(&table);
        }
    }

    /// One line for the page's status element and the browser test: the bundle count, the
    /// bundle and view shown, and what the view holds.
    pub fn status_line(&self) -> String {
        if let Some((arrived, listed)) = self.arriving {
            return format!("loading; manifests={arrived}/{listed}");
        }
        let rows_bytes: usize = self.bundles.iter().map(LoadedBundle::memory_bytes).sum();
        let mut s = format!(
            "started; bundles={}; rows_mb={:.1}; bundle={}; tab={}",
            self.bundles.len(),
            rows_bytes as f64 / f64::from(1 << 20),
            self.current().map(LoadedBundle::name).unwrap_or_default(),
            self.state.tab
        );
        let awaited = self
            .current()
            .filter(|b| VIEWS[self.shown_slot()].reads_rows() && !b.is_loaded());
        match awaited {
            Some(b) => s.push_str(&format!("; loading_tables={}", b.pending_files().len())),
            None => s.push_str(&self.slots[self.shown_slot()].status(&StatusContext {
                bundles: &self.bundles,
            })),
        }
        // Every view's frame time: a view that derives its figures from the rows every frame
        // shows here (and a frame near a second long loses clicks: egui's click is a press and
        // release under 0.8 s apart by the frames' clocks).
        if let Some(secs) = self.frame_cpu_secs {
            s.push_str(&format!("; frame_ms={:.2}", secs * 1e3));
        }
        if !self.drawn.is_empty() {
            let drawn: Vec<String> = self.drawn.iter().map(|(k, n)| format!("{k}:{n}")).collect();
            s.push_str(&format!("; drawn={}", drawn.join(",")));
        }
        if !self.errors.is_empty() {
            s.push_str(&format!("; errors={}", self.errors.len()));
        }
        s
    }

    /// Rows the table browser shows after its filter (tests).
    pub fn caches_rows(&self) -> Option<usize> {
        self.view_cache::<views::tables::Tables>()
            .and_then(|c| c.as_ref().map(|c| c.rows.len()))
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
        let mut clicked = None;
        for b in &self.bundles {
            let name = b.name();
            let r = ui
                .selectable_label(current.as_deref() == Some(name.as_str()), &name)
                .on_hover_text(&b.origin);
            self.hitboxes.push((format!("bundle:{name}"), r.rect));
            if r.clicked() {
                clicked = Some(name);
            }
        }
        if let Some(name) = clicked {
            self.select_bundle(name);
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
        #[cfg(target_arch = "wasm32")]
        {
            ui.separator();
            let open = ui
                .button("Open...")
                .on_hover_text("A zipped bundle, or a bundle's .arrow files");
            self.hitboxes.push(("button:open".to_owned(), open.rect));
            self.pick_files |= open.clicked();
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
            tab: "validation".into(),
            ..ViewState::default()
        };
        let mut back = ViewState::default();
        back.apply_fragment(&format!("#{}", state.fragment()));
        assert_eq!((back.bundle, back.tab), (state.bundle, state.tab));
    }

    /// A view's selections survive a reload: saved by slug, restored into the view; a saved
    /// state an older version wrote (another shape) leaves the view at its default.
    #[test]
    fn each_view_s_selections_are_saved_and_restored() {
        use crate::views::validation::Validation;
        let mut app = ViewerApp::new(Vec::new(), ViewState::default());
        app.view_state_mut::<Validation>().unwrap().by = "device".into();
        let text = serde_json::to_string(&app.saved_state()).unwrap();
        let back: ViewState = serde_json::from_str(&text).unwrap();
        let restored = ViewerApp::new(Vec::new(), back);
        assert_eq!(restored.view_state::<Validation>().unwrap().by, "device");
        assert!(
            restored.state.views.is_empty(),
            "the views hold their state"
        );
        let mut old = ViewState::default();
        old.views.insert(
            "validation".into(),
            serde_json::json!(["not", "a", "state"]),
        );
        let app = ViewerApp::new(Vec::new(), old);
        assert_eq!(app.view_state::<Validation>().unwrap().by, "");
    }

    /// A bundle of a name already open, from elsewhere (a zip dropped beside the served one), is
    /// kept beside it under `<name> (2)` and said; the same bundle opened again replaces itself.
    #[test]
    fn a_bundle_of_a_name_already_open_is_kept_beside_it() {
        let bundle = |origin: &str| crate::data::LoadedBundle {
            origin: origin.into(),
            alias: None,
            manifest: None,
            tables: Vec::new(),
            traces: Vec::new(),
        };
        let mut app = ViewerApp::new(Vec::new(), ViewState::default());
        app.add_bundle(bundle("served/mc"));
        app.add_bundle(bundle("dropped/mc"));
        let names: Vec<String> = app.bundles.iter().map(|b| b.name()).collect();
        assert_eq!(names, ["mc", "mc (2)"]);
        assert_eq!(app.state.bundle.as_deref(), Some("mc (2)"));
        assert!(
            app.errors[0].contains("is shown as `mc (2)`"),
            "{:?}",
            app.errors
        );
        // Opened again from where it was: replaced, not doubled.
        app.add_bundle(bundle("served/mc"));
        assert_eq!(app.bundles.len(), 2);
    }

    /// A fragment naming no view leaves the view shown as it was.
    #[test]
    fn an_unknown_view_in_the_fragment_is_ignored() {
        let mut state = ViewState::default();
        state.apply_fragment("#tab=nothing&bundle=x");
        assert_eq!(
            (state.tab.as_str(), state.bundle.as_deref()),
            ("home", Some("x"))
        );
    }
}
