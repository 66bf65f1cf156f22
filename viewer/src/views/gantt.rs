//! Gantt chart of any table with a lane column, a start and an end or a duration: ranks of MPI
//! blocks, SMs or threads of kernel traces. Drag to pan, scroll to zoom; a second table (a
//! prediction of the same run) can be stacked under the first.

use serde::{Deserialize, Serialize};

use crate::data::{LoadedBundle, format_secs, numbers, texts};
use crate::gantt::{GanttData, PixelCell};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub lane: String,
    pub colour: String,
    /// A second table stacked under the first ("none" for none).
    pub compare: String,
    /// The time span in view; `None` shows everything.
    #[serde(skip)]
    pub view: Option<(f64, f64)>,
}

#[derive(Debug)]
pub struct Cache {
    key: (String, String, String, String),
    pub data: GanttData,
    pub skipped: usize,
    cells: Vec<PixelCell>,
}

const NONE: &str = "none";

/// The start, and the end or duration, columns of a table.
pub fn time_columns(batch: &arrow_array::RecordBatch) -> Option<(String, String, bool)> {
    let names: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let start = names
        .iter()
        .find(|n| n.ends_with("start_secs") || *n == "start")?;
    if let Some(end) = names
        .iter()
        .find(|n| n.ends_with("end_secs") || *n == "end")
    {
        return Some((start.clone(), end.clone(), false));
    }
    let duration = names
        .iter()
        .find(|n| n.ends_with("duration_secs") || *n == "duration")?;
    Some((start.clone(), duration.clone(), true))
}

/// Lane and colour candidates: the text and integer columns, preferred names first.
fn category_columns(batch: &arrow_array::RecordBatch, preferred: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .filter(|f| {
            matches!(
                f.data_type(),
                arrow_schema::DataType::Utf8
                    | arrow_schema::DataType::Int32
                    | arrow_schema::DataType::Int64
            )
        })
        .map(|f| f.name().clone())
        .collect();
    out.sort_by_key(|n| {
        preferred
            .iter()
            .position(|p| p == n)
            .unwrap_or(preferred.len())
    });
    out
}

/// The records of one table: lanes (prefixed when stacking), starts, ends, kinds.
fn records(
    batch: &arrow_array::RecordBatch,
    lane: &str,
    colour: &str,
    prefix: &str,
) -> Option<crate::gantt::Records> {
    let (start_col, end_col, is_duration) = time_columns(batch)?;
    let start: Vec<f64> = numbers(batch, &start_col)?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect();
    let second: Vec<f64> = numbers(batch, &end_col)?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect();
    let end: Vec<f64> = if is_duration {
        start.iter().zip(&second).map(|(s, d)| s + d).collect()
    } else {
        second
    };
    let lanes: Vec<String> = texts(batch, lane)?
        .into_iter()
        .map(|l| format!("{prefix}{l}"))
        .collect();
    let kinds = texts(batch, colour).unwrap_or_else(|| vec![String::new(); batch.num_rows()]);
    Some((lanes, start, end, kinds))
}

pub fn ui(ui: &mut egui::Ui, bundle: &LoadedBundle, state: &mut State, caches: &mut super::Caches) {
    let tables: Vec<_> = bundle
        .tables
        .iter()
        .filter(|t| time_columns(&t.batch).is_some())
        .collect();
    if tables.is_empty() {
        super::nothing_to_show(
            ui,
            "Gantt",
            "a start and an end or duration (start_secs, duration_secs)",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    let Some(first) = tables
        .iter()
        .find(|t| t.name == state.table)
        .or(tables.first())
    else {
        return;
    };
    let lanes = category_columns(
        &first.batch,
        &["rank", "sm_id", "lane", "thread_id", "device"],
    );
    let colours = category_columns(&first.batch, &["kind", "phase", "block", "call_site"]);
    let mut compare = vec![NONE.to_owned()];
    compare.extend(names.iter().filter(|n| **n != first.name).cloned());
    ui.horizontal_wrapped(|ui| {
        super::pick(ui, "table", &mut state.table, &names);
        super::pick(ui, "lanes", &mut state.lane, &lanes);
        super::pick(ui, "colour by", &mut state.colour, &colours);
        super::pick(ui, "stack with", &mut state.compare, &compare);
        if ui.button("Show all").clicked() {
            state.view = None;
        }
    });
    let key = (
        state.table.clone(),
        state.lane.clone(),
        state.colour.clone(),
        state.compare.clone(),
    );
    if caches.gantt.as_ref().is_none_or(|c| c.key != key) {
        let Some(table) = bundle.table(&state.table) else {
            return;
        };
        let stacking = state.compare != NONE;
        let prefix = |name: &str| {
            if stacking {
                format!("{name}: ")
            } else {
                String::new()
            }
        };
        let Some((mut l, mut s, mut e, mut k)) = records(
            &table.batch,
            &state.lane,
            &state.colour,
            &prefix(&table.name),
        ) else {
            ui.label("The chosen columns cannot be read as lanes and times.");
            return;
        };
        if let Some(other) = bundle.table(&state.compare)
            && let Some((l2, s2, e2, k2)) = records(
                &other.batch,
                &state.lane,
                &state.colour,
                &prefix(&other.name),
            )
        {
            l.extend(l2);
            s.extend(s2);
            e.extend(e2);
            k.extend(k2);
        }
        let (data, skipped) = GanttData::new(&l, &s, &e, &k);
        caches.gantt = Some(Cache {
            key,
            data,
            skipped,
            cells: Vec::new(),
        });
        state.view = None;
    }
    let Some(cache) = caches.gantt.as_mut() else {
        return;
    };
    chart(ui, cache, state);
}

/// A colour per kind, stable across frames.
pub fn kind_colour(kind: usize) -> egui::Color32 {
    const PALETTE: [egui::Color32; 8] = [
        egui::Color32::from_rgb(66, 133, 244),
        egui::Color32::from_rgb(234, 67, 53),
        egui::Color32::from_rgb(251, 188, 5),
        egui::Color32::from_rgb(52, 168, 83),
        egui::Color32::from_rgb(171, 71, 188),
        egui::Color32::from_rgb(0, 172, 193),
        egui::Color32::from_rgb(255, 112, 67),
        egui::Color32::from_rgb(158, 157, 36),
    ];
    PALETTE[kind % PALETTE.len()]
}

/// Draws the chart into the rest of `ui`; public for the frame-time benchmark.
pub fn chart(ui: &mut egui::Ui, cache: &mut Cache, state: &mut State) {
    let data = &cache.data;
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} records in {} lanes",
            data.len,
            data.lanes.len()
        ));
        if cache.skipped > 0 {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "{} records without a valid start and end skipped",
                    cache.skipped
                ),
            );
        }
        for (i, k) in data.kinds.iter().enumerate() {
            ui.colored_label(kind_colour(i), k);
        }
    });
    let (t0, t1) = state.view.unwrap_or((data.t_min, data.t_max));
    ui.label(format!("{} … {}", format_secs(t0), format_secs(t1)));
    let label_width = 110.0;
    let size = ui.available_size().max(egui::vec2(200.0, 100.0));
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
    let plot = egui::Rect::from_min_max(rect.min + egui::vec2(label_width, 0.0), rect.max);
    let pixels = plot.width().max(1.0) as usize;
    let span = t1 - t0;
    // Pan by dragging, zoom around the pointer by scrolling.
    let mut view = (t0, t1);
    if response.dragged() {
        let dt = -f64::from(response.drag_delta().x) / pixels as f64 * span;
        view = (view.0 + dt, view.1 + dt);
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y + i.zoom_delta().ln() * 200.0);
        if scroll != 0.0
            && let Some(pointer) = response.hover_pos()
        {
            let factor = (-f64::from(scroll) / 200.0).exp();
            let at = t0 + f64::from((pointer.x - plot.left()).max(0.0)) / pixels as f64 * span;
            view = (at - (at - view.0) * factor, at + (view.1 - at) * factor);
        }
    }
    if view != (t0, t1) && view.1 > view.0 {
        state.view = Some(view);
    }
    let painter = ui.painter_at(rect);
    let lanes = data.lanes.len().max(1);
    let row = (plot.height() / lanes as f32).clamp(1.0, 24.0);
    let text = ui.visuals().text_color();
    let font = egui::FontId::proportional((row - 2.0).clamp(6.0, 12.0));
    for (lane, name) in data.lanes.iter().enumerate() {
        let y = plot.top() + lane as f32 * row;
        if y > plot.bottom() {
            break;
        }
        if row >= 6.0 {
            painter.text(
                egui::pos2(rect.left() + 2.0, y + row / 2.0),
                egui::Align2::LEFT_CENTER,
                name,
                font.clone(),
                text,
            );
        }
        data.lane_cells(lane, t0, t1, pixels, &mut cache.cells);
        // One rectangle per run of pixels that show the same kind at about the same occupancy.
        let mut p = 0;
        while p < pixels {
            let c = cache.cells[p];
            if c.occupancy <= 0.0 {
                p += 1;
                continue;
            }
            let level = (c.occupancy.min(1.0) * 4.0).ceil();
            let mut q = p + 1;
            while q < pixels
                && cache.cells[q].kind == c.kind
                && (cache.cells[q].occupancy.min(1.0) * 4.0).ceil() == level
            {
                q += 1;
            }
            let colour = kind_colour(usize::from(c.kind)).gamma_multiply(0.25 + 0.75 * level / 4.0);
            let r = egui::Rect::from_min_max(
                egui::pos2(plot.left() + p as f32, y + 0.5),
                egui::pos2(plot.left() + q as f32, y + (row - 0.5).max(1.0)),
            );
            painter.rect_filled(r, 0.0, colour);
            p = q;
        }
    }
    if let Some(pos) = response.hover_pos()
        && plot.contains(pos)
    {
        let t = t0 + f64::from(pos.x - plot.left()) / pixels as f64 * span;
        let lane = ((pos.y - plot.top()) / row) as usize;
        if let Some(name) = data.lanes.get(lane) {
            response.on_hover_text_at_pointer(format!("{name} at {}", format_secs(t)));
        }
    }
}

impl Cache {
    /// A cache over already-built data (the frame-time benchmark).
    pub fn new(data: GanttData) -> Self {
        Self {
            key: Default::default(),
            data,
            skipped: 0,
            cells: Vec::new(),
        }
    }
}
