"""The sidebar's spending in Chromium comes from the ledger store (issue 26): a reload, a second tab and a
restarted server all show the same totals."""

import re

import pytest

from tests.e2e.conftest import _serve, go, new_page, wait_idle

pytestmark = pytest.mark.e2e

TOTALS = re.compile(r"\d+ DP computations?: ε = [^\n]+\n\([^\n]+\)\n\d+ looks? without a guarantee[^\n]*")


def _totals(pg) -> str:
    """The sidebar's spending lines, as shown."""
    return TOTALS.search(pg.get_by_test_id("stSidebar").inner_text()).group(0)


def _one_dp_run(pg) -> str:
    """A synthesis with fresh randomness on Synthesize; the sidebar's totals after it."""
    go(pg, "Synthesize")
    before = _totals(pg)
    pg.get_by_text("Fixed seed: reproducible exploration, not DP").click()
    wait_idle(pg)
    after = _totals(pg)
    assert after != before
    return after


def test_a_reload_and_a_second_tab_show_the_same_totals(page, browser, server):
    shown = _one_dp_run(page)
    go(page, "Ledger")  # a page that computes nothing: a reload of Synthesize would be one more (seeded) look
    assert _totals(page) == shown
    page.reload()
    wait_idle(page)
    assert _totals(page) == shown  # the session began again; the store did not
    ctx, tab = new_page(browser, server, timeout_ms=60_000)
    try:
        assert _totals(tab) == shown
    finally:
        ctx.close()


def test_a_restarted_server_shows_the_same_totals(browser, tmp_path, monkeypatch):
    monkeypatch.setenv("DPSYNTH_LEDGER", str(tmp_path / "ledger.sqlite3"))  # the servers below inherit it
    with _serve("streamlit-ledger-1.log") as url:
        ctx, pg = new_page(browser, url, timeout_ms=60_000)
        try:
            shown = _one_dp_run(pg)
        finally:
            ctx.close()
    assert shown.startswith("1 DP computation: ε = 1, δ = 0 in all")
    with _serve("streamlit-ledger-2.log") as url:
        ctx, pg = new_page(browser, url, timeout_ms=60_000)
        try:
            assert _totals(pg) == shown
        finally:
            ctx.close()
