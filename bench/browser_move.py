"""Time of one ε move in a real browser (issues 20.1 and 31.11): the Synthesize page's readout must follow the
ε slider in ≤ 0.5 s on diamonds (53,940 rows) and on a generated survey-like table (22,000 × 13,
bench/survey_like.py: zero-inflated numeric columns and ten categorical ones).

A server as ``streamlit run`` starts it and one page of Debian's Chromium (Playwright) open the
Synthesize page on diamonds by the share link, or upload the survey-like table on the Data page (as a
steward would, its schema read off the data) and type ε = 0.1 and seed 7 on Synthesize. Each move presses → on the focused ε slider (one log
step) and times, in the page's own clock, from the key's event until the first animation frame in which
the ledger's "ε total" tile, drawn after the readout in the same run, shows the new ε and the script is
idle with nothing stale: the new readout is on screen, what the user waits for. (The readout's own tiles
can show the same three digits at two steps: the pMSE ratio did at ε = 3.16 and 3.98, which stalled the
bench before.) The moves go up from ε = 0.1, so each is to an ε the session has not drawn (a new synthesis and readout); the measurement is cached,
as in the app after the page's first visit.

It also prints the CPU time per move of the server and of Chromium's processes (renderer, GPU, the rest;
read with psutil over the counted moves): on two cores the browser's rendering competes with the script,
and CPU time is what the load of neighbours inflates least.

Run: ``.venv/bin/python bench/browser_move.py [--table diamonds|survey] [--moves 10]``. Prints the machine and
its load first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _common import machine  # noqa: E402  (also puts the project on sys.path)

import psutil  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from survey_like import survey_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 0.5
METRIC = "ε total"  # the ledger's tile: a new value at every step


def _serve() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url + "/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not start in 60 s")


# In the page: the ε total tile's text, and whether the script is idle with nothing stale.
_TILE = f"""() => {{
  const tiles = [...document.querySelectorAll('[data-testid=stMetric]')];
  const tile = tiles.find(t => t.querySelector('[data-testid=stMetricLabel]').innerText.trim() === {json.dumps(METRIC)});
  return tile ? tile.querySelector('[data-testid=stMetricValue]').innerText : null;
}}"""
_IDLE = ("() => document.querySelector('[data-testid=stApp]').dataset.testScriptState === 'notRunning' "
         "&& document.querySelectorAll('[data-stale=true]').length === 0")


def _cpu_seconds(server: subprocess.Popen) -> dict[tuple[str, int], float]:
    """CPU seconds so far of the server and of each Chromium process this bench started, by (role, pid)."""
    out = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.pid == server.pid:
                role = "server"
            elif "chrom" in proc.name():
                kind = next((a.split("=", 1)[1] for a in proc.cmdline() if a.startswith("--type=")), "browser")
                role = f"chromium {kind if kind in ('renderer', 'gpu-process') else 'other'}"
            else:
                continue
            t = proc.cpu_times()
            out[(role, proc.pid)] = t.user + t.system
        except psutil.NoSuchProcess:
            continue
    return out


def _cpu_per_role(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds spent between two readings, by role (a process started in between counts from zero)."""
    spent: dict[str, float] = {}
    for (role, pid), t in after.items():
        spent[role] = spent.get(role, 0.0) + t - before.get((role, pid), 0.0)
    return spent


def _open_synthesize(page, url: str, table: str) -> None:
    """The Synthesize page on ``table`` with the independent method, at ε = 0.1 and seed 7."""
    if table == "diamonds":
        page.goto(url + "/synthesize?data=bundled%3Adiamonds&method=independent&eps=0.1&seed=7")
        return
    page.goto(url)
    page.wait_for_function(_IDLE, timeout=120_000)
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(
        {"name": "survey.csv", "mimeType": "text/csv", "buffer": survey_table().to_csv(index=False).encode()})
    page.get_by_text("survey.csv · 22,000 rows").wait_for(timeout=120_000)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Synthesize").click()
    page.get_by_text("At a glance").wait_for(timeout=120_000)
    for box, value in ((page.get_by_label("Seed", exact=True), "7"),
                       (page.get_by_label(re.compile("^Total ε, exact")), "0.1")):
        box.fill(value)
        box.press("Enter")
        page.wait_for_function(_IDLE, timeout=120_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--table", choices=["diamonds", "survey"], default="diamonds")
    ap.add_argument("--moves", type=int, default=10)
    args = ap.parse_args()
    print(machine())
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    proc, url = _serve()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            _open_synthesize(page, url, args.table)
            page.get_by_text("At a glance").wait_for(timeout=120_000)
            page.wait_for_function(_IDLE, timeout=120_000)
            page.get_by_text("At a glance").scroll_into_view_if_needed()
            page.wait_for_function(f"() => ({_TILE})() !== null && ({_IDLE})()", timeout=120_000)
            slider = page.get_by_test_id("stSlider").get_by_role("slider").first
            times = []
            for i in range(args.moves + 1):  # the first move warms the page's caches; not counted
                if i == 1:
                    cpu_start = _cpu_seconds(proc)
                before = page.evaluate(_TILE)
                slider.focus()
                # Both ends are read in the page: the key's own event, and the first frame that shows the new
                # readout with the script idle; Playwright's round trips are not counted.
                page.evaluate("() => document.addEventListener('keydown', () => { window.__moveStart = "
                              "performance.now(); }, {capture: true, once: true})")
                page.keyboard.press("ArrowRight")
                end = page.wait_for_function(f"() => ({_TILE})() !== {json.dumps(before)} && ({_IDLE})() "
                                             "&& performance.now()", polling="raf", timeout=60_000).json_value()
                elapsed = (end - page.evaluate("() => window.__moveStart")) / 1000
                if i:
                    times.append(elapsed)
                    print(f"move {i}: {elapsed:.3f} s")
            cpu = _cpu_per_role(cpu_start, _cpu_seconds(proc))
            browser.close()
    finally:
        proc.kill()
    med = statistics.median(times)
    print("CPU per move: " + ", ".join(f"{role} {t / len(times):.3f} s" for role, t in sorted(cpu.items())))
    print(f"{args.table}: median of {len(times)} moves: {med:.3f} s (max {max(times):.3f} s); target ≤ {TARGET_S} s "
          f"{'ok' if med <= TARGET_S else 'MISSED'}; load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
