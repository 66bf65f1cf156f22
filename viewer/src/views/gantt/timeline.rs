//! What the Gantt of a table and the Gantt of a large trace share: the selections and the time
//! span in view, the painting of a lane's pixel cells, and panning and
//! zooming with the pointer.

use serde::{Deserialize, Serialize};

use crate::gantt::PixelCell;
use crate::views::common::kind_colour;

/// The Gantt's selections, for a table and for a large trace alike.
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
    /// The time span in view of a large trace, in ns; `None` shows everything.
    #[serde(skip)]
    pub trace_view: Option<(f64, f64)>,
    /// Lanes shown: those whose name contains this text.
    pub lane_filter: String,
}

/// Paints one lane's pixel cells: one rectangle per run of pixels that show the same kind at
/// about the same occupancy.
pub(crate) fn paint_cells(
    painter: &egui::Painter,
    cells: &[PixelCell],
    left: f32,
    y: f32,
    row: f32,
) {
    let pixels = cells.len();
    let mut p = 0;
    while p < pixels {
        let c = cells[p];
        if c.occupancy <= 0.0 {
            p += 1;
            continue;
        }
        let level = (c.occupancy.min(1.0) * 4.0).ceil();
        let mut q = p + 1;
        while q < pixels
            && cells[q].kind == c.kind
            && (cells[q].occupancy.min(1.0) * 4.0).ceil() == level
        {
            q += 1;
        }
        let colour = kind_colour(usize::from(c.kind)).gamma_multiply(0.25 + 0.75 * level / 4.0);
        let r = egui::Rect::from_min_max(
            egui::pos2(left + p as f32, y + 0.5),
            egui::pos2(left + q as f32, y + (row - 0.5).max(1.0)),
        );
        painter.rect_filled(r, 0.0, colour);
        p = q;
    }
}

/// The view after this frame's input: dragged to pan, scrolled (or pinched) to zoom around the
/// pointer.
pub(crate) fn pan_zoom(
    ui: &egui::Ui,
    response: &egui::Response,
    plot: egui::Rect,
    (t0, t1): (f64, f64),
) -> (f64, f64) {
    let pixels = plot.width().max(1.0) as f64;
    let span = t1 - t0;
    let mut view = (t0, t1);
    if response.dragged() {
        let dt = -f64::from(response.drag_delta().x) / pixels * span;
        view = (view.0 + dt, view.1 + dt);
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y + i.zoom_delta().ln() * 200.0);
        if scroll != 0.0
            && let Some(pointer) = response.hover_pos()
        {
            let factor = (-f64::from(scroll) / 200.0).exp();
            let at = t0 + f64::from((pointer.x - plot.left()).max(0.0)) / pixels * span;
            view = (at - (at - view.0) * factor, at + (view.1 - at) * factor);
        }
    }
    view
}
