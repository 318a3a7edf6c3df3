"""Shared fixtures: the app's path and a clean Streamlit cache per test."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


@pytest.fixture(autouse=True)
def _clear_streamlit_cache():
    # st.cache_data is process-global: one test's entries must not serve another (the app's own caches
    # live in each session's state and go with it).
    import streamlit as st

    st.cache_data.clear()
    yield
