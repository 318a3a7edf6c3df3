"""Time of the Synthesize page's headline readout (dpsynth_core.readout.headline) on diamonds (54k rows).

Run: .venv/bin/python bench/headline.py. Prints wall and CPU seconds per call (median of 5) for a few ε;
the readout must follow the ε slider in at most 0.5 s. CPU time is printed because on a shared machine
the wall time mostly measures the neighbours.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common  # noqa: E402,F401 - a ledger store of the benchmarks' own
import dpsynth_core as core  # noqa: E402


def main() -> None:
    df, schema = core.load_bundled("diamonds")
    for eps in (0.3, 1.0, 3.0):
        synth = core.synthesize(df, "independent", epsilon=eps, schema=schema, seed=1).data
        core.readout.headline(df, synth, schema, 0)  # warm-up
        wall, cpu = [], []
        for i in range(5):
            t, c = time.perf_counter(), time.process_time()
            core.readout.headline(df, synth, schema, i)
            wall.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(f"ε = {eps:g}: wall {statistics.median(wall):.3f} s, CPU {statistics.median(cpu):.3f} s "
              f"(median of 5, {len(df):,} rows)")


if __name__ == "__main__":
    main()
