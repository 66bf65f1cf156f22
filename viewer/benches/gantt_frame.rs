//! Frame time of the Gantt view (BENCHMARKS.md): 1 M and 10 M synthetic records in 64 lanes,
//! one 1920x1080 frame = the egui pass that draws the chart (per-pixel aggregation from the
//! lane pyramids, one rectangle per run of like pixels) plus tessellation into triangles, which
//! is the CPU work of a frame; uploading a few thousand rectangles to the GPU is not included.
//!
//! `cargo bench -p yosoku-viewer --bench gantt_frame`
//!
//! Each iteration draws a different view (the whole run, then zoomed or panned), so nothing from
//! the previous frame can be reused. The comparison, `naive_one_rect_per_record` (1 M only), draws
//! the whole run with one rectangle per record, as a chart without per-pixel aggregation does.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use yosoku_viewer::gantt::{GanttData, synthetic};
use yosoku_viewer::views::gantt::table::{Cache, chart};
use yosoku_viewer::views::gantt::timeline::State;

const LANES: usize = 64;

fn screen() -> egui::RawInput {
    egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1920.0, 1080.0),
        )),
        ..Default::default()
    }
}

fn frame(ctx: &egui::Context, cache: &mut Cache, state: &mut State) -> usize {
    let output = ctx.run_ui(screen(), |ui| chart(ui, cache, state));
    let primitives = ctx.tessellate(output.shapes, output.pixels_per_point);
    primitives.len()
}

/// The comparison: one rectangle per record, as a chart without per-pixel aggregation draws.
fn naive_frame(
    ctx: &egui::Context,
    records: &(Vec<String>, Vec<f64>, Vec<f64>, Vec<String>),
    view: (f64, f64),
) -> usize {
    let (lane, start, end, kind) = records;
    let output = ctx.run_ui(screen(), |ui| {
        let rect = ui.max_rect();
        let painter = ui.painter_at(rect);
        let row = rect.height() / LANES as f32;
        let scale = f64::from(rect.width()) / (view.1 - view.0);
        for i in 0..start.len() {
            if end[i] < view.0 || start[i] > view.1 {
                continue;
            }
            let l: usize = lane[i].parse().unwrap_or(0);
            let x0 = rect.left() + ((start[i] - view.0) * scale) as f32;
            let x1 = rect.left() + ((end[i] - view.0) * scale) as f32;
            let y = rect.top() + l as f32 * row;
            let colour = if kind[i] == "compute" {
                egui::Color32::BLUE
            } else {
                egui::Color32::RED
            };
            painter.rect_filled(
                egui::Rect::from_min_max(egui::pos2(x0, y), egui::pos2(x1, y + row - 1.0)),
                0.0,
                colour,
            );
        }
    });
    let primitives = ctx.tessellate(output.shapes, output.pixels_per_point);
    primitives.len()
}

fn gantt(c: &mut Criterion) {
    let mut group = c.benchmark_group("gantt_frame");
    group.sample_size(30);
    for records in [1_000_000, 10_000_000] {
        let raw = synthetic(records, LANES);
        let (data, skipped) = GanttData::new(&raw.0, &raw.1, &raw.2, &raw.3);
        assert_eq!((data.len, skipped), (records, 0));
        let (t_min, t_max) = (data.t_min, data.t_max);
        let mut cache = Cache::new(data);
        let ctx = egui::Context::default();
        let mut state = State::default();
        // A first frame lays out fonts.
        frame(&ctx, &mut cache, &mut state);
        let span = t_max - t_min;
        // Whole run, half, 1 %, 0.01 %: from many records per pixel to a few pixels per record.
        let views: Vec<(f64, f64)> = [1.0, 0.5, 0.01, 0.0001]
            .iter()
            .map(|f| {
                let mid = t_min + 0.37 * span;
                (mid - 0.5 * f * span, mid + 0.5 * f * span)
            })
            .collect();
        let label = format!("{}M", records / 1_000_000);
        group.bench_function(BenchmarkId::new("whole_run", &label), |b| {
            // Alternate between the whole run and a copy shifted by one pixel.
            let mut i = 0u32;
            b.iter(|| {
                i += 1;
                let shift = if i.is_multiple_of(2) {
                    0.0
                } else {
                    span / 1800.0
                };
                state.view = Some((t_min + shift, t_max + shift));
                black_box(frame(&ctx, &mut cache, &mut state))
            });
        });
        group.bench_function(BenchmarkId::new("zoom_cycle", &label), |b| {
            let mut i = 0usize;
            b.iter(|| {
                i += 1;
                state.view = Some(views[i % views.len()]);
                black_box(frame(&ctx, &mut cache, &mut state))
            });
        });
        if records == 1_000_000 {
            let ctx = egui::Context::default();
            group.sample_size(10);
            group.bench_function(BenchmarkId::new("naive_one_rect_per_record", &label), |b| {
                b.iter(|| black_box(naive_frame(&ctx, &raw, (t_min, t_max))));
            });
            group.sample_size(30);
        }
    }
    group.finish();
}

criterion_group!(benches, gantt);
criterion_main!(benches);
