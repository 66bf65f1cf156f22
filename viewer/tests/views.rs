//! Every view, driven through its widgets (egui_kittest, AccessKit labels) on fixture bundles:
//! a real CSX600 bundle (the Monte Carlo pipeline), a real counter-model bundle (one kernel on
//! the Tesla K40) and a synthetic MPI-blocks bundle for the Gantt and per-rank views.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Float64Array, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use yosoku_viewer::views::gantt::Gantt;
use yosoku_viewer::views::ranks::RankBars;
use yosoku_viewer::views::tables::Tables;
use yosoku_viewer::views::validation::Validation;
use yosoku_viewer::{LoadedBundle, ViewState, ViewerApp};

fn fixture(name: &str) -> LoadedBundle {
    LoadedBundle::from_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bundles")
            .join(name),
    )
    .unwrap()
}

/// The zipped synthetic MPI blocks (`tests/fixtures/mpi-blocks-synthetic.zip`, two loose
/// `.arrow` tables, no manifest): the Gantt and per-rank fixture here and the file the browser
/// test drops on the page.
const MPI_ZIP: &str = "tests/fixtures/mpi-blocks-synthetic.zip";

/// Synthetic MPI blocks: 4 ranks, compute then communication, twice; "measured" and a
/// "predicted" copy 10 % shorter. Test data only, not a measurement.
fn mpi_tables() -> Vec<(String, RecordBatch)> {
    let mut tables = Vec::new();
    for (name, scale) in [("measured.mpi_blocks", 1.0), ("predicted.mpi_blocks", 0.9)] {
        let (mut rank, mut kind, mut start, mut duration) = (vec![], vec![], vec![], vec![]);
        for r in 0..4 {
            let mut t = 0.0;
            for i in 0..4 {
                let d = scale
                    * if i % 2 == 0 {
                        1.0 + 0.1 * f64::from(r)
                    } else {
                        0.5
                    };
                rank.push(r);
                kind.push(if i % 2 == 0 {
                    "compute"
                } else {
                    "communication"
                });
                start.push(t);
                duration.push(d);
                t += d;
            }
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("rank", DataType::Int32, false),
            Field::new("kind", DataType::Utf8, false),
            Field::new("start_secs", DataType::Float64, true),
            Field::new("duration_secs", DataType::Float64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(rank)),
                Arc::new(StringArray::from(kind)),
                Arc::new(Float64Array::from(start)),
                Arc::new(Float64Array::from(duration)),
            ],
        )
        .unwrap();
        tables.push((name.to_owned(), batch));
    }
    tables
}

fn mpi_bundle() -> LoadedBundle {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(MPI_ZIP);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with `cargo xtask bless`)",
            path.display()
        )
    });
    LoadedBundle::from_files(
        "mpi-blocks-synthetic.zip",
        &[("mpi-blocks-synthetic.zip".into(), bytes)],
    )
    .unwrap()
}

/// The committed zip holds exactly what `mpi_tables` builds (`YOSOKU_BLESS=1` rewrites it).
#[test]
fn the_zipped_mpi_fixture_is_current_and_reads_back() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(MPI_ZIP);
    if std::env::var_os("YOSOKU_BLESS").is_some() {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default());
        for (name, batch) in mpi_tables() {
            zip.start_file(format!("mpi-blocks-synthetic/{name}.arrow"), options)
                .unwrap();
            std::io::Write::write_all(&mut zip, &yosoku_bundle::ipc::encode(&batch).unwrap())
                .unwrap();
        }
        std::fs::write(&path, zip.finish().unwrap().into_inner()).unwrap();
    }
    let bundle = mpi_bundle();
    assert_eq!(bundle.name(), "mpi-blocks-synthetic");
    let expected = mpi_tables();
    assert_eq!(bundle.tables.len(), expected.len());
    for (name, batch) in expected {
        let table = bundle
            .table(&name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(table.batch, batch, "{name}");
        assert_eq!(table.kind.as_deref(), Some("mpi_blocks"));
    }
}

/// A bundle of one table built in a test (no manifest): `origin`, the table `name` of `kind`.
fn one_table(origin: &str, name: &str, kind: &str, batch: RecordBatch) -> LoadedBundle {
    LoadedBundle {
        origin: origin.into(),
        alias: None,
        manifest: None,
        tables: vec![yosoku_viewer::data::LoadedTable::loaded(
            name,
            Some(kind.into()),
            batch,
        )],
        traces: Vec::new(),
    }
}

fn shows(h: &Harness<'_, ViewerApp>, text: &str) {
    assert!(
        h.query_all_by_label_contains(text).next().is_some(),
        "nothing shows {text:?}; status: {}",
        h.state().status_line()
    );
}

fn harness(bundles: Vec<LoadedBundle>, tab: &str) -> Harness<'static, ViewerApp> {
    let state = ViewState {
        tab: tab.to_owned(),
        dark: true,
        ..ViewState::default()
    };
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1600.0))
        .build_ui_state(
            |ui, app: &mut ViewerApp| app.ui(ui),
            ViewerApp::new(bundles, state),
        );
    h.run();
    h
}

/// The home view: what the viewer opens on. The CSX600 bundle's scoreboard (two results of the
/// paper's Table 4), its figures in the viewer's number format beside the published ones, the
/// verdicts; a bundle without a scoreboard lists its headline figures; "explain" opens the view
/// behind a result on its table.
#[test]
fn home_shows_each_result_beside_the_paper_and_explains_it() {
    assert_eq!(ViewState::default().tab, "home");
    let mut h = harness(
        vec![fixture("csx600-montecarlo"), fixture("k40-bpnn")],
        &ViewState::default().tab,
    );
    let status = h.state().status_line();
    assert!(status.contains("tab=home"), "{status}");
    // 2 scoreboard rows (both reproduced) + the k40 bundle's 9 headline figures (no criterion).
    assert!(
        status.contains("home_rows=11; reproduced=2; missed=0"),
        "{status}"
    );
    shows(&h, "What yosoku found");
    shows(&h, "CSX600 op-count model: Monte Carlo d=2 time");
    // 3.777149... s with four significant digits, the paper's 3.775 s, the difference in ms.
    shows(&h, "3.777 s");
    shows(&h, "3.775 s");
    shows(&h, "+2.149 ms");
    shows(&h, "reproduced");
    shows(&h, "no criterion");
    // The k40 bundle has no scoreboard: its headline figures, percentages to one decimal.
    shows(&h, "loo: mean |error|, best model");
    let rows = yosoku_viewer::views::home::rows(&fixture("k40-bpnn"));
    let percent = rows.iter().find(|r| r.unit == "%").unwrap();
    let text = percent.value_text();
    assert!(
        text.ends_with(" %") && text.split('.').nth(1).unwrap().len() == 3,
        "{text}"
    );
    shows(&h, &text);
    // The first row's step, a link: the d=2 total comes from a comparison with the paper's table
    // (no view draws it), which read the predictions beside the measured times: the validation
    // view on them.
    assert_eq!(h.query_all_by_label_contains(" ›").count(), 11);
    let links: Vec<_> = h.query_all_by_label("paper_totals ›").collect();
    assert_eq!(links.len(), 2);
    links[0].click();
    h.run();
    let state = &h.state().state;
    assert_eq!(state.tab, "validation");
    assert_eq!(state.bundle.as_deref(), Some("csx600-montecarlo"));
    assert_eq!(
        h.state().view_state::<Validation>().unwrap().table,
        "measured.predictions"
    );
    shows(&h, "montecarlo");
}

#[test]
fn provenance_shows_the_pipeline_inputs_and_figures() {
    let mut h = harness(vec![fixture("csx600-montecarlo")], "bundles");
    shows(&h, "csx600-montecarlo");
    shows(&h, "Inputs (");
    shows(&h, "opcount");
    // A headline figure of the paper's Table 4, with the published value beside it.
    shows(&h, "3.775");
    h.get_by_label("Tables").click();
    h.run();
    assert_eq!(h.state().state.tab, "tables");
}

#[test]
fn the_table_browser_sorts_filters_and_counts() {
    let mut h = harness(vec![fixture("csx600-montecarlo")], "tables");
    // The first table in manifest order is shown; pick the cost breakdown.
    h.state_mut().view_state_mut::<Tables>().unwrap().table = "opcount.cost_breakdown".into();
    h.run();
    let rows = h.state().caches_rows().unwrap();
    assert!(rows > 5, "{rows}");
    h.state_mut().view_state_mut::<Tables>().unwrap().filter = "mul".into();
    h.run();
    let filtered = h.state().caches_rows().unwrap();
    assert!(filtered < rows && filtered > 0, "{filtered} of {rows}");
    shows(&h, &format!("{filtered} of {rows} rows"));
    // Sort by a column through its header button.
    h.get_by_label("predicted_secs").click();
    h.run();
    assert_eq!(
        h.state()
            .view_state::<Tables>()
            .unwrap()
            .sort_column
            .as_deref(),
        Some("predicted_secs")
    );
    h.get_by_label("predicted_secs (ascending)").click();
    h.run();
    assert!(h.state().view_state::<Tables>().unwrap().descending);
}

#[test]
fn the_model_view_shows_summary_coefficients_and_the_selection_path() {
    let h = harness(vec![fixture("k40-bpnn")], "model");
    shows(&h, "stepwise — device=Tesla-K40");
    shows(&h, "Coefficients");
    // The standardised column's header (exact label, not the note under the table).
    let _ = h.get_by_label("standardised");
    shows(&h, "Selection path");
    // The first term selected, and the summary's R^2.
    shows(&h, "inst_executed");
    shows(&h, "adjusted_r2");
}

#[test]
fn validation_plots_predictions_and_tabulates_errors_per_program() {
    let mut h = harness(vec![fixture("k40-bpnn")], "validation");
    h.run();
    let status = h.state().status_line();
    assert!(status.contains("tab=validation"), "{status}");
    // Two kernels, 77 sizes: the default hold-out (the first, in-sample `fit`) or loo.
    assert!(status.contains("program=2"), "{status}");
    // It opens on the predictions of the step of the pipeline's first headline figure (this
    // bundle has no scoreboard): the stepwise fit's. The cross-validation's is one pick away.
    assert_eq!(
        h.state().view_state::<Validation>().unwrap().table,
        "stepwise.predictions"
    );
    h.state_mut().view_state_mut::<Validation>().unwrap().table = "stepwise_cv.predictions".into();
    h.run();
    shows(&h, "Errors per program");
    shows(&h, "bpnn_layerforward_CUDA");
    shows(&h, "calculate_temp");
    // Switch the hold-out through its combo box.
    shows(&h, "hold-out");
    h.state_mut()
        .view_state_mut::<Validation>()
        .unwrap()
        .validation = "kfold(5)".into();
    h.run();
    assert_eq!(
        h.state().view_state::<Validation>().unwrap().validation,
        "kfold(5)"
    );
    assert!(
        h.state().status_line().contains("points=77"),
        "{}",
        h.state().status_line()
    );
    // Errors by device instead of by program: one GPU in this bundle.
    h.state_mut().view_state_mut::<Validation>().unwrap().by = "device".into();
    h.run();
    assert!(
        h.state().status_line().contains("device=1"),
        "{}",
        h.state().status_line()
    );
    shows(&h, "Errors per device");
    shows(&h, "Tesla-K40");
}

#[test]
fn the_cost_breakdown_shows_components_and_the_measured_time() {
    let h = harness(vec![fixture("csx600-montecarlo")], "cost");
    shows(&h, "Predicted and measured");
    shows(&h, "poly");
    // The measured time of the same program (3.643 s for d = 2, docs/methods.md, section 5, Table 4).
    shows(&h, "3.643 s");
}

#[test]
fn the_gantt_draws_every_rank_and_stacks_a_prediction() {
    let mut h = harness(vec![mpi_bundle()], "gantt");
    let status = h.state().status_line();
    assert!(status.contains("records=16; lanes=4; shown=4"), "{status}");
    shows(&h, "compute");
    shows(&h, "communication");
    h.state_mut().view_state_mut::<Gantt>().unwrap().compare = "predicted.mpi_blocks".into();
    h.run();
    let status = h.state().status_line();
    assert!(status.contains("records=32; lanes=8; shown=8"), "{status}");
}

#[test]
fn a_spans_table_shows_measured_and_predicted_timelines_on_their_own_lanes() {
    // Two ranks, measured and predicted (10 % shorter), plus an instant the chart does not draw.
    let mut b = yosoku_traces::spans::SpansBuilder::new();
    for (timeline, scale) in [
        (yosoku_traces::spans::Timeline::Measured, 1.0),
        (yosoku_traces::spans::Timeline::Predicted, 0.9),
    ] {
        for rank in 0..2 {
            let lane = format!("rank {rank}");
            let mut t = 0i64;
            for (i, kind) in ["compute", "communication", "compute"].iter().enumerate() {
                let d = (scale * (1e9 + 1e8 * i as f64)) as i64;
                b.push(&yosoku_traces::spans::Span::interval(
                    "run", timeline, &lane, "rank", kind, kind, t, d,
                ));
                t += d;
            }
        }
    }
    b.push(&yosoku_traces::spans::Span {
        event: yosoku_traces::spans::Event::Instant,
        ..yosoku_traces::spans::Span::interval(
            "run",
            yosoku_traces::spans::Timeline::Measured,
            "rank 0",
            "rank",
            "checkpoint",
            "io",
            5,
            0,
        )
    });
    let bundle = one_table("spans", "timeline.spans", "spans", b.finish().unwrap());
    let mut h = harness(vec![bundle], "gantt");
    let status = h.state().status_line();
    // 12 intervals on 4 lanes (run (measured): rank 0, ...); the instant is neither drawn nor
    // counted as skipped.
    assert!(status.contains("records=12; lanes=4; shown=4"), "{status}");
    shows(&h, "communication");
    assert!(!h.query_all_by_label_contains("skipped").any(|_| true));
    // Lanes are named `run (measured): rank 0`, ...: the filter finds the predicted ones.
    h.state_mut().view_state_mut::<Gantt>().unwrap().lane_filter = "(predicted): rank".into();
    h.run();
    let status = h.state().status_line();
    assert!(status.contains("lanes=4; shown=2"), "{status}");
}

#[test]
fn per_rank_bars_put_the_prediction_beside_the_measurement() {
    let mut h = harness(vec![mpi_bundle()], "ranks");
    h.state_mut().view_state_mut::<RankBars>().unwrap().compare = "predicted.mpi_blocks".into();
    h.run();
    shows(&h, "measured.mpi_blocks: compute");
    shows(&h, "predicted.mpi_blocks: communication");
    // Rank 3 computes 2 x 1.3 s measured, 2 x 1.17 s predicted.
    shows(&h, "2.6 s");
    shows(&h, "2.34 s");
}

#[test]
fn a_bundle_without_the_columns_says_so_and_the_theme_switches() {
    let mut h = harness(vec![fixture("csx600-montecarlo")], "gantt");
    shows(&h, "no table with a start");
    h.get_by_label("Light theme").click();
    h.run();
    assert!(!h.state().state.dark);
}

#[test]
fn the_open_dialog_browses_directories_and_opens_a_bundle() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut h = harness(vec![], "bundles");
    h.get_by_label("Browse...").click();
    h.run();
    // The dialog starts in results/ or the working directory; go to the fixtures instead.
    h.state_mut().open_dialog.open_at(&fixtures);
    h.run();
    shows(&h, "Open mpi-blocks-synthetic.zip");
    h.get_by_label("bundles/").click();
    h.run();
    shows(&h, "Open k40-bpnn");
    h.get_by_label("Open csx600-montecarlo").click();
    h.run();
    let requested = &h.state().open_requests;
    assert_eq!(requested.len(), 1, "{requested:?}");
    assert!(
        requested[0].ends_with("bundles/csx600-montecarlo"),
        "{requested:?}"
    );
    assert!(!h.state().open_dialog.is_open);
    // What the desktop host then does with the request.
    let opened = LoadedBundle::from_path(Path::new(&requested[0])).unwrap();
    assert_eq!(opened.name(), "csx600-montecarlo");
    let zipped = LoadedBundle::from_path(&fixtures.join("mpi-blocks-synthetic.zip")).unwrap();
    assert_eq!(zipped.tables.len(), 2);
}

/// A synthetic `throughputs` table: one device's copy at three widths. Test data only.
fn throughput_bundle() -> LoadedBundle {
    use arrow_array::{BooleanArray, Int64Array};
    let group = "device=gpu, program=copy";
    let batch = yosoku_tables::THROUGHPUTS
        .batch(vec![
            Arc::new(StringArray::from(vec![group; 3])),
            Arc::new(StringArray::from(vec!["float", "float4", "float16"])),
            Arc::new(Int64Array::from(vec![6, 6, 6])),
            Arc::new(Float64Array::from(vec![6.7e7; 3])),
            Arc::new(StringArray::from(vec!["bytes"; 3])),
            Arc::new(Float64Array::from(vec![2.0e11, 3.2e11, 2.4e11])),
            Arc::new(Float64Array::from(vec![2.5e11, 3.5e11, 2.9e11])),
            Arc::new(StringArray::from(vec!["bytes/s"; 3])),
            Arc::new(Float64Array::from(vec![0.625, 1.0, 0.75])),
            Arc::new(BooleanArray::from(vec![false, true, false])),
        ])
        .unwrap();
    let bytes = yosoku_bundle::ipc::encode(&batch).unwrap();
    LoadedBundle::from_files("width", &[("width.throughputs.arrow".into(), bytes)]).unwrap()
}

#[test]
fn the_throughput_view_bars_the_candidates_and_names_the_fastest() {
    let h = harness(vec![throughput_bundle()], "throughput");
    shows(&h, "device=gpu, program=copy: fastest float4");
    shows(&h, "float4 (fastest)");
    // 3.2e11 bytes/s in GB/s, and float's share of the fastest.
    shows(&h, "320 GB/s");
    shows(&h, "62.5 %");
    let h = harness(vec![fixture("csx600-montecarlo")], "throughput");
    shows(&h, "no table with candidates and rates");
}

/// A real scaling bundle (Extra-P's two-parameter test experiment modelled by `scaling_model`):
/// the call path, its model as Extra-P writes it, its time at 1.5 times the largest size, the plot
/// (the held-out configuration and the extrapolated region named in its legend).
#[test]
fn the_scaling_view_plots_each_call_path_with_its_model_and_extrapolation() {
    let h = harness(vec![fixture("extrap-two-parameter")], "scaling");
    shows(&h, "unknown / reg /  / total");
    shows(&h, "2.004104e-1 * x^(2) * log2(y)^(1)");
    shows(&h, "at 1.5 x the largest size");
    // The held-out configuration's error, in words under the plot's title.
    shows(&h, "Held out of the fit, x=60;y=5: measured ");
    // The pipeline's words for its parameters, above the plot (and on its axis).
    shows(
        &h,
        "Parameters: x: the first parameter of Extra-P's test experiment; y: its second",
    );
    assert!(
        h.state()
            .status_line()
            .contains("path=unknown / reg /  / total"),
        "{}",
        h.state().status_line()
    );
    let h = harness(vec![fixture("csx600-montecarlo")], "scaling");
    shows(&h, "no table with scaling curves");
}

/// A fixture read as the web page reads a served bundle: the manifest at once (it gives every
/// table's columns), each table's rows when a view needs them.
fn lazy_fixture(name: &str) -> LoadedBundle {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bundles")
        .join(name);
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    LoadedBundle::from_manifest_lazily(&dir.display().to_string(), &manifest, |f| {
        panic!("{f} read before a view needed it")
    })
    .unwrap()
}

/// Item 1 and 2 of the viewer's first-frame work: the home draws from the manifests alone; a
/// view that draws rows has its bundle's tables read first (saying so meanwhile); a bundle's
/// selections stay with it, so a filter set on one never empties another's view; the rows of
/// bundles not shown are dropped beyond the memory budget and read again when shown again.
#[test]
fn tables_are_read_when_a_view_needs_them_and_selections_stay_with_their_bundle() {
    let mut h = harness(
        vec![
            lazy_fixture("k40-bpnn"),
            lazy_fixture("extrap-two-parameter"),
        ],
        "home",
    );
    assert!(h.state().bundles.iter().all(|b| !b.is_loaded()));
    let status = h.state().status_line();
    assert!(status.contains("home_rows="), "{status}");
    // The validation view: its bundle's tables are read, then drawn.
    h.state_mut().open("k40-bpnn".into(), "validation");
    h.step();
    let status = h.state().status_line();
    assert!(status.contains("loading_tables="), "{status}");
    h.run();
    assert!(h.state().bundles[0].is_loaded());
    assert!(
        !h.state().bundles[1].is_loaded(),
        "only the bundle shown is read"
    );
    let status = h.state().status_line();
    assert!(status.contains("points=77"), "{status}");
    // A table and hold-out chosen here stay here.
    let chosen = h.state_mut().view_state_mut::<Validation>().unwrap();
    chosen.table = "stepwise_cv.predictions".into();
    chosen.validation = "kfold(5)".into();
    h.run();
    // Another bundle with a budget of nothing for the rest: its view opens on its own defaults
    // and draws its points; the first bundle's rows are dropped.
    h.state_mut().table_memory_budget_bytes = 0;
    h.state_mut()
        .open("extrap-two-parameter".into(), "validation");
    h.run();
    let validation = h.state().view_state::<Validation>().unwrap().clone();
    assert_eq!(validation.table, "scaling.predictions");
    assert_ne!(validation.validation, "kfold(5)");
    let status = h.state().status_line();
    assert!(
        status.contains("points=") && !status.contains("points=0"),
        "{status}"
    );
    assert!(
        !h.state().bundles[0].is_loaded(),
        "rows over budget dropped"
    );
    // Back: read again, with the hold-out chosen before.
    h.state_mut().open("k40-bpnn".into(), "validation");
    h.run();
    assert!(h.state().bundles[0].is_loaded());
    let validation = h.state().view_state::<Validation>().unwrap();
    assert_eq!(
        (validation.table.as_str(), validation.validation.as_str()),
        ("stepwise_cv.predictions", "kfold(5)")
    );
    assert!(
        h.state().status_line().contains("points=77"),
        "{}",
        h.state().status_line()
    );
}

/// Runs kept apart: an MPI source of two repeated runs draws each run's ranks as a lane group of
/// its own in the Gantt, and the per-rank bars show the mean of the runs with their spread,
/// never the sum.
#[test]
fn repeated_runs_are_kept_apart_in_the_gantt_and_averaged_in_the_bars() {
    let (mut run, mut rank, mut kind, mut start, mut duration) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (r, secs) in [("run-1", 1.0), ("run-2", 3.0)] {
        for k in 0..2 {
            run.push(r);
            rank.push(k);
            kind.push("compute");
            start.push(0.0);
            duration.push(secs);
        }
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("run_id", DataType::Utf8, false),
        Field::new("rank", DataType::Int32, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("start_secs", DataType::Float64, true),
        Field::new("duration_secs", DataType::Float64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(run)),
            Arc::new(Int32Array::from(rank)),
            Arc::new(StringArray::from(kind)),
            Arc::new(Float64Array::from(start)),
            Arc::new(Float64Array::from(duration)),
        ],
    )
    .unwrap();
    let bundle = one_table("runs", "full.mpi_blocks", "mpi_blocks", batch);
    let mut h = harness(vec![bundle.clone()], "gantt");
    h.run();
    let status = h.state().status_line();
    // Two ranks in each of two runs: four lanes, not two.
    assert!(status.contains("records=4; lanes=4"), "{status}");
    let mut h = harness(vec![bundle], "ranks");
    h.run();
    // The mean of 1 s and 3 s, with the least and most: not 4 s.
    shows(&h, "2 s (1 s to 3 s)");
    shows(&h, "the mean of its 2 runs");
    h.state_mut().view_state_mut::<RankBars>().unwrap().run = "run-2".into();
    h.run();
    shows(&h, "3 s");
}

/// The transfer scores: each scheme's methods as bars of the score chosen, learned and
/// baselines apart, the best named. A synthetic `transfer_scores` table (not a measurement).
#[test]
fn the_transfer_scores_bar_each_method_per_scheme_and_name_the_best() {
    use arrow_array::BooleanArray;
    let schema = Arc::new(Schema::new(vec![
        Field::new("validation", DataType::Utf8, false),
        Field::new("model", DataType::Utf8, false),
        Field::new("learned", DataType::Boolean, false),
        Field::new("median_abs_error_pct", DataType::Float64, true),
        Field::new("within_25_pct", DataType::Float64, true),
        Field::new("interval_coverage_pct", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["gpu_out", "gpu_out", "kernel_out"])),
            Arc::new(StringArray::from(vec!["ridge", "cores_clock", "ridge"])),
            Arc::new(BooleanArray::from(vec![true, false, true])),
            Arc::new(Float64Array::from(vec![8.6, 24.8, 12.2])),
            Arc::new(Float64Array::from(vec![85.2, 50.5, 73.9])),
            Arc::new(Float64Array::from(vec![93.6, 91.6, 86.5])),
        ],
    )
    .unwrap();
    let bundle = one_table("scores", "all.transfer_scores", "transfer_scores", batch);
    let h = harness(vec![bundle], "scores");
    let status = h.state().status_line();
    assert!(status.contains("schemes=2; bars=3"), "{status}");
    shows(&h, "gpu_out");
    shows(&h, "best: ridge (learned), 8.6");
}

/// Forecasts (predicted, not measured yet) are drawn over their size with their intervals, not
/// as an empty scatter; errors split by the measured time's decade. Synthetic forecasts (not a
/// measurement) and the real K40 fixture.
#[test]
fn forecasts_are_drawn_over_their_size_and_errors_split_by_duration() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("program", DataType::Utf8, false),
        Field::new("variant", DataType::Utf8, false),
        Field::new("device", DataType::Utf8, false),
        Field::new("predicted_secs", DataType::Float64, true),
        Field::new("measured_secs", DataType::Float64, true),
        Field::new("interval_low_secs", DataType::Float64, true),
        Field::new("interval_high_secs", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec!["lud", "lud", "hotspot"])),
            Arc::new(StringArray::from(vec!["64x64", "128x128", "512"])),
            Arc::new(StringArray::from(vec!["NVIDIA H200"; 3])),
            Arc::new(Float64Array::from(vec![4e-6, 9e-6, 2e-5])),
            Arc::new(Float64Array::from(vec![None, None, None])),
            Arc::new(Float64Array::from(vec![2e-6, 5e-6, 1e-5])),
            Arc::new(Float64Array::from(vec![8e-6, 2e-5, 4e-5])),
        ],
    )
    .unwrap();
    let bundle = one_table("forecast", "forecast.predictions", "predictions", batch);
    let h = harness(vec![bundle], "validation");
    let status = h.state().status_line();
    assert!(
        status.contains("points=0; points_in_view=0; forecasts=3"),
        "{status}"
    );
    assert!(status.contains("forecasts:3"), "{status}");
    shows(&h, "3 forecasts without a measurement yet");

    let mut h = harness(vec![fixture("k40-bpnn")], "validation");
    h.state_mut().view_state_mut::<Validation>().unwrap().by = "measured duration".into();
    h.run();
    shows(&h, "Errors per measured duration");
    shows(&h, "µs to ");
}

/// Nothing outside the plot area: every plotting view, on a bundle it has data for, shows all
/// of its points and bar ends at the plot's own bounds (`outside` is never among `drawn=`), and
/// draws what it is for.
#[test]
fn every_plot_shows_all_it_draws_at_its_own_bounds() {
    for (tab, bundle, wanted) in [
        ("validation", fixture("k40-bpnn"), "points"),
        ("model", fixture("k40-bpnn"), "points"),
        ("cost", fixture("csx600-montecarlo"), "bars"),
        ("ranks", mpi_bundle(), "bars"),
        ("throughput", throughput_bundle(), "bars"),
        ("scaling", fixture("extrap-two-parameter"), "points"),
    ] {
        let h = harness(vec![bundle], tab);
        let status = h.state().status_line();
        let drawn = status
            .split("; ")
            .find_map(|f| f.strip_prefix("drawn="))
            .unwrap_or_default();
        assert!(drawn.contains(&format!("{wanted}:")), "{tab}: {status}");
        assert!(!drawn.contains("outside"), "{tab}: {status}");
    }
}
