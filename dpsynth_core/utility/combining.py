"""Combining rules: one estimate and interval from m synthetic implicates.

Each implicate l gives an estimate q_l and its estimated variance v_l.
With q̄ = mean q_l, b = Σ (q_l − q̄)² / (m − 1) and v̄ = mean v_l:

- fully synthetic data (Reiter 2002): T_f = (1 + 1/m) b − v̄, which can be
  negative; then T_f* = max(0, T_f) + (n_s/n) v̄ · 1[T_f < 0] is used.
  Reference t with ν_f = (m − 1)(1 − v̄ / ((1 + 1/m) b))² degrees of freedom;
  where the adjustment applies ν_f is not defined and the normal is used.
- partially synthetic data (Reiter 2003): T_p = b/m + v̄, with
  ν_p = (m − 1)(1 + m v̄ / b)² (normal when b = 0).

Both rules assume each implicate is drawn from a posterior predictive
distribution; :data:`COMBINING_CAVEAT` says why that fails for DP
synthesizers.

References
----------
Reiter, J. P. (2002). Satisfying disclosure restrictions with synthetic data
sets. Journal of Official Statistics 18(4), 531-543.

Reiter, J. P. (2003). Inference for partially synthetic, public use
microdata sets. Survey Methodology 29(2), 181-188.

Charest, A.-S. (2011). How can we analyze differentially-private synthetic
datasets? Journal of Privacy and Confidentiality 2(2), 21-33.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["COMBINING_CAVEAT", "CombinedEstimate", "combine_implicates"]

#: What the app says wherever it shows combined intervals.
COMBINING_CAVEAT = (
    "Combined by Reiter's rules for synthetic implicates. Charest (2011) shows these rules mis-state "
    "the variance for differentially private synthesizers: the DP noise (and any prior it adds) is not "
    "part of the model the rules assume, so the intervals can be too narrow or too wide."
)


@dataclass(frozen=True)
class CombinedEstimate:
    """Estimates of m implicates combined into one, per quantity.

    Attributes
    ----------
    estimate : ndarray
        q̄, the mean of the implicates' estimates.
    between : ndarray
        b, their variance across implicates (denominator m − 1).
    within : ndarray
        v̄, the mean of their estimated variances.
    raw_variance : ndarray
        T_f (fully synthetic; may be negative) or T_p (partially).
    variance : ndarray
        The variance used for the interval: T_f* or T_p.
    df : ndarray
        Degrees of freedom of the reference t (inf: normal).
    adjusted : ndarray of bool
        True where T_f < 0 and T_f* replaced it.
    lo, hi : ndarray
        The interval q̄ ∓ t_{ν}(½ + level/2) √variance.
    m : int
        Number of implicates.
    rule : str
        ``"fully"`` (Reiter 2002) or ``"partially"`` (Reiter 2003).
    level : float
        Confidence level.
    """

    estimate: np.ndarray
    between: np.ndarray
    within: np.ndarray
    raw_variance: np.ndarray
    variance: np.ndarray
    df: np.ndarray
    adjusted: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    m: int
    rule: str
    level: float

    def table(self, index=None) -> pd.DataFrame:
        """The combination as a table, one row per quantity."""
        return pd.DataFrame(
            {"estimate": self.estimate, "between_b": self.between, "within_v": self.within,
             "raw_variance": self.raw_variance, "variance": self.variance, "df": self.df,
             "adjusted": self.adjusted, "lo": self.lo, "hi": self.hi},
            index=index,
        )


def combine_implicates(
    estimates,
    variances,
    *,
    partially_synthetic: bool = False,
    n_real: int | None = None,
    n_synth: int | None = None,
    level: float = 0.95,
) -> CombinedEstimate:
    """Combine m implicates' estimates and variances (Reiter 2002 / 2003).

    Parameters
    ----------
    estimates : array-like of shape (m,) or (m, p)
        q_l, one row per implicate (p quantities at once).
    variances : array-like, same shape
        v_l, the estimated sampling variance of each q_l (squared standard
        errors).
    partially_synthetic : bool, default False
        Use T_p (Reiter 2003) instead of the fully synthetic T_f (2002).
        A synthesis that keeps some columns as they are is partially
        synthetic.
    n_real, n_synth : int, optional
        n and n_s, the sizes of the confidential data and of each
        implicate; needed for T_f* when T_f < 0 (fully synthetic only).
    level : float, default 0.95
        Confidence level, in (0, 1).

    Returns
    -------
    CombinedEstimate
        NaN where an implicate's estimate or variance is NaN.

    Raises
    ------
    ValueError
        With fewer than two implicates, mismatched shapes, a negative
        variance, or T_f < 0 without ``n_real`` and ``n_synth``.

    Examples
    --------
    Three implicates of one estimate: q̄ = 2, b = 1, v̄ = 0.5.

    >>> c = combine_implicates([1.0, 2.0, 3.0], [0.4, 0.5, 0.6])
    >>> float(c.estimate[0]), float(c.raw_variance[0])      # T_f = (1 + 1/3)·1 − 0.5
    (2.0, 0.8333333333333333)
    >>> float(combine_implicates([1.0, 2.0, 3.0], [0.4, 0.5, 0.6], partially_synthetic=True).variance[0])
    0.8333333333333333
    """
    q = np.asarray(estimates, dtype=float)
    v = np.asarray(variances, dtype=float)
    if q.shape != v.shape:
        raise ValueError(f"estimates and variances must have the same shape, got {q.shape} and {v.shape}")
    if q.ndim == 1:
        q, v = q[:, None], v[:, None]
    if q.ndim != 2:
        raise ValueError(f"estimates must be of shape (m,) or (m, p), got {q.shape}")
    m = q.shape[0]
    if m < 2:
        raise ValueError(f"combining needs at least 2 implicates, got {m}")
    if np.any(v < 0):
        raise ValueError("variances must be non-negative")
    if isinstance(level, bool) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")

    qbar = q.mean(axis=0)
    b = q.var(axis=0, ddof=1)
    vbar = v.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if partially_synthetic:
            raw = b / m + vbar
            total = raw
            adjusted = np.zeros(qbar.shape, dtype=bool)
            df = np.where(b > 0, (m - 1) * (1.0 + m * vbar / b) ** 2, np.inf)
        else:
            raw = (1.0 + 1.0 / m) * b - vbar
            adjusted = raw < 0
            if adjusted.any() and (n_real is None or n_synth is None):
                raise ValueError("T_f < 0 for some quantity: pass n_real and n_synth for the adjusted T_f*")
            ratio = (n_synth / n_real) if adjusted.any() else 0.0
            total = np.maximum(raw, 0.0) + ratio * vbar * adjusted
            df = np.where(adjusted, np.inf, (m - 1) * (1.0 - vbar / ((1.0 + 1.0 / m) * b)) ** 2)
    # b = v̄ = 0 (identical implicates, no sampling error): nothing to refer to but the normal.
    df = np.where(np.isnan(df), np.inf, df)
    df = np.where(np.isnan(qbar), np.nan, df)
    quant = np.where(np.isinf(df), stats.norm.ppf(0.5 + level / 2.0),
                     stats.t.ppf(0.5 + level / 2.0, np.where(np.isinf(df) | np.isnan(df), 1.0, df)))
    half = quant * np.sqrt(total)
    return CombinedEstimate(
        estimate=qbar, between=b, within=vbar, raw_variance=raw, variance=total, df=df,
        adjusted=adjusted, lo=qbar - half, hi=qbar + half, m=m,
        rule="partially" if partially_synthetic else "fully", level=float(level),
    )
