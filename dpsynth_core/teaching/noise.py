"""Demo 2: Laplace, Gaussian and geometric noise on a count, with the scales the synthesizers use."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..privacy.mechanisms import (check_epsilon, gaussian_sigma, geometric_alpha, geometric_noise, geometric_variance,
                                  laplace_scale)
from ..synth.base import make_rng
from ._checks import check_int, check_positive


def geometric_pmf(k, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Exact pmf of the two-sided geometric noise of :func:`.privacy.mechanisms.geometric_noise`.

    P(K = k) = (1 − α)/(1 + α) · α^|k| for integer k, with α = exp(−ε/Δ₁).

    Parameters
    ----------
    k : int or array of int
        Noise values.
    epsilon : float
        Privacy parameter, > 0.
    sensitivity : float, default 1
        L1 sensitivity Δ₁ of the count.

    Examples
    --------
    >>> round(float(geometric_pmf(0, math.log(3))), 12)  # α = 1/3: (2/3)/(4/3)
    0.5
    """
    a = geometric_alpha(epsilon, check_positive("sensitivity", sensitivity))
    k = np.abs(np.asarray(k))
    return (1 - a) / (1 + a) * a ** k


def count_noise(true_count: int, epsilon: float, *, delta: float = 1e-5, sensitivity: float = 1.0,
                seed: int | np.random.Generator | None = 0) -> dict:
    """Distributions of a noisy count under the Laplace, Gaussian and geometric mechanisms.

    Scales: Laplace b = Δ/ε (sd √2·b); Gaussian σ = Δ√(2 ln(1.25/δ))/ε, the
    classical bound, valid only for ε < 1; geometric P(k) ∝ exp(−ε|k|/Δ) on the
    integers (sd √(2α)/(1 − α), α = e^−ε/Δ), the one the app uses for counts.

    Parameters
    ----------
    true_count : int
        The count before noise, ≥ 0.
    epsilon : float
        Privacy parameter, > 0.
    delta : float, default 1e-5
        δ of the Gaussian mechanism, in (0, 1).
    sensitivity : float, default 1
        Sensitivity of the count (adding or removing a record changes it by 1).
    seed : int, Generator or None, default 0
        Source of one released answer per mechanism.

    Returns
    -------
    dict
        ``laplace_scale``, ``laplace_sd``, ``gaussian_sigma``, ``gaussian_valid``
        (ε < 1), ``geometric_alpha``, ``geometric_sd``; ``grid`` (DataFrame of
        ``x``, ``laplace_pdf``, ``gaussian_pdf`` on a fine grid), ``pmf``
        (DataFrame of integer ``answer`` and ``geometric_pmf``), and ``draws``
        (one noisy answer per mechanism).
    """
    true_count = check_int("true_count", true_count, 0)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    b = laplace_scale(epsilon, sensitivity)
    sigma = gaussian_sigma(epsilon, delta, sensitivity)
    a = geometric_alpha(epsilon, sensitivity)
    # Wide enough for 99.9% of the Laplace and ~99.9% of the Gaussian mass.
    half = max(3.0, b * math.log(1000), 3.3 * sigma)
    x = np.linspace(true_count - half, true_count + half, 801)
    k = np.arange(-math.ceil(half), math.ceil(half) + 1)
    rng = make_rng(seed)
    return {
        "true_count": true_count,
        "laplace_scale": b,
        "laplace_sd": math.sqrt(2) * b,
        "gaussian_sigma": sigma,
        "gaussian_valid": epsilon < 1,
        "geometric_alpha": a,
        "geometric_sd": math.sqrt(geometric_variance(epsilon, sensitivity)),
        "grid": pd.DataFrame({"x": x,
                              "laplace_pdf": stats.laplace.pdf(x, loc=true_count, scale=b),
                              "gaussian_pdf": stats.norm.pdf(x, loc=true_count, scale=sigma)}),
        "pmf": pd.DataFrame({"answer": true_count + k, "geometric_pmf": geometric_pmf(k, epsilon, sensitivity)}),
        "draws": {"laplace": float(true_count + rng.laplace(0.0, b)),
                  "gaussian": float(true_count + rng.normal(0.0, sigma)),
                  "geometric": int(true_count + geometric_noise(1, epsilon, rng, sensitivity=sensitivity)[0])},
    }
