"""Classroom load test: N browser sessions at once against one dpsynth server on this machine.

Starts the app on 127.0.0.1 and opens N pages in one headless Chromium driven by
Playwright (Debian's chromium-headless-shell, the headless build Playwright runs
by default; ``--browser /usr/bin/chromium`` for the full browser the end-to-end
tests use) as students join one after another, by
the teacher's link to the Synthesize page (or through the front page). Each
student tries the ε slider once after joining; once all are in, each moves it
R more times at their own pace, with a think time between moves (default
2–5 s). Every move is timed in the page from the key press to the first frame
showing the rerun's result with nothing stale (end to end); the server, started
through bench/_timed_server.py, also times each rerun from request to end
(server side). The script prints both sets of percentiles, the CPU seconds each
move cost the server, the browser and the harness, and any session that failed.

The server runs as users start it (``streamlit run serve.py``, its headers and CSP on), pinned to its own
core, and the harness with every browser to the others (``--server-cpus``, ``--browser-cpus``; by default
the first core and the rest): the server-side figures are those of a server with a core to itself, as a
class's server has, and are not slowed by 30 renderers. The end-to-end figures still have the 30 pages
rendered on the browsers' core(s), where a class spreads them over 30 machines: they bound from above what
a student sees, and a class on 30 machines sees about the server-side time plus one page's own rendering
of a move (the browser's CPU seconds per move, on a machine of its own). The headless shell draws each
page with the same Blink renderer and V8 as the full browser, without its windows and UI: that harness
overhead, not the page's own work, is what it spares the browsers' core. Target (issue 6): 95th
percentile under 2 s with 30 sessions.

Needs Debian's package: ``apt-get install chromium-headless-shell`` (or pass --browser).

Run: ``.venv/bin/python bench/load_test.py --sessions 30 --rounds 5 [--think 5 10]`` on a quiet machine of at
least 2 cores; one user exploring a large table: ``--sessions 1 --rounds 10 --dataset diamonds --fresh``.
Traffic goes only to the local server; the loops are bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from _common import machine  # also puts the project on sys.path
from playwright.async_api import async_playwright

import dpsynth_core as core

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"

# Installed before a key press; resolves with the seconds from that key press (its event's own time stamp)
# to the first frame after the rerun it caused was on the page with nothing stale. It watches what can
# change the page: DOM changes (observed, not polled, so waiting costs the shared CPU next to nothing),
# canvas drawing (st.dataframe draws its cells on a canvas, and updates the canvas's hidden accessible copy
# of them ~0.2 s later: that copy is not visible and is ignored) and websocket messages. The rerun is over
# once the page has received messages since the press, shows no run in progress and nothing stale, and no
# further message has come for 300 ms; the time kept is that of the frame after the last change, so those
# 300 ms of making sure are not counted.
ARM = """() => {
  if (!document.activeElement?.matches('input[type=range]')) return false;
  const m = window.__moveState = {before: window.__recv, pressed: null, shown: null};
  window.__move = new Promise(resolve => {
    let timer = null;
    const idle = () => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state')
                       === 'notRunning' && !document.querySelector('[data-stale=true]');
    document.addEventListener('keydown', e => { m.pressed = e.timeStamp; }, {capture: true, once: true});
    const changed = () => {
      if (window.__recv === m.before || !idle()) return;
      // The frame that shows this state: after its animation-frame callbacks and paint.
      requestAnimationFrame(() => setTimeout(() => { if (idle()) m.shown = performance.now(); }, 0));
    };
    const visible = r => !(r.target.nodeType === 1 ? r.target : r.target.parentElement)?.closest('canvas');
    const obs = new MutationObserver(records => { if (records.some(visible)) changed(); });
    obs.observe(document.body, {subtree: true, attributes: true, childList: true, characterData: true});
    window.__changed = changed;
    const finish = () => {
      if (m.pressed === null || m.shown === null || window.__recv === m.before || !idle()) return;
      if (performance.now() - window.__lastRecv < 300) return;
      obs.disconnect(); clearInterval(timer); window.__changed = null; resolve((m.shown - m.pressed) / 1000);
    };
    timer = setInterval(finish, 100);
  });
  return true;
}"""
# Counts the messages each page's websocket receives (how many and when, never their content), and tells
# a waiting move when a canvas is drawn on.
INSTRUMENT = """
window.__recv = 0; window.__lastRecv = 0; window.__changed = null;
const NativeWebSocket = window.WebSocket;
window.WebSocket = class extends NativeWebSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', () => {
      window.__recv += 1; window.__lastRecv = performance.now();
      if (window.__changed) window.__changed();  // a message that changes nothing visible still ends a rerun
    });
  }
};
for (const name of ['fillText', 'drawImage', 'fillRect']) {
  const native = CanvasRenderingContext2D.prototype[name];
  CanvasRenderingContext2D.prototype[name] = function (...args) {
    if (window.__changed) window.__changed();
    return native.apply(this, args);
  };
}
"""


def teachers_link(dataset: str) -> str:
    """What the address bar of a teacher on the Synthesize page holds (ui.link.write_link): a shared link."""
    return "/synthesize?" + urllib.parse.urlencode(core.share.config_params(
        {"method": "independent", "epsilon": 1.0, "seed": 2026}, dataset=f"bundled:{dataset}"))


def start_server(timings: str, cpus: set[int] | None) -> tuple[subprocess.Popen, str]:
    """The app as scripts/run.sh starts it (serve.py), with each rerun timed server-side into the file
    ``timings``, on the cores ``cpus`` only (None: wherever the system puts it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "_timed_server.py"), "run", "serve.py",
                             "--server.headless", "true", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"], cwd=ROOT,
                            env={**os.environ, "DPSYNTH_RERUN_TIMINGS": timings},
                            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
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
    """The script has finished its rerun and nothing is stale. With selectors only: the app's CSP forbids
    evaluating a string as script, which is how Playwright's wait_for_function polls."""
    await page.wait_for_selector(IDLE, timeout=120_000)
    await page.locator("[data-stale=true]").first.wait_for(state="detached", timeout=120_000)


async def move(page, slider, key: str) -> float:
    """One step of the slider by keyboard; the seconds until the page showed the rerun's result."""
    await slider.focus()
    if not await page.evaluate(ARM):  # a disabled slider takes no focus: the session's settings changed
        raise RuntimeError("the ε slider does not have the keyboard focus")
    await page.keyboard.press(key)
    try:
        return await asyncio.wait_for(page.evaluate("window.__move"), timeout=120)
    except TimeoutError:
        state = await page.evaluate("[window.__moveState, window.__recv, document.querySelector("
                                    "'[data-testid=stApp]')?.getAttribute('data-test-script-state'), "
                                    "document.querySelectorAll('[data-stale=true]').length]")
        raise TimeoutError(f"no end to the move after 120 s: (move, messages, script state, stale) = {state}")


async def student(browser, url: str, plan: argparse.Namespace, delay: float, ready: asyncio.Barrier,
                  done: asyncio.Barrier, rng: random.Random) -> None:
    think = tuple(plan.think)
    await asyncio.sleep(delay)  # students join over a few seconds, not in the same millisecond
    ctx = await browser.new_context(viewport={"width": 1200, "height": 900})
    await ctx.route(re.compile(r"^https?://(?!127\.0\.0\.1|localhost)"), lambda r: r.abort())
    await ctx.add_init_script(INSTRUMENT)
    page = await ctx.new_page()
    slider = None
    try:
        if plan.via_data_page:  # the app's front page, then the sidebar's link to Synthesize
            await page.goto(url, timeout=180_000)
            await idle(page)
            await page.get_by_test_id("stSidebarNav").get_by_role("link", name="Synthesize").click()
        else:  # the link the teacher shares: the Synthesize page, with the settings in its query
            await page.goto(url + teachers_link(plan.dataset), timeout=180_000)
        await idle(page)
        slider = page.get_by_test_id("stSlider").get_by_role("slider")
        await slider.wait_for(timeout=120_000)
        # A student who has just come in tries the slider once: the page's first, cold rerun, timed too.
        await asyncio.sleep(rng.uniform(*think))
        JOINING.append(await move(page, slider, "ArrowRight"))
    except Exception as err:  # one session failing to join is a finding, not a reason to stop the others
        FAILURES.append(f"joining: {type(err).__name__}: {err}"[:600])
    if await ready.wait() == 0:  # the lesson starts when the whole class is in
        CPU["start"] = cpu_seconds()
        LESSON.append(time.time())
    try:
        if slider is None:
            return
        for i in range(plan.rounds):
            await asyncio.sleep(rng.uniform(*think) if i or plan.together else first_wait(rng, think))
            back = i % 2 == 0 and not plan.fresh  # to and fro between two ε, or always on to a new one
            LESSON_MOVES.append(await move(page, slider, "ArrowLeft" if back else "ArrowRight"))
            if LESSON_MOVES[-1] > 5:
                SLOW.append((round(LESSON_MOVES[-1], 1), i, round(time.perf_counter() - START, 1)))
    except Exception as err:
        FAILURES.append(f"moving sliders: {type(err).__name__}: {err}"[:600])
    finally:
        if await done.wait() == 0:
            CPU["end"] = cpu_seconds()
            LESSON.append(time.time())
        # Leave together: closing pages costs the shared CPU and would slow those still measuring.
        await ctx.close()


SLOW: list = []  # (seconds, round, time) of lesson moves over 5 s
JOINING: list[float] = []  # each student's first move, right after joining, before the lesson
LESSON_MOVES: list[float] = []  # the moves once the whole class is in
FAILURES: list[str] = []  # one line per session that failed, and why
START = time.perf_counter()
CPU: dict[str, dict[str, float]] = {}
LESSON: list[float] = []  # wall-clock start and end of the slider moves
SERVER_PID = 0


def cpu_seconds() -> dict[str, float]:
    """CPU seconds used so far by the server, the browser and this harness (with its Playwright driver).

    Only this run's processes count: the server's, and this harness's with what it started (the browser's
    processes are the ones whose command names chromium); a machine shared with others runs browsers of
    its own.
    """
    import psutil  # noqa: PLC0415 - the benchmark's dependency

    used = {"server": 0.0, "browser": 0.0, "harness": 0.0}
    counted: set[int] = set()
    for side, root in (("server", SERVER_PID), ("harness", os.getpid())):  # the server first: it is our child too
        try:
            top = psutil.Process(root)
            procs = [top, *top.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for proc in procs:
            if proc.pid in counted:
                continue
            counted.add(proc.pid)
            try:
                times = proc.cpu_times()
                where = "browser" if side == "harness" and "chromium" in " ".join(proc.cmdline()) else side
            except psutil.NoSuchProcess:  # the process ended meanwhile
                continue
            used[where] += times.user + times.system
    return used


def summary(what: str, seconds: list[float]) -> str:
    if len(seconds) < 2:
        return f"{what}: too few timings ({len(seconds)})"
    q = statistics.quantiles(seconds, n=100, method="inclusive")
    return (f"{what} ({len(seconds)}): median {statistics.median(seconds):.3f} s, p95 {q[94]:.3f} s, "
            f"max {max(seconds):.3f} s")


def lesson_reruns(path: str) -> list[float]:
    """Server-side seconds of the reruns requested during the lesson (the timed server's file, then removed)."""
    with open(path) as f:
        rows = [line.split() for line in f]
    os.unlink(path)
    return [float(w) for t, w in rows if len(LESSON) == 2 and LESSON[0] <= float(t) <= LESSON[1]]


def first_wait(rng: random.Random, think: tuple[float, float]) -> float:
    """How long a student already at work still thinks before the next move, at a random moment.

    The stationary residual of a uniform(a, b) think time: a think period drawn with probability
    proportional to its length (density ∝ t on [a, b], sampled by inverting its CDF), and a point
    uniformly within it. Without it every student would start thinking at the same moment and the first
    moves would come in one wave.
    """
    a, b = think
    return rng.random() * (a * a + rng.random() * (b * b - a * a)) ** 0.5


def cores(text: str) -> set[int]:
    """Cores from a list as taskset takes it: ``0``, ``1-3``, ``0,2``."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def allowed(pid: int) -> str:
    """The cores a process may run on, as the kernel says (its Cpus_allowed_list)."""
    with open(f"/proc/{pid}/status") as f:
        return next(line.split()[1] for line in f if line.startswith("Cpus_allowed_list"))


async def main_async(plan: argparse.Namespace) -> None:
    global SERVER_PID
    fd, timings = tempfile.mkstemp(prefix="dpsynth-reruns-", suffix=".txt")
    os.close(fd)
    if plan.browser_cpus:
        os.sched_setaffinity(0, plan.browser_cpus)  # this harness, and the browser it starts, which inherits it
    proc, url = start_server(timings, plan.server_cpus)
    SERVER_PID = proc.pid
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=plan.browser, headless=True, args=FLAGS)
            t0 = time.perf_counter()
            ready, done = asyncio.Barrier(plan.sessions), asyncio.Barrier(plan.sessions)
            rng = random.Random(0)
            await asyncio.wait_for(asyncio.gather(*(student(browser, url, plan, i * plan.stagger, ready, done,
                                                            random.Random(rng.random()))
                                                    for i in range(plan.sessions))), timeout=1200)
            wall = time.perf_counter() - t0
            pinning = f"server on cores {allowed(proc.pid)}, browsers on cores {browser_cores()}"
            await browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    server = lesson_reruns(timings)
    print(machine() + " (after the run)")
    print(f"browser: {browser_line(plan.browser)} ({plan.browser}); {pinning}")
    joining = "through the front page" if plan.via_data_page else "by the teacher's link"
    moves = "each to a new ε" if plan.fresh else "to and fro"
    print(f"{plan.sessions} sessions (joining {plan.stagger:g} s apart, {joining}) × {plan.rounds} slider moves "
          f"({moves}) on the Synthesize page ({plan.dataset}), think time {plan.think[0]:g}–{plan.think[1]:g} s, "
          f"{'all starting to think at once' if plan.together else 'at their own pace'}, wall {wall:.1f} s")
    print(summary("end to end, every move, in the page from the key press to the frame showing the rerun's "
                  "result (target p95 < 2 s)", JOINING + LESSON_MOVES))
    print(summary("  each student's first move, right after joining", JOINING))
    print(summary("  the lesson's moves, once all are in", LESSON_MOVES))
    print(summary("server side, the lesson's reruns, from request to the run's end", server))
    if len(CPU) == 2 and LESSON_MOVES:
        lesson = {k: CPU["end"][k] - CPU["start"][k] for k in CPU["end"]}
        print("CPU seconds per move during the lesson: " + ", ".join(
            f"{k} {v / len(LESSON_MOVES):.3f}" for k, v in lesson.items()) + f" (of {len(LESSON_MOVES)} moves)")
    print(f"failed sessions: {len(FAILURES)}; moves over 5 s (seconds, round, time): {sorted(SLOW)[-5:]}")
    for f in FAILURES[:5]:
        print("  ", f)


def browser_cores() -> str:
    """The cores this run's browser processes may run on (each, as the kernel says), joined."""
    import psutil  # noqa: PLC0415

    found = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if "chromium" in " ".join(proc.cmdline()):
                found.add(allowed(proc.pid))
        except (psutil.NoSuchProcess, OSError, StopIteration):
            continue
    return " / ".join(sorted(found)) or "none found"


def browser_line(path: str) -> str:
    """The browser and its version, for the figures' heading."""
    return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stagger", type=float, default=1.5, help="seconds between students joining")
    ap.add_argument("--think", type=float, nargs=2, default=(2.0, 5.0), metavar=("MIN", "MAX"),
                    help="seconds a student waits between two slider moves (uniform)")
    ap.add_argument("--together", action="store_true",
                    help="every student starts thinking at the same moment, so the first moves come in one wave "
                         "(by default each is already at work, at a random point of a think time)")
    ap.add_argument("--via-data-page", action="store_true",
                    help="students open the app's front page and click through to Synthesize (by default they "
                         "open the teacher's link to the Synthesize page)")
    ap.add_argument("--browser", default=HEADLESS_SHELL,
                    help="the browser the students' pages run in (/usr/bin/chromium: the full browser)")
    ap.add_argument("--dataset", choices=sorted(core.BUNDLED), default="penguins",
                    help="the bundled table the teacher's link names (the front page opens on penguins)")
    ap.add_argument("--fresh", action="store_true",
                    help="every move steps ε up to a value not yet synthesized (by default moves go to and fro "
                         "between two values, so after the first two each student's syntheses are cached)")
    ap.add_argument("--server-cpus", type=cores, default=None, metavar="LIST",
                    help="the cores the server may use, as taskset lists them (default: the first of this machine's)")
    ap.add_argument("--browser-cpus", type=cores, default=None, metavar="LIST",
                    help="the cores the harness and the browsers may use (default: the others)")
    ap.add_argument("--no-pin", action="store_true", help="let the system place the server and the browsers")
    args = ap.parse_args()
    available = sorted(os.sched_getaffinity(0))
    if args.no_pin:
        args.server_cpus = args.browser_cpus = None
    elif len(available) < 2:
        ap.error("pinning the server apart from the browsers needs 2 cores; pass --no-pin on one core")
    else:
        args.server_cpus = args.server_cpus or {available[0]}
        args.browser_cpus = args.browser_cpus or set(available[1:]) - args.server_cpus
        if not args.browser_cpus or args.server_cpus & args.browser_cpus:
            ap.error("--server-cpus and --browser-cpus must be two sets of cores with none in common")
    if args.via_data_page and args.dataset != "penguins":
        ap.error("--via-data-page opens the front page, which starts on penguins; drop it or --dataset")
    if args.fresh and args.rounds + 1 > 20:
        ap.error("--fresh: the slider has 20 steps above ε = 1 for the joining move and the rounds")
    if not os.access(args.browser, os.X_OK):
        ap.error(f"no browser at {args.browser}: install Debian's chromium-headless-shell "
                 "(apt-get install chromium-headless-shell) or name another with --browser")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
