"""The audit machinery (dpsynth_core/privacy/audit.py) against hand-computed bounds, a simulated mechanism
whose privacy loss is known exactly, hand-built pairs and counts; and its runs, progress and cancel.

Every declared audit of every DP method is run in test_audit_common.py.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core.privacy.accounting import zcdp_rho
from dpsynth_core.privacy.audit import (ALPHA, Audit, Broken, CellCounts, Event, Neighbours, audit_table, bound_text,
                                        choose_event, clopper_pearson, declared_audits, epsilon_bound, run_audit,
                                        three_columns)
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, synthesize

AB = Schema.from_dict(three_columns(3, "ab"))


# --- the bound ---------------------------------------------------------------------------------

def test_clopper_pearson_closed_forms():
    # One-sided bounds with a closed form: k = n → lower = level^(1/n); k = 0 → upper = 1 − level^(1/n);
    # k = 1 → lower = 1 − (1 − level)^(1/n); k = n − 1 → upper = (1 − level)^(1/n).
    n, level = 50, 0.01
    lo, up = clopper_pearson([0, 1, n - 1, n], n, level)
    assert lo[0] == 0.0 and up[3] == 1.0
    assert lo[3] == pytest.approx(level ** (1 / n), rel=1e-10)
    assert up[0] == pytest.approx(1 - level ** (1 / n), rel=1e-10)
    assert lo[1] == pytest.approx(1 - (1 - level) ** (1 / n), rel=1e-10)
    assert up[2] == pytest.approx((1 - level) ** (1 / n), rel=1e-10)
    with pytest.raises(ValueError):
        clopper_pearson([5], 4, 0.05)


def test_epsilon_bound_by_hand():
    # E in 100 of 100 runs on one side and 0 of 100 on the other, alpha = 0.05: each side at 0.025.
    # lower = 0.025^(1/100) = e^(−3.688879/100) = 0.9637833; upper = 1 − 0.9637833 = 0.0362167;
    # log(0.9637833 / 0.0362167) = log(26.6113) = 3.281346.
    assert epsilon_bound(100, 100, 0, 100) == pytest.approx(3.281346, abs=1e-6)
    # δ = 0.01 comes off the numerator: log(0.9537833 / 0.0362167) = 3.270916.
    assert epsilon_bound(100, 100, 0, 100, delta=0.01) == pytest.approx(3.270916, abs=1e-6)
    # 100 of 100 against 99 of 100: upper = 0.975^(1/100) = e^(−0.0253178/100); the log ratio is
    # ln(0.025)/100 − ln(0.975)/100 = −0.0368888 + 0.0002532 = −0.0366356.
    assert epsilon_bound(100, 100, 99, 100) == pytest.approx(-0.0366356, abs=1e-6)
    # The event never seen on the numerator's side shows nothing.
    assert epsilon_bound(0, 100, 0, 100) == -math.inf
    assert bound_text(-math.inf) == "−∞" and bound_text(0.41234) == "0.412"


def _randomized_response(runs: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """One bit per run: 1 with probability 1/(1 + e) on D and e/(1 + e) on D′ (ε = 1 exactly, both events)."""
    p = 1 / (1 + math.e)
    return (rng.random((runs, 1)) < p).astype(np.int64), (rng.random((runs, 1)) < 1 - p).astype(np.int64)


@pytest.mark.slow  # 1,000 simulated audits
def test_the_split_bound_covers_the_true_loss():
    # Randomized response at ε = 1: every event's log ratio is at most 1, and 1 for "the bit is 1" (and
    # "is 0"). 1000 simulated audits of 400 runs a side, event chosen on the first half, bounded on the
    # second: the bound may exceed 1 with probability at most alpha = 0.05 (Clopper–Pearson is
    # conservative, so less). 1000 audits: the observed share has a standard error ≤ 0.007.
    rng = np.random.default_rng(11)
    bounds = []
    for _ in range(1000):
        d, d2 = _randomized_response(400, rng)
        event = choose_event(d[:200], d2[:200])
        bounds.append(event.bound(d[200:], d2[200:], 0.0, ALPHA))
    bounds = np.array(bounds)
    assert np.mean(bounds > 1.0) <= 0.05
    assert np.median(bounds) > 0.5  # and the audit is not vacuous at this size


def test_choose_event_by_hand():
    zeros, ones = np.zeros((10, 1), np.int64), np.ones((10, 1), np.int64)
    # Always 1 on D′, never on D: "≥ 1, more likely on D′", the first of the equally good candidates.
    assert choose_event(zeros, ones) == Event(0, 1.0, True, True)
    # The other way round: "≥ 1, more likely on D" (ties keep the first candidate met).
    assert choose_event(ones, zeros) == Event(0, 1.0, True, False)
    # Two statistics: the first says nothing (same values), the second separates at 5.
    d = np.column_stack([np.arange(10), np.arange(10) % 5])
    d2 = np.column_stack([np.arange(10), 5 + np.arange(10) % 5])
    assert choose_event(d, d2) == Event(1, 5.0, True, True)
    # A statistic with one value everywhere has no event.
    assert choose_event(zeros, zeros) is None


# --- the pair and the statistic ------------------------------------------------------------------

def test_the_default_pair_leaves_the_planted_cell_empty():
    pair = Neighbours(rows=30).make(AB, bins=20)
    assert len(pair.data) == 30 and len(pair.neighbour) == 31
    assert set(pair.data["a"]) <= {"a0", "a1"} and set(pair.data["b"]) <= {"b0", "b1"}
    assert pair.planted == {"a": "a2", "b": "b2"}
    pd.testing.assert_frame_equal(pair.neighbour.iloc[:30], pair.data)
    assert pair.neighbour.iloc[30].tolist() == ["a2", "b2"]
    # The same schema gives the same public table (seeded), another seed another one.
    pd.testing.assert_frame_equal(Neighbours(rows=30).make(AB, bins=20).data, pair.data)
    assert not Neighbours(rows=30, seed=1).make(AB, bins=20).data.equals(pair.data)


def test_numeric_and_missing_cells():
    schema = Schema.from_dict({"a": {"kind": "categorical", "categories": ["x", "y"]},
                               "age": {"kind": "numeric", "bounds": [0, 100], "integer": True, "nullable": True},
                               "one": {"kind": "categorical", "categories": ["only"]}})
    pair = Neighbours(rows=50).make(schema, bins=10)
    # bins of width 10: the top one is [90, 100], the planted age its upper bound; D's ages are the other
    # bins' midpoints 5, 15, …, 85
    assert pair.planted == {"a": "y", "age": 100.0, "one": "only"}
    assert set(pair.data["age"]) <= {5.0 + 10 * k for k in range(9)} and set(pair.data["a"]) == {"x"}
    assert [c.column for c in pair.cells] == ["a", "age"]  # a one-category column has no cell
    frame = pd.DataFrame({"a": ["y", "y", "x", None], "age": pd.array([90, 89, 99, None], dtype="Int64"),
                          "one": ["only"] * 4})
    assert pair.in_cell(frame, (0, 1)).tolist() == [True, False, False, False]
    assert pair.cell_text((0, 1)) == "a = y and age ≥ 90"
    missing = Neighbours(rows=50, missing=True).make(schema, bins=10)
    assert math.isnan(missing.planted["age"]) and missing.data["age"].notna().all()
    assert missing.in_cell(frame, (1,)).tolist() == [False, False, False, True]
    with pytest.raises(ValueError, match="at least two values"):
        Neighbours().make(Schema.from_dict({"one": {"kind": "categorical", "categories": ["only"]}}), bins=10)


def test_grouped_pair_is_the_pegs_design():
    groups = (((0, 0), 7), ((1, 1), 6), ((-1, 0), 5), ((-1, 1), 4), ((0, -1), 2), ((1, -1), 3))
    pair = Neighbours(groups=groups).make(AB, bins=3)
    table = pd.crosstab(pair.data["a"], pair.data["b"]).reindex(index=["a0", "a1", "a2"], columns=["b0", "b1", "b2"],
                                                                fill_value=0)
    assert table.to_numpy().tolist() == [[7, 0, 2], [0, 6, 3], [5, 4, 0]]


def test_cell_counts_per_release_and_per_block():
    pair = Neighbours(rows=10).make(Schema.from_dict(three_columns(3, "abc")), bins=3)
    frame = pd.DataFrame({"a": ["a2", "a2", "a0", "a2", "a2", "a2"], "b": ["b2", "b2", "b2", "b0", "b2", "b2"],
                          "c": ["c2", "c0", "c2", "c2", "c2", "c2"]})
    # by hand: rows in (a2, b2): 0, 1, 4, 5; in (a2, b2, c2): 0, 4, 5
    assert CellCounts(((0, 1), (0, 1, 2)))(frame, pair, 6).tolist() == [[4, 3]]
    # blocks of 3 rows: (0, 1, 2) and (3, 4, 5); first rows 0 and 3
    assert CellCounts(((0, 1),), first=True)(frame, pair, 3).tolist() == [[2, 1], [2, 0]]
    # a schema with two columns drops the three-column group
    two = Neighbours(rows=10).make(AB, bins=3)
    assert CellCounts(((0, 1), (0, 1, 2))).groups(two) == [(0, 1)]


def test_broken_variants_have_a_tenth_of_the_noise():
    assert Broken().epsilon(1.5, 0.0) == 15.0  # a Laplace or geometric scale ∝ 1/ε: ÷ 10
    assert Broken(factor=2).epsilon(1.5, 0.0) == 3.0
    broken = Broken(zcdp=True).epsilon(1.0, 1e-6)
    assert zcdp_rho(broken, 1e-6) == pytest.approx(100 * zcdp_rho(1.0, 1e-6), rel=1e-9)  # σ ∝ 1/√ρ: ÷ 10
    assert Broken(method="bootstrap").epsilon(1.0, 0.0) is None
    assert Broken().describe() == "a tenth of the noise, that of 10ε, with the same ε claimed"
    assert Broken(zcdp=True).describe() == "a tenth of the noise, ρ × 100, with the same ε claimed"


# --- running it ----------------------------------------------------------------------------------

def test_a_run_is_a_synthesis_and_its_count(monkeypatch):
    # Every run is a call of synthesize(); the statistic counts its rows in the cell. Re-run the first runs'
    # seeds by hand and count with pandas.
    seen = []
    real = synthesize

    def spy(df, method, **kw):
        out = real(df, method, **kw)
        assert kw["confidential"] is False  # public rows: nothing recorded in the ledger store
        seen.append((len(df), kw["seed"], kw["epsilon"], kw["n"],
                     int(((out.data["a"] == "a2") & (out.data["b"] == "b2")).sum())))
        return out

    monkeypatch.setattr("dpsynth_core.synth.synthesize", spy)
    result = run_audit("independent", runs=4, seed=5, n_jobs=1)
    assert len(seen) == 16  # 4 runs × (D, D′) × (as released, broken)
    design = declared_audits("independent")[0]
    on_d = [s for s in seen if s[0] == design.pair.rows and s[2] == 1.0]
    assert len(on_d) == 4 and all(s[3] == design.n for s in on_d)
    for rows, seed, eps, n, count in on_d:  # the same call by hand gives the same count
        pair = design.pair.make(AB, bins=20)
        again = real(pair.data, "independent", epsilon=eps, schema=AB, n=n, seed=seed, confidential=False).data
        assert int(((again["a"] == "a2") & (again["b"] == "b2")).sum()) == count
    assert sorted(result.honest.values[0].tolist()) == sorted(s[4] for s in on_d)


@pytest.mark.integration  # a pool of worker processes
def test_the_same_seed_gives_the_same_audit_serial_or_parallel():
    a = run_audit("independent", runs=6, seed=9, n_jobs=1)
    b = run_audit("independent", runs=6, seed=9, n_jobs=2)
    for x, y in ((a.honest, b.honest), (a.broken, b.broken)):
        assert x.bound == y.bound and all(np.array_equal(u, v) for u, v in zip(x.values, y.values))


def test_the_audit_runs_where_joblib_parallel_config_says(monkeypatch):
    # Under parallel_config(backend="threading") the runs happen in this process's worker threads, where a
    # spy sees them (under the default process pool it would see none), and give the serial audit's results.
    import threading

    import joblib

    where = []
    real = synthesize

    def spy(df, method, **kw):
        where.append(threading.current_thread() is threading.main_thread())
        return real(df, method, **kw)

    serial = run_audit("independent", runs=8, seed=9, n_jobs=1)
    monkeypatch.setattr("dpsynth_core.synth.synthesize", spy)
    with joblib.parallel_config(backend="threading", n_jobs=2):
        threaded = run_audit("independent", runs=8, seed=9)
    assert len(where) == 32 and not any(where)  # 8 runs × (D, D′) × (as released, broken), none in the main thread
    assert threaded.honest.bound == serial.honest.bound and threaded.broken.bound == serial.broken.bound


def test_progress_reaches_one_and_an_exception_in_it_cancels():
    fractions = []
    run_audit("uniform", runs=16, seed=1, n_jobs=1, progress=lambda f, msg: fractions.append((f, msg)))
    assert [f for f, _ in fractions] == sorted(f for f, _ in fractions) and fractions[-1][0] == 1.0
    assert "of 64 runs" in fractions[-1][1]

    class Cancelled(Exception):
        pass

    calls = []

    def cancel(f, msg):
        calls.append(f)
        raise Cancelled

    with pytest.raises(Cancelled):
        run_audit("uniform", runs=16, seed=1, n_jobs=1, progress=cancel)
    assert calls == [calls[0]] and calls[0] < 1  # stopped at the first task


def test_per_record_runs_are_units_of_one_synthesis():
    result = run_audit("pegs", runs=300, seed=2, n_jobs=1)
    assert result.per == "synthetic record" and result.claim == 1.0 and result.honest.epsilon_run == 1.0
    assert len(result.honest.values[0]) == 300 and set(np.unique(result.honest.values[0])) <= {0, 1}
    assert result.broken.epsilon_run == 10.0


def test_claims_and_variants_follow_the_budget():
    mst = run_audit("mst", runs=4, seed=1, n_jobs=1)
    assert mst.delta == 1e-6 and mst.honest.epsilon_run == 1.0
    assert zcdp_rho(mst.broken.epsilon_run, 1e-6) == pytest.approx(100 * zcdp_rho(1.0, 1e-6), rel=1e-9)
    uniform = run_audit("uniform", runs=4, seed=1, n_jobs=1)
    assert uniform.claim == 0.0 and uniform.honest.epsilon_run is None and uniform.broken.epsilon_run is None
    assert "bootstrap" in uniform.broken_text and audit_table(uniform)["ran at ε"].tolist() == ["spends none"] * 2


def test_a_stewards_schema_builds_its_own_pair():
    _, schema = core.load_bundled("penguins")  # the schema only: the audit never sees the rows
    result = run_audit("independent", schema=schema, runs=6, rows=40, seed=4, n_jobs=1)
    assert result.rows == 40 and math.isfinite(result.broken.bound)
    assert "species = Gentoo and island = Torgersen" in result.honest.statistic


def test_bad_requests_are_one_sentence(monkeypatch):
    with pytest.raises(ValueError, match="not differentially private"):
        run_audit("cart", runs=4)
    with pytest.raises(ValueError, match="at least 4 runs"):
        run_audit("independent", runs=2)
    with pytest.raises(ValueError, match=r"declares 3 audit\(s\), numbered from 0; choose one of \[0, 1, 2\]"):
        run_audit("dp_seqreg", which=3, runs=4)
    monkeypatch.setattr(type(SYNTHESIZERS["independent"]), "audits", ())
    with pytest.raises(ValueError, match="declares no audit"):
        run_audit("independent", runs=4)


def test_the_table_and_the_verdict_say_what_was_found():
    design = dataclasses.replace(declared_audits("independent")[0])
    result = run_audit("independent", design=design, runs=40, seed=3, n_jobs=1)
    table = audit_table(result)
    assert table["variant"].tolist() == ["as released", f"broken: {result.broken_text}"]
    assert table["95 % lower bound on ε"].tolist() == [bound_text(result.honest.bound), bound_text(result.broken.bound)]
    assert table["claimed ε"].tolist() == ["1", "1"] and table["ran at ε"].tolist() == ["1", "10"]
    assert table["runs per dataset"].tolist() == ["40", "40"] and table["event"].tolist() == [
        result.honest.event, result.broken.event]
    held = result.honest.held_out
    assert held == 40 - math.ceil(40 / 3)  # the first third chooses the event
    d_hits, d2_hits = result.honest.hits
    assert table["in the event (held-out runs, D → D′)"][0] == f"{d_hits} → {d2_hits} of {held}"
    verdict = result.verdict()
    assert ("stays at or below" in verdict) == result.holds
    assert ("can catch such an error" in verdict) == result.has_power


def test_the_figure_shows_both_distributions_and_the_events():
    result = run_audit("independent", runs=20, seed=3, n_jobs=1)
    fig = core.plots.audit_figure(result)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 4  # D and D′, as released and broken
    for trace in bars:  # each dataset's shares over the runs add up to 1
        assert sum(trace.y) == pytest.approx(1.0)
    assert len(fig.layout.shapes) == 2  # each event's edge
    assert fig.layout.shapes[0].x0 == result.honest.threshold - 0.5
    # user text (a column named like HTML) is shown literally
    odd = Schema.from_dict({"<b>x</b>": {"kind": "categorical", "categories": ["p", "q"]},
                            "b": {"kind": "categorical", "categories": ["r", "s"]}})
    fig = core.plots.audit_figure(run_audit("independent", schema=odd, runs=6, seed=1, n_jobs=1))
    assert "&lt;b&gt;x&lt;/b&gt;" in fig.layout.xaxis.title.text and "<b>x" not in fig.layout.xaxis.title.text


def test_a_design_can_be_run_instead_of_the_declared_one():
    design = Audit(three_columns(3, "ab"), n=50, epsilon=0.5, runs=4)
    result = run_audit("independent", design=design, seed=1, n_jobs=1)
    assert result.claim == 0.5 and result.n == 50 and result.runs == 4
