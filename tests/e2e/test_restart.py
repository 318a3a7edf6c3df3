"""A server restarted under an open tab: the tab reconnects by itself, and the page says what was lost.

The server is stopped and started again on the same port, as ``bash scripts/run.sh`` would be, while
Chromium keeps the page open at ``localhost`` (the address the server prints).
"""

from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest

import dpsynth_core as core
from tests.conftest import ROOT
from tests.e2e.conftest import ARTIFACTS, _free_port, _serve, go, new_page, wait_idle

pytestmark = pytest.mark.e2e

RESTARTED = ("This server has restarted since this address was made, or the address comes from another server, so "
             "the uploaded file is not here: upload it again on the Data page, and the settings in the address bar "
             "will apply to it.")


def _params(pg) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(pg.url).query).items()}


def test_a_restart_says_what_was_lost_and_the_upload_made_again_takes_the_settings(browser, tmp_path):
    path = tmp_path / "mine.csv"
    path.write_bytes(core.to_csv_bytes(pd.read_csv(ROOT / "data" / "penguins.csv").head(120)))
    port = _free_port()
    ctx = None
    try:
        with _serve("streamlit-restart-1.log", port=port):
            log = (ARTIFACTS / "streamlit-restart-1.log").read_text()
            assert f"URL: http://localhost:{port}" in log  # the address printed is localhost
            ctx, pg = new_page(browser, f"http://localhost:{port}", timeout_ms=60_000)
            pg.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
            wait_idle(pg)
            pg.get_by_text("mine.csv: 120 rows").wait_for()
            go(pg, "Synthesize")
            pg.get_by_label("ε, exact").fill("2.5")
            pg.keyboard.press("Enter")
            wait_idle(pg)
            before = _params(pg)
            assert before["eps"] == "2.5" and before["data"].startswith("upload:")
        # Down: Streamlit's own message, about the server, not the internet.
        pg.get_by_text("Is Streamlit still running?").wait_for(timeout=60_000)
        assert "internet" not in pg.content()
        with _serve("streamlit-restart-2.log", port=port):
            pg.get_by_text(RESTARTED).wait_for(timeout=120_000)  # the tab reconnected by itself
            wait_idle(pg)
            assert _params(pg) == before  # the address bar kept the settings
            go(pg, "Data")
            assert pg.get_by_text(RESTARTED).count() == 1
            pg.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))
            wait_idle(pg)
            pg.get_by_text("mine.csv: 120 rows").wait_for()
            pg.get_by_text("The settings in the address bar now apply to mine.csv.").wait_for()
            assert pg.get_by_text(RESTARTED).count() == 0
            assert "ε = 2.5" in pg.get_by_test_id("stSidebar").inner_text()
            after = _params(pg)
            assert after == {**before, "data": after["data"]} and after["data"] != before["data"]
    finally:
        if ctx is not None:
            ctx.close()
