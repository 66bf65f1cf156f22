//! Widgets and helpers the views share: a view uses another's drawing only through here
//! (a test keeps views from importing each other).

/// A combo box over `options` with its label to its left, keeping `selected` valid (the first
/// option when it is not one).
pub(crate) fn pick(ui: &mut egui::Ui, label: &str, selected: &mut String, options: &[String]) {
    if !options.contains(selected)
        && let Some(first) = options.first()
    {
        selected.clone_from(first);
    }
    let shown = ui.label(label);
    let combo = egui::ComboBox::from_id_salt(shown.id)
        .selected_text(selected.as_str())
        .show_ui(ui, |ui| {
            for o in options {
                let r = ui.selectable_value(selected, o.clone(), o);
                crate::view::publish_hitbox(ui, format!("pick:{label}={o}"), r.rect);
            }
        })
        .response
        .labelled_by(shown.id);
    crate::view::publish_hitbox(ui, format!("pick:{label}"), combo.rect);
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

/// A colour per kind, stable across frames: eight distinct ones, then hues spaced by the golden
/// angle at two lightnesses, so that 30 and more names stay apart.
pub(crate) fn kind_colour(kind: usize) -> egui::Color32 {
    const PALETTE: [egui::Color32; 8] = [
        egui::Color32::from_rgb(66, 133, 244),
        egui::Color32::from_rgb(234, 67, 53),
        egui::Color32::from_rgb(251, 188, 5),
        egui::Color32::from_rgb(52, 168, 83),
        egui::Color32::from_rgb(171, 71, 188),
        egui::Color32::from_rgb(0, 172, 193),
        egui::Color32::from_rgb(255, 112, 67),
        egui::Color32::from_rgb(158, 157, 36),
    ];
    if let Some(c) = PALETTE.get(kind) {
        return *c;
    }
    let hue = (kind as f32 * 0.618_034).fract();
    let value = if (kind / PALETTE.len()).is_multiple_of(2) {
        0.9
    } else {
        0.65
    };
    egui::ecolor::Hsva::new(hue, 0.7, value, 1.0).into()
}

#[cfg(test)]
mod tests {
    /// The kernel trace colours 31 names: each gets its own colour.
    #[test]
    fn forty_kinds_get_forty_colours() {
        let mut colours: Vec<[u8; 4]> = (0..40).map(|k| super::kind_colour(k).to_array()).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), 40);
    }
}
