//! Per-rank bars: the compute and communication time of every rank, stacked, with a second
//! table (the prediction of the same run) beside the first. A table qualifies with `rank`, `kind`
//! and seconds: `duration_secs` (measured blocks, `mpi_blocks`) or `predicted_secs` (an MPI
//! prediction's `mpi_block_predictions`).

use serde::{Deserialize, Serialize};
use yosoku_tables::col;

use crate::data::{LoadedBundle, numbers, texts};
use crate::format;
use crate::view::{Context, Explains, View};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    pub table: String,
    pub compare: String,
}

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
    type Cache = ();

    fn draws(batch: &arrow_array::RecordBatch) -> bool {
        crate::data::has_columns(batch, MEASURED) || crate::data::has_columns(batch, PREDICTED)
    }

    fn shown_table(state: &mut State) -> Option<&mut String> {
        Some(&mut state.table)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, state: &mut State, _: &mut ()) {
        bars_ui(ui, cx.bundle, state);
    }
}

/// Seconds per rank and kind: (rank, [(kind, secs)]), ranks ascending.
pub type RankSeconds = Vec<(i64, Vec<(String, f64)>)>;

/// Sums the blocks of each rank by kind.
pub fn per_rank(batch: &arrow_array::RecordBatch) -> RankSeconds {
    let (Some(rank), Some(kind), Some(secs)) = (
        numbers(batch, col::RANK),
        texts(batch, col::KIND),
        numbers(batch, col::DURATION_SECS).or_else(|| numbers(batch, col::PREDICTED_SECS)),
    ) else {
        return Vec::new();
    };
    let mut out: std::collections::BTreeMap<i64, Vec<(String, f64)>> = Default::default();
    for i in 0..rank.len() {
        let (Some(r), Some(s)) = (rank[i], secs[i]) else {
            continue;
        };
        let entry = out.entry(r as i64).or_default();
        match entry.iter_mut().find(|(k, _)| *k == kind[i]) {
            Some(slot) => slot.1 += s,
            None => entry.push((kind[i].clone(), s)),
        }
    }
    out.into_iter().collect()
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

fn bars_ui(ui: &mut egui::Ui, bundle: &LoadedBundle, state: &mut State) {
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
    ui.horizontal(|ui| {
        super::common::pick(ui, "table", &mut state.table, &names);
        super::common::pick(ui, "beside", &mut state.compare, &compare);
    });
    let mut shown: Vec<(&str, RankSeconds)> = Vec::new();
    for name in [&state.table, &state.compare] {
        if let Some(t) = bundle.table(name)
            && !shown.iter().any(|(n, _)| *n == t.name)
        {
            shown.push((&t.name, per_rank(&t.batch)));
        }
    }
    let kinds: Vec<String> = super::common::distinct(
        &shown
            .iter()
            .flat_map(|(_, r)| r.iter().flat_map(|(_, k)| k.iter().map(|(k, _)| k.clone())))
            .collect::<Vec<_>>(),
    );
    let width = 0.8 / shown.len().max(1) as f64;
    egui_plot::Plot::new("per_rank")
        .height(320.0)
        .x_axis_label("rank")
        .y_axis_label("seconds")
        .legend(egui_plot::Legend::default())
        .show(ui, |plot| {
            for (t, (name, ranks)) in shown.iter().enumerate() {
                let offset = (t as f64 - (shown.len() as f64 - 1.0) / 2.0) * width;
                let mut below: Vec<f64> = vec![0.0; ranks.len()];
                for (k, kind) in kinds.iter().enumerate() {
                    let bars: Vec<egui_plot::Bar> = ranks
                        .iter()
                        .enumerate()
                        .map(|(i, (rank, parts))| {
                            let s = parts.iter().find(|(x, _)| x == kind).map_or(0.0, |p| p.1);
                            let bar = egui_plot::Bar::new(*rank as f64 + offset, s)
                                .width(width * 0.9)
                                .base_offset(below[i]);
                            below[i] += s;
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
            }
        });
    egui::Grid::new("rank_table").striped(true).show(ui, |ui| {
        ui.strong("rank");
        for (name, _) in &shown {
            for k in &kinds {
                ui.strong(format!("{name}: {k}"));
            }
        }
        ui.end_row();
        let ranks: Vec<i64> = shown
            .first()
            .map(|(_, r)| r.iter().map(|(x, _)| *x).collect())
            .unwrap_or_default();
        for rank in ranks {
            ui.label(rank.to_string());
            for (_, r) in &shown {
                let parts = r
                    .iter()
                    .find(|(x, _)| *x == rank)
                    .map(|(_, p)| p.as_slice())
                    .unwrap_or(&[]);
                for k in &kinds {
                    ui.label(
                        parts
                            .iter()
                            .find(|(x, _)| x == k)
                            .map(|p| format::secs(p.1))
                            .unwrap_or_default(),
                    );
                }
            }
            ui.end_row();
        }
    });
    if let Some(t) = bundle.table(&state.table) {
        loop_ui(ui, &loop_structure(&t.batch));
    }
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

    use arrow_array::{BooleanArray, Float64Array, Int32Array, Int64Array, StringArray};
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
        assert_eq!(
            per_rank(&batch),
            vec![
                (
                    0,
                    vec![
                        ("compute".to_owned(), 5.0),
                        ("communication".to_owned(), 2.5)
                    ]
                ),
                (1, vec![("compute".to_owned(), 10.0)]),
            ]
        );
        let found = loop_structure(&batch);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].periodic, vec![("b".to_owned(), 20)]);
        assert_eq!(found[0].roles[1], ("loop".to_owned(), 5.0));
        assert_eq!(found[0].roles[2], ("periodic".to_owned(), 2.5));
        assert_eq!(found[1].roles[0], ("setup".to_owned(), 10.0));
    }
}
