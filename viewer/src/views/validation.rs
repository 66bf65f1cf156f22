//! Predicted against measured: a log-log scatter with the y = x line (hover names the device,
//! program and variant), the predicted/measured ratio per program as bars (the papers' figures),
//! and the error table, for one hold-out scheme and model group at a time, broken down by program
//! (the papers' figures) or by device (a model of several GPUs, each held out in turn). Where the
//! rows carry prediction intervals (the transfer models' held-out GPUs), each point gets its
//! interval as a vertical bar and the table says how many measurements fell inside.

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, Explains, StatusContext, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub validation: String,
    pub group: String,
    /// The column the bars and the error table break down by (`program` when empty).
    pub by: String,
}

const ALL: &str = "all";

/// The points of one selection.
#[derive(Debug)]
pub struct Cache {
    key: State,
    /// (log10 measured, log10 predicted) of the rows with both positive.
    points: Vec<[f64; 2]>,
    labels: Vec<String>,
    /// The points of each device, in first-seen order: its name and the indices of its points
    /// (one colour per device in the scatter, a legend entry that hides or shows it).
    devices: Vec<(String, Vec<usize>)>,
    /// Rows whose prediction or measurement cannot go on a log axis.
    off_axis: usize,
    /// How many of `points` the scatter's bounds held when last drawn (a zoom crops them).
    in_view: std::cell::Cell<usize>,
    /// (log10 measured, log10 low, log10 high) of every row with an interval: the scatter draws
    /// at most [`MAX_WHISKERS`] of those in view, evenly spread, at any zoom.
    whiskers: Vec<[f64; 3]>,
    /// The scatter's bounds in the last frame (min x, min y, max x, max y), to pick the whiskers
    /// in view.
    last_bounds: std::cell::Cell<Option<[f64; 4]>>,
    /// Rows predicted with no measurement yet (a forecast): (program index, size, log10
    /// predicted, log10 low, log10 high), low and high equal to predicted without an interval.
    forecasts: Vec<(usize, f64, [f64; 3])>,
    /// The programs of `forecasts`, and what their x axis is.
    forecast_programs: Vec<String>,
    forecast_axis: &'static str,
    /// Per value of the breakdown column: rows, mean predicted/measured, mean, median and max
    /// |error| %.
    pub groups: Vec<GroupErrors>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GroupErrors {
    pub name: String,
    pub n: usize,
    pub mean_ratio: f64,
    pub mean_abs_pct: f64,
    pub median_abs_pct: f64,
    pub max_abs_pct: f64,
    /// Share of the rows with an interval whose measurement lies inside it (None without).
    pub covered_pct: Option<f64>,
}

/// Interval bars drawn at most: beyond a few hundred they hide the points.
const MAX_WHISKERS: usize = 400;

/// The columns errors can be broken down by, when the table has them.
const BREAKDOWNS: &[&str] = &[col::PROGRAM, col::DEVICE, col::VARIANT, BY_DURATION];

/// The breakdown by the measured time's decade (`< 10 µs`, `10 µs to 100 µs`, ...): where errors
/// of short kernels differ from long ones.
const BY_DURATION: &str = "measured duration";

/// The decade of `secs` as a breakdown's name, and its order.
fn duration_decade(secs: f64) -> (i32, String) {
    let k = secs.log10().floor() as i32;
    let (lo, hi) = (10f64.powi(k), 10f64.powi(k + 1));
    (
        k,
        format!("{} to {}", crate::format::secs(lo), crate::format::secs(hi)),
    )
}

/// A variant's size: the product of the numbers in it (`256x768` is 196,608, `8192` is 8,192);
/// none when it holds none.
fn variant_size(variant: &str) -> Option<f64> {
    let numbers: Vec<f64> = variant
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse::<f64>().ok())
        .collect();
    (!numbers.is_empty()).then(|| numbers.iter().product())
}

/// The validation view.
#[derive(Debug)]
pub struct Validation;

impl View for Validation {
    const SLUG: &'static str = "validation";
    const LABEL: &'static str = "Validation";
    const EXPLAINS: Explains = Explains::Rank(4);
    const NEEDS: &'static [&'static str] = &[
        col::PREDICTED_SECS,
        col::MEASURED_SECS,
        col::PROGRAM,
    ];
    type State = State;
    /// The points of the selection drawn last.
    type Cache = Option<Cache>;

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, cache: &mut Option<Cache>) {
        predictions_ui(ui, cx.bundle, state, cache);
    }

    fn status(_: &StatusContext<'_>, state: &State, cache: &Option<Cache>) -> String {
        cache.as_ref().map_or_else(String::new, |c| {
            format!(
                "; points={}; points_in_view={}; forecasts={}; {}={}",
                c.point_count(),
                c.in_view.get(),
                c.forecasts.len(),
                state.by,
                c.groups.len()
            )
        })
    }
}

fn predictions_ui(
    ui: &mut egui::Ui,
    bundle: &LoadedBundle,
    state: &mut State,
    cached: &mut Option<Cache>,
) {
    let tables: Vec<_> = bundle.tables_with(Validation::NEEDS).collect();
    if tables.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Validation",
            "predicted_secs, measured_secs and program",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    // By default the headline result's (picked before the frame), else the last: validation
    // steps come after the fits whose in-sample rows they test.
    if !names.contains(&state.table)
        && let Some(last) = names.last()
    {
        state.table.clone_from(last);
    }
    ui.horizontal(|ui| super::common::pick(ui, "predictions", &mut state.table, &names));
    let Some(table) = tables.iter().find(|t| t.name == state.table) else {
        return;
    };
    let batch = &table.batch;
    let n = batch.num_rows();
    let validation = texts(batch, col::VALIDATION).unwrap_or_else(|| vec![String::new(); n]);
    let group = texts(batch, col::MODEL_GROUP).unwrap_or_else(|| vec![String::new(); n]);
    let validations = super::common::distinct(&validation);
    let mut groups = vec![ALL.to_owned()];
    groups.extend(
        super::common::distinct(&group)
            .into_iter()
            .filter(|g| !g.is_empty()),
    );
    ui.horizontal(|ui| {
        // A selection this table does not offer is dropped, not kept as a filter that leaves
        // nothing.
        if validations.len() > 1 || validations.first().is_some_and(|v| !v.is_empty()) {
            super::common::pick(ui, "hold-out", &mut state.validation, &validations);
        } else {
            state.validation.clear();
        }
        if groups.len() > 1 {
            super::common::pick(ui, "model group", &mut state.group, &groups);
        } else {
            ALL.clone_into(&mut state.group);
        }
        let breakdowns: Vec<String> = BREAKDOWNS
            .iter()
            .filter(|c| **c == BY_DURATION || crate::data::has_columns(batch, &[c]))
            .map(|c| (*c).to_owned())
            .collect();
        if !breakdowns.contains(&state.by) {
            state.by = col::PROGRAM.to_owned();
        }
        if breakdowns.len() > 1 {
            super::common::pick(ui, "errors by", &mut state.by, &breakdowns);
        }
    });
    if cached.as_ref().is_none_or(|c| c.key != *state) {
        *cached = Some(compute(batch, state, &validation, &group));
    }
    let Some(cache) = cached.as_ref() else {
        return;
    };
    if cache.points.is_empty() && cache.off_axis == 0 && cache.forecasts.is_empty() && n > 0 {
        let mut reset = false;
        ui.horizontal(|ui| {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "The selection (hold-out {}, model group {}) leaves none of the table's {} \
                     rows.",
                    state.validation,
                    state.group,
                    format::count(n as u64)
                ),
            );
            reset = ui.button("Reset the selection").clicked();
        });
        if reset {
            validations
                .first()
                .cloned()
                .unwrap_or_default()
                .clone_into(&mut state.validation);
            ALL.clone_into(&mut state.group);
        }
        return;
    }
    // Rows with a measurement; a table of forecasts only has its own picture, which counts them.
    let measured_any = !cache.points.is_empty() || cache.off_axis > 0;
    if measured_any {
        let off_axis = if cache.off_axis > 0 {
            format!(
                " ({} more with a non-positive value, off the log axes)",
                format::count(cache.off_axis as u64)
            )
        } else {
            String::new()
        };
        ui.label(format!(
            "{} predictions{off_axis}",
            format::count(cache.points.len() as u64)
        ));
    }
    // Zoom and scroll belong to the table shown.
    ui.push_id(&state.table, |ui| {
        if measured_any {
            ui.columns(2, |columns| {
                scatter_ui(&mut columns[0], cache);
                ratio_bars_ui(&mut columns[1], cache, &state.by);
            });
            errors_ui(ui, cache, &state.by);
        }
        if !cache.forecasts.is_empty() {
            forecasts_ui(ui, cache);
        }
    });
}

/// Room a time label takes on a log axis (`100 ms` and a margin across; a line of text up).
const X_LABEL_ROOM_PX: f64 = 64.0;
const Y_LABEL_ROOM_PX: f64 = 32.0;

/// The text of a log10 axis mark: the time at every decade, and, across less than two decades,
/// at 2 and 5 times one too (else one label, or none, would show); the other marks are lines.
fn decade_label(mark: egui_plot::GridMark, range: &std::ops::RangeInclusive<f64>) -> String {
    let decade = (mark.value - mark.value.round()).abs() < 1e-9;
    let narrow = range.end() - range.start() < 2.0;
    if decade || (narrow && super::axes::log_mark_is_labelled(mark.value)) {
        crate::format::secs(10f64.powf(mark.value))
    } else {
        String::new()
    }
}

/// Predicted against measured on log axes, with the y = x line, one colour per device (its
/// legend entry hides or shows it); hovering a point names it.
fn scatter_ui(ui: &mut egui::Ui, cache: &Cache) {
    let (lo, hi) = cache
        .points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p[0]).min(p[1]), hi.max(p[0]).max(p[1]))
        });
    let labels = &cache.labels;
    let devices = &cache.devices;
    let shown = egui_plot::Plot::new("predicted_vs_measured")
        .height(360.0)
        .data_aspect(1.0)
        .x_axis_label("measured (log)")
        .y_axis_label("predicted (log)")
        .x_axis_formatter(decade_label)
        .y_axis_formatter(decade_label)
        .x_grid_spacer(super::axes::log_decades_spacer(X_LABEL_ROOM_PX))
        .y_grid_spacer(super::axes::log_decades_spacer(Y_LABEL_ROOM_PX))
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::LeftTop))
        .label_formatter(move |pos| match pos {
            egui_plot::HoverPosition::NearDataPoint {
                plot_name,
                index,
                position,
            } => {
                let row = devices
                    .iter()
                    .find(|(d, _)| device_series(d) == *plot_name)
                    .and_then(|(_, at)| at.get(*index));
                Some(format!(
                    "{}\nmeasured {}\npredicted {}",
                    row.and_then(|r| labels.get(*r)).map(String::as_str).unwrap_or(""),
                    crate::format::secs(10f64.powf(position.x)),
                    crate::format::secs(10f64.powf(position.y)),
                ))
            }
            egui_plot::HoverPosition::Elsewhere { .. } => None,
        })
        .show(ui, |plot| {
            if lo.is_finite() {
                plot.line(egui_plot::Line::new("y = x", vec![[lo, lo], [hi, hi]]).width(1.0));
            }
            let grey = egui::Color32::from_gray(150).gamma_multiply(0.6);
            for w in whiskers_in_view(cache) {
                let bar = egui_plot::Line::new("95 % interval", vec![[w[0], w[1]], [w[0], w[2]]]);
                plot.line(bar.width(1.0).color(grey));
            }
            for (k, (device, at)) in devices.iter().enumerate() {
                let points: Vec<[f64; 2]> = at.iter().map(|&i| cache.points[i]).collect();
                plot.points(
                    egui_plot::Points::new(device_series(device), points)
                        .radius(2.0)
                        .color(super::common::kind_colour(k)),
                );
            }
        });
    let bounds = shown.transform.bounds();
    let (min, max) = (bounds.min(), bounds.max());
    cache.last_bounds.set(Some([min[0], min[1], max[0], max[1]]));
    let inside = |p: &&[f64; 2]| (min[0]..=max[0]).contains(&p[0]) && (min[1]..=max[1]).contains(&p[1]);
    cache.in_view.set(cache.points.iter().filter(inside).count());
    crate::view::count_drawn(ui, "points", cache.in_view.get());
    crate::view::count_outside(ui, "predicted_vs_measured", bounds, cache.points.iter().copied());
    crate::view::publish_hitbox(
        ui,
        "plot:predicted_vs_measured".to_owned(),
        shown.response.rect,
    );
}

/// The whiskers of the rows in the scatter's last bounds (all, before the first frame), at
/// most [`MAX_WHISKERS`] evenly spread: a zoom shows the intervals of the points it shows.
fn whiskers_in_view(cache: &Cache) -> Vec<[f64; 3]> {
    let inside: Vec<[f64; 3]> = match cache.last_bounds.get() {
        Some([x0, y0, x1, y1]) => cache
            .whiskers
            .iter()
            .filter(|w| (x0..=x1).contains(&w[0]) && w[2] >= y0 && w[1] <= y1)
            .copied()
            .collect(),
        None => cache.whiskers.clone(),
    };
    let step = inside.len().div_ceil(MAX_WHISKERS).max(1);
    inside.into_iter().step_by(step).collect()
}

/// Forecasts (rows predicted, not measured yet) over their size, one colour per program, each
/// with its 95 % interval as a whisker; log axes.
fn forecasts_ui(ui: &mut egui::Ui, cache: &Cache) {
    ui.heading(format!(
        "{} forecasts without a measurement yet",
        format::count(cache.forecasts.len() as u64)
    ));
    crate::view::count_drawn(ui, "forecasts", cache.forecasts.len());
    let log_x = cache.forecasts.iter().all(|(_, x, _)| *x > 0.0);
    let x_of = move |x: f64| if log_x { x.log10() } else { x };
    let shown = egui_plot::Plot::new("forecasts")
        .height(320.0)
        .x_axis_label(if log_x {
            format!("{} (log)", cache.forecast_axis)
        } else {
            cache.forecast_axis.to_owned()
        })
        .y_axis_label("predicted (log)")
        .y_axis_formatter(decade_label)
        .y_grid_spacer(super::axes::log_decades_spacer(Y_LABEL_ROOM_PX))
        .x_axis_formatter(move |mark, _| {
            if log_x {
                format::number(10f64.powf(mark.value))
            } else {
                format::number(mark.value)
            }
        })
        .legend(egui_plot::Legend::default().position(egui_plot::Corner::LeftTop))
        .show(ui, |plot| {
            let grey = egui::Color32::from_gray(150).gamma_multiply(0.6);
            let step = cache.forecasts.len().div_ceil(MAX_WHISKERS).max(1);
            for (_, x, [_, lo, hi]) in cache.forecasts.iter().step_by(step) {
                let x = x_of(*x);
                plot.line(egui_plot::Line::new("95 % interval", vec![[x, *lo], [x, *hi]]).color(grey));
            }
            for (k, name) in cache.forecast_programs.iter().enumerate() {
                let points: Vec<[f64; 2]> = cache
                    .forecasts
                    .iter()
                    .filter(|(p, ..)| *p == k)
                    .map(|(_, x, [p, ..])| [x_of(*x), *p])
                    .collect();
                plot.points(
                    egui_plot::Points::new(name.as_str(), points)
                        .radius(2.0)
                        .color(super::common::kind_colour(k)),
                );
            }
        });
    let drawn = cache.forecasts.iter().map(|(_, x, [p, ..])| [x_of(*x), *p]);
    crate::view::count_outside(ui, "forecasts", shown.transform.bounds(), drawn);
}

/// A device's name as its series in the scatter (a series needs a name to be in the legend).
fn device_series(device: &str) -> String {
    if device.is_empty() {
        "predictions".to_owned()
    } else {
        device.to_owned()
    }
}

/// The mean predicted / measured of each value of the breakdown column `by`, as bars that start
/// at 1 (a perfect prediction): over-predictions rise from it, under-predictions hang below.
fn ratio_bars_ui(ui: &mut egui::Ui, cache: &Cache, by: &str) {
    let bars: Vec<egui_plot::Bar> = cache
        .groups
        .iter()
        .enumerate()
        .map(|(i, p)| {
            egui_plot::Bar::new(i as f64, p.mean_ratio - 1.0)
                .base_offset(1.0)
                .name(format!("{}: {:.3}", p.name, p.mean_ratio))
                .width(0.7)
        })
        .collect();
    let names: Vec<String> = cache.groups.iter().map(|p| p.name.clone()).collect();
    crate::view::count_drawn(ui, "bars", bars.len());
    let ends = crate::view::bar_ends(&bars);
    let width = ui.available_width();
    let shown = super::axes::category_plot(ui, "ratio_per_group", &names, width)
        .height(360.0)
        .x_axis_label(by)
        .y_axis_label("mean predicted / measured")
        .show(ui, |plot| {
            plot.bar_chart(egui_plot::BarChart::new("predicted / measured", bars));
            plot.hline(egui_plot::HLine::new("1.0", 1.0).width(1.0));
        });
    crate::view::count_outside(ui, "ratio_per_group", shown.transform.bounds(), ends);
}

/// The errors of each value of the breakdown column `by`.
fn errors_ui(ui: &mut egui::Ui, cache: &Cache, by: &str) {
    ui.heading(format!("Errors per {by}"));
    egui::Grid::new("errors").striped(true).show(ui, |ui| {
        for h in [
            by,
            "n",
            "mean predicted / measured",
            "mean |error|",
            "median |error|",
            "max |error|",
            "in interval",
        ] {
            ui.strong(h);
        }
        ui.end_row();
        for p in &cache.groups {
            ui.label(&p.name);
            ui.label(format::count(p.n as u64));
            ui.label(format::number(p.mean_ratio));
            ui.label(format::percent(p.mean_abs_pct));
            ui.label(format::percent(p.median_abs_pct));
            ui.label(format::percent(p.max_abs_pct));
            ui.label(p.covered_pct.map_or("-".to_owned(), format::percent));
            ui.end_row();
        }
    });
}

impl Cache {
    pub fn point_count(&self) -> usize {
        self.points.len()
    }
}

/// One value of the breakdown column: its name, predicted / measured ratios, |errors| and (rows
/// with an interval, rows inside it).
type Breakdown = (String, Vec<f64>, Vec<f64>, (usize, usize));

fn compute(
    batch: &arrow_array::RecordBatch,
    state: &State,
    validation: &[String],
    group: &[String],
) -> Cache {
    let predicted = numbers(batch, col::PREDICTED_SECS).unwrap_or_default();
    let measured = numbers(batch, col::MEASURED_SECS).unwrap_or_default();
    let program = texts(batch, col::PROGRAM).unwrap_or_default();
    let n = batch.num_rows();
    let device = texts(batch, col::DEVICE).unwrap_or_else(|| vec![String::new(); n]);
    let variant = texts(batch, col::VARIANT).unwrap_or_else(|| vec![String::new(); n]);
    let low = numbers(batch, col::INTERVAL_LOW_SECS).unwrap_or_else(|| vec![None; n]);
    let high = numbers(batch, col::INTERVAL_HIGH_SECS).unwrap_or_else(|| vec![None; n]);
    let (mut points, mut labels, mut off_axis) = (Vec::new(), Vec::new(), 0);
    let mut whiskers = Vec::new();
    let mut devices: Vec<(String, Vec<usize>)> = Vec::new();
    let by_duration = state.by == BY_DURATION;
    let key = texts(batch, &state.by).unwrap_or_else(|| program.clone());
    let mut decades: Vec<(i32, String)> = Vec::new();
    let (mut forecasts, mut forecast_programs) = (Vec::new(), Vec::<String>::new());
    let sizes: Vec<Option<f64>> = variant.iter().map(|v| variant_size(v)).collect();
    let sized = sizes.iter().all(Option::is_some);
    let mut per_key: Vec<Breakdown> = Vec::new();
    for i in 0..n {
        if (!state.validation.is_empty() && validation[i] != state.validation)
            || (state.group != ALL && !state.group.is_empty() && group[i] != state.group)
        {
            continue;
        }
        let (Some(p), Some(m)) = (predicted[i], measured[i]) else {
            if let Some(p) = predicted[i].filter(|p| *p > 0.0 && measured[i].is_none()) {
                let at = match forecast_programs.iter().position(|x| *x == program[i]) {
                    Some(at) => at,
                    None => {
                        forecast_programs.push(program[i].clone());
                        forecast_programs.len() - 1
                    }
                };
                let size = if sized { sizes[i].unwrap_or(0.0) } else { forecasts.len() as f64 };
                let (lo, hi) = low[i].zip(high[i]).filter(|(lo, _)| *lo > 0.0).unwrap_or((p, p));
                forecasts.push((at, size, [p.log10(), lo.log10(), hi.log10()]));
            }
            continue;
        };
        let interval = low[i].zip(high[i]);
        if p > 0.0 && m > 0.0 && p.is_finite() {
            match devices.iter_mut().find(|(d, _)| *d == device[i]) {
                Some((_, at)) => at.push(points.len()),
                None => devices.push((device[i].clone(), vec![points.len()])),
            }
            points.push([m.log10(), p.log10()]);
            labels.push(format!("{} / {} / {}", device[i], program[i], variant[i]));
            if let Some((lo, hi)) = interval.filter(|(lo, hi)| *lo > 0.0 && hi.is_finite()) {
                whiskers.push([m.log10(), lo.log10(), hi.log10()]);
            }
        } else {
            off_axis += 1;
        }
        let name = if by_duration {
            let (k, name) = duration_decade(m);
            if !decades.iter().any(|(d, _)| *d == k) {
                decades.push((k, name.clone()));
            }
            name
        } else {
            key[i].clone()
        };
        let slot = match per_key.iter().position(|(n, ..)| *n == name) {
            Some(s) => s,
            None => {
                per_key.push((name, Vec::new(), Vec::new(), (0, 0)));
                per_key.len() - 1
            }
        };
        per_key[slot].1.push(p / m);
        per_key[slot].2.push(100.0 * (p - m).abs() / m);
        if let Some((lo, hi)) = interval {
            per_key[slot].3.0 += 1;
            per_key[slot].3.1 += usize::from(lo <= m && m <= hi);
        }
    }
    // Decades from the shortest up.
    decades.sort_unstable();
    per_key.sort_by_key(|(name, ..)| decades.iter().position(|(_, d)| d == name));
    let groups = per_key
        .into_iter()
        .map(|(name, ratios, mut errors, (with, inside))| {
            errors.sort_by(f64::total_cmp);
            let n = errors.len();
            let median = if n % 2 == 1 {
                errors[n / 2]
            } else {
                0.5 * (errors[n / 2 - 1] + errors[n / 2])
            };
            GroupErrors {
                name,
                n,
                mean_ratio: ratios.iter().sum::<f64>() / n as f64,
                mean_abs_pct: errors.iter().sum::<f64>() / n as f64,
                median_abs_pct: median,
                max_abs_pct: errors[n - 1],
                covered_pct: (with > 0).then(|| 100.0 * inside as f64 / with as f64),
            }
        })
        .collect();
    Cache {
        key: state.clone(),
        points,
        labels,
        devices,
        off_axis,
        in_view: std::cell::Cell::new(0),
        whiskers,
        last_bounds: std::cell::Cell::new(None),
        forecasts,
        forecast_programs,
        forecast_axis: if sized {
            "size (the numbers of the variant multiplied)"
        } else {
            "forecast (order in the table)"
        },
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log axis labels every decade; across less than two decades, its finer marks too.
    /// A variant's size is the product of its numbers; a duration's decade names its bounds.
    #[test]
    fn sizes_and_decades() {
        assert_eq!(variant_size("256x768"), Some(196_608.0));
        assert_eq!(variant_size("8192"), Some(8192.0));
        assert_eq!(variant_size("large"), None);
        assert_eq!(duration_decade(4.2e-6), (-6, "1 µs to 10 µs".to_owned()));
    }

    #[test]
    fn log_axes_label_every_decade() {
        let mark = |value: f64| egui_plot::GridMark {
            value,
            step_size: 0.1,
        };
        let wide = -4.0..=0.0;
        assert_eq!(decade_label(mark(0.0), &wide), "1 s");
        assert_eq!(decade_label(mark(-3.0), &wide), "1 ms");
        assert_eq!(decade_label(mark(-2.7), &wide), "");
        // Across less than two decades, 2 and 5 times a decade too, and nothing odder.
        let narrow = -3.1..=-2.0;
        assert_eq!(decade_label(mark(-3.0 + 2f64.log10()), &narrow), "2 ms");
        assert_eq!(decade_label(mark(-3.0 + 5f64.log10()), &narrow), "5 ms");
        assert_eq!(decade_label(mark(-3.0 + 3f64.log10()), &narrow), "");
        assert_eq!(decade_label(mark(-2.9), &narrow), "");
    }
}
