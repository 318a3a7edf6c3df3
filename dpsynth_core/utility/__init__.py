"""Utility metrics: how well synthetic data keep what the real data say.

- :mod:`.univariate`: shared-bin histograms, ECDFs and the KS distance, one
  column at a time.
- :mod:`.propensity`: can a discriminator tell real rows from synthetic ones
  (pMSE, pMSE ratio, SPECKS, AUC)?
- :mod:`.regression`: does a regression give the same answers on both
  (confidence-interval overlap, SSO)?
- :mod:`.design`: the design-matrix encoding the two model-based metrics share.

Importing the package registers the headline metrics (``pmse``,
``pmse_ratio``, ``specks``, ``auc``, ``ks_mean``, ``ci_overlap_mean``) in
:data:`dpsynth_core.metric_info.METRICS`.
"""

from .design import Design, column_kinds, propensity_design
from .propensity import PropensityResult, propensity_metrics
from .regression import RegressionOverlap, ci_overlap, regression_ci_overlap
from .univariate import EcdfData, ecdf_data, histogram_data, ks_mean, ks_statistic

__all__ = [
    "Design",
    "EcdfData",
    "PropensityResult",
    "RegressionOverlap",
    "ci_overlap",
    "column_kinds",
    "ecdf_data",
    "histogram_data",
    "ks_mean",
    "ks_statistic",
    "propensity_design",
    "propensity_metrics",
    "regression_ci_overlap",
]
