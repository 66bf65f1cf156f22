#!/usr/bin/env python3
"""Peer runs for BENCHMARKS.md, on the same data and sizes as yosoku's benchmarks.

    python3 tools/bench/peers.py            # needs numpy, statsmodels, polars
    python3 tools/bench/peers.py --import   # the CSV import peers only (polars; the venv
                                            # `cargo xtask test` makes, target/python, has it)
    POLARS_MAX_THREADS=1 taskset -c 0 target/python/bin/python tools/bench/peers.py --import
                                            # on one core, as the one-core import table

- OLS + exact leave-one-out, n = 10,000, p = 200: statsmodels OLS (pinv) plus its influence
  diagnostics' hat-matrix diagonal, and statsmodels OLS alone.
- Forward stepwise, full path over 200 candidates, n = 10,000: R's `leaps::regsubsets(method =
  "forward", nvmax = 200)` (Debian: `apt-get install r-base-core r-cran-leaps`), run by
  tools/bench/leaps.R on the same numbers, and a vectorised numpy forward selection (residualise
  every remaining candidate against each new basis vector).
- CSV import: polars.read_csv on the same files the import benchmark reads.

Prints the median of repeated runs, in milliseconds.
"""
import gzip
import io
import pathlib
import statistics
import time

try:  # The import peers need polars alone; the regression peers numpy too.
    import numpy as np
except ModuleNotFoundError:
    np = None

ROOT = pathlib.Path(__file__).resolve().parents[2]


def median_ms(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def splitmix(seed, count):
    """The numbers of `noise(seed)` in crates/core/regression/benches/regression.rs: splitmix64 mapped to
    [-1, 1)."""
    with np.errstate(over="ignore"):
        s = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15) * np.arange(1, count + 1, dtype=np.uint64)
        z = s
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(1 << 52) - 1.0


def data(n=10_000, p=200, seed=42):
    """Exactly the benchmark's data (well conditioned): x row by row, then the noise of y."""
    r = splitmix(seed, n * p + n)
    x = r[: n * p].reshape(n, p)
    y = x[:, : p // 2] @ (1 + np.arange(p // 2) / 10) + 0.1 * r[n * p :]
    return x, y


def ols_peers():
    import statsmodels.api as sm
    x, y = data()
    X = sm.add_constant(x)

    def ols_only():
        sm.OLS(y, X).fit()

    def ols_loo():
        fit = sm.OLS(y, X).fit()
        h = fit.get_influence().hat_matrix_diag
        return y - fit.resid / (1 - h)

    print(f"statsmodels OLS alone               {median_ms(ols_only, 7):8.1f} ms")
    print(f"statsmodels OLS + hat diagonal (LOO) {median_ms(ols_loo, 7):8.1f} ms")


def forward_numpy(x, y):
    n, p = x.shape
    z = x - x.mean(axis=0)
    z /= np.linalg.norm(z, axis=0)
    r = y - y.mean()
    tss = r @ r
    remaining = list(range(p))
    zr = z.copy()
    path = []
    rss = tss
    while remaining:
        cols = zr[:, remaining]
        norms2 = (cols * cols).sum(axis=0)
        gains = (cols.T @ r) ** 2 / norms2
        k = int(np.argmax(gains))
        j = remaining.pop(k)
        q = zr[:, j] / np.sqrt(norms2[k])
        r = r - q * (q @ r)
        rss = r @ r
        df = len(path) + 1
        path.append((j, 1 - (rss / (n - df - 1)) / (tss / (n - 1))))
        if remaining:
            zr[:, remaining] -= np.outer(q, q @ zr[:, remaining])
    return path


def stepwise_peer():
    x, y = data()
    print(f"numpy forward selection, full path   {median_ms(lambda: forward_numpy(x, y), 3):8.1f} ms")
    leaps_peer(x, y)


def leaps_peer(x, y):
    import shutil
    import subprocess
    import tempfile

    if shutil.which("Rscript") is None:
        print("R leaps: Rscript not found (apt-get install r-base-core r-cran-leaps)")
        return
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d)
        np.ascontiguousarray(x.T).tofile(path / "x.f64")  # column-major for R
        y.tofile(path / "y.f64")
        out = subprocess.run(
            ["Rscript", str(ROOT / "tools/bench/leaps.R"), str(path), str(x.shape[0]), str(x.shape[1])],
            capture_output=True, text=True, check=True,
        )
        print(out.stdout.strip())


def import_peers():
    import polars as pl
    ncu = ROOT / "target/bench-data/ncu_details_repeated_100mb.csv"
    gz = ROOT / "pipelines/data/gpuperfpredict/full/kernel-GTX-680.csv.gz"
    if ncu.exists():
        size = ncu.stat().st_size / 2**20
        ms = median_ms(lambda: pl.read_csv(ncu), 5)
        print(f"polars read_csv ncu details {size:.1f} MiB   {ms:8.1f} ms  {size / ms * 1e3:7.1f} MiB/s")
    else:
        print("run `cargo bench -p yosoku-plugin-cuda-profiler --bench import` first (it writes the ncu file)")
    text = gzip.decompress(gz.read_bytes())
    size = len(text) / 2**20
    ms = median_ms(lambda: pl.read_csv(io.BytesIO(gzip.decompress(gz.read_bytes()))), 10)
    print(f"polars read_csv gpuperfpredict .gz {size:.1f} MiB {ms:8.1f} ms  {size / ms * 1e3:7.1f} MiB/s (gunzip included)")


if __name__ == "__main__":
    import sys
    if "--import" in sys.argv:
        # The import table only (polars; `cargo xtask test`'s venv target/python has it).
        import polars
        print(f"polars {polars.__version__}, {polars.thread_pool_size()} thread(s)")
        import_peers()
        sys.exit(0)
    import polars, statsmodels
    print(f"numpy {np.__version__}, statsmodels {statsmodels.__version__}, polars {polars.__version__}")
    ols_peers()
    stepwise_peer()
    import_peers()
