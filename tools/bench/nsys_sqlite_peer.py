"""Python's sqlite3 reading what yosoku's nsys SQLite reader reads (BENCHMARKS.md): the export
inflated in memory and opened, the strings, the GPUs, the kernels with their launch
configuration, the copies and the CUDA API calls fetched into Python rows. Prints the median of
20 runs in ms and per row in us.

python3 tools/bench/nsys_sqlite_peer.py [pipelines/data/nsys-sqlite/pipit_cloverleaf_a100_nsys.sqlite.gz]
"""

import gzip
import sqlite3
import statistics
import sys
import time

path = sys.argv[1] if len(sys.argv) > 1 else "pipelines/data/nsys-sqlite/pipit_cloverleaf_a100_nsys.sqlite.gz"


def read():
    raw = open(path, "rb").read()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    db = sqlite3.connect(":memory:")
    db.deserialize(data)
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    gpus = dict(db.execute("SELECT id, name FROM TARGET_INFO_GPU"))
    kernels = db.execute(
        "SELECT start, end, deviceId, streamId, demangledName, shortName, gridX, gridY, gridZ,"
        " blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory"
        " FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"
    ).fetchall()
    copies = db.execute(
        "SELECT start, end, deviceId, streamId, bytes, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start"
    ).fetchall()
    calls = db.execute(
        "SELECT start, end, globalTid, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"
    ).fetchall()
    rows = [(gpus.get(k[2]), strings.get(k[4]), (k[1] - k[0]) / 1e9) for k in kernels]
    return len(rows) + len(copies) + len(calls)


times = []
for _ in range(20):
    t = time.perf_counter()
    n = read()
    times.append(time.perf_counter() - t)
median = statistics.median(times)
print(f"python sqlite3: {n} rows, median {median * 1e3:.2f} ms, {median / n * 1e6:.3f} us per row")
