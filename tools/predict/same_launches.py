"""`yosoku predict` checked on launches measured on both GPUs: each of GPU A's profiles asked on
GPU B, scored against B's own profile of the same launches (and the other way round), with the
figures `predict` prints beside its answer scored the same way.

Usage: python3 same_launches.py YOSOKU_BINARY MODEL_BUNDLE DIR_A GPU_A DIR_B GPU_B [FILE...]
(DIR_A and DIR_B hold ncu profiles of the same names, one per program; GPU_A and GPU_B are
catalogue names or aliases, `H100` and `H200`; FILE... the names to use, default every
`ncu_*.csv` DIR_A and DIR_B share). Launches are paired in order within a file, and a file whose
kernel names differ in order is refused. Prints, per direction, how many launches, each
method's median and mean |error| against the other GPU's measured time, and how many of the
answer's intervals held it.

Example (the repository's CUDA traces of an H100 and an H200, the bundled model):

    target/release/yosoku run pipelines/gpu-transfer.toml
    python3 tools/predict/same_launches.py target/release/yosoku results/gpu-transfer \\
        pipelines/data/cuda-trace/h100 H100 pipelines/data/cuda-trace/h200 H200
"""

import os
import re
import statistics
import subprocess
import sys

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
TIME = r"([\d.]+) (ns|us|ms|s)\b"


def secs(match):
    return float(match[0]) * UNITS[match[1]]


def launches(yosoku, model, profile, on):
    """Each launch `predict` answers: kernel name, the profile GPU's measured time, the answer,
    its interval and the figures printed beside it, in launch order."""
    out = subprocess.run([yosoku, "predict", "--profile", profile, "--on", on, "--model", model],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{profile} on {on}: {out.stderr.strip()}")
    found = []
    for block in out.stdout.split("\n\n")[1:]:
        head = block.strip().splitlines()[0]
        measured = re.search(r"measured on [^:]+: " + TIME, block)
        answer = re.search(r"predicted on [^:]+: " + TIME + r"\s+\S+ % interval " + TIME + r" \.\. "
                           + TIME, block)
        if not (measured and answer):
            continue
        groups = answer.groups()
        beside = {
            "wave scaling": re.search(r"wave scaling " + TIME, block),
            "floor + bytes / bandwidth": re.search(r"launch floor \+ bytes / bandwidth " + TIME, block),
            "physics-scaled time": re.search(r"scaled by the physics of both GPUs " + TIME, block),
            "combined": re.search(r"combined \([^)]*\): " + TIME, block),
        }
        found.append({
            "kernel": head.split(" [launch")[0],
            "measured": secs(measured.groups()),
            "answer": secs(groups[0:2]),
            "interval": (secs(groups[2:4]), secs(groups[4:6])),
            "beside": {k: secs(m.groups()) for k, m in beside.items() if m},
        })
    return found


def score(yosoku, model, from_dir, from_gpu, to_dir, to_gpu, files):
    errors, held, n = {}, 0, 0
    for name in files:
        asked = launches(yosoku, model, os.path.join(from_dir, name), to_gpu)
        # The target GPU's own measurements of the same launches: its profile asked anywhere.
        truth = launches(yosoku, model, os.path.join(to_dir, name), from_gpu)
        if [a["kernel"] for a in asked] != [t["kernel"] for t in truth]:
            sys.exit(f"{name}: the two profiles' launches differ")
        for a, t in zip(asked, truth):
            m = t["measured"]
            n += 1
            held += a["interval"][0] <= m <= a["interval"][1]
            figures = {"the answer": a["answer"], "time unchanged": a["measured"], **a["beside"]}
            for method, value in figures.items():
                errors.setdefault(method, []).append(abs(value / m - 1) * 100)
    print(f"{from_gpu} -> {to_gpu}: {n} launches; the answer's interval held {held} of {n}")
    for method, e in errors.items():
        print(f"  {method:28} median |error| {statistics.median(e):6.1f} %, "
              f"mean {statistics.mean(e):6.1f} %")


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    yosoku, model, dir_a, gpu_a, dir_b, gpu_b = sys.argv[1:7]
    files = sys.argv[7:] or sorted(
        f for f in os.listdir(dir_a) if f.startswith("ncu_") and f.endswith(".csv") and os.path.exists(os.path.join(dir_b, f)))
    score(yosoku, model, dir_a, gpu_a, dir_b, gpu_b, files)
    score(yosoku, model, dir_b, gpu_b, dir_a, gpu_a, files)


if __name__ == "__main__":
    main()
