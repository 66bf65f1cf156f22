#!/usr/bin/env python3
"""Writes the Apps-Gpus part of the gpuperfpredict dataset that yosoku ships
(pipelines/data/gpuperfpredict/apps; SOURCES.md there).

The Apps-Gpus files (marcosamaris/gpuperfpredict, `Datasets/Apps-Gpus/` at commit
3103c86f5fea1922b17cfafe4916da71c533e7e3, CC-BY-4.0) hold nine vector and matrix applications on
ten GPUs, a row per launch. yosoku ships them whole, gzip-compressed, except:
  - every GTX-750 file: they hold GTX 680 data (four are byte-identical to the GTX-680 files; in
    all of them `gpu_name`, nvprof's device string and the spec columns say GTX 680);
  - every TitanBlack file: kept out of the repository for an outside check.
Every kept line is byte-identical to the original.

usage: subset_gpuperfpredict_apps.py <Apps-Gpus dir> <output dir>
  (the Apps-Gpus dir: `git -C gpuperfpredict archive 3103c86 Datasets/Apps-Gpus | tar x`)
"""
import gzip
import pathlib
import sys

LEFT_OUT = ("GTX-750", "TitanBlack")


def main(src: pathlib.Path, dst: pathlib.Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    kept = 0
    for path in sorted(src.glob("*.csv")):
        gpu = path.stem.rsplit("-", 1)[-1]
        if path.stem.endswith(LEFT_OUT) or gpu in LEFT_OUT:
            print(f"{path.name}: left out")
            continue
        data = path.read_bytes()
        # mtime=0: the same input gives byte-identical output.
        with open(dst / (path.name + ".gz"), "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out:
            out.write(data)
        kept += 1
    print(f"{kept} files written to {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
