//! `yosoku export`: the format argument, and what was written said (the runner,
//! `yosoku_runner::export`, writes it).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Result;
use yosoku_runner::export::{ExportFormat, Exported};

/// `--format`: one of the runner's export formats, by name (clap lists them in the help).
pub fn format_parser() -> impl clap::builder::TypedValueParser<Value = ExportFormat> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(ExportFormat::names())
        .try_map(|name| name.parse::<ExportFormat>())
}

/// Exports `bundle` and says what was written.
pub fn export(
    bundle: &Path,
    format: ExportFormat,
    tables: &[String],
    output: &Path,
) -> Result<String> {
    let exported = yosoku_runner::export::export(bundle, format, tables, output)?;
    Ok(said(&exported))
}

/// What an export wrote, in words.
pub fn said(exported: &Exported) -> String {
    match exported {
        Exported::Tables {
            extension,
            count,
            dir,
        } => format!(
            "wrote {count} table(s) as {extension} into {}",
            dir.display()
        ),
        Exported::ChromeTrace {
            file,
            tables,
            summary,
        } => format!(
            "wrote {} events of {} ({} processes, {} lanes) to {}\nopen it in https://ui.perfetto.dev (\"Open trace file\") or chrome://tracing (\"Load\")",
            summary.events,
            tables.join(", "),
            summary.processes,
            summary.threads,
            file.display()
        ),
        Exported::Bundle {
            dir,
            tables,
            traces,
        } => {
            let mut out = format!(
                "wrote a bundle of {} table(s) into {}: {}",
                tables.len(),
                dir.display(),
                tables.join(", ")
            );
            if *traces > 0 {
                let _ = write!(out, "\nnot kept: the bundle's {traces} trace pyramid(s)");
            }
            out
        }
        Exported::Extrap { files, left_out } => {
            let mut out = match files.as_slice() {
                [(one, _)] => format!("wrote {}", one.display()),
                _ => format!(
                    "wrote {} Extra-P experiments (Extra-P wants every call path of one measured at the same points):",
                    files.len()
                ),
            };
            if files.len() > 1 {
                for (path, callpaths) in files {
                    let _ = write!(
                        out,
                        "\n  {}: {} call path(s), {}{}",
                        path.display(),
                        callpaths.len(),
                        callpaths.first().map(String::as_str).unwrap_or(""),
                        if callpaths.len() > 1 { ", ..." } else { "" }
                    );
                }
            }
            if !left_out.is_empty() {
                let _ = write!(
                    out,
                    "\nleft out, measured at one point only: {}",
                    left_out.join(", ")
                );
            }
            out
        }
    }
}
