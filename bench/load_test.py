"""Classroom load test: N browser sessions at once against one dpsynth server on this machine.

Starts the app on 127.0.0.1, opens N pages in one headless Chromium (Debian's
/usr/bin/chromium driven by Playwright) as students join one after another,
then, once all are in, has every page move the ε slider on the Synthesize
page R times with a think time between moves (default 2–5 s), as a class would
during a demo. Each move is timed from the key press until the page has
finished its rerun; the script prints the latency percentiles. The browser
runs on the same 2 cores as the server, so its rendering is in the figures. Target (issue 6):
95th percentile under 2 s with 30 sessions.

Run: ``.venv/bin/python bench/load_test.py --sessions 30 --rounds 5``.
Traffic goes only to the local server; the loops are bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"


def start_server() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false"], cwd=ROOT,
                            stdout=open(os.environ.get("LOAD_SERVER_LOG", os.devnull), "w"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("the server did not start")


async def idle(page) -> None:
    await page.wait_for_selector(IDLE, timeout=120_000)
    await page.wait_for_function("document.querySelectorAll('[data-stale=true]').length === 0", timeout=120_000)


async def student(browser, url: str, rounds: int, latencies: list[float], failures: list[str],
                  delay: float, ready: asyncio.Barrier, done: asyncio.Barrier, rng: random.Random,
                  think: tuple[float, float]) -> None:
    await asyncio.sleep(delay)  # students join over a few seconds, not in the same millisecond
    ctx = await browser.new_context(viewport={"width": 1200, "height": 900})
    await ctx.route(re.compile(r"^https?://(?!127\.0\.0\.1|localhost)"), lambda r: r.abort())
    page = await ctx.new_page()
    slider = None
    try:
        await page.goto(url, timeout=180_000)
        await idle(page)
        await page.get_by_test_id("stSidebarNav").get_by_role("link", name="Synthesize").click()
        await idle(page)
        slider = page.get_by_test_id("stSlider").get_by_role("slider")
        await slider.wait_for(timeout=120_000)
    except Exception as err:  # one session failing to join is a finding, not a reason to stop the others
        failures.append(f"joining: {type(err).__name__}: {err}"[:200])
    await ready.wait()  # the lesson starts when the whole class is in
    try:
        if slider is None:
            return
        for i in range(rounds):
            await asyncio.sleep(rng.uniform(*think))  # a student's think time between moves
            await slider.focus()
            t = time.perf_counter()
            await page.keyboard.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            await page.wait_for_timeout(50)  # let the rerun start before waiting for it to end
            await idle(page)
            latencies.append(time.perf_counter() - t)
            if latencies[-1] > 5:
                slow.append((round(latencies[-1], 1), i, round(time.perf_counter() - START, 1)))
    except Exception as err:
        failures.append(f"moving sliders: {type(err).__name__}: {err}"[:200])
    finally:
        # Leave together: closing pages costs the shared CPU and would slow those still measuring.
        await done.wait()
        await ctx.close()


slow: list = []
START = time.perf_counter()


async def main_async(sessions: int, rounds: int, stagger: float, think: tuple[float, float]) -> None:
    proc, url = start_server()
    latencies: list[float] = []
    failures: list[str] = []
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=FLAGS)
            t0 = time.perf_counter()
            ready, done = asyncio.Barrier(sessions), asyncio.Barrier(sessions)
            rng = random.Random(0)
            await asyncio.wait_for(asyncio.gather(*(student(browser, url, rounds, latencies, failures, i * stagger,
                                                            ready, done, random.Random(rng.random()), think)
                                                    for i in range(sessions))), timeout=1200)
            wall = time.perf_counter() - t0
            await browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average after the run {load}")
    print(f"{sessions} sessions (joining {stagger:g} s apart) × {rounds} slider moves on the Synthesize page "
          f"(penguins), think time {think[0]:g}–{think[1]:g} s, wall {wall:.1f} s")
    if latencies:
        q = statistics.quantiles(latencies, n=100)
        print(f"interactions timed: {len(latencies)}; latency median {statistics.median(latencies):.2f} s, "
              f"p95 {q[94]:.2f} s, max {max(latencies):.2f} s (target p95 < 2 s)")
    print(f"failed sessions: {len(failures)}; moves over 5 s (seconds, round, time): {sorted(slow)[-5:]}")
    for f in failures[:5]:
        print("  ", f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stagger", type=float, default=1.5, help="seconds between students joining")
    ap.add_argument("--think", type=float, nargs=2, default=(2.0, 5.0), metavar=("MIN", "MAX"),
                    help="seconds a student waits between two slider moves (uniform)")
    args = ap.parse_args()
    asyncio.run(main_async(args.sessions, args.rounds, args.stagger, tuple(args.think)))


if __name__ == "__main__":
    main()
