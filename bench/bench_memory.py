"""Benchmark of the server's memory with one user on a 50 MB upload (issue 32): the peak on every page.

``server``: the app as users start it (``streamlit run serve.py``) and one Chromium session, for each flow of
``--flows`` on a fresh server: the session uploads a generated 675,000 × 12 table (49.1 MB of CSV), then for
each method of the flow in turn chooses it on Synthesize (the default, independent, needs no choice) and
visits Compare, Risk, R-U map, Ledger, Learn and Data; on the first method's visit to Risk it takes the
page's proposal to hold out 20 % of the rows, which every later synthesis then leaves out. A thread reads
the server's resident memory (RSS, with any child processes) every 20 ms; the table gives each step's peak
and the RSS when it ended, the server's CPU time and the load average. Target: every flow's peak ≤ 1 GB
(1,000,000,000 bytes, 953.7 MiB).

``where``: the same upload and pages in this process through AppTest (the pages' own code), with the RSS
sampled every 10 ms together with the page thread's stack; prints each step's peak and the functions
that were running at it (the innermost frames of the project and of the libraries), to name what
dominates a page's peak.

Run: ``.venv/bin/python bench/bench_memory.py server [--flows mst]`` and ``... where --steps Synthesize Risk``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd

from _common import machine  # noqa: E402  (also puts the project on sys.path)

ROOT = Path(__file__).resolve().parent.parent
MIB = 2**20
TARGET = 1_000_000_000  # bytes: the "1 GB"
ROWS = 675_000


def table(rows: int = ROWS, seed: int = 7) -> pd.DataFrame:
    """A census-like table of 12 columns, 7 numeric and 5 categorical (49.1 MB of CSV at 675,000 rows)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 91, rows)
    regions = ("north", "south", "east", "west", "centre", "islands", "coast", "hills")
    return pd.DataFrame({
        "age": age,
        "income": np.round(np.exp(rng.normal(10 + 0.01 * (age - 18), 0.6)), 2),
        "region": rng.choice([f"{r}_reg" for r in regions], rows),
        "sex": rng.choice(["female", "male"], rows),
        "score": np.round(rng.beta(2, 5, rows) * 100, 4),
        "hours": np.clip(rng.normal(38, 8, rows).round(), 0, 80).astype(int),
        "tenure": np.round(rng.exponential(6, rows), 1),
        "education": rng.choice(["primary", "secondary", "vocational", "bachelor", "master", "doctorate"], rows),
        "married": rng.choice(["yes", "no"], rows),
        "children": rng.poisson(1.2, rows).clip(0, 6),
        "weight": np.round(rng.gamma(2.0, 40.0, rows), 3),
        "city": rng.choice([f"city_{i:02d}" for i in range(30)], rows),
    })


def csv_bytes(rows: int = ROWS) -> bytes:
    return table(rows).to_csv(index=False).encode()


class Sampler(threading.Thread):
    """Reads a process's RSS (with its children's) every ``period`` seconds; the peak since the last mark.

    With ``stacks``, also keeps, at each new peak, the stack of the thread then running the project's code
    (the page's script thread: for ``where``, which runs the app in this process).
    """

    def __init__(self, pid: int, period: float, stacks: bool = False):
        super().__init__(daemon=True)
        import psutil  # noqa: PLC0415 - only the benchmark needs it

        self.proc, self.period, self.stacks = psutil.Process(pid), period, stacks
        self.peak, self.peak_stack, self.stop = 0, None, threading.Event()
        self.lock = threading.Lock()

    def rss(self) -> int:
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except Exception:  # noqa: BLE001 - a child that just ended
                pass
        return total

    def run(self) -> None:
        while not self.stop.is_set():
            now = self.rss()
            with self.lock:
                if now > self.peak:
                    self.peak = now
                    if self.stacks:
                        self.peak_stack = _project_stack()
            time.sleep(self.period)

    def mark(self) -> tuple[int, object]:
        """The peak and its stack since the previous mark; starts a new one."""
        with self.lock:
            out = self.peak, self.peak_stack
            self.peak, self.peak_stack = self.rss(), None
        return out


def _project_stack():
    """The stack of a thread now running code of the project's pages, ui or core, if any."""
    mine = threading.get_ident()
    for ident, frame in sys._current_frames().items():
        if ident == mine:
            continue
        stack = traceback.extract_stack(frame)
        if any(f"{ROOT}/{part}/" in f.filename for f in stack for part in ("pages", "ui", "dpsynth_core")):
            return stack
    return None


def _loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def _cpu_s(pid: int) -> float:
    import psutil  # noqa: PLC0415

    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


VISITS = ["Compare", "Risk", "R-U map", "Ledger", "Learn", "Data"]  # after Synthesize, for each method of a flow
LABELS = {"independent": "Independent noisy marginals", "mst": "MST (spanning tree of noisy 2-way marginals)"}


def server(args) -> None:
    folder = Path(tempfile.mkdtemp(dir="/dev/shm"))  # the benchmark's own generated table, in memory
    path = folder / "census.csv"
    path.write_bytes(csv_bytes(args.rows))
    peaks = []
    try:
        for flow in args.flows:
            peaks.append((flow, run_flow(path, flow.split(","), args.rows)))
    finally:
        path.unlink()
        os.rmdir(folder)
    print()
    for flow, (peak, where_) in peaks:
        print(f"{' then '.join(flow.split(','))}: peak {peak / MIB:,.0f} MiB ({peak:,} bytes) on {where_}; "
              f"target ≤ {TARGET:,} bytes {'met' if peak <= TARGET else 'MISSED'}")


def run_flow(path: Path, methods: list[str], rows: int) -> tuple[int, str]:
    """One session on a fresh server: the upload, then every page with each method in turn; (peak, step)."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.e2e.conftest import FLAGS, _free_port, go, new_page, wait_idle

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port", str(port),
                             "--server.headless", "true", "--server.address", "127.0.0.1"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    steps = []
    try:
        for _ in range(240):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        sampler = Sampler(proc.pid, 0.02)
        sampler.start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=FLAGS)
            opened = {}

            def step(name, action):
                sampler.mark()
                cpu, wall = _cpu_s(proc.pid), time.perf_counter()
                action()
                peak, _ = sampler.mark()
                steps.append((name, peak, sampler.rss(), _cpu_s(proc.pid) - cpu, time.perf_counter() - wall,
                              _loadavg()))
                print("| " + " | ".join(_fmt(steps[-1])) + " |", flush=True)

            print(f"\n{path.stat().st_size:,}-byte upload ({rows:,} × 12), {' then '.join(methods)}; server RSS "
                  "sampled every 20 ms")
            print("| step | peak RSS, MiB | RSS after, MiB | server CPU, s | wall, s | load |")
            print("|---|---|---|---|---|---|")
            step("open the app", lambda: opened.update(page=new_page(browser, url, timeout_ms=1_200_000)[1]))
            pg = opened["page"]

            def upload():
                pg.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
                wait_idle(pg)
                pg.get_by_text(f"{path.name}: {rows:,} rows").wait_for()

            step("upload (Data page)", upload)
            for i, method in enumerate(methods):

                def choose(method=method, first=i == 0):
                    go(pg, "Synthesize")
                    if method != "independent" or not first:
                        pg.get_by_test_id("stSelectbox").filter(has_text="Method").first.click()
                        pg.get_by_role("option", name=LABELS[method]).click()
                        wait_idle(pg)

                step(f"Synthesize ({method})", choose)
                for name in VISITS:
                    step(f"{name} ({method})", lambda n=name: go(pg, n))
                    if name == "Risk" and i == 0:  # the page's proposal taken: 20 % held out from here on

                        def hold_out():
                            pg.get_by_role("button", name="Hold out 20% of the rows").click()
                            wait_idle(pg)

                        step(f"Risk, 20 % held out ({method})", hold_out)
            browser.close()
        sampler.stop.set()
    finally:
        proc.terminate()
        proc.wait(30)
    top = max(steps, key=lambda r: r[1])
    return top[1], top[0]


def _fmt(row) -> list[str]:
    name, peak, after, cpu, wall, load = row
    return [name, f"{peak / MIB:,.0f}", f"{after / MIB:,.0f}", f"{cpu:.0f}", f"{wall:.0f}", load]


PAGES = {"Synthesize": "pages/synthesize.py", "Compare": "pages/compare.py", "Risk": "pages/risk.py",
         "R-U map": "pages/ru_map.py", "Ledger": "pages/ledger.py", "Learn": "pages/learn.py",
         "Data": "pages/data.py"}


def _where(stack) -> str:
    """The innermost frames of the project and the innermost of any library, of a sampled stack."""
    if not stack:
        return ""
    own = [f for f in stack if str(ROOT) in f.filename and "/.venv/" not in f.filename]
    libraries = [f for f in stack if "site-packages" in f.filename]
    parts = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in own[-3:]]
    if libraries and (not own or stack.index(libraries[-1]) > stack.index(own[-1])):
        lib = libraries[-1]
        parts.append(f"[{lib.filename.split('site-packages/')[-1]}:{lib.lineno} {lib.name}]")
    return " < ".join(reversed(parts))


def where(args) -> None:
    from streamlit.testing.v1 import AppTest

    data = csv_bytes(args.rows)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=1800).run()
    sampler = Sampler(os.getpid(), 0.01, stacks=True)
    sampler.start()
    print(f"\n{len(data):,}-byte upload ({args.rows:,} × 12), in this process (AppTest)")
    print("| step | peak RSS, MiB | RSS after, MiB | at the peak |")
    print("|---|---|---|---|")

    def step(name, run):
        sampler.mark()
        run()
        peak, stack = sampler.mark()
        print(f"| {name} | {peak / MIB:,.0f} | {sampler.rss() / MIB:,.0f} | {_where(stack)} |", flush=True)
        problems = [e.value for e in [*at.exception, *at.error]]
        if problems:
            print("   ", re.sub(r"\s+", " ", str(problems))[:300])

    step("upload", lambda: at.file_uploader(key="uploader").set_value(("census.csv", data, "text/csv")).run())
    for name in args.steps:
        if name == "MST":
            step("MST chosen", lambda: at.switch_page("pages/synthesize.py").run().selectbox(key="method")
                 .set_value("mst").run())
        else:
            step(name, lambda n=name: at.switch_page(PAGES[n]).run())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["server", "where"])
    ap.add_argument("--rows", type=int, default=ROWS)
    ap.add_argument("--flows", nargs="+", default=["independent", "mst", "independent,mst"],
                    help="server: the methods each session tries in turn, one session (and server) per flow")
    ap.add_argument("--steps", nargs="+", default=["Synthesize", *VISITS, "MST", "Compare", "Risk"],
                    help="where: the pages to visit in order (MST: choose MST on Synthesize)")
    args = ap.parse_args()
    print(machine())
    (server if args.what == "server" else where)(args)


if __name__ == "__main__":
    main()
