//! Throughput: candidates of one group side by side (the vector widths of a copy on one device,
//! the GPUs running one kernel), as bars of work per second at the size they were compared at,
//! the fastest marked, and a grid with the peak over all sizes. A table qualifies with `group`,
//! `candidate`, `rate` and `rate_unit` (a pipeline's `throughputs`).

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, Explains, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub group: String,
}

/// The throughput view.
#[derive(Debug)]
pub struct Throughput;

impl View for Throughput {
    const SLUG: &'static str = "throughput";
    const LABEL: &'static str = "Throughput";
    const EXPLAINS: Explains = Explains::Rank(3);
    const NEEDS: &'static [&'static str] = &[
        col::GROUP,
        col::CANDIDATE,
        col::RATE,
        col::RATE_UNIT,
    ];
    type State = State;
    type Cache = ();

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, _: &mut ()) {
        candidates_ui(ui, cx.bundle, state);
    }
}

/// The scale a rate unit is shown in: GB/s for bytes/s, G/s for counts per second.
fn scale(unit: &str) -> (f64, String) {
    match unit {
        "bytes/s" => (1e9, "GB/s".to_owned()),
        "count/s" | "/s" => (1e9, "G/s".to_owned()),
        u => (1.0, u.to_owned()),
    }
}

fn candidates_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, state: &mut State) {
    let tables: Vec<_> = bundle.tables_with(Throughput::NEEDS).collect();
    if tables.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Throughput",
            "candidates and rates (group, candidate, rate, rate_unit)",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    ui.horizontal(|ui| super::common::pick(ui, "table", &mut state.table, &names));
    let Some(table) = tables.iter().find(|t| t.name == state.table) else {
        return;
    };
    let b = &table.batch;
    let n = b.num_rows();
    let group = texts(b, col::GROUP).unwrap_or_default();
    let candidate = texts(b, col::CANDIDATE).unwrap_or_default();
    let rate = numbers(b, col::RATE).unwrap_or_default();
    let unit = texts(b, col::RATE_UNIT).unwrap_or_default();
    let peak = numbers(b, col::PEAK_RATE).unwrap_or_else(|| vec![None; n]);
    let relative = numbers(b, col::RELATIVE_TO_BEST).unwrap_or_else(|| vec![None; n]);
    let best = texts(b, col::BEST).unwrap_or_else(|| vec![String::new(); n]);
    let work = numbers(b, col::WORK).unwrap_or_else(|| vec![None; n]);
    let work_unit = texts(b, col::WORK_UNIT).unwrap_or_else(|| vec![String::new(); n]);
    let groups = super::common::distinct(&group);
    ui.horizontal(|ui| super::common::pick(ui, "group", &mut state.group, &groups));
    let rows: Vec<usize> = (0..n).filter(|&i| group[i] == state.group).collect();
    let Some(&first) = rows.first() else {
        return;
    };
    let (factor, shown_unit) = scale(&unit[first]);
    let fastest = rows
        .iter()
        .find(|&&i| best[i] == "true")
        .map(|&i| candidate[i].clone());
    ui.heading(match &fastest {
        Some(f) => format!("{}: fastest {f}", state.group),
        None => state.group.clone(),
    });
    if let Some(w) = work[first] {
        ui.label(format!(
            "compared at {} {} (the largest size every candidate was measured at)",
            format::number(w),
            work_unit[first]
        ));
    }
    ui.horizontal_top(|ui| {
        egui::Grid::new("throughputs").striped(true).show(ui, |ui| {
            for h in ["candidate", "rate", "peak", "of the fastest"] {
                ui.strong(h);
            }
            ui.end_row();
            for &i in &rows {
                let name = if best[i] == "true" {
                    format!("{} (fastest)", candidate[i])
                } else {
                    candidate[i].clone()
                };
                ui.label(name);
                ui.label(
                    rate[i]
                        .map(|r| format!("{} {shown_unit}", format::number(r / factor)))
                        .unwrap_or_default(),
                );
                ui.label(
                    peak[i]
                        .map(|r| format!("{} {shown_unit}", format::number(r / factor)))
                        .unwrap_or_default(),
                );
                ui.label(
                    relative[i]
                        .map(|r| format::percent(100.0 * r))
                        .unwrap_or_default(),
                );
                ui.end_row();
            }
        });
        let bars: Vec<egui_plot::Bar> = rows
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let bar = egui_plot::Bar::new(k as f64, rate[i].unwrap_or(0.0) / factor)
                    .name(&candidate[i]);
                if best[i] == "true" {
                    bar.fill(egui::Color32::from_rgb(230, 150, 40))
                } else {
                    bar
                }
            })
            .collect();
        let labels: Vec<String> = rows.iter().map(|&i| candidate[i].clone()).collect();
        crate::view::count_drawn(ui, "bars", bars.len());
        let ends = crate::view::bar_ends(&bars);
        let shown = super::axes::category_plot(ui, "throughput_bars", &labels, 460.0)
            .height(280.0)
            .width(460.0)
            .x_axis_label("candidate")
            .y_axis_label(shown_unit.clone())
            .show(ui, |plot| {
                plot.bar_chart(egui_plot::BarChart::new("rate", bars))
            });
        crate::view::count_outside(ui, "throughput_bars", shown.transform.bounds(), ends);
    });
}
