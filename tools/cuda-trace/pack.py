#!/usr/bin/env python3
"""Packs the traces the GPU run wrote (tools/cuda-trace/run.sh) into files small enough for the
repository: each trace gzip-compressed whole when it has at most TARGET records, else a subset,
written as a valid kernel-trace file (docs/kernel-trace.md) of the records kept:
  - by SM: every record of SMs 0..K-1, the largest K whose records fit (the whole kernel's
    run on those SMs: per-SM lanes stay complete);
  - by block, when one SM's records do not fit: every record of the blocks with the lowest
    indices (the first launched) that fit.
traces.json says, per file, the records of the full trace, the rule and what was kept, and
facts read off the full trace (records per SM, time range, the smallest step of a thread's
timestamps and the commonest steps: the timer's resolution).

usage: pack.py TRACE_DIR OUT_DIR [TARGET]"""
import gzip
import json
import os
import struct
import sys

import numpy as np

RECORD = np.dtype([("block", "<u4"), ("thread", "<u4"), ("sm", "<u4"), ("point", "<u4"), ("ts", "<u8")])


def read(path):
    with open(path, "rb") as f:
        head = f.read(40)
        magic, version, header_bytes, record_bytes, timer, layout, sm_count, clock_khz, count, tpb, name_len, flags = (
            struct.unpack("<8sHHHBBIIQIHH", head)
        )
        assert magic == b"YKTRACE\0" and version == 1 and record_bytes == 24, path
        f.seek(0)
        header = f.read(header_bytes)
    records = np.memmap(path, dtype=RECORD, mode="r", offset=header_bytes, shape=(count,))
    info = {
        "timer": ["clock64", "globaltimer"][timer],
        "sm_count": sm_count,
        "clock_khz": clock_khz,
        "threads_per_block": tpb,
        "device": header[40 : 40 + name_len].decode(),
    }
    return header, records, info


def write(path, header, kept):
    header = bytearray(header)
    header[24:32] = struct.pack("<Q", len(kept))
    with gzip.open(path + ".tmp", "wb", compresslevel=6) as f:
        f.write(bytes(header))
        f.write(np.ascontiguousarray(kept).tobytes())
    os.replace(path + ".tmp", path)


def steps(records):
    """Positive steps between consecutive records of one thread (records of a unit are together)."""
    r = records[: min(len(records), 2_000_000)]
    same = (r["block"][1:] == r["block"][:-1]) & (r["thread"][1:] == r["thread"][:-1])
    d = r["ts"][1:].astype(np.int64) - r["ts"][:-1].astype(np.int64)
    d = d[same & (d > 0)]
    if len(d) == 0:
        return None, []
    values, counts = np.unique(d, return_counts=True)
    top = np.argsort(counts)[::-1][:5]
    return int(d.min()), [[int(values[i]), int(counts[i])] for i in top]


def main():
    src, dst = sys.argv[1], sys.argv[2]
    target = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000
    os.makedirs(dst, exist_ok=True)
    summary = {}
    for name in sorted(os.listdir(src)):
        if not name.endswith(".yktrace"):
            continue
        header, records, info = read(os.path.join(src, name))
        n = len(records)
        per_sm = np.bincount(records["sm"], minlength=info["sm_count"]) if n else np.zeros(0, int)
        smallest, common = steps(records)
        entry = dict(info, records=n, records_per_sm_min=int(per_sm.min()) if n else 0,
                     records_per_sm_max=int(per_sm.max()) if n else 0,
                     time_range_ticks=int(records["ts"].max() - records["ts"].min()) if n else 0,
                     smallest_step_ticks=smallest, commonest_steps_ticks=common)
        if n <= target:
            kept, rule = records, "all records"
        else:
            cumulative = np.cumsum(per_sm)
            k = int(np.searchsorted(cumulative, target, side="right"))
            if k >= 1:
                kept = records[records["sm"] < k]
                rule = f"the records of SMs 0..{k - 1} ({k} of {info['sm_count']})"
            else:
                per_block = np.bincount(records["block"])
                b = int(np.searchsorted(np.cumsum(per_block), target, side="right"))
                kept = records[records["block"] < b]
                rule = f"the records of blocks 0..{b - 1} ({b} of {len(per_block)})"
        entry["kept_records"] = len(kept)
        entry["subset"] = rule
        out = os.path.join(dst, name + ".gz")
        write(out, header, kept)
        entry["gz_bytes"] = os.path.getsize(out)
        summary[name] = entry
        print(f"{name}: {n} records, kept {len(kept)} ({rule}), {entry['gz_bytes']} bytes gzip; "
              f"smallest step {smallest}, commonest {common[:3]}")
    with open(os.path.join(dst, "traces.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
