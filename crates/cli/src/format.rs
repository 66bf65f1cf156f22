//! Text output of the CLI.

use std::fmt::Write;

use anyhow::Result;
use arrow_array::RecordBatch;
use yosoku_bundle::Manifest;
use yosoku_plugin_host::LoadedPlugin;
use yosoku_tables::report::{ReportCell, tables as report_tables};
use yosoku_tables::{Figure, UNIT_METADATA_KEY};

/// A number with its unit, at a precision that suits its size.
pub fn value(value: f64, unit: &str) -> String {
    let number = if unit == "%" {
        format!("{value:.2}")
    } else {
        let a = value.abs();
        if a == 0.0 {
            "0".to_owned()
        } else if !(1e-3..1e5).contains(&a) {
            format!("{value:.4e}")
        } else if a >= 100.0 {
            format!("{value:.1}")
        } else if a >= 1.0 {
            format!("{value:.3}")
        } else {
            format!("{value:.5}")
        }
    };
    if unit.is_empty() {
        number
    } else {
        format!("{number} {unit}")
    }
}

/// The tables of `report` cells, each as an aligned text table under its title.
pub fn report(cells: &[ReportCell]) -> String {
    let mut out = String::new();
    for table in report_tables(cells) {
        let _ = writeln!(out, "\n  {}", table.title);
        let mut grid: Vec<Vec<String>> = Vec::with_capacity(table.rows.len() + 1);
        let mut header = vec![String::new()];
        header.extend(table.columns.iter().map(|c| (*c).to_owned()));
        grid.push(header);
        for (r, row) in table.rows.iter().enumerate() {
            let mut line = vec![(*row).to_owned()];
            for cell in &table.cells[r] {
                line.push(match cell {
                    None => String::new(),
                    Some(c) => match (&c.text, c.value) {
                        (Some(t), _) => t.clone(),
                        (None, Some(v)) => cell_number(v, &c.unit),
                        (None, None) => "-".to_owned(),
                    },
                });
            }
            grid.push(line);
        }
        let columns = grid[0].len();
        let widths: Vec<usize> = (0..columns)
            .map(|k| grid.iter().map(|l| l[k].chars().count()).max().unwrap_or(0))
            .collect();
        // Too wide for a terminal (long texts): one line per cell, grouped by row.
        if widths.iter().map(|w| w + 2).sum::<usize>() > WIDE {
            let label = widths[1..].iter().copied().max().unwrap_or(0).min(24);
            for line in &grid[1..] {
                let _ = writeln!(out, "  {}", line[0]);
                for (k, cell) in line.iter().enumerate().skip(1) {
                    if !cell.is_empty() {
                        let _ = writeln!(out, "    {:<label$}  {cell}", grid[0][k]);
                    }
                }
            }
            continue;
        }
        for line in &grid {
            let mut text = String::from("  ");
            for (k, cell) in line.iter().enumerate() {
                // Labels left, figures right; a text column (a list of terms) goes last as is.
                if k == 0 {
                    let _ = write!(text, "{cell:<w$}", w = widths[k]);
                } else {
                    let _ = write!(text, "  {cell:>w$}", w = widths[k]);
                }
            }
            let _ = writeln!(out, "{}", text.trim_end());
        }
    }
    out
}

/// Width in characters above which a report table is printed one cell per line.
const WIDE: usize = 200;

/// A report number: percentages with one decimal, R² and other ratios with three.
fn cell_number(v: f64, unit: &str) -> String {
    match unit {
        "%" if v.abs() < 1e5 => format!("{v:.1}"),
        "%" => format!("{v:.2e}"),
        "" if v.fract() == 0.0 && v.abs() < 1e9 => format!("{v:.0}"),
        "" if (1e-3..1e5).contains(&v.abs()) => format!("{v:.3}"),
        "" => format!("{v:.3e}"),
        unit => value(v, unit),
    }
}

/// The headline figures of a run, as a table: step, figure, value, published value.
pub fn headline_table(manifest: &Manifest) -> String {
    let rows: Vec<(&str, &Figure)> = manifest.figures().filter(|(_, f)| f.headline).collect();
    if rows.is_empty() {
        return String::new();
    }
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|(id, f)| {
            [
                (*id).to_owned(),
                f.name.clone(),
                value(f.value, &f.unit),
                f.reference.map(|r| value(r, &f.unit)).unwrap_or_default(),
            ]
        })
        .collect();
    let header = ["step", "figure", "value", "published"];
    let widths: Vec<usize> = (0..4)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
                .max(header[i].len())
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, c: [&str; 4]| {
        let _ = writeln!(
            out,
            "  {:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}",
            c[0],
            c[1],
            c[2],
            c[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
    };
    line(&mut out, header);
    for c in &cells {
        line(&mut out, [&c[0], &c[1], &c[2], &c[3]]);
    }
    out
}

pub fn plugin_listing(plugin: &LoadedPlugin) -> String {
    let info = plugin.info();
    let mut out = format!(
        "{} {} (ABI v{}, {})\n  {}\n",
        info.name,
        info.version,
        plugin.abi_version(),
        plugin.path().display(),
        info.description
    );
    if !plugin.ignored_fields().is_empty() {
        let _ = writeln!(
            out,
            "  built for a newer yosoku (descriptor version {}); ignored: {}",
            info.descriptor_version,
            plugin.ignored_fields().join(", ")
        );
    }
    for c in &info.collectors {
        let _ = writeln!(out, "  {} [{}]: {}", c.name, c.kind, c.description);
        if let Some(why) = c.unusable() {
            let _ = writeln!(out, "    not usable here: {why}");
        }
        let _ = writeln!(out, "    tables: {}", c.tables.join(", "));
        for k in &c.config {
            let need = if k.required {
                "required".to_owned()
            } else {
                match &k.default {
                    Some(d) => format!("default {d}"),
                    None => "optional".to_owned(),
                }
            };
            let _ = writeln!(out, "    {} ({}, {need}): {}", k.key, k.ty, k.help);
        }
    }
    out
}

pub fn manifest_summary(m: &Manifest) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "pipeline {}: {}",
        m.pipeline.name, m.pipeline.description
    );
    let _ = writeln!(
        out,
        "  spec {} (sha256 {}), yosoku {}, {:.3} s",
        m.pipeline.spec_path, m.pipeline.spec_sha256, m.yosoku_version, m.total_wall_secs
    );
    for p in &m.plugins {
        let _ = writeln!(
            out,
            "  plugin {} {} (ABI v{}, {})",
            p.name, p.version, p.abi_version, p.library
        );
    }
    for i in &m.inputs {
        let _ = writeln!(
            out,
            "  input {} [{}.{}] {} bytes sha256 {}",
            i.path, i.source, i.key, i.size_bytes, i.sha256
        );
    }
    for s in &m.stages {
        let _ = writeln!(out, "  stage {} ({:.4} s)", s.stage, s.wall_secs);
        for step in &s.steps {
            let _ = writeln!(
                out,
                "    {} [{}] {:.4} s -> {}",
                step.id,
                step.kind,
                step.wall_secs,
                step.tables.join(", ")
            );
        }
    }
    out.push_str(&headline_table(m));
    out
}

/// A table's schema (with units) and first `rows` rows.
pub fn table(name: &str, batch: &RecordBatch, rows: usize) -> Result<String> {
    let mut out = format!("\n{name}: {} rows\n", batch.num_rows());
    for field in batch.schema().fields() {
        let unit = field
            .metadata()
            .get(UNIT_METADATA_KEY)
            .map(|u| format!(" [{u}]"))
            .unwrap_or_default();
        let null = if field.is_nullable() {
            ", nullable"
        } else {
            ""
        };
        let _ = writeln!(out, "  {}: {}{null}{unit}", field.name(), field.data_type());
    }
    let shown = batch.slice(0, rows.min(batch.num_rows()));
    let _ = writeln!(
        out,
        "{}",
        arrow_cast::pretty::pretty_format_batches(&[shown])?
    );
    if batch.num_rows() > rows {
        let _ = writeln!(out, "  ... {} more rows", batch.num_rows() - rows);
    }
    Ok(out)
}
