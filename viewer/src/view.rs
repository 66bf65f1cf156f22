//! What a view is. A view implements [`View`] in a module of its own under `views/` and is listed
//! once in the `views!` list (`views/mod.rs`), which registers it in `views::VIEWS`; the app builds its tabs, the URL fragment's names, the saved state,
//! the home's links and the desktop tour from that list, so adding a view touches nothing else.
//!
//! [`View`] is written per view, with its own state and cache types; [`ViewKind`] (what a view
//! is, shared) and [`ViewSlot`] (a view's state and cache in one app) are its type-erased forms,
//! made for every view by [`Registered`] and [`Slot`].

use std::any::Any;
use std::collections::BTreeMap;
use std::marker::PhantomData;

use arrow_array::RecordBatch;
use serde::de::DeserializeOwned;
use serde::{Deserialize as _, Serialize};

use crate::data::{LoadedBundle, LoadedTable};

/// One view of a bundle.
pub trait View: 'static {
    /// The view's name in the URL fragment (`tab=<slug>`), in the page's hitboxes
    /// (`tab:<slug>`), in the saved state and in the desktop tour's file names.
    const SLUG: &'static str;
    /// The tab's label.
    const LABEL: &'static str;
    /// Where the home's links to a step's results may lead here (see [`Explains`]).
    const EXPLAINS: Explains = Explains::Never;

    /// The selections kept across reloads.
    type State: Default + Serialize + DeserializeOwned + 'static;
    /// What the view derives from the bundle shown and keeps between frames; dropped when
    /// another bundle is shown.
    type Cache: Default + 'static;

    /// Whether the view draws rows of the bundle's tables: the app reads them before it shows
    /// the view (the home and the provenance view need only the manifest).
    const READS_ROWS: bool = true;

    /// The columns a table needs for the view to draw it (none: the view draws no table, unless
    /// it says otherwise in [`View::draws`]).
    const NEEDS: &'static [&'static str] = &[];

    /// Whether the view draws this table: by default, whether it has every column of
    /// [`View::NEEDS`].
    fn draws(batch: &RecordBatch) -> bool {
        !Self::NEEDS.is_empty() && crate::data::has_columns(batch, Self::NEEDS)
    }

    /// Whether the view has anything to show for `bundle` (the desktop tour looks at each view
    /// on the first bundle that has): by default, whether it draws one of its tables.
    fn has_content(bundle: &LoadedBundle) -> bool {
        bundle.tables.iter().any(|t| Self::draws(&t.batch))
    }

    /// The table the view shows, in its state: what a home link opens it on. `None` for a view
    /// that does not show one table.
    fn shown_table(_state: &mut Self::State) -> Option<&mut String> {
        None
    }

    /// Called before every frame's [`View::ui`]: on the view's first look at a bundle (its
    /// selection is none of the tables it draws), select the table of the pipeline's headline
    /// result — the first scoreboard row's step, else the first step with a headline figure —
    /// when the view draws one of that step's tables.
    fn pick_default(bundle: &LoadedBundle, state: &mut Self::State) {
        if let Some(selected) = Self::shown_table(state) {
            let drawn: Vec<&LoadedTable> = bundle
                .tables
                .iter()
                .filter(|t| Self::draws(&t.batch))
                .collect();
            headline_table(bundle, selected, &drawn);
        }
    }

    /// Draws the view into `ui`.
    fn ui(
        ui: &mut egui::Ui,
        cx: &mut Context<'_>,
        state: &mut Self::State,
        cache: &mut Self::Cache,
    );

    /// What the page's status line says of the view's content: `; key=value` pairs (the browser
    /// test and the headless tests read them).
    fn status(_cx: &StatusContext<'_>, _state: &Self::State, _cache: &Self::Cache) -> String {
        String::new()
    }
}

/// Whether a home link may lead to a view: the home opens, for a result, the view of the lowest
/// rank that draws one of the tables of the result's step (or of the steps it read); the views
/// that explain most (cost components, per-rank times) rank lowest. When none does, it opens the
/// [`Explains::AnyTable`] view on the step's first table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explains {
    Never,
    Rank(u8),
    /// The view of last resort: it shows any table.
    AnyTable,
}

/// What a view draws with, besides its own state and cache.
#[derive(Debug)]
pub struct Context<'a> {
    /// The bundle shown.
    pub bundle: &'a LoadedBundle,
    /// Every open bundle (the home lists them all).
    pub bundles: &'a [LoadedBundle],
    /// Every view, in tab order (the home asks which one explains a table).
    pub views: &'a [&'static dyn ViewKind],
    /// Where links were drawn this frame (`home:<bundle>:<row>`), for the browser test.
    pub hitboxes: &'a mut Vec<(String, egui::Rect)>,
    /// Another view to open, when the view asks for one this frame.
    pub jump: Option<Jump>,
}

/// What a view's status says, besides its own state and cache.
#[derive(Debug, Clone, Copy)]
pub struct StatusContext<'a> {
    pub bundles: &'a [LoadedBundle],
}

/// The egui memory key of the rectangles widgets inside views publish this frame.
const PUBLISHED_HITBOXES: &str = "yosoku-published-hitboxes";

/// Says where a widget inside a view was drawn (`pick:<label>`, `pick:<label>=<option>`,
/// `plot:<name>`), for the browser test to click: the app adds it to its hitboxes.
pub fn publish_hitbox(ui: &egui::Ui, key: String, rect: egui::Rect) {
    ui.ctx().data_mut(|d| {
        d.get_temp_mut_or_default::<Vec<(String, egui::Rect)>>(egui::Id::unique(
            PUBLISHED_HITBOXES,
        ))
        .push((key, rect));
    });
}

/// The rectangles published this frame by [`publish_hitbox`], taken.
pub fn take_published_hitboxes(ctx: &egui::Context) -> Vec<(String, egui::Rect)> {
    ctx.data_mut(|d| {
        d.remove_temp::<Vec<(String, egui::Rect)>>(egui::Id::unique(PUBLISHED_HITBOXES))
            .unwrap_or_default()
    })
}

/// The egui memory key of what views drew this frame.
const DRAWN: &str = "yosoku-drawn";

/// Counts `n` primitives of a kind (`points`, `bars`, `lines`, `rows`) a view drew this frame:
/// the status line says them (`drawn=bars:12,points:300`), and the browser test and the desktop
/// tour check that each view drew what it is for.
pub fn count_drawn(ui: &egui::Ui, what: &'static str, n: usize) {
    ui.ctx().data_mut(|d| {
        *d.get_temp_mut_or_default::<BTreeMap<&'static str, usize>>(egui::Id::unique(DRAWN))
            .entry(what)
            .or_default() += n;
    });
}

/// Counts the points of a plot (`id_salt` as given to `egui_plot::Plot::new`) that fell outside
/// the area it showed (`outside` among the status line's `drawn=`), while the plot shows its own
/// bounds: a user's zoom or pan moves points out on purpose, a plot's first view must not. The
/// browser test and the desktop tour assert that no view drew any there.
pub fn count_outside(
    ui: &egui::Ui,
    id_salt: &str,
    shown: &egui_plot::PlotBounds,
    points: impl IntoIterator<Item = [f64; 2]>,
) {
    let id = ui.make_persistent_id(egui::IdSalt::new(id_salt));
    let own_bounds = egui_plot::PlotMemory::load(ui.ctx(), id)
        .is_none_or(|m| m.auto_bounds.x && m.auto_bounds.y);
    if !own_bounds {
        return;
    }
    let (min, max) = (shown.min(), shown.max());
    let outside = points
        .into_iter()
        .filter(|p| p.iter().all(|v| v.is_finite()))
        .filter(|p| !(min[0]..=max[0]).contains(&p[0]) || !(min[1]..=max[1]).contains(&p[1]))
        .count();
    if outside > 0 {
        count_drawn(ui, "outside", outside);
    }
}

/// Both ends of each bar (vertical bars), for [`count_outside`].
pub fn bar_ends(bars: &[egui_plot::Bar]) -> Vec<[f64; 2]> {
    bars.iter()
        .flat_map(|b| {
            let base = b.base_offset.unwrap_or(0.0);
            [[b.argument, base], [b.argument, base + b.value]]
        })
        .collect()
}

/// What [`count_drawn`] counted this frame, taken.
pub fn take_drawn(ctx: &egui::Context) -> BTreeMap<&'static str, usize> {
    ctx.data_mut(|d| {
        d.remove_temp::<BTreeMap<&'static str, usize>>(egui::Id::unique(DRAWN))
            .unwrap_or_default()
    })
}

/// A view to open: on a bundle, optionally on one of its tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jump {
    pub bundle: String,
    /// The view's slug.
    pub view: &'static str,
    pub table: Option<String>,
}

/// What a view is, the same in every app: what the registry lists.
pub trait ViewKind: Sync + std::fmt::Debug {
    fn slug(&self) -> &'static str;
    fn label(&self) -> &'static str;
    fn explains(&self) -> Explains;
    fn reads_rows(&self) -> bool;
    fn draws(&self, batch: &RecordBatch) -> bool;
    fn has_content(&self, bundle: &LoadedBundle) -> bool;
    /// A fresh state and cache of the view, for one app.
    fn new_slot(&self) -> Box<dyn ViewSlot>;
}

/// One view's state and cache in one app.
pub trait ViewSlot: std::fmt::Debug {
    fn slug(&self) -> &'static str;
    /// Picks the default table (see [`View::pick_default`]), then draws.
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Context<'_>);
    fn status(&self, cx: &StatusContext<'_>) -> String;
    /// Opens the view on `table` (a home link).
    fn open_on(&mut self, table: &str);
    /// Drops what was derived from the bundle shown (its tables changed).
    fn forget_bundle(&mut self);
    /// Another bundle is shown: the selections made on `from` are kept for it, those made on
    /// `to` before (else the defaults) come back, and the cache is dropped.
    fn switch_bundle(&mut self, from: &str, to: &str);
    /// The state as the app saves it.
    fn save(&self) -> serde_json::Value;
    /// Restores a saved state; one that no longer reads (an older version's) is left at the
    /// default.
    fn restore(&mut self, saved: &serde_json::Value);
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// The [`ViewKind`] of view `V`: `Registered::<V>::KIND` is its line in the registry.
pub struct Registered<V>(PhantomData<fn() -> V>);

impl<V: View> Registered<V> {
    pub const KIND: &'static dyn ViewKind = &Registered::<V>(PhantomData);
}

impl<V> std::fmt::Debug for Registered<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<V>())
    }
}

impl<V: View> ViewKind for Registered<V> {
    fn slug(&self) -> &'static str {
        V::SLUG
    }

    fn label(&self) -> &'static str {
        V::LABEL
    }

    fn explains(&self) -> Explains {
        V::EXPLAINS
    }

    fn reads_rows(&self) -> bool {
        V::READS_ROWS
    }

    fn draws(&self, batch: &RecordBatch) -> bool {
        V::draws(batch)
    }

    fn has_content(&self, bundle: &LoadedBundle) -> bool {
        V::has_content(bundle)
    }

    fn new_slot(&self) -> Box<dyn ViewSlot> {
        Box::new(Slot::<V> {
            state: V::State::default(),
            cache: V::Cache::default(),
            other_bundles: BTreeMap::new(),
        })
    }
}

/// View `V`'s state and cache.
pub struct Slot<V: View> {
    /// The selections on the bundle shown.
    pub state: V::State,
    pub cache: V::Cache,
    /// The selections made on the other bundles, by name: a filter or a table chosen on one
    /// bundle never empties the view of another.
    pub other_bundles: BTreeMap<String, V::State>,
}

/// A slot's state as the app saves it: the bundle shown's, and the others' by name.
#[derive(Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved<K: Ord, S> {
    shown: S,
    other_bundles: BTreeMap<K, S>,
}

impl<V: View> std::fmt::Debug for Slot<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Slot({})", V::SLUG)
    }
}

impl<V: View> ViewSlot for Slot<V> {
    fn slug(&self) -> &'static str {
        V::SLUG
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Context<'_>) {
        V::pick_default(cx.bundle, &mut self.state);
        V::ui(ui, cx, &mut self.state, &mut self.cache);
    }

    fn status(&self, cx: &StatusContext<'_>) -> String {
        V::status(cx, &self.state, &self.cache)
    }

    fn open_on(&mut self, table: &str) {
        if let Some(shown) = V::shown_table(&mut self.state) {
            table.clone_into(shown);
        }
    }

    fn forget_bundle(&mut self) {
        self.cache = V::Cache::default();
    }

    fn switch_bundle(&mut self, from: &str, to: &str) {
        let mine = self.other_bundles.remove(to).unwrap_or_default();
        let left = std::mem::replace(&mut self.state, mine);
        self.other_bundles.insert(from.to_owned(), left);
        self.cache = V::Cache::default();
    }

    fn save(&self) -> serde_json::Value {
        serde_json::to_value(Saved {
            shown: &self.state,
            other_bundles: self.other_bundles.iter().collect(),
        })
        .unwrap_or(serde_json::Value::Null)
    }

    fn restore(&mut self, saved: &serde_json::Value) {
        // An older version saved the one state the view had.
        match Saved::<String, V::State>::deserialize(saved) {
            Ok(s) => {
                self.state = s.shown;
                self.other_bundles = s.other_bundles;
            }
            Err(_) => self.state = V::State::deserialize(saved).unwrap_or_default(),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Selects, when `selected` is none of `drawn`, the first of them that a headline step of the
/// bundle wrote (see [`View::pick_default`]).
pub fn headline_table(bundle: &LoadedBundle, selected: &mut String, drawn: &[&LoadedTable]) {
    if drawn.iter().any(|t| t.name == *selected) {
        return;
    }
    if let Some(name) = bundle.headline_steps().iter().find_map(|step| {
        bundle
            .step_tables(step)
            .find(|t| drawn.iter().any(|d| d.name == t.name))
            .map(|t| t.name.clone())
    }) {
        *selected = name;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One frame of a plot of (0, 0) and (1, 1), with `counted` given to [`count_outside`]:
    /// what the frame counted as drawn outside.
    fn outside_in_a_frame(ctx: &egui::Context, own_bounds: bool, counted: &[[f64; 2]]) -> usize {
        let mut outside = 0;
        // egui may run a frame in several passes: the last one counts.
        let _ = ctx.run_ui(egui::RawInput::default(), |ui| {
            let mut plot = egui_plot::Plot::new("p").width(200.0).height(200.0);
            if !own_bounds {
                plot = plot.auto_bounds(false).include_x(0.0).include_x(0.5);
            }
            let shown = plot.show(ui, |p| {
                p.points(egui_plot::Points::new("data", vec![[0.0, 0.0], [1.0, 1.0]]));
            });
            count_outside(ui, "p", shown.transform.bounds(), counted.iter().copied());
            outside = take_drawn(ui.ctx()).get("outside").copied().unwrap_or(0);
        });
        outside
    }

    #[test]
    fn points_outside_a_plot_are_counted_while_it_shows_its_own_bounds() {
        let drawn = [[0.0, 0.0], [1.0, 1.0]];
        let stray = [[0.0, 0.0], [1.0, 1.0], [5.0, 0.5], [0.5, f64::NAN]];
        assert_eq!(
            outside_in_a_frame(&egui::Context::default(), true, &drawn),
            0
        );
        // A point the plot did not take into its bounds is outside; one without a value is not
        // drawn at all.
        assert_eq!(
            outside_in_a_frame(&egui::Context::default(), true, &stray),
            1
        );
        // Bounds set by someone else (a user's zoom): what falls outside is meant to.
        assert_eq!(
            outside_in_a_frame(&egui::Context::default(), false, &stray),
            0
        );
        let bars = [egui_plot::Bar::new(2.0, -0.5).base_offset(1.0)];
        assert_eq!(bar_ends(&bars), [[2.0, 1.0], [2.0, 0.5]]);
    }
}
