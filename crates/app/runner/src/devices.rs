//! The device catalogue a run and the CLI use: the built-in devices (`yosoku-devices`) with a
//! user's own files over them, named by `YOSOKU_DEVICES` and `--devices`.

use std::path::{Path, PathBuf};

pub use yosoku_devices::{Catalogue, Device, MEASURED_CURVE_FIELDS, MEASURED_FIELDS, SPEC_FIELDS};

/// The variable naming a user's catalogue files or directories of them (`:`-separated).
pub const DEVICES_VAR: &str = "YOSOKU_DEVICES";

/// Why the catalogue could not be built: the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum DevicesError {
    #[error("{path}: not a catalogue file or directory ({source})")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Catalogue(#[from] yosoku_devices::CatalogueError),
}

/// The `.toml` files of `path` (a file, or a directory of them), sorted.
fn toml_files(path: &Path) -> Result<Vec<PathBuf>, DevicesError> {
    if path.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let read = |source| DevicesError::Read {
        path: path.display().to_string(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(read)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// The paths `YOSOKU_DEVICES` names.
pub fn paths_from_env() -> Vec<PathBuf> {
    std::env::var_os(DEVICES_VAR)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The built-in catalogue with the user's files over it: those of `YOSOKU_DEVICES`, then `extra`.
/// A user's device of a built-in name replaces it; two of the user's files naming one device
/// are an error.
pub fn load_catalogue(extra: &[PathBuf]) -> Result<Catalogue, DevicesError> {
    let mut c = Catalogue::built_in()?;
    let built_in: Vec<String> = c.devices().iter().map(|d| d.name.clone()).collect();
    for path in paths_from_env().iter().chain(extra) {
        for file in toml_files(path)? {
            let text = std::fs::read_to_string(&file).map_err(|source| DevicesError::Read {
                path: file.display().to_string(),
                source,
            })?;
            let device = yosoku_devices::parse(&text, &file.display().to_string())?;
            let replaces_built_in = built_in.iter().any(|n| device.is_named(n));
            c.add_checked(device, replaces_built_in)?;
        }
    }
    Ok(c)
}
