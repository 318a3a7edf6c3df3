"""Benchmark of the disclosure-risk measures on the bundled diamonds table (53,940 rows).

Targets (issue 5): Gower DCR and membership inference ≤ 5 s; match rates
≤ 0.5 s; peak memory reported (no n × n matrix: 53,940² float64 would be
23 GB). Run: ``.venv/bin/python bench/bench_risk.py``. Prints the machine,
then per step the median time of ``--repeat`` runs and, from one more run
under tracemalloc, the peak of memory allocated by the step (numpy reports
its buffers to tracemalloc); the process's peak RSS comes last.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import tracemalloc
from pathlib import Path

from _common import timed  # noqa: E402  (also puts the project on sys.path)

import numpy as np  # noqa: E402

import dpsynth_core as core  # noqa: E402
from dpsynth_core import risk  # noqa: E402


def timed_with_memory(fn, repeat: int) -> tuple[float, float, object]:
    """Median seconds over ``repeat`` runs, then the peak MB allocated by one traced run."""
    median, out = timed(fn, repeat)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return median, peak, out


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu model unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    df, schema = core.load_bundled("diamonds")
    used, keys, sensitive = schema.used, list(schema.keys), schema.sensitive
    train, held = core.holdout.split_holdout(df[used], 0.2, rng=np.random.default_rng(1))
    rows = []
    for method in ("cart", "independent"):
        full = core.synthesize(df, method, epsilon=1.0, schema=schema, seed=1).data[used]
        sec, peak, _ = timed_with_memory(lambda: core.gower_dcr(df[used], full, schema=schema), args.repeat)
        rows.append((f"gower_dcr, whole table: {len(df):,} real vs {len(full):,} synthetic ({method})", sec, peak, 5.0))
    for method in ("cart", "independent"):
        s = core.synthesize(train, method, epsilon=1.0, schema=schema, seed=1).data[used]
        tag = f"({method})"
        steps = [
            (f"gower_dcr {tag}", lambda: core.gower_dcr(train, s, schema=schema), 5.0),
            (f"membership_inference, {len(train):,} members + {len(held):,} held out {tag}",
             lambda: core.membership_inference(train, held, s, schema=schema), 5.0),
            (f"distance_risk: DCR + copies + MIA + baselines {tag}",
             lambda: risk.distance_risk(train, s, holdout=held, schema=schema, seed=1), 5.0),
            (f"key_match_disclosure, carat within 0.01 {tag}",
             lambda: risk.key_match_disclosure(train, s, keys, sensitive, tolerance=0.01, schema=schema,
                                               holdout=held), None),
            (f"unique_reproduction {tag}",
             lambda: risk.unique_reproduction(train, s, keys, sensitive, schema=schema, holdout=held), None),
            (f"attribute_inference (price from the keys) {tag}",
             lambda: risk.attribute_inference(train, s, keys, sensitive, schema=schema, holdout=held, seed=1), None),
        ]
        for name, fn, target in steps:
            sec, peak, _ = timed_with_memory(fn, args.repeat)
            rows.append((name, sec, peak, target))

    # Match rates need a row-linked release: CART re-synthesizes price and x, y, z; the keys are kept.
    part = core.synthesize(df, "cart", schema=schema, seed=1, columns=["price", "x", "y", "z"]).data
    for label, tol in (("exact keys", None), ("carat within 0.01", 0.01)):
        sec, peak, _ = timed_with_memory(lambda: core.match_rates(df, part, keys, tolerance=tol), args.repeat)
        rows.append((f"match_rates, {label} ({len(df):,} rows)", sec, peak, 0.5))
    sec, peak, _ = timed_with_memory(lambda: risk.match_risk(df, part, keys, schema=schema), args.repeat)
    rows.append((f"match_risk: rates + references + table ({len(df):,} rows)", sec, peak, None))

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores ({cpu_model()}), "
          f"Python {platform.python_version()}, {platform.system()} {platform.release()}")
    print(f"data: diamonds, {len(df):,} rows × {len(used)} columns; keys {keys}, sensitive {sensitive!r}; "
          f"median of {args.repeat} runs")
    print(f"split: {len(train):,} rows synthesized from, {len(held):,} held out (20%); "
          "each synthesis has about as many rows as it was fitted on\n")
    print(f"{'step':72s} {'seconds':>8s} {'peak MB':>8s}  target")
    for name, sec, peak, target in rows:
        flag = "" if target is None else (f"≤ {target:g} s " + ("ok" if sec <= target else "MISSED"))
        print(f"{name:72s} {sec:8.3f} {peak:8.1f}  {flag}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    print(f"\npeak resident memory of the whole run: {rss:,.0f} MB")


if __name__ == "__main__":
    main()
