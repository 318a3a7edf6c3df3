"""Disclosure risk beyond match rates and DCR: key-match attribute disclosure, uniques, prediction,
intervals, references and the "no measurable disclosure" verdict.

Hand-built examples have every value written out; statistical checks are
seeded and state their slack.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import dpsynth_core as core
from dpsynth_core.holdout import split_holdout
from dpsynth_core.metric_info import METRICS, MetricContext
from dpsynth_core.risk import (
    Domain,
    RiskEstimate,
    applicable_measures,
    attribute_inference,
    auc_interval,
    distance_risk,
    formal_risk,
    hit_probability,
    key_match_disclosure,
    match_rates,
    match_risk,
    match_table,
    median_interval,
    random_public_data,
    sample_uniqueness,
    unique_reproduction,
    wilson_interval,
)
from dpsynth_core.rumap import metric_options, score
from tests.core.risk import population as _population

# --- a small hand-built example ---------------------------------------------------

# Keys sex and age; sensitive ill (categorical) or income (numeric).
CONF = pd.DataFrame({
    "sex": ["F", "F", "M", "M", "F"],
    "age": [30, 30, 40, 41, 50],
    "ill": ["flu", "cold", "flu", "asthma", "cold"],
    "income": [10.0, 20.0, 30.0, 40.0, 50.0],
})
SYNTH = pd.DataFrame({
    "sex": ["F", "F", "F", "M", "M", "F", "M"],
    "age": [30, 30, 30, 40, 40, 50, 60],
    "ill": ["flu", "flu", "cold", "cold", "flu", "cold", "flu"],
    "income": [12.0, 14.0, 100.0, 29.0, 33.0, 60.0, 0.0],
})
KEYS = ["sex", "age"]


def test_key_match_categorical_by_hand():
    # j  keys   synthetic rows with these keys   ill among them     guess   truth   revealed
    # 0  F,30   0, 1, 2                          flu, flu, cold     flu     flu     1
    # 1  F,30   0, 1, 2                          flu, flu, cold     flu     cold    0
    # 2  M,40   3, 4                             cold, flu (tie)    -       flu     1/2 (one of two modes)
    # 3  M,41   none                             -                  -       asthma  0
    # 4  F,50   5                                cold               cold    cold    1
    r = key_match_disclosure(CONF, SYNTH, KEYS, "ill")
    assert r.per_record["c"].tolist() == [3, 3, 2, 0, 1]
    assert r.per_record["revealed"].tolist() == [1.0, 0.0, 0.5, 0.0, 1.0]
    assert r.per_record["guess"].tolist()[:2] == ["flu", "flu"]
    assert r.per_record["guess"].iloc[3] is None
    assert r.share == pytest.approx(2.5 / 5)
    assert r.matched_share == pytest.approx(4 / 5)
    assert r.tolerance is None
    est = r.estimate
    # Baseline: a random guess among the 3 values seen (no schema): 1/3 for everyone.
    assert est.baseline == pytest.approx(1 / 3)
    # Released as is: j0 and j1 (F,30) tie flu/cold (1/2 each); j2, j3, j4 are alone, so revealed.
    assert est.original == pytest.approx((0.5 + 0.5 + 1 + 1 + 1) / 5)
    assert (est.lower, est.upper) == pytest.approx(wilson_interval(2.5, 5))
    assert est.holdout is None

    # Ages within 1 year: j3 (M,41) now meets rows 3 and 4 (M,40): a flu/cold tie, truth asthma.
    r = key_match_disclosure(CONF, SYNTH, KEYS, "ill", tolerance=1)
    assert r.per_record["c"].tolist() == [3, 3, 2, 2, 1]
    assert r.per_record["revealed"].tolist() == [1.0, 0.0, 0.5, 0.0, 1.0]

    # Declared categories set the random guess: 1 in 4.
    schema = SimpleNamespace(columns={"ill": SimpleNamespace(kind="categorical",
                                                             categories=("flu", "cold", "asthma", "other"))})
    assert key_match_disclosure(CONF, SYNTH, KEYS, "ill", schema=schema).estimate.baseline == pytest.approx(0.25)


def test_key_match_numeric_by_hand():
    # j  synthetic incomes matching the keys   mean guess   truth   |error|
    # 0  12, 14, 100                            42           10      32
    # 1  12, 14, 100                            42           20      22
    # 2  29, 33                                 31           30      1
    # 3  none                                   -            40      -
    # 4  60                                     60           50      10
    r = key_match_disclosure(CONF, SYNTH, KEYS, "income", sensitive_tolerance=5.0)
    assert r.per_record["guess"].tolist()[:3] == [42.0, 42.0, 31.0]
    assert math.isnan(r.per_record["guess"].iloc[3]) and r.per_record["guess"].iloc[4] == 60.0
    assert r.per_record["revealed"].tolist() == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert r.share == pytest.approx(1 / 5)
    # Within 10 (inclusive): j4 too.
    r = key_match_disclosure(CONF, SYNTH, KEYS, "income", sensitive_tolerance=10.0)
    assert r.per_record["revealed"].tolist() == [0.0, 0.0, 1.0, 0.0, 1.0]
    # Default tolerance: 5% of the public range [0, 100] = 5; random guess hits a 10-wide window: 0.1.
    schema = SimpleNamespace(columns={"income": SimpleNamespace(kind="numeric", bounds=(0.0, 100.0))})
    r = key_match_disclosure(CONF, SYNTH, KEYS, "income", schema=schema)
    assert r.tolerance == pytest.approx(5.0)
    assert r.share == pytest.approx(1 / 5)
    assert r.estimate.baseline == pytest.approx(0.1)


def test_key_match_with_two_tolerant_keys_matches_brute_force():
    rng = np.random.default_rng(5)
    conf = pd.DataFrame({"u": rng.integers(0, 6, 80), "v": rng.normal(0, 1, 80), "g": rng.choice(list("ab"), 80),
                         "s": rng.choice(list("xyz"), 80)})
    synth = pd.DataFrame({"u": rng.integers(0, 6, 120), "v": rng.normal(0, 1, 120), "g": rng.choice(list("ab"), 120),
                          "s": rng.choice(list("xyz"), 120)})
    tol = {"u": 1.0, "v": 0.3}
    r = key_match_disclosure(conf, synth, ["u", "v", "g"], "s", tolerance=tol)
    for j, row in conf.iterrows():
        hit = ((synth["u"] - row["u"]).abs() <= 1.0) & ((synth["v"] - row["v"]).abs() <= 0.3) & (synth["g"] == row["g"])
        counts = synth.loc[hit, "s"].value_counts()
        assert r.per_record["c"].iloc[j] == hit.sum()
        if hit.sum() == 0:
            expected = 0.0
        else:
            modes = counts[counts == counts.max()].index
            expected = 1 / len(modes) if row["s"] in modes else 0.0
        assert r.per_record["revealed"].iloc[j] == pytest.approx(expected), j
    # Records are queried in chunks; chunk edges change nothing.
    from dpsynth_core.risk.keymatch import _match_sums
    ones = np.ones((len(synth), 1))
    assert np.array_equal(_match_sums(conf, synth, ["u", "v", "g"], tol, ones, chunk=7),
                          _match_sums(conf, synth, ["u", "v", "g"], tol, ones))


def test_unique_reproduction_by_hand():
    # Unique on (sex, age): j2 (M,40), j3 (M,41), j4 (F,50); j0 and j1 share F,30.
    # j2 M,40,flu: synthetic row 4 is M,40,flu -> reproduced
    # j3 M,41,asthma: no synthetic M,41 -> not
    # j4 F,50,cold: synthetic row 5 is F,50,cold -> reproduced
    r = unique_reproduction(CONF, SYNTH, KEYS, "ill")
    assert r.per_record["unique"].tolist() == [False, False, True, True, True]
    assert r.per_record["reproduced"].tolist() == [False, False, True, False, True]
    assert (r.n_unique, r.reproduced, r.share) == (3, 2, pytest.approx(2 / 3))
    # Baseline: 7 random rows from the domain read off the data (sex: 2 values; age: whole numbers
    # 30..60, 31 of them; ill: 3 values) each hit a record with probability 1/186.
    assert r.estimate.baseline == pytest.approx(1 - (1 - 1 / 186) ** 7)
    assert r.estimate.original == 1.0
    # Income within 5: j2 (30) meets 29 -> yes; j4 (50) vs 60 -> no. Within 10: j4 too.
    assert unique_reproduction(CONF, SYNTH, KEYS, "income", sensitive_tolerance=5.0).reproduced == 1
    assert unique_reproduction(CONF, SYNTH, KEYS, "income", sensitive_tolerance=10.0).reproduced == 2


def test_sample_uniqueness_by_hand():
    # Real keys F30, F30, M40, M41, F50 -> 3 of 5 unique; synthetic F30 x3, M40 x2, F50, M60 -> 2 of 7.
    r = sample_uniqueness(CONF, SYNTH, KEYS, seed=0)
    assert (r.real_share, r.synth_share) == (pytest.approx(3 / 5), pytest.approx(2 / 7))
    assert r.estimate.original == pytest.approx(3 / 5)
    # One binary key in 1000 random rows: essentially never unique.
    r = sample_uniqueness(pd.DataFrame({"g": ["a", "b"]}), pd.DataFrame({"g": ["a"] * 1000}), "g", seed=0)
    assert r.estimate.baseline == 0.0 and r.synth_share == 0.0


def test_roles_are_checked():
    with pytest.raises(ValueError, match="must not also be a key"):
        key_match_disclosure(CONF, SYNTH, KEYS, "age")
    with pytest.raises(ValueError, match="not a column"):
        unique_reproduction(CONF, SYNTH.drop(columns="ill"), KEYS, "ill")
    with pytest.raises(ValueError, match="sensitive_tolerance"):
        key_match_disclosure(CONF, SYNTH, KEYS, "income", sensitive_tolerance=-1.0)
    with pytest.raises(core.DataError):
        key_match_disclosure(CONF, SYNTH.iloc[:0], KEYS, "ill")
    with pytest.raises(ValueError, match="not columns of holdout"):
        key_match_disclosure(CONF, SYNTH, KEYS, "ill", holdout=CONF.drop(columns="age"))


# --- match rates: the per-record table and the references ----------------------------

MR_CONF = pd.DataFrame({"sex": list("FFMMFMFM"), "age": [30, 30, 40, 41, 50, 60, 70, 65]})
MR_REL = pd.DataFrame({"sex": list("FFMMFMFM"), "age": [30, 30, 40, 40, 50, 61, 30, 60]})


def test_match_table_by_hand():
    # c = [3, 3, 2, 0, 1, 1, 0, 0], T = [1, 1, 1, 0, 1, 0, 0, 0] (tests/core/risk/test_risk.py), so
    # T/c = [1/3, 1/3, 1/2, 0, 1, 0, 0, 0]: riskiest first, then fewest matches, no match last.
    rates = match_rates(MR_CONF, MR_REL, ["sex", "age"])
    table = match_table(MR_CONF, rates, ["sex", "age"])
    assert table.index.tolist() == [4, 2, 0, 1, 5, 3, 6, 7]
    assert table["matches (c_j)"].tolist() == [1, 2, 3, 3, 1, 0, 0, 0]
    assert table["own row among them (T_j)"].tolist() == [True, True, True, True, False, False, False, False]
    assert table["risk (T_j / c_j)"].tolist() == pytest.approx([1, 1 / 2, 1 / 3, 1 / 3, 0, 0, 0, 0])
    assert table["key: age"].tolist() == [50, 40, 30, 30, 60, 41, 70, 65]


def test_match_risk_references():
    r = match_risk(MR_CONF, MR_REL, ["sex", "age"])
    exp, true = r.estimates["expected_match_rate"], r.estimates["true_match_rate"]
    assert exp.value == pytest.approx(13 / 6 / 8) and true.value == pytest.approx(1 / 8)
    # Released as is: 7 distinct key combinations among 8 records; 6 records unique.
    assert exp.original == pytest.approx(7 / 8) and true.original == pytest.approx(6 / 8)


def test_match_risk_baseline_formula_against_simulation():
    # Keys from a public domain of 2 x 4 = 8 combinations; the confidential records lie inside, so a
    # random row-linked release hits record j's keys with pi = 1/8.
    schema = SimpleNamespace(columns={"sex": SimpleNamespace(kind="categorical", categories=("F", "M")),
                                      "age": SimpleNamespace(kind="numeric", bounds=(30, 33), integer=True)})
    conf = pd.DataFrame({"sex": list("FFMMFMFM"), "age": [30, 30, 31, 32, 33, 30, 31, 33]})
    r = match_risk(conf, conf, ["sex", "age"], schema=schema)
    n, pi = 8, 1 / 8
    assert r.estimates["expected_match_rate"].baseline == pytest.approx((1 - (1 - pi) ** n) / n)
    assert r.estimates["true_match_rate"].baseline == pytest.approx(pi * (1 - pi) ** (n - 1))
    # Monte Carlo: 20,000 random releases, brute-force c_j and T_j.
    rng = np.random.default_rng(9)
    draws = 20_000
    rel = rng.integers(0, 2, (draws, n)) * 4 + rng.integers(0, 4, (draws, n))  # cell ids 0..7
    own = (conf["sex"] == "M").to_numpy() * 4 + (conf["age"] - 30).to_numpy()
    c = (rel[:, None, :] == own[None, :, None]).sum(axis=2)
    t = rel == own[None, :]
    expected = np.where(c > 0, t / np.maximum(c, 1), 0).mean(axis=1) / 1  # per draw, mean over records
    true = ((c == 1) & t).mean(axis=1)
    # Standard errors of these means over 20,000 draws are below 0.001.
    assert expected.mean() == pytest.approx(r.estimates["expected_match_rate"].baseline, abs=0.003)
    assert true.mean() == pytest.approx(r.estimates["true_match_rate"].baseline, abs=0.003)


# --- intervals ---------------------------------------------------------------------

def test_wilson_interval_by_hand():
    # 8 of 10, z = 1.959964: centre = (0.8 + z^2/20) / (1 + z^2/10) = 0.99207 / 1.38415 = 0.71674;
    # half = z sqrt(0.8*0.2/10 + z^2/400) / 1.38415 = 1.959964 * 0.160012 / 1.38415 = 0.22658.
    lo, hi = wilson_interval(8, 10)
    assert (lo, hi) == pytest.approx((0.71674 - 0.22658, 0.71674 + 0.22658), abs=1e-4)
    assert (lo, hi) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    from statsmodels.stats.proportion import proportion_confint
    for k, n in [(0, 7), (3, 7), (7, 7), (45, 300), (1, 1000)]:
        assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)
    assert wilson_interval(0, 50)[0] == 0.0 and wilson_interval(50, 50)[1] == 1.0
    assert wilson_interval(8, 10, confidence=0.99)[0] < lo
    for bad in [dict(successes=11, n=10), dict(successes=1, n=0), dict(successes=1, n=10, confidence=1.0)]:
        with pytest.raises(ValueError):
            wilson_interval(**bad)


def test_median_and_auc_intervals_by_hand():
    # Binomial(100, 1/2): 2.5% quantile 40, 97.5% quantile 60 -> order statistics x_(40) and x_(61).
    assert median_interval(np.arange(100.0)) == (39.0, 60.0)
    # Hanley & McNeil at AUC 0.8, 50 positives, 40 negatives:
    # Q1 = 0.8/1.2 = 0.6667, Q2 = 1.28/1.8 = 0.7111,
    # var = (0.16 + 49 (0.6667 - 0.64) + 39 (0.7111 - 0.64)) / 2000 = (0.16 + 1.3067 + 2.7733) / 2000 = 0.00212.
    lo, hi = auc_interval(0.8, 50, 40)
    half = 1.959964 * math.sqrt(0.00212)
    assert (lo, hi) == pytest.approx((0.8 - half, 0.8 + half), abs=1e-4)


# --- the verdict --------------------------------------------------------------------

def _estimate(**kw):
    base = dict(metric="key_match_disclosure", value=0.12, lower=0.09, upper=0.15, interval="Wilson",
                baseline=0.1, baseline_lower=0.1, baseline_upper=0.1, baseline_label="random guessing",
                original=0.9, n=400)
    return RiskEstimate(**{**base, **kw})


def test_within_sampling_error_says_no_measurable_disclosure():
    est = _estimate()  # 0.12 with interval 0.09-0.15 contains the baseline 0.1
    assert not est.beyond_baseline and est.finding == "none"
    sentence = est.verdict()
    assert "no measurable disclosure beyond the baseline" in sentence
    assert "0.12" in sentence and "0.09–0.15" in sentence and "0.1 for random guessing" in sentence
    assert "0.9" in sentence  # the original-data reference
    # Below the baseline is no disclosure either.
    assert _estimate(value=0.02, lower=0.01, upper=0.04).finding == "none"


def test_beyond_the_baseline_is_disclosure_unless_the_holdout_matches():
    # Without held-out records, beyond the random-data baseline is undecided, not disclosure (issue 20.4):
    # a synthesis that learned only the population beats random data too.
    est = _estimate(value=0.3, lower=0.26, upper=0.34)
    assert est.beyond_baseline and est.finding == "undetermined"
    assert "no measurable disclosure" not in est.verdict() and "measurable disclosure." not in est.verdict()
    assert "without held-out records" in est.verdict() and "Hold out rows to decide" in est.verdict()
    # A measure a holdout does not inform (match rates of a row-linked release) still says disclosure.
    linked = _estimate(value=0.3, lower=0.26, upper=0.34, holdout_applies=False)
    assert linked.finding == "disclosure" and linked.verdict().endswith("Released as is, the original data "
                                                                        "would score 0.9.")
    # Held-out records do as well: population-level inference, not disclosure about the records used.
    pop = _estimate(value=0.3, lower=0.26, upper=0.34, holdout=0.29, holdout_lower=0.22, holdout_upper=0.36)
    assert pop.beyond_holdout is False and pop.finding == "population"
    assert "never saw" in pop.verdict()
    worse = _estimate(value=0.3, lower=0.26, upper=0.34, holdout=0.12, holdout_lower=0.08, holdout_upper=0.17)
    assert worse.beyond_holdout is True and worse.finding == "disclosure"


def test_verdict_follows_each_measures_direction():
    # Median DCR: smaller is riskier.
    close = _estimate(metric="dcr_median", value=0.01, lower=0.008, upper=0.012, baseline=0.09,
                      baseline_lower=0.085, baseline_upper=0.095)
    assert close.riskier == -1 and close.beyond_baseline
    assert not _estimate(metric="dcr_median", value=0.2, lower=0.18, upper=0.22, baseline=0.09,
                         baseline_lower=0.085, baseline_upper=0.095).beyond_baseline
    # AUC, a target at 0.5.
    auc = _estimate(metric="mia_auc", value=0.52, lower=0.49, upper=0.55, baseline=0.5, baseline_lower=0.5,
                    baseline_upper=0.5)
    assert auc.finding == "none"
    # (built from the holdout itself, so holdout_applies=False as distance_risk makes it)
    assert _estimate(metric="mia_auc", value=0.7, lower=0.65, upper=0.75, baseline=0.5, baseline_lower=0.5,
                     baseline_upper=0.5, holdout_applies=False).finding == "disclosure"
    # A paired interval of the excess overrides the two intervals.
    assert _estimate(excess_lower=0.005, excess_upper=0.035).beyond_baseline
    nan = _estimate(value=math.nan, lower=math.nan, upper=math.nan)
    assert nan.finding == "none" and "not measurable" in nan.verdict()


# --- distances with a holdout -----------------------------------------------------------

def test_distance_risk_copies_train_vs_holdout():
    rng = np.random.default_rng(21)
    train, holdout = _population(rng, 300), _population(rng, 300)
    synth = pd.concat([train.iloc[:60], _population(rng, 240)], ignore_index=True)
    r = distance_risk(train, synth, holdout=holdout, seed=0)
    assert np.all(r.dcr_train[:60] == 0.0) and np.all(r.dcr_holdout > 0.0)
    assert r.copies_train == pytest.approx(60 / 300) and r.copies_holdout == 0.0
    copies = r.estimates["exact_copy_share"]
    assert (copies.value, copies.holdout, copies.original) == (pytest.approx(0.2), 0.0, 1.0)
    assert (copies.lower, copies.upper) == pytest.approx(wilson_interval(60, 300))
    assert copies.baseline == 0.0  # continuous columns: random data never copies a record
    assert copies.finding == "disclosure" and copies.beyond_holdout
    assert r.dcr_baseline.shape == (300,)  # fewer records than BASELINE_ROWS: all of them


def test_distance_risk_membership_independent_vs_copied():
    rng = np.random.default_rng(22)
    train, holdout, other = _population(rng, 500), _population(rng, 500), _population(rng, 500)
    independent = distance_risk(train, other, holdout=holdout, seed=0)
    mia = independent.estimates["mia_auc"]
    # sd of the AUC under no signal is about 0.018 here; 0.07 is four of them.
    assert abs(mia.value - 0.5) < 0.07 and mia.finding == "none"
    assert "no measurable disclosure beyond the baseline" in mia.verdict()
    assert mia.original == 1.0  # continuous: no holdout record duplicates a training one
    # Closer than random data, but no closer than for records never seen.
    assert independent.estimates["dcr_median"].finding == "population"

    copied = distance_risk(train, train, holdout=holdout, seed=0)
    assert copied.membership.auc == 1.0 and copied.estimates["mia_auc"].finding == "disclosure"
    assert copied.estimates["dcr_median"].value == 0.0
    assert np.allclose(copied.membership.dcr_members, 0.0)


def test_distance_risk_without_holdout_and_seeded():
    rng = np.random.default_rng(23)
    train, synth = _population(rng, 200), _population(rng, 200)
    a = distance_risk(train, synth, seed=4)
    b = distance_risk(train, synth, seed=4)
    assert a.membership is None and "mia_auc" not in a.estimates and a.dcr_holdout is None
    assert np.array_equal(a.dcr_baseline, b.dcr_baseline)
    assert a.estimates["dcr_median"].holdout is None


# --- attribute disclosure by prediction ---------------------------------------------------

def _noise(rng, n, numeric=False):
    return pd.DataFrame({
        "g": rng.choice(list("abcd"), n),
        "x": rng.normal(0, 1, n),
        "s": rng.normal(50, 10, n) if numeric else rng.choice(["lo", "mid", "hi"], n),
    })


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_attribute_inference_equals_baseline_for_independent_noise(seed):
    # The sensitive column is independent of the keys in both frames. The intruder keeps a tree only
    # when it beats the constant guess on validation; either way the score must be the baseline's
    # within 0.03 (accuracy) or 3% (RMSE), and never "disclosure".
    rng = np.random.default_rng(seed)
    r = attribute_inference(_noise(rng, 2000), _noise(rng, 2000), ["g", "x"], "s", seed=seed)
    assert r.measure == "accuracy"
    assert abs(r.score - r.baseline) <= 0.03 and r.estimate.finding == "none"
    r = attribute_inference(_noise(rng, 2000, True), _noise(rng, 2000, True), ["g", "x"], "s", seed=seed)
    assert r.measure == "rmse"
    assert abs(r.score / r.baseline - 1) <= 0.03 and r.estimate.finding == "none"
    assert "no measurable disclosure beyond the baseline" in r.estimate.verdict()


def _related(rng, n):
    g = rng.choice(list("abcd"), n)
    s = np.where(np.isin(g, ["a", "b"]), "lo", "hi")
    flip = rng.random(n) < 0.1
    return pd.DataFrame({"g": g, "x": rng.normal(0, 1, n), "s": np.where(flip, "mid", s)})


def test_attribute_inference_sees_a_relation_and_tells_population_from_disclosure():
    rng = np.random.default_rng(30)
    train, holdout, synth = _related(rng, 1500), _related(rng, 500), _related(rng, 1500)
    r = attribute_inference(train, synth, ["g", "x"], "s", holdout=holdout, seed=0)
    assert r.score == pytest.approx(0.9, abs=0.03) and r.baseline < 0.5
    assert r.model.startswith("a decision tree")
    # The relation holds for anyone: held-out records are predicted as well.
    assert r.estimate.finding == "population"
    assert r.original == pytest.approx(0.9, abs=0.03)
    # Seeded: same seed, same result.
    again = attribute_inference(train, synth, ["g", "x"], "s", holdout=holdout, seed=0)
    assert (again.score, again.holdout) == (r.score, r.holdout)


def test_attribute_inference_needs_known_values():
    frame = pd.DataFrame({"g": list("ab"), "s": [np.nan, np.nan]})
    with pytest.raises(core.DataError, match="fewer than two known values"):
        attribute_inference(frame, frame, ["g"], "s")


# --- formal risk, domains and the applicability sentence -------------------------------

def test_formal_risk_from_ledgers():
    df, schema = core.load_bundled("penguins")
    dp = core.synthesize(df, "independent", epsilon=1.0, schema=schema)  # fresh entropy: DP (issue 15)
    r = formal_risk(dp.ledger)
    assert r.is_dp and r.epsilon == pytest.approx(1.0) and r.delta == 0.0
    assert r.exp_epsilon == pytest.approx(2.718281828)
    assert formal_risk({"is_dp": True, "epsilon_total": 10.0, "delta": 1e-6}).exp_epsilon == pytest.approx(22026.4658)
    assert formal_risk({"is_dp": True, "epsilon_total": 800.0, "delta": 0.0}).exp_epsilon == math.inf
    cart = formal_risk(core.synthesize(df, "cart", schema=schema, seed=1).ledger)
    assert not cart.is_dp and cart.epsilon == math.inf


def test_hit_probability_and_random_data_by_hand():
    cat = Domain("categorical", ("a", "b", "c"), nullable=True)  # 4 equally likely values, missing included
    assert hit_probability(pd.Series(["a", None, "z"]), cat).tolist() == [0.25, 0.25, 0.0]
    ints = Domain("numeric", lower=1, upper=10, integer=True)
    assert hit_probability(pd.Series([5, 5.5]), ints).tolist() == [0.1, 0.0]
    assert hit_probability(pd.Series([1.0]), ints, tolerance=2.0).tolist() == [0.3]  # 1, 2, 3
    drawn = random_public_data(["c", "i"], {"c": cat, "i": ints}, 4000, np.random.default_rng(0))
    assert set(drawn["c"].dropna()) == {"a", "b", "c"}
    assert drawn["c"].isna().mean() == pytest.approx(0.25, abs=0.03)
    assert drawn["i"].between(1, 10).all() and (drawn["i"] % 1 == 0).all()
    # Categories equal to pandas (1 and True) are drawn as one value, each as often as a declared category
    # (binomial sd of a share of 1/4 in 4,000 draws: 0.007; 0.03 is four of them).
    equal = Domain("categorical", (1, True, "a"), nullable=True)
    drawn = random_public_data(["e"], {"e": equal}, 4000, np.random.default_rng(1))["e"]
    assert set(drawn.dropna()) == {1, "a"}
    assert (drawn == 1).mean() == pytest.approx(0.5, abs=0.03) and drawn.isna().mean() == pytest.approx(0.25, abs=0.03)


def test_applicability_sentence():
    df, schema = core.load_bundled("penguins")
    full = core.synthesize(df, "independent", epsilon=1.0, schema=schema, seed=1).ledger
    part = core.synthesize(df, "cart", schema=schema, seed=1, columns=["body_mass_g"]).ledger
    assert "fully synthetic" in applicable_measures(full, holdout=False)
    assert "ill-defined" in applicable_measures(full, holdout=False)
    text = applicable_measures(part, holdout=True)
    assert "partially synthetic" in text and "match rates" in text and "held out" in text


# --- registry and R-U scorers ---------------------------------------------------------------

# Direction and range of the key-based measures, from their definitions: shares in [0, 1], an RMSE in
# [0, inf) that is safer when larger.
KEY_BASED = {
    "key_match_disclosure": ("minimize", 0.0, 1.0),
    "uniques_reproduced": ("minimize", 0.0, 1.0),
    "synthetic_uniques": ("minimize", 0.0, 1.0),
    "attribute_accuracy": ("minimize", 0.0, 1.0),
    "attribute_rmse": ("maximize", 0.0, math.inf),
}


@pytest.mark.parametrize("name", sorted(KEY_BASED))
def test_key_based_measures_declare_direction_and_range(name):
    info = METRICS[name]
    assert (info.kind, info.goal, info.lower, info.upper) == ("risk", *KEY_BASED[name])
    assert "keys" in info.needs and info.on_map and name in metric_options("risk")


@pytest.mark.parametrize("name", sorted(n for n, m in METRICS.items() if m.kind == "risk" and m.on_map))
def test_every_computable_risk_measure_reaches_the_ru_map(name):
    assert name in metric_options("risk")


def test_scorers_need_keys_and_sensitive_and_match_the_functions():
    df, schema = core.load_bundled("penguins")
    used = schema.used
    train, holdout = split_holdout(df[used], 0.2, rng=np.random.default_rng(3))
    synth = core.synthesize(train, "cart", schema=schema, seed=3).data[used]
    names = sorted(KEY_BASED)
    bare = score(train, synth, schema=schema.with_roles(), seed=3, metrics=names)
    assert all(math.isnan(v) for v in bare.values())
    got = score(train, synth, schema=schema, seed=3, holdout=holdout, metrics=[*names, "mia_auc"])
    keys, sens = list(schema.keys), schema.sensitive  # body_mass_g: numeric, so accuracy is NaN
    assert got["key_match_disclosure"] == key_match_disclosure(train, synth, keys, sens, schema=schema).share
    assert got["uniques_reproduced"] == pytest.approx(unique_reproduction(train, synth, keys, sens,
                                                                          schema=schema).share, nan_ok=True)
    assert got["attribute_rmse"] == attribute_inference(train, synth, keys, sens, schema=schema, seed=3).score
    assert math.isnan(got["attribute_accuracy"])
    assert got["mia_auc"] == pytest.approx(distance_risk(train, synth, holdout=holdout, schema=schema).membership.auc)


def test_verdict_summary_names_each_group_most_serious_first():
    from dpsynth_core.risk import verdict_summary
    none = _estimate()                                                            # within sampling error
    undecided = _estimate(metric="dcr_median", value=0.01, lower=0.008, upper=0.012, baseline=0.09,
                          baseline_lower=0.085, baseline_upper=0.095)             # closer than random data
    disclosed = _estimate(value=0.3, lower=0.26, upper=0.34, holdout=0.12, holdout_lower=0.08, holdout_upper=0.17)
    nan = _estimate(value=math.nan)
    assert [e.finding for e in (none, undecided, disclosed)] == ["none", "undetermined", "disclosure"]
    assert verdict_summary([none, undecided, disclosed, nan]) == (
        "Verdicts on 4 measures: measurable disclosure on 1 measure: Key-match attribute disclosure; "
        "1 measure beyond the baseline of random data, undecided without held-out records (Median DCR): hold out rows to decide; no "
        "measurable disclosure on 1 measure; 1 measure not measurable (Key-match attribute disclosure).")
    assert verdict_summary([none, none]) == "Verdicts on 2 measures: no measurable disclosure on 2 measures."


def test_a_measure_these_data_cannot_give_is_nan_with_its_sentence_and_the_report_still_builds():
    # A DP synthesis can leave the sensitive column with no known value; attribute inference then has no model
    # to score. The registry gives NaN and the sentence, and the internal report says it instead of failing.
    df, schema = core.load_bundled("penguins")
    real = df.iloc[::2].reset_index(drop=True)
    result = core.synthesize(real, "independent", epsilon=2.0, schema=schema, seed=1, n=100)
    data = result.data.copy()
    data[schema.sensitive] = np.nan
    ctx = MetricContext(real[schema.used], data[schema.used], schema=schema, seed=0)
    rmse = METRICS["attribute_rmse"]
    assert math.isnan(rmse.value(ctx)) and rmse.estimated(ctx) is None
    assert "fewer than two known values" in rmse.explain(ctx, math.nan)
    html = core.report.internal_report(dataset_name="penguins", fingerprint="f", real=real,
                                       synthesis=dataclasses.replace(result, data=data, implicates=()),
                                       totals=core.privacy.Totals(None))
    assert "fewer than two known values" in html.decode("utf-8")


def test_combined_row_ids_agree_with_a_group_by_also_past_the_int64_packing_limit():
    # Independent reference: pandas numbers the groups of equal rows in order of first appearance. Four
    # columns of up to 2^20 codes pass 2^62 after three, so the re-factorising path runs too.
    from dpsynth_core.risk._base import combine_codes

    rng = np.random.default_rng(5)
    columns = [rng.integers(0, k, 5_000) for k in (3, 2 ** 20, 2 ** 20, 2 ** 20, 2)]
    columns[3][:2_500] = columns[3][2_500:]  # repeated rows, so groups are not all singletons
    for c in columns[:3] + columns[4:]:
        c[:2_500] = c[2_500:]
    expected = pd.DataFrame(np.column_stack(columns)).groupby(list(range(5)), sort=False).ngroup().to_numpy()
    got = combine_codes(columns, 5_000)
    assert np.array_equal(got, expected) and got.max() == 2_499


def test_exact_copy_share_agrees_with_a_set_of_row_tuples_on_random_tables():
    # Independent reference: each row as a tuple (missing as one sentinel), real rows found in the set of
    # synthetic rows. Few-valued columns give many copies and partial matches; a continuous column with
    # shared values and missing ones exercises the narrowing of candidates column by column.
    from dpsynth_core.risk.distance import exact_copy_share

    rng = np.random.default_rng(11)
    for _ in range(30):
        n_r, n_s = rng.integers(1, 60, size=2)
        pool = np.r_[rng.normal(size=4), np.nan]

        def frame(n):
            return pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y", None], n),
                                 "c": rng.choice(pool, n), "d": rng.integers(0, 2, n)})

        real, synth = frame(n_r), frame(n_s)
        if _ % 2:  # the same numbers in other dtypes (1 equals 1.0), as a synthesis returns them
            synth = synth.astype({"a": float, "d": "Int64"})

        def rows(df):
            return [tuple("∅" if pd.isna(v) else v for v in row) for row in df.itertuples(index=False)]

        found = set(rows(synth))
        expected = np.mean([row in found for row in rows(real)])
        assert exact_copy_share(real, synth) == pytest.approx(expected)
