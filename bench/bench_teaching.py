"""Benchmark of the Learn page's Beta–binomial demo: one slider move redraws both sweeps.

Target: ≤ 1 s per move (the slider must feel instant in front of a class).
This was a timed assertion in tests/core/test_teaching.py; timings belong here,
not in tests. Run: ``.venv/bin/python bench/bench_teaching.py``.
"""

from __future__ import annotations

import argparse

from _common import flag, machine, timed  # noqa: E402  (also puts the project on sys.path)

import dpsynth_core as core  # noqa: E402
from dpsynth_core import teaching as T  # noqa: E402


def slider_move():
    """What the demo computes when its ε slider moves: the sweep over ε and the sweep over m."""
    steps = core.constraints.EPSILON_STEPS[10:]
    T.beta_binomial_sweep(0.3, 5000, steps, [20], reps=2000, seed=0)
    T.beta_binomial_sweep(0.3, 5000, [1.0], range(1, 21), reps=2000, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sec, _ = timed(slider_move, args.repeat)
    print(machine())
    print("| step | seconds | target |\n|---|---|---|")
    print(f"| Beta–binomial demo, one slider move (2 sweeps × 2,000 reps) | {sec:.2f} | {flag(sec, 1.0)} |")


if __name__ == "__main__":
    main()
