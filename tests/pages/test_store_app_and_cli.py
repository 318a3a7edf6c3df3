"""The app and the command line write one ledger store at once and lose no entry (issue 26): an AppTest session
makes 200 unseeded explorations through the app's own path (``ui.runs.synthesize``) while a second process runs
``dpsynth synthesize`` 200 times on the same table; the store then holds all 400, each once, and the dataset's
total is their sum (400 × ε = 0.01 = 4)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core.privacy import LedgerStore
from tests.conftest import ROOT

RUNS = 200

_CLI_LOOP = """
import sys
from dpsynth_core.cli import main
db, data, schema = sys.argv[1:4]
print("ready", flush=True)
sys.stdin.readline()  # the test's "go": the app's session starts at the same moment
for i in range(%d):
    code = main(["synthesize", data, "--schema", schema, "--epsilon", "0.01", "-o", "s.csv", "--ledger-db", db])
    assert code in (0, None), code
print("done", flush=True)
""" % RUNS


def _app_loop():
    import streamlit as st

    from ui import runs, state

    state.init_session()  # the penguins, as the app opens
    cfg = state.SynthConfig(epsilon=0.01, fixed_seed=False)
    ds = state.dataset()
    for _ in range(st.session_state["runs"]):
        runs.synthesize(ds.df, ds.schema, cfg, None, purpose="exploration")


@pytest.mark.slow
def test_an_app_session_and_the_command_line_writing_at_once_lose_no_entry(tmp_path, monkeypatch):
    db = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("DPSYNTH_LEDGER", str(db))
    cli = subprocess.Popen([sys.executable, "-c", _CLI_LOOP, str(db), str(ROOT / "data/penguins.csv"),
                            str(ROOT / "data/penguins.schema.json")],
                           cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert cli.stdout.readline().strip() == "ready", cli.stderr.read()
    at = AppTest.from_function(_app_loop, default_timeout=300)
    at.session_state["runs"] = RUNS
    cli.stdin.write("go\n")
    cli.stdin.flush()
    at.run()
    assert not at.exception, at.exception
    out, err = cli.communicate(timeout=300)
    assert cli.returncode == 0 and out.strip() == "done", err

    entries = LedgerStore(db).entries()
    by_source = {"cli": [e for e in entries if e["source"] == "cli"],
                 "app": [e for e in entries if e["source"].startswith("app session ")]}
    assert len(entries) == 2 * RUNS and sorted(e["id"] for e in entries) == list(range(1, 2 * RUNS + 1))
    assert {k: len(v) for k, v in by_source.items()} == {"cli": RUNS, "app": RUNS}
    # They wrote at once: each side's first entry comes before the other side's last.
    first = {k: min(e["id"] for e in v) for k, v in by_source.items()}
    last = {k: max(e["id"] for e in v) for k, v in by_source.items()}
    assert first["cli"] < last["app"] and first["app"] < last["cli"]
    # One dataset (the same content, whichever path read it), and its total is every entry's ε.
    assert len({e["dataset"] for e in entries}) == 1
    df, _ = core.load_bundled("penguins")
    totals = LedgerStore(db).totals(core.fingerprint(df))
    assert (totals.epsilon, totals.dp_computations) == (pytest.approx(2 * RUNS * 0.01), 2 * RUNS)
