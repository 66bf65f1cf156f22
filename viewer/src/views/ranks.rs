//! Per-rank bars: the compute and communication time of every rank, stacked, with a second
//! table (the prediction of the same run) beside the first. A table qualifies with `rank`, `kind`
//! and seconds: `duration_secs` (measured blocks, `mpi_blocks`) or `predicted_secs` (an MPI
//! prediction's `mpi_block_predictions`).

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, text_codes, texts};
use crate::format;
use crate::view::{Context, Explains, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub compare: String,
    /// The run shown, or [`ALL_RUNS`]: the mean over the runs.
    pub run: String,
}

/// The run picker's choice for the mean over every run of the table.
pub const ALL_RUNS: &str = "mean of the runs";

const MEASURED: &[&str] = &[col::RANK, col::KIND, col::DURATION_SECS];
const PREDICTED: &[&str] = &[col::RANK, col::KIND, col::PREDICTED_SECS];
const NONE: &str = "none";

/// The per-rank bars.
#[derive(Debug)]
pub struct RankBars;

impl View for RankBars {
    const SLUG: &'static str = "ranks";
    const LABEL: &'static str = "Per-rank bars";
    const EXPLAINS: Explains = Explains::Rank(1);
    type State = State;
    type Cache = Option<Derived>;

    fn draws(batch: &arrow_array::RecordBatch) -> bool {
        crate::data::has_columns(batch, MEASURED) || crate::data::has_columns(batch, PREDICTED)
    }

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, cache: &mut Option<Derived>) {
        bars_ui(ui, cx.bundle, state, cache);
    }
}

/// What the view draws, derived from the rows once per choice of tables and run: a bundle's
/// block tables run to millions of rows, and summing them every frame made each frame take long
/// enough (a second and more in the browser) that a click's press and release fell in frames too
/// far apart for egui to call it a click.
#[derive(Debug, Default)]
pub struct Derived {
    /// The choice it was derived for: (table, beside, run).
    chosen: (String, String, String),
    /// The runs of the table chosen.
    runs: Vec<String>,
    /// Each table shown with its seconds per rank and kind.
    shown: Vec<(String, PerRank)>,
    /// The kinds of block of the tables shown.
    kinds: Vec<String>,
    /// The loop structure of the table chosen (a prediction's).
    loops: Vec<RankLoop>,
}

impl Derived {
    fn new(bundle: &LoadedBundle, state: &State) -> Self {
        let chosen = bundle.table(&state.table);
        let runs = chosen
            .and_then(|t| text_codes(&t.batch, col::RUN_ID))
            .map(|(runs, _)| runs)
            .unwrap_or_default();
        let mut shown: Vec<(String, PerRank)> = Vec::new();
        for name in [&state.table, &state.compare] {
            if let Some(t) = bundle.table(name)
                && !shown.iter().any(|(n, _)| *n == t.name)
            {
                // The run chosen is one of the first table's; the other is shown whole.
                let run = if shown.is_empty() { state.run.as_str() } else { ALL_RUNS };
                shown.push((t.name.clone(), per_rank(&t.batch, run)));
            }
        }
        let kinds = super::common::distinct(
            &shown
                .iter()
                .flat_map(|(_, r)| r.ranks.iter().flat_map(|(_, k)| k.iter().map(|k| k.kind.clone())))
                .collect::<Vec<_>>(),
        );
        Derived {
            chosen: Self::choice(state),
            runs,
            shown,
            kinds,
            loops: chosen.map(|t| loop_structure(&t.batch)).unwrap_or_default(),
        }
    }

    fn choice(state: &State) -> (String, String, String) {
        (state.table.clone(), state.compare.clone(), state.run.clone())
    }
}

/// The time of one kind of block on one rank: the mean over the runs shown, and the least and
/// most of them (equal with one run).
#[derive(Debug, Clone, PartialEq)]
pub struct KindSeconds {
    pub kind: String,
    pub mean_secs: f64,
    pub min_secs: f64,
    pub max_secs: f64,
}

/// Seconds per rank and kind, ranks ascending: blocks summed within each run (`run_id`), then
/// the mean over the runs, never their sum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PerRank {
    /// The runs the table holds (one empty name for a table without `run_id`).
    pub runs: Vec<String>,
    /// The runs the figures are over: all of them, or the one chosen.
    pub shown_runs: usize,
    pub ranks: Vec<(i64, Vec<KindSeconds>)>,
    /// Whether the seconds are a prediction's (`predicted_secs`), not measured
    /// (`duration_secs`).
    pub predicted: bool,
}

impl PerRank {
    /// The time of `kind` on `rank`.
    pub fn get(&self, rank: i64, kind: &str) -> Option<&KindSeconds> {
        let (_, kinds) = self.ranks.iter().find(|(r, _)| *r == rank)?;
        kinds.iter().find(|k| k.kind == kind)
    }
}

/// What each rank spent per kind of block in `batch`: in run `run`, or over all its runs when
/// `run` is none of them (the mean, with the least and most).
pub fn per_rank(batch: &arrow_array::RecordBatch, run: &str) -> PerRank {
    let measured = numbers(batch, col::DURATION_SECS);
    let predicted = measured.is_none();
    let (Some(rank), Some((kinds, kind)), Some(secs)) = (
        numbers(batch, col::RANK),
        text_codes(batch, col::KIND),
        measured.or_else(|| numbers(batch, col::PREDICTED_SECS)),
    ) else {
        return PerRank::default();
    };
    // Codes, not a string per row: a measured run's blocks are millions of rows.
    let (runs, run_of) =
        text_codes(batch, col::RUN_ID).unwrap_or_else(|| (vec![String::new()], vec![0; rank.len()]));
    let chosen = runs.iter().position(|r| r == run).map(|c| c as u32);
    // (rank, kind) -> seconds in each run.
    let mut sums: std::collections::HashMap<(i64, u32), std::collections::BTreeMap<u32, f64>> =
        Default::default();
    for i in 0..rank.len() {
        let (Some(r), Some(s)) = (rank[i], secs[i]) else {
            continue;
        };
        if chosen.is_some_and(|c| run_of[i] != c) {
            continue;
        }
        *sums
            .entry((r as i64, kind[i]))
            .or_default()
            .entry(run_of[i])
            .or_default() += s;
    }
    // Ranks ascending, kinds by name within each.
    let mut sorted: Vec<((i64, &str), Vec<f64>)> = sums
        .into_iter()
        .map(|((r, k), per_run)| ((r, kinds[k as usize].as_str()), per_run.into_values().collect()))
        .collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut ranks: Vec<(i64, Vec<KindSeconds>)> = Vec::new();
    for ((r, k), values) in sorted {
        let time = KindSeconds {
            kind: k.to_owned(),
            mean_secs: values.iter().sum::<f64>() / values.len() as f64,
            min_secs: values.iter().copied().fold(f64::INFINITY, f64::min),
            max_secs: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        };
        match ranks.last_mut() {
            Some((last, kinds)) if *last == r => kinds.push(time),
            _ => ranks.push((r, vec![time])),
        }
    }
    PerRank {
        shown_runs: if chosen.is_some() { 1 } else { runs.len() },
        runs,
        ranks,
        predicted,
    }
}

/// What a prediction found of one rank's loop: seconds per block role (`setup`, `loop`,
/// `periodic`, `teardown`) and the periodic blocks with their periods.
#[derive(Debug, Clone, PartialEq)]
pub struct RankLoop {
    pub rank: i64,
    pub roles: Vec<(String, f64)>,
    pub periodic: Vec<(String, i64)>,
}

/// The loop structure of an `mpi_block_predictions` table; empty for other tables.
pub fn loop_structure(batch: &arrow_array::RecordBatch) -> Vec<RankLoop> {
    let (Some(rank), Some(role), Some(block), Some(period), Some(secs)) = (
        numbers(batch, col::RANK),
        texts(batch, col::BLOCK_ROLE),
        texts(batch, col::BLOCK),
        numbers(batch, col::PERIOD_ITERATIONS),
        numbers(batch, col::PREDICTED_SECS),
    ) else {
        return Vec::new();
    };
    let mut out: Vec<RankLoop> = Vec::new();
    for i in 0..rank.len() {
        let Some(r) = rank[i].map(|r| r as i64) else {
            continue;
        };
        let at = match out.iter().position(|l| l.rank == r) {
            Some(at) => at,
            None => {
                out.push(RankLoop {
                    rank: r,
                    roles: ["setup", "loop", "periodic", "teardown"]
                        .map(|k| (k.to_owned(), 0.0))
                        .to_vec(),
                    periodic: Vec::new(),
                });
                out.len() - 1
            }
        };
        let entry = &mut out[at];
        if let Some(slot) = entry.roles.iter_mut().find(|(k, _)| *k == role[i]) {
            slot.1 += secs[i].unwrap_or(0.0);
        }
        if let Some(p) = period[i] {
            entry.periodic.push((block[i].clone(), p as i64));
        }
    }
    out.sort_by_key(|l| l.rank);
    out
}

fn bars_ui(
    ui: &mut egui::Ui,
    bundle: &LoadedBundle,
    state: &mut State,
    cache: &mut Option<Derived>,
) {
    let mut tables: Vec<_> = bundle.tables_with(MEASURED).collect();
    for t in bundle.tables_with(PREDICTED) {
        if !tables.iter().any(|m| m.name == t.name) {
            tables.push(t);
        }
    }
    if tables.is_empty() {
        super::common::nothing_to_show(
            ui,
            "Per-rank bars",
            "rank, kind and duration_secs or predicted_secs",
        );
        return;
    }
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    let mut compare = vec![NONE.to_owned()];
    compare.extend(names.iter().cloned());
    if state.compare.is_empty() {
        state.compare = measured_beside(bundle, &state.table).unwrap_or_else(|| NONE.to_owned());
    }
    let derived = match cache.take() {
        Some(d) if d.chosen == Derived::choice(state) => cache.insert(d),
        _ => cache.insert(Derived::new(bundle, state)),
    };
    ui.horizontal(|ui| {
        super::common::pick(ui, "table", &mut state.table, &names);
        super::common::pick(ui, "beside", &mut state.compare, &compare);
        if derived.runs.len() > 1 {
            let mut choices = vec![ALL_RUNS.to_owned()];
            choices.extend(derived.runs.iter().cloned());
            super::common::pick(ui, "run", &mut state.run, &choices);
        }
    });
    let shown: Vec<(&str, &PerRank)> = derived.shown.iter().map(|(n, p)| (n.as_str(), p)).collect();
    for (name, per) in &shown {
        if per.shown_runs > 1 {
            ui.label(format!(
                "{name}: the mean of its {} runs; the whisker spans the least and most total of a \
                 rank over them",
                per.shown_runs
            ));
        }
    }
    plot_ui(ui, &shown, &derived.kinds);
    table_ui(ui, &shown, &derived.kinds);
    loop_ui(ui, &derived.loops);
}

/// The measured run to put beside a prediction at first: of the measured tables the step that
/// wrote `table` read, the one with the most rows (the full run, not the reduced ones).
fn measured_beside(bundle: &LoadedBundle, table: &str) -> Option<String> {
    let t = bundle.table(table)?;
    if crate::data::has_columns(&t.batch, MEASURED) {
        return None;
    }
    let step = table.rsplit_once('.')?.0;
    let rows = |name: &str| {
        bundle
            .manifest
            .as_ref()
            .and_then(|m| m.tables.iter().find(|r| r.name == name))
            .map_or(0, |r| r.rows)
    };
    bundle
        .step_inputs(step)
        .into_iter()
        .filter(|n| {
            bundle
                .table(n)
                .is_some_and(|t| crate::data::has_columns(&t.batch, MEASURED))
        })
        .max_by_key(|n| rows(n))
}

/// What names each table's bars over them: "measured" and "predicted" when one table is each,
/// else the tables' namespaces (`full`, `repeat_1`).
fn bar_labels(shown: &[(&str, &PerRank)]) -> Vec<String> {
    let both_kinds = shown.iter().any(|(_, p)| p.predicted) && shown.iter().any(|(_, p)| !p.predicted);
    shown
        .iter()
        .map(|(name, per)| match (both_kinds, per.predicted) {
            (true, true) => "predicted".to_owned(),
            (true, false) => "measured".to_owned(),
            (false, _) => name.split('.').next().unwrap_or(name).to_owned(),
        })
        .collect()
}

/// Bars with a label over each at most (more would overlap): a label names whose bar it is.
const LABELLED_BARS: usize = 16;

/// Each table's ranks as stacked bars by kind, side by side, with the spread of the runs' totals
/// as a whisker and, for a few ranks, the table's label over its bars; integer rank ticks. The
/// y range leaves the legend's share of the plot free over the tallest bar.
fn plot_ui(ui: &mut egui::Ui, shown: &[(&str, &PerRank)], kinds: &[String]) {
    let width = 0.8 / shown.len().max(1) as f64;
    let whisker = ui.visuals().strong_text_color();
    let bars: usize = shown.iter().map(|(_, p)| p.ranks.len() * kinds.len()).sum();
    crate::view::count_drawn(ui, "bars", bars);
    let labels = bar_labels(shown);
    let label_bars = shown.iter().map(|(_, p)| p.ranks.len()).sum::<usize>() <= LABELLED_BARS;
    let tallest = shown
        .iter()
        .flat_map(|(_, p)| {
            p.ranks.iter().map(|(_, parts)| {
                let total = |f: fn(&KindSeconds) -> f64| parts.iter().map(f).sum::<f64>();
                total(|k| k.mean_secs).max(total(|k| k.max_secs))
            })
        })
        .fold(0.0_f64, f64::max);
    // The legend lists a row per table and kind (and a whisker per table with several runs), at
    // about 18 points a row, over a plot area of about 270 of the plot's 320; the bars' labels
    // and the legend's margins want about 40 more.
    let legend_rows =
        shown.len() * kinds.len() + shown.iter().filter(|(_, p)| p.shown_runs > 1).count();
    let legend_share = ((legend_rows as f64 * 18.0 + 40.0) / 270.0).min(0.6);
    let plotted = egui_plot::Plot::new("per_rank")
        .height(320.0)
        .x_axis_label("rank")
        .y_axis_label("seconds")
        .x_grid_spacer(egui_plot::uniform_grid_spacer(|_| [1.0, 5.0, 10.0]))
        .x_axis_formatter(|mark, _| {
            if mark.value.fract() == 0.0 && mark.value >= 0.0 {
                format!("{}", mark.value as i64)
            } else {
                String::new()
            }
        })
        .legend(egui_plot::Legend::default())
        .include_y(0.0)
        .include_y(tallest / (1.0 - legend_share))
        .show(ui, |plot| {
            let mut drawn = Vec::new();
            for (t, (name, per)) in shown.iter().enumerate() {
                let offset = (t as f64 - (shown.len() as f64 - 1.0) / 2.0) * width;
                if label_bars {
                    for (rank, parts) in &per.ranks {
                        let top = parts.iter().map(|p| p.max_secs.max(p.mean_secs)).sum::<f64>();
                        plot.text(
                            egui_plot::Text::new(
                                "",
                                egui_plot::PlotPoint::new(*rank as f64 + offset, top),
                                egui::RichText::new(labels[t].as_str()).text_style(egui::TextStyle::Body),
                            )
                            .anchor(egui::Align2::CENTER_BOTTOM),
                        );
                    }
                }
                let mut below: Vec<f64> = vec![0.0; per.ranks.len()];
                for (k, kind) in kinds.iter().enumerate() {
                    let bars: Vec<egui_plot::Bar> = per
                        .ranks
                        .iter()
                        .enumerate()
                        .map(|(i, (rank, parts))| {
                            let s = parts.iter().find(|p| p.kind == *kind).map_or(0.0, |p| p.mean_secs);
                            let bar = egui_plot::Bar::new(*rank as f64 + offset, s)
                                .width(width * 0.9)
                                .base_offset(below[i]);
                            below[i] += s;
                            drawn.push([*rank as f64 + offset, below[i]]);
                            bar
                        })
                        .collect();
                    plot.bar_chart(
                        egui_plot::BarChart::new(format!("{name}: {kind}"), bars).color(
                            super::common::kind_colour(k).gamma_multiply(if t == 0 {
                                1.0
                            } else {
                                0.6
                            }),
                        ),
                    );
                }
                if per.shown_runs > 1 {
                    for (rank, parts) in &per.ranks {
                        let (lo, hi) = parts.iter().fold((0.0, 0.0), |(lo, hi), p| {
                            (lo + p.min_secs, hi + p.max_secs)
                        });
                        let x = *rank as f64 + offset;
                        drawn.extend([[x, lo], [x, hi]]);
                        plot.line(
                            egui_plot::Line::new(format!("{name}: spread of the runs"), vec![[x, lo], [x, hi]])
                                .color(whisker)
                                .width(1.5),
                        );
                    }
                }
            }
            drawn
        });
    let bounds = plotted.transform.bounds();
    crate::view::count_outside(ui, "per_rank", bounds, plotted.inner);
}

/// The seconds of every rank and kind; with several runs, the mean and the least to most.
fn table_ui(ui: &mut egui::Ui, shown: &[(&str, &PerRank)], kinds: &[String]) {
    egui::Grid::new("rank_table").striped(true).show(ui, |ui| {
        ui.strong("rank");
        for (name, _) in shown {
            for k in kinds {
                ui.strong(format!("{name}: {k}"));
            }
        }
        ui.end_row();
        let ranks: Vec<i64> = shown
            .first()
            .map(|(_, r)| r.ranks.iter().map(|(x, _)| *x).collect())
            .unwrap_or_default();
        for rank in ranks {
            ui.label(rank.to_string());
            for (_, per) in shown {
                for k in kinds {
                    ui.label(per.get(rank, k).map_or_else(String::new, |t| {
                        if per.shown_runs > 1 {
                            format!(
                                "{} ({} to {})",
                                format::secs(t.mean_secs),
                                format::secs(t.min_secs),
                                format::secs(t.max_secs)
                            )
                        } else {
                            format::secs(t.mean_secs)
                        }
                    }));
                }
            }
            ui.end_row();
        }
    });
}

/// The loop each rank's prediction found: time by block role, and the blocks that run every
/// k-th iteration.
fn loop_ui(ui: &mut egui::Ui, ranks: &[RankLoop]) {
    if ranks.is_empty() {
        return;
    }
    ui.add_space(8.0);
    ui.strong("Loop structure (predicted seconds by block role)");
    egui::Grid::new("loop_structure")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("rank");
            for (role, _) in &ranks[0].roles {
                ui.strong(role);
            }
            ui.strong("periodic blocks (every k iterations)");
            ui.end_row();
            for r in ranks {
                ui.label(r.rank.to_string());
                for (_, secs) in &r.roles {
                    ui.label(format::secs(*secs));
                }
                let periodic: Vec<String> = r
                    .periodic
                    .iter()
                    .map(|(b, k)| format!("{b} (every {k})"))
                    .collect();
                ui.label(if periodic.is_empty() {
                    "none".to_owned()
                } else {
                    periodic.join(", ")
                });
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    };
    use arrow_schema::{DataType, Field, Schema};
    use yosoku_tables::MPI_BLOCK_PREDICTIONS;

    use super::*;

    #[test]
    fn a_prediction_table_is_summed_per_rank_and_kind() {
        let text = |v: &[&str]| Arc::new(StringArray::from(v.to_vec())) as arrow_array::ArrayRef;
        let batch = MPI_BLOCK_PREDICTIONS
            .batch(vec![
                text(&["m", "m", "m"]),
                text(&["r", "r", "r"]),
                Arc::new(Int32Array::from(vec![0, 0, 1])),
                text(&["a", "b", "a"]),
                text(&["compute", "communication", "compute"]),
                Arc::new(BooleanArray::from(vec![true, true, true])),
                text(&["loop", "periodic", "setup"]),
                Arc::new(Int64Array::from(vec![None, Some(20), None])),
                Arc::new(Float64Array::from(vec![0.0, 0.0, 0.0])),
                Arc::new(Int64Array::from(vec![4, 4, 4])),
                Arc::new(Float64Array::from(vec![Some(0.5), Some(0.25), Some(1.0)])),
                Arc::new(Float64Array::from(vec![10.0, 10.0, 10.0])),
                Arc::new(Float64Array::from(vec![5.0, 2.5, 10.0])),
            ])
            .unwrap();
        let summed = per_rank(&batch, ALL_RUNS);
        let secs = |rank, kind| summed.get(rank, kind).map(|t| t.mean_secs);
        assert_eq!(summed.ranks.len(), 2);
        assert_eq!(secs(0, "compute"), Some(5.0));
        assert_eq!(secs(0, "communication"), Some(2.5));
        assert_eq!(secs(1, "compute"), Some(10.0));
        let found = loop_structure(&batch);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].periodic, vec![("b".to_owned(), 20)]);
        assert_eq!(found[0].roles[1], ("loop".to_owned(), 5.0));
        assert_eq!(found[0].roles[2], ("periodic".to_owned(), 2.5));
        assert_eq!(found[1].roles[0], ("setup".to_owned(), 10.0));
    }

    /// The bars say whose they are: "measured" and "predicted" beside each other, else the
    /// tables' namespaces.
    #[test]
    fn bars_are_labelled_by_what_they_show() {
        let measured = PerRank::default();
        let predicted = PerRank {
            predicted: true,
            ..PerRank::default()
        };
        assert_eq!(
            bar_labels(&[("repeat_1.mpi_block_predictions", &predicted), ("full.mpi_blocks", &measured)]),
            ["predicted", "measured"]
        );
        assert_eq!(
            bar_labels(&[("full.mpi_blocks", &measured), ("reduced_1.mpi_blocks", &measured)]),
            ["full", "reduced_1"]
        );
    }

    /// Two runs of one rank: the bars show their mean with the least and most, never their sum;
    /// one run chosen shows that run's.
    #[test]
    fn runs_are_averaged_not_summed() {
        let schema = Arc::new(Schema::new(vec![
            Field::new(col::RUN_ID, DataType::Utf8, false),
            Field::new(col::RANK, DataType::Int32, false),
            Field::new(col::KIND, DataType::Utf8, false),
            Field::new(col::DURATION_SECS, DataType::Float64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["a", "a", "b", "b"])),
                Arc::new(Int32Array::from(vec![0, 0, 0, 1])),
                Arc::new(StringArray::from(vec!["compute"; 4])),
                Arc::new(Float64Array::from(vec![1.0, 1.0, 4.0, 0.5])),
            ],
        )
        .unwrap();
        let all = per_rank(&batch, ALL_RUNS);
        assert_eq!((all.runs.len(), all.shown_runs), (2, 2));
        let t = all.get(0, "compute").unwrap();
        assert_eq!((t.mean_secs, t.min_secs, t.max_secs), (3.0, 2.0, 4.0));
        // Rank 1 ran in one run only: its mean is over that run.
        assert_eq!(all.get(1, "compute").unwrap().mean_secs, 0.5);
        let b = per_rank(&batch, "b");
        assert_eq!(b.shown_runs, 1);
        assert_eq!(b.get(0, "compute").unwrap().mean_secs, 4.0);
    }
}
