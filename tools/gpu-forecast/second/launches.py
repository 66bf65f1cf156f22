#!/usr/bin/env python3
"""The work of the second forecast's Rodinia launches, derived from the kernels' code
(gpuperfpredict's copy of the Rodinia 3.1 CUDA sources) and the input sizes; printed as the
`launches` of pipelines/gpu-forecast-second.toml's `work_forecast` step.

    python3 tools/gpu-forecast/second/launches.py > /tmp/launches.toml
    python3 tools/gpu-forecast/second/launches.py --code-fields   # pipelines/gpu-physics.toml

One launch per kernel and input size: the middle one of the five the measurement profiles
(tools/gpu-forecast/second/run.sh: ncu skips each kernel's first launch and profiles the next
five). Conventions, the same for every kernel (docs/methods.md, section 6):

- `flops`: floating-point operations in the kernel's code, a fused multiply-add counted as two
  (a multiply and an add); integer arithmetic is not counted (nw and pathfinder do none).
- `dram_bytes`: the distinct bytes the launch reads and writes in global memory, each array
  element once, as a cache holding the launch's working set (cold at its start) would move them;
  where consecutive threads touch elements a row apart (a column of a row-major matrix), each
  element is a 32-byte sector of its own.
- `blocks`, `threads_per_block`: the launch configuration the host code computes.

With `--code-fields`, the optional fields of the physics model (docs/methods.md, section 6,
"Physics first"), also read off the kernels' code, written down here on 2026-12-04 before the
physics model was first scored on these launches (issue 69; not blind: their times on the H200
had been measured and published on 2026-11-30, pipelines/data/gpu-measured/SOURCES.md):

- `dependent_steps`: the barrier-separated phases a block runs one after another (each
  `__syncthreads()` ends one; a kernel without barriers has 1).
- `dram_round_trips`: the reads of global memory a thread waits for one after another: reads in
  different barrier-separated phases, or in iterations of a loop that stores through a pointer
  the loop's next loads may alias (no `__restrict__`), so the compiler keeps them in order;
  independent reads issued together count once.
- `moved_bytes`: not given for any of these kernels. Gaussian's Fan2 touches 16 contiguous bytes
  a row per block of 4 x 4 threads, half a 32-byte sector; the block that reads the other half
  is n/4 blocks later in launch order, resident at the same time for every n here (32 blocks of
  16 threads an SM, 132 SMs), so DRAM moves each sector once: the distinct bytes.
"""

import math
import sys

SECTOR = 32  # bytes
MEASURED = range(1, 6)  # the launches profiled, counting from 0: ncu skips one, takes five
MIDDLE = 3  # the middle one of them

# The input sizes: chosen before any forecast, a decade or more apart, from launches of a few
# microseconds (nw's first diagonals, gaussian's Fan1) to milliseconds.
GAUSSIAN_N = [256, 1024, 4096]  # gaussian -s n -q
NW_N = [1024, 2048, 4096, 8192]  # needle n 10
PATHFINDER_COLS = [10_000, 100_000, 1_000_000]  # pathfinder cols 200 20
PATHFINDER_ROWS, PYRAMID = 200, 20
HOTSPOT3D_NX = [64, 128, 256, 512]  # 3D nx 8 10 power temp out
HOTSPOT3D_NZ = 8


def gaussian(n):
    """gaussian.cu, ForwardSub: for t in 0..n-2, Fan1<<<ceil(n/512), 512>>> then
    Fan2<<<(ceil(n/4), ceil(n/4)), (4, 4)>>>; launch t is the t-th of its kernel."""
    t = MIDDLE
    rows = n - 1 - t  # the rows below the pivot
    # Fan1: m[i][t] = a[i][t] / a[t][t] for the rows below: a column read and a column
    # written (a sector each), the pivot once; one division each.
    # No barrier; its reads (the column and the pivot) are issued together: one round trip.
    yield dict(program="Fan1", variant=str(n), blocks=math.ceil(n / 512),
               threads_per_block=512, flops=rows, dram_bytes=SECTOR * (2 * rows + 1),
               dependent_steps=1, dram_round_trips=1)
    # Fan2: a[i][j] -= m[i][t] * a[t][j] over the rows below and the columns from t (a multiply
    # and a subtract each), and b[i] -= m[i][t] * b[t] once a row. Reads and writes the
    # submatrix, reads the multipliers' column (a sector each) and the pivot row, reads and
    # writes b's rows and reads b[t].
    cols = n - t
    area = rows * cols
    # No barrier; the multiplier, the pivot row's element and the element itself are read
    # together: one round trip (b's update, by the threads of column 0, reads after its store
    # of a, which it may alias: a second).
    yield dict(program="Fan2", variant=str(n), blocks=math.ceil(n / 4) ** 2,
               threads_per_block=16, flops=2 * area + 2 * rows,
               dram_bytes=4 * area * 2 + SECTOR * rows + 4 * cols + 4 * 2 * rows + 4,
               dependent_steps=1, dram_round_trips=2)


def nw(n):
    """needle.cu: block_width = n / 16; needle_cuda_shared_1<<<i, 16>>> for i = 1..block_width,
    then needle_cuda_shared_2<<<i, 16>>> for i = block_width-1..1. Each block scores a 16 x 16
    tile: reads the tile of the reference (16 rows of 64 bytes), the score above the tile (a
    row of 16 ints), left of it (a column: 16 sectors) and at its corner (a sector), and writes
    the tile's scores (16 rows of 64 bytes). Integer work only."""
    width = n // 16
    per_block = 16 * 64 + 16 * 4 + 16 * SECTOR + SECTOR + 16 * 64
    # needle_kernel.cu: the reference tile (and the corner) read, barrier; the left column
    # read, barrier; the top row read, barrier; then 16 diagonals and 15 more, a barrier each:
    # 3 + 31 phases, the first three each waiting on its reads.
    steps, round_trips = 3 + 16 + 15, 3
    # Launch k (from 0) of the first kernel has k+1 blocks; of the second, width-1-k.
    for program, blocks in [("needle_cuda_shared_1", MIDDLE + 1),
                            ("needle_cuda_shared_2", width - 1 - MIDDLE)]:
        yield dict(program=program, variant=str(n), blocks=blocks, threads_per_block=16,
                   flops=0, dram_bytes=per_block * blocks, dependent_steps=steps,
                   dram_round_trips=round_trips)


def pathfinder(cols):
    """pathfinder.cu: dynproc_kernel<<<ceil(cols / (256 - 2*20)), 256>>> for t = 0, 20, .. <
    rows-1, each advancing min(20, rows-1-t) rows: reads the source row, those rows of the wall
    and writes the result row (ints; the blocks' overlapping halos read the same elements).
    Integer work only."""
    t = MIDDLE * PYRAMID
    steps = min(PYRAMID, PATHFINDER_ROWS - 1 - t)
    # The source row read, barrier; then each of the `steps` iterations reads its row of the
    # wall and ends in a barrier, and all but the last a second one: 1 + 2 * steps - 1 phases,
    # 1 + steps reads waited for one after another.
    yield dict(program="dynproc_kernel", variant=str(cols),
               blocks=math.ceil(cols / (256 - 2 * PYRAMID)), threads_per_block=256, flops=0,
               dram_bytes=4 * cols * (steps + 2), dependent_steps=2 * steps,
               dram_round_trips=1 + steps)


def hotspot3d(nx):
    """3D.cu / opt1.cu: hotspotOpt1<<<(nx/64, nx/4), (64, 4)>>> once an iteration; each thread
    walks its column of nz layers. Each point: nine products and eight sums (17 FLOPs); reads the
    temperature and the power, writes the new temperature (floats; the neighbours' reads are the
    same elements)."""
    points = nx * nx * HOTSPOT3D_NZ
    # No barrier; each of the nz layers' reads follows the store of the layer before through
    # tOut, which may alias tIn (no __restrict__): nz round trips a thread.
    yield dict(program="hotspotOpt1", variant=f"{nx}x{HOTSPOT3D_NZ}",
               blocks=(nx // 64) * (nx // 4), threads_per_block=256, flops=17 * points,
               dram_bytes=3 * 4 * points, dependent_steps=1, dram_round_trips=HOTSPOT3D_NZ)


def launches():
    for n in GAUSSIAN_N:
        yield from gaussian(n)
    for n in NW_N:
        yield from nw(n)
    for c in PATHFINDER_COLS:
        yield from pathfinder(c)
    for nx in HOTSPOT3D_NX:
        yield from hotspot3d(nx)


def main():
    code_fields = "--code-fields" in sys.argv[1:]
    out = sys.stdout
    out.write("launches = [\n")
    for l in launches():
        extra = (", dependent_steps = {dependent_steps}, dram_round_trips = {dram_round_trips}"
                 .format(**l) if code_fields else "")
        out.write(
            '  {{ program = "{program}", variant = "{variant}", blocks = {blocks}, '
            "threads_per_block = {threads_per_block}, flops = {flops}, "
            "dram_bytes = {dram_bytes}".format(**l) + extra + " },\n")
    out.write("]\n")


if __name__ == "__main__":
    main()
