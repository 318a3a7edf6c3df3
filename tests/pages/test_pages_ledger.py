"""The ledger store in the app, with AppTest (issue 26): the sidebar's totals come from the store, so a new
session shows them again; every computed synthesis counts, re-draws included; the Ledger page shows the
store's table, downloads it and sets the dataset's cap; the app and the command line write to one store."""

import datetime as dt
import io
import os
import subprocess
import sys
import time

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import dpsynth_core as core
from dpsynth_core.privacy import Cap, LedgerStore
from dpsynth_core.privacy.store import ENTRY_COLUMNS, ledger_csv
from tests.conftest import APP, ROOT, entries, eps_input, no_errors

pytestmark = pytest.mark.integration  # the page tier: run by scripts/test.sh and CI, not a plain pytest


@pytest.fixture
def at():
    return AppTest.from_file(APP, default_timeout=120).run()


def _sidebar(at) -> str:
    """The sidebar's spending slot: its last text element."""
    return at.sidebar.text[-1].value


def _penguins_totals():
    df, _ = core.load_bundled("penguins")
    return LedgerStore().totals(core.fingerprint(df), "penguins")


def test_every_computed_synthesis_counts_redraws_included_and_a_new_session_shows_the_same_totals(at, ledger_store):
    # Issue 26: MST unseeded at ε 1 → 2 → 3 → 4 → 5 → 1 showed six outputs; the session logged five (ε = 15),
    # because the sixth came from a new draw after ε = 1 had left the session's cache of four syntheses.
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="method").set_value("mst").run()
    at.checkbox(key="fixed_seed").uncheck().run()  # MST at ε = 1 with fresh randomness
    for eps in (2.0, 3.0, 4.0, 5.0, 1.0):
        eps_input(at).set_value(eps).run()
        no_errors(at)
    found = entries(ledger_store)
    dp = [e for e in found if e["is_dp"]]
    assert [(e["method"], round(e["epsilon"], 9)) for e in dp] == [("mst", e) for e in (1.0, 2, 3, 4, 5, 1)]
    # Before them, two looks with the fixed seed: independent on opening Synthesize, MST when it was chosen.
    assert [(e["method"], e["seeded"]) for e in found if not e["is_dp"]] == [("independent", True), ("mst", True)]
    totals = _penguins_totals()
    # By hand: Σε = 1 + 2 + 3 + 4 + 5 + 1 = 16; each MST run spends its default δ = 1e-6, so Σδ = 6e-6.
    assert totals.epsilon == pytest.approx(16.0) and totals.delta == pytest.approx(6e-6)
    assert totals.dp_computations == 6 and totals.looks == 2
    assert _sidebar(at) == "\n".join(totals.lines())
    # Going back to ε = 5 shows the cached synthesis again: nothing new is computed, nothing new recorded.
    eps_input(at).set_value(5.0).run()
    assert len(entries(ledger_store)) == 8
    # A new session (a reload, a second tab, a restarted server) reads the same totals from the store.
    other = AppTest.from_file(APP, default_timeout=120).run()
    assert _sidebar(other) == _sidebar(at)
    assert f"ε = {totals.reported_epsilon:g}, δ = 6e-06 in all" in _sidebar(other)


def test_the_ledger_page_shows_the_stores_table_downloads_it_and_sets_the_cap(at, ledger_store):
    at.switch_page("pages/synthesize.py").run()
    at.checkbox(key="fixed_seed").uncheck().run()  # independent at ε = 1, DP
    at.switch_page("pages/ledger.py").run()
    no_errors(at)
    df, _ = core.load_bundled("penguins")
    fp = core.fingerprint(df)
    shown = at.dataframe[0].value
    assert list(shown.columns) == list(ENTRY_COLUMNS) and len(shown) == 2
    assert shown["guarantee"].tolist() == ["none (fixed seed)", "DP"] and shown["name"].tolist() == ["penguins"] * 2
    assert at.text[-1].value == "\n".join(_penguins_totals().lines())
    assert str(ledger_store) in " ".join(c.value.replace("\\", "") for c in at.caption)  # where it is, to back it up
    # The download is the store's own CSV of this dataset (the same table `dpsynth ledger --csv` prints).
    button = next(b for b in at.get("download_button") if b.proto.label.startswith("Download the ledger"))
    assert button.proto.label.endswith("(CSV, confidential)")
    table = pd.read_csv(io.BytesIO(ledger_csv(LedgerStore(), fp)))
    assert table["row"].tolist() == ["entry", "entry", "total"] and table.loc[2, "epsilon"] == 1
    # A cap of ε = 1.5: the next DP run at ε = 1 would pass it and is refused, in one sentence, with no output.
    at.number_input(key="cap_epsilon").set_value(1.5).run()
    at.button(key="cap_set").click().run()
    no_errors(at)
    assert LedgerStore().totals(fp).cap == Cap(1.5, 0.0)
    assert "cap: ε = 1.5, δ = 0 (ε = 0.5 left)" in _sidebar(at)
    at.switch_page("pages/synthesize.py").run()
    eps_input(at).set_value(0.8).run()
    errors = [e.value.replace("\\", "") for e in at.error]  # markdown escapes dropped
    assert len(errors) == 1 and errors[0].startswith("Refused before reading the data: this run would bring what is "
                                                     "spent on penguins to ε = 1.8")
    assert len(entries(ledger_store)) == 2 and not at.get("download_button")  # nothing shown, nothing recorded
    eps_input(at).set_value(0.5).run()  # what fits runs
    no_errors(at)
    assert [e["epsilon"] for e in entries(ledger_store)][-1] == 0.5
    at.switch_page("pages/ledger.py").run()
    at.button(key="cap_remove").click().run()
    assert LedgerStore().totals(fp).cap is None


def test_the_holdout_is_one_setting_on_synthesize_shown_in_the_ledger_and_the_sidebar(at, ledger_store):
    at.switch_page("pages/synthesize.py").run()
    at.selectbox(key="holdout").set_value(0.3).run()
    no_errors(at)
    assert at.session_state["synth_config"].holdout == 0.3
    assert "30% of rows held out" in at.sidebar.text[-2].value
    assert any("Rows held out from the synthesizer: 30%" in c.value for c in at.caption)
    e = entries(ledger_store)[-1]
    ds = at.session_state["dataset"]
    mask = at.session_state["holdout_masks"][(ds.fingerprint, 0.3)]
    assert (e["holdout"], e["rows"]) == (0.3, int((~mask).sum()))  # the rows the synthesis read


GRID, REPS = "0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10", 20  # 9 ε × 20 replicates + 20 bootstrap = 200 syntheses


# Slow: 400 syntheses, the largest test of the fast suite (24 s of a loaded machine). A plain pytest keeps the
# store's own test of two processes writing at once (tests/core/privacy/test_store.py); CI runs this one too.
@pytest.mark.slow
def test_an_app_session_and_the_command_line_writing_200_entries_each_at_once_lose_none(ledger_store, tmp_path):
    cli = subprocess.Popen(
        [sys.executable, "-m", "dpsynth_core", "sweep", str(ROOT / "data/penguins.csv"), "--schema",
         str(ROOT / "data/penguins.schema.json"), "--methods", "independent", "--epsilons", GRID, "--reps",
         str(REPS), "--n-jobs", "1", "-o", "sweep.csv"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})  # the same store: $DPSYNTH_LEDGER of this test
    try:
        deadline = time.time() + 300
        while not any(e["source"] == "cli" for e in entries(ledger_store)):  # the command is writing: start
            assert cli.poll() is None, cli.stderr.read()
            assert time.time() < deadline, "the command wrote nothing in 300 s"
            time.sleep(0.2)
        at = AppTest.from_file(APP, default_timeout=900).run()
        at.switch_page("pages/ru_map.py").run()
        at.multiselect(key="ru_methods").set_value(["independent"]).run()
        at.text_input(key="ru_grid").set_value(GRID).run()
        at.number_input(key="ru_reps").set_value(REPS).run()
        at.button(key="ru_run").click().run()
        no_errors(at)
        assert cli.wait(900) == 0, cli.stderr.read()
    finally:
        if cli.poll() is None:
            cli.kill()
    found = entries(ledger_store)
    app = [e for e in found if e["source"].startswith("app session")]
    by_cli = [e for e in found if e["source"] == "cli"]
    assert len(app) == len(by_cli) == 200 and len(found) == 400
    assert sorted(e["id"] for e in found) == list(range(1, 401))
    assert {e["purpose"] for e in found} == {"sweep point"} and {e["name"] for e in found} == {"penguins",
                                                                                               "penguins.csv"}
    # They wrote at once: each began before the other's last entry.
    times = {k: [dt.datetime.fromisoformat(e["time"]) for e in v] for k, v in (("app", app), ("cli", by_cli))}
    assert min(times["app"]) < max(times["cli"]) and min(times["cli"]) < max(times["app"])
    # The app's bundled penguins and the command line's penguins.csv are the same content: one dataset.
    assert len({e["dataset"] for e in found}) == 1


def test_a_store_that_cannot_be_written_shows_one_sentence_and_no_synthesis(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("DPSYNTH_LEDGER", str(tmp_path / "afile" / "ledger.sqlite3"))
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/synthesize.py").run()
    assert not at.exception
    said = [e.value.replace("\\", "") for e in at.error]
    assert said and all(s.startswith(f"The privacy ledger {tmp_path}/afile/ledger.sqlite3 could not be opened")
                        for s in said)
    # Nothing computed on the data is shown: no preview, no download.
    assert not at.dataframe and not at.get("download_button")
