//! Axes that read: the Gantt charts' time axis (ticks at 1-2-5 steps that follow the zoom, labels
//! in one unit, the time under the cursor) and bar charts' category axes (every label drawn,
//! thinned out and abbreviated to the room it has, the full name on hover).

/// A time unit and its size in seconds.
fn time_unit(magnitude_secs: f64) -> (&'static str, f64) {
    if magnitude_secs >= 1.0 || magnitude_secs == 0.0 || !magnitude_secs.is_finite() {
        ("s", 1.0)
    } else if magnitude_secs >= 1e-3 {
        ("ms", 1e-3)
    } else if magnitude_secs >= 1e-6 {
        ("µs", 1e-6)
    } else {
        ("ns", 1e-9)
    }
}

/// Decimals that resolve `step` in `unit_secs` (0 for steps of a whole unit or more).
fn decimals_for(step_secs: f64, unit_secs: f64) -> usize {
    let step = step_secs / unit_secs;
    if step.is_nan() || step <= 0.0 || step.is_infinite() {
        return 0;
    }
    (-step.log10() - 1e-9).ceil().clamp(0.0, 9.0) as usize
}

/// The smallest 1, 2 or 5 × 10^k at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || raw.is_infinite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * power)
}

/// Ticks of a time axis over `t0..=t1` seconds, at most `most` of them, at a 1-2-5 step; each
/// labelled in the one unit that suits the axis, with the decimals its step needs.
pub fn time_ticks(t0: f64, t1: f64, most: usize) -> Vec<(f64, String)> {
    let span = t1 - t0;
    if span.is_nan() || span <= 0.0 || span.is_infinite() || most == 0 {
        return Vec::new();
    }
    let step = nice_step(span / most as f64);
    let (unit, size) = time_unit(t0.abs().max(t1.abs()).max(step));
    let decimals = decimals_for(step, size);
    let first = (t0 / step).ceil() as i64;
    let last = (t1 / step).floor() as i64;
    (first..=last)
        .map(|k| {
            let t = k as f64 * step;
            // -0.0 prints as "-0".
            let v = if t == 0.0 { 0.0 } else { t / size };
            (t, format!("{v:.decimals$} {unit}"))
        })
        .collect()
}

/// A time on an axis whose pixels are `resolution_secs` apart: as many decimals as a pixel
/// resolves, in the unit that suits the time (`1.20452 s`, `845.3 µs`).
pub fn time_at(t: f64, resolution_secs: f64) -> String {
    let (unit, size) = time_unit(t.abs().max(resolution_secs.abs()));
    let decimals = decimals_for(resolution_secs.abs(), size);
    format!("{:.decimals$} {unit}", t / size)
}

/// Height of the strip above a Gantt chart that holds its time axis.
pub const AXIS_BAND_PX: f32 = 20.0;

/// Pixels a tick label needs on a time axis.
const TICK_SPACING_PX: f32 = 90.0;

/// Draws a time axis in `band` (a strip above `plot`): a tick and label at each step, a faint
/// grid line through `plot`, `title` at the left of the band, over the lane labels (it names
/// what a lane is: `rank`, `SM`), and, when the pointer is at `cursor_x`, a line and the
/// time under it. `t0..t1` in seconds.
pub fn paint_time_axis(
    ui: &egui::Ui,
    painter: &egui::Painter,
    band: egui::Rect,
    plot: egui::Rect,
    (t0, t1): (f64, f64),
    title: &str,
    cursor_x: Option<f32>,
) {
    let text = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    let grid = ui.visuals().widgets.noninteractive.bg_stroke.color;
    let font = egui::FontId::proportional(11.0);
    let width = plot.width().max(1.0);
    let x_of = |t: f64| plot.left() + ((t - t0) / (t1 - t0)) as f32 * width;
    painter.text(
        egui::pos2(band.left() + 2.0, band.center().y),
        egui::Align2::LEFT_CENTER,
        title,
        font.clone(),
        weak,
    );
    painter.line_segment(
        [
            egui::pos2(plot.left(), band.bottom()),
            egui::pos2(plot.right(), band.bottom()),
        ],
        egui::Stroke::new(1.0, grid),
    );
    let most = ((width / TICK_SPACING_PX) as usize).max(2);
    for (t, label) in time_ticks(t0, t1, most) {
        let x = x_of(t);
        painter.line_segment(
            [
                egui::pos2(x, band.bottom() - 4.0),
                egui::pos2(x, band.bottom()),
            ],
            egui::Stroke::new(1.0, text),
        );
        painter.line_segment(
            [egui::pos2(x, plot.top()), egui::pos2(x, plot.bottom())],
            egui::Stroke::new(1.0, grid.gamma_multiply(0.5)),
        );
        painter.text(
            egui::pos2(x, band.bottom() - 5.0),
            egui::Align2::CENTER_BOTTOM,
            label,
            font.clone(),
            text,
        );
    }
    if let Some(x) = cursor_x.filter(|x| (plot.left()..=plot.right()).contains(x)) {
        let t = t0 + f64::from((x - plot.left()) / width) * (t1 - t0);
        painter.line_segment(
            [egui::pos2(x, band.top()), egui::pos2(x, plot.bottom())],
            egui::Stroke::new(1.0, ui.visuals().selection.stroke.color),
        );
        let label = time_at(t, (t1 - t0) / f64::from(width));
        let galley = painter.layout_no_wrap(label, font, ui.visuals().strong_text_color());
        let at = egui::pos2((x + 4.0).min(plot.right() - galley.size().x), band.top());
        painter.rect_filled(
            egui::Rect::from_min_size(at, galley.size()).expand(1.0),
            2.0,
            ui.visuals().extreme_bg_color,
        );
        painter.galley(at, galley, text);
    }
}

/// What a lane of a lane column is, in words (`rank`, `SM`, `thread`).
pub fn lane_title(column: &str) -> String {
    match column {
        "sm_id" | "sm" => "SM".to_owned(),
        "thread_id" => "thread".to_owned(),
        "block_id" => "block".to_owned(),
        other => other.replace('_', " "),
    }
}

/// Pixels between two labelled bars: egui_plot drops x labels closer than 60 px and fades them
/// in up to 80 px.
const BAR_LABEL_SPACING_PX: f32 = 66.0;
/// What the y axis's labels take from a bar plot's width.
const BAR_PLOT_MARGIN_PX: f32 = 60.0;

/// A category axis for bars at x = 0, 1, … `names.len() - 1`: a label at every `every`-th bar
/// (1 when they all fit), each cut (`…`) to the width its room holds, as `measure` measures text.
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryAxis {
    pub every: usize,
    pub labels: Vec<String>,
}

impl CategoryAxis {
    pub fn new(names: &[String], width_px: f32, measure: impl Fn(&str) -> f32) -> Self {
        let n = names.len().max(1);
        // The bars span n units; egui_plot adds 5 % of the span on each side.
        let per_bar = ((width_px - BAR_PLOT_MARGIN_PX) / (n as f32 * 1.1)).max(1.0);
        let every = (BAR_LABEL_SPACING_PX / per_bar).ceil().max(1.0) as usize;
        let room = per_bar * every as f32 - 6.0;
        let labels = names.iter().map(|name| fit(name, room, &measure)).collect();
        Self { every, labels }
    }

    /// The label of the mark at `value` (none between bars or at a thinned-out bar).
    pub fn label(&self, value: f64) -> String {
        let i = value.round();
        if (value - i).abs() > 1e-6 || i < 0.0 {
            return String::new();
        }
        let i = i as usize;
        if !i.is_multiple_of(self.every) {
            return String::new();
        }
        self.labels.get(i).cloned().unwrap_or_default()
    }

    /// Grid marks at every `every`-th bar within the plot's bounds.
    pub fn marks(&self, input: &egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
        let (lo, hi) = input.bounds;
        let every = self.every as f64;
        let first = (lo / every).ceil().max(0.0) as i64;
        let last = (hi / every).floor().min(self.labels.len() as f64) as i64;
        (first..=last)
            .map(|k| egui_plot::GridMark {
                value: k as f64 * every,
                step_size: every,
            })
            .collect()
    }
}

/// The smallest grid spacing egui_plot draws, in points (`Plot::grid_spacing`'s default, which no
/// plot here changes): a grid input's `base_step_size` is the data step it spans.
const GRID_SPACING_MIN_PX: f64 = 8.0;

/// The grid of a log10 axis whose labels show at every decade where they fit, else at every k-th
/// (k the first of 1, 2, 3, 5, 10 that leaves `label_room_px` between labels), never at none:
/// egui_plot paints a mark's label only when its step spans the label, so on a plot ten decades
/// wide, decades of single steps would all go unlabelled. Within a decade the marks stand at
/// 2, 3, ..., 9 times its power: 2 and 5 as steps that may carry a label (`log_mark_label`), the
/// others as faint lines, so that a zoom into less than two decades reads `1 ms, 2 ms, 5 ms`.
pub fn log_decades_spacer(
    label_room_px: f64,
) -> impl Fn(egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    move |input: egui_plot::GridInput| {
        let ((lo, hi), base_step) = (input.bounds, input.base_step_size);
        let mut marks = Vec::new();
        if base_step <= 0.0
            || !base_step.is_finite()
            || !(lo.is_finite() && hi.is_finite())
            || hi - lo > 400.0
        {
            return marks;
        }
        let px_per_decade = GRID_SPACING_MIN_PX / base_step;
        let every = [1i64, 2, 3, 5, 10]
            .into_iter()
            .find(|&k| k as f64 * px_per_decade >= label_room_px)
            .unwrap_or(10);
        for decade in (lo.floor() as i64)..=(hi.ceil() as i64) {
            let step = if decade.rem_euclid(every) == 0 {
                every
            } else {
                1
            };
            let mut push = |value: f64, step_size: f64| {
                if (lo..=hi).contains(&value) {
                    marks.push(egui_plot::GridMark { value, step_size });
                }
            };
            push(decade as f64, step as f64);
            for m in 2..=9 {
                let labelled = m == 2 || m == 5;
                push(
                    decade as f64 + f64::from(m).log10(),
                    if labelled { 0.3 } else { 0.05 },
                );
            }
        }
        marks
    }
}

/// Whether a mark of `log_decades_spacer` is one that may carry a label: a decade, or 2 or 5
/// times one.
pub fn log_mark_is_labelled(value: f64) -> bool {
    let frac = value - value.floor();
    [0.0, 1.0, 2f64.log10(), 5f64.log10()]
        .iter()
        .any(|f| (frac - f).abs() < 1e-9)
}

/// `name`, or as much of it as fits in `room` px with `…` after it (at least its first letter).
pub fn fit(name: &str, room: f32, measure: impl Fn(&str) -> f32) -> String {
    if measure(name) <= room {
        return name.to_owned();
    }
    let chars: Vec<char> = name.chars().collect();
    for keep in (1..chars.len()).rev() {
        let cut: String = chars[..keep].iter().chain(std::iter::once(&'…')).collect();
        if measure(&cut) <= room || keep == 1 {
            return cut;
        }
    }
    name.to_owned()
}

/// A bar plot whose x axis is `names` (bars at 0, 1, …) over `width_px`, labelled so that no two
/// labels overlap and none is dropped unsaid: thinned out to every k-th bar and cut to fit
/// where the plot is narrow; hovering a bar names it in full.
pub fn category_plot(
    ui: &egui::Ui,
    id: &str,
    names: &[String],
    width_px: f32,
) -> egui_plot::Plot<'static> {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let painter = ui.painter();
    let measure = |text: &str| {
        painter
            .layout_no_wrap(text.to_owned(), font.clone(), egui::Color32::WHITE)
            .size()
            .x
    };
    let axis = CategoryAxis::new(names, width_px, measure);
    let spacer = axis.clone();
    egui_plot::Plot::new(id)
        .x_grid_spacer(move |input| spacer.marks(&input))
        .x_axis_formatter(move |mark, _| axis.label(mark.value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crowded_log_axis_labels_every_kth_decade_and_never_none() {
        let marks = |px_per_decade: f64| {
            log_decades_spacer(64.0)(egui_plot::GridInput {
                bounds: (-10.2, 0.3),
                base_step_size: GRID_SPACING_MIN_PX / px_per_decade,
            })
        };
        let decades = |m: &[egui_plot::GridMark], step: f64| -> Vec<i64> {
            m.iter()
                .filter(|g| g.step_size == step)
                .map(|g| g.value as i64)
                .collect()
        };
        // 100 px a decade: every decade a step of its own, room for its label.
        let roomy = marks(100.0);
        assert_eq!(decades(&roomy, 1.0), (-10..=0).collect::<Vec<_>>());
        // 44 px a decade (the validation scatter's ten decades): every second decade spans a
        // label; the others keep their grid line.
        let crowded = marks(44.0);
        assert_eq!(decades(&crowded, 2.0), [-10, -8, -6, -4, -2, 0]);
        assert_eq!(decades(&crowded, 1.0), [-9, -7, -5, -3, -1]);
        // 10 px a decade: every tenth decade still labelled.
        assert_eq!(decades(&marks(10.0), 10.0), [-10, 0]);
        // Within a decade: 2 and 5 as label steps, 3, 4, 6, 7, 8, 9 as faint lines, all in bounds.
        let within = log_decades_spacer(64.0)(egui_plot::GridInput {
            bounds: (-3.0, -2.0),
            base_step_size: GRID_SPACING_MIN_PX / 500.0,
        });
        let at = |step: f64| -> Vec<String> {
            within
                .iter()
                .filter(|g| g.step_size == step)
                .map(|g| format!("{:.0}", 10f64.powf(g.value + 3.0)))
                .collect()
        };
        assert_eq!(at(0.3), ["2", "5"]);
        assert_eq!(at(0.05), ["3", "4", "6", "7", "8", "9"]);
        assert_eq!(at(1.0), ["1", "10"]);
        assert!(log_mark_is_labelled(-3.0) && log_mark_is_labelled(-3.0 + 2f64.log10()));
        assert!(!log_mark_is_labelled(-3.0 + 3f64.log10()));
    }

    #[test]
    fn ticks_follow_the_zoom_at_1_2_5_steps_in_one_unit() {
        let ticks = time_ticks(0.0, 3.6, 8);
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s", "3.0 s", "3.5 s"
            ]
        );
        // Zoomed in to 200 µs around 1.2 s: labels keep seconds with the decimals a 20 µs step needs.
        let ticks = time_ticks(1.2, 1.2002, 10);
        assert_eq!(ticks.first().unwrap().1, "1.20000 s");
        assert_eq!(ticks[1].1, "1.20002 s");
        // A trace of 40 µs in all: microseconds.
        let ticks = time_ticks(0.0, 40e-6, 4);
        let labels: Vec<&str> = ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["0 µs", "10 µs", "20 µs", "30 µs", "40 µs"]);
        assert!(time_ticks(1.0, 1.0, 5).is_empty());
        assert!(time_ticks(0.0, f64::NAN, 5).is_empty());
    }

    #[test]
    fn ticks_never_exceed_the_number_asked_for_by_much() {
        for (t0, t1) in [
            (0.0, 1.0),
            (0.3, 7.9),
            (1e-9, 3e-7),
            (100.0, 100.001),
            (-2.0, 5.0),
        ] {
            for most in [2, 5, 11, 30] {
                let n = time_ticks(t0, t1, most).len();
                assert!(n >= 1 && n <= most + 1, "{t0}..{t1} at most {most}: {n}");
            }
        }
    }

    #[test]
    fn the_cursor_time_resolves_a_pixel() {
        assert_eq!(time_at(1.204_523, 3.6 / 1000.0), "1.205 s");
        assert_eq!(time_at(1.204_523, 1e-6), "1.204523 s");
        assert_eq!(time_at(0.000_845_3, 1e-7), "845.3 µs");
    }

    #[test]
    fn bar_labels_thin_out_and_shorten_when_the_plot_is_narrow() {
        // 7 px a character, as a stand-in for the font.
        let measure = |s: &str| s.chars().count() as f32 * 7.0;
        let names: Vec<String> = (0..30).map(|i| format!("kernel_number_{i}")).collect();
        // 900 px for 3 bars (254 px a bar): all labelled, in full.
        let wide = CategoryAxis::new(&names[..3], 900.0, measure);
        assert_eq!(wide.every, 1);
        assert_eq!(wide.label(2.0), "kernel_number_2");
        // 5 bars in 490 px (78 px a bar): each labelled, cut to 72 px.
        let five = CategoryAxis::new(&names[..5], 490.0, measure);
        assert_eq!(five.every, 1);
        assert_eq!(five.label(0.0), "kernel_nu…");
        // 30 bars in 400 px (10.3 px a bar): every 7th bar, cut to fit 66 px.
        let narrow = CategoryAxis::new(&names, 400.0, measure);
        assert_eq!(narrow.every, 7);
        assert_eq!(narrow.label(1.0), "");
        assert_eq!(narrow.label(7.0), "kernel_n…");
        assert_eq!(narrow.label(0.5), "");
        // No label is wider than the space between two labelled bars, nor are they closer than
        // egui_plot draws them.
        let per_bar = (400.0 - BAR_PLOT_MARGIN_PX) / (30.0 * 1.1);
        for i in (0..30).step_by(narrow.every) {
            assert!(measure(&narrow.label(i as f64)) <= per_bar * narrow.every as f32);
        }
        assert!(per_bar * narrow.every as f32 >= BAR_LABEL_SPACING_PX);
        assert_eq!(fit("sgemm", 100.0, measure), "sgemm");
        assert_eq!(fit("sgemm_nn_128", 42.0, measure), "sgemm…");
        assert_eq!(fit("sgemm_nn_128", 1.0, measure), "s…");
    }
}
