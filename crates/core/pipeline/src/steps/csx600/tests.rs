use arrow_array::{Int64Array, RecordBatch};
use std::sync::Arc;
use yosoku_tables::{CSX600_OP_COUNTS, CSX600_OP_THROUGHPUTS};

use super::super::testing::{b, f, opt_s, parse_error, run_error, run_steps, s};

/// Throughputs of poly double add (1e9 ops/s) and vector double mul (4e9 ops/s).
fn throughputs() -> RecordBatch {
    CSX600_OP_THROUGHPUTS
        .batch(vec![
            s(&["csx", "csx"]),
            s(&["poly", "poly"]),
            b(&[false, true]),
            s(&["double", "double"]),
            s(&["add", "mul"]),
            opt_s(&[None, None]),
            f(&[1e9, 4e9]),
            Arc::new(Int64Array::from(vec![None, None])),
        ])
        .unwrap()
}

/// Issued instructions of program `p`: `adds` poly adds and `muls` vector muls.
fn counts(adds: f64, muls: f64, extra_div: bool) -> RecordBatch {
    let mut rows = vec![("add", false, adds), ("mul", true, muls)];
    if extra_div {
        rows.push(("div", false, 1.0));
    }
    let n = rows.len();
    CSX600_OP_COUNTS
        .batch(vec![
            s(&vec!["p"; n]),
            s(&vec!["a"; n]),
            s(&vec!["poly"; n]),
            b(&rows.iter().map(|r| r.1).collect::<Vec<_>>()),
            s(&vec!["double"; n]),
            s(&rows.iter().map(|r| r.0).collect::<Vec<_>>()),
            opt_s(&vec![None; n]),
            f(&rows.iter().map(|r| r.2).collect::<Vec<_>>()),
            s(&vec!["issued"; n]),
        ])
        .unwrap()
}

const STEPS: &str = "[[normalize]]\nstep = \"csx600_scale_counts\"\nid = \"ops\"\ncounts = \"src.csx600_op_counts\"\n\
        [[fit]]\nstep = \"csx600_op_count\"\nid = \"opcount\"\nthroughputs = \"src.csx600_op_throughputs\"\ncounts = \"ops.csx600_op_counts\"";

#[test]
fn operations_over_throughputs_give_the_compute_time() {
    let set = run_steps(
        STEPS,
        vec![
            ("csx600_op_throughputs", throughputs()),
            ("csx600_op_counts", counts(1e7, 1e7, false)),
        ],
    )
    .unwrap();
    let predictions =
        yosoku_tables::rows::read_predictions("p", set.get("opcount.predictions").unwrap())
            .unwrap();
    // 1e7 x 96 PEs / 1e9 + 1e7 x 96 x 4 lanes / 4e9.
    let total: f64 = predictions.iter().map(|p| p.predicted_secs).sum();
    assert!((total - (0.96 + 0.96)).abs() < 1e-12, "{predictions:?}");
}

#[test]
fn an_operation_without_a_throughput_is_named() {
    let e = run_error(
        STEPS,
        vec![
            ("csx600_op_throughputs", throughputs()),
            ("csx600_op_counts", counts(1e7, 1e7, true)),
        ],
    );
    assert!(
        e.contains("step `opcount` (csx600_op_count): no throughput for `poly scalar double div`"),
        "{e}"
    );
}

#[test]
fn parameters_are_checked_when_the_file_is_parsed() {
    let e = parse_error(
        "normalize",
        "step = \"csx600_scale_counts\"\nid = \"s\"\ncounts = \"src.csx600_op_counts\"\npe_count = 0",
    );
    assert_eq!(
        e,
        "p.toml:8:12: key `pe_count`: `pe_count` must be at least 1"
    );
    let e = parse_error(
        "fit",
        "step = \"csx600_double_buffer\"\nid = \"b\"\nthroughputs = \"src.a\"\ncounts = \"src.b\"\ncurves = \"src.c\"\nheap_bytes = 6144\ntransfer_sizes_bytes = [64, -8]",
    );
    assert_eq!(
        e,
        "p.toml:11:24: key `transfer_sizes_bytes`: `transfer_sizes_bytes`: every size must be > 0, found -8"
    );
}
