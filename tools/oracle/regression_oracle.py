#!/usr/bin/env python3
"""The oracle for yosoku's regression code: writes crates/core/regression/tests/oracle/*.json.

Run by hand (CI does not need Python): `python3 tools/oracle/regression_oracle.py`
Requires numpy and statsmodels (pip install numpy statsmodels).

Every case stores its inputs and what numpy/statsmodels compute from them. The Rust tests
(crates/core/regression/tests/oracle.rs) recompute everything and compare to 1e-8 relative. The stepwise
paths are computed here by brute force (one statsmodels OLS refit per candidate per step), an
algorithm independent of yosoku's sweep-operator implementation; the candidate rules (natural
cubic spline basis, interactions of selected counters) are re-implemented here from their
definitions.
"""
import gzip
import csv
import json
import pathlib

import numpy as np
import statsmodels
import statsmodels.api as sm

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/core/regression/tests/oracle"


def ols_case(name, x, y, names, note):
    """OLS with an intercept: coefficients, standard errors, R2, adjusted R2, fitted values,
    exact leave-one-out predictions, and the condition number of the centred, unit-norm design."""
    X = sm.add_constant(x, has_constant="add")
    fit = sm.OLS(y, X).fit()
    infl = fit.get_influence()
    h = infl.hat_matrix_diag
    loo = y - fit.resid / (1.0 - h)
    xc = x - x.mean(axis=0)
    norms = np.linalg.norm(xc, axis=0)
    cond = np.linalg.cond(xc / norms)
    rank = np.linalg.matrix_rank(X) - 1
    case = {
        "name": name,
        "note": note,
        "x": x.tolist(),
        "y": y.tolist(),
        "names": names,
        "intercept": float(fit.params[0]),
        "coefficients": fit.params[1:].tolist(),
        "std_errors": fit.bse[1:].tolist(),
        "r2": float(fit.rsquared),
        "adj_r2": float(fit.rsquared_adj),
        "rank": int(rank),
        "fitted": fit.fittedvalues.tolist(),
        "leverage": h.tolist(),
        "loo": loo.tolist(),
        "condition_number": float(cond),
    }
    return case


def rank_deficient_case(name, x, y, names, note):
    """Exactly collinear columns: coefficients are not unique (statsmodels returns the
    minimum-norm pseudo-inverse solution, yosoku drops a column), but the fitted values, R2,
    adjusted R2 (with the rank as degrees of freedom), leverages and leave-one-out predictions
    are, and are compared."""
    case = ols_case(name, x, y, names, note)
    del case["coefficients"], case["std_errors"], case["intercept"], case["condition_number"]
    return case


def ridge_case(name, x, y, names, lam, note):
    """Ridge on the columns as given, intercept unpenalised: the closed form on centred data,
    and leave-one-out by refitting without each row."""
    def fit(xs, ys):
        m, my = xs.mean(axis=0), ys.mean()
        xc, yc = xs - m, ys - my
        beta = np.linalg.solve(xc.T @ xc + lam * np.eye(xs.shape[1]), xc.T @ yc)
        return my - m @ beta, beta
    b0, beta = fit(x, y)
    loo = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        c0, cb = fit(x[keep], y[keep])
        loo.append(float(c0 + x[i] @ cb))
    return {
        "name": name,
        "note": note,
        "x": x.tolist(),
        "y": y.tolist(),
        "names": names,
        "ridge": lam,
        "intercept": float(b0),
        "coefficients": beta.tolist(),
        "fitted": (b0 + x @ beta).tolist(),
        "loo": loo,
    }


# --- stepwise, by brute force ---------------------------------------------------------------

def quantile_knots(v, count):
    qs = [0.05 + 0.90 * k / (count - 1) for k in range(count)]
    knots = [float(np.quantile(v, q)) for q in qs]  # type 7, as yosoku
    out = []
    for k in knots:
        if not out or abs(k - out[-1]) > 1e-12 * max(abs(k), abs(out[-1]), 1e-300):
            out.append(k)
    return out


def natural_basis(v, knots):
    cols = [v.copy()]
    K = len(knots)
    if K < 3:
        return cols
    last = knots[-1]

    def d(j):
        return (np.maximum(v - knots[j], 0) ** 3 - np.maximum(v - last, 0) ** 3) / (last - knots[j])

    for j in range(K - 2):
        cols.append(d(j) - d(K - 2))
    return cols


def standardise(v):
    c = v - v.mean()
    norm = np.linalg.norm(c)
    scale = max(np.max(np.abs(v)), np.finfo(float).tiny)
    if norm <= 1e-12 * scale * np.sqrt(len(v)):
        return None
    return c / norm


def adj_r2(rss, tss, n, k):
    df = n - k - 1
    return 1 - (rss / df) / (tss / (n - 1)) if df > 0 else float("nan")


def rss_of(columns, y):
    if not columns:
        return float(((y - y.mean()) ** 2).sum())
    X = sm.add_constant(np.column_stack(columns), has_constant="add")
    fit = sm.OLS(y, X).fit()
    return float(fit.ssr), int(np.linalg.matrix_rank(X)) - 1


def forward(features, names, y, knots, interactions, max_interactions=45):
    n = len(y)
    tss = float(((y - y.mean()) ** 2).sum())
    terms = []  # (name, columns, parents)
    linear = []
    for j, v in enumerate(features):
        z = standardise(v)
        linear.append(z)
        if z is None:
            continue
        basis = natural_basis(v, quantile_knots(v, knots)) if knots and knots >= 3 else [v]
        cols = [basis[0]] + [c for c in basis[1:] if standardise(c) is not None]
        terms.append([names[j], cols, [j]])
    selected, cols_in, path = [], [], []
    current = adj_r2(tss, tss, n, 0)
    path.append({"action": "start", "term": "", "adj_r2": current, "r2": 0.0})
    made = 0
    while True:
        best = None
        for t in terms:
            if t[0] in [s[0] for s in selected]:
                continue
            rss, rank = rss_of(cols_in + t[1], y)
            a = adj_r2(rss, tss, n, rank)
            if best is None or a > best[1]:
                best = (t, a, rss, rank)
        if best is None or best[1] <= current:
            break
        t, a, rss, rank = best
        selected.append(t)
        cols_in = cols_in + t[1]
        current = a
        path.append({"action": "add", "term": t[0], "adj_r2": a, "r2": 1 - rss / tss})
        if interactions and len(t[2]) == 1:
            a_idx = t[2][0]
            for s in selected[:-1]:
                if len(s[2]) != 1 or made >= max_interactions:
                    continue
                b_idx = s[2][0]
                prod = linear[b_idx] * linear[a_idx]
                if standardise(prod) is None:
                    continue
                terms.append([f"{names[b_idx]}*{names[a_idx]}", [prod * n], [b_idx, a_idx]])
                made += 1
    return path


def backward(features, names, y, knots):
    n = len(y)
    tss = float(((y - y.mean()) ** 2).sum())
    terms = []
    for j, v in enumerate(features):
        if standardise(v) is None:
            continue
        basis = natural_basis(v, quantile_knots(v, knots)) if knots and knots >= 3 else [v]
        cols = [basis[0]] + [c for c in basis[1:] if standardise(c) is not None]
        terms.append([names[j], cols])
    included = list(terms)
    rss, rank = rss_of([c for t in included for c in t[1]], y)
    current = adj_r2(rss, tss, n, rank)
    path = [{"action": "start", "term": "", "adj_r2": current, "r2": 1 - rss / tss}]
    while included:
        best = None
        for t in included:
            rest = [c for u in included if u is not t for c in u[1]]
            r = rss_of(rest, y)
            rss_t, rank_t = (r, 0) if not isinstance(r, tuple) else r
            a = adj_r2(rss_t, tss, n, rank_t)
            if best is None or a > best[1]:
                best = (t, a, rss_t)
        if best[1] <= current:
            break
        included.remove(best[0])
        current = best[1]
        path.append({"action": "remove", "term": best[0][0], "adj_r2": best[1], "r2": 1 - best[2] / tss})
    return path


def stepwise_case(name, x, y, names, knots, interactions, direction, note):
    features = [x[:, j] for j in range(x.shape[1])]
    if direction == "forward":
        path = forward(features, names, y, knots, interactions)
    else:
        path = backward(features, names, y, knots)
    return {
        "name": name,
        "note": note,
        "x": x.tolist(),
        "y": y.tolist(),
        "names": names,
        "spline_knots": knots,
        "interactions": interactions,
        "direction": direction,
        "path": path,
    }


def spline_case(x, knots):
    ks = quantile_knots(x, knots)
    return {"name": "spline_basis", "note": "natural cubic spline basis at quantile knots", "x": x.tolist(), "knot_count": knots, "knots": ks, "basis": [c.tolist() for c in natural_basis(x, ks)]}


def real(kernel, names):
    """Counters and duration of one kernel on the Tesla K40, from the shipped dataset subset."""
    path = ROOT / f"pipelines/data/gpuperfpredict/{kernel}-Tesla-K40.csv.gz"
    rows = list(csv.DictReader(gzip.open(path, "rt")))
    x = np.array([[float(r[c]) for c in names] for r in rows])
    y = np.array([float(r["duration"]) for r in rows])
    return x, y, names


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261122)
    cases = []

    x, y, names = real("kernel", ["gst_request", "device_memory_read_transactions", "issued_control.flow_instructions"])
    cases.append(ols_case("real_heartwall_k40", x, y, names, "real data: heartwall's `kernel` on a Tesla K40, 659 launches (gpuperfpredict subset), duration from three counters; condition number ~770"))
    x, y, names = real("bpnn_layerforward_CUDA", ["inst_executed", "gld_request", "gst_request", "shared_load", "shared_store"])
    cases.append(rank_deficient_case("real_bpnn_k40", x, y, names, "real data: bpnn_layerforward_CUDA on a Tesla K40, 57 launches: all five counters are multiples of the input size (rank 1)"))

    n = 60
    x = rng.normal(size=(n, 4)) * np.array([1.0, 10.0, 0.1, 1e3])
    y = 3.0 + x @ np.array([2.0, -0.5, 7.0, 0.002]) + rng.normal(scale=0.3, size=n)
    cases.append(ols_case("well_conditioned", x, y, ["a", "b", "c", "d"], "synthetic, features of very different scales"))

    n = 50
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    x3 = x1 + 1e-4 * rng.normal(size=n)
    x = np.column_stack([x1, x2, x3])
    y = 1.0 + x1 + 0.5 * x2 - 0.25 * x3 + rng.normal(scale=0.1, size=n)
    cases.append(ols_case("ill_conditioned", x, y, ["x1", "x2", "x3"], "x3 = x1 + 1e-4 noise: condition number ~1e4"))

    n = 40
    x1, x2, x3 = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    x = np.column_stack([x1, x2, x3, 2 * x1 - x2])
    y = 0.5 + x1 - x2 + 0.3 * x3 + rng.normal(scale=0.2, size=n)
    cases.append(rank_deficient_case("collinear", x, y, ["x1", "x2", "x3", "x4"], "x4 = 2 x1 - x2 exactly: rank 3 of 4"))

    n = 35
    x = rng.normal(size=(n, 3))
    y = 1.0 + x @ np.array([1.0, 2.0, -1.0]) + rng.normal(scale=0.5, size=n)
    cases.append(ridge_case("ridge", x, y, ["a", "b", "c"], 2.5, "ridge, lambda 2.5 on the columns as given"))

    n = 80
    x = rng.uniform(0.1, 10.0, size=(n, 6))
    y = 2.0 + 1.5 * x[:, 0] + 0.8 * np.log(x[:, 1]) * 3 + 0.3 * x[:, 0] * x[:, 2] + rng.normal(scale=0.5, size=n)
    names = ["c0", "c1", "c2", "c3", "c4", "c5"]
    cases.append(stepwise_case("forward_linear", x, y, names, None, False, "forward", "linear terms"))
    cases.append(stepwise_case("forward_splines_interactions", x, y, names, 4, True, "forward", "4-knot natural splines and interactions of selected counters"))
    cases.append(stepwise_case("backward_splines", x, y, names, 4, False, "backward", "backward elimination of 4-knot spline terms"))
    cases.append(spline_case(x[:, 1], 4))

    for case in cases:
        case["produced_by"] = f"tools/oracle/regression_oracle.py with numpy {np.__version__}, statsmodels {statsmodels.__version__}"
        path = OUT / f"{case['name']}.json"
        path.write_text(json.dumps(case, indent=1) + "\n")
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
