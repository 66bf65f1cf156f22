//! The views. Each one works on any bundle whose tables have the columns it needs, so new
//! plugins and pipelines light up without viewer changes.

pub mod cost;
pub mod gantt;
pub mod model;
pub mod provenance;
pub mod ranks;
pub mod tables;
pub mod throughput;
pub mod trace;
pub mod validation;

/// Derived data kept between frames, dropped when the bundle changes.
#[derive(Debug, Default)]
pub struct Caches {
    pub(crate) tables: Option<tables::Cache>,
    pub(crate) validation: Option<validation::Cache>,
    pub(crate) gantt: Option<gantt::Cache>,
    pub(crate) trace_frame: Option<trace::TraceFrame>,
}

/// A combo box over `options`, keeping `selected` valid (the first option when it is not one).
pub(crate) fn pick(ui: &mut egui::Ui, label: &str, selected: &mut String, options: &[String]) {
    if !options.contains(selected)
        && let Some(first) = options.first()
    {
        selected.clone_from(first);
    }
    egui::ComboBox::from_label(label)
        .selected_text(selected.as_str())
        .show_ui(ui, |ui| {
            for o in options {
                ui.selectable_value(selected, o.clone(), o);
            }
        });
}

/// Distinct values in first-seen order.
pub(crate) fn distinct(values: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for v in values {
        if seen.insert(v.as_str()) {
            out.push(v.clone());
        }
    }
    out
}

/// Says that no table of the bundle has what a view needs.
pub(crate) fn nothing_to_show(ui: &mut egui::Ui, view: &str, needs: &str) {
    ui.heading(view);
    ui.label(format!("This bundle has no table with {needs}."));
}
