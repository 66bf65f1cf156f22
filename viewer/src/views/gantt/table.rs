//! Gantt chart of any table with a lane column, a start and an end or a duration: ranks of MPI
//! blocks, SMs or threads of kernel traces. Drag to pan, scroll to zoom; a second table (a
//! prediction of the same run) can be stacked under the first.

use yosoku_tables::col;

use super::timeline::{State, paint_cells, pan_zoom};
use crate::views::common::kind_colour;
use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::gantt::{GanttData, PixelCell};

#[derive(Debug)]
pub struct Cache {
    key: (String, String, String, String),
    pub data: GanttData,
    pub skipped: usize,
    cells: Vec<PixelCell>,
    /// The tables drawn (the first, then the stacked one) and the first's rows: record `i` is row
    /// `i` of the first table, or row `i - first_rows` of the second.
    tables: Vec<String>,
    first_rows: usize,
    /// Lanes the filter let through in the last frame.
    pub shown_lanes: usize,
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
    // The canonical `spans` table: start and duration in ns.
    if names.iter().any(|n| n == col::START_NS) && names.iter().any(|n| n == col::DURATION_NS) {
        return Some((col::START_NS.to_owned(), col::DURATION_NS.to_owned(), true));
    }
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
            yosoku_tables::text::is_text_type(f.data_type())
                || matches!(
                    f.data_type(),
                    arrow_schema::DataType::Int32 | arrow_schema::DataType::Int64
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

/// The records of one table: lanes (prefixed when stacking), starts, ends, kinds, in seconds.
/// Of a `spans` table, the intervals only (instants, counters and flow ends have no length), in
/// lanes that say their run and timeline when the table holds several (measured and predicted
/// side by side).
fn records(
    batch: &arrow_array::RecordBatch,
    lane: &str,
    colour: &str,
    prefix: &str,
) -> Option<crate::gantt::Records> {
    let (start_col, end_col, is_duration) = time_columns(batch)?;
    let scale = if start_col.ends_with("_ns") {
        1e-9
    } else {
        1.0
    };
    let start: Vec<f64> = numbers(batch, &start_col)?
        .into_iter()
        .map(|v| v.map_or(f64::NAN, |v| v * scale))
        .collect();
    let second: Vec<f64> = numbers(batch, &end_col)?
        .into_iter()
        .map(|v| v.map_or(f64::NAN, |v| v * scale))
        .collect();
    let mut end: Vec<f64> = if is_duration {
        start.iter().zip(&second).map(|(s, d)| s + d).collect()
    } else {
        second
    };
    let mut start = start;
    let mut lanes: Vec<String> = texts(batch, lane)?;
    if let (Some(run), Some(timeline), Some(event)) = (
        texts(batch, col::RUN_ID),
        texts(batch, col::TIMELINE),
        texts(batch, col::EVENT),
    ) {
        let timelines = crate::views::common::distinct(
            &run.iter()
                .zip(&timeline)
                .map(|(r, t)| format!("{r} ({t})"))
                .collect::<Vec<_>>(),
        );
        if timelines.len() > 1 {
            for i in 0..lanes.len() {
                lanes[i] = format!("{} ({}): {}", run[i], timeline[i], lanes[i]);
            }
        }
        for i in 0..event.len() {
            if event[i] != "span" {
                start[i] = f64::NAN;
                end[i] = f64::NAN;
            }
        }
    }
    // Runs kept apart: with several runs in the table (an MPI source of repeated runs), each
    // run's lanes are a group of their own, never drawn over another run's.
    else if let Some(run) = texts(batch, col::RUN_ID)
        && crate::views::common::distinct(&run).len() > 1
    {
        for (lane, run) in lanes.iter_mut().zip(&run) {
            *lane = format!("{run}: {lane}");
        }
    }
    let lanes: Vec<String> = lanes.into_iter().map(|l| format!("{prefix}{l}")).collect();
    let kinds = texts(batch, colour).unwrap_or_else(|| vec![String::new(); batch.num_rows()]);
    Some((lanes, start, end, kinds))
}

/// Rows of a `spans` table that are not intervals: not drawn, and not "skipped" either.
fn non_intervals(batch: &arrow_array::RecordBatch) -> usize {
    texts(batch, col::EVENT).map_or(0, |e| e.iter().filter(|e| *e != "span").count())
}

/// The fields of row `row` of `batch`, one per line (hover text).
fn describe_row(batch: &arrow_array::RecordBatch, row: usize) -> String {
    let schema = batch.schema();
    let mut out = String::new();
    for (i, field) in schema.fields().iter().enumerate() {
        let column = batch.column(i);
        if column.is_null(row) {
            continue;
        }
        let value = arrow_cast_value(column.as_ref(), row);
        out.push_str(&format!("{}: {value}\n", field.name()));
    }
    out
}

fn arrow_cast_value(array: &dyn arrow_array::Array, row: usize) -> String {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int32Type, Int64Type};
    match array.data_type() {
        ty if yosoku_tables::text::is_text_type(ty) => yosoku_tables::text::Text::new(array)
            .map(|t| t.value(row).to_owned())
            .unwrap_or_default(),
        arrow_schema::DataType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        arrow_schema::DataType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        arrow_schema::DataType::Float64 => {
            format!("{:.6}", array.as_primitive::<Float64Type>().value(row))
        }
        arrow_schema::DataType::Boolean => array.as_boolean().value(row).to_string(),
        other => format!("({other})"),
    }
}

/// Draws the Gantt of one of the bundle's tables (`choices`: the large traces the table picker
/// also offers); `cached` keeps the records of the tables chosen.
pub fn ui(
    ui: &mut egui::Ui,
    bundle: &LoadedBundle,
    state: &mut State,
    cached: &mut Option<Cache>,
    choices: &[String],
) {
    let tables: Vec<_> = bundle
        .tables
        .iter()
        .filter(|t| time_columns(&t.batch).is_some())
        .collect();
    if tables.is_empty() {
        crate::views::common::nothing_to_show(
            ui,
            "Gantt",
            "a start and an end or duration (start_secs, duration_secs)",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    // Large traces stay pickable from a table's chart.
    let mut choices = choices.to_vec();
    choices.extend(names.iter().cloned());
    let Some(first) = tables
        .iter()
        .find(|t| t.name == state.table)
        .or(tables.first())
    else {
        return;
    };
    let lanes = category_columns(
        &first.batch,
        &["lane", "rank", "sm_id", "thread_id", "device"],
    );
    let colours = category_columns(
        &first.batch,
        &["category", "kind", "phase", "name", "block", "call_site"],
    );
    let mut compare = vec![NONE.to_owned()];
    compare.extend(names.iter().filter(|n| **n != first.name).cloned());
    ui.horizontal_wrapped(|ui| {
        crate::views::common::pick(ui, "table", &mut state.table, &choices);
        crate::views::common::pick(ui, "lanes", &mut state.lane, &lanes);
        crate::views::common::pick(ui, "colour by", &mut state.colour, &colours);
        crate::views::common::pick(ui, "stack with", &mut state.compare, &compare);
        ui.label("lane filter:");
        ui.add(egui::TextEdit::singleline(&mut state.lane_filter).desired_width(100.0))
            .on_hover_text("Show the lanes whose name contains this text");
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
    if cached.as_ref().is_none_or(|c| c.key != key) {
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
        let first_rows = table.batch.num_rows();
        let mut drawn = vec![table.name.clone()];
        let mut not_intervals = non_intervals(&table.batch);
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
            drawn.push(other.name.clone());
            not_intervals += non_intervals(&other.batch);
        }
        let (data, skipped) = GanttData::new(&l, &s, &e, &k);
        *cached = Some(Cache {
            key,
            data,
            skipped: skipped.saturating_sub(not_intervals),
            cells: Vec::new(),
            tables: drawn,
            first_rows,
            shown_lanes: 0,
        });
        state.view = None;
    }
    let Some(cache) = cached.as_mut() else {
        return;
    };
    let (tables, first_rows) = (cache.tables.clone(), cache.first_rows);
    let describe = |record: usize| -> String {
        let (name, row) = if record < first_rows {
            (tables.first(), record)
        } else {
            (tables.get(1), record - first_rows)
        };
        name.and_then(|n| bundle.table(n))
            .filter(|t| row < t.batch.num_rows())
            .map(|t| format!("{}\n{}", t.name, describe_row(&t.batch, row)))
            .unwrap_or_default()
    };
    chart_with(ui, cache, state, &describe);
}

/// Draws the chart into the rest of `ui`; public for the frame-time benchmark.
pub fn chart(ui: &mut egui::Ui, cache: &mut Cache, state: &mut State) {
    chart_with(ui, cache, state, &|_| String::new());
}

/// Draws the chart; hovering a record shows `describe(record)` (its table row's fields).
fn chart_with(
    ui: &mut egui::Ui,
    cache: &mut Cache,
    state: &mut State,
    describe: &dyn Fn(usize) -> String,
) {
    let data = &cache.data;
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} records in {} lanes",
            format::count(data.len as u64),
            format::count(data.lanes.len() as u64)
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
    // Times on the axis count from the first record (a trace's clock may be Unix time).
    let origin = data.t_min;
    ui.label(format!(
        "showing {} to {} of {}, from the first record (drag to pan, scroll to zoom)",
        format::secs(t0 - origin),
        format::secs(t1 - origin),
        format::secs(data.t_max - origin)
    ));
    let size = ui.available_size().max(egui::vec2(200.0, 100.0));
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
    // The lanes the filter lets through, in order.
    let filter = state.lane_filter.trim().to_lowercase();
    let shown: Vec<usize> = (0..data.lanes.len())
        .filter(|&l| filter.is_empty() || data.lanes[l].to_lowercase().contains(&filter))
        .collect();
    cache.shown_lanes = shown.len();
    crate::view::count_drawn(ui, "lanes", shown.len());
    let lanes_height = rect.height() - crate::views::axes::AXIS_BAND_PX;
    let row = (lanes_height / shown.len().max(1) as f32).clamp(1.0, 24.0);
    let text = ui.visuals().text_color();
    let (every, font) = lane_labels(row);
    let measure = |name: &str| {
        ui.painter()
            .layout_no_wrap(name.to_owned(), font.clone(), text)
            .size()
            .x
    };
    let drawn = ((lanes_height / row).ceil() as usize).min(shown.len());
    let label_width = label_column_px(
        shown[..drawn].iter().map(|&l| data.lanes[l].as_str()),
        measure,
        rect.width(),
    );
    let plot = egui::Rect::from_min_max(
        rect.min + egui::vec2(label_width, crate::views::axes::AXIS_BAND_PX),
        rect.max,
    );
    let pixels = plot.width().max(1.0) as usize;
    let span = t1 - t0;
    let view = pan_zoom(ui, &response, plot, (t0, t1));
    if view != (t0, t1) && view.1 > view.0 {
        state.view = Some(view);
    }
    let painter = ui.painter_at(rect);
    crate::views::axes::paint_time_axis(
        ui,
        &painter,
        egui::Rect::from_min_max(rect.min, egui::pos2(rect.right(), plot.top())),
        plot,
        (t0 - origin, t1 - origin),
        &crate::views::axes::lane_title(&state.lane),
        response.hover_pos().map(|p| p.x),
    );
    for (position, &lane) in shown.iter().enumerate() {
        let name = &data.lanes[lane];
        let y = plot.top() + position as f32 * row;
        if y > plot.bottom() {
            break;
        }
        if position % every == 0 {
            painter.text(
                egui::pos2(rect.left() + 2.0, y + row / 2.0),
                egui::Align2::LEFT_CENTER,
                crate::views::axes::fit(name, label_width - 6.0, measure),
                font.clone(),
                text,
            );
        }
        data.lane_cells(lane, t0, t1, pixels, &mut cache.cells);
        paint_cells(&painter, &cache.cells, plot.left(), y, row);
    }
    // A label, whole, under the pointer in the label column.
    if let Some(pos) = response.hover_pos()
        && pos.x < plot.left()
        && pos.y >= plot.top()
        && let Some(&lane) = shown.get(((pos.y - plot.top()) / row) as usize)
    {
        response
            .clone()
            .on_hover_text_at_pointer(data.lanes[lane].clone());
    }
    if let Some(pos) = response.hover_pos()
        && plot.contains(pos)
    {
        let t = t0 + f64::from(pos.x - plot.left()) / pixels as f64 * span;
        let position = ((pos.y - plot.top()) / row) as usize;
        if let Some(&lane) = shown.get(position)
            && let Some(name) = data.lanes.get(lane)
        {
            let tolerance = 3.0 * span / pixels as f64;
            let record = data
                .record_at(lane, t, tolerance)
                .map(describe)
                .unwrap_or_default();
            response.on_hover_text_at_pointer(format!(
                "{} {name} at {}\n{record}",
                crate::views::axes::lane_title(&state.lane),
                crate::views::axes::time_at(t - origin, span / pixels as f64)
            ));
        }
    }
}

/// Which lanes are labelled, and in what font, for lanes `row_px` high: each in a font that fits
/// it, or, where lanes are too thin for a label each (744 block lanes), one every `every`
/// lanes, 12 px apart.
fn lane_labels(row_px: f32) -> (usize, egui::FontId) {
    if row_px >= 6.0 {
        (1, egui::FontId::proportional((row_px - 2.0).clamp(6.0, 12.0)))
    } else {
        ((12.0 / row_px).ceil() as usize, egui::FontId::proportional(10.0))
    }
}

/// The label column is as wide as the widest label drawn, up to 40 % of the chart; a label
/// longer than that is cut with `…` and shown whole on hover.
fn label_column_px<'a>(
    labels: impl Iterator<Item = &'a str>,
    measure: impl Fn(&str) -> f32,
    chart_px: f32,
) -> f32 {
    let widest = labels.map(measure).fold(0.0, f32::max);
    (widest + 8.0).clamp(60.0, chart_px * 0.4)
}

impl Cache {
    /// A cache over already-built data (the frame-time benchmark).
    pub fn new(data: GanttData) -> Self {
        Self {
            key: Default::default(),
            data,
            skipped: 0,
            cells: Vec::new(),
            tables: Vec::new(),
            first_rows: 0,
            shown_lanes: 0,
        }
    }
}
