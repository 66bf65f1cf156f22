//! `yosoku-viewer [BUNDLE_DIR ...]`: the desktop viewer. Without arguments it opens every
//! bundle under `results/`. In the browser, the same app starts from `web::start`.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> eframe::Result {
    use yosoku_viewer::{EframeApp, LoadedBundle};
    let mut dirs: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
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
            Ok(Box::new(app))
        }),
    )
}

#[cfg(target_arch = "wasm32")]
fn main() {
    yosoku_viewer::web::start();
}
