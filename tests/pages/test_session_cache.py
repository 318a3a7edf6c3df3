"""The session cache's limits: at most ``max_entries`` results, and with ``max_bytes`` the oldest go while the
results' sizes add up to more, the newest always kept (a synthesis of a 675,000-row upload is 110 MiB; two of them
took the server past 1 GB)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


def _script():
    import streamlit as st

    from ui.cache import session_cache, session_store

    @session_cache(max_entries=3, max_bytes=10, size=len)
    def text(n: int) -> str:
        return "x" * n

    for n in st.session_state.get("calls", []):
        text(n)
    st.session_state["kept"] = [len(v) for v in session_store(text.__qualname__).values()]


def _kept_after(calls: list[int]) -> list[int]:
    at = AppTest.from_function(_script)
    at.session_state["calls"] = calls
    at.run()
    assert not at.exception
    return at.session_state["kept"]


def test_the_oldest_results_go_past_the_entry_count():
    assert _kept_after([1, 2, 3, 4]) == [2, 3, 4]  # 9 characters: under the byte cap; 4 entries > 3


def test_the_oldest_results_go_past_the_byte_cap_and_the_newest_stays():
    assert _kept_after([4, 5, 3]) == [5, 3]  # 4 + 5 + 3 = 12 > 10: the 4 goes; 5 + 3 = 8 stays
    assert _kept_after([2, 12]) == [12]  # alone past the cap: kept (the page shows it)
