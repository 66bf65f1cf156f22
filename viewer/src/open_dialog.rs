//! The desktop's "open" dialog. Bundles are directories, so this is a directory browser that
//! marks the directories holding a `manifest.json` (and zipped bundles) and opens one; drawn by
//! egui itself, so it needs no GTK or desktop portal and works the same on every platform.

use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct OpenDialog {
    pub is_open: bool,
    /// The directory listed.
    pub dir: PathBuf,
    listed: Option<PathBuf>,
    entries: Vec<Entry>,
    error: Option<String>,
}

#[derive(Debug)]
struct Entry {
    name: String,
    path: PathBuf,
    kind: EntryKind,
}

#[derive(Debug, PartialEq)]
enum EntryKind {
    Bundle,
    ZippedBundle,
    Directory,
}

impl OpenDialog {
    /// Opens the dialog on `dir` (made absolute).
    pub fn open_at(&mut self, dir: &Path) {
        self.dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.listed = None;
        self.is_open = true;
    }

    fn list(&mut self) {
        if self.listed.as_ref() == Some(&self.dir) {
            return;
        }
        self.listed = Some(self.dir.clone());
        self.entries.clear();
        self.error = None;
        let listed = match crate::platform::list_directory(&self.dir) {
            Ok(l) => l,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        for (name, path, listed_kind) in listed {
            if name.starts_with('.') {
                continue;
            }
            let kind = match listed_kind {
                crate::platform::Listed::Bundle => EntryKind::Bundle,
                crate::platform::Listed::Directory => EntryKind::Directory,
                crate::platform::Listed::File if name.to_ascii_lowercase().ends_with(".zip") => {
                    EntryKind::ZippedBundle
                }
                crate::platform::Listed::File => continue,
            };
            self.entries.push(Entry { name, path, kind });
        }
        self.entries
            .sort_by(|a, b| crate::gantt::natural_cmp(&a.name, &b.name));
    }

    /// Draws the dialog when open; returns the bundle (directory or zip) chosen.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        if !self.is_open {
            return None;
        }
        self.list();
        let mut chosen = None;
        let mut go_to = None;
        let mut is_open = self.is_open;
        egui::Window::new("Open a bundle")
            .open(&mut is_open)
            .default_size([520.0, 420.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("Up").clicked()
                        && let Some(parent) = self.dir.parent()
                    {
                        go_to = Some(parent.to_path_buf());
                    }
                    ui.monospace(self.dir.display().to_string());
                });
                ui.small("Bundle directories (with a manifest.json) and .zip files open; other directories are browsed.");
                ui.separator();
                if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                if self.entries.is_empty() && self.error.is_none() {
                    ui.label("No directories or zipped bundles here.");
                }
                egui::ScrollArea::vertical().show(ui, |ui| {
                    for e in &self.entries {
                        ui.horizontal(|ui| match e.kind {
                            EntryKind::Bundle | EntryKind::ZippedBundle => {
                                if ui.button(format!("Open {}", e.name)).clicked() {
                                    chosen = Some(e.path.clone());
                                }
                                ui.weak(if e.kind == EntryKind::Bundle {
                                    "bundle"
                                } else {
                                    "zip"
                                });
                            }
                            EntryKind::Directory => {
                                if ui.link(format!("{}/", e.name)).clicked() {
                                    go_to = Some(e.path.clone());
                                }
                            }
                        });
                    }
                });
            });
        if let Some(dir) = go_to {
            self.dir = dir;
        }
        self.is_open = is_open && chosen.is_none();
        chosen
    }
}
