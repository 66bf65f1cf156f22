//! Transfer scores: each cross-device method against each baseline, per validation scheme, as
//! bars of one score at a time (median |error|, the share within 25 %, the 95 % intervals'
//! coverage). A table qualifies with `validation`, `model`, `learned` and the scores (a
//! `gpu_transfer` step's `transfer_scores`).

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, Explains, StatusContext, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    /// The score drawn: one of [`SCORES`]' labels.
    pub score: String,
}

/// The scores a table may hold: column, label, whether lower is better.
const SCORES: &[(&str, &str, bool)] = &[
    (col::MEDIAN_ABS_ERROR_PCT, "median |error| %", true),
    (col::WITHIN_25_PCT, "within 25 % (share of predictions)", false),
    (col::INTERVAL_COVERAGE_PCT, "95 % interval coverage %", false),
];

/// One scheme's scores of the score drawn: (model, learned, value).
type Scheme = (String, Vec<(String, bool, f64)>);

/// What the view drew last, for the status line.
#[derive(Debug, Default)]
pub struct Cache {
    schemes: usize,
    bars: usize,
}

/// The transfer scores view.
#[derive(Debug)]
pub struct Scores;

impl View for Scores {
    const SLUG: &'static str = "scores";
    const LABEL: &'static str = "Transfer scores";
    const EXPLAINS: Explains = Explains::Rank(6);
    const NEEDS: &'static [&'static str] = &[
        col::VALIDATION,
        col::MODEL,
        col::LEARNED,
        col::MEDIAN_ABS_ERROR_PCT,
        col::WITHIN_25_PCT,
    ];
    type State = State;
    type Cache = Cache;

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, cache: &mut Cache) {
        scores_ui(ui, cx.bundle, state, cache);
    }

    fn status(_: &StatusContext<'_>, _: &State, cache: &Cache) -> String {
        format!("; schemes={}; bars={}", cache.schemes, cache.bars)
    }
}

/// The rows of `batch` grouped by scheme, in first-seen order, for score column `column`.
fn schemes(batch: &arrow_array::RecordBatch, column: &str) -> Vec<Scheme> {
    let (Some(scheme), Some(model), Some(learned), Some(value)) = (
        texts(batch, col::VALIDATION),
        texts(batch, col::MODEL),
        texts(batch, col::LEARNED),
        numbers(batch, column),
    ) else {
        return Vec::new();
    };
    let mut out: Vec<Scheme> = Vec::new();
    for i in 0..scheme.len() {
        let Some(v) = value[i] else {
            continue;
        };
        let row = (model[i].clone(), learned[i] == "true", v);
        match out.iter_mut().find(|(s, _)| *s == scheme[i]) {
            Some((_, rows)) => rows.push(row),
            None => out.push((scheme[i].clone(), vec![row])),
        }
    }
    out
}

fn scores_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, state: &mut State, cache: &mut Cache) {
    let tables: Vec<_> = bundle.tables_with(Scores::NEEDS).collect();
    if tables.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Transfer scores",
            "validation, model, learned and scores (a gpu_transfer step's transfer_scores)",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    let Some(table) = tables
        .iter()
        .find(|t| t.name == state.table)
        .or(tables.first())
    else {
        return;
    };
    let offered: Vec<String> = SCORES
        .iter()
        .filter(|(c, ..)| crate::data::has_columns(&table.batch, &[c]))
        .map(|(_, label, _)| (*label).to_owned())
        .collect();
    ui.horizontal(|ui| {
        super::common::pick(ui, "table", &mut state.table, &names);
        super::common::pick(ui, "score", &mut state.score, &offered);
    });
    let Some(&(column, label, lower_better)) = SCORES.iter().find(|(_, l, _)| *l == state.score)
    else {
        return;
    };
    let schemes = schemes(&table.batch, column);
    cache.schemes = schemes.len();
    cache.bars = schemes.iter().map(|(_, rows)| rows.len()).sum();
    ui.label(format!(
        "Each validation scheme's methods: learned ones in blue, baselines in grey; {} is \
         better. The best of each scheme is named under its chart.",
        if lower_better { "lower" } else { "higher" }
    ));
    let width = (ui.available_width() / 2.0 - 12.0).max(200.0);
    egui::Grid::new("scores").num_columns(2).show(ui, |ui| {
        for (k, (scheme, rows)) in schemes.iter().enumerate() {
            ui.vertical(|ui| scheme_ui(ui, scheme, rows, label, lower_better, width));
            if k % 2 == 1 {
                ui.end_row();
            }
        }
    });
}

/// One scheme's bars, a model each, and its best named.
fn scheme_ui(
    ui: &mut egui::Ui,
    scheme: &str,
    rows: &[(String, bool, f64)],
    label: &str,
    lower_better: bool,
    width: f32,
) {
    ui.strong(scheme);
    let models: Vec<String> = rows.iter().map(|(m, ..)| m.clone()).collect();
    let learned = super::common::kind_colour(0);
    let baseline = egui::Color32::from_gray(140);
    let bars: Vec<egui_plot::Bar> = rows
        .iter()
        .enumerate()
        .map(|(i, (model, is_learned, v))| {
            egui_plot::Bar::new(i as f64, *v)
                .name(format!("{model}: {v:.1}"))
                .width(0.7)
                .fill(if *is_learned { learned } else { baseline })
        })
        .collect();
    crate::view::count_drawn(ui, "bars", bars.len());
    let ends = crate::view::bar_ends(&bars);
    let id_salt = format!("scores:{scheme}");
    let shown = super::axes::category_plot(ui, &id_salt, &models, width)
        .height(220.0)
        .width(width)
        .y_axis_label(label)
        .include_y(0.0)
        .show(ui, |plot| {
            plot.bar_chart(egui_plot::BarChart::new(label, bars));
        });
    crate::view::count_outside(ui, &id_salt, shown.transform.bounds(), ends);
    let best = rows.iter().max_by(|a, b| {
        let order = a.2.total_cmp(&b.2);
        if lower_better { order.reverse() } else { order }
    });
    if let Some((model, is_learned, v)) = best {
        ui.label(format!(
            "best: {model} ({}), {}",
            if *is_learned { "learned" } else { "baseline" },
            format::number(*v)
        ));
    }
}
