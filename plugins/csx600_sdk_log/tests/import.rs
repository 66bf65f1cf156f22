//! The importers on the shipped logs (the paper's tables) and on broken input.

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use yosoku_plugin_csx600_sdk_log::{Tables, read_microbench, read_profile};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../pipelines/data/csx600")
        .join(name)
}

fn table<'a>(tables: &'a [(String, RecordBatch)], name: &str) -> &'a RecordBatch {
    &tables
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no table {name}"))
        .1
}

fn floats(batch: &RecordBatch, column: &str) -> Vec<f64> {
    batch
        .column_by_name(column)
        .unwrap()
        .as_primitive::<Float64Type>()
        .values()
        .to_vec()
}

fn strings(batch: &RecordBatch, column: &str) -> Vec<String> {
    let array = batch
        .column_by_name(column)
        .map(|a| yosoku_tables::text::Text::new(a.as_ref()).expect("text"))
        .unwrap();
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                "-".to_owned()
            } else {
                array.value(i).to_owned()
            }
        })
        .collect()
}

#[test]
fn the_shipped_microbenchmarks_hold_tables_1_and_2() {
    let tables = read_microbench(&data("sdk250-op-throughput.csx600.log")).unwrap();
    assert_eq!(tables.len(), 1);
    let t = table(&tables, "csx600_op_throughputs");
    assert_eq!(t.num_rows(), 32 + 10, "Table 1 has 32 cells, Table 2 ten");
    let rates = floats(t, "throughput_ops_per_sec");
    let ops = strings(t, "op");
    let dtypes = strings(t, "dtype");
    let to = strings(t, "dtype_to");
    // Spot checks against the paper, in ops/s.
    let find = |unit_vector: (&str, bool), dtype: &str, op: &str, target: &str| {
        let units = strings(t, "exec_unit");
        let vector = t.column_by_name("vector").unwrap().as_boolean().clone();
        (0..t.num_rows())
            .find(|&i| {
                units[i] == unit_vector.0
                    && vector.value(i) == unit_vector.1
                    && dtypes[i] == dtype
                    && ops[i] == op
                    && to[i] == target
            })
            .map(|i| rates[i])
            .unwrap()
    };
    assert_eq!(find(("poly", true), "float", "mac", "-"), 18.67e9);
    assert_eq!(find(("poly", false), "double", "add", "-"), 1.393e9);
    assert_eq!(find(("mono", false), "int", "div", "-"), 0.039e9);
    assert_eq!(find(("poly", false), "int", "cast", "double"), 1.83e9);
    assert_eq!(find(("poly", true), "double", "split", "-"), 22.06e9);
    let executions = t
        .column_by_name("executions")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(
        executions.null_count(),
        10,
        "Table 2 gives no execution counts"
    );
    assert_eq!(
        strings(t, "device")[0],
        "CSX600 (ClearSpeed Advance board, 210 MHz)"
    );
}

#[test]
fn the_illustrative_curves_say_so_in_every_row() {
    let tables = read_microbench(&data("illustrative-bandwidth.csx600.log")).unwrap();
    let curves = table(&tables, "bandwidth_curves");
    assert_eq!(curves.num_rows(), 30);
    assert!(
        strings(curves, "provenance")
            .iter()
            .all(|p| p == "illustrative")
    );
    assert_eq!(floats(curves, "bandwidth_bytes_per_sec")[0], 7.843e6);
}

#[test]
fn the_shipped_profiles_hold_tables_3_5_and_6() {
    let tables = read_profile(&data("montecarlo-profile.csx600.log")).unwrap();
    let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["csx600_op_counts", "runs", "reference_values"]);
    let counts = table(&tables, "csx600_op_counts");
    assert_eq!(counts.num_rows(), 16);
    assert_eq!(
        floats(counts, "count")[3],
        12.5e6,
        "d=2 vector mul: (2n+1)N/4 per PE"
    );
    let runs = table(&tables, "runs");
    assert_eq!(floats(runs, "measured_secs"), [3.643, 5.179]);
    assert_eq!(
        strings(runs, "run_id"),
        ["montecarlo/d=2/compute", "montecarlo/d=3/compute"]
    );
    let refs = table(&tables, "reference_values");
    assert_eq!(refs.num_rows(), 16 + 16 + 6);
    assert!(strings(refs, "source")[0].ends_with(", Table 3"));

    let tables = read_profile(&data("himeno-profile.csx600.log")).unwrap();
    let transfers = table(&tables, "csx600_transfer_counts");
    assert_eq!(transfers.num_rows(), 10);
    let counts = transfers
        .column_by_name("transfer_count")
        .unwrap()
        .as_primitive::<Int64Type>();
    assert_eq!(counts.value(9), 128016);
    assert_eq!(
        floats(table(&tables, "runs"), "measured_secs"),
        [7.473, 2.379, 60.21, 18.17]
    );
}

/// Writes `text` to a log file and returns the error the importer gives.
fn error_of(
    read: fn(&Path) -> Result<Tables, yosoku_plugin_sdk::PluginError>,
    text: &str,
) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.log");
    std::fs::write(&path, text).unwrap();
    let err = read(&path).unwrap_err().to_string();
    err.replace(&path.display().to_string(), "bad.log")
}

const BENCH_HEAD: &str = "@format csx600-sdk-log 1\n@device CSX600\n[op_throughput]\n";

#[test]
fn malformed_microbenchmarks_name_file_line_column_and_expectation() {
    for (body, expected) in [
        // missing column
        (
            "exec_unit vector dtype op\npoly no double add\n",
            "bad.log:4: [op_throughput] lacks column(s) `gops`; it needs: exec_unit, vector, dtype, op, gops",
        ),
        // non-numeric value
        (
            "exec_unit vector dtype op gops\npoly no double add fast\n",
            "bad.log:5:20: column `gops`: expected a number, found `fast`",
        ),
        // negative and zero throughput
        (
            "exec_unit vector dtype op gops\npoly no double add -1.2\n",
            "bad.log:5:20: column `gops`: expected a finite number > 0, found -1.2",
        ),
        (
            "exec_unit vector dtype op gops\npoly no double add 0\n",
            "bad.log:5:20: column `gops`: expected a finite number > 0, found 0",
        ),
        // duplicate rows
        (
            "exec_unit vector dtype op gops\npoly no double add 1.3\npoly no double add 1.4\n",
            "bad.log:6: duplicate row in [op_throughput]: poly scalar double add is already given on line 5",
        ),
        // values outside the vocabulary
        (
            "exec_unit vector dtype op gops\ngpu no double add 1\n",
            "bad.log:5:1: column `exec_unit`: expected one of mono, poly, found `gpu`",
        ),
        (
            "exec_unit vector dtype op gops\npoly no double sqrt 1\n",
            "bad.log:5:16: column `op`: expected one of add, mul, mac, div, cast, build, split, found `sqrt`",
        ),
        (
            "exec_unit vector dtype op gops\npoly maybe double add 1\n",
            "bad.log:5:6: column `vector`: expected one of yes, no, found `maybe`",
        ),
        (
            "exec_unit vector dtype op gops\npoly no int cast 1\n",
            "bad.log:5:13: a cast needs its target type in column `dtype_to`",
        ),
        (
            "exec_unit vector dtype op gops\nmono yes double add 1\n",
            "bad.log:5:6: the mono unit has no vector unit: expected `no`",
        ),
        (
            "exec_unit vector dtype op gops speed\n",
            "bad.log:4:32: unknown column `speed` in [op_throughput]; expected columns: exec_unit, vector, dtype, op, gops, dtype_to, executions",
        ),
        (
            "exec_unit vector dtype op gops\npoly no double add\n",
            "bad.log:5:1: expected 5 fields (exec_unit vector dtype op gops) as in the header of [op_throughput] on line 4, found 4",
        ),
        (
            "exec_unit vector dtype op gops executions\npoly no double add 1 2.5\n",
            "bad.log:5:22: column `executions`: expected an integer, found `2.5`",
        ),
    ] {
        let err = error_of(read_microbench, &format!("{BENCH_HEAD}{body}"));
        assert_eq!(err, expected, "for input:\n{body}");
    }
    let err = error_of(
        read_microbench,
        "@format csx600-sdk-log 1\n[op_throughput]\nexec_unit vector dtype op gops\n",
    );
    assert_eq!(
        err,
        "bad.log: missing directive `@device` (the device the benchmarks ran on)"
    );
    let err = error_of(
        read_microbench,
        "@format csx600-sdk-log 1\n@device X\n[bandwidth]\npath size_bytes mbytes_per_sec\nswazzle 8 1.0\n",
    );
    assert!(
        err.starts_with("bad.log:5: no provenance: give `@provenance measured`"),
        "{err}"
    );
    let err = error_of(
        read_microbench,
        "@format csx600-sdk-log 1\n@device X\n[op_count]\nvariant\n",
    );
    assert_eq!(
        err,
        "bad.log:3: unexpected section [op_count] in a microbench log; expected: [op_throughput], [bandwidth]"
    );
}

#[test]
fn malformed_profiles_are_refused_too() {
    let head = "@format csx600-sdk-log 1\n@program p\n@device X\n";
    for (body, expected) in [
        (
            "[transfer]\nvariant path count size_bytes\nS swazzle 10 8\nS swazzle 11 8\n",
            "bad.log:7: duplicate row in [transfer]: variant S: swazzle of 8 bytes is already given on line 6",
        ),
        (
            "[transfer]\nvariant path count size_bytes\nS swazzle 10 0\n",
            "bad.log:6:14: column `size_bytes`: expected an integer > 0, found 0",
        ),
        (
            "[measured]\nvariant phase repetitions seconds\nS total 1 -3\n",
            "bad.log:6:11: column `seconds`: expected a finite number > 0, found -3",
        ),
        (
            "[reference]\nvariant table column label value unit source\nS predictions seconds total 1 s x\n",
            "bad.log:6:15: column `column`: table `predictions` has no column `seconds`; it has: model, device, program, variant, phase, repetitions, predicted_secs, measured_secs, error_pct, flags, run_id, model_group, validation, held_out, interval_low_secs, interval_high_secs",
        ),
        (
            "[reference]\nvariant table column label value unit source\nS predictions predicted_secs total 1 ms x\n",
            "bad.log:6:38: column `unit`: `predictions.predicted_secs` is in s, found `ms`",
        ),
        (
            "[reference]\nvariant table column label value unit\nS predictions predicted_secs total 1 s\n",
            "bad.log:6: no source: give `@source` or a `source` column",
        ),
        (
            "[op_count]\nvariant exec_unit vector dtype op count basis\nS poly no double add 10 guessed\n",
            "bad.log:6:25: column `basis`: expected one of issued, operations, found `guessed`",
        ),
        (
            "[op_count]\nvariant exec_unit vector dtype op count basis\nS poly no double add - issued\n",
            "bad.log:6:22: column `count`: expected a value, found `-`",
        ),
    ] {
        let err = error_of(read_profile, &format!("{head}{body}"));
        assert_eq!(err, expected, "for input:\n{body}");
    }
}

#[test]
fn an_unreadable_file_is_named() {
    let err = read_profile(Path::new("/nonexistent/dir/x.log")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/nonexistent/dir/x.log: No such file or directory (os error 2)"
    );
}
