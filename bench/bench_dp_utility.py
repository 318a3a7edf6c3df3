"""Utility of every DP synthesizer on the bundled diamonds table, at the same total ε.

Issue 18: every DP method in SYNTHESIZERS at ε ∈ {0.3, 1, 3} × 3 seeds, with
smartnoise-synth's MST as a peer when ``--peer`` names a Python that has it
(installed only in a benchmark venv, never a runtime dependency). Reports,
as medians over the seeds:

* TV1 — mean total variation over the 1-way marginals,
* TV2 — mean total variation over all 2-way marginals,
  both on one fixed discretisation for every method (``EVAL_BINS`` equal-width
  bins per numeric column over its declared bounds, categories as declared),
* pMSE ratio of the logit discriminator with all pairwise interactions
  (constraints.PROPENSITY_HEADLINE_ROWS stacked rows, seed 0),
* mean CI overlap of ``price ~ carat + cut`` (linear),
* seconds for fit + sample (measurement cache cleared) and for a new ε
  (measurement cached).

Targets (issue 18, at ε = 1): TV2 ≤ 0.029, pMSE ratio ≤ 57, fit + sample ≤ 5 s,
new ε ≤ 0.5 s. Run: ``.venv/bin/python bench/bench_dp_utility.py`` (about
10 minutes; ``--methods mst --epsilons 1`` for one row).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _common import machine  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core import constraints  # noqa: E402
from dpsynth_core.synth import SYNTHESIZERS, base  # noqa: E402
from dpsynth_core.synth.encoding import encode  # noqa: E402

EVAL_BINS = 10
EPSILONS = (0.3, 1.0, 3.0)
SEEDS = (1, 2, 3)
DELTA = 1e-6
PEER_SCRIPT = Path(__file__).with_name("_smartnoise_mst.py")


def tv_scores(real: pd.DataFrame, synth: pd.DataFrame, schema) -> tuple[float, float]:
    """Mean TV over 1-way and over 2-way marginals on the common discretisation."""
    cols = schema.used
    a, doms = encode(real, schema, cols, EVAL_BINS)
    b, _ = encode(synth, schema, cols, EVAL_BINS)
    sizes = [d.size for d in doms]

    def dist(codes, idx):
        keep = np.all(codes[:, idx] >= 0, axis=1)
        flat = np.ravel_multi_index(tuple(codes[keep][:, idx].T), [sizes[i] for i in idx])
        x = np.bincount(flat, minlength=int(np.prod([sizes[i] for i in idx])))
        return x / max(x.sum(), 1)

    tv1 = [0.5 * np.abs(dist(a, [i]) - dist(b, [i])).sum() for i in range(len(cols))]
    tv2 = [0.5 * np.abs(dist(a, [i, j]) - dist(b, [i, j])).sum()
           for i, j in itertools.combinations(range(len(cols)), 2)]
    return float(np.mean(tv1)), float(np.mean(tv2))


def scores(real, synth, schema) -> dict:
    tv1, tv2 = tv_scores(real, synth, schema)
    pm = core.propensity_metrics(real, synth, interactions=True, seed=0,
                                 max_rows=constraints.PROPENSITY_HEADLINE_ROWS)
    reg = core.regression_ci_overlap(real, synth, "price", ["carat", "cut"])
    return {"TV1": tv1, "TV2": tv2, "pMSE ratio": pm.pmse_ratio, "CI overlap": reg.mean_overlap}


def run_ours(method: str, df, schema, eps: float, seed: int, params: dict) -> dict:
    base._measure_cache.clear()
    t = time.perf_counter()
    s = core.synthesize(df, method, epsilon=eps, schema=schema, seed=seed, **params)
    first = time.perf_counter() - t
    t = time.perf_counter()
    core.synthesize(df, method, epsilon=eps * 1.01, schema=schema, seed=seed + 100, **params)
    again = time.perf_counter() - t
    assert s.ledger["is_dp"] and abs(s.ledger["epsilon_total"] - eps) < 1e-9, s.ledger["dp_label"]
    return {**scores(df, s.data, schema), "fit+sample s": first, "new ε s": again,
            "δ": s.ledger["delta"]}


def run_peer(python: str, df, schema, eps: float, seed: int) -> list[dict]:
    """smartnoise-synth's MST in its own venv: one fit, sampled as shipped and i.i.d."""
    out = subprocess.run([python, str(PEER_SCRIPT), str(eps), str(DELTA), str(seed), str(EVAL_BINS * 2)],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    rows = []
    for kind in ("shipped", "iid"):
        synth = pd.read_csv(res[kind])
        rows.append((f"smartnoise MST ({'as shipped' if kind == 'shipped' else 'i.i.d. from its model'})",
                     {**scores(df, synth[df.columns], schema), "fit+sample s": res["seconds"], "new ε s": float("nan"),
                      "δ": DELTA}))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--methods", nargs="*", default=[m for m, s in SYNTHESIZERS.items() if s.is_dp])
    ap.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    ap.add_argument("--seeds", nargs="*", type=int, default=list(SEEDS))
    ap.add_argument("--bins", type=int, default=None, help="override the methods' bins")
    ap.add_argument("--peer", default=None, help="python of a venv with smartnoise-synth (e.g. /work/benchvenv/bin/python)")
    args = ap.parse_args()
    df, schema = core.load_bundled("diamonds")
    records = []
    for eps in args.epsilons:
        for method in args.methods:
            params = {} if args.bins is None else {"bins": args.bins}
            if SYNTHESIZERS[method].per_record:
                # per-record methods: ε per record, so the total is n·ε; give them the same TOTAL ε
                params = {**params, "n": len(df)}
                e = eps / len(df)
            else:
                e = eps
            for seed in args.seeds:
                try:
                    r = run_ours(method, df, schema, e, seed, {k: v for k, v in params.items() if k != "n"}) \
                        if "n" not in params else run_ours_n(method, df, schema, e, seed, params)
                except Exception as exc:  # a method refusing the data is a result, not a crash
                    print(f"{method} ε={eps:g} seed {seed}: {type(exc).__name__}: {exc}")
                    continue
                records.append({"ε": eps, "method": method, "seed": seed, **r})
        if args.peer:
            for seed in args.seeds:
                for name, r in run_peer(args.peer, df, schema, eps, seed):
                    records.append({"ε": eps, "method": name, "seed": seed, **r})
    table = pd.DataFrame(records)
    med = table.groupby(["ε", "method"], sort=False).median(numeric_only=True).drop(columns="seed")
    print(machine())
    print(f"data: diamonds, {len(df):,} rows; median of seeds {args.seeds}; TV on {EVAL_BINS} bins per numeric column")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(med.round(4).to_string())


def run_ours_n(method, df, schema, eps, seed, params):
    """A per-record method at total ε: ε/n per record, n declared."""
    base._measure_cache.clear()
    n = params.pop("n")
    t = time.perf_counter()
    s = core.synthesize(df, method, epsilon=eps, schema=schema, seed=seed, n=n, **params)
    first = time.perf_counter() - t
    t = time.perf_counter()
    core.synthesize(df, method, epsilon=eps * 1.01, schema=schema, seed=seed + 100, n=n, **params)
    again = time.perf_counter() - t
    return {**scores(df, s.data, schema), "fit+sample s": first, "new ε s": again, "δ": s.ledger["delta"]}


if __name__ == "__main__":
    main()
