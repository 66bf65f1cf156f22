#!/usr/bin/env python3
"""RELeARN's timer logs as Extra-P text experiments, the way the extrap-gpr repository's
`relearn/relearn-125_execution_times/collect_execution_times.sh` builds its `relearn.txt` from
them, for one Barnes-Hut theta at a time (that script writes theta 0.1 only; its output is
Extra-P's test experiment `relearn_data.txt`, which this reproduces exactly).

    relearn_from_out.py DIR THETA > relearn_thetaTHETA.txt

DIR holds `relearn_p{P}_size{N}_theta{THETA}.multi.*.out`, P in 32..512 and N in 5000..9000.
Each log has two runs' TIMERS blocks; as the script does, a region's value per run is the third
`|`-separated field of its first and second line containing the region's name (the maximum over
the ranks), the first taken twice where the name occurs once.
"""

import glob
import os
import sys

KERNELS = [
    "  main()",
    "  Initialization",
    "  Simulation loop",
    "    Update electrical activity",
    "    Update #synaptic elements delta",
    "    Connectivity update",
    "      Update #synaptic elements + del synapses",
    "      Update local trees",
    "      Exchange branch nodes (w/ Allgather)",
    "      Insert branch nodes into global tree",
    "      Update global tree",
    "      Find target neurons (w/ RMA)",
    "      Empty remote nodes cache",
    "      Create synapses (w/ Alltoall)",
]
P_VALUES = [32, 64, 128, 256, 512]
SIZE_VALUES = [5000, 6000, 7000, 8000, 9000]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    directory, theta = sys.argv[1], sys.argv[2]
    out = ["PARAMETER p", "PARAMETER n", ""]
    out += [f"POINTS ( {p} {n} )" for p in P_VALUES for n in SIZE_VALUES]
    out += ["", "METRIC time", ""]
    for kernel in KERNELS:
        out.append("REGION " + kernel)
        for p in P_VALUES:
            for n in SIZE_VALUES:
                pattern = os.path.join(directory, f"relearn_p{p}_size{n}_theta{theta}*.out")
                logs = sorted(glob.glob(pattern))
                if len(logs) != 1:
                    sys.exit(f"{pattern}: expected one log, found {len(logs)}")
                with open(logs[0], encoding="utf-8") as f:
                    lines = [line for line in f if kernel in line][:2]
                if not lines:
                    sys.exit(f"{logs[0]}: no line names `{kernel.strip()}`")
                if len(lines) == 1:
                    lines *= 2
                out.append("DATA " + " ".join(line.split("|")[2].split()[0] for line in lines))
        out.append("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
