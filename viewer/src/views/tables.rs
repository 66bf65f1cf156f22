//! The table browser: any table, sorted by a column, filtered by text, with column statistics,
//! rows copied as tab-separated text.

use serde::{Deserialize, Serialize};

use crate::data::{LoadedBundle, cell_text, is_numeric, numbers};
use crate::format;
use crate::view::{Context, Explains, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub filter: String,
    pub sort_column: Option<String>,
    pub descending: bool,
}

/// The visible row order of one table under one sort and filter.
#[derive(Debug)]
pub struct Cache {
    key: (String, String, Option<String>, bool),
    pub rows: Vec<usize>,
    cells: Vec<Vec<String>>,
}

/// The table browser.
#[derive(Debug)]
pub struct Tables;

impl View for Tables {
    const SLUG: &'static str = "tables";
    const LABEL: &'static str = "Tables";
    const EXPLAINS: Explains = Explains::AnyTable;
    type State = State;
    /// The row order of the table shown last.
    type Cache = Option<Cache>;

    fn draws(_: &arrow_array::RecordBatch) -> bool {
        true
    }

    fn has_content(bundle: &LoadedBundle) -> bool {
        super::common::has_scoreboard(bundle)
    }

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, cache: &mut Option<Cache>) {
        browser_ui(ui, cx.bundle, state, cache);
    }
}

fn browser_ui(
    ui: &mut egui::Ui,
    bundle: &LoadedBundle,
    state: &mut State,
    cached: &mut Option<Cache>,
) {
    if bundle.tables.is_empty() {
        super::common::nothing_to_show(ui, "Tables", "rows");
        return;
    }
    let names: Vec<String> = bundle.tables.iter().map(|t| t.name.clone()).collect();
    ui.horizontal(|ui| {
        super::common::pick(ui, "table", &mut state.table, &names);
        let label = ui.label("filter");
        ui.text_edit_singleline(&mut state.filter)
            .labelled_by(label.id);
    });
    let Some(table) = bundle.table(&state.table) else {
        return;
    };
    let key = (
        state.table.clone(),
        state.filter.clone(),
        state.sort_column.clone(),
        state.descending,
    );
    if cached.as_ref().is_none_or(|c| c.key != key) {
        *cached = Some(Cache::of(&table.batch, state, key));
    }
    let Some(cache) = cached.as_ref() else {
        return;
    };
    ui.horizontal(|ui| {
        ui.label(format!(
            "{}: {} of {} rows{}",
            table.name,
            crate::format::count(cache.rows.len() as u64),
            crate::format::count(table.batch.num_rows() as u64),
            table
                .kind
                .as_deref()
                .map(|k| format!(" (table kind `{k}`)"))
                .unwrap_or_default()
        ));
        if ui
            .button("Copy rows")
            .on_hover_text("The filtered rows, tab-separated, with a header")
            .clicked()
        {
            ui.ctx().copy_text(cache.tab_separated(&table.batch));
        }
    });
    ui.collapsing("Column statistics", |ui| {
        column_statistics_ui(ui, &table.batch, cache);
    });
    if let Some(c) = rows_ui(ui, &table.batch, state, cache) {
        if state.sort_column.as_deref() == Some(c.as_str()) {
            state.descending = !state.descending;
        } else {
            state.sort_column = Some(c);
            state.descending = false;
        }
    }
}

impl Cache {
    /// Every cell of `batch` as text, and the rows that contain the filter's text, sorted by
    /// the sort column (numbers as numbers).
    fn of(
        batch: &arrow_array::RecordBatch,
        state: &State,
        key: (String, String, Option<String>, bool),
    ) -> Self {
        let schema = batch.schema();
        let cells: Vec<Vec<String>> = (0..batch.num_columns())
            .map(|c| {
                (0..batch.num_rows())
                    .map(|r| cell_text(batch.column(c).as_ref(), r))
                    .collect()
            })
            .collect();
        let needle = state.filter.to_lowercase();
        let mut rows: Vec<usize> = (0..batch.num_rows())
            .filter(|&r| {
                needle.is_empty()
                    || cells
                        .iter()
                        .any(|col| col[r].to_lowercase().contains(&needle))
            })
            .collect();
        if let Some(sort) = &state.sort_column
            && let Ok(c) = schema.index_of(sort)
        {
            if let Some(values) = numbers(batch, sort) {
                rows.sort_by(|&a, &b| {
                    let (x, y) = (values[a].unwrap_or(f64::NAN), values[b].unwrap_or(f64::NAN));
                    x.total_cmp(&y)
                });
            } else {
                rows.sort_by(|&a, &b| cells[c][a].cmp(&cells[c][b]));
            }
            if state.descending {
                rows.reverse();
            }
        }
        Self { key, rows, cells }
    }

    /// The rows shown, tab-separated, under a header of the column names.
    fn tab_separated(&self, batch: &arrow_array::RecordBatch) -> String {
        let mut text = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join("\t");
        for &r in &self.rows {
            text.push('\n');
            text.push_str(
                &self
                    .cells
                    .iter()
                    .map(|c| c[r].as_str())
                    .collect::<Vec<_>>()
                    .join("\t"),
            );
        }
        text
    }
}

/// Each column's type, unit, nulls, distinct values, and for numbers min, mean and max.
fn column_statistics_ui(ui: &mut egui::Ui, batch: &arrow_array::RecordBatch, cache: &Cache) {
    egui::Grid::new("column_stats")
        .striped(true)
        .show(ui, |ui| {
            for h in [
                "column", "type", "unit", "nulls", "distinct", "min", "mean", "max",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for (c, field) in batch.schema().fields().iter().enumerate() {
                let values: Vec<f64> = if is_numeric(field.data_type()) {
                    numbers(batch, field.name())
                        .unwrap_or_default()
                        .into_iter()
                        .flatten()
                        .collect()
                } else {
                    Vec::new()
                };
                let distinct: std::collections::HashSet<&str> =
                    cache.cells[c].iter().map(String::as_str).collect();
                ui.label(field.name());
                ui.label(field.data_type().to_string());
                ui.label(
                    field
                        .metadata()
                        .get(yosoku_tables::UNIT_METADATA_KEY)
                        .cloned()
                        .unwrap_or_default(),
                );
                ui.label(batch.column(c).null_count().to_string());
                ui.label(distinct.len().to_string());
                if values.is_empty() {
                    for _ in 0..3 {
                        ui.label("");
                    }
                } else {
                    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let mean = values.iter().sum::<f64>() / values.len() as f64;
                    ui.label(format::number(min));
                    ui.label(format::number(mean));
                    ui.label(format::number(max));
                }
                ui.end_row();
            }
        });
}

/// The rows shown, under a header of buttons that sort by their column; the column whose button
/// was clicked.
fn rows_ui(
    ui: &mut egui::Ui,
    batch: &arrow_array::RecordBatch,
    state: &State,
    cache: &Cache,
) -> Option<String> {
    let schema = batch.schema();
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let mut clicked: Option<String> = None;
    // Each table scrolls on its own: another one opens at its first row.
    egui::ScrollArea::both()
        .id_salt(("rows", &state.table))
        .auto_shrink(false)
        .show_rows(
        ui,
        row_height,
        cache.rows.len() + 1,
        |ui, range| {
            crate::view::count_drawn(ui, "rows", range.len());
            egui::Grid::new("rows").striped(true).show(ui, |ui| {
                for field in schema.fields() {
                    let arrow = match (&state.sort_column, state.descending) {
                        (Some(s), false) if s == field.name() => " (ascending)",
                        (Some(s), true) if s == field.name() => " (descending)",
                        _ => "",
                    };
                    if ui
                        .button(format!("{}{arrow}", field.name()))
                        .on_hover_text("Sort by this column")
                        .clicked()
                    {
                        clicked = Some(field.name().clone());
                    }
                }
                ui.end_row();
                for i in
                    range.start.saturating_sub(1)..range.end.saturating_sub(1).min(cache.rows.len())
                {
                    let r = cache.rows[i];
                    for col in &cache.cells {
                        ui.label(&col[r]);
                    }
                    ui.end_row();
                }
            });
        },
    );
    clicked
}
