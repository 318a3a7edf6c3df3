"""Benchmark of the app's pages on tables of a million rows (issues 16.7 and 19.4).

``pages``: a generated 1,000,000-row CSV (5 columns, ~49 MB, and 10 columns) is uploaded through
AppTest (the pages' own code, in this process) and every page is visited once, in order, then
revisited; each visit's wall and CPU time (this process's: the app runs in it) is printed with the load
average and the subsamples the page shows (target ≤ 5 s per page). ``memory``: a real server and
Chromium; N sessions each upload the 5-column file, visit every page and close; the server's resident
memory is printed after each upload and 15 s after each close (the server keeps a closed session for
``server.disconnectedSessionTTL`` seconds for a reconnect: set to 5 here, 120 by default; ``ui.server``
ends it within 2 s of that time and frees what it held).

Run: ``.venv/bin/python bench/bench_large.py pages`` and ``... memory --sessions 3``; ``pages --profile N``
also prints the N functions of most cumulative time of each first visit (cProfile, which slows the visit).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _common import flag, machine  # noqa: E402  (also puts the project on sys.path)

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["pages/data.py", "pages/synthesize.py", "pages/compare.py", "pages/risk.py", "pages/ru_map.py"]
NAMES = {"pages/data.py": "Data", "pages/synthesize.py": "Synthesize", "pages/compare.py": "Compare",
         "pages/risk.py": "Risk", "pages/ru_map.py": "R-U map"}


def table(rows: int, columns: int, seed: int = 7) -> pd.DataFrame:
    """A census-like table: numeric and categorical columns with some dependence between them."""
    rng = np.random.default_rng(seed)
    digits = 9 if columns <= 5 else 2  # ~49 MB with 5 columns; 10 columns kept under the 50 MB limit
    age = rng.integers(18, 91, rows)
    regions = ("north", "south", "east", "west", "centre", "islands", "coast", "hills")
    region = rng.choice([f"{r}_reg" for r in regions] if columns <= 5 else list("NSEWCIKH"), rows)
    income = np.round(np.exp(rng.normal(10 + 0.01 * (age - 18), 0.6)), digits)
    sex = rng.choice(["female", "male"] if columns <= 5 else ["f", "m"], rows)
    score = np.round(rng.beta(2, 5, rows) * 100, digits)
    df = pd.DataFrame({"age": age, "income": income, "region": region, "sex": sex, "score": score})
    if columns >= 10:
        df["hours"] = np.clip(rng.normal(38, 8, rows).round(), 0, 80).astype(int)
        df["tenure"] = np.round(rng.exponential(6, rows), 1)
        df["education"] = rng.choice(["E0", "E1", "E2", "E3", "E4", "E5"], rows)
        df["married"] = rng.choice(["y", "n"], rows)
        df["children"] = rng.poisson(1.2, rows).clip(0, 6)
    return df.iloc[:, :columns]


def csv_bytes(rows: int, columns: int) -> bytes:
    return table(rows, columns).to_csv(index=False).encode()


def _shown(at) -> list[str]:
    """The captions and notes that state a subsample's size."""
    texts = [e.value for e in [*at.caption, *at.info, *at.markdown]]
    return [t for t in texts if re.search(r"sub-?sample|random sample|of the [\d,]+ ", t)]


def _timed(run, profile: int = 0) -> tuple[float, float]:
    """Wall and CPU seconds of ``run()`` (CPU: this process, where AppTest runs the app, and its children);
    with ``profile``, the top functions by cumulative time of the threads it started (AppTest runs the
    page in one) are printed after."""
    profiles = []

    def start_profiling(*_):
        profiles.append(cProfile.Profile())
        profiles[-1].enable()  # replaces this hook in the new thread

    threading.setprofile(start_profiling if profile else None)
    t, c = time.perf_counter(), _cpu()
    try:
        run()
    finally:
        threading.setprofile(None)
    out = time.perf_counter() - t, _cpu() - c
    if profiles:
        pstats.Stats(*profiles, stream=sys.stderr).sort_stats("cumulative").print_stats(profile)
    return out


def _cpu() -> float:
    import resource  # noqa: PLC0415 - POSIX only, as the benchmark

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _load() -> str:
    """The 1-minute load average now (2 cores: above 2, other work shares them)."""
    return Path("/proc/loadavg").read_text().split()[0]


def pages(args) -> None:
    from streamlit.testing.v1 import AppTest

    for columns in args.columns:
        data = csv_bytes(args.rows, columns)
        print(f"\n{args.rows:,} rows × {columns} columns, {len(data):,} bytes ({len(data) / 1e6:.1f} MB)")
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).run()
        print("| page | wall s | CPU s | load | target | subsamples shown |")
        sec, cpu = _timed(lambda: at.file_uploader(key="uploader").set_value(("large.csv", data, "text/csv")).run())
        assert at.session_state["dataset"].name == "large.csv", [e.value for e in at.error]
        print(f"| upload + Data page | {sec:.1f} | {cpu:.1f} | {_load()} | {flag(sec, 5)} | |")
        for visit in ("first", "again"):
            for page in PAGES:
                sec, cpu = _timed(lambda: at.switch_page(page).run(), args.profile if visit == "first" else 0)
                problems = [e.value for e in [*at.exception, *at.error]]
                notes = "; ".join(_shown(at)) if visit == "first" else ""
                print(f"| {NAMES[page]} ({visit} visit) | {sec:.1f} | {cpu:.1f} | {_load()} | {flag(sec, 5)} | "
                      f"{notes[:300]} {'ERROR: ' + str(problems)[:200] if problems else ''}")
                sys.stdout.flush()


PAGE_VISITS = ("Synthesize", "Compare", "Risk")  # each memory session's, after its upload on the Data page


def _rss_mb(pid: int) -> float:
    import psutil  # noqa: PLC0415 - only the memory run needs it

    proc = psutil.Process(pid)
    return (proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))) / 2**20


def _cpu_s(pid: int) -> float:
    import psutil  # noqa: PLC0415 - only the memory run needs it

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def _loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def memory(args) -> None:
    import os
    import subprocess
    import tempfile
    import urllib.request

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.e2e.conftest import FLAGS, RUN_WATCH, _free_port, go, wait_idle

    path = Path(tempfile.mkdtemp(dir="/dev/shm")) / "large.csv"  # the benchmark's own generated table
    path.write_bytes(csv_bytes(args.rows, 5))
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1",
                             "--server.disconnectedSessionTTL", "5"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=FLAGS)
            # A first session on the bundled data visits the same pages, so the libraries they import on
            # first use are loaded: the baseline.
            ctx = browser.new_context()
            ctx.add_init_script(RUN_WATCH)  # wait_idle reads the page's run messages through it
            pg = ctx.new_page()
            pg.set_default_timeout(600_000)
            pg.goto(url)
            wait_idle(pg)
            for name in PAGE_VISITS:
                go(pg, name)
            ctx.close()
            time.sleep(15)  # that session ended too (see below)
            base = _rss_mb(proc.pid)
            print(f"\n{path.stat().st_size:,}-byte upload; server RSS with no session: {base:.0f} MB")
            print("| session | after upload and every page, MB | 15 s after its browser closed, MB | "
                  "server CPU, s | wall, s | load |")
            for i in range(args.sessions):
                cpu, wall = _cpu_s(proc.pid), time.perf_counter()
                ctx = browser.new_context()
                ctx.add_init_script(RUN_WATCH)
                pg = ctx.new_page()
                pg.set_default_timeout(600_000)
                pg.goto(url)
                wait_idle(pg)
                pg.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
                wait_idle(pg)
                pg.get_by_text(f"large.csv: {args.rows:,} rows").wait_for()
                for name in PAGE_VISITS:
                    go(pg, name)
                open_mb = _rss_mb(proc.pid)
                ctx.close()
                time.sleep(15)  # the 5 s kept for a reconnect, the server's 2 s check, its collection
                closed_mb = _rss_mb(proc.pid)
                print(f"| {i + 1} | {open_mb:.0f} (+{open_mb - base:.0f}) | {closed_mb:.0f} "
                      f"(+{closed_mb - base:.0f}) | {_cpu_s(proc.pid) - cpu:.0f} | {time.perf_counter() - wall:.0f} | "
                      f"{_loadavg()} |")
                sys.stdout.flush()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
        path.unlink()
        os.rmdir(path.parent)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["pages", "memory"])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--columns", type=int, nargs="+", default=[5, 10])
    ap.add_argument("--sessions", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="pages: print each first visit's N functions of most cumulative time (to stderr)")
    args = ap.parse_args()
    print(machine())
    (pages if args.what == "pages" else memory)(args)


if __name__ == "__main__":
    main()
