"""A risk figure with its references, its interval and what it allows one to say.

Every disclosure measure the app shows is a :class:`RiskEstimate`: the value
for this release with a confidence interval, the same measure on the original
data released as is (the ceiling), a no-information baseline (random guessing
or random data within the public domain: what anybody gets without the
release) and, when rows were held out before synthesis, the same measure on
those rows (records the synthesizer never saw). :meth:`RiskEstimate.verdict`
turns them into the sentence the app shows, so "no measurable disclosure
beyond the baseline" is decided here, by the numbers, and tested.

Comparisons use the interval of a difference. When two estimates come from
independent records, that interval is built from their own intervals by the
MOVER rule (Zou & Donner 2008; Newcombe's method 10 for two proportions).
An estimator that compares two guesses on the *same* records supplies a
paired interval instead (``excess_lower``/``excess_upper``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.stats import binom, norm

from ..metric_info import METRICS

__all__ = [
    "CONFIDENCE",
    "RiskEstimate",
    "auc_interval",
    "median_interval",
    "mover_difference",
    "verdict_summary",
    "wilson_interval",
]

#: Confidence level of every interval the app shows.
CONFIDENCE = 0.95


def _z(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, Real) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
    return float(norm.ppf(0.5 + confidence / 2))


def wilson_interval(successes: float, n: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n``.

    Parameters
    ----------
    successes : float
        Number of successes, in [0, n]. May be fractional when the proportion
        is a mean of values in [0, 1] (an expected match count); the interval
        is then conservative, since such values vary at most as much as 0/1
        ones with the same mean.
    n : int
        Number of trials. Must be at least 1.
    confidence : float, default=0.95
        Must be in (0, 1).

    Returns
    -------
    tuple of float
        ``(lower, upper)``, inside [0, 1].

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession,
       and statistical inference. JASA 22(158), 209-212.

    Examples
    --------
    >>> lo, hi = wilson_interval(8, 10)
    >>> round(lo, 4), round(hi, 4)
    (0.4902, 0.9433)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n] = [0, {n}], got {successes!r}")
    z = _z(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At 0 or n successes the bound is exactly 0 or 1; rounding would leave 1e-21.
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return lower, upper


def median_interval(values: np.ndarray, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Distribution-free interval for the median: two order statistics.

    The number of values below the population median is Binomial(n, 1/2),
    so ``[x_(l), x_(u)]`` with l, u its quantiles covers the median with at
    least the stated confidence, without resampling.

    Examples
    --------
    >>> median_interval(np.arange(100.0))
    (39.0, 60.0)
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 0:
        raise ValueError("median_interval needs at least one value")
    alpha = 1 - confidence
    _z(confidence)
    lo = int(binom.ppf(alpha / 2, n, 0.5))
    hi = int(binom.ppf(1 - alpha / 2, n, 0.5))
    return float(x[max(lo - 1, 0)]), float(x[min(hi, n - 1)])


def auc_interval(auc: float, n_pos: int, n_neg: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Normal interval for a ROC AUC with the Hanley & McNeil (1982) standard error.

    Examples
    --------
    >>> lo, hi = auc_interval(0.5, 100, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.42, 0.58)
    """
    if n_pos < 1 or n_neg < 1:
        raise ValueError(f"an AUC needs both groups, got {n_pos} and {n_neg} records")
    q1, q2 = auc / (2 - auc), 2 * auc * auc / (1 + auc)
    var = (auc * (1 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    half = _z(confidence) * math.sqrt(max(var, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def mover_difference(a: float, a_int: tuple[float, float], b: float,
                     b_int: tuple[float, float]) -> tuple[float, float]:
    """Interval for ``a - b`` from the intervals of two independent estimates (MOVER).

    Examples
    --------
    >>> mover_difference(0.5, (0.25, 0.75), 0.25, (0.25, 0.25))  # b known exactly
    (0.0, 0.5)
    """
    d = a - b
    lower = d - math.sqrt((a - a_int[0]) ** 2 + (b_int[1] - b) ** 2)
    upper = d + math.sqrt((a_int[1] - a) ** 2 + (b - b_int[0]) ** 2)
    return lower, upper


def _fmt(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.3g}"


@dataclass(frozen=True, kw_only=True)
class RiskEstimate:
    """One disclosure measure of a release with its interval and references.

    Attributes
    ----------
    metric : str
        Name in :data:`~dpsynth_core.metric_info.METRICS`; its ``goal`` says
        which direction is riskier.
    value, lower, upper : float
        The measure for the release and its interval.
    interval : str
        How the interval was obtained ("Wilson", "Hanley–McNeil", ...).
    baseline, baseline_lower, baseline_upper : float
        No-information baseline and its interval (equal to it when exact).
    baseline_label : str
        What the baseline is, in words.
    original : float
        The same measure if the original data were released as is.
    holdout, holdout_lower, holdout_upper : float or None
        The same measure on held-out records; None without a holdout.
    excess_lower, excess_upper : float or None
        Paired interval for ``value - baseline`` when both were measured on
        the same records; None: built from the two intervals (MOVER).
    holdout_applies : bool
        Whether held-out records would tell disclosure about the records used
        from what holds for anyone (False for match rates, whose rows are
        linked, and for a membership attack, built from the holdout).
    n : int
        Number of records the measure averages over.
    confidence : float
        Level of every interval.
    """

    metric: str
    value: float
    lower: float
    upper: float
    interval: str
    baseline: float
    baseline_lower: float
    baseline_upper: float
    baseline_label: str
    original: float
    holdout: float | None = None
    holdout_lower: float | None = None
    holdout_upper: float | None = None
    excess_lower: float | None = None
    excess_upper: float | None = None
    holdout_applies: bool = True
    n: int = 0
    confidence: float = CONFIDENCE

    @property
    def label(self) -> str:
        return METRICS[self.metric].label if self.metric in METRICS else self.metric

    @property
    def riskier(self) -> int:
        """+1 when larger values mean more disclosure, -1 when smaller do."""
        info = METRICS.get(self.metric)
        if info is None or info.goal == "minimize":
            return 1
        if info.goal == "maximize":
            return -1
        return 1 if self.value >= info.best else -1

    def excess_interval(self) -> tuple[float, float]:
        """Interval for ``value - baseline``."""
        if self.excess_lower is not None and self.excess_upper is not None:
            return self.excess_lower, self.excess_upper
        return mover_difference(self.value, (self.lower, self.upper),
                                self.baseline, (self.baseline_lower, self.baseline_upper))

    def _beyond(self, interval: tuple[float, float]) -> bool:
        lo, hi = interval
        return bool(lo > 0) if self.riskier > 0 else bool(hi < 0)

    @property
    def beyond_baseline(self) -> bool:
        """True when the release is riskier than the baseline by more than sampling error."""
        if math.isnan(self.value):
            return False
        return self._beyond(self.excess_interval())

    @property
    def beyond_holdout(self) -> bool | None:
        """Riskier for the records the synthesizer saw than for held-out ones; None without a holdout."""
        if self.holdout is None or math.isnan(self.holdout) or math.isnan(self.value):
            return None
        return self._beyond(mover_difference(self.value, (self.lower, self.upper),
                                             self.holdout, (self.holdout_lower, self.holdout_upper)))

    @property
    def finding(self) -> str:
        """"none" (within sampling error of the baseline), "population" (beyond the baseline
        but not beyond held-out records), "undetermined" (beyond the baseline, with no held-out
        records to tell disclosure from what holds for the population) or "disclosure".

        Random data within the public domain is a low bar: any synthesis that learned the population's
        patterns (a DP one at ε = 1, say) beats it on distances, key matches and predictions. Only
        records the synthesizer never saw separate that from disclosure about the records it used, so
        without them a measure to which a holdout applies is not called disclosure.
        """
        if not self.beyond_baseline:
            return "none"
        if self.beyond_holdout is None and self.holdout_applies:
            return "undetermined"
        return "population" if self.beyond_holdout is False else "disclosure"

    def verdict(self) -> str:
        """The sentence the app shows for this measure."""
        pct = f"{self.confidence:.0%}"
        shown = f"{_fmt(self.value)} ({pct} {self.interval} interval {_fmt(self.lower)}–{_fmt(self.upper)})"
        base = f"{_fmt(self.baseline)} for {self.baseline_label}"
        ceiling = f" Released as is, the original data would score {_fmt(self.original)}."
        if math.isnan(self.value):
            return f"{self.label}: not measurable on this release."
        if self.finding == "none":
            return (f"{self.label}: no measurable disclosure beyond the baseline: {shown} against "
                    f"{base}." + ceiling)
        if self.finding == "population":
            return (f"{self.label}: {shown} is beyond the baseline ({base}) but not beyond the "
                    f"{_fmt(self.holdout)} of held-out records the synthesizer never saw, so it reflects "
                    "what holds for the population rather than disclosure about the records it was "
                    "trained on." + ceiling)
        if self.finding == "undetermined":
            return (f"{self.label}: {shown} is beyond the baseline ({base}), but without held-out records this "
                    "cannot tell disclosure about the records used from what holds for the whole population: a "
                    "synthesis that learned only the population's patterns scores this too. Hold out rows to "
                    "decide." + ceiling)
        held = (f" Held-out records score {_fmt(self.holdout)}, so the records used for synthesis are more exposed."
                if self.holdout is not None else "")
        return f"{self.label}: {shown} is beyond the baseline ({base}): measurable disclosure." + held + ceiling


def verdict_summary(estimates) -> str:
    """One line on the verdicts of several measures, the most serious first, naming the measures.

    Examples
    --------
    >>> verdict_summary([])
    'No disclosure measure applies yet.'
    """
    estimates = list(estimates)
    if not estimates:
        return "No disclosure measure applies yet."
    groups = {}
    for est in estimates:
        groups.setdefault("nan" if math.isnan(est.value) else est.finding, []).append(est.label)
    words = {
        "disclosure": "measurable disclosure on {k}: {names}",
        "undetermined": "{k} beyond the baseline of random data, undecided without held-out records ({names}): "
                        "hold out rows to decide",
        "population": "{k} beyond the baseline but no more for the records used than for held-out ones, so "
                      "population-level ({names})",
        "none": "no measurable disclosure on {k}",
        "nan": "{k} not measurable ({names})",
    }
    parts = [words[f].format(k=_count(len(groups[f])), names=", ".join(groups[f])) for f in words if f in groups]
    return f"Verdicts on {_count(len(estimates))}: " + "; ".join(parts) + "."


def _count(k: int) -> str:
    return f"{k} measure" + ("" if k == 1 else "s")
