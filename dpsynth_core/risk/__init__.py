"""Disclosure risk of a release (METHODS.md §4).

Match rates for row-linked releases, Gower distance to closest record,
exact copies and distance-based membership inference. Importing the package
registers the headline numbers in :data:`dpsynth_core.metric_info.METRICS`
with ``kind="risk"``.
"""

from .distance import MembershipInference, exact_copy_share, gower_dcr, membership_inference
from .matching import MatchRates, match_rates

__all__ = [
    "MatchRates",
    "MembershipInference",
    "exact_copy_share",
    "gower_dcr",
    "match_rates",
    "membership_inference",
]
