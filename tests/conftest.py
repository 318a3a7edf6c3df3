"""Shared fixtures: the app's path, the app under AppTest and a clean Streamlit cache per test (each test's own
ledger store: the repository's conftest.py); each pytest-xdist worker's share of the cores."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
DATA = ROOT / "data"


def _share_of_the_cores() -> dict[str, str]:
    """Under pytest-xdist (scripts/test.sh: ``-n auto``, one worker a core), this worker's share of the cores for
    joblib's process pool (``LOKY_MAX_CPU_COUNT``: a sweep's or an audit's ``n_jobs=-1``) and the BLAS and
    OpenMP thread pools; the variables set, by name. Set before any test module imports numpy.

    Each worker is already one core's worth of work: an audit that also used every core for its runs sent
    two processes to a core while the other worker ran its own tests, and the pool's start and the pickling
    of its tasks were cost with no gain. What a test proves does not change: the sweep and the audit give
    the same table serial or parallel (tests/core/test_sweep_parallel.py, and
    tests/core/privacy/test_audit.py's serial-or-parallel test, pass ``n_jobs`` themselves), and the app's
    servers in the browser tests get none of these caps (tests/e2e/conftest.py), so they run as users run
    them. A plain ``pytest`` (one process) sets nothing.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        return {}
    share = str(max(1, (os.cpu_count() or 1) // workers))
    caps = {v: share for v in ("LOKY_MAX_CPU_COUNT", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
            if v not in os.environ}  # a cap the caller chose stays
    os.environ.update(caps)
    return caps


#: The variables :func:`_share_of_the_cores` set in this process.
CORE_SHARE = _share_of_the_cores()


@pytest.fixture(autouse=True)
def _fast_tests_run_their_pools_in_process(request, monkeypatch):
    """In a plain ``pytest`` (one process, nothing capped), each test of the fast loop runs its joblib pools
    (an audit's or a sweep's ``n_jobs=-1``) in this process, as each xdist worker already does on two cores.

    The fast loop's audits and sweeps are short: starting a pool of worker processes (each importing numpy,
    pandas and the core again) and pickling the tasks cost more CPU than the runs they share (the fast loop's
    short audits took 20 s of CPU with a pool, 13 s without). Results do not change: the sweep and the
    audit give the same table serial or parallel (tests/core/test_sweep_parallel.py and
    tests/core/privacy/test_audit.py pass ``n_jobs`` themselves). Slow and browser tests keep every core, and
    a cap the caller chose stays.
    """
    if "LOKY_MAX_CPU_COUNT" not in os.environ and not any(request.node.get_closest_marker(m) for m in ("slow", "e2e")):
        monkeypatch.setenv("LOKY_MAX_CPU_COUNT", "1")


@pytest.fixture(scope="module", autouse=True)
def _clear_streamlit_cache():
    # st.cache_data is process-global, so each test module starts from an empty one. Within a module its
    # tests share it: the app caches only pure functions of public input there (ui.cache.bundled, a bundled
    # dataset read from its file; the Learn page's demos, of their sliders), so a shared entry is the value a
    # test would compute, and reading penguins and inferring its schema again cost each AppTest ~0.05 s of
    # CPU. Everything computed on a session's data lives in that session's state and goes with it.
    import streamlit as st

    st.cache_data.clear()
    yield


@pytest.fixture(scope="session", autouse=True)
def _scan_components_once():
    """Streamlit's scan of the installed packages for components, done once a test session.

    Each AppTest's first run makes a new component registry and scans every installed distribution's metadata
    for Streamlit components (streamlit.components.v2.manifest_scanner): ~0.3 s of CPU, the most of an AppTest's
    cost, and the fast loop makes a few hundred. A server scans once, at its start. The answer depends only on
    what is installed, which a test session does not change, so every registry is filled from the first scan.
    """
    from functools import cache

    from streamlit.components.v2 import manifest_scanner

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(manifest_scanner, "scan_component_manifests", cache(manifest_scanner.scan_component_manifests))
        yield


@pytest.fixture
def at():
    """The app under AppTest, after its first run (page test files needing a longer timeout override it)."""
    from streamlit.testing.v1 import AppTest

    return AppTest.from_file(APP, default_timeout=60).run()


def entries(path) -> list[dict]:
    """Every entry of the ledger store at ``path``, oldest first, read through a new handle."""
    from dpsynth_core.privacy import LedgerStore

    return LedgerStore(path).entries()


def no_errors(at) -> None:
    """The page drew no exception and no error box."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def eps_slider(at):
    """The ε slider, found by its label: its key is renewed when the exact box sets ε (ui.widgets.epsilon_key)."""
    return next(w for w in at.select_slider if w.label.startswith("Total privacy budget ε"))


def eps_input(at):
    """The exact-ε box, found by its label: its key is renewed when the slider moves (ui.widgets.epsilon_key)."""
    return next(w for w in at.number_input if w.label.startswith("Total ε, exact"))
