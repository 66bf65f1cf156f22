//! The views. Each one works on any bundle whose tables have the columns it needs, so new
//! plugins and pipelines light up without viewer changes.

pub mod axes;
pub mod cost;
pub mod gantt;
pub mod home;
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

/// On a view's first look at a bundle (`selected` is none of `names`): the table of the
/// pipeline's headline result — the first scoreboard row's step, else the first step with a
/// headline figure — when it is one of `names`.
pub(crate) fn default_table(bundle: &crate::LoadedBundle, selected: &mut String, names: &[String]) {
    if names.contains(selected) {
        return;
    }
    if let Some(name) = bundle.headline_steps().iter().find_map(|step| {
        bundle
            .step_tables(step)
            .find(|t| names.contains(&t.name))
            .map(|t| t.name.clone())
    }) {
        *selected = name;
    }
}

/// The first bundle whose tables `tab` draws (for the home, the provenance and the table views:
/// the first with a scoreboard); none when no bundle has anything for it. Where a tour of the
/// views looks at each one.
pub fn bundle_showing(bundles: &[crate::LoadedBundle], tab: crate::Tab) -> Option<String> {
    use crate::Tab;
    let any_table = |b: &crate::LoadedBundle, shows: fn(&arrow_array::RecordBatch) -> bool| {
        b.tables.iter().any(|t| shows(&t.batch))
    };
    let found = bundles.iter().find(|b| match tab {
        Tab::CostBreakdown => any_table(b, cost::shows),
        Tab::RankBars => any_table(b, ranks::shows),
        Tab::Throughput => any_table(b, throughput::shows),
        Tab::Validation => any_table(b, validation::shows),
        Tab::Gantt => {
            !b.traces.is_empty() || any_table(b, |batch| gantt::time_columns(batch).is_some())
        }
        Tab::Model => any_table(b, model::shows),
        Tab::Home | Tab::Bundles | Tab::Tables => b
            .manifest
            .as_ref()
            .is_some_and(|m| !m.scoreboard.is_empty()),
    });
    found.map(crate::LoadedBundle::name)
}
