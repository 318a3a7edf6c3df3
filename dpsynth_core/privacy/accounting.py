"""Conversions between zero-concentrated DP (ρ-zCDP) and (ε, δ)-DP, in one place.

ρ-zCDP implies (ε, δ)-DP for every δ > 0. The conversion used here is the one of Canonne, Kamath
and Steinke (2020, Proposition 12 / Corollary 13): for every order α > 1,

    δ(ε) ≤ exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α,

and the bound is minimised over α. It is never looser than Bun and Steinke's (2016)
ε = ρ + 2√(ρ ln(1/δ)); at ε = 1, δ = 10⁻⁶ it gives ρ = 0.02436 where Bun–Steinke gives 0.01747
(39 % more ρ, so less noise at the same guarantee). ``docs/methods.md#zcdp-and-its-conversion`` derives it.

Pure ε-DP implies (ε²/2)-zCDP (Bun and Steinke 2016, Proposition 1.4), which is how a mixture of pure
and zCDP steps could compose in ρ; :func:`compose` instead adds the ε of pure steps to the converted
ρ of the zCDP ones (basic composition: valid, and plain to state; folding a small pure part into ρ can
give a slightly smaller total).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

#: Bisection steps: each halves an interval; 200 reach a float's resolution from any start used here.
#: Each loop also stops as soon as the midpoint equals an end (the interval cannot shrink any more, so
#: further steps would change nothing): 60 to 80 steps instead of 200, the same result.
_STEPS = 200


def _check_delta(delta: float) -> float:
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return delta


def _log_delta_at(rho: float, epsilon: float, alpha: float) -> float:
    """log of the bound on δ(ε) at order α (the module docstring's formula)."""
    return (alpha - 1) * (alpha * rho - epsilon) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest δ the Canonne–Kamath–Steinke bound gives for a ρ-zCDP mechanism at ``epsilon``.

    The log of the bound is convex in α; its derivative (2α − 1)ρ − ε + log(1 − 1/α) is increasing,
    so its zero is found by bisection.

    >>> round(zcdp_delta(0.5, 3.0), 6)
    0.005143
    """
    if rho < 0 or epsilon < 0:
        raise ValueError(f"rho and epsilon must be non-negative, got {rho!r}, {epsilon!r}")
    if rho == 0:
        return 0.0
    lo, hi = 1.0 + 1e-12, max(2.0, (epsilon + 1) / (2 * rho) + 2)
    for _ in range(_STEPS):
        alpha = (lo + hi) / 2
        if alpha in (lo, hi):
            break
        if (2 * alpha - 1) * rho - epsilon + math.log1p(-1 / alpha) < 0:
            lo = alpha
        else:
            hi = alpha
    return min(1.0, math.exp(_log_delta_at(rho, epsilon, (lo + hi) / 2)))


@functools.lru_cache(maxsize=256)
def zcdp_epsilon(rho: float, delta: float) -> float:
    """The ε of the (ε, δ)-DP guarantee a ρ-zCDP mechanism has at ``delta`` (the smallest ε whose
    :func:`zcdp_delta` is at most ``delta``).

    Cached, as :func:`zcdp_rho`: the pair takes about 1.4 ms, and an audit or a sweep asks the same
    conversions at every run (an eighth of an MST run on two columns)."""
    delta = _check_delta(delta)
    if rho < 0:
        raise ValueError(f"rho must be non-negative, got {rho!r}")
    if rho == 0:
        return 0.0
    lo, hi = 0.0, rho + 2 * math.sqrt(rho * math.log(1 / delta))  # Bun–Steinke's ε is always enough
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if zcdp_delta(rho, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


@functools.lru_cache(maxsize=256)
def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest ρ whose ρ-zCDP guarantee implies (ε, δ)-DP (by :func:`zcdp_delta`).

    >>> round(zcdp_rho(1.0, 1e-6), 5)
    0.02436
    """
    delta = _check_delta(delta)
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon!r}")
    # Bun–Steinke's ρ always holds; ρ = ε never does (its bound on δ is 1 as α → 1).
    lo = (math.sqrt(math.log(1 / delta) + epsilon) - math.sqrt(math.log(1 / delta))) ** 2
    hi = epsilon
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if zcdp_delta(mid, epsilon) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


def pure_rho(epsilon: float) -> float:
    """ρ of an ε-DP mechanism seen as zCDP: ε²/2 (Bun and Steinke 2016, Proposition 1.4)."""
    return epsilon * epsilon / 2


@dataclass(frozen=True)
class Composition:
    """What a run's steps add up to (:func:`compose`)."""

    epsilon: float             # the run's ε: the ε-DP steps' sum plus the zCDP part's converted ε
    delta: float               # the run's δ: the steps' δ plus the δ the zCDP part is stated at
    pure_epsilon: float        # Σ ε × repeats of the steps costed in ε
    pure_delta: float
    rho: float | None = None   # Σ ρ × repeats of the zCDP steps (None: there are none)
    rho_epsilon: float | None = None  # that ρ converted once, at rho_delta
    rho_delta: float | None = None


def compose(steps, rho_delta: float | None = None) -> Composition:
    """The (ε, δ) of a sequence of steps (objects with ``rho``, ``total_rho``, ``total_epsilon``, ``total_delta``).

    Steps costed in ε compose by adding their ε and δ (basic composition). zCDP steps (``rho`` set)
    compose by adding their ρ (Bun & Steinke 2016, Lemma 2.3, adaptively); the sum is converted into
    (ε, δ) once, at ``rho_delta``, by :func:`zcdp_epsilon`, and added to the rest. No zCDP step has
    an (ε, δ) of its own: converting each and adding would overstate ε (the square root in the
    conversion makes it sub-additive in ρ).
    """
    pure = [s for s in steps if s.rho is None]
    pure_eps = math.fsum(s.total_epsilon for s in pure)
    pure_delta = math.fsum(s.total_delta for s in pure)
    zcdp = [s for s in steps if s.rho is not None]
    if not zcdp:
        return Composition(pure_eps, pure_delta, pure_eps, pure_delta)
    if rho_delta is None:
        raise ValueError("zCDP steps are stated as (ε, δ)-DP at a δ > 0: give rho_delta")
    rho = math.fsum(s.total_rho for s in zcdp)
    eps = zcdp_epsilon(rho, rho_delta)
    return Composition(pure_eps + eps, pure_delta + rho_delta, pure_eps, pure_delta, rho, eps, rho_delta)
