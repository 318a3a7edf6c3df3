"""Privacy tests: the noise mechanisms against their exact laws, the audit helper
against hand-computed bounds, and an empirical DP audit of `independent` that
passes the real mechanism and flags a deliberately broken one.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest
from scipy import stats

from dpsynth_core.privacy import dp_but_for_seed
from dpsynth_core.privacy.randomness import streams
from dpsynth_core.privacy.mechanisms import (check_epsilon, gaussian_sigma, geometric_alpha, geometric_noise,
                                     geometric_variance, laplace_scale)
from dpsynth_core.schema import Schema
from dpsynth_core.synth import SYNTHESIZERS, synthesize

from tests.core.privacy.privacy_tools import audits, clopper_pearson, epsilon_lower_bound, log_ratio_lower_bounds

LN2 = math.log(2)


# --- check_epsilon --------------------------------------------------------------

@pytest.mark.parametrize("bad", [0, 0.0, -1, -1e-9, math.inf, -math.inf, math.nan])
def test_check_epsilon_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="epsilon"):
        check_epsilon(bad)


@pytest.mark.parametrize("bad", ["1", "0.5", None, True, [1.0], 1j])
def test_check_epsilon_rejects_non_numbers(bad):
    with pytest.raises(TypeError, match="epsilon"):
        check_epsilon(bad)


@pytest.mark.parametrize("good, expected", [(1, 1.0), (0.25, 0.25), (np.float32(0.5), 0.5), (np.int64(3), 3.0)])
def test_check_epsilon_returns_a_float(good, expected):
    out = check_epsilon(good)
    assert type(out) is float and out == expected


@pytest.mark.parametrize("fn", [lambda e: geometric_noise(3, e, np.random.default_rng(0)),
                                geometric_variance, laplace_scale, lambda e: gaussian_sigma(e, 1e-5)])
@pytest.mark.parametrize("bad", [0, -2, math.nan, math.inf])
def test_mechanisms_refuse_bad_epsilon(fn, bad):
    with pytest.raises(ValueError):
        fn(bad)


# --- geometric (discrete Laplace) noise ---------------------------------------------

def _pmf(k, alpha):
    """P(k) = (1 − α)/(1 + α) · α^|k| (two-sided geometric law)."""
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)


def test_geometric_alpha_and_variance_by_hand():
    # ε = ln 2, Δ = 1: α = e^(−ln 2) = 1/2; variance 2α/(1−α)² = 1/(1/4) = 4.
    assert geometric_alpha(LN2) == pytest.approx(0.5, rel=1e-15)
    assert geometric_variance(LN2) == pytest.approx(4.0, rel=1e-12)
    # Δ = 2 halves the exponent: ε = 2 ln 2 gives α = 1/2 again.
    assert geometric_alpha(2 * LN2, sensitivity=2) == pytest.approx(0.5, rel=1e-15)
    assert geometric_variance(2 * LN2, sensitivity=2) == pytest.approx(4.0, rel=1e-12)
    # ε = ln 3: α = 1/3; 2·(1/3)/(2/3)² = (2/3)/(4/9) = 1.5.
    assert geometric_variance(math.log(3)) == pytest.approx(1.5, rel=1e-12)
    # scipy's discrete Laplace with a = ε/Δ is the same law: same variance.
    for eps, delta in [(0.1, 1), (1.0, 1), (1.0, 3), (5.0, 2)]:
        assert geometric_variance(eps, delta) == pytest.approx(stats.dlaplace.var(eps / delta), rel=1e-9)


@pytest.mark.parametrize("epsilon, sensitivity", [(LN2, 1.0), (2 * LN2, 2.0), (1.0, 1.0), (0.3, 1.0)])
def test_geometric_noise_matches_the_exact_pmf(epsilon, sensitivity):
    n = 200_000
    rng = np.random.default_rng(314)
    z = geometric_noise(n, epsilon, rng, sensitivity=sensitivity)
    assert z.shape == (n,) and np.issubdtype(z.dtype, np.integer)
    alpha = math.exp(-epsilon / sensitivity)
    if alpha == 0.5:  # hand values: P(0) = (1/2)/(3/2) = 1/3, P(±1) = 1/6, P(±2) = 1/12
        assert _pmf(np.array([0, 1, -2]), alpha) == pytest.approx([1 / 3, 1 / 6, 1 / 12])
    assert _pmf(np.arange(-30, 31), alpha) == pytest.approx(stats.dlaplace.pmf(np.arange(-30, 31), epsilon / sensitivity))
    # Cells k = −K..K, plus the two tails |k| > K, each P(k > K) = (1−α)/(1+α)·α^(K+1)/(1−α).
    K = int(np.ceil(np.log(1e-3) / np.log(alpha)))  # P(k = K) ≈ 1e-3·P(0): enough mass per cell
    ks = np.arange(-K, K + 1)
    expected = np.concatenate([[alpha ** (K + 1) / (1 + alpha)], _pmf(ks, alpha), [alpha ** (K + 1) / (1 + alpha)]])
    assert expected.sum() == pytest.approx(1.0, abs=1e-12)
    observed = np.concatenate([[np.sum(z < -K)], np.bincount(z[np.abs(z) <= K] + K, minlength=2 * K + 1),
                               [np.sum(z > K)]])
    # Per cell: 5 binomial standard errors (a false alarm has probability < 1e-6 per cell).
    se = np.sqrt(expected * (1 - expected) / n)
    assert np.all(np.abs(observed / n - expected) < 5 * se)
    # All cells at once: Pearson's χ² below its 0.999 quantile (cells expected ≥ 5 counts).
    assert np.all(n * expected >= 5)
    chi2 = np.sum((observed - n * expected) ** 2 / (n * expected))
    assert chi2 < stats.chi2.ppf(0.999, len(expected) - 1)


def test_geometric_noise_moments_for_alpha_one_half():
    # α = 1/2: mean 0, variance 4, E[k⁴] = 2·(1/3)·Σ k⁴/2^k = (2/3)·150 = 100
    # (Σ k⁴ x^k = x(1 + 11x + 11x² + x³)/(1 − x)⁵ = ½·9.375·32 = 150 at x = ½).
    n = 200_000
    z = geometric_noise(n, LN2, np.random.default_rng(2718)).astype(float)
    # Standard errors: √(4/n) = 0.0045 for the mean, √((100 − 4²)/n) = 0.0205 for the variance.
    assert abs(z.mean()) < 5 * math.sqrt(4 / n)
    assert abs(z.var() - 4.0) < 5 * math.sqrt((100 - 16) / n)
    assert abs(np.mean(z ** 4) - 100) < 0.05 * 100  # sample 4th moment within 5 %


def test_geometric_noise_is_seeded_shaped_and_exact_when_epsilon_is_huge():
    a = geometric_noise((3, 4), 0.5, np.random.default_rng(1))
    b = geometric_noise((3, 4), 0.5, np.random.default_rng(1))
    assert a.shape == (3, 4) and np.array_equal(a, b)
    assert not np.array_equal(a, geometric_noise((3, 4), 0.5, np.random.default_rng(2)))
    # ε = 1000: α = e^−1000 underflows to 0, so P(0) = 1 exactly.
    assert np.array_equal(geometric_noise(1000, 1000.0, np.random.default_rng(0)), np.zeros(1000))


def test_laplace_scale_by_hand():
    assert laplace_scale(0.5, 2.0) == 4.0       # b = Δ/ε = 2 / 0.5
    assert laplace_scale(4) == 0.25             # 1 / 4
    assert laplace_scale(0.1, 3) == pytest.approx(30.0)


def test_gaussian_sigma_by_hand():
    # ε = 0.5, δ = 1.25e−5, Δ₂ = 1: ln(1.25/δ) = ln(10⁵) = 11.512925465; ×2 = 23.025850930;
    # √ = 4.798525912; / 0.5 = 9.597051824.
    assert gaussian_sigma(0.5, 1.25e-5) == pytest.approx(9.597051824, rel=1e-9)
    # Δ₂ = 3 scales it: 3 · 9.597051824 = 28.791155473.
    assert gaussian_sigma(0.5, 1.25e-5, 3.0) == pytest.approx(28.791155473, rel=1e-9)
    # ε = 0.25, δ = 0.0125: ln(100) = 4.605170186; ×2 = 9.210340372; √ = 3.034854259; / 0.25 = 12.139417035.
    assert gaussian_sigma(0.25, 0.0125) == pytest.approx(12.139417035, rel=1e-9)
    for bad in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError, match="delta"):
            gaussian_sigma(0.5, bad)


# --- the audit helper -------------------------------------------------------------

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


def test_epsilon_lower_bound_by_hand():
    # One event seen in 100 of 100 runs on D′ and 0 of 100 on D, alpha = 0.05: four one-sided
    # bounds at 0.05/4 = 0.0125. Lower bound of P(E|D′) = 0.0125^(1/100) = e^(−0.04382027) = 0.957126;
    # upper bound of P(E|D) = 1 − 0.957126 = 0.042874; log(0.957126 / 0.042874) = log(22.324) = 3.10566.
    bounds = log_ratio_lower_bounds([0], 100, [100], 100, alpha=0.05)
    assert bounds[1, 0] == pytest.approx(3.10566, abs=2e-5)
    assert bounds[0, 0] == -math.inf                # P(E|D) has lower bound 0
    assert epsilon_lower_bound([0], 100, [100], 100) == pytest.approx(3.10566, abs=2e-5)
    assert epsilon_lower_bound([100], 100, [0], 100) == pytest.approx(3.10566, abs=2e-5)  # other direction
    # Two events: Bonferroni halves the level to 0.05/8 = 0.00625; 0.00625^(1/100) = e^(−0.05075174)
    # = 0.950515; log(0.950515 / 0.049485) = log(19.2081) = 2.95533. The max over events is taken.
    assert epsilon_lower_bound([0, 30], 100, [100, 40], 100) == pytest.approx(2.95533, abs=2e-5)
    # Equal counts can never show a positive privacy loss.
    assert epsilon_lower_bound([40, 700], 1000, [40, 700], 1000) < 0


def test_epsilon_lower_bound_covers_the_true_ratio():
    # Simulated audits of a mechanism whose one event has P(E|D) = 0.1, P(E|D′) = 0.1·e (true
    # log ratio exactly 1). The bound may exceed 1 with probability at most alpha = 0.05;
    # Bonferroni makes it far rarer. 1000 audits: the observed share has SE ≤ 0.007.
    rng = np.random.default_rng(5)
    runs = 400
    hits_d = rng.binomial(runs, 0.1, size=1000)
    hits_d2 = rng.binomial(runs, 0.1 * math.e, size=1000)
    bounds = np.array([epsilon_lower_bound([a], runs, [b], runs) for a, b in zip(hits_d, hits_d2)])
    assert np.mean(bounds > 1.0) <= 0.05
    assert np.median(bounds) > 0.3  # and the audit is not vacuous at this size


# --- empirical DP audit of `independent` -------------------------------------------------

# Two categorical columns with three public categories each. D has 30 rows and never uses a2 or b2;
# D′ adds one record in the empty cell (a2, b2). The clipped noisy count of a2 is then max(0, Z)
# on D and max(0, 1 + Z) on D′, and P(1 + Z = t)/P(Z = t) = e^(ε/2) for every t ≥ 1. The cell can
# only receive synthetic rows when both noisy counts are ≥ 1, so for every k ≥ 1 the event
# E_k = "at least k synthetic rows in (a2, b2)" has P(E_k|D′)/P(E_k|D) = e^ε exactly (up to the
# uniform fallback when all counts of a column vanish, probability ≈ e^(−7.5) per column): the
# worst case, so the audit is tight.
#
# Choices. ε = 1: P(E|D) ≈ (α/(1+α))² ≈ 0.14 with α = e^(−1/2), large enough to estimate well;
# with the noise halved (the broken mechanism: α = e^(−1)) it is ≈ 0.07 against ≈ 0.53 on D′,
# a log ratio of 2 that must be told apart from the claimed 1. n_s = 2000 declared synthetic
# rows (public, the same for D and D′): when both noisy counts are 1 the cell gets
# 2000/31² ≈ 2 rows on average, so E_1 nearly equals "both counts ≥ 1". 3000 runs per dataset:
# over seeds the honest bound lands at 0.75–0.85 (SD ≈ 0.03, so > 5 SD below 1) and the broken
# one at 1.7–1.8 (> 20 SD above 1). alpha = 0.05 family-wise over k ∈ {1, 2, 3, 5}.
EPSILON = 1.0
N_SYNTH = 2000
RUNS = 3000
KS = np.array([1, 2, 3, 5])
AUDIT_SCHEMA = Schema.from_dict({
    "a": {"kind": "categorical", "categories": ["a0", "a1", "a2"]},
    "b": {"kind": "categorical", "categories": ["b0", "b1", "b2"]},
})
D = pd.DataFrame({"a": ["a0"] * 15 + ["a1"] * 15, "b": ["b0", "b1"] * 15})
D_PRIME = pd.concat([D, pd.DataFrame({"a": ["a2"], "b": ["b2"]})], ignore_index=True)


def _event_hits(df: pd.DataFrame, release_epsilon: float, first_seed: int) -> np.ndarray:
    """How many of RUNS releases (seeds first_seed, first_seed + 1, …) fall in each E_k."""
    synth = SYNTHESIZERS["independent"]
    measured = synth.measure(df, AUDIT_SCHEMA, ["a", "b"], bins=20)
    in_cell = np.empty(RUNS, dtype=np.int64)
    for r in range(RUNS):
        # The same Generator synthesize(seed=...) makes; see test_audit_runs_the_public_path.
        values, steps = synth.generate(measured, epsilon=release_epsilon, n=N_SYNTH,
                                       rng=np.random.default_rng(first_seed + r), bins=20)
        in_cell[r] = np.count_nonzero((values["a"] == "a2") & (values["b"] == "b2"))
    assert math.fsum(s.epsilon for s in steps) == pytest.approx(release_epsilon)
    return (in_cell[:, None] >= KS).sum(axis=0)


def test_audit_runs_the_public_path():
    # The release step driven by hand equals synthesize() with the same seed, so the audit
    # measures the mechanism users get.
    synth = SYNTHESIZERS["independent"]
    for df in (D, D_PRIME):
        result = synthesize(df, "independent", epsilon=EPSILON, schema=AUDIT_SCHEMA, n=N_SYNTH, seed=77)
        # Seeded, so labelled exploration (issue 15); with fresh randomness the same run is DP.
        assert dp_but_for_seed(result.ledger) and not result.ledger["is_dp"]
        assert result.ledger["epsilon_total"] == EPSILON
        rng, noise = streams(77)  # the records' and the noise's streams synthesize derives from seed 77
        values, _ = synth.generate(synth.measure(df, AUDIT_SCHEMA, ["a", "b"], bins=20), epsilon=EPSILON,
                                   n=N_SYNTH, rng=rng, noise=noise, bins=20)
        for c in ("a", "b"):
            pdt.assert_series_equal(pd.Series(values[c], name=c).astype(result.data[c].dtype), result.data[c])


@pytest.mark.slow
@audits("independent")
def test_independent_passes_the_empirical_dp_audit():
    hits_d = _event_hits(D, EPSILON, first_seed=0)
    hits_d2 = _event_hits(D_PRIME, EPSILON, first_seed=RUNS)
    bound = epsilon_lower_bound(hits_d, RUNS, hits_d2, RUNS, alpha=0.05)
    assert bound <= EPSILON, (bound, hits_d, hits_d2)
    # Tight: the events reveal most of the claimed loss (true log ratio exactly 1). A
    # synthesizer spending less than it claims (e.g. ε/M split over too many columns) would fail.
    assert bound > 0.5, (bound, hits_d, hits_d2)


@pytest.mark.slow
def test_the_audit_flags_a_mechanism_with_half_the_noise():
    # Broken on purpose: noise for 2ε while the claim stays ε. True log ratio: 2ε.
    hits_d = _event_hits(D, 2 * EPSILON, first_seed=2 * RUNS)
    hits_d2 = _event_hits(D_PRIME, 2 * EPSILON, first_seed=3 * RUNS)
    bound = epsilon_lower_bound(hits_d, RUNS, hits_d2, RUNS, alpha=0.05)
    assert bound > EPSILON, (bound, hits_d, hits_d2)
