"""The zCDP ↔ (ε, δ) conversion against computations made independently of its code."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from dpsynth_core.privacy.accounting import pure_rho, zcdp_delta, zcdp_epsilon, zcdp_rho

CASES = [(1.0, 1e-6), (0.3, 1e-6), (3.0, 1e-9), (10.0, 1e-5), (0.01, 1e-6), (100.0, 1e-6)]


def _cks_delta_by_scipy(rho: float, eps: float) -> float:
    """Canonne–Kamath–Steinke's δ(ε), minimised over α by scipy's bounded scalar search (not our bisection)."""
    def log_bound(a):
        return (a - 1) * (a * rho - eps) + a * np.log1p(-1 / a) - np.log(a - 1)
    res = minimize_scalar(log_bound, bounds=(1 + 1e-9, 1e5), method="bounded", options={"xatol": 1e-12})
    return min(1.0, math.exp(res.fun))


def _gaussian_exact_delta(sigma: float, eps: float) -> float:
    """The exact privacy profile of the Gaussian mechanism with sensitivity 1 (Balle and Wang 2018, Thm. 8)."""
    return norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * norm.cdf(-1 / (2 * sigma) - eps * sigma)


@pytest.mark.parametrize("eps,delta", CASES)
def test_rho_is_the_largest_meeting_the_bound_by_an_independent_minimisation(eps, delta):
    rho = zcdp_rho(eps, delta)
    # Tolerance 1e-6 relative: scipy's bounded search stops at xatol 1e-12 in α, far finer than that.
    assert _cks_delta_by_scipy(rho, eps) == pytest.approx(delta, rel=1e-6)
    assert _cks_delta_by_scipy(rho * 1.0001, eps) > delta  # a bigger ρ breaks the bound
    assert zcdp_epsilon(rho, delta) == pytest.approx(eps, rel=1e-9)


def test_by_hand_at_epsilon_1_delta_1e_6():
    # Bun–Steinke: √ρ = √(L + ε) − √L, L = ln 10⁶ = 13.8155: ρ = 0.017469. CKS gives 39 % more: 0.024356
    # (the figure smartnoise and OpenDP reach at these settings, issue 30).
    bun_steinke = (math.sqrt(math.log(1e6) + 1) - math.sqrt(math.log(1e6))) ** 2
    assert bun_steinke == pytest.approx(0.017469, rel=1e-4)
    assert zcdp_rho(1.0, 1e-6) == pytest.approx(0.024356, rel=1e-4)


@pytest.mark.parametrize("eps,delta", CASES)
def test_never_looser_than_bun_steinke_never_tighter_than_the_exact_gaussian(eps, delta):
    # A Gaussian mechanism of sensitivity 1 with σ² = 1/(2ρ) is exactly ρ-zCDP. Its exact profile is the
    # tightest (ε, δ) it has: the conversion must not promise less δ than that at the same ε.
    rho = zcdp_rho(eps, delta)
    sigma = math.sqrt(1 / (2 * rho))
    assert _gaussian_exact_delta(sigma, eps) <= delta
    assert zcdp_epsilon(rho, delta) <= rho + 2 * math.sqrt(rho * math.log(1 / delta))


def test_edges():
    assert zcdp_delta(0.0, 1.0) == 0.0 and zcdp_epsilon(0.0, 1e-6) == 0.0
    assert pure_rho(0.5) == 0.125
    for bad in (0.0, 1.0, -1e-6):
        with pytest.raises(ValueError, match="delta"):
            zcdp_rho(1.0, bad)
    with pytest.raises(ValueError, match="epsilon"):
        zcdp_rho(0.0, 1e-6)
