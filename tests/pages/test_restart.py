"""After a server restart: the browser comes back to a new session with the old address, whose upload is
gone with the old process. The page says so in one sentence, the address keeps the settings while the
session waits, and the upload made again takes them (ui.link)."""

import io

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core import share
from tests.conftest import APP

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest

TABLE = pd.DataFrame({"g": list("abcab") * 8, "v": range(40)})
RESTARTED = ("This server has restarted since this address was made, or the address comes from another server, so "
             "the uploaded file is not here: upload it again on the Data page, and the settings in the address bar "
             "will apply to it.")


def _token_of_an_earlier_process(monkeypatch) -> str:
    """The token the same file had under the secret of a server process that is gone."""
    with monkeypatch.context() as m:
        m.setattr(share, "_LINK_SECRET", b"\x01" * 32)
        return share.dataset_token("upload", "mine.csv", core.fingerprint(TABLE))


def _params(at) -> dict:
    return {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def _infos(at) -> list[str]:
    return [i.value.replace("\\", "") for i in at.info]  # the page escapes Markdown in user text


def test_a_restart_is_said_and_the_upload_made_again_takes_the_address_settings(monkeypatch):
    token = _token_of_an_earlier_process(monkeypatch)
    assert not share.made_here(token)
    link = {"data": token, "method": "bootstrap", "eps": "2", "seed": "5"}
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in link.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    assert at.session_state["dataset"].name == "penguins"  # nothing of the upload survived
    assert RESTARTED in _infos(at)
    assert _params(at) == link  # the address bar keeps the settings
    at.switch_page("pages/synthesize.py").run()  # said on every page while the session waits
    assert RESTARTED in _infos(at) and _params(at) == link
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="uploader").set_value(("mine.csv", core.to_csv_bytes(TABLE), "text/csv")).run()
    cfg = at.session_state["synth_config"]
    assert at.session_state["dataset"].name == "mine.csv"
    assert (cfg.method, cfg.epsilon, cfg.seed) == ("bootstrap", 2.0, 5)
    assert "The settings in the address bar now apply to mine.csv." in _infos(at)
    assert RESTARTED not in _infos(at)
    # The address now names the upload by this process's token, with the same settings.
    loaded = core.load_csv(io.BytesIO(core.to_csv_bytes(TABLE)))
    fresh = share.dataset_token("upload", "mine.csv", core.fingerprint(loaded))
    assert _params(at) == {**link, "data": fresh} and share.made_here(fresh)


def test_choosing_a_bundled_dataset_ends_the_wait(monkeypatch):
    token = _token_of_an_earlier_process(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in {"data": token, "eps": "2"}.items():
        at.query_params[k] = v
    at.run()
    at.selectbox(key="bundled_choice").set_value("diamonds").run()
    assert RESTARTED not in _infos(at)
    assert _params(at)["data"] == "bundled:diamonds"
