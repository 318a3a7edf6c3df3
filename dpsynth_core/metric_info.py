"""What each metric means for a plot: which way is better and its range.

Stored as data (as SDMetrics does with ``goal``, ``min_value``,
``max_value``) so the R-U map and the metric tiles orient axes and colours
without special cases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Goal = Literal["maximize", "minimize", "target"]


@dataclass(frozen=True, kw_only=True)
class MetricInfo:
    """Description of one metric.

    Parameters
    ----------
    name : str
        Column name used in tables (``pmse_ratio``).
    label : str
        Short label for axes and tiles.
    kind : {"utility", "risk"}
        Which axis of the risk-utility map it belongs to.
    goal : {"maximize", "minimize", "target"}
        Direction in which the metric improves. For ``"target"`` the best
        value is ``best`` (AUC 0.5, pMSE ratio 1).
    lower, upper : float
        Range of the metric (``inf`` where unbounded).
    best : float
        The value a perfect synthesis (utility) or a release with no
        disclosure (risk) would reach.
    reading : str
        One line telling a person how to read the number.
    """

    name: str
    label: str
    kind: Literal["utility", "risk"]
    goal: Goal
    lower: float
    upper: float
    best: float
    reading: str

    def better(self, a: float, b: float) -> bool:
        """True when value ``a`` is strictly better than ``b`` for this metric."""
        if self.goal == "maximize":
            return a > b
        if self.goal == "minimize":
            return a < b
        return abs(a - self.best) < abs(b - self.best)


METRICS: dict[str, MetricInfo] = {}


def register(info: MetricInfo) -> MetricInfo:
    """Add ``info`` to :data:`METRICS` (names must be unique)."""
    if info.name in METRICS:
        raise ValueError(f"metric {info.name!r} is already registered")
    METRICS[info.name] = info
    return info
