"""Formal risk from the ledger, and which empirical measures a release admits."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..metric_info import Metric, register

__all__ = ["FormalRisk", "applicable_measures", "formal_risk", "is_row_linked"]


@dataclass(frozen=True, kw_only=True)
class FormalRisk:
    """The DP guarantee of a release as numbers.

    Attributes
    ----------
    is_dp : bool
        Whether the release carries a DP guarantee at all.
    epsilon, delta : float
        Total ε and δ spent (ε is inf when the release is not DP).
    exp_epsilon : float
        e^ε, the bound on how much one person's record can change the
        probability of any output (inf when not DP or when it overflows).
    """

    is_dp: bool
    epsilon: float
    delta: float
    exp_epsilon: float


def formal_risk(ledger: dict) -> FormalRisk:
    """ε, δ and e^ε of a synthesis from its ledger.

    Examples
    --------
    >>> r = formal_risk({"is_dp": True, "epsilon_total": 1.0, "delta": 0.0})
    >>> round(r.exp_epsilon, 2)
    2.72
    >>> formal_risk({"is_dp": True, "epsilon_total": 10.0, "delta": 0.0}).exp_epsilon.__round__()
    22026
    """
    if not isinstance(ledger, dict):
        raise TypeError(f"ledger must be a dict, got {type(ledger).__name__}")
    is_dp = bool(ledger.get("is_dp")) and ledger.get("epsilon_total") is not None
    eps = float(ledger["epsilon_total"]) if is_dp else math.inf
    ratio = math.exp(eps) if eps < 700 else math.inf
    return FormalRisk(is_dp=is_dp, epsilon=eps, delta=float(ledger.get("delta") or 0.0), exp_epsilon=ratio)


def is_row_linked(ledger: dict) -> bool:
    """True for a partially synthetic release: kept columns tie released row j to record j."""
    return bool(ledger.get("kept_columns"))


def applicable_measures(ledger: dict, *, holdout: bool) -> str:
    """One sentence: which disclosure measures apply to this release, and why."""
    if is_row_linked(ledger):
        kept = len(ledger["kept_columns"])
        text = (f"This release is partially synthetic ({kept} column{'s' * (kept != 1)} kept as they are), so "
                "released row j still stands for confidential record j: an intruder can try to find a "
                "person's row by matching key variables, and match rates measure how often that works; "
                "distances to closest records and prediction of the sensitive column apply as well")
    else:
        text = ("This release is fully synthetic, so no released row stands for a particular person and "
                "identity matching is ill-defined: what applies is whether synthetic rows sharing a "
                "person's key variables reveal their sensitive value, whether records unique on the keys "
                "reappear, how close synthetic rows come to real ones, and prediction of the sensitive column")
    if holdout:
        return text + "; rows held out before synthesis show what the release gives away about people it never saw."
    return text + "; hold out rows before synthesis to tell disclosure about the records used from what holds for anyone."


register(Metric(
    name="epsilon", label="ε (privacy budget)", kind="risk", goal="minimize", lower=0.0, upper=math.inf, best=0.0,
    reading="Total privacy budget spent; e^ε bounds how much one person's record can change any output's probability.",
    section="formal",  # read off the ledger (formal_risk), not computed from the data
))
