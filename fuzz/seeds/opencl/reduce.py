"""A seed of the `opencl_record` fuzz target from a run record of the repository: the record
with its first measurements only, as many as fit in the 16 KiB a seed is cut to (a JSON
document cut short is no record). Written compact, as the plugin writes records.

    python3 fuzz/seeds/opencl/reduce.py pipelines/data/opencl/peak/nvidia-h200-large.json \
        fuzz/seeds/opencl/nvidia-h200-large.json
"""

import json
import sys

SEED_MAX_BYTES = 16 * 1024


def main(source, destination):
    with open(source) as f:
        record = json.load(f)
    measurements = record["measurements"]
    for kept in range(len(measurements), 0, -1):
        record["measurements"] = measurements[:kept]
        text = json.dumps(record, separators=(",", ":"))
        if len(text.encode()) <= SEED_MAX_BYTES:
            break
    with open(destination, "w") as f:
        f.write(text)
    print(f"{destination}: {kept} of {len(measurements)} measurements, {len(text)} bytes")


if __name__ == "__main__":
    main(*sys.argv[1:])
