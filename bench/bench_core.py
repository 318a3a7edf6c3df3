"""Benchmark of the walking skeleton on the bundled diamonds table (53,940 rows).

Targets (issue 2): synthesize + every Compare metric ≤ 2 s; propensity_metrics
alone ≤ 0.5 s. Run: ``.venv/bin/python bench/bench_core.py``. Prints a table
(median of ``--repeat`` runs) and the machine it ran on.
"""

from __future__ import annotations

import argparse

from _common import flag, machine, timed  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core.synth import base  # noqa: E402


def compare_metrics(df, schema, synth):
    """Everything the Compare page computes for one synthesis."""
    real, fake = df[schema.used], synth[schema.used]
    core.propensity_metrics(real, fake, interactions=True, seed=1,
                           max_rows=core.constraints.PROPENSITY_DETAIL_ROWS)
    for c in schema.used:
        cat = schema[c].kind == "categorical"
        core.histogram_data(real, fake, c, categorical=cat)
        if not cat:
            core.ecdf_data(real, fake, c)
    core.regression_ci_overlap(real, fake, "price", ["carat", "cut", "color"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    df, schema = core.load_bundled("diamonds")
    rows = []
    for method in ("independent", "cart", "bootstrap"):
        base._measure_cache.clear()
        first, _ = timed(lambda: core.synthesize(df, method, epsilon=1.0, schema=schema, seed=1), 1)
        again, s = timed(lambda: core.synthesize(df, method, epsilon=2.0, schema=schema, seed=2), args.repeat)
        metrics, _ = timed(lambda: compare_metrics(df, schema, s.data), args.repeat)
        rows.append((f"synthesize {method} (first, measures)", first, None))
        rows.append((f"synthesize {method} (new ε/seed)", again, None))
        rows.append((f"  + every Compare metric ({method})", again + metrics, 2.0))
    s = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=3)
    real, fake = df[schema.used], s.data[schema.used]
    t, _ = timed(lambda: core.propensity_metrics(real, fake, seed=1), args.repeat)
    rows.append(("propensity_metrics (logit, main effects)", t, 0.5))
    t, _ = timed(lambda: core.propensity_metrics(real, fake, interactions=True, seed=1), args.repeat)
    rows.append(("propensity_metrics (logit, pairwise interactions, all rows)", t, None))
    t, _ = timed(lambda: core.propensity_metrics(real, fake, interactions=True, seed=1,
                                                 max_rows=core.constraints.PROPENSITY_DETAIL_ROWS), args.repeat)
    rows.append((f"propensity_metrics (interactions, {core.constraints.PROPENSITY_DETAIL_ROWS:,} rows)", t, None))

    print(machine())
    print(f"data: diamonds, {len(df):,} rows × {df.shape[1]} columns; median of {args.repeat} runs\n")
    print(f"{'step':58s} {'seconds':>8s}  target")
    for name, sec, target in rows:
        print(f"{name:58s} {sec:8.3f}  {flag(sec, target)}")


if __name__ == "__main__":
    main()
