"""Extra-P's and yosoku's models side by side on generated studies where one parameter is
measured at two values (docs/methods.md, section 7, "Two values of a parameter").

Usage: python two_values.py YOSOKU_BINARY [FILES] [SEED]
(run with Extra-P's Python, `target/python-extrap/bin/python`; FILES generated files, default
60, SEED default 7). Each file: two parameters, p at 2-5 values and n at 1-3 (mostly 2), on a
grid, a cross through one corner or a grid with runs missing, 1 or 3 repetitions at 0, 2 or 10 %
noise, one of six laws. Prints how many models have Extra-P's terms, how many other terms with
the same SMAPE and RSS (a tie the design cannot break) and how many differ or were refused."""

import json
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAWS = [
    lambda p, n: 0.1 + 0.01 * p * n,
    lambda p, n: 1 + 0.3 * math.log2(p) + 0.02 * n**2,
    lambda p, n: 0.5 + 0.001 * p**1.5 * math.log2(n),
    lambda p, n: 2 + 0.1 * p,
    lambda p, n: 0.2 + 0.05 * n**0.5 * p,
    lambda p, n: 3 + 0.5 * math.log2(n),
]


def write(path, rng):
    law = rng.choice(LAWS)
    ps = sorted(rng.sample([2, 4, 8, 16, 32, 64, 128], rng.choice([2, 3, 4, 5])))
    ns = sorted(rng.sample([10, 20, 40, 80, 160], rng.choice([1, 2, 2, 3])))
    design = rng.choice(["grid", "cross", "partial"])
    points = [(p, n) for p in ps for n in ns]
    if design == "cross":
        points = [(p, ns[0]) for p in ps] + [(ps[0], n) for n in ns[1:]]
    if design == "partial" and len(points) > 3:
        points = rng.sample(points, max(3, len(points) - 2))
    noise, reps = rng.choice([0.0, 0.02, 0.1]), rng.choice([1, 3])
    with open(path, "w") as f:
        f.write("PARAMETER p\nPARAMETER n\nPOINTS ")
        f.write(" ".join(f"( {p} {n} )" for p, n in points))
        f.write("\nREGION main\nMETRIC time\n")
        for p, n in points:
            values = (law(p, n) * (1 + noise * rng.gauss(0, 1)) for _ in range(reps))
            f.write("DATA " + " ".join(f"{v:.6g}" for v in values) + "\n")


def shape(model):
    return sorted(sorted(tuple(f) for f in t["factors"]) for t in model["terms"])


def main():
    yosoku = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 7)
    with tempfile.TemporaryDirectory() as d:
        files = [os.path.join(d, f"r{k:02d}.txt") for k in range(count)]
        for f in files:
            write(f, rng)
        out = subprocess.run([sys.executable, os.path.join(HERE, "models.py"), *files],
                             capture_output=True, text=True, check=True).stdout
        theirs = {json.loads(l)["file"]: json.loads(l) for l in out.splitlines()}
        same = tie = other = 0
        for f in files:
            line = subprocess.run([yosoku, "scaling", "--json", f], capture_output=True,
                                  text=True, check=True).stdout
            ours, t = json.loads(line), theirs[f]
            if "error" in ours:
                other += 1
                print(f"refused: {os.path.basename(f)}: {ours['error']}")
            elif shape(ours) == shape(t):
                same += 1
            elif math.isclose(ours["rss"], t["rss"], rel_tol=1e-6, abs_tol=1e-20):
                tie += 1
            else:
                other += 1
                print(f"differs: {os.path.basename(f)}: {shape(ours)} against {shape(t)}")
        print(f"{same} of {count} with Extra-P's terms, {tie} ties (other terms, the same RSS), "
              f"{other} other")


if __name__ == "__main__":
    main()
