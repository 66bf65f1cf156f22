//! Widgets and helpers the views share.

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

/// Whether the bundle has a scoreboard: the views of every bundle (home, provenance, tables) are
/// looked at, in the desktop tour, on the first bundle that has one.
pub(crate) fn has_scoreboard(bundle: &crate::data::LoadedBundle) -> bool {
    bundle
        .manifest
        .as_ref()
        .is_some_and(|m| !m.scoreboard.is_empty())
}
