"""Benchmark of the empirical privacy audit (issue 28): 2,000 audit runs of MST on 300 rows.

Target: ``run_audit("mst", epsilon=1, runs=2000, rows=300)`` in ≤ 60 s on the 2-core machine, as
``dpsynth audit --method mst --epsilon 1 --runs 2000 --rows 300`` runs it: 2,000 runs on each of D and D′
for the method as released and again for its broken variant (8,000 syntheses of 2,000 rows), on every
local core through joblib. Reported: wall seconds (the pool's start-up included, as a first audit pays it),
the CPU seconds of the runs themselves (summed in the workers: ``AuditResult.cpu_seconds``), of this
process and of its worker processes (psutil), and CPU per synthesis.

``--slow`` instead runs every declared audit at its full size (the slow tests'), one line each, and their
total CPU: the figure for CI's budget.

Run: ``.venv/bin/python bench/bench_audit.py [--runs N] [--rows N] [--slow]``. Prints the machine and its
load first: other work on the 2 cores slows every row; CPU seconds are the figure it inflates least.
"""

from __future__ import annotations

import argparse
import time

import psutil

from _common import flag, machine  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core.privacy.audit import bound_text, declared_audits, run_audit  # noqa: E402

TARGET_SECONDS = 60.0


def cpu_seconds() -> float:
    """CPU seconds (user + system) so far of this process and its descendants (loky's workers)."""
    me, total = psutil.Process(), 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def timed(**kw):
    """The audit, its wall seconds and the CPU seconds of this process and its workers."""
    c, t = cpu_seconds(), time.perf_counter()
    result = run_audit(**kw)
    return result, time.perf_counter() - t, cpu_seconds() - c


def headline(runs: int, rows: int) -> None:
    result, wall, cpu = timed(method="mst", epsilon=1.0, runs=runs, rows=rows)
    syntheses = 4 * runs
    print(f"MST, ε = 1, {runs:,} runs on each of D ({rows} rows) and D′, as released and broken "
          f"({syntheses:,} syntheses of {result.n:,} rows)")
    print(f"  wall {wall:.1f} s {flag(wall, TARGET_SECONDS)}; CPU of the runs {result.cpu_seconds:.1f} s "
          f"({1000 * result.cpu_seconds / syntheses:.1f} ms a synthesis); CPU of this process and its workers "
          f"{cpu:.1f} s")
    print(f"  bound {bound_text(result.honest.bound)} (claimed 1), broken variant {bound_text(result.broken.bound)}")


def slow() -> None:
    total = 0.0
    for method, synth in core.SYNTHESIZERS.items():
        if not synth.is_dp:
            continue
        for which, design in enumerate(declared_audits(method)):
            result, wall, _ = timed(method=method, which=which, runs=design.runs, seed=1)
            total += result.cpu_seconds
            print(f"  {method}[{which}]: {design.runs:,} runs, CPU {result.cpu_seconds:5.1f} s, wall {wall:5.1f} s; "
                  f"bound {bound_text(result.honest.bound)} ≤ {result.claim:g}, broken "
                  f"{bound_text(result.broken.bound)}")
    print(f"  the full audits' CPU: {total:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--slow", action="store_true", help="every declared audit at its full size instead")
    args = parser.parse_args()
    print(machine())
    if args.slow:
        slow()
    else:
        headline(args.runs, args.rows)


if __name__ == "__main__":
    main()
