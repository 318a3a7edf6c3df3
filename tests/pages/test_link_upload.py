"""Issue 31.4: a share link for an uploaded file keeps its settings in the address until that file is uploaded
again (a reload or a bookmark made meanwhile still waits for it); then the settings apply and the address
follows the session. Choosing another dataset ends the wait (tests/pages/test_restart.py)."""

import io

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from tests.conftest import APP, no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

TABLE = pd.DataFrame({"g": list("abcab") * 8, "v": range(40)})


def _opened(link: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in link.items():
        at.query_params[k] = v
    return at.run()


def _address(at) -> dict:
    return {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}


def test_a_link_for_an_upload_keeps_its_settings_until_the_file_comes_back():
    payload = core.to_csv_bytes(TABLE)
    token = core.share.dataset_token("upload", "mine.csv", core.fingerprint(core.load_csv(io.BytesIO(payload))))
    link = {"data": token, "method": "mst", "eps": "3", "seed": "5", "m": "2"}
    at = _opened(link)
    at.switch_page("pages/synthesize.py").run()  # the page that writes the address
    no_errors(at)
    assert at.session_state["dataset"].name == "penguins"  # the data never travel in a link
    assert _address(at) == link  # it was rewritten to data=bundled:penguins&method=independent&eps=1&seed=2026
    # A reload (a new session on the address as it stands) still waits for the same file.
    again = _opened(_address(at))
    assert any("upload the same file" in i.value for i in again.info)
    again.switch_page("pages/synthesize.py").run()
    assert _address(again) == link
    # The same file uploaded again: the link's settings apply, and the address follows the session from then on.
    again.switch_page("pages/data.py").run()
    again.file_uploader(key="uploader").set_value(("mine.csv", payload, "text/csv")).run()
    cfg = again.session_state["synth_config"]
    assert (again.session_state["dataset"].name, cfg.method, cfg.epsilon, cfg.seed, cfg.implicates) == (
        "mine.csv", "mst", 3.0, 5, 2)
    again.switch_page("pages/synthesize.py").run()
    no_errors(again)
    assert _address(again) == {"data": token, **cfg.to_query()} == link


def test_the_address_waits_for_the_file_through_a_setting_changed_meanwhile():
    # While the session waits for the link's file, the address stays the link (ui.link.write_link, merged with
    # main's restart handling): the file uploaded next takes the link's settings, so the address says what comes.
    payload = core.to_csv_bytes(TABLE)
    token = core.share.dataset_token("upload", "mine.csv", core.fingerprint(core.load_csv(io.BytesIO(payload))))
    link = {"data": token, "method": "mst", "eps": "3", "seed": "5"}
    at = _opened(link)
    at.switch_page("pages/synthesize.py").run()
    at.number_input(key="implicates").set_value(3).run()
    no_errors(at)
    assert _address(at) == link
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="uploader").set_value(("mine.csv", payload, "text/csv")).run()
    cfg = at.session_state["synth_config"]
    assert (cfg.method, cfg.epsilon, cfg.seed) == ("mst", 3.0, 5)
