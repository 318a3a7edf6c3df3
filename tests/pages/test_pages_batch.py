"""The app's side of batch work: the R-U page sweeps on a Dask scheduler given by address (same table as
locally), and the Synthesize page offers its settings as the JSON the dpsynth command reads."""

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from ui.text import plain
from tests.conftest import APP

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


@pytest.fixture
def at():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/ru_map.py").run()
    at.multiselect(key="ru_methods").set_value(["independent"]).run()
    at.text_input(key="ru_grid").set_value("0.5, 5").run()
    return at


def test_a_sweep_on_a_scheduler_is_the_local_sweep(at, monkeypatch, tmp_path):
    at.button(key="ru_run").click().run()
    local = at.session_state["ru_result"][0]
    at.session_state["_cache"]["ru_sweep"].clear()  # the sweep cache ignores the scheduler: same table
    # A sweep already finished is read back from the ledger store, not computed again: a store of its own here,
    # so the cluster computes every point.
    monkeypatch.setenv("DPSYNTH_LEDGER", str(tmp_path / "other.sqlite3"))
    from dask import distributed  # a dependency (requirements.txt): missing, this fails rather than skips

    with distributed.LocalCluster(n_workers=2, processes=False, protocol="tcp", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        at.text_input(key="ru_scheduler").set_value(cluster.scheduler_address).run()
        at.button(key="ru_run").click().run()
        prefixes = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert not at.exception and not at.error
    assert any("_point" in p for p in prefixes)  # the points ran on the cluster
    pd.testing.assert_frame_equal(at.session_state["ru_result"][0], local)


def test_a_bad_scheduler_address_is_one_sentence_and_keeps_the_last_sweep(at, monkeypatch):
    # dask retries a refused connection until the timeout: 1 s says the same as the app's 10 s, 9 s sooner.
    monkeypatch.setattr(core.cluster, "CONNECT_TIMEOUT", "1s")
    at.button(key="ru_run").click().run()
    before = at.session_state["ru_result"][0]
    at.session_state["_cache"]["ru_sweep"].clear()  # the sweep cache ignores the scheduler: same table
    at.text_input(key="ru_scheduler").set_value("my cluster").run()
    at.button(key="ru_run").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [plain(
        "A Dask scheduler address looks like tcp://host:8786; check the address.")]
    assert at.session_state["ru_result"][0] is before
    at.text_input(key="ru_scheduler").set_value("tcp://127.0.0.1:9").run()  # nothing listens on port 9
    at.button(key="ru_run").click().run()
    assert [e.value for e in at.error] == [plain(
        "Could not reach a Dask scheduler at tcp://127.0.0.1:9; check the address and that the scheduler is running.")]


def test_the_synthesize_page_offers_its_settings_for_the_command_line():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/synthesize.py").run()
    assert not at.exception
    assert "Download settings (JSON, for the dpsynth command)" in [b.label for b in at.get("download_button")]
