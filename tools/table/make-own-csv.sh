#!/usr/bin/env bash
# Writes pipelines/data/own-table/gtx680-rodinia.csv: the GTX 680 launches of the gpuperfpredict
# dataset (pipelines/data/gpuperfpredict/SOURCES.md, CC-BY-4.0) as a user's own measurements
# would look: one row per launch, the time in milliseconds, six counters as plain columns.
# Made by yosoku itself: the counters-per-gpu pipeline reads the dataset, `yosoku export` writes
# its observations as CSV, and this script keeps the columns and rows below.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q -p yosoku-cli -p yosoku-plugin-cuda-profiler
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
target/debug/yosoku run pipelines/counters-per-gpu.toml -o "$tmp/bundle" --quiet
target/debug/yosoku export "$tmp/bundle" --format csv --table gpp.observations -o "$tmp/csv"
python3 - "$tmp/csv/gpp.observations.csv" pipelines/data/own-table/gtx680-rodinia.csv <<'PY'
import csv, sys
src, dst = sys.argv[1], sys.argv[2]
counters = ["gld_request", "gst_request", "cf_executed", "inst_issued1", "shared_load", "l2_read_transactions"]
with open(src, newline="") as f, open(dst, "w", newline="") as g:
    w = csv.writer(g, lineterminator="\n")
    w.writerow(["gpu", "kernel", "input_size", "time_ms"] + counters)
    for row in csv.DictReader(f):
        if row["device"] != "GTX-680":
            continue
        # repr of the float: the shortest text that reads back as the same number.
        ms = repr(float(row["measured_secs"]) * 1000.0)
        w.writerow([row["device"], row["program"], row["variant"], ms] + [row[c] for c in counters])
PY
echo "wrote pipelines/data/own-table/gtx680-rodinia.csv"
