//! `yosoku-viewer [--screenshots DIR] [BUNDLE_DIR ...]`: the desktop viewer. Without bundle
//! directories it opens every bundle under `results/`. With `--screenshots DIR` it shows each
//! view in turn (on the first bundle that view has something to draw for), saves the window as
//! `DIR/desktop-<n>-<view>.png` and exits: what `cargo xtask test` runs under Xvfb. In the
//! browser, the same app starts from `web::start`.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> eframe::Result {
    use yosoku_viewer::{EframeApp, LoadedBundle};
    let mut args: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let screenshots = match args.iter().position(|a| a.as_os_str() == "--screenshots") {
        Some(i) if i + 1 < args.len() => {
            let dir = args.remove(i + 1);
            args.remove(i);
            Some(dir)
        }
        Some(_) => {
            eprintln!("yosoku-viewer: --screenshots needs a directory");
            std::process::exit(2);
        }
        None => None,
    };
    let mut dirs = args;
    if dirs.is_empty()
        && let Ok(entries) = std::fs::read_dir("results")
    {
        dirs = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("manifest.json").is_file())
            .collect();
        dirs.sort();
    }
    let mut bundles = Vec::new();
    let mut errors = Vec::new();
    for d in &dirs {
        match LoadedBundle::from_dir(d) {
            Ok(b) => bundles.push(b),
            Err(e) => errors.push(e),
        }
    }
    for e in &errors {
        eprintln!("yosoku-viewer: {e}");
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1280.0, 800.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "yosoku viewer",
        options,
        Box::new(move |cc| {
            let mut app = EframeApp::new(cc, bundles);
            app.app.errors = errors;
            match screenshots {
                Some(dir) => Ok(Box::new(tour::Tour::new(app, dir))),
                None => Ok(Box::new(app)),
            }
        }),
    )
}

/// `--screenshots`: every view in turn, each saved as a PNG once it has drawn a few frames.
#[cfg(not(target_arch = "wasm32"))]
mod tour {
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

    use yosoku_viewer::EframeApp;
    use yosoku_viewer::views::{self, VIEWS};

    /// Fewer distinct colours than this in a screenshot: nothing but a fill and a little text.
    const MIN_COLOURS: usize = 64;
    /// Frames a view gets to settle (layout, plot bounds) before its picture is taken.
    const SETTLE_FRAMES: u32 = 6;

    pub struct Tour {
        app: EframeApp,
        dir: PathBuf,
        index: usize,
        frames: u32,
        requested: bool,
        /// The picture, once the renderer has taken it.
        shot: Arc<Mutex<Option<Arc<egui::ColorImage>>>>,
    }

    impl Tour {
        pub fn new(app: EframeApp, dir: PathBuf) -> Self {
            let mut tour = Self {
                app,
                dir,
                index: 0,
                frames: 0,
                requested: false,
                shot: Arc::default(),
            };
            tour.show(0);
            tour
        }

        fn show(&mut self, index: usize) {
            self.index = index;
            let view = VIEWS[index];
            let app = &mut self.app.app;
            let Some(name) = views::bundle_showing(&app.bundles, view) else {
                eprintln!(
                    "yosoku-viewer: no bundle given has anything for the {} view",
                    view.label()
                );
                std::process::exit(1);
            };
            app.open(name, view.slug());
            self.frames = 0;
            self.requested = false;
        }
    }

    impl eframe::App for Tour {
        /// The tour pictures each view as it opens: the pointer, wherever the X server left it
        /// (Xvfb: the middle of the screen, often over a plot), would draw its crosshair and a
        /// hover label into the picture.
        fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
            raw_input.events.retain(|e| {
                !matches!(
                    e,
                    egui::Event::PointerMoved(_)
                        | egui::Event::PointerButton { .. }
                        | egui::Event::MouseWheel { .. }
                )
            });
        }

        fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
            eframe::App::ui(&mut self.app, ui, frame);
            let ctx = ui.ctx().clone();
            let shot = self.shot.lock().ok().and_then(|mut s| s.take());
            if let Some(image) = shot {
                let view = VIEWS[self.index];
                let path = self
                    .dir
                    .join(format!("desktop-{}-{}.png", self.index + 1, view.slug()));
                let [w, h] = image.size;
                // A view that drew nothing (a blank or flat window) fails the tour.
                let colours: std::collections::HashSet<[u8; 4]> = image
                    .pixels
                    .iter()
                    .step_by(7)
                    .map(|p| p.to_array())
                    .collect();
                // A view of rows that drew none of its bars, points, curves or rows fails too.
                let drawn: usize = self.app.app.drawn.values().sum();
                if view.reads_rows() && drawn == 0 {
                    eprintln!(
                        "yosoku-viewer: the {} view drew none of what it is for (status: {})",
                        view.label(),
                        self.app.app.status_line()
                    );
                    std::process::exit(1);
                }
                // Nothing outside the plot area: a plot at its own bounds shows all it drew.
                if let Some(n) = self.app.app.drawn.get("outside") {
                    eprintln!(
                        "yosoku-viewer: the {} view drew {n} points outside its plot (status: {})",
                        view.label(),
                        self.app.app.status_line()
                    );
                    std::process::exit(1);
                }
                if colours.len() < MIN_COLOURS {
                    eprintln!(
                        "yosoku-viewer: the {} view drew a flat window ({} colours)",
                        view.label(),
                        colours.len()
                    );
                    std::process::exit(1);
                }
                let bytes: Vec<u8> = image.pixels.iter().flat_map(|p| p.to_array()).collect();
                let saved = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
                    .ok_or_else(|| "the screenshot's size and pixels disagree".to_owned())
                    .and_then(|img| img.save(&path).map_err(|e| e.to_string()));
                match saved {
                    Ok(()) => println!(
                        "yosoku-viewer: {} ({} colours)",
                        path.display(),
                        colours.len()
                    ),
                    Err(e) => {
                        eprintln!("yosoku-viewer: cannot save {}: {e}", path.display());
                        std::process::exit(1);
                    }
                }
                if self.index + 1 == VIEWS.len() {
                    ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    return;
                }
                self.show(self.index + 1);
            } else if !self.requested {
                self.frames += 1;
                if self.frames >= SETTLE_FRAMES {
                    let (slot, repaint) = (Arc::clone(&self.shot), ctx.clone());
                    let callback = egui::ScreenshotCallback::new(move |image| {
                        if let Ok(mut s) = slot.lock() {
                            *s = Some(image);
                        }
                        repaint.request_repaint();
                    });
                    ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot(callback));
                    self.requested = true;
                }
            }
            ctx.request_repaint();
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    yosoku_viewer::web::start();
}
