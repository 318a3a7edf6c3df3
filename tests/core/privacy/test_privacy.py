"""Privacy tests: the noise mechanisms against their exact laws. (The empirical audits: test_audit.py and
test_audit_common.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpsynth_core.privacy.mechanisms import (check_epsilon, gaussian_sigma, geometric_alpha, geometric_noise,
                                     geometric_variance, laplace_scale)

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
