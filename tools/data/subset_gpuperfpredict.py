#!/usr/bin/env python3
"""Writes the subset of the gpuperfpredict dataset that yosoku ships (pipelines/data/gpuperfpredict).

The dataset (marcosamaris/gpuperfpredict, CC-BY-4.0) has 45 files, 5 kernels x 9 GPUs, ~24 MB
compressed; rows are kernel launches. To keep the repository lean, yosoku ships:
  - the two back-propagation kernels (57 launches per GPU) in full;
  - for hotspot (calculate_temp), heartwall (kernel) and LU (lud_diagonal), every 8th launch (data
    rows 0, 8, 16, ...). Rows are in the same launch order on every GPU, so the same launches are
    kept on all nine;
  - kernel-GTX-680.csv.gz, the largest file, in full (for the import benchmark).
Every kept line is byte-identical to the original; files are re-compressed with gzip.

usage: subset_gpuperfpredict.py <dataset dir> <output dir>
"""
import gzip
import pathlib
import sys

STRIDE = 8
FULL = ("bpnn_adjust_weights_cuda", "bpnn_layerforward_CUDA")
WHOLE_FILE = "kernel-GTX-680.csv.gz"


def main(src: pathlib.Path, dst: pathlib.Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for path in sorted(src.glob("*.csv.gz")):
        lines = gzip.open(path, "rb").read().splitlines(keepends=True)
        header, rows = lines[0], lines[1:]
        if not path.name.startswith(FULL):
            rows = rows[::STRIDE]
        # mtime=0: the same input gives byte-identical output.
        with open(dst / path.name, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
            out.write(header)
            out.writelines(rows)
        print(f"{path.name}: {len(rows)} of {len(lines) - 1} rows")
    whole = dst / "full"
    whole.mkdir(exist_ok=True)
    (whole / WHOLE_FILE).write_bytes((src / WHOLE_FILE).read_bytes())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
