"""Profile of the Compare page's measures on a table of a million rows (issues 16.7 and 19.4).

The page's four computations (discriminator, utility summary, regression, the registry's tiles) on the
table of ``bench_large.table`` against an ``independent`` synthesis at ε = 1, each timed (wall and CPU)
and, with ``--profile``, the cProfile functions that dominate its time.

Run: ``.venv/bin/python bench/profile_compare.py --columns 5 10 --profile``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from _common import machine  # noqa: E402  (also puts the project on sys.path)
from bench_large import table

import dpsynth_core as core
from dpsynth_core.utility.regression import default_model


def _step(name: str, fn, profile: bool):
    """Run ``fn``, print its wall and CPU seconds, and its top functions with ``profile``."""
    prof = cProfile.Profile() if profile else None
    t, c = time.perf_counter(), time.process_time()
    out = prof.runcall(fn) if prof else fn()
    print(f"| {name} | {time.perf_counter() - t:.2f} | {time.process_time() - c:.2f} |", flush=True)
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--columns", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--profile", action="store_true", help="print each step's top functions")
    args = ap.parse_args()
    print(machine())
    for columns in args.columns:
        real = table(args.rows, columns)
        schema = core.infer_schema(real)
        synth = core.synthesize(real, "independent", epsilon=1.0, schema=schema, seed=1).data
        cats = [c for c in schema.used if schema[c].kind == "categorical"]
        outcome, predictors, family = default_model(list(real.columns), schema)
        print(f"\n{args.rows:,} rows × {columns} columns; load {open('/proc/loadavg').read().split()[:3]}")
        print("| step | wall s | CPU s |\n|---|---|---|")
        prop = _step("discriminator (logit, interactions)", lambda: core.utility.run_discriminator(
            real, synth, "logit_interactions", seed=1, categorical=[]), args.profile)
        summary = _step("utility_summary", lambda: core.utility.utility_summary(real, synth, categorical=cats),
                        args.profile)
        reg = _step(f"regression {outcome} ~ {' + '.join(predictors)}", lambda: core.regression_ci_overlap(
            real, [synth], outcome, predictors, family=family, categorical=cats, seed=1), args.profile)
        # The page puts its own results in the metric context, as here, so the tiles read them.
        ctx = core.MetricContext(real, synth, schema=schema, seed=1,
                                 shared={"propensity": prop, **summary.shared(), "regression": reg})
        _step("tiles of every utility section", lambda: [core.utility.section_tiles(s, ctx) for s in
                                                         core.metric_info.sections("utility")], args.profile)


if __name__ == "__main__":
    main()
