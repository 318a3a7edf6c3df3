"""The security headers on every response, and the app working in Chromium under its own CSP.

The server runs as users start it (``streamlit run serve.py``, the conftest's server), and every browser
test runs under its CSP; this one goes through every page and every kind of download and reads the
browser's reports of violations.
"""

import re
import time
import urllib.request
from pathlib import Path

import pytest
import streamlit

from tests.conftest import ROOT
from tests.e2e.conftest import download, go, new_page, wait_idle
from tests.e2e.test_browser import _sweep_and_pick_independent_at_3

pytestmark = pytest.mark.e2e

EXPECTED = {
    "x-frame-options": "SAMEORIGIN",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _static_files() -> list[str]:
    """Every kind of file Streamlit's page loads (a script, a style sheet, a font, the icon)."""
    static = Path(streamlit.__file__).parent / "static"
    page = (static / "index.html").read_text(encoding="utf-8")
    script = re.search(r'src="\./(static/js/index\.[^"]+\.js)"', page).group(1)
    style = re.search(r'href="\./(static/css/[^"]+\.css)"', page).group(1)
    font = re.search(r'href="\./(static/media/[^"]+\.woff2)"', page).group(1)
    return [script, style, font, "favicon.png"]


def _get(url: str, method: str = "GET"):
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:  # a refusal is a response too, with the same headers
        return error.code, error.headers


def _directives(csp: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in (part.strip() for part in csp.split(";")) if d}


REQUESTS = [
    ("GET", "/", 200), ("HEAD", "/", 200), ("GET", "/synthesize", 200),  # the page, also under a page's address
    *[("GET", f"/{p}", 200) for p in _static_files()],
    ("GET", "/_stcore/health", 200), ("GET", "/_stcore/host-config", 200),
    ("GET", "/media/absent.csv", 404),  # a download that does not exist
    ("PUT", "/_stcore/upload_file/x/y", 403),  # an upload without the page's XSRF token, refused
]


@pytest.mark.parametrize("method, path, status", REQUESTS, ids=[f"{m} {p}" for m, p, _ in REQUESTS])
def test_every_response_carries_the_headers_and_no_server_name(server, method, path, status):
    got, headers = _get(server + path, method)
    assert got == status
    for name, value in EXPECTED.items():
        assert headers.get_all(name) == [value], (name, headers.get_all(name))
    assert "server" not in {k.lower() for k in headers.keys()}, headers.get("server")
    assert len(headers.get_all("content-security-policy")) == 1
    csp = _directives(headers["content-security-policy"])
    # The policy's promises, read off the header: nothing but this server, no inline script but by its
    # hash, no eval, no plugins or frames, framed only by this server's own pages.
    assert csp["default-src"] == ["'none'"] and csp["frame-ancestors"] == ["'self'"]
    assert csp["object-src"] == ["'none'"] and csp["frame-src"] == ["'none'"]
    assert csp["base-uri"] == ["'self'"] and csp["form-action"] == ["'self'"]
    scripts = csp["script-src"]
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts
    assert all(s in ("'self'", "'wasm-unsafe-eval'") or s.startswith("'sha256-") for s in scripts)
    for sources in csp.values():
        assert not any(s in ("*", "http:", "https:") or "://" in s for s in sources), csp


def _until(pg, expression: str, seconds: float = 30) -> None:
    """Wait until ``expression`` is true in the page, read from here (the CSP forbids the page evaluating it)."""
    deadline = time.monotonic() + seconds
    while not pg.evaluate(expression):
        assert time.monotonic() < deadline, f"not true after {seconds} s: {expression}"
        pg.wait_for_timeout(20)


# The browser's own report of each violation, kept in the page for the test to read.
VIOLATIONS = ("window.__violations = []; document.addEventListener('securitypolicyviolation', "
              "e => window.__violations.push([e.violatedDirective, e.blockedURI, e.sourceFile].join(' ')));")


def test_every_page_runs_in_chromium_with_no_csp_violation(browser, server):
    ctx, pg = new_page(browser, server, timeout_ms=120_000, scripts=(VIOLATIONS,), accept_downloads=True)
    console = []
    pg.on("console", lambda m: console.append(m.text))
    try:
        # The policy is on and its violations are seen: an inline script added to the page does not run.
        pg.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';"
                    "document.head.append(s); }")
        _until(pg, "window.__violations.length > 0")  # reported as an event, once the element is refused
        assert pg.evaluate("window.__ran") is None
        assert [v.split()[0] for v in pg.evaluate("window.__violations")] == ["script-src-elem"]
        pg.evaluate("window.__violations = []")
        console.clear()
        pg.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(ROOT / "data" / "penguins.csv"))
        wait_idle(pg)
        pg.get_by_text("penguins.csv: 344 rows").wait_for()
        go(pg, "Synthesize")
        got = download(pg, "Download synthetic CSV")
        assert got.value.suggested_filename.endswith(".csv")
        go(pg, "Compare")
        pg.locator(".js-plotly-plot").first.wait_for()
        go(pg, "Risk")
        pg.locator(".js-plotly-plot").first.wait_for()
        _sweep_and_pick_independent_at_3(pg)  # a plotly chart, and a point chosen on it
        got = download(pg, "Figure (interactive HTML)")
        assert got.value.suggested_filename == "ru_map.html"
        # plotly's own export: the figure drawn to an image in the page and downloaded.
        pg.locator(".js-plotly-plot").first.hover()
        with pg.expect_download() as got:
            pg.locator(".modebar-btn[data-title='Download plot as a PNG']").first.click()
        assert got.value.suggested_filename.endswith(".png")
        go(pg, "Ledger")
        got = download(pg, "Download the ledger")
        assert got.value.suggested_filename.endswith(".csv")
        go(pg, "Learn")
        pg.locator(".js-plotly-plot").first.wait_for()
        violations = pg.evaluate("window.__violations")
    finally:
        ctx.close()
    assert violations == []
    assert not [m for m in console if "Content Security Policy" in m or "Content-Security-Policy" in m], console
