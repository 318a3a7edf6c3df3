"""Utility forecasts, the suggested method, the method order and the best DP method (issue 18, 3b and 4).

Every forecast here is called with a schema built from a dict and no data at all, so it cannot read
the data; its numbers are recomputed below from the methods' formulas (docs/methods.md#synthesizers).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core import rumap
from dpsynth_core.datasets import BUNDLED
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, base, forecasting

# The diamonds schema as declared, without its data (the CSV is never read here).
DIAMONDS = Schema.from_dict(json.loads(BUNDLED["diamonds"].schema_file.read_text(encoding="utf-8")))
N = 53_940


def test_forecasts_exist_for_every_dp_method_and_never_for_the_others():
    for name, synth in SYNTHESIZERS.items():
        fc = core.forecast(name, DIAMONDS, 1.0, N)
        if synth.is_dp:
            assert fc is not None and fc.sentence and fc.level in ("good", "fair", "poor", "unknown"), name
        else:
            assert fc is None, name


def test_no_forecast_without_a_modelled_column():
    only_excluded = Schema.from_dict({"id": {"kind": "excluded"}})
    assert core.forecast("independent", only_excluded, 1.0, 10) is None


def test_independent_forecast_by_hand():
    fc = core.forecast("independent", DIAMONDS, 1.0, N)
    # ε/d = 1/10 per histogram; geometric noise sd √(2a)/(1 − a), a = e^(−0.1): 14.136.
    a = math.exp(-0.1)
    sd = math.sqrt(2 * a) / (1 - a)
    assert sd == pytest.approx(14.136, abs=1e-3)
    # The widest column has 20 bins: 53,940 / 20 = 2,697 rows per cell; sd/2697 = 0.005 < 0.05: good.
    assert f"ε = {0.1:.3g}" in fc.sentence and f"{sd:,.1f} per cell" in fc.sentence
    assert "2,697 rows" in fc.sentence and fc.level == "good"
    # n not declared: 5% of ε goes to the row count, 0.95/10 each, and the level is unknown.
    fc2 = core.forecast("independent", DIAMONDS, 1.0)
    a2 = math.exp(-0.095)
    assert f"{math.sqrt(2 * a2) / (1 - a2):,.1f} per cell" in fc2.sentence and fc2.level == "unknown"


def test_dirichlet_forecast_by_hand():
    fc = core.forecast("dirichlet", DIAMONDS, 1.0, N)
    # 3 bins for the 7 numeric columns, 5·7·8 categories: 3⁷·280 = 612,360 cells. The prior
    # α = n/(e − 1) = 31,392 per cell against n/p = 0.088 rows: p/(e − 1) = 356,379 : 1.
    cells = 3 ** 7 * 5 * 7 * 8
    assert cells == 612_360
    assert f"{round(N / math.expm1(1)):,}" == "31,392" and "α = 31,392" in fc.sentence
    assert f"{cells / math.expm1(1):,.0f}" == "356,379" and "about 356,379 : 1 per cell" in fc.sentence
    assert fc.level == "poor" and "near-uniform" in fc.sentence


def test_per_record_forecasts_by_hand():
    fc = core.forecast("pegs", DIAMONDS, 1.0, N)
    # ε per record 1/53,940; α = 1/(e^(ε/M) − 1) with M = 10: 539,400 (≈ 1/x − 1/2).
    x = 1 / N / 10
    alpha = 1 / math.expm1(x)
    assert alpha == pytest.approx(539_399.5, abs=0.5)
    assert "1/53,940 of the total" in fc.sentence and f"{alpha:,.0f} pseudo-counts" in fc.sentence
    # Keys (top 1, public order): color's nearest is cut (5 values) × the hash bit: 10 keys,
    # 5,394 rows each; C = 7: the data's weight 5394/(5394 + 7α) = 0.14%, the largest of the ten.
    assert f"{5394 / (5394 + 7 * alpha):.2%}" == "0.14%" and "at most 0.14%" in fc.sentence
    assert fc.level == "poor"
    # pegs_rs: blocks of 10 records, ε per block 1/5,394.
    rs = core.forecast("pegs_rs", DIAMONDS, 1.0, N)
    assert "1/5,394 of the total" in rs.sentence
    # pmi: g̃ = (g + α)/(1 + Cα); its best column has C = 5: 1/(1 + 5α), 1 part in 2,696,999.
    pmi = core.forecast("pmi", DIAMONDS, 1.0, N)
    assert f"1 part in {1 + 5 * alpha:,.0f}" in pmi.sentence and pmi.level == "poor"
    # Without n the share is unknown, and the forecast says so, with what even 1,000 rows would give:
    # 95% of ε after the noisy row count, /1,000 records, /10 conditionals: α = 1/(e^(9.5e-5) − 1)
    # ≈ 1/x − 1/2 = 10,525.8.
    unknown = core.forecast("pegs", DIAMONDS, 1.0)
    assert unknown.level == "unknown" and f"≈ {1 / math.expm1(0.95 / 1000 / 10):,.0f} pseudo-counts" in unknown.sentence
    assert "10,526" in unknown.sentence


def test_dp_seqreg_forecast_by_hand():
    fc = core.forecast("dp_seqreg", DIAMONDS, 1.0, N)
    # ε/10 = 0.1 per variable; at most 3 predictors: q = 4, Δ = 5·6/2 = 15; Laplace b = 150;
    # √2·150/53,940 = 0.39% of n: under 0.5%, good (TV2 0.12 against independent's 0.16 there).
    assert "sensitivity 15" in fc.sentence and "scale 150 " in fc.sentence
    assert f"{math.sqrt(2) * 150 / N:.2%}" == "0.39%" and "0.39% of the row count" in fc.sentence
    assert fc.level == "good"
    assert core.forecast("dp_seqreg", DIAMONDS, 0.3, N).level == "fair"  # 1.31%: it lost to independent


def test_zcdp_conversion_and_generic_marginal_forecast_by_hand(monkeypatch):
    # The forecast converts as the synthesis does (tests/core/privacy/test_accounting.py): ε = 1, δ = 1e-6
    # gives ρ = 0.024356.
    rho = forecasting.zcdp_rho(1.0, 1e-6)
    assert rho == pytest.approx(0.024356, abs=1e-6)

    class Marginal(base.Synthesizer):  # a DP method with no forecast of its own, as MST would be
        name, label, is_dp, description = "toy_mst", "Toy MST", True, ""

    monkeypatch.setitem(SYNTHESIZERS, "toy_mst", Marginal())
    fc = core.forecast("toy_mst", DIAMONDS, 1.0, N)
    # MST's 2-way share, 0.75ρ, over d − 1 = 9 pairs: σ² = 9/(2·0.75ρ), σ = 15.70 per 2-way cell; the average pair of the 20-bin
    # numeric and categorical domains has (Σ_{i<j} s_i s_j)/45 cells.
    sizes = [20, 5, 7, 8, 20, 20, 20, 20, 20, 20]
    cells = sum(a * b for i, a in enumerate(sizes) for b in sizes[i + 1:]) / 45
    sigma = math.sqrt(9 / (2 * 0.75 * rho))
    assert sigma == pytest.approx(15.70, abs=0.01) and "75% of ρ over 9 pairs" in fc.sentence
    assert f"{sigma:,.1f} per cell" in fc.sentence and f"{N / cells:,.0f} rows in an average cell" in fc.sentence
    assert fc.level == ("good" if sigma / (N / cells) < 0.2 else "fair" if sigma / (N / cells) < 1 else "poor")


def test_suggested_method_follows_the_documented_rule():
    # The registry is restored with its order (monkeypatch's undo would re-insert removed methods
    # at the end of the dict, and the registry-order test below would then fail).
    saved = dict(SYNTHESIZERS)
    try:
        for name in ("mst", "privbayes", "aim"):  # first the rule without marginal-based methods
            SYNTHESIZERS.pop(name, None)
        assert core.suggest_method(DIAMONDS, 0.3, N).method == "independent"
        assert core.suggest_method(DIAMONDS, 1.0, N).method == "dp_seqreg"
        assert core.suggest_method(DIAMONDS, 3.0, N).method == "dp_seqreg"
        undeclared = core.suggest_method(DIAMONDS, 1.0)
        assert undeclared.method == "independent" and "not declared" in undeclared.sentence
        SYNTHESIZERS["privbayes"] = SYNTHESIZERS["independent"]
        assert core.suggest_method(DIAMONDS, 0.3, N).method == "privbayes"
        SYNTHESIZERS["mst"] = SYNTHESIZERS["independent"]
        assert core.suggest_method(DIAMONDS, 0.3, N).method == "mst"
    finally:
        SYNTHESIZERS.clear()
        SYNTHESIZERS.update(saved)


def test_registry_lists_the_best_dp_methods_first_and_new_ones_fit_in(monkeypatch):
    names = list(SYNTHESIZERS)
    dp = [m for m in names if SYNTHESIZERS[m].is_dp]
    assert names[:len(dp)] == dp  # every DP method before every non-DP one
    listed = [m for m in dp if m in base.METHOD_ORDER]  # a new method needs no entry: it follows them
    assert dp[:len(listed)] == listed == [m for m in base.METHOD_ORDER if m in dp]
    assert names[-3:] == ["cart", "parametric", "bootstrap"]
    saved = dict(SYNTHESIZERS)
    try:
        for name in ("privbayes", "zz_dp_new", "mst"):  # registered in any order (again, if they exist)
            base.register(type(name, (base.Synthesizer,), {"name": name, "label": name, "is_dp": True,
                                                           "description": ""}))
        order = list(SYNTHESIZERS)
        assert order[:2] == ["mst", "privbayes"]
        # after the listed DP methods and those registered before it, before every non-DP one
        assert order.index("zz_dp_new") == len(dp)
        assert not SYNTHESIZERS[order[len(dp) + 1]].is_dp
    finally:
        SYNTHESIZERS.clear()
        SYNTHESIZERS.update(saved)


def _points() -> pd.DataFrame:
    rows = [("original", np.nan, 0, 1.0, True, False)]
    # mean pMSE ratio (target 1, lower |x − 1| is better) per (method, ε) over 2 replicates.
    table = {("independent", 0.5): (9.0, 11.0), ("independent", 5.0): (7.0, 9.0),
             ("dp_seqreg", 0.5): (30.0, 34.0), ("dp_seqreg", 5.0): (3.0, 5.0),
             ("pegs", 0.5): (90.0, 90.0), ("pegs", 5.0): (80.0, 80.0)}
    for (m, e), vals in table.items():
        rows += [(m, e, r, v, False, True) for r, v in enumerate(vals)]
    rows += [("cart", np.nan, 0, 1.2, False, False), ("bootstrap", np.nan, 0, 1.0, True, False)]
    return pd.DataFrame(rows, columns=["method", "epsilon", "rep", "pmse_ratio", "reference", "is_dp"])


def test_best_dp_method_by_hand():
    points = _points()
    # At ε = 5: means independent 8, dp_seqreg 4, pegs 80: dp_seqreg is closest to 1. cart (1.2)
    # and the references are not DP and are left out.
    best = rumap.best_dp_method(points, 5.0, "pmse_ratio")
    assert best["method"] == "dp_seqreg" and best["epsilon"] == 5.0 and best["utility"] == 4.0
    assert list(best["ranking"]) == ["dp_seqreg", "independent", "pegs"]
    assert best["sentence"].startswith("At ε = 5, DP sequential regression keeps the most by pMSE ratio: 4")
    # At ε = 0.5 independent wins (10 against 32); ε = 0.6 uses the nearest swept ε, 0.5, and says so.
    assert rumap.best_dp_method(points, 0.5, "pmse_ratio")["method"] == "independent"
    near = rumap.best_dp_method(points, 0.6, "pmse_ratio")
    assert near["epsilon"] == 0.5 and "nearest to 0.6" in near["sentence"]
    # A measure to maximise flips the order; a measure absent from the sweep gives None.
    flipped = points.assign(pmse_ratio=-points["pmse_ratio"]).rename(columns={"pmse_ratio": "utility_up"})
    assert rumap.best_dp_method(flipped, 5.0, "utility_up")["method"] == "dp_seqreg"  # unknown: maximised
    assert rumap.best_dp_method(points, 5.0, "ks_mean") is None
