"""Seconds MST takes at a new ε once the data is measured (issue 18: ≤ 0.5 s).

The measure step is the only one that reads the data, and it holds exact
counts only (every 1-way and 2-way table at half-width bins). A new ε or
seed re-runs the generate step: noise on the 1-way counts, the private choice of
the tree, noise on its tables, inference (mirror descent with belief
propagation on the tree) and i.i.d. sampling of n records. Timed two ways on
diamonds (n = 53,940 synthetic rows, declared public), medians of seeds 1–3
at each ε:

* ``generate`` — the per-ε work alone, from the cached measurement, with the two generators
  synthesize would give it (records, and the secret ChaCha20 noise stream);
* ``synthesize`` — the public call with the measurement cached, which also
  checks the frame against the schema, looks the measurement up by the
  data's fingerprint and assembles the output frame.

Wall clock and this process's CPU time, with the load average (the machine
is shared; CPU time is what load inflates least).
Run: ``.venv/bin/python bench/bench_new_epsilon.py [--method mst] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics

from _common import flag, machine, timed_cpu  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core.privacy.randomness import streams  # noqa: E402
from dpsynth_core.synth import SYNTHESIZERS, base  # noqa: E402

EPSILONS = (0.3, 1.0, 3.0)
SEEDS = (1, 2, 3)
DELTA = 1e-6
TARGET_S = 0.5


def _streams(synth, seed: int) -> dict:
    """The generators synthesize gives ``generate`` for this seed: records, and the secret noise for a DP method."""
    rng, noise = streams(seed)
    return {"rng": rng, "noise": noise} if synth.is_dp else {"rng": rng}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--method", default="mst")
    ap.add_argument("--repeat", type=int, default=1, help="calls per (ε, seed); their median is taken")
    ap.add_argument("--epsilons", default=",".join(map(str, EPSILONS)), help="comma-separated ε (the app's slider "
                    "spans 0.01 to 100)")
    args = ap.parse_args()
    df, schema = core.load_bundled("diamonds")
    synth = SYNTHESIZERS[args.method]
    params = synth.defaults
    extra = {"delta": DELTA} if synth.spends.needs_delta else {}

    measure_wall, measure_cpu, measured = timed_cpu(lambda: base.measurement(df, args.method, schema=schema), 1)
    print(machine())
    print(f"{args.method} on diamonds ({len(df):,} rows → {len(df):,} synthetic); measure once: "
          f"{measure_wall:.3f} s wall, {measure_cpu:.3f} s CPU")
    print(f"{'ε':>4} | {'generate wall':>12} {'CPU':>6} | {'synthesize wall':>15} {'CPU':>6} | target")
    for eps in [float(e) for e in args.epsilons.split(",")]:
        rel, syn = [], []
        for seed in SEEDS:
            rel.append(timed_cpu(lambda: synth.generate(measured, epsilon=eps, n=len(df),
                                                       **_streams(synth, seed), **extra, **params),
                                 args.repeat)[:2])
            syn.append(timed_cpu(lambda: core.synthesize(df, args.method, epsilon=eps, delta=DELTA, schema=schema,
                                                         seed=seed, n=len(df), measured=measured), args.repeat)[:2])
        (rw, rc), (sw, sc) = [tuple(statistics.median(x) for x in zip(*runs)) for runs in (rel, syn)]
        print(f"{eps:>4g} | {rw:>12.3f} {rc:>6.3f} | {sw:>15.3f} {sc:>6.3f} | generate {flag(rw, TARGET_S)}, "
              f"synthesize {flag(sw, TARGET_S)}")


if __name__ == "__main__":
    main()
