"""Disclosure risk of a release (docs/methods.md#disclosure-risk).

Formal risk from the ledger; match rates for row-linked releases; key-match
attribute disclosure, reproduced uniques and sample uniqueness for fully
synthetic ones; Gower distance to closest record, exact copies and
distance-based membership inference; attribute disclosure by prediction.
Each measure the app shows comes as a :class:`RiskEstimate` with its
interval, a no-information baseline, the original data released as is and,
with a holdout, the held-out records, and says itself whether it shows
disclosure beyond the baseline. Importing the package registers the
measures in :data:`dpsynth_core.metric_info.METRICS` (``kind="risk"``), each
with its section, needs, compute function and estimate.
"""

from .distance import (DistanceRisk, MembershipInference, distance_risk, exact_copy_share, gower_dcr,
                       membership_inference)
from .estimate import (CONFIDENCE, RiskEstimate, auc_interval, median_interval, mover_difference, verdict_summary,
                       wilson_interval)
from .formal import FormalRisk, applicable_measures, formal_risk, is_row_linked
from .inference import AttributeInference, attribute_inference
from .keymatch import (DEFAULT_TOLERANCE_SHARE, KeyMatchDisclosure, SampleUniqueness, UniqueReproduction,
                       default_sensitive_tolerance, key_match_disclosure, sample_uniqueness, unique_reproduction)
from .matching import MatchRates, MatchRisk, match_rates, match_risk, match_table
from .reference import Domain, column_domain, hit_probability, random_public_data

__all__ = [
    "CONFIDENCE",
    "DEFAULT_TOLERANCE_SHARE",
    "AttributeInference",
    "DistanceRisk",
    "Domain",
    "FormalRisk",
    "KeyMatchDisclosure",
    "MatchRates",
    "MatchRisk",
    "MembershipInference",
    "RiskEstimate",
    "SampleUniqueness",
    "UniqueReproduction",
    "applicable_measures",
    "attribute_inference",
    "auc_interval",
    "column_domain",
    "default_sensitive_tolerance",
    "distance_risk",
    "exact_copy_share",
    "formal_risk",
    "gower_dcr",
    "hit_probability",
    "is_row_linked",
    "key_match_disclosure",
    "match_rates",
    "match_risk",
    "match_table",
    "median_interval",
    "membership_inference",
    "mover_difference",
    "random_public_data",
    "sample_uniqueness",
    "unique_reproduction",
    "verdict_summary",
    "wilson_interval",
]
