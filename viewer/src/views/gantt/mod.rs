//! The Gantt: timelines of any table with a lane, a start and an end or a duration ([`table`]),
//! and of large traces stored as level-of-detail pyramids ([`trace`]), with what both draw with
//! in [`timeline`]. Drag to pan, scroll to zoom.

pub mod table;
pub mod timeline;
pub mod trace;

use yosoku_tables::col;

use crate::data::LoadedBundle;
use crate::trace_store::LoadedTrace;
use crate::view::{Context, Explains, StatusContext, View};
use timeline::State;

/// How a large trace is named among the tables.
const TRACE_PREFIX: &str = "trace: ";

/// The Gantt view.
#[derive(Debug)]
pub struct Gantt;

/// What the Gantt keeps between frames: the records of the tables drawn, or what the last frame
/// of a large trace drew.
#[derive(Debug, Default)]
pub struct Cache {
    pub table: Option<table::Cache>,
    pub trace_frame: Option<trace::TraceFrame>,
}

impl View for Gantt {
    const SLUG: &'static str = "gantt";
    const LABEL: &'static str = "Gantt";
    const EXPLAINS: Explains = Explains::Rank(5);
    type State = State;
    type Cache = Cache;

    fn draws(batch: &arrow_array::RecordBatch) -> bool {
        table::time_columns(batch).is_some()
    }

    fn has_content(bundle: &LoadedBundle) -> bool {
        !bundle.traces.is_empty() || bundle.tables.iter().any(|t| Self::draws(&t.batch))
    }

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    /// The Gantt opens on a timeline that puts measured and predicted side by side (a `spans`
    /// table with a `timeline` column, as an MPI prediction writes) when the bundle has one,
    /// else on what the picker offers first (a large trace, else the first table): a headline
    /// result's table is one link away on the home.
    fn pick_default(bundle: &LoadedBundle, state: &mut State) {
        let chosen = |name: &str| {
            bundle.tables.iter().any(|t| t.name == name)
                || trace_names(bundle).iter().any(|t| t == name)
        };
        if chosen(&state.table) || !bundle.traces.is_empty() {
            return;
        }
        if let Some(t) = bundle.tables.iter().find(|t| {
            Self::draws(&t.batch)
                && crate::data::has_columns(&t.batch, &[col::TIMELINE, col::RUN_ID, col::EVENT])
        }) {
            state.table.clone_from(&t.name);
        }
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, cache: &mut Cache) {
        if let Some(trace) = chosen_trace(ui, cx.bundle, state) {
            cache.trace_frame = Some(trace::ui(ui, trace, state));
            return;
        }
        cache.trace_frame = None;
        table::ui(
            ui,
            cx.bundle,
            state,
            &mut cache.table,
            &trace_names(cx.bundle),
        );
    }

    fn status(_: &StatusContext<'_>, _: &State, cache: &Cache) -> String {
        if let Some(f) = &cache.trace_frame {
            f.status()
        } else if let Some(c) = &cache.table {
            format!(
                "; records={}; lanes={}; shown={}",
                c.data.len,
                c.data.lanes.len(),
                c.shown_lanes
            )
        } else {
            String::new()
        }
    }
}

/// The bundle's large traces as the table picker names them.
fn trace_names(bundle: &LoadedBundle) -> Vec<String> {
    bundle
        .traces
        .iter()
        .map(|t| format!("{TRACE_PREFIX}{}", t.name))
        .collect()
}

/// The large trace chosen, when the bundle has any and one is (or nothing valid is): the picker
/// then offers the traces and the tables.
fn chosen_trace<'a>(
    ui: &mut egui::Ui,
    bundle: &'a LoadedBundle,
    state: &mut State,
) -> Option<&'a LoadedTrace> {
    if bundle.traces.is_empty() {
        return None;
    }
    let mut names = trace_names(bundle);
    names.extend(
        bundle
            .tables
            .iter()
            .filter(|t| Gantt::draws(&t.batch))
            .map(|t| t.name.clone()),
    );
    if names.contains(&state.table) && !state.table.starts_with(TRACE_PREFIX) {
        return None;
    }
    ui.horizontal_wrapped(|ui| super::common::pick(ui, "table", &mut state.table, &names));
    bundle
        .traces
        .iter()
        .find(|t| state.table == format!("{TRACE_PREFIX}{}", t.name))
}
