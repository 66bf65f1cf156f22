#!/usr/bin/env python3
"""Writes the part of NeuSight's measured kernel data that yosoku ships
(pipelines/data/neusight; SOURCES.md there).

NeuSight (sitar-lab/NeuSight, MIT license) measured PyTorch operators on NVIDIA GPUs with the
CUDA profiler: one row per operator shape and GPU, with the launch's grid and block, the kernel's
name and its latency in milliseconds. `scripts/asplos/data/dataset/train/` holds the training
shapes on its five training GPUs (P4, P100, T4, V100, A100-40GB PCIe), `test/` the test shapes on
all eight (and the three unseen ones, H100 80GB HBM3, L4 and A100 80GB PCIe).

The snapshot yosoku read lacks `train/linear.csv`, `train/bmm.csv` and `train/vec.csv` (large
files kept out of its Git history); the training GEMMs are taken from `train/collect/<op>/
p2.1.0/<GPU>.csv`, the per-GPU files those were concatenated from. The elementwise, softmax and
layer-norm training files are in `train/elem.csv`, `train/softmax.csv`, `train/ln.csv`.

Kept (every kept line byte-identical to the original; one header per output file; gzip with
mtime 0, so the same input gives the same bytes):
  - test/linear, elem, softmax, ln: every row;
  - test/bmm: every 2nd data row;
  - train/linear: every 4th data row of each GPU's file, the five GPUs one after another;
  - train/bmm: every 8th data row of each GPU's file;
  - train/elem: every 2nd data row; train/softmax, train/ln: every row.

usage: subset_neusight.py <NeuSight checkout> <output dir>
"""
import gzip
import pathlib
import sys

DATASET = pathlib.Path("scripts/asplos/data/dataset")
TRAIN_GPUS = [
    "Tesla P4",
    "Tesla P100-PCIE-16GB",
    "Tesla T4",
    "Tesla V100-PCIE-32GB",
    "NVIDIA A100-PCIE-40GB",
]
# (output, sources, keep every n-th data row)
FILES = [
    ("test/linear.csv", ["test/linear.csv"], 1),
    ("test/bmm.csv", ["test/bmm.csv"], 2),
    ("test/elem.csv", ["test/elem.csv"], 1),
    ("test/softmax.csv", ["test/softmax.csv"], 1),
    ("test/ln.csv", ["test/ln.csv"], 1),
    ("train/linear.csv", [f"train/collect/linear/p2.1.0/{g}.csv" for g in TRAIN_GPUS], 4),
    ("train/bmm.csv", [f"train/collect/bmm/p2.1.0/{g}.csv" for g in TRAIN_GPUS], 8),
    ("train/elem.csv", ["train/elem.csv"], 2),
    ("train/softmax.csv", ["train/softmax.csv"], 1),
    ("train/ln.csv", ["train/ln.csv"], 1),
]


def main(checkout: pathlib.Path, dst: pathlib.Path) -> None:
    for output, sources, every in FILES:
        header = None
        lines = []
        for source in sources:
            text = (checkout / DATASET / source).read_bytes()
            rows = text.splitlines(keepends=True)
            if header is None:
                header = rows[0]
                lines.append(header)
            elif rows[0] != header:
                sys.exit(f"{source}: its header differs from {sources[0]}'s")
            lines.extend(rows[1:][::every])
        path = dst / (output + ".gz")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
            out.write(b"".join(lines))
        print(f"{path}: {len(lines) - 1} rows")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
