"""Utility metrics: how well synthetic data keep what the real data say.

- :mod:`.univariate`: shared-bin histograms, ECDFs and the KS distance, one
  column at a time.
- :mod:`.marginals`: per-column distances (KS, total variation, Hellinger),
  moments, percentiles, shares of zeros and of missing values, with a note
  for every value that cannot be computed.
- :mod:`.bivariate`: correlation fit and Cramér's V fit.
- :mod:`.pegs_distance`: the PeGS paper's marginal and conditional distances.
- :mod:`.propensity`: can a discriminator tell real rows from synthetic ones
  (pMSE, pMSE ratio, SPECKS, AUC; in-sample or on held-out rows)?
- :mod:`.regression`: does a regression give the same answers on both
  (confidence-interval overlap, SSO, PeGS regression distance), with
  :mod:`.combining` for m implicates?
- :mod:`.report`: the Compare page's summary, tiles and discriminator choices.
- :mod:`.design`: the design-matrix encoding the two model-based metrics share.

Importing the package registers every utility metric in
:data:`dpsynth_core.metric_info.METRICS`, each beside its code: its section,
direction, range, needs and compute function.
"""

from .bivariate import CorrelationFit, association_fit, correlation_fit, cramers_v, matrix_fit
from .combining import COMBINING_CAVEAT, CombinedEstimate, combine_implicates
from .design import Design, column_kinds, propensity_design
from .marginals import (ColumnComparison, column_distances, compare_columns, hellinger_distance, missing_shares,
                        moments_table, special_value_shares, tv_distance)
from .pegs_distance import PegsDistances, pegs_distances
from .propensity import PropensityResult, headline_propensity, propensity_metrics
from .regression import RegressionOverlap, ci_overlap, regression_ci_overlap, regression_outcomes
from .report import (DISCRIMINATORS, Tile, UtilitySummary, discriminator_variant, format_value, metric_tile,
                     propensity_tiles, run_discriminator, section_tiles, utility_summary)
from .univariate import EcdfData, ecdf_data, histogram_data, ks_mean, ks_statistic
from .verdict import Verdict, pmse_ratio_level, utility_verdict

__all__ = [
    "COMBINING_CAVEAT",
    "DISCRIMINATORS",
    "ColumnComparison",
    "CombinedEstimate",
    "CorrelationFit",
    "Design",
    "EcdfData",
    "PegsDistances",
    "PropensityResult",
    "RegressionOverlap",
    "Tile",
    "UtilitySummary",
    "association_fit",
    "ci_overlap",
    "column_distances",
    "column_kinds",
    "combine_implicates",
    "compare_columns",
    "correlation_fit",
    "cramers_v",
    "ecdf_data",
    "discriminator_variant",
    "format_value",
    "hellinger_distance",
    "histogram_data",
    "ks_mean",
    "ks_statistic",
    "matrix_fit",
    "metric_tile",
    "missing_shares",
    "moments_table",
    "pegs_distances",
    "propensity_design",
    "headline_propensity",
    "propensity_metrics",
    "propensity_tiles",
    "regression_ci_overlap",
    "regression_outcomes",
    "run_discriminator",
    "section_tiles",
    "special_value_shares",
    "tv_distance",
    "utility_summary",
    "utility_verdict",
    "Verdict",
    "pmse_ratio_level",
]
