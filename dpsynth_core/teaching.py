"""The Learn page's demos: small, exact computations behind the ideas of DP synthesis.

Every function is pure: it takes numbers (or a DataFrame) and returns numbers,
arrays or tables; randomness comes from one Generator made from ``seed``. The
noise scales are the ones in :mod:`.privacy.mechanisms`, so what the page teaches is
what the synthesizers do.

Demos, in the order the page shows them:

1. :func:`probability_ratio_table`: ε as the bound e^ε on a probability ratio.
2. :func:`count_noise`: Laplace, Gaussian and geometric noise on a count.
3. :func:`composition_demo`: sequential vs parallel composition on a histogram.
4. :func:`randomized_response_demo`: Warner's randomized response.
5. :func:`exponential_binary`: the exponential mechanism for one binary variable.
6. :func:`beta_binomial_sweep`: the Beta–binomial synthesizer and the combining rules.
7. :func:`sequential_synthesis_demo`: sequential regression synthesis on the penguins.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import betaln, gammaln, logsumexp

from .privacy.mechanisms import (check_epsilon, dirichlet_alpha, gaussian_sigma, geometric_alpha, geometric_noise,
                                 geometric_variance, laplace_scale)
from .synth.base import make_rng

SCORES = {
    "abs": "−|x − r|",
    "post": "posterior predictive probability of r",
    "logpost": "log posterior predictive probability of r",
}
COMBINING_RULES = {
    "naive": "as if real (pooled implicates)",
    "full": "Reiter 2002, fully synthetic",
    "partial": "Reiter 2003, partially synthetic",
}


# --------------------------------------------------------------------------- checks

def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        upper = "∞" if high is None else str(high)
        raise ValueError(f"{name} must be in [{low}, {upper}], got {value!r}")
    return int(value)


def _check_positive(name: str, value) -> float:
    value = float(value)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _check_unit(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    value = float(value)
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if open_high else value <= 1
    if not (low_ok and high_ok):
        raise ValueError(f"{name} must be in {'(' if open_low else '['}0, 1{')' if open_high else ']'}, "
                         f"got {value!r}")
    return value


# --------------------------------------------------------------------------- 1. e^ε

RATIO_TABLE_EPSILONS = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0)


def probability_ratio_table(epsilons=RATIO_TABLE_EPSILONS, *, base_probability: float = 0.01,
                            percent: bool = False) -> pd.DataFrame:
    """What ε promises: the bound e^ε on the ratio of an outcome's probabilities.

    For ε-DP, any outcome's probability with one person's record in the data is
    at most e^ε times (and at least e^−ε times) its probability without it.

    Parameters
    ----------
    epsilons : sequence of float, default (0.01, 0.1, 0.5, 1, 2, 5, 10)
        Privacy parameters, each > 0.
    base_probability : float, default 0.01
        An outcome's probability without the record, in [0, 1], to turn the
        ratio into a range of probabilities.
    percent : bool, default False
        Give the two probabilities in percent (× 100), as the Learn page shows them.

    Returns
    -------
    pandas.DataFrame
        Columns ``epsilon``, ``exp_epsilon`` (e^ε), ``lowest_probability``
        (base·e^−ε) and ``highest_probability`` (min(1, base·e^ε)).

    Examples
    --------
    >>> t = probability_ratio_table([1.0, 10.0])
    >>> [round(v, 2) for v in t["exp_epsilon"]]
    [2.72, 22026.47]
    """
    base = _check_unit("base_probability", base_probability)
    eps = np.array([check_epsilon(e) for e in epsilons], dtype=float)
    ratio = np.exp(eps)
    unit = 100.0 if percent else 1.0
    return pd.DataFrame({
        "epsilon": eps,
        "exp_epsilon": ratio,
        "lowest_probability": unit * base * np.exp(-eps),
        "highest_probability": unit * np.minimum(1.0, base * ratio),
    })


def exp_epsilon_curve(lower: float = 0.01, upper: float = 10.0, points: int = 200) -> pd.DataFrame:
    """e^ε on a log-spaced grid of ε from ``lower`` to ``upper`` (columns ``epsilon``, ``exp_epsilon``)."""
    lower, upper = check_epsilon(lower), check_epsilon(upper)
    if upper <= lower:
        raise ValueError(f"upper must exceed lower, got lower={lower!r}, upper={upper!r}")
    eps = np.geomspace(lower, upper, _check_int("points", points, 2))
    return pd.DataFrame({"epsilon": eps, "exp_epsilon": np.exp(eps)})


# --------------------------------------------------------------------------- 2. noise on a count

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
    a = geometric_alpha(epsilon, _check_positive("sensitivity", sensitivity))
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
    true_count = _check_int("true_count", true_count, 0)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_positive("sensitivity", sensitivity)
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


# --------------------------------------------------------------------------- 3. composition

def _noise_errors(mechanism: str, epsilon: float) -> tuple[float, float]:
    """(analytic RMSE, analytic mean absolute error) of one noisy count with sensitivity 1."""
    if mechanism == "laplace":
        b = laplace_scale(epsilon)
        return math.sqrt(2) * b, b  # Var = 2b², E|X| = b
    a = geometric_alpha(epsilon)
    return math.sqrt(geometric_variance(epsilon)), 2 * a / (1 - a * a)  # E|K| = 2α/(1 − α²)


def composition_demo(values, *, lower: float, upper: float, bins: int, epsilon: float,
                     mechanism: str = "geometric", reps: int = 2000,
                     seed: int | np.random.Generator | None = 0) -> dict:
    """The same total ε spent on a histogram two ways, and the error of each.

    Adding or removing one record changes exactly one bin count by 1, so the
    bins are queries on disjoint records and parallel composition lets each
    bin use the whole ε. Treating the bins as ``bins`` separate queries on the
    same records (sequential composition) gives each only ε/bins, which
    multiplies the noise sd by ``bins``.

    Parameters
    ----------
    values : array-like of float
        The column; missing values are dropped, the rest clipped to the
        public bounds.
    lower, upper : float
        Public bounds; ``bins`` equal-width bins cover [lower, upper].
    bins : int
        Number of bins, ≥ 1.
    epsilon : float
        Total privacy budget, > 0.
    mechanism : {"geometric", "laplace"}, default "geometric"
    reps : int, default 2000
        Simulated releases per way.
    seed : int, Generator or None, default 0

    Returns
    -------
    dict
        ``bins`` (DataFrame: ``left``, ``right``, ``label``, ``count``, one
        noisy release ``parallel`` and ``sequential``, and each way's analytic
        noise sd ``sd_parallel``, ``sd_sequential``) and ``summary`` (one row
        per way: ``way``, ``epsilon_per_bin``, ``epsilon_total``,
        ``rmse_analytic``, ``rmse_simulated``, ``mae_analytic``,
        ``mae_simulated``; errors are per bin).
    """
    if mechanism not in ("geometric", "laplace"):
        raise ValueError(f"mechanism must be 'geometric' or 'laplace', got {mechanism!r}")
    bins = _check_int("bins", bins, 1)
    reps = _check_int("reps", reps, 1)
    epsilon = check_epsilon(epsilon)
    if not upper > lower:
        raise ValueError(f"upper must exceed lower, got lower={lower!r}, upper={upper!r}")
    v = pd.to_numeric(pd.Series(np.asarray(values).ravel()), errors="coerce").dropna().to_numpy(float)
    edges = np.linspace(lower, upper, bins + 1)
    counts, _ = np.histogram(np.clip(v, lower, upper), bins=edges)
    rng = make_rng(seed)
    rows, draws = [], {}
    for way, eps_bin in (("parallel", epsilon), ("sequential", epsilon / bins)):
        if mechanism == "laplace":
            noise = rng.laplace(0.0, laplace_scale(eps_bin), size=(reps + 1, bins))
        else:
            noise = geometric_noise((reps + 1, bins), eps_bin, rng)
        draws[way] = counts + noise[0]
        rmse, mae = _noise_errors(mechanism, eps_bin)
        sim = noise[1:]
        rows.append({"way": way, "epsilon_per_bin": eps_bin, "epsilon_total": epsilon,
                     "rmse_analytic": rmse, "rmse_simulated": float(np.sqrt(np.mean(sim.astype(float) ** 2))),
                     "mae_analytic": mae, "mae_simulated": float(np.mean(np.abs(sim)))})
    summary = pd.DataFrame(rows)
    table = pd.DataFrame({
        "left": edges[:-1], "right": edges[1:],
        "label": [f"{lo:.3g}–{hi:.3g}" for lo, hi in zip(edges[:-1], edges[1:])],
        "count": counts, "parallel": draws["parallel"], "sequential": draws["sequential"],
        "sd_parallel": summary["rmse_analytic"].iloc[0], "sd_sequential": summary["rmse_analytic"].iloc[1],
    })
    return {"bins": table, "summary": summary, "mechanism": mechanism}


# --------------------------------------------------------------------------- 4. randomized response

def randomized_response_epsilon(p: float) -> float:
    """ε of Warner's randomized response with truth probability p ∈ [0.5, 1]: ln(p/(1 − p))."""
    p = _check_unit("p", p)
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
    p = _check_unit("p", p)
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
    n = _check_int("n", n, 1)
    p = _check_unit("p", p)
    if p == 0.5:
        return math.inf
    c2 = (2 * p - 1) ** 2
    if pi is None:
        return p * (1 - p) / (n * c2)
    lam = p * pi + (1 - p) * (1 - _check_unit("pi", pi))
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
    n = _check_int("n", n, 1)
    share = _check_unit("share", share)
    p = _check_unit("p", p)
    if p <= 0.5:
        raise ValueError(f"p must be in (0.5, 1], got {p!r}")
    reps = _check_int("reps", reps, 2)
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


# --------------------------------------------------------------------------- 5. exponential mechanism

def log_posterior_predictive(n: int, x: int, *, gamma=(1.0, 1.0)) -> np.ndarray:
    """log P(r | x) for r = 0..n: the Beta-binomial posterior predictive of r ones in n new records.

    With a Beta(γ₁, γ₂) prior and x ones among n records the posterior is
    Beta(a, b), a = γ₁ + x, b = γ₂ + n − x, and

        P(r | x) = C(n, r) · B(r + a, n − r + b) / B(a, b),

    computed with ``gammaln`` and ``betaln``.
    """
    n = _check_int("n", n, 1)
    x = _check_int("x", x, 0, n)
    g1, g2 = (_check_positive("gamma[0]", gamma[0]), _check_positive("gamma[1]", gamma[1]))
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
    >>> out = exponential_binary(2, 1, math.log(4), "abs", factor=1.0)  # weights 1/4, 1, 1/4
    >>> [round(float(v), 4) for v in out["probabilities"]]
    [0.1667, 0.6667, 0.1667]
    """
    n = _check_int("n", n, 1)
    x = _check_int("x", x, 0, n)
    epsilon = check_epsilon(epsilon)
    sensitivity = _check_positive("sensitivity", sensitivity)
    factor = _check_positive("factor", factor)
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
    n = _check_int("n", n, 1)
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


# --------------------------------------------------------------------------- 6. Beta–binomial synthesizer

def beta_binomial_bias(theta: float, n: int, alpha: float) -> float:
    """E[synthetic share] − θ = α(1 − 2θ)/(n + 2α): the prior pulls the estimate toward ½."""
    return alpha * (1 - 2 * _check_unit("theta", theta)) / (_check_int("n", n, 1) + 2 * alpha)


def _intervals(q: np.ndarray, n_synth: int, n: int, level: float) -> dict:
    """Intervals of each combining rule from implicate estimates q (reps × m)."""
    m = q.shape[1]
    v = q * (1 - q) / n_synth
    qbar, vbar = q.mean(axis=1), v.mean(axis=1)
    half = stats.norm.ppf(0.5 + level / 2)
    out = {"naive": (qbar, half * np.sqrt(vbar / m))}
    if m >= 2:
        b = q.var(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_f = (1 + 1 / m) * b - vbar
            t_star = np.where(t_f > 0, t_f, (n_synth / n) * vbar)
            df_f = np.where(t_f > 0, (m - 1) * (1 - vbar / ((1 + 1 / m) * b)) ** 2, np.inf)
            t_p = b / m + vbar
            df_p = np.where(b > 0, (m - 1) * (1 + vbar / (b / m)) ** 2, np.inf)
        df_f = np.where(np.isfinite(df_f) & (df_f > 0), df_f, np.inf)
        df_p = np.where(np.isfinite(df_p) & (df_p > 0), df_p, np.inf)
        out["full"] = (qbar, stats.t.ppf(0.5 + level / 2, df_f) * np.sqrt(t_star))
        out["partial"] = (qbar, stats.t.ppf(0.5 + level / 2, df_p) * np.sqrt(t_p))
    return out


def beta_binomial_sweep(theta: float, n: int, epsilons, ms, *, n_synth: int | None = None, reps: int = 2000,
                        level: float = 0.95, seed: int | np.random.Generator | None = 0) -> pd.DataFrame:
    """Bias and interval coverage of the Beta–binomial synthesizer over a grid of (ε, m).

    Each replicate draws confidential data x ~ Binomial(n, θ), then m
    implicates at ε/m each: θ̃ ~ Beta(x + α, n − x + α) with
    α = ñ/(e^{ε/m} − 1), and x̃ ~ Binomial(ñ, θ̃). Each implicate's estimate is
    q = x̃/ñ with v = q(1 − q)/ñ. Intervals for θ at ``level``:

    - ``naive``: q̄ ± z √(v̄/m), the implicates pooled as if they were real;
    - ``full`` (Reiter 2002, m ≥ 2): T_f = (1 + 1/m)b − v̄, replaced by
      (ñ/n)v̄ when negative, t with ν = (m − 1)(1 − v̄/((1 + 1/m)b))²;
    - ``partial`` (Reiter 2003, m ≥ 2): T_p = b/m + v̄, t with
      ν = (m − 1)(1 + m v̄/b)².

    None of them knows about the prior's pull toward ½ (Charest 2011), so
    coverage falls below ``level`` as ε falls. Vectorised over replicates.

    Parameters
    ----------
    theta : float
        Population share of ones, in [0, 1].
    n : int
        Confidential records, ≥ 1.
    epsilons : sequence of float
        Total budgets, each > 0.
    ms : sequence of int
        Numbers of implicates, each ≥ 1.
    n_synth : int, optional
        Synthetic records per implicate, ñ; default n.
    reps : int, default 2000
    level : float, default 0.95
    seed : int, Generator or None, default 0

    Returns
    -------
    pandas.DataFrame
        One row per (ε, m): ``epsilon``, ``m``, ``alpha``, ``bias_analytic``
        (:func:`beta_binomial_bias`), ``bias_simulated``, and for each rule
        ``coverage_<rule>`` and ``width_<rule>`` (median width; NaN where the
        rule needs m ≥ 2).

    References
    ----------
    Charest, A.-S. (2011). How can we analyze differentially-private synthetic datasets? JPC 2(2).
    Reiter, J. P. (2002, 2003). Journal of Official Statistics 18; Survey Methodology 29.
    """
    theta = _check_unit("theta", theta)
    n = _check_int("n", n, 1)
    n_synth = n if n_synth is None else _check_int("n_synth", n_synth, 1)
    reps = _check_int("reps", reps, 2)
    level = _check_unit("level", level, open_low=True, open_high=True)
    rng = make_rng(seed)
    rows = []
    for eps in epsilons:
        eps = check_epsilon(eps)
        for m in ms:
            m = _check_int("m", m, 1)
            alpha = max(dirichlet_alpha(n_synth, eps / m), 1e-300)  # α > 0 keeps Beta defined at x = 0
            x = rng.binomial(n, theta, size=(reps, 1))
            t = rng.beta(x + alpha, n - x + alpha, size=(reps, m))
            q = rng.binomial(n_synth, t) / n_synth
            row = {"epsilon": eps, "m": m, "alpha": alpha, "bias_analytic": beta_binomial_bias(theta, n, alpha),
                   "bias_simulated": float(q.mean() - theta)}
            ints = _intervals(q, n_synth, n, level)
            for rule in COMBINING_RULES:
                if rule in ints:
                    centre, half = ints[rule]
                    row[f"coverage_{rule}"] = float(np.mean(np.abs(centre - theta) <= half))
                    # Median: Reiter's ν_f can be near 0, which makes single intervals unbounded.
                    row[f"width_{rule}"] = float(np.median(2 * half))
                else:
                    row[f"coverage_{rule}"] = row[f"width_{rule}"] = np.nan
            rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- 7. sequential synthesis

def _ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    return beta, math.sqrt(resid @ resid / (len(y) - X.shape[1]))


# The demo's steps on the penguins, and how many rows of its ``summary`` each step has produced so far.
SEQUENTIAL_STEPS = {1: "1. sex from its proportions", 2: "2. bill length: bare predictions",
                    3: "3. bill length: plus residual noise", 4: "4. flipper length from sex and bill length"}
SEQUENTIAL_SUMMARY_ROWS = {1: 1, 2: 3, 3: 3, 4: 6}


def sequential_synthesis_demo(df: pd.DataFrame, *, category: str = "sex", first: str = "bill_length_mm",
                              second: str = "flipper_length_mm", n_synth: int | None = None,
                              seed: int | np.random.Generator | None = 0) -> dict:
    """Sequential regression synthesis in three steps, without and with residual noise.

    Rows missing any of the three columns are dropped. Step 1 draws the
    binary ``category`` from its observed proportions. Step 2 fits
    ``first`` ~ 1 + category by least squares and synthesizes it either as
    the bare prediction Xβ̂ ("bare") or as Xβ̂ + N(0, σ̂²) ("noisy"). Step 3
    fits ``second`` ~ 1 + category + first and synthesizes it the same way
    from each variant's own synthetic predictors. Both variants share step 1,
    so the residual noise is their only difference. Not DP: the models are
    fitted on the confidential data without noise (the Urban course's
    parametric approach).

    Returns
    -------
    dict
        ``real``, ``bare``, ``noisy`` (DataFrames of the three columns),
        ``models`` (DataFrame: ``target``, ``term``, ``coefficient``, plus the
        residual sd as term ``sigma``) and ``summary`` (DataFrame: ``statistic``
        with a ``real``, ``bare`` and ``noisy`` value: each numeric column's
        mean and sd, the category's share, and the correlation of the two
        numeric columns).
    """
    cols = [category, first, second]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"columns not in the data: {missing}")
    real = df[cols].dropna().reset_index(drop=True)
    levels = sorted(real[category].unique())
    if len(levels) != 2:
        raise ValueError(f"{category!r} must have exactly two values, found {len(levels)}")
    if len(real) < 4:
        raise ValueError("need at least 4 complete rows")
    n = len(real) if n_synth is None else _check_int("n_synth", n_synth, 1)
    rng = make_rng(seed)
    ind = (real[category] == levels[1]).to_numpy(float)
    y1, y2 = real[first].to_numpy(float), real[second].to_numpy(float)
    beta1, s1 = _ols(np.column_stack([np.ones(len(ind)), ind]), y1)
    beta2, s2 = _ols(np.column_stack([np.ones(len(ind)), ind, y1]), y2)

    syn_ind = (rng.random(n) < ind.mean()).astype(float)
    z1, z2 = rng.standard_normal(n), rng.standard_normal(n)
    out = {}
    for variant, noise in (("bare", 0.0), ("noisy", 1.0)):
        a = beta1[0] + beta1[1] * syn_ind + noise * s1 * z1
        b = beta2[0] + beta2[1] * syn_ind + beta2[2] * a + noise * s2 * z2
        out[variant] = pd.DataFrame({category: np.where(syn_ind == 1, levels[1], levels[0]), first: a, second: b})

    models = pd.DataFrame({
        "target": [first] * 3 + [second] * 4,
        "term": ["intercept", f"{category}={levels[1]}", "sigma",
                 "intercept", f"{category}={levels[1]}", first, "sigma"],
        "coefficient": [*beta1, s1, *beta2, s2],
    })

    def stats_of(d: pd.DataFrame) -> list[float]:
        return [float((d[category] == levels[1]).mean()), d[first].mean(), d[first].std(), d[second].mean(),
                d[second].std(), float(np.corrcoef(d[first], d[second])[0, 1]) if d[first].std() > 0 else np.nan]

    names = [f"share {category}={levels[1]}", f"mean {first}", f"sd {first}", f"mean {second}",
             f"sd {second}", f"correlation {first}, {second}"]
    summary = pd.DataFrame({"statistic": names, "real": stats_of(real), "bare": stats_of(out["bare"]),
                            "noisy": stats_of(out["noisy"])})
    return {"real": real, "bare": out["bare"], "noisy": out["noisy"], "models": models, "summary": summary,
            "levels": levels}


# --------------------------------------------------------------------------- links to a demo

def link_value(text: str, default, *, options=None, low=None, high=None):
    """A demo control's value read from a link's query parameter, or None if it is not a valid one.

    The text is read as the type of ``default`` (bool from "true"/"false", int, float, or str) and must
    be one of ``options`` or lie in [``low``, ``high``]; a link is user input, so anything else is
    dropped and the control keeps its default.

    Examples
    --------
    >>> link_value("0.5", 1.0, options=[0.1, 0.5, 1.0]), link_value("7", 3, low=0, high=5)
    (0.5, None)
    """
    try:
        if isinstance(default, bool):
            value = {"true": True, "false": False}[str(text).lower()]
        elif isinstance(default, (int, np.integer)):
            value = int(text)
        elif isinstance(default, float):
            value = float(text)
            if not math.isfinite(value):
                return None
        else:
            value = str(text)
    except (KeyError, TypeError, ValueError):
        return None
    if options is not None:
        return next((o for o in options if o == value or (isinstance(o, float) and math.isclose(o, value))), None)
    if (low is not None and value < low) or (high is not None and value > high):
        return None
    return value
