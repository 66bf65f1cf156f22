//! A fitted model: its summary (R^2, adjusted R^2, condition number, dropped columns, flags),
//! its coefficients, and for stepwise fits the selection order with adjusted R^2 at every step.

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub model: String,
    pub group: String,
}

const SUMMARY_COLUMNS: &[&str] = &[col::MODEL, col::MODEL_GROUP, col::R2, col::ADJUSTED_R2];

/// The model view.
#[derive(Debug)]
pub struct Model;

impl View for Model {
    const SLUG: &'static str = "model";
    const LABEL: &'static str = "Model";
    /// A model summary.
    const NEEDS: &'static [&'static str] = SUMMARY_COLUMNS;
    type State = State;
    type Cache = Option<Flagged>;

    /// The view shows a model (the namespace of its summary), not a table: on its first look at
    /// a bundle, the model of the pipeline's headline result.
    fn pick_default(bundle: &LoadedBundle, state: &mut State) {
        let names = model_names(bundle);
        if !names.contains(&state.model)
            && let Some(model) = headline_model(bundle, &names)
        {
            state.model = model;
        }
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, cache: &mut Option<Flagged>) {
        model_ui(ui, cx.bundle, state, cache);
    }
}

/// The flags of the model and group shown, counted once per choice: the counts read every row
/// of the bundle's predictions (a million in some), too many to read every frame.
#[derive(Debug, Default)]
pub struct Flagged {
    /// The (model, group) counted.
    chosen: (String, String),
    /// A line per table of predictions with flags: the table, then each flag with its count.
    lines: Vec<String>,
}

/// The models of a bundle: the namespaces of its model summaries.
fn model_names(bundle: &LoadedBundle) -> Vec<String> {
    bundle
        .tables_with(SUMMARY_COLUMNS)
        .map(|t| namespace(&t.name).to_owned())
        .collect()
}

/// The model of the pipeline's headline result: a headline step that is one of `models`, else
/// the model a headline step's predictions name (a cross-validation names the fit it re-runs).
fn headline_model(bundle: &LoadedBundle, models: &[String]) -> Option<String> {
    let steps = bundle.headline_steps();
    if let Some(step) = steps.iter().find(|s| models.contains(s)) {
        return Some(step.clone());
    }
    steps.iter().find_map(|step| {
        let table = bundle
            .tables
            .iter()
            .find(|t| t.name == format!("{step}.predictions"))?;
        texts(&table.batch, col::MODEL)?
            .into_iter()
            .find(|m| models.contains(m))
    })
}

fn model_ui(
    ui: &mut egui::Ui,
    bundle: &LoadedBundle,
    state: &mut State,
    cache: &mut Option<Flagged>,
) {
    let summaries: Vec<_> = bundle.tables_with(SUMMARY_COLUMNS).collect();
    if summaries.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Model",
            "model summaries (model, model_group, r2, adjusted_r2)",
        );
        return;
    }
    let names = model_names(bundle);
    ui.horizontal(|ui| super::common::pick(ui, "model", &mut state.model, &names));
    let Some(summary) = summaries.iter().find(|t| namespace(&t.name) == state.model) else {
        return;
    };
    let batch = &summary.batch;
    let groups = texts(batch, col::MODEL_GROUP).unwrap_or_default();
    let group_names: Vec<String> = groups
        .iter()
        .map(|g| {
            if g.is_empty() {
                "all".to_owned()
            } else {
                g.clone()
            }
        })
        .collect();
    ui.horizontal(|ui| super::common::pick(ui, "group", &mut state.group, &group_names));
    let Some(row) = group_names.iter().position(|g| *g == state.group) else {
        return;
    };
    let group = &groups[row];

    ui.heading(format!("{} — {}", state.model, state.group));
    crate::view::count_drawn(ui, "models", 1);
    summary_ui(ui, batch, row);
    let chosen = (state.model.clone(), group.clone());
    let flagged = match cache.take() {
        Some(f) if f.chosen == chosen => cache.insert(f),
        _ => cache.insert(Flagged {
            lines: flag_lines(bundle, &chosen.0, &chosen.1),
            chosen,
        }),
    };
    for line in &flagged.lines {
        ui.colored_label(ui.visuals().warn_fg_color, line);
    }
    let prefix = format!("{}.", state.model);
    if let Some(coefficients) = bundle.tables.iter().find(|t| {
        t.name.starts_with(&prefix)
            && crate::data::has_columns(&t.batch, &[col::TERM, col::ESTIMATE])
    }) {
        coefficients_ui(ui, &coefficients.batch, group);
    }
    if let Some(path) = bundle.tables.iter().find(|t| {
        t.name.starts_with(&prefix)
            && crate::data::has_columns(&t.batch, &[col::STEP, col::ACTION, col::TERM])
    }) {
        selection_path_ui(ui, &path.batch, group);
    }
}

/// Row `row` of a model summary, a field a line (flags in the warning colour).
fn summary_ui(ui: &mut egui::Ui, batch: &arrow_array::RecordBatch, row: usize) {
    egui::Grid::new("summary").striped(true).show(ui, |ui| {
        for field in batch.schema().fields() {
            let name = field.name();
            if name == col::MODEL || name == col::MODEL_GROUP {
                continue;
            }
            let text = crate::data::cell_text(
                batch
                    .column_by_name(name)
                    .map(|a| a.as_ref())
                    .unwrap_or(&arrow_array::NullArray::new(0)),
                row,
            );
            ui.label(name);
            if name == col::FLAGS && !text.is_empty() {
                ui.colored_label(ui.visuals().warn_fg_color, text);
            } else {
                ui.label(text);
            }
            ui.end_row();
        }
    });
}

/// Problems the validation found in the predictions of `model` (its group `group`), counted by
/// flag, a line for each table of predictions the bundle has.
fn flag_lines(bundle: &LoadedBundle, model: &str, group: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for t in bundle.tables_with(&[col::MODEL, col::FLAGS, col::PREDICTED_SECS]) {
        let (Some(models), Some(flags)) =
            (texts(&t.batch, col::MODEL), texts(&t.batch, col::FLAGS))
        else {
            continue;
        };
        let group_of = texts(&t.batch, col::MODEL_GROUP);
        let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
        for (i, f) in flags.iter().enumerate() {
            let same_group = group_of.as_ref().is_none_or(|g| g[i] == *group);
            if models[i] == model && same_group {
                for flag in f.split(';').filter(|s| !s.is_empty()) {
                    *counts.entry(flag).or_default() += 1;
                }
            }
        }
        if !counts.is_empty() {
            let list: Vec<String> = counts.iter().map(|(f, n)| format!("{f}: {n}")).collect();
            lines.push(format!("{}: flagged predictions — {}", t.name, list.join(", ")));
        }
    }
    lines
}

/// The coefficients of the model's group `group`: estimates, standardised estimates (when the
/// bundle has them), standard errors, t and p values, status.
fn coefficients_ui(ui: &mut egui::Ui, b: &arrow_array::RecordBatch, group: &str) {
    ui.heading("Coefficients");
    let g = texts(b, col::MODEL_GROUP).unwrap_or_default();
    let term = texts(b, col::TERM).unwrap_or_default();
    let estimate = numbers(b, col::ESTIMATE).unwrap_or_default();
    // Bundles written before the column existed lack it: the column is then left out.
    let standardised = numbers(b, col::STANDARDISED_ESTIMATE);
    let se = numbers(b, col::STD_ERROR).unwrap_or_default();
    let t_value = numbers(b, col::T_VALUE).unwrap_or_default();
    let p = numbers(b, col::P_VALUE).unwrap_or_default();
    let status = texts(b, col::STATUS).unwrap_or_default();
    let show =
        |v: Option<&Option<f64>>| v.copied().flatten().map(format::number).unwrap_or_default();
    egui::ScrollArea::vertical()
        .id_salt("coefficients")
        .max_height(260.0)
        .show(ui, |ui| {
            egui::Grid::new("coefficients")
                .striped(true)
                .show(ui, |ui| {
                    ui.strong("term");
                    ui.strong("estimate");
                    if standardised.is_some() {
                        ui.strong("standardised");
                    }
                    for h in ["std. error", "t", "p", "status"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for i in (0..term.len()).filter(|&i| g.get(i).is_some_and(|x| x == group)) {
                        crate::view::count_drawn(ui, "terms", 1);
                        ui.label(&term[i]);
                        ui.label(show(estimate.get(i)));
                        if let Some(z) = &standardised {
                            ui.label(show(z.get(i)));
                        }
                        ui.label(show(se.get(i)));
                        ui.label(show(t_value.get(i)));
                        ui.label(show(p.get(i)));
                        ui.label(status.get(i).cloned().unwrap_or_default());
                        ui.end_row();
                    }
                });
        });
    ui.small("Estimates are on the scale the fit saw (z-scores after a zscore step, ln(1 + x) with log features); standardised = estimate x sd(column) / sd(target), comparable across terms; |t| ranks the terms by evidence.");
}

/// A stepwise fit's selection path in group `group`: each step's action, term, R^2 and adjusted
/// R^2, beside a plot of adjusted R^2 by step.
fn selection_path_ui(ui: &mut egui::Ui, b: &arrow_array::RecordBatch, group: &str) {
    ui.heading("Selection path");
    let g = texts(b, col::MODEL_GROUP).unwrap_or_default();
    let step = numbers(b, col::STEP).unwrap_or_default();
    let action = texts(b, col::ACTION).unwrap_or_default();
    let term = texts(b, col::TERM).unwrap_or_default();
    let r2 = numbers(b, col::R2).unwrap_or_default();
    let adj = numbers(b, col::ADJUSTED_R2).unwrap_or_default();
    let rows: Vec<usize> = (0..step.len())
        .filter(|&i| g.get(i).is_some_and(|x| x == group))
        .collect();
    ui.horizontal(|ui| {
        egui::Grid::new("selection_path")
            .striped(true)
            .show(ui, |ui| {
                for h in ["step", "action", "term", "R²", "adjusted R²"] {
                    ui.strong(h);
                }
                ui.end_row();
                for &i in &rows {
                    ui.label(step[i].map(|s| s.to_string()).unwrap_or_default());
                    ui.label(&action[i]);
                    ui.label(&term[i]);
                    ui.label(r2[i].map(format::number).unwrap_or_default());
                    ui.label(adj[i].map(format::number).unwrap_or_default());
                    ui.end_row();
                }
            });
        let points: Vec<[f64; 2]> = rows
            .iter()
            .filter_map(|&i| Some([step[i]?, adj[i]?]))
            .collect();
        crate::view::count_drawn(ui, "points", points.len());
        let shown = egui_plot::Plot::new("adjusted_r2_by_step")
            .height(220.0)
            .width(360.0)
            .x_axis_label("step")
            .y_axis_label("adjusted R²")
            .show(ui, |plot| {
                plot.line(egui_plot::Line::new("adjusted R²", points.clone()));
                plot.points(egui_plot::Points::new("steps", points.clone()).radius(3.0));
            });
        crate::view::count_outside(ui, "adjusted_r2_by_step", shown.transform.bounds(), points);
    });
}

/// `fit` of `fit.model_summary`.
fn namespace(table: &str) -> &str {
    table.rsplit_once('.').map_or(table, |(ns, _)| ns)
}
