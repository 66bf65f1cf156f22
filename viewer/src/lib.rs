//! The yosoku viewer: one egui app for the desktop (eframe, glow) and the browser
//! (WebAssembly, WebGL2), showing result bundles. It reads the files bundles are made of, never
//! the plugin host.
//!
//! Its modules, from the bottom up (no module imports one above it; `xtask`'s architecture test
//! checks that no module imports one that imports it):
//!
//! - [`platform`]: bytes from a file (desktop) or a URL (browser), dropped files;
//! - [`format`] (one number format), [`gantt`] (records binned per lane and pixel);
//! - [`trace_store`] (large traces read piece by piece), [`data`] (bundles as the viewer holds
//!   them), [`loading`] (their tables read when a view needs them);
//! - [`view`]: what a view is; [`views`]: the views and their registry, `views::VIEWS`;
//! - [`app`]: the open bundles, the view shown, the state that survives a reload; [`host`]: the
//!   eframe app around it (drops, paths, saving); [`open_dialog`] (desktop);
//! - the entry points: `main.rs` (desktop, and its `--screenshots` tour) and [`web`] (browser).
//!
//! Every view lights up for any bundle whose tables have the columns it needs: the desktop tour
//! shows each view on the first bundle it has something for.

pub mod app;
pub mod data;
pub mod format;
pub mod gantt;
pub mod host;
pub mod loading;
#[cfg(not(target_arch = "wasm32"))]
pub mod open_dialog;
pub mod platform;
pub mod trace_store;
pub mod view;
pub mod views;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use app::{ViewState, ViewerApp};
pub use data::LoadedBundle;
pub use host::{EframeApp, STATE_KEY};
