//! Text output of the CLI.

use std::fmt::Write;

use anyhow::Result;
use arrow_array::RecordBatch;
use yosoku_runner::bundles::Manifest;
use yosoku_runner::plugins::{Discovery, GZIP_READERS, LoadedPlugin};
use yosoku_tables::report::{ReportCell, tables as report_tables};
use yosoku_tables::{Figure, ScoreRow, UNIT_METADATA_KEY, Verdict};

/// Seconds in s, ms, us or ns, whichever suits; beyond those (a model extrapolated a million
/// times past its points, or below a nanosecond) in seconds with an exponent, never as 300 digits
/// or a rounded "0.0 ns".
pub fn secs(v: f64) -> String {
    // By the size, not the sign: a negative time (a model below zero) keeps its unit.
    let a = v.abs();
    if a == 0.0 {
        // An interval's low end at zero reads as none, not as a rounded microsecond.
        "0 s".to_owned()
    } else if !a.is_finite() || !(1e-9..1e6).contains(&a) {
        format!("{v:.4e} s")
    } else if a >= 1.0 {
        format!("{v:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", v * 1e3)
    } else if a >= 1e-6 {
        format!("{:.1} us", v * 1e6)
    } else {
        format!("{:.1} ns", v * 1e9)
    }
}

/// A value of an Extra-P metric as its name says it is: a time (`time`, a name in seconds, or
/// no name) in its unit of time; bytes in B, FLOPs as FLOP; any other (visits, counts) a plain
/// number, never seconds.
pub fn metric_value(v: f64, metric: &str) -> String {
    use yosoku_runner::scaling::MetricUnit;
    match MetricUnit::of(metric) {
        MetricUnit::Seconds => secs(v),
        MetricUnit::Bytes => value(v, "B"),
        MetricUnit::Flop => value(v, "FLOP"),
        MetricUnit::Count | MetricUnit::Events | MetricUnit::Unnamed => value(v, ""),
    }
}

/// A number with its unit, at a precision that suits its size.
pub fn value(value: f64, unit: &str) -> String {
    let number = if unit == "%" {
        format!("{value:.2}")
    } else if unit.is_empty() && value.fract() == 0.0 && value.abs() < 1e15 {
        // A count.
        format!("{value:.0}")
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

/// The width on screen of each column: its widest cell or its header.
fn column_widths<const N: usize>(header: &[&str; N], cells: &[[String; N]]) -> Vec<usize> {
    (0..N)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// What the sources' collectors noted about their inputs (`note: <source>: <text>` a line); empty
/// when they noted nothing.
pub fn notes(manifest: &Manifest) -> String {
    let mut out = String::new();
    for step in manifest.stages.iter().flat_map(|s| &s.steps) {
        for note in &step.notes {
            let _ = writeln!(out, "note: {}: {note}", step.id);
        }
    }
    out
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
    let widths = column_widths(&header, &cells);
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

/// Which of the importers found read gzip-compressed files (`GZIP_READERS`), one line.
pub fn gzip_readers(discovery: &Discovery) -> String {
    let found: Vec<String> = GZIP_READERS
        .iter()
        .filter(|(plugin, collector)| {
            discovery
                .plugins
                .get(*plugin)
                .is_some_and(|p| p.info().collectors.iter().any(|c| c.name == *collector))
        })
        .map(|(plugin, collector)| format!("{plugin}/{collector}"))
        .collect();
    if found.is_empty() {
        return String::new();
    }
    format!(
        "gzip-compressed files (told by their first bytes, whatever their names) are read by: {}\n",
        found.join(", ")
    )
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
    let _ = writeln!(out, "{}", yosoku_tables::display::pretty(&shown));
    if batch.num_rows() > rows {
        let _ = writeln!(out, "  ... {} more rows", batch.num_rows() - rows);
    }
    Ok(out)
}

/// How to mark up text for where it goes: colours only on a terminal and without `NO_COLOR`
/// (https://no-color.org), `✓`/`✗` only where the locale is UTF-8.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub unicode: bool,
}

impl Style {
    /// The style for standard output, from the environment.
    pub fn for_stdout() -> Self {
        use std::io::IsTerminal as _;
        let env = |k: &str| std::env::var(k).unwrap_or_default();
        let color =
            std::io::stdout().is_terminal() && env("NO_COLOR").is_empty() && env("TERM") != "dumb";
        // The first of LC_ALL, LC_CTYPE, LANG that is set decides, as for the C library.
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .map(|k| env(k))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let unicode = locale.contains("utf-8") || locale.contains("utf8");
        Self { color, unicode }
    }

    #[cfg(test)]
    pub const PLAIN: Self = Self {
        color: false,
        unicode: false,
    };

    /// The mark of a verdict, left-aligned in `width` columns, painted.
    fn mark(self, verdict: Option<Verdict>, width: usize) -> String {
        let (symbol, word, code) = match verdict {
            Some(Verdict::Reproduced) => ("✓", "ok", "32"),
            Some(Verdict::Missed) => ("✗", "MISS", "31"),
            None => ("·", "-", "2"),
        };
        let text = if self.unicode { symbol } else { word };
        // Padded before painting: escape codes take no room on screen.
        let padding = " ".repeat(width.saturating_sub(text.chars().count()));
        format!("{}{padding}", self.paint(text, code))
    }

    fn paint(self, text: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint(text, "1")
    }
}

/// The scoreboard of some bundles: one row per result reproduced from a paper, yosoku's figure
/// beside the paper's, marked reproduced / missed by the pipeline's own criterion.
/// How many results were reproduced, missed, and have no criterion, in one line.
pub fn tally(rows: &[(String, ScoreRow)], style: Style) -> String {
    let count = |v: Option<Verdict>| rows.iter().filter(|(_, r)| r.verdict == v).count();
    let (reproduced, missed, open) = (
        count(Some(Verdict::Reproduced)),
        count(Some(Verdict::Missed)),
        count(None),
    );
    format!(
        "{} results: {reproduced} {} reproduced, {missed} {} missed, {open} {} with no criterion",
        rows.len(),
        style.mark(Some(Verdict::Reproduced), 1).trim(),
        style.mark(Some(Verdict::Missed), 1).trim(),
        style.mark(None, 1).trim(),
    )
}

/// The headline rows: those the pipelines mark `headline`, and a bundle's first row where it
/// marks none.
pub fn headline_rows(rows: &[(String, ScoreRow)]) -> Vec<(String, ScoreRow)> {
    rows.iter()
        .enumerate()
        .filter(|(i, (bundle, row))| {
            row.headline
                || (!rows.iter().any(|(b, r)| b == bundle && r.headline)
                    && rows.iter().position(|(b, _)| b == bundle) == Some(*i))
        })
        .map(|(_, r)| r.clone())
        .collect()
}

pub fn scoreboard(rows: &[(String, ScoreRow)], style: Style) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|(bundle, r)| {
            [
                r.method.clone(),
                value(r.value, &r.unit),
                r.paper.clone(),
                bundle.clone(),
            ]
        })
        .collect();
    let header = ["result", "yosoku", "paper", "bundle"];
    let widths = column_widths(&header, &cells);
    let mark_width = if style.unicode { 1 } else { 4 };
    let line = |mark: &str, c: [&str; 4]| {
        format!(
            "{mark}  {:<w0$}  {:>w1$}  {:<w2$}  {}",
            c[0],
            c[1],
            c[2],
            c[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
        )
    };
    let mut out = String::new();
    let head = line(&" ".repeat(mark_width), header);
    let _ = writeln!(out, "{}", style.bold(head.trim_end()));
    for ((_, row), c) in rows.iter().zip(&cells) {
        let mark = style.mark(row.verdict, mark_width);
        let _ = writeln!(out, "{}", line(&mark, [&c[0], &c[1], &c[2], &c[3]]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each time in the unit of its size, a sub-microsecond one in nanoseconds (not `0.1 us`),
    /// a negative one by its size.
    #[test]
    fn times_print_in_the_unit_of_their_size() {
        assert_eq!(secs(2.5), "2.500 s");
        assert_eq!(secs(0.0015), "1.500 ms");
        assert_eq!(secs(7.1e-6), "7.1 us");
        assert_eq!(secs(1.2e-7), "120.0 ns");
        assert_eq!(secs(0.0), "0 s");
        assert_eq!(secs(-1.95), "-1.950 s");
        // Beyond the units: an exponent, not 300 digits or "0.0 ns".
        assert_eq!(secs(1.25e16), "1.2500e16 s");
        assert_eq!(secs(6.9e-12), "6.9000e-12 s");
        assert_eq!(secs(f64::INFINITY), "inf s");
    }

    /// An Extra-P metric's values in the unit its name says: times in seconds, visits plain,
    /// bytes in B.
    #[test]
    fn a_metric_prints_in_the_unit_its_name_says() {
        assert_eq!(metric_value(2.5, "time"), "2.500 s");
        assert_eq!(metric_value(2.5, ""), "2.500 s");
        assert_eq!(metric_value(1200.0, "visits"), "1200");
        assert_eq!(metric_value(1234.5, "visits"), "1234.5");
        assert_eq!(metric_value(4096.0, "bytes_sent"), "4096.0 B");
    }

    fn row(method: &str, value: f64, verdict: Option<Verdict>) -> ScoreRow {
        ScoreRow {
            method: method.into(),
            step: "s".into(),
            figure: "f".into(),
            value,
            unit: "%".into(),
            paper: "4.6-38.9 %".into(),
            reference: None,
            criterion: String::new(),
            verdict,
            headline: false,
        }
    }

    #[test]
    fn the_scoreboard_is_aligned_and_plain_text_without_a_terminal() {
        let rows = vec![
            (
                "a".to_owned(),
                row("LOO error", 7.9, Some(Verdict::Reproduced)),
            ),
            (
                "bb".to_owned(),
                row("leave-one-kernel-out error", 771.0, Some(Verdict::Missed)),
            ),
            ("c".to_owned(), row("x", 1.0, None)),
        ];
        let text = scoreboard(&rows, Style::PLAIN);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines[0],
            "      result                        yosoku  paper       bundle"
        );
        assert_eq!(
            lines[1],
            "ok    LOO error                     7.90 %  4.6-38.9 %  a"
        );
        assert_eq!(
            lines[2],
            "MISS  leave-one-kernel-out error  771.00 %  4.6-38.9 %  bb"
        );
        assert_eq!(
            lines[3],
            "-     x                             1.00 %  4.6-38.9 %  c"
        );
        assert!(!text.contains('\x1b'));
        let coloured = scoreboard(
            &rows,
            Style {
                color: true,
                unicode: true,
            },
        );
        assert!(
            coloured.contains("\x1b[32m✓\x1b[0m  LOO error"),
            "{coloured}"
        );
        assert!(
            coloured.contains("\x1b[31m✗\x1b[0m  leave-one-kernel-out"),
            "{coloured}"
        );
    }
}
