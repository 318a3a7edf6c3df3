"""Demo 5: the exponential mechanism for one binary variable, under three scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import betaln, gammaln, logsumexp

from ..privacy.mechanisms import check_epsilon
from ._checks import check_int, check_positive

SCORES = {
    "abs": "−|x − r|",
    "post": "posterior predictive probability of r",
    "logpost": "log posterior predictive probability of r",
}


def log_posterior_predictive(n: int, x: int, *, gamma=(1.0, 1.0)) -> np.ndarray:
    """log P(r | x) for r = 0..n: the Beta-binomial posterior predictive of r ones in n new records.

    With a Beta(γ₁, γ₂) prior and x ones among n records the posterior is
    Beta(a, b), a = γ₁ + x, b = γ₂ + n − x, and

        P(r | x) = C(n, r) · B(r + a, n − r + b) / B(a, b),

    computed with ``gammaln`` and ``betaln``.
    """
    n = check_int("n", n, 1)
    x = check_int("x", x, 0, n)
    g1, g2 = (check_positive("gamma[0]", gamma[0]), check_positive("gamma[1]", gamma[1]))
    a, b = g1 + x, g2 + n - x
    r = np.arange(n + 1)
    return (gammaln(n + 1) - gammaln(r + 1) - gammaln(n - r + 1)
            + betaln(r + a, n - r + b) - betaln(a, b))


def _score(n: int, x: int, score: str, gamma) -> tuple[np.ndarray, np.ndarray]:
    log_pp = log_posterior_predictive(n, x, gamma=gamma)
    r = np.arange(n + 1)
    if score == "abs":
        q = -np.abs(x - r).astype(float)
    elif score == "post":
        q = np.exp(log_pp)
    elif score == "logpost":
        q = log_pp
    else:
        raise ValueError(f"score must be one of {sorted(SCORES)}, got {score!r}")
    return q, np.exp(log_pp)


def exponential_binary(n: int, x: int, epsilon: float, score: str, *, gamma=(1.0, 1.0),
                       sensitivity: float = 1.0, factor: float = 2.0) -> dict:
    """The exponential mechanism releasing the number of ones r ∈ {0, …, n} of one binary variable.

    The data are n records with x ones. Output r is drawn with probability

        P(r) ∝ exp(ε · q(x, r) / (factor · sensitivity)),

    (McSherry & Talwar 2007 use factor 2; some slides use 1) for one of three
    scores q:

    - ``"abs"``: q = −|x − r|;
    - ``"post"``: q = P(r | x), the posterior predictive probability of r;
    - ``"logpost"``: q = log P(r | x).

    P(r | x) is the probability of r ones among n new records under the
    posterior of the Beta(γ₁, γ₂) prior given the data, a Beta-binomial:

        P(r | x) = C(n, r) · B(r + γ₁ + x, n − r + γ₂ + n − x) / B(γ₁ + x, γ₂ + n − x).

    Weights are normalised in log space (``logsumexp``), so large ε or n do
    not overflow.

    Parameters
    ----------
    n : int
        Number of records, ≥ 1.
    x : int
        Number of ones, in [0, n].
    epsilon : float
        Privacy parameter, > 0.
    score : {"abs", "post", "logpost"}
    gamma : pair of float, default (1, 1)
        Beta prior parameters (γ₁, γ₂), each > 0.
    sensitivity : float, default 1
        Δq, the most q can change between neighbouring datasets. The
        guarantee is ε-DP only if it is at least the score's true
        sensitivity: 1 for ``"abs"``; see :func:`score_sensitivity`.
    factor : float, default 2
        The 2 of exp(εq/(2Δq)), > 0.

    Returns
    -------
    dict
        ``probabilities`` (array over r = 0..n, summing to 1), ``mode`` (the
        most probable r, the smallest if tied), ``mode_probability`` (its
        probability), ``expected`` (Σ r P(r)),
        ``expected_distance`` (Σ |r − x| P(r)), ``expected_posterior``
        (Σ P(r) P(r | x)), plus ``r``, ``scores`` and
        ``posterior_predictive`` (P(r | x) over r).

    References
    ----------
    McSherry, F. & Talwar, K. (2007). Mechanism design via differential privacy. FOCS.

    Examples
    --------
    >>> import math
    >>> out = exponential_binary(2, 1, math.log(4), "abs", factor=1.0)  # weights 1/4, 1, 1/4
    >>> [round(float(v), 4) for v in out["probabilities"]]
    [0.1667, 0.6667, 0.1667]
    """
    n = check_int("n", n, 1)
    x = check_int("x", x, 0, n)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    factor = check_positive("factor", factor)
    q, pp = _score(n, x, score, gamma)
    log_w = epsilon * q / (factor * sensitivity)
    prob = np.exp(log_w - logsumexp(log_w))
    prob /= prob.sum()
    r = np.arange(n + 1)
    return {
        "probabilities": prob,
        "mode": int(np.argmax(prob)),
        "mode_probability": float(prob.max()),
        "expected": float(prob @ r),
        "expected_distance": float(prob @ np.abs(r - x)),
        "expected_posterior": float(prob @ pp),
        "r": r, "scores": q, "posterior_predictive": pp,
    }


def score_sensitivity(n: int, score: str, *, gamma=(1.0, 1.0)) -> float:
    """Largest change of the score q(x, r) when one record flips (x → x + 1, n fixed), over x and r.

    This is Δq under bounded neighbours (same n, one record's value changed),
    the setting of :func:`exponential_binary`: 1 for ``"abs"``, at most 1 for
    ``"post"``, and for ``"logpost"`` a value that depends on n and the prior
    and can be well above 1.
    """
    n = check_int("n", n, 1)
    q = np.array([_score(n, x, score, gamma)[0] for x in range(n + 1)])
    return float(np.max(np.abs(np.diff(q, axis=0))))


def exponential_binary_table(n: int, x: int, epsilon: float, *, gamma=(1.0, 1.0), factor: float = 2.0,
                             actual_sensitivity: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`exponential_binary` for the three scores side by side.

    Returns
    -------
    summary : DataFrame
        One row per score: ``score``, ``label``, ``sensitivity`` used,
        ``true_sensitivity`` (:func:`score_sensitivity`), ``mode``,
        ``mode_probability``, ``expected``, ``expected_distance``,
        ``expected_posterior``.
    distributions : DataFrame
        Long table of ``score``, ``r``, ``probability``, ``posterior_predictive``.
    """
    rows, dists = [], []
    for score, label in SCORES.items():
        true_sens = score_sensitivity(n, score, gamma=gamma)
        sens = true_sens if actual_sensitivity else 1.0
        out = exponential_binary(n, x, epsilon, score, gamma=gamma, sensitivity=sens, factor=factor)
        rows.append({"score": score, "label": label, "sensitivity": sens, "true_sensitivity": true_sens,
                     **{k: out[k] for k in ("mode", "mode_probability", "expected", "expected_distance",
                                             "expected_posterior")}})
        dists.append(pd.DataFrame({"score": score, "r": out["r"], "probability": out["probabilities"],
                                   "posterior_predictive": out["posterior_predictive"]}))
    return pd.DataFrame(rows), pd.concat(dists, ignore_index=True)
