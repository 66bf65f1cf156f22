//! A large trace stored as a pyramid (`yosoku trace import`) in the Gantt: the overview from
//! level 0, finer levels as the view narrows, single records from the chunks at the end, the
//! lane filter, and only what is on screen loaded.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use egui_kittest::Harness;
use yosoku_traces::kernel_trace::{self, Header, LaneBy, Record, Timer};
use yosoku_viewer::views::gantt::Gantt;
use yosoku_viewer::{LoadedBundle, ViewState, ViewerApp};

/// 8 SMs, 256 blocks of 64 threads (block b on SM b % 8), 8 points a thread: 131,072 synthetic
/// records, written to `dir/k.yktrace`.
fn synthetic_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let mut header = Header::new("test GPU", Timer::Clock64, 8, 1_000_000, 0);
    header.synthetic = true;
    let mut records = Vec::new();
    for block in 0..256u32 {
        for thread in 0..64u32 {
            let mut t = 1_000 * u64::from(block % 8) + u64::from(block / 8) * 5_000;
            for point in 0..8u32 {
                records.push(Record {
                    block,
                    thread,
                    sm: block % 8,
                    point,
                    timestamp: t,
                });
                t += 100 + u64::from((thread * 7 + point * 13) % 50);
            }
        }
    }
    let file = dir.join("k.yktrace");
    let mut out = std::fs::File::create(&file).unwrap();
    kernel_trace::write(&header, &records, &mut out).unwrap();
    drop(out);
    file
}

/// [`synthetic_trace`] imported with a lane per SM.
fn synthetic_bundle(dir: &std::path::Path) -> LoadedBundle {
    let file = synthetic_trace(dir);
    let bundle = dir.join("bundle");
    let r = yosoku_runner::trace_import::import_kernel_trace(&file, &bundle, LaneBy::Sm).unwrap();
    assert_eq!((r.records, r.spans, r.lanes), (131_072, 256 * 64 * 7, 8));
    assert_eq!(r.provenance, "synthetic");
    LoadedBundle::from_dir(&bundle).unwrap()
}

fn status_field(status: &str, key: &str) -> String {
    status
        .split("; ")
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or("")
        .to_owned()
}

#[test]
fn a_pyramid_trace_opens_on_its_overview_and_zooms_down_to_single_records() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = synthetic_bundle(dir.path());
    assert_eq!(bundle.traces.len(), 1);
    let index = bundle.traces[0].index.clone();
    let state = ViewState {
        tab: "gantt".into(),
        ..ViewState::default()
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1200.0, 800.0))
        .build_ui_state(
            |ui, app: &mut ViewerApp| app.ui(ui),
            ViewerApp::new(vec![bundle], state),
        );
    h.run();
    let s = h.state().status_line();
    assert_eq!(status_field(&s, "trace"), "k", "{s}");
    assert_eq!(status_field(&s, "trace_mode"), "pyramid", "{s}");
    assert_eq!(status_field(&s, "trace_level"), "0", "{s}");
    assert_eq!(status_field(&s, "lanes"), "8", "{s}");
    // Only the overview tile was read.
    assert_eq!(status_field(&s, "trace_loads"), "1", "{s}");

    // 800 ns inside the 13th wave of blocks (waves start every 5,000 ns): few enough records to
    // draw one by one, from the chunks that hold them.
    let t0 = index.t_min_ns as f64;
    assert!(index.t_max_ns as f64 - t0 > 150_000.0);
    h.state_mut().view_state_mut::<Gantt>().unwrap().trace_view =
        Some((t0 + 60_100.0, t0 + 60_900.0));
    h.run();
    let s = h.state().status_line();
    assert_eq!(status_field(&s, "trace_mode"), "records", "{s}");
    let drawn: usize = status_field(&s, "records_drawn").parse().unwrap();
    assert!(drawn > 0 && drawn < 20_000, "{s}");
    // The overview and the one chunk in view, no finer tiles.
    assert_eq!(status_field(&s, "trace_loads"), "2", "{s}");

    // The whole trace again, one lane.
    h.state_mut().view_state_mut::<Gantt>().unwrap().trace_view = None;
    h.state_mut().view_state_mut::<Gantt>().unwrap().lane_filter = "SM 3".into();
    h.run();
    let s = h.state().status_line();
    assert_eq!(status_field(&s, "lanes"), "1", "{s}");
    assert_eq!(status_field(&s, "trace_mode"), "pyramid", "{s}");
}

/// A lane per block: 256 lanes, grouped by the SM each block ran on (SM 0's 32 blocks first, in
/// block order), so that a Gantt of many blocks reads SM by SM and each label says where.
#[test]
fn block_lanes_come_grouped_by_the_sm_they_ran_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = synthetic_trace(dir.path());
    let bundle = dir.path().join("blocks");
    let r =
        yosoku_runner::trace_import::import_kernel_trace(&file, &bundle, LaneBy::Block).unwrap();
    assert_eq!(r.lanes, 256);
    let bundle = LoadedBundle::from_dir(&bundle).unwrap();
    let lanes = &bundle.traces[0].index.lanes;
    assert_eq!(lanes[0], "SM 0 / block 0");
    assert_eq!(lanes[1], "SM 0 / block 8");
    assert!(lanes[..32].iter().all(|l| l.starts_with("SM 0 / block ")));
    assert_eq!(lanes[32], "SM 1 / block 1");
    assert_eq!(lanes[255], "SM 7 / block 255");
}
