"""Noise-adding mechanisms, with their scales computed in one place.

Counts get integer (two-sided geometric) noise rather than floating-point
Laplace noise, whose low-order bits leak the true value (Mironov 2012).
"""

from __future__ import annotations

import math

import numpy as np


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` as a float, or raise for a value no mechanism accepts."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise TypeError(f"epsilon must be a number, got {type(epsilon).__name__}")
    epsilon = float(epsilon)
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    return epsilon


def geometric_alpha(epsilon: float, sensitivity: float = 1.0) -> float:
    """Ratio of neighbouring probabilities of the geometric mechanism, exp(−ε/Δ₁)."""
    return math.exp(-check_epsilon(epsilon) / sensitivity)


def geometric_noise(size, epsilon: float, rng: np.random.Generator, *, sensitivity: float = 1.0) -> np.ndarray:
    """Two-sided geometric noise, P(k) ∝ exp(−ε|k|/Δ₁), k ∈ ℤ.

    The difference of two independent geometric variables with success
    probability 1 − exp(−ε/Δ₁) has exactly this law.

    Parameters
    ----------
    size : int or tuple of int
        Shape of the noise array.
    epsilon : float
        Privacy parameter of this release. Must be > 0.
    rng : numpy.random.Generator
    sensitivity : float, default 1
        L1 sensitivity of the integer query.
    """
    p = 1.0 - geometric_alpha(epsilon, sensitivity)
    if p >= 1.0:  # ε/Δ so large that exp(−ε/Δ) underflows: no noise is the exact law
        return np.zeros(size, dtype=np.int64)
    return rng.geometric(p, size) - rng.geometric(p, size)


def geometric_variance(epsilon: float, sensitivity: float = 1.0) -> float:
    """Variance of :func:`geometric_noise`: 2α/(1 − α)² with α = exp(−ε/Δ₁)."""
    a = geometric_alpha(epsilon, sensitivity)
    return 2 * a / (1 - a) ** 2


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism."""
    return sensitivity / check_epsilon(epsilon)


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ₂ √(2 ln(1.25/δ)) / ε of the classical Gaussian mechanism (valid for ε < 1)."""
    epsilon = check_epsilon(epsilon)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose ρ-zCDP guarantee implies (ε, δ)-DP (Bun & Steinke 2016, Prop. 1.3).

    ρ-zCDP gives (ρ + 2√(ρ ln(1/δ)), δ)-DP for every δ > 0; solving
    ρ + 2√(ρ L) = ε for √ρ gives √ρ = √(L + ε) − √L with L = ln(1/δ).
    """
    epsilon = check_epsilon(epsilon)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    log_term = math.log(1 / delta)
    return (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε of the (ε, δ)-DP guarantee implied by ρ-zCDP: ρ + 2√(ρ ln(1/δ))."""
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))
