//! The Gantt of a large trace stored as a level-of-detail pyramid (`LoadedTrace`): each frame
//! reads the coarsest level whose bins are at most half a pixel, only the tiles in view; zoomed
//! past the finest level, the records themselves from the chunks in view, once few enough are in
//! view to draw (until then the finest level, stretched). What is not loaded yet is drawn from a
//! coarser level and replaced when it arrives.

use std::sync::Arc;

use yosoku_traces::pyramid::{ChunkRows, Tile};

use super::timeline::{State, pan_zoom};
use crate::views::common::kind_colour;
use crate::gantt::PixelCell;
use crate::trace_store::{LoadedTrace, Piece};

impl std::fmt::Debug for TraceFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceFrame")
            .field("trace", &self.trace)
            .field("mode", &self.mode)
            .field("level", &self.level)
            .field("records_drawn", &self.records_drawn)
            .finish_non_exhaustive()
    }
}

/// Most records a frame draws one by one.
pub const RECORD_BUDGET: f64 = 600_000.0;

/// What the last frame drew (the status line, tests and the benchmark read it).
#[derive(Clone, Default)]
pub struct TraceFrame {
    pub trace: String,
    /// `pyramid` or `records`.
    pub mode: &'static str,
    /// The level drawn (pyramid), the level wanted.
    pub level: u32,
    pub wanted_level: Option<u32>,
    /// Records drawn one by one (records mode).
    pub records_drawn: usize,
    pub lanes_shown: usize,
    pub view_ns: (f64, f64),
    pub loaded_bytes: usize,
    pub loads: u64,
    pub pending: usize,
    /// The frame's image, kept alive until the next frame replaces it.
    pub texture: Option<egui::TextureHandle>,
}

impl TraceFrame {
    /// What the page's status line says of the frame: `; trace=<name>; trace_mode=...`.
    pub fn status(&self) -> String {
        format!(
            "; trace={}; trace_mode={}; trace_level={}; trace_wanted_level={}; records_drawn={}; lanes={}; view_ns={:.0}; trace_loaded_mb={:.1}; trace_loads={}; trace_pending={}; wasm_mb={}",
            self.trace,
            self.mode,
            self.level,
            self.wanted_level
                .map_or("records".to_owned(), |l| l.to_string()),
            self.records_drawn,
            self.lanes_shown,
            self.view_ns.1 - self.view_ns.0,
            self.loaded_bytes as f64 / 1048576.0,
            self.loads,
            self.pending,
            crate::platform::wasm_memory_mb()
        )
    }
}

/// Lanes whose name contains `filter` (case-insensitive), all when empty.
fn shown_lanes(trace: &LoadedTrace, filter: &str) -> Vec<usize> {
    let f = filter.trim().to_lowercase();
    (0..trace.index.lanes.len())
        .filter(|&l| f.is_empty() || trace.index.lanes[l].to_lowercase().contains(&f))
        .collect()
}

/// Records of the chunks in `[t0, t1]`, estimated from each chunk's start range.
fn records_in_view(trace: &LoadedTrace, t0: f64, t1: f64) -> f64 {
    let idx = &trace.index;
    idx.chunks_for(t0, t1)
        .into_iter()
        .map(|c| {
            let ch = &idx.chunks[c];
            let (a, b) = (ch.first_start_ns as f64, ch.last_start_ns as f64);
            let lo = (t0 - idx.max_duration_ns as f64).max(a);
            let hi = t1.min(b);
            if b <= a {
                ch.rows as f64
            } else {
                ch.rows as f64 * ((hi - lo).max(0.0) / (b - a)).min(1.0)
            }
        })
        .sum()
}

/// Cells of one lane from the tiles of `level` (all of `tiles` loaded, indexed by tile).
#[allow(clippy::too_many_arguments)] // the view's geometry, spelled out
fn pyramid_cells(
    trace: &LoadedTrace,
    tiles: &[Option<Arc<Tile>>],
    level: u32,
    lane: usize,
    t0: f64,
    t1: f64,
    pixels: usize,
    out: &mut Vec<PixelCell>,
) {
    let idx = &trace.index;
    let tile_bins = idx.tile_bins as usize;
    let bins = idx.bins(level);
    let bin_ns = idx.bin_ns(level);
    let px_ns = (t1 - t0) / pixels as f64;
    let tmin = idx.t_min_ns as f64;
    out.clear();
    out.resize(
        pixels,
        PixelCell {
            kind: 0,
            occupancy: 0.0,
        },
    );
    for (p, cell) in out.iter_mut().enumerate() {
        let a = t0 + p as f64 * px_ns;
        let b = a + px_ns;
        let first = ((a - tmin) / bin_ns).floor().max(0.0) as usize;
        let last = (((b - tmin) / bin_ns).ceil().max(0.0) as usize).min(bins);
        let (mut busy, mut best, mut best_kind) = (0.0f64, 0.0f64, 0u16);
        for g in first..last {
            let Some(Some(tile)) = tiles.get(g / tile_bins) else {
                continue;
            };
            let i = lane * tile_bins + g % tile_bins;
            let occ = f64::from(tile.occupancy[i]);
            if occ <= 0.0 {
                continue;
            }
            let lo = tmin + g as f64 * bin_ns;
            let overlap = (b.min(lo + bin_ns) - a.max(lo)).max(0.0);
            let w = occ * overlap;
            busy += w;
            if w > best {
                best = w;
                best_kind = tile.kind[i];
            }
        }
        *cell = PixelCell {
            kind: best_kind,
            occupancy: (busy / px_ns) as f32,
        };
    }
}

/// Cells of every shown lane from the records of the loaded chunks; the records drawn. Constant
/// work per record however many pixels it covers (coverage as a difference array per lane, as
/// the pyramid is built), so a frame costs records + lanes x pixels.
fn record_cells(
    trace: &LoadedTrace,
    chunks: &[Arc<ChunkRows>],
    lane_row: &[Option<usize>],
    t0: f64,
    t1: f64,
    pixels: usize,
    cells: &mut [Vec<PixelCell>],
) -> usize {
    let px_ns = (t1 - t0) / pixels as f64;
    let from_ns = t0 - trace.index.max_duration_ns as f64;
    let lanes = cells.len();
    let mut diff = vec![0i32; lanes * (pixels + 1)];
    let mut edge = vec![0.0f32; lanes * pixels];
    let mut start_kind = vec![0u16; lanes * pixels];
    let mut start_len = vec![-1.0f32; lanes * pixels];
    let mut drawn = 0;
    for chunk in chunks {
        let from = chunk.start_ns.partition_point(|&s| (s as f64) < from_ns);
        let to = chunk.start_ns.partition_point(|&s| (s as f64) <= t1);
        for i in from..to {
            let Some(Some(row)) = lane_row.get(chunk.lane[i] as usize) else {
                continue;
            };
            let s = chunk.start_ns[i] as f64;
            let e = s + chunk.duration_ns[i] as f64;
            if e < t0 {
                continue;
            }
            drawn += 1;
            // Positions in pixels; a record shorter than a pixel still shows.
            let a = ((s - t0) / px_ns).max(0.0);
            let b = ((e - t0) / px_ns).min(pixels as f64).max(a + 1e-3);
            let (p0, p1) = ((a as usize).min(pixels - 1), (b as usize).min(pixels - 1));
            let base = row * pixels;
            if p0 == p1 {
                edge[base + p0] += (b - a) as f32;
            } else {
                edge[base + p0] += (p0 as f64 + 1.0 - a) as f32;
                edge[base + p1] += (b - p1 as f64) as f32;
                if p1 > p0 + 1 {
                    diff[row * (pixels + 1) + p0 + 1] += 1;
                    diff[row * (pixels + 1) + p1] -= 1;
                }
            }
            let len = (b - a) as f32;
            if len > start_len[base + p0] {
                start_len[base + p0] = len;
                start_kind[base + p0] = chunk.kind[i];
            }
        }
    }
    for (row, c) in cells.iter_mut().enumerate() {
        c.clear();
        let mut cover = 0i64;
        let mut kind = 0u16;
        for p in 0..pixels {
            cover += i64::from(diff[row * (pixels + 1) + p]);
            let i = row * pixels + p;
            if start_len[i] >= 0.0 {
                kind = start_kind[i];
            }
            c.push(PixelCell {
                kind,
                occupancy: cover as f32 + edge[i],
            });
        }
    }
    drawn
}

/// The record of `lane` under time `t` in the loaded chunks: the shortest one covering it.
fn record_at(
    chunks: &[Arc<ChunkRows>],
    max_duration: i64,
    lane: u32,
    t: f64,
) -> Option<(Arc<ChunkRows>, usize)> {
    let mut found: Option<(Arc<ChunkRows>, usize, i64)> = None;
    for chunk in chunks {
        let from = chunk
            .start_ns
            .partition_point(|&s| (s as f64) < t - max_duration as f64);
        let to = chunk.start_ns.partition_point(|&s| (s as f64) <= t);
        for i in from..to {
            if chunk.lane[i] != lane {
                continue;
            }
            let (s, d) = (chunk.start_ns[i] as f64, chunk.duration_ns[i]);
            if s + d as f64 >= t && found.as_ref().is_none_or(|f| d < f.2) {
                found = Some((chunk.clone(), i, d));
            }
        }
    }
    found.map(|(c, i, _)| (c, i))
}

/// Draws `trace` into the rest of `ui`.
pub fn ui(ui: &mut egui::Ui, trace: &LoadedTrace, state: &mut State) -> TraceFrame {
    let idx = trace.index.clone();
    let ctx = ui.ctx().clone();
    let (t_min, t_max) = (idx.t_min_ns as f64, idx.t_max_ns as f64);
    // The overview is always wanted.
    trace.request(&[Piece::Tile(0, 0)], &ctx);
    header_ui(ui, trace, state);
    let (t0, t1) = state.trace_view.unwrap_or((t_min, t_max));
    let lanes = shown_lanes(trace, &state.lane_filter);
    crate::view::count_drawn(ui, "lanes", lanes.len());
    let size = ui.available_size().max(egui::vec2(200.0, 100.0));
    let label_width = 90.0;
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
    let plot = egui::Rect::from_min_max(
        rect.min + egui::vec2(label_width, crate::views::axes::AXIS_BAND_PX),
        rect.max,
    );
    let pixels = plot.width().max(1.0) as usize;
    let view = view_after_input(ui, &response, plot, (t0, t1), (t_min, t_max));
    if view != (t0, t1) {
        state.trace_view = Some(view);
    }
    let (t0, t1) = (t0.max(t_min - (t1 - t0)), t1);
    let mut frame = TraceFrame {
        trace: trace.name.clone(),
        mode: "pyramid",
        wanted_level: idx.level_for(t0, t1, pixels),
        lanes_shown: lanes.len(),
        view_ns: (t0, t1),
        ..TraceFrame::default()
    };
    let painter = ui.painter_at(rect);
    let row = (plot.height() / lanes.len().max(1) as f32).clamp(1.0, 24.0);
    // Times from the trace's first record, in seconds.
    crate::views::axes::paint_time_axis(
        ui,
        &painter,
        egui::Rect::from_min_max(rect.min, egui::pos2(rect.right(), plot.top())),
        plot,
        ((t0 - t_min) / 1e9, (t1 - t_min) / 1e9),
        &crate::views::axes::lane_title(&idx.lane_kind),
        response.hover_pos().map(|p| p.x),
    );
    let (cells_per_lane, chunks) = frame_cells(trace, &lanes, (t0, t1), pixels, &mut frame, &ctx);
    // The cells as one image, a row of texels per lane: one texture upload and one quad per
    // frame, however busy and varied the trace is (rectangles per run of like pixels would be
    // hundreds of thousands here).
    let visible = lanes
        .len()
        .min(((plot.height() / row).floor() as usize).max(1));
    if visible > 0 && pixels > 0 {
        frame.texture = Some(paint_image(
            ui,
            &painter,
            &cells_per_lane[..visible],
            egui::Rect::from_min_size(plot.min, egui::vec2(pixels as f32, visible as f32 * row)),
        ));
    }
    let text = ui.visuals().text_color();
    let font = egui::FontId::proportional((row - 2.0).clamp(6.0, 12.0));
    for (r, &l) in lanes.iter().enumerate().take(visible) {
        let y = plot.top() + r as f32 * row;
        if row >= 6.0 {
            painter.text(
                egui::pos2(rect.left() + 2.0, y + row / 2.0),
                egui::Align2::LEFT_CENTER,
                &idx.lanes[l],
                font.clone(),
                text,
            );
        }
    }
    if let Some(pos) = response.hover_pos()
        && plot.contains(pos)
    {
        let t = t0 + f64::from(pos.x - plot.left()) / pixels as f64 * (t1 - t0);
        let r = ((pos.y - plot.top()) / row) as usize;
        if let Some(&lane) = lanes.get(r) {
            let under = Pointer {
                lane,
                t,
                pixel: ((pos.x - plot.left()) as usize).min(pixels - 1),
                resolution_secs: (t1 - t0) / 1e9 / pixels as f64,
            };
            let cells = &cells_per_lane[r];
            let tip = hover_text(trace, &frame, &chunks, cells, &under);
            response.on_hover_text_at_pointer(tip);
        }
    }
    let (bytes, loads, pending, errors) = trace.stats();
    frame.loaded_bytes = bytes;
    frame.loads = loads;
    frame.pending = pending;
    if !errors.is_empty() {
        painter.text(
            rect.left_bottom(),
            egui::Align2::LEFT_BOTTOM,
            errors.join("; "),
            egui::FontId::proportional(12.0),
            ui.visuals().error_fg_color,
        );
    }
    frame
}

/// The trace's size and kinds, the lane filter and "Show all".
fn header_ui(ui: &mut egui::Ui, trace: &LoadedTrace, state: &mut State) {
    let idx = &trace.index;
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} {} records in {} lanes by {} ({} levels, {} chunks)",
            crate::format::count(idx.records),
            idx.provenance,
            crate::format::count(idx.lanes.len() as u64),
            idx.lane_kind,
            idx.levels,
            idx.chunks.len()
        ));
        ui.label("lanes:");
        ui.add(egui::TextEdit::singleline(&mut state.lane_filter).desired_width(120.0))
            .on_hover_text("Show the lanes whose name contains this text");
        if ui.button("Show all").clicked() {
            state.trace_view = None;
        }
    });
    ui.horizontal_wrapped(|ui| {
        for (i, k) in idx.kinds.iter().enumerate().take(12) {
            ui.colored_label(kind_colour(i), k);
        }
        if idx.kinds.len() > 12 {
            ui.label(format!("and {} more kinds", idx.kinds.len() - 12));
        }
    });
}

/// The time span in view after this frame's dragging and scrolling: no further in than 1 ns
/// over the plot, no further out than the whole trace `(t_min, t_max)`.
fn view_after_input(
    ui: &egui::Ui,
    response: &egui::Response,
    plot: egui::Rect,
    (t0, t1): (f64, f64),
    (t_min, t_max): (f64, f64),
) -> (f64, f64) {
    let mut view = pan_zoom(ui, response, plot, (t0, t1));
    if view.1 - view.0 < 1.0 {
        let mid = (view.0 + view.1) / 2.0;
        view = (mid - 0.5, mid + 0.5);
    }
    if view.1 - view.0 > t_max - t_min {
        view = (t_min, t_max);
    }
    view
}

/// Every shown lane's pixel cells over `(t0, t1)`: from the records of the chunks in view when
/// few enough are in view and the finest level is too coarse and they are all loaded (records
/// mode), else from the finest level at or above the one wanted whose tiles in view are all
/// loaded. Asks for what is missing; records in `frame` what was drawn. Returns the cells and
/// the chunks drawn from.
fn frame_cells(
    trace: &LoadedTrace,
    lanes: &[usize],
    (t0, t1): (f64, f64),
    pixels: usize,
    frame: &mut TraceFrame,
    ctx: &egui::Context,
) -> (Vec<Vec<PixelCell>>, Vec<Arc<ChunkRows>>) {
    let idx = &trace.index;
    let wanted = frame.wanted_level;
    let mut chunks: Vec<Arc<ChunkRows>> = Vec::new();
    if wanted.is_none() && records_in_view(trace, t0, t1) <= RECORD_BUDGET {
        let needed = idx.chunks_for(t0, t1);
        let pieces: Vec<Piece> = needed.iter().map(|&c| Piece::Chunk(c)).collect();
        trace.request(&pieces, ctx);
        chunks = needed.iter().filter_map(|&c| trace.chunk(c)).collect();
        if chunks.len() == needed.len() {
            frame.mode = "records";
        }
    }
    let mut cells_per_lane: Vec<Vec<PixelCell>> = vec![Vec::new(); lanes.len()];
    if frame.mode == "records" {
        let mut lane_row = vec![None; idx.lanes.len()];
        for (r, &l) in lanes.iter().enumerate() {
            lane_row[l] = Some(r);
        }
        frame.records_drawn = record_cells(
            trace,
            &chunks,
            &lane_row,
            t0,
            t1,
            pixels,
            &mut cells_per_lane,
        );
        return (cells_per_lane, chunks);
    }
    let want = wanted.unwrap_or(idx.levels - 1);
    let range = idx.tiles_for(want, t0, t1);
    let pieces: Vec<Piece> = range.clone().map(|t| Piece::Tile(want, t)).collect();
    trace.request(&pieces, ctx);
    // The finest level at or above the one wanted whose tiles in view are all here.
    let mut level = want;
    let tiles = loop {
        let range = idx.tiles_for(level, t0, t1);
        let mut tiles: Vec<Option<Arc<Tile>>> = vec![None; 1usize << level];
        let mut complete = true;
        for t in range {
            tiles[t] = trace.tile(level, t);
            complete &= tiles[t].is_some();
        }
        if complete || level == 0 {
            break tiles;
        }
        level -= 1;
    };
    frame.level = level;
    for (r, &l) in lanes.iter().enumerate() {
        pyramid_cells(
            trace,
            &tiles,
            level,
            l,
            t0,
            t1,
            pixels,
            &mut cells_per_lane[r],
        );
    }
    (cells_per_lane, chunks)
}

/// Paints the lanes' cells as one image, a row of texels per lane, into `area`; the texture
/// (kept alive until the next frame replaces it).
fn paint_image(
    ui: &egui::Ui,
    painter: &egui::Painter,
    cells_per_lane: &[Vec<PixelCell>],
    area: egui::Rect,
) -> egui::TextureHandle {
    let pixels = area.width() as usize;
    let background = ui.visuals().extreme_bg_color;
    let mut image = egui::ColorImage::filled([pixels, cells_per_lane.len()], background);
    for (r, lane_cells) in cells_per_lane.iter().enumerate() {
        for (p, c) in lane_cells.iter().enumerate() {
            if c.occupancy > 0.0 {
                let level = (c.occupancy.min(1.0) * 4.0).ceil();
                image.pixels[r * pixels + p] =
                    kind_colour(usize::from(c.kind)).gamma_multiply(0.25 + 0.75 * level / 4.0);
            }
        }
    }
    let texture = ui
        .ctx()
        .load_texture("yosoku-trace", image, egui::TextureOptions::NEAREST);
    painter.image(
        texture.id(),
        area,
        egui::Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)),
        egui::Color32::WHITE,
    );
    texture
}

/// What is under the pointer: a lane (an index of the trace's lanes), a time in ns, the pixel
/// column, and the seconds a pixel spans.
struct Pointer {
    lane: usize,
    t: f64,
    pixel: usize,
    resolution_secs: f64,
}

/// The tooltip of the pointer: the record under it (records mode) or the busy share and main
/// kind of its pixel (pyramid mode).
fn hover_text(
    trace: &LoadedTrace,
    frame: &TraceFrame,
    chunks: &[Arc<ChunkRows>],
    lane_cells: &[PixelCell],
    under: &Pointer,
) -> String {
    let idx = &trace.index;
    let t_min = idx.t_min_ns as f64;
    let at = format!(
        "{} {} at {}",
        crate::views::axes::lane_title(&idx.lane_kind),
        idx.lanes[under.lane],
        crate::views::axes::time_at((under.t - t_min) / 1e9, under.resolution_secs)
    );
    if frame.mode == "records" {
        return match record_at(chunks, idx.max_duration_ns, under.lane as u32, under.t) {
            Some((c, i)) => format!(
                "{at}\n{}\nstart {}\nduration {}\nrecord {} of the file",
                idx.kinds
                    .get(usize::from(c.kind[i]))
                    .map_or("", String::as_str),
                // Record times are whole nanoseconds: shown to the nanosecond.
                crate::views::axes::time_at((c.start_ns[i] as f64 - t_min) / 1e9, 1e-9),
                crate::format::secs(c.duration_ns[i] as f64 / 1e9),
                c.source_row[i]
            ),
            None => format!("{at}\nidle"),
        };
    }
    let c = lane_cells.get(under.pixel).copied().unwrap_or(PixelCell {
        kind: 0,
        occupancy: 0.0,
    });
    format!(
        "{at}\nbusy {:.2} (records in parallel)\nmostly {}\nzoom in for single records",
        c.occupancy,
        idx.kinds
            .get(usize::from(c.kind))
            .map_or("", String::as_str)
    )
}
