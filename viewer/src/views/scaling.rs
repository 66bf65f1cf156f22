//! Scaling: how each call path's time grows with a parameter, as Extra-P shows it. Per call
//! path, the measured configurations (each repetition's spread as a bar, held-out ones marked),
//! the model's curve for each series of the other parameters with its prediction interval as a
//! band, the region beyond the largest fitted value shaded; the call paths listed by their time
//! at 1.5 x the largest size measured, the one that will dominate first, each with its model
//! written as Extra-P writes it. A table qualifies with `axis_value`, `series`,
//! `predicted_secs` and `extrapolated` (a `scaling_model` step's `scaling_curves`); its step's
//! `scaling_points` and `scaling_models` are read beside it.

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, Explains, StatusContext, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    /// The call path shown: `program / variant / phase`.
    pub path: String,
}

/// The scaling view.
#[derive(Debug)]
pub struct Scaling;

impl View for Scaling {
    const SLUG: &'static str = "scaling";
    const LABEL: &'static str = "Scaling";
    const EXPLAINS: Explains = Explains::Rank(2);
    const NEEDS: &'static [&'static str] = &[
        col::AXIS_VALUE,
        col::SERIES,
        col::PREDICTED_SECS,
        col::EXTRAPOLATED,
    ];
    type State = State;
    type Cache = ();

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, _: &mut ()) {
        scaling_ui(ui, cx.bundle, state);
    }

    fn status(_: &StatusContext<'_>, state: &State, _: &()) -> String {
        format!("; path={}", state.path)
    }
}

/// One call path of a step: its rows in the curves, points and models tables.
#[derive(Debug, Default)]
struct CallPath {
    name: String,
    curve_rows: Vec<usize>,
    point_rows: Vec<usize>,
    model_row: Option<usize>,
    /// The model's largest time at the far end of the curves (1.5 times the largest size).
    at_scale_secs: f64,
}

/// A call path's name in every table: `device / program / variant / phase`.
fn path_names(batch: &arrow_array::RecordBatch) -> Vec<String> {
    let n = batch.num_rows();
    let get = |c: &str| texts(batch, c).unwrap_or_else(|| vec![String::new(); n]);
    let (d, p, v, ph) = (
        get(col::DEVICE),
        get(col::PROGRAM),
        get(col::VARIANT),
        get(col::PHASE),
    );
    (0..n)
        .map(|i| format!("{} / {} / {} / {}", d[i], p[i], v[i], ph[i]))
        .collect()
}

/// The call paths of the step whose curves are `curves`, largest time at scale first.
fn call_paths(bundle: &LoadedBundle, step: &str, curves: &arrow_array::RecordBatch) -> Vec<CallPath> {
    let names = path_names(curves);
    let predicted = numbers(curves, col::PREDICTED_SECS).unwrap_or_default();
    let axis = numbers(curves, col::AXIS_VALUE).unwrap_or_default();
    let mut paths: Vec<CallPath> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let k = match paths.iter().position(|p| &p.name == name) {
            Some(k) => k,
            None => {
                paths.push(CallPath {
                    name: name.clone(),
                    at_scale_secs: f64::NEG_INFINITY,
                    ..CallPath::default()
                });
                paths.len() - 1
            }
        };
        paths[k].curve_rows.push(i);
    }
    for p in &mut paths {
        let far = p
            .curve_rows
            .iter()
            .filter_map(|&i| axis[i])
            .fold(f64::NEG_INFINITY, f64::max);
        p.at_scale_secs = p
            .curve_rows
            .iter()
            .filter(|&&i| axis[i] == Some(far))
            .filter_map(|&i| predicted[i])
            .fold(f64::NEG_INFINITY, f64::max);
    }
    let sibling = |table: &str| bundle.table(&format!("{step}.{table}"));
    if let Some(points) = sibling("scaling_points") {
        for (i, name) in path_names(&points.batch).iter().enumerate() {
            if let Some(p) = paths.iter_mut().find(|p| &p.name == name) {
                p.point_rows.push(i);
            }
        }
    }
    if let Some(models) = sibling("scaling_models") {
        for (i, name) in path_names(&models.batch).iter().enumerate() {
            if let Some(p) = paths.iter_mut().find(|p| &p.name == name) {
                p.model_row = Some(i);
            }
        }
    }
    paths.sort_by(|a, b| b.at_scale_secs.total_cmp(&a.at_scale_secs));
    paths
}

fn scaling_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, state: &mut State) {
    let tables: Vec<_> = bundle.tables_with(Scaling::NEEDS).collect();
    if tables.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Scaling",
            "scaling curves (axis_value, series, predicted_secs, extrapolated)",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    ui.horizontal(|ui| super::common::pick(ui, "table", &mut state.table, &names));
    let Some(table) = tables.iter().find(|t| t.name == state.table) else {
        return;
    };
    let step = table.name.split('.').next().unwrap_or_default().to_owned();
    let paths = call_paths(bundle, &step, &table.batch);
    if !paths.iter().any(|p| p.name == state.path)
        && let Some(first) = paths.first()
    {
        state.path.clone_from(&first.name);
    }
    let models = bundle.table(&format!("{step}.scaling_models"));
    let formula = |p: &CallPath| -> String {
        match (models, p.model_row) {
            (Some(m), Some(i)) => texts(&m.batch, col::FORMULA)
                .map(|f| f[i].clone())
                .unwrap_or_default(),
            _ => String::new(),
        }
    };
    ui.label(
        "Call paths by their modelled time at 1.5 x the largest size measured: the first will dominate first.",
    );
    egui::ScrollArea::vertical()
        .id_salt("scaling_paths")
        .max_height(180.0)
        .show(ui, |ui| {
            egui::Grid::new("scaling_models").striped(true).show(ui, |ui| {
                for h in ["call path", "at 1.5 x the largest size", "model (Extra-P's notation)"] {
                    ui.strong(h);
                }
                ui.end_row();
                for p in &paths {
                    if ui
                        .selectable_label(state.path == p.name, &p.name)
                        .clicked()
                    {
                        state.path.clone_from(&p.name);
                    }
                    ui.label(format::secs(p.at_scale_secs));
                    ui.add(egui::Label::new(formula(p)).truncate());
                    ui.end_row();
                }
            });
        });
    let Some(path) = paths.iter().find(|p| p.name == state.path) else {
        return;
    };
    ui.separator();
    ui.heading(&path.name);
    ui.add(egui::Label::new(formula(path)).wrap());
    plot_ui(ui, bundle, &step, &table.batch, path);
}

/// One call path's model along its first parameter, as the `scaling_curves` table holds it.
struct Curves {
    axis: Vec<Option<f64>>,
    series: Vec<String>,
    predicted: Vec<Option<f64>>,
    low: Vec<Option<f64>>,
    high: Vec<Option<f64>>,
    extrapolated: Vec<String>,
}

impl Curves {
    fn read(curves: &arrow_array::RecordBatch) -> Self {
        let n = curves.num_rows();
        Self {
            axis: numbers(curves, col::AXIS_VALUE).unwrap_or_default(),
            series: texts(curves, col::SERIES).unwrap_or_default(),
            predicted: numbers(curves, col::PREDICTED_SECS).unwrap_or_default(),
            low: numbers(curves, col::INTERVAL_LOW_SECS).unwrap_or_else(|| vec![None; n]),
            high: numbers(curves, col::INTERVAL_HIGH_SECS).unwrap_or_else(|| vec![None; n]),
            extrapolated: texts(curves, col::EXTRAPOLATED).unwrap_or_default(),
        }
    }

    /// The curve of `rows` (one series): the model's line, its interval as a band (the upper
    /// edge forward, the lower back), and the region beyond the largest fitted size shaded.
    /// Draws the curve of `rows` with its band and extrapolated region; returns the curve's
    /// points.
    fn draw(
        &self,
        plot: &mut egui_plot::PlotUi<'_>,
        rows: &[usize],
        label: &str,
        c: egui::Color32,
    ) -> Vec<[f64; 2]> {
        let at = |v: &[Option<f64>]| -> Vec<[f64; 2]> {
            rows.iter()
                .filter_map(|&i| Some([self.axis[i]?, v[i]?]))
                .collect()
        };
        let line = at(&self.predicted);
        // The curve first: the legend takes each series' colour from it.
        plot.line(egui_plot::Line::new(label, line.clone()).color(c).width(1.5));
        // The band: (x, low, high) where both edges are known; a time is never below 0, so the
        // lower edge stops there.
        let edges: Vec<[f64; 3]> = rows
            .iter()
            .filter_map(|&i| {
                Some([self.axis[i]?, self.low[i]?.max(0.0), self.high[i]?])
            })
            .collect();
        // One quadrilateral per step along the axis: egui fills a polygon as if it were convex,
        // and the band around a curve is not (one polygon of it spills over the curve's bend).
        for quad in band_quads(&edges) {
            plot.polygon(
                egui_plot::Polygon::new(label, quad.to_vec())
                    .fill_color(c.gamma_multiply(0.15))
                    .stroke(egui::Stroke::new(0.0, c)),
            );
        }
        let band: Vec<[f64; 2]> = edges
            .iter()
            .flat_map(|&[x, lo, hi]| [[x, lo], [x, hi]])
            .collect();
        let Some(start) = rows
            .iter()
            .find(|&&i| self.extrapolated[i] == "true")
            .and_then(|&i| self.axis[i])
        else {
            return line;
        };
        let end = line.iter().map(|p| p[0]).fold(start, f64::max);
        let (y0, y1) = line
            .iter()
            .chain(&band)
            .map(|p| p[1])
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                (a.min(y), b.max(y))
            });
        let grey = egui::Color32::from_gray(128);
        if y0.is_finite() && y1.is_finite() {
            plot.polygon(
                egui_plot::Polygon::new(
                    "extrapolated",
                    vec![[start, y0], [end, y0], [end, y1], [start, y1]],
                )
                .fill_color(grey.gamma_multiply(0.12))
                .stroke(egui::Stroke::new(0.0, grey)),
            );
        }
        plot.vline(
            egui_plot::VLine::new("extrapolated", start)
                .color(grey)
                .style(egui_plot::LineStyle::dashed_loose()),
        );
        line
    }
}

/// A band of `(x, low, high)` edges, in order along x, as quadrilaterals between neighbours:
/// each one convex (two vertical sides, low below high), so egui fills it as drawn.
fn band_quads(edges: &[[f64; 3]]) -> Vec<[[f64; 2]; 4]> {
    edges
        .windows(2)
        .map(|pair| {
            let ([x0, lo0, hi0], [x1, lo1, hi1]) = (pair[0], pair[1]);
            [[x0, lo0], [x0, hi0], [x1, hi1], [x1, lo1]]
        })
        .collect()
}

/// The measured configurations of one series (`rows` of `scaling_points`): each one's spread of
/// repetitions as a bar, the fitted ones as filled circles, the held-out one as a diamond.
fn draw_points(
    plot: &mut egui_plot::PlotUi<'_>,
    points: &arrow_array::RecordBatch,
    rows: &[usize],
    label: &str,
    c: egui::Color32,
) -> Vec<[f64; 2]> {
    let axis = numbers(points, col::AXIS_VALUE).unwrap_or_default();
    let mean = numbers(points, col::MEASURED_SECS).unwrap_or_default();
    let min = numbers(points, col::MIN_SECS).unwrap_or_default();
    let max = numbers(points, col::MAX_SECS).unwrap_or_default();
    let fitted = texts(points, col::FITTED).unwrap_or_default();
    let mut drawn = Vec::new();
    for &i in rows {
        if let (Some(x), Some(lo), Some(hi)) = (axis[i], min[i], max[i]) {
            drawn.extend([[x, lo], [x, hi]]);
            plot.line(
                egui_plot::Line::new(label, vec![[x, lo], [x, hi]])
                    .color(c)
                    .width(1.0),
            );
        }
    }
    for held in [true, false] {
        let marks: Vec<[f64; 2]> = rows
            .iter()
            .filter(|&&i| (fitted[i] == "true") == held)
            .filter_map(|&i| Some([axis[i]?, mean[i]?]))
            .collect();
        if marks.is_empty() {
            continue;
        }
        drawn.extend(&marks);
        let (name, shape, colour) = if held {
            (label.to_owned(), egui_plot::MarkerShape::Circle, c)
        } else {
            // A colour of its own: "held out" is not a series.
            ("held out, predicted".to_owned(), egui_plot::MarkerShape::Diamond, HELD_OUT)
        };
        plot.points(
            egui_plot::Points::new(name, marks)
                .color(colour)
                .shape(shape)
                .radius(if held { 3.0 } else { 5.0 })
                .filled(held),
        );
    }
    drawn
}

/// What each parameter of step `step` is, as its report says (the `meanings` of the
/// `scaling_fit` step it validates): (parameter, meaning), none when the pipeline gave none.
fn parameter_meanings(bundle: &LoadedBundle, step: &str) -> Vec<(String, String)> {
    let Some(report) = bundle.table(&format!("{step}.report")) else {
        return Vec::new();
    };
    let b = &report.batch;
    let (Some(title), Some(row), Some(text)) = (
        texts(b, col::TITLE),
        texts(b, col::ROW_LABEL),
        texts(b, col::TEXT),
    ) else {
        return Vec::new();
    };
    (0..title.len())
        .filter(|&i| title[i] == yosoku_tables::report::PARAMETER_MEANINGS_TITLE)
        .map(|i| (row[i].clone(), text[i].clone()))
        .collect()
}

/// The held-out configuration's mark: no series takes this colour.
const HELD_OUT: egui::Color32 = egui::Color32::from_rgb(230, 0, 230);

/// Whether the prediction row named `row` (`device / program / variant / phase`) is of the
/// call path `path`: the same, or, for a prediction beyond every run measured
/// (`mpi_steps_and_ranks`), the whole of which `path` models a part (`variant, per step` or
/// `variant, once`).
fn predicts(row: &str, beyond: bool, path: &str) -> bool {
    if row == path {
        return true;
    }
    let Some((head, phase)) = row.rsplit_once(" / ") else {
        return false;
    };
    // The whole run's prediction is the step's answer: said above every one of its plots.
    if let Some((program, variant)) = head.rsplit_once(" / ")
        && beyond
        && variant == yosoku_tables::rows::WHOLE_RUN
        && path.starts_with(&format!("{program} / "))
    {
        return true;
    }
    beyond
        && path
            .strip_prefix(head)
            .and_then(|rest| rest.strip_prefix(", "))
            .is_some_and(|rest| {
                (rest.starts_with("per ") || rest.starts_with("once"))
                    && rest.ends_with(&format!(" / {phase}"))
            })
}

/// The held-out configuration of the call path `path` in the step's `predictions`: what was measured,
/// what the model fitted without them predicted, and the error, in words; for a step that
/// predicts beyond every run measured, that prediction beside each of its parts' models.
fn held_out_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, step: &str, path: &str) {
    let Some(table) = bundle.table(&format!("{step}.predictions")) else {
        return;
    };
    let b = &table.batch;
    let (Some(held), Some(p), Some(m), Some(e)) = (
        texts(b, col::HELD_OUT),
        numbers(b, col::PREDICTED_SECS),
        numbers(b, col::MEASURED_SECS),
        numbers(b, col::ERROR_PCT),
    ) else {
        return;
    };
    let n = b.num_rows();
    let low = numbers(b, col::INTERVAL_LOW_SECS).unwrap_or_else(|| vec![None; n]);
    let high = numbers(b, col::INTERVAL_HIGH_SECS).unwrap_or_else(|| vec![None; n]);
    let names = path_names(b);
    let validation = texts(b, col::VALIDATION).unwrap_or_else(|| vec![String::new(); n]);
    let beyond = |i: usize| validation[i] == yosoku_tables::rows::BEYOND_MEASURED;
    // `held_out` names the configuration left out of the fit (null when none was).
    for i in (0..n).filter(|&i| !held[i].is_empty() && predicts(&names[i], beyond(i), path)) {
        let (Some(p), Some(m), Some(e)) = (p[i], m[i], e[i]) else {
            continue;
        };
        let interval = low[i]
            .zip(high[i])
            .map(|(lo, hi)| {
                let inside = if (lo..=hi).contains(&m) { "holds" } else { "misses" };
                format!(
                    " (95 %: {} to {}, which {inside} the measurement)",
                    format::secs(lo),
                    format::secs(hi)
                )
            })
            .unwrap_or_default();
        let what = if beyond(i) {
            "Predicted beyond every run measured (once + steps x per step)"
        } else {
            "Held out of the fit"
        };
        ui.colored_label(
            HELD_OUT,
            format!(
                "{what}, {}: measured {}, predicted {}{interval}: error {:+.1} %",
                held[i],
                format::secs(m),
                format::secs(p),
                e
            ),
        );
    }
}

fn plot_ui(
    ui: &mut egui::Ui,
    bundle: &LoadedBundle,
    step: &str,
    curves: &arrow_array::RecordBatch,
    path: &CallPath,
) {
    let curves = Curves::read(curves);
    crate::view::count_drawn(ui, "curves", path.curve_rows.len());
    crate::view::count_drawn(ui, "points", path.point_rows.len());
    let all_series = super::common::distinct(
        &path
            .curve_rows
            .iter()
            .map(|&i| curves.series[i].clone())
            .collect::<Vec<_>>(),
    );
    let points = bundle.table(&format!("{step}.scaling_points"));
    let axis_name = bundle
        .table(&format!("{step}.scaling_models"))
        .and_then(|m| texts(&m.batch, col::PARAMETERS))
        .and_then(|p| p.first().cloned())
        .map(|p| p.split(',').next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    held_out_ui(ui, bundle, step, &path.name);
    let meanings = parameter_meanings(bundle, step);
    let x_label = match meanings.iter().find(|(p, _)| *p == axis_name) {
        Some((_, meaning)) => format!("{axis_name}: {meaning}"),
        None if axis_name.is_empty() => "the model's first parameter".to_owned(),
        None => {
            format!("{axis_name} (the model's first parameter; the series are the others' values)")
        }
    };
    if !meanings.is_empty() {
        let said: Vec<String> = meanings.iter().map(|(p, m)| format!("{p}: {m}")).collect();
        ui.label(format!("Parameters: {}", said.join("; ")));
    }
    let shown = egui_plot::Plot::new("scaling_plot")
        .height(360.0)
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label(x_label)
        .y_axis_label("time (s)")
        .label_formatter(|pos| {
            let (name, at) = match pos {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                egui_plot::HoverPosition::Elsewhere { position } => ("", position),
            };
            Some(format!("{name}\n{:.4}, {}", at.x, format::secs(at.y)))
        })
        .show(ui, |plot| {
            let mut drawn = Vec::new();
            for (k, s) in all_series.iter().enumerate() {
                let c = super::common::kind_colour(k);
                let label = if s.is_empty() { "model" } else { s.as_str() };
                let rows: Vec<usize> = path
                    .curve_rows
                    .iter()
                    .copied()
                    .filter(|&i| &curves.series[i] == s)
                    .collect();
                drawn.extend(curves.draw(plot, &rows, label, c));
                if let Some(points) = points {
                    let p_series = texts(&points.batch, col::SERIES).unwrap_or_default();
                    let mine: Vec<usize> = path
                        .point_rows
                        .iter()
                        .copied()
                        .filter(|&i| &p_series[i] == s)
                        .collect();
                    drawn.extend(draw_points(plot, &points.batch, &mine, label, c));
                }
            }
            drawn
        });
    crate::view::count_outside(ui, "scaling_plot", shown.transform.bounds(), shown.inner);
    ui.label(
        "Bars: the repetitions' spread; hollow diamonds: held out of the fit and predicted; band: the 95 % prediction interval, calibrated on each call path's largest fitted size predicted from the rest (the report's `intervals` row says how); shaded, right of the dashed line: beyond the largest size fitted (extrapolated).",
    );
}

#[cfg(test)]
mod tests {
    use super::{band_quads, predicts};

    /// The band around a curve that bends (here x^2 +- 10 %) is one convex piece per step: a
    /// single polygon of it is not convex, and egui would fill it across the bend.
    #[test]
    fn the_interval_band_is_drawn_in_convex_pieces() {
        let edges: Vec<[f64; 3]> = (1..=20)
            .map(|i| {
                let x = f64::from(i);
                [x, 0.9 * x * x, 1.1 * x * x]
            })
            .collect();
        let quads = band_quads(&edges);
        assert_eq!(quads.len(), 19);
        for q in &quads {
            // Counter-clockwise or clockwise, every turn the same way: convex.
            let turns: Vec<f64> = (0..4)
                .map(|k| {
                    let (a, b, c) = (q[k], q[(k + 1) % 4], q[(k + 2) % 4]);
                    (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])
                })
                .collect();
            assert!(turns.iter().all(|t| *t < 0.0) || turns.iter().all(|t| *t > 0.0), "{q:?}");
        }
        assert!(band_quads(&edges[..1]).is_empty());
    }

    /// A prediction beyond every run measured shows under the models of its parts, and only
    /// there; a held-out prediction under its own call path.
    #[test]
    fn a_prediction_is_shown_beside_its_own_call_path_or_its_parts() {
        let whole = "vm / himeno_mpi / whole run / total";
        assert!(predicts(whole, false, whole));
        for part in ["whole run, per step", "whole run, once"] {
            let path = format!("vm / himeno_mpi / {part} / total");
            assert!(predicts(whole, true, &path), "{part}");
            assert!(!predicts(whole, false, &path), "{part}: held out");
        }
        // The whole run's prediction stands above every plot of its program's parts.
        let part = "vm / himeno_mpi / MPI_Allreduce@himeno_mpi+0x1794, per step / communication";
        assert!(predicts(whole, true, part));
        let allreduce = "vm / himeno_mpi / MPI_Allreduce@himeno_mpi+0x1794 / communication";
        assert!(predicts(allreduce, true, part));
        for other in [
            "vm / himeno_mpi / MPI_Sendrecv, per step / compute",
            "vm / meep / whole run, per step / total",
        ] {
            assert!(!predicts(allreduce, true, other), "{other}");
        }
        assert!(!predicts(whole, true, "vm / meep / whole run, per step / total"));
        assert!(!predicts(whole, false, part));
    }
}
