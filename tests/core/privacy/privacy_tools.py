"""Empirical differential-privacy audit: a reusable helper for the tests.

A mechanism M is ε-DP when, for neighbouring datasets D and D′ and every set
of outputs E, P(M(D) ∈ E) ≤ e^ε P(M(D′) ∈ E), both ways round. Run M many
times on each dataset, count how often each event E_k occurs, and bound the
two probabilities with exact (Clopper–Pearson) binomial intervals: the ratio
of the lower bound of one to the upper bound of the other is a lower
confidence bound on the privacy loss the events reveal. If it exceeds the
claimed ε, the claim is false (up to the confidence level).

All bounds of one audit are taken together: every event contributes four
one-sided bounds (lower and upper for each dataset), so each is made at level
alpha / (4 · number of events) (Bonferroni). With probability at least
1 − alpha all of them hold at once, hence so does the maximum over events
and directions that :func:`epsilon_lower_bound` returns.

Every DP synthesizer's empirical audit registers itself with :func:`audits`; a common test
(tests/core/synth/test_synth_common.py) fails for a registered DP method that has none.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: method name → the audit tests that check its claimed ε ("module.test_name")
AUDITS: dict[str, list[str]] = {}


def audits(*methods: str):
    """Mark a test as the empirical privacy audit of ``methods`` (registered in :data:`AUDITS`)."""
    def register(test):
        for method in methods:
            AUDITS.setdefault(method, []).append(f"{test.__module__}.{test.__name__}")
        return test
    return register


def clopper_pearson(hits, runs, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper–Pearson bounds for binomial proportions.

    Returns ``(lower, upper)``: ``lower`` is a lower bound of the success
    probability holding with probability ≥ 1 − ``level``, and ``upper`` an
    upper bound with the same guarantee (each on its own).
    """
    hits = np.asarray(hits, dtype=float)
    runs = np.broadcast_to(np.asarray(runs, dtype=float), hits.shape)
    if np.any(hits < 0) or np.any(hits > runs):
        raise ValueError("hits must lie in [0, runs]")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(hits > 0, stats.beta.ppf(level, hits, runs - hits + 1), 0.0)
        upper = np.where(hits < runs, stats.beta.ppf(1 - level, hits + 1, runs - hits), 1.0)
    return lower, upper


def log_ratio_lower_bounds(hits_d, runs_d: int, hits_d2, runs_d2: int, *,
                           alpha: float = 0.05) -> np.ndarray:
    """Lower confidence bounds of log P(E_k|D)/P(E_k|D′) and of its reverse.

    Parameters
    ----------
    hits_d, hits_d2 : array of int, one entry per event E_k
        How many of the runs on D (and on D′) produced an output in E_k.
    runs_d, runs_d2 : int
        Number of independent runs on each dataset.
    alpha : float, default 0.05
        Family-wise error level, shared by all events and both directions.

    Returns
    -------
    numpy.ndarray of shape (2, K)
        Row 0: bounds of log P(E|D)/P(E|D′); row 1: of log P(E|D′)/P(E|D).
        ``-inf`` where an event never happened on the numerator's side.
    """
    hits_d = np.atleast_1d(np.asarray(hits_d))
    hits_d2 = np.atleast_1d(np.asarray(hits_d2))
    if hits_d.shape != hits_d2.shape:
        raise ValueError("one count per event on each side")
    level = alpha / (4 * hits_d.size)
    lo_d, up_d = clopper_pearson(hits_d, runs_d, level)
    lo_d2, up_d2 = clopper_pearson(hits_d2, runs_d2, level)
    with np.errstate(divide="ignore"):
        return np.vstack([np.log(lo_d) - np.log(up_d2), np.log(lo_d2) - np.log(up_d)])


def epsilon_lower_bound(hits_d, runs_d: int, hits_d2, runs_d2: int, *, alpha: float = 0.05) -> float:
    """The largest of :func:`log_ratio_lower_bounds`: ε the mechanism must at least have.

    A mechanism that claims ε-DP fails the audit when this exceeds ε.
    """
    return float(np.max(log_ratio_lower_bounds(hits_d, runs_d, hits_d2, runs_d2, alpha=alpha)))
