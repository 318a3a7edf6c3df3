"""What the Compare page shows, assembled: the summary, the tiles, the discriminator choices.

The page stays a thin layer: it picks a discriminator from
:data:`DISCRIMINATORS`, asks for :func:`utility_summary` and
:func:`propensity_tiles`, and draws what comes back. Values a tile cannot
show as a finite number (the CART pMSE ratio over a null of 0) come with the
sentence that explains them, never as a bare ``inf``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from .. import constraints
from ..metric_info import METRICS, MetricContext, metrics
from .bivariate import CorrelationFit, association_fit, correlation_fit
from .design import factorized_once
from .marginals import ColumnComparison, compare_columns
from .pegs_distance import PegsDistances, pegs_distances
from .propensity import PropensityResult, headline_propensity, propensity_metrics

__all__ = ["DISCRIMINATORS", "Discriminator", "Tile", "UtilitySummary", "discriminator_variant", "format_value",
           "metric_tile", "propensity_tiles", "run_discriminator", "section_tiles", "utility_summary"]


@dataclass(frozen=True)
class Discriminator:
    """One propensity model the Compare page offers."""

    key: str
    label: str
    model: str
    interactions: bool
    description: str


#: The choices, headline first. Main effects alone cannot see an association
#: the synthesis lost (docs/methods.md#propensity), so it is never the default.
DISCRIMINATORS: dict[str, Discriminator] = {
    d.key: d
    for d in (
        Discriminator("logit_interactions", "Logistic, pairwise interactions (headline)", "logit", True,
                      "Unpenalised logistic regression on all main effects and pairwise interactions: "
                      "it sees associations the synthesis lost."),
        Discriminator("cart", "CART (synthpop's regularised tree)", "cart", False,
                      "Classification tree with cp = 0.001 and at least 5 rows per leaf; null pMSE by "
                      "label permutations. Its splits are greedy: an association lost while every marginal "
                      "is kept exactly can leave it no first split to make."),
        Discriminator("logit_main", "Logistic, main effects only (blind to lost associations)", "logit", False,
                      "Sees only the marginals: a synthesis that keeps every marginal and loses every "
                      "association can still score 'indistinguishable'."),
    )
}


def run_discriminator(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    key: str,
    *,
    seed: int | None = None,
    holdout: float = 0.0,
    permutations: int = 10,
    categorical: Iterable[str] | None = None,
    max_rows: int = constraints.PROPENSITY_DETAIL_ROWS,
) -> PropensityResult:
    """Fit the discriminator ``key`` of :data:`DISCRIMINATORS`.

    The headline (``"logit_interactions"`` without holdout) is :func:`.propensity.headline_propensity`, on its
    sample, so the Compare page's "pMSE ratio" is the figure every page shows. The others are fitted on a
    subsample of at most ``max_rows`` stacked rows, and their figures carry their name
    (:func:`discriminator_variant`).

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    key : str
        A key of :data:`DISCRIMINATORS`.
    seed : int, optional
        Seeds the subsample, the held-out split and the permutations.
    holdout : float, default 0
        Share of rows held out of the fit and scored (see
        :func:`~dpsynth_core.utility.propensity.propensity_metrics`).
    permutations : int, default 10
        Label permutations for the CART null.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical.
    max_rows : int, default constraints.PROPENSITY_DETAIL_ROWS
        Cap on the stacked rows of a discriminator other than the headline (a random subsample, reported).

    Returns
    -------
    PropensityResult
    """
    if key not in DISCRIMINATORS:
        raise ValueError(f"discriminator must be one of {sorted(DISCRIMINATORS)}, got {key!r}")
    if discriminator_variant(key, holdout) is None:
        return headline_propensity(real, synth, seed=seed, categorical=categorical)
    d = DISCRIMINATORS[key]
    return propensity_metrics(real, synth, model=d.model, interactions=d.interactions, seed=seed,
                              categorical=categorical, max_rows=max_rows, permutations=permutations,
                              holdout=holdout)


def discriminator_variant(key: str, holdout: float = 0.0) -> str | None:
    """The name a discriminator's figures carry beside "pMSE ratio", "AUC"…; None for the headline, whose
    figures are the ones every page shows under those names.

    >>> discriminator_variant("logit_interactions"), discriminator_variant("cart"), discriminator_variant(
    ...     "logit_interactions", 0.3)
    (None, 'CART', 'held-out rows')
    """
    if key == "logit_interactions":
        return None if holdout == 0 else "held-out rows"
    return {"cart": "CART", "logit_main": "main effects"}[key] + (", held-out rows" if holdout else "")


def format_value(value: float, digits: int = 4) -> str:
    """A metric value as text: ``.4g`` when finite, words otherwise (never ``inf``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "not computed"
    if math.isinf(value):
        return "not defined"
    return f"{value:.{digits}g}"


@dataclass(frozen=True)
class Tile:
    """One metric tile: label, value as text, the one-line reading, and a note when the value is missing."""

    name: str
    label: str
    value: float
    text: str
    reading: str
    note: str | None = None


def metric_tile(name: str, value: float, note: str | None = None) -> Tile:
    """The tile of metric ``name`` (registered in METRICS) showing ``value``."""
    info = METRICS[name]
    finite = value is not None and math.isfinite(value)
    if not finite and note is None:
        note = f"{info.label} could not be computed for these data."
    return Tile(name, info.label, float("nan") if value is None else float(value), format_value(value),
                info.reading, None if finite else note)


def section_tiles(section: str, ctx: MetricContext) -> list[Tile]:
    """The tiles of every registered metric of ``section``, computed on ``ctx``, in registry order.

    Each tile carries the metric's note when there is one (a value that could not be computed says why).
    """
    tiles = []
    for m in metrics(section=section):
        value = m.value(ctx)
        note = m.explain(ctx, value)
        tiles.append(Tile(m.name, m.label, value, format_value(value), m.reading, note))
    return tiles


def propensity_tiles(res: PropensityResult, ctx: MetricContext | None = None,
                     variant: str | None = None) -> list[Tile]:
    """The propensity section's tiles (pMSE, pMSE ratio, SPECKS, AUC) of one discriminator's fit ``res``.

    ``ctx`` holds the data for a metric of the section that reads more than the fit. ``variant``
    (:func:`discriminator_variant`) names a fit other than the headline in each label: "pMSE ratio (CART)".
    """
    ctx = MetricContext(None, None) if ctx is None else ctx
    ctx.shared["propensity"] = res
    tiles = section_tiles("propensity", ctx)
    if variant is None:
        return tiles
    return [dataclasses.replace(t, label=f"{t.label} ({variant})") for t in tiles]


@dataclass(frozen=True)
class UtilitySummary:
    """Every model-free utility measure of one synthesis."""

    columns: ColumnComparison
    correlation: CorrelationFit
    association: CorrelationFit
    pegs: PegsDistances

    def shared(self) -> dict:
        """This summary's results under the keys the marginal and pair metrics read from a metric context's
        ``shared`` dict, so they are not computed again."""
        return {"distances": self.columns.distances, "correlation": self.correlation,
                "association": self.association, "pegs": self.pegs}

    def context(self, real: pd.DataFrame | None = None, synth: pd.DataFrame | None = None, **kw) -> MetricContext:
        """A metric context on ``real`` and ``synth`` holding this summary's results (``kw`` as
        :class:`MetricContext`)."""
        return MetricContext(real, synth, shared=self.shared(), **kw)

    def tiles(self, real: pd.DataFrame | None = None, synth: pd.DataFrame | None = None) -> list[Tile]:
        """Tiles of the registry's "marginals" and "bivariate" sections, with a note for each value that could
        not be computed (``real`` and ``synth`` for a metric of those sections that reads the data)."""
        ctx = self.context(real, synth)
        return [*section_tiles("marginals", ctx), *section_tiles("bivariate", ctx)]

    def column_notes(self) -> list[str]:
        """One sentence per single-column value that could not be computed."""
        return [f"{r.column}: {r.metric} — {r.reason}." for r in self.columns.notes.itertuples()]

    def pair_notes(self) -> list[str]:
        """Sentences about pairs left out of the correlation, Cramér's V and conditional distances."""
        return list(self.correlation.notes) + list(self.association.notes) + list(self.pegs.notes)

    def notes(self) -> list[str]:
        """Every sentence about a value that could not be computed, one per line."""
        return self.column_notes() + self.pair_notes()


def utility_summary(
    real: pd.DataFrame,
    synth: pd.DataFrame,
    *,
    categorical: Iterable[str] | None = None,
    bins: int = constraints.DEFAULT_BINS,
) -> UtilitySummary:
    """Column distances, moments, missing shares, correlation and Cramér's V fit, PeGS distances.

    Parameters
    ----------
    real, synth : DataFrame
        Confidential and synthetic data.
    categorical : iterable of str, optional
        Numeric columns to treat as categorical.
    bins : int, default constraints.DEFAULT_BINS
        Bins per numeric column for the PeGS distances.

    Returns
    -------
    UtilitySummary
    """
    categorical = list(categorical) if categorical is not None else None
    with factorized_once():  # each categorical column hashed once for all four
        return UtilitySummary(
            columns=compare_columns(real, synth, categorical=categorical),
            correlation=correlation_fit(real, synth, categorical=categorical),
            association=association_fit(real, synth, categorical=categorical),
            pegs=pegs_distances(real, synth, categorical=categorical, bins=bins),
        )
