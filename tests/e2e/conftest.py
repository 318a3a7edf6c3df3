"""A real Streamlit server and Debian's Chromium driven by Playwright."""

import contextlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "tests" / "artifacts"
SERVER_PIDS: dict[str, int] = {}  # url -> the server's process id, for tests that watch the process


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
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}; see tests/artifacts/{log_name}")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            pass
        if time.time() > deadline:
            proc.kill()
            pytest.fail("streamlit did not become healthy within 60 s")
        time.sleep(0.3)
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
    with _serve("streamlit.log") as url:
        yield url


@pytest.fixture
def fresh_server():
    """A server no session has used yet."""
    with _serve("streamlit-fresh.log") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium package (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    # Nothing may leave the machine: block every request not to this server.
    ctx.route(re.compile(r"^https?://(?!127\.0\.0\.1|localhost)"), lambda r: r.abort())
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    pg.goto(server)
    wait_idle(pg)
    yield pg
    ctx.close()


def wait_idle(pg) -> None:
    """Wait until the script has finished its rerun and nothing is stale.

    With selectors only: the app's Content-Security-Policy forbids evaluating a string as script, which
    is how Playwright's wait_for_function polls its predicate.
    """
    pg.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]")
    pg.locator("[data-stale=true]").first.wait_for(state="detached")  # until no element is stale
    pg.wait_for_timeout(300)
    pg.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]")


def go(pg, name: str) -> None:
    pg.get_by_test_id("stSidebarNav").get_by_role("link", name=name).click()
    wait_idle(pg)


def shot(pg, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
