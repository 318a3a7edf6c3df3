"""A server restart during an R-U sweep (issue 32.1): the next session says the sweep was cut short and at
which point, and running it again computes only the missing points, giving the uninterrupted sweep's table."""

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core.privacy import LedgerStore
from tests.conftest import APP, entries
from tests.conftest import no_errors as _no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


class _ServerGone(Exception):
    """Stands for the process ending mid-sweep: nothing after it runs in that session."""


def test_a_sweep_cut_by_a_restart_is_said_and_resumed(monkeypatch, ledger_store, tmp_path):
    calls, reported = [], []
    real_ru_map = core.ru_map

    def dies_after_two_points(*args, **kw):
        calls.append((args, dict(kw)))
        if len(calls) == 1:
            page_progress = kw["progress"]

            def progress(fraction, message):
                page_progress(fraction, message)
                reported.append(message)
                if len(reported) == 2:
                    raise _ServerGone
            kw["progress"] = progress
        return real_ru_map(*args, **kw)

    monkeypatch.setattr(core, "ru_map", dies_after_two_points)
    before = AppTest.from_file(APP, default_timeout=120).run()
    before.switch_page("pages/ru_map.py").run()
    before.multiselect(key="ru_methods").set_value(["independent", "cart"]).run()
    before.text_input(key="ru_grid").set_value("0.5, 5").run()
    before.button(key="ru_run").click().run()
    assert "ru_result" not in before.session_state  # the sweep never finished in that session

    after = AppTest.from_file(APP, default_timeout=120).run()  # the session after the restart: nothing in memory
    after.switch_page("pages/ru_map.py").run()
    _no_errors(after)
    said = [i.value for i in after.info if "stopped at" in i.value]
    # 5 points as the page sweeps: the original data, independent at ε 0.5 and 5, Sequential CART, the bootstrap;
    # the 2 reported before the end, and the original data's if it was scored by then (it runs beside them).
    args, kw = calls[0]
    assert len(said) == 1 and any(f"stopped at {k} of its 5 points" in said[0] for k in (2, 3)), said
    after.multiselect(key="ru_methods").set_value(["independent", "cart"]).run()
    after.text_input(key="ru_grid").set_value("0.5, 5").run()
    after.button(key="ru_run").click().run()
    _no_errors(after)
    table = after.session_state["ru_result"][0]
    kw.pop("progress")
    whole = real_ru_map(*args, **{**kw, "store": LedgerStore(tmp_path / "whole.sqlite3")})
    pd.testing.assert_frame_equal(table, whole)
    # Each synthesis counted once: 4 sweep points, the 2 before the restart not again.
    points = [e for e in entries(ledger_store) if e["purpose"] == "sweep point"]
    assert len(points) == 4
    after.switch_page("pages/ru_map.py").run()
    assert not [i.value for i in after.info if "stopped at" in i.value]
