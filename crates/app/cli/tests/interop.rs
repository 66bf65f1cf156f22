//! yosoku's files read by the tools users have: the bundle's Arrow IPC tables and
//! `yosoku export --format parquet` read with pyarrow and polars, every value compared with what
//! yosoku itself reads. `cargo xtask test` provides a Python with both (YOSOKU_PYTHON); run
//! alone without one, the test says so and passes unless YOSOKU_REQUIRE_INTEROP is set.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;
use common::plugin_dir;

use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_array::Array;
use arrow_array::cast::AsArray as _;
use arrow_array::types::Float64Type;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn yosoku(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_yosoku"))
        .args(args)
        .env("YOSOKU_PLUGIN_PATH", plugin_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "yosoku {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Reads every table of `dir` (Parquet files, or a bundle's `tables/*.arrow`) with pyarrow and
/// with polars and prints, per table and library, the row count, every Float64 column (the
/// bits of each value, so that the comparison is exact) and every text column (plain or
/// dictionary-encoded: pyarrow's dictionary, polars' categorical).
const SCRIPT: &str = r#"
import json, sys, glob, os, math, struct
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.ipc as ipc, polars as pl
kind, d = sys.argv[1], sys.argv[2]
out = {}
pattern = "*.parquet" if kind == "parquet" else "tables/*.arrow"
for path in sorted(glob.glob(os.path.join(d, pattern))):
    name = os.path.basename(path).rsplit(".", 1)[0]
    if kind == "parquet":
        t = pq.read_table(path)
        p = pl.read_parquet(path)
    else:
        with pa.memory_map(path) as f:
            t = ipc.open_file(f).read_all()
        p = pl.read_ipc(path)
    def floats(cols):
        # The exact bits of each value (JSON numbers would round on the way).
        bits = lambda v: struct.unpack("<Q", struct.pack("<d", v))[0]
        return {k: [None if (v is None or math.isnan(v)) else bits(v) for v in vs] for k, vs in cols.items()}
    is_text = lambda ty: pa.types.is_string(ty) or (pa.types.is_dictionary(ty) and pa.types.is_string(ty.value_type))
    out[name] = {
        "pyarrow": {"rows": t.num_rows, "floats": floats({f.name: t.column(f.name).to_pylist() for f in t.schema if pa.types.is_float64(f.type)}),
                    "texts": {f.name: t.column(f.name).to_pylist() for f in t.schema if is_text(f.type)}},
        "polars": {"rows": p.height, "floats": floats({c: p[c].to_list() for c in p.columns if p[c].dtype == pl.Float64}),
                   "texts": {c: p[c].cast(pl.String).to_list() for c in p.columns if p[c].dtype in (pl.String, pl.Categorical)}},
    }
print(json.dumps(out))
"#;

fn python() -> Option<String> {
    let python = std::env::var("YOSOKU_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let ok = Command::new(&python)
        .args(["-c", "import pyarrow, polars"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    assert!(
        std::env::var_os("YOSOKU_REQUIRE_INTEROP").is_none(),
        "{python} cannot import pyarrow and polars, and YOSOKU_REQUIRE_INTEROP is set"
    );
    eprintln!(
        "skipped: {python} cannot import pyarrow and polars (cargo xtask test provides them)"
    );
    None
}

#[test]
fn pyarrow_and_polars_read_the_bundle_and_its_parquet_export_with_our_values() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    let pipeline = repo().join("pipelines/csx600-montecarlo.toml");
    yosoku(&[
        "run",
        pipeline.to_str().unwrap(),
        "-o",
        bundle.to_str().unwrap(),
        "--quiet",
    ]);
    let parquet = dir.path().join("parquet");
    yosoku(&[
        "export",
        bundle.to_str().unwrap(),
        "--format",
        "parquet",
        "-o",
        parquet.to_str().unwrap(),
    ]);
    let ours = yosoku_bundle::fs::read_bundle(&bundle).unwrap();
    for (kind, d) in [("ipc", &bundle), ("parquet", &parquet)] {
        let out = Command::new(&python)
            .args(["-c", SCRIPT, kind, d.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let read = read.as_object().unwrap();
        assert_eq!(read.len(), ours.tables.len(), "{kind}: tables");
        for (name, batch) in &ours.tables {
            let theirs = &read[name.as_str()];
            for lib in ["pyarrow", "polars"] {
                let t = &theirs[lib];
                assert_eq!(t["rows"], batch.num_rows(), "{kind} {lib} {name}: rows");
                for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                    if let Some(text) = yosoku_tables::text::Text::new(column.as_ref()) {
                        let expected: Vec<Option<&str>> = text.iter().collect();
                        assert_eq!(
                            t["texts"][field.name()],
                            serde_json::json!(expected),
                            "{kind} {lib} {name}.{} ({})",
                            field.name(),
                            field.data_type()
                        );
                        continue;
                    }
                    if field.data_type() != &arrow_schema::DataType::Float64 {
                        continue;
                    }
                    let values = column.as_primitive::<Float64Type>();
                    let expected: Vec<serde_json::Value> = (0..values.len())
                        .map(|i| {
                            if values.is_null(i) || values.value(i).is_nan() {
                                serde_json::Value::Null
                            } else {
                                serde_json::json!(values.value(i).to_bits())
                            }
                        })
                        .collect();
                    assert_eq!(
                        t["floats"][field.name()],
                        serde_json::Value::Array(expected),
                        "{kind} {lib} {name}.{}",
                        field.name()
                    );
                }
            }
        }
    }
    // One value a reader of the paper knows: the d = 2 prediction, 3.777 s.
    let predictions = ours.table("opcount.predictions").unwrap();
    let predicted = predictions
        .column_by_name("predicted_secs")
        .unwrap()
        .as_primitive::<Float64Type>();
    assert!((predicted.value(0) - 3.777).abs() < 0.001);
}
