"""For every test and doctest of the repository: a ledger store of its own, never the user's."""

import os
import tempfile

import pytest

# No test may write to the user's real ledger store (dpsynth_core.privacy.store): from the first import on, the
# default store is a file of this test session's own, which servers and commands started by tests inherit.
_SESSION_STORE = tempfile.mkdtemp(prefix="dpsynth-ledger-")
os.environ["DPSYNTH_LEDGER"] = os.path.join(_SESSION_STORE, "ledger.sqlite3")


@pytest.fixture(autouse=True)
def ledger_store(tmp_path_factory, monkeypatch):
    """Each test's own empty ledger store (the default store of the calls and commands it makes); its path."""
    path = tmp_path_factory.mktemp("ledger") / "ledger.sqlite3"
    monkeypatch.setenv("DPSYNTH_LEDGER", str(path))
    return path
