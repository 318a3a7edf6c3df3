"""Helpers the benchmark scripts share: timing, target flags, and the machine line."""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from pathlib import Path

# The scripts run from anywhere: put the project root on the path for `import dpsynth_core`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# The benchmarks synthesize the bundled public data over and over: their uses go to a ledger store of their own
# (dpsynth_core.privacy.store), unless one is named, never to the user's; servers they start inherit it.
# The store is removed when the script ends (a script that runs another bench script lends it its own).
if not os.environ.get("DPSYNTH_LEDGER"):
    import atexit
    import shutil
    import tempfile

    _store = tempfile.mkdtemp(prefix="dpsynth-bench-ledger-")
    atexit.register(shutil.rmtree, _store, ignore_errors=True)
    os.environ["DPSYNTH_LEDGER"] = str(Path(_store) / "ledger.sqlite3")


def timed_cpu(fn, repeat: int) -> tuple[float, float, object]:
    """Median wall-clock and CPU seconds (this process's) of ``repeat`` calls of ``fn``, and the last result."""
    wall, cpu, out = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu), out


def timed(fn, repeat: int) -> tuple[float, object]:
    """Median wall time of ``repeat`` calls of ``fn``, and the last result."""
    wall, _, out = timed_cpu(fn, repeat)
    return wall, out


def flag(sec: float, target: float | None) -> str:
    """``≤ 2 s ok`` / ``≤ 2 s MISSED``, or nothing without a target."""
    if target is None:
        return ""
    return f"≤ {target:g} s " + ("ok" if sec <= target else "MISSED")


def machine() -> str:
    """One line naming the machine and its load, printed above every table."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}; load average {load}")
