#!/usr/bin/env python3
"""Writes a small copy of a profiler's SQLite file for the fuzz targets' seeds (SOURCES.md beside
this script): the tables a yosoku reader reads, each with its schema as the profiler wrote it
(without its comments and indentation) and its first rows, the strings those rows name, 512-byte
pages, vacuumed.

    reduce.py nsys SOURCE.sqlite OUT.sqlite
    reduce.py rocprof-compute SOURCE.db OUT.db
"""
import os
import re
import sqlite3
import sys

# Per format: (table, rows kept; None keeps every row).
TABLES = {
    "nsys": [
        ("META_DATA_EXPORT", None),
        ("TARGET_INFO_GPU", 2),
        ("TARGET_INFO_CUDA_STREAM", 3),
        ("ENUM_CUDA_MEMCPY_OPER", None),
        ("CUPTI_ACTIVITY_KIND_KERNEL", 3),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", 2),
        ("CUPTI_ACTIVITY_KIND_MEMSET", 2),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", 3),
        ("NVTX_EVENTS", 2),
        ("ThreadNames", 2),
        ("StringIds", 0),
    ],
    "rocprof-compute": [
        ("compute_metadata", None),
        ("compute_workload", None),
        ("compute_kernel", None),
        ("compute_dispatch", 3),
    ],
}

# Columns that name a string of `StringIds` (Nsight Systems' exports).
STRING_COLUMNS = {"shortName", "demangledName", "mangledName", "nameId", "text", "textId"}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in TABLES:
        sys.exit(__doc__)
    kind, source, out = sys.argv[1:]
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    if os.path.exists(out):
        os.remove(out)
    dst = sqlite3.connect(out)
    dst.execute("PRAGMA page_size = 512")
    strings = set()
    for table, rows in TABLES[kind]:
        sql = src.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        if sql is None:
            continue
        dst.execute(re.sub(r"\s+", " ", re.sub(r"--[^\n]*", "", sql[0])))
        if table == "StringIds":
            for i in sorted(strings):
                row = src.execute("SELECT * FROM StringIds WHERE id = ?", (i,)).fetchone()
                if row:
                    dst.execute("INSERT INTO StringIds VALUES (?, ?)", row)
            continue
        limit = "" if rows is None else f" LIMIT {rows}"
        cursor = src.execute(f'SELECT * FROM "{table}"{limit}')
        names = [d[0] for d in cursor.description]
        for row in cursor:
            dst.execute(
                f'INSERT INTO "{table}" VALUES ({",".join("?" * len(row))})', row
            )
            strings.update(
                v for n, v in zip(names, row) if n in STRING_COLUMNS and isinstance(v, int)
            )
    dst.commit()
    dst.execute("VACUUM")
    dst.close()
    print(f"{out}: {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
