"""The private schema estimate's mechanisms (dpsynth_core.privacy.domain): their thresholds and tails
against hand computations, and empirical (ε, δ) audits of what the estimate publishes.

The audits use the core's exact bounds (dpsynth_core.privacy.audit), with δ: a mechanism is (ε, δ)-DP when
P(M(D) ∈ E) ≤ e^ε P(M(D′) ∈ E) + δ for neighbours D, D′ and every event E, both ways round, so
log((P_lo(E | D) − δ) / P_up(E | D′)) bounds ε from below, with exact (Clopper–Pearson) bounds
Bonferroni-corrected over every event and both directions (family-wise level 0.05). Each audit runs
the mechanism 500 times on each dataset, drawn at once (``runs=500``), from the exact counts the
estimate itself reads (schema_estimate's counting functions), on the neighbours that are hardest for
it: the auditor puts the count that the extra record moves at the mechanism's threshold less one, so
the one record decides whether the value is published. The broken variants are the same mechanisms
with a tenth of the noise (run at 10ε, thresholds recomputed for it, claiming ε), and a thresholded
histogram that ignores δ (threshold 1); the same audit must flag them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import constraints
from dpsynth_core.privacy.audit import clopper_pearson
from dpsynth_core.privacy.domain import (LOG_EDGES, R10, Buckets, RangeHistogram, ThresholdedHistogram,
                                         clear_threshold, geometric_tail, round_outward, sum_tail, sum_threshold)
from dpsynth_core.privacy.mechanisms import Geometric
from dpsynth_core.schema_estimate import presence_counts, value_counts

RUNS = 500
EXTREME = 1e6  # four decades above the bulk: far beyond the range's tail window of ten buckets


def epsilon_delta_lower_bound(hits_d, hits_d2, runs: int, delta: float, alpha: float = 0.05) -> float:
    """The largest lower confidence bound of log((P(E|A) − δ)/P(E|B)) over the events and both directions."""
    hits_d, hits_d2 = np.atleast_1d(hits_d), np.atleast_1d(hits_d2)
    level = alpha / (4 * hits_d.size)
    lo_d, up_d = clopper_pearson(hits_d, runs, level)
    lo_d2, up_d2 = clopper_pearson(hits_d2, runs, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(lo_d - delta, 0)) - np.log(up_d2)
        two = np.log(np.maximum(lo_d2 - delta, 0)) - np.log(up_d)
    return float(np.nanmax(np.concatenate([one, two])))


# --- thresholds and tails by hand ---------------------------------------------------------------------

def test_thresholded_histogram_threshold_by_hand():
    # ε = ln 2: α = 1/2, P(1 + Z ≥ T) = (1/2)^(T−1) / (3/2). δ = 0.01: T − 1 ≥ log2(1/0.015) = 6.06, so T = 8
    # (P = 0.0052); T = 7 would give 0.0104 > δ.
    mech = ThresholdedHistogram(math.log(2), delta=0.01)
    assert mech.threshold == 8
    assert geometric_tail(math.log(2), 7) == pytest.approx(0.5 ** 7 / 1.5)
    assert geometric_tail(math.log(2), 7) <= 0.01 < geometric_tail(math.log(2), 6)
    with pytest.raises(ValueError, match="0 < δ < 1"):
        ThresholdedHistogram(1.0)


def test_clear_threshold_by_hand():
    # ε = ln 2, 10 cells, β = 0.05: 10·(1/2)^T/(3/2) ≤ 0.05 ⇔ 2^T ≥ 133.3 ⇔ T ≥ 7.06: T = 8.
    assert clear_threshold(math.log(2), 10, 0.05) == 8
    assert RangeHistogram(math.log(2), beta=0.05, buckets=Buckets((0, 1), cells=10)).threshold == 8


@pytest.mark.parametrize("epsilon, terms", [(1.0, 1), (1.0, 3), (0.3, 5)])
def test_sum_tail_is_the_convolution_of_the_noise_law(epsilon, terms):
    # The two-sided geometric pmf (1 − α)/(1 + α)·α^|k| convolved with itself `terms` times, on a wide grid.
    a = math.exp(-epsilon)
    k = np.arange(-400, 401)
    pmf = (1 - a) / (1 + a) * a ** np.abs(k)
    total = pmf
    for _ in range(terms - 1):
        total = np.convolve(total, pmf)
    support = np.arange(len(total)) - 400 * terms
    for t in (0, 1, 3, 10):
        assert sum_tail(epsilon, terms, t) == pytest.approx(total[support >= t].sum(), rel=1e-9, abs=1e-15)
    threshold = sum_threshold(epsilon, terms, 0.01)
    assert total[support >= threshold].sum() <= 0.01 < total[support >= threshold - 1].sum()


def test_log_buckets_hold_their_values_and_are_rounded_to_three_figures():
    buckets = Buckets()
    x = np.array([-1e100, -18823.0, -1e-9, 0.0, 3e-9, 0.2, 326.0, 18823.0, 5.01, 1e100])
    low, high = buckets.interval(buckets.index(x))
    inside = ((low <= x) & (x <= high)) | (np.abs(x) < 1e-8)  # the tiniest join the smallest magnitude's bucket
    assert inside.all()
    assert (low[x == 0], high[x == 0]) == ([0.0], [0.0])  # 0 has a bucket of its own
    assert (low[6], high[6]) == (315.0, 400.0) and (low[7], high[7]) == (16000.0, 20000.0)
    mantissas = {round(e / 10 ** math.floor(math.log10(e)), 6) for e in LOG_EDGES[:-1]}
    assert mantissas == set(R10) and buckets.size == 2 * len(LOG_EDGES) - 1
    assert round_outward(0.1234, 987.65) == (0.123, 988.0) and round_outward(-2.345, -0.0011) == (-2.35, -0.0011)


def test_range_at_a_large_epsilon_is_the_buckets_of_the_extremes():
    # At ε = 50 the noise is 0 but with probability about 2e−22 and the threshold is 1: every bucket holding a
    # value passes, and the bounds are the edges around the smallest and the largest value.
    mech = RangeHistogram(50.0)
    values = np.array([326.0, 500.0, 18823.0])
    low, high, found = mech.release(mech.buckets.counts(values), np.random.default_rng(0))
    assert mech.threshold == 1 and found and (low, high) == (315.0, 20000.0)
    coarse = RangeHistogram(50.0, buckets=Buckets((0.0, 300.0), cells=7))  # edges 0, 42.857…, …, 300
    assert coarse.release(coarse.buckets.counts(np.array([50.0, 100.0])), np.random.default_rng(0))[:2] == (42.8, 129.0)


# --- the audits --------------------------------------------------------------------------------------

def _range_counts(k: int, extra: bool) -> np.ndarray:
    """The bucket counts of a numeric column: 200 values from 10 to 100, k at EXTREME, one more with ``extra``."""
    values = np.r_[np.linspace(10, 100, 200), [EXTREME] * (k + extra)]
    return Buckets().counts(values)


def _category_counts(extra: str | None, rare: int = 0) -> tuple[list, np.ndarray]:
    """The value counts of a categorical column: a and b 100 times each, ``rare`` r's, and one ``extra`` record."""
    values = ["a"] * 100 + ["b"] * 100 + ["r"] * rare + ([extra] if extra else [])
    return value_counts(pd.Series(values))


# Slow: RUNS releases of both histograms on D and D′ (about 3.5 s of CPU for the two). The thresholded
# histogram's audit below and this module's by-hand tests of the noise stay in the fast loop.
@pytest.mark.slow
@pytest.mark.parametrize("noise, caught", [(1.0, False), (0.1, True)])
def test_published_bounds_and_categories_pass_the_audit_and_a_tenth_of_the_noise_is_caught(noise, caught):
    # D′ is D plus one record with an extreme value and a new category (issue 27). The claim: the bounds'
    # ε plus the categories' ε, and the categories' δ. "A tenth of the noise": both run at 10ε.
    eps_range, eps_cats, delta = 1.0, 1.0, 0.01
    ranges = RangeHistogram(eps_range / noise)
    cats = ThresholdedHistogram(eps_cats / noise, delta=delta)
    k = ranges.threshold - 1  # D's extreme bucket one record short of the threshold
    rng = np.random.default_rng(2027)
    hits = []
    for extra in (False, True):
        _, high, _ = ranges.release(_range_counts(k, extra), rng, runs=RUNS)
        keys, counts = _category_counts("new" if extra else None)
        _, kept = cats.release(counts, rng, runs=RUNS)
        new = kept[:, keys.index("new")] if "new" in keys else np.zeros(RUNS, bool)
        upper = high >= EXTREME
        hits.append([upper.sum(), new.sum(), (upper & new).sum(), (~upper & ~new).sum()])
    bound = epsilon_delta_lower_bound(hits[0], hits[1], RUNS, delta)
    claim = eps_range + eps_cats
    assert (bound > claim) is caught, (hits, bound, claim)
    if not caught:
        # the events were not rare: the audit had the power to see the e^ε ratio of the bound (about 1.0)
        assert hits[0][0] > 50 and hits[1][0] > 250 and bound > 0.3, hits


@pytest.mark.parametrize("noise, caught", [(1.0, False), (0.1, True)])
def test_a_category_at_the_threshold_passes_the_audit_and_a_tenth_of_the_noise_is_caught(noise, caught):
    # The thresholded histogram's ε part: D holds T − 1 records of r, D′ one more, so the one record decides.
    delta = 0.01
    cats = ThresholdedHistogram(1.0 / noise, delta=delta)
    rng = np.random.default_rng(31)
    hits = []
    for extra in (None, "r"):
        keys, counts = _category_counts(extra, rare=cats.threshold - 1)
        _, kept = cats.release(counts, rng, runs=RUNS)
        r = kept[:, keys.index("r")]
        hits.append([r.sum(), (~r).sum()])
    bound = epsilon_delta_lower_bound(hits[0], hits[1], RUNS, delta)
    assert (bound > 1.0) is caught, (hits, bound)


def test_a_threshold_that_ignores_delta_is_caught_by_the_new_category():
    # Publishing every observed value (threshold 1) releases a one-record category half the time or more.
    delta = 0.01

    class NoThreshold(ThresholdedHistogram):
        threshold = 1

    rng = np.random.default_rng(5)
    hits = []
    for mech in (ThresholdedHistogram(1.0, delta=delta), NoThreshold(1.0, delta=delta)):
        found = []
        for extra in (None, "new"):
            keys, counts = _category_counts(extra)
            _, kept = mech.release(counts, rng, runs=RUNS)
            found.append(kept[:, keys.index("new")].sum() if "new" in keys else 0)
        hits.append(epsilon_delta_lower_bound([found[0]], [found[1]], RUNS, delta))
    assert hits[0] <= 1.0 < hits[1], hits


@pytest.mark.parametrize("noise, caught", [(1.0, False), (0.1, True)])
def test_the_missing_values_flag_passes_the_audit_and_a_tenth_of_the_noise_is_caught(noise, caught):
    # The presence step: geometric counts of [missing, present]; "may be missing" once the noisy missing count
    # reaches its clear threshold. D holds that threshold less one missing values, D′ one more.
    eps = 1.0 / noise
    t = clear_threshold(eps, 1, constraints.SCHEMA_FLAG_BETA)
    mech = Geometric(eps)
    rng = np.random.default_rng(8)
    hits = []
    for extra in (0, 1):
        series = pd.Series([1.0] * 50 + [None] * (t - 1 + extra))
        exact = presence_counts(series, kind_known=True)
        noisy = exact + mech.sample(rng, (RUNS, 2))
        flag = noisy[:, 0] >= t
        hits.append([flag.sum(), (~flag).sum()])
    bound = epsilon_delta_lower_bound(hits[0], hits[1], RUNS, 0.0)
    assert (bound > 1.0) is caught, (hits, bound)
