"""Disclosure-risk measures: expected values are written out by hand or
computed by brute-force loops that share no code with dpsynth_core.risk."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.errors import DataError
from dpsynth_core.metric_info import METRICS
from dpsynth_core.risk import (
    exact_copy_share,
    gower_dcr,
    match_rates,
    membership_inference,
)
from dpsynth_core.risk import distance as distance_module
from dpsynth_core.risk import matching as risk_matching
from tests.conftest import DATA
from tests.core.risk import population as _population



# --- match rates -------------------------------------------------------------

# Row j of RELEASED is the released version of row j of CONFIDENTIAL.
CONFIDENTIAL = pd.DataFrame({
    "sex": ["F", "F", "M", "M", "F", "M", "F", "M"],
    "age": [30, 30, 40, 41, 50, 60, 70, 65],
    "income": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],  # not a key
})
RELEASED = pd.DataFrame({
    "sex": ["F", "F", "M", "M", "F", "M", "F", "M"],
    "age": [30, 30, 40, 40, 50, 61, 30, 60],
    "income": [9.0] * 8,
})


def test_match_rates_exact_by_hand():
    # j  keys   released rows with these keys   c  T
    # 0  F,30   0, 1, 6                          3  1
    # 1  F,30   0, 1, 6                          3  1
    # 2  M,40   2, 3                             2  1
    # 3  M,41   none                             0  0
    # 4  F,50   4                                1  1   unique true match
    # 5  M,60   7                                1  0   unique false match
    # 6  F,70   none                             0  0
    # 7  M,65   none                             0  0
    r = match_rates(CONFIDENTIAL, RELEASED, ["sex", "age"])
    assert r.per_record["c"].tolist() == [3, 3, 2, 0, 1, 1, 0, 0]
    assert r.per_record["T"].tolist() == [1, 1, 1, 0, 1, 0, 0, 0]
    assert r.n == 8
    assert r.expected == pytest.approx(1 / 3 + 1 / 3 + 1 / 2 + 1)  # 13/6
    assert r.expected_share == pytest.approx(13 / 6 / 8)
    assert r.true_rate == pytest.approx(1 / 8)
    assert r.false_rate == pytest.approx(1 / 2)  # j=5 out of the unique j=4, 5
    assert r.per_record.index.equals(CONFIDENTIAL.index)


def test_match_rates_with_tolerance_by_hand():
    # age matches within 1 year:
    # j  keys   released rows                     c  T
    # 0  F,30   0 (30), 1 (30), 6 (30)            3  1
    # 1  F,30   same                              3  1
    # 2  M,40   2 (40), 3 (40)                    2  1
    # 3  M,41   2 (40), 3 (40)                    2  1
    # 4  F,50   4 (50)                            1  1
    # 5  M,60   5 (61), 7 (60)                    2  1
    # 6  F,70   none                              0  0
    # 7  M,65   none (7 was released as 60)       0  0
    for tolerance in (1, 1.0, {"age": 1}):
        r = match_rates(CONFIDENTIAL, RELEASED, ["sex", "age"], tolerance=tolerance)
        assert r.per_record["c"].tolist() == [3, 3, 2, 2, 1, 2, 0, 0]
        assert r.per_record["T"].tolist() == [1, 1, 1, 1, 1, 1, 0, 0]
        assert r.expected == pytest.approx(1 / 3 + 1 / 3 + 1 / 2 + 1 / 2 + 1 + 1 / 2)  # 19/6
        assert r.true_rate == pytest.approx(1 / 8)
        assert r.false_rate == 0.0


def test_match_rates_missing_keys_and_no_unique_match():
    conf = pd.DataFrame({"g": ["a", None, None], "x": [1.0, np.nan, 2.0]})
    rel = pd.DataFrame({"g": ["a", None, None], "x": [1.0, np.nan, np.nan]})
    # exact: (a,1)->{0}; (NA,NaN)->{1, 2}; (NA,2)->{}; so c = 1, 2, 0.
    r = match_rates(conf, rel, ["g", "x"])
    assert r.per_record["c"].tolist() == [1, 2, 0]
    assert r.per_record["T"].tolist() == [1, 1, 0]
    # within 5, a missing x still matches only a missing x (with one numeric
    # key and with two).
    r = match_rates(conf, rel, ["g", "x"], tolerance=5.0)
    assert r.per_record["c"].tolist() == [1, 2, 0]
    r = match_rates(conf.assign(y=0.0), rel.assign(y=1.0), ["g", "x", "y"], tolerance=5.0)
    assert r.per_record["c"].tolist() == [1, 2, 0]
    assert r.per_record["T"].tolist() == [1, 1, 0]
    # ties everywhere: no unique match, so the false match rate is undefined.
    tied = match_rates(conf.iloc[1:], rel.iloc[1:], ["g"])
    assert tied.per_record["c"].tolist() == [2, 2]
    assert math.isnan(tied.false_rate)
    assert tied.true_rate == 0.0


@pytest.mark.parametrize("keys", [["x"], ["x", "y"]])
def test_match_rates_tolerance_window_is_closed(monkeypatch, keys):
    # Without the rounding slack, |difference| == tolerance must still match
    # (integers, so the arithmetic is exact): 9 and 11 are 1 from 10, 8 is not.
    monkeypatch.setattr(risk_matching, "_TOLERANCE_SLACK", 0.0)
    conf = pd.DataFrame({"x": [10, 10, 10], "y": [0, 0, 0]})
    rel = pd.DataFrame({"x": [9, 11, 8], "y": [1, 0, 0]})
    r = match_rates(conf, rel, keys, tolerance=1)
    assert r.per_record["c"].tolist() == [2, 2, 2]
    assert r.per_record["T"].tolist() == [1, 1, 0]


def test_match_rates_tolerance_is_inclusive_for_decimal_data():
    conf = pd.DataFrame({"x": [1.0, 1.0, 0.3]})
    rel = pd.DataFrame({"x": [1.1, 1.2, 0.4]})
    # 1.1 - 1.0 is 0.10000000000000009 in binary and 0.4/0.1 - 0.3/0.1 is
    # 1.0000000000000004, yet both pairs are within 0.1 as written; 1.2 is 0.2
    # away. Record 0 matches released 0 only; record 1 also matches released 0
    # (its own, 1.2, is too far); 0.3 matches 0.4 only.
    r = match_rates(conf, rel, "x", tolerance=0.1)
    assert r.per_record["c"].tolist() == [1, 1, 1]
    assert r.per_record["T"].tolist() == [1, 0, 1]


@pytest.mark.parametrize("tol", [{"u": 1.0, "v": 0.25}, {"v": 0.25}, {"u": 2.0}])
def test_match_rates_with_tolerances_against_brute_force(tol):
    rng = np.random.default_rng(7)
    n = 300
    conf = pd.DataFrame({
        "g": rng.choice(["a", "b", "c"], n),
        "u": rng.integers(0, 20, n).astype(float),
        "v": rng.normal(0, 1, n).round(1),
    })
    rel = conf.copy()
    rel["u"] += rng.integers(-2, 3, n)
    rel["v"] += rng.normal(0, 0.2, n).round(1)
    rel.loc[rng.random(n) < 0.1, "g"] = "a"
    # All n x n pairs: match[j, i] says released row i matches record j's keys.
    def near(col):
        diff = np.abs(conf[col].to_numpy()[:, None] - rel[col].to_numpy()[None, :])
        return diff <= tol[col] + 1e-9 if col in tol else diff == 0

    match = (conf["g"].to_numpy()[:, None] == rel["g"].to_numpy()[None, :]) & near("u") & near("v")
    c = match.sum(axis=1)
    t = np.diag(match).astype(int)
    assert (c == 0).any() and (c == 1).any() and (c > 2).any()  # the example has every case
    r = match_rates(conf, rel, ["g", "u", "v"], tolerance=tol)
    np.testing.assert_array_equal(r.per_record["c"], c)
    np.testing.assert_array_equal(r.per_record["T"], t)
    assert r.expected == pytest.approx(np.sum(t[c > 0] / c[c > 0]))
    assert r.true_rate == pytest.approx(np.sum((c == 1) & (t == 1)) / n)
    assert r.false_rate == pytest.approx(np.sum((c == 1) & (t == 0)) / np.sum(c == 1))


@pytest.mark.parametrize("kwargs, error", [
    ({"keys": []}, ValueError),
    ({"keys": ["height"]}, ValueError),
    ({"keys": ["age"], "tolerance": -1.0}, ValueError),
    ({"keys": ["age"], "tolerance": math.inf}, ValueError),
    ({"keys": ["sex", "age"], "tolerance": {"sex": 1.0}}, ValueError),
    ({"keys": ["age"], "tolerance": "1"}, TypeError),
])
def test_match_rates_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        match_rates(CONFIDENTIAL, RELEASED, **kwargs)


def test_match_rates_needs_row_linked_frames():
    with pytest.raises(DataError, match="row-linked"):
        match_rates(CONFIDENTIAL, RELEASED.iloc[:5], ["sex"])


# --- Gower distance to closest record ---------------------------------------

REAL = pd.DataFrame({
    "colour": ["red", "blue", "green"],
    "size": [1.0, 3.0, np.nan],
    "weight": [10, 20, 25],
})
SYNTH = pd.DataFrame({
    "colour": ["red", "green", "blue", "green"],
    "size": [2.0, 1.0, 5.0, np.nan],
    "weight": [30, 10, 20, 30],
})


def test_gower_dcr_by_hand():
    # Ranges from both frames: size 1..5 (4), weight 10..30 (20); p = 3.
    # A missing size is 1 from any size and 0 from a missing size.
    #        s0 red,2,30            s1 green,1,10       s2 blue,5,20        s3 green,NaN,30
    # r0  (0+1/4+20/20)/3=1.25/3  (1+0+0)/3=1/3     (1+1+1/2)/3        (1+1+1)/3
    # r1  (1+1/4+1/2)/3          (1+1/2+1/2)/3     (0+2/4+0)/3=1/6    (1+1+1/2)/3
    # r2  (1+1+1/4)/3            (0+1+3/4)/3       (1+1+1/4)/3        (0+0+5/20)/3=1/12
    np.testing.assert_allclose(gower_dcr(REAL, SYNTH), [1 / 3, 1 / 6, 1 / 12], atol=1e-12)


def test_gower_dcr_by_hand_with_schema_bounds():
    schema = SimpleNamespace(columns={
        "colour": SimpleNamespace(kind="categorical", categories=("red", "green", "blue")),
        "size": SimpleNamespace(kind="numeric", bounds=(0.0, 10.0)),
        "weight": SimpleNamespace(kind="numeric", bounds=(0.0, 40.0)),
        "id": SimpleNamespace(kind="excluded"),
    })
    real = REAL.assign(id=[1, 2, 3])
    synth = SYNTH.assign(id=[4, 5, 6, 7])
    # Ranges from the schema: size 10, weight 40; the id column is ignored.
    # r0: s0 (0+1/10+20/40)/3 = 0.6/3 = 0.2;  s1 1/3
    # r1: s2 (0+2/10+0)/3 = 0.2/3
    # r2: s3 (0+0+5/40)/3 = 0.125/3;          s1 (0+1+15/40)/3
    np.testing.assert_allclose(
        gower_dcr(real, synth, schema=schema), [0.2, 0.2 / 3, 0.125 / 3], atol=1e-12
    )
    # Values outside the bounds are clipped first: size 30 counts as 10,
    # so r0 (size 1) is (0 + 9/10 + 0)/3 from it.
    far = pd.DataFrame({"colour": ["red"], "size": [30.0], "weight": [10], "id": [0]})
    assert gower_dcr(real.iloc[:1], far, schema=schema)[0] == pytest.approx(0.9 / 3)


def test_gower_dcr_missing_value_rule():
    real = pd.DataFrame({"x": [np.nan, 0.5, np.nan], "g": ["a", "a", None]})
    synth = pd.DataFrame({"x": [0.0, 1.0], "g": ["a", "b"]})
    # Range of x is 1, p = 2. A missing x is 1 from any x; a missing g is 1
    # from any g.
    # r0 (NaN, a): s0 (1 + 0)/2 = 0.5      s1 (1 + 1)/2 = 1
    # r1 (0.5, a): s0 (0.5 + 0)/2 = 0.25   s1 (0.5 + 1)/2 = 0.75
    # r2 (NaN, NA): s0 and s1 (1 + 1)/2 = 1
    np.testing.assert_allclose(gower_dcr(real, synth), [0.5, 0.25, 1.0], atol=1e-12)


def _brute_force_gower(real: pd.DataFrame, synth: pd.DataFrame) -> np.ndarray:
    # Gower's definition on every (real, synth) pair, one column at a time.
    total = np.zeros((len(real), len(synth)))
    for col in real.columns:
        a, b = real[col], synth[col]
        if pd.api.types.is_numeric_dtype(a):
            span = pd.concat([a, b]).max() - pd.concat([a, b]).min()
            d = np.abs(a.to_numpy(float)[:, None] - b.to_numpy(float)[None, :]) / span
        else:
            d = (a.to_numpy(object)[:, None] != b.to_numpy(object)[None, :]).astype(float)
        na_a, na_b = a.isna().to_numpy()[:, None], b.isna().to_numpy()[None, :]
        total += np.where(na_a & na_b, 0.0, np.where(na_a | na_b, 1.0, d))
    return (total / real.shape[1]).min(axis=1)


def _mixed_frame(rng: np.random.Generator, n: int) -> pd.DataFrame:
    frame = pd.DataFrame({
        "a": rng.normal(0, 1, n),
        "b": rng.exponential(5, n),
        "n": rng.integers(0, 10, n),
        "c": rng.choice(["x", "y", "z"], n),
        "d": rng.choice(["p", "q"], n),
        # more categories than the search puts in groups: stays in the tree
        "e": rng.integers(0, 5000, n).astype(str),
    })
    frame.loc[rng.random(n) < 0.15, "b"] = np.nan
    frame.loc[rng.random(n) < 0.15, "c"] = np.nan
    return frame


@pytest.mark.parametrize("columns", [
    ["a", "b", "n", "c", "d"],
    ["a", "b", "n", "c", "d", "e"],
    ["a", "b", "n"],
    ["c", "d", "e"],
    ["c", "d"],
])
@pytest.mark.parametrize("pairs", [0, distance_module.BRUTE_FORCE_PAIRS])  # KD-trees only; the default
def test_gower_dcr_matches_brute_force(columns, pairs, monkeypatch):
    monkeypatch.setattr(distance_module, "BRUTE_FORCE_PAIRS", pairs)
    rng = np.random.default_rng(42)
    real, synth = _mixed_frame(rng, 60)[columns], _mixed_frame(rng, 800)[columns]
    if "d" in columns:
        # a category combination no synthetic record has, so the nearest
        # record must be found among other combinations
        synth = synth[synth["d"] == "p"]
    np.testing.assert_allclose(gower_dcr(real, synth), _brute_force_gower(real, synth), atol=1e-12)


def test_measured_outright_and_through_trees_the_distances_are_the_same_floats(monkeypatch):
    # The search measures a few records against a group outright and many through a KD-tree: summed in
    # the same order, both give the same float, so the DCR does not depend on the group sizes.
    rng = np.random.default_rng(8)
    columns = ["a", "b", "n", "c", "d"]  # "e" has thousands of categories: one-hot, too wide here
    real, synth = _mixed_frame(rng, 3000)[columns], _mixed_frame(rng, 20_000)[columns]
    monkeypatch.setattr(distance_module, "BRUTE_FORCE_PAIRS", 2**26)  # every search outright
    outright = gower_dcr(real, synth)
    monkeypatch.setattr(distance_module, "BRUTE_FORCE_PAIRS", 0)  # every search through a tree
    np.testing.assert_array_equal(gower_dcr(real, synth), outright)
    assert np.isnan(synth["b"]).any() and (outright > 0).all()


def _brute_force_gower_on(real: pd.DataFrame, synth: pd.DataFrame, frames: list[pd.DataFrame]) -> np.ndarray:
    # As _brute_force_gower, each numeric column's range taken over all ``frames`` (one scale for all).
    total = np.zeros((len(real), len(synth)))
    for col in real.columns:
        a, b = real[col], synth[col]
        if pd.api.types.is_numeric_dtype(a):
            every = pd.concat([f[col] for f in frames])
            d = np.abs(a.to_numpy(float)[:, None] - b.to_numpy(float)[None, :]) / (every.max() - every.min())
        else:
            d = (a.to_numpy(object)[:, None] != b.to_numpy(object)[None, :]).astype(float)
        na_a, na_b = a.isna().to_numpy()[:, None], b.isna().to_numpy()[None, :]
        total += np.where(na_a & na_b, 0.0, np.where(na_a | na_b, 1.0, d))
    return (total / real.shape[1]).min(axis=1)


def test_distance_risk_searches_are_gower_over_all_of_the_same_records():
    """Each of distance_risk's three searches (the records it measures, the held-out ones, its baseline's
    sample against random public-domain data) gives every record's exact Gower distance to the nearest of
    all the records searched, as a brute force over every pair finds it; the draws are redone here in the
    documented order (the measured subsamples, the random data, the baseline's sample) from the same seed.
    Each search runs and is freed before the next (bench/bench_memory.py), so this is the check that what
    is freed early was no longer needed."""
    rng = np.random.default_rng(31)
    columns = ["a", "b", "n", "c", "d"]
    train, synth, holdout = (_mixed_frame(rng, n)[columns] for n in (300, 2000, 250))
    got = distance_module.distance_risk(train, synth, holdout=holdout, seed=9, max_rows=120)

    draws = np.random.default_rng(9)
    measured = train.iloc[np.sort(draws.choice(300, size=120, replace=False))]
    held = holdout.iloc[np.sort(draws.choice(250, size=120, replace=False))]
    domains = {c: distance_module.column_domain(c, [train, synth, holdout], None) for c in columns}
    noise = distance_module.random_public_data(columns, domains, len(synth), draws)
    sample = measured.iloc[np.sort(draws.choice(120, size=120, replace=False))]  # BASELINE_ROWS > 120: all
    frames = [measured, synth, held, noise]
    np.testing.assert_allclose(got.dcr_train, _brute_force_gower_on(measured, synth, frames), atol=1e-12)
    np.testing.assert_allclose(got.dcr_holdout, _brute_force_gower_on(held, synth, frames), atol=1e-12)
    np.testing.assert_allclose(got.dcr_baseline, _brute_force_gower_on(sample, noise, frames), atol=1e-12)
    assert got.measured == (120, 300) and (got.dcr_baseline > 0).all()


def _survey_frame(rng: np.random.Generator, n: int, *, skew: float = 1.0) -> pd.DataFrame:
    """Mostly categorical records, as a household survey: eight category columns of 2 to 12 levels (their
    shares tilted by ``skew``) and two numeric ones with many zeros and some missing values."""
    frame = pd.DataFrame({f"c{j}": rng.choice([f"v{k}" for k in range(levels)], n,
                                             p=(w := np.arange(1, levels + 1) ** skew) / w.sum())
                          for j, levels in enumerate((12, 9, 7, 6, 5, 4, 3, 2))})
    frame["hours"] = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(1, 60, n))
    frame["income"] = np.where(rng.random(n) < 0.3, 0.0, rng.lognormal(10, 1, n))
    frame.loc[rng.random(n) < 0.1, "income"] = np.nan
    return frame


def test_wide_tables_find_the_nearest_among_candidates_exactly(monkeypatch):
    # Issue 31.11: eight category columns make 57 tree coordinates, so every group is measured outright and
    # the records that agree with a real record on a whole block of categories are searched first, in two
    # blocks, then three, then four; half the real records come from the other end of each category's shares,
    # so some settle in each round (nearest under 2/10, 3/10, 4/10) and some only in the group search.
    rng = np.random.default_rng(31)
    real = pd.concat([_survey_frame(rng, 150), _survey_frame(rng, 150, skew=-2.0)], ignore_index=True)
    synth = _survey_frame(rng, 3000)
    expected = _brute_force_gower(real, synth)
    assert [b.size for b in np.split(np.sort(expected), np.searchsorted(np.sort(expected), [0.2, 0.3, 0.4]))] == \
        [62, 95, 97, 46]  # every way is taken
    found = gower_dcr(real, synth)
    np.testing.assert_allclose(found, expected, atol=1e-12)
    # The same floats as the group search alone, measured outright and through trees.
    monkeypatch.setattr(distance_module, "BLOCK_ROUNDS", ())
    np.testing.assert_array_equal(gower_dcr(real, synth), found)
    monkeypatch.setattr(distance_module, "TREE_MAX_COORDINATES", 10_000)  # trees allowed at any width
    monkeypatch.setattr(distance_module, "BRUTE_FORCE_PAIRS", 0)  # and always taken
    np.testing.assert_array_equal(gower_dcr(real, synth), found)


def test_on_a_survey_the_candidate_search_measures_a_fraction_of_the_pairs(monkeypatch):
    # Issue 31.11's cost, counted rather than timed: on mostly categorical records whose nearest differs in two
    # or three categories, the group search measured half of all (real, synthetic) pairs (84% on
    # bench/survey_like.py); the candidate search measures a quarter of that, with the same floats.
    rng = np.random.default_rng(7)
    real, synth = _survey_frame(rng, 300), _survey_frame(rng, 3000)
    measured = {"pairs": 0}
    outright, candidates = distance_module._l1_nearest, distance_module._NearestGower._pair_distances

    def count_outright(numeric, codes, members, member_codes, weight):
        measured["pairs"] += len(numeric) * members.shape[1]
        return outright(numeric, codes, members, member_codes, weight)

    def count_candidates(self, numeric, codes, each, s_pos):
        measured["pairs"] += len(s_pos)
        return candidates(self, numeric, codes, each, s_pos)

    monkeypatch.setattr(distance_module, "_l1_nearest", count_outright)
    monkeypatch.setattr(distance_module._NearestGower, "_pair_distances", count_candidates)
    found = gower_dcr(real, synth)
    share = measured["pairs"] / (len(real) * len(synth))
    monkeypatch.setattr(distance_module, "BLOCK_ROUNDS", ())  # the group search alone
    measured["pairs"] = 0
    np.testing.assert_array_equal(gower_dcr(real, synth), found)
    share_before = measured["pairs"] / (len(real) * len(synth))
    assert share_before > 0.4 and share < share_before / 4, (share_before, share)


def test_counting_mismatches_gives_the_trees_floats(monkeypatch):
    # With three or more ungrouped category columns the outright search counts mismatches in bytes and
    # re-sums the nearest in the tree's order: the same floats as the trees and as adding the weights.
    rng = np.random.default_rng(5)
    real, synth = _survey_frame(rng, 400), _survey_frame(rng, 4000)
    monkeypatch.setattr(distance_module, "BLOCK_ROUNDS", ())
    counted = gower_dcr(real, synth)
    monkeypatch.setattr(distance_module, "COUNTED_COLUMNS", 10_000)  # every column's weights added
    np.testing.assert_array_equal(gower_dcr(real, synth), counted)
    monkeypatch.setattr(distance_module, "TREE_MAX_COORDINATES", 10_000)
    monkeypatch.setattr(distance_module, "BRUTE_FORCE_PAIRS", 0)
    np.testing.assert_array_equal(gower_dcr(real, synth), counted)
    np.testing.assert_allclose(counted, _brute_force_gower(real, synth), atol=1e-12)


def test_copies_have_zero_distance_and_are_counted():
    rng = np.random.default_rng(3)
    real = _mixed_frame(rng, 20)
    # Real rows 0, 5 and 7 copied (in another column order) among fresh rows;
    # row 7 twice.
    synth = pd.concat([_mixed_frame(rng, 30), real.iloc[[0, 5, 7, 7]]])[["e", "d", "c", "n", "b", "a"]]
    dcr = gower_dcr(real, synth)
    assert np.all(dcr[[0, 5, 7]] == 0.0)
    assert exact_copy_share(real, synth) == pytest.approx(3 / 20)
    assert exact_copy_share(real, real) == 1.0


def test_exact_copy_share_by_hand():
    real = pd.DataFrame({"a": [1, 1, 2, 3, 4], "b": ["x", "x", None, "y", "z"]})
    synth = pd.DataFrame({
        "a": [1.0, 2.0, 3.0000001, 4.0],
        "b": ["x", None, "y", "Z"],
        "extra": [0, 0, 0, 0],
    })
    # rows 0 and 1 (both (1, x)) and row 2 ((2, missing)) are copied; 3.0000001
    # is not 3 and "Z" is not "z".
    assert exact_copy_share(real, synth) == pytest.approx(3 / 5)
    with pytest.raises(DataError):
        exact_copy_share(real, synth.drop(columns="b"))


# --- membership inference ----------------------------------------------------

def test_membership_inference_cannot_tell_independent_samples():
    rng = np.random.default_rng(2024)
    members, non_members, synth = (_population(rng, 600) for _ in range(3))
    r = membership_inference(members, non_members, synth)
    # Under no signal the AUC has sd sqrt((600+600+1)/(12*600*600)) = 0.017;
    # 0.07 is four of them.
    assert abs(r.auc - 0.5) < 0.07
    assert r.dcr_members.shape == (600,) and r.dcr_non_members.shape == (600,)
    assert np.all(np.diff(r.thresholds) > 0) and r.thresholds[0] == -np.inf
    assert r.fpr[-1] == 1.0 and r.tpr[-1] == 1.0


def test_membership_inference_sees_copied_members():
    rng = np.random.default_rng(2025)
    members, non_members = _population(rng, 300), _population(rng, 300)
    r = membership_inference(members, non_members, synth=members)
    # Members are at distance 0; non-members, continuous, never are.
    assert np.all(r.dcr_members == 0.0) and np.all(r.dcr_non_members > 0.0)
    assert r.auc == 1.0
    # The ROC point at threshold 0 catches every member and no non-member.
    at_zero = np.flatnonzero(r.thresholds == 0.0)[0]
    assert (r.fpr[at_zero], r.tpr[at_zero]) == (0.0, 1.0)


def test_membership_inference_uses_one_scale_for_both_groups():
    # Numeric range 0..10 comes from all three frames: the non-member at 10
    # is 10/10 from the synthetic 0, not 10/range(non_members, synth).
    r = membership_inference(
        pd.DataFrame({"x": [1.0]}), pd.DataFrame({"x": [10.0]}), pd.DataFrame({"x": [0.0]})
    )
    assert r.dcr_members.tolist() == [pytest.approx(0.1)]
    assert r.dcr_non_members.tolist() == [pytest.approx(1.0)]


# --- real data with missing values -------------------------------------------

def test_penguins_with_missing_values_run():
    penguins = pd.read_csv(DATA / "penguins.csv")
    assert penguins.isna().any().any()
    rng = np.random.default_rng(11)
    order = rng.permutation(len(penguins))
    members = penguins.iloc[order[:170]]
    non_members = penguins.iloc[order[170:]]
    # A "synthesis" that copies half the members and shuffles each column of the rest.
    shuffled = members.iloc[85:].apply(lambda col: col.sample(frac=1.0, random_state=1).to_numpy())
    synth = pd.concat([members.iloc[:85], shuffled], ignore_index=True)

    dcr = gower_dcr(members, synth)
    assert dcr.shape == (170,) and np.all((dcr >= 0) & (dcr <= 1 + 1e-12))
    assert np.all(dcr[:85] == 0.0)
    assert exact_copy_share(members, synth) >= 85 / 170
    r = membership_inference(members, non_members, synth)
    assert 0.5 < r.auc <= 1.0
    release = penguins.copy()
    release["body_mass_g"] = release["body_mass_g"] + 25
    m = match_rates(penguins, release, ["species", "island", "sex", "body_mass_g"], tolerance=50)
    assert m.per_record["T"].sum() == len(penguins)  # every record is within 50 g of its own
    assert 0 < m.expected_share <= 1


# --- metric registry ---------------------------------------------------------

@pytest.mark.parametrize("name, goal, best", [
    ("expected_match_rate", "minimize", 0.0),
    ("true_match_rate", "minimize", 0.0),
    ("exact_copy_share", "minimize", 0.0),
    ("dcr_median", "maximize", 1.0),
    ("mia_auc", "target", 0.5),
])
def test_risk_metrics_are_registered(name, goal, best):
    info = METRICS[name]
    assert (info.kind, info.goal, info.best) == ("risk", goal, best)
    assert (info.lower, info.upper) == (0.0, 1.0)
