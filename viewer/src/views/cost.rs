//! Cost breakdown: what each operation and transfer contributes to a predicted time (the CSX600
//! Table 4 view), with the measured time of the same program beside the prediction.

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, Explains, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub case: String,
}

/// The cost breakdown view.
#[derive(Debug)]
pub struct CostBreakdown;

impl View for CostBreakdown {
    const SLUG: &'static str = "cost";
    const LABEL: &'static str = "Cost breakdown";
    const EXPLAINS: Explains = Explains::Rank(0);
    const NEEDS: &'static [&'static str] = &[
        col::PROGRAM,
        col::VARIANT,
        col::COMPONENT,
        col::PREDICTED_SECS,
    ];
    type State = State;
    type Cache = ();

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, _: &mut ()) {
        breakdown_ui(ui, cx.bundle, state);
    }
}

fn breakdown_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, state: &mut State) {
    let tables: Vec<_> = bundle.tables_with(CostBreakdown::NEEDS).collect();
    if tables.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Cost breakdown",
            "components (program, variant, component, predicted_secs)",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    ui.horizontal(|ui| super::common::pick(ui, "breakdown", &mut state.table, &names));
    let Some(table) = tables.iter().find(|t| t.name == state.table) else {
        return;
    };
    let b = &table.batch;
    let program = texts(b, col::PROGRAM).unwrap_or_default();
    let variant = texts(b, col::VARIANT).unwrap_or_default();
    let component = texts(b, col::COMPONENT).unwrap_or_default();
    let secs = numbers(b, col::PREDICTED_SECS).unwrap_or_default();
    let n = b.num_rows();
    let work = numbers(b, col::WORK).unwrap_or_else(|| vec![None; n]);
    let work_unit = texts(b, col::WORK_UNIT).unwrap_or_else(|| vec![String::new(); n]);
    let rate = numbers(b, col::RATE).unwrap_or_else(|| vec![None; n]);
    let rate_unit = texts(b, col::RATE_UNIT).unwrap_or_else(|| vec![String::new(); n]);
    let flags = texts(b, col::FLAGS).unwrap_or_else(|| vec![String::new(); n]);
    let case_of = |i: usize| {
        if variant[i].is_empty() {
            program[i].clone()
        } else {
            format!("{} {}", program[i], variant[i])
        }
    };
    let cases = super::common::distinct(&(0..n).map(case_of).collect::<Vec<_>>());
    ui.horizontal(|ui| super::common::pick(ui, "program", &mut state.case, &cases));
    let rows: Vec<usize> = (0..n).filter(|&i| case_of(i) == state.case).collect();
    let total: f64 = rows.iter().filter_map(|&i| secs[i]).sum();
    ui.heading(format!(
        "{}: {} per execution",
        state.case,
        format::secs(total)
    ));
    ui.horizontal_top(|ui| {
        egui::Grid::new("components").striped(true).show(ui, |ui| {
            for h in ["component", "work", "rate", "predicted", "share", "flags"] {
                ui.strong(h);
            }
            ui.end_row();
            for &i in &rows {
                let s = secs[i].unwrap_or(0.0);
                ui.label(&component[i]);
                ui.label(
                    work[i]
                        .map(|w| format!("{} {}", format::number(w), work_unit[i]))
                        .unwrap_or_default(),
                );
                ui.label(
                    rate[i]
                        .map(|r| format!("{} {}", format::number(r), rate_unit[i]))
                        .unwrap_or_default(),
                );
                ui.label(format::secs(s));
                ui.label(if total > 0.0 {
                    format::percent(100.0 * s / total)
                } else {
                    String::new()
                });
                ui.label(&flags[i]);
                ui.end_row();
            }
        });
        let bars: Vec<egui_plot::Bar> = rows
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                egui_plot::Bar::new(k as f64, secs[i].unwrap_or(0.0)).name(&component[i])
            })
            .collect();
        let names: Vec<String> = rows.iter().map(|&i| component[i].clone()).collect();
        crate::view::count_drawn(ui, "bars", bars.len());
        let ends = crate::view::bar_ends(&bars);
        // The chart takes the room beside the table, so that the components' names fit.
        let width = (ui.available_width() - 8.0).max(360.0);
        let shown = super::axes::category_plot(ui, "cost_bars", &names, width)
            .height(320.0)
            .width(width)
            .x_axis_label("component")
            .y_axis_label("predicted per execution")
            .y_axis_formatter(|mark, _| format::secs(mark.value))
            .show(ui, |plot| {
                plot.bar_chart(egui_plot::BarChart::new("components", bars))
            });
        crate::view::count_outside(ui, "cost_bars", shown.transform.bounds(), ends);
    });

    // The same program's predictions beside its measurements, from any table that has both.
    let (program_name, variant_name) = rows
        .first()
        .map(|&i| (program[i].clone(), variant[i].clone()))
        .unwrap_or_default();
    measured_ui(ui, bundle, &program_name, &variant_name);
}

/// Every prediction of the program `program_name` (variant `variant_name`) beside its
/// measurement, from any table of the bundle that has both.
fn measured_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, program_name: &str, variant_name: &str) {
    ui.heading("Predicted and measured");
    let mut any = false;
    egui::Grid::new("measured").striped(true).show(ui, |ui| {
        for h in [
            "table",
            "model",
            "phase",
            "repetitions",
            "predicted",
            "measured",
            "error",
        ] {
            ui.strong(h);
        }
        ui.end_row();
        for t in bundle.tables_with(&[
            col::PROGRAM,
            col::VARIANT,
            col::PREDICTED_SECS,
            col::MEASURED_SECS,
        ]) {
            let tb = &t.batch;
            let (Some(p), Some(v), Some(pred), Some(meas)) = (
                texts(tb, col::PROGRAM),
                texts(tb, col::VARIANT),
                numbers(tb, col::PREDICTED_SECS),
                numbers(tb, col::MEASURED_SECS),
            ) else {
                continue;
            };
            let m = tb.num_rows();
            let model = texts(tb, col::MODEL).unwrap_or_else(|| vec![String::new(); m]);
            let phase = texts(tb, col::PHASE).unwrap_or_else(|| vec![String::new(); m]);
            let reps = texts(tb, col::REPETITIONS).unwrap_or_else(|| vec![String::new(); m]);
            for i in (0..m).filter(|&i| p[i] == program_name && v[i] == variant_name) {
                any = true;
                ui.label(&t.name);
                ui.label(&model[i]);
                ui.label(&phase[i]);
                ui.label(&reps[i]);
                ui.label(pred[i].map(format::secs).unwrap_or_default());
                ui.label(meas[i].map(format::secs).unwrap_or_default());
                ui.label(match (pred[i], meas[i]) {
                    (Some(a), Some(b)) if b > 0.0 => format!("{:+.2} %", 100.0 * (a - b) / b),
                    _ => String::new(),
                });
                ui.end_row();
            }
        }
    });
    if !any {
        ui.label("No measured time of this program in the bundle.");
    }
}
