"""Benchmark of the R-U sweep in parallel (issue 19) on the bundled diamonds table (53,940 rows).

Target: 6 DP methods × 10 ε × 1 replicate with the default measures (plus
the two reference points, original and bootstrap) in ≤ 30 s on the 2-core
machine, the measures at the sweep's sample sizes (``rumap.SWEEP_OPTIONS``). Reported: the sweep serially (1 worker), on 2 local processes
(joblib's loky, the default), and on a dask.distributed LocalCluster of 2
single-thread worker processes, the same code under
``joblib.parallel_config(backend="dask")``; the speed-up 1 → 2 workers and
the cluster's overhead against local processes. Each run starts with an
empty measurement cache in this process; the pools' start-up is included (a
first sweep pays it, the app's later sweeps reuse loky's workers, which keep
the measurements they made: the run with workers started measures a method
again only in a worker that had not measured it). The three tables
are checked identical. CPU seconds are this process's plus its child
processes' (loky's and the LocalCluster's workers, read with psutil): the
figure other work's load inflates least, and CPU/point says what a point costs.

Run: ``.venv/bin/python bench/bench_sweep.py [--skip-serial]``. Prints the
machine and its load first: other work on the 2 cores slows every row.
"""

from __future__ import annotations

import argparse
import os
import time

import psutil

from _common import flag, machine  # noqa: E402  (also puts the project on sys.path)

import joblib  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import dpsynth_core as core  # noqa: E402
from dpsynth_core.synth import base  # noqa: E402

# The six DP methods issue 19 counted; --all-dp adds those that came later (MST, PrivBayes).
ISSUE_METHODS = ["independent", "dp_seqreg", "pmi", "pegs", "pegs_rs", "dirichlet"]
ALL_DP = [m for m, s in core.SYNTHESIZERS.items() if s.is_dp]
EPSILONS = [float(f"{e:.3g}") for e in np.logspace(-1, 1, 10)]  # 0.1 … 10


def cpu_seconds() -> dict[int, float]:
    """CPU seconds (user + system) so far of this process and of each of its descendants, by pid."""
    me = psutil.Process()
    out = {}
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            out[p.pid] = t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return out


def sweep(df, schema, methods, **kw):
    """Wall seconds, the table, and CPU seconds of this process and its workers (a worker started during
    the sweep counts whole; one that ended during it would be missed: loky's idle out after 5 minutes)."""
    base._measure_cache.clear()
    load, before, t = os.getloadavg()[0], cpu_seconds(), time.perf_counter()
    table = core.ru_map(df, methods, EPSILONS, seed=2026, schema=schema, **kw)
    wall, after = time.perf_counter() - t, cpu_seconds()
    return wall, table, sum(c - before.get(pid, 0.0) for pid, c in after.items()), f"{load:.1f} → {os.getloadavg()[0]:.1f}"


def report(label: str, row: tuple) -> tuple:
    """Print one run's line as soon as it ends (a loaded machine makes the whole script long); return it."""
    sec, table, cpu, load = row
    print(f"{label:36s} {sec:6.1f} s  CPU {cpu:5.1f} s ({cpu / len(table):.2f} s/point)  load {load}  "
          f"{flag(sec, 30.0)}", flush=True)
    return row


def point_costs(df, schema, methods) -> None:
    """CPU seconds of one point per method at ε = 1: its synthesis (measurement made beforehand, as the
    sweep does), and its default measures on every row against the sweep's samples, side by side so other
    work's load weighs on both alike."""
    from dpsynth_core.synth.base import measurement

    print("one point at ε = 1, CPU s: synthesis | measures at their defaults (propensity on 10,000 stacked rows, "
          "DCR of every record) → at the sweep's samples", flush=True)
    for m in methods:
        measured = measurement(df, m, schema=schema)
        c = time.process_time()
        synth = core.synthesize(df, m, epsilon=1.0, schema=schema, seed=1, measured=measured)
        cost = [time.process_time() - c]
        for options in (None, core.rumap.SWEEP_OPTIONS):
            c = time.process_time()
            core.rumap.score(df, synth.data, schema=synth.schema, seed=1, options=options)
            cost.append(time.process_time() - c)
        print(f"  {m:12s} {cost[0]:5.2f} | {cost[1]:5.2f} → {cost[2]:5.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-serial", action="store_true", help="skip the 1-worker run (the slowest)")
    parser.add_argument("--all-dp", action="store_true", help="every DP method, not only the issue's six")
    parser.add_argument("--points", action="store_true", help="only the cost of one point per method")
    args = parser.parse_args()
    methods = ALL_DP if args.all_dp else ISSUE_METHODS
    print(machine(), flush=True)
    df, schema = core.load_bundled("diamonds")
    print(f"diamonds {len(df):,} rows; {len(methods)} DP methods ({', '.join(methods)}) × "
          f"{len(EPSILONS)} ε ({EPSILONS[0]:g}…{EPSILONS[-1]:g}) × 1 replicate + 2 references = "
          f"{len(methods) * len(EPSILONS) + 2} points; default measures at {core.rumap.SWEEP_OPTIONS}", flush=True)
    point_costs(df, schema, methods)
    if args.points:
        return
    rows = {}
    if not args.skip_serial:
        with joblib.parallel_config(n_jobs=1):
            rows["1 worker (serial)"] = report("1 worker (serial)", sweep(df, schema, methods))
    rows["2 local processes (loky)"] = report("2 local processes (loky)", sweep(df, schema, methods, n_jobs=2))
    # The app's later sweeps find loky's workers started (they idle out after 5 minutes).
    rows["2 local processes, workers started"] = report("2 local processes, workers started",
                                                        sweep(df, schema, methods, n_jobs=2))
    from dask.distributed import Client, LocalCluster

    t = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        start = time.perf_counter() - t
        with joblib.parallel_config(backend="dask"):
            rows["LocalCluster, 2 workers (dask)"] = report("LocalCluster, 2 workers (dask)",
                                                            sweep(df, schema, methods))
    print(f"(LocalCluster start-up, not in the row: {start:.1f} s)")
    first = next(iter(rows.values()))[1]
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for table in (r[1] for r in rows.values()):
        pd.testing.assert_frame_equal(table, first)
    print(f"rows used per point: propensity {sorted(set(first['propensity_rows']))}, "
          f"DCR {sorted(set(first['dcr_rows']))}")
    local = rows["2 local processes (loky)"][0]
    if "1 worker (serial)" in rows:
        wall, _, cpu, _ = rows["1 worker (serial)"]
        warm = rows["2 local processes, workers started"][0]
        print(f"speed-up 1 → 2 workers: {wall / local:.2f}× (workers started: {wall / warm:.2f}×)")
        # CPU time does not grow with other work's load as wall time does: it bounds what 2 cores can do.
        print(f"serial sweep CPU {cpu:.1f} s ({cpu / len(first):.2f} s/point): no schedule on 2 cores beats "
              f"{cpu / 2:.1f} s")
    print(f"LocalCluster overhead against local processes: "
          f"{rows['LocalCluster, 2 workers (dask)'][0] - local:+.1f} s "
          f"({rows['LocalCluster, 2 workers (dask)'][0] / local - 1:+.0%}); tables identical")


if __name__ == "__main__":
    main()
