"""A real Streamlit server and Debian's Chromium driven by Playwright.

Tests wait on conditions, never on fixed pauses. :func:`wait_idle` knows when the app is idle from
Streamlit's own messages: a script that every page runs first (:data:`RUN_WATCH`) counts the rerun
requests the page sends and reads which script run the server last started and how it finished.
"""

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.conftest import CORE_SHARE, ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "tests" / "artifacts"
SERVER_PIDS: dict[str, int] = {}  # url -> the server's process id, for tests that watch the process
#: The pytest-xdist worker running these tests ("gw0", …; empty in a plain run): each worker starts its own
#: servers, so the logs of the shared fixtures carry it in their names rather than overwrite each other.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")

#: Runs in every page before Streamlit's own code. It wraps the page's WebSocket and reads the top-level
#: fields of Streamlit's protobuf messages, nothing more: a BackMsg with field 11 (``rerun_script``) is a
#: rerun request; a ForwardMsg with field 4 (``new_session``) starts a script run, one with field 6
#: (``script_finished``) ends it, its status 2 (FINISHED_EARLY_FOR_RERUN) meaning another run follows (a
#: newer request or ``st.rerun``). ``window.__runs`` holds: ``requests`` sent; ``started_for``, the requests
#: sent when the last run started (equal to ``requests``: that run started after every request sent);
#: ``done``, whether the last run has finished for good (not to be followed by another); ``waited``, the
#: requests already waited for by :func:`wait_idle`. While ``hold`` is true the page's own code gets no
#: message from the server (they queue in ``held`` until ``release()``): the page then draws nothing of the
#: runs the server makes, as a slow browser or network would, while the counts above still follow the server.
RUN_WATCH = """
(() => {
  const runs = window.__runs = {requests: 0, started_for: 0, done: true, waited: 0,
                                hold: false, held: []};
  runs.release = () => { runs.hold = false; for (const deliver of runs.held.splice(0)) deliver(); };
  const fields = (data) => {
    const b = data instanceof ArrayBuffer ? new Uint8Array(data)
      : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const out = [];
    let i = 0;
    const varint = () => {
      let v = 0, scale = 1, x;
      do { x = b[i++]; v += (x & 127) * scale; scale *= 128; } while (x & 128);
      return v;
    };
    while (i < b.length) {
      const tag = varint(), wire = tag % 8;
      let value = null;
      if (wire === 0) value = varint();
      else if (wire === 2) { const length = varint(); i += length; }  // not i += varint(): i is read first
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else break;
      out.push([Math.floor(tag / 8), value]);
    }
    return out;
  };
  const Native = window.WebSocket;
  function Watched(...args) {
    const ws = new Native(...args);
    const send = ws.send.bind(ws), listen = ws.addEventListener.bind(ws);
    ws.addEventListener = (type, listener, options) => listen(type, type !== 'message' ? listener
      : (event) => runs.hold ? runs.held.push(() => listener.call(ws, event)) : listener.call(ws, event), options);
    ws.send = (data) => {
      if (typeof data !== 'string' && fields(data).some(([no]) => no === 11)) runs.requests += 1;
      return send(data);
    };
    listen('message', (event) => {
      if (!(event.data instanceof ArrayBuffer)) return;
      for (const [no, value] of fields(event.data)) {
        if (no === 4) { runs.started_for = runs.requests; runs.done = false; }
        if (no === 6) runs.done = value !== 2;
      }
    });
    return ws;
  }
  Watched.prototype = Native.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) Watched[k] = Native[k];
  window.WebSocket = Watched;
})();
"""

#: True once the run for the page's last request has finished for good and the page shows its result:
#: Streamlit's own flag says no script runs, no element is left stale from an earlier run, and no element
#: still shows the placeholder drawn while its code loads (``stSkeleton``: Streamlit loads each kind of
#: element's code the first time the page needs it). With ``fresh`` it also needs a request sent since the
#: last wait, so an action whose request leaves late (an upload is sent first, then its rerun) is waited
#: for, not missed.
_IDLE = """(fresh) => {
  const runs = window.__runs, app = document.querySelector('[data-testid=stApp]');
  return !!runs && !!app && runs.done && runs.started_for === runs.requests && (!fresh || runs.requests > runs.waited)
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-stale=true], [data-testid=stSkeleton]');
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serve(log_name: str, port: int | None = None):
    """The app as ``streamlit run serve.py`` (scripts/run.sh) starts it, on ``port`` or a free local one; yields
    its URL."""
    port = port or _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / log_name, "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if k not in CORE_SHARE},  # every core, as users run it
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            pass
        if time.time() > deadline:
            proc.kill()
            pytest.fail("streamlit did not become healthy within 60 s")
        try:  # between two polls of the health address, return at once if the server exits
            proc.wait(0.3)
            pytest.fail(f"streamlit exited with {proc.returncode}; see tests/artifacts/{log_name}")
        except subprocess.TimeoutExpired:
            pass
    SERVER_PIDS[url] = proc.pid
    try:
        yield url
    finally:
        SERVER_PIDS.pop(url, None)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def server():
    with _serve(f"streamlit{WORKER}.log") as url:
        yield url


@pytest.fixture
def fresh_server():
    """A server no session has used yet."""
    with _serve(f"streamlit-fresh{WORKER}.log") as url:
        yield url


def launch(playwright):
    """Debian's Chromium, headless, as every browser test and scripts/screenshots.py run it."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package (.ci/run does)")
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def new_page(browser, url: str, *, timeout_ms: int = 30_000, scripts: tuple[str, ...] = (), **context_options):
    """A page in a new browser context (a new Streamlit session) at ``url``, idle; returns (context, page).

    Nothing may leave the machine: every request not to this server is blocked. :data:`RUN_WATCH` runs
    in the page before Streamlit, so :func:`wait_idle` can tell when the app is idle, and so do ``scripts``.
    """
    ctx = browser.new_context(**{"viewport": {"width": 1400, "height": 1000}, **context_options})
    ctx.route(re.compile(r"^https?://(?!127\.0\.0\.1|localhost)"), lambda r: r.abort())
    for script in (RUN_WATCH, *scripts):
        ctx.add_init_script(script)
    pg = ctx.new_page()
    pg.set_default_timeout(timeout_ms)
    pg.goto(url)
    wait_idle(pg)
    return ctx, pg


@pytest.fixture
def page(browser, server):
    ctx, pg = new_page(browser, server, accept_downloads=True)
    yield pg
    ctx.close()


def wait_idle(pg, *, fresh: bool = True) -> None:
    """Wait until the app has finished the run of the page's last rerun request and drawn its result.

    ``fresh`` (the default) also waits for a request sent since the last wait: call it after an action
    that reruns the app (a click on a widget, a key, an upload, a page's address). ``fresh=False`` waits
    only for what is already under way (after an action that may not rerun, such as opening a tab).
    """
    try:
        pg.wait_for_function(_IDLE, arg=fresh, polling=50)
    except PlaywrightTimeout:
        pytest.fail(f"the app did not become idle: {_state(pg)}")
    pg.evaluate("window.__runs.waited = window.__runs.requests")


def _state(pg) -> dict:
    """What :func:`wait_idle` looks at, for a failure's message."""
    return pg.evaluate("""() => ({...window.__runs, held: (window.__runs || {held: []}).held.length,
        script: document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state'),
        stale: document.querySelectorAll('[data-stale=true]').length,
        loading: document.querySelectorAll('[data-testid=stSkeleton]').length})""")


def wait_server(pg, *, finished: bool = True, after: int = 0) -> None:
    """Wait until the page has sent more than ``after`` requests and the server has finished (or, with
    ``finished=False``, started) the run of the last, whatever the page has drawn of it: with the server's
    messages held (``window.__runs.hold``) the page shows none of it. ``after``: the requests counted before
    the key press being waited for, whose request a loaded browser may send only later."""
    done = " && r.done" if finished else ""
    pg.wait_for_function(f"() => {{ const r = window.__runs; return r.requests > {after} && "
                         f"r.started_for === r.requests{done}; }}", polling=20)


def go(pg, name: str) -> None:
    pg.get_by_test_id("stSidebarNav").get_by_role("link", name=name).click()
    wait_idle(pg)


def download(pg, text: str, **options):
    """Click the download button labelled ``text`` and wait for its file: the ``expect_download`` info (its
    ``value`` is the download). ``options`` go to ``expect_download`` (a ``timeout``)."""
    with pg.expect_download(**options) as dl:
        pg.get_by_test_id("stDownloadButton").filter(has_text=text).get_by_role("button").click()
    return dl


def shot(pg, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
