"""The Compare page's verdict: what the sections below it found, in four sentences, the worst first named.

The level is the pMSE ratio's reading (:data:`~dpsynth_core.constraints.PMSE_RATIO_GOOD` and
``PMSE_RATIO_ACCEPTABLE``, on the headline discriminator's sample), since it is the one figure that sees every
column and pair at once; the other sentences name the column, the pair and the coefficients that moved most,
so a steward knows where to look.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import constraints
from .propensity import PropensityResult
from .regression import RegressionOverlap
from .report import UtilitySummary

__all__ = ["Verdict", "pmse_ratio_level", "utility_verdict"]

LEVEL_WORDS = {"good": "good: hard to tell apart", "fair": "acceptable: usable, with visible losses",
               "poor": "poor: a discriminator tells the synthesis apart clearly", "unknown": "not computed"}


@dataclass(frozen=True)
class Verdict:
    """``level`` ("good", "fair", "poor" or "unknown") and one sentence per aspect."""

    level: str
    lines: tuple[str, ...]


def pmse_ratio_level(ratio: float) -> str:
    """The reading of a headline pMSE ratio.

    >>> [pmse_ratio_level(r) for r in (1.2, 3.0, 9.99, 10.0, float("inf"), float("nan"))]
    ['good', 'fair', 'fair', 'poor', 'poor', 'unknown']
    """
    if math.isnan(ratio):
        return "unknown"
    return "good" if ratio < constraints.PMSE_RATIO_GOOD else \
        "fair" if ratio < constraints.PMSE_RATIO_ACCEPTABLE else "poor"


def utility_verdict(prop: PropensityResult, summary: UtilitySummary, reg: RegressionOverlap | None = None,
                    *, outcome: str | None = None) -> Verdict:
    """The verdict of one comparison: ``prop`` the headline discriminator's fit, ``summary`` the column and
    pair measures, ``reg`` the regression (None: none fitted) of ``outcome``."""
    level = pmse_ratio_level(prop.pmse_ratio)
    lines = [f"pMSE ratio {prop.pmse_ratio:.3g} on {prop.n_used:,} stacked rows: {LEVEL_WORDS[level]} "
             f"(under {constraints.PMSE_RATIO_GOOD:g} good, under {constraints.PMSE_RATIO_ACCEPTABLE:g} acceptable)."]
    if prop.capped and level != "poor":  # the reading cannot be trusted: the ratio could not have read poor
        level = "unknown"
        lines[0] = (f"pMSE ratio {prop.pmse_ratio:.3g} on {prop.n_used:,} stacked rows, but on so few rows it cannot "
                    f"exceed {prop.ratio_ceiling:.3g}: it cannot tell fair from poor here (SPECKS "
                    f"{prop.specks:.2f}, AUC {prop.auc:.2f}).")
    lines.append(_columns_line(summary))
    pairs = _pairs_line(summary)
    if pairs:
        lines.append(pairs)
    if reg is not None:
        n = len(reg.table)
        agree = int(round(reg.sso * n))
        lines.append(f"Regression of {outcome}: {agree} of {n} coefficients agree in sign, significance and "
                     f"overlapping intervals; mean interval overlap {reg.mean_overlap:.2f} (1 identical).")
    return Verdict(level, tuple(lines))


def _columns_line(summary: UtilitySummary) -> str:
    d = summary.columns.distances
    per_column = d["ks"].fillna(d["tv"]).astype(float).dropna()
    parts = []
    for name, label in (("ks", "mean KS"), ("tv", "mean TV")):
        values = d[name].dropna()
        if len(values):
            kind = "numeric" if name == "ks" else "categorical"
            parts.append(f"{label} {values.mean():.3f} over {len(values)} {kind} column{'s' * (len(values) > 1)}")
    if not len(per_column):
        return "Columns: no distance could be computed."
    worst = per_column.idxmax()
    which = "KS" if not np.isnan(d.loc[worst, "ks"]) else "TV"
    return f"Columns: {', '.join(parts)}; furthest from the real data: {worst} ({which} {per_column[worst]:.3f})."


def _pairs_line(summary: UtilitySummary) -> str | None:
    parts = []
    for fit, what in ((summary.correlation, "correlation"), (summary.association, "Cramér's V")):
        pairs = fit.pairs.dropna(subset=["difference"]) if len(fit.pairs) else fit.pairs
        if len(pairs):
            row = pairs.loc[pairs["difference"].abs().idxmax()]
            parts.append(f"the {what} of {row['a']} and {row['b']} moved most ({row['real']:.2f} → {row['synth']:.2f})")
    return ("Pairs: " + "; ".join(parts) + ".") if parts else None
