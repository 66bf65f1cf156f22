//! Home: what yosoku found. For every open bundle, its scoreboard — each result the pipeline
//! reproduces from a paper, yosoku's figure beside the published one, the difference, whether it
//! meets the pipeline's criterion — and a link from each row to the view that explains it. A
//! bundle without a scoreboard shows its headline figures instead.

use yosoku_tables::{Figure, ScoreRow, Verdict};

use crate::data::{LoadedBundle, LoadedTable};
use crate::format;
use crate::view::{Context, Explains, Jump, StatusContext, View, ViewKind};

/// The home view.
#[derive(Debug)]
pub struct Home;

impl View for Home {
    const READS_ROWS: bool = false;
    const SLUG: &'static str = "home";
    const LABEL: &'static str = "Home";
    type State = ();
    type Cache = ();

    fn has_content(bundle: &LoadedBundle) -> bool {
        super::common::has_scoreboard(bundle)
    }

    fn ui(ui: &mut egui::Ui, cx: &mut Context<'_>, _: &mut (), _: &mut ()) {
        crate::view::count_drawn(ui, "rows", tally(cx.bundles).0);
        if let Some(jump) = home_ui(ui, cx.bundles, cx.views, cx.hitboxes) {
            cx.jump = Some(jump);
        }
    }

    fn status(cx: &StatusContext<'_>, _: &(), _: &()) -> String {
        let (rows, reproduced, missed) = tally(cx.bundles);
        format!("; home_rows={rows}; reproduced={reproduced}; missed={missed}")
    }
}

/// One row of the home view, from a scoreboard row or a headline figure.
#[derive(Debug, Clone, PartialEq)]
pub struct HomeRow {
    pub result: String,
    pub step: String,
    pub value: f64,
    pub unit: String,
    /// The paper's figure as written (a value, a range).
    pub paper: String,
    pub reference: Option<f64>,
    pub criterion: String,
    pub verdict: Option<Verdict>,
}

impl HomeRow {
    fn from_score(row: &ScoreRow) -> Self {
        Self {
            result: row.method.clone(),
            step: row.step.clone(),
            value: row.value,
            unit: row.unit.clone(),
            paper: row.paper.clone(),
            reference: row.reference,
            criterion: row.criterion.clone(),
            verdict: row.verdict,
        }
    }

    fn from_figure(step: &str, figure: &Figure) -> Self {
        Self {
            result: figure.name.clone(),
            step: step.to_owned(),
            value: figure.value,
            unit: figure.unit.clone(),
            paper: figure
                .reference
                .map(|r| format::with_unit(r, &figure.unit))
                .unwrap_or_default(),
            reference: figure.reference,
            criterion: String::new(),
            verdict: None,
        }
    }

    /// yosoku's figure in the viewer's number format.
    pub fn value_text(&self) -> String {
        format::with_unit(self.value, &self.unit)
    }

    /// yosoku's figure minus the published one (percentage points for percentages).
    pub fn difference_text(&self) -> String {
        match self.reference {
            Some(r) if self.unit == "%" => {
                let d = self.value - r;
                let sign = if d > 0.0 {
                    "+"
                } else if d < 0.0 {
                    "−"
                } else {
                    ""
                };
                format!("{sign}{:.1} points", d.abs())
            }
            Some(r) => format::signed_with_unit(self.value - r, &self.unit),
            None => String::new(),
        }
    }

    /// The verdict in a word (beside its painted mark).
    pub fn verdict_text(&self) -> &'static str {
        match self.verdict {
            Some(Verdict::Reproduced) => "reproduced",
            Some(Verdict::Missed) => "missed",
            None => "no criterion",
        }
    }
}

/// The rows of one bundle: its scoreboard, else its headline figures.
pub fn rows(bundle: &LoadedBundle) -> Vec<HomeRow> {
    let Some(manifest) = &bundle.manifest else {
        return Vec::new();
    };
    if !manifest.scoreboard.is_empty() {
        return manifest
            .scoreboard
            .iter()
            .map(HomeRow::from_score)
            .collect();
    }
    manifest
        .figures()
        .filter(|(_, f)| f.headline)
        .map(|(step, f)| HomeRow::from_figure(step, f))
        .collect()
}

/// Counts over every bundle: (rows, reproduced, missed).
pub fn tally(bundles: &[LoadedBundle]) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for row in bundles.iter().flat_map(rows) {
        counts.0 += 1;
        match row.verdict {
            Some(Verdict::Reproduced) => counts.1 += 1,
            Some(Verdict::Missed) => counts.2 += 1,
            None => {}
        }
    }
    counts
}

/// The view that explains `step`'s results, and the table it opens on: the most specific of
/// `views` that draws one of its tables (the lowest [`Explains::Rank`]: cost components in the
/// cost breakdown, per-rank times in the per-rank bars, candidate rates in the throughput view,
/// predictions beside measurements in the validation view, timelines in the Gantt). A step whose
/// tables no view draws (a comparison with a paper's table, say) leads to a view of the tables it
/// read (the manifest records them), and then of theirs; anything else to the
/// [`Explains::AnyTable`] view (the table browser) on the step's first table.
pub fn explain(bundle: &LoadedBundle, step: &str, views: &[&'static dyn ViewKind]) -> Jump {
    let mut ranked: Vec<(u8, &'static dyn ViewKind)> = views
        .iter()
        .filter_map(|v| match v.explains() {
            Explains::Rank(rank) => Some((rank, *v)),
            Explains::Never | Explains::AnyTable => None,
        })
        .collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    let own: Vec<_> = bundle.step_tables(step).collect();
    if let Some(jump) = view_of(bundle, &own, &ranked) {
        return jump;
    }
    // Breadth first through what the step read, at most a few steps back.
    let mut frontier = vec![step.to_owned()];
    let mut seen = frontier.clone();
    for _ in 0..4 {
        let read: Vec<String> = frontier
            .iter()
            .flat_map(|s| bundle.step_inputs(s))
            .collect();
        let tables: Vec<_> = bundle
            .tables
            .iter()
            .filter(|t| read.contains(&t.name))
            .collect();
        if let Some(jump) = view_of(bundle, &tables, &ranked) {
            return jump;
        }
        frontier = read
            .iter()
            .filter_map(|t| t.split_once('.').map(|(ns, _)| ns.to_owned()))
            .filter(|ns| !seen.contains(ns))
            .collect();
        frontier.dedup();
        seen.extend(frontier.iter().cloned());
        if frontier.is_empty() {
            break;
        }
    }
    Jump {
        bundle: bundle.name(),
        view: views
            .iter()
            .find(|v| v.explains() == Explains::AnyTable)
            .map_or(Home::SLUG, |v| v.slug()),
        table: own.first().map(|t| t.name.clone()),
    }
}

/// The first of `ranked` (in rank order) that draws one of `tables`.
fn view_of(
    bundle: &LoadedBundle,
    tables: &[&LoadedTable],
    ranked: &[(u8, &'static dyn ViewKind)],
) -> Option<Jump> {
    ranked.iter().find_map(|(_, view)| {
        tables.iter().find(|t| view.draws(&t.batch)).map(|t| Jump {
            bundle: bundle.name(),
            view: view.slug(),
            table: Some(t.name.clone()),
        })
    })
}

/// Draws the home view; returns the row link clicked this frame. `hitboxes` gets each link's
/// rectangle as `home:<bundle>:<row>` (the browser test clicks them).
fn home_ui(
    ui: &mut egui::Ui,
    bundles: &[LoadedBundle],
    views: &[&'static dyn ViewKind],
    hitboxes: &mut Vec<(String, egui::Rect)>,
) -> Option<Jump> {
    let mut jump = None;
    let widths = text_widths(ui);
    // Both ways: on a narrow window the grid scrolls sideways rather than losing its right
    // columns.
    egui::ScrollArea::both().show(ui, |ui| {
        ui.heading("What yosoku found");
        let (n, reproduced, missed) = tally(bundles);
        ui.label(format!(
            "{} bundles; {n} results: {reproduced} reproduce their paper, {missed} miss, {} have no criterion. \
             A result's step opens the view behind it.",
            bundles.len(),
            n - reproduced - missed
        ));
        let good = if ui.visuals().dark_mode {
            egui::Color32::from_rgb(90, 200, 110)
        } else {
            egui::Color32::from_rgb(20, 130, 50)
        };
        let bad = ui.visuals().error_fg_color;
        ui.add_space(6.0);
        // One grid for every bundle, so that columns line up down the page.
        egui::Grid::new("home")
            .striped(true)
            .spacing([16.0, 4.0])
            .show(ui, |ui| {
                for h in ["", "result", "yosoku", "paper", "difference", "explained in"] {
                    ui.strong(h);
                }
                ui.end_row();
                for bundle in bundles {
                    let name = bundle.name();
                    ui.label("");
                    let title = ui.label(egui::RichText::new(&name).strong().size(15.0));
                    if let Some(m) = &bundle.manifest {
                        title.on_hover_text(&m.pipeline.description);
                    }
                    ui.end_row();
                    let rows = rows(bundle);
                    if rows.is_empty() {
                        ui.label("");
                        ui.weak(if bundle.manifest.is_some() {
                            "no headline figures: see the Bundles and Tables views"
                        } else {
                            "tables dropped without their manifest: no figures"
                        });
                        ui.end_row();
                        continue;
                    }
                    for (i, row) in rows.iter().enumerate() {
                        let at = RowAt { bundle, name: &name, i, views, widths };
                        if let Some(j) = row_ui(ui, &at, row, (good, bad), hitboxes) {
                            jump = Some(j);
                        }
                    }
                }
            });
    });
    jump
}

/// Where a row of the home grid is: its bundle (and the bundle's name), its index, and the views
/// its link may lead to.
struct RowAt<'a> {
    bundle: &'a LoadedBundle,
    name: &'a str,
    i: usize,
    views: &'a [&'static dyn ViewKind],
    /// The widths the result and the paper's text wrap at.
    widths: [f32; 2],
}

/// The widths the result and paper columns wrap their text at, so that the grid, links
/// included, fits the panel: what the other columns leave (about 34 body-text heights: the
/// verdict, the two figures, the difference and the step's link), shared 55:45, and never
/// under 12 heights each (a narrower panel scrolls sideways).
fn text_widths(ui: &egui::Ui) -> [f32; 2] {
    let em = ui.text_style_height(&egui::TextStyle::Body);
    let free = (ui.available_width() - 34.0 * em).max(24.0 * em);
    [0.55 * free, 0.45 * free]
}

/// `text` in a grid cell, wrapped at `width`.
fn wrapped(ui: &mut egui::Ui, text: &str, width: f32) {
    ui.scope(|ui| {
        ui.set_max_width(width);
        ui.add(egui::Label::new(text).wrap());
    });
}

/// One result's row of the home grid; the jump when its link is clicked.
fn row_ui(
    ui: &mut egui::Ui,
    at: &RowAt<'_>,
    row: &HomeRow,
    (good, bad): (egui::Color32, egui::Color32),
    hitboxes: &mut Vec<(String, egui::Rect)>,
) -> Option<Jump> {
    let mark = match row.verdict {
        Some(Verdict::Reproduced) => egui::RichText::new(row.verdict_text()).color(good),
        Some(Verdict::Missed) => egui::RichText::new(row.verdict_text()).color(bad),
        None => egui::RichText::new(row.verdict_text()).weak(),
    };
    let criterion = if row.criterion.is_empty() {
        "The pipeline sets no criterion for this result.".to_owned()
    } else {
        format!("Reproduced when {}.", row.criterion)
    };
    ui.horizontal(|ui| {
        verdict_mark(ui, row.verdict, good, bad);
        ui.label(mark);
    })
    .response
    .on_hover_text(criterion);
    wrapped(ui, &row.result, at.widths[0]);
    ui.strong(row.value_text())
        .on_hover_text(format!("{} {}", row.value, row.unit));
    wrapped(ui, &row.paper, at.widths[1]);
    ui.label(row.difference_text());
    // The step it comes from, as the link to the view that explains it (found when hovered or
    // clicked, not every frame).
    let link = ui
        .link(egui::RichText::new(format!("{} ›", row.step)).monospace())
        .on_hover_ui(|ui| {
            let target = explain(at.bundle, &row.step, at.views);
            let label = at
                .views
                .iter()
                .find(|v| v.slug() == target.view)
                .map_or(target.view, |v| v.label());
            ui.label(format!(
                "Open {label} on {}",
                target.table.as_deref().unwrap_or("this bundle")
            ));
        });
    hitboxes.push((format!("home:{}:{}", at.name, at.i), link.rect));
    let jump = link
        .clicked()
        .then(|| explain(at.bundle, &row.step, at.views));
    ui.end_row();
    jump
}

/// A mark painted, not typed (egui's bundled fonts have no check mark): a tick in a green disc
/// for a reproduced result, a cross in a red one for a missed one, a grey ring without a criterion.
fn verdict_mark(
    ui: &mut egui::Ui,
    verdict: Option<Verdict>,
    good: egui::Color32,
    bad: egui::Color32,
) {
    let size = ui.text_style_height(&egui::TextStyle::Body);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    let painter = ui.painter();
    let c = rect.center();
    let r = size * 0.45;
    let white = egui::Stroke::new(size * 0.13, egui::Color32::WHITE);
    match verdict {
        Some(Verdict::Reproduced) => {
            painter.circle_filled(c, r, good);
            painter.line(
                vec![
                    c + egui::vec2(-0.5 * r, 0.0),
                    c + egui::vec2(-0.1 * r, 0.4 * r),
                    c + egui::vec2(0.55 * r, -0.45 * r),
                ],
                white,
            );
        }
        Some(Verdict::Missed) => {
            painter.circle_filled(c, r, bad);
            let d = 0.4 * r;
            painter.line_segment([c + egui::vec2(-d, -d), c + egui::vec2(d, d)], white);
            painter.line_segment([c + egui::vec2(-d, d), c + egui::vec2(d, -d)], white);
        }
        None => {
            painter.circle_stroke(
                c,
                r * 0.8,
                egui::Stroke::new(1.0, ui.visuals().weak_text_color()),
            );
        }
    }
}
