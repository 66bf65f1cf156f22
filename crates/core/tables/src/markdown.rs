//! Renders `docs/tables.md` from the table definitions.

use std::fmt::Write;

use crate::{TABLES, ValueCheck};

/// The text of `docs/tables.md`.
pub fn render_markdown() -> String {
    let mut out = String::new();
    out.push_str(
        "# Canonical tables\n\n\
         <!-- Generated from crates/core/tables by `cargo xtask bless`; a test fails when this file and \
         the code disagree. Edit the code, not this file. -->\n\n\
         Every plugin hands its measurements over as these Arrow tables and every pipeline stage \
         consumes and produces them. Column names are constants in `yosoku_tables::col`; units are \
         in the names and in each Arrow field's metadata under `yosoku.unit`. \
         `TableDef::check` reports every missing column, wrong type, unexpected null and \
         out-of-range value of a batch. Extra columns are allowed and kept.\n\n\
         A `Utf8` column may be stored plain or dictionary-encoded (`Dictionary(Int8, Utf8)`, \
         `Dictionary(Int16, Utf8)` or `Dictionary(Int32, Utf8)`: each distinct text once, a key \
         per row; yosoku writes the narrowest keys that hold the column's texts); readers accept \
         every encoding (`yosoku_tables::text::Text`). \
         The large tables whose texts repeat on every row are written dictionary-encoded: \
         `predictions` (all texts but `run_id`), `mpi_blocks`, `spans` (all texts but `args`) \
         and `run_id` of `trace_records`.\n\n\
         In a result bundle a table is stored as `tables/<namespace>.<table>.arrow` (Arrow IPC \
         file format), where the namespace is the pipeline source or step that produced it.\n",
    );
    for table in TABLES {
        let _ = write!(out, "\n## `{}`\n\n{}\n\n", table.name, table.doc);
        out.push_str("| column | type | null | unit | values | meaning |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for c in table.columns {
            let values = match c.check {
                ValueCheck::Any => String::new(),
                ValueCheck::Positive => "> 0".to_owned(),
                ValueCheck::NonNegative => ">= 0".to_owned(),
                ValueCheck::Finite => "finite".to_owned(),
                ValueCheck::NotNan => "not NaN (may be infinite)".to_owned(),
                ValueCheck::OneOf(allowed) => allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let _ = writeln!(
                out,
                "| `{}` | {:?} | {} | {} | {} | {} |",
                c.name,
                c.ty,
                if c.nullable { "yes" } else { "no" },
                c.unit.unwrap_or(""),
                values,
                c.doc
            );
        }
    }
    out
}
