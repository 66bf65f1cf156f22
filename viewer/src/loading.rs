//! Tables read when a view needs them. The app asks for a bundle's tables when it shows a view
//! that draws rows; the platform reads each file (from the disk on the desktop, a fetch in the
//! browser), it is decoded where it arrives (in the browser, between frames, not in one) and
//! handed to the app on its next frame.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use arrow_array::RecordBatch;

/// A table that arrived: the bundle it belongs to (its origin), its file, its rows or why not.
#[derive(Debug)]
pub struct Arrived {
    pub origin: String,
    pub file: String,
    pub batch: Result<RecordBatch, String>,
}

/// The tables asked for and not yet handed over, and those that arrived. Clones share them.
#[derive(Debug, Clone, Default)]
pub struct TableLoads(Arc<Mutex<Inner>>);

#[derive(Debug, Default)]
struct Inner {
    /// `(origin, file)` asked for and not yet taken by the app.
    asked: HashSet<(String, String)>,
    arrived: Vec<Arrived>,
    /// Told to draw a frame when a table arrives.
    repaint: Option<egui::Context>,
}

impl TableLoads {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The context to wake when a table arrives.
    pub fn wake(&self, ctx: &egui::Context) {
        let mut inner = self.inner();
        if inner.repaint.is_none() {
            inner.repaint = Some(ctx.clone());
        }
    }

    /// Asks for the tables `files` of the bundle at `origin` (a directory or a URL), each once
    /// until it has been taken.
    pub fn ask(&self, origin: &str, files: &[String]) {
        for file in files {
            let key = (origin.to_owned(), file.clone());
            if !self.inner().asked.insert(key) {
                continue;
            }
            let loads = self.clone();
            let (origin, file) = (origin.to_owned(), file.clone());
            crate::platform::read(&format!("{origin}/{file}"), move |bytes| {
                let batch = bytes.and_then(|b| crate::data::decode_table(&origin, &file, &b));
                let mut inner = loads.inner();
                inner.arrived.push(Arrived {
                    origin,
                    file,
                    batch,
                });
                if let Some(ctx) = &inner.repaint {
                    ctx.request_repaint();
                }
            });
        }
    }

    /// How many tables of the bundle at `origin` are asked for and not yet taken.
    pub fn waiting(&self, origin: &str) -> usize {
        self.inner()
            .asked
            .iter()
            .filter(|(o, _)| o == origin)
            .count()
    }

    /// The tables that arrived since the last call.
    pub fn take(&self) -> Vec<Arrived> {
        let mut inner = self.inner();
        let arrived = std::mem::take(&mut inner.arrived);
        for a in &arrived {
            inner.asked.remove(&(a.origin.clone(), a.file.clone()));
        }
        arrived
    }
}
