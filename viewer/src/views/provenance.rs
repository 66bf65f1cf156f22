//! Bundles & provenance: the pipeline, its inputs with their hashes, the plugins, the stages
//! with their timings, what the collectors noted about their inputs, and the figures.

use crate::data::LoadedBundle;
use crate::format;
use crate::view::{Context, View};

/// The bundles and provenance view.
#[derive(Debug)]
pub struct Bundles;

impl View for Bundles {
    const READS_ROWS: bool = false;
    const SLUG: &'static str = "bundles";
    const LABEL: &'static str = "Bundles";
    type State = ();
    type Cache = ();

    fn has_content(bundle: &LoadedBundle) -> bool {
        super::common::has_scoreboard(bundle)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, _: &mut (), _: &mut ()) {
        provenance_ui(ui, cx.bundle);
    }
}

fn provenance_ui(ui: &mut egui::Ui, bundle: &LoadedBundle) {
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.heading(bundle.name());
        ui.label(format!("from {}", bundle.origin));
        let Some(m) = &bundle.manifest else {
            ui.label(format!(
                "{} tables dropped without their manifest: no provenance.",
                bundle.tables.len()
            ));
            return;
        };
        ui.label(&m.pipeline.description);
        egui::Grid::new("pipeline").striped(true).show(ui, |ui| {
            ui.label("pipeline file");
            ui.monospace(&m.pipeline.spec_path);
            ui.end_row();
            ui.label("pipeline sha256");
            format::hash_label(ui, &m.pipeline.spec_sha256);
            ui.end_row();
            ui.label("yosoku");
            ui.label(&m.yosoku_version);
            ui.end_row();
            ui.label("created");
            ui.label(format::date_time(
                m.created_unix_secs,
                crate::platform::local_offset_secs(m.created_unix_secs),
            ))
            .on_hover_text(format!("{} s since 1970-01-01 UTC", m.created_unix_secs));
            ui.end_row();
            ui.label("total wall time");
            ui.label(format::secs(m.total_wall_secs));
            ui.end_row();
        });

        ui.collapsing(format!("Inputs ({})", m.inputs.len()), |ui| {
            egui::Grid::new("inputs").striped(true).show(ui, |ui| {
                for h in ["source", "key", "path", "bytes", "sha256"] {
                    ui.strong(h);
                }
                ui.end_row();
                for i in &m.inputs {
                    ui.label(&i.source);
                    ui.label(&i.key);
                    ui.monospace(&i.path);
                    ui.label(format::count(i.size_bytes));
                    format::hash_label(ui, &i.sha256);
                    ui.end_row();
                }
            });
        });
        ui.collapsing(format!("Plugins ({})", m.plugins.len()), |ui| {
            egui::Grid::new("plugins").striped(true).show(ui, |ui| {
                for h in ["plugin", "version", "ABI", "library"] {
                    ui.strong(h);
                }
                ui.end_row();
                for p in &m.plugins {
                    ui.label(&p.name);
                    ui.label(&p.version);
                    ui.label(p.abi_version.to_string());
                    ui.monospace(&p.library);
                    ui.end_row();
                }
            });
        });
        ui.heading("Stages");
        egui::Grid::new("stages").striped(true).show(ui, |ui| {
            for h in ["stage", "step", "kind", "wall time", "tables"] {
                ui.strong(h);
            }
            ui.end_row();
            for s in &m.stages {
                for step in &s.steps {
                    ui.label(&s.stage);
                    ui.label(&step.id);
                    ui.label(&step.kind);
                    ui.label(format::secs(step.wall_secs));
                    ui.label(step.tables.len().to_string());
                    ui.end_row();
                }
            }
        });
        let notes: Vec<(&str, &str)> = m
            .stages
            .iter()
            .flat_map(|s| &s.steps)
            .flat_map(|step| step.notes.iter().map(|n| (step.id.as_str(), n.as_str())))
            .collect();
        if !notes.is_empty() {
            // What the collectors noted about their inputs (program output skipped, ...).
            ui.heading("Notes");
            for (step, note) in notes {
                ui.label(format!("{step}: {note}"));
            }
        }
        ui.heading("Figures");
        egui::Grid::new("figures").striped(true).show(ui, |ui| {
            for h in ["step", "figure", "value", "published"] {
                ui.strong(h);
            }
            ui.end_row();
            for (step, f) in m.figures() {
                ui.label(step);
                if f.headline {
                    ui.strong(&f.name);
                } else {
                    ui.label(&f.name);
                }
                let unit = f.unit.as_str();
                ui.label(format::with_unit(f.value, unit));
                ui.label(
                    f.reference
                        .map(|r| format::with_unit(r, unit))
                        .unwrap_or_default(),
                );
                ui.end_row();
            }
        });
    });
}
