"""dp_seqreg's log scale, predictor cap and weighted split (issue 18, point 3c).

The privacy argument needs every design entry and the target in [−1, 1] whatever a record holds;
the log scale must keep that, with the sensitivities computed from the transformed public bounds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, synthesize
from dpsynth_core.synth.dp_seqreg import (from_log, log_columns, log_schema, moment_sensitivities,
                                          regression_predictors, split_epsilon, to_log)
from dpsynth_core.synth.regression_design import column_features, design_matrix

SCHEMA = Schema.from_dict({
    "carat": {"kind": "numeric", "bounds": [0.2, 5.01]},        # 0 < lo, hi ≥ 10·lo: log
    "depth": {"kind": "numeric", "bounds": [43, 79]},           # spans less than 10×: raw
    "x": {"kind": "numeric", "bounds": [0, 10.74]},             # lo = 0: raw
    "price": {"kind": "numeric", "bounds": [326, 18823], "integer": True},  # log
})


def test_log_columns_come_from_the_bounds_alone():
    assert log_columns(SCHEMA, ["carat", "depth", "x", "price"]) == ["carat", "price"]
    logged = log_schema(SCHEMA, ["price"])
    assert logged["price"].bounds == pytest.approx((math.log(326), math.log(18823)))
    assert not logged["price"].integer and logged["carat"].bounds == (0.2, 5.01)


def test_log_scale_by_hand_and_round_trip():
    col = SCHEMA["price"]
    lo, hi = math.log(326), math.log(18823)
    scaled = column_features(to_log([326, 18823, math.sqrt(326 * 18823)], col), log_schema(SCHEMA, ["price"])["price"])
    # The bounds map to −1 and 1, their geometric mean to 0: 2(log x − lo)/(hi − lo) − 1.
    assert scaled == pytest.approx([-1.0, 1.0, 0.0])
    assert from_log(np.array([lo, hi, 7.0]), col) == pytest.approx([326, 18823, round(math.exp(7.0))])


def test_log_scale_keeps_the_sensitivity_of_the_moment_matrix():
    # Brute force over records at, inside and far outside the public bounds (and below 0, where a
    # raw log would fail): after the log and the scaling every entry of z = (u, y) lies in [−1, 1],
    # so the largest L1 change of the upper triangle of Z′Z is Δ for q = 1 + 2 predictors, 10,
    # reached by a record at the bounds. The transform cannot raise it.
    schema = log_schema(SCHEMA, ["carat", "price"])
    worst, entries = 0.0, []
    for carat in (-1.0, 0.0, 0.2, 1.0, 5.01, 1e9):
        for depth in (0.0, 43.0, 61.0, 79.0, 1e6):
            for price in (-5.0, 326.0, 2401.0, 18823.0, 1e12):
                feats = {"carat": column_features(to_log([carat], SCHEMA["carat"]), schema["carat"]),
                         "depth": column_features(np.array([depth]), schema["depth"])}
                u = design_matrix(feats, schema, ["carat", "depth"], 1)[0]
                y = column_features(to_log([price], SCHEMA["price"]), schema["price"])[0]
                z = np.append(u, y)
                entries.append(np.abs(z).max())
                worst = max(worst, np.abs(np.triu(np.outer(z, z))).sum())
    assert max(entries) == pytest.approx(1.0)
    assert worst == pytest.approx(moment_sensitivities(2)["Z'Z"]) == 10.0


def test_ledger_sensitivities_and_note_with_the_log_scale():
    rng = np.random.default_rng(0)
    carat = rng.uniform(0.3, 2.0, 500)
    df = pd.DataFrame({"carat": carat, "depth": rng.uniform(55, 65, 500), "x": 6 * carat ** (1 / 3),
                       "price": np.rint(np.clip(3000 * carat ** 1.7, 326, 18823)).astype(int)})
    steps = synthesize(df, "dp_seqreg", epsilon=2.0, schema=SCHEMA, n=500, seed=1).ledger["steps"]
    # Chain carat, depth, x, price: the histogram, then 1, 2 and 3 predictors: Δ = 6, 10, 15.
    assert [s["sensitivity"] for s in steps] == [1.0, 6.0, 10.0, 15.0]
    assert all("log scale" in s["detail"] and "carat, price" in s["detail"] for s in steps)


def test_log_scale_keeps_a_power_law_that_the_raw_scale_bends():
    # price = 3000·carat^1.7 is a straight line on the log scale. With no noise (ε = 10⁶) the
    # log-scale chain keeps the median price within 10 % at carat ≈ 1.5 (the data's: 3000·1.5^1.7 ≈
    # 5,990, 0.4 % spread), while the raw-scale linear fit is off by more than 10 % there.
    rng = np.random.default_rng(3)
    carat = np.exp(rng.uniform(math.log(0.3), math.log(3.0), 4000))
    price = np.rint(np.clip(3000 * carat ** 1.7 * np.exp(rng.normal(0, 0.05, 4000)), 326, 18823)).astype(int)
    df = pd.DataFrame({"carat": carat, "price": price})
    schema = Schema.from_dict({c: SCHEMA[c].to_dict() for c in ("carat", "price")})
    truth = 3000 * 1.5 ** 1.7

    def median_price_near(out):
        near = out[(out["carat"] > 1.4) & (out["carat"] < 1.6)]
        return float(near["price"].median())

    logged = synthesize(df, "dp_seqreg", epsilon=1e6, schema=schema, n=20_000, seed=2).data
    raw = synthesize(df, "dp_seqreg", epsilon=1e6, schema=schema, n=20_000, seed=2, log_scale=False).data
    assert abs(median_price_near(logged) / truth - 1) < 0.10
    assert abs(median_price_near(raw) / truth - 1) > 0.10


def test_predictor_cap_and_weighted_split_by_hand():
    chain = ["a", "b", "c", "d", "e"]
    assert regression_predictors(chain, None) == chain
    assert regression_predictors(chain, 3) == ["a", "d", "e"]  # the first, then the nearest two
    assert regression_predictors(chain, 1) == ["a"]
    assert regression_predictors(chain[:2], 3) == ["a", "b"]
    # Weights 1, 2, 2, 1 of ε = 3: 0.5, 1, 1, 0.5.
    assert split_epsilon(3.0, 4, [1, 2, 2, 1]) == pytest.approx([0.5, 1.0, 1.0, 0.5])


def test_numeric_weight_moves_budget_to_the_regressions():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"carat": rng.uniform(0.3, 2.0, 200), "depth": rng.uniform(55, 65, 200)})
    schema = Schema.from_dict({c: SCHEMA[c].to_dict() for c in ("carat", "depth")})
    steps = synthesize(df, "dp_seqreg", epsilon=1.0, schema=schema, n=200, seed=1, numeric_weight=3.0).ledger["steps"]
    # The histogram of carat gets 1 share, depth ~ carat 3: ε/4 and 3ε/4, still summing to ε.
    assert [s["epsilon"] for s in steps] == pytest.approx([0.25, 0.75])


@pytest.mark.parametrize("bad, match", [({"max_predictors": 0}, "max_predictors"),
                                        ({"numeric_weight": -1.0}, "numeric_weight")])
def test_bad_options_are_refused(bad, match):
    df = pd.DataFrame({"carat": [0.3, 0.5, 1.0], "depth": [60.0, 61.0, 62.0]})
    schema = Schema.from_dict({c: SCHEMA[c].to_dict() for c in ("carat", "depth")})
    with pytest.raises(Exception, match=match):
        synthesize(df, "dp_seqreg", epsilon=1.0, schema=schema, n=3, seed=1, **bad)


def test_defaults_are_what_the_benchmark_measured():
    d = SYNTHESIZERS["dp_seqreg"].defaults
    assert d["log_scale"] is True and d["max_predictors"] == 3 and d["numeric_weight"] == 1.0
