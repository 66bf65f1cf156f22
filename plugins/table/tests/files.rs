//! The table plugin on files of every format it reads, and on the bad inputs users have.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray as _;
use arrow_array::types::Float64Type;
use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use yosoku_plugin_table::{Mapping, import};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn mapping() -> Mapping {
    Mapping {
        default_device: "unknown".into(),
        phase: "total".into(),
        ..Mapping::default()
    }
}

fn table<'a>(tables: &'a [(String, RecordBatch)], name: &str) -> &'a RecordBatch {
    &tables.iter().find(|(n, _)| n == name).unwrap().1
}

fn err(paths: &[PathBuf], m: &Mapping) -> String {
    import(paths, m).unwrap_err().to_string()
}

const CSV: &str = "\
# measured on my laptop
device,program,n,threads,elapsed_ms
cpu,stream,1000,1,2.5
cpu,stream,2000,1,5.0
cpu,stream,2000,2,
";

#[test]
fn a_csv_with_canonical_names_needs_no_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let csv = CSV.replace("2,\n", "2,2.6\n");
    let p = write(dir.path(), "mine.csv", &csv);
    let imported = import(&[p], &mapping()).unwrap();
    let runs = table(&imported.tables, "runs");
    assert_eq!(runs.num_rows(), 3);
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert_eq!(secs.values().to_vec(), vec![2.5e-3, 5.0e-3, 2.6e-3]);
    let ids = runs
        .column_by_name("run_id")
        .map(|a| yosoku_tables::text::Text::new(a.as_ref()).expect("text"))
        .unwrap();
    // Named by the file and the line the row is on (the comment and header are lines 1-2).
    assert_eq!(ids.value(0), "mine:3");
    let obs = table(&imported.tables, "observations");
    assert!(obs.column_by_name("n").is_some() && obs.column_by_name("threads").is_some());
    assert_eq!(table(&imported.tables, "counters").num_rows(), 6);
    assert!(
        imported.notes[0].contains("time `elapsed_ms` in ms"),
        "{:?}",
        imported.notes
    );
}

#[test]
fn times_in_a_decimal_unit_become_the_seconds_the_text_says() {
    // 0.013 us times 1e-6 in floating point is 1.3000000000000001e-8; 0.019 / 1e6 is one unit
    // off as well. The seconds are the doubles nearest the decimals 1.3e-8 and 1.9e-8, as
    // a parse of those texts gives, in CSV and in Parquet-like numeric columns alike.
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "us.csv",
        "device,program,duration_us\ngpu,a,0.013\ngpu,b,0.019\ngpu,c,4.8e-1\n",
    );
    let imported = import(&[p], &mapping()).unwrap();
    let secs = table(&imported.tables, "runs")
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>()
        .values()
        .to_vec();
    assert_eq!(
        secs,
        vec![
            "1.3e-8".parse::<f64>().unwrap(),
            "1.9e-8".parse::<f64>().unwrap(),
            "4.8e-7".parse::<f64>().unwrap()
        ]
    );
    assert_ne!(
        0.013 * 1e-6,
        1.3e-8,
        "the value shows the rounding it is about"
    );
}

#[test]
fn bad_csv_cells_and_headers_are_named_by_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    // An empty time.
    let p = write(dir.path(), "a.csv", CSV);
    let e = err(&[p], &mapping());
    assert!(
        e.contains("a.csv: line 5, column `elapsed_ms` (5th): the value is empty"),
        "{e}"
    );
    // Not a number.
    let p = write(dir.path(), "b.csv", &CSV.replace("2,\n", "2,fast\n"));
    let e = err(&[p], &mapping());
    assert!(
        e.contains("b.csv: line 5, column `elapsed_ms` (5th): the value \"fast\" is not a number"),
        "{e}"
    );
    // A negative time.
    let p = write(dir.path(), "c.csv", &CSV.replace("2,\n", "2,-1\n"));
    let e = err(&[p], &mapping());
    assert!(
        e.contains(
            "line 5, column `elapsed_ms` (5th): the value is -1: a measured time must be > 0"
        ),
        "{e}"
    );
    // An empty file is called empty.
    let p = write(dir.path(), "empty.csv", "");
    let e = err(&[p], &mapping());
    assert!(
        e.contains("empty.csv: empty file (0 bytes); expected a header line naming the columns"),
        "{e}"
    );
    // A duplicate header.
    let p = write(dir.path(), "d.csv", "time,n,time\n1,2,3\n");
    let e = err(&[p], &mapping());
    assert!(
        e.contains("d.csv: duplicate column name `time` (the 1st and 3rd columns)"),
        "{e}"
    );
    // A mapped column the file lacks.
    let p = write(dir.path(), "e.csv", &CSV.replace("2,\n", "2,1\n"));
    let m = Mapping {
        variant: Some("size".into()),
        ..mapping()
    };
    let e = err(std::slice::from_ref(&p), &m);
    assert!(
        e.contains("e.csv: `variant` names column `size`, which the file does not have; its columns are: device, program, n, threads, elapsed_ms"),
        "{e}"
    );
    // A feature that is text.
    let m = Mapping {
        features: Some(vec!["program".into()]),
        ..mapping()
    };
    let e = err(&[p], &m);
    assert!(
        e.contains("line 3, column `program` (2nd): the value \"stream\" is not a number"),
        "{e}"
    );
    // A short row.
    let p = write(dir.path(), "f.csv", "time,n\n1,2\n3\n");
    let e = err(&[p], &mapping());
    assert!(
        e.contains("f.csv: line 3: 1 fields where the header has 2"),
        "{e}"
    );
    // No time column at all.
    let p = write(dir.path(), "g.csv", "n,m\n1,2\n");
    let e = err(&[p], &mapping());
    assert!(e.contains("g.csv: no time column"), "{e}");
}

fn arrow_batch() -> RecordBatch {
    RecordBatch::try_from_iter(vec![
        (
            "gpu",
            Arc::new(StringArray::from(vec!["a100", "a100", "h100"])) as ArrayRef,
        ),
        (
            "size",
            Arc::new(Int64Array::from(vec![1024, 2048, 1024])) as ArrayRef,
        ),
        (
            "duration_ns",
            Arc::new(Float64Array::from(vec![1.5e6, 3.0e6, 0.9e6])) as ArrayRef,
        ),
        (
            "flops",
            Arc::new(Float64Array::from(vec![Some(1.0), None, Some(1.0)])) as ArrayRef,
        ),
    ])
    .unwrap()
}

fn write_ipc(path: &Path, batch: &RecordBatch) {
    let mut w = arrow_ipc::writer::FileWriter::try_new(
        std::fs::File::create(path).unwrap(),
        &batch.schema(),
    )
    .unwrap();
    w.write(batch).unwrap();
    w.finish().unwrap();
}

#[test]
fn parquet_and_arrow_ipc_files_read_like_csv() {
    let dir = tempfile::tempdir().unwrap();
    let batch = arrow_batch();
    let pq = dir.path().join("m.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&pq).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let ipc = dir.path().join("n.arrow");
    write_ipc(&ipc, &batch);
    let m = Mapping {
        device: Some("gpu".into()),
        ..mapping()
    };
    let imported = import(&[pq, ipc], &m).unwrap();
    let runs = table(&imported.tables, "runs");
    assert_eq!(runs.num_rows(), 6);
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!((secs.value(0) - 1.5e-3).abs() < 1e-15);
    let devices = runs
        .column_by_name("device")
        .map(|a| yosoku_tables::text::Text::new(a.as_ref()).expect("text"))
        .unwrap();
    assert_eq!(devices.value(5), "h100");
    let ids = runs
        .column_by_name("run_id")
        .map(|a| yosoku_tables::text::Text::new(a.as_ref()).expect("text"))
        .unwrap();
    assert_eq!((ids.value(0), ids.value(3)), ("m:1", "n:1"));
    let obs = table(&imported.tables, "observations");
    let flops = obs
        .column_by_name("flops")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!(flops.is_null(1));
    // A time of zero in a binary file: named by its row.
    let zero = RecordBatch::try_from_iter(vec![(
        "time",
        Arc::new(Float64Array::from(vec![1.0, 0.0])) as ArrayRef,
    )])
    .unwrap();
    let p = dir.path().join("z.arrow");
    write_ipc(&p, &zero);
    let e = err(&[p], &mapping());
    assert!(
        e.contains(
            "z.arrow: row 2, column `time` (1st): the value is 0: a measured time must be > 0"
        ),
        "{e}"
    );
    // Not Parquet at all.
    let p = write(dir.path(), "x.parquet", "time\n1\n");
    let e = err(&[p], &mapping());
    assert!(e.contains("x.parquet: not a readable Parquet file"), "{e}");
}

#[test]
fn tsv_and_gzipped_csv_read_and_run_ids_stay_unique() {
    let dir = tempfile::tempdir().unwrap();
    let tsv = write(dir.path(), "t.tsv", "time_s\tn\n1\t2\n");
    let gz = dir.path().join("u.csv.gz");
    {
        use std::io::Write as _;
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        e.write_all(b"time_s,n\n2,3\n").unwrap();
        e.finish().unwrap();
    }
    let imported = import(&[tsv, gz], &mapping()).unwrap();
    assert_eq!(table(&imported.tables, "runs").num_rows(), 2);
    // Two files of one name would give the same run ids.
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let p1 = write(&a, "same.csv", "time\n1\n");
    let p2 = write(&b, "same.csv", "time\n1\n");
    let e = err(&[p1, p2], &mapping());
    assert!(e.contains("have one name, `same`"), "{e}");
}

fn extrap_options(metric: Option<&str>) -> yosoku_plugin_table::ExtrapOptions {
    yosoku_plugin_table::ExtrapOptions {
        metric: metric.map(str::to_owned),
        time_unit: "ms".into(),
        device: "cluster".into(),
        phase: "total".into(),
        cube: Default::default(),
    }
}

/// A directory of Cube profiles (Extra-P's threaded example: 5 runs, f = 1 to 5, two
/// processes of two threads) becomes one run per call path and profile, each the mean of its
/// locations' exclusive time; with strong scaling, their sum.
#[test]
fn a_cube_set_becomes_one_run_per_call_path_and_profile() {
    use yosoku_plugin_table::import_extrap;
    let set = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../crates/core/regression/tests/data/cube/simple_threaded");
    let mut options = extrap_options(None);
    options.time_unit = "s".into();
    let runs = import_extrap(std::slice::from_ref(&set), &options).unwrap();
    assert_eq!(runs.num_rows(), 20);
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    let programs = runs.column_by_name("program").unwrap().as_string::<i32>();
    let params = runs
        .column_by_name("parameters")
        .unwrap()
        .as_string::<i32>();
    let at = |program: &str, parameters: &str| {
        (0..runs.num_rows())
            .find(|&i| programs.value(i) == program && params.value(i) == parameters)
            .map(|i| secs.value(i))
            .unwrap()
    };
    // Extra-P's `--cube` reads 4.95 s (2.475 f) for `main->foo` at f = 2.
    assert!((at("main->foo", "f=2") - 4.95).abs() < 1e-9);
    // Inclusive: `main` is the whole run, every call path's exclusive time together.
    let whole_run: f64 = (0..runs.num_rows())
        .filter(|&i| params.value(i) == "f=2")
        .map(|i| secs.value(i))
        .sum();
    options.cube.values = yosoku_regression::pmnf::extrap::cube::Values::Inclusive;
    let inclusive = import_extrap(std::slice::from_ref(&set), &options).unwrap();
    let main_at_2 = (0..inclusive.num_rows())
        .find(|&i| {
            inclusive
                .column_by_name("program")
                .unwrap()
                .as_string::<i32>()
                .value(i)
                == "main"
                && inclusive
                    .column_by_name("parameters")
                    .unwrap()
                    .as_string::<i32>()
                    .value(i)
                    == "f=2"
        })
        .map(|i| {
            let secs = inclusive.column_by_name("measured_secs").unwrap();
            secs.as_primitive::<Float64Type>().value(i)
        })
        .unwrap();
    assert!(
        (main_at_2 - whole_run).abs() < 1e-9,
        "{main_at_2} against {whole_run}"
    );
    let file = set.join("../../extrap/text/one_parameter_1.txt");
    let e = import_extrap(&[file], &options).unwrap_err().to_string();
    assert!(
        e.contains("`inclusive` reads a set of Cube profiles"),
        "{e}"
    );
    options.cube.values = Default::default();
    options.cube.scaling = "strong".parse().unwrap();
    let runs = import_extrap(std::slice::from_ref(&set), &options).unwrap();
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!(secs.iter().flatten().any(|v| (v - 19.8).abs() < 1e-9));
    let e = import_extrap(&[set.join("..")], &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a directory without Cube profiles"), "{e}");
}

#[test]
fn extrap_files_become_one_run_per_repetition_and_bad_ones_are_named() {
    use yosoku_plugin_table::import_extrap;
    let dir = tempfile::tempdir().unwrap();
    let text = write(
        dir.path(),
        "exp.txt",
        "PARAMETER p\nPOINTS 2 4 8\nREGION solve\nMETRIC time\nDATA 10 11\nDATA 20\nDATA 40 41 42\nMETRIC visits\nDATA 1\nDATA 1\nDATA 1\n",
    );
    let runs = import_extrap(std::slice::from_ref(&text), &extrap_options(None)).unwrap();
    assert_eq!(runs.num_rows(), 6);
    let params = runs
        .column_by_name("parameters")
        .unwrap()
        .as_string::<i32>();
    assert_eq!(params.value(5), "p=8");
    let secs = runs
        .column_by_name("measured_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!((secs.value(0) - 0.010).abs() < 1e-12);
    let e = import_extrap(std::slice::from_ref(&text), &extrap_options(Some("bytes")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no metric `bytes`; the file has: time, visits"),
        "{e}"
    );
    // The error a file of `text` (named `name`) gets.
    let refused = |name: &str, text: &str| {
        import_extrap(&[write(dir.path(), name, text)], &extrap_options(None))
            .unwrap_err()
            .to_string()
    };
    let e = refused(
        "zero.txt",
        "PARAMETER p\nPOINTS 2 4 8\nREGION solve\nDATA 1\nDATA 0\nDATA 3\n",
    );
    assert!(
        e.contains("point p=4: value 0 is not a positive time"),
        "{e}"
    );
    // A call path measured 0 everywhere never ran: left out, the others kept; a file with no
    // other is refused.
    let never = write(
        dir.path(),
        "never.txt",
        "PARAMETER p\nPOINTS 2 4 8\nREGION solve\nDATA 1\nDATA 2\nDATA 3\nREGION idle\nDATA 0\nDATA 0\nDATA 0\n",
    );
    let runs = import_extrap(&[never], &extrap_options(None)).unwrap();
    let programs = runs.column_by_name("program").unwrap().as_string::<i32>();
    assert_eq!(runs.num_rows(), 3);
    assert!((0..3).all(|r| programs.value(r) == "solve"));
    let e = refused(
        "idle.txt",
        "PARAMETER p\nPOINTS 2 4 8\nREGION idle\nDATA 0\nDATA 0\nDATA 0\n",
    );
    assert!(
        e.contains("idle.txt: no call path of the file's unnamed metric has a positive value at every point"),
        "{e}"
    );
    let e = refused(
        "cut.txt",
        "PARAMETER p\nPOINTS 2 4\nDATA 1\nDATA 2\nDATA 3\n",
    );
    assert!(
        e.contains("cut.txt:5: more DATA lines than the 2 POINTS"),
        "{e}"
    );
}
