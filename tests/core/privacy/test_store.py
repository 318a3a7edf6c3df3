"""The ledger store (dpsynth_core.privacy.store): what an entry holds, the totals, the cap, failing closed,
durability against a killed process and concurrent writers (issue 26)."""

import datetime as dt
import hashlib
import hmac
import math
import multiprocessing
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from scipy.optimize import brentq

import dpsynth_core as core
from dpsynth_core.privacy import Cap, Entry, LedgerStore, Totals, Use
from dpsynth_core.privacy.accounting import zcdp_epsilon, zcdp_rho
from dpsynth_core.privacy.store import compose, default_path, entry_rho
from dpsynth_core.synth import SYNTHESIZERS
from tests.conftest import ROOT
from tests.core.privacy.test_accounting import _cks_delta_by_scipy


@pytest.fixture(scope="module")
def penguins():
    return core.load_bundled("penguins")


def _use(fp="content-a", name="a.csv", purpose="exploration"):
    return Use(name, fp, purpose=purpose, source="test")


def _dp(eps, delta=0.0, rho=None, purpose="exploration"):
    return {"purpose": purpose, "epsilon": eps, "delta": delta, "rho": eps * eps / 2 if rho is None and not delta
            else rho, "is_dp": True, "seeded": False}


# -- where the store lives ---------------------------------------------------------------------


def test_the_path_is_the_argument_else_the_environment_else_the_users_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("DPSYNTH_LEDGER", str(tmp_path / "env.sqlite3"))
    assert default_path() == tmp_path / "env.sqlite3" and LedgerStore().path == tmp_path / "env.sqlite3"
    assert LedgerStore(tmp_path / "arg.sqlite3").path == tmp_path / "arg.sqlite3"
    monkeypatch.delenv("DPSYNTH_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "dpsynth" / "ledger.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "dpsynth" / "ledger.sqlite3"


def test_the_file_is_the_owners_alone_in_wal_mode_with_one_secret_key(tmp_path):
    path = tmp_path / "deep" / "ledger.sqlite3"
    store = LedgerStore(path)
    store.record(_use(), Entry("independent", 1.0, is_dp=True, rho=0.5))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        keys = con.execute("SELECT value FROM meta WHERE name = 'key'").fetchall()
        stored = con.execute("SELECT key FROM datasets").fetchone()[0]
    # A second handle keeps the key: the dataset is known by HMAC-SHA-256 of its fingerprint under it.
    LedgerStore(path).record(_use(), Entry("independent", 1.0, is_dp=True, rho=0.5))
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE name = 'key'").fetchall() == keys
        assert con.execute("SELECT COUNT(*) FROM datasets").fetchone()[0] == 1
    assert stored == hmac.new(bytes.fromhex(keys[0][0]), b"content-a", hashlib.sha256).hexdigest()
    assert "content-a" not in path.read_bytes().decode("latin-1")  # the plain fingerprint is stored nowhere


# -- what an entry holds -----------------------------------------------------------------------


def test_an_entry_of_a_synthesis_holds_its_figures_and_nothing_of_the_data(penguins, ledger_store):
    df, schema = penguins
    core.synthesize(df.iloc[:300], "independent", epsilon=1.0, schema=schema, n=100, holdout_share=0.1,
                    use=_use(core.fingerprint(df), "penguins.csv", "release"))
    [e] = LedgerStore().entries()
    # By hand: 8 modelled columns, ε = 1 split equally, pure ε: ρ = 8 · (1/8)² / 2 = 1/16.
    assert len(schema.used) == 8
    assert (e["purpose"], e["method"], e["epsilon"], e["delta"], e["seeded"], e["is_dp"], e["rows"], e["holdout"],
            e["source"], e["name"]) == ("release", "independent", 1.0, 0.0, False, True, 300, 0.1, "test",
                                        "penguins.csv")
    assert e["rho"] == pytest.approx(1 / 16, rel=1e-12)
    # No value of the data anywhere in the file: every number and text of the table is absent.
    raw = ledger_store.read_bytes() + b"".join(p.read_bytes() for p in ledger_store.parent.glob("*-wal"))
    for value in df["island"].unique().tolist() + df["species"].unique().tolist():
        assert value.encode() not in raw
    assert b"3750" not in raw and b"39.1" not in raw  # the first penguin's body mass and bill length


def test_rho_of_a_ledger_is_summed_over_steps_and_unknown_for_an_epsilon_delta_step():
    assert entry_rho({"epsilon_total": 0.7, "steps": [{"epsilon": 0.1, "repeats": 3}, {"epsilon": 0.4}]}) == \
        pytest.approx(3 * 0.1 ** 2 / 2 + 0.4 ** 2 / 2)
    assert entry_rho({"epsilon_total": 1.0, "steps": [{"epsilon": 0.6, "delta": 1e-6, "rho": 0.01, "repeats": 2},
                                                       {"epsilon": 0.1}]}) == pytest.approx(0.02 + 0.005)
    assert entry_rho({"epsilon_total": 1.0, "steps": [{"epsilon": 1.0, "delta": 1e-6}]}) is None
    assert entry_rho({"epsilon_total": None, "steps": []}) is None  # a method that is not DP spends nothing counted
    assert entry_rho({"epsilon_total": 1.0, "rho": 0.03, "steps": [{"epsilon": 1.0, "delta": 1e-6}]}) == 0.03


# -- the totals ----------------------------------------------------------------------------------


def test_delta_is_summed_and_looks_without_a_guarantee_are_counted_apart():
    entries = [_dp(1.0, 1e-6, rho=None), _dp(0.5, 2e-6, rho=None), _dp(0.25),
               {"purpose": "exploration", "epsilon": 3.0, "delta": 0.0, "rho": 4.5, "is_dp": False, "seeded": True},
               {"purpose": "sweep point", "epsilon": None, "delta": 0.0, "rho": None, "is_dp": False, "seeded": True},
               {"purpose": "exploration", "epsilon": 1.0, "delta": 0.0, "rho": 0.5, "is_dp": False, "seeded": False}]
    t = compose(entries)
    # By hand: ε = 1 + 0.5 + 0.25, δ = 1e-6 + 2e-6; two entries have no ρ, so no zCDP total.
    assert (t.dp_computations, t.epsilon, t.delta, t.rho, t.zcdp_epsilon) == (3, 1.75, pytest.approx(3e-6), None, None)
    assert (t.looks, t.seeded_looks, t.composition, t.reported_epsilon) == (3, 2, "basic", 1.75)


def test_many_small_pure_steps_are_reported_by_zcdp_when_it_is_tighter():
    # 100 explorations at ε = 0.1 (ρ = 0.005 each) and one zCDP release at (1, 1e-6): Σε = 11, Σδ = 1e-6.
    rho_mst = zcdp_rho(1.0, 1e-6)
    t = compose([_dp(0.1)] * 100 + [_dp(1.0, 1e-6, rho=rho_mst, purpose="release")])
    assert t.epsilon == pytest.approx(11.0) and t.delta == 1e-6 and t.rho == pytest.approx(0.5 + rho_mst)
    # The ε at which Canonne–Kamath–Steinke's bound (minimised over α by scipy, not our bisection) reaches δ.
    expected = brentq(lambda e: _cks_delta_by_scipy(t.rho, e) - 1e-6, 0.01, 20.0, xtol=1e-12)
    assert t.zcdp_epsilon == pytest.approx(expected, rel=1e-6)
    assert (t.composition, t.reported_epsilon) == ("zCDP", t.zcdp_epsilon) and t.zcdp_epsilon < 6
    assert t.by_purpose == {"exploration": 100, "release": 1}
    # Pure ε alone (Σδ = 0): no conversion, the sum is the total.
    pure = compose([_dp(0.1)] * 100)
    assert (pure.zcdp_epsilon, pure.composition, pure.reported_epsilon) == (None, "basic", pytest.approx(10.0))
    # Two large pure steps and a tiny (ε, δ) one: the conversion is looser than the sum, which is kept.
    few = compose([_dp(1.0), _dp(1.0), _dp(0.01, 1e-6, rho=zcdp_rho(0.01, 1e-6))])
    assert few.zcdp_epsilon > few.epsilon == pytest.approx(2.01) and few.composition == "basic"


def test_a_new_handle_on_the_file_shows_the_same_entries_and_totals(tmp_path):
    path = tmp_path / "l.sqlite3"
    first = LedgerStore(path)
    for eps in (1.0, 2.0, 0.5):
        first.record(_use(), Entry("independent", eps, is_dp=True, rho=eps * eps / 2))
    first.record(_use("content-b", "b.csv"), Entry("mst", 1.0, delta=1e-6, is_dp=True))
    again = LedgerStore(path)
    assert again.entries() == first.entries() and len(again.entries()) == 4
    assert again.totals("content-a") == first.totals("content-a")
    assert (again.totals("content-a").epsilon, again.totals("content-b").delta) == (3.5, 1e-6)
    assert again.totals("never seen", "new.csv") == Totals("new.csv")


# -- the cap ---------------------------------------------------------------------------------------


class _Counted:
    """Counts how often a synthesizer's measure step (the only one that reads the data) runs."""

    def __init__(self, monkeypatch, method, also=None):
        self.calls, synth = 0, SYNTHESIZERS[method]
        original = synth.measure

        def measure(*args, **kwargs):
            self.calls += 1
            if also is not None:
                also()
            return original(*args, **kwargs)

        monkeypatch.setattr(synth, "measure", measure)


def test_the_cap_refuses_a_dp_run_in_one_sentence_before_the_data_are_read(penguins, monkeypatch):
    df, schema = penguins
    use, store = _use(core.fingerprint(df), "penguins.csv"), LedgerStore()
    store.set_cap(use.fingerprint, use.dataset, Cap(2.5, 1e-5))
    core.synthesize(df, "independent", epsilon=1.0, schema=schema, use=use)
    core.synthesize(df, "mst", epsilon=1.0, schema=schema, use=use)  # δ = 1e-6 by default
    counted = _Counted(monkeypatch, "independent")
    with pytest.raises(core.BudgetExceeded) as refused:
        core.synthesize(df, "independent", epsilon=1.0, schema=schema, bins=7, use=use)
    assert counted.calls == 0 and len(store.entries()) == 2
    # Spent so far, in ρ: each run's noisy count (ε = 0.05, ρ = ε²/2), independent's 8 histograms at 0.95/8 each,
    # MST's steps, ρ(0.95, 1e-6) in all (its ledger lists them in ρ); converted once at δ = 1e-6: 1.91067,
    # below the basic sum ε = 2.
    so_far = zcdp_epsilon(2 * 0.05 ** 2 / 2 + 8 * (0.95 / 8) ** 2 / 2 + zcdp_rho(0.95, 1e-6), 1e-6)
    assert str(refused.value) == (
        "Refused before reading the data: this run would bring what is spent on penguins.csv to ε = 3, δ = 1e-06, "
        f"past its cap of ε = 2.5, δ = 1e-05 (ε = {so_far:g}, δ = 1e-06 spent so far); lower ε or δ, or raise the "
        "cap if the data's owners allow it.")
    # What fits is run; a seeded look is no DP run and is not refused, but counted apart.
    core.synthesize(df, "independent", epsilon=0.5, schema=schema, use=use)
    core.synthesize(df, "independent", epsilon=5.0, schema=schema, seed=1, use=use)
    t = store.totals(use.fingerprint)
    assert (t.dp_computations, t.epsilon, t.looks) == (3, 2.5, 1) and t.cap == Cap(2.5, 1e-5)
    # δ counts too: ε would fit, δ would pass 1e-5.
    store.set_cap(use.fingerprint, use.dataset, Cap(10.0, 1e-6))
    with pytest.raises(core.BudgetExceeded, match="δ = 2e-06, past its cap of ε = 10, δ = 1e-06"):
        core.synthesize(df, "mst", epsilon=0.1, schema=schema, use=use)
    store.set_cap(use.fingerprint, use.dataset, None)
    core.synthesize(df, "mst", epsilon=0.1, schema=schema, use=use)


def test_a_cap_passed_while_a_run_computed_withholds_its_output(penguins, monkeypatch):
    # Another process spends while this run reads the data: the check made with the entry's write refuses it.
    df, schema = penguins
    use, store = _use(core.fingerprint(df), "penguins.csv"), LedgerStore()
    store.set_cap(use.fingerprint, use.dataset, Cap(1.5))
    other = _use(core.fingerprint(df), "penguins.csv", "release")
    counted = _Counted(monkeypatch, "independent",
                       also=lambda: store.record(other, Entry("independent", 1.0, is_dp=True, rho=0.5)))
    with pytest.raises(core.BudgetExceeded, match="^Refused: while this run computed, other runs spent"):
        core.synthesize(df, "independent", epsilon=1.0, schema=schema, use=use, bins=11)  # bins: not cached
    assert counted.calls == 1 and [e["purpose"] for e in store.entries()] == ["release"]


# -- failing closed and surviving a kill --------------------------------------------------------------


def test_no_output_without_its_entry(penguins, tmp_path, monkeypatch):
    df, schema = penguins
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    broken = LedgerStore(blocker / "ledger.sqlite3")
    counted = _Counted(monkeypatch, "independent")
    # Seeded: no cap to check, so the store is first touched when the entry is written, after computing.
    with pytest.raises(core.LedgerError, match=r"could not be opened .*nothing was computed or shown without its"):
        core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=1, store=broken, bins=9)
    assert counted.calls == 1  # it computed, and returned nothing
    with pytest.raises(core.LedgerError):
        core.ru_map(df, ["independent"], [1.0], schema=schema, metrics=["ks_mean"], n_jobs=1, store=broken)
    # Only rows that are not confidential may skip the store.
    result = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=1, store=broken, confidential=False)
    assert len(result.data) > 0


_KILLED = textwrap.dedent("""
    import sys, time
    from dpsynth_core import cli
    from dpsynth_core.privacy import LedgerStore
    record = LedgerStore.record

    def record_then_wait(self, use, entry):
        number = record(self, use, entry)
        print("recorded", number, flush=True)
        time.sleep(600)  # killed here, between the entry's write and the output's

    LedgerStore.record = record_then_wait
    sys.exit(cli.main(sys.argv[1:]))
""")


@pytest.mark.integration  # a Python process, killed
def test_a_process_killed_right_after_its_write_keeps_the_entry_and_shows_nothing(tmp_path):
    db = tmp_path / "ledger.sqlite3"
    out = tmp_path / "s.csv"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, "synthesize", str(ROOT / "data/penguins.csv"),
                             "--schema", str(ROOT / "data/penguins.schema.json"), "--epsilon", "1", "-o", str(out),
                             "--ledger-db", str(db)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    line = proc.stdout.readline()
    assert line.startswith("recorded"), proc.stderr.read()
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    # The entry survived the kill (read from the file by a new handle); no output was written without it.
    [e] = LedgerStore(db).entries()
    assert (e["method"], e["epsilon"], e["is_dp"], e["source"], e["name"]) == ("independent", 1.0, True, "cli",
                                                                              "penguins.csv")
    assert list(tmp_path.glob("s*")) == []


def _hammer(path: str, name: str, count: int, ready, started) -> None:
    ready.wait()  # both processes have imported everything: they start together
    started.put((name, time.time()))
    store = LedgerStore(path)
    for i in range(count):
        store.record(Use(name, "same content", source=name), Entry("independent", 0.01, is_dp=True, rho=5e-5))


# Slow: two spawned processes, each importing the core (about 4 s of CPU). One writer process killed right after
# its write is quicker (test_a_process_killed_right_after_its_write_keeps_the_entry_and_shows_nothing).
@pytest.mark.slow
def test_two_processes_writing_at_once_lose_no_entry(tmp_path):
    path = str(tmp_path / "ledger.sqlite3")
    LedgerStore(path).totals("same content")  # created once, so both start on an existing file
    ctx = multiprocessing.get_context("spawn")
    ready, started = ctx.Barrier(3), ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(path, name, 200, ready, started)) for name in ("one", "two")]
    for p in procs:
        p.start()
    ready.wait()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    found = LedgerStore(path).entries()
    assert len(found) == 400 and sorted(e["id"] for e in found) == list(range(1, 401))
    assert {s: sum(e["source"] == s for e in found) for s in ("one", "two")} == {"one": 200, "two": 200}
    # They ran at once: each process started writing before the other's last entry was written.
    start = dict(started.get(timeout=10) for _ in procs)
    last = {s: max(dt.datetime.fromisoformat(e["time"]).timestamp() for e in found if e["source"] == s)
            for s in start}
    assert start["one"] < last["two"] and start["two"] < last["one"]
    assert LedgerStore(path).totals("same content").epsilon == pytest.approx(4.0)


# -- the sweep -------------------------------------------------------------------------------------


@pytest.mark.integration  # a pool of worker processes
def test_every_point_of_a_sweep_is_recorded_by_its_caller_before_the_table_returns(penguins, tmp_path):
    df, schema = penguins
    store = LedgerStore(tmp_path / "sweep.sqlite3")
    use = _use(core.fingerprint(df), "penguins.csv")
    table = core.ru_map(df, ["independent", "cart"], [0.5, 2.0], reps=2, seed=3, schema=schema, metrics=["ks_mean"],
                        n_jobs=2, use=use, store=store)
    found = store.entries()
    # 2 ε × 2 replicates of independent, 2 of cart and 2 of the bootstrap; the original data is no synthesis.
    points = table[table["method"] != "original"]
    assert len(found) == len(points) == 8 and {e["purpose"] for e in found} == {"sweep point"}
    assert sorted((e["method"], e["epsilon"]) for e in found) == sorted(
        (m, None if np.isnan(eps) else eps) for m, eps in zip(points["method"], points["epsilon"]))
    assert not any(e["is_dp"] for e in found) and all(e["seeded"] for e in found)
    assert LedgerStore().entries() == []  # nothing in the default store: the sweep wrote where it was told
    public = core.ru_map(df.sample(100, random_state=1), ["independent"], [1.0], schema=schema, metrics=["ks_mean"],
                         n_jobs=1, store=store, confidential=False)
    assert len(public) == 3 and len(store.entries()) == 8


def test_delta_above_one_over_n_is_a_warning(penguins):
    df, schema = penguins
    led = core.synthesize(df, "mst", epsilon=1.0, delta=0.01, schema=schema, n=344).ledger
    assert "δ = 0.01 is above 1/n = 0.00291 (n = 344)" in led["statement"]
    assert "about nδ = 3.44 records here" in led["statement"]
    assert core.statement_tone(led) == "warning"
    fine = core.synthesize(df, "mst", epsilon=0.5, delta=1e-6, schema=schema, n=344).ledger
    assert "1/n" not in fine["statement"] and core.statement_tone(fine) == "success"
    totals = compose([_dp(0.2, 0.004, rho=None), _dp(0.2, 0.004, rho=None)])
    assert core.report.release_tone(fine, totals) == "warning"  # Σδ = 0.008 > 1/344
    assert "In all, δ = 0.008 is above 1/n" in core.report.spending_sentence(totals, 344)
    assert math.isclose(totals.delta, 0.008)
