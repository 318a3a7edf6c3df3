"""Demo 4: Warner's randomized response, its ε, its unbiased estimate and that estimate's variance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..synth.base import make_rng
from ._checks import check_int, check_unit


def randomized_response_epsilon(p: float) -> float:
    """ε of Warner's randomized response with truth probability p ∈ [0.5, 1]: ln(p/(1 − p))."""
    p = check_unit("p", p)
    if p < 0.5:
        raise ValueError(f"p must be in [0.5, 1], got {p!r}")
    return math.inf if p == 1 else math.log(p / (1 - p))


def randomized_response_estimate(responses, p: float) -> float:
    """Unbiased estimate of the share with the trait from randomized "yes" (1) / "no" (0) answers.

    Each person answers truthfully with probability p and the opposite
    otherwise, so a "yes" has probability λ = pπ + (1 − p)(1 − π) and
    π̂ = (λ̂ − (1 − p)) / (2p − 1), with λ̂ the share of "yes".

    Examples
    --------
    >>> round(randomized_response_estimate([1, 1, 1, 0, 0], 0.75), 10)  # (0.6 − 0.25)/0.5
    0.7
    """
    p = check_unit("p", p)
    if p == 0.5:
        raise ValueError("p = 0.5 makes every answer a coin flip: nothing can be estimated")
    lam = float(np.mean(np.asarray(responses, dtype=float)))
    return (lam - (1 - p)) / (2 * p - 1)


def randomized_response_variance(n: int, p: float, *, pi: float | None = None) -> float:
    """Variance of :func:`randomized_response_estimate` over the coin flips.

    For a fixed sample of n people it is p(1 − p) / (n (2p − 1)²) whatever
    their answers. Given ``pi``, the share with the trait in a population the
    n are drawn from, it is Warner's λ(1 − λ) / (n (2p − 1)²), which adds the
    sampling variance π(1 − π)/n.
    """
    n = check_int("n", n, 1)
    p = check_unit("p", p)
    if p == 0.5:
        return math.inf
    c2 = (2 * p - 1) ** 2
    if pi is None:
        return p * (1 - p) / (n * c2)
    lam = p * pi + (1 - p) * (1 - check_unit("pi", pi))
    return lam * (1 - lam) / (n * c2)


def randomized_response_demo(n: int, share: float, p: float, *, reps: int = 4000,
                             p_grid=None, seed: int | np.random.Generator | None = 0) -> dict:
    """Simulate randomized response on a fixed group and compare with the formulas.

    The group has n people, round(share·n) of whom have the trait. Each
    simulated survey flips every person's coin afresh, so the spread of the
    estimates is the error due to privacy alone.

    Returns
    -------
    dict
        ``n``, ``p``, ``truth`` (the group's share), ``epsilon``, ``estimates`` (array of
        ``reps`` estimates), ``mean_estimate``, ``sd_simulated``,
        ``sd_analytic`` and ``curve`` (DataFrame of ``p``, ``epsilon``,
        ``sd`` over ``p_grid``).
    """
    n = check_int("n", n, 1)
    share = check_unit("share", share)
    p = check_unit("p", p)
    if p <= 0.5:
        raise ValueError(f"p must be in (0.5, 1], got {p!r}")
    reps = check_int("reps", reps, 2)
    ones = int(round(share * n))
    rng = make_rng(seed)
    # "yes" = trait holders telling the truth + the others lying.
    yes = rng.binomial(ones, p, reps) + rng.binomial(n - ones, 1 - p, reps)
    estimates = (yes / n - (1 - p)) / (2 * p - 1)
    grid = np.asarray(p_grid if p_grid is not None else np.linspace(0.55, 1.0, 46), dtype=float)
    return {
        "n": n, "p": p, "truth": ones / n, "epsilon": randomized_response_epsilon(p), "estimates": estimates,
        "mean_estimate": float(estimates.mean()), "sd_simulated": float(estimates.std(ddof=1)),
        "sd_analytic": math.sqrt(randomized_response_variance(n, p)),
        "curve": pd.DataFrame({"p": grid, "epsilon": [randomized_response_epsilon(q) for q in grid],
                               "sd": [math.sqrt(randomized_response_variance(n, q)) for q in grid]}),
    }
