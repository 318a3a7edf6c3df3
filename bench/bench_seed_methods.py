"""What the seed DP methods keep at the same TOTAL ε on diamonds (issue 18, points 3 and 4).

For every DP method registered (``mst`` and ``privbayes`` too once they land) at total
ε ∈ {0.3, 1, 3}, three seeds each, on the bundled diamonds table (53,940 rows, n declared
public): TV1 and TV2, the mean total variation over all 1-way and all 2-way marginals on a common
discretisation (categories as declared, 10 equal bins per numeric column over its declared
bounds), medians over the seeds, and the median wall time of one synthesis.

Per-record methods (pegs, pegs_rs, pmi) are given their share of the total: ε per record =
total / n (pegs_rs: per block of B records, total / ⌈n/B⌉). ``--no-noise`` adds the α ≈ 0 check of
issue 18 (ε = 10⁹: at least 10⁴ per record whether read per record or as the total, so α = 0).

Run: ``.venv/bin/python bench/bench_seed_methods.py [--eps 0.3 1 3] [--seeds 3] [--methods ...]``.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import numpy as np

from _common import machine  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core.privacy import PER_RECORD  # noqa: E402
from dpsynth_core.synth import SYNTHESIZERS  # noqa: E402
from dpsynth_core.synth.encoding import encode  # noqa: E402

TV_BINS = 10


def marginal_tv(real, synth, schema) -> tuple[float, float]:
    """(TV1, TV2): mean total variation over the 1-way and the 2-way marginals, 10 bins per numeric column."""
    a, domains = encode(real, schema, schema.used, TV_BINS)
    b, _ = encode(synth, schema, schema.used, TV_BINS)
    sizes = [d.size for d in domains]

    def share(codes, cols):
        keep = (codes[:, cols] >= 0).all(axis=1)
        flat = np.ravel_multi_index(tuple(codes[keep][:, c] for c in cols), [sizes[c] for c in cols])
        return np.bincount(flat, minlength=int(np.prod([sizes[c] for c in cols]))) / max(keep.sum(), 1)

    def tv(cols):
        return 0.5 * np.abs(share(a, cols) - share(b, cols)).sum()

    m = len(sizes)
    return (float(np.mean([tv([i]) for i in range(m)])),
            float(np.mean([tv(list(p)) for p in itertools.combinations(range(m), 2)])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.0, 3.0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--methods", nargs="+", default=[m for m, s in SYNTHESIZERS.items() if s.is_dp])
    ap.add_argument("--no-noise", action="store_true", help="also run the per-record methods with α = 0 (ε = 10⁹)")
    args = ap.parse_args()
    df, schema = core.load_bundled("diamonds")
    n = len(df)
    print(machine())
    print(f"diamonds: {n:,} rows, n declared; medians over seeds 1..{args.seeds}")
    print(f"{'method':<12} {'total ε':>8} {'TV1':>7} {'TV2':>7} {'time s':>7}")
    runs = [(m, e, False) for m in args.methods for e in args.eps]
    if args.no_noise:
        runs += [(m, 1e9, True) for m in args.methods if SYNTHESIZERS[m].spends.kind == PER_RECORD]
    for method, eps, raw in runs:
        tv1, tv2, secs = [], [], []
        for seed in range(1, args.seeds + 1):
            t = time.perf_counter()
            out = core.synthesize(df, method, epsilon=eps, schema=schema, n=n, seed=seed).data
            secs.append(time.perf_counter() - t)
            a, b = marginal_tv(df, out, schema)
            tv1.append(a)
            tv2.append(b)
        shown = "α = 0" if raw else f"{eps:g}"
        print(f"{method:<12} {shown:>8} {statistics.median(tv1):7.4f} {statistics.median(tv2):7.4f} "
              f"{statistics.median(secs):7.2f}", flush=True)


if __name__ == "__main__":
    main()
