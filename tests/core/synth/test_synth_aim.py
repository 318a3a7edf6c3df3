"""AIM (issue 30): its budget round by round by hand, its workload, what it keeps that a tree of pairs
cannot, i.i.d. draws, merged rare values and refusals."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpsynth_core as core
from dpsynth_core.errors import MethodRefused
from dpsynth_core.privacy.accounting import zcdp_rho
from dpsynth_core.synth import synthesize
from dpsynth_core.synth.aim import MEASURE_SHARE, ROUNDS_PER_COLUMN, candidate_weights, workload
from tests.core.synth.test_synth_mst_privbayes import _tree_data


@pytest.fixture(scope="module")
def diamonds():
    df, schema = core.load_bundled("diamonds")
    return df.sample(4000, random_state=0).reset_index(drop=True), schema


# The larger ε runs more rounds (about 1.3 s of CPU): CI only; the schedule is the same code at 0.3.
@pytest.mark.parametrize("epsilon", [0.3, pytest.param(3.0, marks=pytest.mark.slow)])
def test_rounds_spend_rho_as_the_schedule_says(diamonds, epsilon):
    df, schema = diamonds
    d, delta = len(schema.used), 1e-6
    rho, T = zcdp_rho(epsilon, delta), ROUNDS_PER_COLUMN * len(schema.used)
    ledger = synthesize(df, "aim", epsilon=epsilon, delta=delta, schema=schema, seed=4, n=500).ledger
    first, *rounds = ledger["steps"]
    # round 0: d tables at σ² = T/(2αρ), each ρ = 1/(2σ²) = αρ/T, so d·αρ/T in all
    sigma = math.sqrt(T / (2 * MEASURE_SHARE * rho))
    assert first["repeats"] == d and first["rho"] == pytest.approx(MEASURE_SHARE * rho / T, rel=1e-12)
    assert f"σ = √(T/(2αρ)) = {sigma:.4g} per cell" in first["detail"]
    # every round but the last costs 1/(2σ²) + ε₀²/8 = αρ/T + (1 − α)ρ/T = ρ/T, times 4 after each halving of σ
    cost = rho / T
    for step in rounds[:-1]:
        assert step["rho"] == pytest.approx(cost, rel=1e-9), step["target"]
        assert step["sigma"] == pytest.approx(sigma, rel=1e-12)
        if "σ halved" in step["detail"]:
            cost, sigma = 4 * cost, sigma / 2
    # the last takes what is left, less than two rounds' worth; the steps' ρ add up to ρ, converted once
    assert 0 < rounds[-1]["rho"] < 2 * cost + 1e-15
    assert math.fsum(s["rho_total"] for s in ledger["steps"]) == pytest.approx(rho, rel=1e-12)
    assert all("epsilon" not in s for s in ledger["steps"])  # no step has an (ε, δ) of its own
    assert ledger["epsilon_total"] == pytest.approx(epsilon, rel=1e-9) and ledger["delta"] == pytest.approx(delta)


def test_workload_and_weights_by_hand():
    sizes = [2, 3, 4, 5]
    # triples of at most 30 cells: (0,1,2) 24 and (0,1,3) 30; (0,2,3) 40 and (1,2,3) 60 are left out
    work = workload(sizes, 30)
    assert work == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (0, 1, 2), (0, 1, 3)]
    w = candidate_weights(work, 4)
    # column 0 is in three pairs and both triples; (2, 3) meets (2,3) twice, four other pairs and both
    # triples once; (0, 1, 2) meets the pairs 2+2+1+2+1+1 times and the triples 3 + 2
    assert w[(0,)] == 5 and w[(2, 3)] == 8 and w[(0, 1, 2)] == 14
    assert (0, 2, 3) not in w and len(w) == 4 + 6 + 2


def test_keeps_a_three_way_dependence_no_pair_shows():
    # c = a xor b: every pair of columns is independent, the triple is deterministic. AIM's workload
    # holds the triple, so at a large ε nearly every record keeps the rule; MST's tree of pairs keeps
    # half (chance). 2000 records each: 0.95 is far from both 1 and 0.5 by sampling alone.
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 3000), rng.integers(0, 2, 3000)
    df = pd.DataFrame({"a": a, "b": b, "c": a ^ b})
    schema = {k: {"kind": "categorical", "categories": [0, 1]} for k in "abc"}

    def kept(method):
        out = synthesize(df, method, epsilon=20.0, schema=schema, seed=1, n=2000).data.astype(int)
        return float(np.mean(out["c"] == (out["a"] ^ out["b"])))

    assert kept("aim") > 0.95
    assert kept("mst") < 0.6


@pytest.mark.slow  # 30 syntheses (MST's and PrivBayes' run in the fast loop)
def test_records_are_multinomial_draws_from_the_model():
    # As MST's test: at ε = 1000 the model is the data's distribution; over 30 seeds the χ² statistics
    # of the output's a×b counts against the data's shares sum to about χ²(30·8), both tails checked
    # at 99.8 % (rounding counts instead of drawing would give a sum near 0).
    df, schema = _tree_data(np.random.default_rng(3))
    shares = pd.crosstab(df["a"], df["b"]).to_numpy().ravel() / len(df)
    total, dof = 0.0, 0
    for seed in range(30):
        out = synthesize(df, "aim", epsilon=1000.0, schema=schema, seed=seed, n=2000).data
        obs = pd.crosstab(out["a"], out["b"]).reindex(index=[0, 1, 2], columns=[0, 1, 2], fill_value=0).to_numpy().ravel()
        total += stats.chisquare(obs, shares * obs.sum()).statistic
        dof += obs.size - 1
    assert stats.chi2.ppf(0.001, dof) < total < stats.chi2.ppf(0.999, dof), (total, dof)


def test_rare_values_are_merged_from_the_noisy_counts_and_said():
    # b's declared bounds [0, 100] in 20 bins of 5; the data sit in [0, 10): two bins hold them. At
    # ε = 50, σ of round 0 is about 2 (3σ ≈ 6 against 1000 records a bin), so exactly the 18 empty
    # bins are merged: 20 → 3 model values, said in the ledger; the merged value is drawn in
    # proportion to its bins' noisy counts, so almost no record lands outside [0, 10).
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 2, 2000), "b": rng.uniform(0, 10, 2000)})
    schema = {"a": {"kind": "categorical", "categories": [0, 1]}, "b": {"kind": "numeric", "bounds": [0, 100]}}
    s = synthesize(df, "aim", epsilon=50.0, schema=schema, seed=2, n=5000, bins=20)
    detail = s.ledger["steps"][0]["detail"]
    assert re.search(r"merged into one \(post-processing\): b 20 → 3 values", detail), detail
    assert (s.data["b"] < 10).mean() > 0.99


def test_too_many_columns_or_cells_are_refused_with_one_sentence():
    df = pd.DataFrame({f"c{i}": np.arange(100) % 2 for i in range(41)})
    schema = {c: {"kind": "categorical", "categories": [0, 1]} for c in df}
    with pytest.raises(MethodRefused, match="too many for 41 columns"):
        synthesize(df, "aim", epsilon=1.0, schema=schema, n=10)
    # 40 columns of 300 declared categories: no triple is under the workload's cell cap, so the tables
    # are 40 1-way ones and C(40, 2) = 780 pairs: 40·300 + 780·90,000 = 70,212,000 cells > 2·10⁷
    wide = pd.DataFrame({f"c{i}": np.arange(100) % 97 for i in range(40)})
    schema = {c: {"kind": "categorical", "categories": list(range(300))} for c in wide}
    with pytest.raises(MethodRefused, match=r"70,212,000 cells in all"):
        synthesize(wide, "aim", epsilon=1.0, schema=schema, n=10)


def test_forecast_by_hand():
    # diamonds at 30 bins, on the coarsest views (bins merged 3 at a time): sizes 10, 5, 7, 8 and six numeric
    # columns of 10; d = 10, T = 40. σ₀ = √(T/(2·0.9·ρ)) at ρ(1, 10⁻⁶); the 45 pairs hold
    # 21·100 + 7·10·(5 + 7 + 8) + 35 + 40 + 56 = 3,631 cells, 80.7 on average; n = 53,940 gives 668 rows a cell.
    _, schema = core.load_bundled("diamonds")
    sizes = [10, 5, 7, 8] + [10] * 6
    pairs = [a * b for i, a in enumerate(sizes) for b in sizes[i + 1:]]
    assert sum(pairs) == 3_631 and len(pairs) == 45
    sigma = math.sqrt(40 / (2 * 0.9 * zcdp_rho(1.0, 1e-6)))
    fc = core.forecast("aim", schema, 1.0, 53_940)
    assert f"standard deviation {sigma:,.1f} per cell" in fc.sentence and "about 668 rows" in fc.sentence
    assert fc.level == ("good" if sigma / (53_940 / (3_631 / 45)) < 0.2 else "fair")
    assert core.forecast("aim", schema, 1.0).level == "unknown"


def test_one_column_spends_all_of_rho_on_its_histogram():
    df = pd.DataFrame({"a": np.arange(3000) % 3})
    s = synthesize(df, "aim", epsilon=1.0, schema={"a": {"kind": "categorical", "categories": [0, 1, 2]}}, n=3000,
                   seed=1)
    (step,) = s.ledger["steps"]
    rho = zcdp_rho(1.0, 1e-6)
    assert step["rho_total"] == pytest.approx(rho, rel=1e-12) and step["sigma"] == pytest.approx(math.sqrt(1 / (2 * rho)))
    # σ ≈ 4.5 against 1,000 records a value (0.0015 of a share) and the draws' own spread √(2/9/3000) ≈ 0.0086:
    # each share within 0.03 of 1/3, over 3 standard deviations
    assert np.allclose(s.data["a"].value_counts(normalize=True).sort_index(), 1 / 3, atol=0.03)


def test_a_coarse_view_is_the_table_of_the_coarser_grid():
    # Two numeric columns on [0, 30] at 30 bins: every bin holds 100 records, so nothing is merged as rare
    # (σ = 1 against 100). The candidate (x, y) on the coarse view (bins merged 3 at a time) must be the
    # table of the same records encoded at 10 bins, counted here directly.
    from dpsynth_core.schema import Schema
    from dpsynth_core.synth.aim import AIM, _first_round
    from dpsynth_core.synth.encoding import encode
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": np.repeat(np.arange(30) + 0.5, 100)})
    df["y"] = (df["x"] + rng.integers(0, 4, len(df))) % 30
    schema = Schema.from_dict({c: {"kind": "numeric", "bounds": [0, 30]} for c in "xy"})
    measured = AIM().measure(df, schema, ["x", "y"], bins=30, max_cells=200_000)
    first = _first_round(measured, 1.0, np.random.default_rng(0))
    assert not any(r.any() for r in first["rare"])
    codes, _ = encode(df, schema, ["x", "y"], 10)
    want = np.zeros((10, 10), dtype=np.int64)
    np.add.at(want, (codes[:, 0], codes[:, 1]), 1)
    np.testing.assert_array_equal(first["candidates"][((0, 1), 1)][1], want)
    assert first["candidates"][((0, 1), 0)][1].shape == (30, 30)


def test_within_a_coarse_cell_records_follow_the_fine_counts():
    # b's bins [0, 1) and [1, 2) (of 30 over [0, 30]) hold 3,000 and 1,000 records, one coarse cell. At
    # ε = 50 round 0's noise is about 1: the fitted model, on the fine grid, splits the cell 3 : 1 whatever
    # view the rounds measure. Binomial sd of the share of 5,000 rows is 0.006; tolerance 0.03.
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.integers(0, 2, 4000), "b": np.r_[rng.uniform(0, 1, 3000), rng.uniform(1, 2, 1000)]})
    schema = {"a": {"kind": "categorical", "categories": [0, 1]}, "b": {"kind": "numeric", "bounds": [0, 30]}}
    s = synthesize(df, "aim", epsilon=50.0, schema=schema, seed=3, n=5000)
    b = s.data["b"]
    assert ((b >= 0) & (b < 2)).mean() > 0.99
    assert abs((b < 1).mean() / (b < 2).mean() - 0.75) < 0.03


def test_round_zero_models_a_small_tables_column_on_its_merged_bins():
    from dpsynth_core.schema import ColumnSchema
    from dpsynth_core.synth.aim import _resolution
    from dpsynth_core.synth.encoding import column_domain

    domain = column_domain(ColumnSchema(name="x", kind="numeric", bounds=(0.0, 30.0)), 30)  # 30 bins, no extras
    sigma = 8.0  # 3σ = 24
    # A large table: every bin counted well above 3σ: the fine grid, nothing rare.
    merge, rare = _resolution(domain, np.full(30, 500.0), sigma)
    assert merge == 1 and not rare.any()
    # A small one: 11 a bin (344 rows over 30 bins), bins 0-5 at 30. Fine: 6 bins pass, 180 of the mass;
    # merged 3 at a time: 33 a cell (all 10 pass, 90 + 90 + 8 · 33 = 444): 180 < 0.8 · 444, so merged, and
    # no cell is rare.
    counts = np.full(30, 11.0)
    counts[:6] = 30.0
    merge, rare = _resolution(domain, counts, sigma)
    assert merge == 3 and not rare.any()
    # The same with the last three bins at 0: their merged cell is rare (0 < 24), the only rare one.
    counts[27:] = 0.0
    merge, rare = _resolution(domain, counts, sigma)
    assert merge == 3 and rare.tolist() == [False] * 27 + [True] * 3
    # Fine bins that hold 80 % of what the merged cells do keep the fine grid (ties go to the finer view).
    counts = np.full(30, 30.0)
    counts[24:] = 5.0  # fine: 24 · 30 = 720 pass; merged: 8 · 90 = 720 pass, the last two cells (15) do not
    merge, rare = _resolution(domain, counts, sigma)
    assert merge == 1 and rare.tolist() == [False] * 24 + [True] * 6
