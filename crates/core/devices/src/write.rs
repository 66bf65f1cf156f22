//! A device as the text of a catalogue file ([`crate::parse`] reads it back): what
//! `yosoku calibrate` writes, the catalogue's specification with what it measured.

use std::fmt::Write;

use crate::{Device, Sourced};

/// `text` as a TOML basic string.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key as TOML writes it: bare where it can be, quoted otherwise.
fn key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_owned()
    } else {
        quoted(name)
    }
}

fn section(out: &mut String, name: &str, values: &std::collections::BTreeMap<String, Sourced>) {
    if values.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n[{name}]");
    for (k, v) in values {
        // `{:?}` of an f64 is the shortest text that reads back as the same number.
        let _ = writeln!(
            out,
            "{} = {{ value = {:?}, source = {} }}",
            key(k),
            v.value,
            quoted(&v.source)
        );
    }
}

impl Device {
    /// The device as a catalogue file, `comment` (lines) at its head.
    pub fn to_toml(&self, comment: &str) -> String {
        let mut out = String::new();
        for line in comment.lines() {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(out, "name = {}", quoted(&self.name));
        if !self.aliases.is_empty() {
            let aliases: Vec<String> = self.aliases.iter().map(|a| quoted(a)).collect();
            let _ = writeln!(out, "aliases = [{}]", aliases.join(", "));
        }
        let _ = writeln!(out, "vendor = {}", quoted(&self.vendor));
        let _ = writeln!(out, "kind = {}", quoted(&self.kind));
        let _ = writeln!(out, "architecture = {}", quoted(&self.architecture));
        if let Some(cc) = &self.compute_capability {
            let _ = writeln!(out, "compute_capability = {}", quoted(cc));
        }
        if let Some(year) = self.year {
            let _ = writeln!(out, "year = {year}");
        }
        section(&mut out, "spec", &self.spec);
        section(&mut out, "measured", &self.measured);
        if !self.measured_curves.is_empty() {
            let _ = writeln!(out, "\n[measured_curves]");
            for (k, c) in &self.measured_curves {
                let list = |v: &[f64]| {
                    v.iter()
                        .map(|x| format!("{x:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let _ = writeln!(
                    out,
                    "{} = {{ x = [{}], y = [{}], source = {} }}",
                    key(k),
                    list(&c.x),
                    list(&c.y),
                    quoted(&c.source)
                );
            }
        }
        let _ = writeln!(out, "\n[sources]");
        for (k, v) in &self.sources {
            let _ = writeln!(out, "{} = {}", key(k), quoted(v));
        }
        out
    }
}
