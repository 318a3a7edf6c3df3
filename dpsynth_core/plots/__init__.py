"""Plotly figure builders: each takes data computed elsewhere in the core and returns a figure.

Grouped by concern: :mod:`.base` (shared helpers, distributions, the R-U
map), :mod:`.utility` (Compare page), :mod:`.risk` (Risk page), :mod:`.audit` (the privacy audit).
"""

from .base import (ECDF_LEVELS, REAL_COLOUR, SYNTH_COLOUR, ci_forest_figure, dcr_figure, ecdf_figure, esc,
                   figure_png, histogram_figure, png_unavailable, ru_figure, step_points)
from . import teaching  # noqa: F401  (Learn: plots.teaching.*)
from .audit import audit_figure
from .risk import dcr_distributions_figure, estimate_figure, roc_figure
from .utility import (correlation_difference_figure, histogram_grid_figure, importance_figure, missing_figure,
                      propensity_roc_figure, propensity_scores_figure)

__all__ = ["ECDF_LEVELS", "REAL_COLOUR", "SYNTH_COLOUR", "ci_forest_figure", "dcr_figure", "ecdf_figure", "esc",
           "audit_figure", "figure_png", "histogram_figure", "png_unavailable", "ru_figure", "step_points",
           "dcr_distributions_figure", "estimate_figure", "roc_figure",
           "correlation_difference_figure", "histogram_grid_figure", "importance_figure", "missing_figure",
           "propensity_roc_figure", "propensity_scores_figure"]
