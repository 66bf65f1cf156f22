#!/usr/bin/env python3
"""Large inputs for the memory figures of RELIABILITY.md ("Memory on large inputs").

    python3 tools/bench/big_inputs.py OUT_DIR [--ncu-mb 1024] [--mpi-mb 1024]

Writes, made from real files of the repository (not measurements of anything new):

- OUT_DIR/ncu_details.csv: the launches of the real H100 `ncu --csv --page details` capture
  (plugins/cuda_profiler/tests/data/ncu/ncu_details_matmul_tiled_h100.csv) repeated with new
  launch IDs until the file reaches --ncu-mb MiB;
- OUT_DIR/mpi-logs/rank-<r>.tsv: the real MPI timer logs of a full Himeno run on two ranks
  (pipelines/data/mpi/full/2-ranks-core), their events repeated with shifted timestamps, on 8
  ranks, until the directory reaches --mpi-mb MiB;
- OUT_DIR/big-ncu.toml and OUT_DIR/big-mpi.toml: pipelines that import them.

Then, for instance:

    /usr/bin/time -v target/release/yosoku run --quiet OUT_DIR/big-ncu.toml -o OUT_DIR/b-ncu
"""

import argparse
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
MIB = 1 << 20


def ncu(out: pathlib.Path, megabytes: int) -> None:
    source = REPO / "plugins/cuda_profiler/tests/data/ncu/ncu_details_matmul_tiled_h100.csv"
    lines = [l for l in source.read_text().splitlines() if not l.startswith("==")]
    header, rows = lines[0], lines[1:]
    # Every row starts with the launch ID: "0",...
    rests = [row.split(",", 1)[1] for row in rows]
    written = 0
    launch = 0
    with open(out, "w") as f:
        f.write(header + "\n")
        while written < megabytes * MIB:
            block = "".join(f'"{launch}",{rest}\n' for rest in rests)
            f.write(block)
            written += len(block)
            launch += 1


def mpi(out: pathlib.Path, megabytes: int, ranks: int = 8) -> None:
    source = REPO / "pipelines/data/mpi/full/2-ranks-core/rank-0.tsv"
    lines = source.read_text().splitlines()
    head = [l for l in lines if l.startswith("#") and not l.startswith(("# finalize", "# end"))]
    columns = next(l for l in lines if l.startswith("event\t"))
    events = [l.split("\t") for l in lines if l.startswith(("call\t", "compute\t"))]
    init_end = next(int(l.split()[2]) for l in head if l.startswith("# init_end_ns"))
    last = max(int(e[4]) for e in events)
    span = last - init_end + 1000
    out.mkdir(parents=True, exist_ok=True)
    per_rank = megabytes * MIB // ranks
    for rank in range(ranks):
        with open(out / f"rank-{rank}.tsv", "w") as f:
            for l in head:
                if l.startswith("# rank "):
                    l = f"# rank {rank}"
                elif l.startswith("# size "):
                    l = f"# size {ranks}"
                elif l.startswith("# cpu "):
                    l = f"# cpu {rank}"
                f.write(l + "\n")
            f.write(columns + "\n")
            written = 0
            shift = 0
            while written < per_rank:
                block = []
                for e in events:
                    e = list(e)
                    e[3] = str(int(e[3]) + shift)
                    e[4] = str(int(e[4]) + shift)
                    block.append("\t".join(e) + "\n")
                text = "".join(block)
                f.write(text)
                written += len(text)
                shift += span
            f.write(f"# finalize_start_ns {last + shift}\n# end complete\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--ncu-mb", type=int, default=1024)
    parser.add_argument("--mpi-mb", type=int, default=1024)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.ncu_mb:
        ncu(args.out / "ncu_details.csv", args.ncu_mb)
        (args.out / "big-ncu.toml").write_text(
            '[pipeline]\nname = "big-ncu"\n\n[sources.ncu]\nplugin = "cuda_profiler"\n'
            'collector = "ncu"\nconfig = { path = "ncu_details.csv" }\n'
        )
    if args.mpi_mb:
        mpi(args.out / "mpi-logs", args.mpi_mb)
        (args.out / "big-mpi.toml").write_text(
            '[pipeline]\nname = "big-mpi"\n\n[sources.mpi]\nplugin = "mpi_timer"\n'
            'collector = "logs"\nconfig = { dir = "mpi-logs" }\n'
        )


if __name__ == "__main__":
    main()
