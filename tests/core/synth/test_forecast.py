"""Utility forecasts, the suggested method, the method order and the best DP method (issue 18, 3b and 4),
each declared on the method's class (issue 29).

Every forecast here is called with a schema built from a dict and no data at all, so it cannot read
the data; its numbers are recomputed below from the methods' formulas (docs/methods.md#synthesizers).
"""

from __future__ import annotations

import json
import math
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core import frontier
from dpsynth_core.datasets import BUNDLED
from dpsynth_core.privacy.accounting import zcdp_rho
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, base

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


def test_zcdp_conversion_and_the_marginal_forecast_by_hand():
    # The forecast converts as the synthesis does (tests/core/privacy/test_accounting.py): ε = 1, δ = 1e-6
    # gives ρ = 0.024356.
    rho = zcdp_rho(1.0, 1e-6)
    assert rho == pytest.approx(0.024356, abs=1e-6)
    fc = core.forecast("mst", DIAMONDS, 1.0, N)
    # MST's 2-way share, 0.75ρ, over d − 1 = 9 pairs: σ² = 9/(2·0.75ρ), σ = 15.70 per 2-way cell; the average
    # pair of MST's 20-bin numeric and the categorical domains has (Σ_{i<j} s_i s_j)/45 cells.
    sizes = [20, 5, 7, 8, 20, 20, 20, 20, 20, 20]
    cells = sum(a * b for i, a in enumerate(sizes) for b in sizes[i + 1:]) / 45
    sigma = math.sqrt(9 / (2 * 0.75 * rho))
    assert sigma == pytest.approx(15.70, abs=0.01) and "75% of ρ over 9 pairs" in fc.sentence
    assert f"{sigma:,.1f} per cell" in fc.sentence and f"{N / cells:,.0f} rows in an average cell" in fc.sentence
    assert fc.level == ("good" if sigma / (N / cells) < 0.2 else "fair" if sigma / (N / cells) < 1 else "poor")
    # PrivBayes declares MST's noise as its order of magnitude, at its own 10 bins, and says it is MST's.
    pb = core.forecast("privbayes", DIAMONDS, 1.0, N)
    sizes10 = [10, 5, 7, 8, 10, 10, 10, 10, 10, 10]
    cells10 = sum(a * b for i, a in enumerate(sizes10) for b in sizes10[i + 1:]) / 45
    assert f"{N / cells10:,.0f} rows in an average cell" in pb.sentence and "as MST measures them" in pb.sentence
    assert SYNTHESIZERS["privbayes"].label + " splits its budget its own way" in pb.sentence


def test_privbayes_forecast_where_no_pair_is_useful_is_independent_marginals():
    penguins = core.load_bundled("penguins")[1]
    # 344 rows at ε = 0.3 (n declared, so no row count): after the 2 % count, a table gets 0.294 · 0.7 / 8 and
    # holds at most 344 · 0.0257 / 3 = 2.95 useful cells, under the smallest pair (3 × 3 = 9): no network.
    # It is then independent marginals at its own 10 bins with what the count leaves, 0.294.
    pb, alone = core.forecast("privbayes", penguins, 0.3, 344), core.forecast("independent", penguins, 0.294, 344, bins=10)
    cap = 344 * 0.3 * 0.98 * 0.7 / 8 / 3
    assert f"no pair of columns is a useful table (a useful table has at most {cap:.1f} cells here, the smallest " \
           "pair 9)" in pb.sentence
    assert pb.sentence.endswith(alone.sentence) and pb.level == alone.level
    # At ε = 3 a 3 × 3 pair is useful (29.5 cells): MST's order of magnitude again.
    assert "as MST measures them" in core.forecast("privbayes", penguins, 3.0, 344).sentence


def test_a_dp_method_without_a_forecast_says_so_and_borrows_none(monkeypatch):
    class Plain(base.Synthesizer):  # a DP method that declares no forecast
        name, label, is_dp, description = "toy_plain", "Toy plain method", True, ""

    monkeypatch.setitem(SYNTHESIZERS, "toy_plain", Plain())
    for n in (None, N):
        fc = core.forecast("toy_plain", DIAMONDS, 1.0, n)
        assert fc.level == "unknown" and fc.sentence.startswith("No forecast: Toy plain method declares none")
        # none of the shipped methods' sentences (MST's generic one was once borrowed)
        assert all(fc.sentence != core.forecast(m, DIAMONDS, 1.0, n).sentence for m in SYNTHESIZERS
                   if m != "toy_plain" and SYNTHESIZERS[m].is_dp)


@contextmanager
def _registry(*names):
    """The registry holding only the shipped methods ``names`` (in picker order), restored after the block
    (monkeypatch's undo would re-insert removed methods at the end, out of picker order)."""
    saved = dict(SYNTHESIZERS)
    SYNTHESIZERS.clear()
    SYNTHESIZERS.update((m, s) for m, s in saved.items() if m in names)
    try:
        yield
    finally:
        SYNTHESIZERS.clear()
        SYNTHESIZERS.update(saved)


def test_suggested_method_follows_the_declared_rule():
    # The documented rule: AIM where its forecast is good or fair (diamonds at every ε with n declared); MST
    # unless its forecast is poor, PrivBayes where MST's forecast is good or unknown; else dp_seqreg when its
    # forecast is "good" (noise under 0.5% of n: diamonds from ε = 1, test_dp_seqreg_forecast_by_hand); else
    # independent. The registry is restored in its order afterwards.
    for eps in (0.3, 1.0, 3.0):
        assert core.suggest_method(DIAMONDS, eps, N).method == "aim"
    assert core.suggest_method(DIAMONDS, 0.3).method == "mst"  # n not declared: AIM's forecast is unknown
    with _registry("mst", "privbayes", "independent", "dp_seqreg", "pmi", "pegs", "dirichlet", "uniform", "cart"):
        assert core.suggest_method(DIAMONDS, 0.3, N).method == "mst"
    with _registry("privbayes", "independent", "dp_seqreg", "pmi", "pegs", "dirichlet", "uniform", "cart"):
        assert core.suggest_method(DIAMONDS, 0.3, N).method == "privbayes"
    with _registry("independent", "dp_seqreg", "pmi", "pegs", "pegs_rs", "dirichlet", "uniform", "cart"):
        assert core.suggest_method(DIAMONDS, 0.3, N).method == "independent"
        assert core.suggest_method(DIAMONDS, 1.0, N).method == "dp_seqreg"
        assert core.suggest_method(DIAMONDS, 3.0, N).method == "dp_seqreg"
        undeclared = core.suggest_method(DIAMONDS, 1.0)
        assert undeclared.method == "independent" and "not declared" in undeclared.sentence
    with _registry("pmi", "pegs", "pegs_rs", "dirichlet", "uniform", "cart", "bootstrap"):
        assert core.suggest_method(DIAMONDS, 1.0, N) is None  # none of these may be suggested
    assert list(SYNTHESIZERS)[:3] == ["mst", "privbayes", "aim"]


def test_no_marginal_method_is_suggested_where_its_forecast_is_poor():
    # penguins' 344 rows: every marginal-based forecast is poor at ε = 0.3 and 1 (PrivBayes's may be fair), and
    # each method's TV2 was above independent marginals' there (bench/README.md). At ε = 3 AIM's σ₀ = 9.8
    # against about 7.3 rows a cell (1.34, under AIM's fair bound of 2) is fair, and AIM kept TV2 0.20 against
    # independent marginals' 0.29: AIM is suggested.
    penguins = Schema.from_dict(json.loads(BUNDLED["penguins"].schema_file.read_text(encoding="utf-8")))
    for eps in (0.3, 1.0):
        levels = {m: core.forecast(m, penguins, eps, 344).level for m in ("aim", "mst", "privbayes")}
        assert levels["aim"] == levels["mst"] == "poor" and levels["privbayes"] in ("fair", "poor"), levels
        assert core.suggest_method(penguins, eps, 344).method == "independent"
    aim = core.forecast("aim", penguins, 3.0, 344)
    assert aim.level == "fair" and "9.8 per cell" in aim.sentence and "about 7 rows" in aim.sentence
    assert core.forecast("mst", penguins, 3.0, 344).level == "poor"
    assert core.suggest_method(penguins, 3.0, 344).method == "aim"


def test_on_the_zero_inflated_table_aim_is_suggested_at_every_bench_epsilon():
    # randhie (20,190 rows) at AIM's 30 bins, on the coarsest views (merged 3 at a time): mdvis, lncoins, lpi
    # and fmde 10 bins + the special 0 = 11 cells, physlm 10 + 2 specials = 12, disea 10, four binary
    # columns. σ₀ = √(4·10/(2·0.9·ρ)) against n / (mean cells of the 45 pairs): fair at ε = 0.3 (≥ 0.2) and
    # good from ε = 1, so AIM is suggested; bench/README.md measured its TV2 at 0.027 / 0.015 /
    # 0.012 against independent marginals' 0.068 / 0.063 / 0.061 (5 runs each).
    randhie = Schema.from_dict(json.loads(BUNDLED["randhie"].schema_file.read_text(encoding="utf-8")))
    sizes = [11, 11, 2, 11, 11, 12, 10, 2, 2, 2]
    cells = sum(a * b for i, a in enumerate(sizes) for b in sizes[i + 1:]) / 45
    for eps, level in ((0.3, "fair"), (1.0, "good"), (3.0, "good")):
        ratio = math.sqrt(40 / (2 * 0.9 * zcdp_rho(eps, 1e-6))) / (20_190 / cells)
        assert (ratio >= 0.2) == (level == "fair") and ratio < 1
        assert core.forecast("aim", randhie, eps, 20_190).level == level
        assert core.suggest_method(randhie, eps, 20_190).method == "aim"


def test_the_suggestion_asks_every_registered_method_by_its_declared_priority(monkeypatch):
    # A method registered with a priority below every shipped one's is asked first; it is named only where
    # its own rule says so (here: when n is declared), else the shipped rule goes on.
    class Eager(base.Synthesizer):
        name, label, is_dp, description = "toy_eager", "Toy eager", True, ""
        suggest_priority = -2

        def suggestion(self, schema, epsilon, n, forecast):
            assert forecast.sentence.startswith("No forecast")  # its own forecast, not another method's
            return None if n is None else " (declared n)."

    with _registry(*SYNTHESIZERS):
        base.register(Eager)
        named = core.suggest_method(DIAMONDS, 1.0, N)
        assert (named.method, named.sentence) == ("toy_eager", "Suggested at ε = 1: Toy eager (declared n).")
        assert core.suggest_method(DIAMONDS, 1.0).method == "mst"
        monkeypatch.setattr(Eager, "is_dp", False)  # a method that is not DP is never suggested
        assert core.suggest_method(DIAMONDS, 1.0, N).method == "aim"


def test_registry_lists_methods_by_their_declared_rank_and_new_ones_fit_in():
    names = list(SYNTHESIZERS)
    dp = [m for m in names if SYNTHESIZERS[m].is_dp]
    assert names[:len(dp)] == dp  # every DP method before every non-DP one
    for group in (dp, names[len(dp):]):
        ranks = [SYNTHESIZERS[m].rank for m in group]
        assert ranks == sorted(ranks)
    # the order issue 18 chose, now declared on the classes
    assert names == ["mst", "privbayes", "aim", "independent", "dp_seqreg", "pmi", "pegs", "pegs_rs", "dirichlet",
                     "uniform", "cart", "parametric", "bootstrap"]
    with _registry(*SYNTHESIZERS):
        new = {"zz_dp_new": (True, math.inf), "zz_dp_ranked": (True, 15), "zz_ref": (False, 1)}
        for name, (dp_, rank) in new.items():  # registered in any order
            base.register(type(name, (base.Synthesizer,), {"name": name, "label": name, "is_dp": dp_, "rank": rank,
                                                           "description": ""}))
        order = list(SYNTHESIZERS)
        assert order[:3] == ["mst", "zz_dp_ranked", "privbayes"]  # rank 15: between MST (10) and PrivBayes (20)
        assert order.index("zz_dp_new") == len(dp) + 1  # unranked: after the ranked DP methods
        assert order[len(dp) + 2] == "zz_ref"  # rank 1: first of the methods that are not DP
    assert list(SYNTHESIZERS) == names


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
    best = frontier.best_dp_method(points, 5.0, "pmse_ratio")
    assert best["method"] == "dp_seqreg" and best["epsilon"] == 5.0 and best["utility"] == 4.0
    assert list(best["ranking"]) == ["dp_seqreg", "independent", "pegs"]
    assert best["sentence"].startswith("At ε = 5, DP sequential regression keeps the most by pMSE ratio: 4")
    # At ε = 0.5 independent wins (10 against 32); ε = 0.6 uses the nearest swept ε, 0.5, and says so.
    assert frontier.best_dp_method(points, 0.5, "pmse_ratio")["method"] == "independent"
    near = frontier.best_dp_method(points, 0.6, "pmse_ratio")
    assert near["epsilon"] == 0.5 and "nearest to 0.6" in near["sentence"]
    # A measure to maximise flips the order; a measure absent from the sweep gives None.
    flipped = points.assign(pmse_ratio=-points["pmse_ratio"]).rename(columns={"pmse_ratio": "utility_up"})
    assert frontier.best_dp_method(flipped, 5.0, "utility_up")["method"] == "dp_seqreg"  # unknown: maximised
    assert frontier.best_dp_method(points, 5.0, "ks_mean") is None
